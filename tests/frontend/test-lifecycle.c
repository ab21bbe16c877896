/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-lifecycle.c — connections, memory and queues over a daemon's life:
 * reconnect with --socket-path (the next frontend starts from a clean FUSE
 * state), --fd (exit 0 when the frontend leaves), SIGTERM (exit 0 promptly),
 * --queues=2, memory given with ADD_MEM_REG and taken away with REM_MEM_REG. */
#include <linux/virtio_fs.h>

#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_reconnect(void)
{
        if (!harness_require_sluice("legacy virtiofsd serves one connection"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "data");
        harness_up(h, NULL);
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e));
        assert_ok(vmm_open(h->vmm, e.nodeid, O_RDWR, &fh));
        uint64_t old_node = e.nodeid;

        for (int round = 0; round < 3; round++) {
                /* Round 0: an orderly stop (GET_VRING_BASE); then abrupt drops. */
                if (round == 0)
                        vmm_free(h->vmm);
                else
                        vmm_drop(h->vmm);
                h->vmm = NULL;
                g_usleep(100000);
                harness_assert_alive(h);
                struct vmm *v = harness_connect(h, NULL);
                h->vmm = v;
                /* Handles and node ids of the previous guest are gone. */
                char buf[8];
                g_assert_cmpint(vmm_read(v, old_node, fh, 0, buf, sizeof(buf), NULL), <, 0);
                if (old_node != VMM_ROOT) {
                        struct fuse_attr a;
                        int r = vmm_getattr(v, old_node, &a);
                        if (r == 0 && a.ino == e.attr.ino) {
                                /* the same id may be handed out again only after a LOOKUP */
                                g_test_message("FAIL: node id %llu of the previous guest still resolves",
                                               (unsigned long long)old_node);
                                g_test_fail();
                        }
                }
                assert_ok(vmm_lookup(v, VMM_ROOT, "file", &e));
                assert_ok(vmm_open(v, e.nodeid, O_RDWR, &fh));
                size_t got = 0;
                assert_ok(vmm_read(v, e.nodeid, fh, 0, buf, sizeof(buf), &got));
                g_assert_cmpmem(buf, got, "data", 4);
                old_node = e.nodeid;
        }
        /* Drop the connection with a request still waiting (a blocked SETLKW). */
        uint64_t fh2;
        assert_ok(vmm_open(h->vmm, e.nodeid, O_RDWR, &fh2));
        struct fuse_file_lock wr = { .start = 0, .end = INT64_MAX, .type = F_WRLCK, .pid = 1 };
        assert_ok(vmm_setlk(h->vmm, e.nodeid, fh, 1, &wr, false, false));
        struct fuse_lk_in lk = { .fh = fh2, .owner = 2, .lk = wr };
        struct vmm_op w = { .opcode = FUSE_SETLKW, .nodeid = e.nodeid, .arg_cnt = 1,
                            .arg = { { &lk, sizeof(lk) } } };
        assert_ok(vmm_op_submit(h->vmm, &w));
        g_usleep(200000);
        vmm_drop(h->vmm);
        h->vmm = NULL;
        g_usleep(200000);
        harness_assert_alive(h);
        h->vmm = harness_connect(h, NULL);
        /* The old guest's locks went with it. */
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e));
        assert_ok(vmm_open(h->vmm, e.nodeid, O_RDWR, &fh));
        assert_ok(vmm_setlk(h->vmm, e.nodeid, fh, 7, &wr, false, false));

        /* SIGTERM with a frontend connected: exit 0, promptly. */
        kill(h->pid, SIGTERM);
        harness_assert_clean_exit(h, 5000, "SIGTERM");
}

static void test_sigterm_idle(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_start(h, NULL);
        if (harness_is_legacy()) {
                g_test_skip("legacy virtiofsd");
                return;
        }
        kill(h->pid, SIGTERM);
        harness_assert_clean_exit(h, 5000, "SIGTERM with no frontend");
}

