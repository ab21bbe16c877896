/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-entry.c — names and attributes: LOOKUP, FORGET, GETATTR, SETATTR,
 * READLINK, the node-creating and -removing requests, RENAME, LINK, and the
 * file-system-wide STATFS, ACCESS, SYNCFS. */
#include "pt-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "crash-point.h"
#include "credentials.h"
#include "log.h"
#include "metadata-helper.h"
#include "pt-name.h"

/* ---- lookups and attributes ---- */

int pt_lookup(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        struct fuse_entry_out e;
        struct pt_name n;
        size_t pos = 0;
        int err = pt_name_from_guest(fs, r, dir, &pos, PT_NAME_FIND, &n);

        if (err < 0)
                return err;
        err = pt_lookup_entry(fs, dir, n.name, &e);
        return err < 0 ? err : pt_reply(r, &e, sizeof(e));
}

int pt_forget(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        const struct fuse_forget_in *in = freq_arg(r, sizeof(*in));

        if (in)
                inode_forget(fs->inodes, r->in.nodeid, in->nlookup);
        return pt_reply_none(r);
}

int pt_batch_forget(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        const struct fuse_batch_forget_in *in = freq_arg(r, sizeof(*in));
        size_t off = sizeof(*in);

        if (!in)
                return pt_reply_none(r);
        for (uint32_t n = 0; n < in->count; n++, off += sizeof(struct fuse_forget_one)) {
                struct fuse_forget_one one;

                if (off + sizeof(one) > r->body_len)
                        break;
                if (off + sizeof(one) <= r->arg_len)
                        memcpy(&one, r->arg + off, sizeof(one));
                else if (freq_copy_in(r, sizeof(r->in) + off, &one, sizeof(one)) != sizeof(one))
                        break;
                inode_forget(fs->inodes, one.nodeid, one.nlookup);
                CRASH_POINT("forget-batch");
        }
        return pt_reply_none(r);
}

int pt_getattr(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        struct stat st;
        int err;

        PT_NEED_FD(fs, i);
        /* The FH form only exists for fstat() on an open file; the inode says the same. */
        err = pt_stat(i, &st);
        return err < 0 ? err : pt_reply_attr(fs, r, &st);
}

#define PT_FATTR_TIMES (FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW)

/* The two timespecs of a SETATTR (UTIME_OMIT where it sets none); -EINVAL
 * for nanoseconds out of range. */
static int setattr_times(const struct fuse_setattr_in *in, struct timespec ts[2])
{
        ts[0] = ts[1] = (struct timespec){ .tv_nsec = UTIME_OMIT };
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
        return 0;
}

/* Without the seccomp sandbox, or in a root worker's sealed namespace
 * (confine.h), the path-based calls, for every type (symlinks and special
 * files cannot be opened, a mode 000 file not by its owner, and an open costs
 * three calls more).  The paths are our own fds: "" or /proc/self/fd/N, whose
 * magic link names exactly the object the O_PATH fd holds (a symlink's mode
 * is refused before this).  Times go by "" where the kernel takes it (5.8). */
