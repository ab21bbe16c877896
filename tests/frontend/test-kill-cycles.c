/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-kill-cycles.c — a frontend (QEMU) SIGKILLed with requests in every
 * queue, 50 times over: the worker resets and waits for the next frontend,
 * its descriptor count comes back to the same value each cycle and its
 * memory stays flat (both read from /proc), and a fresh frontend is served
 * correctly afterwards.  With --fd (libvirt's way) the kill ends the worker
 * with status 0.
 *
 * Each cycle forks a child that connects with 4 request queues and leaves
 * in each one a SETLKW blocked on a lock the test itself holds on the host
 * (another owner: the daemon's wait can only end by the disconnect), a large
 * READ, a large WRITE and an FSYNC; the parent kills it once every SETLKW is
 * known to be inside the daemon (a GETATTR queued behind it was answered).
 *
 * /kill-cycles/supervisor-gone: the other fault above the daemon, its
 * supervisor (sluice-service) dying, seen from the worker: idle, it exits 0;
 * serving a frontend, it stops listening, removes its socket (never one that
 * replaced it), serves on and exits 0 when the frontend leaves. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define QUEUES 4
#define CYCLES 50
#define WARMUP 5
#define BIG (4u << 20)        /* the file the large READs come from */
#define IO_SIZE (1u << 20)    /* one large READ/WRITE, capped at the granted max_write */
/* glibc keeps freed memory in per-thread arenas and trims lazily; what a leak
 * of one request's buffers per cycle would add over 45 cycles is well above it. */
#define RSS_SLACK_KIB 4096
#define STEADY_TIMEOUT_MS 20000

static const char known[] = "known content of a known file\n";

static unsigned fd_count(pid_t pid)
{
        g_autofree char *path = g_strdup_printf("/proc/%d/fd", (int)pid);
        g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
        unsigned n = 0;

        g_assert_nonnull(dir);
        while (g_dir_read_name(dir) != NULL)
                n++;
        return n;
}

/* A "Name:   N kB" line of /proc/PID/status, in KiB. */
static unsigned long status_kib(pid_t pid, const char *name)
{
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int)pid);
        g_autofree char *text = NULL;
        size_t len = strlen(name);

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        for (char *line = text; line != NULL && *line != '\0';) {
                char *next = strchr(line, '\n');
                if (strncmp(line, name, len) == 0 && line[len] == ':')
                        return strtoul(line + len + 1, NULL, 10);
                line = next != NULL ? next + 1 : NULL;
        }
        g_error("%s has no %s line", path, name);
}

/* AddressSanitizer keeps freed memory in quarantine (up to 256 MiB): RSS
 * grows by design, so there LeakSanitizer at the worker's exit is the check. */
static gboolean under_asan(pid_t pid)
{
        g_autofree char *path = g_strdup_printf("/proc/%d/maps", (int)pid);
        g_autofree char *maps = NULL;

        g_assert_true(g_file_get_contents(path, &maps, NULL, NULL));
        return strstr(maps, "libasan") != NULL;
}

/* The previous frontend's hang-up and this connection may reach the daemon in
 * one wake-up; if it sees the new one first it refuses it ("one is already
 * connected").  That is a definite "not yet": try again, within a limit. */
static struct vmm *connect_retrying(Harness *h, const struct vmm_config *cfg)
{
        gint64 deadline = g_get_monotonic_time() + STEADY_TIMEOUT_MS * 1000ll;

        for (;;) {
                struct vmm *v = NULL;
                int r = vmm_connect(h->socket, cfg, &v);
                if (r == 0 && (r = vmm_init(v, NULL)) == 0)
                        return v;
                vmm_drop(v);
                if (g_get_monotonic_time() > deadline)
                        g_error("no frontend could connect for %d ms: %s", STEADY_TIMEOUT_MS,
                                g_strerror(-r));
                g_usleep(20000);
        }
}

static int lookup_open(struct vmm *v, const char *name, uint32_t flags, uint64_t *ret_node,
                       uint64_t *ret_fh)
{
        struct fuse_entry_out e;
        int r = vmm_lookup(v, VMM_ROOT, name, &e);

        if (r < 0)
                return r;
        *ret_node = e.nodeid;
        return vmm_open(v, e.nodeid, flags, ret_fh);
}

/* The child: fills every queue, reports on fd `ready`, waits to be killed.
 * Plain exits with a code on failure: the parent asserts on it. */
