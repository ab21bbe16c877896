/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-client: follows org.sluice.Sluice1 on the session bus.
 *
 * g_bus_watch_name tells when the service appears or goes away; while it is
 * there the generated object manager client mirrors its objects as typed
 * proxies (SluiceShare, SluiceVm), a SluiceManager proxy takes AddShare and
 * RemoveShare, and every change arrives as a signal (InterfacesAdded/Removed,
 * PropertiesChanged): nothing here polls. */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-client.h"
#include "sluice-names.h"

struct _SaClient {
  GObject parent_instance;
  guint watch_id;
  GDBusConnection *bus;
  GDBusObjectManager *manager;   /* the service's shares and VMs */
  SluiceManager *manager_proxy;  /* AddShare, RemoveShare */
  GCancellable *cancellable;     /* for the two being created */
  GListStore *shares;            /* SaShare */
  GListStore *vms;               /* SluiceVm, sorted */
  gboolean connected;
};

G_DEFINE_TYPE(SaClient, sa_client, G_TYPE_OBJECT)

enum { PROP_0, PROP_CONNECTED, N_PROPS };
static GParamSpec *props[N_PROPS];

enum { SIGNAL_SHARE_EVENT, SIGNAL_SHARE_CHANGED, SIGNAL_SHARE_ERROR, SIGNAL_VMS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static int compare_vms(gconstpointer a, gconstpointer b, gpointer user_data)
{
  SluiceVm *va = SLUICE_VM((gpointer)a), *vb = SLUICE_VM((gpointer)b);
  int ra = sa_vm_is_running(va), rb = sa_vm_is_running(vb);
  if (ra != rb)
    return rb - ra;
  return g_utf8_collate(sa_vm_get_name(va), sa_vm_get_name(vb));
}

static void vms_resort(SaClient *self)
{
  g_list_store_sort(self->vms, compare_vms, NULL);
  g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
}

static void on_vm_properties_changed(GDBusProxy *proxy, GVariant *changed,
                                     const char *const *invalidated, gpointer user_data)
{
  vms_resort(user_data);
}

static void on_share_event(SaShare *share, const char *kind, const char *message, gpointer user_data)
{
  g_signal_emit(user_data, signals[SIGNAL_SHARE_EVENT], 0, share, kind, message);
}

static void on_share_changed(SaShare *share, gpointer user_data)
{
  g_signal_emit(user_data, signals[SIGNAL_SHARE_CHANGED], 0, share);
}

static void on_share_error(SaShare *share, const char *message, gpointer user_data)
{
  g_signal_emit(user_data, signals[SIGNAL_SHARE_ERROR], 0, share, message);
}

static gboolean find_share_by_proxy_path(GListStore *store, const char *path, guint *position)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(store));
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(G_LIST_MODEL(store), i);
    if (g_str_equal(sa_share_get_object_path(share), path)) {
      *position = i;
      return TRUE;
    }
  }
  return FALSE;
}

static void add_interface(SaClient *self, GDBusInterface *iface)
{
  guint pos;

  if (SLUICE_IS_SHARE(iface)) {
    if (find_share_by_proxy_path(self->shares, g_dbus_proxy_get_object_path(G_DBUS_PROXY(iface)), &pos))
      return;
    g_autoptr(SaShare) share = sa_share_new(SLUICE_SHARE(iface));
    g_signal_connect_object(share, "event", G_CALLBACK(on_share_event), self, 0);
    g_signal_connect_object(share, "changed", G_CALLBACK(on_share_changed), self, 0);
    g_signal_connect_object(share, "error", G_CALLBACK(on_share_error), self, 0);
    g_list_store_append(self->shares, share);
  } else if (SLUICE_IS_VM(iface)) {
    if (g_list_store_find(self->vms, iface, &pos))
      return;
    g_signal_connect_object(iface, "g-properties-changed",
                            G_CALLBACK(on_vm_properties_changed), self, 0);
    g_list_store_insert_sorted(self->vms, iface, compare_vms, NULL);
    g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
  }
}

static void remove_interface(SaClient *self, GDBusInterface *iface)
{
  guint pos;

  if (SLUICE_IS_SHARE(iface)) {
    if (find_share_by_proxy_path(self->shares, g_dbus_proxy_get_object_path(G_DBUS_PROXY(iface)), &pos))
      g_list_store_remove(self->shares, pos);
  } else if (SLUICE_IS_VM(iface)) {
    if (g_list_store_find(self->vms, iface, &pos)) {
      g_signal_handlers_disconnect_by_data(iface, self);
      g_list_store_remove(self->vms, pos);
      g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
    }
  }
}

static void on_interface_added(GDBusObjectManager *manager, GDBusObject *object,
                               GDBusInterface *iface, gpointer user_data)
{
  add_interface(user_data, iface);
}

