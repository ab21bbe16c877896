/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vmm.c — the vhost-user frontend and the split virtqueue driver of the test
 * VMM (see vmm.h).  Written from the vhost-user and virtio 1.1 specs; shares
 * no code with the daemon it tests. */
#include "vmm.h"

#include <errno.h>
#include <linux/virtio_fs.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* vhost-user requests (front-end → back-end) */
enum {
        VU_GET_FEATURES = 1,
        VU_SET_FEATURES = 2,
        VU_SET_OWNER = 3,
        VU_SET_MEM_TABLE = 5,
        VU_SET_VRING_NUM = 8,
        VU_SET_VRING_ADDR = 9,
        VU_SET_VRING_BASE = 10,
        VU_GET_VRING_BASE = 11,
        VU_SET_VRING_KICK = 12,
        VU_SET_VRING_CALL = 13,
        VU_GET_PROTOCOL_FEATURES = 15,
        VU_SET_PROTOCOL_FEATURES = 16,
        VU_GET_QUEUE_NUM = 17,
        VU_SET_VRING_ENABLE = 18,
        VU_GET_CONFIG = 24,
        VU_GET_MAX_MEM_SLOTS = 36,
        VU_ADD_MEM_REG = 37,
        VU_REM_MEM_REG = 38,
};

#define VU_FLAG_VERSION     0x1u
#define VU_FLAG_REPLY       (1u << 2)
#define VU_FLAG_NEED_REPLY  (1u << 3)
#define VU_F_PROTOCOL_FEATURES 30
#define VU_PROTO_MQ           0
#define VU_PROTO_REPLY_ACK    3
#define VU_PROTO_CONFIG       9
#define VU_PROTO_CONFIGURE_MEM_SLOTS 15
#define VU_VRING_NOFD_MASK  (1ull << 8)
#define VU_MAX_PAYLOAD      4096

struct vu_region {
        uint64_t gpa, size, uva, mmap_offset;
};

struct vu_msg {
        uint32_t request;
        uint32_t flags;
        uint32_t size;
        union {
                uint64_t u64;
                struct { uint32_t index, num; } state;
                struct { uint32_t index, flags; uint64_t desc, used, avail, log; } addr;
                struct { uint32_t nregions, padding; struct vu_region r[8]; } mem;
                struct { uint64_t padding; struct vu_region r; } reg;
                struct { uint32_t offset, size, flags; uint8_t region[256]; } config;
                uint8_t raw[VU_MAX_PAYLOAD];
        } p;
} __attribute__((packed));

#define VU_HDR_SIZE 12

struct vmm_queue {
        unsigned size;
        struct vring_desc *desc;
        struct vring_avail *avail;
        struct vring_used *used;
        int kick_fd, call_fd;
        uint16_t avail_idx;     /* next index we publish */
        uint16_t last_used;     /* next used index we consume */
        uint16_t *free_list;    /* stack of free descriptor ids */
        unsigned nfree;
        uint8_t *state;         /* per head: 0 free, 1 in flight, 2 done */
        uint32_t *done_len;
        uint16_t *chain;        /* per head: ids of the chain, to free them */
        uint16_t *chain_n;
        /* the slot fast path (vmm_slot_*): all per queue, so that one thread per queue needs no lock */
        struct vmm_slot **slot_of;      /* per head: the slot in flight there, or NULL */
        uint16_t pending;               /* added to the avail ring, not yet published */
        uint64_t seq;                   /* slot requests' unique numbers */
        struct vmm_queue_mode mode;
        struct vmm_queue_counters counters;
};

enum { HEAD_FREE, HEAD_INFLIGHT, HEAD_DONE };

struct vmm {
        int sock;
        int memfd;
        uint8_t *mem;
        size_t mem_size;
        struct vmm_region region[2];
        size_t ring_bump;       /* allocator in region 0 (rings, at setup) */
        size_t data_bump;       /* allocator in region 1 (requests) */
        size_t data_limit;      /* end of vmm_alloc's area: slots own what lies above */
        struct vmm_slot *slot_arrays[32];
        unsigned nslot_arrays;
        int extra_fd;
        uint8_t *extra;
        struct vu_region extra_reg;
        uint64_t features, protocol_features;
        unsigned backend_queues;
        unsigned nq;            /* hiprio + request queues */
        struct vmm_queue q[VMM_MAX_QUEUES];
        uint64_t unique;
        int timeout_ms;
        uint32_t init_flags;
        bool creds_set;                 /* vmm_set_creds(): the header ids of later requests */
        uint32_t creds_uid, creds_gid, creds_pid;
        bool hung_up;
};

#define REGION1_GPA 0x100000000ull  /* 4 GiB: a hole lies between the regions */

static int vmm_fail(int err, const char *what)
{
        fprintf(stderr, "vmm: %s: %s\n", what, strerror(err < 0 ? -err : err));
        return err < 0 ? err : -err;
}

static int64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- vhost-user messages ---- */

static int vu_send(struct vmm *v, struct vu_msg *m, const int *fds, unsigned nfds)
{
        struct iovec iov = { .iov_base = m, .iov_len = VU_HDR_SIZE + m->size };
        union {
                char buf[CMSG_SPACE(sizeof(int) * 8)];
                struct cmsghdr align;
        } control;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        m->flags |= VU_FLAG_VERSION;
        if (nfds > 0) {
                memset(&control, 0, sizeof(control));
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
        }
        ssize_t n;
        do
                n = sendmsg(v->sock, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                if (errno == EPIPE || errno == ECONNRESET)
                        v->hung_up = true;
                return vmm_fail(-errno, "vhost-user send");
        }
        if ((size_t)n != iov.iov_len)
                return vmm_fail(-EIO, "vhost-user short send");
        return 0;
}

static int read_full(struct vmm *v, void *buf, size_t len, int64_t deadline)
{
        size_t got = 0;
        while (got < len) {
                struct pollfd p = { .fd = v->sock, .events = POLLIN };
                int left = (int)(deadline - now_ms());
                if (left <= 0)
                        return -ETIMEDOUT;
                int r = poll(&p, 1, left);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                ssize_t n = recv(v->sock, (char *)buf + got, len - got, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0) {
                        v->hung_up = true;
                        return -ECONNRESET;
                }
                got += (size_t)n;
        }
        return 0;
}

static int vu_recv_reply(struct vmm *v, uint32_t request, struct vu_msg *reply)
{
        int64_t deadline = now_ms() + v->timeout_ms;
        int r = read_full(v, reply, VU_HDR_SIZE, deadline);
        if (r < 0)
                return vmm_fail(r, "vhost-user reply header");
        if (reply->size > VU_MAX_PAYLOAD)
                return vmm_fail(-EPROTO, "vhost-user reply too large");
        r = read_full(v, &reply->p, reply->size, deadline);
        if (r < 0)
                return vmm_fail(r, "vhost-user reply payload");
        if (reply->request != request || !(reply->flags & VU_FLAG_REPLY)) {
                fprintf(stderr, "vmm: reply to request %u has request %u flags %#x\n",
                        request, reply->request, reply->flags);
                return -EPROTO;
        }
        return 0;
}

