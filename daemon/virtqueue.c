/* SPDX-License-Identifier: GPL-2.0-or-later */
/* virtqueue.c — see virtqueue.h.
 *
 * Memory ordering (the guest runs on other CPUs): the avail index is read
 * with acquire so the ring entries and descriptors it publishes are seen;
 * used entries are written before a release store of the used index; a full
 * barrier separates our index updates from reading the guest's event index
 * or flags (and the guest's from ours), as the spec's 2.7.7/2.7.10 require. */
#include "virtqueue.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crash-point.h"
#include "log.h"
#include "resume-state.h"

/* The order of the stored state's updates matters only to a successor after
 * our death (a SIGKILL: every store done so far is in the shared pages), so a
 * compiler barrier, no CPU fence, keeps it: nothing on the hot path costs more
 * than a store. */
#define state_order() __atomic_signal_fence(__ATOMIC_SEQ_CST)

#define load16(p)        __atomic_load_n((p), __ATOMIC_RELAXED)
#define store16(p, v)    __atomic_store_n((p), (v), __ATOMIC_RELAXED)

void vq_init(struct vq *vq, const struct gm *mem, unsigned index)
{
        memset(vq, 0, offsetof(struct vq, indirect_table));
        vq->mem = mem;
        vq->hint = &mem->regions[0];
        vq->index = index;
        atomic_init(&vq->call_fd, -1);
        atomic_init(&vq->notify_seq, 0);
        vq->err_fd = -1;
        atomic_init(&vq->broken, false);
        pthread_mutex_init(&vq->lock, NULL);
}

void vq_destroy(struct vq *vq)
{
        pthread_mutex_destroy(&vq->lock);
}

void vq_set_call_fd(struct vq *vq, int fd)
{
        uint32_t seq;

        atomic_exchange_explicit(&vq->call_fd, fd, memory_order_seq_cst);
        /* Pairs with the fence in vq_notify(): either the queue thread's
         * next load of call_fd sees the new fd, or we see it inside
         * vq_notify() (odd notify_seq) and wait until it is out of it, with
         * the old fd written or not.  Then the caller may close the old fd. */
        atomic_thread_fence(memory_order_seq_cst);
        seq = atomic_load_explicit(&vq->notify_seq, memory_order_relaxed);
        if (seq & 1)
                while (atomic_load_explicit(&vq->notify_seq, memory_order_acquire) == seq)
                        sched_yield();
}

void vq_set_err_fd(struct vq *vq, int fd)
{
        pthread_mutex_lock(&vq->lock);
        vq->err_fd = fd;
        pthread_mutex_unlock(&vq->lock);
}

void vq_set_features(struct vq *vq, uint64_t features)
{
        vq->event_idx = features & (1ull << VIRTIO_RING_F_EVENT_IDX);
        vq->indirect = features & (1ull << VIRTIO_RING_F_INDIRECT_DESC);
}

void vq_ring_sizes(unsigned num, uint64_t *desc, uint64_t *avail, uint64_t *used)
{
        *desc = (uint64_t)num * sizeof(struct vring_desc);
        *avail = 4 + (uint64_t)num * 2 + 2;                           /* flags, idx, ring, used_event */
        *used = 4 + (uint64_t)num * sizeof(struct vring_used_elem) + 2; /* flags, idx, ring, avail_event */
}

int vq_set_rings(struct vq *vq, unsigned num, void *desc, void *avail, void *used)
{
        if (num == 0 || num > VQ_MAX_SIZE || (num & (num - 1)))
                return -EINVAL;
        if (!desc || !avail || !used || ((uintptr_t)desc & 15) || ((uintptr_t)avail & 1) ||
            ((uintptr_t)used & 3))
                return -EINVAL;
        pthread_mutex_lock(&vq->lock);
        vq->num = num;
        vq->desc = desc;
        vq->avail = avail;
        vq->used = used;
        vq->used_idx = __atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE);
        vq->signalled_used_valid = false;
        if (vq->rs) {
                vq->rs->used_idx = vq->used_idx;
                vq->rs->last_avail_idx = vq->last_avail_idx;
        }
        atomic_store(&vq->broken, false);
        pthread_mutex_unlock(&vq->lock);
        return 0;
}

