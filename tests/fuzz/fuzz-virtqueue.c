/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-virtqueue.c — libFuzzer target: the split-ring walker (virtqueue.c)
 * over guest memory mapped by guest-memory.c.
 *
 * Guest memory is two adjacent memfd regions (FZ_REGION bytes each, gpa 0
 * and FZ_REGION, frontend addresses FZ_UVA + gpa), mapped once per process
 * through gm_add_region() as SET_MEM_TABLE maps them.  An input is
 *   u8  queue size: bit 7 clear: 1 << (b % 11); set: the next u16 as is
 *   u8  features: bit 0 EVENT_IDX, bit 1 INDIRECT_DESC, bit 2 a call eventfd,
 *       bit 3 toggle notifications between pops
 *   u16 last_avail_idx (SET_VRING_BASE)
 *   u16 ×3 desc / avail / used ring offsets (frontend addresses FZ_UVA + off)
 *   u8  pops: at most this many chains are popped and pushed
 *   u32 used-length xor (what the device claims to have written, fuzzed)
 *   the rest: guest memory contents from gpa 0 (both regions; zeros after)
 * and then each chain vq_pop() hands out is checked — every iovec wholly
 * inside one region, counts and lengths adding up — its readable part read,
 * its writable part written (as fs_process would), and pushed with a
 * notify.  Anything outside guest memory is an ASan report or a check here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-util.h"
#include "guest-memory.h"
#include "virtqueue.h"

#define FZ_REGION (16 * 1024)
#define FZ_UVA    0x7f0000000000ull

static struct gm mem;
static struct vq vq;
static struct vq_elem elem;
static int call_fd = -1;
static unsigned long runs;
static unsigned fd_baseline;

static void setup(void)
{
        fz_quiet_log();
        gm_init(&mem);
        for (unsigned i = 0; i < 2; i++) {
                struct vu_memory_region r = {
                        .guest_phys_addr = i * FZ_REGION, .memory_size = FZ_REGION,
                        .user_addr = FZ_UVA + i * FZ_REGION, .mmap_offset = 0,
                };
                int fd = memfd_create("fuzz-guest-ram", MFD_CLOEXEC | MFD_ALLOW_SEALING);

                if (fd < 0 || ftruncate(fd, FZ_REGION) < 0 || gm_add_region(&mem, &r, fd) < 0)
                        abort();
                close(fd);
        }
        vq_init(&vq, &mem, 1);
        call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (call_fd < 0)
                abort();
}

static const struct gm_region *region_of(const struct iovec *v)
{
        for (unsigned i = 0; i < mem.n_regions; i++) {
                const struct gm_region *g = &mem.regions[i];
                const uint8_t *b = v->iov_base;

                if (b >= g->host && v->iov_len <= g->size && b - g->host <= (ptrdiff_t)(g->size - v->iov_len))
                        return g;
        }
        return NULL;
}

/* What the transport and fs_process rely on: every iovec inside guest
 * memory, the counts within the array, the lengths what the chain said. */
static void check_elem(const struct vq_elem *e)
{
        uint64_t readable = 0, writable = 0;
        volatile uint8_t sink = 0;

        if (e->head >= vq.num || e->n_readable + e->n_writable > VQ_MAX_IOV)
                abort();
        for (unsigned i = 0; i < e->n_readable + e->n_writable; i++) {
                const struct iovec *v = &e->iov[i];

                if (v->iov_len == 0)
                        abort();   /* gm_map() never makes an empty one */
                if (!region_of(v))
                        abort();
                if (i < e->n_readable) {
                        readable += v->iov_len;
                        sink ^= ((const uint8_t *)v->iov_base)[0];
                        sink ^= ((const uint8_t *)v->iov_base)[v->iov_len - 1];
                } else {
                        writable += v->iov_len;
                        memset(v->iov_base, 0x5a, v->iov_len);
                }
        }
        if (readable != e->readable_len || writable != e->writable_len)
                abort();
        (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fz_input in = { data, size };
        uint64_t desc_size, avail_size, used_size;
        unsigned num, pops;
        uint8_t b, features;
        uint16_t base, off[3];
        uint32_t len_xor;
        void *desc, *avail, *used;
        size_t ram_len;

        if (call_fd < 0)
                setup();
        b = fz_u8(&in);
        num = b & 0x80 ? fz_u16(&in) : 1u << (b % 11);
        features = fz_u8(&in);
        base = fz_u16(&in);
        for (unsigned i = 0; i < 3; i++)
                off[i] = fz_u16(&in);
        pops = fz_u8(&in);
        len_xor = fz_u32(&in);

        /* Guest memory: the rest of the input, zeros after it. */
        ram_len = in.left < 2 * FZ_REGION ? in.left : 2 * FZ_REGION;
        for (unsigned i = 0; i < 2; i++) {
                size_t from = i * FZ_REGION, n = 0;

                if (ram_len > from)
                        n = ram_len - from < FZ_REGION ? ram_len - from : FZ_REGION;
                memcpy(mem.regions[i].host, in.p + from, n);
                memset(mem.regions[i].host + n, 0, FZ_REGION - n);
        }

        /* As vhost-user.c's vring_try_start(): translate, then set the rings. */
        vq_reset(&vq);
        vq_set_features(&vq, (features & 1 ? 1ull << VIRTIO_RING_F_EVENT_IDX : 0) |
                                     (features & 2 ? 1ull << VIRTIO_RING_F_INDIRECT_DESC : 0));
        vq_set_call_fd(&vq, features & 4 ? call_fd : -1);
        vq.last_avail_idx = base;
        vq_ring_sizes(num, &desc_size, &avail_size, &used_size);
        desc = gm_uva_to_host(&mem, FZ_UVA + off[0], desc_size);
        avail = gm_uva_to_host(&mem, FZ_UVA + off[1], avail_size);
        used = gm_uva_to_host(&mem, FZ_UVA + off[2], used_size);
        if (vq_set_rings(&vq, num, desc, avail, used) == 0) {
                for (unsigned i = 0; i < pops; i++) {
                        int r;

                        if (features & 8)
                                vq_set_notification(&vq, i & 1);
                        (void)vq_avail_empty(&vq);
                        r = vq_pop(&vq, &elem);
                        if (r < 0 && !vq_is_broken(&vq))
                                abort();   /* -EIO always comes with a broken queue */
                        if (r <= 0)
                                break;
                        check_elem(&elem);
                        vq_push(&vq, elem.head, (uint32_t)elem.writable_len ^ len_xor);
                        vq_notify(&vq);
                }
                vq_set_notification(&vq, true);
                /* A stopped ring writes nothing more, whatever comes late. */
                vq_detach(&vq);
                vq_push(&vq, 0, 0);
                vq_notify(&vq);
        }
        {
                eventfd_t v;

                (void)eventfd_read(call_fd, &v);
        }
        fz_check_fds(&runs, &fd_baseline);
        return 0;
}
