/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-virtqueue.c — a split virtqueue driven by hand over rings in memfd
 * "guest memory": chains, indirect tables, EVENT_IDX and notification
 * suppression, and every malformed chain (the queue must break, never crash). */
#include <errno.h>
#include <glib.h>
#include <linux/virtio_config.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "resume-state.h"
#include "virtqueue.h"

#define MIB      (1024u * 1024u)
#define NUM      16
#define DESC_GPA  0x1000
#define AVAIL_GPA 0x2000
#define USED_GPA  0x3000
#define TABLE_GPA 0x8000    /* indirect tables */
#define BUF_GPA   0x10000   /* data buffers */

struct fixture {
        struct gm mem;
        uint8_t *view[2];     /* the "VMM's" view of the two 1 MiB regions (gpa 0 and 1 MiB) */
        struct vq *vq;
        struct vq_elem *e;
        struct vring_desc *desc;
        struct vring_avail *avail;
        struct vring_used *used;
        uint16_t avail_idx;
        int call_fd, err_fd;
};

static void *gpa(struct fixture *f, uint64_t addr)
{
        return f->view[addr / MIB] + addr % MIB;
}

static void fixture_setup(struct fixture *f, uint64_t features)
{
        memset(f, 0, sizeof(*f));
        gm_init(&f->mem);
        for (unsigned i = 0; i < 2; i++) {
                struct vu_memory_region r = { .guest_phys_addr = (uint64_t)i * MIB,
                                              .memory_size = MIB,
                                              .user_addr = 0x40000000ull + (uint64_t)i * MIB };
                int fd = memfd_create("guest", MFD_CLOEXEC);

                g_assert_cmpint(ftruncate(fd, MIB), ==, 0);
                f->view[i] = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                g_assert_true(f->view[i] != MAP_FAILED);
                g_assert_cmpint(gm_add_region(&f->mem, &r, fd), ==, 0);
                close(fd);
        }
        f->desc = gpa(f, DESC_GPA);
        f->avail = gpa(f, AVAIL_GPA);
        f->used = gpa(f, USED_GPA);
        f->vq = g_new0(struct vq, 1);
        f->e = g_new0(struct vq_elem, 1);
        vq_init(f->vq, &f->mem, 1);
        vq_set_features(f->vq, features);
        f->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        f->err_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        f->vq->call_fd = f->call_fd;
        f->vq->err_fd = f->err_fd;
        /* The device side sees the rings through its own mapping. */
        g_assert_cmpint(vq_set_rings(f->vq, NUM, gm_gpa_to_host(&f->mem, DESC_GPA, 256),
                                     gm_gpa_to_host(&f->mem, AVAIL_GPA, 64),
                                     gm_gpa_to_host(&f->mem, USED_GPA, 256)), ==, 0);
}

static void fixture_teardown(struct fixture *f)
{
        vq_destroy(f->vq);
        g_free(f->vq);
        g_free(f->e);
        gm_clear(&f->mem);
        munmap(f->view[0], MIB);
        munmap(f->view[1], MIB);
        close(f->call_fd);
        close(f->err_fd);
}

static void set_desc(struct vring_desc *table, unsigned i, uint64_t addr, uint32_t len,
                     uint16_t flags, uint16_t next)
{
        table[i] = (struct vring_desc){ .addr = addr, .len = len, .flags = flags, .next = next };
}

static void publish(struct fixture *f, uint16_t head)
{
        f->avail->ring[f->avail_idx % NUM] = head;
        __atomic_store_n(&f->avail->idx, ++f->avail_idx, __ATOMIC_RELEASE);
}

static uint64_t drain_eventfd(int fd)
{
        eventfd_t v = 0;

        return eventfd_read(fd, &v) == 0 ? v : 0;
}