/* Sends a message that has no reply of its own; with REPLY_ACK it asks for
 * the ack, so a failure shows here instead of in some later request. */
static int vu_request(struct vmm *v, uint32_t request, const void *payload, uint32_t size,
                      const int *fds, unsigned nfds)
{
        struct vu_msg m = { .request = request, .size = size };
        bool ack = v->protocol_features & (1ull << VU_PROTO_REPLY_ACK);
        if (payload)
                memcpy(&m.p, payload, size);
        if (ack)
                m.flags |= VU_FLAG_NEED_REPLY;
        int r = vu_send(v, &m, fds, nfds);
        if (r < 0 || !ack)
                return r;
        struct vu_msg reply;
        r = vu_recv_reply(v, request, &reply);
        if (r < 0)
                return r;
        if (reply.size != 8)
                return vmm_fail(-EPROTO, "vhost-user ack size");
        if (reply.p.u64 != 0) {
                fprintf(stderr, "vmm: backend nacked request %u\n", request);
                return -EIO;
        }
        return 0;
}

/* A request with a reply of its own. */
static int vu_roundtrip(struct vmm *v, struct vu_msg *m, struct vu_msg *reply)
{
        int r = vu_send(v, m, NULL, 0);
        if (r < 0)
                return r;
        return vu_recv_reply(v, m->request, reply);
}

static int vu_get_u64(struct vmm *v, uint32_t request, uint64_t *ret)
{
        struct vu_msg m = { .request = request, .size = 0 };
        struct vu_msg reply;
        int r = vu_roundtrip(v, &m, &reply);
        if (r < 0)
                return r;
        if (reply.size != 8)
                return vmm_fail(-EPROTO, "vhost-user u64 reply size");
        *ret = reply.p.u64;
        return 0;
}

static int vu_set_u64(struct vmm *v, uint32_t request, uint64_t val)
{
        return vu_request(v, request, &val, sizeof(val), NULL, 0);
}

static int vu_set_state(struct vmm *v, uint32_t request, uint32_t index, uint32_t num)
{
        struct { uint32_t index, num; } s = { index, num };
        return vu_request(v, request, &s, sizeof(s), NULL, 0);
}

/* ---- guest memory ---- */

void vmm_region(const struct vmm *v, unsigned i, struct vmm_region *ret)
{
        *ret = v->region[i < 2 ? i : 1];
}

void *vmm_gpa_to_host(const struct vmm *v, uint64_t gpa, size_t len)
{
        for (unsigned i = 0; i < 2; i++) {
                const struct vmm_region *r = &v->region[i];
                if (gpa >= r->gpa && gpa - r->gpa <= r->size && len <= r->size - (gpa - r->gpa))
                        return r->host + (gpa - r->gpa);
        }
        if (v->extra && gpa >= v->extra_reg.gpa && gpa - v->extra_reg.gpa <= v->extra_reg.size &&
            len <= v->extra_reg.size - (gpa - v->extra_reg.gpa))
                return v->extra + (gpa - v->extra_reg.gpa);
        return NULL;
}

static void *ring_alloc(struct vmm *v, size_t len, size_t align, uint64_t *gpa)
{
        size_t off = (v->ring_bump + align - 1) & ~(align - 1);
        if (off + len > v->region[0].size)
                return NULL;
        v->ring_bump = off + len;
        *gpa = v->region[0].gpa + off;
        return v->region[0].host + off;
}

