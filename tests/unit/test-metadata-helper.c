/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-metadata-helper.c — the metadata helper (daemon/metadata-helper.h)
 * cannot reach outside the share.  A real helper is forked on a temp share,
 * as a desktop user's worker does, and sent requests aimed, as a
 * code-execution bug in the worker could aim them, at a canary file next to
 * the share: by "..", by absolute path (past the worker-side check), and
 * through symlinks inside the share pointing out.  Each must fail and leave
 * the canary's mode, owner and times as they were, while the same request
 * for a file inside the share changes it. */
#include <glib.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "metadata-helper.h"

typedef struct {
        char *dir;
        char *share;
        char *canary;      /* outside the share */
        struct stat before;
        gboolean started;
} Fixture;

static const struct timespec times_1[2] = { { .tv_sec = 1 }, { .tv_sec = 1 } };

static void fixture_set_up(Fixture *f, gconstpointer unused)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *outside = NULL, *inside = NULL, *link = NULL;
        int root_fd;

        f->dir = g_dir_make_tmp("sluice-mdhelper-XXXXXX", &error);
        g_assert_no_error(error);
        f->share = g_build_filename(f->dir, "share", NULL);
        outside = g_build_filename(f->dir, "outside", NULL);
        f->canary = g_build_filename(outside, "canary", NULL);
        g_assert_cmpint(mkdir(f->share, 0755), ==, 0);
        g_assert_cmpint(mkdir(outside, 0755), ==, 0);
        g_assert_true(g_file_set_contents(f->canary, "canary", -1, NULL));
        g_assert_cmpint(chmod(f->canary, 0644), ==, 0);
        g_assert_cmpint(lstat(f->canary, &f->before), ==, 0);

        inside = g_build_filename(f->share, "inside", NULL);
        g_assert_true(g_file_set_contents(inside, "inside", -1, NULL));
        /* Symlinks inside the share that lead out on the host. */
        link = g_build_filename(f->share, "abs-dir", NULL);
        g_assert_cmpint(symlink(outside, link), ==, 0);
        g_free(link);
        link = g_build_filename(f->share, "abs-file", NULL);
        g_assert_cmpint(symlink(f->canary, link), ==, 0);
        g_free(link);
        link = g_build_filename(f->share, "rel-dir", NULL);
        g_assert_cmpint(symlink("../outside", link), ==, 0);

        root_fd = open(f->share, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(root_fd, >=, 0);
        f->started = mdhelper_start(root_fd) == 0;
        close(root_fd);
}

static void fixture_tear_down(Fixture *f, gconstpointer unused)
{
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);

        mdhelper_stop();
        g_assert_cmpint(system(cmd), ==, 0);
        g_free(f->canary);
        g_free(f->share);
        g_free(f->dir);
}

static void assert_canary_untouched(const Fixture *f)
{
        struct stat now;

        g_assert_cmpint(lstat(f->canary, &now), ==, 0);
        g_assert_cmpuint(now.st_mode, ==, f->before.st_mode);
        g_assert_cmpuint(now.st_uid, ==, f->before.st_uid);
        g_assert_cmpuint(now.st_gid, ==, f->before.st_gid);
        g_assert_cmpint(now.st_mtim.tv_sec, ==, f->before.st_mtim.tv_sec);
        g_assert_cmpint(now.st_mtim.tv_nsec, ==, f->before.st_mtim.tv_nsec);
        g_assert_cmpint(now.st_atim.tv_sec, ==, f->before.st_atim.tv_sec);
}

static gboolean require_helper(const Fixture *f)
{
        if (!f->started)
                g_test_skip("no metadata helper here (a sanitizer build, or user namespaces "
                            "refused: see the log)");
        return f->started;
}

/* Mode 0777, our own ids, times 1 s: what a planted request would try. */
static int plant(const char *path, gboolean checked)
{
        const unsigned ops = MDHELPER_CHMOD | MDHELPER_CHOWN | MDHELPER_TIMES;

        return checked ? mdhelper_change(path, ops, 0777, getuid(), getgid(), times_1)
                       : mdhelper_change_unchecked(path, ops, 0777, getuid(), getgid(), times_1);
}

