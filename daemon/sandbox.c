/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sandbox.c — no_new_privs, Landlock on the shared folder and a seccomp
 * allow-list (see sandbox.h).  None of it needs privilege. */
#include "sandbox.h"
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "log.h"
#include "mount-namespace.h"
#include "util.h"

/* The worker was built with a sanitizer: its run-time needs more (below).
 * ThreadSanitizer too: a report reads /proc/self/maps with the old open()
 * call, and without it the worker died of SIGSYS with the report unprinted
 * (TSan's own signal handling swallows our SIGSYS line). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SB_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SB_SANITIZER 1
#endif
#endif

/* ---- Landlock ----
 *
 * Debian's UAPI headers (6.1) know ABI 1–2; the running kernel may speak 7.
 * The constants and the grown ruleset attribute are defined here, by ABI. */
#define SB_LL_FS_ABI1          ((1ULL << 13) - 1)   /* EXECUTE … MAKE_SYM */
#define SB_LL_FS_REFER         (1ULL << 13)         /* ABI 2 */
#define SB_LL_FS_TRUNCATE      (1ULL << 14)         /* ABI 3 */
#define SB_LL_FS_IOCTL_DEV     (1ULL << 15)         /* ABI 5 */
#define SB_LL_NET_BIND_TCP     (1ULL << 0)          /* ABI 4 */
#define SB_LL_NET_CONNECT_TCP  (1ULL << 1)          /* ABI 4 */
#define SB_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define SB_LL_SCOPE_SIGNAL     (1ULL << 1)          /* ABI 6 */

struct sb_landlock_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;   /* ABI 4 */
        uint64_t scoped;               /* ABI 6 */
};

static uint64_t landlock_fs_rights(int abi)
{
        uint64_t rights = SB_LL_FS_ABI1;

        if (abi >= 2)
                rights |= SB_LL_FS_REFER;
        if (abi >= 3)
                rights |= SB_LL_FS_TRUNCATE;
        if (abi >= 5)
                rights |= SB_LL_FS_IOCTL_DEV;
        return rights;
}

static int landlock_allow_beneath(int ruleset_fd, int dir_fd, uint64_t rights)
{
        struct landlock_path_beneath_attr attr = {
                .allowed_access = rights,
                .parent_fd = dir_fd,
        };

        return syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0
                ? -errno : 0;
}

#ifdef SB_SANITIZER
static int landlock_allow_own_executable(int ruleset_fd)
{
        _cleanup_close_ int exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);

        return exe < 0 ? 0 : landlock_allow_beneath(ruleset_fd, exe, LANDLOCK_ACCESS_FS_READ_FILE);
}
#endif

/* An abstract NOTIFY_SOCKET ("@…") was made outside our domain: scoping
 * abstract sockets would make READY=1 fail. */
static bool notify_socket_is_abstract(void)
{
        const char *e = getenv("NOTIFY_SOCKET");

        return e && e[0] == '@';
}

/* Returns the ABI applied (≥ 1), 0 when the kernel has no Landlock, -errno. */
static int apply_landlock(int root_fd, int socket_dir_fd)
{
        struct sb_landlock_ruleset_attr attr = { 0 };
        _cleanup_close_ int ruleset = -1, proc_self = -1;
        size_t attr_size;
        int abi, r;

        abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0)
                return errno == ENOSYS || errno == EOPNOTSUPP ? 0 : -errno;

        /* Every file-system right this kernel knows is handled (denied unless a
         * rule grants it); so are TCP bind/connect (never granted: the worker
         * has no network) and, from ABI 6, signals to and abstract sockets of
         * processes outside the sandbox. */
        attr.handled_access_fs = landlock_fs_rights(abi);
        attr_size = sizeof(uint64_t);
        if (abi >= 4) {
                attr.handled_access_net = SB_LL_NET_BIND_TCP | SB_LL_NET_CONNECT_TCP;
                attr_size = 2 * sizeof(uint64_t);
        }
        if (abi >= 6) {
                attr.scoped = SB_LL_SCOPE_SIGNAL;
                if (!notify_socket_is_abstract())
                        attr.scoped |= SB_LL_SCOPE_ABSTRACT_UNIX_SOCKET;
                attr_size = sizeof(attr);
        }
        ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
        if (ruleset < 0)
                return -errno;

        /* The served folder: everything but executing. */
        r = landlock_allow_beneath(ruleset, root_fd,
                                   attr.handled_access_fs & ~(uint64_t)LANDLOCK_ACCESS_FS_EXECUTE);
        if (r < 0)
                return r;
        /* The socket we created: its removal at exit. */
        if (socket_dir_fd >= 0) {
                r = landlock_allow_beneath(ruleset, socket_dir_fd, LANDLOCK_ACCESS_FS_REMOVE_FILE);
                if (r < 0)
                        return r;
        }
        /* Our own /proc entries, read-only: glibc (pthread_getattr_np reads
         * maps) and the sanitizers read them.  Reopening an inode through
         * /proc/self/fd/N needs nothing here: Landlock checks the file it
         * lands on, which is inside the folder. */
        proc_self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (proc_self >= 0) {
                r = landlock_allow_beneath(ruleset, proc_self,
                                           LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR);
                if (r < 0)
                        return r;
        }
