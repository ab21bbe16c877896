/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-sandbox.c — the default sandbox: a worker started
 * with no sandbox option runs under seccomp and no_new_privs in every thread,
 * still serves FUSE requests, removes its socket on exit, and dies with a
 * clear last log line when it makes a call the sandbox denies, and cannot
 * open files outside the folder it serves; --sandbox=none turns all of it off.
 * Metadata changes: every SETATTR and xattr request on every kind
 * of node is served by fd under the sandbox, with no SIGSYS death. */
#include "config.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The value of "Key:" in /proc/PID[/task/TID]/status, or -1. */
static long status_field(const char *status_path, const char *key)
{
        g_autofree char *text = NULL;
        if (!g_file_get_contents(status_path, &text, NULL, NULL))
                return -1;
        g_autofree char *needle = g_strdup_printf("\n%s:", key);
        const char *at = strstr(text, needle);
        return at ? strtol(at + strlen(needle), NULL, 10) : -1;
}

/* Asserts Seccomp/NoNewPrivs of every thread of pid; returns the thread count. */
static unsigned assert_threads_confined(GPid pid, long want_seccomp, long want_nnp)
{
        g_autofree char *task_dir = g_strdup_printf("/proc/%d/task", (int)pid);
        g_autoptr(GDir) dir = g_dir_open(task_dir, 0, NULL);
        g_assert_nonnull(dir);
        unsigned threads = 0;
        for (const char *tid; (tid = g_dir_read_name(dir));) {
                g_autofree char *path = g_strdup_printf("%s/%s/status", task_dir, tid);
                long seccomp = status_field(path, "Seccomp"), nnp = status_field(path, "NoNewPrivs");
                g_test_message("thread %s: Seccomp %ld, NoNewPrivs %ld", tid, seccomp, nnp);
                if (seccomp < 0 && nnp < 0)
                        continue;   /* the thread ended meanwhile */
                g_assert_cmpint(seccomp, ==, want_seccomp);
                g_assert_cmpint(nnp, ==, want_nnp);
                threads++;
        }
        return threads;
}

/* GETATTR, CREATE, WRITE, READ, LOOKUP and UNLINK through the test VMM, and
 * the result checked on the host. */