void vq_reset(struct vq *vq)
{
        vq_detach(vq);
        pthread_mutex_lock(&vq->lock);
        vq->last_avail_idx = 0;
        vq->used_idx = 0;
        vq->signalled_used_valid = false;
        if (vq->rs)
                memset(vq->rs, 0, sizeof(*vq->rs));
        atomic_store(&vq->broken, false);
        pthread_mutex_unlock(&vq->lock);
}

void vq_detach(struct vq *vq)
{
        pthread_mutex_lock(&vq->lock);
        vq->num = 0;
        vq->desc = NULL;
        vq->avail = NULL;
        vq->used = NULL;
        pthread_mutex_unlock(&vq->lock);
}

void vq_set_broken(struct vq *vq, const char *why)
{
        if (atomic_exchange(&vq->broken, true))
                return;
        log_error("virtqueue %u is broken: %s; it stays stopped until the frontend resets it",
                  vq->index, why);
        /* Any thread, once per ring: a lock is fine here. */
        pthread_mutex_lock(&vq->lock);
        if (vq->err_fd >= 0)
                (void)eventfd_write(vq->err_fd, 1);
        pthread_mutex_unlock(&vq->lock);
}

static uint16_t *used_event(struct vq *vq)
{
        return &vq->avail->ring[vq->num];
}

static uint16_t *avail_event(struct vq *vq)
{
        return (uint16_t *)&vq->used->ring[vq->num];
}

/* One descriptor, each field read exactly once (the guest may rewrite it). */
static inline __attribute__((always_inline)) void read_desc(const struct vring_desc *d,
                                                            struct vring_desc *out)
{
        out->addr = __atomic_load_n(&d->addr, __ATOMIC_RELAXED);
        out->len = __atomic_load_n(&d->len, __ATOMIC_RELAXED);
        out->flags = __atomic_load_n(&d->flags, __ATOMIC_RELAXED);
        out->next = __atomic_load_n(&d->next, __ATOMIC_RELAXED);
}

/* Switches the walk to the indirect table that d points at; returns NULL or
 * what is wrong.  The table is walked where it lies (each descriptor read
 * once, like the ring's own) when one region holds it and it is aligned; else
 * it is copied, so that the walk always sees one array. */
static const char *enter_indirect(struct vq *vq, const struct vring_desc *d,
                                  const struct vring_desc **table, unsigned *max)
{
        const struct vring_desc *host;
        unsigned n;

        if (!vq->indirect)
                return "indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC";
        if (d->flags & VRING_DESC_F_NEXT)
                return "indirect descriptor with NEXT set";
        if (d->len == 0 || d->len % sizeof(struct vring_desc))
                return "indirect table length not a multiple of 16";
        n = d->len / sizeof(struct vring_desc);
        if (n > VQ_MAX_SIZE)
                return "indirect table too long";
        host = gm_gpa_to_host_hinted(vq->mem, &vq->hint, d->addr, d->len);
        if (!host || ((uintptr_t)host & (_Alignof(struct vring_desc) - 1))) {
                if (gm_copy_from(vq->mem, d->addr, vq->indirect_table, d->len) < 0)
                        return "indirect table outside guest memory";
                host = vq->indirect_table;
        }
        *table = host;
        *max = n;
        return NULL;
}

/* Walks the chain starting at head into e; returns NULL or what is wrong.
 * Per the spec (2.7.5.3.2) a chain may be zero or more direct descriptors
 * followed by one indirect descriptor, whose WRITE flag is ignored. */