void *vmm_alloc(struct vmm *v, size_t len, uint64_t *ret_gpa)
{
        size_t size = v->data_limit;
        len = (len + 15) & ~(size_t)15;
        if (len > size)
                return NULL;
        /* A compare-and-swap: one thread per request queue may submit
         * vmm_op requests at once (test-concurrency), all allocating here. */
        size_t seen = __atomic_load_n(&v->data_bump, __ATOMIC_RELAXED), off;
        do
                off = seen + len > size ? 0 : seen;
        while (!__atomic_compare_exchange_n(&v->data_bump, &seen, off + len, true,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        *ret_gpa = v->region[1].gpa + off;
        return v->region[1].host + off;
}

static int mem_setup(struct vmm *v, size_t size)
{
        v->memfd = memfd_create("sluice-test-guest", MFD_CLOEXEC);
        if (v->memfd < 0)
                return vmm_fail(-errno, "memfd_create");
        if (ftruncate(v->memfd, (off_t)size) < 0)
                return vmm_fail(-errno, "ftruncate guest memory");
        v->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, v->memfd, 0);
        if (v->mem == MAP_FAILED) {
                v->mem = NULL;
                return vmm_fail(-errno, "mmap guest memory");
        }
        v->mem_size = size;
        v->region[0] = (struct vmm_region){ .gpa = 0, .size = size / 2, .host = v->mem };
        v->region[1] = (struct vmm_region){ .gpa = REGION1_GPA, .size = size / 2,
                                            .host = v->mem + size / 2 };
        v->data_limit = size / 2;
        return 0;
}

static struct vu_region region_desc(const struct vmm *v, unsigned i)
{
        return (struct vu_region){
                .gpa = v->region[i].gpa,
                .size = v->region[i].size,
                .uva = (uint64_t)(uintptr_t)v->region[i].host,
                .mmap_offset = (uint64_t)(v->region[i].host - v->mem),
        };
}

static int mem_send(struct vmm *v, bool add_mem_reg)
{
        if (add_mem_reg) {
                if (!(v->protocol_features & (1ull << VU_PROTO_CONFIGURE_MEM_SLOTS)))
                        return vmm_fail(-EOPNOTSUPP, "backend lacks CONFIGURE_MEM_SLOTS");
                uint64_t slots;
                int r = vu_get_u64(v, VU_GET_MAX_MEM_SLOTS, &slots);
                if (r < 0)
                        return r;
                if (slots < 2)
                        return vmm_fail(-ENOSPC, "backend has fewer than 2 memory slots");
                for (unsigned i = 0; i < 2; i++) {
                        struct { uint64_t padding; struct vu_region r; } reg = { 0, region_desc(v, i) };
                        r = vu_request(v, VU_ADD_MEM_REG, &reg, sizeof(reg), &v->memfd, 1);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        struct { uint32_t nregions, padding; struct vu_region r[2]; } mem = {
                .nregions = 2, .r = { region_desc(v, 0), region_desc(v, 1) },
        };
        int fds[2] = { v->memfd, v->memfd };
        return vu_request(v, VU_SET_MEM_TABLE, &mem, sizeof(mem), fds, 2);
}

static void extra_forget(struct vmm *v)
{
        if (v->extra)
                munmap(v->extra, v->extra_reg.size);
        if (v->extra_fd >= 0)
                close(v->extra_fd);
        v->extra = NULL;
        v->extra_fd = -1;
}

int vmm_add_extra_region_ex(struct vmm *v, const struct vmm_extra_region *x)
{
        if (v->extra)
                return -EBUSY;
        v->extra_fd = memfd_create("sluice-test-extra",
                                   MFD_CLOEXEC | (x->sealable ? MFD_ALLOW_SEALING : 0));
        if (v->extra_fd < 0)
                return vmm_fail(-errno, "memfd_create");
        if (ftruncate(v->extra_fd, (off_t)(x->file_size ? x->file_size : x->size)) < 0) {
                extra_forget(v);
                return vmm_fail(-errno, "ftruncate");
        }
        /* Mapping past the end of the file is allowed; the vmm does not touch it. */
        void *p = mmap(NULL, x->size, PROT_READ | PROT_WRITE, MAP_SHARED, v->extra_fd, 0);
        if (p == MAP_FAILED) {
                extra_forget(v);
                return vmm_fail(-errno, "mmap");
        }
        v->extra = p;
        v->extra_reg = (struct vu_region){ .gpa = x->gpa, .size = x->size,
                                           .uva = (uint64_t)(uintptr_t)p, .mmap_offset = 0 };
        int r;
        if (x->set_mem_table) {
                struct { uint32_t nregions, padding; struct vu_region r[3]; } mem = {
                        .nregions = 3, .r = { region_desc(v, 0), region_desc(v, 1), v->extra_reg },
                };
                int fds[3] = { v->memfd, v->memfd, v->extra_fd };
                r = vu_request(v, VU_SET_MEM_TABLE, &mem, sizeof(mem), fds, 3);
        } else {
                struct { uint64_t padding; struct vu_region r; } reg = { 0, v->extra_reg };
                r = vu_request(v, VU_ADD_MEM_REG, &reg, sizeof(reg), &v->extra_fd, 1);
        }
        if (r < 0)
                extra_forget(v);
        return r;
}

int vmm_add_extra_region(struct vmm *v, uint64_t gpa, size_t size)
{
        struct vmm_extra_region x = { .gpa = gpa, .size = size };
        return vmm_add_extra_region_ex(v, &x);
}

int vmm_extra_region_fd(const struct vmm *v)
{
        return v->extra ? v->extra_fd : -1;
}

int vmm_remove_extra_region(struct vmm *v)
{
        if (!v->extra)
                return -ENOENT;
        struct { uint64_t padding; struct vu_region r; } reg = { 0, v->extra_reg };
        /* QEMU passes the region's fd with REM_MEM_REG too. */
        int r = vu_request(v, VU_REM_MEM_REG, &reg, sizeof(reg), &v->extra_fd, 1);
        extra_forget(v);
        return r;
}

/* ---- virtqueues ---- */

static int queue_setup(struct vmm *v, unsigned i)
{
        struct vmm_queue *q = &v->q[i];
        unsigned n = q->size;
        uint64_t desc_gpa, avail_gpa, used_gpa;

        q->desc = ring_alloc(v, 16 * n, 16, &desc_gpa);
        q->avail = ring_alloc(v, 6 + 2 * n, 2, &avail_gpa);
        q->used = ring_alloc(v, 6 + 8 * n, 4, &used_gpa);
        if (!q->desc || !q->avail || !q->used)
                return vmm_fail(-ENOMEM, "rings do not fit in region 0");
        q->free_list = calloc(n, sizeof(uint16_t));
        q->state = calloc(n, 1);
        q->done_len = calloc(n, sizeof(uint32_t));
        q->chain = calloc((size_t)n * (VMM_MAX_SEGS * 4 + 4), sizeof(uint16_t));
        q->chain_n = calloc(n, sizeof(uint16_t));
        q->slot_of = calloc(n, sizeof(*q->slot_of));
        if (!q->free_list || !q->state || !q->done_len || !q->chain || !q->chain_n || !q->slot_of)
                return -ENOMEM;
        for (unsigned d = 0; d < n; d++)
                q->free_list[d] = (uint16_t)(n - 1 - d);
        q->nfree = n;
        q->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        q->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (q->kick_fd < 0 || q->call_fd < 0)
                return vmm_fail(-errno, "eventfd");

        int r = vu_set_state(v, VU_SET_VRING_NUM, i, n);
        if (r < 0)
                return r;
        r = vu_set_state(v, VU_SET_VRING_BASE, i, 0);
        if (r < 0)
                return r;
        /* Ring addresses are the frontend's own virtual addresses. */
        struct { uint32_t index, flags; uint64_t desc, used, avail, log; } addr = {
                .index = i,
                .desc = (uint64_t)(uintptr_t)q->desc,
                .used = (uint64_t)(uintptr_t)q->used,
                .avail = (uint64_t)(uintptr_t)q->avail,
        };
        r = vu_request(v, VU_SET_VRING_ADDR, &addr, sizeof(addr), NULL, 0);
        if (r < 0)
                return r;
        uint64_t idx = i;
        r = vu_request(v, VU_SET_VRING_CALL, &idx, sizeof(idx), &q->call_fd, 1);
        if (r < 0)
                return r;
        r = vu_request(v, VU_SET_VRING_KICK, &idx, sizeof(idx), &q->kick_fd, 1);
        if (r < 0)
                return r;
        if (v->features & (1ull << VU_F_PROTOCOL_FEATURES))
                return vu_set_state(v, VU_SET_VRING_ENABLE, i, 1);
        return 0;
}

static void queue_free(struct vmm_queue *q)
{
        if (q->kick_fd > 0)
                close(q->kick_fd);
        if (q->call_fd > 0)
                close(q->call_fd);
        free(q->free_list);
        free(q->state);
        free(q->done_len);
        free(q->chain);
        free(q->chain_n);
        free(q->slot_of);
        memset(q, 0, sizeof(*q));
}

struct vring_desc *vmm_desc_table(struct vmm *v, unsigned q)
{
        return q < v->nq ? v->q[q].desc : NULL;
}

int vmm_desc_get(struct vmm *v, unsigned qi, unsigned n, uint16_t *ids)
{
        if (qi >= v->nq)
                return -EINVAL;
        struct vmm_queue *q = &v->q[qi];
        if (n > q->nfree || n > VMM_MAX_SEGS * 4 + 4)
                return -ENOSPC;
        for (unsigned i = 0; i < n; i++) {
                ids[i] = q->free_list[--q->nfree];
                memset(&q->desc[ids[i]], 0, sizeof(struct vring_desc));
        }
        return 0;
}

int vmm_publish(struct vmm *v, unsigned qi, uint16_t head, unsigned ndesc, const uint16_t *ids)
{
        if (qi >= v->nq)
                return -EINVAL;
        struct vmm_queue *q = &v->q[qi];
        if (head >= q->size || q->state[head] != HEAD_FREE)
                return -EINVAL;
        q->state[head] = HEAD_INFLIGHT;
        q->chain_n[head] = (uint16_t)ndesc;
        memcpy(&q->chain[(size_t)head * (VMM_MAX_SEGS * 4 + 4)], ids, ndesc * sizeof(uint16_t));
        q->avail->ring[q->avail_idx % q->size] = head;
        __atomic_store_n(&q->avail->idx, (uint16_t)(q->avail_idx + 1), __ATOMIC_RELEASE);
        q->avail_idx++;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        /* Kicking even when avail_event says it is not needed is allowed. */
        uint64_t one = 1;
        if (write(q->kick_fd, &one, sizeof(one)) != sizeof(one))
                return vmm_fail(-errno, "kick");
        q->counters.kicks++;
        return 0;
}

int vmm_publish_raw(struct vmm *v, unsigned qi, uint16_t value, uint16_t idx_step)
{
        if (qi >= v->nq)
                return -EINVAL;
        struct vmm_queue *q = &v->q[qi];
        q->avail->ring[q->avail_idx % q->size] = value;
        q->avail_idx = (uint16_t)(q->avail_idx + idx_step);
        __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        uint64_t one = 1;
        if (write(q->kick_fd, &one, sizeof(one)) != sizeof(one))
                return vmm_fail(-errno, "kick");
        return 0;
}

static void chain_release(struct vmm_queue *q, uint16_t head)
{
        const uint16_t *ids = &q->chain[(size_t)head * (VMM_MAX_SEGS * 4 + 4)];
        for (unsigned i = 0; i < q->chain_n[head]; i++)
                q->free_list[q->nfree++] = ids[i];
        q->state[head] = HEAD_FREE;
}

/* Consumes every new used entry.  Returns -EPROTO for an entry naming a head
 * that is not in flight (the backend pushed garbage or pushed twice). */
static int used_collect(struct vmm_queue *q)
{
        uint16_t used_idx = __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE);
        int ret = 0;
        while (q->last_used != used_idx) {
                struct vring_used_elem e = q->used->ring[q->last_used % q->size];
                q->last_used++;
                if (e.id >= q->size || q->state[e.id] != HEAD_INFLIGHT) {
                        fprintf(stderr, "vmm: bogus used entry id %u len %u\n", e.id, e.len);
                        ret = -EPROTO;
                        continue;
                }
                q->state[e.id] = HEAD_DONE;
                q->done_len[e.id] = e.len;
        }
        return ret;
}

/* Sleeps on the call fd until a call or the deadline, but at most 20 ms:
 * the caller rechecks the ring in case the call was (legitimately)
 * suppressed.  -ETIMEDOUT once the deadline has passed. */
static int call_wait(struct vmm_queue *q, int64_t deadline)
{
        int left = (int)(deadline - now_ms());
        if (left <= 0)
                return -ETIMEDOUT;
        struct pollfd p = { .fd = q->call_fd, .events = POLLIN };
        if (poll(&p, 1, left < 20 ? left : 20) > 0) {
                uint64_t cnt;
                if (read(q->call_fd, &cnt, sizeof(cnt)) == sizeof(cnt))
                        q->counters.calls++;
        }
        return 0;
}

int vmm_wait_used(struct vmm *v, unsigned qi, uint16_t head, uint32_t *ret_len, int timeout_ms)
{
        if (qi >= v->nq)
                return -EINVAL;
        struct vmm_queue *q = &v->q[qi];
        if (head >= q->size || q->state[head] == HEAD_FREE)
                return -EINVAL;
        int64_t deadline = now_ms() + (timeout_ms < 0 ? v->timeout_ms : timeout_ms);
        for (;;) {
                /* Ask for an interrupt at the next used entry (EVENT_IDX). */
                q->avail->ring[q->size] = q->last_used;  /* used_event */
                __atomic_thread_fence(__ATOMIC_SEQ_CST);
                int r = used_collect(q);
                if (r < 0)
                        return r;
                if (q->state[head] == HEAD_DONE) {
                        if (ret_len)
                                *ret_len = q->done_len[head];
                        chain_release(q, head);
                        return 0;
                }
                int r2 = call_wait(q, deadline);
                if (r2 < 0)
                        return r2;
        }
}

bool vmm_backend_hung_up(struct vmm *v)
{
        return vmm_wait_hung_up(v, 0);
}

bool vmm_wait_hung_up(struct vmm *v, int timeout_ms)
{
        int64_t deadline = now_ms() + timeout_ms;
        while (!v->hung_up) {
                struct pollfd p = { .fd = v->sock, .events = POLLRDHUP };
                int left = (int)(deadline - now_ms());
                int r = poll(&p, 1, left > 0 ? left : 0);
                if (r > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)))
                        v->hung_up = true;
                if (left <= 0 || (r < 0 && errno != EINTR))
                        break;
        }
        return v->hung_up;
}