static void test_simple_chain(void)
{
        struct fixture f;

        fixture_setup(&f, 0);
        g_assert_true(vq_avail_empty(f.vq));
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 0);

        memcpy(gpa(&f, BUF_GPA), "request", 7);
        set_desc(f.desc, 3, BUF_GPA, 40, VRING_DESC_F_NEXT, 5);
        set_desc(f.desc, 5, BUF_GPA + 64, 24, VRING_DESC_F_NEXT, 7);
        set_desc(f.desc, 7, BUF_GPA + 4096, 200, VRING_DESC_F_WRITE, 0);
        publish(&f, 3);
        g_assert_false(vq_avail_empty(f.vq));

        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        g_assert_cmpuint(f.e->head, ==, 3);
        g_assert_cmpuint(f.e->n_readable, ==, 2);
        g_assert_cmpuint(f.e->n_writable, ==, 1);
        g_assert_cmpuint(f.e->readable_len, ==, 64);
        g_assert_cmpuint(f.e->writable_len, ==, 200);
        /* Zero copy: the iovecs point into guest memory itself. */
        g_assert_cmpmem(f.e->iov[0].iov_base, 7, "request", 7);
        memcpy(f.e->iov[2].iov_base, "reply", 5);
        g_assert_cmpmem(gpa(&f, BUF_GPA + 4096), 5, "reply", 5);

        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 0);
        vq_push(f.vq, 3, 5);
        g_assert_cmpuint(f.used->idx, ==, 1);
        g_assert_cmpuint(f.used->ring[0].id, ==, 3);
        g_assert_cmpuint(f.used->ring[0].len, ==, 5);

        /* No EVENT_IDX: the guest's NO_INTERRUPT flag decides. */
        vq_notify(f.vq);
        g_assert_cmpuint(drain_eventfd(f.call_fd), ==, 1);
        f.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
        vq_push(f.vq, 3, 5);
        vq_notify(f.vq);
        g_assert_cmpuint(drain_eventfd(f.call_fd), ==, 0);

        /* Kick suppression through used->flags. */
        vq_set_notification(f.vq, false);
        g_assert_cmpuint(f.used->flags & VRING_USED_F_NO_NOTIFY, ==, VRING_USED_F_NO_NOTIFY);
        vq_set_notification(f.vq, true);
        g_assert_cmpuint(f.used->flags & VRING_USED_F_NO_NOTIFY, ==, 0);
        g_assert_false(vq_is_broken(f.vq));
        fixture_teardown(&f);
}