#ifdef SB_SANITIZER
        /* A sanitizer's report symbolises its stacks from our own executable:
         * read-only, that one file, in sanitizer builds only. */
        r = landlock_allow_own_executable(ruleset);
        if (r < 0)
                return r;
#endif
        if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
                return -errno;
        return abi;
}

/* ---- seccomp ---- */
#ifdef HAVE_SECCOMP

/* What the worker does once set up: vhost-user and sd-bus messages on the
 * sockets it holds, queue and lock-waiter threads, the passthrough file
 * operations, per-request credentials of a root worker, glibc's own needs.
 * Calls with argument filters are added in add_filtered_rules(). */
static const int allowed_syscalls[] = {
        /* file I/O and the passthrough operations */
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
        SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev),
        SCMP_SYS(preadv2), SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(close),
        SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(fstat), SCMP_SYS(newfstatat),
        SCMP_SYS(statx), SCMP_SYS(fstatfs), SCMP_SYS(getdents64), SCMP_SYS(flock),
        SCMP_SYS(dup), SCMP_SYS(dup3), SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(syncfs),
        SCMP_SYS(ftruncate), SCMP_SYS(fallocate), SCMP_SYS(mkdirat),
        SCMP_SYS(mknodat), SCMP_SYS(symlinkat), SCMP_SYS(readlinkat), SCMP_SYS(linkat),
        SCMP_SYS(readlink),   /* glibc's readlink() of /proc/self/fd/N (fd type checks) */
        SCMP_SYS(unlinkat), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(copy_file_range),
        SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(umask),
        /* tells a file from another that reuses its inode number, when a
         * dropped inode fd is reopened by name (only reads, as stat does) */
        SCMP_SYS(name_to_handle_at),
        /* Metadata changes: by fd only (utimensat: add_filtered_rules; a
         * sealed root worker's path-based calls: add_sealed_namespace_rules).
         * The path-based fchmodat, fchmodat2, fchownat, setxattr, lsetxattr,
         * removexattr, lremovexattr and utimensat with a path are left out on
         * purpose: Landlock does not cover metadata, and a path (even "" with
         * AT_EMPTY_PATH, on an O_PATH fd that Landlock does not restrict
         * either) can name any file of the host.  An fd that fchmod & co.
         * take is one opened for I/O (they refuse O_PATH fds: EBADF), and
         * Landlock lets such opens land only inside the shared folder; the
         * fds held from before the sandbox are sockets, memfds, eventfds and
         * the stdio the worker was started with.  The path-taking calls left
         * above either create, remove or open (Landlock confines them to the
         * folder) or only read (newfstatat, statx, readlinkat, readlink,
         * faccessat: what stat() tells). */
        SCMP_SYS(fchmod), SCMP_SYS(fchown), SCMP_SYS(fsetxattr), SCMP_SYS(fremovexattr),
        /* xattr reads: by fd, and by /proc/self/fd/N path for O_PATH fds (a
         * planted read by path learns no more than stat() tells) */
        SCMP_SYS(getxattr), SCMP_SYS(listxattr), SCMP_SYS(lgetxattr), SCMP_SYS(llistxattr),
        SCMP_SYS(fgetxattr), SCMP_SYS(flistxattr),
        /* memory: guest RAM is mmap(MAP_SHARED) of the frontend's fds */
        SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect),
        SCMP_SYS(madvise), SCMP_SYS(brk),
        /* threads (clone and clone3: add_filtered_rules) */
        SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(futex), SCMP_SYS(exit),
        SCMP_SYS(exit_group), SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(sched_yield),
        SCMP_SYS(sched_getaffinity), SCMP_SYS(getrandom),
        /* event loops, signals, time */
        SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait),
        SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_pwait2), SCMP_SYS(poll), SCMP_SYS(ppoll),
        SCMP_SYS(eventfd2), SCMP_SYS(timerfd_create), SCMP_SYS(timerfd_settime),
        SCMP_SYS(timerfd_gettime), SCMP_SYS(signalfd4), SCMP_SYS(rt_sigaction),
        SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall),
        SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep),
        SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday),
        /* the vhost-user socket (accept4: the next frontend on --socket-path)
         * and the control channel's sd-bus */
        SCMP_SYS(accept4), SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(recvfrom),
        SCMP_SYS(sendto), SCMP_SYS(shutdown), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
        SCMP_SYS(getsockname), SCMP_SYS(getpeername),
        /* credentials: a root worker serves each request with the requester's
         * fsuid/fsgid and groups, per thread */
        SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
        SCMP_SYS(getresuid), SCMP_SYS(getresgid), SCMP_SYS(getgroups), SCMP_SYS(setgroups),
        SCMP_SYS(setfsuid), SCMP_SYS(setfsgid), SCMP_SYS(capget), SCMP_SYS(capset),
