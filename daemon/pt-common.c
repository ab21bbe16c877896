/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-common.c — what the FUSE operations share: attributes, entries, the one
 * path by which a new node gets its nodeid, open flags (see pt-internal.h).
 *
 * Every host access is relative to an inode's O_PATH fd with at most one
 * checked name component (confine.c), so the guest cannot name anything
 * outside the shared folder.  Host errors go back to the guest as their errno. */
#include "pt-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "confine.h"
#include "log.h"

int pt_fd_keep(const struct pt_fs *fs, int fd)
{
        /* The kernel hands out the lowest free number: one at the ceiling or
         * above means fewer than the reserve are left. */
        if (fd < 0 || fd < fs->fd_ceiling)
                return fd;
        (void) close(fd);
        return -EMFILE;
}

int pt_stat(const struct inode *i, struct stat *ret_st)
{
        return fstatat(i->fd, "", ret_st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* pt_fill_attr() from a statx (a LOOKUP's: no conversion to a struct stat).
 * Every field is written (struct fuse_attr has no padding): no memset first. */
static void fill_attr_statx(const struct pt_fs *fs, struct fuse_attr *a, const struct statx *x)
{
        *a = (struct fuse_attr){
                .ino = x->stx_ino,
                .size = x->stx_size,
                .blocks = x->stx_blocks,
                .atime = (uint64_t)x->stx_atime.tv_sec,
                .mtime = (uint64_t)x->stx_mtime.tv_sec,
                .ctime = (uint64_t)x->stx_ctime.tv_sec,
                .atimensec = x->stx_atime.tv_nsec,
                .mtimensec = x->stx_mtime.tv_nsec,
                .ctimensec = x->stx_ctime.tv_nsec,
                .mode = x->stx_mode,
                .nlink = x->stx_nlink,
                .uid = idmap_uid_to_guest(&fs->idmap, x->stx_uid),
                .gid = idmap_gid_to_guest(&fs->idmap, x->stx_gid),
                .rdev = S_ISCHR(x->stx_mode) || S_ISBLK(x->stx_mode)
                        ? (uint32_t)makedev(x->stx_rdev_major, x->stx_rdev_minor) : 0,
                .blksize = x->stx_blksize,
        };
}

void pt_fill_attr(const struct pt_fs *fs, struct fuse_attr *a, const struct stat *st)
{
        memset(a, 0, sizeof(*a));
        a->ino = st->st_ino;
        a->size = (uint64_t)st->st_size;
        a->blocks = (uint64_t)st->st_blocks;
        a->atime = (uint64_t)st->st_atim.tv_sec;
        a->mtime = (uint64_t)st->st_mtim.tv_sec;
        a->ctime = (uint64_t)st->st_ctim.tv_sec;
        a->atimensec = (uint32_t)st->st_atim.tv_nsec;
        a->mtimensec = (uint32_t)st->st_mtim.tv_nsec;
        a->ctimensec = (uint32_t)st->st_ctim.tv_nsec;
        a->mode = st->st_mode;
        a->nlink = (uint32_t)st->st_nlink;
        a->uid = idmap_uid_to_guest(&fs->idmap, st->st_uid);
        a->gid = idmap_gid_to_guest(&fs->idmap, st->st_gid);
        a->rdev = (uint32_t)st->st_rdev;
        a->blksize = (uint32_t)st->st_blksize;
}

static void fill_entry(const struct pt_fs *fs, struct fuse_entry_out *e, uint64_t nodeid,
                       const struct stat *st)
{
        memset(e, 0, sizeof(*e));
        e->nodeid = nodeid;
        e->entry_valid = e->attr_valid = fs->timeout_sec;
        e->entry_valid_nsec = e->attr_valid_nsec = fs->timeout_nsec;
        pt_fill_attr(fs, &e->attr, st);
}

/* A non-directory whose path is too long to read: it is where the directory
 * the guest last found it in is (a host move of the file alone, deep down,
 * goes unseen; one of a directory above it does not). */
static int check_inside_by_parent(struct pt_fs *fs, const struct inode *root, const struct inode *i)
{
        _cleanup_iref_ dir = { fs->inodes, inode_parent(fs->inodes, i) };
        int fd;

        if (!dir.p || dir.p->type != S_IFDIR)
                return -EACCES;
        if (dir.p == root)
                return 0;
        fd = inode_fd(fs->inodes, dir.p);
        if (fd < 0)
                return -EACCES;
        return confine_check_inside(fs->proc_fd, root->fd, fd) < 0 ? -EACCES : 0;
}

int pt_check_inside(struct pt_fs *fs, const struct inode *i)
{
        _cleanup_iref_ root = PT_INODE(fs, INODE_ROOT_ID);
        int err;

        if (!root.p)
                return -ESTALE;
        if (i == root.p)
                return 0;
        err = confine_check_inside(fs->proc_fd, root.p->fd, i->fd);
        if (err == -ENAMETOOLONG)
                err = check_inside_by_parent(fs, root.p, i);
        if (err < 0)
                log_debug("nodeid %" PRIu64 " is no longer inside the shared folder: change refused",
                          i->nodeid);
        return err;
}

int pt_check_inside_unconfined(struct pt_fs *fs, const struct inode *i)
{
        /* In a sealed root worker the Landlock rule sits on the root of the
         * share's bind mount, and Linux 6.18 judges an object moved out of a
         * bind mount's reach as if at that root (allowed): check ourselves. */
        if (confine_landlock_active() && !confine_sealed_namespace())
                return 0;
        return pt_check_inside(fs, i);
}

int pt_reply_attr(struct pt_fs *fs, struct freq *r, const struct stat *st)
{
        struct fuse_attr_out out = {
                .attr_valid = fs->timeout_sec,
                .attr_valid_nsec = fs->timeout_nsec,
        };

        pt_fill_attr(fs, &out.attr, st);
        return pt_reply(r, &out, sizeof(out));
}

/* Counts one lookup of the object behind `fd` (O_PATH, consumed), found as
 * `name` in `dir` (NULL: an open file with no name), and fills its entry. */
static int add_lookup(struct pt_fs *fs, int fd, const struct stat *st, struct inode *dir,
                      const char *name, struct fuse_entry_out *ret_entry)
{
        uint64_t nodeid;
        int r = inode_add_lookup_at(fs->inodes, fd, st, 0, dir, name, &nodeid);

        if (r < 0)
                return r;
        fill_entry(fs, ret_entry, nodeid, st);
        return 0;
}

int pt_lookup_entry(struct pt_fs *fs, struct inode *dir, const char *name,
                    struct fuse_entry_out *ret_entry)
{
        _cleanup_close_ int fd = -1;
        struct statx x;
        uint64_t nodeid;
        dev_t dev;
        int err;

        if (dir->type != S_IFDIR)
                return -ENOTDIR;
        PT_NEED_FD(fs, dir);
        fd = pt_fd_keep(fs, confine_open_child(dir->fd, name, O_PATH, 0));
        if (fd < 0)
                return fd;
        /* statx: one call as fstatat would be, and the birth time with it,
         * which tells this file from a later one with its inode number. */
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &x) < 0)
                return -errno;
        dev = makedev(x.stx_dev_major, x.stx_dev_minor);
        /* Another file system mounted here: what kind (only then, one statfs). */
        if (dev != dir->dev && (err = policy_check_mount(fd, name)) < 0)
                return err;
        err = inode_add_lookup_id(fs->inodes, TAKE_FD(fd), dev, x.stx_ino, x.stx_mode, inode_birth(&x),
                                  dir, name, &nodeid);
        if (err < 0)
                return err;
        ret_entry->nodeid = nodeid;
        ret_entry->generation = 0;
        ret_entry->entry_valid = ret_entry->attr_valid = fs->timeout_sec;
        ret_entry->entry_valid_nsec = ret_entry->attr_valid_nsec = fs->timeout_nsec;
        fill_attr_statx(fs, &ret_entry->attr, &x);   /* the rest: no padding in between */
        return 0;
}

int pt_reply_new_node(struct pt_fs *fs, struct freq *r, struct inode *dir, const char *name,
                      int open_fd, const struct stat *open_st, int open_flags)
{
        _cleanup_close_ int fd = open_fd, path_fd = -1;
        struct {
                struct fuse_entry_out e;
                struct fuse_open_out o;
        } out = { 0 };
        struct stat st;
        int err;

        if (fd < 0) {
                err = pt_lookup_entry(fs, dir, name, &out.e);
                return err < 0 ? err : pt_reply(r, &out.e, sizeof(out.e));
        }

        /* The open file itself, not its name: the name may have changed already. */
        if (open_st)
                st = *open_st;
        else if (fstat(fd, &st) < 0)
                return -errno;
        path_fd = pt_fd_keep(fs, confine_path_of_open_fd(fs->proc_fd, fd));
        if (path_fd < 0)
                return path_fd;
        err = add_lookup(fs, TAKE_FD(path_fd), &st, dir, name, &out.e);
        if (err < 0)
                return err;
        {
                _cleanup_iref_ i = PT_INODE(fs, out.e.nodeid);

                if (!i.p)
                        return -ESTALE;
                err = handle_add(fs->handles, TAKE_FD(fd), i.p, false, open_flags, &out.o.fh);
        }
        if (err < 0) {
                inode_forget(fs->inodes, out.e.nodeid, 1);
                return err;
        }
        out.o.open_flags = pt_file_open_flags(fs);
        return pt_reply(r, &out, sizeof(out));
}

void pt_perm_node(const struct pt_fs *fs, const struct stat *st, struct perm_node *ret)
{
        *ret = (struct perm_node){
                .uid = idmap_uid_to_guest(&fs->idmap, st->st_uid),
                .gid = idmap_gid_to_guest(&fs->idmap, st->st_gid),
                .mode = st->st_mode,
        };
}

/* The requester and inode i as the guest sees it; 1 for guest root (every
 * check passes: no stat needed), 0 otherwise, -errno. */
static int requester_and_node(const struct pt_fs *fs, const struct freq *r, const struct inode *i,
                              struct perm_who *ret_who, struct perm_node *ret_node)
{
        struct stat st;
        int err;

        *ret_who = pt_who(r);
        if (ret_who->uid == 0)
                return 1;
        if ((err = pt_stat(i, &st)) < 0)
                return err;
        pt_perm_node(fs, &st, ret_node);
        return 0;
}

int pt_check_access(const struct pt_fs *fs, const struct freq *r, const struct inode *i, int mask)
{
        struct perm_who who;
        struct perm_node node;
        int err = mask ? requester_and_node(fs, r, i, &who, &node) : 1;

        return err != 0 ? (err < 0 ? err : 0) : perm_access(&who, &node, mask);
}

int pt_check_remove(const struct pt_fs *fs, const struct freq *r, const struct inode *dir,
                    const char *name)
{
        struct perm_who who;
        struct perm_node d, victim;
        struct stat st;
        int err = requester_and_node(fs, r, dir, &who, &d);

        if (err != 0)
                return err < 0 ? err : 0;
        if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        pt_perm_node(fs, &st, &victim);
        return perm_remove(&who, &d, &victim);
}

/* Open flags the guest may pass to the host: access mode and data semantics;
 * never O_CREAT/O_EXCL (only CREATE creates), O_NOFOLLOW is always added,
 * O_DIRECT is dropped because guest buffers need not meet its alignment, and
 * O_NOATIME because the guest checked it against its own uid, not ours. */
int pt_open_flags(uint32_t guest_flags)
{
        return (int)(guest_flags & (O_ACCMODE | O_APPEND | O_TRUNC | O_SYNC | O_DSYNC | O_NONBLOCK));
}

uint32_t pt_file_open_flags(const struct pt_fs *fs)
{
        switch (fs->cache) {
        case FS_CACHE_ALWAYS: return FOPEN_KEEP_CACHE;
        case FS_CACHE_NEVER:  return FOPEN_DIRECT_IO;
        default:              return 0;
        }
}
