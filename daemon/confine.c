/* SPDX-License-Identifier: GPL-2.0-or-later */
/* confine.c — name checks and confined opens (see confine.h). */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "log.h"
#include "util.h"

int confine_check_name(const char *name, size_t len)
{
        if (len == 0)
                return -EINVAL;
        if (len > CONFINE_NAME_MAX)
                return -ENAMETOOLONG;
        if (memchr(name, '/', len) || memchr(name, '\0', len))
                return -EINVAL;
        if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
                return -EINVAL;
        return 0;
}

/* -1 unknown, 0 no, 1 yes.  Probed lazily; a race only probes twice. */
static _Atomic int have_openat2 = -1;

int confine_have_openat2(void)
{
        int v = atomic_load_explicit(&have_openat2, memory_order_relaxed);

        if (v < 0) {
                struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
                _cleanup_close_ int fd = (int)syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));

                v = fd >= 0 || (errno != ENOSYS && errno != EINVAL && errno != EPERM);
                atomic_store_explicit(&have_openat2, v, memory_order_relaxed);
                if (!v)
                        log_info("openat2() unavailable: confining with O_NOFOLLOW single-component opens");
        }
        return v;
}

/* openat2() tries on RESOLVE_BENEATH's EAGAIN: bounded, so that no EAGAIN
 * can keep a queue thread spinning. */
#define CONFINE_RACE_RETRIES 16

int confine_open_child(int dir_fd, const char *name, int flags, mode_t mode)
{
        int fd;

        flags |= O_NOFOLLOW | O_CLOEXEC;
        if (confine_have_openat2()) {
                struct open_how how = {
                        .flags = (uint64_t)(unsigned)flags,
                        .mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };

                /* RESOLVE_BENEATH's EAGAIN (a rename or mount raced a ".." in
                 * the walk: never for our single names) is retried a few
                 * times.  With O_NONBLOCK, EAGAIN is a host lease being broken
                 * (a blocking open would wait for it): that goes back at once. */
                for (unsigned tries = 0;; tries++) {
                        fd = (int)syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));
                        if (fd >= 0 || errno != EAGAIN || (flags & O_NONBLOCK) ||
                            tries >= CONFINE_RACE_RETRIES)
                                break;
                }
                if (fd >= 0 || errno != ENOSYS)
                        return fd >= 0 ? fd : -errno;
                atomic_store_explicit(&have_openat2, 0, memory_order_relaxed);
        }
        fd = openat(dir_fd, name, flags, mode);
        return fd >= 0 ? fd : -errno;
}

void confine_fd_name(char *buf, size_t size, int fd)
{
        snprintf(buf, size, "%d", fd);
}

int confine_open_proc_fd(void)
{
        int fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);

        return fd >= 0 ? fd : -errno;
}

int confine_reopen(int proc_fd, int path_fd, int flags)
{
        struct stat before, after;
        char name[16];
        _cleanup_close_ int fd = -1;

        /* The O_PATH fd was opened with O_NOFOLLOW, so it may be a symlink
         * itself: opening that through /proc would act on the link object,
         * which is never what the guest may ask for. */
        if (fstatat(path_fd, "", &before, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (S_ISLNK(before.st_mode))
                return -ELOOP;

        confine_fd_name(name, sizeof(name), path_fd);
        /* The one magic link we follow is our own fd of an object inside the folder. */
        fd = openat(proc_fd, name, (flags & ~(O_CREAT | O_NOFOLLOW)) | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &after) < 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino)
                return -ESTALE;
        return TAKE_FD(fd);
}

ssize_t confine_fd_path(int proc_fd, int fd, char buf[static PATH_MAX])
{
        char name[16];
        ssize_t n;

        confine_fd_name(name, sizeof(name), fd);
        n = readlinkat(proc_fd, name, buf, PATH_MAX);
        if (n < 0)
                return -errno;
        if (n == PATH_MAX)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return n;
}

/* Where a directory is: (dev, ino) and the mount it was reached through. */
struct place {
        uint64_t dev, ino, mnt_id;
        bool has_mnt_id;
};

static int place_of(int fd, struct place *ret, uint16_t *ret_mode, uint32_t *ret_nlink)
{
        struct statx stx;

        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
                  STATX_TYPE | STATX_INO | STATX_NLINK | STATX_MNT_ID, &stx) < 0)
                return -errno;
        ret->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
        ret->ino = stx.stx_ino;
        ret->has_mnt_id = stx.stx_mask & STATX_MNT_ID;
        ret->mnt_id = ret->has_mnt_id ? stx.stx_mnt_id : 0;
        if (ret_mode)
                *ret_mode = stx.stx_mode;
        if (ret_nlink)
                *ret_nlink = stx.stx_nlink;
        return 0;
}

