/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-hostile-frontend.c — a frontend (not the guest) that hands the worker
 * odd fds and memory, or stops a ring with a request still waiting.
 *
 * What a user would notice otherwise: a worker hung for good (a pipe as call
 * fd), a core spinning at 100 % (/dev/zero as kick fd), a worker killed by
 * SIGBUS (a memory file smaller than declared, or shrunk later), a reply
 * written into a ring after the frontend stopped it (guest memory corrupted
 * during migration or reset).  Each case must leave the worker alive: it
 * answers SIGTERM at once and serves the next frontend. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1024u * 1024u)
#define EXTRA_GPA 0x200000000ull   /* 8 GiB: clear of the vmm's two regions */

/* utime + stime of pid in clock ticks (fields 14 and 15 of /proc/PID/stat). */
static long long cpu_ticks(GPid pid)
{
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
        g_autofree char *text = NULL;
        long long utime = 0, stime = 0;

        if (!g_file_get_contents(path, &text, NULL, NULL))
                return -1;
        /* The command name may hold spaces: fields are counted after its ')'. */
        const char *p = strrchr(text, ')');
        g_assert_nonnull(p);
        g_assert_cmpint(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld",
                               &utime, &stime), ==, 2);
        return utime + stime;
}

/* The worker survived: it serves a new frontend, then exits 0 on SIGTERM
 * within 5 s (a hung queue thread would keep it from exiting). */
static void assert_worker_fine(Harness *h)
{
        vmm_free(h->vmm);
        h->vmm = harness_connect(h, NULL);
        struct fuse_attr a;
        assert_ok(vmm_getattr(h->vmm, VMM_ROOT, &a));
        kill(h->pid, SIGTERM);
        harness_assert_clean_exit(h, 5000, "SIGTERM");
}

/* A pipe as call fd: refused (the device is broken and the frontend dropped,
 * or the message nacked).  Were it accepted, 8192 replies fill the pipe and
 * the next notification blocks a queue thread for good; the loop below
 * makes that happen, so that SIGTERM then finds the worker hung. */
