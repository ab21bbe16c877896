/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mount-namespace.c — pivoting a root worker into the shared folder
 * (mount-namespace.h). */
#include "mount-namespace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MOUNTNS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MOUNTNS_SANITIZER 1
#endif
#endif

static int open_proc_fd_dir(void)
{
        int fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);

        return fd >= 0 ? fd : -errno;
}

/* Why the namespace is left out although it could be built, or NULL. */
static const char *reason_to_skip(void)
{
        const char *notify = getenv("NOTIFY_SOCKET");

#ifdef MOUNTNS_SANITIZER
        return "a sanitizer build reads /proc by path";
#endif
        if (notify && notify[0] == '/')
                return "$NOTIFY_SOCKET is a path the namespace would hide";
        return NULL;
}

/* The steps of mountns_enter(); on failure *ret_step names the one that
 * failed.  On success the process's root and working directory are the
 * shared folder and *ret_proc_fd is /proc/self/fd, opened before the old
 * root went (a detached mount from then on: no way up to the host's tree). */
static int pivot_into(int root_fd, const char **ret_step, int *ret_proc_fd)
{
        char name[32], path[PATH_MAX];
        _cleanup_close_ int proc_fd = -1;
        struct stat want, got;
        ssize_t n;

        *ret_step = "finding the shared folder";
        if (fstat(root_fd, &want) < 0)
                return -errno;
        /* Its path in our namespace, which the new one copies: mount(2) takes
         * paths, and a bind from the old namespace's fd is refused. */
        snprintf(name, sizeof(name), "/proc/self/fd/%d", root_fd);
        n = readlink(name, path, sizeof(path));
        if (n < 0)
                return -errno;
        if ((size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        path[n] = '\0';
        if (path[0] != '/')
                return -ENOENT;   /* deleted, or not reachable from our root */

        *ret_step = "unshare(CLONE_NEWNS)";
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        *ret_step = "making the mounts private";
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        *ret_step = "bind-mounting the shared folder";
        if (mount(path, path, NULL, MS_BIND, NULL) < 0)
                return -errno;
        *ret_step = "entering the shared folder";
        if (chdir(path) < 0)
                return -errno;
        /* The path may name another folder by now (renamed, swapped for a link). */
        if (stat(".", &got) < 0)
                return -errno;
        if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
                return -ESTALE;
        *ret_step = "opening /proc/self/fd";
        proc_fd = open_proc_fd_dir();
        if (proc_fd < 0)
                return proc_fd;
        *ret_step = "pivot_root";
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return -errno;
        /* The old root now sits on top of the new one: detach it. */
        *ret_step = "detaching the old root";
        if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
                return -errno;
        *ret_proc_fd = TAKE_FD(proc_fd);
        return 0;
}

/* Written once by the main thread before any other thread exists. */
static bool entered;

int mountns_enter(int root_fd)
{
        _cleanup_close_ int proc_fd = -1;
        const char *skip = reason_to_skip(), *step = NULL;
        int r;

        if (skip) {
                log_info("mount namespace: not used (%s)", skip);
                return 0;
        }
        r = pivot_into(root_fd, &step, &proc_fd);
        if (r < 0 && strcmp(step, "detaching the old root") == 0) {
                /* Pivoted already: neither view works as the rest expects. */
                log_error("mount namespace: %s failed: %s", step, strerror(-r));
                return r;
        }
        if (r < 0) {
                log_warning("mount namespace: %s failed: %s; serving with the host's view of the "
                            "file system", step,
                            r == -ESTALE ? "the shared folder was moved" : strerror(-r));
                return 0;
        }
        if (fchdir(proc_fd) < 0) {
                r = -errno;
                log_error("mount namespace: cannot enter /proc/self/fd: %s", strerror(-r));
                return r;
        }
        entered = true;
        log_info("mount namespace: the worker's / is the shared folder; nothing else of the "
                 "host's file system is mounted there");
        return 1;
}

void mountns_fd_path(char *buf, size_t size, int fd)
{
        snprintf(buf, size, entered ? "%d" : "/proc/self/fd/%d", fd);
}
