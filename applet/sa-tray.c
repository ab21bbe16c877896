/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-tray: StatusNotifierItem over GDBus.
 *
 * No GTK4 SNI library exists in Debian 12 (libayatana-appindicator is GTK3),
 * so the item is served here directly.  Hosts read everything with GetAll
 * and listen to New* signals; the item re-registers whenever a watcher
 * (re)appears on the bus. */
#include "config.h"

#include <glib/gi18n.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <unistd.h>

#include "sa-format.h"
#include "sa-tray-menu.h"
#include "sa-tray.h"
#include "wire-enums.h"

#define WATCHER_NAME "org.kde.StatusNotifierWatcher"
#define WATCHER_PATH "/StatusNotifierWatcher"
#define ITEM_IFACE "org.kde.StatusNotifierItem"

static const char item_xml[] =
  "<node>"
  " <interface name='org.kde.StatusNotifierItem'>"
  "  <property name='Category' type='s' access='read'/>"
  "  <property name='Id' type='s' access='read'/>"
  "  <property name='Title' type='s' access='read'/>"
  "  <property name='Status' type='s' access='read'/>"
  "  <property name='WindowId' type='i' access='read'/>"
  "  <property name='IconThemePath' type='s' access='read'/>"
  "  <property name='IconName' type='s' access='read'/>"
  "  <property name='IconPixmap' type='a(iiay)' access='read'/>"
  "  <property name='OverlayIconName' type='s' access='read'/>"
  "  <property name='OverlayIconPixmap' type='a(iiay)' access='read'/>"
  "  <property name='AttentionIconName' type='s' access='read'/>"
  "  <property name='AttentionIconPixmap' type='a(iiay)' access='read'/>"
  "  <property name='AttentionMovieName' type='s' access='read'/>"
  "  <property name='ToolTip' type='(sa(iiay)ss)' access='read'/>"
  "  <property name='ItemIsMenu' type='b' access='read'/>"
  "  <property name='Menu' type='o' access='read'/>"
  "  <method name='ContextMenu'><arg name='x' type='i' direction='in'/><arg name='y' type='i' direction='in'/></method>"
  "  <method name='Activate'><arg name='x' type='i' direction='in'/><arg name='y' type='i' direction='in'/></method>"
  "  <method name='SecondaryActivate'><arg name='x' type='i' direction='in'/><arg name='y' type='i' direction='in'/></method>"
  "  <method name='Scroll'><arg name='delta' type='i' direction='in'/><arg name='orientation' type='s' direction='in'/></method>"
  "  <signal name='NewTitle'/>"
  "  <signal name='NewIcon'/>"
  "  <signal name='NewAttentionIcon'/>"
  "  <signal name='NewOverlayIcon'/>"
  "  <signal name='NewToolTip'/>"
  "  <signal name='NewStatus'><arg name='status' type='s'/></signal>"
  " </interface>"
  "</node>";

struct _SaTray {
  GObject parent_instance;
  GApplication *app;
  SaClient *client;
  SaTrayMenu *menu;
  GDBusConnection *bus;
  GDBusNodeInfo *node;
  char *bus_name;
  guint object_id, own_id, watch_id;
  gboolean has_host, said_no_host, watcher_seen;
  guint no_host_timeout;
  const char *mood;          /* "idle" | "active" | "error" */
  char *description;
  GHashTable *pixmaps;       /* mood → GVariant a(iiay) */
};

G_DEFINE_TYPE(SaTray, sa_tray, G_TYPE_OBJECT)

enum { SIGNAL_HOST_CHANGED, SIGNAL_NO_HOST, N_SIGNALS };
static guint signals[N_SIGNALS];

static char *icon_name_for(const char *mood)
{
  return g_strdup_printf("sluice-%s-symbolic", mood);
}

/* IconPixmap: ARGB32 in network byte order, a few sizes, rendered from the
 * same SVGs the icon theme has (for hosts that cannot find our theme). */
