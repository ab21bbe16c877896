/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-file.c — open files: OPEN, CREATE, TMPFILE and the requests on a file
 * handle (READ, WRITE, FLUSH, RELEASE, FSYNC, FALLOCATE, LSEEK,
 * COPY_FILE_RANGE).  READ and WRITE move data straight between the host file
 * and guest memory (preadv/pwritev on slices of the descriptor chain). */
#include "pt-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "confine.h"
#include "pt-name.h"

static bool wants_write(int flags)
{
        return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

/* The permissions an open with `flags` needs. */
static int open_mask(int flags)
{
        int mask = (flags & O_ACCMODE) == O_WRONLY ? W_OK
                 : (flags & O_ACCMODE) == O_RDWR ? R_OK | W_OK : R_OK;

        return (flags & O_TRUNC) ? mask | W_OK : mask;
}

/* CREATE: opening an existing file needs what OPEN needs, making one needs
 * write and search permission on the directory. */
static int check_create(const struct pt_fs *fs, const struct freq *r, const struct inode *dir,
                        const char *name, int flags)
{
        struct perm_who who = pt_who(r);
        struct perm_node node;
        struct stat st;

        if (who.uid == 0)
                return 0;
        if (!(flags & O_EXCL) && fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                pt_perm_node(fs, &st, &node);
                return perm_access(&who, &node, open_mask(flags));
        }
        return pt_check_access(fs, r, dir, W_OK | X_OK);
}

/* A host process's lease on the file (Samba's oplocks, knfsd's delegations)
 * makes an open that conflicts with it break the lease, and wait until the
 * holder lets go or the lease-break time (/proc/sys/fs/lease-break-time)
 * runs out.  Our opens of existing files use O_NONBLOCK (on a regular file
 * it changes nothing else; it is taken back unless the guest asked for it),
 * so such an open answers EAGAIN at once, the kernel having told the holder;
 * unless the guest asked for O_NONBLOCK (then EAGAIN is its answer, as for a
 * local open), the request then waits in a thread of its own retrying it
 * (pt_lock_wait_defer()), and the queue goes on.  That thread starts with the
 * handler's credentials (per thread, inherited: credentials.h), so a CREATE
 * that makes the file after all (the name went meanwhile) makes it as the
 * requester, as on the queue thread. */
struct open_wait {
        struct inode *inode;     /* referenced: OPEN's file, CREATE's directory */
        int flags;               /* the guest's: without O_NONBLOCK */
        mode_t mode;             /* CREATE's, the policy's applied */
        bool create;
        char name[];             /* CREATE's */
};

/* F_SETFL sets only the status flags (O_APPEND, O_NONBLOCK among ours) and
 * ignores the rest of `flags`: one call. */
static int drop_nonblock(int fd, int flags)
{
        if (flags & O_NONBLOCK)
                return 0;
        return fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? -errno : 0;
}

/* OPEN's open of i and its reply; -EAGAIN: a lease is being broken. */
static int open_reply(struct pt_fs *fs, struct freq *r, struct inode *i, int flags)
{
        struct fuse_open_out out = { 0 };
        int fd, err;

        fd = pt_fd_keep(fs, confine_reopen(fs->proc_fd, i->fd, flags | O_NONBLOCK));
        if (fd < 0)
                return fd;
        if ((err = drop_nonblock(fd, flags)) < 0) {
                (void) close(fd);
                return err;
        }
        err = handle_add(fs->handles, fd, i, false, flags, &out.fh);
        if (err < 0)
                return err;
        out.open_flags = pt_file_open_flags(fs);
        return pt_reply(r, &out, sizeof(out));
}

static int create_reply(struct pt_fs *fs, struct freq *r, struct inode *dir, const char *name,
                        int flags, mode_t mode);

static int open_wait_try(struct pt_fs *fs, struct freq *d, void *arg)
{
        struct open_wait *w = arg;

        return w->create ? create_reply(fs, d, w->inode, w->name, w->flags, w->mode)
                         : open_reply(fs, d, w->inode, w->flags);
}

static void open_wait_done(struct pt_fs *fs, void *arg)
{
        struct open_wait *w = arg;

        inode_put(fs->inodes, w->inode);
        free(w);
}

/* The open got EAGAIN from a lease: wait as a local open would, unless the
 * guest asked not to.  Too many waiting already: EAGAIN too. */
static int open_wait_defer(struct pt_fs *fs, struct freq *r, struct inode *inode, const char *name,
                           int flags, mode_t mode)
{
        size_t len = name ? strlen(name) + 1 : 0;
        struct open_wait *w;

        if (flags & O_NONBLOCK)
                return -EAGAIN;
        w = calloc(1, sizeof(*w) + len);
        if (!w)
                return -ENOMEM;
        inode_ref(fs->inodes, inode);
        *w = (struct open_wait){ .inode = inode, .flags = flags, .mode = mode, .create = name != NULL };
        if (name)
                memcpy(w->name, name, len);
        return pt_lock_wait_defer(fs, r, open_wait_try, open_wait_done, w);
}

int pt_open(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        PT_ARG(fuse_open_in, in, r);
        int flags = pt_open_flags(in->flags), err;

        PT_NEED_FD(fs, i);
        if (wants_write(flags) && pt_is_readonly(fs))
                return -EROFS;
        if (i->type == S_IFDIR)
                return -EISDIR;
        if (i->type != S_IFREG)
                return i->type == S_IFLNK ? -ELOOP : -ENXIO; /* FIFOs would block the queue */
        if ((err = pt_check_access(fs, r, i, open_mask(flags))) < 0 ||
            (err = pt_check_inside_unconfined(fs, i)) < 0)
                return err;
        err = open_reply(fs, r, i, flags);
        return err == -EAGAIN ? open_wait_defer(fs, r, i, NULL, flags, 0) : err;
}

/* A CREATE without O_EXCL races with whoever else makes or removes the name:
 * this many rounds of "not there" / "there after all", then its error. */
#define CREATE_ROUNDS 16

/* CREATE without O_EXCL of a name that exists: only a regular file may
 * become a handle (as in pt_open()), and its type is known before anything
 * opens it for I/O.  Opening a device node runs its driver's open even with
 * O_NONBLOCK (as root a tape rewinds, a modem hangs up) and a FIFO's would
 * block the queue, so the name is taken with O_PATH, which opens nothing, and
 * a regular file is opened again through that fd: a node swapped in between
 * is not the object reopened.  An fd and *st, or -ENOENT when the name is
 * not there. */
static int open_existing(struct pt_fs *fs, struct inode *dir, const char *name, int flags,
                         struct stat *st)
{
        _cleanup_close_ int path_fd = confine_open_child(dir->fd, name, O_PATH, 0);
        int fd, err;

        if (path_fd < 0)
                return path_fd;
        if (fstat(path_fd, st) < 0)
                return -errno;
        if (!S_ISREG(st->st_mode))
                return S_ISDIR(st->st_mode) ? -EISDIR : S_ISLNK(st->st_mode) ? -ELOOP : -ENXIO;
        /* O_NONBLOCK: a lease answers EAGAIN at once (struct open_wait). */
        fd = pt_fd_keep(fs, confine_reopen(fs->proc_fd, path_fd,
                                           (flags & ~(O_CREAT | O_EXCL)) | O_NONBLOCK));
        if (fd < 0)
                return fd == -ENOENT ? -ESTALE : fd;   /* not "absent": it was there */
        err = fstat(fd, st) < 0 ? -errno : drop_nonblock(fd, flags);
        if (err < 0) {
                (void) close(fd);
                return err;
        }
        return fd;
}

/* CREATE without O_EXCL: the open and its reply; -EAGAIN: a lease is being
 * broken.  An existing name is opened only once it is known to be a regular
 * file (open_existing()), and a new one is made with O_EXCL all the same, so
 * that nothing that appears meanwhile is opened blindly. */
static int create_reply(struct pt_fs *fs, struct freq *r, struct inode *dir, const char *name,
                        int flags, mode_t mode)
{
        struct stat st;
        int fd = -ENOENT;

        for (unsigned round = 0; round < CREATE_ROUNDS; round++) {
                fd = open_existing(fs, dir, name, flags, &st);
                if (fd != -ENOENT)
                        break;
                fd = pt_fd_keep(fs, confine_open_child(dir->fd, name, flags | O_CREAT | O_EXCL, mode));
                if (fd >= 0 && fstat(fd, &st) < 0) {
                        int err = -errno;

                        (void) close(fd);
                        return err;
                }
                if (fd != -EEXIST)
                        break;
        }
        if (fd < 0)
                return fd;
        return pt_reply_new_node(fs, r, dir, name, fd, &st, flags);
}

int pt_create(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        PT_ARG(fuse_create_in, in, r);
        size_t pos = sizeof(*in);
        struct pt_name n;
        const char *name;
        int flags = pt_open_flags(in->flags) | (int)(in->flags & O_EXCL);
        mode_t mode;
        struct stat st;
        _cleanup_close_ int fd = -1;
        int err = pt_name_from_guest(fs, r, dir, &pos,
                                     (flags & O_EXCL) ? PT_NAME_MAKE_EXCL : PT_NAME_MAKE_OPEN, &n);

        PT_NEED_FD(fs, dir);
        if (err < 0)
                return err;
        name = n.name;
        if ((err = check_create(fs, r, dir, name, flags)) < 0 ||
            (err = pt_check_inside_unconfined(fs, dir)) < 0)
                return err;
        mode = policy_mode(&fs->policy, S_IFREG, pt_masked(in->mode, in->umask), name, r->in.uid);
        /* Without O_EXCL the name may already be a FIFO or a device node (made
         * by the guest or on the host): create_reply() opens only regular files,
         * and a lease on the file makes the request wait (see struct open_wait).
         * With O_EXCL (what open(O_CREAT) in a Linux guest sends for a new name)
         * the open fails on any existing name, symlinks included, so what it
         * opens is the regular file it just made: no O_NONBLOCK to take back,
         * no check, no lease. */
        struct pt_name_change change;
        pt_name_case_before(fs, r, dir, &change);
        if (!(flags & O_EXCL)) {
                err = create_reply(fs, r, dir, name, flags, mode);
                if (err == 0)   /* made, or opened: the same name again changes nothing */
                        pt_name_case_after(fs, dir, &change, NULL, name);
                return err == -EAGAIN ? open_wait_defer(fs, r, dir, name, flags, mode) : err;
        }
        fd = pt_fd_keep(fs, confine_open_child(dir->fd, name, flags | O_CREAT, mode));
        if (fd < 0)
                return fd;
        pt_name_case_after(fs, dir, &change, NULL, name);
        if (fstat(fd, &st) < 0)
                return -errno;
        return pt_reply_new_node(fs, r, dir, name, TAKE_FD(fd), &st, flags);
}

int pt_tmpfile(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        PT_ARG(fuse_create_in, in, r);
        int flags = pt_open_flags(in->flags) & ~O_TRUNC, fd, err;

        PT_NEED_FD(fs, dir);
        /* The name the kernel sends for a tmpfile is not a real one: ignored. */
        if ((flags & O_ACCMODE) == O_RDONLY)
                flags = (flags & ~O_ACCMODE) | O_RDWR;
        if ((err = pt_check_access(fs, r, dir, W_OK | X_OK)) < 0 ||
            (err = pt_check_inside_unconfined(fs, dir)) < 0)
                return err;
        fd = pt_fd_keep(fs, confine_open_child(dir->fd, ".", flags | O_TMPFILE,
                                               policy_mode(&fs->policy, S_IFREG,
                                                           pt_masked(in->mode, in->umask),
                                                           "a temporary file", r->in.uid)));
        if (fd < 0)
                return fd;
        return pt_reply_new_node(fs, r, dir, NULL, fd, NULL, flags);
}

/* Moves `len` bytes between the file at `pos` and the guest's buffers —
 * the request from byte `off` on (write) or the reply (read) — straight,
 * at most FREQ_MAX_IOV iovecs per call (IOV_MAX): a 4 KiB descriptor per
 * page of a large request takes more.  A short transfer (end of file, a full
 * disk) ends it; an error after some bytes moved is a short transfer too.
 * Returns the bytes moved or -errno. */
static ssize_t file_io(struct freq *r, int fd, bool write, size_t off, size_t len, uint64_t pos)
{
        size_t done = 0, covered;
        unsigned n;
        ssize_t got;

        while (done < len) {
                n = write ? freq_in_slice(r, off + done, len - done, r->iov, FREQ_MAX_IOV, &covered)
                          : freq_out_slice(r, off + done, len - done, r->iov, FREQ_MAX_IOV, &covered);
                if (n == 0)
                        break;
                got = write ? pwritev(fd, r->iov, (int)n, (off_t)(pos + done))
                            : preadv(fd, r->iov, (int)n, (off_t)(pos + done));
                if (got < 0)
                        return done ? (ssize_t)done : -errno;
                done += (size_t)got;
                if ((size_t)got < covered)
                        break;
        }
        return (ssize_t)done;
}

int pt_read(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_read_in, in, r);
        _cleanup_href_ h = PT_FILE(fs, in->fh);
        size_t want = in->size, max = atomic_load_explicit(&fs->max_io, memory_order_relaxed);
        ssize_t got;

        if (!h.p)
                return -EBADF;
        if (in->offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        if (r->out_size < sizeof(struct fuse_out_header))
                return -EINVAL;
        if (want > r->out_size - sizeof(struct fuse_out_header))
                want = r->out_size - sizeof(struct fuse_out_header);
        /* More than negotiated: the guest gets what it may ask for (a short read). */
        if (want > max)
                want = max;
        /* Into the guest's pages after the reply header. */
        got = file_io(r, h.p->fd, false, sizeof(struct fuse_out_header), want, in->offset);
        if (got < 0)
                return (int)got;
        stats_add(&fs->stats->bytes_read, (uint64_t)got);
        return pt_reply_payload(r, (size_t)got);
}

int pt_write(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_write_in, in, r);
        _cleanup_href_ h = PT_FILE(fs, in->fh);
        struct fuse_write_out out = { 0 };
        ssize_t done;

        if (!h.p || !h.p->writable)
                return -EBADF;
        /* The payload must be in the request, and no larger than INIT allowed. */
        if (in->size > r->body_len - sizeof(*in) ||
            in->size > atomic_load_explicit(&fs->max_io, memory_order_relaxed))
                return -EINVAL;
        if (in->offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        /* write_flags' KILL_SUIDGID is ignored (HANDLE_KILLPRIV_V2 is not
         * negotiated): the host kernel clears the set-ID bits on this write
         * whatever the guest says, as on a local one, because a root worker holds
         * no CAP_FSETID without --allow-setuid (capabilities.h) — no cost here. */
        /* From the guest's pages; a short write tells the guest how much went. */
        done = file_io(r, h.p->fd, true, sizeof(struct fuse_in_header) + sizeof(*in), in->size,
                       in->offset);
        if (done < 0)
                return (int)done;
        stats_add(&fs->stats->bytes_written, (uint64_t)done);
        out.size = (uint32_t)done;
        return pt_reply(r, &out, sizeof(out));
}

int pt_flush(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_flush_in, in, r);
        _cleanup_href_ h = PT_FILE(fs, in->fh);
        int fd;

        if (!h.p)
                return -EBADF;
        /* close() in the guest: its POSIX locks on this file go with it. */
        pt_lock_owner_release(h.p->inode, in->lock_owner);
        /* And what a close does on the host (NFS flushes, for one).  With
         * every descriptor in use (the guest holds them) there is no copy to
         * close: the guest's close() must not fail for that, and the handle's
         * own fd still does the same at RELEASE. */
        fd = dup(h.p->fd);
        if (fd < 0)
                return errno == EMFILE || errno == ENFILE ? pt_reply_ok(r) : -errno;
        if (close(fd) < 0 && errno != EINTR)
                return -errno;
        return pt_reply_ok(r);
}