static void test_pipe_call_fd(void)
{
        if (!harness_require_sluice("sluice-fs's fd checks"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);
        int p[2];
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        int r = vmm_set_vring_fd(h->vmm, VMM_VRING_CALL, 1, p[1]);
        if (r == 0) {
                g_test_message("FAIL: a pipe was accepted as call fd");
                g_test_fail();
        }
        for (int i = 0; i < 9000 && !vmm_backend_hung_up(h->vmm); i++) {
                struct fuse_attr a;
                if (vmm_getattr(h->vmm, VMM_ROOT, &a) < 0)
                        break;
        }
        close(p[0]);
        close(p[1]);
        assert_worker_fine(h);
}

/* A kick fd that is always readable (/dev/zero), a regular file or a pipe
 * with data in it: refused, and no core spins.  The bound is on the worker's
 * CPU time over a 2 s window (a spinning thread burns most of it even on a
 * loaded machine; a refusing worker next to nothing), not on wall time. */
static void bad_kick(Harness *h, int fd, const char *what)
{
        long long before = cpu_ticks(h->pid);
        int r = vmm_set_vring_fd(h->vmm, VMM_VRING_KICK, 1, fd);
        if (r == 0) {
                g_test_message("FAIL: %s was accepted as kick fd", what);
                g_test_fail();
        }
        g_usleep(2 * G_USEC_PER_SEC);   /* the measuring window */
        long long used = cpu_ticks(h->pid) - before;
        long hz = sysconf(_SC_CLK_TCK);
        g_test_message("%s as kick fd: %lld ticks of CPU in 2 s", what, used);
        if (used > hz * 3 / 10) {
                g_test_message("FAIL: %s as kick fd: the worker used %.2f s of CPU in 2 s", what,
                               (double)used / (double)hz);
                g_test_fail();
        }
        harness_assert_alive(h);
        vmm_free(h->vmm);
        h->vmm = harness_connect(h, NULL);
}

static void test_bad_kick_fd(void)
{
        if (!harness_require_sluice("sluice-fs's fd checks"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);

        int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(zero, >=, 0);
        bad_kick(h, zero, "/dev/zero");
        close(zero);

        g_autofree char *path = g_build_filename(h->dir, "kick-file", NULL);
        g_assert_true(g_file_set_contents(path, "12345678", 8, NULL));
        int file = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(file, >=, 0);
        bad_kick(h, file, "a regular file");
        close(file);

        int p[2];
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        g_assert_cmpint(write(p[1], "12345678", 8), ==, 8);
        bad_kick(h, p[0], "a pipe");
        close(p[0]);
        close(p[1]);

        /* An eventfd, but a semaphore with a count that lasts for ages. */
        int sem = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
        g_assert_cmpint(sem, >=, 0);
        g_assert_cmpint(eventfd_write(sem, 1ull << 62), ==, 0);
        bad_kick(h, sem, "a semaphore eventfd");
        close(sem);

        /* An anonymous inode, but not an eventfd: a timer firing all the time. */
        int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        struct itimerspec its = { .it_interval = { 0, 1000 }, .it_value = { 0, 1000 } };
        g_assert_cmpint(tfd, >=, 0);
        g_assert_cmpint(timerfd_settime(tfd, 0, &its, NULL), ==, 0);
        bad_kick(h, tfd, "a timerfd");
        close(tfd);

        /* An err fd is checked the same way. */
        int zero2 = open("/dev/zero", O_RDWR | O_CLOEXEC);
        if (vmm_set_vring_fd(h->vmm, VMM_VRING_ERR, 1, zero2) == 0) {
                g_test_message("FAIL: /dev/zero was accepted as err fd");
                g_test_fail();
        }
        close(zero2);
        assert_worker_fine(h);
}

/* A region whose fd holds less than mmap_offset + memory_size: refused (a
 * nack; the rest of the device carries on), never mapped and faulted on. */
static void test_small_region_fd(void)
{
        if (!harness_require_sluice("sluice-fs's region checks"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);
        struct vmm_extra_region x = { .gpa = EXTRA_GPA, .size = 4 * MIB, .file_size = MIB };
        if (vmm_add_extra_region_ex(h->vmm, &x) == 0) {
                g_test_message("FAIL: ADD_MEM_REG of 4 MiB from a 1 MiB file was accepted");
                g_test_fail();
        }
        harness_assert_alive(h);
        if (!vmm_backend_hung_up(h->vmm)) {
                struct fuse_attr a;
                assert_ok(vmm_getattr(h->vmm, VMM_ROOT, &a));   /* ADD_MEM_REG only failed */
        }
        vmm_free(h->vmm);
        h->vmm = harness_connect(h, NULL);
        x.set_mem_table = true;
        if (vmm_add_extra_region_ex(h->vmm, &x) == 0) {
                g_test_message("FAIL: SET_MEM_TABLE with a 4 MiB region from a 1 MiB file was accepted");
                g_test_fail();
        }
        assert_worker_fine(h);
}

/* GETATTR of the root with its request header at gpa (the reply header in
 * the vmm's own region 1), laid out on queue 1 but not published yet. */
static void chain_getattr_at(struct vmm *v, uint64_t gpa, uint16_t ids[2], uint64_t *ret_out_gpa)
{
        void *host = vmm_gpa_to_host(v, gpa, 64);
        struct fuse_in_header ih = { .len = sizeof(ih) + sizeof(struct fuse_getattr_in),
                                     .opcode = FUSE_GETATTR, .unique = 4242,
                                     .nodeid = VMM_ROOT };
        struct fuse_getattr_in gi = { 0 };
        memcpy(host, &ih, sizeof(ih));
        memcpy((char *)host + sizeof(ih), &gi, sizeof(gi));
        size_t out_len = sizeof(struct fuse_out_header) + sizeof(struct fuse_attr_out);
        g_assert_nonnull(vmm_alloc(v, out_len, ret_out_gpa));
        g_assert_cmpint(vmm_desc_get(v, 1, 2, ids), ==, 0);
        struct vring_desc *t = vmm_desc_table(v, 1);
        t[ids[0]] = (struct vring_desc){ .addr = gpa, .len = ih.len, .flags = VRING_DESC_F_NEXT,
                                         .next = ids[1] };
        t[ids[1]] = (struct vring_desc){ .addr = *ret_out_gpa, .len = (uint32_t)out_len,
                                         .flags = VRING_DESC_F_WRITE };
}

/* A memfd the frontend left sealable: the worker seals it against shrinking,
 * so the frontend's own ftruncate() fails, and the region keeps working. */
static void test_shrink_sealed(gconstpointer set_mem_table)
{
        if (!harness_require_sluice("sluice-fs's region seals"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);
        struct vmm_extra_region x = { .gpa = EXTRA_GPA, .size = 4 * MIB, .sealable = true,
                                      .set_mem_table = set_mem_table != NULL };
        assert_ok(vmm_add_extra_region_ex(h->vmm, &x));
        int fd = vmm_extra_region_fd(h->vmm);
        int seals = fcntl(fd, F_GET_SEALS);
        g_assert_true(seals >= 0 && (seals & F_SEAL_SHRINK));
        g_assert_cmpint(ftruncate(fd, MIB), ==, -1);
        g_assert_cmpint(errno, ==, EPERM);
        g_assert_cmpint(ftruncate(fd, 8 * MIB), ==, 0);   /* growing stays allowed */

        uint64_t out_gpa;
        uint16_t ids[2];
        chain_getattr_at(h->vmm, EXTRA_GPA + 2 * MIB, ids, &out_gpa);
        g_assert_cmpint(vmm_publish(h->vmm, 1, ids[0], 2, ids), ==, 0);
        uint32_t len = 0;
        assert_ok(vmm_wait_used(h->vmm, 1, ids[0], &len, -1));
        struct fuse_out_header *oh = vmm_gpa_to_host(h->vmm, out_gpa, sizeof(*oh));
        g_assert_cmpint(oh->error, ==, 0);
        g_assert_cmpuint(oh->unique, ==, 4242);
        assert_worker_fine(h);
}

/* A memfd that cannot be sealed (no MFD_ALLOW_SEALING, like a tmpfs or
 * hugetlbfs file) is accepted; when the frontend shrinks it and a request
 * lies in the part cut off, the worker does not die of SIGBUS: the request
 * fails or goes unanswered, the device is broken (the frontend dropped at
 * its next message), and the next frontend is served. */
static void test_shrink_unsealed(gconstpointer set_mem_table)
{
        if (!harness_require_sluice("sluice-fs's SIGBUS guard"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);
        struct vmm_extra_region x = { .gpa = EXTRA_GPA, .size = 4 * MIB,
                                      .set_mem_table = set_mem_table != NULL };
        assert_ok(vmm_add_extra_region_ex(h->vmm, &x));
        int fd = vmm_extra_region_fd(h->vmm);
        /* Laid out before the shrink, so the vmm itself never touches a lost page. */
        uint64_t out_gpa;
        uint16_t ids[2];
        chain_getattr_at(h->vmm, EXTRA_GPA + 2 * MIB, ids, &out_gpa);
        g_assert_cmpint(ftruncate(fd, MIB), ==, 0);
        g_assert_cmpint(vmm_publish(h->vmm, 1, ids[0], 2, ids), ==, 0);
        /* Any outcome of the request itself is fine; what follows is not. */
        (void)vmm_wait_used(h->vmm, 1, ids[0], NULL, 3000);
        /* The worker learns of the loss at its next message and drops us. */
        uint32_t base;
        (void)vmm_get_vring_base(h->vmm, 1, &base);
        g_assert_true(vmm_wait_hung_up(h->vmm, 10000));
        assert_worker_fine(h);
}

static int host_lock(Harness *h, short type);

/* Starts the worker with a SETLKW waiting for a lock the host holds (the
 * returned fd).  Once the request that follows it on the same queue is
 * answered, the SETLKW has certainly been popped. */
static int start_with_waiting_setlkw(Harness *h, uint64_t *ret_node, struct vmm_op *w,
                                     struct fuse_lk_in *lk)
{
        harness_write(h, "file", "x");
        harness_up(h, NULL);
        int holder = host_lock(h, F_WRLCK);
        g_assert_cmpint(holder, >=, 0);
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e));
        assert_ok(vmm_open(h->vmm, e.nodeid, O_RDWR, &fh));
        *lk = (struct fuse_lk_in){ .fh = fh, .owner = 2,
                                   .lk = { .start = 0, .end = INT64_MAX, .type = F_WRLCK, .pid = 1 } };
        *w = (struct vmm_op){ .opcode = FUSE_SETLKW, .nodeid = e.nodeid, .arg_cnt = 1,
                              .arg = { { lk, sizeof(*lk) } } };
        assert_ok(vmm_op_submit(h->vmm, w));
        struct fuse_attr a;
        assert_ok(vmm_getattr(h->vmm, e.nodeid, &a));
        assert_errno(vmm_op_wait(h->vmm, w, 0), -ETIMEDOUT);   /* it waits for the host's lock */
        *ret_node = e.nodeid;
        return holder;
}

static int host_lock(Harness *h, short type)
{
        g_autofree char *path = harness_path(h, "file");
        int fd = open(path, O_RDWR | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        struct flock fl = { .l_type = type, .l_whence = SEEK_SET };
        if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
                int err = -errno;
                close(fd);
                return err;
        }
        return fd;
}

/* GET_VRING_BASE with a SETLKW waiting: the backend finishes it (EINTR)
 * before it replies, and writes nothing to that ring or its buffers after
 * the reply — not even when the lock it waited for comes free. */
static void test_ring_stop_deferred(void)
{
        if (!harness_require_sluice("blocking locks"))
                return;
        g_autoptr(Harness) h = harness_new();
        uint64_t node;
        struct vmm_op w;
        struct fuse_lk_in lk;
        int holder = start_with_waiting_setlkw(h, &node, &w, &lk);

        uint32_t base = 0;
        assert_ok(vmm_get_vring_base(h->vmm, 1, &base));
        g_assert_cmpuint(base, ==, vmm_avail_idx(h->vmm, 1));
        /* Finished before the reply: it is in the used ring already. */
        assert_ok(vmm_op_wait(h->vmm, &w, 0));
        assert_errno(w.error, -EINTR);

        size_t used_size;
        struct vring_used *used = vmm_used_ring(h->vmm, 1, &used_size);
        g_autofree void *used_before = g_memdup2(used, used_size);
        void *out_hdr = vmm_gpa_to_host(h->vmm, w.out_hdr_gpa, sizeof(struct fuse_out_header));
        g_autofree void *out_before = g_memdup2(out_hdr, sizeof(struct fuse_out_header));

        close(holder);   /* the lock comes free: a waiter left behind would take it now */
        /* Nobody is left waiting: the host gets the lock straight away. */
        int again = host_lock(h, F_WRLCK);
        g_assert_cmpint(again, >=, 0);
        close(again);
        /* A negative check: a leftover waiter retries at least every 20 ms;
         * 10x that can only make this pass wrongly, never fail wrongly. */
        g_usleep(200000);
        g_assert_cmpmem(used, used_size, used_before, used_size);
        g_assert_cmpmem(out_hdr, sizeof(struct fuse_out_header), out_before,
                        sizeof(struct fuse_out_header));
        harness_assert_alive(h);
        assert_worker_fine(h);
}

/* SET_MEM_TABLE with a SETLKW waiting: finished before the new table is
 * acknowledged (while the memory it points into is still mapped). */
static void test_mem_table_deferred(void)
{
        if (!harness_require_sluice("blocking locks"))
                return;
        g_autoptr(Harness) h = harness_new();
        uint64_t node;
        struct vmm_op w;
        struct fuse_lk_in lk;
        int holder = start_with_waiting_setlkw(h, &node, &w, &lk);
        struct vmm_extra_region x = { .gpa = EXTRA_GPA, .size = MIB, .set_mem_table = true };
        assert_ok(vmm_add_extra_region_ex(h->vmm, &x));
        assert_ok(vmm_op_wait(h->vmm, &w, 0));
        assert_errno(w.error, -EINTR);
        close(holder);
        /* The rings run again on the new table. */
        struct fuse_attr a;
        assert_ok(vmm_getattr(h->vmm, node, &a));
        assert_worker_fine(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/hostile/pipe-call-fd", test_pipe_call_fd);
        g_test_add_func("/hostile/bad-kick-fd", test_bad_kick_fd);
        g_test_add_func("/hostile/small-region-fd", test_small_region_fd);
        g_test_add_data_func("/hostile/shrink-sealed/add-mem-reg", NULL, test_shrink_sealed);
        g_test_add_data_func("/hostile/shrink-sealed/set-mem-table", "", test_shrink_sealed);
        g_test_add_data_func("/hostile/shrink-unsealed/add-mem-reg", NULL, test_shrink_unsealed);
        g_test_add_data_func("/hostile/shrink-unsealed/set-mem-table", "", test_shrink_unsealed);
        g_test_add_func("/hostile/ring-stop-deferred", test_ring_stop_deferred);
        g_test_add_func("/hostile/mem-table-deferred", test_mem_table_deferred);
        return g_test_run();
}
