/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-socket-access.c — what a qemu:///system VM's QEMU user can reach after
 * Sluice grants it a worker's socket (service/vm-socket-access.c,
 * service/socket-dir.c), and what the other users on the ACLs keep.
 *
 * Run as root (CI does): the grants are made for real users, "nobody" as
 * QEMU's user and "daemon" as another user with entries of its own, and what
 * each of them can open or connect to is tried from a child process running
 * as that user.  Skips (77) when not root or when those users are missing.
 *
 *   /socket-access/acl-given-back      a restrictive mask and named entries:
 *                                      nobody else gains, getfacl before == after
 *   /socket-access/acl-changed-meanwhile  the user's change survives the give-back
 *   /socket-access/runtime-dir-closed  QEMU's user reaches the worker's socket
 *                                      and not a 0666 socket in the runtime folder
 *   /socket-access/peer-refused        a worker with --allow-peer-uid refuses
 *                                      another user's connection and keeps listening
 */
#include "config.h"

#include "socket-dir.h"
#include "vm-socket-access.h"

#include <acl/libacl.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static uid_t qemu_uid, other_uid;
static gid_t qemu_gid, other_gid;

static gboolean have_users(void)
{
        struct passwd *pw;

        if (geteuid() != 0) {
                g_test_skip("needs root (grants for other users, and acts as them)");
                return FALSE;
        }
        if (!(pw = getpwnam("nobody"))) {
                g_test_skip("no user nobody");
                return FALSE;
        }
        qemu_uid = pw->pw_uid;
        qemu_gid = pw->pw_gid;
        if (!(pw = getpwnam("daemon"))) {
                g_test_skip("no user daemon");
                return FALSE;
        }
        other_uid = pw->pw_uid;
        other_gid = pw->pw_gid;
        return TRUE;
}

static char *acl_text(const char *path)
{
        acl_t acl = acl_get_file(path, ACL_TYPE_ACCESS);
        char *text, *copy;

        g_assert_nonnull(acl);
        text = acl_to_any_text(acl, NULL, '\n', 0);
        g_assert_nonnull(text);
        copy = g_strdup(text);
        acl_free(text);
        acl_free(acl);
        return copy;
}

static void acl_set_text(const char *path, const char *text)
{
        acl_t acl = acl_from_text(text);

        g_assert_nonnull(acl);
        g_assert_cmpint(acl_set_file(path, ACL_TYPE_ACCESS, acl), ==, 0);
        acl_free(acl);
}

enum { TRY_OPEN, TRY_CONNECT, TRY_FRONTEND };
enum { RESULT_OK = 0, RESULT_EACCES = 10, RESULT_REFUSED = 11, RESULT_OTHER = 12 };

/* In a child running as uid/gid (no supplementary groups): opens path
 * (TRY_OPEN), connects to it (TRY_CONNECT), or connects and asks a vhost-user
 * backend for its features (TRY_FRONTEND: RESULT_REFUSED when it hangs up). */
static int try_as(uid_t uid, gid_t gid, int what, const char *path)
{
        pid_t pid = fork();
        int status;

        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                struct sockaddr_un addr = { .sun_family = AF_UNIX };
                uint32_t msg[3] = { 1 /* GET_FEATURES */, 1 /* version */, 0 };
                uint32_t reply[5];
                int fd;

                if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(RESULT_OTHER);
                if (what == TRY_OPEN) {
                        fd = open(path, O_RDONLY);
                        _exit(fd >= 0 ? RESULT_OK : errno == EACCES ? RESULT_EACCES : RESULT_OTHER);
                }
                g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
                fd = socket(AF_UNIX, SOCK_STREAM, 0);
                if (fd < 0)
                        _exit(RESULT_OTHER);
                if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
                        _exit(errno == EACCES ? RESULT_EACCES : RESULT_OTHER);
                if (what == TRY_CONNECT)
                        _exit(RESULT_OK);
                /* The worker may already have closed a refused peer's
                 * connection: EPIPE, not a SIGPIPE that kills the child. */
                if (send(fd, msg, sizeof(msg), MSG_NOSIGNAL) != sizeof(msg))
                        _exit(RESULT_REFUSED);
                /* a refused peer's connection is closed: EOF (or a reset) */
                if (recv(fd, reply, sizeof(reply), MSG_WAITALL) != sizeof(reply))
                        _exit(RESULT_REFUSED);
                _exit(reply[0] == 1 ? RESULT_OK : RESULT_OTHER);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static char *make_dir(void)
{
        char *dir = g_strdup("/tmp/sluice-test-acl-XXXXXX");

        g_assert_nonnull(g_mkdtemp_full(dir, 0700));
        return dir;
}

static void remove_tree(const char *dir)
{
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);

        g_assert_cmpint(system(cmd), ==, 0);
}

