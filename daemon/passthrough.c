/* passthrough.c — one function per FUSE operation on the host folder.
 *
 * Every host access is relative to an inode's O_PATH fd with at most one
 * checked name component (confine.c), so the guest cannot name anything
 * outside the shared folder.  Host errors go back to the guest as their errno. */
#include "passthrough.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "log.h"

#ifndef FUSE_TMPFILE
#define FUSE_TMPFILE 51
#endif

/* ---- scoped references ---- */

struct iref { struct inode_table *t; struct inode *p; };
struct href { struct handle_table *t; struct handle *p; };

static void iref_put(struct iref *r)
{
        if (r->p)
                inode_put(r->t, r->p);
}

static void href_put(struct href *r)
{
        if (r->p)
                handle_put(r->t, r->p);
}

static void closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

#define _cleanup_iref_  __attribute__((cleanup(iref_put))) struct iref
#define _cleanup_href_  __attribute__((cleanup(href_put))) struct href
#define _cleanup_close_ __attribute__((cleanup(closep))) int

#define GET_INODE(s, id)  { (s)->inodes, inode_get((s)->inodes, (id)) }
#define GET_FILE(s, fh)   { (s)->handles, handle_get((s)->handles, (fh), false) }
#define GET_DIR(s, fh)    { (s)->handles, handle_get((s)->handles, (fh), true) }

#define ARG(type, var, r)                                                 \
        const struct type *var = freq_arg((r), sizeof(struct type));     \
        if (!var)                                                         \
                return -EINVAL

static bool is_readonly(const struct fs_session *s)
{
        return atomic_load_explicit(&s->readonly, memory_order_relaxed);
}

/* ---- attributes and entries ---- */