static void on_interface_removed(GDBusObjectManager *manager, GDBusObject *object,
                                 GDBusInterface *iface, gpointer user_data)
{
  remove_interface(user_data, iface);
}

static void on_object_added(GDBusObjectManager *manager, GDBusObject *object, gpointer user_data)
{
  g_autolist(GDBusInterface) ifaces = g_dbus_object_get_interfaces(object);
  for (GList *l = ifaces; l != NULL; l = l->next)
    add_interface(user_data, l->data);
}

static void on_object_removed(GDBusObjectManager *manager, GDBusObject *object, gpointer user_data)
{
  g_autolist(GDBusInterface) ifaces = g_dbus_object_get_interfaces(object);
  for (GList *l = ifaces; l != NULL; l = l->next)
    remove_interface(user_data, l->data);
}

static void set_connected(SaClient *self, gboolean connected)
{
  if (self->connected == connected)
    return;
  self->connected = connected;
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_CONNECTED]);
}

static void drop_manager(SaClient *self)
{
  g_cancellable_cancel(self->cancellable);
  g_clear_object(&self->cancellable);
  if (self->manager != NULL) {
    g_signal_handlers_disconnect_by_data(self->manager, self);
    g_clear_object(&self->manager);
  }
  g_clear_object(&self->manager_proxy);
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->vms));
  for (guint i = 0; i < n; i++) {
    g_autoptr(SluiceVm) vm = g_list_model_get_item(G_LIST_MODEL(self->vms), i);
    g_signal_handlers_disconnect_by_data(vm, self);
  }
  g_list_store_remove_all(self->vms);
  g_list_store_remove_all(self->shares);
  g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
}

/* Connected once both the objects and the Manager proxy are there. */
static void check_ready(SaClient *self)
{
  if (self->manager != NULL && self->manager_proxy != NULL)
    set_connected(self, TRUE);
}

static void on_manager_ready(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  GDBusObjectManager *manager = sluice_object_manager_client_new_finish(result, &error);
  if (manager == NULL) {
    if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      g_warning("Cannot follow the Sluice service: %s", error->message);
    return;
  }
  SaClient *self = user_data;
  self->manager = manager;
  g_signal_connect(manager, "object-added", G_CALLBACK(on_object_added), self);
  g_signal_connect(manager, "object-removed", G_CALLBACK(on_object_removed), self);
  g_signal_connect(manager, "interface-added", G_CALLBACK(on_interface_added), self);
  g_signal_connect(manager, "interface-removed", G_CALLBACK(on_interface_removed), self);
  g_autolist(GDBusObject) objects = g_dbus_object_manager_get_objects(manager);
  for (GList *l = objects; l != NULL; l = l->next)
    on_object_added(manager, l->data, self);
  check_ready(self);
}

static void on_manager_proxy_ready(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  SluiceManager *proxy = sluice_manager_proxy_new_finish(result, &error);
  if (proxy == NULL) {
    if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      g_warning("Cannot reach the Sluice service: %s", error->message);
    return;
  }
  SaClient *self = user_data;
  self->manager_proxy = proxy;
  check_ready(self);
}

static void on_name_appeared(GDBusConnection *bus, const char *name, const char *owner,
                             gpointer user_data)
{
  SaClient *self = user_data;
  drop_manager(self);
  g_set_object(&self->bus, bus);
  self->cancellable = g_cancellable_new();
  /* The manager follows the unique owner it starts with; a restarted service
   * is a new owner, so name watching recreates it (a clean slate). */
  sluice_object_manager_client_new(bus, G_DBUS_OBJECT_MANAGER_CLIENT_FLAGS_DO_NOT_AUTO_START,
                                   SLUICE_BUS_NAME, SLUICE_OBJECT_ROOT, self->cancellable,
                                   on_manager_ready, self);
  /* Only for calls: the Manager's properties and signals are not used. */
  sluice_manager_proxy_new(bus, G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES |
                                G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS |
                                G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
                           SLUICE_BUS_NAME, SLUICE_MANAGER_PATH, self->cancellable,
                           on_manager_proxy_ready, self);
}

static void on_name_vanished(GDBusConnection *bus, const char *name, gpointer user_data)
{
  SaClient *self = user_data;
  drop_manager(self);
  if (bus != NULL)
    g_set_object(&self->bus, bus);
  set_connected(self, FALSE);
}

gboolean sa_client_is_connected(SaClient *self)
{
  return self->connected;
}

GListModel *sa_client_get_shares(SaClient *self)
{
  return G_LIST_MODEL(self->shares);
}

GListModel *sa_client_get_vms(SaClient *self)
{
  return G_LIST_MODEL(self->vms);
}

