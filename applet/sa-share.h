/* sa-share: one share of the service (a GDBusProxy on org.sluice.Sluice1.Share)
 * plus the last 60 s of throughput samples the graph draws. */
#pragma once

#include <gio/gio.h>

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

SaShare *sa_share_new(GDBusProxy *proxy);
GDBusProxy *sa_share_get_proxy(SaShare *self);
const char *sa_share_get_object_path(SaShare *self);

char *sa_share_dup_string(SaShare *self, const char *property);
gboolean sa_share_get_read_only(SaShare *self);
/* Asks the service to flip ReadOnly; the "read-only" property follows the
 * service's answer (reverts and emits "error" if it refuses). */
void sa_share_set_read_only(SaShare *self, gboolean read_only);

/* The last Stats dict, or NULL when the worker is not running. (transfer none) */
GVariant *sa_share_get_stats(SaShare *self);
double sa_share_get_stat_double(SaShare *self, const char *key);
guint64 sa_share_get_stat_uint64(SaShare *self, const char *key);

/* Samples oldest first; returns how many. */
guint sa_share_get_history(SaShare *self, const SaSample **samples);

/* Whether the share's worker is running or attached (something that Stop stops). */
gboolean sa_share_is_active(SaShare *self);

/* Calls a no-argument method (Start, Stop, Detach); errors come back as "error". */
void sa_share_call(SaShare *self, const char *method);
/* Same with arguments (a floating tuple is consumed). */
void sa_share_call_with(SaShare *self, const char *method, GVariant *args);

G_END_DECLS
