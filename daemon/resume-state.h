/* SPDX-License-Identifier: GPL-2.0-or-later */
/* resume-state.h — the transport's `state` memfd: what a successor needs to
 * take up the same vhost-user device (fd-store.h keeps the fds it names).
 *
 * Two parts with two consistency schemes:
 *  - the configuration (features, owner, memory table, each ring's size,
 *    addresses, enable state and which eventfds it has): changed on the main
 *    thread only, by vhost-user messages, so rarely that a copy per change is
 *    cheap.  It is kept twice; a change writes the copy not in use (with a
 *    generation and a checksum), then flips `active` with one store.  A crash
 *    at any instruction leaves the active copy whole; garbage or a torn flip
 *    fails the checksum.
 *  - each ring's hot part (rstate_ring): last_avail_idx, used_idx and one
 *    in-flight byte per descriptor head, written by the ring's one queue
 *    thread with plain stores in an order a SIGKILL cannot tear
 *    (virtqueue.c: vq_pop(), vq_push()); resume reconciles it with the guest's
 *    own rings, the truth (vq_resume()).
 *
 * Nothing in it is trusted on resume before rstate_open() checked it: magic,
 * version, size, checksum, counts and ranges. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest-memory.h"
#include "options.h"
#include "virtqueue.h"

#define RSTATE_MAGIC   0x3165747352636c53ull   /* "SlcRste1" */
#define RSTATE_VERSION 2
#define RSTATE_MAX_RINGS (FS_MAX_QUEUES + 1)

enum {
        RSTATE_RING_ADDR = 1 << 0,    /* addresses set */
        RSTATE_RING_ENABLED = 1 << 1,
        RSTATE_RING_KICK = 1 << 2,    /* a kick fd is stored as kick-<ring> */
        RSTATE_RING_CALL = 1 << 3,
        RSTATE_RING_ERR = 1 << 4,
};

struct rstate_region {
        uint64_t gpa, size, uva, mmap_offset;
        uint32_t slot;                /* the region's own number */
        /* The slot whose stored fd (mem-<fd_slot>) it maps: its own, or an
         * earlier region's when both map one memory file (QEMU splits one
         * memory backend around the PCI hole into regions of one fd; a
         * store keeps one fd per open file, as systemd's does). */
        uint32_t fd_slot;
};

struct rstate_ring_config {
        uint32_t num;
        uint32_t flags;               /* RSTATE_RING_* */
        uint64_t desc, avail, used;   /* frontend virtual addresses */
};

struct rstate_config {
        uint64_t generation;          /* one more per change */
        uint64_t checksum;            /* of everything below */
        uint64_t features, protocol_features;
        uint32_t device;              /* a frontend is being served: conn is stored */
        uint32_t owner;
        uint32_t n_rings;
        uint32_t n_regions;
        struct rstate_region regions[GM_MAX_REGIONS];
        struct rstate_ring_config rings[RSTATE_MAX_RINGS];
};

/* The hot part of one ring.  inflight[head] is 1 from the moment the head
 * is taken from the avail ring until its used element is published. */
struct rstate_ring {
        uint16_t last_avail_idx;
        uint16_t used_idx;
        uint32_t pad;
        uint8_t inflight[VQ_MAX_SIZE];
};

struct rstate_file {
        uint64_t magic;
        uint32_t version;
        uint32_t size;
        uint32_t active;              /* which config copy is whole (0 or 1) */
        uint32_t handed_over;         /* the worker stopped on SIGTERM with nothing in flight */
        struct rstate_config config[2];
        struct rstate_ring rings[RSTATE_MAX_RINGS];
};

struct rstate {
        int fd;
        struct rstate_file *file;     /* the mapping */
        struct rstate_config work;    /* the next configuration, built by the caller */
};

/* A new, empty state in a new memfd ("no device"). */
int rstate_create(struct rstate **ret);
/* Takes up a stored state (fd consumed): -EBADMSG with why when it cannot be
 * trusted; on success *ret's work copy is the stored configuration. */
int rstate_open(int fd, struct rstate **ret, char *why, size_t why_size);
void rstate_free(struct rstate *s);
int rstate_fd(const struct rstate *s);
/* Publishes s->work as the configuration (generation and checksum set). */
void rstate_commit(struct rstate *s);
/* Forgets the device: no rings, no memory, no in-flight heads; committed. */
void rstate_clear_device(struct rstate *s);
struct rstate_ring *rstate_ring(struct rstate *s, unsigned i);
void rstate_set_handed_over(struct rstate *s, bool v);
bool rstate_handed_over(const struct rstate *s);
/* The checksum of a configuration (exposed for tests). */
uint64_t rstate_checksum(const struct rstate_config *c);