#ifdef SB_SANITIZER
        /* Sanitizer builds only (the ASan suites): LeakSanitizer at exit stops
         * the world from a helper task (the clone rule below) that ptraces our
         * threads, waits for them and lists /proc/self/task with the old
         * open/getdents calls; reports read /proc/self/maps and limits. */
        SCMP_SYS(sigaltstack), SCMP_SYS(ptrace), SCMP_SYS(wait4), SCMP_SYS(getppid),
        SCMP_SYS(open), SCMP_SYS(getdents), SCMP_SYS(stat),
        SCMP_SYS(lstat), SCMP_SYS(getrlimit), SCMP_SYS(prlimit64),
#endif
};

/* The commands the worker's fcntl() calls use: fd flags, duplication,
 * (OFD) record locks, memfd seals of guest memory. */
static const int allowed_fcntl[] = {
        F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD, F_DUPFD_CLOEXEC,
        F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW,
        1034 /* F_GET_SEALS */, 1033 /* F_ADD_SEALS */,
};

/* The prctl() options glibc and the sanitizers use at run time. */
static const int allowed_prctl[] = {
        PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE,
#ifdef SB_SANITIZER
        PR_SET_DUMPABLE, PR_SET_PTRACER, PR_SET_PDEATHSIG,
#endif
};

/* Threads only: the flags glibc's pthread_create passes; no new process,
 * no namespace, no exit signal.  (flags & ~optional) == required. */
#define SB_THREAD_CLONE_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
                               CLONE_THREAD | CLONE_SYSVSEM)
#define SB_THREAD_CLONE_OPTIONAL (CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)
/* LeakSanitizer's stop-the-world tracer task (sanitizer_stoptheworld_linux). */
#define SB_LSAN_CLONE_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED)

/* One argument comparison with every field spelled out: libseccomp's
 * SCMP_A0()… leave datum_b to the compiler, which clang warns about. */
static struct scmp_arg_cmp sb_arg(unsigned int arg, enum scmp_compare op, scmp_datum_t a,
                                  scmp_datum_t b)
{
        return (struct scmp_arg_cmp){ .arg = arg, .op = op, .datum_a = a, .datum_b = b };
}

/* A root worker sealed in its mount namespace (mount-namespace.h): no path
 * it can name from any folder it holds, nor from its root or working
 * directory, leads outside the shared folder, its /proc/self/fd and the
 * socket's folder.  There the path-based metadata calls are as confined as
 * the f* calls, and the only way to change a symlink, socket or device node,
 * which must not be opened: fchownat with AT_EMPTY_PATH on an O_PATH fd,
 * utimensat with AT_EMPTY_PATH (or of our fd's name in /proc/self/fd, on
 * kernels before 5.8), fchmodat of our fd's name there.  A filter cannot
 * read the path: the namespace is the bound, not these rules. */
