/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-share: one share proxy, its read-only flag and its throughput history. */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "errors.h"
#include "guest-path-settle.h"
#include "sa-share.h"
#include "share-properties.h"
#include "wire-enums.h"

struct _SaShare {
  GObject parent_instance;
  SluiceShare *proxy;
  GVariant *last_stats;      /* the Stats value last seen, to tell a new one */
  gboolean read_only;        /* what the switch shows; follows the service */
  SaSample samples[SA_SHARE_HISTORY];
  guint head, count;         /* ring buffer: samples[head] is the oldest */
  gint64 last_sample_us;
  guint stats_holds;         /* widgets showing the stats now: we watch while > 0 */
  char *busy;                /* why the last Stop was refused (.Busy), until the share stops */
};

G_DEFINE_TYPE(SaShare, sa_share, G_TYPE_OBJECT)

enum { PROP_0, PROP_READ_ONLY, N_PROPS };
static GParamSpec *props[N_PROPS];

enum { SIGNAL_CHANGED, SIGNAL_STATS, SIGNAL_EVENT, SIGNAL_ERROR, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char *or_empty(const char *value)
{
  return value != NULL ? value : "";
}

const char *sa_share_get_path(SaShare *self)
{
  return or_empty(sluice_share_get_path(self->proxy));
}

const char *sa_share_get_vm(SaShare *self)
{
  return or_empty(sluice_share_get_vm(self->proxy));
}

const char *sa_share_get_tag(SaShare *self)
{
  return or_empty(sluice_share_get_tag(self->proxy));
}

const char *sa_share_get_state(SaShare *self)
{
  return or_empty(sluice_share_get_state(self->proxy));
}

const char *sa_share_get_error(SaShare *self)
{
  return or_empty(sluice_share_get_error(self->proxy));
}

const char *sa_share_get_guest_hint(SaShare *self)
{
  return or_empty(sluice_share_get_guest_hint(self->proxy));
}

const char *sa_share_get_guest_path(SaShare *self)
{
  return or_empty(sluice_share_get_guest_path(self->proxy));
}

const char *sa_share_get_guest_state(SaShare *self)
{
  return or_empty(sluice_share_get_guest_state(self->proxy));
}

gboolean sa_share_get_auto_mount(SaShare *self)
{
  return sluice_share_get_auto_mount(self->proxy);
}

gboolean sa_share_get_autostart(SaShare *self)
{
  return sluice_share_get_autostart(self->proxy);
}

gboolean sa_share_get_read_only(SaShare *self)
{
  return self->read_only;
}

GVariant *sa_share_get_stats(SaShare *self)
{
  /* Borrowed from the proxy's cache: safe until the next PropertiesChanged,
   * which is all callers need. */
  GVariant *value = sluice_share_get_stats(self->proxy);
  if (value == NULL)
    return NULL;
  if (!g_variant_is_of_type(value, G_VARIANT_TYPE_VARDICT) || g_variant_n_children(value) == 0)
    return NULL;
  return value;
}

double sa_share_get_stat_double(SaShare *self, const char *key)
{
  GVariant *stats = sa_share_get_stats(self);
  double d = 0;
  if (stats == NULL || !g_variant_lookup(stats, key, "d", &d))
    return 0;
  return d;
}

guint64 sa_share_get_stat_uint64(SaShare *self, const char *key)
{
  GVariant *stats = sa_share_get_stats(self);
  guint64 t = 0;
  if (stats == NULL || !g_variant_lookup(stats, key, "t", &t))
    return 0;
  return t;
}

guint sa_share_get_history(SaShare *self, const SaSample **samples)
{
  /* Keep the ring contiguous for callers: rotate so head is 0. */
  if (self->head != 0) {
    SaSample tmp[SA_SHARE_HISTORY];
    for (guint i = 0; i < self->count; i++)
      tmp[i] = self->samples[(self->head + i) % SA_SHARE_HISTORY];
    memcpy(self->samples, tmp, sizeof(SaSample) * self->count);
    self->head = 0;
  }
  *samples = self->samples;
  return self->count;
}

gboolean sa_share_is_active(SaShare *self)
{
  const char *state = sa_share_get_state(self);
  return sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_RUNNING) ||
         sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_ATTACHED) ||
         sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_STARTING);
}

