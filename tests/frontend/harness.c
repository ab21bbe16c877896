/* SPDX-License-Identifier: GPL-2.0-or-later */
/* harness.c — runs the backend under test (see harness.h). */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#define LEGACY_NAME "virtiofsd"

static uid_t test_uid = (uid_t)-1;
static gid_t test_gid = (gid_t)-1;
static char *exec_copy_dir;
static gboolean daemon_as_root;

void harness_test_init(int *argc, char ***argv)
{
        g_test_init(argc, argv, NULL);
        g_test_set_nonfatal_assertions();
        /* A daemon that dies must fail a send, not kill the test with SIGPIPE. */
        signal(SIGPIPE, SIG_IGN);
}

const char *harness_daemon_path(void)
{
        static char *path;
        if (!path) {
                const char *env = g_getenv("SLUICE_FS");
                const char *root = g_getenv("SLUICE_BUILD_ROOT");
                if (env && *env)
                        path = g_strdup(env);
                else
                        path = g_build_filename(root ? root : ".", "daemon", "sluice-fs", NULL);
        }
        return path;
}

gboolean harness_is_legacy(void)
{
        g_autofree char *base = g_path_get_basename(harness_daemon_path());
        return g_str_equal(base, LEGACY_NAME);
}

gboolean harness_require_sluice(const char *why)
{
        if (!harness_is_legacy())
                return TRUE;
        g_test_skip(why);
        return FALSE;
}

/* The test user, looked up once: only when we are root and it is set. */
static void user_init(void)
{
        static gboolean done;
        if (done)
                return;
        done = TRUE;
        const char *name = g_getenv("SLUICE_TEST_USER");
        if (geteuid() != 0 || !name || !*name || harness_is_legacy())
                return;
        struct passwd *pw = getpwnam(name);
        if (!pw)
                g_error("SLUICE_TEST_USER=%s: no such user", name);
        test_uid = pw->pw_uid;
        test_gid = pw->pw_gid;
}

uid_t harness_daemon_uid(void)
{
        user_init();
        return test_uid != (uid_t)-1 ? test_uid : geteuid();
}

gid_t harness_daemon_gid(void)
{
        user_init();
        return test_gid != (gid_t)-1 ? test_gid : getegid();
}

void harness_chown_to_user(const char *path)
{
        user_init();
        if (test_uid != (uid_t)-1 && lchown(path, test_uid, test_gid) < 0)
                g_error("chown %s: %s", path, g_strerror(errno));
}

static void remove_exec_copy(void)
{
        if (exec_copy_dir) {
                g_autofree char *bin = g_build_filename(exec_copy_dir, "sluice-fs", NULL);
                (void)g_unlink(bin);
                (void)g_rmdir(exec_copy_dir);
        }
}

/* The build tree may sit where the test user cannot go: then run a copy. */
static const char *daemon_exec_path(void)
{
        static const char *path;
        if (path)
                return path;
        user_init();
        path = harness_daemon_path();
        if (test_uid == (uid_t)-1)
                return path;
        pid_t pid = fork();
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setgid(test_gid) < 0 || setuid(test_uid) < 0)
                        _exit(2);
                _exit(access(path, X_OK) == 0 ? 0 : 1);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0)
                g_error("fork: %s", g_strerror(errno));
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return path;
        g_autoptr(GError) error = NULL;
        exec_copy_dir = g_dir_make_tmp("sluice-fs-bin-XXXXXX", &error);
        g_assert_no_error(error);
        g_chmod(exec_copy_dir, 0755);
        char *copy = g_build_filename(exec_copy_dir, "sluice-fs", NULL);
        g_autofree char *data = NULL;
        gsize len;
        g_file_get_contents(path, &data, &len, &error);
        g_assert_no_error(error);
        g_file_set_contents_full(copy, data, (gssize)len, G_FILE_SET_CONTENTS_NONE, 0755, &error);
        g_assert_no_error(error);
        atexit(remove_exec_copy);
        path = copy;
        return path;
}

