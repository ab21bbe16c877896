/* SPDX-License-Identifier: GPL-2.0-or-later */
/* metadata-helper.c — a helper process, alone with the shared folder in its
 * own user and mount namespaces, that changes the metadata of objects the
 * sandboxed worker cannot open (metadata-helper.h). */
#include "metadata-helper.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "config.h"
#include "confine.h"
#include "log.h"
#include "mount-namespace.h"
#include "util.h"

/* How long the worker waits for the helper's set-up and for each answer: it
 * makes at most three system calls per request. */
#define MDHELPER_START_TIMEOUT_MS 10000
#define MDHELPER_STOP_TIMEOUT_MS 1000
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434   /* the same number on every architecture */
#endif
#define MDHELPER_REPLY_TIMEOUT_MS 5000

struct mdhelper_request {
        uint32_t ops;               /* MDHELPER_* */
        uint32_t mode;
        uint32_t uid, gid;
        struct timespec ts[2];
        char path[PATH_MAX];        /* relative to the shared folder, NUL-terminated */
};

/* The helper's first message: 0 (ready) or -errno and the step that failed. */
struct mdhelper_ready {
        int32_t err;
        uint32_t step;
};

/* STEP_PRIVATE … STEP_DETACH: mountns_bind_and_enter()'s and
 * mountns_pivot_here()'s steps, in enum mountns_step's order. */
enum setup_step {
        STEP_FOLDER, STEP_USERNS, STEP_UID_MAP, STEP_SETGROUPS, STEP_GID_MAP, STEP_PRIVATE,
        STEP_BIND, STEP_ENTER, STEP_PIVOT, STEP_DETACH, STEP_CAPS, STEP_SECCOMP, STEP_COUNT
};
_Static_assert(STEP_DETACH - STEP_PRIVATE == MOUNTNS_STEP_DETACH, "the namespace steps' order");

static const char *const step_names[STEP_COUNT] = {
        [STEP_FOLDER] = "finding the shared folder",
        [STEP_USERNS] = "unshare(CLONE_NEWUSER|CLONE_NEWNS)",
        [STEP_UID_MAP] = "writing uid_map",
        [STEP_SETGROUPS] = "writing setgroups",
        [STEP_GID_MAP] = "writing gid_map",
        [STEP_CAPS] = "dropping the capabilities",
        [STEP_SECCOMP] = "loading the seccomp filter",
};

static const char *step_name(uint32_t step)
{
        if (step >= STEP_PRIVATE && step <= STEP_DETACH)
                return mountns_step_name((enum mountns_step)(step - STEP_PRIVATE));
        return step < STEP_COUNT ? step_names[step] : "setting up";
}

bool mdhelper_path_acceptable(const char *path)
{
        const char *p = path;

        if (path[0] == '\0' || path[0] == '/')
                return false;
        while (*p) {
                size_t len = strcspn(p, "/");

                if (len == 2 && p[0] == '.' && p[1] == '.')
                        return false;
                p += len;
                while (*p == '/')
                        p++;
        }
        return true;
}

/* ---- the helper ---- */

#define MDHELPER_NAME "sluice-fs-meta"

/* A forked helper keeps the worker's command line, and what finds workers by
 * it (ps, pgrep -f, the service's tests) would take it for a second worker:
 * its argument strings, contiguous from argv[0] (/proc/self/cmdline is that
 * area), are overwritten in place with its own name and NULs. */
static void rename_command_line(void)
{
        char head[4096], rest[4096];
        size_t first, total;
        ssize_t n;
        int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        n = read(fd, head, sizeof(head));
        first = total = n > 0 ? (size_t)n : 0;
        while ((n = read(fd, rest, sizeof(rest))) > 0)
                total += (size_t)n;
        close(fd);
        /* Only where the area starts with argv[0] as glibc recorded it. */
        if (total < sizeof(MDHELPER_NAME) || strnlen(head, first) >= first ||
            strcmp(head, program_invocation_name) != 0)
                return;
        memset(program_invocation_name, 0, total);
        memcpy(program_invocation_name, MDHELPER_NAME, sizeof(MDHELPER_NAME));
}