int vmm_set_vring_fd(struct vmm *v, enum vmm_vring_fd which, unsigned q, int fd)
{
        uint64_t idx = q;
        int r = vu_request(v, (uint32_t)which, &idx, sizeof(idx), &fd, 1);
        if (r < 0 && vmm_wait_hung_up(v, 0))
                return -ECONNRESET;
        return r;
}

int vmm_get_vring_base(struct vmm *v, unsigned q, uint32_t *ret_base)
{
        struct vu_msg m = { .request = VU_GET_VRING_BASE, .size = 8 };
        m.p.state.index = q;
        struct vu_msg reply;
        int r = vu_roundtrip(v, &m, &reply);
        if (r < 0)
                return r;
        if (reply.size != 8 || reply.p.state.index != q)
                return vmm_fail(-EPROTO, "GET_VRING_BASE reply");
        if (ret_base)
                *ret_base = reply.p.state.num;
        return 0;
}

struct vring_used *vmm_used_ring(struct vmm *v, unsigned q, size_t *ret_size)
{
        if (q >= v->nq)
                return NULL;
        if (ret_size)
                *ret_size = 6 + 8 * (size_t)v->q[q].size;
        return v->q[q].used;
}

uint16_t vmm_avail_idx(const struct vmm *v, unsigned q)
{
        return q < v->nq ? v->q[q].avail_idx : 0;
}

/* ---- the slot fast path (benchmarks; see vmm.h) ---- */

#define SLOT_UNIQUE_BIT (1ull << 63)   /* slot uniques never meet vmm_op's counter */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
}

/* virtio's vring_need_event: did [old, new) cross event? */
static bool need_event(uint16_t event, uint16_t new_idx, uint16_t old_idx)
{
        return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old_idx);
}

static bool has_event_idx(const struct vmm *v)
{
        return v->features & (1ull << VIRTIO_RING_F_EVENT_IDX);
}

