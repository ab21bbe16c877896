/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-cli.c — sluice-test-vmm, the one-operation CLI other suites (the
 * service's) rely on: its commands, output and exit statuses. */
#include "harness.h"

#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>

static const char *cli_path(void)
{
        static char *path;
        if (!path) {
                const char *root = g_getenv("SLUICE_BUILD_ROOT");
                path = g_build_filename(root ? root : ".", "tests", "frontend", "sluice-test-vmm", NULL);
        }
        return path;
}

/* Runs the CLI against h's socket; returns its exit status (-1 if it died). */
static int cli(Harness *h, char **out, char **err, ...)
{
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_ptr_array_add(argv, (char *)cli_path());
        g_ptr_array_add(argv, (char *)"--socket");
        g_ptr_array_add(argv, h ? h->socket : (char *)"/nonexistent/fs.sock");
        va_list ap;
        va_start(ap, err);
        const char *a;
        while ((a = va_arg(ap, const char *)))
                g_ptr_array_add(argv, (char *)a);
        va_end(ap);
        g_ptr_array_add(argv, NULL);
        g_autoptr(GError) error = NULL;
        int status = -1;
        g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                     &status, &error);
        g_assert_no_error(error);
        g_test_message("cli: status %#x stdout '%s' stderr '%s'", status, *out, *err);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_cli(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "existing", "old text");
        harness_start(h, NULL);
        g_autofree char *o1 = NULL, *e1 = NULL;
        g_assert_cmpint(cli(h, &o1, &e1, "write", "hello.txt", "hi there", NULL), ==, 0);
        g_autofree char *content = harness_read(h, "hello.txt");
        g_assert_cmpstr(content, ==, "hi there");

        g_autofree char *o2 = NULL, *e2 = NULL;
        g_assert_cmpint(cli(h, &o2, &e2, "read", "existing", NULL), ==, 0);
        g_assert_cmpstr(o2, ==, "old text");

        g_autofree char *o3 = NULL, *e3 = NULL;
        g_assert_cmpint(cli(h, &o3, &e3, "ls", NULL), ==, 0);
        g_auto(GStrv) names = g_strsplit(g_strstrip(o3), "\n", -1);
        g_assert_cmpuint(g_strv_length(names), ==, 2);
        g_assert_true(g_strv_contains((const char *const *)names, "hello.txt"));
        g_assert_true(g_strv_contains((const char *const *)names, "existing"));

        g_autofree char *o4 = NULL, *e4 = NULL;
        g_assert_cmpint(cli(h, &o4, &e4, "stat", "hello.txt", NULL), ==, 0);
        g_assert_cmpstr(o4, ==, "size=8 mode=0644 type=file\n");

        g_autofree char *o5 = NULL, *e5 = NULL, *o6 = NULL, *e6 = NULL, *o7 = NULL, *e7 = NULL;
        g_assert_cmpint(cli(h, &o5, &e5, "mkdir", "d", NULL), ==, 0);
        g_assert_cmpint(cli(h, &o6, &e6, "write", "d/x", "inner", NULL), ==, 0);
        g_assert_cmpint(cli(h, &o7, &e7, "ls", "d", NULL), ==, 0);
        g_assert_cmpstr(o7, ==, "x\n");
        g_autofree char *inner = harness_read(h, "d/x");
        g_assert_cmpstr(inner, ==, "inner");

        g_autofree char *o8 = NULL, *e8 = NULL;
        g_assert_cmpint(cli(h, &o8, &e8, "rm", "nope", NULL), ==, 1);
        g_assert_cmpstr(e8, ==, "error: ENOENT\n");
        g_autofree char *o9 = NULL, *e9 = NULL;
        g_assert_cmpint(cli(h, &o9, &e9, "rm", "hello.txt", NULL), ==, 0);
        g_autofree char *gone = harness_read(h, "hello.txt");
        g_assert_null(gone);

        g_autofree char *o10 = NULL, *e10 = NULL;
        g_assert_cmpint(cli(h, &o10, &e10, "frobnicate", NULL), ==, 2);
        g_autofree char *o11 = NULL, *e11 = NULL;
        g_assert_cmpint(cli(NULL, &o11, &e11, "ls", NULL), ==, 1);
        /* The last line is the verdict (vmm diagnostics may come first). */
        g_auto(GStrv) lines = g_strsplit(g_strstrip(e11), "\n", -1);
        g_assert_true(g_str_has_prefix(lines[g_strv_length(lines) - 1], "error: ENOENT"));
}

static void test_cli_readonly(void)
{
        if (!harness_require_sluice("legacy virtiofsd has no --readonly"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "existing", "old text");
        const char *const ro[] = { "--readonly", NULL };
        harness_start(h, ro);
        g_autofree char *o1 = NULL, *e1 = NULL, *o2 = NULL, *e2 = NULL;
        g_assert_cmpint(cli(h, &o1, &e1, "write", "existing", "new", NULL), ==, 1);
        g_assert_cmpstr(e1, ==, "error: EROFS\n");
        g_assert_cmpint(cli(h, &o2, &e2, "read", "existing", NULL), ==, 0);
        g_assert_cmpstr(o2, ==, "old text");
        g_autofree char *content = harness_read(h, "existing");
        g_assert_cmpstr(content, ==, "old text");
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/cli/commands", test_cli);
        g_test_add_func("/cli/readonly", test_cli_readonly);
        return g_test_run();
}
