/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-notify: turns service events into notifications. */
#include "config.h"

#include <glib/gi18n.h>
#include <libnotify/notify.h>

#include "sa-format.h"
#include "sa-notify.h"
#include "share-properties.h"
#include "wire-enums.h"

struct _SaNotify {
  GObject parent_instance;
  GApplication *app;
  SaClient *client;
  GPtrArray *live;         /* NotifyNotification kept until closed (actions need them) */
  GHashTable *shm_warned;  /* VM names already told about (once per run) */
  gboolean was_connected, said_unavailable;
  guint unavailable_timeout;
};

G_DEFINE_TYPE(SaNotify, sa_notify, G_TYPE_OBJECT)

static void on_closed(NotifyNotification *n, gpointer user_data)
{
  SaNotify *self = user_data;
  g_ptr_array_remove(self->live, n);
}

/* Whether the notification server reads bodies as markup: then text from
 * elsewhere (folder, VM and guest names, the guest's paths) is escaped, so
 * that it shows as written and cannot format or hide anything. */
static gboolean server_reads_markup(void)
{
  GList *caps = notify_is_initted() ? notify_get_server_caps() : NULL;
  gboolean markup = g_list_find_custom(caps, "body-markup", (GCompareFunc)g_strcmp0) != NULL;
  g_list_free_full(caps, g_free);
  return markup;
}

/* Builds a notification; the caller adds actions, then show_note() sends it. */
static NotifyNotification *make_note(SaNotify *self, const char *summary, const char *body,
                                     NotifyUrgency urgency, const char *icon)
{
  g_autofree char *escaped = body != NULL && server_reads_markup() ? g_markup_escape_text(body, -1) : NULL;
  NotifyNotification *n = notify_notification_new(summary, escaped != NULL ? escaped : body, icon);
  notify_notification_set_app_name(n, _("Sluice"));
  notify_notification_set_urgency(n, urgency);
  notify_notification_set_hint(n, "desktop-entry", g_variant_new_string("org.sluice.Applet"));
  return n;
}

/* Sends @n (taking it) and keeps it alive until closed: actions need it. */
static void show_note(SaNotify *self, NotifyNotification *n)
{
  g_autoptr(GError) error = NULL;
  if (!notify_is_initted() || !notify_notification_show(n, &error)) {
    g_message("Cannot show a notification: %s", error != NULL ? error->message : "libnotify not initialised");
    g_object_unref(n);
    return;
  }
  g_signal_connect(n, "closed", G_CALLBACK(on_closed), self);
  g_ptr_array_add(self->live, n);
}

static void on_open_action(NotifyNotification *n, char *action, gpointer user_data)
{
  SaNotify *self = user_data;
  g_action_group_activate_action(G_ACTION_GROUP(self->app), "show", NULL);
}

typedef struct {
  SaNotify *self;
  char *summary;
  char *fallback;   /* the event's message, for a guest hint that is empty */
} AttachedNote;

static void attached_note_free(AttachedNote *note)
{
  g_object_unref(note->self);
  g_free(note->summary);
  g_free(note->fallback);
  g_free(note);
}

static void on_guest_hint(GObject *source, GAsyncResult *result, gpointer user_data)
{
  AttachedNote *note = user_data;
  g_autofree char *hint = sluice_client_share_fetch_finish(SLUICE_SHARE(source), result, NULL);
  show_note(note->self, make_note(note->self, note->summary, hint != NULL && *hint ? hint : note->fallback,
                                  NOTIFY_URGENCY_NORMAL, "sluice-active-symbolic"));
  attached_note_free(note);
}

/* Without Sluice's mount in the guest, "attached" says what to do there
 * (GuestHint).  The service sets the hint before it emits the event, but
 * property changes reach us after the signal (GDBus sends them from an
 * idle), so the cached value can still be the old empty one: then ask the
 * service for the value it has now. */
static void notify_with_hint(SaShare *share, AttachedNote *note)
{
  const char *hint = sa_share_get_guest_hint(share);
  if (*hint) {
    show_note(note->self, make_note(note->self, note->summary, hint, NOTIFY_URGENCY_NORMAL,
                                    "sluice-active-symbolic"));
    attached_note_free(note);
    return;
  }
  sluice_client_share_fetch_guest_hint(sa_share_get_proxy(share), NULL, on_guest_hint, note);
}

/* Mounted by Sluice: the service's sentence says where ("is drive Z: in win11"). */
static void show_placed(AttachedNote *note)
{
  show_note(note->self, make_note(note->self, note->summary, note->fallback, NOTIFY_URGENCY_NORMAL,
                                  "sluice-active-symbolic"));
  attached_note_free(note);
}

