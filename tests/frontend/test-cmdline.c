/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-cmdline.c — sluice-fs's command line: --help,
 * --version, --print-capabilities, and for anything wrong one clear line on
 * stderr and exit status 2.  --shared-dir-fd: what is not
 * an open folder is refused, and the folder served is the descriptor's, not
 * whatever its path names by the time the worker starts. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
        for (const char *opt = "--socket-path\0--fd\0--shared-dir\0--shared-dir-fd\0--readonly\0--xattr\0--queues\0"
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

/* sh runs the daemon with descriptor 3 opened on PATH ("3<PATH"), as a
 * person would pass one. */
static void assert_fd_usage_error(const char *path, const char *extra, const char *mention)
{
        g_autofree char *out = NULL, *err = NULL;
        g_autofree char *script = g_strdup_printf("exec \"$0\" --socket-path=\"$1\" --shared-dir-fd=3 %s 3<\"$2\"",
                                                  extra);
        g_autoptr(Harness) h = harness_new();
        const char *const args[] = { "sh", "-c", script, harness_daemon_path(), h->socket, path, NULL };
        int status = harness_run(args, &out, &err);

        g_test_message("%s on fd 3: exit status %d, stderr: %s", path, WEXITSTATUS(status), err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
        g_autofree char *trimmed = g_strstrip(g_strdup(err));
        g_assert_null(strchr(trimmed, '\n'));
        g_assert_nonnull(strstr(trimmed, mention));
}

static void test_shared_dir_fd_errors(void)
{
        if (!harness_require_sluice("sluice-fs's own --shared-dir-fd"))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *sock = g_strdup_printf("--socket-path=%s", h->socket);
        g_autofree char *share = g_strdup_printf("--shared-dir=%s", h->share);
        g_autofree char *canary = g_build_filename(h->outside, "canary", NULL);

        /* GLib closes every descriptor above 2 in the child: 9 is not open */
        const char *const closed[] = { sock, "--shared-dir-fd=9", NULL };
        assert_usage_error(closed, "--shared-dir-fd=9 is not an open file descriptor");
        const char *const stdio[] = { sock, "--shared-dir-fd=1", NULL };
        assert_usage_error(stdio, "3 or more");
        const char *const word[] = { sock, "--shared-dir-fd=folder", NULL };
        assert_usage_error(word, "--shared-dir-fd needs a file descriptor");
        const char *const both[] = { sock, share, "--shared-dir-fd=3", NULL };
        assert_usage_error(both, "cannot be used together");
        const char *const same[] = { "--fd=3", "--shared-dir-fd=3", NULL };
        assert_usage_error(same, "descriptor of its own");
        /* open, but not a folder */
        assert_fd_usage_error(canary, "", "--shared-dir-fd=3 is not a folder");
        assert_fd_usage_error("/dev/null", "", "--shared-dir-fd=3 is not a folder");
        assert_fd_usage_error(h->share, "--shared-dir=/", "cannot be used together");

        /* an O_PATH descriptor of a link to a folder is a link, not a folder */
        g_autofree char *link = g_build_filename(h->dir, "link-to-share", NULL);
        g_assert_cmpint(symlink(h->share, link), ==, 0);
        int fd = open(link, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 3);
        g_autofree char *fd_opt = g_strdup_printf("--shared-dir-fd=%d", fd);
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_ptr_array_add(argv, (char *)harness_daemon_path());
        g_ptr_array_add(argv, sock);
        g_ptr_array_add(argv, fd_opt);
        g_ptr_array_add(argv, NULL);
        GPid pid = harness_spawn(argv, fd);
        int status = 0;
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        close(fd);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
        g_assert_false(g_file_test(h->socket, G_FILE_TEST_EXISTS));
}

/* The worker serves the folder it was handed open, not what its path names
 * when the worker starts: here a link to the outside folder has taken the
 * path's place, as a guest of a share holding it could put one there
 * between sluice-service's check and the worker's start. */
static void test_shared_dir_fd_serves_the_folder(void)
{
        if (!harness_require_sluice("sluice-fs's own --shared-dir-fd"))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *real = harness_path(h, "real");
        g_autofree char *moved = harness_path(h, "real.moved");
        harness_mkdir(h, "real");
        harness_write(h, "real/inside.txt", "checked\n");

        int fd = open(real, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 3);
        g_assert_cmpint(rename(real, moved), ==, 0);
        harness_symlink(h, h->outside, "real");

        g_autofree char *sock = g_strdup_printf("--socket-path=%s", h->socket);
        g_autofree char *fd_opt = g_strdup_printf("--shared-dir-fd=%d", fd);
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_ptr_array_add(argv, (char *)harness_daemon_path());
        g_ptr_array_add(argv, sock);
        g_ptr_array_add(argv, fd_opt);
        g_ptr_array_add(argv, NULL);
        h->pid = harness_spawn(argv, fd);
        close(fd);
        /* the socket appears once the worker is set up; a worker that dies first fails */
        for (;;) {
                struct stat st;
                int status;

                if (lstat(h->socket, &st) == 0 && S_ISSOCK(st.st_mode))
                        break;
                if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
                        h->pid = 0;
                        g_error("sluice-fs --shared-dir-fd exited before listening (status %#x)", status);
                }
                g_usleep(10000);
        }
        h->vmm = harness_connect(h, NULL);
        struct fuse_entry_out e;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "inside.txt", &e));
        assert_errno(vmm_lookup(h->vmm, VMM_ROOT, "canary", &e), -ENOENT);
        harness_assert_alive(h);
        harness_assert_outside_untouched(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/cmdline/help", test_help);
        g_test_add_func("/cmdline/version", test_version);
        g_test_add_func("/cmdline/print-capabilities", test_print_capabilities);
        g_test_add_func("/cmdline/errors", test_errors);
        g_test_add_func("/cmdline/shared-dir-fd-errors", test_shared_dir_fd_errors);
        g_test_add_func("/cmdline/shared-dir-fd", test_shared_dir_fd_serves_the_folder);
        return g_test_run();
}
