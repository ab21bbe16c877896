/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-stats.c — the worker's counters: latency percentiles off the
 * histogram, per-opcode counts, and the keys GetStats publishes. */
#include <glib.h>
#include <linux/fuse.h>
#include <string.h>

#include "stats.h"

static void collect(const char *key, uint64_t value, void *userdata)
{
        g_hash_table_insert(userdata, g_strdup(key), g_memdup2(&value, sizeof(value)));
}

static uint64_t lookup(GHashTable *t, const char *key)
{
        uint64_t *v = g_hash_table_lookup(t, key);

        g_assert_nonnull(v);
        return *v;
}

static void test_percentiles(void)
{
        static struct stats s;

        stats_init(&s, 2);
        g_assert_cmpuint(stats_latency_percentile(&s, 50), ==, 0);   /* nothing yet */
        /* 90 fast requests (10 µs: bucket [8, 16)), 10 slow ones (1000 µs: [512, 1024)). */
        for (int i = 0; i < 90; i++)
                stats_count_request(&s, FUSE_GETATTR, 0, 10);
        for (int i = 0; i < 10; i++)
                stats_count_request(&s, FUSE_READ, 0, 1000);
        g_assert_cmpuint(stats_latency_percentile(&s, 50), ==, 16);
        g_assert_cmpuint(stats_latency_percentile(&s, 90), ==, 16);
        g_assert_cmpuint(stats_latency_percentile(&s, 99), ==, 1024);
        /* Sub-microsecond requests land in the first bucket. */
        stats_init(&s, 2);
        stats_count_request(&s, FUSE_GETATTR, 0, 0);
        g_assert_cmpuint(stats_latency_percentile(&s, 50), ==, 2);
        /* Absurd latencies stay in the last bucket. */
        stats_init(&s, 2);
        stats_count_request(&s, FUSE_GETATTR, 0, UINT64_MAX);
        g_assert_cmpuint(stats_latency_percentile(&s, 50), ==, (uint64_t)1 << STATS_LATENCY_BUCKETS);
}

static void test_keys(void)
{
        static struct stats s;
        g_autoptr(GHashTable) t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

        stats_init(&s, 2);
        stats_count_request(&s, FUSE_LOOKUP, 0, 5);
        stats_count_request(&s, FUSE_LOOKUP, -2, 5);
        stats_count_request(&s, FUSE_WRITE, 0, 5);
        stats_count_request(&s, 4000, -38, 5);   /* unknown opcode: counted, not out of bounds */
        stats_add(&s.bytes_written, 4096);
        stats_add(&s.queue[1].kicks, 3);
        stats_add(&s.queue[1].polled, 7);
        stats_foreach(&s, collect, t);

        g_assert_cmpuint(lookup(t, "requests"), ==, 4);
        g_assert_cmpuint(lookup(t, "errors"), ==, 2);
        g_assert_cmpuint(lookup(t, "bytes-written"), ==, 4096);
        g_assert_cmpuint(lookup(t, "bytes-read"), ==, 0);
        g_assert_cmpuint(lookup(t, "op-LOOKUP"), ==, 2);
        g_assert_cmpuint(lookup(t, "op-WRITE"), ==, 1);
        g_assert_cmpuint(lookup(t, "op-OTHER"), ==, 1);
        g_assert_false(g_hash_table_contains(t, "op-READ"));   /* only opcodes that were seen */
        g_assert_cmpuint(lookup(t, "queue1-kicks"), ==, 3);
        g_assert_cmpuint(lookup(t, "queue1-polled"), ==, 7);
        g_assert_cmpuint(lookup(t, "queue0-requests"), ==, 0);
        g_assert_cmpuint(lookup(t, "latency-p50-us"), ==, 8);
        g_assert_true(g_hash_table_contains(t, "uptime-us"));
        g_assert_false(g_hash_table_contains(t, "queue2-requests"));   /* 2 queues: 0 and 1 */
        g_assert_cmpstr(stats_opcode_name(FUSE_READDIRPLUS), ==, "READDIRPLUS");
        g_assert_cmpstr(stats_opcode_name(9999), ==, "OTHER");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/stats/percentiles", test_percentiles);
        g_test_add_func("/stats/keys", test_keys);
        return g_test_run();
}
