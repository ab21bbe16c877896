/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-service-fd-store.c — sluice-service's own fd store
 * (service/service-fd-store.h): the fds a restarted service gets back from
 * systemd are checked by name and given to the right share's worker only,
 * the rest closed; a push sends each fd of a worker's store to
 * $NOTIFY_SOCKET as "<tag>.<name>".  A closed fd shows as EOF on the other
 * end of its pipe; one still held as EAGAIN. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>

#include "service-fd-store.h"

#define FIRST_FD 600

/* The read end of a pipe whose write end is now fd TARGET. */
static int pipe_to(int target)
{
        int p[2];

        g_assert_cmpint(pipe2(p, O_CLOEXEC | O_NONBLOCK), ==, 0);
        g_assert_cmpint(dup3(p[1], target, O_CLOEXEC), ==, target);
        close(p[1]);
        return p[0];
}

/* Whether the write end of the pipe read by FD is closed everywhere. */
static gboolean closed(int fd)
{
        char c;
        ssize_t r = read(fd, &c, 1);

        g_assert_true(r == 0 || (r < 0 && errno == EAGAIN));
        return r == 0;
}

static gboolean known_docs(const char *tag, gpointer data)
{
        return g_str_equal(tag, "docs");
}

static void test_untrusted_names(void)
{
        /* what a store may hand back: only "<valid tag>.<protocol name>" is a share's */
        char *names[] = { "docs.conn", "secrets", "docs.secrets", "../x.conn", ".conn", "docs.",
                          "a b.conn", "docs.mem-0", "gone.conn", "docs.mem-", "\x01.conn", NULL };
        const gboolean kept[] = { TRUE, FALSE, FALSE, FALSE, FALSE, FALSE,
                                  FALSE, TRUE, TRUE, FALSE, FALSE };
        int n = (int)G_N_ELEMENTS(names) - 1, ends[G_N_ELEMENTS(names)];
        g_autoptr(SluiceWorkerFdStore) store = sluice_worker_fd_store_new("docs");

        g_unsetenv("NOTIFY_SOCKET");
        for (int i = 0; i < n; i++)
                ends[i] = pipe_to(FIRST_FD + i);
        sluice_service_fd_store_take(FIRST_FD, n, names);
        for (int i = 0; i < n; i++)
                g_assert_cmpint(closed(ends[i]), ==, !kept[i]);
        g_assert_true(sluice_service_fd_store_has("docs"));
        g_assert_true(sluice_service_fd_store_has("gone"));
        g_assert_false(sluice_service_fd_store_has("secrets"));

        /* a share removed meanwhile: its fds go */
        sluice_service_fd_store_drop_unknown(known_docs, NULL);
        g_assert_false(sluice_service_fd_store_has("gone"));
        g_assert_true(closed(ends[8]));

        /* the share's worker gets its own, and nothing else */
        /* given once: a later drop (the share's start ended) finds nothing */
        sluice_service_fd_store_give("docs", store);
        sluice_service_fd_store_drop("docs");
        g_assert_false(sluice_service_fd_store_has("docs"));
        g_assert_cmpuint(sluice_worker_fd_store_count(store), ==, 2);
        g_assert_true(sluice_worker_fd_store_has(store, "conn"));
        g_assert_true(sluice_worker_fd_store_has(store, "mem-0"));
        g_assert_false(closed(ends[0]));
        g_clear_pointer(&store, sluice_worker_fd_store_free);
        g_assert_true(closed(ends[0]));
        g_assert_true(closed(ends[7]));

        /* a share whose worker never came (its start failed): its fds go */
        {
                char *late[] = { "late.conn", NULL };
                int end = pipe_to(FIRST_FD);

                sluice_service_fd_store_take(FIRST_FD, 1, late);
                g_assert_false(closed(end));
                sluice_service_fd_store_drop("late");
                g_assert_false(sluice_service_fd_store_has("late"));
                g_assert_true(closed(end));
                close(end);
        }
        for (int i = 0; i < n; i++)
                close(ends[i]);
        sluice_service_fd_store_reset();
}