_Noreturn static void doomed_frontend(Harness *h, int ready)
{
        struct vmm_config cfg = { .request_queues = QUEUES };
        struct vmm *v = NULL;
        static struct vmm_op ops[QUEUES][6];
        static struct fuse_lk_in lk[QUEUES];
        static struct fuse_read_in rd[QUEUES];
        static struct fuse_write_in wr[QUEUES];
        static struct fuse_fsync_in fs[QUEUES];
        static struct fuse_getattr_in gi[QUEUES];
        static struct fuse_attr_out ga[QUEUES];
        static struct fuse_write_out wo[QUEUES];
        static struct fuse_init_out init;
        char *payload, *sink;
        uint64_t lnode, lfh, bnode, bfh, snode, sfh;
        size_t io;

        if (vmm_connect(h->socket, &cfg, &v) < 0 || vmm_init(v, &init) < 0)
                _exit(10);
        if (lookup_open(v, "locked", O_RDWR, &lnode, &lfh) < 0 ||
            lookup_open(v, "big", O_RDONLY, &bnode, &bfh) < 0 ||
            lookup_open(v, "scratch", O_RDWR, &snode, &sfh) < 0)
                _exit(11);
        io = MIN((size_t)IO_SIZE, (size_t)init.max_write);
        payload = malloc(io);
        sink = malloc(io * QUEUES);
        if (payload == NULL || sink == NULL)
                _exit(12);
        memset(payload, 'w', io);

        for (unsigned q = 0; q < QUEUES; q++) {
                lk[q] = (struct fuse_lk_in){ .fh = lfh, .owner = 100 + q,
                        .lk = { .start = 0, .end = INT64_MAX, .type = F_WRLCK, .pid = 100 + q } };
                ops[q][0] = (struct vmm_op){ .queue = 1 + q, .opcode = FUSE_SETLKW, .nodeid = lnode,
                                             .arg_cnt = 1, .arg = { { &lk[q], sizeof(lk[q]) } } };
                ops[q][1] = (struct vmm_op){ .queue = 1 + q, .opcode = FUSE_GETATTR, .nodeid = VMM_ROOT,
                                             .arg_cnt = 1, .arg = { { &gi[q], sizeof(gi[q]) } },
                                             .out = &ga[q], .out_size = sizeof(ga[q]) };
                if (vmm_op_submit(v, &ops[q][0]) < 0 || vmm_op_submit(v, &ops[q][1]) < 0)
                        _exit(13);
        }
        /* Answered behind it on the same queue: each SETLKW is waiting in the daemon. */
        for (unsigned q = 0; q < QUEUES; q++)
                if (vmm_op_wait(v, &ops[q][1], -1) < 0 || ops[q][1].error != 0)
                        _exit(14);

        for (unsigned q = 0; q < QUEUES; q++) {
                rd[q] = (struct fuse_read_in){ .fh = bfh, .offset = (uint64_t)q * io, .size = (uint32_t)io };
                wr[q] = (struct fuse_write_in){ .fh = sfh, .offset = (uint64_t)q * io, .size = (uint32_t)io };
                fs[q] = (struct fuse_fsync_in){ .fh = sfh };
                ops[q][2] = (struct vmm_op){ .queue = 1 + q, .opcode = FUSE_READ, .nodeid = bnode,
                                             .arg_cnt = 1, .arg = { { &rd[q], sizeof(rd[q]) } },
                                             .out = sink + q * io, .out_size = io };
                ops[q][3] = (struct vmm_op){ .queue = 1 + q, .opcode = FUSE_WRITE, .nodeid = snode,
                                             .arg_cnt = 2, .arg = { { &wr[q], sizeof(wr[q]) }, { payload, io } },
                                             .out = &wo[q], .out_size = sizeof(wo[q]) };
                ops[q][4] = (struct vmm_op){ .queue = 1 + q, .opcode = FUSE_FSYNC, .nodeid = snode,
                                             .arg_cnt = 1, .arg = { { &fs[q], sizeof(fs[q]) } } };
                /* and one more SETLKW per queue, behind the I/O */
                ops[q][5] = ops[q][0];
                for (unsigned i = 2; i < 6; i++)
                        if (vmm_op_submit(v, &ops[q][i]) < 0)
                                _exit(15);
        }
        if (write(ready, "r", 1) != 1)
                _exit(16);
        for (;;)
                pause();
}

