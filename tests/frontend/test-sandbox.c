/* test-sandbox.c — the default sandbox (issue 8 point 2): a worker started
 * with no sandbox option runs under seccomp and no_new_privs in every thread,
 * still serves FUSE requests, removes its socket on exit, and dies with a
 * clear last log line when it makes a call the sandbox denies, and cannot
 * open files outside the folder it serves; --sandbox=none turns all of it off. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* The SLUICE_FS_TEST_SANDBOX hook is compiled in with assertions only. */
static gboolean require_test_hook(void)
{
        if (!harness_require_sluice("sluice-fs's own sandbox"))
                return FALSE;
#ifdef NDEBUG
        g_test_skip("the sandbox test hook exists only in builds with assertions");
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
        g_assert_nonnull(strstr(err, "opening the shared folder's parent: Permission denied"));
        const char *const none[] = { "--sandbox=none", NULL };
        g_assert_cmpint(run_landlock_hook(h, none, &err_none), ==, 3);
        g_assert_nonnull(strstr(err_none, "opening the shared folder's parent: opened"));
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/sandbox/default-is-confined", test_default_is_confined);
        g_test_add_func("/sandbox/virtiofsd-spellings", test_virtiofsd_spellings_are_confined);
        g_test_add_func("/sandbox/none-turns-it-off", test_none_turns_it_off);
        g_test_add_func("/sandbox/denied-call-is-reported", test_denied_call_is_reported);
        g_test_add_func("/sandbox/landlock-confines-to-share", test_landlock_confines_to_share);
        return g_test_run();
}
