/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-worker-fd-store.c — the keeper of a worker's fd store
 * (service/worker-fd-store.h) against what a worker, or anyone else, may
 * send to its notify socket: the checks every datagram goes through, the
 * dedup of an fd stored twice, and an fd dropped when its other end hangs
 * up.  A refused fd must be closed (not kept, not leaked): each test sends
 * one end of a pipe and looks for EOF on the other. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>

#include "worker-fd-store.h"

/* Sends TEXT with FDS to the store's notify socket, as sd_pid_notify_with_fds does. */
static void send_notify(SluiceWorkerFdStore *store, const char *text, gsize len, const int *fds, guint n_fds)
{
        const char *name = sluice_worker_fd_store_get_notify_socket(store);
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        struct iovec iov = { .iov_base = (void *)text, .iov_len = len };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * 8)];
        } control;
        struct msghdr msg = { .msg_name = &addr, .msg_iov = &iov, .msg_iovlen = 1 };
        socklen_t addr_len;
        int sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        g_assert_nonnull(name);
        g_assert_true(name[0] == '@');
        g_assert_cmpint(sock, >=, 0);
        g_assert_cmpuint(n_fds, <=, 8);
        /* abstract: a NUL, then the name without its '@' */
        memcpy(addr.sun_path + 1, name + 1, strlen(name + 1));
        addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
        msg.msg_namelen = addr_len;
        if (n_fds > 0) {
                struct cmsghdr *c;

                memset(&control, 0, sizeof(control));
                msg.msg_control = &control;
                msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        g_assert_cmpint(sendmsg(sock, &msg, 0), ==, (ssize_t)len);
        close(sock);
        /* what the main loop would read, now */
        sluice_worker_fd_store_drain(store);
}

static void send_text(SluiceWorkerFdStore *store, const char *text, int fd)
{
        send_notify(store, text, strlen(text), &fd, fd >= 0 ? 1 : 0);
}

typedef struct {
        int read_end;
        int write_end;
} Pipe;

static Pipe make_pipe(void)
{
        int p[2];

        g_assert_cmpint(pipe2(p, O_CLOEXEC | O_NONBLOCK), ==, 0);
        return (Pipe){ p[0], p[1] };
}

/* Whether the store holds no copy of the pipe's write end any more (ours
 * is closed by now): the read end sees EOF. */
static gboolean write_end_closed_everywhere(Pipe p)
{
        char c;

        return read(p.read_end, &c, 1) == 0;
}

static SluiceWorkerFdStore *new_store(void)
{
        SluiceWorkerFdStore *store = sluice_worker_fd_store_new("test");
        g_autoptr(GError) error = NULL;

        g_assert_true(sluice_worker_fd_store_listen(store, &error));
        g_assert_no_error(error);
        sluice_worker_fd_store_set_sender(store, getpid());
        return store;
}

/* The worker's own message is kept, under its name, in order. */
static void test_store_and_remove(void)
{
        g_autoptr(SluiceWorkerFdStore) store = new_store();
        Pipe a = make_pipe(), b = make_pipe();

        send_text(store, "FDSTORE=1\nFDNAME=conn", a.write_end);
        send_text(store, "FDSTORE=1\nFDNAME=state\nSTATUS=ignored", b.write_end);
        close(a.write_end);
        close(b.write_end);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 2);
        g_assert_true(sluice_worker_fd_store_has(store, "conn"));
        g_assert_true(sluice_worker_fd_store_has(store, "state"));
        g_assert_false(write_end_closed_everywhere(a));

        send_text(store, "FDSTOREREMOVE=1\nFDNAME=conn", -1);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 1);
        g_assert_false(sluice_worker_fd_store_has(store, "conn"));
        g_assert_true(write_end_closed_everywhere(a));

        sluice_worker_fd_store_clear(store);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 0);
        g_assert_true(write_end_closed_everywhere(b));
        close(a.read_end);
        close(b.read_end);
}

/* Anyone may send to an abstract socket: only the worker's pid counts, and
 * between launches (sender 0) nobody's. */
