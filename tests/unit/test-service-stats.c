/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-service-stats.c — Share.Stats as the service builds it from its
 * worker's raw counters: the share's totals only grow while it runs, across
 * a restarted worker whose own counters begin again at 0, and say since when
 * they count. */
#include <glib.h>

#include "stats.h"

#define SECOND ((gint64)G_USEC_PER_SEC)

/* Raw counters as Worker1.GetStats answers them. */
static GVariant *raw(guint64 bytes_read, guint64 bytes_written, guint64 requests, guint64 errors,
                     guint64 uptime_us)
{
        GVariantDict d;

        g_variant_dict_init(&d, NULL);
        g_variant_dict_insert(&d, "bytes-read", "t", bytes_read);
        g_variant_dict_insert(&d, "bytes-written", "t", bytes_written);
        g_variant_dict_insert(&d, "requests", "t", requests);
        g_variant_dict_insert(&d, "errors", "t", errors);
        g_variant_dict_insert(&d, "uptime-us", "t", uptime_us);
        g_variant_dict_insert(&d, "queues", "u", 2);
        return g_variant_dict_end(&d);
}

static guint64 get_t(GVariant *stats, const char *key)
{
        guint64 v = G_MAXUINT64;

        g_assert_true(g_variant_lookup(stats, key, "t", &v));
        return v;
}

static double get_d(GVariant *stats, const char *key)
{
        double v = -1;

        g_assert_true(g_variant_lookup(stats, key, "d", &v));
        return v;
}

static GVariant *sample(SluiceStatsSampler *s, GVariant *r, gint64 now)
{
        g_autoptr(GVariant) owned = g_variant_ref_sink(r);

        return g_variant_ref_sink(sluice_stats_sample(s, owned, now));
}

/* What a person reads: the documented keys, since-us among them. */
static void test_keys(void)
{
        SluiceStatsSampler s;
        g_autoptr(GVariant) st = NULL;
        static const char *const keys[] = {
                "timestamp-us", "since-us", "uptime-us", "bytes-read", "bytes-written",
                "requests", "errors", "read-bytes-per-sec", "write-bytes-per-sec",
                "ops-per-sec", "errors-per-sec", "latency-p50-us", "latency-p99-us", "queues",
                "worker-crashes", "resume-replayed", "resume-failed",
        };

        sluice_stats_sampler_begin(&s, 1700000000 * SECOND);
        st = sample(&s, raw(1, 2, 3, 0, SECOND), 10 * SECOND);
        g_assert_cmpuint(g_variant_n_children(st), ==, G_N_ELEMENTS(keys));
        for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
                g_autoptr(GVariant) v = g_variant_lookup_value(st, keys[i], NULL);

                if (v == NULL)
                        g_error("Share.Stats has no “%s”", keys[i]);
        }
        g_assert_cmpuint(get_t(st, "since-us"), ==, 1700000000 * SECOND);
}

/* The guest wrote 4 MiB through the first worker, which then crashed; its
 * restart counted 96 bytes more.  The share's totals are the sum. */
static void test_restart_keeps_totals(void)
{
        SluiceStatsSampler s;
        g_autoptr(GVariant) a = NULL;
        g_autoptr(GVariant) b = NULL;
        g_autoptr(GVariant) c = NULL;
        g_autoptr(GVariant) d = NULL;

        sluice_stats_sampler_begin(&s, 1700000000 * SECOND);
        a = sample(&s, raw(0, 0, 2, 0, 1 * SECOND), 1 * SECOND);
        b = sample(&s, raw(100, 4194304, 90, 3, 2 * SECOND), 2 * SECOND);
        g_assert_cmpuint(get_t(b, "bytes-written"), ==, 4194304);
        g_assert_cmpfloat(get_d(b, "write-bytes-per-sec"), ==, 4194304.0);

        /* the share announces the new process (share.c on "ready" after a crash) */
        sluice_stats_sampler_new_worker(&s);
        c = sample(&s, raw(0, 96, 24, 3, 1 * SECOND), 5 * SECOND);
        g_assert_cmpuint(get_t(c, "bytes-written"), ==, 4194304 + 96);
        g_assert_cmpuint(get_t(c, "bytes-read"), ==, 100);
        g_assert_cmpuint(get_t(c, "requests"), ==, 90 + 24);
        g_assert_cmpuint(get_t(c, "errors"), ==, 3 + 3);
        /* the interval spans the gap: no rate rather than a made-up one */
        g_assert_cmpfloat(get_d(c, "write-bytes-per-sec"), ==, 0.0);
        g_assert_cmpuint(get_t(c, "uptime-us"), ==, 1 * SECOND);   /* the new process's */
        g_assert_cmpuint(get_t(c, "since-us"), ==, 1700000000 * SECOND);

        /* and it grows on from there, with rates of the new worker's traffic */
        d = sample(&s, raw(0, 1096, 30, 3, 2 * SECOND), 6 * SECOND);
        g_assert_cmpuint(get_t(d, "bytes-written"), ==, 4194304 + 1096);
        g_assert_cmpfloat(get_d(d, "write-bytes-per-sec"), ==, 1000.0);
        g_assert_cmpfloat(get_d(d, "ops-per-sec"), ==, 6.0);
}

