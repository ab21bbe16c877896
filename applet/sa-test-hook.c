/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-test-hook: a test-only D-Bus interface, compiled with -Dtest_hooks=true
 * only and even then off unless SLUICE_APPLET_TEST_HOOK is set.
 *
 * Why it exists: under Xvfb there is no accessibility bus (GTK_A11Y=none) and
 * reading text back from screenshots is unreliable, so tests ask the applet
 * (1) what its inline message says, (2) where a widget is, in X window
 * coordinates, so that they can click it for real with xdotool, (3) which
 * folders wait to be shared and where the keyboard focus is, (4) the text of
 * every label and button shown (to find translated text), and (5) whether a
 * switch is on, and (6) the text on the clipboard (what a paste in another
 * program gets).  Buttons, labels and the labels' text are looked for in
 * the application's dialogs too (the Doctor report, a confirmation).  It never
 * changes state: every action a test takes goes through real input events or
 * the service's own D-Bus API.  It knows the application as a GtkApplication
 * only and finds the window among its windows. */
#include "config.h"

#include <gtk/gtk.h>
#include <string.h>
#include <gdk/x11/gdkx.h>

#include "sa-test-hook.h"
#include "sa-vm-chooser.h"
#include "sa-window-private.h"

#define HOOK_PATH "/org/sluice/Applet/Test"
#define HOOK_DATA_KEY "sa-test-hook"

#define SA_TYPE_TEST_HOOK (sa_test_hook_get_type())
G_DECLARE_FINAL_TYPE(SaTestHook, sa_test_hook, SA, TEST_HOOK, GObject)

static const char hook_xml[] =
  "<node>"
  " <interface name='org.sluice.Applet.Test'>"
  "  <property name='LastMessage' type='s' access='read'/>"
  "  <property name='WindowVisible' type='b' access='read'/>"
  "  <property name='Pending' type='as' access='read'/>"
  "  <property name='Focus' type='s' access='read'/>"
  "  <property name='Labels' type='as' access='read'/>"
  "  <method name='Locate'>"
  "   <arg name='what' type='s' direction='in'/>"
  "   <arg name='window' type='t' direction='out'/>"
  "   <arg name='x' type='i' direction='out'/>"
  "   <arg name='y' type='i' direction='out'/>"
  "  </method>"
  "  <method name='ReadClipboard'>"
  "   <arg name='text' type='s' direction='out'/>"
  "  </method>"
  "  <method name='CloseWindow'/>"
  "  <method name='IsActive'>"
  "   <arg name='what' type='s' direction='in'/>"
  "   <arg name='active' type='b' direction='out'/>"
  "  </method>"
  " </interface>"
  "</node>";

struct _SaTestHook {
  GObject parent_instance;
  GtkApplication *app;   /* owns us */
  GDBusConnection *bus;
  GDBusNodeInfo *node;
  guint object_id;
};

G_DEFINE_TYPE(SaTestHook, sa_test_hook, G_TYPE_OBJECT)

/* The Sluice window if it exists (it may be hidden while the tray icon stays). */
static SaWindow *find_window(SaTestHook *self)
{
  for (GList *l = gtk_application_get_windows(self->app); l != NULL; l = l->next)
    if (SA_IS_WINDOW(l->data))
      return SA_WINDOW(l->data);
  return NULL;
}

typedef gboolean (*WidgetMatch)(GtkWidget *widget, const char *text);

/* The first mapped widget under @widget (itself included) that @match accepts. */
static GtkWidget *find_mapped(GtkWidget *widget, WidgetMatch match, const char *text)
{
  if (!gtk_widget_get_mapped(widget))
    return NULL;
  if (match(widget, text))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c != NULL; c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = find_mapped(c, match, text);
    if (found != NULL)
      return found;
  }
  return NULL;
}