static void kill_one_frontend(Harness *h)
{
        int pipefd[2];
        char c;
        int status;

        g_assert_cmpint(pipe2(pipefd, O_CLOEXEC), ==, 0);
        pid_t child = fork();
        g_assert_cmpint(child, >=, 0);
        if (child == 0) {
                close(pipefd[0]);
                doomed_frontend(h, pipefd[1]);
        }
        close(pipefd[1]);
        ssize_t n = read(pipefd[0], &c, 1);
        close(pipefd[0]);
        g_assert_cmpint(kill(child, SIGKILL), ==, 0);
        g_assert_cmpint(waitpid(child, &status, 0), ==, child);
        if (n != 1)
                g_error("the frontend child failed before its requests were queued (exit %d)",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* A fresh frontend: INIT (connect_retrying), GETATTR, READ of the known file.
 * Returns it connected, so that the caller measures a comparable state. */
static struct vmm *fresh_frontend_works(Harness *h)
{
        struct vmm_config cfg = { .request_queues = QUEUES };
        struct vmm *v = connect_retrying(h, &cfg);
        struct fuse_attr a;
        uint64_t node = 0, fh = 0;
        char buf[64];
        size_t got = 0;

        assert_ok(vmm_getattr(v, VMM_ROOT, &a));
        g_assert_true(S_ISDIR(a.mode));
        assert_ok(lookup_open(v, "known", O_RDONLY, &node, &fh));
        assert_ok(vmm_read(v, node, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, known, strlen(known));
        assert_ok(vmm_release(v, node, fh));
        return v;
}

/* Holds an OFD write lock on the share's "locked" from the test itself: an
 * owner the guest cannot make give way. */
static int hold_host_lock(Harness *h)
{
        g_autofree char *path = harness_path(h, "locked");
        int fd = open(path, O_RDWR | O_CLOEXEC);
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(fcntl(fd, F_OFD_SETLK, &fl), ==, 0);
        return fd;
}

static int bind_socket(const char *path)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        g_assert_cmpint(fd, >=, 0);
        g_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
        g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
        return fd;
}

static void make_files(Harness *h)
{
        g_autofree char *big = g_malloc(BIG + 1);

        memset(big, 'b', BIG);
        big[BIG] = '\0';
        harness_write(h, "big", big);
        harness_write(h, "known", known);
        harness_write(h, "locked", "");
        harness_write(h, "scratch", "");
}

static void test_socket_cycles(void)
{
        if (!harness_require_sluice("sluice-fs's reset after a frontend dies"))
                return;
        g_autoptr(Harness) h = harness_new();
        make_files(h);
        const char *const extra[] = { "--queues=4", NULL };
        harness_start(h, extra);
        int lock_fd = hold_host_lock(h);
        unsigned base_fds = 0;
        unsigned long base_rss = 0, max_rss = 0, base_anon = 0, max_anon = 0;

        for (unsigned cycle = 1; cycle <= CYCLES; cycle++) {
                kill_one_frontend(h);
                harness_assert_alive(h);
                struct vmm *v = fresh_frontend_works(h);
                unsigned fds = fd_count(h->pid);
                unsigned long rss = status_kib(h->pid, "VmRSS");
                unsigned long anon = status_kib(h->pid, "RssAnon");
                vmm_free(v);
                if (cycle == 1 || cycle == WARMUP || cycle % 10 == 0)
                        g_test_message("cycle %2u: %u fds, VmRSS %lu KiB, RssAnon %lu KiB",
                                       cycle, fds, rss, anon);
                if (cycle == WARMUP) {
                        base_fds = fds;
                        base_rss = max_rss = rss;
                        base_anon = max_anon = anon;
                } else if (cycle > WARMUP) {
                        if (fds != base_fds) {
                                g_test_message("FAIL: cycle %u: %u fds with a fresh frontend, %u after warm-up",
                                               cycle, fds, base_fds);
                                g_test_fail();
                        }
                        max_rss = MAX(max_rss, rss);
                        max_anon = MAX(max_anon, anon);
                }
        }
        g_test_message("after %u kills: VmRSS %lu -> max %lu KiB, RssAnon %lu -> max %lu KiB (slack %u KiB)",
                       CYCLES, base_rss, max_rss, base_anon, max_anon, RSS_SLACK_KIB);
        if (under_asan(h->pid)) {
                g_test_message("AddressSanitizer's quarantine holds freed memory: RSS not checked");
        } else {
                g_assert_cmpuint(max_rss, <=, base_rss + RSS_SLACK_KIB);
                g_assert_cmpuint(max_anon, <=, base_anon + RSS_SLACK_KIB);
        }

        harness_assert_alive(h);
        close(lock_fd);
        /* Nothing the dead frontends wrote went anywhere but the share. */
        harness_assert_outside_untouched(h);
        /* An orderly exit: under ASan, LeakSanitizer reports what 50 kills leaked. */
        kill(h->pid, SIGTERM);
        harness_assert_clean_exit(h, STEADY_TIMEOUT_MS, "SIGTERM after the kill cycles");
}

static void test_fd_kill(void)
{
        if (!harness_require_sluice("sluice-fs's --fd behaviour"))
                return;
        g_autoptr(Harness) h = harness_new();
        make_files(h);
        int lfd = bind_socket(h->socket);
        harness_chown_to_user(h->socket);
        g_assert_cmpint(listen(lfd, 1), ==, 0);
        g_autofree char *opt = g_strdup_printf("--fd=%d", lfd);
        const char *const extra[] = { opt, "--queues=4", NULL };
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, FALSE, extra);
        h->pid = harness_spawn(argv, lfd);
        close(lfd);
        int lock_fd = hold_host_lock(h);

        kill_one_frontend(h);
        /* Blocked SETLKWs and all: the one frontend of a --fd worker is gone. */
        harness_assert_clean_exit(h, STEADY_TIMEOUT_MS, "its frontend was SIGKILLed (--fd)");
        close(lock_fd);
}

static gboolean socket_exists(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* A worker with a control channel (as sluice-service runs it, --control-fd);
 * returns our end, whose closing is the supervisor's death. */
static int start_supervised(Harness *h)
{
        int sv[2];

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        g_autofree char *opt = g_strdup_printf("--control-fd=%d", sv[1]);
        const char *const extra[] = { opt, "--queues=4", NULL };
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, extra);
        h->pid = harness_spawn(argv, sv[1]);
        close(sv[1]);
        gint64 deadline = g_get_monotonic_time() + STEADY_TIMEOUT_MS * 1000ll;
        while (!socket_exists(h->socket)) {
                harness_assert_alive(h);
                g_assert_cmpint(g_get_monotonic_time(), <, deadline);
                g_usleep(10000);
        }
        return sv[0];
}

static void test_supervisor_gone(void)
{
        if (!harness_require_sluice("--control-fd is sluice-fs's"))
                return;
        /* Idle: the worker goes with its supervisor.  A frontend first, so that
         * the control channel is surely set up (the worker answers frontends
         * only from its event loop, which starts after it); whether the
         * channel's end or that frontend's is seen first, the exit is 0. */
        g_autoptr(Harness) idle = harness_new();
        int control = start_supervised(idle);
        vmm_free(connect_retrying(idle, NULL));
        close(control);
        harness_assert_clean_exit(idle, STEADY_TIMEOUT_MS, "the supervisor left an idle worker");
        g_assert_false(socket_exists(idle->socket));

        /* Serving: it keeps its frontend and gives up the socket. */
        g_autoptr(Harness) h = harness_new();
        make_files(h);
        control = start_supervised(h);
        struct vmm_config cfg = { .request_queues = QUEUES };
        struct vmm *v = connect_retrying(h, &cfg);
        close(control);
        gint64 deadline = g_get_monotonic_time() + STEADY_TIMEOUT_MS * 1000ll;
        while (socket_exists(h->socket) && g_get_monotonic_time() < deadline)
                g_usleep(10000);
        g_assert_false(socket_exists(h->socket));
        harness_assert_alive(h);
        uint64_t node = 0, fh = 0;
        char buf[64];
        size_t got = 0;
        assert_ok(lookup_open(v, "known", O_RDONLY, &node, &fh));
        assert_ok(vmm_read(v, node, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, known, strlen(known));

        /* A new supervisor's worker binds the path: the old one must leave it alone. */
        int lfd = bind_socket(h->socket);
        vmm_free(v);
        harness_assert_clean_exit(h, STEADY_TIMEOUT_MS, "the orphaned worker's frontend left");
        g_assert_true(socket_exists(h->socket));
        close(lfd);
        harness_assert_outside_untouched(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/kill-cycles/socket", test_socket_cycles);
        g_test_add_func("/kill-cycles/fd", test_fd_kill);
        g_test_add_func("/kill-cycles/supervisor-gone", test_supervisor_gone);
        return g_test_run();
}