static int setattr_by_path(struct pt_fs *fs, struct inode *i, const struct fuse_setattr_in *in,
                           mode_t mode, uid_t uid, gid_t gid, const struct timespec ts[2])
{
        char name[16];

        confine_fd_name(name, sizeof(name), i->fd);
        if ((in->valid & FATTR_MODE) && fchmodat(fs->proc_fd, name, mode, 0) < 0)
                return -errno;
        if ((in->valid & (FATTR_UID | FATTR_GID)) &&
            fchownat(i->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!(in->valid & PT_FATTR_TIMES))
                return 0;
        if (utimensat(i->fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        if (errno != EINVAL || i->type == S_IFLNK)   /* a symlink has no other way */
                return -errno;
        return utimensat(fs->proc_fd, name, ts, 0) < 0 ? -errno : 0;
}

/* A desktop user's worker asks the metadata helper (metadata-helper.h),
 * alone with the shared folder in its own namespaces, to make the change by
 * the object's path inside the folder. */
static int setattr_via_helper(struct pt_fs *fs, const struct inode *i,
                              const struct fuse_setattr_in *in, mode_t mode, uid_t uid, gid_t gid,
                              const struct timespec ts[2])
{
        _cleanup_iref_ root = PT_INODE(fs, INODE_ROOT_ID);
        char rel[PATH_MAX];
        unsigned ops = 0;
        int err;

        if (!root.p)
                return -ESTALE;
        err = mdhelper_rel_path(fs->proc_fd, root.p->fd, i->fd, rel, sizeof(rel));
        if (err < 0)
                return err;
        if (in->valid & FATTR_MODE)
                ops |= MDHELPER_CHMOD;   /* never a symlink's: refused before */
        if (in->valid & (FATTR_UID | FATTR_GID))
                ops |= MDHELPER_CHOWN;
        if (in->valid & PT_FATTR_TIMES)
                ops |= MDHELPER_TIMES;
        return mdhelper_change(rel, ops, mode, uid, gid, ts);
}

/* Under the sandbox a symlink, socket or device node has no fd to change it
 * through (a device's open runs its driver, a socket cannot be opened), nor
 * has a FIFO the worker may not read (setattr_apply()): a change that
 * changes nothing (mkfifo -m, cp -a by the owner) succeeds, any other goes to
 * the metadata helper where it runs (a desktop user's worker), and is not
 * supported otherwise.  The O_PATH forms (fchownat, utimensat, fchmodat2 with
 * AT_EMPTY_PATH) stay refused in the worker: a planted call could aim them at
 * an O_PATH fd of any host file, which Landlock does not restrict
 * (README.md). */
static int setattr_unopenable(struct pt_fs *fs, const struct inode *i,
                              const struct fuse_setattr_in *in, mode_t mode, uid_t uid, gid_t gid,
                              const struct timespec ts[2])
{
        static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
        struct stat st;
        int err = pt_stat(i, &st);

        if (err < 0)
                return err;
        if ((in->valid & PT_FATTR_TIMES) ||
            ((in->valid & FATTR_MODE) && mode != (st.st_mode & 07777)) ||
            ((in->valid & FATTR_UID) && uid != st.st_uid) ||
            ((in->valid & FATTR_GID) && gid != st.st_gid)) {
                if (mdhelper_running()) {
                        err = setattr_via_helper(fs, i, in, mode, uid, gid, ts);
                        if (err != -EOPNOTSUPP)
                                return err;   /* else it is gone now (logged) */
                }
                log_ratelimited(&rl, LOG_LEVEL_INFO,
                                "not supported under the sandbox: changing the mode, owner or times "
                                "of a %s (--sandbox=none allows it)",
                                i->type == S_IFLNK ? "symlink"
                                : i->type == S_IFIFO ? "FIFO the worker may not read"
                                : i->type == S_IFSOCK ? "socket" : "device node");
                return -EOPNOTSUPP;
        }
        return 0;
}

/* A write or truncate by a non-owner makes the guest kernel drop the file's
 * set-ID bits with a SETATTR of the mode (we do not negotiate HANDLE_KILLPRIV):
 * a writer may do that, and nothing else, to another user's mode. */
static bool kills_setid_only(mode_t old_mode, uint32_t new_mode)
{
        const mode_t setid = S_ISUID | S_ISGID;

        return (((mode_t)new_mode ^ old_mode) & 07777 & ~setid) == 0 &&
               ((mode_t)new_mode & ~old_mode & setid) == 0;
}

/* What a local file system would refuse a non-owner (perm.h): the guest
 * kernel checked already; this holds without it.  `via_writable_fh`: a
 * truncate through a handle opened for writing needs no permission now. */
static int check_setattr(const struct pt_fs *fs, const struct freq *r, const struct inode *i,
                         const struct fuse_setattr_in *in, bool via_writable_fh)
{
        const struct perm_who who = pt_who(r);
        struct perm_node node;
        struct stat st;
        int err;

        if (who.uid == 0)
                return 0;
        if ((err = pt_stat(i, &st)) < 0)
                return err;
        pt_perm_node(fs, &st, &node);
        if ((in->valid & FATTR_UID) && in->uid != node.uid)
                return -EPERM;            /* giving a file away: root's alone */
        if ((in->valid & FATTR_MODE) && perm_owner(&who, &node) < 0 &&
            !(kills_setid_only(node.mode, in->mode) && perm_access(&who, &node, W_OK) == 0))
                return -EPERM;
        if ((in->valid & FATTR_GID) && (err = perm_owner(&who, &node)) < 0)
                return err;               /* chgrp: the owner (to which group the guest checked) */
        if ((in->valid & FATTR_SIZE) && !via_writable_fh &&
            (err = perm_access(&who, &node, W_OK)) < 0)
                return err;
        if (((in->valid & FATTR_ATIME) && !(in->valid & FATTR_ATIME_NOW)) ||
            ((in->valid & FATTR_MTIME) && !(in->valid & FATTR_MTIME_NOW)))
                return perm_owner(&who, &node);   /* explicit times */
        if ((in->valid & (FATTR_ATIME_NOW | FATTR_MTIME_NOW)) && perm_owner(&who, &node) < 0)
                return perm_access(&who, &node, W_OK);   /* "now": the owner or a writer */
        return 0;
}

/* A root worker holds no CAP_FSETID without --allow-setuid (capabilities.h),
 * and the kernel keeps S_ISGID in a chmod only for a member of the file's
 * group: for a set-group-ID directory, the thread joins its group (fsgid)
 * for the call.  Outside root mode the scope stays inactive. */
static int enter_dir_group(const struct inode *i, struct creds_scope *ret)
{
        struct stat st;
        int err = pt_stat(i, &st);

        return err < 0 ? err : creds_enter(0, st.st_gid, NULL, 0, ret);
}

/* SETATTR's work; -EAGAIN (from the O_NONBLOCK re-open, before anything
 * changed): a host lease on the file is being broken (pt_setattr()). */
static int setattr_apply(struct pt_fs *fs, struct freq *r, struct inode *i,
                         const struct fuse_setattr_in *in)
{
        _cleanup_href_ h = { fs->handles, NULL };
        _cleanup_close_ int own_fd = -1;
        _cleanup_creds_ group = { 0 };
        const bool by_fd_only = confine_fd_metadata_only() && !confine_sealed_namespace();
        struct timespec ts[2];
        struct stat st;
        mode_t mode = 0;
        uid_t uid = (uid_t)-1;
        gid_t gid = (gid_t)-1;
        int fd = -1, size_fd = -1, err;

        if (in->valid & FATTR_FH) {
                h.p = handle_get(fs->handles, in->fh, false);
                if (!h.p || h.p->inode != i)
                        return -EBADF;
                fd = h.p->fd;
                if (h.p->writable)
                        size_fd = fd;
        }
        if ((err = check_setattr(fs, r, i, in, size_fd >= 0)) < 0)
                return err;
        if ((err = pt_check_inside(fs, i)) < 0)
                return err;

        /* What cannot be done is refused before anything changes. */
        if ((err = setattr_times(in, ts)) < 0)
                return err;
        if (in->valid & FATTR_MODE) {
                if (i->type == S_IFLNK)
                        return -EOPNOTSUPP;
                mode = policy_mode(&fs->policy, i->type, in->mode, "a chmod", r->in.uid);
                /* The group is joined for the rest of the request (the fchmod below). */
                if (i->type == S_IFDIR && (mode & S_ISGID) && (err = enter_dir_group(i, &group)) < 0)
                        return err;
        }
        if (in->valid & FATTR_UID)
                uid = idmap_uid_to_host(&fs->idmap, in->uid);
        if (in->valid & FATTR_GID)
                gid = idmap_gid_to_host(&fs->idmap, in->gid);
        if (in->valid & FATTR_SIZE) {
                if (in->size > (uint64_t)INT64_MAX)
                        return -EFBIG;
                if (size_fd < 0 && i->type != S_IFREG)
                        return i->type == S_IFDIR ? -EISDIR : -EINVAL;
        }

        /* Under the seccomp sandbox metadata changes only through an fd we
         * opened inside the folder (sandbox.c refuses the path-based calls):
         * the handle's, or one re-open of the inode.  A FIFO opened for
         * reading with O_NONBLOCK never blocks and reads nothing: at most a
         * writer waiting in open() goes on, as for a reader that came and
         * went.  A device or socket is never opened.  A FIFO the worker
         * may not read falls to setattr_unopenable() (the metadata helper).  Without the sandbox,
         * or in a root worker's sealed namespace (where no path leads
         * outside), the calls by our own fd's name (setattr_by_path())
         * change the same object with no open, no identity check and no
         * close: three system calls fewer.  A truncate needs a file open for
         * writing either way. */
        if ((in->valid & FATTR_SIZE) && size_fd < 0) {
                own_fd = confine_reopen(fs->proc_fd, i->fd, O_WRONLY | O_NONBLOCK);
                if (own_fd < 0)
                        return own_fd;
                size_fd = own_fd;
        } else if (fd < 0 && by_fd_only &&
                   (in->valid & (FATTR_MODE | FATTR_UID | FATTR_GID | PT_FATTR_TIMES)) &&
                   (i->type == S_IFREG || i->type == S_IFDIR || i->type == S_IFIFO)) {
                own_fd = confine_reopen(fs->proc_fd, i->fd, O_RDONLY | O_NONBLOCK);
                if (own_fd == -EACCES && i->type == S_IFIFO)
                        own_fd = -1;
                else if (own_fd < 0)
                        return own_fd;
        }
        if (fd < 0)
                fd = own_fd;
        if (fd < 0) {
                err = by_fd_only ? setattr_unopenable(fs, i, in, mode, uid, gid, ts)
                                 : setattr_by_path(fs, i, in, mode, uid, gid, ts);
                if (err < 0)
                        return err;
        } else {
                if ((in->valid & FATTR_MODE) && fchmod(fd, mode) < 0)
                        return -errno;
                if ((in->valid & (FATTR_UID | FATTR_GID)) && fchown(fd, uid, gid) < 0)
                        return -errno;
        }
        if ((in->valid & FATTR_SIZE) && ftruncate(size_fd, (off_t)in->size) < 0)
                return -errno;
        if (fd >= 0 && (in->valid & PT_FATTR_TIMES) && futimens(fd, ts) < 0)
                return -errno;
        err = pt_stat(i, &st);
        return err < 0 ? err : pt_reply_attr(fs, r, &st);
}

/* A SETATTR waiting for a lease: a deferred request keeps only its reply
 * side (freq_defer()), so the arguments are kept here. */
struct setattr_wait {
        struct inode *inode;     /* referenced */
        struct fuse_setattr_in in;
};

static int setattr_try(struct pt_fs *fs, struct freq *d, void *arg)
{
        struct setattr_wait *w = arg;

        return setattr_apply(fs, d, w->inode, &w->in);
}

static void setattr_done(struct pt_fs *fs, void *arg)
{
        struct setattr_wait *w = arg;

        inode_put(fs->inodes, w->inode);
        free(w);
}

/* A re-open that meets a host lease (a truncate breaks a read lease, any
 * open a write lease) waits as a leased OPEN does (pt-file.c, struct
 * open_wait): in a thread of its own, so the queue goes on. */
int pt_setattr(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        PT_ARG(fuse_setattr_in, in, r);
        struct setattr_wait *w;
        int err;

        PT_NEED_FD(fs, i);
        err = setattr_apply(fs, r, i, in);
        if (err != -EAGAIN)
                return err;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        inode_ref(fs->inodes, i);
        *w = (struct setattr_wait){ .inode = i, .in = *in };
        return pt_lock_wait_defer(fs, r, setattr_try, setattr_done, w);
}

int pt_readlink(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        ssize_t n;

        PT_NEED_FD(fs, i);
        if (i->type != S_IFLNK)
                return -EINVAL;
        n = readlinkat(i->fd, "", (char *)r->buf, FREQ_PATH_MAX);
        if (n < 0)
                return -errno;
        return pt_reply(r, r->buf, (size_t)n);
}

/* ---- creating and removing names ---- */

int pt_symlink(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        struct pt_name n;
        size_t pos = 0;
        const char *name, *target;
        int err = pt_name_from_guest(fs, r, dir, &pos, PT_NAME_MAKE_EXCL, &n);

        PT_NEED_FD(fs, dir);
        if (err < 0)
                return err;
        name = n.name;
        /* The target is only data for the guest: it is never followed on the host. */
        err = freq_string(r, &pos, FREQ_PATH_MAX - 1, &target);
        if (err < 0)
                return err;
        if (err == 0)
                return -ENOENT;
        if ((err = pt_check_access(fs, r, dir, W_OK | X_OK)) < 0 ||
            (err = pt_check_inside_unconfined(fs, dir)) < 0)
                return err;
        struct pt_name_change change;
        pt_name_case_before(fs, r, dir, &change);
        if (symlinkat(target, dir->fd, name) < 0)
                return -errno;
        pt_name_case_after(fs, dir, &change, NULL, name);
        return pt_reply_new_node(fs, r, dir, name, -1, NULL, O_RDONLY);
}

/* MKNOD and MKDIR: the name follows the fixed argument at `pos`. */
static int make_node(struct pt_fs *fs, struct freq *r, struct inode *dir, size_t pos, mode_t mode,
                     dev_t rdev)
{
        struct pt_name n;
        const char *name;
        int err = pt_name_from_guest(fs, r, dir, &pos, PT_NAME_MAKE_EXCL, &n);

        PT_NEED_FD(fs, dir);
        if (err < 0)
                return err;
        name = n.name;
        if ((err = policy_check_mknod(&fs->policy, mode, name, r->in.uid)) < 0)
                return err;
        if ((err = pt_check_access(fs, r, dir, W_OK | X_OK)) < 0 ||
            (err = pt_check_inside_unconfined(fs, dir)) < 0)
                return err;
        mode = (mode & S_IFMT) | policy_mode(&fs->policy, mode & S_IFMT, mode, name, r->in.uid);
        struct pt_name_change change;
        pt_name_case_before(fs, r, dir, &change);
        if ((S_ISDIR(mode) ? mkdirat(dir->fd, name, mode & 07777) : mknodat(dir->fd, name, mode, rdev)) < 0)
                return -errno;
        pt_name_case_after(fs, dir, &change, NULL, name);
        return pt_reply_new_node(fs, r, dir, name, -1, NULL, O_RDONLY);
}

int pt_mknod(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        PT_ARG(fuse_mknod_in, in, r);

        if (S_ISDIR(in->mode))
                return -EPERM;   /* as mknod(2): directories come from MKDIR */
        return make_node(fs, r, dir, sizeof(*in), (in->mode & S_IFMT) | pt_masked(in->mode, in->umask),
                         in->rdev);
}

int pt_mkdir(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        PT_ARG(fuse_mkdir_in, in, r);

        return make_node(fs, r, dir, sizeof(*in), S_IFDIR | pt_masked(in->mode, in->umask), 0);
}

static int remove_name(struct pt_fs *fs, struct freq *r, struct inode *dir, int flags)
{
        size_t pos = 0;
        struct stat victim;
        bool have_victim;
        struct pt_name n;
        const char *name;
        int err = pt_name_from_guest(fs, r, dir, &pos, PT_NAME_FIND, &n);

        PT_NEED_FD(fs, dir);
        if (err < 0)
                return err;
        name = n.name;
        if ((err = pt_check_remove(fs, r, dir, name)) < 0)
                return err;
        if ((err = pt_check_inside(fs, dir)) < 0)
                return err;
        /* An inode the guest still knows may have been reached through this
         * name: it must keep its descriptor (inode_note_removed()).  Only
         * asked when some known inode was reached through dir. */
        have_victim = inode_has_kids(dir) && fstatat(dir->fd, name, &victim, AT_SYMLINK_NOFOLLOW) == 0;
        struct pt_name_change change;
        pt_name_case_before(fs, r, dir, &change);
        if (unlinkat(dir->fd, name, flags) < 0)
                return -errno;
        pt_name_case_after(fs, dir, &change, name, NULL);
        if (have_victim)
                inode_note_removed(fs->inodes, victim.st_dev, victim.st_ino);
        return pt_reply_ok(r);
}

int pt_unlink(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        return remove_name(fs, r, dir, 0);
}

int pt_rmdir(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        return remove_name(fs, r, dir, AT_REMOVEDIR);
}

/* A rename moved an object to `name` in `dir`: an inode the guest knows is
 * reachable there now (to reopen it by; pt_check_inside() of a deep one asks
 * that directory). */
static void note_moved(struct pt_fs *fs, struct inode *dir, const char *name)
{
        struct stat st;

        if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                inode_note_name(fs->inodes, st.st_dev, st.st_ino, dir, name);
}

static int do_rename(struct pt_fs *fs, struct freq *r, struct inode *olddir, uint64_t newdir_id,
                     size_t pos, unsigned flags)
{
        _cleanup_iref_ newdir = PT_INODE(fs, newdir_id);
        struct pt_name oldn, newn;
        const char *oldname, *newname;
        struct stat victim;
        bool have_victim;
        int err;

        if (!newdir.p)
                return -EBADF;
        if (newdir.p->type != S_IFDIR)
                return -ENOTDIR;
        /* The target of an exchange must exist, as the source does. */
        const enum pt_name_use new_use = (flags & RENAME_EXCHANGE) ? PT_NAME_FIND
                                         : (flags & RENAME_NOREPLACE) ? PT_NAME_MAKE_EXCL
                                         : PT_NAME_MAKE_REPLACE;
        if ((err = pt_name_from_guest(fs, r, olddir, &pos, PT_NAME_FIND, &oldn)) < 0 ||
            (err = __builtin_expect(r->name_modes & PT_CASE_INSENSITIVE, 0)
                   ? pt_name_case_rename_target(fs, r, olddir, &oldn, newdir.p, &pos, new_use, &newn)
                   : pt_name_from_guest(fs, r, newdir.p, &pos, new_use, &newn)) < 0)
                return err;
        oldname = oldn.name;
        newname = newn.name;
        PT_NEED_FD(fs, olddir);
        PT_NEED_FD(fs, newdir.p);
        /* The source goes away from its directory; a target that exists is
         * replaced (or, with RENAME_EXCHANGE, moved) as well. */
        if ((err = pt_check_remove(fs, r, olddir, oldname)) < 0)
                return err;
        err = pt_check_remove(fs, r, newdir.p, newname);
        if (err == -ENOENT)
                err = pt_check_access(fs, r, newdir.p, W_OK | X_OK);
        if (err < 0)
                return err;
        if ((err = pt_check_inside(fs, olddir)) < 0 ||
            (newdir.p != olddir && (err = pt_check_inside(fs, newdir.p)) < 0))
                return err;
        /* A target that is replaced loses a name through us: an inode the
         * guest knows by it keeps its descriptor.  Only asked when some known
         * inode was reached through newdir. */
        have_victim = !(flags & RENAME_EXCHANGE) && inode_has_kids(newdir.p) &&
                      fstatat(newdir.p->fd, newname, &victim, AT_SYMLINK_NOFOLLOW) == 0;
        const bool case_insensitive = __builtin_expect(r->name_modes & PT_CASE_INSENSITIVE, 0);
        struct pt_name_change old_change, new_change;
        if (case_insensitive) {
                pt_name_case_stamp(olddir, &old_change);
                pt_name_case_stamp(newdir.p, &new_change);
        }
        /* Both ends are single names under inode fds inside the folder. */
        if (renameat2(olddir->fd, oldname, newdir.p->fd, newname, flags) < 0)
                return -errno;
        if (case_insensitive)
                pt_name_case_renamed(fs, olddir, &old_change, oldname, newdir.p, &new_change, newname, flags);
        if (have_victim)
                inode_note_removed(fs->inodes, victim.st_dev, victim.st_ino);
        /* Where the moved inode is now (when it was reached through olddir,
         * or for pt_check_inside() when it changed directory). */
        if (newdir.p != olddir || inode_has_kids(olddir))
                note_moved(fs, newdir.p, newname);
        if ((flags & RENAME_EXCHANGE) && (newdir.p != olddir || inode_has_kids(newdir.p)))
                note_moved(fs, olddir, oldname);
        return pt_reply_ok(r);
}

int pt_rename(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        PT_ARG(fuse_rename_in, in, r);

        return do_rename(fs, r, dir, in->newdir, sizeof(*in), 0);
}

int pt_rename2(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        PT_ARG(fuse_rename2_in, in, r);

        if (in->flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
                return -EINVAL;
        return do_rename(fs, r, dir, in->newdir, sizeof(*in), in->flags);
}

int pt_link(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        PT_ARG(fuse_link_in, in, r);
        _cleanup_iref_ old = PT_INODE(fs, in->oldnodeid);
        size_t pos = sizeof(*in);
        struct pt_name n;
        const char *name;
        char procname[16];
        int err = pt_name_from_guest(fs, r, dir, &pos, PT_NAME_MAKE_EXCL, &n);

        PT_NEED_FD(fs, dir);
        if (err < 0)
                return err;
        name = n.name;
        if (!old.p)
                return -EBADF;
        if (old.p->type == S_IFDIR)
                return -EPERM;
        PT_NEED_FD(fs, old.p);
        if ((err = pt_check_access(fs, r, dir, W_OK | X_OK)) < 0 ||
            (err = pt_check_inside_unconfined(fs, dir)) < 0 ||
            (err = pt_check_inside_unconfined(fs, old.p)) < 0)
                return err;
        /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH on older kernels; the /proc
         * magic link of our own fd names exactly the same object. */
        struct pt_name_change change;
        pt_name_case_before(fs, r, dir, &change);
        if (linkat(old.p->fd, "", dir->fd, name, AT_EMPTY_PATH) < 0) {
                if (errno != ENOENT && errno != EPERM && errno != EINVAL)
                        return -errno;
                confine_fd_name(procname, sizeof(procname), old.p->fd);
                if (linkat(fs->proc_fd, procname, dir->fd, name, AT_SYMLINK_FOLLOW) < 0)
                        return -errno;
        }
        pt_name_case_after(fs, dir, &change, NULL, name);
        return pt_reply_new_node(fs, r, dir, name, -1, NULL, O_RDONLY);
}

/* ---- the file system ---- */

int pt_statfs(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        struct fuse_statfs_out out = { 0 };
        struct statvfs sv;

        PT_NEED_FD(fs, i);
        if (fstatvfs(i->fd, &sv) < 0)
                return -errno;
        out.st.blocks = sv.f_blocks;
        out.st.bfree = sv.f_bfree;
        out.st.bavail = sv.f_bavail;
        out.st.files = sv.f_files;
        out.st.ffree = sv.f_ffree;
        out.st.bsize = (uint32_t)sv.f_bsize;
        out.st.namelen = (uint32_t)sv.f_namemax;
        out.st.frsize = (uint32_t)sv.f_frsize;
        return pt_reply(r, &out, sizeof(out));
}

int pt_access(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        PT_ARG(fuse_access_in, in, r);
        char name[16];
        int mask = (int)(in->mask & (R_OK | W_OK | X_OK));
        int err;

        PT_NEED_FD(fs, i);
        if ((mask & W_OK) && pt_is_readonly(fs))
                return -EROFS;
        /* faccessat() checks the worker's own user: the requester's is ours to check. */
        if (i->type != S_IFLNK && (err = pt_check_access(fs, r, i, mask)) < 0)
                return err;
        if (i->type == S_IFLNK)
                return pt_reply_ok(r);   /* access() follows links; a link's own bits mean nothing */
        if (faccessat(i->fd, "", mask, AT_EMPTY_PATH) < 0) {
                if (errno != EINVAL && errno != ENOSYS)
                        return -errno;
                confine_fd_name(name, sizeof(name), i->fd);
                if (faccessat(fs->proc_fd, name, mask, 0) < 0)
                        return -errno;
        }
        return pt_reply_ok(r);
}

int pt_syncfs(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        _cleanup_iref_ root = PT_INODE(fs, INODE_ROOT_ID);
        _cleanup_close_ int fd = -1;

        if (!root.p)
                return -EBADF;
        fd = confine_reopen(fs->proc_fd, root.p->fd, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        if (syncfs(fd) < 0)
                return -errno;
        return pt_reply_ok(r);
}