static const char *walk_chain(struct vq *vq, uint16_t head, struct vq_elem *e)
{
        const struct vring_desc *table = vq->desc;
        unsigned max = vq->num, count = 0, n_iov = 0, n_readable = 0;
        uint64_t readable = 0, writable = 0;
        bool indirect = false, writing = false;
        unsigned idx = head;
        const char *why;

        e->head = head;
        const struct gm_region *g = vq->hint;

        for (;;) {
                struct vring_desc d;
                uint64_t off;
                int r;

                read_desc(&table[idx], &d);
                if (__builtin_expect(d.flags & VRING_DESC_F_INDIRECT, 0)) {
                        if (indirect)
                                return "nested indirect descriptor";
                        why = enter_indirect(vq, &d, &table, &max);
                        if (why)
                                return why;
                        indirect = true;
                        count = 0;
                        idx = 0;
                        continue;
                }
                if (++count > max)
                        return "descriptor loop or chain longer than the table";
                if (d.flags & VRING_DESC_F_WRITE) {
                        if (!writing) {
                                writing = true;
                                n_readable = n_iov;
                        }
                        writable += d.len;
                } else {
                        if (writing)
                                return "device-readable descriptor after a device-writable one";
                        readable += d.len;
                }
                /* gm_map_hinted(), spelled out so that the hint and the
                 * count stay in registers for the whole walk. */
                off = d.addr - g->gpa;
                if (__builtin_expect(off < g->size && (uint64_t)d.len - 1 < g->size - off &&
                                     n_iov < VQ_MAX_IOV, 1)) {
                        e->iov[n_iov].iov_base = g->host + off;
                        e->iov[n_iov].iov_len = d.len;
                        n_iov++;
                } else {
                        /* Copies whose address is taken, so that g and n_iov
                         * are not forced out of registers on the fast path. */
                        const struct gm_region *hint = g;
                        unsigned n = n_iov;

                        r = gm_map_search(vq->mem, &hint, d.addr, d.len, e->iov, VQ_MAX_IOV, &n);
                        vq->hint = g = hint;
                        n_iov = n;
                        if (r < 0)
                                return r == -ENOBUFS ? "too many iovecs for one chain"
                                                     : "descriptor address outside guest memory";
                }
                if (!(d.flags & VRING_DESC_F_NEXT))
                        break;
                idx = d.next;
                if (idx >= max)
                        return "next descriptor index out of range";
        }
        /* Checked once: at most 2 * VQ_MAX_SIZE lengths of 32 bits cannot
         * wrap the 64-bit sums, and each length alone was mapped whole. */
        if ((readable | writable) > UINT32_MAX)
                return "chain length overflows 32 bits";
        if (!writing)
                n_readable = n_iov;
        e->n_readable = n_readable;
        e->n_writable = n_iov - n_readable;
        e->readable_len = readable;
        e->writable_len = writable;
        return NULL;
}

int vq_pop(struct vq *vq, struct vq_elem *e)
{
        uint16_t avail_idx, head;
        const char *why;

        if (atomic_load_explicit(&vq->broken, memory_order_relaxed) || !vq->avail)
                return -EIO;
        if (atomic_load_explicit(&vq->mem->lost, memory_order_relaxed)) {
                vq_set_broken(vq, "a guest memory region shrank under the device");
                return -EIO;
        }
        avail_idx = __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
        if ((uint16_t)(avail_idx - vq->last_avail_idx) > vq->num) {
                vq_set_broken(vq, "avail index moved by more than the queue size");
                return -EIO;
        }
        if (avail_idx == vq->last_avail_idx)
                return 0;
        head = load16(&vq->avail->ring[vq->last_avail_idx & (vq->num - 1)]);
        if (head >= vq->num) {
                vq_set_broken(vq, "head descriptor index out of range");
                return -EIO;
        }
        why = walk_chain(vq, head, e);
        if (why) {
                vq_set_broken(vq, why);
                return -EIO;
        }
        vq->last_avail_idx++;
        if (__builtin_expect(vq->rs != NULL, 0)) {
                /* In flight first, then the position: a death in between
                 * leaves a recorded head still ahead in the avail ring, which
                 * vq_resume() pops again instead of replaying. */
                vq->rs->inflight[head] = 1;
                state_order();
                __atomic_store_n(&vq->rs->last_avail_idx, vq->last_avail_idx, __ATOMIC_RELAXED);
        }
        return 1;
}

/* The used element is written, the used index not yet moved (nothing but
 * our private copy changes between the two named points, so one check
 * serves both): out of line, so that the push keeps its registers. */
