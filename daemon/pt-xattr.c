/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-xattr.c — extended attributes (--xattr): SETXATTR, GETXATTR,
 * LISTXATTR, REMOVEXATTR.  Without --xattr the dispatcher answers them with
 * ENOSYS, as virtiofsd does: the kernel then stops sending them. */
#include "pt-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/xattr.h>

#include "confine.h"
#include "mount-namespace.h"

#define XATTR_PATH_SIZE 40

/* Reading an inode's xattrs goes through the path of our own fd in /proc
 * (the f*xattr calls do not take O_PATH fds, and a re-open per GETXATTR would
 * cost two system calls and open FIFOs): a read names no file but ours, and a
 * planted one learns what stat() would.  mountns_fd_path(): a root worker's
 * "/" is the shared folder.  Changes go through an fd (below).
 * Symlinks have no user xattrs on Linux. */
static int xattr_path(const struct inode *i, char buf[static XATTR_PATH_SIZE])
{
        if (i->type == S_IFLNK)
                return -ENOTSUP;
        mountns_fd_path(buf, XATTR_PATH_SIZE, i->fd);
        return 0;
}

/* The attribute name at *pos and the path of the inode; `symlink_error` is
 * what a symlink answers. */
static int xattr_target(const struct freq *r, const struct inode *i, size_t *pos, int symlink_error,
                        const char **ret_name, char path[static XATTR_PATH_SIZE])
{
        int len = freq_string(r, pos, FREQ_NAME_MAX, ret_name);

        if (len < 0)
                return len == -ENAMETOOLONG ? -ERANGE : len;
        if (len == 0)
                return -EINVAL;
        if (xattr_path(i, path) < 0)
                return symlink_error;
        return 0;
}

/* SETXATTR and REMOVEXATTR: the namespace must be one the guest may write
 * (guest-policy.h), and, as on a local file system, the file writable by the
 * requester (perm.h). */
static int check_xattr_write(struct pt_fs *fs, const struct freq *r, const struct inode *i,
                             const char *name)
{
        int err = policy_check_xattr_write(&fs->policy, name, r->in.uid);

        if (err == 0)
                err = pt_check_access(fs, r, i, W_OK);
        return err < 0 ? err : pt_check_inside(fs, i);
}

/* SETXATTR and REMOVEXATTR change a file only through an fd opened inside the
 * folder: sandbox.c refuses setxattr and removexattr by path.  A special
 * file cannot be opened without effects, and Linux refuses user.* xattrs on
 * it anyway: under the sandbox it answers EPERM, as the kernel does for
 * user.*.  Without the sandbox, a special file and a file its owner may not
 * read (mode 000) go through the /proc path as before (*ret_fd -1 then).
 * 0 or -errno. */
static int xattr_write_fd(struct pt_fs *fs, const struct inode *i, int *ret_fd)
{
        bool openable = i->type == S_IFREG || i->type == S_IFDIR;
        int fd = openable ? confine_reopen(fs->proc_fd, i->fd, O_RDONLY) : -EPERM;

        *ret_fd = fd >= 0 ? fd : -1;
        if (fd >= 0 || (!confine_fd_metadata_only() && (!openable || fd == -EACCES)))
                return 0;
        return fd;
}

int pt_setxattr(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        /* We do not negotiate FUSE_SETXATTR_EXT: the argument is the 8-byte form. */
        const struct fuse_setxattr_in *in = freq_arg(r, FUSE_COMPAT_SETXATTR_IN_SIZE);
        size_t pos = FUSE_COMPAT_SETXATTR_IN_SIZE;
        const char *name;
        char path[XATTR_PATH_SIZE];
        _cleanup_close_ int fd = -1;
        int err;

        PT_NEED_FD(fs, i);
        if (!in)
                return -EINVAL;
        if ((err = xattr_target(r, i, &pos, -EPERM, &name, path)) < 0)
                return err;
        if (in->size > FREQ_XATTR_SIZE_MAX)
                return -E2BIG;
        if (in->size > r->arg_len - pos)
                return -EINVAL;
        if ((err = check_xattr_write(fs, r, i, name)) < 0)
                return err;
        if ((err = xattr_write_fd(fs, i, &fd)) < 0)
                return err;
        if ((fd >= 0 ? fsetxattr(fd, name, r->arg + pos, in->size, (int)in->flags)
                     : setxattr(path, name, r->arg + pos, in->size, (int)in->flags)) < 0)
                return -errno;
        return pt_reply_ok(r);
}

/* GETXATTR and LISTXATTR answer a size probe (size 0) or the data itself. */
static int reply_xattr_data(struct freq *r, uint32_t size, ssize_t n)
{
        if (n < 0)
                return -errno;
        if (size == 0) {
                struct fuse_getxattr_out out = { .size = (uint32_t)n };

                return pt_reply(r, &out, sizeof(out));
        }
        if ((size_t)n > r->out_size - sizeof(struct fuse_out_header))
                return -ERANGE;
        return pt_reply(r, r->buf, (size_t)n);
}

int pt_getxattr(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        PT_ARG(fuse_getxattr_in, in, r);
        size_t pos = sizeof(*in);
        uint32_t size = in->size > FREQ_XATTR_SIZE_MAX ? FREQ_XATTR_SIZE_MAX : in->size;
        const char *name;
        char path[XATTR_PATH_SIZE];
        int err;

        PT_NEED_FD(fs, i);
        if ((err = xattr_target(r, i, &pos, -ENODATA, &name, path)) < 0)
                return err;
        return reply_xattr_data(r, size, getxattr(path, name, size ? r->buf : NULL, size));
}

int pt_listxattr(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        PT_ARG(fuse_getxattr_in, in, r);
        uint32_t size = in->size > FREQ_XATTR_SIZE_MAX ? FREQ_XATTR_SIZE_MAX : in->size;
        char path[XATTR_PATH_SIZE];

        PT_NEED_FD(fs, i);
        if (xattr_path(i, path) < 0)
                return reply_xattr_data(r, size, 0);
        return reply_xattr_data(r, size, listxattr(path, size ? (char *)r->buf : NULL, size));
}

int pt_removexattr(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        size_t pos = 0;
        const char *name;
        char path[XATTR_PATH_SIZE];
        _cleanup_close_ int fd = -1;
        int err;

        PT_NEED_FD(fs, i);
        if ((err = xattr_target(r, i, &pos, -ENODATA, &name, path)) < 0)
                return err;
        if ((err = check_xattr_write(fs, r, i, name)) < 0)
                return err;
        if ((err = xattr_write_fd(fs, i, &fd)) < 0)
                return err;
        if ((fd >= 0 ? fremovexattr(fd, name) : removexattr(path, name)) < 0)
                return -errno;
        return pt_reply_ok(r);
}

