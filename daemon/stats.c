/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats.c — see stats.h. */
#include "stats.h"

#include <linux/fuse.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "options.h"

_Static_assert(STATS_MAX_QUEUES == FS_MAX_QUEUES + 1, "every queue --queues allows has its counters");

struct stats stats_global;

void stats_init(struct stats *s, unsigned n_queues)
{
        memset(s, 0, sizeof(*s));
        s->start_usec = stats_now_usec();
        s->n_queues = n_queues > STATS_MAX_QUEUES ? STATS_MAX_QUEUES : n_queues;
}

/* floor(log2(usec)), 0 for 0 and 1, at most the last bucket: one bit scan
 * instead of a shift per bit on every request. */
static unsigned latency_bucket(uint64_t usec)
{
        unsigned b;

        if (usec <= 1)
                return 0;
        b = 63 - (unsigned)__builtin_clzll(usec);
        return b < STATS_LATENCY_BUCKETS - 1 ? b : STATS_LATENCY_BUCKETS - 1;
}

void stats_count_request(struct stats *s, uint32_t opcode, int error, uint64_t latency_usec)
{
        stats_add(&s->requests, 1);
        if (error)
                stats_add(&s->errors, 1);
        stats_add(&s->opcode[opcode < STATS_MAX_OPCODE ? opcode : STATS_MAX_OPCODE], 1);
        stats_add(&s->latency[latency_bucket(latency_usec)], 1);
}

uint64_t stats_latency_percentile(struct stats *s, double p)
{
        uint64_t counts[STATS_LATENCY_BUCKETS], total = 0, want, seen = 0;

        for (unsigned i = 0; i < STATS_LATENCY_BUCKETS; i++)
                total += counts[i] = stats_get(&s->latency[i]);
        if (total == 0)
                return 0;
        /* Nearest-rank: the smallest count that covers p % of the requests. */
        want = (uint64_t)((double)total * p / 100.0);
        if ((double)want < (double)total * p / 100.0 || want == 0)
                want++;
        for (unsigned i = 0; i < STATS_LATENCY_BUCKETS; i++) {
                seen += counts[i];
                if (seen >= want)
                        return (uint64_t)1 << (i + 1);
        }
        return (uint64_t)1 << STATS_LATENCY_BUCKETS;
}

static const char *const opcode_names[] = {
        [FUSE_LOOKUP] = "LOOKUP", [FUSE_FORGET] = "FORGET", [FUSE_GETATTR] = "GETATTR",
        [FUSE_SETATTR] = "SETATTR", [FUSE_READLINK] = "READLINK", [FUSE_SYMLINK] = "SYMLINK",
        [FUSE_MKNOD] = "MKNOD", [FUSE_MKDIR] = "MKDIR", [FUSE_UNLINK] = "UNLINK",
        [FUSE_RMDIR] = "RMDIR", [FUSE_RENAME] = "RENAME", [FUSE_LINK] = "LINK",
        [FUSE_OPEN] = "OPEN", [FUSE_READ] = "READ", [FUSE_WRITE] = "WRITE",
        [FUSE_STATFS] = "STATFS", [FUSE_RELEASE] = "RELEASE", [FUSE_FSYNC] = "FSYNC",
        [FUSE_SETXATTR] = "SETXATTR", [FUSE_GETXATTR] = "GETXATTR",
        [FUSE_LISTXATTR] = "LISTXATTR", [FUSE_REMOVEXATTR] = "REMOVEXATTR",
        [FUSE_FLUSH] = "FLUSH", [FUSE_INIT] = "INIT", [FUSE_OPENDIR] = "OPENDIR",
        [FUSE_READDIR] = "READDIR", [FUSE_RELEASEDIR] = "RELEASEDIR",
        [FUSE_FSYNCDIR] = "FSYNCDIR", [FUSE_GETLK] = "GETLK", [FUSE_SETLK] = "SETLK",
        [FUSE_SETLKW] = "SETLKW", [FUSE_ACCESS] = "ACCESS", [FUSE_CREATE] = "CREATE",
        [FUSE_INTERRUPT] = "INTERRUPT", [FUSE_BMAP] = "BMAP", [FUSE_DESTROY] = "DESTROY",
        [FUSE_IOCTL] = "IOCTL", [FUSE_POLL] = "POLL", [FUSE_NOTIFY_REPLY] = "NOTIFY_REPLY",
        [FUSE_BATCH_FORGET] = "BATCH_FORGET", [FUSE_FALLOCATE] = "FALLOCATE",
        [FUSE_READDIRPLUS] = "READDIRPLUS", [FUSE_RENAME2] = "RENAME2", [FUSE_LSEEK] = "LSEEK",
        [FUSE_COPY_FILE_RANGE] = "COPY_FILE_RANGE", [FUSE_SETUPMAPPING] = "SETUPMAPPING",
        [FUSE_REMOVEMAPPING] = "REMOVEMAPPING", [FUSE_SYNCFS] = "SYNCFS",
        [51] = "TMPFILE", /* FUSE_TMPFILE: 7.37, not in every UAPI header */
};

const char *stats_opcode_name(uint32_t opcode)
{
        if (opcode < sizeof(opcode_names) / sizeof(opcode_names[0]) && opcode_names[opcode])
                return opcode_names[opcode];
        return "OTHER";
}

void stats_foreach(struct stats *s, stats_visit_fn visit, void *userdata)
{
        char key[64];

        visit("bytes-read", stats_get(&s->bytes_read), userdata);
        visit("bytes-written", stats_get(&s->bytes_written), userdata);
        visit("requests", stats_get(&s->requests), userdata);
        visit("errors", stats_get(&s->errors), userdata);
        visit("latency-p50-us", stats_latency_percentile(s, 50), userdata);
        visit("latency-p99-us", stats_latency_percentile(s, 99), userdata);
        visit("resume-replayed", stats_get(&s->resume_replayed), userdata);
        visit("resume-failed", stats_get(&s->resume_failed), userdata);
        visit("uptime-us", stats_now_usec() - s->start_usec, userdata);
        for (unsigned op = 0; op <= STATS_MAX_OPCODE; op++) {
                uint64_t n = stats_get(&s->opcode[op]);

                if (n == 0)
                        continue;
                snprintf(key, sizeof(key), "op-%s", stats_opcode_name(op));
                visit(key, n, userdata);
        }
        for (unsigned q = 0; q < s->n_queues; q++) {
                struct stats_queue *sq = &s->queue[q];

                snprintf(key, sizeof(key), "queue%u-requests", q);
                visit(key, stats_get(&sq->requests), userdata);
                snprintf(key, sizeof(key), "queue%u-kicks", q);
                visit(key, stats_get(&sq->kicks), userdata);
                snprintf(key, sizeof(key), "queue%u-polled", q);
                visit(key, stats_get(&sq->polled), userdata);
                snprintf(key, sizeof(key), "queue%u-batches", q);
                visit(key, stats_get(&sq->batches), userdata);
                snprintf(key, sizeof(key), "queue%u-in-flight", q);
                visit(key, stats_get(&sq->in_flight), userdata);
                snprintf(key, sizeof(key), "queue%u-poll-refused", q);
                visit(key, stats_get(&sq->poll_refused), userdata);
        }
}

static void dump_one(const char *key, uint64_t value, void *userdata)
{
        fprintf((FILE *)userdata, "  %-24s %" PRIu64 "\n", key, value);
}

void stats_dump(struct stats *s, FILE *f)
{
        fprintf(f, "sluice-fs counters:\n");
        stats_foreach(s, dump_one, f);
        fflush(f);
}