int vmm_slots_new(struct vmm *v, unsigned qi, unsigned n, const struct vmm_slot_config *cfg,
                  struct vmm_slot **ret)
{
        if (qi == 0 || qi >= v->nq || n == 0 || n > v->q[qi].size)
                return -EINVAL;
        if (v->nslot_arrays == sizeof(v->slot_arrays) / sizeof(v->slot_arrays[0]))
                return -ENOSPC;
        unsigned max_desc = cfg->max_desc ? cfg->max_desc : VMM_MAX_SEGS * 4 + 4;
        if (max_desc > v->q[qi].size)
                return -EINVAL;
        /* [pad][header][args]  [out header][pad][out]  [table], the args page
         * offset chosen so that args + page_at starts a page. */
        size_t page_at = cfg->page_at % 4096;
        size_t head = sizeof(struct fuse_in_header) + page_at;
        size_t in_part = ((head + 4095) & ~(size_t)4095) + ((cfg->in_cap + 4095) & ~(size_t)4095);
        size_t out_part = 4096 + ((cfg->out_cap + 4095) & ~(size_t)4095);
        size_t table_part = ((size_t)max_desc * sizeof(struct vring_desc) + 4095) & ~(size_t)4095;
        size_t per_slot = in_part + out_part + table_part;
        /* vmm_alloc keeps at least 4 MiB for the ops of set-up (INIT, LOOKUP…). */
        if (per_slot > (v->data_limit - (4u << 20)) / n || v->data_limit < (4u << 20))
                return -ENOMEM;
        struct vmm_slot *slots = calloc(n, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        v->data_limit -= per_slot * n;
        if (v->data_bump > v->data_limit)
                v->data_bump = 0;
        for (unsigned i = 0; i < n; i++) {
                struct vmm_slot *s = &slots[i];
                size_t off = v->data_limit + per_slot * i;
                uint8_t *base = v->region[1].host + off;
                uint64_t gpa = v->region[1].gpa + off;
                size_t in_off = ((head + 4095) & ~(size_t)4095) - head;
                s->in = (struct fuse_in_header *)(base + in_off);
                s->in_gpa = gpa + in_off;
                s->args = s->in + 1;
                s->in_cap = cfg->in_cap;
                /* the out header ends where the page of the reply starts */
                s->out_hdr = (struct fuse_out_header *)(base + in_part + 4096 - sizeof(struct fuse_out_header));
                s->out_hdr_gpa = gpa + in_part + 4096 - sizeof(struct fuse_out_header);
                s->out = base + in_part + 4096;
                s->out_cap = cfg->out_cap;
                s->table = (struct vring_desc *)(base + in_part + out_part);
                s->table_gpa = gpa + in_part + out_part;
                s->table_cap = max_desc;
                s->queue = qi;
        }
        v->slot_arrays[v->nslot_arrays++] = slots;
        *ret = slots;
        return 0;
}

/* Appends [gpa, gpa + len) to d[*n] as descriptors of at most `chunk` bytes
 * (0: one); false, with what fitted appended, when more than cap are needed.
 * Both request paths (the slots and the op API) lay out chains with it. */
static bool descs_append(struct vring_desc *d, unsigned *n, unsigned cap, uint64_t gpa, size_t len,
                         bool writable, size_t chunk)
{
        do {
                size_t piece = chunk && len > chunk ? chunk : len;
                if (*n == cap)
                        return false;
                d[(*n)++] = (struct vring_desc){
                        .addr = gpa, .len = (uint32_t)piece,
                        .flags = writable ? VRING_DESC_F_WRITE : 0,
                };
                gpa += piece;
                len -= piece;
        } while (len > 0);
        return true;
}

static bool table_add(struct vmm_slot *s, uint64_t gpa, size_t len, bool writable, size_t chunk)
{
        return descs_append(s->table, &s->ndesc, s->table_cap, gpa, len, writable, chunk);
}

int vmm_slot_prepare(struct vmm *v, struct vmm_slot *s, uint32_t opcode, uint64_t nodeid,
                     const size_t *seg_len, unsigned nseg, size_t out_size,
                     const struct vmm_layout *layout)
{
        struct vmm_layout lay = layout ? *layout : (struct vmm_layout){ 0 };
        struct vmm_queue *q = &v->q[s->queue];
        if (s->in_flight)
                return -EBUSY;
        size_t args_len = 0;
        for (unsigned i = 0; i < nseg; i++)
                args_len += seg_len[i];
        if (args_len > s->in_cap || out_size > s->out_cap)
                return -E2BIG;
        *s->in = (struct fuse_in_header){
                .len = (uint32_t)(sizeof(*s->in) + args_len), .opcode = opcode,
                .unique = SLOT_UNIQUE_BIT | (++q->seq << 5) | ((uint64_t)s->queue << 1),
                .nodeid = nodeid,
                .uid = v->creds_set ? v->creds_uid : getuid(),
                .gid = v->creds_set ? v->creds_gid : getgid(),
                .pid = v->creds_set && v->creds_pid ? v->creds_pid : (uint32_t)getpid(),
        };
        s->ndesc = 0;
        bool ok = table_add(s, s->in_gpa, sizeof(*s->in), false, lay.chunk);
        uint64_t gpa = s->in_gpa + sizeof(*s->in);
        for (unsigned i = 0; i < nseg && ok; i++) {
                if (seg_len[i] > 0)
                        ok = table_add(s, gpa, seg_len[i], false, lay.chunk);
                gpa += seg_len[i];
        }
        ok = ok && table_add(s, s->out_hdr_gpa, sizeof(*s->out_hdr), true, 0);
        if (out_size > 0)
                ok = ok && table_add(s, s->out_hdr_gpa + sizeof(*s->out_hdr), out_size, true, lay.chunk);
        if (!ok || (!lay.indirect && s->ndesc > VMM_MAX_SEGS * 4 + 4))
                return -E2BIG;
        if (lay.indirect)
                for (unsigned i = 0; i + 1 < s->ndesc; i++) {
                        s->table[i].flags |= VRING_DESC_F_NEXT;
                        s->table[i].next = (uint16_t)(i + 1);
                }
        s->indirect = lay.indirect;
        s->out_size = out_size;
        /* A stale header would pass as a reply the backend never wrote. */
        s->out_hdr->unique = 0;
        s->out_hdr->len = 0;
        return 0;
}

int vmm_slot_add(struct vmm *v, struct vmm_slot *s)
{
        struct vmm_queue *q = &v->q[s->queue];
        uint16_t ids[VMM_MAX_SEGS * 4 + 4] = { 0 };
        unsigned n = s->indirect ? 1 : s->ndesc;
        if (s->in_flight || s->ndesc == 0 || n > VMM_MAX_SEGS * 4 + 4)
                return -EINVAL;
        if (n > q->nfree)
                return -ENOSPC;
        for (unsigned i = 0; i < n; i++)
                ids[i] = q->free_list[--q->nfree];
        if (s->indirect) {
                q->desc[ids[0]] = (struct vring_desc){
                        .addr = s->table_gpa, .len = s->ndesc * (uint32_t)sizeof(struct vring_desc),
                        .flags = VRING_DESC_F_INDIRECT,
                };
        } else {
                for (unsigned i = 0; i < n; i++) {
                        q->desc[ids[i]] = s->table[i];
                        if (i + 1 < n) {
                                q->desc[ids[i]].flags |= VRING_DESC_F_NEXT;
                                q->desc[ids[i]].next = ids[i + 1];
                        }
                }
        }
        s->head = ids[0];
        s->in_flight = true;
        q->state[s->head] = HEAD_INFLIGHT;
        q->slot_of[s->head] = s;
        q->chain_n[s->head] = (uint16_t)n;
        memcpy(&q->chain[(size_t)s->head * (VMM_MAX_SEGS * 4 + 4)], ids, n * sizeof(uint16_t));
        q->avail->ring[(uint16_t)(q->avail_idx + q->pending) % q->size] = s->head;
        q->pending++;
        return 0;
}

int vmm_queue_kick(struct vmm *v, unsigned qi)
{
        if (qi >= v->nq)
                return -EINVAL;
        struct vmm_queue *q = &v->q[qi];
        if (q->pending == 0)
                return 0;
        uint16_t old_idx = q->avail_idx;
        q->avail_idx = (uint16_t)(q->avail_idx + q->pending);
        q->pending = 0;
        __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
        /* The idx store must be visible before we read the backend's
         * suppression state, or both sides could skip the wake-up. */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (q->mode.honour_suppression) {
                bool skip;
                if (has_event_idx(v)) {
                        uint16_t avail_event = __atomic_load_n((uint16_t *)&q->used->ring[q->size],
                                                               __ATOMIC_RELAXED);
                        skip = !need_event(avail_event, q->avail_idx, old_idx);
                } else {
                        skip = __atomic_load_n(&q->used->flags, __ATOMIC_RELAXED) & VRING_USED_F_NO_NOTIFY;
                }
                if (skip) {
                        q->counters.kicks_avoided++;
                        return 0;
                }
        }
        uint64_t one = 1;
        if (write(q->kick_fd, &one, sizeof(one)) != sizeof(one))
                return vmm_fail(-errno, "kick");
        q->counters.kicks++;
        return 0;
}

/* Hands back up to max completed slots; leaves the rest in the used ring. */
static int slots_collect(struct vmm_queue *q, struct vmm_slot **ret, unsigned max)
{
        uint16_t used_idx = __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE);
        unsigned n = 0;
        while (q->last_used != used_idx && n < max) {
                struct vring_used_elem e = q->used->ring[q->last_used % q->size];
                q->last_used++;
                struct vmm_slot *s = e.id < q->size && q->state[e.id] == HEAD_INFLIGHT
                                             ? q->slot_of[e.id] : NULL;
                if (!s) {
                        fprintf(stderr, "vmm: used entry id %u len %u names no slot in flight\n",
                                e.id, e.len);
                        return -EPROTO;
                }
                q->slot_of[e.id] = NULL;
                chain_release(q, e.id);
                s->in_flight = false;
                s->used_len = e.len;
                ret[n++] = s;
        }
        q->counters.completions += n;
        return (int)n;
}

