/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proto-common.c — what every part of the protocol benchmark uses: the
 * options, the clock, the figure output and the error line (proto-bench.h).
 * Kept apart from proto-bench.c so that the bare-syscall and summary parts
 * depend on these alone, and proto-bench.c on them, never back. */
#include "proto-bench.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct pb_options pb_opt = {
        .rows = "lat,ops,io,create,notify,win", .primary = "sluice",
        .queues = { 1, 2, 4 }, .nqueues = 3, .reps = 1, .first_rep = 1, .rep = 1, .duration_ms = 500,
        .copy_bytes = 2ull << 30, .max_opens = 50000,
};
const char *pb_label = "daemon";
FILE *pb_out;

const size_t pb_io_sizes[3] = { 4096, 128 << 10, 1 << 20 };
const char *const pb_io_names[3] = { "4k", "128k", "1m" };

int64_t pb_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool pb_row_wanted(const char *name)
{
        size_t n = strlen(name);
        for (const char *p = pb_opt.rows; *p;) {
                size_t len = strcspn(p, ",");
                if (len == n && strncmp(p, name, n) == 0)
                        return true;
                p += len + (p[len] == ',');
        }
        return false;
}

void pb_emit(const char *group, const char *row, const char *unit, const char *better, double value)
{
        fprintf(pb_out, "%u\t%s\t%s\t%s\t%s\t%s\t%.6g\n", pb_opt.rep, pb_label, group, row, unit, better, value);
        fflush(pb_out);
        fprintf(stderr, "proto-bench: %-12s %-7s %-44s %12.6g %s\n", pb_label, group, row, value, unit);
}

void pb_emit_text(const char *group, const char *row, const char *fmt, ...)
{
        char buf[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(pb_out, "%u\t%s\t%s\t%s\ttext\t-\t%s\n", pb_opt.rep, pb_label, group, row, buf);
        fflush(pb_out);
        fprintf(stderr, "proto-bench: %-12s %-7s %-44s %s\n", pb_label, group, row, buf);
}

int pb_fail(int err, const char *what)
{
        fprintf(stderr, "proto-bench: %s: %s: %s\n", pb_label, what, strerror(err < 0 ? -err : err));
        return err < 0 ? err : -err;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

double pb_percentile_us(uint32_t *s, size_t n, double p)
{
        if (n == 0)
                return NAN;
        qsort(s, n, sizeof(*s), cmp_u32);
        size_t i = (size_t)(p * (double)(n - 1) + 0.5);
        return s[i] / 1000.0;
}

