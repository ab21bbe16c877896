/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-test-desktop: the desktop services sluice-applet talks to, as a test
 * double on a private session bus:
 *   --watcher        org.kde.StatusNotifierWatcher (records registrations)
 *   --notifications  org.freedesktop.Notifications (records notifications;
 *                    with --invoke=ACTION it answers every notification that
 *                    offers ACTION by invoking it, as a user clicking it)
 * Each event is one line on stdout, flushed at once:
 *   REGISTERED <service> <sender>
 *   NOTIFY <id>\t<app>\t<summary>\t<body>\t<action keys, comma separated>
 *   READY  (once every requested name is owned) */
#include <gio/gio.h>
#include <stdio.h>

static const char watcher_xml[] =
  "<node><interface name='org.kde.StatusNotifierWatcher'>"
  " <method name='RegisterStatusNotifierItem'><arg name='service' type='s' direction='in'/></method>"
  " <method name='RegisterStatusNotifierHost'><arg name='service' type='s' direction='in'/></method>"
  " <property name='RegisteredStatusNotifierItems' type='as' access='read'/>"
  " <property name='IsStatusNotifierHostRegistered' type='b' access='read'/>"
  " <property name='ProtocolVersion' type='i' access='read'/>"
  " <signal name='StatusNotifierItemRegistered'><arg type='s'/></signal>"
  " <signal name='StatusNotifierItemUnregistered'><arg type='s'/></signal>"
  " <signal name='StatusNotifierHostRegistered'/>"
  "</interface></node>";

static const char notify_xml[] =
  "<node><interface name='org.freedesktop.Notifications'>"
  " <method name='Notify'>"
  "  <arg type='s' direction='in'/><arg type='u' direction='in'/><arg type='s' direction='in'/>"
  "  <arg type='s' direction='in'/><arg type='s' direction='in'/><arg type='as' direction='in'/>"
  "  <arg type='a{sv}' direction='in'/><arg type='i' direction='in'/><arg type='u' direction='out'/>"
  " </method>"
  " <method name='CloseNotification'><arg type='u' direction='in'/></method>"
  " <method name='GetCapabilities'><arg type='as' direction='out'/></method>"
  " <method name='GetServerInformation'>"
  "  <arg type='s' direction='out'/><arg type='s' direction='out'/>"
  "  <arg type='s' direction='out'/><arg type='s' direction='out'/>"
  " </method>"
  " <signal name='NotificationClosed'><arg type='u'/><arg type='u'/></signal>"
  " <signal name='ActionInvoked'><arg type='u'/><arg type='s'/></signal>"
  "</interface></node>";

static GPtrArray *items;
static guint next_id = 1;
static char *invoke_action;
static int names_wanted, names_owned;

static void watcher_call(GDBusConnection *bus, const char *sender, const char *path,
                         const char *iface, const char *method, GVariant *params,
                         GDBusMethodInvocation *inv, gpointer data)
{
  const char *service;
  g_variant_get(params, "(&s)", &service);
  if (g_str_equal(method, "RegisterStatusNotifierItem")) {
    g_ptr_array_add(items, g_strdup(service));
    printf("REGISTERED %s %s\n", service, sender);
    fflush(stdout);
    g_dbus_connection_emit_signal(bus, NULL, path, iface, "StatusNotifierItemRegistered",
                                  g_variant_new("(s)", service), NULL);
  }
  g_dbus_method_invocation_return_value(inv, NULL);
}

static GVariant *watcher_get(GDBusConnection *bus, const char *sender, const char *path,
                             const char *iface, const char *name, GError **error, gpointer data)
{
  if (g_str_equal(name, "RegisteredStatusNotifierItems"))
    return g_variant_new_strv((const char *const *)items->pdata, items->len);
  if (g_str_equal(name, "IsStatusNotifierHostRegistered"))
    return g_variant_new_boolean(TRUE);
  return g_variant_new_int32(0);
}

typedef struct {
  GDBusConnection *bus;
  char *sender;
  guint id;
} Invoke;

static gboolean invoke_later(gpointer data)
{
  Invoke *inv = data;
  g_dbus_connection_emit_signal(inv->bus, inv->sender, "/org/freedesktop/Notifications",
                                "org.freedesktop.Notifications", "ActionInvoked",
                                g_variant_new("(us)", inv->id, invoke_action), NULL);
  printf("INVOKED %u %s\n", inv->id, invoke_action);
  fflush(stdout);
  g_free(inv->sender);
  g_free(inv);
  return G_SOURCE_REMOVE;
}