void vmm_queue_set_mode(struct vmm *v, unsigned qi, const struct vmm_queue_mode *mode)
{
        if (qi >= v->nq)
                return;
        struct vmm_queue *q = &v->q[qi];
        q->mode = *mode;
        /* Spinning needs no interrupts: without EVENT_IDX say so in the flags;
         * with it, a used_event left behind is not crossed again (until the
         * index wraps, one call in 65536). */
        uint16_t flags = mode->spin ? VRING_AVAIL_F_NO_INTERRUPT : 0;
        __atomic_store_n(&q->avail->flags, flags, __ATOMIC_RELEASE);
        if (mode->spin && has_event_idx(v))
                q->avail->ring[q->size] = (uint16_t)(q->last_used - 1);
}

void vmm_queue_counters(const struct vmm *v, unsigned qi, struct vmm_queue_counters *ret)
{
        *ret = qi < v->nq ? v->q[qi].counters : (struct vmm_queue_counters){ 0 };
}

int vmm_queue_reap(struct vmm *v, unsigned qi, struct vmm_slot **ret, unsigned max, int timeout_ms)
{
        if (qi >= v->nq || max == 0)
                return -EINVAL;
        struct vmm_queue *q = &v->q[qi];
        int64_t deadline = -1;
        for (;;) {
                int n = slots_collect(q, ret, max);
                if (n != 0)
                        return n;
                if (deadline < 0)
                        deadline = now_ms() + (timeout_ms < 0 ? v->timeout_ms : timeout_ms);
                if (q->mode.spin) {
                        /* Look at the clock only now and then: it costs more than the read. */
                        for (unsigned i = 0; i < 4096; i++) {
                                if (__atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) != q->last_used)
                                        break;
                                cpu_relax();
                        }
                        if (__atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) == q->last_used &&
                            now_ms() > deadline)
                                return -ETIMEDOUT;
                        continue;
                }
                /* A short spin first catches a reply that is microseconds
                 * away without the sleep and wake-up (halt-polling's idea). */
                if (q->mode.spin_us > 0) {
                        int64_t spin_end = now_ns() + (int64_t)q->mode.spin_us * 1000;
                        bool got = false;
                        do {
                                for (unsigned i = 0; i < 64 && !got; i++) {
                                        got = __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) != q->last_used;
                                        cpu_relax();
                                }
                        } while (!got && now_ns() < spin_end);
                        if (got)
                                continue;
                }
                /* Ask for a call at the next used entry, then look once more:
                 * the entry may have come before the request was seen. */
                if (has_event_idx(v))
                        __atomic_store_n(&q->avail->ring[q->size], q->last_used, __ATOMIC_RELAXED);
                __atomic_thread_fence(__ATOMIC_SEQ_CST);
                if (__atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) != q->last_used)
                        continue;
                int r = call_wait(q, deadline);
                if (r < 0)
                        return r;
        }
}

int vmm_slot_result(const struct vmm_slot *s, size_t *ret_out_len)
{
        const struct fuse_out_header *oh = s->out_hdr;
        size_t capacity = sizeof(*oh) + s->out_size;
        if (s->used_len < sizeof(*oh) || s->used_len > capacity)
                return -EPROTO;
        if (oh->unique != s->in->unique || oh->len < sizeof(*oh) || oh->len > s->used_len)
                return -EPROTO;
        if (oh->error > 0 || oh->error < -4095)
                return -EPROTO;
        if (ret_out_len)
                *ret_out_len = oh->len - sizeof(*oh);
        return oh->error;
}

/* ---- FUSE requests as descriptor chains ---- */

struct chain_builder {
        struct vring_desc d[VMM_MAX_SEGS * 4 + 4 + 300];
        unsigned n;
        bool overflow;
};

static void chain_add(struct chain_builder *b, uint64_t gpa, size_t len, bool writable, size_t chunk)
{
        if (!descs_append(b->d, &b->n, sizeof(b->d) / sizeof(b->d[0]), gpa, len, writable, chunk))
                b->overflow = true;
}

