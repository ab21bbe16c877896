/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-vm-qemu-pid.c — which process the service takes for a VM's QEMU
 * (service/vm-qemu-pid.c), the pid its worker then serves alone:
 *
 *   /vm-qemu-pid/paths        where libvirt's pid file is for each URI; remote
 *                             URIs, embedded drivers and names with a slash have none
 *   /vm-qemu-pid/read         a pid file of ours naming a live process of QEMU's
 *                             user gives that pid
 *   /vm-qemu-pid/not-trusted  a symlink, garbage, a pid no process has, a process
 *                             of another user: refused with a reason, never a pid */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "vm-qemu-pid.h"

static void test_paths(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *system = sluice_vm_qemu_pid_path("qemu:///system", "win11", &error);
        g_autofree char *session = NULL, *expected = NULL;

        g_assert_no_error(error);
        g_assert_cmpstr(system, ==, "/run/libvirt/qemu/win11.pid");
        g_setenv("XDG_RUNTIME_DIR", "/run/user/1000", TRUE);
        session = sluice_vm_qemu_pid_path("qemu:///session", "deb", &error);
        g_assert_no_error(error);
        expected = geteuid() == 0 ? g_strdup("/run/libvirt/qemu/deb.pid")
                                  : g_strdup("/run/user/1000/libvirt/qemu/run/deb.pid");
        g_assert_cmpstr(session, ==, expected);

        const char *const bad[][2] = {
                { "qemu+ssh://host/system", "vm" }, { "qemu:///embed?root=/tmp/x", "vm" },
                { "test:///default", "vm" }, { "qemu:///system", "../../etc/x" },
                { "qemu:///system", ".." }, { "qemu:///system", "" },
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autoptr(GError) e = NULL;
                g_autofree char *p = sluice_vm_qemu_pid_path(bad[i][0], bad[i][1], &e);
                g_test_message("%s %s: %s", bad[i][0], bad[i][1], e ? e->message : p);
                g_assert_null(p);
                g_assert_error(e, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED);
        }
}

static char *write_pid_file(const char *dir, const char *name, const char *text)
{
        char *path = g_build_filename(dir, name, NULL);

        g_assert_true(g_file_set_contents(path, text, -1, NULL));
        return path;
}

static void test_read(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *dir = g_dir_make_tmp("sluice-qemu-pid-XXXXXX", NULL);
        g_autofree char *text = g_strdup_printf("%d\n", (int)getpid());
        g_autofree char *path = write_pid_file(dir, "vm.pid", text);

        g_assert_cmpint(sluice_vm_qemu_pid_read(path, -1, &error), ==, getpid());
        g_assert_no_error(error);
        g_assert_cmpint(sluice_vm_qemu_pid_read(path, geteuid(), &error), ==, getpid());
        g_assert_no_error(error);
        g_unlink(path);
        g_rmdir(dir);
}

static void expect_refused(const char *path, gint64 uid)
{
        g_autoptr(GError) error = NULL;

        g_assert_cmpint(sluice_vm_qemu_pid_read(path, uid, &error), ==, -1);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED);
        g_test_message("%s: %s", path, error->message);
}

static void test_not_trusted(void)
{
        g_autofree char *dir = g_dir_make_tmp("sluice-qemu-pid-XXXXXX", NULL);
        g_autofree char *own = g_strdup_printf("%d", (int)getpid());
        g_autofree char *real = write_pid_file(dir, "real.pid", own);
        g_autofree char *link = g_build_filename(dir, "link.pid", NULL);
        g_autofree char *garbage = write_pid_file(dir, "garbage.pid", "12ab\n");
        g_autofree char *zero = write_pid_file(dir, "zero.pid", "0\n");
        g_autofree char *gone_text = NULL, *gone = NULL, *missing = g_build_filename(dir, "none.pid", NULL);
        pid_t child = fork();

        g_assert_cmpint(child, >=, 0);
        if (child == 0)
                _exit(0);
        g_assert_cmpint(waitpid(child, NULL, 0), ==, child);
        gone_text = g_strdup_printf("%d", (int)child);
        gone = write_pid_file(dir, "gone.pid", gone_text);
        g_assert_cmpint(symlink(real, link), ==, 0);

        expect_refused(link, -1);
        expect_refused(garbage, -1);
        expect_refused(zero, -1);
        expect_refused(gone, -1);
        expect_refused(missing, -1);
        /* our own process is not QEMU's when QEMU runs as another user */
        expect_refused(real, (gint64)geteuid() + 1);

        g_unlink(link);
        g_unlink(real);
        g_unlink(garbage);
        g_unlink(zero);
        g_unlink(gone);
        g_rmdir(dir);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/vm-qemu-pid/paths", test_paths);
        g_test_add_func("/vm-qemu-pid/read", test_read);
        g_test_add_func("/vm-qemu-pid/not-trusted", test_not_trusted);
        return g_test_run();
}