/* A button or menu entry labelled @label. */
static gboolean is_button(GtkWidget *widget, const char *label)
{
  if (GTK_IS_BUTTON(widget)) {
    const char *l = gtk_button_get_label(GTK_BUTTON(widget));
    GtkWidget *child = gtk_button_get_child(GTK_BUTTON(widget));
    if (l == NULL && GTK_IS_LABEL(child))
      l = gtk_label_get_label(GTK_LABEL(child));
    return g_strcmp0(l, label) == 0;
  }
  if (g_str_equal(G_OBJECT_TYPE_NAME(widget), "GtkModelButton")) {
    /* menu entries of a GMenuModel popover (GTK-internal type, "text" property) */
    g_autofree char *text = NULL;
    g_object_get(widget, "text", &text, NULL);
    return g_strcmp0(text, label) == 0;
  }
  return FALSE;
}

static gboolean is_label(GtkWidget *widget, const char *text)
{
  return GTK_IS_LABEL(widget) && g_strcmp0(gtk_label_get_text(GTK_LABEL(widget)), text) == 0;
}

static gboolean is_popover(GtkWidget *widget, const char *unused)
{
  return GTK_IS_POPOVER(widget);
}

static gboolean is_dropdown(GtkWidget *widget, const char *unused)
{
  return GTK_IS_DROP_DOWN(widget);
}

/* The first mapped widget @match accepts in the window, else in another of
 * the application's windows (its dialogs). */
static GtkWidget *find_in_windows(GtkApplication *app, SaWindow *window, WidgetMatch match, const char *text)
{
  GtkWidget *found = find_mapped(GTK_WIDGET(window), match, text);
  for (GList *l = gtk_application_get_windows(app); found == NULL && l != NULL; l = l->next)
    if (l->data != (gpointer)window)
      found = find_mapped(GTK_WIDGET(l->data), match, text);
  return found;
}

/* "drop-zone", "button:LABEL" (e.g. a toast's "_Undo"), "label:TEXT",
 * "vm-chooser" (its drop-down), "vm-option:NAME" (a VM in the open drop-down's
 * list), "option:TEXT" (an item in the open popover of any drop-down), or
 * "PART:PATH" for a share row's part (read-only, remove, start-stop, queues,
 * guest-copy, guest-agent, hotplug-slots, install, install-progress, names,
 * case). */
static GtkWidget *find_widget(GtkApplication *app, SaWindow *window, const char *what)
{
  if (g_str_equal(what, "drop-zone"))
    return sa_window_get_drop_zone(window);
  /* An open popover is a child widget of its button, so the walk reaches it. */
  if (g_str_has_prefix(what, "button:"))
    return find_in_windows(app, window, is_button, what + strlen("button:"));
  if (g_str_has_prefix(what, "label:"))
    return find_in_windows(app, window, is_label, what + strlen("label:"));
  if (g_str_has_prefix(what, "option:")) {
    GtkWidget *popover = find_mapped(GTK_WIDGET(window), is_popover, NULL);
    return popover != NULL ? find_mapped(popover, is_label, what + strlen("option:")) : NULL;
  }
  GtkWidget *dropdown = find_mapped(sa_window_get_vm_chooser(window), is_dropdown, NULL);
  if (g_str_equal(what, "vm-chooser"))
    return dropdown;
  if (g_str_has_prefix(what, "vm-option:")) {
    /* the drop-down's list is an open popover under it */
    GtkWidget *popover = dropdown != NULL ? find_mapped(dropdown, is_popover, NULL) : NULL;
    return popover != NULL ? find_mapped(popover, is_label, what + strlen("vm-option:")) : NULL;
  }
  const char *colon = strchr(what, ':');
  if (colon == NULL)
    return NULL;
  g_autofree char *part = g_strndup(what, (gsize)(colon - what));
  return sa_window_find_row_part(window, colon + 1, part);
}