static void test_fd(void)
{
        if (!harness_require_sluice("sluice-fs's --fd behaviour"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "data");
        int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_strlcpy(sa.sun_path, h->socket, sizeof(sa.sun_path));
        g_assert_cmpint(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
        harness_chown_to_user(h->socket);
        g_assert_cmpint(listen(lfd, 1), ==, 0);
        g_autofree char *opt = g_strdup_printf("--fd=%d", lfd);
        const char *const extra[] = { opt, NULL };
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, FALSE, extra);
        h->pid = harness_spawn(argv, lfd);
        close(lfd);
        h->vmm = harness_connect(h, NULL);
        struct fuse_entry_out e;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e));
        g_assert_cmpuint(e.attr.size, ==, 4);
        vmm_free(h->vmm);
        h->vmm = NULL;
        harness_assert_clean_exit(h, 5000, "the frontend disconnected (--fd)");
}

static void test_multiqueue(void)
{
        if (!harness_require_sluice("legacy virtiofsd has no --queues"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "multi");
        const char *const extra[] = { "--queues=2", NULL };
        harness_start(h, extra);
        struct vmm_config cfg = { .request_queues = 2 };
        h->vmm = harness_connect(h, &cfg);
        struct vmm *v = h->vmm;
        g_assert_cmpuint(vmm_backend_queue_num(v), >=, 3);
        g_assert_cmpuint(vmm_request_queues(v), ==, 2);
        for (unsigned q = 1; q <= 2; q++) {
                struct fuse_entry_out e = { 0 };
                char name[] = "file";
                struct vmm_op op = { .queue = q, .opcode = FUSE_LOOKUP, .nodeid = VMM_ROOT,
                                     .arg_cnt = 1, .arg = { { name, sizeof(name) } },
                                     .out = &e, .out_size = sizeof(e) };
                assert_ok(vmm_op_run(v, &op));
                assert_ok(op.error);
                g_assert_cmpuint(e.attr.size, ==, 5);
        }
        /* Requests in flight on both queues at once. */
        struct fuse_getattr_in gi = { 0 };
        struct fuse_attr_out out[16];
        struct vmm_op ops[16];
        for (unsigned i = 0; i < 16; i++) {
                ops[i] = (struct vmm_op){ .queue = 1 + i % 2, .opcode = FUSE_GETATTR, .nodeid = VMM_ROOT,
                                          .arg_cnt = 1, .arg = { { &gi, sizeof(gi) } },
                                          .out = &out[i], .out_size = sizeof(out[i]) };
                assert_ok(vmm_op_submit(v, &ops[i]));
        }
        for (unsigned i = 0; i < 16; i++) {
                assert_ok(vmm_op_wait(v, &ops[i], -1));
                assert_ok(ops[i].error);
                g_assert_true(S_ISDIR(out[i].attr.mode));
        }
        /* A write on queue 2 is visible to a read on queue 1. */
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_create(v, VMM_ROOT, "q", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        struct fuse_write_in wi = { .fh = fh, .size = 7 };
        struct fuse_write_out wo;
        struct vmm_op w = { .queue = 2, .opcode = FUSE_WRITE, .nodeid = e.nodeid, .arg_cnt = 2,
                            .arg = { { &wi, sizeof(wi) }, { "queue 2", 7 } }, .out = &wo, .out_size = sizeof(wo) };
        assert_ok(vmm_op_run(v, &w));
        assert_ok(w.error);
        g_autofree char *content = harness_read(h, "q");
        g_assert_cmpstr(content, ==, "queue 2");
}

/* A READ whose reply lands in the extra region. */
static int read_into_extra(struct vmm *v, uint64_t node, uint64_t fh, uint64_t gpa, uint32_t *used)
{
        struct { struct fuse_in_header ih; struct fuse_read_in r; } req = {
                { .len = sizeof(req), .opcode = FUSE_READ, .unique = 777, .nodeid = node },
                { .fh = fh, .size = 64 } };
        uint64_t in_gpa;
        void *p = vmm_alloc(v, sizeof(req), &in_gpa);
        memcpy(p, &req, sizeof(req));
        uint16_t ids[2];
        g_assert_cmpint(vmm_desc_get(v, 1, 2, ids), ==, 0);
        struct vring_desc *t = vmm_desc_table(v, 1);
        t[ids[0]] = (struct vring_desc){ .addr = in_gpa, .len = sizeof(req), .flags = VRING_DESC_F_NEXT,
                                         .next = ids[1] };
        t[ids[1]] = (struct vring_desc){ .addr = gpa, .len = 16 + 64, .flags = VRING_DESC_F_WRITE };
        g_assert_cmpint(vmm_publish(v, 1, ids[0], 2, ids), ==, 0);
        return vmm_wait_used(v, 1, ids[0], used, 2000);
}

static void test_mem_regions(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "regions");
        harness_start(h, NULL);
        struct vmm_config cfg = { .add_mem_reg = true, .no_event_idx = true, .queue_size = 256 };
        h->vmm = harness_connect(h, &cfg);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_lookup(v, VMM_ROOT, "file", &e));
        assert_ok(vmm_open(v, e.nodeid, O_RDONLY, &fh));
        char buf[16];
        size_t got = 0;
        assert_ok(vmm_read(v, e.nodeid, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "regions", 7);

        const uint64_t extra = 0x200000000ull;
        assert_ok(vmm_add_extra_region(v, extra, 1 << 20));
        uint32_t used = 0;
        assert_ok(read_into_extra(v, e.nodeid, fh, extra + 4096, &used));
        g_assert_cmpuint(used, ==, 16 + 7);
        const struct fuse_out_header *oh = vmm_gpa_to_host(v, extra + 4096, 16 + 7);
        g_assert_nonnull(oh);
        g_assert_cmpint(oh->error, ==, 0);
        g_assert_cmpmem((const char *)(oh + 1), 7, "regions", 7);

        assert_ok(vmm_remove_extra_region(v));
        /* The removed region is no guest memory any more: no reply may land there. */
        int r = read_into_extra(v, e.nodeid, fh, extra + 4096, &used);
        g_assert_true(r == -ETIMEDOUT || r == -ECONNRESET || (r == 0 && used == 0));
        harness_assert_alive(h);
        if (r == 0)
                assert_ok(vmm_read(v, e.nodeid, fh, 0, buf, sizeof(buf), &got));
}

/* The config space (tag, request queue count) is offered only with --tag:
 * QEMU 7.2's vhost-user-fs-pci warns about a backend that offers it. */
static void test_config_space(void)
{
        if (!harness_require_sluice("--tag and the config space are sluice-fs behaviour"))
                return;
        g_autoptr(Harness) h = harness_new();
        const char *const extra[] = { "--tag=docs", "--queues=2", NULL };
        harness_start(h, extra);
        struct vmm_config cfg = { .request_queues = 2 };
        h->vmm = harness_connect(h, &cfg);
        struct virtio_fs_config fc;
        assert_ok(vmm_get_config(h->vmm, &fc));
        g_assert_cmpmem(fc.tag, strnlen((const char *)fc.tag, sizeof(fc.tag)), "docs", 4);
        g_assert_cmpuint(fc.num_request_queues, ==, 2);

        g_autoptr(Harness) plain = harness_new();
        harness_start(plain, NULL);
        plain->vmm = harness_connect(plain, NULL);
        g_assert_cmpint(vmm_get_config(plain->vmm, &fc), ==, -EOPNOTSUPP);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/lifecycle/reconnect", test_reconnect);
        g_test_add_func("/lifecycle/sigterm-idle", test_sigterm_idle);
        g_test_add_func("/lifecycle/fd", test_fd);
        g_test_add_func("/lifecycle/multiqueue", test_multiqueue);
        g_test_add_func("/lifecycle/mem-regions", test_mem_regions);
        g_test_add_func("/lifecycle/config-space", test_config_space);
        return g_test_run();
}
