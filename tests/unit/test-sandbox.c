/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-sandbox.c — the sandbox leaves metadata outside the share alone: a child applies sandbox_apply() from the daemon library to a temp
 * share, as the worker does, then makes one path-based metadata call on a
 * file outside the share, as a code-execution bug would.  Landlock has no
 * rights for metadata, so only the seccomp allow-list can refuse them: the
 * child must die of SIGSYS with the worker's log line naming the call, and
 * the file must be as it was.  The fd-based calls SETATTR and SETXATTR use
 * must still work on a file inside. */
#include <glib.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452   /* Linux 6.6; Debian 12's headers predate it */
#endif

#define EXIT_NO_SECCOMP 77   /* built without libseccomp: nothing to test */

typedef struct {
        char *dir;
        char *share;
        char *victim;      /* outside the share */
        struct stat before;
        bool xattrs;       /* the temp folder's file system takes user.* xattrs (tmpfs < 6.6 does not) */
} Fixture;

static void fixture_set_up(Fixture *f, gconstpointer unused)
{
        f->dir = g_dir_make_tmp("sluice-sandbox-XXXXXX", NULL);
        g_assert_nonnull(f->dir);
        f->share = g_build_filename(f->dir, "share", NULL);
        f->victim = g_build_filename(f->dir, "victim", NULL);
        g_assert_cmpint(mkdir(f->share, 0755), ==, 0);
        g_assert_true(g_file_set_contents(f->victim, "host file", -1, NULL));
        g_assert_cmpint(chmod(f->victim, 0640), ==, 0);
        f->xattrs = setxattr(f->victim, "user.orig", "1", 1, 0) == 0;
        if (!f->xattrs)
                g_assert_cmpint(errno, ==, EOPNOTSUPP);
        g_assert_cmpint(stat(f->victim, &f->before), ==, 0);
}

static void fixture_tear_down(Fixture *f, gconstpointer unused)
{
        g_autofree char *inside = g_build_filename(f->share, "inside", NULL);

        (void)unlink(inside);
        (void)rmdir(f->share);
        (void)unlink(f->victim);
        (void)rmdir(f->dir);
        g_free(f->share);
        g_free(f->victim);
        g_free(f->dir);
}

static bool seccomp_is_on(void)
{
        g_autofree char *status = NULL;

        return g_file_get_contents("/proc/self/status", &status, NULL, NULL) &&
               strstr(status, "\nSeccomp:\t2\n") != NULL;
}

/* Forks a child that applies the worker's sandbox to f->share and runs
 * `body`; returns its wait status and, in *ret_err, what it wrote to stderr. */