static GVariant *render_pixmaps(const char *mood)
{
  static const int sizes[] = { 16, 22, 32, 48 };
  g_autofree char *resource = g_strdup_printf("/org/sluice/Applet/icons/sluice-%s-symbolic.svg", mood);
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a(iiay)"));
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new_from_resource_at_scale(resource, sizes[i], sizes[i], TRUE, &error);
    if (pixbuf == NULL) {
      g_debug("tray pixmap %s: %s", resource, error->message);
      continue;
    }
    g_autoptr(GdkPixbuf) rgba = gdk_pixbuf_add_alpha(pixbuf, FALSE, 0, 0, 0);
    int w = gdk_pixbuf_get_width(rgba), h = gdk_pixbuf_get_height(rgba);
    int stride = gdk_pixbuf_get_rowstride(rgba);
    const guint8 *src = gdk_pixbuf_read_pixels(rgba);
    g_autofree guint8 *argb = g_malloc((gsize)w * h * 4);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const guint8 *p = src + y * stride + x * 4;
        guint8 *q = argb + ((gsize)y * w + x) * 4;
        q[0] = p[3];
        q[1] = p[0];
        q[2] = p[1];
        q[3] = p[2];
      }
    g_variant_builder_add(&b, "(ii@ay)", w, h,
                          g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, argb, (gsize)w * h * 4, 1));
  }
  return g_variant_ref_sink(g_variant_builder_end(&b));
}

static GVariant *pixmaps_for(SaTray *self, const char *mood)
{
  GVariant *v = g_hash_table_lookup(self->pixmaps, mood);
  if (v == NULL) {
    v = render_pixmaps(mood);
    g_hash_table_insert(self->pixmaps, (gpointer)mood, v);
  }
  return v;
}

static const char *status_for(const char *mood)
{
  return g_str_equal(mood, "error") ? "NeedsAttention" : "Active";
}

static GVariant *get_property(GDBusConnection *bus, const char *sender, const char *path,
                              const char *iface, const char *name, GError **error,
                              gpointer user_data)
{
  SaTray *self = user_data;
  if (g_str_equal(name, "Category"))
    return g_variant_new_string("ApplicationStatus");
  if (g_str_equal(name, "Id"))
    return g_variant_new_string("sluice");
  if (g_str_equal(name, "Title"))
    return g_variant_new_string(_("Sluice"));
  if (g_str_equal(name, "Status"))
    return g_variant_new_string(status_for(self->mood));
  if (g_str_equal(name, "WindowId"))
    return g_variant_new_int32(0);
  /* Installed icons are in hicolor; hosts that cannot find them use IconPixmap. */
  if (g_str_equal(name, "IconThemePath"))
    return g_variant_new_string("");
  if (g_str_equal(name, "IconName") || g_str_equal(name, "AttentionIconName")) {
    g_autofree char *icon = icon_name_for(g_str_equal(name, "IconName") ? self->mood : "error");
    return g_variant_new_string(icon);
  }
  if (g_str_equal(name, "IconPixmap"))
    return g_variant_ref(pixmaps_for(self, self->mood));
  if (g_str_equal(name, "AttentionIconPixmap"))
    return g_variant_ref(pixmaps_for(self, "error"));
  if (g_str_equal(name, "OverlayIconPixmap"))
    return g_variant_new_array(G_VARIANT_TYPE("(iiay)"), NULL, 0);
  if (g_str_equal(name, "OverlayIconName") || g_str_equal(name, "AttentionMovieName"))
    return g_variant_new_string("");
  if (g_str_equal(name, "ToolTip")) {
    g_autofree char *icon = icon_name_for(self->mood);
    return g_variant_new("(s@a(iiay)ss)", icon, g_variant_new_array(G_VARIANT_TYPE("(iiay)"), NULL, 0),
                         _("Sluice"), self->description);
  }
  if (g_str_equal(name, "ItemIsMenu"))
    return g_variant_new_boolean(FALSE);
  if (g_str_equal(name, "Menu"))
    return g_variant_new_object_path(SA_TRAY_MENU_PATH);
  g_set_error(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY, "No property %s", name);
  return NULL;
}

static void method_call(GDBusConnection *bus, const char *sender, const char *path,
                        const char *iface, const char *method, GVariant *params,
                        GDBusMethodInvocation *invocation, gpointer user_data)
{
  SaTray *self = user_data;
  if (g_str_equal(method, "Activate") || g_str_equal(method, "SecondaryActivate"))
    g_action_group_activate_action(G_ACTION_GROUP(self->app), "show", NULL);
  /* ContextMenu and Scroll: hosts show the dbusmenu themselves; nothing to scroll. */
  g_dbus_method_invocation_return_value(invocation, NULL);
}