static int add_sealed_namespace_rules(scmp_filter_ctx ctx)
{
        int r;

        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fchownat), 1,
                             sb_arg(4, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(utimensat), 0);
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fchmodat), 0);
        return r;
}

static int add_filtered_rules(scmp_filter_ctx ctx)
{
        const scmp_datum_t self = (scmp_datum_t)getpid();
        int r;

        /* Signals to this process only (glibc's raise/abort and pthread_kill,
         * and the SIGSYS handler below). */
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, sb_arg(0, SCMP_CMP_EQ, self, 0));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                                     sb_arg(0, SCMP_CMP_EQ, self, 0));
        /* The frontend's expected process (peer.c, Worker1.SetPeerPid):
         * a pidfd only, no flags (PIDFD_NONBLOCK is of no use here). */
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(pidfd_open), 1,
                                     sb_arg(1, SCMP_CMP_EQ, 0, 0));
        /* clone3's flags live in memory, out of a filter's reach: ENOSYS makes
         * glibc fall back to clone, whose flags we can check. */
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                     sb_arg(0, SCMP_CMP_MASKED_EQ,
                                            ~(scmp_datum_t)SB_THREAD_CLONE_OPTIONAL,
                                            SB_THREAD_CLONE_FLAGS));
#ifdef SB_SANITIZER
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                     sb_arg(0, SCMP_CMP_EQ, SB_LSAN_CLONE_FLAGS, 0));
#endif
        /* futimens(): utimensat with a NULL path is the fd's own file, and
         * only an fd opened for I/O (O_PATH: EBADF).  This is the one path-
         * taking metadata call left, and only without a path: a pointer a
         * filter compares with 0 cannot name a file. */
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(utimensat), 1,
                                     sb_arg(1, SCMP_CMP_EQ, 0, 0));
        if (r == 0 && mountns_sealed())
                r = add_sealed_namespace_rules(ctx);
        /* The daemon itself makes no ioctl; glibc's isatty() asks TCGETS (of
         * stderr, say): "not a terminal" is the right answer for a worker. */
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 1,
                                     sb_arg(1, SCMP_CMP_EQ, TCGETS, 0));
        for (size_t i = 0; i < ELEMENTSOF(allowed_fcntl) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
                                     sb_arg(1, SCMP_CMP_EQ, (scmp_datum_t)allowed_fcntl[i], 0));
        for (size_t i = 0; i < ELEMENTSOF(allowed_prctl) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
                                     sb_arg(0, SCMP_CMP_EQ, (scmp_datum_t)allowed_prctl[i], 0));
        /* sd_notify(READY=1) after the sandbox is up needs one datagram socket. */
        if (r == 0 && getenv("NOTIFY_SOCKET"))
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                                     sb_arg(0, SCMP_CMP_EQ, AF_UNIX, 0));
        return r;
}

/* Names for the SIGSYS report, resolved now: a signal handler may not
 * allocate, and libseccomp's resolver does. */
#define SB_NAMES_MAX 512
static char syscall_names[8192];
static uint32_t native_arch;
static uint16_t syscall_name_at[SB_NAMES_MAX];   /* offset + 1 into syscall_names; 0: none */

static void resolve_syscall_names(void)
{
        size_t used = 0;

        native_arch = seccomp_arch_native();
        for (int nr = 0; nr < SB_NAMES_MAX; nr++) {
                _cleanup_free_ char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
                size_t len = name ? strlen(name) : 0;

                if (len == 0 || used + len + 1 > sizeof(syscall_names))
                        continue;
                memcpy(syscall_names + used, name, len + 1);
                syscall_name_at[nr] = (uint16_t)(used + 1);
                used += len + 1;
        }
}

static size_t format_uint(char *buf, unsigned long v)
{
        char tmp[24];
        size_t n = 0, len = 0;

        do
                tmp[n++] = (char)('0' + v % 10);
        while ((v /= 10) > 0);
        while (n > 0)
                buf[len++] = tmp[--n];
        return len;
}

static size_t append(char *buf, size_t at, size_t size, const char *s)
{
        size_t len = strlen(s);

        if (len > size - at)
                len = size - at;
        memcpy(buf + at, s, len);
        return at + len;
}