static void push_sample(SaShare *self)
{
  GVariant *stats = sa_share_get_stats(self);
  guint64 ts = 0;
  double r = 0, w = 0;
  if (stats == NULL)
    return;
  if (!g_variant_lookup(stats, "timestamp-us", "t", &ts))
    ts = (guint64)g_get_monotonic_time();
  (void)g_variant_lookup(stats, "read-bytes-per-sec", "d", &r);
  (void)g_variant_lookup(stats, "write-bytes-per-sec", "d", &w);
  /* A restarted worker or service may reset the clock: start a fresh history
   * rather than drawing time backwards. */
  if ((gint64)ts <= self->last_sample_us && self->count > 0) {
    self->head = self->count = 0;
  }
  self->last_sample_us = (gint64)ts;
  guint slot = (self->head + self->count) % SA_SHARE_HISTORY;
  if (self->count == SA_SHARE_HISTORY)
    self->head = (self->head + 1) % SA_SHARE_HISTORY;
  else
    self->count++;
  self->samples[slot] = (SaSample){ (gint64)ts, r < 0 ? 0 : r, w < 0 ? 0 : w };
}

/* The service samples a share only while a client watches it (WatchStats,
 * tied to our bus name): the applet watches what a shown widget draws, so a
 * hidden window costs the service and the worker nothing. */
void sa_share_hold_stats(SaShare *self)
{
  if (self->stats_holds++ == 0)
    sluice_share_call_watch_stats(self->proxy, NULL, NULL, NULL);
}

void sa_share_release_stats(SaShare *self)
{
  g_return_if_fail(self->stats_holds > 0);
  if (--self->stats_holds > 0)
    return;
  sluice_share_call_unwatch_stats(self->proxy, NULL, NULL, NULL);
  /* the rates stop being current: who sums them (the tray) reads 0 now */
  g_signal_emit(self, signals[SIGNAL_STATS], 0);
}

gboolean sa_share_stats_are_current(SaShare *self)
{
  return self->stats_holds > 0;
}

static void update_read_only(SaShare *self)
{
  gboolean ro = sluice_share_get_read_only(self->proxy);
  if (ro != self->read_only) {
    self->read_only = ro;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_READ_ONLY]);
  }
}

static void on_properties_changed(GDBusProxy *proxy, GVariant *changed,
                                  const char *const *invalidated, gpointer user_data)
{
  SaShare *self = user_data;
  /* The cache already holds the new values; a Stats in @changed is a new
   * GVariant, so a pointer other than the one we hold means a new sample. */
  GVariant *current = sluice_share_get_stats(self->proxy);
  gboolean stats = current != NULL && current != self->last_stats;
  gboolean other = g_variant_n_children(changed) > (stats ? 1 : 0) ||
                   (invalidated != NULL && invalidated[0] != NULL);

  if (current != self->last_stats) {
    g_clear_pointer(&self->last_stats, g_variant_unref);
    self->last_stats = current != NULL ? g_variant_ref(current) : NULL;
  }
  update_read_only(self);
  /* stopped (by force, or the guest let go): nothing is busy any more */
  if (self->busy != NULL && !sa_share_is_active(self))
    g_clear_pointer(&self->busy, g_free);
  if (stats) {
    push_sample(self);
    g_signal_emit(self, signals[SIGNAL_STATS], 0);
  }
  if (other)
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static void on_event(SluiceShare *proxy, const char *kind, const char *message, gpointer user_data)
{
  g_signal_emit(user_data, signals[SIGNAL_EVENT], 0, kind, message);
}

static void report_error(SaShare *self, const GError *error)
{
  g_autofree char *msg = sluice_error_dup_user_message(error);
  g_signal_emit(self, signals[SIGNAL_ERROR], 0, msg);
}

/* One callback per method: each has its own typed _finish. */
static void on_start_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (!sluice_share_call_start_finish(SLUICE_SHARE(source), result, &error))
    report_error(self, error);
}