int vmm_op_submit(struct vmm *v, struct vmm_op *op)
{
        unsigned qi = op->hiprio ? 0 : (op->queue ? op->queue : 1);
        if (qi >= v->nq)
                return -EINVAL;
        op->queue = qi;
        struct vmm_queue *q = &v->q[qi];
        /* Large, so not on the stack; per thread, since one thread per queue
         * may submit at once (the queue's own state is that thread's alone). */
        static _Thread_local struct chain_builder b;
        memset(&b, 0, sizeof(b));

        size_t in_len = sizeof(struct fuse_in_header);
        for (unsigned i = 0; i < op->arg_cnt; i++)
                in_len += op->arg[i].iov_len;
        uint64_t gpa;
        struct fuse_in_header *ih = vmm_alloc(v, sizeof(*ih), &gpa);
        if (!ih)
                return -ENOMEM;
        op->unique = __atomic_add_fetch(&v->unique, 2, __ATOMIC_RELAXED);   /* threads: see b */
        *ih = (struct fuse_in_header){
                .len = (uint32_t)in_len, .opcode = op->opcode, .unique = op->unique,
                .nodeid = op->nodeid,
                .uid = op->uid ? op->uid : v->creds_set ? v->creds_uid : getuid(),
                .gid = op->gid ? op->gid : v->creds_set ? v->creds_gid : getgid(),
                .pid = op->pid ? op->pid : v->creds_set && v->creds_pid ? v->creds_pid : (uint32_t)getpid(),
                .total_extlen = op->total_extlen,
        };
        chain_add(&b, gpa, sizeof(*ih), false, op->chunk);
        for (unsigned i = 0; i < op->arg_cnt; i++) {
                if (op->arg[i].iov_len == 0)
                        continue;
                void *p = vmm_alloc(v, op->arg[i].iov_len, &gpa);
                if (!p)
                        return -ENOMEM;
                memcpy(p, op->arg[i].iov_base, op->arg[i].iov_len);
                chain_add(&b, gpa, op->arg[i].iov_len, false, op->chunk);
        }
        if (!op->no_reply) {
                struct fuse_out_header *oh = vmm_alloc(v, sizeof(*oh), &op->out_hdr_gpa);
                if (!oh)
                        return -ENOMEM;
                memset(oh, 0xa5, sizeof(*oh));
                chain_add(&b, op->out_hdr_gpa, sizeof(*oh), true, 0);
                if (op->out_size > 0) {
                        void *p = vmm_alloc(v, op->out_size, &op->out_gpa);
                        if (!p)
                                return -ENOMEM;
                        memset(p, 0, op->out_size);
                        chain_add(&b, op->out_gpa, op->out_size, true, op->chunk);
                }
        }
        if (b.overflow)
                return -E2BIG;

        if (op->indirect) {
                struct vring_desc *table = vmm_alloc(v, b.n * sizeof(*table), &gpa);
                if (!table)
                        return -ENOMEM;
                for (unsigned i = 0; i < b.n; i++) {
                        table[i] = b.d[i];
                        if (i + 1 < b.n) {
                                table[i].flags |= VRING_DESC_F_NEXT;
                                table[i].next = (uint16_t)(i + 1);
                        }
                }
                int r = vmm_desc_get(v, qi, 1, op->ids);
                if (r < 0)
                        return r;
                q->desc[op->ids[0]] = (struct vring_desc){
                        .addr = gpa, .len = (uint32_t)(b.n * sizeof(*table)),
                        .flags = VRING_DESC_F_INDIRECT,
                };
                op->ndesc = 1;
        } else {
                if (b.n > VMM_MAX_SEGS * 4 + 4)
                        return -E2BIG;
                int r = vmm_desc_get(v, qi, b.n, op->ids);
                if (r < 0)
                        return r;
                for (unsigned i = 0; i < b.n; i++) {
                        q->desc[op->ids[i]] = b.d[i];
                        if (i + 1 < b.n) {
                                q->desc[op->ids[i]].flags |= VRING_DESC_F_NEXT;
                                q->desc[op->ids[i]].next = op->ids[i + 1];
                        }
                }
                op->ndesc = b.n;
        }
        op->head = op->ids[0];
        return vmm_publish(v, qi, op->head, op->ndesc, op->ids);
}

int vmm_op_wait(struct vmm *v, struct vmm_op *op, int timeout_ms)
{
        int r = vmm_wait_used(v, op->queue, op->head, &op->used_len, timeout_ms);
        if (r == -ETIMEDOUT && timeout_ms < 0) {
                fprintf(stderr, "vmm: no reply to opcode %u (unique %llu) on queue %u\n",
                        op->opcode, (unsigned long long)op->unique, op->queue);
                return r;
        }
        if (r < 0)
                return r;
        op->error = 0;
        op->out_len = 0;
        if (op->no_reply) {
                if (op->used_len != 0)
                        fprintf(stderr, "vmm: opcode %u has no reply but used len is %u\n",
                                op->opcode, op->used_len);
                return 0;
        }
        struct fuse_out_header *oh = vmm_gpa_to_host(v, op->out_hdr_gpa, sizeof(*oh));
        size_t capacity = sizeof(*oh) + op->out_size;
        if (op->used_len < sizeof(*oh) || op->used_len > capacity) {
                fprintf(stderr, "vmm: opcode %u: used len %u outside [16, %zu]\n",
                        op->opcode, op->used_len, capacity);
                return -EPROTO;
        }
        if (oh->unique != op->unique || oh->len < sizeof(*oh) || oh->len > op->used_len) {
                fprintf(stderr, "vmm: opcode %u: bad out header (unique %llu/%llu, len %u, used %u)\n",
                        op->opcode, (unsigned long long)oh->unique,
                        (unsigned long long)op->unique, oh->len, op->used_len);
                return -EPROTO;
        }
        if (oh->error > 0 || oh->error < -4095) {
                fprintf(stderr, "vmm: opcode %u: bad error %d\n", op->opcode, oh->error);
                return -EPROTO;
        }
        op->error = oh->error;
        op->out_len = oh->len - sizeof(*oh);
        if (op->out_len > 0 && op->out)
                memcpy(op->out, vmm_gpa_to_host(v, op->out_gpa, op->out_len), op->out_len);
        return 0;
}

int vmm_op_run(struct vmm *v, struct vmm_op *op)
{
        int r = vmm_op_submit(v, op);
        if (r < 0)
                return r;
        return vmm_op_wait(v, op, -1);
}

int vmm_call(struct vmm *v, uint32_t opcode, uint64_t nodeid,
             const void *a1, size_t l1, const void *a2, size_t l2, const void *a3, size_t l3,
             void *out, size_t out_size, size_t *ret_out_len)
{
        struct vmm_op op = { .opcode = opcode, .nodeid = nodeid, .out = out, .out_size = out_size };
        const void *a[3] = { a1, a2, a3 };
        size_t l[3] = { l1, l2, l3 };
        for (unsigned i = 0; i < 3; i++)
                if (a[i] && l[i])
                        op.arg[op.arg_cnt++] = (struct iovec){ (void *)a[i], l[i] };
        int r = vmm_op_run(v, &op);
        if (r < 0)
                return r;
        if (ret_out_len)
                *ret_out_len = op.out_len;
        return op.error;
}

/* ---- connection ---- */

uint64_t vmm_features(const struct vmm *v) { return v->features; }
uint64_t vmm_protocol_features(const struct vmm *v) { return v->protocol_features; }
unsigned vmm_backend_queue_num(const struct vmm *v) { return v->backend_queues; }