static void test_wrong_sender(void)
{
        g_autoptr(SluiceWorkerFdStore) store = new_store();
        Pipe p = make_pipe();

        sluice_worker_fd_store_set_sender(store, getppid());
        send_text(store, "FDSTORE=1\nFDNAME=conn", p.write_end);
        sluice_worker_fd_store_set_sender(store, 0);
        send_text(store, "FDSTORE=1\nFDNAME=conn", p.write_end);
        close(p.write_end);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 0);
        g_assert_true(write_end_closed_everywhere(p));
        close(p.read_end);
}

/* Names: [A-Za-z0-9-], 1 to 32 characters; one is required. */
static void test_bad_names(void)
{
        static const char *const bad[] = {
                "FDSTORE=1\nFDNAME=",
                "FDSTORE=1\nFDNAME=../conn",
                "FDSTORE=1\nFDNAME=a:b",
                "FDSTORE=1\nFDNAME=kick 0",
                "FDSTORE=1\nFDNAME=abcdefghijabcdefghijabcdefghijabc",  /* 33 */
                "FDSTORE=1\nFDNAME=secrets",     /* not a name of the protocol */
                "FDSTORE=1\nFDNAME=mem-",
                "FDSTORE=1\nFDNAME=kick-1a",
                "FDSTORE=1\nFDNAME=call--1",
                "FDSTORE=1\nFDNAME=err-01",
                "FDSTORE=1\nFDNAME=mem-12345678901",
                "FDSTORE=1",
                "FDSTORE=1\nFDSTOREREMOVE=1\nFDNAME=conn",
                "FDNAME=conn",          /* no FDSTORE=1: the fd is not to be kept */
                "READY=1",
        };
        g_autoptr(SluiceWorkerFdStore) store = new_store();

        for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
                Pipe p = make_pipe();

                send_text(store, bad[i], p.write_end);
                close(p.write_end);
                g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 0);
                g_assert_true(write_end_closed_everywhere(p));
                close(p.read_end);
        }
        g_assert_true(sluice_worker_fd_store_name_is_valid("kick-12"));
        g_assert_true(sluice_worker_fd_store_name_is_valid("mem-0"));
        g_assert_true(sluice_worker_fd_store_name_is_valid("tables"));
        g_assert_true(sluice_worker_fd_store_name_is_valid("err-4294967295"));
        g_assert_false(sluice_worker_fd_store_name_is_valid(NULL));
}

/* Not text: a NUL inside, bytes that are not UTF-8. */
static void test_garbage(void)
{
        static const char nul[] = "FDSTORE=1\nFDNAME=conn\0FDNAME=state";
        static const char latin1[] = "FDSTORE=1\nFDNAME=conn\n\xff\xfe";
        g_autoptr(SluiceWorkerFdStore) store = new_store();
        Pipe p = make_pipe();

        send_notify(store, nul, sizeof(nul) - 1, &p.write_end, 1);
        send_notify(store, latin1, sizeof(latin1) - 1, &p.write_end, 1);
        /* an empty datagram, and one without fds */
        send_notify(store, "", 0, NULL, 0);
        send_text(store, "FDSTOREREMOVE=1\nFDNAME=nothing-here", -1);
        close(p.write_end);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 0);
        g_assert_true(write_end_closed_everywhere(p));
        close(p.read_end);
}

/* The same open file description twice (a resumed worker storing what it
 * was given, or a dup of it) is held once; another file is not a dup. */
static void test_dedup(void)
{
        g_autoptr(SluiceWorkerFdStore) store = new_store();
        Pipe p = make_pipe();
        int copy = dup(p.write_end);
        int other = eventfd(0, EFD_CLOEXEC);

        send_text(store, "FDSTORE=1\nFDNAME=call-0", p.write_end);
        send_text(store, "FDSTORE=1\nFDNAME=call-0", p.write_end);
        send_text(store, "FDSTORE=1\nFDNAME=kick-0", copy);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 1);
        g_assert_false(sluice_worker_fd_store_has(store, "kick-0"));
        send_text(store, "FDSTORE=1\nFDNAME=kick-0", other);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 2);
        close(copy);
        close(other);
        close(p.write_end);
        g_assert_false(write_end_closed_everywhere(p));
        sluice_worker_fd_store_clear(store);
        g_assert_true(write_end_closed_everywhere(p));
        close(p.read_end);
}