static void on_stop_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (sluice_share_call_stop_finish(SLUICE_SHARE(source), result, &error))
    return;
  /* the guest uses it: the row says so and offers to stop it anyway */
  if (g_error_matches(error, SLUICE_ERROR, SLUICE_ERROR_BUSY)) {
    g_free(self->busy);
    self->busy = sluice_error_dup_user_message(error);
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
    return;
  }
  report_error(self, error);
}

static void on_stop_anyway_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (!sluice_share_call_stop_with_options_finish(SLUICE_SHARE(source), result, &error))
    report_error(self, error);
}

static void on_attach_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  /* The guest hint also arrives as GuestHint and with the "attached" event. */
  if (!sluice_share_call_attach_finish(SLUICE_SHARE(source), NULL, result, &error))
    report_error(self, error);
}

static void on_detach_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (!sluice_share_call_detach_finish(SLUICE_SHARE(source), result, &error))
    report_error(self, error);
}

static void on_set_vm_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (!sluice_share_call_set_vm_finish(SLUICE_SHARE(source), result, &error))
    report_error(self, error);
}

void sa_share_start(SaShare *self)
{
  sluice_share_call_start(self->proxy, NULL, on_start_done, g_object_ref(self));
}

void sa_share_stop(SaShare *self)
{
  sluice_share_call_stop(self->proxy, NULL, on_stop_done, g_object_ref(self));
}

const char *sa_share_get_busy(SaShare *self)
{
  return self->busy;
}

void sa_share_stop_anyway(SaShare *self)
{
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_VARDICT);

  g_clear_pointer(&self->busy, g_free);
  g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
  g_variant_builder_add(&options, "{sv}", "force", g_variant_new_boolean(TRUE));
  sluice_share_call_stop_with_options(self->proxy, g_variant_builder_end(&options), NULL, on_stop_anyway_done,
                                      g_object_ref(self));
}

void sa_share_attach(SaShare *self)
{
  sluice_share_call_attach(self->proxy, NULL, on_attach_done, g_object_ref(self));
}

void sa_share_detach(SaShare *self)
{
  sluice_share_call_detach(self->proxy, NULL, on_detach_done, g_object_ref(self));
}

void sa_share_set_vm(SaShare *self, const char *vm)
{
  sluice_share_call_set_vm(self->proxy, vm, NULL, on_set_vm_done, g_object_ref(self));
}

static void on_set_read_only_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (sluice_client_share_set_finish(SLUICE_SHARE(source), result, &error))
    return;
  /* Refused: show what the service really has. */
  update_read_only(self);
  report_error(self, error);
}

void sa_share_set_read_only(SaShare *self, gboolean read_only)
{
  read_only = !!read_only;
  if (read_only == self->read_only)
    return;
  self->read_only = read_only;
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_READ_ONLY]);
  sluice_client_share_set_read_only(self->proxy, read_only, NULL, on_set_read_only_done,
                                    g_object_ref(self));
}

static void on_set_auto_mount_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (!sluice_client_share_set_finish(SLUICE_SHARE(source), result, &error)) {
    report_error(self, error);
    /* what the service really has (the menu shows the cached value) */
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
  }
}

void sa_share_set_auto_mount(SaShare *self, gboolean auto_mount)
{
  sluice_client_share_set_auto_mount(self->proxy, !!auto_mount, NULL, on_set_auto_mount_done,
                                     g_object_ref(self));
}

const char *sa_share_get_names(SaShare *self)
{
  return or_empty(sluice_share_get_names(self->proxy));
}

const char *sa_share_get_case(SaShare *self)
{
  return or_empty(sluice_share_get_case(self->proxy));
}

const char *sa_share_get_served_names(SaShare *self)
{
  return or_empty(sluice_share_get_served_names(self->proxy));
}

const char *sa_share_get_served_case(SaShare *self)
{
  return or_empty(sluice_share_get_served_case(self->proxy));
}

static void on_set_naming_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaShare) self = user_data;
  g_autoptr(GError) error = NULL;
  if (!sluice_client_share_set_finish(SLUICE_SHARE(source), result, &error)) {
    report_error(self, error);
    /* the drop-downs go back to what the service really has */
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
  }
}