static int stat_inode(const struct inode *i, struct stat *st)
{
        return fstatat(i->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static void fill_attr(const struct fs_session *s, struct fuse_attr *a, const struct stat *st)
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
        a->uid = idmap_uid_to_guest(&s->idmap, st->st_uid);
        a->gid = idmap_gid_to_guest(&s->idmap, st->st_gid);
        a->rdev = (uint32_t)st->st_rdev;
        a->blksize = (uint32_t)st->st_blksize;
}

static void fill_entry(const struct fs_session *s, struct fuse_entry_out *e, uint64_t nodeid,
                       const struct stat *st)
{
        memset(e, 0, sizeof(*e));
        e->nodeid = nodeid;
        e->entry_valid = e->attr_valid = s->timeout_sec;
        e->entry_valid_nsec = e->attr_valid_nsec = s->timeout_nsec;
        fill_attr(s, &e->attr, st);
}

/* Looks `name` up in `dir` and counts one lookup of it. */
static int do_lookup(struct fs_session *s, struct inode *dir, const char *name,
                     struct fuse_entry_out *e)
{
        struct stat st;
        uint64_t nodeid;
        int fd, r;

        if (dir->type != S_IFDIR)
                return -ENOTDIR;
        fd = confine_open_child(dir->fd, name, O_PATH, 0);
        if (fd < 0)
                return fd;
        if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        nodeid = inode_add_lookup(s->inodes, fd, &st, &r);
        if (!nodeid)
                return r;
        fill_entry(s, e, nodeid, &st);
        return 0;
}

static int reply_entry(struct freq *r, const struct fuse_entry_out *e)
{
        freq_reply(r, e, sizeof(*e));
        return 0;
}

static int lookup_and_reply(struct fs_session *s, struct freq *r, struct inode *dir, const char *name)
{
        struct fuse_entry_out e;
        int err = do_lookup(s, dir, name, &e);

        return err < 0 ? err : reply_entry(r, &e);
}

static int reply_attr(struct fs_session *s, struct freq *r, const struct stat *st)
{
        struct fuse_attr_out out = {
                .attr_valid = s->timeout_sec,
                .attr_valid_nsec = s->timeout_nsec,
        };

        fill_attr(s, &out.attr, st);
        freq_reply(r, &out, sizeof(out));
        return 0;
}

/* The guest's mode bits with its umask applied (we negotiate DONT_MASK and the
 * process umask is 0, so this is the only place the umask is applied). */
static mode_t masked(uint32_t mode, uint32_t umask_bits)
{
        return (mode_t)(mode & ~umask_bits & 07777);
}

/* Open flags the guest may pass to the host: access mode and data semantics;
 * never O_CREAT/O_EXCL (only CREATE creates), O_NOFOLLOW is always added,
 * O_DIRECT is dropped because guest buffers need not meet its alignment, and
 * O_NOATIME because the guest checked it against its own uid, not ours. */
static int open_flags(uint32_t guest_flags)
{
        return (int)(guest_flags & (O_ACCMODE | O_APPEND | O_TRUNC | O_SYNC | O_DSYNC | O_NONBLOCK));
}

static bool wants_write(int flags)
{
        return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

static uint32_t file_open_flags(const struct fs_session *s)
{
        switch (s->cache) {
        case FS_CACHE_ALWAYS: return FOPEN_KEEP_CACHE;
        case FS_CACHE_NEVER:  return FOPEN_DIRECT_IO;
        default:              return 0;
        }
}

/* ---- lookups and attributes ---- */

int pt_lookup(struct fs_worker *w, struct freq *r)
{
        size_t pos = 0;
        const char *name;
        int len = freq_name(r, &pos, &name);
        _cleanup_iref_ dir = GET_INODE(w->s, r->in.nodeid);

        if (len < 0)
                return len;
        if (!dir.p)
                return -EBADF;
        return lookup_and_reply(w->s, r, dir.p, name);
}

int pt_forget(struct fs_worker *w, struct freq *r)
{
        const struct fuse_forget_in *in = freq_arg(r, sizeof(*in));

        if (in)
                inode_forget(w->s->inodes, r->in.nodeid, in->nlookup);
        freq_reply_none(r);
        return 0;
}

int pt_batch_forget(struct fs_worker *w, struct freq *r)
{
        const struct fuse_batch_forget_in *in = freq_arg(r, sizeof(*in));
        size_t off = sizeof(*in);

        freq_reply_none(r);
        if (!in)
                return 0;
        for (uint32_t i = 0; i < in->count; i++, off += sizeof(struct fuse_forget_one)) {
                struct fuse_forget_one one;

                if (off + sizeof(one) > r->body_len)
                        break;
                if (off + sizeof(one) <= r->arg_len)
                        memcpy(&one, r->arg + off, sizeof(one));
                else if (freq_copy_in(r, sizeof(r->in) + off, &one, sizeof(one)) != sizeof(one))
                        break;
                inode_forget(w->s->inodes, one.nodeid, one.nlookup);
        }
        return 0;
}

int pt_getattr(struct fs_worker *w, struct freq *r)
{
        const struct fuse_getattr_in *in = freq_arg(r, sizeof(*in));
        _cleanup_iref_ i = GET_INODE(w->s, r->in.nodeid);
        struct stat st;
        int err;

        if (!i.p)
                return -EBADF;
        /* The FH form only exists for fstat() on an open file; the inode says the same. */
        (void)in;
        err = stat_inode(i.p, &st);
        return err < 0 ? err : reply_attr(w->s, r, &st);
}

static int set_times(struct fs_session *s, struct inode *i, int fd, const struct fuse_setattr_in *in)
{
        struct timespec ts[2] = {
                { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT },
        };
        char name[16];

        if (in->valid & FATTR_ATIME_NOW)
                ts[0].tv_nsec = UTIME_NOW;
        else if (in->valid & FATTR_ATIME)
                ts[0] = (struct timespec){ .tv_sec = (time_t)in->atime, .tv_nsec = in->atimensec };
        if (in->valid & FATTR_MTIME_NOW)
                ts[1].tv_nsec = UTIME_NOW;
        else if (in->valid & FATTR_MTIME)
                ts[1] = (struct timespec){ .tv_sec = (time_t)in->mtime, .tv_nsec = in->mtimensec };
        if ((ts[0].tv_nsec != UTIME_OMIT && ts[0].tv_nsec != UTIME_NOW && ts[0].tv_nsec >= 1000000000) ||
            (ts[1].tv_nsec != UTIME_OMIT && ts[1].tv_nsec != UTIME_NOW && ts[1].tv_nsec >= 1000000000))
                return -EINVAL;
        if (fd >= 0)
                return futimens(fd, ts) < 0 ? -errno : 0;
        if (i->type == S_IFLNK) {
                /* Symlink times: only where the kernel takes an empty path. */
                return utimensat(i->fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
        }
        confine_fd_name(name, sizeof(name), i->fd);
        return utimensat(s->proc_fd, name, ts, 0) < 0 ? -errno : 0;
}

int pt_setattr(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_setattr_in, in, r);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        _cleanup_href_ h = { s->handles, NULL };
        struct stat st;
        int fd = -1;
        char name[16];

        if (!i.p)
                return -EBADF;
        if (in->valid & FATTR_FH) {
                h.p = handle_get(s->handles, in->fh, false);
                if (!h.p || h.p->inode != i.p)
                        return -EBADF;
                fd = h.p->fd;
        }
        confine_fd_name(name, sizeof(name), i.p->fd);

        if (in->valid & FATTR_MODE) {
                int rc;

                if (i.p->type == S_IFLNK)
                        return -EOPNOTSUPP;
                rc = fd >= 0 ? fchmod(fd, in->mode & 07777)
                             : fchmodat(s->proc_fd, name, in->mode & 07777, 0);
                if (rc < 0)
                        return -errno;
        }
        if (in->valid & (FATTR_UID | FATTR_GID)) {
                uid_t uid = (in->valid & FATTR_UID) ? idmap_uid_to_host(&s->idmap, in->uid) : (uid_t)-1;
                gid_t gid = (in->valid & FATTR_GID) ? idmap_gid_to_host(&s->idmap, in->gid) : (gid_t)-1;

                if (fchownat(i.p->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
        }
        if (in->valid & FATTR_SIZE) {
                if (in->size > (uint64_t)INT64_MAX)
                        return -EFBIG;
                if (fd >= 0 && h.p->writable) {
                        if (ftruncate(fd, (off_t)in->size) < 0)
                                return -errno;
                } else {
                        _cleanup_close_ wfd = -1;

                        if (i.p->type != S_IFREG)
                                return i.p->type == S_IFDIR ? -EISDIR : -EINVAL;
                        wfd = confine_reopen(s->proc_fd, i.p->fd, O_WRONLY);
                        if (wfd < 0)
                                return wfd;
                        if (ftruncate(wfd, (off_t)in->size) < 0)
                                return -errno;
                }
        }
        if (in->valid & (FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW)) {
                int err = set_times(s, i.p, fd, in);

                if (err < 0)
                        return err;
        }
        if (stat_inode(i.p, &st) < 0)
                return -errno;
        return reply_attr(s, r, &st);
}

int pt_readlink(struct fs_worker *w, struct freq *r)
{
        _cleanup_iref_ i = GET_INODE(w->s, r->in.nodeid);
        ssize_t n;

        if (!i.p)
                return -EBADF;
        if (i.p->type != S_IFLNK)
                return -EINVAL;
        n = readlinkat(i.p->fd, "", (char *)w->buf, FREQ_PATH_MAX);
        if (n < 0)
                return -errno;
        freq_reply(r, w->buf, (size_t)n);
        return 0;
}

/* ---- creating and removing names ---- */

static int get_dir(struct fs_session *s, struct freq *r, struct iref *dir)
{
        dir->t = s->inodes;
        dir->p = inode_get(s->inodes, r->in.nodeid);
        if (!dir->p)
                return -EBADF;
        return dir->p->type == S_IFDIR ? 0 : -ENOTDIR;
}

int pt_symlink(struct fs_worker *w, struct freq *r)
{
        _cleanup_iref_ dir = { NULL, NULL };
        size_t pos = 0;
        const char *name, *target;
        int err = freq_name(r, &pos, &name);

        if (err < 0)
                return err;
        /* The target is only data for the guest: it is never followed on the host. */
        err = freq_string(r, &pos, FREQ_PATH_MAX - 1, &target);
        if (err < 0)
                return err;
        if (err == 0)
                return -ENOENT;
        if ((err = get_dir(w->s, r, &dir)) < 0)
                return err;
        if (symlinkat(target, dir.p->fd, name) < 0)
                return -errno;
        return lookup_and_reply(w->s, r, dir.p, name);
}

int pt_mknod(struct fs_worker *w, struct freq *r)
{
        _cleanup_iref_ dir = { NULL, NULL };
        ARG(fuse_mknod_in, in, r);
        size_t pos = sizeof(*in);
        const char *name;
        int err = freq_name(r, &pos, &name);

        if (err < 0)
                return err;
        if ((err = get_dir(w->s, r, &dir)) < 0)
                return err;
        if (mknodat(dir.p->fd, name, (in->mode & S_IFMT) | masked(in->mode, in->umask), in->rdev) < 0)
                return -errno;
        return lookup_and_reply(w->s, r, dir.p, name);
}

int pt_mkdir(struct fs_worker *w, struct freq *r)
{
        _cleanup_iref_ dir = { NULL, NULL };
        ARG(fuse_mkdir_in, in, r);
        size_t pos = sizeof(*in);
        const char *name;
        int err = freq_name(r, &pos, &name);

        if (err < 0)
                return err;
        if ((err = get_dir(w->s, r, &dir)) < 0)
                return err;
        if (mkdirat(dir.p->fd, name, masked(in->mode, in->umask)) < 0)
                return -errno;
        return lookup_and_reply(w->s, r, dir.p, name);
}

static int remove_name(struct fs_worker *w, struct freq *r, int flags)
{
        _cleanup_iref_ dir = { NULL, NULL };
        size_t pos = 0;
        const char *name;
        int err = freq_name(r, &pos, &name);

        if (err < 0)
                return err;
        if ((err = get_dir(w->s, r, &dir)) < 0)
                return err;
        if (unlinkat(dir.p->fd, name, flags) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_unlink(struct fs_worker *w, struct freq *r)
{
        return remove_name(w, r, 0);
}

int pt_rmdir(struct fs_worker *w, struct freq *r)
{
        return remove_name(w, r, AT_REMOVEDIR);
}

static int do_rename(struct fs_worker *w, struct freq *r, uint64_t newdir_id, size_t pos, unsigned flags)
{
        struct fs_session *s = w->s;
        _cleanup_iref_ olddir = { NULL, NULL };
        _cleanup_iref_ newdir = GET_INODE(s, newdir_id);
        const char *oldname, *newname;
        int err = freq_name(r, &pos, &oldname);

        if (err < 0)
                return err;
        if ((err = freq_name(r, &pos, &newname)) < 0)
                return err;
        if ((err = get_dir(s, r, &olddir)) < 0)
                return err;
        if (!newdir.p)
                return -EBADF;
        if (newdir.p->type != S_IFDIR)
                return -ENOTDIR;
        /* Both ends are single names under inode fds inside the folder. */
        if (renameat2(olddir.p->fd, oldname, newdir.p->fd, newname, flags) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_rename(struct fs_worker *w, struct freq *r)
{
        ARG(fuse_rename_in, in, r);

        return do_rename(w, r, in->newdir, sizeof(*in), 0);
}

int pt_rename2(struct fs_worker *w, struct freq *r)
{
        ARG(fuse_rename2_in, in, r);

        if (in->flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
                return -EINVAL;
        return do_rename(w, r, in->newdir, sizeof(*in), in->flags);
}

int pt_link(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_link_in, in, r);
        _cleanup_iref_ dir = { NULL, NULL };
        _cleanup_iref_ old = GET_INODE(s, in->oldnodeid);
        size_t pos = sizeof(*in);
        const char *name;
        char procname[16];
        int err = freq_name(r, &pos, &name);

        if (err < 0)
                return err;
        if ((err = get_dir(s, r, &dir)) < 0)
                return err;
        if (!old.p)
                return -EBADF;
        if (old.p->type == S_IFDIR)
                return -EPERM;
        /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH on older kernels; the /proc
         * magic link of our own fd names exactly the same object. */
        if (linkat(old.p->fd, "", dir.p->fd, name, AT_EMPTY_PATH) < 0) {
                if (errno != ENOENT && errno != EPERM && errno != EINVAL)
                        return -errno;
                confine_fd_name(procname, sizeof(procname), old.p->fd);
                if (linkat(s->proc_fd, procname, dir.p->fd, name, AT_SYMLINK_FOLLOW) < 0)
                        return -errno;
        }
        return lookup_and_reply(s, r, dir.p, name);
}

/* ---- files ---- */

int pt_open(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_open_in, in, r);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        struct fuse_open_out out = { 0 };
        int flags = open_flags(in->flags), fd, err;

        if (!i.p)
                return -EBADF;
        if (wants_write(flags) && is_readonly(s))
                return -EROFS;
        if (i.p->type == S_IFDIR)
                return -EISDIR;
        if (i.p->type != S_IFREG)
                return i.p->type == S_IFLNK ? -ELOOP : -ENXIO; /* FIFOs would block the queue */
        fd = confine_reopen(s->proc_fd, i.p->fd, flags);
        if (fd < 0)
                return fd;
        out.fh = handle_add(s->handles, fd, i.p, false, (flags & O_ACCMODE) != O_RDONLY, &err);
        if (!out.fh)
                return err;
        out.open_flags = file_open_flags(s);
        freq_reply(r, &out, sizeof(out));
        return 0;
}

/* CREATE and TMPFILE: `fd` is the new open file; replies entry + open. */
static int reply_created(struct fs_session *s, struct freq *r, int fd, int flags)
{
        struct {
                struct fuse_entry_out e;
                struct fuse_open_out o;
        } out;
        struct stat st;
        uint64_t nodeid;
        int pfd, err;

        if (fstat(fd, &st) < 0) {
                err = -errno;
                close(fd);
                return err;
        }
        pfd = confine_reopen(s->proc_fd, fd, O_PATH);
        if (pfd < 0) {
                close(fd);
                return pfd;
        }
        nodeid = inode_add_lookup(s->inodes, pfd, &st, &err);
        if (!nodeid) {
                close(fd);
                return err;
        }
        {
                _cleanup_iref_ i = GET_INODE(s, nodeid);

                if (!i.p) {
                        close(fd);
                        return -ESTALE;
                }
                fill_entry(s, &out.e, nodeid, &st);
                memset(&out.o, 0, sizeof(out.o));
                out.o.fh = handle_add(s->handles, fd, i.p, false, (flags & O_ACCMODE) != O_RDONLY, &err);
                if (!out.o.fh) {
                        inode_forget(s->inodes, nodeid, 1);
                        return err;
                }
        }
        out.o.open_flags = file_open_flags(s);
        freq_reply(r, &out, sizeof(out));
        return 0;
}

/* CREATE opened an existing name: only a regular file may become a handle
 * (as in pt_open()); the O_NONBLOCK used for the open goes unless asked for. */
static int check_created_regular(int fd, int flags)
{
        struct stat st;
        int fl;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -ENXIO;
        if (!(flags & O_NONBLOCK)) {
                fl = fcntl(fd, F_GETFL);
                if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                        return -errno;
        }
        return 0;
}

int pt_create(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        _cleanup_iref_ dir = { NULL, NULL };
        ARG(fuse_create_in, in, r);
        size_t pos = sizeof(*in);
        const char *name;
        int flags = open_flags(in->flags) | (int)(in->flags & O_EXCL), fd;
        int err = freq_name(r, &pos, &name);

        if (err < 0)
                return err;
        if ((err = get_dir(s, r, &dir)) < 0)
                return err;
        /* Without O_EXCL the name may already be a FIFO (made by the guest or on
         * the host): a blocking open of it would hang this queue until a writer
         * came.  Open without blocking and refuse what OPEN refuses too. */
        fd = confine_open_child(dir.p->fd, name, flags | O_CREAT | O_NONBLOCK, masked(in->mode, in->umask));
        if (fd < 0)
                return fd;
        if ((err = check_created_regular(fd, flags)) < 0) {
                close(fd);
                return err;
        }
        return reply_created(s, r, fd, flags);
}

int pt_tmpfile(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        _cleanup_iref_ dir = { NULL, NULL };
        ARG(fuse_create_in, in, r);
        int flags = open_flags(in->flags) & ~O_TRUNC, fd, err;

        /* The name the kernel sends for a tmpfile is not a real one: ignored. */
        if ((err = get_dir(s, r, &dir)) < 0)
                return err;
        if ((flags & O_ACCMODE) == O_RDONLY)
                flags = (flags & ~O_ACCMODE) | O_RDWR;
        fd = confine_open_child(dir.p->fd, ".", flags | O_TMPFILE, masked(in->mode, in->umask));
        if (fd < 0)
                return fd;
        return reply_created(s, r, fd, flags);
}

int pt_read(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_read_in, in, r);
        _cleanup_href_ h = GET_FILE(s, in->fh);
        size_t want = in->size, covered;
        unsigned n;
        ssize_t got;

        if (!h.p)
                return -EBADF;
        if (in->offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        if (r->out_size < sizeof(struct fuse_out_header))
                return -EINVAL;
        if (want > r->out_size - sizeof(struct fuse_out_header))
                want = r->out_size - sizeof(struct fuse_out_header);
        if (want > FREQ_MAX_WRITE)
                want = FREQ_MAX_WRITE;
        /* Straight into the guest's pages after the reply header. */
        n = freq_out_slice(r, sizeof(struct fuse_out_header), want, w->iov, FREQ_MAX_IOV, &covered);
        got = n ? preadv(h.p->fd, w->iov, (int)n, (off_t)in->offset) : 0;
        if (got < 0)
                return -errno;
        stats_add(&s->stats->bytes_read, (uint64_t)got);
        freq_reply_payload(r, (size_t)got);
        return 0;
}

int pt_write(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_write_in, in, r);
        _cleanup_href_ h = GET_FILE(s, in->fh);
        struct fuse_write_out out = { 0 };
        size_t covered;
        unsigned n;
        ssize_t done;

        if (!h.p)
                return -EBADF;
        if (!h.p->writable)
                return -EBADF;
        if (in->size > r->body_len - sizeof(*in) || in->size > FREQ_MAX_WRITE)
                return -EINVAL;
        if (in->offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        /* Straight from the guest's pages. */
        n = freq_in_slice(r, sizeof(struct fuse_in_header) + sizeof(*in), in->size, w->iov,
                          FREQ_MAX_IOV, &covered);
        done = n ? pwritev(h.p->fd, w->iov, (int)n, (off_t)in->offset) : 0;
        if (done < 0)
                return -errno;
        stats_add(&s->stats->bytes_written, (uint64_t)done);
        out.size = (uint32_t)done;
        freq_reply(r, &out, sizeof(out));
        return 0;
}

int pt_flush(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_flush_in, in, r);
        _cleanup_href_ h = GET_FILE(s, in->fh);
        int fd;

        if (!h.p)
                return -EBADF;
        /* close() in the guest: its POSIX locks on this file go with it. */
        inode_lock_owner_release(h.p->inode, in->lock_owner);
        /* And what a close does on the host (NFS flushes, for one). */
        fd = dup(h.p->fd);
        if (fd < 0)
                return -errno;
        if (close(fd) < 0 && errno != EINTR)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_release(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_release_in, in, r);

        if (in->release_flags & FUSE_RELEASE_FLOCK_UNLOCK) {
                _cleanup_href_ h = GET_FILE(s, in->fh);

                if (h.p)
                        (void)flock(h.p->fd, LOCK_UN);
        }
        if (handle_release(s->handles, in->fh, false) < 0)
                return -EBADF;
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_fsync(struct fs_worker *w, struct freq *r)
{
        ARG(fuse_fsync_in, in, r);
        _cleanup_href_ h = GET_FILE(w->s, in->fh);

        if (!h.p)
                return -EBADF;
        if (((in->fsync_flags & FUSE_FSYNC_FDATASYNC) ? fdatasync(h.p->fd) : fsync(h.p->fd)) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_fallocate(struct fs_worker *w, struct freq *r)
{
        ARG(fuse_fallocate_in, in, r);
        _cleanup_href_ h = GET_FILE(w->s, in->fh);

        if (!h.p)
                return -EBADF;
        if (in->offset > (uint64_t)INT64_MAX || in->length > (uint64_t)INT64_MAX)
                return -EINVAL;
        if (fallocate(h.p->fd, (int)in->mode, (off_t)in->offset, (off_t)in->length) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_lseek(struct fs_worker *w, struct freq *r)
{
        ARG(fuse_lseek_in, in, r);
        _cleanup_href_ h = GET_FILE(w->s, in->fh);
        struct fuse_lseek_out out;
        off_t off;

        if (!h.p)
                return -EBADF;
        if (in->whence != SEEK_DATA && in->whence != SEEK_HOLE && in->whence != SEEK_SET &&
            in->whence != SEEK_END)
                return -EINVAL;
        if (in->offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        /* The handle's file position is otherwise unused (all I/O is positional). */
        off = lseek(h.p->fd, (off_t)in->offset, (int)in->whence);
        if (off < 0)
                return -errno;
        out.offset = (uint64_t)off;
        freq_reply(r, &out, sizeof(out));
        return 0;
}

int pt_copy_file_range(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_copy_file_range_in, in, r);
        _cleanup_href_ hin = GET_FILE(s, in->fh_in);
        _cleanup_href_ hout = GET_FILE(s, in->fh_out);
        struct fuse_write_out out = { 0 };
        loff_t off_in = (loff_t)in->off_in, off_out = (loff_t)in->off_out;
        size_t len = in->len > UINT32_MAX - 4095 ? (UINT32_MAX & ~4095u) : (size_t)in->len;
        ssize_t n;

        if (!hin.p || !hout.p || !hout.p->writable)
                return -EBADF;
        if (in->flags != 0)
                return -EINVAL;
        if (in->off_in > (uint64_t)INT64_MAX || in->off_out > (uint64_t)INT64_MAX)
                return -EINVAL;
        n = copy_file_range(hin.p->fd, &off_in, hout.p->fd, &off_out, len, 0);
        if (n < 0)
                return -errno;
        out.size = (uint32_t)n;
        freq_reply(r, &out, sizeof(out));
        return 0;
}

/* ---- directories ---- */

int pt_opendir(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        struct fuse_open_out out = { 0 };
        int fd, err;

        if (!i.p)
                return -EBADF;
        if (i.p->type != S_IFDIR)
                return -ENOTDIR;
        fd = confine_reopen(s->proc_fd, i.p->fd, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        out.fh = handle_add(s->handles, fd, i.p, true, false, &err);
        if (!out.fh)
                return err;
        if (s->cache == FS_CACHE_ALWAYS)
                out.open_flags = FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR;
        freq_reply(r, &out, sizeof(out));
        return 0;
}

static bool is_dot_or_dotdot(const char *n)
{
        return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/* Linux's getdents64 record (glibc's struct dirent64 has a fixed-size name). */
struct linux_dirent64 {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

/* READDIR/READDIRPLUS: seek the directory fd to the guest's offset (a cookie
 * we handed out as d_off), read a batch with getdents64 into the worker's
 * scratch and pack entries straight into the guest's reply buffer.  Entries
 * read but not sent are read again next time: no per-handle buffer. */
static int do_readdir(struct fs_worker *w, struct freq *r, bool plus)
{
        struct fs_session *s = w->s;
        ARG(fuse_read_in, in, r);
        _cleanup_href_ h = GET_DIR(s, in->fh);
        const size_t hdr = sizeof(struct fuse_out_header);
        size_t max, used = 0, chunk;
        bool full = false;
        int err = 0;

        if (!h.p)
                return -EBADF;
        if (r->out_size < hdr)
                return -EINVAL;
        if (in->offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        max = r->out_size - hdr;
        if (max > in->size)
                max = in->size;
        /* A host record is about as big as a dirent, a quarter of a direntplus. */
        chunk = plus ? max / 4 : max;
        if (chunk < 1024)
                chunk = 1024;
        if (chunk > FREQ_XATTR_SIZE_MAX)
                chunk = FREQ_XATTR_SIZE_MAX;

        pthread_mutex_lock(&h.p->dir_mutex);
        if (lseek(h.p->fd, (off_t)in->offset, SEEK_SET) < 0)
                err = -errno;
        while (err == 0 && !full) {
                ssize_t n = getdents64(h.p->fd, w->buf, chunk);
                size_t pos = 0;

                if (n < 0) {
                        if (used == 0)
                                err = -errno;
                        break;
                }
                if (n == 0)
                        break;
                while (pos < (size_t)n) {
                        const struct linux_dirent64 *de = (const void *)(w->buf + pos);
                        union {
                                struct fuse_direntplus p;
                                uint8_t bytes[sizeof(struct fuse_direntplus) + FREQ_NAME_MAX + 8];
                        } ent;
                        struct fuse_dirent *d = plus ? &ent.p.dirent : (struct fuse_dirent *)ent.bytes;
                        size_t name_off = plus ? FUSE_NAME_OFFSET_DIRENTPLUS : FUSE_NAME_OFFSET;
                        size_t namelen, size, rec;

                        rec = de->d_reclen;
                        if (rec < offsetof(struct linux_dirent64, d_name) + 1 || rec > (size_t)n - pos) {
                                err = used ? 0 : -EIO;
                                full = true;
                                break;
                        }
                        pos += rec;
                        namelen = strnlen(de->d_name, rec - offsetof(struct linux_dirent64, d_name));
                        if (namelen == 0 || namelen > FREQ_NAME_MAX)
                                continue;
                        size = FUSE_DIRENT_ALIGN(name_off + namelen);
                        if (used + size > max) {
                                if (used == 0)
                                        err = -EINVAL;   /* the guest's buffer cannot take one entry */
                                full = true;
                                break;
                        }
                        memset(&ent, 0, size);
                        memcpy((uint8_t *)&ent + name_off, de->d_name, namelen);
                        /* NUL-terminated for do_lookup() even when the record ends with the name. */
                        ent.bytes[name_off + namelen] = '\0';
                        if (plus && !is_dot_or_dotdot((const char *)&ent + name_off)) {
                                /* Counts a lookup: the kernel instantiates the dentry. */
                                int lerr = do_lookup(s, h.p->inode, (const char *)&ent + name_off,
                                                     &ent.p.entry_out);

                                if (lerr == -ENOENT)
                                        continue;       /* removed meanwhile */
                                if (lerr < 0) {
                                        err = used ? 0 : lerr;
                                        full = true;
                                        break;
                                }
                        } else if (plus) {
                                /* nodeid 0: the kernel makes no dentry for "." and "..". */
                                ent.p.entry_out.attr.ino = de->d_ino;
                                ent.p.entry_out.attr.mode = (uint32_t)DTTOIF(de->d_type);
                        }
                        d->ino = de->d_ino;
                        d->off = (uint64_t)de->d_off;
                        d->namelen = (uint32_t)namelen;
                        d->type = de->d_type;
                        if (!freq_put(r, hdr + used, &ent, size)) {
                                if (plus && ent.p.entry_out.nodeid)
                                        inode_forget(s->inodes, ent.p.entry_out.nodeid, 1);
                                err = used ? 0 : -EIO;
                                full = true;
                                break;
                        }
                        used += size;
                }
        }
        pthread_mutex_unlock(&h.p->dir_mutex);
        if (err < 0)
                return err;
        freq_reply_payload(r, used);
        return 0;
}

int pt_readdir(struct fs_worker *w, struct freq *r)
{
        return do_readdir(w, r, false);
}

int pt_readdirplus(struct fs_worker *w, struct freq *r)
{
        return do_readdir(w, r, true);
}

int pt_releasedir(struct fs_worker *w, struct freq *r)
{
        ARG(fuse_release_in, in, r);

        if (handle_release(w->s->handles, in->fh, true) < 0)
                return -EBADF;
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_fsyncdir(struct fs_worker *w, struct freq *r)
{
        ARG(fuse_fsync_in, in, r);
        _cleanup_href_ h = GET_DIR(w->s, in->fh);
        int fd;

        if (!h.p)
                return -EBADF;
        fd = h.p->fd;
        if (((in->fsync_flags & FUSE_FSYNC_FDATASYNC) ? fdatasync(fd) : fsync(fd)) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

/* ---- the file system ---- */

int pt_statfs(struct fs_worker *w, struct freq *r)
{
        _cleanup_iref_ i = GET_INODE(w->s, r->in.nodeid);
        struct fuse_statfs_out out = { 0 };
        struct statvfs sv;

        if (!i.p)
                return -EBADF;
        if (fstatvfs(i.p->fd, &sv) < 0)
                return -errno;
        out.st.blocks = sv.f_blocks;
        out.st.bfree = sv.f_bfree;
        out.st.bavail = sv.f_bavail;
        out.st.files = sv.f_files;
        out.st.ffree = sv.f_ffree;
        out.st.bsize = (uint32_t)sv.f_bsize;
        out.st.namelen = (uint32_t)sv.f_namemax;
        out.st.frsize = (uint32_t)sv.f_frsize;
        freq_reply(r, &out, sizeof(out));
        return 0;
}

int pt_access(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_access_in, in, r);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        char name[16];
        int mask = (int)(in->mask & (R_OK | W_OK | X_OK));

        if (!i.p)
                return -EBADF;
        if ((mask & W_OK) && is_readonly(s))
                return -EROFS;
        if (i.p->type == S_IFLNK)
                goto ok;    /* access() follows links; a link's own bits mean nothing */
        if (faccessat(i.p->fd, "", mask, AT_EMPTY_PATH) < 0) {
                if (errno != EINVAL && errno != ENOSYS)
                        return -errno;
                confine_fd_name(name, sizeof(name), i.p->fd);
                if (faccessat(s->proc_fd, name, mask, 0) < 0)
                        return -errno;
        }
ok:
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_syncfs(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        _cleanup_iref_ root = GET_INODE(s, INODE_ROOT_ID);
        _cleanup_close_ fd = -1;

        if (!root.p)
                return -EBADF;
        fd = confine_reopen(s->proc_fd, root.p->fd, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        if (syncfs(fd) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

/* ---- extended attributes (--xattr) ---- */

/* Xattrs of an inode go through the path of our own fd in /proc (the f*xattr
 * calls do not take O_PATH fds).  Symlinks have no user xattrs on Linux. */
static int xattr_path(const struct inode *i, char *buf, size_t size)
{
        if (i->type == S_IFLNK)
                return -ENOTSUP;
        snprintf(buf, size, "/proc/self/fd/%d", i->fd);
        return 0;
}

int pt_setxattr(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        /* We do not negotiate FUSE_SETXATTR_EXT: the argument is the 8-byte form. */
        const struct fuse_setxattr_in *in = freq_arg(r, FUSE_COMPAT_SETXATTR_IN_SIZE);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        size_t pos = FUSE_COMPAT_SETXATTR_IN_SIZE;
        const char *name;
        char path[40];
        int err;

        if (!s->xattr)
                return -ENOSYS;
        if (!in)
                return -EINVAL;
        if ((err = freq_string(r, &pos, FREQ_NAME_MAX, &name)) < 0)
                return err == -ENAMETOOLONG ? -ERANGE : err;
        if (err == 0)
                return -EINVAL;
        if (in->size > FREQ_XATTR_SIZE_MAX)
                return -E2BIG;
        if (in->size > r->arg_len - pos)
                return -EINVAL;
        if (!i.p)
                return -EBADF;
        if ((err = xattr_path(i.p, path, sizeof(path))) < 0)
                return err == -ENOTSUP ? -EPERM : err;
        if (setxattr(path, name, r->arg + pos, in->size, (int)in->flags) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

/* GETXATTR and LISTXATTR answer a size probe (size 0) or the data itself. */
static int reply_xattr_data(struct fs_worker *w, struct freq *r, uint32_t size, ssize_t n)
{
        if (n < 0)
                return -errno;
        if (size == 0) {
                struct fuse_getxattr_out out = { .size = (uint32_t)n };

                freq_reply(r, &out, sizeof(out));
                return 0;
        }
        if ((size_t)n > r->out_size - sizeof(struct fuse_out_header))
                return -ERANGE;
        freq_reply(r, w->buf, (size_t)n);
        return 0;
}

int pt_getxattr(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_getxattr_in, in, r);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        size_t pos = sizeof(*in);
        uint32_t size = in->size > FREQ_XATTR_SIZE_MAX ? FREQ_XATTR_SIZE_MAX : in->size;
        const char *name;
        char path[40];
        int err;

        if (!s->xattr)
                return -ENOSYS;
        if ((err = freq_string(r, &pos, FREQ_NAME_MAX, &name)) < 0)
                return err == -ENAMETOOLONG ? -ERANGE : err;
        if (!i.p)
                return -EBADF;
        if ((err = xattr_path(i.p, path, sizeof(path))) < 0)
                return err == -ENOTSUP ? -ENODATA : err;
        return reply_xattr_data(w, r, size, getxattr(path, name, size ? w->buf : NULL, size));
}

int pt_listxattr(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_getxattr_in, in, r);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        uint32_t size = in->size > FREQ_XATTR_SIZE_MAX ? FREQ_XATTR_SIZE_MAX : in->size;
        char path[40];
        int err;

        if (!s->xattr)
                return -ENOSYS;
        if (!i.p)
                return -EBADF;
        if ((err = xattr_path(i.p, path, sizeof(path))) < 0)
                return reply_xattr_data(w, r, size, 0);
        return reply_xattr_data(w, r, size, listxattr(path, size ? (char *)w->buf : NULL, size));
}

int pt_removexattr(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        size_t pos = 0;
        const char *name;
        char path[40];
        int err;

        if (!s->xattr)
                return -ENOSYS;
        if ((err = freq_string(r, &pos, FREQ_NAME_MAX, &name)) < 0)
                return err == -ENAMETOOLONG ? -ERANGE : err;
        if (!i.p)
                return -EBADF;
        if ((err = xattr_path(i.p, path, sizeof(path))) < 0)
                return err == -ENOTSUP ? -ENODATA : err;
        if (removexattr(path, name) < 0)
                return -errno;
        freq_reply(r, NULL, 0);
        return 0;
}

/* ---- locks ---- */

static int lk_to_flock(const struct fuse_file_lock *lk, struct flock *fl)
{
        if (lk->type != F_RDLCK && lk->type != F_WRLCK && lk->type != F_UNLCK)
                return -EINVAL;
        if (lk->start > (uint64_t)INT64_MAX || lk->end < lk->start)
                return -EINVAL;
        memset(fl, 0, sizeof(*fl));
        fl->l_type = (short)lk->type;
        fl->l_whence = SEEK_SET;
        fl->l_start = (off_t)lk->start;
        fl->l_len = lk->end >= (uint64_t)INT64_MAX ? 0 : (off_t)(lk->end - lk->start + 1);
        return 0;
}

int pt_getlk(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        ARG(fuse_lk_in, in, r);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        struct fuse_lk_out out = { 0 };
        struct flock fl;
        _cleanup_close_ fd = -1;
        int err;

        if (!i.p)
                return -EBADF;
        if ((err = lk_to_flock(&in->lk, &fl)) < 0)
                return err;
        if (i.p->type != S_IFREG)
                return -EINVAL;
        /* A query makes no owner: an owner without locks sees what any fd sees. */
        fd = inode_lock_owner_fd(i.p, s->proc_fd, in->owner, !is_readonly(s), false);
        if (fd < 0)
                return fd;
        if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
                return -errno;
        out.lk.type = (uint32_t)fl.l_type;
        if (fl.l_type != F_UNLCK) {
                out.lk.start = (uint64_t)fl.l_start;
                out.lk.end = fl.l_len == 0 ? (uint64_t)INT64_MAX : (uint64_t)(fl.l_start + fl.l_len - 1);
        }
        out.lk.pid = 0; /* OFD locks have no owning process to report */
        freq_reply(r, &out, sizeof(out));
        return 0;
}

/* A SETLKW that has to wait: it keeps its descriptor chain (through the
 * transport's token) and a copy of the reply iovecs, and retries in its own
 * thread until it gets the lock or the session goes away. */
struct lock_waiter {
        struct fs_session *s;
        fs_complete_fn complete;
        void *complete_data;
        void *token;
        uint64_t start_usec;
        struct freq r;            /* reply side only: header copy, out iovecs */
        struct iovec *out_iov;
        int fd;                   /* a dup: the lock's open file description */
        bool is_flock;
        int flock_op;
        struct flock fl;
        /* under s->wait_mutex */
        bool interrupted;
        struct lock_waiter *next;
};

static int try_lock(struct lock_waiter *lw)
{
        if (lw->is_flock)
                return flock(lw->fd, lw->flock_op | LOCK_NB) < 0 ? -errno : 0;
        return fcntl(lw->fd, F_OFD_SETLK, &lw->fl) < 0 ? -errno : 0;
}

static bool lock_busy(int err)
{
        return err == -EAGAIN || err == -EACCES || err == -EWOULDBLOCK;
}

/* Called with s->wait_mutex held. */
static void waiter_unlink(struct fs_session *s, struct lock_waiter *lw)
{
        for (struct lock_waiter **p = &s->waiters; *p; p = &(*p)->next)
                if (*p == lw) {
                        *p = lw->next;
                        return;
                }
}

static void *lock_waiter_thread(void *arg)
{
        struct lock_waiter *lw = arg;
        struct fs_session *s = lw->s;
        unsigned delay_us = 1000;
        bool cancelled = false;
        int err;

        /* Retrying with a short backoff, rather than blocking in F_OFD_SETLKW,
         * lets a session reset stop the wait without signals. */
        for (;;) {
                struct timespec ts;

                err = try_lock(lw);
                if (!lock_busy(err))
                        break;
                pthread_mutex_lock(&s->wait_mutex);
                cancelled = s->cancel_waiters;
                if (lw->interrupted) {
                        pthread_mutex_unlock(&s->wait_mutex);
                        err = -EINTR;
                        break;
                }
                if (!cancelled) {
                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        ts.tv_nsec += (long)delay_us * 1000;
                        if (ts.tv_nsec >= 1000000000) {
                                ts.tv_sec++;
                                ts.tv_nsec -= 1000000000;
                        }
                        (void)pthread_cond_timedwait(&s->wait_cond, &s->wait_mutex, &ts);
                        cancelled = s->cancel_waiters;
                }
                pthread_mutex_unlock(&s->wait_mutex);
                if (cancelled)
                        break;
                if (delay_us < 20000)
                        delay_us *= 2;
        }
        close(lw->fd);
        pthread_mutex_lock(&s->wait_mutex);
        waiter_unlink(s, lw);
        pthread_mutex_unlock(&s->wait_mutex);
        if (!cancelled) {
                if (err < 0)
                        freq_reply_error(&lw->r, err);
                else
                        freq_reply(&lw->r, NULL, 0);
                pt_request_done(s, &lw->r, lw->start_usec);
                lw->complete(lw->token, lw->r.reply_len, lw->complete_data);
        }
        free(lw->out_iov);
        free(lw);
        pthread_mutex_lock(&s->wait_mutex);
        s->n_waiters--;
        pthread_cond_broadcast(&s->wait_cond);
        pthread_mutex_unlock(&s->wait_mutex);
        return NULL;
}

#define MAX_LOCK_WAITERS 256

static int defer_lock(struct fs_worker *w, struct freq *r, int fd, bool is_flock, int flock_op,
                      const struct flock *fl)
{
        struct fs_session *s = w->s;
        struct lock_waiter *lw;
        pthread_attr_t attr;
        pthread_t tid;
        int err;

        if (!w->complete)
                return -EDEADLK; /* the transport cannot finish deferred requests */
        lw = calloc(1, sizeof(*lw));
        if (!lw)
                return -ENOLCK;
        lw->out_iov = calloc(r->out_cnt ? r->out_cnt : 1, sizeof(*lw->out_iov));
        lw->fd = dup(fd);
        if (!lw->out_iov || lw->fd < 0) {
                if (lw->fd >= 0)
                        close(lw->fd);
                free(lw->out_iov);
                free(lw);
                return -ENOLCK;
        }
        memcpy(lw->out_iov, r->out_iov, r->out_cnt * sizeof(*lw->out_iov));
        lw->r = *r;
        lw->r.in_iov = NULL;
        lw->r.in_cnt = 0;
        lw->r.arg = NULL;
        lw->r.arg_len = 0;
        lw->r.out_iov = lw->out_iov;
        lw->s = s;
        lw->complete = w->complete;
        lw->complete_data = w->complete_data;
        lw->token = w->token;
        lw->start_usec = w->start_usec;
        lw->is_flock = is_flock;
        lw->flock_op = flock_op;
        if (fl)
                lw->fl = *fl;

        pthread_mutex_lock(&s->wait_mutex);
        if (s->n_waiters >= MAX_LOCK_WAITERS || s->cancel_waiters) {
                pthread_mutex_unlock(&s->wait_mutex);
                err = -ENOLCK;
                goto fail;
        }
        s->n_waiters++;
        lw->next = s->waiters;
        s->waiters = lw;
        pthread_mutex_unlock(&s->wait_mutex);

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        err = -pthread_create(&tid, &attr, lock_waiter_thread, lw);
        pthread_attr_destroy(&attr);
        if (err < 0) {
                pthread_mutex_lock(&s->wait_mutex);
                waiter_unlink(s, lw);
                s->n_waiters--;
                pthread_cond_broadcast(&s->wait_cond);
                pthread_mutex_unlock(&s->wait_mutex);
                goto fail;
        }
        w->deferred = true;
        return 0;
fail:
        close(lw->fd);
        free(lw->out_iov);
        free(lw);
        return err == -EAGAIN ? -ENOLCK : err;
}

void pt_interrupt(struct fs_session *s, uint64_t unique)
{
        pthread_mutex_lock(&s->wait_mutex);
        for (struct lock_waiter *lw = s->waiters; lw; lw = lw->next)
                if (lw->r.in.unique == unique)
                        lw->interrupted = true;
        pthread_cond_broadcast(&s->wait_cond);
        pthread_mutex_unlock(&s->wait_mutex);
}

void pt_interrupt_all(struct fs_session *s)
{
        pthread_mutex_lock(&s->wait_mutex);
        for (struct lock_waiter *lw = s->waiters; lw; lw = lw->next)
                lw->interrupted = true;
        pthread_cond_broadcast(&s->wait_cond);
        while (s->n_waiters > 0)
                pthread_cond_wait(&s->wait_cond, &s->wait_mutex);
        pthread_mutex_unlock(&s->wait_mutex);
}

void pt_cancel_waiters(struct fs_session *s)
{
        pthread_mutex_lock(&s->wait_mutex);
        s->cancel_waiters = true;
        pthread_cond_broadcast(&s->wait_cond);
        while (s->n_waiters > 0)
                pthread_cond_wait(&s->wait_cond, &s->wait_mutex);
        s->cancel_waiters = false;
        pthread_mutex_unlock(&s->wait_mutex);
}

static int do_setlk(struct fs_worker *w, struct freq *r, bool wait)
{
        struct fs_session *s = w->s;
        ARG(fuse_lk_in, in, r);
        _cleanup_iref_ i = GET_INODE(s, r->in.nodeid);
        struct flock fl;
        _cleanup_close_ fd = -1;
        int err;

        if (!i.p)
                return -EBADF;
        if ((err = lk_to_flock(&in->lk, &fl)) < 0)
                return err;

        if (in->lk_flags & FUSE_LK_FLOCK) {
                /* flock() locks belong to the open file: the guest's handle. */
                _cleanup_href_ h = GET_FILE(s, in->fh);
                int op = fl.l_type == F_RDLCK ? LOCK_SH : fl.l_type == F_WRLCK ? LOCK_EX : LOCK_UN;

                if (!h.p) {
                        h.p = handle_get(s->handles, in->fh, true);
                        if (!h.p)
                                return -EBADF;
                }
                if (flock(h.p->fd, op | LOCK_NB) == 0)
                        goto ok;
                err = -errno;
                if (!wait || !lock_busy(err) || op == LOCK_UN)
                        return err;
                return defer_lock(w, r, h.p->fd, true, op, NULL);
        }

        /* POSIX locks: one open file description per guest lock owner. */
        if (i.p->type != S_IFREG)
                return -EINVAL;
        /* Unlocking by an owner we never saw drops nothing: no fd kept for it. */
        fd = inode_lock_owner_fd(i.p, s->proc_fd, in->owner, !is_readonly(s), fl.l_type != F_UNLCK);
        if (fd < 0)
                return fd;
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
                goto ok;
        err = -errno;
        if (!lock_busy(err))
                return err;
        if (!wait)
                return -EAGAIN;
        return defer_lock(w, r, fd, false, 0, &fl);
ok:
        freq_reply(r, NULL, 0);
        return 0;
}

int pt_setlk(struct fs_worker *w, struct freq *r)
{
        return do_setlk(w, r, false);
}

int pt_setlkw(struct fs_worker *w, struct freq *r)
{
        return do_setlk(w, r, true);
}
