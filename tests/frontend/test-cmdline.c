/* test-cmdline.c — sluice-fs's command line (issue 2 point 8): --help,
 * --version, --print-capabilities, and for anything wrong one clear line on
 * stderr and exit status 2. */
#include "harness.h"

#include <string.h>
#include <sys/wait.h>

static int run(const char *const *args, char **out, char **err)
{
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_ptr_array_add(argv, (char *)harness_daemon_path());
        for (unsigned i = 0; args[i]; i++)
                g_ptr_array_add(argv, (char *)args[i]);
        g_ptr_array_add(argv, NULL);
        int status = harness_run((const char *const *)argv->pdata, out, err);
        g_test_message("exit status %d, stdout: %s\nstderr: %s", WEXITSTATUS(status), *out, *err);
        return status;
}

static void assert_usage_error(const char *const *args, const char *mention)
{
        g_autofree char *out = NULL, *err = NULL;
        int status = run(args, &out, &err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
        g_autofree char *trimmed = g_strstrip(g_strdup(err));
        g_assert_cmpstr(trimmed, !=, "");
        g_assert_null(strchr(trimmed, '\n'));  /* one line */
        if (mention)
                g_assert_nonnull(strstr(trimmed, mention));
}

static void test_help(void)
{
        if (!harness_require_sluice("sluice-fs's own command line"))
                return;
        g_autofree char *out = NULL, *err = NULL;
        const char *const args[] = { "--help", NULL };
        int status = run(args, &out, &err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        for (const char *opt = "--socket-path\0--fd\0--shared-dir\0--readonly\0--xattr\0--queues\0"
                               "--cache\0--print-capabilities\0";
             *opt; opt += strlen(opt) + 1)
                if (!strstr(out, opt)) {
                        g_test_message("FAIL: --help does not mention %s", opt);
                        g_test_fail();
                }
}

static void test_version(void)
{
        if (!harness_require_sluice("sluice-fs's own command line"))
                return;
        g_autofree char *out = NULL, *err = NULL;
        const char *const args[] = { "--version", NULL };
        int status = run(args, &out, &err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_nonnull(strstr(out, SLUICE_VERSION));
}

static void test_print_capabilities(void)
{
        g_autofree char *out = NULL, *err = NULL;
        const char *const args[] = { "--print-capabilities", NULL };
        int status = run(args, &out, &err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_autofree char *json = g_strstrip(g_strdup(out));
        g_assert_true(g_str_has_prefix(json, "{"));
        g_assert_true(g_str_has_suffix(json, "}"));
        g_assert_true(g_regex_match_simple("\"type\"\\s*:\\s*\"fs\"", json, 0, 0));
        g_assert_true(g_regex_match_simple("\"features\"\\s*:\\s*\\[", json, 0, 0));
}

static void test_errors(void)
{
        if (!harness_require_sluice("sluice-fs's own command line"))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *sock = g_strdup_printf("--socket-path=%s", h->socket);
        g_autofree char *share = g_strdup_printf("--shared-dir=%s", h->share);
        g_autofree char *missing = g_build_filename(h->dir, "no-such-dir", NULL);
        g_autofree char *missing_opt = g_strdup_printf("--shared-dir=%s", missing);
        g_autofree char *canary = g_build_filename(h->outside, "canary", NULL);
        g_autofree char *file_opt = g_strdup_printf("--shared-dir=%s", canary);
        g_autofree char *long_sock = g_strdup_printf("--socket-path=%s/%0200d.sock", h->dir, 0);

        const char *const bad_option[] = { sock, share, "--no-such-option", NULL };
        assert_usage_error(bad_option, "--no-such-option");
        const char *const missing_dir[] = { sock, missing_opt, NULL };
        assert_usage_error(missing_dir, "no-such-dir");
        const char *const file_dir[] = { sock, file_opt, NULL };
        assert_usage_error(file_dir, NULL);
        const char *const no_dir[] = { sock, NULL };
        assert_usage_error(no_dir, NULL);
        const char *const no_socket[] = { share, NULL };
        assert_usage_error(no_socket, NULL);
        const char *const unbindable[] = { "--socket-path=/nonexistent-dir/fs.sock", share, NULL };
        assert_usage_error(unbindable, "/nonexistent-dir/fs.sock");
        const char *const too_long[] = { long_sock, share, NULL };
        assert_usage_error(too_long, NULL);
        const char *const bad_queues[] = { sock, share, "--queues=0", NULL };
        assert_usage_error(bad_queues, NULL);
        const char *const bad_queues2[] = { sock, share, "--queues=banana", NULL };
        assert_usage_error(bad_queues2, NULL);
        const char *const bad_cache[] = { sock, share, "--cache=sometimes", NULL };
        assert_usage_error(bad_cache, NULL);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/cmdline/help", test_help);
        g_test_add_func("/cmdline/version", test_version);
        g_test_add_func("/cmdline/print-capabilities", test_print_capabilities);
        g_test_add_func("/cmdline/errors", test_errors);
        return g_test_run();
}