gboolean harness_daemon_as_root(gboolean as_root)
{
        if (as_root && (geteuid() != 0 || harness_is_legacy())) {
                g_test_skip("the daemon can run as root only when the test does (and is sluice-fs)");
                return FALSE;
        }
        daemon_as_root = as_root;
        return TRUE;
}

Harness *harness_new(void)
{
        g_autoptr(GError) error = NULL;
        Harness *h = g_new0(Harness, 1);
        h->dir = g_dir_make_tmp("sluice-frontend-XXXXXX", &error);
        g_assert_no_error(error);
        g_chmod(h->dir, 0755);
        h->share = g_build_filename(h->dir, "share", NULL);
        h->outside = g_build_filename(h->dir, "outside", NULL);
        h->socket = g_build_filename(h->dir, "fs.sock", NULL);
        g_assert_cmpint(g_mkdir(h->share, 0755), ==, 0);
        g_assert_cmpint(g_mkdir(h->outside, 0755), ==, 0);
        g_autofree char *canary = g_build_filename(h->outside, "canary", NULL);
        g_file_set_contents(canary, "canary: must never change\n", -1, &error);
        g_assert_no_error(error);
        /* Everything belongs to the daemon's user, so an escape could really
         * write here: the tests would see it. */
        harness_chown_to_user(h->dir);
        harness_chown_to_user(h->share);
        harness_chown_to_user(h->outside);
        harness_chown_to_user(canary);
        h->canary_snapshot = harness_snapshot(h->outside);
        return h;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)remove(path);
        return 0;
}