/* A folder and a file below it whose ACLs hold named users and groups that a
 * mask of --- (a folder) / r-- (the file) holds back: "daemon" may do
 * nothing with them.  Sluice's grant for QEMU's user must not change that. */
static void test_acl_given_back(void)
{
        g_autofree char *dir = NULL, *file = NULL;
        g_autofree char *dir_before = NULL, *file_before = NULL, *dir_after = NULL, *file_after = NULL;
        g_autoptr(GError) error = NULL;
        int fd;

        if (!have_users())
                return;
        dir = make_dir();
        file = g_build_filename(dir, "1.sock", NULL);
        fd = open(file, O_CREAT | O_WRONLY, 0600);
        g_assert_cmpint(fd, >=, 0);
        close(fd);
        acl_set_text(dir, "u::rwx,u:daemon:rwx,g::r-x,g:adm:rwx,m::---,o::---");
        acl_set_text(file, "u::rw-,u:daemon:rw-,g::rw-,g:adm:rw-,m::r--,o::---");
        dir_before = acl_text(dir);
        file_before = acl_text(file);
        g_assert_cmpint(try_as(other_uid, other_gid, TRY_OPEN, file), ==, RESULT_EACCES);

        g_assert_true(sluice_socket_access_grant("uuid-1", "docs", file, qemu_uid, &error));
        g_assert_no_error(error);
        /* QEMU's user gets in; daemon still does not, and its entry says no more than before */
        g_assert_cmpint(try_as(qemu_uid, qemu_gid, TRY_OPEN, file), ==, RESULT_OK);
        g_assert_cmpint(try_as(other_uid, other_gid, TRY_OPEN, file), ==, RESULT_EACCES);
        dir_after = acl_text(dir);
        g_test_message("folder's ACL while granted:\n%s", dir_after);
        g_assert_nonnull(strstr(dir_after, "user:nobody:--x"));
        g_assert_nonnull(strstr(dir_after, "mask::--x"));
        g_assert_nonnull(strstr(dir_after, "user:daemon:---"));
        g_assert_nonnull(strstr(dir_after, "group::---"));
        g_assert_nonnull(strstr(dir_after, "group:adm:---"));
        g_free(dir_after);

        sluice_socket_access_revoke("uuid-1", "docs");
        sluice_socket_access_revoke_all(); /* waits for the revoke queued before it */
        dir_after = acl_text(dir);
        file_after = acl_text(file);
        g_assert_cmpstr(dir_after, ==, dir_before);
        g_assert_cmpstr(file_after, ==, file_before);
        g_assert_cmpint(try_as(other_uid, other_gid, TRY_OPEN, dir), ==, RESULT_EACCES);
        g_assert_cmpint(try_as(other_uid, other_gid, TRY_OPEN, file), ==, RESULT_EACCES);
        g_assert_cmpint(try_as(qemu_uid, qemu_gid, TRY_OPEN, file), ==, RESULT_EACCES);
        remove_tree(dir);
}

/* The user changes the folder's ACL while the grant holds (setfacl -m: an
 * entry added, the mask recalculated): the give-back keeps their entry, takes
 * QEMU's user's, and gives daemon nothing it did not have. */
