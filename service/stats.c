/* stats.c — Share.Stats from a worker's raw counters. */
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
        /* Totals restart at 0 with a new worker process. */
        guint64 delta = now >= before ? now - before : now;

        return seconds > 0 ? (double)delta / seconds : 0.0;
}

void sluice_stats_sampler_reset(SluiceStatsSampler *sampler)
{
        memset(sampler, 0, sizeof(*sampler));
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
        guint64 bytes_read, bytes_written, requests, errors;
        double seconds = 0;

        g_variant_dict_init(&in, g_variant_is_of_type(raw, G_VARIANT_TYPE_VARDICT) ? raw : NULL);
        bytes_read = raw_get(&in, "bytes-read");
        bytes_written = raw_get(&in, "bytes-written");
        requests = raw_get(&in, "requests");
        errors = raw_get(&in, "errors");
        if (sampler->have_previous && now_us > sampler->previous_time_us)
                seconds = (double)(now_us - sampler->previous_time_us) / G_USEC_PER_SEC;

        g_variant_dict_init(&out, NULL);
        g_variant_dict_insert(&out, "timestamp-us", "t", (guint64)now_us);
        g_variant_dict_insert(&out, "uptime-us", "t", raw_get(&in, "uptime-us"));
        g_variant_dict_insert(&out, "bytes-read", "t", bytes_read);
        g_variant_dict_insert(&out, "bytes-written", "t", bytes_written);
        g_variant_dict_insert(&out, "requests", "t", requests);
        g_variant_dict_insert(&out, "errors", "t", errors);
        g_variant_dict_insert(&out, "read-bytes-per-sec", "d",
                              rate(bytes_read, sampler->previous_bytes_read, seconds));
        g_variant_dict_insert(&out, "write-bytes-per-sec", "d",
                              rate(bytes_written, sampler->previous_bytes_written, seconds));
        g_variant_dict_insert(&out, "ops-per-sec", "d",
                              rate(requests, sampler->previous_requests, seconds));
        g_variant_dict_insert(&out, "errors-per-sec", "d",
                              rate(errors, sampler->previous_errors, seconds));
        g_variant_dict_insert(&out, "latency-p50-us", "t", raw_get(&in, "latency-p50-us"));
        g_variant_dict_insert(&out, "latency-p99-us", "t", raw_get(&in, "latency-p99-us"));
        g_variant_dict_insert_value(&out, "queues", build_queues(&in));
        g_variant_dict_clear(&in);

        sampler->have_previous = TRUE;
        sampler->previous_time_us = now_us;
        sampler->previous_bytes_read = bytes_read;
        sampler->previous_bytes_written = bytes_written;
        sampler->previous_requests = requests;
        sampler->previous_errors = errors;
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
