/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-tray-menu: the dbusmenu tree of the tray icon: the application's
 * actions and one entry per share.  The tree is built once and then updated
 * in place, so every entry keeps its id: a tray host sends clicks by id, and
 * a click that arrives just after a rebuild must not name an entry that no
 * longer exists ("The ID supplied … does not refer to a menu item we have":
 * the click would be lost).  Only a change in the number of share entries
 * replaces those entries. */
#include "config.h"

#include <glib/gi18n.h>
#include <libdbusmenu-glib/dbusmenu-glib.h>

#include "state-labels.h"
#include "sa-format.h"
#include "sa-tray.h"
#include "sa-tray-menu.h"

/* The share entries sit after "Open Sluice" and its separator. */
#define SHARE_ENTRIES_POSITION 2

struct _SaTrayMenu {
  GObject parent_instance;
  GApplication *app;
  SaClient *client;
  DbusmenuServer *server;
  DbusmenuMenuitem *root;
  GPtrArray *action_items;   /* the entries bound to an action: their enabled state follows it */
  GPtrArray *share_items;    /* one per share, or the one placeholder entry */
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

static void update_enabled(SaTrayMenu *self, DbusmenuMenuitem *item)
{
  const char *action = g_object_get_data(G_OBJECT(item), "sluice-action");
  dbusmenu_menuitem_property_set_bool(item, DBUSMENU_MENUITEM_PROP_ENABLED,
                                      action != NULL &&
                                      g_action_group_get_action_enabled(G_ACTION_GROUP(self->app), action));
}

/* A new entry (a reference the caller owns); action NULL: a disabled line of text. */
static DbusmenuMenuitem *new_item(SaTrayMenu *self, const char *label, const char *action)
{
  DbusmenuMenuitem *item = dbusmenu_menuitem_new();
  dbusmenu_menuitem_property_set(item, DBUSMENU_MENUITEM_PROP_LABEL, label);
  if (action != NULL) {
    g_object_set_data_full(G_OBJECT(item), "sluice-action", g_strdup(action), g_free);
    g_signal_connect(item, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED, G_CALLBACK(on_item_activated), self);
  }
  update_enabled(self, item);
  return item;
}

static void append_action(SaTrayMenu *self, const char *label, const char *action)
{
  DbusmenuMenuitem *item = new_item(self, label, action);
  dbusmenu_menuitem_child_append(self->root, item);
  g_ptr_array_add(self->action_items, item);  /* takes the reference */
}

static void append_separator(SaTrayMenu *self)
{
  DbusmenuMenuitem *item = dbusmenu_menuitem_new();
  dbusmenu_menuitem_property_set(item, DBUSMENU_MENUITEM_PROP_TYPE, DBUSMENU_CLIENT_TYPES_SEPARATOR);
  dbusmenu_menuitem_child_append(self->root, item);
  g_object_unref(item);
}

/* The share entries' labels; the action is "show" for a share, none for
 * the placeholder that says why there are none. */
static GPtrArray *share_labels(SaTrayMenu *self, const char **ret_action)
{
  GPtrArray *labels = g_ptr_array_new_with_free_func(g_free);
  GListModel *shares = sa_client_get_shares(self->client);
  guint n = g_list_model_get_n_items(shares);

  *ret_action = NULL;
  if (!sa_client_is_connected(self->client)) {
    g_ptr_array_add(labels, g_strdup(_("Service not running")));
    return labels;
  }
  if (n == 0) {
    g_ptr_array_add(labels, g_strdup(_("No shared folders")));
    return labels;
  }
  *ret_action = "show";
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    const char *path = sa_share_get_path(share);
    const char *state = sa_share_get_state(share);
    g_autofree char *name = sa_format_folder_name(path);
    /* Translators: a tray menu entry, "Projects — Attached" */
    g_ptr_array_add(labels, g_strdup_printf(_("%s — %s"), name, sluice_share_state_label(state)));
  }
  return labels;
}

static gboolean same_shape(GPtrArray *items, guint n, const char *action)
{
  if (items->len != n)
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (g_strcmp0(g_object_get_data(G_OBJECT(items->pdata[i]), "sluice-action"), action) != 0)
      return FALSE;
  return TRUE;
}

static gboolean rebuild(gpointer user_data)
{
  SaTrayMenu *self = user_data;
  const char *action;
  g_autoptr(GPtrArray) labels = share_labels(self, &action);

  self->rebuild_id = 0;
  if (same_shape(self->share_items, labels->len, action)) {
    /* Setting an unchanged label sends nothing. */
    for (guint i = 0; i < labels->len; i++)
      dbusmenu_menuitem_property_set(self->share_items->pdata[i], DBUSMENU_MENUITEM_PROP_LABEL,
                                     labels->pdata[i]);
  } else {
    for (guint i = 0; i < self->share_items->len; i++)
      dbusmenu_menuitem_child_delete(self->root, self->share_items->pdata[i]);
    g_ptr_array_set_size(self->share_items, 0);
    for (guint i = 0; i < labels->len; i++) {
      DbusmenuMenuitem *item = new_item(self, labels->pdata[i], action);
      dbusmenu_menuitem_child_add_position(self->root, item, SHARE_ENTRIES_POSITION + i);
      g_ptr_array_add(self->share_items, item);
    }
  }
  for (guint i = 0; i < self->share_items->len; i++)
    update_enabled(self, self->share_items->pdata[i]);
  for (guint i = 0; i < self->action_items->len; i++)
    update_enabled(self, self->action_items->pdata[i]);
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
  g_clear_pointer(&self->share_items, g_ptr_array_unref);
  g_clear_pointer(&self->action_items, g_ptr_array_unref);
  g_clear_object(&self->root);
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
  self->action_items = g_ptr_array_new_with_free_func(g_object_unref);
  self->share_items = g_ptr_array_new_with_free_func(g_object_unref);
  self->root = dbusmenu_menuitem_new();
  append_action(self, _("Open Sluice"), "show");
  append_separator(self);
  /* the share entries go here (SHARE_ENTRIES_POSITION) */
  append_separator(self);
  append_action(self, _("Pause All Shares"), "pause-all");
  append_action(self, _("Resume Shares"), "resume-all");
  append_separator(self);
  append_action(self, _("Quit"), "quit");
  dbusmenu_server_set_root(self->server, self->root);
  g_signal_connect(sa_client_get_shares(client), "items-changed", G_CALLBACK(on_shares_changed), self);
  g_signal_connect(client, "share-changed", G_CALLBACK(on_share_changed), self);
  g_signal_connect(client, "notify::connected", G_CALLBACK(on_connected), self);
  g_signal_connect(app, "action-enabled-changed", G_CALLBACK(on_action_enabled), self);
  rebuild(self);
  return self;
}