static void test_acl_changed_meanwhile(void)
{
        g_autofree char *dir = NULL, *file = NULL, *dir_after = NULL;
        g_autoptr(GError) error = NULL;
        acl_t acl;
        acl_entry_t entry;
        acl_permset_t permset;
        uid_t bin_uid;
        struct passwd *pw;
        int fd;

        if (!have_users())
                return;
        if (!(pw = getpwnam("bin"))) {
                g_test_skip("no user bin");
                return;
        }
        bin_uid = pw->pw_uid;
        dir = make_dir();
        file = g_build_filename(dir, "1.sock", NULL);
        fd = open(file, O_CREAT | O_WRONLY, 0600);
        g_assert_cmpint(fd, >=, 0);
        close(fd);
        acl_set_text(dir, "u::rwx,u:daemon:rwx,g::r-x,m::---,o::---");
        g_assert_true(sluice_socket_access_grant("uuid-2", "docs", file, qemu_uid, &error));
        g_assert_no_error(error);

        /* as setfacl -m u:bin:r-x would */
        acl = acl_get_file(dir, ACL_TYPE_ACCESS);
        g_assert_cmpint(acl_create_entry(&acl, &entry), ==, 0);
        g_assert_cmpint(acl_set_tag_type(entry, ACL_USER), ==, 0);
        g_assert_cmpint(acl_set_qualifier(entry, &bin_uid), ==, 0);
        g_assert_cmpint(acl_get_permset(entry, &permset), ==, 0);
        g_assert_cmpint(acl_clear_perms(permset), ==, 0);
        g_assert_cmpint(acl_add_perm(permset, ACL_READ | ACL_EXECUTE), ==, 0);
        g_assert_cmpint(acl_set_permset(entry, permset), ==, 0);
        g_assert_cmpint(acl_calc_mask(&acl), ==, 0);
        g_assert_cmpint(acl_set_file(dir, ACL_TYPE_ACCESS, acl), ==, 0);
        acl_free(acl);

        sluice_socket_access_revoke("uuid-2", "docs");
        sluice_socket_access_revoke_all();
        dir_after = acl_text(dir);
        g_test_message("folder's ACL after the give-back:\n%s", dir_after);
        g_assert_nonnull(strstr(dir_after, "user:bin:r-x"));
        g_assert_null(strstr(dir_after, "user:nobody:"));
        g_assert_nonnull(strstr(dir_after, "user:daemon:---"));
        g_assert_cmpint(try_as(other_uid, other_gid, TRY_OPEN, dir), ==, RESULT_EACCES);
        g_assert_cmpint(try_as(other_uid, other_gid, TRY_OPEN, file), ==, RESULT_EACCES);
        g_assert_cmpint(try_as(qemu_uid, qemu_gid, TRY_OPEN, file), ==, RESULT_EACCES);
        remove_tree(dir);
}