static int run_sandboxed(Fixture *f, int (*body)(Fixture *f, int share_fd), char **ret_err)
{
        int pipefd[2], status = 0;
        GString *err = g_string_new(NULL);
        char buf[512];
        ssize_t n;
        pid_t pid;

        g_assert_cmpint(pipe2(pipefd, O_CLOEXEC), ==, 0);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                int share_fd;

                (void)dup2(pipefd[1], STDERR_FILENO);
                share_fd = open(f->share, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (share_fd < 0 || sandbox_apply(share_fd, -1) < 0)
                        _exit(2);
                if (!seccomp_is_on())
                        _exit(EXIT_NO_SECCOMP);
                _exit(body(f, share_fd));
        }
        close(pipefd[1]);
        while ((n = read(pipefd[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
                if (n > 0)
                        g_string_append_len(err, buf, n);
        close(pipefd[0]);
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_test_message("child status %#x, stderr:\n%s", status, err->str);
        *ret_err = g_string_free(err, FALSE);
        return status;
}

/* The planted calls: 0 when the call did what it was asked (a sandbox
 * failure), 1 when it was refused with an error. */
static const struct timespec planted_times[2] = { { .tv_sec = 1 }, { .tv_sec = 1 } };

static int outside_path_fd(Fixture *f)
{
        /* Landlock does not restrict O_PATH opens: a planted call can always
         * get one for a file outside. */
        return open(f->victim, O_PATH | O_CLOEXEC);
}

static int planted_fchmodat(Fixture *f, int share_fd)
{
        return syscall(SYS_fchmodat, AT_FDCWD, f->victim, 0666, 0) == 0 ? 0 : 1;
}

static int planted_fchmodat2(Fixture *f, int share_fd)
{
        return syscall(SYS_fchmodat2, outside_path_fd(f), "", 0666, AT_EMPTY_PATH) == 0 ? 0 : 1;
}

static int planted_fchownat(Fixture *f, int share_fd)
{
        /* Our own group: allowed for any owner, so only the filter can refuse it. */
        return syscall(SYS_fchownat, AT_FDCWD, f->victim, -1, getgid(), 0) == 0 ? 0 : 1;
}

static int planted_fchownat_empty_path(Fixture *f, int share_fd)
{
        return syscall(SYS_fchownat, outside_path_fd(f), "", -1, getgid(),
                       AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : 1;
}

static int planted_utimensat(Fixture *f, int share_fd)
{
        return syscall(SYS_utimensat, AT_FDCWD, f->victim, planted_times, 0) == 0 ? 0 : 1;
}

static int planted_utimensat_empty_path(Fixture *f, int share_fd)
{
        return syscall(SYS_utimensat, outside_path_fd(f), "", planted_times,
                       AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : 1;
}

static int planted_setxattr(Fixture *f, int share_fd)
{
        return syscall(SYS_setxattr, f->victim, "user.planted", "1", 1, 0) == 0 ? 0 : 1;
}

static int planted_lsetxattr(Fixture *f, int share_fd)
{
        return syscall(SYS_lsetxattr, f->victim, "user.planted", "1", 1, 0) == 0 ? 0 : 1;
}

static int planted_removexattr(Fixture *f, int share_fd)
{
        return syscall(SYS_removexattr, f->victim, "user.orig") == 0 ? 0 : 1;
}

static int planted_lremovexattr(Fixture *f, int share_fd)
{
        return syscall(SYS_lremovexattr, f->victim, "user.orig") == 0 ? 0 : 1;
}

static int planted_chmod(Fixture *f, int share_fd)
{
        return syscall(SYS_chmod, f->victim, 0666) == 0 ? 0 : 1;
}

static int planted_utimes(Fixture *f, int share_fd)
{
        static const struct timeval tv[2] = { { .tv_sec = 1 }, { .tv_sec = 1 } };

        return syscall(SYS_utimes, f->victim, tv) == 0 ? 0 : 1;
}

typedef struct {
        const char *label;
        const char *name;      /* as the SIGSYS line names it; NULL: libseccomp may not know it */
        int (*plant)(Fixture *f, int share_fd);
} Planted;

static const Planted planted[] = {
        { "fchmodat", "fchmodat", planted_fchmodat },
        { "fchmodat2-empty-path", NULL, planted_fchmodat2 },
        { "fchownat", "fchownat", planted_fchownat },
        { "fchownat-empty-path", "fchownat", planted_fchownat_empty_path },
        { "utimensat", "utimensat", planted_utimensat },
        { "utimensat-empty-path", "utimensat", planted_utimensat_empty_path },
        { "setxattr", "setxattr", planted_setxattr },
        { "lsetxattr", "lsetxattr", planted_lsetxattr },
        { "removexattr", "removexattr", planted_removexattr },
        { "lremovexattr", "lremovexattr", planted_lremovexattr },
        { "chmod", "chmod", planted_chmod },
        { "utimes", "utimes", planted_utimes },
};

static void assert_victim_untouched(Fixture *f)
{
        struct stat st;
        char value[8];

        g_assert_cmpint(stat(f->victim, &st), ==, 0);
        g_assert_cmpuint(st.st_mode, ==, f->before.st_mode);
        g_assert_cmpuint(st.st_uid, ==, f->before.st_uid);
        g_assert_cmpuint(st.st_gid, ==, f->before.st_gid);
        g_assert_cmpint(st.st_mtim.tv_sec, ==, f->before.st_mtim.tv_sec);
        g_assert_cmpint(st.st_mtim.tv_nsec, ==, f->before.st_mtim.tv_nsec);
        if (!f->xattrs)
                return;
        g_assert_cmpint(getxattr(f->victim, "user.orig", value, sizeof(value)), ==, 1);
        g_assert_cmpint(getxattr(f->victim, "user.planted", value, sizeof(value)), <, 0);
}

static void test_planted_call(Fixture *f, gconstpointer data)
{
        const Planted *p = data;
        g_autofree char *err = NULL, *want = NULL;
        int status = run_sandboxed(f, p->plant, &err);

        if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NO_SECCOMP) {
                g_test_skip("built without libseccomp");
                return;
        }
        /* Refused by the filter: the worker's SIGSYS line, then death by SIGSYS. */
        g_assert_false(WIFEXITED(status));
        g_assert_true(WIFSIGNALED(status));
        g_assert_cmpint(WTERMSIG(status), ==, SIGSYS);
        g_assert_nonnull(strstr(err, "error: sandbox: system call"));
        if (p->name) {
                want = g_strdup_printf("(%s) denied", p->name);
                g_assert_nonnull(strstr(err, want));
        }
        assert_victim_untouched(f);
}

/* What SETATTR and SETXATTR do now: the f* calls on an fd opened inside. */
static int change_inside_by_fd(Fixture *f, int share_fd)
{
        static const struct timespec ts[2] = { { .tv_sec = 7 }, { .tv_sec = 7 } };
        int fd = openat(share_fd, "inside", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return 10;
        if (fchmod(fd, 0600) < 0)
                return 11;
        if (fchown(fd, (uid_t)-1, getgid()) < 0)
                return 12;
        if (futimens(fd, ts) < 0)
                return 13;
        if (!f->xattrs)
                return 0;
        if (fsetxattr(fd, "user.set", "ok", 2, 0) < 0)
                return 14;
        if (fremovexattr(fd, "user.gone") < 0)
                return 15;
        return 0;
}

static void test_fd_calls_inside_work(Fixture *f, gconstpointer unused)
{
        g_autofree char *inside = g_build_filename(f->share, "inside", NULL);
        g_autofree char *err = NULL;
        struct stat st;
        char value[8];
        int status;

        g_assert_true(g_file_set_contents(inside, "guest file", -1, NULL));
        g_assert_cmpint(chmod(inside, 0644), ==, 0);
        if (f->xattrs)
                g_assert_cmpint(setxattr(inside, "user.gone", "1", 1, 0), ==, 0);
        status = run_sandboxed(f, change_inside_by_fd, &err);
        if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NO_SECCOMP) {
                g_test_skip("built without libseccomp");
                return;
        }
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_cmpint(stat(inside, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0600);
        g_assert_cmpint(st.st_mtim.tv_sec, ==, 7);
        if (f->xattrs) {
                g_assert_cmpint(getxattr(inside, "user.set", value, sizeof(value)), ==, 2);
                g_assert_cmpint(getxattr(inside, "user.gone", value, sizeof(value)), <, 0);
        }
        assert_victim_untouched(f);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        for (size_t i = 0; i < G_N_ELEMENTS(planted); i++) {
                g_autofree char *path = g_strdup_printf("/sandbox/planted-by-path/%s",
                                                        planted[i].label);
                g_test_add(path, Fixture, &planted[i], fixture_set_up, test_planted_call,
                           fixture_tear_down);
        }
        g_test_add("/sandbox/fd-calls-inside-work", Fixture, NULL, fixture_set_up,
                   test_fd_calls_inside_work, fixture_tear_down);
        return g_test_run();
}
