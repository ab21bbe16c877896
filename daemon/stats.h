/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats.h — counters of one sluice-fs process.
 *
 * Written on the hot path by the queue threads (relaxed atomics, one cache line
 * group per queue so that queues never share a written line), read by the
 * control channel (GetStats) and the SIGUSR1 dump.  The key names used in
 * stats_foreach() are the ones the service publishes in Share.Stats: they are
 * defined here, once. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Latency histogram: bucket i counts requests that took [2^i, 2^(i+1)) µs
 * (bucket 0 also takes < 1 µs).  Percentiles are read off it. */
#define STATS_LATENCY_BUCKETS 32
/* FUSE opcodes up to this value are counted per opcode (FUSE_SYNCFS is 50,
 * FUSE_TMPFILE 51 in 7.37+); anything above lands in the last slot. */
#define STATS_MAX_OPCODE 64
/* Queues with counters of their own: the hiprio queue and up to 64 request
 * queues (stats.c checks this against the command line's FS_MAX_QUEUES). */
#define STATS_MAX_QUEUES (64 + 1)

struct stats_queue {
        _Atomic uint64_t requests;   /* requests completed on this queue */
        _Atomic uint64_t kicks;      /* wake-ups by a guest notification (eventfd) */
        _Atomic uint64_t polled;     /* requests picked up while busy-polling, without a kick */
        _Atomic uint64_t batches;    /* times the queue was drained (one or more requests) */
        _Atomic uint64_t in_flight;  /* requests popped but not yet pushed (deferred SETLKW too) */
        _Atomic uint64_t poll_refused; /* busy-polls skipped or cut short: no spare CPU (cpu-spare.h) */
} __attribute__((aligned(64)));

struct stats {
        _Atomic uint64_t bytes_read;      /* payload bytes of READ replies */
        _Atomic uint64_t bytes_written;   /* payload bytes accepted by WRITE */
        _Atomic uint64_t requests;
        _Atomic uint64_t errors;          /* replies with a non-zero error */
        _Atomic uint64_t opcode[STATS_MAX_OPCODE + 1];
        _Atomic uint64_t latency[STATS_LATENCY_BUCKETS];
        _Atomic uint64_t resume_replayed; /* in-flight requests of a previous worker run again */
        _Atomic uint64_t resume_failed;   /* … answered EIO instead */
        uint64_t start_usec;              /* CLOCK_MONOTONIC at start */
        unsigned n_queues;                /* request queues + 1 (index 0 is hiprio) */
        struct stats_queue queue[STATS_MAX_QUEUES];
};

/* The one instance of the process. */
extern struct stats stats_global;

void stats_init(struct stats *s, unsigned n_queues);
/* Called once per completed FUSE request by the FUSE layer. */
void stats_count_request(struct stats *s, uint32_t opcode, int error, uint64_t latency_usec);
static inline void stats_add(_Atomic uint64_t *c, uint64_t v)
{
        atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}
static inline uint64_t stats_get(_Atomic uint64_t *c)
{
        return atomic_load_explicit(c, memory_order_relaxed);
}
/* Latency percentile (0 < p < 100) in µs, from the histogram: the upper edge of the bucket. */
uint64_t stats_latency_percentile(struct stats *s, double p);
/* CLOCK_MONOTONIC in µs.  Inline: read twice per request for the latency histogram. */
static inline uint64_t stats_now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Stats as key/value pairs, for GetStats and the SIGUSR1 dump.  Keys (stable):
 *   bytes-read, bytes-written, requests, errors, latency-p50-us, latency-p99-us,
 *   uptime-us, resume-replayed, resume-failed, op-<name> (per opcode with a non-zero count),
 *   queue<N>-requests, queue<N>-kicks, queue<N>-polled, queue<N>-batches, queue<N>-in-flight,
 *   queue<N>-poll-refused
 * (N = 0 is the hiprio queue, 1… the request queues). */
typedef void (*stats_visit_fn)(const char *key, uint64_t value, void *userdata);
void stats_foreach(struct stats *s, stats_visit_fn visit, void *userdata);
/* Human-readable dump (SIGUSR1). */
void stats_dump(struct stats *s, FILE *f);
/* "LOOKUP", "READ", … for a FUSE opcode; "OP<n>" for unknown ones (static buffer not used). */
const char *stats_opcode_name(uint32_t opcode);