SaShare *sa_client_find_share_by_path(SaClient *self, const char *path, const char *vm)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->shares));
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(G_LIST_MODEL(self->shares), i);
    if (g_str_equal(sa_share_get_path(share), path) &&
        (vm == NULL || g_str_equal(sa_share_get_vm(share), vm)))
      return share;  /* the store keeps it alive */
  }
  return NULL;
}

SluiceVm *sa_client_find_vm(SaClient *self, const char *name)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->vms));
  for (guint i = 0; i < n; i++) {
    g_autoptr(SluiceVm) vm = g_list_model_get_item(G_LIST_MODEL(self->vms), i);
    if (g_str_equal(sa_vm_get_name(vm), name))
      return vm;
  }
  return NULL;
}

static void on_add_share_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  char *path = NULL;
  if (!sluice_manager_call_add_share_finish(SLUICE_MANAGER(source), &path, result, &error)) {
    g_task_return_error(task, g_steal_pointer(&error));
    return;
  }
  g_task_return_pointer(task, path, g_free);
}

static gboolean check_connected(SaClient *self, GTask *task)
{
  if (self->connected && self->manager_proxy != NULL)
    return TRUE;
  g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED, "%s",
                          _("The Sluice service is not running. Start it with “systemctl --user start sluice-service”."));
  return FALSE;
}

void sa_client_add_share(SaClient *self, const char *path, const char *vm,
                         GVariant *options, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  if (options == NULL)
    options = g_variant_new_array(G_VARIANT_TYPE("{sv}"), NULL, 0);
  g_variant_ref_sink(options);
  if (check_connected(self, task))
    sluice_manager_call_add_share(self->manager_proxy, path, vm != NULL ? vm : "", options,
                                  cancellable, on_add_share_done, g_steal_pointer(&task));
  g_variant_unref(options);
}

char *sa_client_add_share_finish(SaClient *self, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer(G_TASK(result), error);
}

static void on_remove_share_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  if (!sluice_manager_call_remove_share_finish(SLUICE_MANAGER(source), result, &error))
    g_task_return_error(task, g_steal_pointer(&error));
  else
    g_task_return_boolean(task, TRUE);
}

void sa_client_remove_share(SaClient *self, const char *object_path,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);
  if (check_connected(self, task))
    sluice_manager_call_remove_share(self->manager_proxy, object_path, NULL,
                                     on_remove_share_done, g_steal_pointer(&task));
}

gboolean sa_client_remove_share_finish(SaClient *self, GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean(G_TASK(result), error);
}

static void sa_client_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  switch (id) {
  case PROP_CONNECTED:
    g_value_set_boolean(value, SA_CLIENT(object)->connected);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void sa_client_dispose(GObject *object)
{
  SaClient *self = SA_CLIENT(object);
  if (self->watch_id != 0) {
    g_bus_unwatch_name(self->watch_id);
    self->watch_id = 0;
  }
  if (self->shares != NULL)
    drop_manager(self);
  g_clear_object(&self->shares);
  g_clear_object(&self->vms);
  g_clear_object(&self->bus);
  G_OBJECT_CLASS(sa_client_parent_class)->dispose(object);
}

static void sa_client_class_init(SaClientClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = sa_client_dispose;
  object_class->get_property = sa_client_get_property;

  props[PROP_CONNECTED] = g_param_spec_boolean("connected", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                               G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, props);

  signals[SIGNAL_SHARE_EVENT] =
    g_signal_new("share-event", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                 NULL, G_TYPE_NONE, 3, SA_TYPE_SHARE, G_TYPE_STRING, G_TYPE_STRING);
  signals[SIGNAL_SHARE_CHANGED] =
    g_signal_new("share-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                 NULL, G_TYPE_NONE, 1, SA_TYPE_SHARE);
  signals[SIGNAL_SHARE_ERROR] =
    g_signal_new("share-error", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                 NULL, G_TYPE_NONE, 2, SA_TYPE_SHARE, G_TYPE_STRING);
  signals[SIGNAL_VMS_CHANGED] =
    g_signal_new("vms-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                 NULL, G_TYPE_NONE, 0);
}

static void sa_client_init(SaClient *self)
{
  self->shares = g_list_store_new(SA_TYPE_SHARE);
  self->vms = g_list_store_new(SLUICE_TYPE_VM);
}

SaClient *sa_client_new(void)
{
  SaClient *self = g_object_new(SA_TYPE_CLIENT, NULL);
  /* AUTO_START: if the service is D-Bus activatable, opening the applet starts it. */
  self->watch_id = g_bus_watch_name(G_BUS_TYPE_SESSION, SLUICE_BUS_NAME,
                                    G_BUS_NAME_WATCHER_FLAGS_AUTO_START,
                                    on_name_appeared, on_name_vanished, self, NULL);
  return self;
}