static int write_proc_file(const char *path, const char *text)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        size_t len = strlen(text);

        if (fd < 0)
                return -errno;
        if (write(fd, text, len) != (ssize_t)len)
                return errno ? -errno : -EIO;
        return 0;
}

/* Maps our own uid and gid alone, in a user namespace owning a new mount
 * namespace: there we may mount, and hold no power over anything else. */
static int enter_namespaces(enum setup_step *step)
{
        char map[64];
        uid_t uid = getuid();
        gid_t gid = getgid();
        int r;

        *step = STEP_USERNS;
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                return -errno;
        *step = STEP_UID_MAP;
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        if ((r = write_proc_file("/proc/self/uid_map", map)) < 0)
                return r;
        /* An unprivileged gid_map requires setgroups to be denied first. */
        *step = STEP_SETGROUPS;
        if ((r = write_proc_file("/proc/self/setgroups", "deny")) < 0)
                return r;
        *step = STEP_GID_MAP;
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        return write_proc_file("/proc/self/gid_map", map);
}

/* Into the shared folder `path` (still `want`), as mount-namespace.c does
 * for a root worker; leaves "/" as the working directory. */
static int pivot_into(const char *path, const struct stat *want, enum setup_step *step)
{
        enum mountns_step at;
        int r;

        if ((r = mountns_bind_and_enter(path, want, &at)) < 0 || (r = mountns_pivot_here(&at)) < 0)
                *step = STEP_PRIVATE + (enum setup_step)at;   /* the same order */
        return r;
}

/* It needs none: the user's own files take utimensat and chown from it. */
static int drop_privileges(void)
{
        struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = { { 0 } };

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        return syscall(SYS_capset, &head, data) < 0 ? -errno : 0;
}

#ifdef HAVE_SECCOMP
/* Anything else kills the helper.  The context is never released: free()
 * might trim the heap, a call the filter no longer allows. */