void sa_share_set_names(SaShare *self, const char *names)
{
  if (g_str_equal(names, sa_share_get_names(self)))
    return;
  sluice_client_share_set_names(self->proxy, names, NULL, on_set_naming_done, g_object_ref(self));
}

void sa_share_set_case(SaShare *self, const char *case_mode)
{
  if (g_str_equal(case_mode, sa_share_get_case(self)))
    return;
  sluice_client_share_set_case(self->proxy, case_mode, NULL, on_set_naming_done, g_object_ref(self));
}

static void on_guest_path_settled(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  char *path = sluice_client_share_settle_guest_path_finish(SLUICE_SHARE(source), result, NULL, &error);
  if (path == NULL)
    g_task_return_error(task, error);
  else
    g_task_return_pointer(task, path, g_free);
}

void sa_share_settle_guest_path(SaShare *self, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new(self, NULL, callback, user_data);
  /* the guest's mount and unmount are bounded by the service; so is this */
  sluice_client_share_settle_guest_path(self->proxy, SA_SHARE_GUEST_SETTLE_MS, NULL,
                                        on_guest_path_settled, task);
}

char *sa_share_settle_guest_path_finish(SaShare *self, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer(G_TASK(result), error);
}

SluiceShare *sa_share_get_proxy(SaShare *self)
{
  return self->proxy;
}

const char *sa_share_get_object_path(SaShare *self)
{
  return g_dbus_proxy_get_object_path(G_DBUS_PROXY(self->proxy));
}

static void sa_share_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  SaShare *self = SA_SHARE(object);
  switch (id) {
  case PROP_READ_ONLY:
    g_value_set_boolean(value, self->read_only);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void sa_share_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  SaShare *self = SA_SHARE(object);
  switch (id) {
  case PROP_READ_ONLY:
    sa_share_set_read_only(self, g_value_get_boolean(value));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void sa_share_dispose(GObject *object)
{
  SaShare *self = SA_SHARE(object);
  if (self->proxy != NULL) {
    g_signal_handlers_disconnect_by_data(self->proxy, self);
    g_clear_object(&self->proxy);
  }
  g_clear_pointer(&self->last_stats, g_variant_unref);
  g_clear_pointer(&self->busy, g_free);
  G_OBJECT_CLASS(sa_share_parent_class)->dispose(object);
}

static void sa_share_class_init(SaShareClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  /* the service's named errors arrive as SLUICE_ERROR (Busy, below) only
   * once the domain is registered */
  (void)sluice_error_quark();
  object_class->dispose = sa_share_dispose;
  object_class->get_property = sa_share_get_property;
  object_class->set_property = sa_share_set_property;

  props[PROP_READ_ONLY] = g_param_spec_boolean("read-only", NULL, NULL, FALSE,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                               G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, props);

  /* Any property but Stats changed. */
  signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* A new Stats sample arrived (one redraw per sample). */
  signals[SIGNAL_STATS] = g_signal_new("stats", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* Share.Event(kind, message) from the service. */
  signals[SIGNAL_EVENT] = g_signal_new("event", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                       G_TYPE_STRING, G_TYPE_STRING);
  /* A call we made was refused; the argument is a sentence for the user. */
  signals[SIGNAL_ERROR] = g_signal_new("error", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void sa_share_init(SaShare *self)
{
}

SaShare *sa_share_new(SluiceShare *proxy)
{
  SaShare *self = g_object_new(SA_TYPE_SHARE, NULL);
  self->proxy = g_object_ref(proxy);
  self->read_only = sluice_share_get_read_only(proxy);
  if (sluice_share_get_stats(proxy) != NULL)
    self->last_stats = g_variant_ref(sluice_share_get_stats(proxy));
  push_sample(self);
  g_signal_connect(proxy, "g-properties-changed", G_CALLBACK(on_properties_changed), self);
  /* Share.Event, as the generated proxy's signal. */
  g_signal_connect(proxy, "event", G_CALLBACK(on_event), self);
  return self;
}
