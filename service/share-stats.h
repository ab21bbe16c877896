/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-stats.h — sampling a running worker's counters into the share's
 * Stats property (stats.h turns them into the published dictionary), only
 * while someone looks: every interval while at least one client watches
 * (a client is its unique bus name: when it leaves the bus, its watch
 * ends), and once on demand.  Otherwise nothing runs: an idle desktop's
 * service and workers sleep. */
#pragma once

#include <gio/gio.h>

#include "sluice-dbus.h"
#include "worker.h"

G_BEGIN_DECLS

#define SLUICE_TYPE_SHARE_STATS (sluice_share_stats_get_type())
G_DECLARE_FINAL_TYPE(SluiceShareStats, sluice_share_stats, SLUICE, SHARE_STATS, GObject)

/* Publishes into IFACE (not a reference: the share outlives its sampler)
 * every INTERVAL_MS while started and watched; TAG names the share in
 * debug messages. */
SluiceShareStats *sluice_share_stats_new(SluiceShare *iface, guint interval_ms, const char *tag);
/* A worker of the share crashed ("worker-crashes"). */
void sluice_share_stats_count_crash(SluiceShareStats *self);
/* Samples WORKER's control channel from now on: once at once, then while
 * watched or asked.  RESTARTED: the share runs on with a new worker, whose
 * counters are added to what the share counted so far (stats.h); else the
 * count begins now.  When started already, only RESTARTED does anything (a
 * resumed worker took over while the share ran on). */
void sluice_share_stats_start(SluiceShareStats *self, SluiceWorker *worker, gboolean restarted);
/* Stops sampling; Stats becomes empty; waiting sample calls get it. */
void sluice_share_stats_stop(SluiceShareStats *self);
/* CLIENT (a unique name on CONNECTION) watches from now on, until
 * unwatch or until it leaves the bus.  Watching twice is one watch.  Kept
 * across stops and starts of the worker. */
void sluice_share_stats_watch(SluiceShareStats *self, GDBusConnection *connection, const char *client);
/* CLIENT's watch ends (nothing when it has none). */
void sluice_share_stats_unwatch(SluiceShareStats *self, const char *client);
guint sluice_share_stats_n_watchers(SluiceShareStats *self);
/* A fresh sample (also published): at once when the rates it gives are
 * over at most two intervals, else from a second sample an interval
 * later.  The current (empty) Stats when the worker is not running. */
void sluice_share_stats_sample_async(SluiceShareStats *self, GAsyncReadyCallback callback,
                                     gpointer user_data);
/* (transfer full) the Stats a{sv}. */
GVariant *sluice_share_stats_sample_finish(SluiceShareStats *self, GAsyncResult *result);

G_END_DECLS
