/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats.h — turning a worker's raw counters (Worker1.GetStats) into the
 * Share.Stats dictionary documented in data/org.sluice.Sluice1.xml:
 * totals, rates over the last interval, latency and per-queue counters.
 *
 * The totals a person reads are the share's, not one process's: a share's
 * worker may be replaced while the share runs (a crash and its restart), and
 * a new sluice-fs counts from 0.  The sampler keeps what the earlier workers
 * counted and adds it to the current worker's counters, so bytes-read,
 * bytes-written, requests and errors only grow from the moment counting
 * began ("since-us", wall clock) until the share stops.  What a worker
 * counted after its last sample and before it died is lost with it (at most
 * one sample interval).  "resume-replayed" and "resume-failed" (what
 * resumed workers did with the requests in flight at a crash) add up the
 * same way; "worker-crashes" is the service's own count.  Latency and the per-queue counters describe the
 * current worker alone (its "uptime-us"). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
        guint64 bytes_read;
        guint64 bytes_written;
        guint64 requests;
        guint64 errors;
        guint64 resume_replayed;      /* in-flight requests a resumed worker ran again */
        guint64 resume_failed;        /* ... answered EIO instead */
} SluiceStatsTotals;

typedef struct {
        gint64 since_us;              /* wall clock when counting began; 0: not begun */
        SluiceStatsTotals earlier;    /* what the share's previous workers counted */
        SluiceStatsTotals worker;     /* the current worker's counters at its last sample */
        guint64 worker_uptime_us;     /* and its uptime then: a smaller one is a new process */
        gboolean have_previous;       /* a sample to compute rates against */
        gint64 previous_time_us;      /* monotonic */
        SluiceStatsTotals previous;   /* the share's totals at that sample */
        guint64 worker_crashes;       /* counted by the service, not a worker */
} SluiceStatsSampler;

/* Counting begins (the share started): totals from 0, since_wall_us
 * (g_get_real_time()) published as "since-us". */
void sluice_stats_sampler_begin(SluiceStatsSampler *sampler, gint64 since_wall_us);
/* The share's worker was replaced by a new process: its counters start at 0,
 * so the last ones seen of the old process are kept in the share's totals.
 * (A process whose counters or uptime went backwards is taken as new even
 * without this call.)  The next sample has no rates: the interval spans the gap. */
void sluice_stats_sampler_new_worker(SluiceStatsSampler *sampler);
/* A worker of the share died unexpectedly ("worker-crashes"; from 0 at
 * sluice_stats_sampler_begin()). */
void sluice_stats_sampler_count_crash(SluiceStatsSampler *sampler);
/* Builds a Share.Stats a{sv} (floating reference) from raw a{sv} counters
 * sampled at now_us (monotonic).  Malformed or missing raw values count as 0.
 * Counting begins now if sluice_stats_sampler_begin() was not called. */
GVariant *sluice_stats_sample(SluiceStatsSampler *sampler, GVariant *raw, gint64 now_us);
/* Whether two Share.Stats dictionaries differ in anything but the clocks
 * ("timestamp-us", "uptime-us"): PropertiesChanged is only worth it then. */
gboolean sluice_stats_differ(GVariant *a, GVariant *b);

G_END_DECLS
