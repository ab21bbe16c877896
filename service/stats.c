/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats.c — Share.Stats from a worker's raw counters (stats.h). */
#include "config.h"

#include <string.h>

#include "stats.h"

/* Above this a queue count from the worker is not believed (FS_MAX_QUEUES + 1). */
#define STATS_MAX_QUEUES 65

static guint64 raw_get(GVariantDict *raw, const char *key)
{
        guint64 value = 0;
        guint32 value32 = 0;

        if (g_variant_dict_lookup(raw, key, "t", &value))
                return value;
        if (g_variant_dict_lookup(raw, key, "u", &value32))
                return value32;
        return 0;
}

static double rate(guint64 now, guint64 before, double seconds)
{
        /* Called with the share's totals, which never go down (stats.h): 0
         * rather than a wrapped difference should they ever. */
        guint64 delta = now >= before ? now - before : 0;

        return seconds > 0 ? (double)delta / seconds : 0.0;
}

void sluice_stats_sampler_begin(SluiceStatsSampler *sampler, gint64 since_wall_us)
{
        memset(sampler, 0, sizeof(*sampler));
        sampler->since_us = since_wall_us > 0 ? since_wall_us : 1;
}

static void add_totals(SluiceStatsTotals *to, const SluiceStatsTotals *what)
{
        to->bytes_read += what->bytes_read;
        to->bytes_written += what->bytes_written;
        to->requests += what->requests;
        to->errors += what->errors;
        to->resume_replayed += what->resume_replayed;
        to->resume_failed += what->resume_failed;
}

void sluice_stats_sampler_count_crash(SluiceStatsSampler *sampler)
{
        sampler->worker_crashes++;
}

void sluice_stats_sampler_new_worker(SluiceStatsSampler *sampler)
{
        add_totals(&sampler->earlier, &sampler->worker);
        memset(&sampler->worker, 0, sizeof(sampler->worker));
        sampler->worker_uptime_us = 0;
        sampler->have_previous = FALSE;
}

/* Whether raw counters can only come from another process than the last
 * sample's: a counter or the uptime went backwards. */
static gboolean is_new_process(const SluiceStatsSampler *sampler, const SluiceStatsTotals *raw,
                               guint64 uptime_us)
{
        return uptime_us < sampler->worker_uptime_us ||
               raw->bytes_read < sampler->worker.bytes_read ||
               raw->bytes_written < sampler->worker.bytes_written ||
               raw->requests < sampler->worker.requests ||
               raw->errors < sampler->worker.errors;
}

static GVariant *build_queues(GVariantDict *raw)
{
        GVariantBuilder queues;
        guint64 n = raw_get(raw, "queues");

        g_variant_builder_init(&queues, G_VARIANT_TYPE("aa{sv}"));
        for (guint64 i = 0; i < MIN(n, STATS_MAX_QUEUES); i++) {
                GVariantDict queue;
                static const char *const counters[] = {
                        "requests", "kicks", "polled", "batches", "in-flight",
                };

                g_variant_dict_init(&queue, NULL);
                g_variant_dict_insert(&queue, "index", "u", (guint32)i);
                for (gsize c = 0; c < G_N_ELEMENTS(counters); c++) {
                        g_autofree char *key = g_strdup_printf("queue%" G_GUINT64_FORMAT "-%s",
                                                               i, counters[c]);

                        g_variant_dict_insert(&queue, counters[c], "t", raw_get(raw, key));
                }
                g_variant_builder_add_value(&queues, g_variant_dict_end(&queue));
        }
        return g_variant_builder_end(&queues);
}