#if SLUICE_TEST_HOOKS
static void __attribute__((noinline, cold)) push_crash_points_hit(void)
{
        crash_point_hit("after-used-write");
        crash_point_hit("before-used-index");
}

static inline void push_crash_points(void)
{
        if (__builtin_expect(atomic_load_explicit(&crash_point_armed, memory_order_relaxed), 0))
                push_crash_points_hit();
}
#else
static inline void push_crash_points(void)
{
}
#endif

void vq_push(struct vq *vq, uint16_t head, uint32_t len)
{
        struct vring_used_elem *u;

        /* Detached (a stopped ring) or a head that is not one: nothing to write. */
        if (vq->used && head < vq->num) {
                u = &vq->used->ring[vq->used_idx & (vq->num - 1)];
                __atomic_store_n(&u->id, head, __ATOMIC_RELAXED);
                __atomic_store_n(&u->len, len, __ATOMIC_RELAXED);
                vq->used_idx++;
                push_crash_points();
                __atomic_store_n(&vq->used->idx, vq->used_idx, __ATOMIC_RELEASE);
                if (__builtin_expect(vq->rs != NULL, 0)) {
                        /* After the guest's used->idx: a death before it
                         * leaves the head in flight (answered again, the
                         * guest saw nothing); after it, vq_resume() reads
                         * the used ring between the stored used_idx and the
                         * guest's to clear what was answered. */
                        state_order();
                        vq->rs->inflight[head] = 0;
                        state_order();
                        __atomic_store_n(&vq->rs->used_idx, vq->used_idx, __ATOMIC_RELAXED);
                }
        }
}

/* The spec's vring_need_event(): has the index passed `event` in (old, new]? */
static bool need_event(uint16_t event, uint16_t new_idx, uint16_t old_idx)
{
        return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old_idx);
}

/* Called after a full fence (vq_notify()). */
static bool should_notify(struct vq *vq)
{
        uint16_t old_idx, new_idx;
        bool valid;

        if (!vq->event_idx)
                return !(load16(&vq->avail->flags) & VRING_AVAIL_F_NO_INTERRUPT);
        valid = vq->signalled_used_valid;
        old_idx = vq->signalled_used;
        new_idx = vq->signalled_used = vq->used_idx;
        vq->signalled_used_valid = true;
        return !valid || need_event(load16(used_event(vq)), new_idx, old_idx);
}

/* eventfd_write() without its wrapper: glibc's write() is a cancellation
 * point and brackets the system call with cancellation bookkeeping, which no
 * queue thread needs (none is ever cancelled): the same write(2), a third of
 * the instructions. */
static void call_guest(int fd)
{
        static const uint64_t one = 1;

        (void)syscall(SYS_write, fd, &one, sizeof(one));
}

void vq_notify(struct vq *vq)
{
        uint32_t seq = atomic_load_explicit(&vq->notify_seq, memory_order_relaxed);
        int fd;

        if (!vq->used)
                return;
        /* Odd while we may use call_fd: vq_set_call_fd() waits for even
         * before its caller closes the old fd. */
        atomic_store_explicit(&vq->notify_seq, seq + 1, memory_order_relaxed);
        /* One full fence for two reasons: our used->idx store must be visible
         * before we read the guest's suppression state (or both sides could
         * skip the wake-up), and our notify_seq store before we read call_fd
         * (vq_set_call_fd() has the mirror fence). */
        atomic_thread_fence(memory_order_seq_cst);
        fd = atomic_load_explicit(&vq->call_fd, memory_order_relaxed);
        if (fd >= 0 && should_notify(vq))
                call_guest(fd);
        atomic_store_explicit(&vq->notify_seq, seq + 2, memory_order_release);
}

void vq_complete_stopped(struct vq *vq, uint16_t head, uint32_t len)
{
        pthread_mutex_lock(&vq->lock);
        vq_push(vq, head, len);
        vq_notify(vq);
        pthread_mutex_unlock(&vq->lock);
}