static int load_filter(void)
{
        static const int allowed[] = {
                SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(fchownat), SCMP_SYS(utimensat),
                SCMP_SYS(fchmodat), SCMP_SYS(exit_group), SCMP_SYS(exit),
                SCMP_SYS(rt_sigreturn),
        };
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
        int r = ctx ? 0 : -ENOMEM;

        for (size_t i = 0; r == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
        if (r == 0)
                r = seccomp_load(ctx);
        return r;
}
#else
static int load_filter(void)
{
        return -ENOSYS;
}
#endif

static int set_up(int root_fd, enum setup_step *step)
{
        char path[PATH_MAX];
        struct stat want;
        int r;

        *step = STEP_FOLDER;
        if (fstat(root_fd, &want) < 0)
                return -errno;
        if ((r = mountns_folder_path(root_fd, path, sizeof(path))) < 0)
                return r;
        if ((r = enter_namespaces(step)) < 0 || (r = pivot_into(path, &want, step)) < 0)
                return r;
        /* Its ".." would still lead up the host's tree. */
        close(root_fd);
        *step = STEP_CAPS;
        if ((r = drop_privileges()) < 0)
                return r;
        *step = STEP_SECCOMP;
        return load_filter();
}

static int32_t apply(struct mdhelper_request *req)
{
        const char *path = req->path;

        req->path[sizeof(req->path) - 1] = '\0';
        if (!mdhelper_path_acceptable(path))
                return -EINVAL;
        /* Never sent for a symlink (the worker refuses its mode first). */
        if ((req->ops & MDHELPER_CHMOD) && fchmodat(AT_FDCWD, path, req->mode & 07777, 0) < 0)
                return -errno;
        if ((req->ops & MDHELPER_CHOWN) &&
            fchownat(AT_FDCWD, path, req->uid, req->gid, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == EINVAL ? -EPERM : -errno;   /* an id our namespace does not map */
        if ((req->ops & MDHELPER_TIMES) && utimensat(AT_FDCWD, path, req->ts, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

static _Noreturn void helper_main(int sock, int root_fd)
{
        struct mdhelper_ready ready = { 0 };
        enum setup_step step = STEP_FOLDER;
        struct mdhelper_request req;

        (void)prctl(PR_SET_NAME, MDHELPER_NAME, 0, 0, 0);
        rename_command_line();
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        util_close_all_but(sock, root_fd);
        ready.err = set_up(root_fd, &step);
        ready.step = step;
        if (write(sock, &ready, sizeof(ready)) != sizeof(ready) || ready.err < 0)
                _exit(1);
        for (;;) {
                ssize_t n = read(sock, &req, sizeof(req));
                int32_t err;

                if (n == 0)
                        _exit(0);   /* the worker is gone */
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        _exit(1);
                err = n == (ssize_t)sizeof(req) ? apply(&req) : -EINVAL;
                if (write(sock, &err, sizeof(err)) != sizeof(err))
                        _exit(1);
        }
}

/* ---- the worker's side ---- */

static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
static int helper_fd = -1;   /* guarded by helper_lock */
static pid_t helper_pid;      /* for mdhelper_stop() */
static int helper_pidfd = -1; /* likewise: readable once it has exited */

/* Waits up to timeout_ms for `fd` to be readable: 1, 0 (timed out), -errno. */
static int wait_readable(int fd, int timeout_ms)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        return r < 0 ? -errno : r;
}

int mdhelper_start(int root_fd)
{
        struct mdhelper_ready ready = { .err = -EIO, .step = STEP_FOLDER };
        char path[PATH_MAX];
        int pair[2], r;
        pid_t pid;

        if (mountns_sanitizer_build()) {
                log_info("metadata helper: not used (a sanitizer build reads /proc by path); "
                         "the times and owner of symlinks stay unchangeable under the sandbox");
                return -EOPNOTSUPP;
        }
        if (mountns_folder_path(root_fd, path, sizeof(path)) == 0 && mountns_pseudo_fs_below(path)) {
                log_info("metadata helper: not used (a pseudo file system is mounted below "
                         "the shared folder); the times and owner of symlinks stay "
                         "unchangeable under the sandbox");
                return -EXDEV;
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
                r = -errno;
                log_info("metadata helper: not used (socketpair: %s)", strerror(-r));
                return r;
        }
        pid = fork();
        if (pid < 0) {
                r = -errno;
                log_info("metadata helper: not used (fork: %s)", strerror(-r));
                close(pair[0]);
                close(pair[1]);
                return r;
        }
        if (pid == 0)
                helper_main(pair[1], root_fd);
        close(pair[1]);
        r = wait_readable(pair[0], MDHELPER_START_TIMEOUT_MS);
        if (r > 0 && recv(pair[0], &ready, sizeof(ready), 0) != (ssize_t)sizeof(ready))
                ready = (struct mdhelper_ready){ .err = -EIO, .step = STEP_FOLDER };
        else if (r <= 0)
                ready.err = r < 0 ? r : -ETIMEDOUT;
        if (ready.err < 0) {
                close(pair[0]);
                (void)waitpid(pid, NULL, 0);   /* it exits at once, or on our close */
                log_info("metadata helper: not used (%s: %s); the times and owner of symlinks "
                         "stay unchangeable under the sandbox",
                         step_name(ready.step),
                         strerror(-ready.err));
                return ready.err;
        }
        pthread_mutex_lock(&helper_lock);
        helper_fd = pair[0];
        helper_pid = pid;
        /* before the sandbox, which allows pidfd_open too */
        helper_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        pthread_mutex_unlock(&helper_lock);
        log_info("metadata helper: ready");
        return 0;
}

bool mdhelper_running(void)
{
        bool running;

        pthread_mutex_lock(&helper_lock);
        running = helper_fd >= 0;
        pthread_mutex_unlock(&helper_lock);
        return running;
}

/* With helper_lock held. */
static void drop_helper(const char *why)
{
        log_warning("metadata helper: %s; changing the times or owner of a symlink is not "
                    "supported from now on", why);
        close(helper_fd);
        helper_fd = -1;
}

/* One request and its answer, with helper_lock held. */
static int32_t exchange(const struct mdhelper_request *req)
{
        int32_t err;
        int r;

        if (helper_fd < 0)
                return -EOPNOTSUPP;
        if (send(helper_fd, req, sizeof(*req), MSG_NOSIGNAL) != (ssize_t)sizeof(*req)) {
                drop_helper("gone");
                return -EOPNOTSUPP;
        }
        r = wait_readable(helper_fd, MDHELPER_REPLY_TIMEOUT_MS);
        if (r <= 0) {
                drop_helper(r == 0 ? "no answer" : "gone");
                return -EOPNOTSUPP;
        }
        if (recv(helper_fd, &err, sizeof(err), 0) != (ssize_t)sizeof(err) || err > 0) {
                drop_helper("gone");
                return -EOPNOTSUPP;
        }
        return err;
}

static int send_request(const char *path, unsigned ops, mode_t mode, uid_t uid, gid_t gid,
                        const struct timespec ts[2])
{
        static const struct timespec omit[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
        struct mdhelper_request req = {
                .ops = ops, .mode = (uint32_t)mode, .uid = (uint32_t)uid, .gid = (uint32_t)gid,
        };
        int32_t err;

        if (strlen(path) >= sizeof(req.path))
                return -ENAMETOOLONG;
        memcpy(req.ts, ts ? ts : omit, sizeof(req.ts));
        strcpy(req.path, path);
        pthread_mutex_lock(&helper_lock);
        err = exchange(&req);
        pthread_mutex_unlock(&helper_lock);
        return err;
}

int mdhelper_change(const char *rel_path, unsigned ops, mode_t mode, uid_t uid, gid_t gid,
                    const struct timespec ts[2])
{
        if (!mdhelper_path_acceptable(rel_path))
                return -EINVAL;
        return send_request(rel_path, ops, mode, uid, gid, ts);
}

int mdhelper_rel_path(int proc_fd, int root_fd, int fd, char *buf, size_t size)
{
        char root[PATH_MAX], obj[PATH_MAX];
        const char *rest;
        struct stat want, got;
        ssize_t rlen, olen;

        if ((rlen = confine_fd_path(proc_fd, root_fd, root)) < 0)
                return (int)rlen;
        if ((olen = confine_fd_path(proc_fd, fd, obj)) < 0)
                return (int)olen;
        if (root[0] != '/' || obj[0] != '/')
                return -ENOENT;   /* out of our root's reach */
        if (rlen == 1)
                rest = obj + 1;
        else if (strncmp(obj, root, (size_t)rlen) == 0 && obj[rlen] == '/')
                rest = obj + rlen + 1;
        else if (strcmp(obj, root) == 0)
                rest = "";
        else
                return -EXDEV;
        if (rest[0] == '\0')
                rest = ".";
        if (strlen(rest) >= size)
                return -ENAMETOOLONG;
        /* A deleted object's link reads "… (deleted)", which may name another. */
        if (fstat(fd, &want) < 0 || fstatat(root_fd, rest, &got, AT_SYMLINK_NOFOLLOW) < 0)
                return -ENOENT;
        if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
                return -ENOENT;
        strcpy(buf, rest);
        return 0;
}

#if SLUICE_TEST_HOOKS
int mdhelper_change_unchecked(const char *path, unsigned ops, mode_t mode, uid_t uid, gid_t gid,
                              const struct timespec ts[2])
{
        return send_request(path, ops, mode, uid, gid, ts);
}

#endif

void mdhelper_stop(void)
{
        pthread_mutex_lock(&helper_lock);
        if (helper_fd >= 0)
                close(helper_fd);
        helper_fd = -1;
        /* It exits at the end of file.  The kernel reaps it (main.c ignores
         * SIGCHLD), so waiting for it here means no process of ours is left
         * behind us, not even one a non-reaping init would keep as a zombie;
         * a stopped helper is not waited for longer than this. */
        if (helper_pidfd >= 0) {
                struct pollfd pfd = { .fd = helper_pidfd, .events = POLLIN };
                int r;

                do
                        r = poll(&pfd, 1, MDHELPER_STOP_TIMEOUT_MS);
                while (r < 0 && errno == EINTR);
                close(helper_pidfd);
        }
        helper_pidfd = -1;
        helper_pid = 0;
        pthread_mutex_unlock(&helper_lock);
}
