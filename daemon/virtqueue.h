/* SPDX-License-Identifier: GPL-2.0-or-later */
/* virtqueue.h — split virtqueues (virtio 1.x, 2.7), device side.
 *
 * The rings live in guest memory; every index and address read from them is
 * untrusted.  A malformed chain marks the queue broken (logged once, the
 * frontend's error eventfd written): from then on vq_pop() returns -EIO and
 * the queue stays dead until the frontend sets it up again.  Nothing here
 * allocates: an element's iovecs live in a vq_elem the caller owns (one per
 * queue thread).  An indirect table is read where it lies in guest memory,
 * each descriptor once, as the ring's own table is; one that crosses from one
 * memory region into the next (or is misaligned) is copied into a buffer
 * inside struct vq first.
 *
 * Threads: vq_pop(), vq_push(), vq_notify() and vq_set_notification()
 * belong to the one queue thread (deferred completions are handed to it,
 * queue-thread.c), so the hot path takes no lock.  Ring set-up and teardown
 * (vq_set_rings/reset/detach) run on the main thread only while the queue
 * thread is stopped (joined); while it is, a deferred completion on another
 * thread pushes with vq_complete_stopped(), which `lock` serialises with
 * them.  The main thread may swap the call fd while the queue thread runs
 * (QEMU does, to mask interrupts): vq_set_call_fd() waits until the old fd
 * is no longer in use.  vq_set_broken() may run anywhere (`lock` guards
 * err_fd). */
#pragma once

#include <linux/virtio_ring.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "guest-memory.h"

struct rstate_ring;

#define VQ_MAX_SIZE 1024        /* largest queue size we accept (power of two) */
/* iovecs per element: a chain has at most VQ_MAX_SIZE descriptors, and a
 * descriptor crossing a region boundary takes one more. */
#define VQ_MAX_IOV (2 * VQ_MAX_SIZE)

struct vq_elem {
        uint16_t head;        /* descriptor index: the id that goes into the used ring */
        unsigned n_readable;  /* iov[0 .. n_readable): device-readable (the request) */
        unsigned n_writable;  /* iov[n_readable .. +n_writable): device-writable (the reply) */
        uint64_t readable_len, writable_len;
        struct iovec iov[VQ_MAX_IOV];
};

struct vq {
        const struct gm *mem;
        const struct gm_region *hint; /* the region the last translation hit (queue thread) */
        unsigned index;               /* for log messages */
        unsigned num;                 /* queue size; 0 = not set up */
        struct vring_desc *desc;
        struct vring_avail *avail;
        struct vring_used *used;
        bool event_idx;               /* VIRTIO_RING_F_EVENT_IDX negotiated */
        bool indirect;                /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
        uint16_t last_avail_idx;      /* next avail entry to pop */
        uint16_t used_idx;            /* our copy of used->idx */
        uint16_t signalled_used;      /* used_idx at the last interrupt (EVENT_IDX) */
        bool signalled_used_valid;
        _Atomic int call_fd;          /* eventfd to interrupt the guest; -1 = none (not owned) */
        _Atomic uint32_t notify_seq;  /* odd while vq_notify() may write call_fd */
        int err_fd;                   /* eventfd to report a broken queue; -1 = none (not owned) */
        atomic_bool broken;
        /* --resume: this ring's hot part of the stored state
         * (resume-state.h), kept up to date by vq_pop()/vq_push(); NULL
         * without --resume. */
        struct rstate_ring *rs;
        pthread_mutex_t lock;         /* the slow paths only: see above */
        struct vring_desc indirect_table[VQ_MAX_SIZE];  /* copy of an indirect table that is not contiguous */
};

void vq_init(struct vq *vq, const struct gm *mem, unsigned index);
void vq_destroy(struct vq *vq);
/* Features from SET_FEATURES (EVENT_IDX, INDIRECT_DESC). */
void vq_set_features(struct vq *vq, uint64_t features);
/* Bytes each ring part takes for a queue of num entries (event fields included). */
void vq_ring_sizes(unsigned num, uint64_t *desc, uint64_t *avail, uint64_t *used);
/* Points the queue at its rings (host pointers, already bounds-checked for
 * vq_ring_sizes(num)); reads the current used index.  -EINVAL for a bad num
 * (zero, not a power of two, > VQ_MAX_SIZE) or misaligned rings. */