int pt_release(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_release_in, in, r);

        if (in->release_flags & FUSE_RELEASE_FLOCK_UNLOCK) {
                _cleanup_href_ h = PT_FILE(fs, in->fh);

                if (h.p)
                        (void) flock(h.p->fd, LOCK_UN);
        }
        if (handle_release(fs->handles, in->fh, false) < 0)
                return -EBADF;
        return pt_reply_ok(r);
}

int pt_sync_handle(struct pt_fs *fs, struct freq *r, bool is_dir)
{
        PT_ARG(fuse_fsync_in, in, r);
        _cleanup_href_ h = { fs->handles, handle_get(fs->handles, in->fh, is_dir) };

        if (!h.p)
                return -EBADF;
        if (((in->fsync_flags & FUSE_FSYNC_FDATASYNC) ? fdatasync(h.p->fd) : fsync(h.p->fd)) < 0)
                return -errno;
        return pt_reply_ok(r);
}

int pt_fsync(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        return pt_sync_handle(fs, r, false);
}

int pt_fallocate(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_fallocate_in, in, r);
        _cleanup_href_ h = PT_FILE(fs, in->fh);

        if (!h.p)
                return -EBADF;
        if (in->offset > (uint64_t)INT64_MAX || in->length > (uint64_t)INT64_MAX)
                return -EINVAL;
        if (fallocate(h.p->fd, (int)in->mode, (off_t)in->offset, (off_t)in->length) < 0)
                return -errno;
        return pt_reply_ok(r);
}

int pt_lseek(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_lseek_in, in, r);
        _cleanup_href_ h = PT_FILE(fs, in->fh);
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
        return pt_reply(r, &out, sizeof(out));
}

int pt_copy_file_range(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_copy_file_range_in, in, r);
        _cleanup_href_ hin = PT_FILE(fs, in->fh_in);
        _cleanup_href_ hout = PT_FILE(fs, in->fh_out);
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
        return pt_reply(r, &out, sizeof(out));
}