/* SIGSYS from SCMP_ACT_TRAP: one log line in log.c's format, then die of
 * SIGSYS as a KILL_PROCESS filter would.  Async-signal-safe: raw syscalls,
 * no stdio, no allocation. */
static void on_denied_syscall(int sig, siginfo_t *si, void *uctx)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        char line[256], num[24];
        size_t n = 0;
        int nr = si->si_syscall;

        (void)uctx;
        n = append(line, n, sizeof(line), "sluice-fs[");
        n += format_uint(line + n, (unsigned long)syscall(SYS_getpid));
        n = append(line, n, sizeof(line), "] error: sandbox: system call ");
        num[format_uint(num, (unsigned long)(unsigned)nr)] = '\0';
        n = append(line, n, sizeof(line), num);
        if (si->si_arch != native_arch) {
                n = append(line, n, sizeof(line), " of another architecture");
        } else if (nr >= 0 && nr < SB_NAMES_MAX && syscall_name_at[nr]) {
                n = append(line, n, sizeof(line), " (");
                n = append(line, n, sizeof(line), syscall_names + syscall_name_at[nr] - 1);
                n = append(line, n, sizeof(line), ")");
        }
        n = append(line, n, sizeof(line),
                   " denied; this is a bug, please report it (--sandbox=none works around it)\n");
        (void)!write(STDERR_FILENO, line, n);

        (void)sigaction(sig, &dfl, NULL);
        (void)syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), SIGSYS);
        /* Pending until this handler returns (SIGSYS is blocked in it). */
}

static int install_sigsys_handler(void)
{
        struct sigaction sa = { .sa_sigaction = on_denied_syscall, .sa_flags = SA_SIGINFO };

        sigemptyset(&sa.sa_mask);
        return sigaction(SIGSYS, &sa, NULL) < 0 ? -errno : 0;
}

static int apply_seccomp(void)
{
        scmp_filter_ctx ctx;
        size_t n = 0;
        int r;

        resolve_syscall_names();
        r = install_sigsys_handler();
        if (r < 0)
                return r;
        /* A denied call is a bug to report, not an error to hide: TRAP. */
        ctx = seccomp_init(SCMP_ACT_TRAP);
        if (!ctx)
                return -ENOMEM;
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP);
        /* Installed before any thread starts; TSYNC covers any that did. */
        if (r == 0)
                r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
        for (size_t i = 0; i < ELEMENTSOF(allowed_syscalls) && r == 0; i++)
                if (allowed_syscalls[i] >= 0) {   /* negative: not on this architecture */
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed_syscalls[i], 0);
                        n++;
                }
        if (r == 0)
                r = add_filtered_rules(ctx);
        if (r == 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        if (r == 0) {
                confine_note_fd_metadata_only();
                if (mountns_sealed())
                        confine_note_sealed_namespace();
                log_info("sandbox: seccomp allow-list installed (%zu calls, plus kill/tgkill to "
                         "ourselves, thread clone, fcntl and prctl by command, utimensat by fd%s)",
                         n, mountns_sealed() ? "; metadata calls on O_PATH fds: sealed mount "
                                               "namespace" : "");
        }
        return r;
}
#endif

int sandbox_apply(int root_fd, int socket_dir_fd)
{
        int r;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                r = -errno;
                log_error("sandbox: cannot set no_new_privs: %s", strerror(-r));
                return r;
        }
        r = apply_landlock(root_fd, socket_dir_fd);
        if (r < 0) {
                log_error("sandbox: Landlock rules for the shared folder failed: %s", strerror(-r));
                return r;
        }
        if (r == 0)
                log_warning("sandbox: this kernel has no Landlock; file access is confined by "
                            "openat2/O_NOFOLLOW only");
        else {
                log_info("sandbox: Landlock ABI %d limits file access to the shared folder", r);
                confine_note_landlock();
        }
#ifdef HAVE_SECCOMP
        r = apply_seccomp();
        if (r < 0) {
                log_error("sandbox: installing the seccomp filter failed: %s", strerror(-r));
                return r;
        }
#else
        log_warning("sandbox: built without libseccomp: no system call filter "
                    "(install libseccomp-dev and rebuild)");
#endif
        return 0;
}