static const GDBusInterfaceVTable item_vtable = { method_call, get_property, NULL, { 0 } };

static void emit(SaTray *self, const char *signal, GVariant *params)
{
  if (self->bus != NULL && self->object_id != 0)
    g_dbus_connection_emit_signal(self->bus, NULL, SA_TRAY_ITEM_PATH, ITEM_IFACE, signal, params, NULL);
}

static void say_no_host(SaTray *self)
{
  if (self->said_no_host || self->has_host)
    return;
  self->said_no_host = TRUE;
  g_signal_emit(self, signals[SIGNAL_NO_HOST], 0);
}

static gboolean on_no_host_timeout(gpointer user_data)
{
  SaTray *self = user_data;
  self->no_host_timeout = 0;
  say_no_host(self);
  return G_SOURCE_REMOVE;
}

static void set_has_host(SaTray *self, gboolean has_host)
{
  if (self->has_host == has_host)
    return;
  self->has_host = has_host;
  g_signal_emit(self, signals[SIGNAL_HOST_CHANGED], 0);
}

static void on_registered(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(SaTray) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) ret = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), result, &error);
  if (ret == NULL) {
    g_message("The tray did not accept Sluice's icon: %s", error->message);
    set_has_host(self, FALSE);
    say_no_host(self);
    return;
  }
  g_clear_handle_id(&self->no_host_timeout, g_source_remove);
  set_has_host(self, TRUE);
}

static void on_watcher_appeared(GDBusConnection *bus, const char *name, const char *owner,
                                gpointer user_data)
{
  SaTray *self = user_data;
  self->watcher_seen = TRUE;
  /* A new watcher knows nothing of us: register (again). */
  g_dbus_connection_call(bus, WATCHER_NAME, WATCHER_PATH, WATCHER_NAME,
                         "RegisterStatusNotifierItem", g_variant_new("(s)", self->bus_name),
                         NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, on_registered,
                         g_object_ref(self));
}

static void on_watcher_vanished(GDBusConnection *bus, const char *name, gpointer user_data)
{
  SaTray *self = user_data;
  set_has_host(self, FALSE);
  /* Give a panel that is just starting a moment before saying there is none. */
  if (!self->said_no_host && self->no_host_timeout == 0)
    self->no_host_timeout = g_timeout_add_seconds(3, on_no_host_timeout, self);
}

/* Recomputes mood and tooltip; emits only what changed. */
static void update(SaTray *self)
{
  GListModel *shares = sa_client_get_shares(self->client);
  guint n = g_list_model_get_n_items(shares);
  double rd = 0, wr = 0;
  gboolean failed = !sa_client_is_connected(self->client);
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    const char *state = sa_share_get_state(share);
    if (sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_FAILED))
      failed = TRUE;
    /* hidden, the applet watches no stats: old rates would show as now's */
    if (sa_share_stats_are_current(share)) {
      rd += sa_share_get_stat_double(share, "read-bytes-per-sec");
      wr += sa_share_get_stat_double(share, "write-bytes-per-sec");
    }
  }
  const char *mood = failed ? "error" : (rd + wr) >= 1.0 ? "active" : "idle";
  g_autofree char *desc = NULL;
  if (!sa_client_is_connected(self->client)) {
    desc = g_strdup(_("The Sluice service is not running"));
  } else {
    g_autofree char *r = sa_format_rate(rd), *w = sa_format_rate(wr);
    g_autofree char *count = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%u shared folder", "%u shared folders", n), n);
    /* Translators: "2 shared folders · Read 1.0 MB/s · Write 0.2 MB/s" */
    desc = g_strdup_printf(_("%s · Read %s · Write %s"), count, r, w);
  }
  if (self->mood != mood) {
    gboolean status_changed = !g_str_equal(status_for(self->mood), status_for(mood));
    self->mood = mood;
    emit(self, "NewIcon", NULL);
    if (status_changed)
      emit(self, "NewStatus", g_variant_new("(s)", status_for(mood)));
  }
  if (g_strcmp0(self->description, desc) != 0) {
    g_free(self->description);
    self->description = g_steal_pointer(&desc);
    emit(self, "NewToolTip", NULL);
  }
}

