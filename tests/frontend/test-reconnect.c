/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-reconnect.c — a frontend that hangs up and connects again at once is
 * served, never refused as "a second frontend": QEMU reconnecting quickly,
 * or a test VMM run after another.  The race this guards against needs the
 * old connection's hang-up and the new connection to be ready in the same
 * turn of the worker's event loop; /reconnect/both-ready makes that happen
 * every time by stopping the worker (SIGSTOP) while the frontend leaves and
 * comes back.  The frontend here speaks raw vhost-user (no memory, no rings):
 * a reconnect costs a connect, two messages and a close. */
#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* The vhost-user wire (docs/interop/vhost-user.rst): no daemon code is linked. */
#define VU_GET_FEATURES 1
#define VU_SET_OWNER 3
#define VU_VERSION 0x1
#define VU_REPLY 0x4
#define REPLY_TIMEOUT_MS 10000

struct vu_header {
        uint32_t request;
        uint32_t flags;
        uint32_t size;
} __attribute__((packed));

static int frontend_connect(Harness *h)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpuint(strlen(h->socket), <, sizeof(sa.sun_path));
        strcpy(sa.sun_path, h->socket);
        /* The worker listens all along: the connection waits in its backlog
         * even while the worker is stopped. */
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                g_error("connect %s: %s", h->socket, g_strerror(errno));
        return fd;
}

static void send_request(int fd, uint32_t request)
{
        struct vu_header hdr = { .request = request, .flags = VU_VERSION };

        g_assert_cmpint(send(fd, &hdr, sizeof(hdr), MSG_NOSIGNAL), ==, (ssize_t)sizeof(hdr));
}

/* Reads the reply to GET_FEATURES: 0 when the worker served it, -ECONNRESET
 * when it closed the connection instead (a refused frontend), -ETIMEDOUT. */
static int read_features(int fd, uint64_t *ret)
{
        struct {
                struct vu_header hdr;
                uint64_t u64;
        } __attribute__((packed)) reply;
        size_t got = 0;

        while (got < sizeof(reply)) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, REPLY_TIMEOUT_MS) == 0)
                        return -ETIMEDOUT;
                n = recv(fd, (char *)&reply + got, sizeof(reply) - got, 0);
                if (n == 0 || (n < 0 && errno == ECONNRESET))
                        return -ECONNRESET;
                if (n < 0 && errno == EINTR)
                        continue;
                g_assert_cmpint(n, >, 0);
                got += (size_t)n;
        }
        g_assert_cmpuint(reply.hdr.request, ==, VU_GET_FEATURES);
        g_assert_cmpuint(reply.hdr.flags, ==, VU_VERSION | VU_REPLY);
        g_assert_cmpuint(reply.hdr.size, ==, sizeof(uint64_t));
        *ret = reply.u64;
        return 0;
}

/* Whether the worker serves the frontend on fd: asks GET_FEATURES. */
static bool served(int fd)
{
        uint64_t features = 0;
        int r;

        send_request(fd, VU_GET_FEATURES);
        r = read_features(fd, &features);
        if (r < 0) {
                g_test_message("GET_FEATURES: %s", g_strerror(-r));
                return false;
        }
        return features != 0;
}

/* A frontend that leaves with a message still unread by the worker: the
 * worker sees data, then the hang-up, on the old connection. */
static void leave_with_message(int fd)
{
        send_request(fd, VU_SET_OWNER);   /* needs no reply */
        close(fd);
}

static void test_thousand(void)
{
        if (!harness_require_sluice("legacy virtiofsd serves one connection"))
                return;
        g_autoptr(Harness) h = harness_new();
        unsigned refused = 0;

        harness_start(h, NULL);
        for (unsigned round = 0; round < 1000; round++) {
                int fd = frontend_connect(h);

                if (!served(fd)) {
                        if (refused++ == 0)
                                g_test_message("FAIL: reconnect %u was refused", round);
                        close(fd);
                        continue;
                }
                leave_with_message(fd);
        }
        g_assert_cmpuint(refused, ==, 0);
        harness_assert_alive(h);
}

/* Stops the worker and waits until it is stopped (not a guess: the kernel
 * reports the group stop to us, its parent). */
static void stop_worker(Harness *h)
{
        int status = 0;

        g_assert_cmpint(kill(h->pid, SIGSTOP), ==, 0);
        g_assert_cmpint(waitpid(h->pid, &status, WUNTRACED), ==, h->pid);
        g_assert_true(WIFSTOPPED(status));
}

static void test_both_ready(void)
{
        if (!harness_require_sluice("legacy virtiofsd serves one connection"))
                return;
        g_autoptr(Harness) h = harness_new();

        harness_start(h, NULL);
        for (unsigned round = 0; round < 20; round++) {
                int old_fd = frontend_connect(h), new_fd;
                bool ok;

                g_assert_true(served(old_fd));   /* the worker holds this connection */
                stop_worker(h);
                /* While it sleeps: the old frontend leaves (a message, then
                 * the hang-up) and the new one connects and asks.  When it
                 * wakes, all of that is ready at once. */
                leave_with_message(old_fd);
                new_fd = frontend_connect(h);
                send_request(new_fd, VU_GET_FEATURES);
                g_assert_cmpint(kill(h->pid, SIGCONT), ==, 0);
                {
                        uint64_t features = 0;
                        int r = read_features(new_fd, &features);

                        ok = r == 0 && features != 0;
                        if (!ok)
                                g_test_message("FAIL: round %u: the new frontend was not served: %s",
                                               round, r < 0 ? g_strerror(-r) : "no features");
                }
                close(new_fd);
                g_assert_true(ok);
                if (!ok)
                        break;
        }
        harness_assert_alive(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/reconnect/thousand", test_thousand);
        g_test_add_func("/reconnect/both-ready", test_both_ready);
        return g_test_run();
}