static int listen_at(const char *path, mode_t mode)
{
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        g_assert_cmpint(fd, >=, 0);
        g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
        g_assert_cmpint(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
        g_assert_cmpint(chmod(path, mode), ==, 0);
        g_assert_cmpint(listen(fd, 8), ==, 0);
        return fd;
}

/* The runtime folder holds another program's 0666 socket (pipewire-0), safe
 * only behind the folder's 0700.  After a grant for the worker's socket QEMU's
 * user reaches that socket, and not pipewire-0. */
static void test_runtime_dir_closed(void)
{
        g_autofree char *runtime = NULL, *other = NULL, *dir = NULL, *sock = NULL, *run_acl = NULL;
        g_autoptr(GError) error = NULL;
        int other_fd, sock_fd;

        if (!have_users())
                return;
        runtime = make_dir();
        g_setenv("XDG_RUNTIME_DIR", runtime, TRUE);
        other = g_build_filename(runtime, "pipewire-0", NULL);
        other_fd = listen_at(other, 0666);
        dir = sluice_socket_dir_prepare(runtime, &error);
        g_assert_no_error(error);
        g_test_message("sockets' folder: %s", dir);
        sock = g_build_filename(dir, "1.sock", NULL);
        sock_fd = listen_at(sock, 0600);
        run_acl = acl_text(runtime);

        g_assert_true(sluice_socket_access_grant("uuid-3", "docs", sock, qemu_uid, &error));
        g_assert_no_error(error);
        g_assert_cmpint(try_as(qemu_uid, qemu_gid, TRY_CONNECT, sock), ==, RESULT_OK);
        g_assert_cmpint(try_as(qemu_uid, qemu_gid, TRY_CONNECT, other), ==, RESULT_EACCES);
        {
                g_autofree char *run_acl_granted = acl_text(runtime);
                g_assert_cmpstr(run_acl_granted, ==, run_acl);
        }
        /* the folder is the user's, 0700 but for QEMU's user's search entry */
        {
                g_autofree char *dir_acl = acl_text(dir);
                struct stat st;

                g_assert_cmpint(lstat(dir, &st), ==, 0);
                g_assert_cmpuint(st.st_uid, ==, geteuid());
                g_test_message("sockets' folder's ACL:\n%s", dir_acl);
                g_assert_nonnull(strstr(dir_acl, "user:nobody:--x"));
                g_assert_nonnull(strstr(dir_acl, "group::---"));
                g_assert_nonnull(strstr(dir_acl, "other::---"));
        }
        sluice_socket_access_revoke_all();
        g_assert_cmpint(try_as(qemu_uid, qemu_gid, TRY_CONNECT, sock), ==, RESULT_EACCES);
        /* a restarted service finds the same folder */
        {
                g_autofree char *again = sluice_socket_dir_prepare(runtime, &error);
                g_assert_no_error(error);
                g_assert_cmpstr(again, ==, dir);
        }
        close(other_fd);
        close(sock_fd);
        remove_tree(dir);
        remove_tree(runtime);
        g_unsetenv("XDG_RUNTIME_DIR");
}

static gboolean listening(const char *path)
{
        g_autofree char *table = NULL;
        g_autofree char *needle = g_strdup_printf(" %s\n", path);
        const char *line;

        if (!g_file_get_contents("/proc/net/unix", &table, NULL, NULL))
                return FALSE;
        /* "Num RefCount Protocol Flags ...": flags 00010000 = listening */
        for (line = strstr(table, needle); line; line = strstr(line + 1, needle)) {
                const char *start = line;

                while (start > table && start[-1] != '\n')
                        start--;
                if (strstr(start, " 00010000 ") && strstr(start, " 00010000 ") < line)
                        return TRUE;
        }
        return FALSE;
}

/* A worker started with --allow-peer-uid for QEMU's user: another user that
 * reaches the socket (another system VM's QEMU, say) is refused with a log
 * line, and the worker goes on listening for its own frontend. */
static void test_peer_refused(void)
{
        const char *sluice_fs = g_getenv("SLUICE_FS");
        g_autofree char *dir = NULL, *share = NULL, *sock = NULL, *log = NULL, *log_text = NULL;
        g_autofree char *uid_arg = NULL, *sock_arg = NULL, *share_arg = NULL;
        g_autoptr(GError) error = NULL;
        pid_t pid;
        int log_fd, status;

        if (!have_users())
                return;
        if (!sluice_fs) {
                g_test_skip("SLUICE_FS is not set");
                return;
        }
        dir = make_dir();
        share = g_build_filename(dir, "share", NULL);
        g_assert_cmpint(g_mkdir(share, 0755), ==, 0);
        sock = g_build_filename(dir, "1.sock", NULL);
        log = g_build_filename(dir, "worker.log", NULL);
        log_fd = open(log, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
        g_assert_cmpint(log_fd, >=, 0);
        uid_arg = g_strdup_printf("--allow-peer-uid=%u", (unsigned)qemu_uid);
        sock_arg = g_strdup_printf("--socket-path=%s", sock);
        share_arg = g_strdup_printf("--shared-dir=%s", share);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                /* the worker goes with the test, even when an assertion ends it */
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || dup2(log_fd, STDERR_FILENO) < 0)
                        _exit(127);
                execl(sluice_fs, sluice_fs, sock_arg, share_arg, uid_arg, (char *)NULL);
                _exit(127);
        }
        close(log_fd);
        while (!listening(sock)) {
                g_assert_cmpint(waitpid(pid, &status, WNOHANG), ==, 0);
                g_usleep(20000);
        }
        /* both users may reach the socket (two system VMs' QEMUs, say) */
        g_assert_true(sluice_socket_access_grant("uuid-4", "docs", sock, qemu_uid, &error));
        g_assert_no_error(error);
        g_assert_true(sluice_socket_access_grant("uuid-5", "docs", sock, other_uid, &error));
        g_assert_no_error(error);

        g_assert_cmpint(try_as(other_uid, other_gid, TRY_FRONTEND, sock), ==, RESULT_REFUSED);
        g_assert_cmpint(try_as(qemu_uid, qemu_gid, TRY_FRONTEND, sock), ==, RESULT_OK);

        g_assert_cmpint(kill(pid, SIGTERM), ==, 0);
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        sluice_socket_access_revoke_all();
        g_assert_true(g_file_get_contents(log, &log_text, NULL, NULL));
        g_test_message("worker's log:\n%s", log_text);
        {
                g_autofree char *line = g_strdup_printf("refusing a frontend of user %u",
                                                        (unsigned)other_uid);
                g_assert_nonnull(strstr(log_text, line));
        }
        remove_tree(dir);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/socket-access/acl-given-back", test_acl_given_back);
        g_test_add_func("/socket-access/acl-changed-meanwhile", test_acl_changed_meanwhile);
        g_test_add_func("/socket-access/runtime-dir-closed", test_runtime_dir_closed);
        g_test_add_func("/socket-access/peer-refused", test_peer_refused);
        return g_test_run();
}