static void on_share_stats(SaShare *share, gpointer user_data)
{
  update(user_data);
}

static void on_shares_changed(GListModel *shares, guint position, guint removed, guint added,
                              gpointer user_data)
{
  SaTray *self = user_data;
  for (guint i = position; i < position + added; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    g_signal_connect_object(share, "stats", G_CALLBACK(on_share_stats), self, 0);
  }
  update(self);
}

static void on_share_changed(SaClient *client, SaShare *share, gpointer user_data)
{
  update(user_data);
}

static void on_connected(SaClient *client, GParamSpec *pspec, gpointer user_data)
{
  update(user_data);
}

gboolean sa_tray_has_host(SaTray *self)
{
  return self->has_host;
}

const char *sa_tray_get_mood(SaTray *self)
{
  return self->mood;
}

const char *sa_tray_get_description(SaTray *self)
{
  return self->description;
}

static void sa_tray_dispose(GObject *object)
{
  SaTray *self = SA_TRAY(object);
  g_clear_handle_id(&self->no_host_timeout, g_source_remove);
  if (self->watch_id != 0) {
    g_bus_unwatch_name(self->watch_id);
    self->watch_id = 0;
  }
  if (self->own_id != 0) {
    g_bus_unown_name(self->own_id);
    self->own_id = 0;
  }
  if (self->object_id != 0) {
    g_dbus_connection_unregister_object(self->bus, self->object_id);
    self->object_id = 0;
  }
  if (self->client != NULL) {
    g_signal_handlers_disconnect_by_data(self->client, self);
    g_signal_handlers_disconnect_by_data(sa_client_get_shares(self->client), self);
  }
  g_clear_object(&self->menu);
  g_clear_object(&self->client);
  g_clear_object(&self->bus);
  g_clear_pointer(&self->node, g_dbus_node_info_unref);
  g_clear_pointer(&self->pixmaps, g_hash_table_unref);
  g_clear_pointer(&self->bus_name, g_free);
  g_clear_pointer(&self->description, g_free);
  G_OBJECT_CLASS(sa_tray_parent_class)->dispose(object);
}

static void sa_tray_class_init(SaTrayClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = sa_tray_dispose;
  signals[SIGNAL_HOST_CHANGED] = g_signal_new("host-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                              0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_NO_HOST] = g_signal_new("no-host", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void sa_tray_init(SaTray *self)
{
  self->mood = "idle";
  self->pixmaps = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_variant_unref);
}

SaTray *sa_tray_new(GApplication *app, SaClient *client, GError **error)
{
  g_autoptr(SaTray) self = g_object_new(SA_TYPE_TRAY, NULL);
  self->app = app;   /* the application owns the tray */
  self->client = g_object_ref(client);
  self->bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
  if (self->bus == NULL)
    return NULL;
  self->node = g_dbus_node_info_new_for_xml(item_xml, error);
  if (self->node == NULL)
    return NULL;
  self->object_id = g_dbus_connection_register_object(self->bus, SA_TRAY_ITEM_PATH,
                                                      self->node->interfaces[0], &item_vtable,
                                                      self, NULL, error);
  if (self->object_id == 0)
    return NULL;
  self->menu = sa_tray_menu_new(app, client);

  /* The name the SNI spec asks for; registration passes it to the watcher. */
  self->bus_name = g_strdup_printf("org.kde.StatusNotifierItem-%d-1", (int)getpid());
  self->own_id = g_bus_own_name_on_connection(self->bus, self->bus_name, G_BUS_NAME_OWNER_FLAGS_NONE,
                                              NULL, NULL, NULL, NULL);
  g_signal_connect(sa_client_get_shares(client), "items-changed", G_CALLBACK(on_shares_changed), self);
  g_signal_connect(client, "share-changed", G_CALLBACK(on_share_changed), self);
  g_signal_connect(client, "notify::connected", G_CALLBACK(on_connected), self);
  update(self);
  self->watch_id = g_bus_watch_name_on_connection(self->bus, WATCHER_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                  on_watcher_appeared, on_watcher_vanished, self, NULL);
  return g_steal_pointer(&self);
}
