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
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "pseudo-fs.h"
#include "util.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1   /* Linux 5.2; Debian 12's glibc headers lack it */
#endif

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

/* A detached copy of the one folder `fd` names (not its submounts): a ".."
 * walk stops at its top, as at a process's root.  -errno: the kernel (before
 * 5.2) or the container refuses it.  Only a folder of our own mount
 * namespace can be copied. */
static int clone_folder(int fd)
{
        int r = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);

        return r >= 0 ? r : -errno;
}

/* Undoes mountinfo's octal escapes (\040 for a space …) in place. */
static void unescape_mount_point(char *s)
{
        char *out = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        *out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 3;
                } else {
                        *out++ = *s;
                }
        }
        *out = '\0';
}

/* Whether the absolute path `mp` names something below the folder `dir`
 * (len bytes, no trailing '/' unless it is "/"). */
static bool strictly_below(const char *mp, const char *dir, size_t len)
{
        if (len == 1)
                return mp[0] == '/' && mp[1] != '\0';
        return strncmp(mp, dir, len) == 0 && mp[len] == '/' && mp[len + 1] != '\0';
}

/* Whether a pseudo file system (pseudo-fs.h) is mounted below `path` in our
 * namespace (the guest never enters one; a path-based call could): then the
 * folder fds are not sealed.  Unreadable mountinfo counts as yes. */
bool mountns_pseudo_fs_below(const char *path)
{
        _cleanup_free_ char *line = NULL;
        size_t size = 0, len = strlen(path);
        bool found = false;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return true;
        while (!found && getline(&line, &size, f) > 0) {
                char mp[PATH_MAX];
                struct statfs sfs;

                /* id parent major:minor root mount-point … */
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
                        continue;
                unescape_mount_point(mp);
                if (!strictly_below(mp, path, len))
                        continue;
                found = statfs(mp, &sfs) == 0 && pseudo_fs_name((unsigned long)sfs.f_type) != NULL;
        }
        fclose(f);
        return found;
}

int mountns_folder_path(int fd, char *buf, size_t size)
{
        char name[32];
        ssize_t n;

        snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
        n = readlink(name, buf, size);
        if (n < 0)
                return -errno;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return buf[0] == '/' ? 0 : -ENOENT;   /* deleted, or not reachable from our root */
}

const char *mountns_step_name(enum mountns_step step)
{
        static const char *const names[] = {
                [MOUNTNS_STEP_PRIVATE] = "making the mounts private",
                [MOUNTNS_STEP_BIND] = "bind-mounting the shared folder",
                [MOUNTNS_STEP_ENTER] = "entering the shared folder",
                [MOUNTNS_STEP_PIVOT] = "pivot_root",
                [MOUNTNS_STEP_DETACH] = "detaching the old root",
        };

        return (unsigned)step < ELEMENTSOF(names) ? names[step] : "?";
}

int mountns_bind_and_enter(const char *path, const struct stat *want, enum mountns_step *ret_step)
{
        struct stat got;

        *ret_step = MOUNTNS_STEP_PRIVATE;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        /* With the mounts below it (MS_REC), which the guest sees: they come
         * as a unit from the namespace copied, which a non-recursive bind
         * would have to split (refused in a user namespace's). */
        *ret_step = MOUNTNS_STEP_BIND;
        if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
                return -errno;
        *ret_step = MOUNTNS_STEP_ENTER;
        if (chdir(path) < 0)
                return -errno;
        /* The path may name another folder by now (renamed, swapped for a link). */
        if (stat(".", &got) < 0)
                return -errno;
        return got.st_dev == want->st_dev && got.st_ino == want->st_ino ? 0 : -ESTALE;
}

int mountns_pivot_here(enum mountns_step *ret_step)
{
        *ret_step = MOUNTNS_STEP_PIVOT;
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return -errno;
        /* The old root now sits on top of the new one: detach it. */
        *ret_step = MOUNTNS_STEP_DETACH;
        if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
                return -errno;
        return 0;
}

/* The steps of mountns_enter(); on failure *ret_step names the one that
 * failed.  On success the process's root and working directory are the
 * shared folder and *ret_proc_fd is /proc/self/fd, opened before the old
 * root went (a detached mount from then on: no way up to the host's tree);
 * *ret_proc_clone a copy of that folder alone, or -errno. */
