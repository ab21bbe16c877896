/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-share: one share of the service (its generated SluiceShare proxy) plus
 * the last 60 s of throughput samples the graph draws.  It knows nothing of
 * the client that made it. */
#pragma once

#include <gio/gio.h>

#include "sluice-dbus.h"

G_BEGIN_DECLS

/* Samples kept for the graph: the service samples at most once a second and
 * the graph shows 60 s, so a few spare slots cover jitter. */
#define SA_SHARE_HISTORY 96
#define SA_SHARE_WINDOW_US (60 * G_USEC_PER_SEC)

typedef struct {
  gint64 time_us;        /* the sample's "timestamp-us" (service's monotonic clock) */
  double read_per_sec;   /* bytes/s */
  double write_per_sec;  /* bytes/s */
} SaSample;

#define SA_TYPE_SHARE (sa_share_get_type())
G_DECLARE_FINAL_TYPE(SaShare, sa_share, SA, SHARE, GObject)

SaShare *sa_share_new(SluiceShare *proxy);
SluiceShare *sa_share_get_proxy(SaShare *self);
const char *sa_share_get_object_path(SaShare *self);

/* The share's properties as the service last published them, "" while
 * unknown (transfer none: valid until the next change is dispatched). */
const char *sa_share_get_path(SaShare *self);
const char *sa_share_get_vm(SaShare *self);
const char *sa_share_get_tag(SaShare *self);
const char *sa_share_get_state(SaShare *self);
const char *sa_share_get_error(SaShare *self);
const char *sa_share_get_guest_hint(SaShare *self);
gboolean sa_share_get_autostart(SaShare *self);
/* Where the share is in the guest ("/mnt/src", "Z:", "" when Sluice has not
 * mounted it there), what Sluice does there, and whether it mounts it. */
const char *sa_share_get_guest_path(SaShare *self);
const char *sa_share_get_guest_state(SaShare *self);
gboolean sa_share_get_auto_mount(SaShare *self);
/* Asks the service to set AutoMount; a refusal comes back as "error". */
void sa_share_set_auto_mount(SaShare *self, gboolean auto_mount);
/* Where Sluice mounted the share in the guest ("" when it has not), read
 * from the service once GuestState has settled (guest-path-settle.h): the
 * cache may be behind a signal that arrived before the property change. */
#define SA_SHARE_GUEST_SETTLE_MS (30 * 1000)
void sa_share_settle_guest_path(SaShare *self, GAsyncReadyCallback callback, gpointer user_data);
char *sa_share_settle_guest_path_finish(SaShare *self, GAsyncResult *result, GError **error);

gboolean sa_share_get_read_only(SaShare *self);
/* Asks the service to flip ReadOnly; the "read-only" property follows the
 * service's answer (reverts and emits "error" if it refuses). */
void sa_share_set_read_only(SaShare *self, gboolean read_only);

/* While held (a widget that shows them is on screen), the service keeps the
 * share's Stats current (Share.WatchStats); released as often as held.
 * Unheld, nothing is sampled and Stats stays the last sample. */
void sa_share_hold_stats(SaShare *self);
void sa_share_release_stats(SaShare *self);
/* Whether Stats is kept current (held), so that its rates are now's. */
gboolean sa_share_stats_are_current(SaShare *self);
/* The last Stats dict, or NULL when the worker is not running. (transfer none) */
GVariant *sa_share_get_stats(SaShare *self);
double sa_share_get_stat_double(SaShare *self, const char *key);
guint64 sa_share_get_stat_uint64(SaShare *self, const char *key);

/* Samples oldest first; returns how many. */
guint sa_share_get_history(SaShare *self, const SaSample **samples);

/* Whether the share's worker is running or attached (something that Stop stops). */
gboolean sa_share_is_active(SaShare *self);

/* Share's methods; a refusal comes back as "error" (a sentence for the user). */
void sa_share_start(SaShare *self);
void sa_share_stop(SaShare *self);
/* Why the last Stop failed because the guest uses the share (.Busy, a
 * sentence naming the programs), or NULL: shown in the row with "Stop
 * Anyway" until the share stops or is stopped anyway. */
const char *sa_share_get_busy(SaShare *self);
/* Stop without asking the guest (StopWithOptions {force: true}). */
void sa_share_stop_anyway(SaShare *self);
void sa_share_attach(SaShare *self);
void sa_share_detach(SaShare *self);
void sa_share_set_vm(SaShare *self, const char *vm);

/* Share.Names / Share.Case as set ("" follows the VM's OS), and what the
 * worker serves now (ServedNames / ServedCase: "" when no worker runs).
 * (transfer none) */
const char *sa_share_get_names(SaShare *self);
const char *sa_share_get_case(SaShare *self);
const char *sa_share_get_served_names(SaShare *self);
const char *sa_share_get_served_case(SaShare *self);
/* Writes Share.Names / Share.Case; a refusal comes back as "error" and a
 * "changed" (so that what shows them goes back to the service's value). */
void sa_share_set_names(SaShare *self, const char *names);
void sa_share_set_case(SaShare *self, const char *case_mode);

G_END_DECLS