/* A new process the share did not announce (its counters or its uptime went
 * backwards) is still counted on top of the old one, and no rate goes
 * negative or jumps. */
static void test_unannounced_restart(void)
{
        SluiceStatsSampler s;
        g_autoptr(GVariant) a = NULL;
        g_autoptr(GVariant) b = NULL;
        g_autoptr(GVariant) c = NULL;

        sluice_stats_sampler_begin(&s, 1700000000 * SECOND);
        a = sample(&s, raw(0, 5000, 50, 1, 30 * SECOND), 1 * SECOND);
        b = sample(&s, raw(0, 96, 24, 0, 1 * SECOND), 2 * SECOND);
        g_assert_cmpuint(get_t(b, "bytes-written"), ==, 5096);
        g_assert_cmpuint(get_t(b, "requests"), ==, 74);
        g_assert_cmpfloat(get_d(b, "write-bytes-per-sec"), ==, 0.0);
        /* uptime alone: a young process that already did more than the old one */
        c = sample(&s, raw(0, 9000, 80, 0, 500000), 3 * SECOND);
        g_assert_cmpuint(get_t(c, "bytes-written"), ==, 5096 + 9000);
        g_assert_cmpuint(get_t(c, "requests"), ==, 74 + 80);
}

/* A share started again (after Stop or a failure) counts from 0, and says so. */
static void test_begin_again(void)
{
        SluiceStatsSampler s;
        g_autoptr(GVariant) a = NULL;
        g_autoptr(GVariant) b = NULL;

        sluice_stats_sampler_begin(&s, 1700000000 * SECOND);
        a = sample(&s, raw(10, 20, 30, 0, 10 * SECOND), 1 * SECOND);
        sluice_stats_sampler_begin(&s, 1700000100 * SECOND);
        b = sample(&s, raw(0, 1, 2, 0, 1 * SECOND), 2 * SECOND);
        g_assert_cmpuint(get_t(b, "bytes-written"), ==, 1);
        g_assert_cmpuint(get_t(b, "requests"), ==, 2);
        g_assert_cmpuint(get_t(b, "since-us"), ==, 1700000100 * SECOND);
}

/* Rates over the sample interval; malformed raw values count as 0. */
static void test_rates_and_malformed(void)
{
        SluiceStatsSampler s;
        g_autoptr(GVariant) a = NULL;
        g_autoptr(GVariant) b = NULL;
        g_autoptr(GVariant) c = NULL;

        sluice_stats_sampler_begin(&s, 1700000000 * SECOND);
        a = sample(&s, raw(1000, 0, 10, 0, SECOND), 1 * SECOND);
        g_assert_cmpfloat(get_d(a, "read-bytes-per-sec"), ==, 0.0);   /* nothing to compare with */
        b = sample(&s, raw(3000, 0, 20, 0, 3 * SECOND), 3 * SECOND);
        g_assert_cmpfloat(get_d(b, "read-bytes-per-sec"), ==, 1000.0);
        g_assert_cmpfloat(get_d(b, "ops-per-sec"), ==, 5.0);
        c = sample(&s, g_variant_new_string("not a dict"), 4 * SECOND);
        g_assert_cmpuint(get_t(c, "uptime-us"), ==, 0);
}

/* Only a change outside the clocks is worth a PropertiesChanged. */
static void test_differ(void)
{
        SluiceStatsSampler s;
        g_autoptr(GVariant) a = NULL;
        g_autoptr(GVariant) b = NULL;
        g_autoptr(GVariant) c = NULL;

        sluice_stats_sampler_begin(&s, 1700000000 * SECOND);
        a = sample(&s, raw(1, 1, 1, 0, SECOND), 1 * SECOND);
        b = sample(&s, raw(1, 1, 1, 0, 2 * SECOND), 2 * SECOND);
        c = sample(&s, raw(1, 2, 2, 0, 3 * SECOND), 3 * SECOND);
        g_assert_false(sluice_stats_differ(a, b));
        g_assert_true(sluice_stats_differ(b, c));
        g_assert_true(sluice_stats_differ(NULL, c));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/service-stats/keys", test_keys);
        g_test_add_func("/service-stats/restart-keeps-totals", test_restart_keeps_totals);
        g_test_add_func("/service-stats/unannounced-restart", test_unannounced_restart);
        g_test_add_func("/service-stats/begin-again", test_begin_again);
        g_test_add_func("/service-stats/rates-and-malformed", test_rates_and_malformed);
        g_test_add_func("/service-stats/differ", test_differ);
        return g_test_run();
}