static void test_inside_changes(Fixture *f, gconstpointer unused)
{
        g_autofree char *inside = g_build_filename(f->share, "inside", NULL);
        g_autofree char *link = g_build_filename(f->share, "abs-file", NULL);
        struct stat st, link_before;

        if (!require_helper(f))
                return;
        g_assert_cmpint(plant("inside", TRUE), ==, 0);
        g_assert_cmpint(lstat(inside, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0777);
        g_assert_cmpint(st.st_mtim.tv_sec, ==, 1);
        /* A symlink's own times, never its target's. */
        g_assert_cmpint(lstat(link, &link_before), ==, 0);
        g_assert_cmpint(mdhelper_change("abs-file", MDHELPER_TIMES, 0, (uid_t)-1, (gid_t)-1, times_1),
                        ==, 0);
        g_assert_cmpint(lstat(link, &st), ==, 0);
        g_assert_cmpint(st.st_mtim.tv_sec, ==, 1);
        /* Only our own ids are mapped in its namespace. */
        g_assert_cmpint(mdhelper_change("inside", MDHELPER_CHOWN, 0, getuid() + 4242, (gid_t)-1,
                                        NULL), ==, -EPERM);
        assert_canary_untouched(f);
}

static void test_outside_unreachable(Fixture *f, gconstpointer unused)
{
        g_autofree char *from_share = g_strdup("../outside/canary");

        if (!require_helper(f))
                return;
        /* Refused by the worker's side, and by the helper itself. */
        g_assert_cmpint(plant(from_share, TRUE), ==, -EINVAL);
        g_assert_cmpint(plant(from_share, FALSE), ==, -EINVAL);
        g_assert_cmpint(plant(f->canary, FALSE), ==, -EINVAL);
        g_assert_cmpint(plant("", FALSE), ==, -EINVAL);
        assert_canary_untouched(f);
        /* Symlinks leading out on the host lead nowhere in its namespace: an
         * absolute target resolves inside the share, ".." stops at its top. */
        g_assert_cmpint(plant("abs-dir/canary", TRUE), ==, -ENOENT);
        g_assert_cmpint(plant("rel-dir/canary", TRUE), ==, -ENOENT);
        g_assert_cmpint(mdhelper_change("abs-file", MDHELPER_CHMOD, 0777, (uid_t)-1, (gid_t)-1, NULL),
                        ==, -ENOENT);   /* chmod follows the last link: to nothing */
        assert_canary_untouched(f);
}

/* The worker's side: an object moved out of the share has no path in it. */
static void test_rel_path(Fixture *f, gconstpointer unused)
{
        g_autofree char *inside = g_build_filename(f->share, "inside", NULL);
        int proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int root_fd = open(f->share, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int in_fd = open(inside, O_PATH | O_CLOEXEC);
        int out_fd = open(f->canary, O_PATH | O_CLOEXEC);
        char buf[4096];

        g_assert_cmpint(proc_fd, >=, 0);
        g_assert_cmpint(mdhelper_rel_path(proc_fd, root_fd, in_fd, buf, sizeof(buf)), ==, 0);
        g_assert_cmpstr(buf, ==, "inside");
        g_assert_cmpint(mdhelper_rel_path(proc_fd, root_fd, out_fd, buf, sizeof(buf)), ==, -EXDEV);
        g_assert_cmpint(unlink(inside), ==, 0);   /* its link now reads "… (deleted)" */
        g_assert_cmpint(mdhelper_rel_path(proc_fd, root_fd, in_fd, buf, sizeof(buf)), ==, -ENOENT);
        close(out_fd);
        close(in_fd);
        close(root_fd);
        close(proc_fd);
}

/* Our live helper child (named sluice-fs-meta), or 0. */
static pid_t find_helper(void)
{
        g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
        g_autofree char *ppid_line = g_strdup_printf("\nPPid:\t%d\n", (int)getpid());
        const char *name;

        while (dir && (name = g_dir_read_name(dir))) {
                g_autofree char *path = g_strdup_printf("/proc/%s/status", name);
                g_autofree char *status = NULL;

                if (g_ascii_isdigit(name[0]) && g_file_get_contents(path, &status, NULL, NULL) &&
                    g_str_has_prefix(status, "Name:\tsluice-fs-meta\n") && strstr(status, ppid_line) && !strstr(status, "\nState:\tZ"))
                        return (pid_t)atoi(name);
        }
        return 0;
}

/* A helper that died: the request fails as unsupported, at once, and the
 * helper is forgotten. */
static void test_dead_helper(Fixture *f, gconstpointer unused)
{
        pid_t pid;

        if (!require_helper(f))
                return;
        pid = find_helper();
        g_assert_cmpint(pid, >, 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
        g_assert_cmpint(plant("inside", TRUE), ==, -EOPNOTSUPP);
        g_assert_false(mdhelper_running());
        g_assert_cmpint(plant("inside", TRUE), ==, -EOPNOTSUPP);
}

/* A helper that does not answer (stopped): the request fails as unsupported
 * after the reply's bound (a few seconds), never hangs. */
static void test_stuck_helper(Fixture *f, gconstpointer unused)
{
        gint64 start;
        pid_t pid;

        if (!require_helper(f))
                return;
        pid = find_helper();
        g_assert_cmpint(pid, >, 0);
        g_assert_cmpint(kill(pid, SIGSTOP), ==, 0);
        g_assert_cmpint(waitpid(pid, NULL, WUNTRACED), ==, pid);
        start = g_get_monotonic_time();
        g_assert_cmpint(plant("inside", TRUE), ==, -EOPNOTSUPP);
        g_assert_cmpint(g_get_monotonic_time() - start, <, 30 * G_USEC_PER_SEC);
        g_assert_false(mdhelper_running());
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
        assert_canary_untouched(f);
}

static void test_path_acceptable(void)
{
        g_assert_true(mdhelper_path_acceptable("a/b"));
        g_assert_true(mdhelper_path_acceptable("a..b/..c"));
        g_assert_false(mdhelper_path_acceptable(""));
        g_assert_false(mdhelper_path_acceptable("/etc/passwd"));
        g_assert_false(mdhelper_path_acceptable(".."));
        g_assert_false(mdhelper_path_acceptable("a/../b"));
        g_assert_false(mdhelper_path_acceptable("a//.."));
}

int main(int argc, char **argv)
{
#if !SLUICE_TEST_HOOKS
        return 77;   /* the helper's test entry points need -Dtest_hooks=true */
#endif
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/metadata-helper/path-acceptable", test_path_acceptable);
        g_test_add("/metadata-helper/inside-changes", Fixture, NULL, fixture_set_up,
                   test_inside_changes, fixture_tear_down);
        g_test_add("/metadata-helper/outside-unreachable", Fixture, NULL, fixture_set_up,
                   test_outside_unreachable, fixture_tear_down);
        g_test_add("/metadata-helper/dead-helper", Fixture, NULL, fixture_set_up, test_dead_helper,
                   fixture_tear_down);
        g_test_add("/metadata-helper/stuck-helper", Fixture, NULL, fixture_set_up,
                   test_stuck_helper, fixture_tear_down);
        g_test_add("/metadata-helper/rel-path", Fixture, NULL, fixture_set_up, test_rel_path,
                   fixture_tear_down);
        return g_test_run();
}