static void on_clipboard_read(GObject *source, GAsyncResult *result, gpointer user_data)
{
  GDBusMethodInvocation *invocation = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = gdk_clipboard_read_text_finish(GDK_CLIPBOARD(source), result, &error);
  if (text == NULL && error != NULL) {
    g_dbus_method_invocation_return_error(invocation, G_DBUS_ERROR, G_DBUS_ERROR_FAILED,
                                          "Cannot read the clipboard: %s", error->message);
    return;
  }
  g_dbus_method_invocation_return_value(invocation, g_variant_new("(s)", text != NULL ? text : ""));
}

static void method_call(GDBusConnection *bus, const char *sender, const char *path,
                        const char *iface, const char *method, GVariant *params,
                        GDBusMethodInvocation *invocation, gpointer user_data)
{
  SaTestHook *self = user_data;
  const char *what;
  if (g_str_equal(method, "ReadClipboard")) {
    GdkClipboard *clipboard = gdk_display_get_clipboard(gdk_display_get_default());
    gdk_clipboard_read_text_async(clipboard, NULL, on_clipboard_read, invocation);
    return;
  }
  if (g_str_equal(method, "CloseWindow")) {
    /* what the title bar's close button does (with a tray: hide the window) */
    SaWindow *shown = find_window(self);
    if (shown != NULL)
      gtk_window_close(GTK_WINDOW(shown));
    g_dbus_method_invocation_return_value(invocation, NULL);
    return;
  }
  g_variant_get(params, "(&s)", &what);
  SaWindow *window = find_window(self);
  GtkWidget *widget = window != NULL ? find_widget(self->app, window, what) : NULL;
  if (widget == NULL || !gtk_widget_get_mapped(widget)) {
    g_dbus_method_invocation_return_error(invocation, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS,
                                          "No visible widget “%s”", what);
    return;
  }
  if (g_str_equal(method, "IsActive")) {
    /* what a switch shows (tests wait for it before they click it) */
    if (!GTK_IS_SWITCH(widget)) {
      g_dbus_method_invocation_return_error(invocation, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS,
                                            "“%s” is not a switch", what);
      return;
    }
    g_dbus_method_invocation_return_value(invocation,
                                          g_variant_new("(b)", gtk_switch_get_active(GTK_SWITCH(widget))));
    return;
  }
  graphene_point_t p;
  double sx, sy;
  GtkNative *native = gtk_widget_get_native(widget);
  if (!gtk_widget_compute_point(widget, GTK_WIDGET(native),
                                &GRAPHENE_POINT_INIT(gtk_widget_get_width(widget) / 2.0,
                                                     gtk_widget_get_height(widget) / 2.0), &p)) {
    g_dbus_method_invocation_return_error(invocation, G_DBUS_ERROR, G_DBUS_ERROR_FAILED, "Cannot place “%s”", what);
    return;
  }
  /* Client-side decorations put a shadow margin between surface and window. */
  gtk_native_get_surface_transform(native, &sx, &sy);
  GdkSurface *surface = gtk_native_get_surface(native);
  guint64 xid = GDK_IS_X11_SURFACE(surface) ? gdk_x11_surface_get_xid(surface) : 0;
  g_dbus_method_invocation_return_value(invocation, g_variant_new("(tii)", xid, (int)(p.x + sx), (int)(p.y + sy)));
}

/* What has the keyboard focus: "vm-chooser", "button:LABEL", or a type name. */
static char *describe_focus(SaWindow *window)
{
  GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(window));
  if (focus == NULL)
    return g_strdup("");
  if (sa_vm_chooser_has_focus(SA_VM_CHOOSER(sa_window_get_vm_chooser(window)), focus))
    return g_strdup("vm-chooser");
  for (GtkWidget *w = focus; w != NULL; w = gtk_widget_get_parent(w)) {
    if (GTK_IS_BUTTON(w) && gtk_button_get_label(GTK_BUTTON(w)) != NULL)
      return g_strdup_printf("button:%s", gtk_button_get_label(GTK_BUTTON(w)));
  }
  return g_strdup(G_OBJECT_TYPE_NAME(focus));
}