static void notify_call(GDBusConnection *bus, const char *sender, const char *path,
                        const char *iface, const char *method, GVariant *params,
                        GDBusMethodInvocation *inv, gpointer data)
{
  if (g_str_equal(method, "GetCapabilities")) {
    const char *caps[] = { "actions", "body", NULL };
    g_dbus_method_invocation_return_value(inv, g_variant_new("(^as)", caps));
  } else if (g_str_equal(method, "GetServerInformation")) {
    g_dbus_method_invocation_return_value(inv, g_variant_new("(ssss)", "sa-test-desktop", "sluice", "1", "1.2"));
  } else if (g_str_equal(method, "CloseNotification")) {
    g_dbus_method_invocation_return_value(inv, NULL);
  } else {
    const char *app, *icon, *summary, *body;
    guint replaces;
    g_autofree const char **actions = NULL;
    g_variant_get(params, "(&su&s&s&s^a&s@a{sv}i)", &app, &replaces, &icon, &summary, &body,
                  &actions, NULL, NULL);
    guint id = replaces != 0 ? replaces : next_id++;
    g_autoptr(GString) keys = g_string_new(NULL);
    gboolean offered = FALSE;
    /* actions alternate key, label */
    for (guint i = 0; actions[i] != NULL && actions[i + 1] != NULL; i += 2) {
      if (keys->len)
        g_string_append_c(keys, ',');
      g_string_append(keys, actions[i]);
      if (invoke_action != NULL && g_str_equal(actions[i], invoke_action))
        offered = TRUE;
    }
    printf("NOTIFY %u\t%s\t%s\t%s\t%s\n", id, app, summary, body, keys->str);
    fflush(stdout);
    g_dbus_method_invocation_return_value(inv, g_variant_new("(u)", id));
    if (offered) {
      Invoke *later = g_new0(Invoke, 1);
      later->bus = bus;
      later->sender = g_strdup(sender);
      later->id = id;
      g_timeout_add(300, invoke_later, later);
    }
  }
}

static const GDBusInterfaceVTable watcher_vtable = { watcher_call, watcher_get, NULL, { 0 } };
static const GDBusInterfaceVTable notify_vtable = { notify_call, NULL, NULL, { 0 } };

static void on_name(GDBusConnection *bus, const char *name, gpointer data)
{
  if (++names_owned == names_wanted) {
    printf("READY\n");
    fflush(stdout);
  }
}

static void on_name_lost(GDBusConnection *bus, const char *name, gpointer data)
{
  fprintf(stderr, "sa-test-desktop: cannot own %s\n", name);
  exit(1);
}

int main(int argc, char **argv)
{
  gboolean watcher = FALSE, notifications = FALSE;
  GOptionEntry entries[] = {
    { "watcher", 0, 0, G_OPTION_ARG_NONE, &watcher, "Be the StatusNotifierWatcher", NULL },
    { "notifications", 0, 0, G_OPTION_ARG_NONE, &notifications, "Be the notification server", NULL },
    { "invoke", 0, 0, G_OPTION_ARG_STRING, &invoke_action, "Invoke this action on notifications", "ACTION" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
  g_autoptr(GError) error = NULL;
  g_option_context_add_main_entries(ctx, entries, NULL);
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "sa-test-desktop: %s\n", error->message);
    return 2;
  }
  GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
  if (bus == NULL) {
    fprintf(stderr, "sa-test-desktop: %s\n", error->message);
    return 1;
  }
  items = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(items, NULL);
  g_ptr_array_set_size(items, 0);
  if (watcher) {
    GDBusNodeInfo *node = g_dbus_node_info_new_for_xml(watcher_xml, NULL);
    g_dbus_connection_register_object(bus, "/StatusNotifierWatcher", node->interfaces[0],
                                      &watcher_vtable, NULL, NULL, &error);
    names_wanted++;
    g_bus_own_name_on_connection(bus, "org.kde.StatusNotifierWatcher", G_BUS_NAME_OWNER_FLAGS_NONE,
                                 on_name, on_name_lost, NULL, NULL);
  }
  if (notifications) {
    GDBusNodeInfo *node = g_dbus_node_info_new_for_xml(notify_xml, NULL);
    g_dbus_connection_register_object(bus, "/org/freedesktop/Notifications", node->interfaces[0],
                                      &notify_vtable, NULL, NULL, &error);
    names_wanted++;
    g_bus_own_name_on_connection(bus, "org.freedesktop.Notifications", G_BUS_NAME_OWNER_FLAGS_NONE,
                                 on_name, on_name_lost, NULL, NULL);
  }
  if (names_wanted == 0) {
    fprintf(stderr, "usage: sa-test-desktop [--watcher] [--notifications] [--invoke=ACTION]\n");
    return 2;
  }
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_main_loop_run(loop);
  return 0;
}