static void exercise_share(Harness *h)
{
        struct vmm *v = h->vmm;
        struct fuse_attr attr;
        assert_ok(vmm_getattr(v, VMM_ROOT, &attr));
        g_assert_true(S_ISDIR(attr.mode));

        struct fuse_entry_out e;
        uint64_t fh = 0;
        assert_ok(vmm_create(v, VMM_ROOT, "made-in-guest", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        uint32_t written = 0;
        assert_ok(vmm_write(v, e.nodeid, fh, 0, "sandboxed", 9, &written));
        g_assert_cmpuint(written, ==, 9);
        char buf[32];
        size_t got = 0;
        assert_ok(vmm_read(v, e.nodeid, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "sandboxed", 9);
        assert_ok(vmm_flush(v, e.nodeid, fh));
        assert_ok(vmm_release(v, e.nodeid, fh));
        g_autofree char *host = harness_read(h, "made-in-guest");
        g_assert_cmpstr(host, ==, "sandboxed");

        harness_write(h, "from-host", "host data");
        struct fuse_entry_out f;
        assert_ok(vmm_lookup(v, VMM_ROOT, "from-host", &f));
        assert_ok(vmm_open(v, f.nodeid, O_RDONLY, &fh));
        assert_ok(vmm_read(v, f.nodeid, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "host data", 9);
        assert_ok(vmm_release(v, f.nodeid, fh));
        assert_ok(vmm_unlink(v, VMM_ROOT, "from-host"));
        g_autofree char *gone = harness_read(h, "from-host");
        g_assert_null(gone);
        harness_assert_alive(h);
}

/* Stops the worker with SIGTERM and asserts a clean exit that removed its socket. */
static void assert_clean_stop(Harness *h)
{
        int status = 0;
        g_assert_cmpint(kill(h->pid, SIGTERM), ==, 0);
        g_assert_true(harness_wait_exit(h, 30000, &status));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        struct stat st;
        g_assert_cmpint(lstat(h->socket, &st), <, 0);   /* removed below the sandbox too */
}

/* A worker with these options: every thread's Seccomp/NoNewPrivs as wanted,
 * FUSE requests served, a clean stop. */
static void serve_and_check(const char *const *extra, long want_seccomp, long want_nnp)
{
        g_autoptr(Harness) h = harness_new();
        /* A frontend set up and FUSE INIT answered: the main loop runs, so the
         * sandbox (installed before it) is in place, and the queue threads
         * (started by the rings) exist. */
        harness_up(h, extra);
        unsigned threads = assert_threads_confined(h->pid, want_seccomp, want_nnp);
        g_assert_cmpuint(threads, >=, 2);   /* main thread and at least one queue thread */
        exercise_share(h);
        /* Threads made while serving inherit it too. */
        assert_threads_confined(h->pid, want_seccomp, want_nnp);
        harness_assert_outside_untouched(h);
        assert_clean_stop(h);
}

static void test_default_is_confined(void)
{
        if (!harness_require_sluice("sluice-fs's own sandbox"))
                return;
        serve_and_check(NULL, 2, 1);
}

static void test_virtiofsd_spellings_are_confined(void)
{
        if (!harness_require_sluice("sluice-fs's own sandbox"))
                return;
        /* What libvirt passes for <driver><sandbox mode=...>: served unprivileged. */
        const char *const spellings[][3] = {
                { "-o", "sandbox=chroot", NULL },
                { "--sandbox", "namespace", NULL },
                { "--sandbox=seccomp", NULL, NULL },
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(spellings); i++)
                serve_and_check(spellings[i], 2, 1);
}

static void test_none_turns_it_off(void)
{
        if (!harness_require_sluice("sluice-fs's own sandbox"))
                return;
        const char *const none[] = { "--sandbox=none", NULL };
        serve_and_check(none, 0, 0);
}

/* The SLUICE_FS_TEST_SANDBOX hook is in -Dtest_hooks=true builds only (a
 * release has none): without it these cases skip, saying so. */
static gboolean require_test_hook(void)
{
        if (!harness_require_sluice("sluice-fs's own sandbox"))
                return FALSE;
#if !SLUICE_TEST_HOOKS
        g_test_skip("sluice-fs has no sandbox test hook in this build: "
                    "configure it with -Dtest_hooks=true (make check does)");
        return FALSE;
#endif
        return TRUE;
}

static void test_denied_call_is_reported(void)
{
        if (!require_test_hook())
                return;
        g_autoptr(Harness) h = harness_new();
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, NULL);
        g_autofree char *out = NULL, *err = NULL;
        /* The hook makes one getpgid() right after the sandbox is installed. */
        g_setenv("SLUICE_FS_TEST_SANDBOX", "syscall", TRUE);
        int status = harness_run((const char *const *)argv->pdata, &out, &err);
        g_unsetenv("SLUICE_FS_TEST_SANDBOX");
        g_test_message("status %#x, stderr:\n%s", status, err);
        /* Killed by SIGSYS (timeout(1) around it passes the signal on, or
         * reports it as 128 + SIGSYS). */
        g_assert_true((WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) ||
                      (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSYS));
        /* The last line of its log names the call and says what to do
         * (timeout(1) may add its own "the monitored command dumped core"). */
        g_auto(GStrv) lines = g_strsplit(g_strstrip(err), "\n", -1);
        guint n = g_strv_length(lines);
        while (n > 0 && g_str_has_prefix(lines[n - 1], "timeout:"))
                n--;
        g_assert_cmpuint(n, >, 0);
        g_assert_nonnull(strstr(lines[n - 1], "sandbox: system call"));
        g_assert_nonnull(strstr(lines[n - 1], "(getpgid) denied; this is a bug, please report it"));
}

/* Runs the worker with the Landlock hook; returns its exit status. */
static int run_landlock_hook(Harness *h, const char *const *extra, char **ret_err)
{
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, extra);
        g_autofree char *out = NULL;
        g_setenv("SLUICE_FS_TEST_SANDBOX", "landlock", TRUE);
        int status = harness_run((const char *const *)argv->pdata, &out, ret_err);
        g_unsetenv("SLUICE_FS_TEST_SANDBOX");
        g_test_message("status %#x, stderr:\n%s", status, *ret_err);
        g_assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* Landlock is built on the served folder: the worker itself cannot open the
 * folder's parent (which it could without the sandbox). */
static void test_landlock_confines_to_share(void)
{
        if (!require_test_hook())
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *err = NULL, *err_none = NULL;
        g_assert_cmpint(run_landlock_hook(h, NULL, &err), ==, 0);
        /* A root worker sealed in its mount namespace cannot even name it. */
        g_assert_true(strstr(err, "opening the shared folder's parent: Permission denied") ||
                      strstr(err, "opening the shared folder's parent: the shared folder itself"));
        const char *const none[] = { "--sandbox=none", NULL };
        g_assert_cmpint(run_landlock_hook(h, none, &err_none), ==, 3);
        g_assert_nonnull(strstr(err_none, "opening the shared folder's parent: opened"));
}

/* A root worker sealed in its mount namespace may change metadata by path
 * (symlinks, sockets and device nodes have no other way): every such call a
 * code-execution bug could plant against a host file outside the share, by
 * absolute path, by ".." from the shared folder, through /proc/self/fd, on
 * /proc/self/exe and on an O_PATH fd it opens, fails; the file is as it was. */
static void test_sealed_root_worker_planted_metadata(void)
{
        if (!require_test_hook() || !harness_daemon_as_root(TRUE))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *victim = g_build_filename(h->outside, "canary", NULL);
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, NULL);
        const char *exe = NULL;
        g_autofree char *out = NULL, *err = NULL;
        struct stat before, after, exe_before, exe_after;

        for (guint i = 0; i < argv->len && argv->pdata[i] && !exe; i++)
                if (g_str_has_suffix(argv->pdata[i], "/sluice-fs"))
                        exe = argv->pdata[i];
        g_assert_nonnull(exe);
        g_assert_cmpint(stat(victim, &before), ==, 0);
        g_assert_cmpint(stat(exe, &exe_before), ==, 0);
        g_setenv("SLUICE_FS_TEST_SANDBOX", "metadata", TRUE);
        g_setenv("SLUICE_FS_TEST_VICTIM", victim, TRUE);
        g_setenv("SLUICE_FS_TEST_VICTIM_FROM_SHARE", "../outside/canary", TRUE);
        int status = harness_run((const char *const *)argv->pdata, &out, &err);
        g_unsetenv("SLUICE_FS_TEST_SANDBOX");
        g_unsetenv("SLUICE_FS_TEST_VICTIM");
        g_unsetenv("SLUICE_FS_TEST_VICTIM_FROM_SHARE");
        g_test_message("status %#x, stderr:\n%s", status, err);
        if (!strstr(err, "nor reachable from any folder it holds")) {
                g_test_skip("the worker was not sealed in a mount namespace (see its log)");
                harness_daemon_as_root(FALSE);
                return;
        }
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_null(strstr(err, ": changed"));
        g_assert_nonnull(strstr(err, "metadata calls on O_PATH fds: sealed mount namespace"));
        g_assert_cmpint(stat(victim, &after), ==, 0);
        g_assert_cmpuint(after.st_mode, ==, before.st_mode);
        g_assert_cmpuint(after.st_uid, ==, before.st_uid);
        g_assert_cmpuint(after.st_gid, ==, before.st_gid);
        g_assert_cmpint(after.st_mtim.tv_sec, ==, before.st_mtim.tv_sec);
        g_assert_cmpint(after.st_mtim.tv_nsec, ==, before.st_mtim.tv_nsec);
        g_assert_cmpint(stat(exe, &exe_after), ==, 0);
        g_assert_cmpuint(exe_after.st_mode, ==, exe_before.st_mode);
        harness_assert_outside_untouched(h);
        harness_daemon_as_root(FALSE);
}

/* ---- metadata changes through fds ----
 *
 * The sandbox refuses chmod, chown, utimes and xattr changes by path; the
 * worker makes them through an fd it opened inside the share.  A request it
 * served with a path-based call would die of SIGSYS: every combination of
 * SETATTR fields on a file, a directory, a symlink, a FIFO and a socket, and
 * the xattr requests on each, as the desktop user's and as a root worker,
 * with the sandbox and without. */

#define MD_TIMES (FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW)

static const uint32_t md_fields[] = {
        FATTR_MODE, FATTR_UID, FATTR_GID, FATTR_SIZE, FATTR_ATIME, FATTR_MTIME,
        FATTR_ATIME_NOW, FATTR_MTIME_NOW, FATTR_FH,
};

typedef struct {
        const char *name;
        mode_t type;
        uint64_t node;
        uint64_t fh;        /* file: a handle for FATTR_FH (Linux sends it with ftruncate only) */
} MdNode;

static void md_make_nodes(Harness *h)
{
        harness_write(h, "file", "0123456789");
        harness_mkdir(h, "dir");
        harness_symlink(h, "file", "link");
        g_autofree char *fifo = harness_path(h, "fifo");
        g_assert_cmpint(mkfifo(fifo, 0644), ==, 0);
        harness_chown_to_user(fifo);
        g_autofree char *sock = harness_path(h, "sock");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_assert_cmpuint(strlen(sock), <, sizeof(sa.sun_path));
        strcpy(sa.sun_path, sock);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(s, >=, 0);
        g_assert_cmpint(bind(s, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
        close(s);
        harness_chown_to_user(sock);
}

/* What SETATTR answers: the kernel's own refusals first; then, by fd only
 * (under the sandbox, neither sealed nor with a metadata helper), a symlink
 * or socket changes nothing it would have to open (its owner stays as it is
 * here, its mode and times would change).  A FIFO its
 * owner may read changes through a non-blocking open. */
static int md_expected(mode_t type, uint32_t valid, gboolean sandboxed)
{
        if (type == S_IFLNK && (valid & FATTR_MODE))
                return -EOPNOTSUPP;
        if ((valid & FATTR_SIZE) && type != S_IFREG)
                return type == S_IFDIR ? -EISDIR : -EINVAL;
        if (type == S_IFREG || type == S_IFDIR || type == S_IFIFO || !sandboxed)
                return 0;
        return (valid & (FATTR_MODE | MD_TIMES)) ? -EOPNOTSUPP : 0;
}

static struct stat md_host_stat(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        struct stat st;
        g_assert_cmpint(lstat(path, &st), ==, 0);
        return st;
}

static void md_setattr_matrix(Harness *h, MdNode *n, gboolean sandboxed)
{
        unsigned nfields = G_N_ELEMENTS(md_fields) - (n->fh ? 0 : 1);
        for (uint32_t combo = 0; combo < (1u << nfields); combo++) {
                struct fuse_setattr_in in = {
                        .uid = harness_daemon_uid(), .gid = harness_daemon_gid(),
                        .size = combo % 7, .fh = n->fh,
                        .atime = 1000000000 + combo, .atimensec = combo,
                        .mtime = 1100000000 + combo, .mtimensec = combo,
                };
                for (unsigned b = 0; b < nfields; b++)
                        if (combo & (1u << b))
                                in.valid |= md_fields[b];
                /* Owner bits stay, so the next truncate may write and the
                 * next FIFO change may open it; a symlink's or socket's mode
                 * always differs from what it has (0644). */
                in.mode = n->type | (n->type == S_IFREG || n->type == S_IFDIR ? 0700
                                     : n->type == S_IFIFO ? 0600 : 0200) |
                          (combo & 077);
                struct fuse_attr a;
                int want = md_expected(n->type, in.valid, sandboxed);
                int got = vmm_setattr(h->vmm, n->node, &in, &a);
                if (got != want) {
                        g_test_message("FAIL: SETATTR valid %#x on %s = %d (%s), expected %d (%s)",
                                       in.valid, n->name, got, got ? strerrorname_np(-got) : "0",
                                       want, want ? strerrorname_np(-want) : "0");
                        g_test_fail();
                        continue;
                }
                if (got < 0)
                        continue;
                struct stat st = md_host_stat(h, n->name);
                if (in.valid & FATTR_MODE)
                        g_assert_cmpuint(st.st_mode & 07777, ==, in.mode & 07777);
                if (in.valid & FATTR_SIZE)
                        g_assert_cmpint(st.st_size, ==, (off_t)in.size);
                if ((in.valid & FATTR_MTIME) && !(in.valid & FATTR_MTIME_NOW)) {
                        g_assert_cmpint(st.st_mtim.tv_sec, ==, (time_t)in.mtime);
                        g_assert_cmpint(st.st_mtim.tv_nsec, ==, (long)in.mtimensec);
                }
                g_assert_cmpuint(a.mode & 07777, ==, st.st_mode & 07777);
        }
}

/* user.* xattrs: on a file and a directory through an fd; Linux refuses
 * them on symlinks and special files (EPERM to write, ENODATA to read). */
static void md_xattrs(Harness *h, MdNode *n)
{
        struct vmm *v = h->vmm;
        gboolean plain = n->type == S_IFREG || n->type == S_IFDIR;
        char buf[256];
        size_t len = 0;

        assert_errno(vmm_setxattr(v, n->node, "user.sluice", "v1", 2, 0), plain ? 0 : -EPERM);
        assert_errno(vmm_getxattr(v, n->node, "user.sluice", buf, sizeof(buf), &len),
                     plain ? 0 : -ENODATA);
        if (plain)
                g_assert_cmpmem(buf, len, "v1", 2);
        assert_ok(vmm_listxattr(v, n->node, buf, sizeof(buf), &len));
        if (plain)
                g_assert_nonnull(memmem(buf, len, "user.sluice", 12));
        assert_errno(vmm_removexattr(v, n->node, "user.sluice"),
                     plain ? 0 : n->type == S_IFLNK ? -ENODATA : -EPERM);
        assert_errno(vmm_getxattr(v, n->node, "user.sluice", buf, sizeof(buf), &len), -ENODATA);
        if (plain) {
                g_autofree char *path = harness_path(h, n->name);
                g_assert_cmpint(getxattr(path, "user.sluice", buf, sizeof(buf)), <, 0);
        }
}

static void md_run(gboolean as_root, gboolean sandboxed)
{
        if (!harness_require_sluice("sluice-fs's own sandbox") || !harness_daemon_as_root(as_root))
                return;
        const char *const seccomp_opts[] = { "--xattr", NULL };
        const char *const none_opts[] = { "--xattr", "--sandbox=none", NULL };
        g_autoptr(Harness) h = harness_new();
        md_make_nodes(h);
        harness_up(h, sandboxed ? seccomp_opts : none_opts);
        struct vmm *v = h->vmm;
        MdNode nodes[] = {
                { "file", S_IFREG, 0, 0 }, { "dir", S_IFDIR, 0, 0 }, { "link", S_IFLNK, 0, 0 },
                { "fifo", S_IFIFO, 0, 0 }, { "sock", S_IFSOCK, 0, 0 },
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(nodes); i++) {
                struct fuse_entry_out e;
                assert_ok(vmm_lookup(v, VMM_ROOT, nodes[i].name, &e));
                nodes[i].node = e.nodeid;
                g_assert_cmpuint(e.attr.mode & S_IFMT, ==, nodes[i].type);
        }
        assert_ok(vmm_open(v, nodes[0].node, O_RDWR, &nodes[0].fh));
        /* A root worker sealed in its mount namespace changes every type by
         * path, as without the sandbox; a desktop user's worker through its
         * metadata helper (where the system lets it start one). */
        gboolean helper = harness_daemon_metadata_helper(h);
        gboolean by_fd_only = sandboxed && !harness_daemon_pivoted(h) && !helper;

        g_test_message("metadata helper: %s", helper ? "running" : "none");
        for (unsigned i = 0; i < G_N_ELEMENTS(nodes); i++) {
                MdNode without_fh = nodes[i];
                without_fh.fh = 0;
                md_setattr_matrix(h, &without_fh, by_fd_only);
                if (nodes[i].fh)
                        md_setattr_matrix(h, &nodes[i], by_fd_only);
                md_xattrs(h, &nodes[i]);
        }

        /* A change that changes nothing needs no fd: mkfifo -m, cp -a. */
        struct fuse_setattr_in same = {
                .valid = FATTR_MODE | FATTR_UID | FATTR_GID, .mode = S_IFIFO | 0640,
                .uid = harness_daemon_uid(), .gid = harness_daemon_gid(),
        };
        g_autofree char *fifo = harness_path(h, "fifo");
        g_assert_cmpint(chmod(fifo, 0640), ==, 0);
        assert_ok(vmm_setattr(v, nodes[3].node, &same, NULL));

        /* A root worker gives a file and a folder away for real (fchown). */
        gboolean worker_is_root = as_root || harness_daemon_uid() == 0;
        if (worker_is_root) {
                for (unsigned i = 0; i < 2; i++) {
                        struct fuse_setattr_in away = { .valid = FATTR_UID | FATTR_GID,
                                                        .uid = 4242, .gid = 4243 };
                        assert_ok(vmm_setattr(v, nodes[i].node, &away, NULL));
                        struct stat st = md_host_stat(h, nodes[i].name);
                        g_assert_cmpuint(st.st_uid, ==, 4242);
                        g_assert_cmpuint(st.st_gid, ==, 4243);
                        struct fuse_setattr_in back = { .valid = FATTR_UID | FATTR_GID,
                                                        .uid = harness_daemon_uid(),
                                                        .gid = harness_daemon_gid() };
                        assert_ok(vmm_setattr(v, nodes[i].node, &back, NULL));
                }
        }

        /* chmod 000 and back: the way back must open a file its owner may
         * not read, which only root can; without the sandbox a path works. */
        struct fuse_setattr_in lock = { .valid = FATTR_MODE, .mode = S_IFREG };
        struct fuse_setattr_in unlock = { .valid = FATTR_MODE, .mode = S_IFREG | 0644 };
        assert_ok(vmm_setattr(v, nodes[0].node, &lock, NULL));
        g_assert_cmpuint(md_host_stat(h, "file").st_mode & 07777, ==, 0);
        assert_errno(vmm_setattr(v, nodes[0].node, &unlock, NULL),
                     worker_is_root || !sandboxed ? 0 : -EACCES);
        g_assert_cmpuint(md_host_stat(h, "file").st_mode & 07777, ==,
                         worker_is_root || !sandboxed ? 0644 : 0);
        /* ... through a handle it needs nothing more. */
        g_autofree char *file = harness_path(h, "file");
        g_assert_cmpint(chmod(file, 0), ==, 0);
        unlock.valid |= FATTR_FH;
        unlock.fh = nodes[0].fh;
        assert_ok(vmm_setattr(v, nodes[0].node, &unlock, NULL));
        g_assert_cmpuint(md_host_stat(h, "file").st_mode & 07777, ==, 0644);

        assert_ok(vmm_release(v, nodes[0].node, nodes[0].fh));
        harness_assert_alive(h);
        harness_assert_outside_untouched(h);
        harness_daemon_as_root(FALSE);
}

static void test_metadata_desktop_user(void)
{
        md_run(FALSE, TRUE);
}

static void test_metadata_root_worker(void)
{
        md_run(TRUE, TRUE);
}

static void test_metadata_desktop_user_no_sandbox(void)
{
        md_run(FALSE, FALSE);
}

static void test_metadata_root_worker_no_sandbox(void)
{
        md_run(TRUE, FALSE);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/sandbox/default-is-confined", test_default_is_confined);
        g_test_add_func("/sandbox/virtiofsd-spellings", test_virtiofsd_spellings_are_confined);
        g_test_add_func("/sandbox/none-turns-it-off", test_none_turns_it_off);
        g_test_add_func("/sandbox/denied-call-is-reported", test_denied_call_is_reported);
        g_test_add_func("/sandbox/landlock-confines-to-share", test_landlock_confines_to_share);
        g_test_add_func("/sandbox/sealed-root-worker-planted-metadata",
                        test_sealed_root_worker_planted_metadata);
        g_test_add_func("/sandbox/metadata/desktop-user", test_metadata_desktop_user);
        g_test_add_func("/sandbox/metadata/root-worker", test_metadata_root_worker);
        g_test_add_func("/sandbox/metadata/desktop-user-no-sandbox",
                        test_metadata_desktop_user_no_sandbox);
        g_test_add_func("/sandbox/metadata/root-worker-no-sandbox",
                        test_metadata_root_worker_no_sandbox);
        return g_test_run();
}