/* An abstract datagram socket standing in for systemd's notify socket;
 * $NOTIFY_SOCKET names it. */
static int fake_notify_socket(void)
{
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        socklen_t len = sizeof(sa_family_t);
        int sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        g_autofree char *name = NULL, *value = NULL;

        g_assert_cmpint(sock, >=, 0);
        g_assert_cmpint(bind(sock, (struct sockaddr *)&addr, len), ==, 0);   /* autobind */
        len = sizeof(addr);
        g_assert_cmpint(getsockname(sock, (struct sockaddr *)&addr, &len), ==, 0);
        name = g_strndup(addr.sun_path + 1, len - offsetof(struct sockaddr_un, sun_path) - 1);
        value = g_strconcat("@", name, NULL);
        g_setenv("NOTIFY_SOCKET", value, TRUE);
        return sock;
}

/* The next datagram's text (NULL: none queued) and its fd (-1: none). */
static char *receive(int sock, int *fd)
{
        char text[256];
        struct iovec iov = { .iov_base = text, .iov_len = sizeof(text) - 1 };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } control;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = &control, .msg_controllen = sizeof(control) };
        ssize_t r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

        *fd = -1;
        if (r < 0) {
                g_assert_cmpint(errno, ==, EAGAIN);
                return NULL;
        }
        text[r] = '\0';
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        g_assert_cmpuint(c->cmsg_len, ==, CMSG_LEN(sizeof(int)));
                        memcpy(fd, CMSG_DATA(c), sizeof(int));
                }
        return g_strdup(text);
}

static void test_push_and_remove(void)
{
        g_autoptr(SluiceWorkerFdStore) store = sluice_worker_fd_store_new("my.docs");
        g_autoptr(GError) error = NULL;
        char *names[] = { "my.docs.conn", "my.docs.conn", NULL };
        int sock = fake_notify_socket(), fd, ends[2], p[2];
        char *text;

        /* a push: every fd, in the store's order, named "<tag>.<name>" */
        g_assert_cmpint(pipe2(p, O_CLOEXEC | O_NONBLOCK), ==, 0);
        sluice_worker_fd_store_add(store, "conn", p[1]);
        g_assert_true(sluice_service_fd_store_push("my.docs", store, &error));
        g_assert_no_error(error);
        text = receive(sock, &fd);
        g_assert_cmpstr(text, ==, "FDSTORE=1\nFDNAME=my.docs.conn");
        g_free(text);
        g_assert_cmpint(fd, >=, 0);
        g_clear_pointer(&store, sluice_worker_fd_store_free);
        g_assert_false(closed(p[0]));   /* the store's copy is the one held now */
        close(fd);
        g_assert_true(closed(p[0]));
        close(p[0]);
        g_assert_null(receive(sock, &fd));

        /* taken back at start: removed from the unit's store, each name once */
        ends[0] = pipe_to(FIRST_FD);
        ends[1] = pipe_to(FIRST_FD + 1);
        sluice_service_fd_store_take(FIRST_FD, 2, names);
        text = receive(sock, &fd);
        g_assert_cmpstr(text, ==, "FDSTOREREMOVE=1\nFDNAME=my.docs.conn");
        g_free(text);
        g_assert_cmpint(fd, ==, -1);
        g_assert_null(receive(sock, &fd));
        g_assert_true(sluice_service_fd_store_has("my.docs"));
        sluice_service_fd_store_reset();
        g_assert_true(closed(ends[0]));
        g_assert_true(closed(ends[1]));
        close(ends[0]);
        close(ends[1]);

        /* no store to push to: an error, nothing sent */
        g_unsetenv("NOTIFY_SOCKET");
        store = sluice_worker_fd_store_new("docs");
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        sluice_worker_fd_store_add(store, "conn", p[1]);
        g_assert_false(sluice_service_fd_store_push("docs", store, &error));
        g_assert_nonnull(error);
        close(p[0]);
        close(sock);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/service-fd-store/untrusted-names", test_untrusted_names);
        g_test_add_func("/service-fd-store/push-and-remove", test_push_and_remove);
        return g_test_run();
}