/* The avail ring wraps around the 16-bit index and the ring size. */
static void test_wraparound(void)
{
        struct fixture f;

        fixture_setup(&f, 0);
        f.vq->last_avail_idx = 65530;   /* as SET_VRING_BASE would set it */
        f.avail_idx = 65530;
        f.avail->idx = 65530;
        set_desc(f.desc, 0, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
        for (unsigned i = 0; i < 40; i++) {
                publish(&f, 0);
                g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
                vq_push(f.vq, 0, 8);
        }
        g_assert_cmpuint(f.vq->last_avail_idx, ==, (uint16_t)(65530 + 40));
        g_assert_false(vq_is_broken(f.vq));
        fixture_teardown(&f);
}

static void test_indirect(void)
{
        struct vring_desc *table;
        struct fixture f;

        fixture_setup(&f, 1ull << VIRTIO_RING_F_INDIRECT_DESC);
        table = gpa(&f, TABLE_GPA);
        set_desc(table, 0, BUF_GPA, 48, VRING_DESC_F_NEXT, 2);
        set_desc(table, 2, BUF_GPA + 100, 16, VRING_DESC_F_NEXT, 1);
        set_desc(table, 1, BUF_GPA + 8192, 4096, VRING_DESC_F_WRITE, 0);
        set_desc(f.desc, 9, TABLE_GPA, 3 * sizeof(struct vring_desc), VRING_DESC_F_INDIRECT, 0);
        publish(&f, 9);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        g_assert_cmpuint(f.e->head, ==, 9);
        g_assert_cmpuint(f.e->n_readable, ==, 2);
        g_assert_cmpuint(f.e->n_writable, ==, 1);
        g_assert_cmpuint(f.e->readable_len, ==, 64);
        g_assert_cmpuint(f.e->writable_len, ==, 4096);
        g_assert_true(f.e->iov[2].iov_base == gm_gpa_to_host(&f.mem, BUF_GPA + 8192, 4096));
        fixture_teardown(&f);
}

/* Spec 2.7.5.3.2: direct descriptors may precede one indirect descriptor,
 * and the WRITE flag of the descriptor pointing at a table is ignored. */
static void test_direct_then_indirect(void)
{
        struct vring_desc *table;
        struct fixture f;

        fixture_setup(&f, 1ull << VIRTIO_RING_F_INDIRECT_DESC);
        table = gpa(&f, TABLE_GPA);
        set_desc(table, 0, BUF_GPA + 40, 24, VRING_DESC_F_NEXT, 1);
        set_desc(table, 1, BUF_GPA + 4096, 512, VRING_DESC_F_WRITE, 0);
        set_desc(f.desc, 6, BUF_GPA, 40, VRING_DESC_F_NEXT, 2);
        set_desc(f.desc, 2, TABLE_GPA, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_WRITE, 0);
        publish(&f, 6);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        g_assert_cmpuint(f.e->head, ==, 6);
        g_assert_cmpuint(f.e->n_readable, ==, 2);
        g_assert_cmpuint(f.e->n_writable, ==, 1);
        g_assert_cmpuint(f.e->readable_len, ==, 64);
        g_assert_cmpuint(f.e->writable_len, ==, 512);
        fixture_teardown(&f);
}

/* A 1 MiB WRITE: header + 256 pages, in one indirect table; and a buffer
 * crossing from one memory region into the next takes two iovecs. */
static void test_large_request(void)
{
        struct vring_desc *table;
        struct fixture f;
        unsigned n = 260;

        fixture_setup(&f, 1ull << VIRTIO_RING_F_INDIRECT_DESC);
        table = gpa(&f, TABLE_GPA);
        set_desc(table, 0, BUF_GPA, 80, VRING_DESC_F_NEXT, 1);
        for (unsigned i = 1; i < n - 1; i++)
                set_desc(table, i, BUF_GPA + 4096ull * i, 4096, VRING_DESC_F_NEXT, (uint16_t)(i + 1));
        /* The reply buffer straddles the 1 MiB boundary between the regions. */
        set_desc(table, n - 1, MIB - 16, 32, VRING_DESC_F_WRITE, 0);
        set_desc(f.desc, 0, TABLE_GPA, n * sizeof(struct vring_desc), VRING_DESC_F_INDIRECT, 0);
        publish(&f, 0);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        g_assert_cmpuint(f.e->n_readable, ==, n - 1);
        g_assert_cmpuint(f.e->n_writable, ==, 2);
        g_assert_cmpuint(f.e->readable_len, ==, 80 + 4096ull * (n - 2));
        g_assert_cmpuint(f.e->iov[n - 1].iov_len, ==, 16);
        g_assert_cmpuint(f.e->iov[n].iov_len, ==, 16);
        g_assert_true(f.e->iov[n].iov_base == gm_gpa_to_host(&f.mem, MIB, 16));
        fixture_teardown(&f);
}

static void test_event_idx(void)
{
        uint16_t *used_event, *avail_event;
        struct fixture f;

        fixture_setup(&f, 1ull << VIRTIO_RING_F_EVENT_IDX);
        used_event = &f.avail->ring[NUM];
        avail_event = (uint16_t *)&f.used->ring[NUM];
        set_desc(f.desc, 0, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);

        /* The guest wants an interrupt when used idx passes 0: the first push. */
        *used_event = 0;
        vq_push(f.vq, 0, 8);
        vq_notify(f.vq);
        g_assert_cmpuint(drain_eventfd(f.call_fd), ==, 1);
        /* used_event still 0: the second push does not interrupt. */
        vq_push(f.vq, 0, 8);
        vq_notify(f.vq);
        g_assert_cmpuint(drain_eventfd(f.call_fd), ==, 0);
        /* The guest moves used_event to 2: the third push (idx 2 -> 3) interrupts. */
        *used_event = 2;
        vq_push(f.vq, 0, 8);
        vq_notify(f.vq);
        g_assert_cmpuint(drain_eventfd(f.call_fd), ==, 1);
        /* NO_INTERRUPT is ignored with EVENT_IDX. */
        f.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
        *used_event = 3;
        vq_push(f.vq, 0, 8);
        vq_notify(f.vq);
        g_assert_cmpuint(drain_eventfd(f.call_fd), ==, 1);

        /* Kick suppression: avail_event stays behind while polling, then points
         * at the next entry we have not taken. */
        publish(&f, 0);
        publish(&f, 0);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        vq_set_notification(f.vq, false);
        g_assert_cmpuint(*avail_event, ==, 0);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        vq_set_notification(f.vq, true);
        g_assert_cmpuint(*avail_event, ==, 2);
        g_assert_cmpuint(f.used->flags, ==, 0);
        fixture_teardown(&f);
}

/* ---- malformed chains: each must break the queue ---- */

typedef void (*build_fn)(struct fixture *f);

static void bad_head(struct fixture *f)
{
        publish(f, NUM);
}

static void bad_next(struct fixture *f)
{
        set_desc(f->desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, NUM + 3);
        publish(f, 0);
}

static void bad_loop(struct fixture *f)
{
        set_desc(f->desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
        set_desc(f->desc, 1, BUF_GPA, 8, VRING_DESC_F_NEXT, 0);
        publish(f, 0);
}

static void bad_self_loop(struct fixture *f)
{
        set_desc(f->desc, 4, BUF_GPA, 8, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 4);
        publish(f, 4);
}

static void bad_addr(struct fixture *f)
{
        set_desc(f->desc, 0, 5ull * MIB, 8, 0, 0);
        publish(f, 0);
}

static void bad_len_past_end(struct fixture *f)
{
        set_desc(f->desc, 0, 2ull * MIB - 8, 0xffffffffu, VRING_DESC_F_WRITE, 0);
        publish(f, 0);
}

static void bad_addr_wraps(struct fixture *f)
{
        set_desc(f->desc, 0, UINT64_MAX - 4, 64, 0, 0);
        publish(f, 0);
}

static void bad_readable_after_writable(struct fixture *f)
{
        set_desc(f->desc, 0, BUF_GPA, 8, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
        set_desc(f->desc, 1, BUF_GPA + 8, 8, 0, 0);
        publish(f, 0);
}

static void bad_indirect_len(struct fixture *f)
{
        set_desc(f->desc, 0, TABLE_GPA, 24, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_indirect_empty(struct fixture *f)
{
        set_desc(f->desc, 0, TABLE_GPA, 0, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_indirect_too_long(struct fixture *f)
{
        set_desc(f->desc, 0, 0, (VQ_MAX_SIZE + 1) * 16, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_indirect_outside(struct fixture *f)
{
        set_desc(f->desc, 0, 2ull * MIB - 16, 32, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_indirect_nested(struct fixture *f)
{
        struct vring_desc *table = gpa(f, TABLE_GPA);

        set_desc(table, 0, TABLE_GPA + 256, 32, VRING_DESC_F_INDIRECT, 0);
        set_desc(f->desc, 0, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_indirect_loop(struct fixture *f)
{
        struct vring_desc *table = gpa(f, TABLE_GPA);

        set_desc(table, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
        set_desc(table, 1, BUF_GPA, 8, VRING_DESC_F_NEXT, 0);
        set_desc(f->desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_indirect_next_out_of_table(struct fixture *f)
{
        struct vring_desc *table = gpa(f, TABLE_GPA);

        set_desc(table, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 2);
        set_desc(f->desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_indirect_with_next(struct fixture *f)
{
        set_desc(f->desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
        publish(f, 0);
}

static void bad_indirect_then_next(struct fixture *f)
{
        set_desc(f->desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
        set_desc(f->desc, 1, TABLE_GPA, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 2);
        set_desc(f->desc, 2, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
        publish(f, 0);
}

static void bad_indirect_readable_after_writable(struct fixture *f)
{
        struct vring_desc *table = gpa(f, TABLE_GPA);

        set_desc(table, 0, BUF_GPA + 64, 8, 0, 0);
        set_desc(f->desc, 0, BUF_GPA, 8, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
        set_desc(f->desc, 1, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
        publish(f, 0);
}

static void bad_avail_jump(struct fixture *f)
{
        set_desc(f->desc, 0, BUF_GPA, 8, 0, 0);
        f->avail->ring[0] = 0;
        __atomic_store_n(&f->avail->idx, NUM + 1, __ATOMIC_RELEASE);
}

struct bad_case {
        const char *name;
        build_fn build;
        uint64_t features;
};

#define INDIRECT (1ull << VIRTIO_RING_F_INDIRECT_DESC)
static const struct bad_case bad_cases[] = {
        { "head-out-of-range", bad_head, 0 },
        { "next-out-of-range", bad_next, 0 },
        { "loop", bad_loop, 0 },
        { "self-loop", bad_self_loop, 0 },
        { "address-outside-memory", bad_addr, 0 },
        { "length-past-end", bad_len_past_end, 0 },
        { "address-wraps", bad_addr_wraps, 0 },
        { "readable-after-writable", bad_readable_after_writable, 0 },
        { "indirect-not-negotiated", bad_indirect_len, 0 },
        { "indirect-len-not-multiple-of-16", bad_indirect_len, INDIRECT },
        { "indirect-empty", bad_indirect_empty, INDIRECT },
        { "indirect-too-long", bad_indirect_too_long, INDIRECT },
        { "indirect-outside-memory", bad_indirect_outside, INDIRECT },
        { "indirect-nested", bad_indirect_nested, INDIRECT },
        { "indirect-loop", bad_indirect_loop, INDIRECT },
        { "indirect-next-out-of-table", bad_indirect_next_out_of_table, INDIRECT },
        { "indirect-with-next", bad_indirect_with_next, INDIRECT },
        { "indirect-then-next", bad_indirect_then_next, INDIRECT },
        { "indirect-readable-after-direct-writable", bad_indirect_readable_after_writable, INDIRECT },
        { "avail-index-jump", bad_avail_jump, 0 },
};

static void test_malformed(gconstpointer data)
{
        const struct bad_case *c = data;
        struct fixture f;

        fixture_setup(&f, c->features);
        c->build(&f);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, -EIO);
        g_assert_true(vq_is_broken(f.vq));
        /* Broken stays broken, and the frontend's error eventfd was told once. */
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, -EIO);
        g_assert_cmpuint(drain_eventfd(f.err_fd), ==, 1);
        g_assert_cmpuint(f.used->idx, ==, 0);

        /* Setting the rings up again (a new driver) revives the queue. */
        g_assert_cmpint(vq_set_rings(f.vq, NUM, f.desc, f.avail, f.used), ==, 0);
        f.vq->last_avail_idx = f.avail_idx = 0;
        f.avail->idx = 0;
        set_desc(f.desc, 0, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
        publish(&f, 0);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        fixture_teardown(&f);
}

static void test_bad_rings(void)
{
        struct fixture f;

        fixture_setup(&f, 0);
        g_assert_cmpint(vq_set_rings(f.vq, 0, f.desc, f.avail, f.used), ==, -EINVAL);
        g_assert_cmpint(vq_set_rings(f.vq, 12, f.desc, f.avail, f.used), ==, -EINVAL);
        g_assert_cmpint(vq_set_rings(f.vq, 2048, f.desc, f.avail, f.used), ==, -EINVAL);
        g_assert_cmpint(vq_set_rings(f.vq, NUM, (uint8_t *)f.desc + 8, f.avail, f.used), ==, -EINVAL);
        g_assert_cmpint(vq_set_rings(f.vq, NUM, NULL, f.avail, f.used), ==, -EINVAL);
        fixture_teardown(&f);
}

/* A stopped ring (GET_VRING_BASE) is detached: a late push or notify — a
 * deferred request finishing after the stop — writes nothing to it, and
 * vq_set_rings() attaches it again at the index where it stopped. */
static void test_detach(void)
{
        struct fixture f;
        uint8_t before[4 + 8 * NUM + 2];

        fixture_setup(&f, 0);
        set_desc(f.desc, 0, BUF_GPA, 16, VRING_DESC_F_WRITE, 0);
        publish(&f, 0);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        vq_detach(f.vq);
        memcpy(before, f.used, sizeof(before));
        vq_push(f.vq, 0, 16);
        vq_notify(f.vq);
        vq_set_notification(f.vq, false);
        g_assert_cmpmem(f.used, sizeof(before), before, sizeof(before));
        g_assert_cmpuint(drain_eventfd(f.call_fd), ==, 0);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, -EIO);
        g_assert_cmpuint(f.vq->last_avail_idx, ==, 1);

        g_assert_cmpint(vq_set_rings(f.vq, NUM, gm_gpa_to_host(&f.mem, DESC_GPA, 256),
                                     gm_gpa_to_host(&f.mem, AVAIL_GPA, 64),
                                     gm_gpa_to_host(&f.mem, USED_GPA, 256)), ==, 0);
        vq_push(f.vq, 0, 16);
        g_assert_cmpuint(f.used->idx, ==, 1);
        fixture_teardown(&f);
}

/* A successor's view of the same rings: a new vq attached without the state
 * (vq_set_rings() would overwrite the stored positions), then reconciled. */
static int resume_successor(struct fixture *f, struct rstate_ring *rs, struct vq *next,
                            uint16_t *heads, unsigned *n)
{
        vq_init(next, &f->mem, 1);
        g_assert_cmpint(vq_set_rings(next, NUM, gm_gpa_to_host(&f->mem, DESC_GPA, 256),
                                     gm_gpa_to_host(&f->mem, AVAIL_GPA, 64),
                                     gm_gpa_to_host(&f->mem, USED_GPA, 256)), ==, 0);
        next->rs = rs;
        return vq_resume(next, rs->last_avail_idx, heads, n);
}

enum resume_case {
        RESUME_CLEAN,             /* died with one request in flight, state whole */
        RESUME_POP_UNFINISHED,    /* in flight recorded, last_avail_idx not moved */
        RESUME_USED_WRITTEN,      /* used element written, used->idx not moved */
        RESUME_USED_PUBLISHED,    /* used->idx moved, in flight not cleared */
        RESUME_GARBAGE,           /* positions that do not belong to these rings */
};

/* vq_pop()/vq_push() keep the in-flight record so that a SIGKILL between any
 * two of their stores is told apart by vq_resume(): the head still in
 * flight is answered once, a head answered is not answered again, a head
 * not taken is taken as new. */
static void test_resume(gconstpointer data)
{
        enum resume_case c = GPOINTER_TO_INT(data);
        struct rstate_ring *rs = g_new0(struct rstate_ring, 1);
        struct vq *next = g_new0(struct vq, 1);
        uint16_t heads[VQ_MAX_SIZE];
        unsigned n = 99;
        struct fixture f;
        int r;

        fixture_setup(&f, 0);
        vq_set_state(f.vq, rs);
        for (unsigned h = 3; h <= 7; h += 2)
                set_desc(f.desc, h, BUF_GPA + h * 256, 64, VRING_DESC_F_WRITE, 0);
        publish(&f, 3);
        publish(&f, 5);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        vq_push(f.vq, 3, 16);
        g_assert_cmpint(vq_pop(f.vq, f.e), ==, 1);
        g_assert_cmpuint(rs->inflight[3], ==, 0);
        g_assert_cmpuint(rs->inflight[5], ==, 1);
        g_assert_cmpuint(rs->last_avail_idx, ==, 2);
        g_assert_cmpuint(rs->used_idx, ==, 1);
        /* Head 5 is in flight; the crash lands where the case says. */
        switch (c) {
        case RESUME_CLEAN:
                break;
        case RESUME_POP_UNFINISHED:
                publish(&f, 7);
                rs->inflight[7] = 1;
                break;
        case RESUME_USED_WRITTEN:
                f.used->ring[1] = (struct vring_used_elem){ .id = 5, .len = 16 };
                break;
        case RESUME_USED_PUBLISHED:
                f.used->ring[1] = (struct vring_used_elem){ .id = 5, .len = 16 };
                __atomic_store_n(&f.used->idx, 2, __ATOMIC_RELEASE);
                break;
        case RESUME_GARBAGE:
                rs->last_avail_idx = 9;
                break;
        }
        r = resume_successor(&f, rs, next, heads, &n);
        if (c == RESUME_GARBAGE) {
                g_assert_cmpint(r, ==, -EBADMSG);
                goto out;
        }
        g_assert_cmpint(r, ==, 0);
        if (c == RESUME_USED_PUBLISHED) {
                g_assert_cmpuint(n, ==, 0);
                g_assert_cmpuint(next->used_idx, ==, 2);
        } else {
                g_assert_cmpuint(n, ==, 1);
                g_assert_cmpuint(heads[0], ==, 5);
                g_assert_cmpuint(next->used_idx, ==, 1);
                /* Answered again from the descriptor table: exactly once. */
                g_assert_cmpint(vq_elem_at(next, 5, f.e), ==, 1);
                vq_push(next, 5, 16);
                g_assert_cmpuint(f.used->idx, ==, 2);
                g_assert_cmpuint(f.used->ring[1].id, ==, 5);
                g_assert_cmpuint(rs->inflight[5], ==, 0);
        }
        /* A head the dead worker had not finished taking is taken as new. */
        if (c == RESUME_POP_UNFINISHED) {
                g_assert_cmpuint(rs->inflight[7], ==, 0);
                g_assert_cmpint(vq_pop(next, f.e), ==, 1);
                g_assert_cmpuint(f.e->head, ==, 7);
        }
        g_assert_cmpint(vq_pop(next, f.e), ==, 0);
out:
        vq_destroy(next);
        g_free(next);
        g_free(rs);
        fixture_teardown(&f);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        /* "virtqueue N is broken" lines on stderr are expected here. */
        if (g_test_verbose())
                log_set_level(LOG_LEVEL_DEBUG);
        g_test_add_func("/virtqueue/simple-chain", test_simple_chain);
        g_test_add_func("/virtqueue/wraparound", test_wraparound);
        g_test_add_func("/virtqueue/indirect", test_indirect);
        g_test_add_func("/virtqueue/direct-then-indirect", test_direct_then_indirect);
        g_test_add_func("/virtqueue/large-request", test_large_request);
        g_test_add_func("/virtqueue/event-idx", test_event_idx);
        g_test_add_func("/virtqueue/bad-rings", test_bad_rings);
        g_test_add_func("/virtqueue/detach", test_detach);
        g_test_add_data_func("/virtqueue/resume/clean", GINT_TO_POINTER(RESUME_CLEAN), test_resume);
        g_test_add_data_func("/virtqueue/resume/pop-unfinished",
                             GINT_TO_POINTER(RESUME_POP_UNFINISHED), test_resume);
        g_test_add_data_func("/virtqueue/resume/used-written",
                             GINT_TO_POINTER(RESUME_USED_WRITTEN), test_resume);
        g_test_add_data_func("/virtqueue/resume/used-published",
                             GINT_TO_POINTER(RESUME_USED_PUBLISHED), test_resume);
        g_test_add_data_func("/virtqueue/resume/garbage", GINT_TO_POINTER(RESUME_GARBAGE),
                             test_resume);
        for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
                g_autofree char *path = g_strdup_printf("/virtqueue/malformed/%s", bad_cases[i].name);

                g_test_add_data_func(path, &bad_cases[i], test_malformed);
        }
        return g_test_run();
}