static void on_guest_path(GObject *source, GAsyncResult *result, gpointer user_data)
{
  AttachedNote *note = user_data;
  g_autofree char *path = sa_share_settle_guest_path_finish(SA_SHARE(source), result, NULL);
  if (path == NULL || *path == '\0') {
    notify_with_hint(SA_SHARE(source), note);
    return;
  }
  show_placed(note);
}

/* With a guest Sluice mounted the share in, the event comes once it is
 * mounted and its message says where; otherwise the hint says what to do. */
static void notify_attached(SaNotify *self, SaShare *share, char *summary, const char *message)
{
  AttachedNote *note = g_new0(AttachedNote, 1);
  note->self = g_object_ref(self);
  note->summary = summary;
  note->fallback = g_strdup(message);
  /* not the cache: it may be behind the event, as for the hint */
  sa_share_settle_guest_path(share, on_guest_path, note);
}

static void on_share_event(SaClient *client, SaShare *share, const char *kind,
                           const char *message, gpointer user_data)
{
  SaNotify *self = user_data;
  const char *path = sa_share_get_path(share);
  const char *vm = sa_share_get_vm(share);
  g_autofree char *name = sa_format_folder_name(path);
  g_autofree char *summary = NULL, *body = NULL;
  NotifyUrgency urgency = NOTIFY_URGENCY_NORMAL;
  const char *icon = "sluice-active-symbolic";

  SluiceWireEvent event;

  if (!sluice_wire_event_parse(kind, &event))
    return;  /* a kind new to this build */
  switch (event) {
  case SLUICE_WIRE_EVENT_ATTACHED:
    /* Translators: "Projects" is now in win11 */
    notify_attached(self, share, g_strdup_printf(_("“%s” is now in %s"), name, vm), message);
    return;
  case SLUICE_WIRE_EVENT_CRASHED:
    summary = g_strdup_printf(_("Sharing “%s” stopped unexpectedly"), name);
    body = g_strdup(message);
    urgency = NOTIFY_URGENCY_CRITICAL;
    icon = "sluice-error-symbolic";
    break;
  case SLUICE_WIRE_EVENT_RECOVERED:
    summary = g_strdup_printf(_("“%s” is shared again"), name);
    body = g_strdup(message);
    break;
  case SLUICE_WIRE_EVENT_RESUMED:
    /* The guest noticed nothing and nothing failed: a low-urgency note,
     * which notification servers keep out of the way (no popup over the
     * user's work), so the crash can still be looked up. */
    summary = g_strdup_printf(_("“%s” recovered from a crash"), name);
    body = g_strdup(message);
    urgency = NOTIFY_URGENCY_LOW;
    break;
  case SLUICE_WIRE_EVENT_LETTER_CHANGED:
    /* Its drive letter was taken in Windows: the user looks under another one. */
    summary = g_strdup_printf(_("“%s” has another drive letter"), name);
    body = g_strdup(message);
    break;
  case SLUICE_WIRE_EVENT_FAILED:
    summary = g_strdup_printf(_("Could not share “%s”"), name);
    body = g_strdup(message);
    urgency = NOTIFY_URGENCY_CRITICAL;
    icon = "sluice-error-symbolic";
    break;
  case SLUICE_WIRE_EVENT_DETACHED:
  default:
    return;  /* "detached" is what the user just did */
  }
  NotifyNotification *n = make_note(self, summary, body, urgency, icon);
  if (urgency == NOTIFY_URGENCY_CRITICAL)
    notify_notification_add_action(n, "open", _("Open Sluice"), on_open_action, self, NULL);
  show_note(self, n);
}

static void report_fix(const char *message, gboolean is_error, gpointer user_data)
{
  g_autoptr(SaNotify) self = user_data;
  show_note(self, make_note(self, is_error ? _("Could not enable shared memory") : _("Shared memory enabled"),
                            message, NOTIFY_URGENCY_NORMAL,
                            is_error ? "sluice-error-symbolic" : "sluice-idle-symbolic"));
}

static void on_enable_shm_action(NotifyNotification *n, char *action, gpointer user_data)
{
  SaNotify *self = user_data;
  const char *vm_name = g_object_get_data(G_OBJECT(n), "sluice-vm");
  SluiceVm *vm = vm_name != NULL ? sa_client_find_vm(self->client, vm_name) : NULL;
  if (vm != NULL)
    sa_vm_enable_shared_memory(vm, G_CALLBACK(report_fix), g_object_ref(self));
}

