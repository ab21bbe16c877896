/* sandbox.c — Landlock on the shared folder plus a seccomp allow-list
 * (--sandbox=seccomp).  Both need no privilege: no_new_privs is enough. */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "log.h"

/* The UAPI header may predate the running kernel: the bits by ABI version. */
#define LL_FS_V1 ((1ULL << 13) - 1)           /* EXECUTE … MAKE_SYM */
#define LL_FS_REFER    (1ULL << 13)            /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)            /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)           /* ABI 5 */
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

static uint64_t landlock_fs_rights(int abi)
{
        uint64_t rights = LL_FS_V1;

        if (abi >= 2)
                rights |= LL_FS_REFER;
        if (abi >= 3)
                rights |= LL_FS_TRUNCATE;
        if (abi >= 5)
                rights |= LL_FS_IOCTL_DEV;
        return rights;
}

static int landlock_add_path(int ruleset_fd, int dir_fd, uint64_t rights)
{
        struct landlock_path_beneath_attr attr = {
                .allowed_access = rights,
                .parent_fd = dir_fd,
        };

        return syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0
                ? -errno : 0;
}

/* Returns 1 when applied, 0 when the kernel has no Landlock, -errno on failure. */
static int apply_landlock(int shared_dir_fd)
{
        struct landlock_ruleset_attr rs = { 0 };
        uint64_t rights, read_rights;
        int abi, ruleset, proc, r;

        abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0) {
                if (errno == ENOSYS || errno == EOPNOTSUPP)
                        return 0;
                return -errno;
        }
        rights = landlock_fs_rights(abi);
        /* Only the file-system rights: sockets (the vhost-user and control
         * channels) stay as they are. */
        rs.handled_access_fs = rights;
        ruleset = (int)syscall(SYS_landlock_create_ruleset, &rs, sizeof(rs), 0);
        if (ruleset < 0)
                return -errno;

        r = landlock_add_path(ruleset, shared_dir_fd, rights & ~(uint64_t)LANDLOCK_ACCESS_FS_EXECUTE);
        /* /proc: reopening our own O_PATH fds through /proc/self/fd, xattrs by path. */
        read_rights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
        proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (r == 0 && proc >= 0)
                r = landlock_add_path(ruleset, proc, read_rights);
        if (proc >= 0)
                close(proc);
        if (r == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
                r = -errno;
        close(ruleset);
        if (r < 0)
                return r;
        log_info("sandbox: Landlock ABI %d limits file access to the shared folder", abi);
        return 1;
}

#ifdef HAVE_SECCOMP
/* What the worker does after start-up: vhost-user and sd-bus on sockets,
 * queue threads, the passthrough file operations, and glibc's own needs. */
static const int allowed_syscalls[] = {
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
        SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev),
        SCMP_SYS(preadv2), SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(close),
        SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(open_tree), SCMP_SYS(fstat),
        SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(fstatfs), SCMP_SYS(statfs),
        SCMP_SYS(getdents64), SCMP_SYS(fcntl), SCMP_SYS(flock), SCMP_SYS(dup),
        SCMP_SYS(dup3), SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(syncfs),
        SCMP_SYS(ftruncate), SCMP_SYS(fallocate), SCMP_SYS(fchmod), SCMP_SYS(fchmodat),
        SCMP_SYS(fchown), SCMP_SYS(fchownat), SCMP_SYS(utimensat),
        SCMP_SYS(mkdirat), SCMP_SYS(mknodat), SCMP_SYS(symlinkat), SCMP_SYS(readlinkat),
        SCMP_SYS(linkat), SCMP_SYS(unlinkat), SCMP_SYS(renameat), SCMP_SYS(renameat2),
        SCMP_SYS(copy_file_range), SCMP_SYS(faccessat), SCMP_SYS(faccessat2),
        SCMP_SYS(getxattr), SCMP_SYS(setxattr), SCMP_SYS(listxattr), SCMP_SYS(removexattr),
        SCMP_SYS(lgetxattr), SCMP_SYS(lsetxattr), SCMP_SYS(llistxattr), SCMP_SYS(lremovexattr),
        SCMP_SYS(fgetxattr), SCMP_SYS(fsetxattr), SCMP_SYS(flistxattr), SCMP_SYS(fremovexattr),
        SCMP_SYS(umask),
        /* memory and threads */
        SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect),
        SCMP_SYS(madvise), SCMP_SYS(brk), SCMP_SYS(clone), SCMP_SYS(clone3),
        SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(futex), SCMP_SYS(exit),
        SCMP_SYS(exit_group), SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(getppid),
        SCMP_SYS(tgkill), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity),
        SCMP_SYS(getrandom), SCMP_SYS(membarrier), SCMP_SYS(prctl),
        /* event loops, signals, time */
        SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait),
        SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_pwait2), SCMP_SYS(poll), SCMP_SYS(ppoll),
        SCMP_SYS(eventfd2), SCMP_SYS(timerfd_create), SCMP_SYS(timerfd_settime),
        SCMP_SYS(timerfd_gettime), SCMP_SYS(signalfd4), SCMP_SYS(rt_sigaction),
        SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
        SCMP_SYS(restart_syscall), SCMP_SYS(kill), SCMP_SYS(clock_gettime),
        SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
        SCMP_SYS(gettimeofday),
        /* sockets: vhost-user and the control channel */
        SCMP_SYS(accept4), SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(recvfrom),
        SCMP_SYS(sendto), SCMP_SYS(shutdown), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
        SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(ioctl), SCMP_SYS(pipe2),
        SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
        SCMP_SYS(getgroups), SCMP_SYS(uname), SCMP_SYS(sysinfo), SCMP_SYS(memfd_create),
};

static int apply_seccomp(void)
{
        scmp_filter_ctx ctx;
        int r = 0;

        /* ENOSYS rather than a kill: glibc falls back (clone3 -> clone), and a
         * missed call fails one request instead of the whole share. */
        ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
        if (!ctx)
                return -ENOMEM;
        for (size_t i = 0; i < sizeof(allowed_syscalls) / sizeof(allowed_syscalls[0]) && r == 0; i++)
                if (allowed_syscalls[i] >= 0)   /* negative: not on this architecture */
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed_syscalls[i], 0);
        if (r == 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        if (r == 0)
                log_info("sandbox: seccomp allow-list of %zu system calls installed",
                         sizeof(allowed_syscalls) / sizeof(allowed_syscalls[0]));
        return r;
}
#endif

int sandbox_apply(int shared_dir_fd, const char *shared_dir)
{
        int r;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        r = apply_landlock(shared_dir_fd);
        if (r < 0) {
                log_error("sandbox: Landlock rules for %s failed: %s", shared_dir, strerror(-r));
                return r;
        }
        if (r == 0)
                log_warning("sandbox: this kernel has no Landlock; relying on openat2/O_NOFOLLOW confinement");
#ifdef HAVE_SECCOMP
        r = apply_seccomp();
        if (r < 0) {
                log_error("sandbox: installing the seccomp filter failed: %s", strerror(-r));
                return r;
        }
#else
        log_warning("sandbox: built without libseccomp: no system call filter (install libseccomp-dev and rebuild)");
#endif
        return 0;
}