void harness_free(Harness *h)
{
        if (!h)
                return;
        vmm_free(h->vmm);
        if (h->pid > 0) {
                kill(h->pid, SIGKILL);
                (void)waitpid(h->pid, NULL, 0);
        }
        /* Directories a test made read-only must not stop the clean-up. */
        g_autofree char *cmd = g_strdup_printf("chmod -R u+rwx '%s' 2>/dev/null", h->dir);
        (void)!system(cmd);
        nftw(h->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        g_free(h->dir);
        g_free(h->share);
        g_free(h->outside);
        g_free(h->socket);
        g_free(h->canary_snapshot);
        g_free(h);
}

static void translate_legacy(GPtrArray *argv, const char *opt)
{
        if (g_str_equal(opt, "--xattr"))
                g_ptr_array_add(argv, g_strdup("-o xattr"));
        else if (g_str_has_prefix(opt, "--shared-dir="))
                g_ptr_array_add(argv, g_strdup_printf("-o source=%s", opt + strlen("--shared-dir=")));
        else if (g_str_has_prefix(opt, "--socket-path=") || g_str_has_prefix(opt, "--fd="))
                g_ptr_array_add(argv, g_strdup(opt));
        else
                g_test_message("legacy virtiofsd: option %s dropped", opt);
}

GPtrArray *harness_daemon_argv(Harness *h, gboolean use_socket, const char *const *extra)
{
        GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
        gboolean legacy = harness_is_legacy();
        g_ptr_array_add(argv, g_strdup(daemon_exec_path()));
        g_autoptr(GPtrArray) opts = g_ptr_array_new_with_free_func(g_free);
        if (use_socket)
                g_ptr_array_add(opts, g_strdup_printf("--socket-path=%s", h->socket));
        g_ptr_array_add(opts, g_strdup_printf("--shared-dir=%s", h->share));
        for (unsigned i = 0; extra && extra[i]; i++)
                g_ptr_array_add(opts, g_strdup(extra[i]));
        /* For debugging a failure: e.g. SLUICE_FS_EXTRA_ARGS=--log-level=debug */
        g_auto(GStrv) more = g_strsplit(g_getenv("SLUICE_FS_EXTRA_ARGS") ?: "", " ", -1);
        for (unsigned i = 0; more[i]; i++)
                if (*more[i])
                        g_ptr_array_add(opts, g_strdup(more[i]));
        for (unsigned i = 0; i < opts->len; i++) {
                if (legacy)
                        translate_legacy(argv, opts->pdata[i]);
                else
                        g_ptr_array_add(argv, g_strdup(opts->pdata[i]));
        }
        if (legacy) {
                /* -o takes its value as a separate word. */
                GPtrArray *split = g_ptr_array_new_with_free_func(g_free);
                for (unsigned i = 0; i < argv->len; i++) {
                        const char *a = argv->pdata[i];
                        if (g_str_has_prefix(a, "-o ")) {
                                g_ptr_array_add(split, g_strdup("-o"));
                                g_ptr_array_add(split, g_strdup(a + 3));
                        } else {
                                g_ptr_array_add(split, g_strdup(a));
                        }
                }
                g_ptr_array_add(split, g_strdup("-o"));
                g_ptr_array_add(split, g_strdup("cache=none"));
                g_ptr_array_unref(argv);
                argv = split;
        }
        g_ptr_array_add(argv, NULL);
        return argv;
}

static int child_keep_fd = -1;

static void child_setup(gpointer data)
{
        pid_t parent = getppid();
        if (child_keep_fd >= 0) {
                int flags = fcntl(child_keep_fd, F_GETFD);
                (void)fcntl(child_keep_fd, F_SETFD, flags & ~FD_CLOEXEC);
        }
        if (test_uid != (uid_t)-1 && !daemon_as_root) {
                if (setgroups(0, NULL) < 0 || setgid(test_gid) < 0 || setuid(test_uid) < 0)
                        _exit(127);
        }
        /* After setuid(), which clears the parent-death signal. */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(127);
}

GPid harness_spawn(GPtrArray *argv, int keep_fd)
{
        g_autoptr(GError) error = NULL;
        GPid pid = 0;
        user_init();
        child_keep_fd = keep_fd;
        g_autofree char *cmdline = g_strjoinv(" ", (char **)argv->pdata);
        g_test_message("spawn: %s", cmdline);
        int fds[] = { keep_fd };
        g_spawn_async_with_pipes_and_fds(NULL, (const char *const *)argv->pdata, NULL,
                                         G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_CHILD_INHERITS_STDIN,
                                         child_setup, NULL, -1, -1, -1,
                                         keep_fd >= 0 ? fds : NULL, keep_fd >= 0 ? fds : NULL,
                                         keep_fd >= 0 ? 1 : 0, &pid, NULL, NULL, NULL, &error);
        g_assert_no_error(error);
        return pid;
}

int harness_run(const char *const *argv, char **ret_out, char **ret_err)
{
        g_autoptr(GError) error = NULL;
        int status = -1;
        user_init();
        child_keep_fd = -1;
        /* timeout(1) keeps a hung daemon from hanging the test. */
        g_autoptr(GPtrArray) full = g_ptr_array_new();
        g_ptr_array_add(full, (char *)"timeout");
        g_ptr_array_add(full, (char *)"-s");
        g_ptr_array_add(full, (char *)"KILL");
        g_ptr_array_add(full, (char *)"30");
        for (unsigned i = 0; argv[i]; i++)
                g_ptr_array_add(full, (char *)argv[i]);
        g_ptr_array_add(full, NULL);
        g_spawn_sync(NULL, (char **)full->pdata, NULL, G_SPAWN_SEARCH_PATH, child_setup, NULL,
                     ret_out, ret_err, &status, &error);
        g_assert_no_error(error);
        return status;
}

void harness_start(Harness *h, const char *const *extra)
{
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, extra);
        harness_start_argv(h, argv);
}