void vq_set_notification(struct vq *vq, bool enable)
{
        if (!vq->used)
                return;
        if (vq->event_idx) {
                /* Kick when the guest publishes past what we have taken; while
                 * polling, an event index one behind is never crossed. */
                store16(avail_event(vq), enable ? vq->last_avail_idx
                                                : (uint16_t)(vq->last_avail_idx - 1));
        } else {
                uint16_t flags = load16(&vq->used->flags);

                store16(&vq->used->flags, enable ? (uint16_t)(flags & ~VRING_USED_F_NO_NOTIFY)
                                                 : (uint16_t)(flags | VRING_USED_F_NO_NOTIFY));
        }
        if (enable)
                /* Publish before the caller re-checks avail->idx (no lost kick). */
                atomic_thread_fence(memory_order_seq_cst);
}

void vq_set_state(struct vq *vq, struct rstate_ring *rs)
{
        /* the queue thread is stopped; a deferred completion
         * (vq_complete_stopped()) may push meanwhile, under the lock */
        pthread_mutex_lock(&vq->lock);
        vq->rs = rs;
        if (rs) {
                rs->last_avail_idx = vq->last_avail_idx;
                rs->used_idx = vq->used_idx;
        }
        pthread_mutex_unlock(&vq->lock);
}

int vq_resume(struct vq *vq, uint16_t last_avail_idx, uint16_t *heads, unsigned *n_heads)
{
        struct rstate_ring *rs = vq->rs;
        uint16_t guest_used, avail_idx, stored_used;
        unsigned mask, n = 0;

        *n_heads = 0;
        if (!rs || !vq->used)
                return -EBADMSG;
        mask = vq->num - 1;
        guest_used = __atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE);
        stored_used = rs->used_idx;
        /* Published but not cleared: those heads were answered. */
        if ((uint16_t)(guest_used - stored_used) > vq->num)
                return -EBADMSG;
        for (uint16_t k = stored_used; k != guest_used; k++) {
                uint32_t id = __atomic_load_n(&vq->used->ring[k & mask].id, __ATOMIC_RELAXED);

                if (id < vq->num)
                        rs->inflight[id] = 0;
        }
        rs->used_idx = guest_used;
        /* Recorded but the position not moved: still ahead in the avail
         * ring, so it is popped again as a new request. */
        avail_idx = __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
        if ((uint16_t)(avail_idx - last_avail_idx) > vq->num)
                return -EBADMSG;
        for (uint16_t k = last_avail_idx; k != avail_idx; k++) {
                uint16_t h = __atomic_load_n(&vq->avail->ring[k & mask], __ATOMIC_RELAXED);

                if (h < vq->num)
                        rs->inflight[h] = 0;
        }
        for (unsigned h = 0; h < vq->num; h++)
                if (rs->inflight[h])
                        heads[n++] = (uint16_t)h;
        for (unsigned h = vq->num; h < VQ_MAX_SIZE; h++)
                rs->inflight[h] = 0;
        /* Every head taken is answered or in flight: anything else means the
         * positions do not belong to these rings. */
        if ((uint16_t)(last_avail_idx - guest_used) != n)
                return -EBADMSG;
        vq->last_avail_idx = last_avail_idx;
        vq->used_idx = guest_used;
        rs->last_avail_idx = last_avail_idx;
        *n_heads = n;
        return 0;
}

int vq_elem_at(struct vq *vq, uint16_t head, struct vq_elem *e)
{
        const char *why;

        if (!vq->desc || head >= vq->num)
                return -EIO;
        why = walk_chain(vq, head, e);
        if (why) {
                vq_set_broken(vq, why);
                return -EIO;
        }
        return 1;
}

void vq_notify_force(struct vq *vq)
{
        int fd = atomic_load_explicit(&vq->call_fd, memory_order_relaxed);

        vq->signalled_used = vq->used_idx;
        vq->signalled_used_valid = true;
        if (fd >= 0 && vq->used)
                call_guest(fd);
}

void vq_set_base(struct vq *vq, uint16_t last_avail_idx)
{
        vq->last_avail_idx = last_avail_idx;
        if (vq->rs)
                vq->rs->last_avail_idx = last_avail_idx;
}