GVariant *sluice_stats_sample(SluiceStatsSampler *sampler, GVariant *raw, gint64 now_us)
{
        GVariantDict in, out;
        SluiceStatsTotals worker, total;
        guint64 uptime_us;
        double seconds = 0;

        if (sampler->since_us == 0)
                sluice_stats_sampler_begin(sampler, g_get_real_time());
        g_variant_dict_init(&in, g_variant_is_of_type(raw, G_VARIANT_TYPE_VARDICT) ? raw : NULL);
        worker.bytes_read = raw_get(&in, "bytes-read");
        worker.bytes_written = raw_get(&in, "bytes-written");
        worker.requests = raw_get(&in, "requests");
        worker.errors = raw_get(&in, "errors");
        worker.resume_replayed = raw_get(&in, "resume-replayed");
        worker.resume_failed = raw_get(&in, "resume-failed");
        uptime_us = raw_get(&in, "uptime-us");
        if (is_new_process(sampler, &worker, uptime_us))
                sluice_stats_sampler_new_worker(sampler);
        sampler->worker = worker;
        sampler->worker_uptime_us = uptime_us;
        total = sampler->earlier;
        add_totals(&total, &worker);
        if (sampler->have_previous && now_us > sampler->previous_time_us)
                seconds = (double)(now_us - sampler->previous_time_us) / G_USEC_PER_SEC;

        g_variant_dict_init(&out, NULL);
        g_variant_dict_insert(&out, "timestamp-us", "t", (guint64)now_us);
        g_variant_dict_insert(&out, "since-us", "t", (guint64)sampler->since_us);
        g_variant_dict_insert(&out, "uptime-us", "t", uptime_us);
        g_variant_dict_insert(&out, "bytes-read", "t", total.bytes_read);
        g_variant_dict_insert(&out, "bytes-written", "t", total.bytes_written);
        g_variant_dict_insert(&out, "requests", "t", total.requests);
        g_variant_dict_insert(&out, "errors", "t", total.errors);
        g_variant_dict_insert(&out, "worker-crashes", "t", sampler->worker_crashes);
        g_variant_dict_insert(&out, "resume-replayed", "t", total.resume_replayed);
        g_variant_dict_insert(&out, "resume-failed", "t", total.resume_failed);
        g_variant_dict_insert(&out, "read-bytes-per-sec", "d",
                              rate(total.bytes_read, sampler->previous.bytes_read, seconds));
        g_variant_dict_insert(&out, "write-bytes-per-sec", "d",
                              rate(total.bytes_written, sampler->previous.bytes_written, seconds));
        g_variant_dict_insert(&out, "ops-per-sec", "d",
                              rate(total.requests, sampler->previous.requests, seconds));
        g_variant_dict_insert(&out, "errors-per-sec", "d",
                              rate(total.errors, sampler->previous.errors, seconds));
        g_variant_dict_insert(&out, "latency-p50-us", "t", raw_get(&in, "latency-p50-us"));
        g_variant_dict_insert(&out, "latency-p99-us", "t", raw_get(&in, "latency-p99-us"));
        g_variant_dict_insert_value(&out, "queues", build_queues(&in));
        g_variant_dict_clear(&in);

        sampler->have_previous = TRUE;
        sampler->previous_time_us = now_us;
        sampler->previous = total;
        return g_variant_dict_end(&out);
}

static gboolean is_clock_key(const char *key)
{
        return strcmp(key, "timestamp-us") == 0 || strcmp(key, "uptime-us") == 0;
}

static guint count_non_clock(GVariant *dict)
{
        GVariantIter iter;
        const char *key;
        GVariant *value;
        guint n = 0;

        g_variant_iter_init(&iter, dict);
        while (g_variant_iter_loop(&iter, "{&sv}", &key, &value))
                n += !is_clock_key(key);
        return n;
}

gboolean sluice_stats_differ(GVariant *a, GVariant *b)
{
        GVariantIter iter;
        const char *key;
        GVariant *value;

        if (a == NULL || b == NULL)
                return a != b;
        if (count_non_clock(a) != count_non_clock(b))
                return TRUE;
        g_variant_iter_init(&iter, a);
        while (g_variant_iter_loop(&iter, "{&sv}", &key, &value)) {
                g_autoptr(GVariant) other = NULL;

                if (is_clock_key(key))
                        continue;
                other = g_variant_lookup_value(b, key, NULL);
                if (other == NULL || !g_variant_equal(value, other)) {
                        g_variant_unref(value);  /* g_variant_iter_loop would on the next turn */
                        return TRUE;
                }
        }
        return FALSE;
}