static bool same_place(const struct place *a, const struct place *b)
{
        return a->dev == b->dev && a->ino == b->ino &&
               (!a->has_mnt_id || !b->has_mnt_id || a->mnt_id == b->mnt_id);
}

/* For paths too long for a /proc link: walks up from the directory `fd` with
 * "..", as the kernel sees it now (mount points crossed, bind mounts told
 * apart by mount id), until it meets the shared folder (0) or the top, where
 * ".." is itself (-EACCES).  A ".." that leaves a bind mount's tree fails
 * (ENOENT): outside too.  Two system calls a level. */
static int inside_by_walk(int root_fd, int fd)
{
        struct place root, here, up;
        _cleanup_close_ int cur = -1;
        uint32_t root_nlink;
        uint16_t mode;

        if (place_of(root_fd, &root, NULL, &root_nlink) < 0 || root_nlink == 0)
                return -EACCES;    /* a deleted shared folder: nothing is inside */
        if (place_of(fd, &here, &mode, NULL) < 0)
                return -EACCES;
        if (!S_ISDIR(mode))
                return -ENAMETOOLONG;  /* no ".." to walk: the caller asks about its directory */
        for (unsigned depth = 0; depth <= CONFINE_INSIDE_MAX_DEPTH; depth++) {
                int next;

                if (same_place(&here, &root))
                        return 0;
                next = openat(cur >= 0 ? cur : fd, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -EACCES;
                if (cur >= 0)
                        (void) close(cur);
                cur = next;
                if (place_of(cur, &up, NULL, NULL) < 0)
                        return -EACCES;
                if (same_place(&up, &here))
                        return -EACCES;  /* the top: the shared folder was not on the way */
                here = up;
        }
        return -EACCES;  /* deeper than we look (or a tree moving under us): cannot tell */
}

int confine_check_inside(int proc_fd, int root_fd, int fd)
{
        static const char deleted[] = " (deleted)";
        char root[PATH_MAX], path[PATH_MAX];
        ssize_t rlen, plen;

        rlen = confine_fd_path(proc_fd, root_fd, root);
        plen = confine_fd_path(proc_fd, fd, path);
        /* The strings cannot tell: ask the tree itself (rare: paths of 4 KiB). */
        if (rlen == -ENAMETOOLONG || plen == -ENAMETOOLONG)
                return inside_by_walk(root_fd, fd);
        if (rlen < 0 || plen < 0)
                return -EACCES;
        if ((size_t)rlen >= sizeof(deleted) - 1 && strcmp(root + rlen - (sizeof(deleted) - 1), deleted) == 0)
                return -EACCES;
        /* Sharing "/", or a root worker sealed in its mount namespace, whose
         * "/" is the shared folder: everything it can name is inside, but
         * the kernel names an object the host moved out of the bind mount's
         * reach "/" too (it cannot name it from there), and only the root is
         * "/" by right. */
        if (rlen == 1 && root[0] == '/')
                return plen == 1 && path[0] == '/' && fd != root_fd ? -EACCES : 0;
        if (strncmp(path, root, (size_t)rlen) != 0)
                return -EACCES;
        return path[rlen] == '\0' || path[rlen] == '/' ? 0 : -EACCES;
}

/* Written once by the main thread before the queue threads exist (they see
 * it through pthread_create's ordering), read by them afterwards. */
static bool landlock_active;

void confine_note_landlock(void)
{
        landlock_active = true;
}

bool confine_landlock_active(void)
{
        return landlock_active;
}

int confine_path_of_open_fd(int proc_fd, int open_fd)
{
        char name[16];
        int fd;

        confine_fd_name(name, sizeof(name), open_fd);
        fd = openat(proc_fd, name, O_PATH | O_CLOEXEC);
        return fd >= 0 ? fd : -errno;
}

/* Written once by the main thread before the queue threads exist, as landlock_active. */
static bool fd_metadata_only;

void confine_note_fd_metadata_only(void)
{
        fd_metadata_only = true;
}

bool confine_fd_metadata_only(void)
{
        return fd_metadata_only;
}

/* Written once by the main thread before the queue threads exist, as landlock_active. */
static bool in_sealed_namespace;

void confine_note_sealed_namespace(void)
{
        in_sealed_namespace = true;
}

bool confine_sealed_namespace(void)
{
        return in_sealed_namespace;
}