void harness_start_argv(Harness *h, GPtrArray *argv)
{
        h->pid = harness_spawn(argv, -1);
        if (h->pid <= 0)
                g_error("could not start %s", harness_daemon_path());
        /* Wait for the socket to appear; a daemon that dies first fails the test. */
        for (int i = 0; i < 1000; i++) {
                struct stat st;
                if (g_lstat(h->socket, &st) == 0 && S_ISSOCK(st.st_mode))
                        return;
                int status;
                if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
                        h->pid = 0;
                        g_autofree char *dir = g_strdup(h->dir);
                        harness_free(h);  /* the abort below skips the test's clean-up */
                        g_error("daemon exited before creating its socket in %s (status %#x)", dir, status);
                }
                g_usleep(10000);
        }
        g_autofree char *sock = g_strdup(h->socket);
        harness_free(h);
        g_error("daemon did not create %s within 10 s", sock);
}

struct vmm *harness_connect(Harness *h, const struct vmm_config *cfg)
{
        struct vmm *v = NULL;
        int r = vmm_connect(h->socket, cfg, &v);
        if (r < 0)
                g_error("vhost-user set-up with %s failed: %s", h->socket, g_strerror(-r));
        r = vmm_init(v, NULL);
        if (r < 0)
                g_error("FUSE INIT failed: %s", g_strerror(-r));
        return v;
}

void harness_up(Harness *h, const char *const *extra)
{
        harness_start(h, extra);
        h->vmm = harness_connect(h, NULL);
}

gboolean harness_wait_exit(Harness *h, int timeout_ms, int *ret_status)
{
        if (h->pid <= 0)
                return FALSE;
        for (int waited = 0;; waited += 10) {
                int status;
                pid_t r = waitpid(h->pid, &status, WNOHANG);
                if (r == h->pid) {
                        h->pid = 0;
                        if (ret_status)
                                *ret_status = status;
                        return TRUE;
                }
                if (waited >= timeout_ms)
                        return FALSE;
                g_usleep(10000);
        }
}

gboolean harness_daemon_pivoted(Harness *h)
{
        g_autofree char *link = g_strdup_printf("/proc/%d/ns/mnt", (int)h->pid);
        g_autofree char *theirs = g_file_read_link(link, NULL);
        g_autofree char *ours = g_file_read_link("/proc/self/ns/mnt", NULL);

        /* Only mount-namespace.c makes one. */
        return h->pid > 0 && theirs && ours && !g_str_equal(theirs, ours);
}

gboolean harness_daemon_metadata_helper(Harness *h)
{
        g_autoptr(GDir) dir = h->pid > 0 ? g_dir_open("/proc", 0, NULL) : NULL;
        g_autofree char *our_ns = g_file_read_link("/proc/self/ns/user", NULL);
        const char *name;

        while (dir && our_ns && (name = g_dir_read_name(dir))) {
                g_autofree char *status_path = g_strdup_printf("/proc/%s/status", name);
                g_autofree char *ns_path = g_strdup_printf("/proc/%s/ns/user", name);
                g_autofree char *ppid_line = g_strdup_printf("\nPPid:\t%d\n", (int)h->pid);
                g_autofree char *status = NULL;
                g_autofree char *ns = NULL;

                if (!g_ascii_isdigit(name[0]) ||
                    !g_file_get_contents(status_path, &status, NULL, NULL) ||
                    !g_str_has_prefix(status, "Name:\tsluice-fs-meta\n") ||
                    !strstr(status, ppid_line))
                        continue;
                ns = g_file_read_link(ns_path, NULL);
                if (ns && !g_str_equal(ns, our_ns))
                        return TRUE;
        }
        return FALSE;
}

gboolean harness_daemon_alive(Harness *h)
{
        int status;
        if (h->pid <= 0)
                return FALSE;
        if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
                g_test_message("daemon exited: %s %d", WIFSIGNALED(status) ? "signal" : "status",
                               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                h->pid = 0;
                /* Remember a crash: it is never acceptable. */
                if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) > 2)) {
                        g_test_message("FAIL: the daemon crashed or failed");
                        g_test_fail();
                }
                return FALSE;
        }
        return TRUE;
}