/* The text of every mapped label under @widget (buttons show theirs in one). */
static void collect_labels(GtkWidget *widget, GVariantBuilder *labels)
{
  if (!gtk_widget_get_mapped(widget))
    return;
  if (GTK_IS_LABEL(widget) && *gtk_label_get_text(GTK_LABEL(widget)))
    g_variant_builder_add(labels, "s", gtk_label_get_text(GTK_LABEL(widget)));
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c != NULL; c = gtk_widget_get_next_sibling(c))
    collect_labels(c, labels);
}

static GVariant *get_property(GDBusConnection *bus, const char *sender, const char *path,
                              const char *iface, const char *name, GError **error,
                              gpointer user_data)
{
  SaTestHook *self = user_data;
  SaWindow *window = find_window(self);
  if (g_str_equal(name, "LastMessage"))
    return g_variant_new_string(window != NULL ? sa_window_get_last_message(window) : "");
  if (g_str_equal(name, "WindowVisible"))
    return g_variant_new_boolean(window != NULL && gtk_widget_get_visible(GTK_WIDGET(window)));
  if (g_str_equal(name, "Pending")) {
    g_auto(GStrv) paths = window != NULL ? sa_window_dup_pending_paths(window) : NULL;
    return g_variant_new_strv((const char *const *)paths, paths != NULL ? -1 : 0);
  }
  if (g_str_equal(name, "Focus")) {
    g_autofree char *focus = window != NULL ? describe_focus(window) : g_strdup("");
    return g_variant_new_string(focus);
  }
  if (g_str_equal(name, "Labels")) {
    g_auto(GVariantBuilder) labels = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_STRING_ARRAY);
    /* the window's first, then its dialogs' */
    if (window != NULL)
      collect_labels(GTK_WIDGET(window), &labels);
    for (GList *l = gtk_application_get_windows(self->app); l != NULL; l = l->next)
      if (l->data != (gpointer)window)
        collect_labels(GTK_WIDGET(l->data), &labels);
    return g_variant_builder_end(&labels);
  }
  g_set_error(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY, "No property %s", name);
  return NULL;
}

static const GDBusInterfaceVTable hook_vtable = { method_call, get_property, NULL, { 0 } };

static void sa_test_hook_dispose(GObject *object)
{
  SaTestHook *self = SA_TEST_HOOK(object);
  if (self->object_id != 0) {
    g_dbus_connection_unregister_object(self->bus, self->object_id);
    self->object_id = 0;
  }
  g_clear_object(&self->bus);
  g_clear_pointer(&self->node, g_dbus_node_info_unref);
  G_OBJECT_CLASS(sa_test_hook_parent_class)->dispose(object);
}

static void sa_test_hook_class_init(SaTestHookClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = sa_test_hook_dispose;
}

static void sa_test_hook_init(SaTestHook *self)
{
}

/* Unexported before the application lets go of its bus connection. */
static void on_shutdown(GApplication *app, gpointer user_data)
{
  g_object_set_data(G_OBJECT(app), HOOK_DATA_KEY, NULL);
}

void sa_test_hook_install(GtkApplication *app)
{
  g_autoptr(GError) error = NULL;
  if (g_getenv("SLUICE_APPLET_TEST_HOOK") == NULL)
    return;
  GDBusConnection *bus = g_application_get_dbus_connection(G_APPLICATION(app));
  if (bus == NULL)
    return;
  SaTestHook *self = g_object_new(SA_TYPE_TEST_HOOK, NULL);
  self->app = app;
  self->bus = g_object_ref(bus);
  self->node = g_dbus_node_info_new_for_xml(hook_xml, &error);
  g_assert_no_error(error);
  self->object_id = g_dbus_connection_register_object(self->bus, HOOK_PATH, self->node->interfaces[0],
                                                      &hook_vtable, self, NULL, &error);
  if (self->object_id == 0)
    g_warning("Test hook: %s", error->message);
  g_object_set_data_full(G_OBJECT(app), HOOK_DATA_KEY, self, g_object_unref);
  g_signal_connect(app, "shutdown", G_CALLBACK(on_shutdown), NULL);
}