int vmm_get_config(struct vmm *v, struct virtio_fs_config *ret)
{
        if (!(v->protocol_features & (1ull << VU_PROTO_CONFIG)))
                return -EOPNOTSUPP;
        struct vu_msg m = { .request = VU_GET_CONFIG, .size = 12 + sizeof(*ret) };
        m.p.config.size = sizeof(*ret);
        int r = vu_send(v, &m, NULL, 0);
        if (r < 0)
                return r;
        struct vu_msg reply;
        r = vu_recv_reply(v, VU_GET_CONFIG, &reply);
        if (r < 0)
                return r;
        if (reply.size != 12 + sizeof(*ret) || reply.p.config.size != sizeof(*ret))
                return vmm_fail(-EPROTO, "GET_CONFIG reply size");
        memcpy(ret, reply.p.config.region, sizeof(*ret));
        return 0;
}
unsigned vmm_request_queues(const struct vmm *v) { return v->nq - 1; }
unsigned vmm_queue_size(const struct vmm *v) { return v->q[0].size; }
int vmm_socket(const struct vmm *v) { return v->sock; }
void vmm_set_creds(struct vmm *v, uint32_t uid, uint32_t gid, uint32_t pid)
{
        v->creds_set = true;
        v->creds_uid = uid;
        v->creds_gid = gid;
        v->creds_pid = pid;
}

void vmm_clear_creds(struct vmm *v)
{
        v->creds_set = false;
}

uint32_t vmm_init_flags(const struct vmm *v) { return v->init_flags; }

void vmm_set_init_flags(struct vmm *v, uint32_t flags) { v->init_flags = flags; }

static int negotiate(struct vmm *v, const struct vmm_config *cfg)
{
        uint64_t features;
        int r = vu_get_u64(v, VU_GET_FEATURES, &features);
        if (r < 0)
                return r;
        uint64_t want = (1ull << 32) /* VERSION_1 */ | (1ull << VIRTIO_RING_F_INDIRECT_DESC) |
                        (1ull << VU_F_PROTOCOL_FEATURES);
        if (!cfg->no_event_idx)
                want |= 1ull << VIRTIO_RING_F_EVENT_IDX;
        if (!(features & (1ull << 32)))
                return vmm_fail(-EPROTO, "backend does not offer VIRTIO_F_VERSION_1");
        v->features = features & want;

        if (v->features & (1ull << VU_F_PROTOCOL_FEATURES)) {
                uint64_t pf;
                r = vu_get_u64(v, VU_GET_PROTOCOL_FEATURES, &pf);
                if (r < 0)
                        return r;
                pf &= (1ull << VU_PROTO_MQ) | (1ull << VU_PROTO_REPLY_ACK) |
                      (1ull << VU_PROTO_CONFIGURE_MEM_SLOTS) | (1ull << VU_PROTO_CONFIG);
                /* Acks start only after SET_PROTOCOL_FEATURES took effect. */
                r = vu_set_u64(v, VU_SET_PROTOCOL_FEATURES, pf);
                if (r < 0)
                        return r;
                v->protocol_features = pf;
                if (pf & (1ull << VU_PROTO_MQ)) {
                        uint64_t qn;
                        r = vu_get_u64(v, VU_GET_QUEUE_NUM, &qn);
                        if (r < 0)
                                return r;
                        v->backend_queues = (unsigned)qn;
                }
        }
        r = vu_request(v, VU_SET_OWNER, NULL, 0, NULL, 0);
        if (r < 0)
                return r;
        return vu_set_u64(v, VU_SET_FEATURES, v->features);
}

static int vmm_start(struct vmm *v, const struct vmm_config *cfg_in)
{
        struct vmm_config cfg = cfg_in ? *cfg_in : (struct vmm_config){ 0 };
        if (!cfg.mem_size)
                cfg.mem_size = 128u << 20;
        if (!cfg.request_queues)
                cfg.request_queues = 1;
        if (!cfg.queue_size)
                cfg.queue_size = 1024;
        if (!cfg.timeout_ms)
                cfg.timeout_ms = 10000;
        if (cfg.request_queues + 1 > VMM_MAX_QUEUES || cfg.queue_size > 32768 ||
            (cfg.queue_size & (cfg.queue_size - 1)))
                return -EINVAL;
        v->timeout_ms = cfg.timeout_ms;
        v->nq = cfg.request_queues + 1;

        int r = mem_setup(v, cfg.mem_size);
        if (r < 0)
                return r;
        r = negotiate(v, &cfg);
        if (r < 0)
                return r;
        if (v->backend_queues && v->nq > v->backend_queues) {
                fprintf(stderr, "vmm: backend has %u queues, %u wanted\n", v->backend_queues, v->nq);
                return -ENOTSUP;
        }
        r = mem_send(v, cfg.add_mem_reg);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < v->nq; i++) {
                v->q[i].size = cfg.queue_size;
                r = queue_setup(v, i);
                if (r < 0)
                        return r;
        }
        return 0;
}

int vmm_connect_fd(int sock, const struct vmm_config *cfg, struct vmm **ret)
{
        struct vmm *v = calloc(1, sizeof(*v));
        if (!v) {
                close(sock);
                return -ENOMEM;
        }
        v->sock = sock;
        v->memfd = -1;
        v->extra_fd = -1;
        int r = vmm_start(v, cfg);
        if (r < 0) {
                vmm_drop(v);
                return r;
        }
        *ret = v;
        return 0;
}

int vmm_connect(const char *socket_path, const struct vmm_config *cfg, struct vmm **ret)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(socket_path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, socket_path);
        int wait_ms = cfg && cfg->connect_timeout_ms ? cfg->connect_timeout_ms : 5000;
        int64_t deadline = now_ms() + wait_ms;
        for (;;) {
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (s < 0)
                        return -errno;
                if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
                        return vmm_connect_fd(s, cfg, ret);
                int err = errno;
                close(s);
                if ((err != ECONNREFUSED && err != ENOENT && err != EAGAIN) || now_ms() > deadline)
                        return vmm_fail(-err, socket_path);
                usleep(20000);
        }
}

void vmm_drop(struct vmm *v)
{
        if (!v)
                return;
        if (v->sock >= 0)
                close(v->sock);
        for (unsigned i = 0; i < VMM_MAX_QUEUES; i++)
                queue_free(&v->q[i]);
        if (v->mem)
                munmap(v->mem, v->mem_size);
        if (v->memfd >= 0)
                close(v->memfd);
        extra_forget(v);
        for (unsigned i = 0; i < v->nslot_arrays; i++)
                free(v->slot_arrays[i]);
        free(v);
}

void vmm_free(struct vmm *v)
{
        if (!v)
                return;
        /* Stop every ring the way QEMU does on device stop; give up on the
         * first failure (the backend may be gone or have broken the device). */
        for (unsigned i = 0; i < v->nq && !v->hung_up; i++) {
                int saved = v->timeout_ms;
                v->timeout_ms = 2000;
                int r = vmm_get_vring_base(v, i, NULL);
                v->timeout_ms = saved;
                if (r < 0)
                        break;
        }
        vmm_drop(v);
}