void harness_assert_alive(Harness *h)
{
        if (!harness_daemon_alive(h)) {
                g_test_message("FAIL: the daemon is not running any more");
                g_test_fail();
        }
}

void harness_assert_clean_exit(Harness *h, int timeout_ms, const char *what)
{
        int status = 0;
        if (!harness_wait_exit(h, timeout_ms, &status)) {
                g_test_message("FAIL: the daemon did not exit within %d ms after %s", timeout_ms, what);
                g_test_fail();
                return;
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                g_test_message("FAIL: after %s the daemon ended with %s %d", what,
                               WIFSIGNALED(status) ? "signal" : "exit status",
                               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                g_test_fail();
        }
}

char *harness_path(Harness *h, const char *rel)
{
        return g_build_filename(h->share, rel, NULL);
}

void harness_write(Harness *h, const char *rel, const char *content)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *path = harness_path(h, rel);
        g_file_set_contents(path, content, -1, &error);
        g_assert_no_error(error);
        g_chmod(path, 0644);
        harness_chown_to_user(path);
}

char *harness_read(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        char *data = NULL;
        if (!g_file_get_contents(path, &data, NULL, NULL))
                return NULL;
        return data;
}

void harness_mkdir(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        g_assert_cmpint(g_mkdir(path, 0755), ==, 0);
        harness_chown_to_user(path);
}

void harness_symlink(Harness *h, const char *target, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        g_assert_cmpint(symlink(target, path), ==, 0);
        harness_chown_to_user(path);
}

static GPtrArray *snapshot_lines;
static size_t snapshot_prefix;

static int snapshot_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        const char *rel = path + snapshot_prefix;
        g_autofree char *extra = NULL;
        if (S_ISREG(st->st_mode)) {
                g_autofree char *data = NULL;
                gsize len = 0;
                if (g_file_get_contents(path, &data, &len, NULL))
                        extra = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (guchar *)data, len);
        } else if (S_ISLNK(st->st_mode)) {
                extra = g_file_read_link(path, NULL);
        }
        g_ptr_array_add(snapshot_lines,
                        g_strdup_printf("%s %o %u:%u %lld %lld %s", *rel ? rel : ".",
                                        (unsigned)st->st_mode, (unsigned)st->st_uid,
                                        (unsigned)st->st_gid, (long long)(S_ISDIR(st->st_mode) ? 0 : st->st_size),
                                        (long long)st->st_mtim.tv_sec, extra ? extra : "-"));
        return 0;
}

static gint compare_strings(gconstpointer a, gconstpointer b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

char *harness_snapshot(const char *dir)
{
        snapshot_lines = g_ptr_array_new_with_free_func(g_free);
        snapshot_prefix = strlen(dir);
        nftw(dir, snapshot_entry, 16, FTW_PHYS);
        g_ptr_array_sort(snapshot_lines, compare_strings);
        g_ptr_array_add(snapshot_lines, NULL);
        char *s = g_strjoinv("\n", (char **)snapshot_lines->pdata);
        g_ptr_array_unref(snapshot_lines);
        snapshot_lines = NULL;
        return s;
}

void harness_assert_outside_untouched(Harness *h)
{
        g_autofree char *now = harness_snapshot(h->outside);
        g_assert_cmpstr(now, ==, h->canary_snapshot);
        /* Nothing new next to share/ and outside/ either (the socket aside). */
        g_autoptr(GDir) d = g_dir_open(h->dir, 0, NULL);
        const char *name;
        while (d && (name = g_dir_read_name(d))) {
                if (!g_str_equal(name, "share") && !g_str_equal(name, "outside") &&
                    !g_str_equal(name, "fs.sock")) {
                        g_test_message("FAIL: %s/%s appeared outside the share", h->dir, name);
                        g_test_fail();
                }
        }
}