/* A share waits on a VM that cannot take it: say so once per VM, with the fix. */
static void check_shared_memory(SaNotify *self)
{
  GListModel *shares = sa_client_get_shares(self->client);
  guint n = g_list_model_get_n_items(shares);
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    const char *vm_name = sa_share_get_vm(share);
    SluiceVm *vm = *vm_name ? sa_client_find_vm(self->client, vm_name) : NULL;
    if (vm == NULL || sluice_vm_get_shared_memory(vm) || g_hash_table_contains(self->shm_warned, vm_name))
      continue;
    g_hash_table_add(self->shm_warned, g_strdup(vm_name));
    g_autofree char *summary = g_strdup_printf(_("%s has no shared memory"), vm_name);
    NotifyNotification *note =
      make_note(self, summary, _("Folder sharing needs it. Sluice can turn it on; it takes effect the next time the VM starts."),
                NOTIFY_URGENCY_NORMAL, "sluice-error-symbolic");
    g_object_set_data_full(G_OBJECT(note), "sluice-vm", g_strdup(vm_name), g_free);
    notify_notification_add_action(note, "enable-shared-memory", _("Enable Shared Memory"),
                                   on_enable_shm_action, self, NULL);
    show_note(self, note);
  }
}

static void on_share_changed(SaClient *client, SaShare *share, gpointer user_data)
{
  check_shared_memory(user_data);
}

static void on_shares_changed(GListModel *model, guint pos, guint removed, guint added, gpointer user_data)
{
  if (added > 0)
    check_shared_memory(user_data);
}

static void on_vms_changed(SaClient *client, gpointer user_data)
{
  check_shared_memory(user_data);
}

static gboolean on_unavailable_timeout(gpointer user_data)
{
  SaNotify *self = user_data;
  self->unavailable_timeout = 0;
  if (sa_client_is_connected(self->client) || self->said_unavailable)
    return G_SOURCE_REMOVE;
  self->said_unavailable = TRUE;
  show_note(self, make_note(self, self->was_connected ? _("The Sluice service stopped")
                                                      : _("The Sluice service is unavailable"),
                            _("Shared folders are not served until it runs again. Sluice reconnects by itself."),
                            NOTIFY_URGENCY_CRITICAL, "sluice-error-symbolic"));
  return G_SOURCE_REMOVE;
}

static void on_connected(SaClient *client, GParamSpec *pspec, gpointer user_data)
{
  SaNotify *self = user_data;
  if (sa_client_is_connected(client)) {
    self->was_connected = TRUE;
    self->said_unavailable = FALSE;   /* a later outage is news again */
    g_clear_handle_id(&self->unavailable_timeout, g_source_remove);
    return;
  }
  /* A restart (service replaced, upgrade) is not worth a notification. */
  if (self->unavailable_timeout == 0)
    self->unavailable_timeout = g_timeout_add_seconds(3, on_unavailable_timeout, self);
}

static void sa_notify_dispose(GObject *object)
{
  SaNotify *self = SA_NOTIFY(object);
  g_clear_handle_id(&self->unavailable_timeout, g_source_remove);
  if (self->client != NULL) {
    g_signal_handlers_disconnect_by_data(self->client, self);
    g_signal_handlers_disconnect_by_data(sa_client_get_shares(self->client), self);
  }
  if (self->live != NULL)
    for (guint i = 0; i < self->live->len; i++)
      g_signal_handlers_disconnect_by_data(self->live->pdata[i], self);
  g_clear_pointer(&self->live, g_ptr_array_unref);
  g_clear_pointer(&self->shm_warned, g_hash_table_unref);
  g_clear_object(&self->client);
  G_OBJECT_CLASS(sa_notify_parent_class)->dispose(object);
}

static void sa_notify_class_init(SaNotifyClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = sa_notify_dispose;
}

static void sa_notify_init(SaNotify *self)
{
  self->live = g_ptr_array_new_with_free_func(g_object_unref);
  self->shm_warned = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

SaNotify *sa_notify_new(GApplication *app, SaClient *client)
{
  SaNotify *self = g_object_new(SA_TYPE_NOTIFY, NULL);
  self->app = app;
  self->client = g_object_ref(client);
  if (!notify_is_initted())
    notify_init(_("Sluice"));
  g_signal_connect(client, "share-event", G_CALLBACK(on_share_event), self);
  g_signal_connect(client, "share-changed", G_CALLBACK(on_share_changed), self);
  g_signal_connect(client, "vms-changed", G_CALLBACK(on_vms_changed), self);
  g_signal_connect(client, "notify::connected", G_CALLBACK(on_connected), self);
  g_signal_connect(sa_client_get_shares(client), "items-changed", G_CALLBACK(on_shares_changed), self);
  on_connected(client, NULL, self);
  return self;
}
