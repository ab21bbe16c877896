/* sa-tray-menu: builds the dbusmenu tree from the share list and the
 * application's actions, and rebuilds it when either changes. */
#include "config.h"

#include <glib/gi18n.h>
#include <libdbusmenu-glib/dbusmenu-glib.h>

#include "state-labels.h"
#include "sa-format.h"
#include "sa-tray.h"
#include "sa-tray-menu.h"

struct _SaTrayMenu {
  GObject parent_instance;
  GApplication *app;
  SaClient *client;
  DbusmenuServer *server;
  guint rebuild_id;
};

G_DEFINE_TYPE(SaTrayMenu, sa_tray_menu, G_TYPE_OBJECT)

static void on_item_activated(DbusmenuMenuitem *item, guint timestamp, gpointer user_data)
{
  SaTrayMenu *self = user_data;
  const char *action = g_object_get_data(G_OBJECT(item), "sluice-action");
  if (action != NULL && g_action_group_get_action_enabled(G_ACTION_GROUP(self->app), action))
    g_action_group_activate_action(G_ACTION_GROUP(self->app), action, NULL);
}

static DbusmenuMenuitem *add_item(SaTrayMenu *self, DbusmenuMenuitem *root, const char *label,
                                  const char *action)
{
  DbusmenuMenuitem *item = dbusmenu_menuitem_new();
  dbusmenu_menuitem_property_set(item, DBUSMENU_MENUITEM_PROP_LABEL, label);
  if (action != NULL) {
    g_object_set_data_full(G_OBJECT(item), "sluice-action", g_strdup(action), g_free);
    dbusmenu_menuitem_property_set_bool(item, DBUSMENU_MENUITEM_PROP_ENABLED,
                                        g_action_group_get_action_enabled(G_ACTION_GROUP(self->app), action));
    g_signal_connect(item, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED, G_CALLBACK(on_item_activated), self);
  } else {
    dbusmenu_menuitem_property_set_bool(item, DBUSMENU_MENUITEM_PROP_ENABLED, FALSE);
  }
  dbusmenu_menuitem_child_append(root, item);
  g_object_unref(item);
  return item;
}

static void add_separator(DbusmenuMenuitem *root)
{
  DbusmenuMenuitem *item = dbusmenu_menuitem_new();
  dbusmenu_menuitem_property_set(item, DBUSMENU_MENUITEM_PROP_TYPE, DBUSMENU_CLIENT_TYPES_SEPARATOR);
  dbusmenu_menuitem_child_append(root, item);
  g_object_unref(item);
}

static gboolean rebuild(gpointer user_data)
{
  SaTrayMenu *self = user_data;
  self->rebuild_id = 0;
  DbusmenuMenuitem *root = dbusmenu_menuitem_new();

  add_item(self, root, _("Open Sluice"), "show");
  add_separator(root);
  GListModel *shares = sa_client_get_shares(self->client);
  guint n = g_list_model_get_n_items(shares);
  if (!sa_client_is_connected(self->client))
    add_item(self, root, _("Service not running"), NULL);
  else if (n == 0)
    add_item(self, root, _("No shared folders"), NULL);
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    g_autofree char *path = sa_share_dup_string(share, "Path");
    g_autofree char *state = sa_share_dup_string(share, "State");
    g_autofree char *name = sa_format_folder_name(path);
    /* Translators: a tray menu entry, "Projects — Attached" */
    g_autofree char *label = g_strdup_printf(_("%s — %s"), name, sluice_share_state_label(state));
    add_item(self, root, label, "show");
  }
  add_separator(root);
  add_item(self, root, _("Pause All Shares"), "pause-all");
  add_item(self, root, _("Resume Shares"), "resume-all");
  add_separator(root);
  add_item(self, root, _("Quit"), "quit");

  dbusmenu_server_set_root(self->server, root);
  g_object_unref(root);
  return G_SOURCE_REMOVE;
}

/* Changes come in bursts (a share's properties, then the list): coalesce. */
static void queue_rebuild(SaTrayMenu *self)
{
  if (self->rebuild_id == 0)
    self->rebuild_id = g_idle_add(rebuild, self);
}

static void on_shares_changed(GListModel *model, guint pos, guint removed, guint added, gpointer user_data)
{
  queue_rebuild(user_data);
}

static void on_share_changed(SaClient *client, SaShare *share, gpointer user_data)
{
  queue_rebuild(user_data);
}

static void on_connected(SaClient *client, GParamSpec *pspec, gpointer user_data)
{
  queue_rebuild(user_data);
}

static void on_action_enabled(GActionGroup *group, const char *action, gboolean enabled, gpointer user_data)
{
  queue_rebuild(user_data);
}

static void sa_tray_menu_dispose(GObject *object)
{
  SaTrayMenu *self = SA_TRAY_MENU(object);
  g_clear_handle_id(&self->rebuild_id, g_source_remove);
  if (self->client != NULL) {
    g_signal_handlers_disconnect_by_data(self->client, self);
    g_signal_handlers_disconnect_by_data(sa_client_get_shares(self->client), self);
  }
  if (self->app != NULL)
    g_signal_handlers_disconnect_by_data(self->app, self);
  g_clear_object(&self->client);
  g_clear_object(&self->server);
  G_OBJECT_CLASS(sa_tray_menu_parent_class)->dispose(object);
}

static void sa_tray_menu_class_init(SaTrayMenuClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = sa_tray_menu_dispose;
}

static void sa_tray_menu_init(SaTrayMenu *self)
{
}

SaTrayMenu *sa_tray_menu_new(GApplication *app, SaClient *client)
{
  SaTrayMenu *self = g_object_new(SA_TYPE_TRAY_MENU, NULL);
  self->app = app;
  self->client = g_object_ref(client);
  self->server = dbusmenu_server_new(SA_TRAY_MENU_PATH);
  g_signal_connect(sa_client_get_shares(client), "items-changed", G_CALLBACK(on_shares_changed), self);
  g_signal_connect(client, "share-changed", G_CALLBACK(on_share_changed), self);
  g_signal_connect(client, "notify::connected", G_CALLBACK(on_connected), self);
  g_signal_connect(app, "action-enabled-changed", G_CALLBACK(on_action_enabled), self);
  rebuild(self);
  return self;
}
