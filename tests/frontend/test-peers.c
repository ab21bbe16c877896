/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-peers.c — a worker tied to one frontend process (--allow-peer-pid).
 *
 * A qemu:///system VM's QEMU runs as libvirt-qemu, as every other system VM's
 * does: the peer's user alone lets any of them in.  With --allow-peer-pid:
 *
 *   /peers/other-process-refused  a second process of the same user (here: a
 *                                 child of the test, the frontend's user) is
 *                                 closed before the vhost-user set-up ends, the
 *                                 named process then connects and is served,
 *                                 and after it leaves the other is refused again
 *   /peers/no-such-process        a pid no process has: a usage error (exit 2)
 *                                 that names the option, nothing is served */
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Connects from a new process of our own user; TRUE when the worker let its
 * vhost-user set-up and FUSE INIT through. */
static gboolean other_process_served(Harness *h)
{
        struct vmm_config cfg = { .timeout_ms = 5000 };
        pid_t pid = fork();
        int status;

        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                struct vmm *v = NULL;
                int r = vmm_connect(h->socket, &cfg, &v);

                if (r == 0)
                        r = vmm_init(v, NULL);
                _exit(r == 0 ? 0 : 1);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_test_message("process %d: %s", (int)pid, WEXITSTATUS(status) ? "refused" : "served");
        return WEXITSTATUS(status) == 0;
}

static void test_other_process_refused(void)
{
        g_autoptr(Harness) h = NULL;
        g_autofree char *pid_arg = g_strdup_printf("--allow-peer-pid=%d", (int)getpid());
        const char *extra[] = { pid_arg, NULL };

        if (!harness_require_sluice("--allow-peer-pid is sluice-fs's own"))
                return;
        h = harness_new();
        harness_write(h, "hello.txt", "hello");
        harness_start(h, extra);

        g_assert_false(other_process_served(h));
        harness_assert_alive(h);

        /* the named process is served, the share works */
        h->vmm = harness_connect(h, NULL);
        {
                struct fuse_entry_out entry;
                assert_ok(vmm_lookup(h->vmm, 1, "hello.txt", &entry));
        }
        vmm_free(h->vmm);
        h->vmm = NULL;

        /* the worker goes on listening, still for the named process only */
        g_assert_false(other_process_served(h));
        h->vmm = harness_connect(h, NULL);
        harness_assert_alive(h);
}

static void test_no_such_process(void)
{
        g_autoptr(Harness) h = NULL;
        g_autofree char *out = NULL, *err = NULL, *pid_arg = NULL;
        pid_t gone = fork();
        int status;

        if (!harness_require_sluice("--allow-peer-pid is sluice-fs's own"))
                return;
        g_assert_cmpint(gone, >=, 0);
        if (gone == 0)
                _exit(0);
        g_assert_cmpint(waitpid(gone, &status, 0), ==, gone);   /* reaped: no process has it now */
        h = harness_new();
        pid_arg = g_strdup_printf("--allow-peer-pid=%d", (int)gone);
        {
                g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, (const char *const[]){ pid_arg, NULL });
                status = harness_run((const char *const *)argv->pdata, &out, &err);
        }
        g_test_message("exit status %d, stderr: %s", WEXITSTATUS(status), err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
        g_assert_nonnull(strstr(err, "--allow-peer-pid"));
        g_assert_nonnull(strstr(err, "no such process"));
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/peers/other-process-refused", test_other_process_refused);
        g_test_add_func("/peers/no-such-process", test_no_such_process);
        return g_test_run();
}