int vq_set_rings(struct vq *vq, unsigned num, void *desc, void *avail, void *used);
/* SET_VRING_BASE: the next avail entry to pop (ring stopped). */
void vq_set_base(struct vq *vq, uint16_t last_avail_idx);
/* Keeps this ring's hot part of the stored state in rs from now on (NULL:
 * none); copies the current positions into it.  The queue thread must be
 * stopped (it writes there without a lock). */
void vq_set_state(struct vq *vq, struct rstate_ring *rs);
/* Takes the ring up where a previous worker left it (after vq_set_rings()):
 * reconciles the stored positions and in-flight heads in vq->rs with the
 * guest's rings, which are the truth, so that a SIGKILL between any two of
 * vq_pop()'s and vq_push()'s stores is told apart:
 *   a head recorded in flight but still ahead in the avail ring (the pop
 *   was not finished) is popped again, not replayed;
 *   a used element whose used->idx store was not done is written again;
 *   a used->idx that moved past the stored used_idx clears those heads.
 * Fills heads[] (room for VQ_MAX_SIZE) with the heads still in flight, to be
 * answered first.  -EBADMSG when the stored positions and the rings
 * disagree (the caller starts fresh). */
int vq_resume(struct vq *vq, uint16_t last_avail_idx, uint16_t *heads, unsigned *n_heads);
/* The chain of an in-flight head (vq_resume()), walked again from the
 * descriptor table: 1, or -EIO (the queue is broken) for a malformed one. */
int vq_elem_at(struct vq *vq, uint16_t head, struct vq_elem *e);
/* Interrupts the guest whatever it asked (after a resume: a reply pushed
 * before the crash may not have been signalled). */
void vq_notify_force(struct vq *vq);
/* Forgets the rings (the queue can be set up again). */
void vq_reset(struct vq *vq);
/* The ring is stopped (GET_VRING_BASE): drops the ring pointers, keeping
 * last_avail_idx, so that nothing — a late vq_push()/vq_notify() from any
 * thread included — writes to the ring any more.  vq_set_rings() attaches
 * it again. */
void vq_detach(struct vq *vq);

/* Pops the next available chain into *e.  Returns 1 with *e filled, 0 when
 * the ring is empty, -EIO when the queue is (or has just become) broken. */
int vq_pop(struct vq *vq, struct vq_elem *e);
/* Returns the chain `head` to the guest with `len` bytes written (nothing
 * when the ring is detached or head is out of range). */
void vq_push(struct vq *vq, uint16_t head, uint32_t len);
/* Interrupts the guest if it asked for it (NO_INTERRUPT / used_event). */
void vq_notify(struct vq *vq);
/* Main thread: the call fd (-1: none).  On return the old one is no longer
 * used by vq_notify() and may be closed. */
void vq_set_call_fd(struct vq *vq, int fd);
void vq_set_err_fd(struct vq *vq, int fd);
/* vq_push() + vq_notify() from another thread while the queue thread is
 * stopped (a deferred request finished during a ring stop or reset). */
void vq_complete_stopped(struct vq *vq, uint16_t head, uint32_t len);
/* true when there is nothing to pop (acquire read of avail->idx).  Inline:
 * the queue thread asks before every sleep. */
static inline bool vq_avail_empty(struct vq *vq)
{
        if (!vq->avail)
                return true;
        return __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE) == vq->last_avail_idx;
}
/* Asks the guest to kick (enable) or not to kick (disable) on new requests.
 * After enabling, re-check vq_avail_empty() before sleeping. */
void vq_set_notification(struct vq *vq, bool enable);
static inline bool vq_is_broken(struct vq *vq)
{
        return atomic_load_explicit(&vq->broken, memory_order_relaxed);
}
/* Marks the queue broken, logging `why` once. */
void vq_set_broken(struct vq *vq, const char *why);
