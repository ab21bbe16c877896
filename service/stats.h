/* stats.h — turning a worker's raw counters (Worker1.GetStats) into the
 * Share.Stats dictionary documented in data/org.sluice.Sluice1.xml:
 * totals, rates over the last interval, latency and per-queue counters. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
        gboolean have_previous;
        gint64 previous_time_us;
        guint64 previous_bytes_read;
        guint64 previous_bytes_written;
        guint64 previous_requests;
        guint64 previous_errors;
} SluiceStatsSampler;

/* Forget the previous sample (the worker restarted: its totals start at 0). */
void sluice_stats_sampler_reset(SluiceStatsSampler *sampler);
/* Builds a Share.Stats a{sv} (floating reference) from raw a{sv} counters
 * sampled at now_us (monotonic).  Malformed or missing raw values count as 0. */
GVariant *sluice_stats_sample(SluiceStatsSampler *sampler, GVariant *raw, gint64 now_us);
/* Whether two Share.Stats dictionaries differ in anything but the clocks
 * ("timestamp-us", "uptime-us"): PropertiesChanged is only worth it then. */
gboolean sluice_stats_differ(GVariant *a, GVariant *b);

G_END_DECLS
