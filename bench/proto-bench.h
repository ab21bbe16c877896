/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proto-bench.h — what the protocol benchmark's files share (see proto-bench.c).
 *
 *   proto-common.c   the options, the clock, the figure output (used by all three below)
 *   proto-bench.c    the frontend: rows on daemons over the test VMM, the run order
 *   proto-bare.c     the physical limit: the same work as host syscalls
 *   proto-summary.c  raw.tsv → medians, spreads, ratios (results.md, results.json) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PB_DATA_FILE    "pb-data"       /* READ/WRITE target, prepared on the host */
#define PB_DATA_SIZE    (64u << 20)
#define PB_LOOKUP_FILE  "pb-lookup"
#define PB_MAX_THREADS  8
#define PB_MAX_SAMPLES  (1u << 20)
#define PB_WIN_MAX_DESC 1024            /* viofs: at most 1024 descriptors, queue size 1024 */
#define PB_PAGE         4096u
#define PB_OPS_LOOKUP   0x100u          /* ops rows: LOOKUP+GETATTR pairs, not GETATTR of the root */

struct pb_options {
        const char *dir;
        const char *rows;
        const char *out;
        const char *primary;
        unsigned queues[4];
        unsigned nqueues;
        unsigned reps, first_rep, rep;
        int duration_ms;
        uint64_t copy_bytes;
        uint32_t uid, gid;
        int max_opens;
};
extern struct pb_options pb_opt;
extern const char *pb_label;            /* whose figures pb_emit writes */
extern FILE *pb_out;                    /* where pb_emit writes them (stdout or --out) */

int64_t pb_now_ns(void);
bool pb_row_wanted(const char *name);
/* One figure.  better: "hi" (ops/s, MB/s) or "lo" (latency, CPU, memory). */
void pb_emit(const char *group, const char *row, const char *unit, const char *better, double value);
void pb_emit_text(const char *group, const char *row, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
int pb_fail(int err, const char *what);                 /* prints, returns -errno */
double pb_percentile_us(uint32_t *samples_ns, size_t n, double p);      /* sorts */

/* proto-bare.c: the bare syscalls of a row (key and arg as the daemon rows). */
struct pb_bare;
int pb_bare_open(struct pb_bare **ret);
void pb_bare_close(struct pb_bare *b);
int pb_bare_lat(struct pb_bare *b, unsigned arg);
/* arg: outstanding requests (low byte; the bare loop is one thread whatever
 * it says), PB_OPS_LOOKUP for LOOKUP+GETATTR pairs instead of GETATTR */
int pb_bare_ops(struct pb_bare *b, unsigned arg);
int pb_bare_io(struct pb_bare *b, unsigned which);      /* as pb's io rows: write * 3 + size */
int pb_bare_create(struct pb_bare *b, unsigned arg);
int pb_bare_win(struct pb_bare *b, unsigned largest);
int pb_bare_mq(struct pb_bare *b, unsigned threads);

extern const size_t pb_io_sizes[3];
extern const char *const pb_io_names[3];

/* proto-summary.c */
int pb_summarize(const char *dir);