static int pivot_into(int root_fd, const char **ret_step, int *ret_proc_fd, int *ret_proc_clone)
{
        char path[PATH_MAX];
        _cleanup_close_ int proc_fd = -1;
        enum mountns_step step;
        struct stat want;
        int r;

        *ret_proc_clone = -ENOENT;
        *ret_step = "finding the shared folder";
        if (fstat(root_fd, &want) < 0)
                return -errno;
        /* Its path in our namespace, which the new one copies: mount(2) takes
         * paths, and a bind from the old namespace's fd is refused. */
        if ((r = mountns_folder_path(root_fd, path, sizeof(path))) < 0)
                return r;

        *ret_step = "unshare(CLONE_NEWNS)";
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        if ((r = mountns_bind_and_enter(path, &want, &step)) < 0) {
                *ret_step = mountns_step_name(step);
                return r;
        }
        *ret_step = "opening /proc/self/fd";
        proc_fd = open_proc_fd_dir();
        if (proc_fd < 0)
                return proc_fd;
        /* While /proc is still a mount of this namespace. */
        *ret_proc_clone = mountns_pseudo_fs_below(path) ? -EXDEV : clone_folder(proc_fd);
        if ((r = mountns_pivot_here(&step)) < 0) {
                *ret_step = mountns_step_name(step);
                return r;
        }
        *ret_proc_fd = TAKE_FD(proc_fd);
        return 0;
}

/* Written once by the main thread before any other thread exists. */
static bool entered, sealed;

/* After the pivot: the worker's folder fds from before (root_fd,
 * session_proc_fd; -1: none) still walk the host's tree with "..".  They are
 * replaced in place (same number, so their holders need not know) by ones
 * that cannot: the new "/" and a detached copy of /proc/self/fd
 * (proc_clone).  0, or -errno with nothing changed. */
static int seal(int root_fd, int session_proc_fd, int proc_clone)
{
        _cleanup_close_ int new_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat want, got;

        if (new_root < 0)
                return -errno;
        if (fstat(root_fd, &want) < 0 || fstat(new_root, &got) < 0)
                return -errno;
        if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
                return -ESTALE;
        if (dup3(new_root, root_fd, O_CLOEXEC) < 0 ||
            (session_proc_fd >= 0 && dup3(proc_clone, session_proc_fd, O_CLOEXEC) < 0))
                return -errno;   /* dup3 fails only for bad numbers: none of ours */
        return 0;
}

int mountns_enter(int root_fd, int session_proc_fd)
{
        _cleanup_close_ int proc_fd = -1, proc_clone = -1;
        const char *skip = reason_to_skip(), *step = NULL;
        int r;

        if (skip) {
                log_info("mount namespace: not used (%s)", skip);
                return 0;
        }
        r = pivot_into(root_fd, &step, &proc_fd, &proc_clone);
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
        if (proc_clone >= 0) {
                r = seal(root_fd, session_proc_fd, proc_clone);
                if (r < 0)
                        log_info("mount namespace: the folders held from before stay: %s",
                                 strerror(-r));
                sealed = r == 0;
        } else {
                log_info("mount namespace: the folders held from before stay: %s",
                         proc_clone == -EXDEV ? "a pseudo file system is mounted below the "
                                                "shared folder"
                         : strerror(-proc_clone));
        }
        if (fchdir(sealed ? proc_clone : proc_fd) < 0) {
                r = -errno;
                log_error("mount namespace: cannot enter /proc/self/fd: %s", strerror(-r));
                return r;
        }
        entered = true;
        log_info("mount namespace: the worker's / is the shared folder; nothing else of the "
                 "host's file system is mounted there%s",
                 sealed ? ", nor reachable from any folder it holds" : "");
        return 1;
}

bool mountns_sanitizer_build(void)
{
#ifdef MOUNTNS_SANITIZER
        return true;
#else
        return false;
#endif
}

bool mountns_sealed(void)
{
        return sealed;
}

void mountns_fd_path(char *buf, size_t size, int fd)
{
        snprintf(buf, size, entered ? "%d" : "/proc/self/fd/%d", fd);
}
