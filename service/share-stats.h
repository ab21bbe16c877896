/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-stats.h — polling a running worker's counters into the share's
 * Stats property (stats.h turns them into the published dictionary). */
#pragma once

#include <gio/gio.h>

#include "sluice-dbus.h"
#include "worker.h"

G_BEGIN_DECLS

#define SLUICE_TYPE_SHARE_STATS (sluice_share_stats_get_type())
G_DECLARE_FINAL_TYPE(SluiceShareStats, sluice_share_stats, SLUICE, SHARE_STATS, GObject)

/* Publishes into IFACE (not a reference: the share outlives its poller)
 * every INTERVAL_MS while started; TAG names the share in debug messages. */
SluiceShareStats *sluice_share_stats_new(SluiceShare *iface, guint interval_ms, const char *tag);
/* Polls WORKER's control channel from now on (no-op when started).
 * RESTARTED: the share runs on with a new worker, whose counters are added to
 * what the share counted so far (stats.h); else the count begins now. */
void sluice_share_stats_start(SluiceShareStats *self, SluiceWorker *worker, gboolean restarted);
/* Stops polling; Stats becomes empty. */
void sluice_share_stats_stop(SluiceShareStats *self);

G_END_DECLS