/* At most SLUICE_WORKER_FD_STORE_MAX fds, however they come. */
static void test_too_many(void)
{
        g_autoptr(SluiceWorkerFdStore) store = new_store();
        Pipe p = make_pipe();
        int four[4];

        for (guint i = 0; i < SLUICE_WORKER_FD_STORE_MAX - 2; i++) {
                int fd = eventfd(0, EFD_CLOEXEC);

                g_assert_cmpint(fd, >=, 0);
                sluice_worker_fd_store_add(store, "mem-0", fd);
        }
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, SLUICE_WORKER_FD_STORE_MAX - 2);
        /* one message of four: two fit, two are closed */
        four[0] = eventfd(0, EFD_CLOEXEC);
        four[1] = eventfd(0, EFD_CLOEXEC);
        four[2] = eventfd(0, EFD_CLOEXEC);
        four[3] = p.write_end;
        send_notify(store, "FDSTORE=1\nFDNAME=err-1", strlen("FDSTORE=1\nFDNAME=err-1"), four, 4);
        for (guint i = 0; i < 4; i++)
                close(four[i]);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, SLUICE_WORKER_FD_STORE_MAX);
        g_assert_true(write_end_closed_everywhere(p));
        close(p.read_end);
}

static gboolean on_deadline(gpointer data)
{
        *(gboolean *)data = TRUE;
        return G_SOURCE_REMOVE;
}

/* The frontend went away while no worker served it: its connection is
 * dropped from the store; the other fds stay. */
static void test_hangup(void)
{
        g_autoptr(SluiceWorkerFdStore) store = new_store();
        int pair[2];
        int other = eventfd(0, EFD_CLOEXEC);
        gboolean late = FALSE;
        guint deadline;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
        send_text(store, "FDSTORE=1\nFDNAME=conn", pair[0]);
        send_text(store, "FDSTORE=1\nFDNAME=state", other);
        close(pair[0]);
        close(other);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 2);
        /* nothing happens while the frontend stays */
        while (g_main_context_iteration(NULL, FALSE))
                ;
        g_assert_true(sluice_worker_fd_store_has(store, "conn"));

        close(pair[1]);
        deadline = g_timeout_add_seconds(10, on_deadline, &late);
        while (sluice_worker_fd_store_has(store, "conn") && !late)
                g_main_context_iteration(NULL, TRUE);
        g_assert_false(late);
        g_source_remove(deadline);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 1);
        g_assert_true(sluice_worker_fd_store_has(store, "state"));
}

/* A restarting service hands a store on with add(): the same checks. */
static void test_add_checks(void)
{
        g_autoptr(SluiceWorkerFdStore) store = sluice_worker_fd_store_new("test");
        Pipe p = make_pipe();

        sluice_worker_fd_store_add(store, "no/slash", p.write_end);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 0);
        g_assert_true(write_end_closed_everywhere(p));
        sluice_worker_fd_store_add(store, "listen", -1);
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 0);
        close(p.read_end);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        /* every refusal is logged as a warning, by design: not fatal here */
        g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR);
        g_test_add_func("/worker-fd-store/store-and-remove", test_store_and_remove);
        g_test_add_func("/worker-fd-store/wrong-sender", test_wrong_sender);
        g_test_add_func("/worker-fd-store/bad-names", test_bad_names);
        g_test_add_func("/worker-fd-store/garbage", test_garbage);
        g_test_add_func("/worker-fd-store/dedup", test_dedup);
        g_test_add_func("/worker-fd-store/too-many", test_too_many);
        g_test_add_func("/worker-fd-store/hangup", test_hangup);
        g_test_add_func("/worker-fd-store/add-checks", test_add_checks);
        return g_test_run();
}
