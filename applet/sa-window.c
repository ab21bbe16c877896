/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-window: builds the window from sa-window.ui and wires it to SaClient. */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-drop-zone.h"
#include "sa-format.h"
#include "sa-pending.h"
#include "sa-share-row.h"
#include "sa-share-row-private.h"
#include "sa-vm-chooser.h"
#include "sa-window.h"
#include "sa-window-private.h"
#include "wire-enums.h"

struct _SaWindow {
  AdwApplicationWindow parent_instance;
  SaClient *client;
  GtkWidget *vm_chooser;
  char *last_message;
  GHashTable *undo;          /* guint id → GVariant (ssa{sv}) to re-add a removed share */
  guint next_undo_id;
  SaPending *pending;
  gboolean focus_chooser;    /* folders came from outside: focus the VM chooser once it shows */

  AdwToastOverlay *toast_overlay;
  GtkWidget *content_box;
  GtkBox *main_box;
  GtkRevealer *service_revealer, *message_revealer;
  GtkWidget *message_box;
  GtkImage *message_icon;
  GtkLabel *message_label;
  SaDropZone *drop_zone;
  GtkBox *vm_box;
  GtkListBox *share_list;
  GtkFileChooserNative *chooser;
};

G_DEFINE_TYPE(SaWindow, sa_window, ADW_TYPE_APPLICATION_WINDOW)

void sa_window_toast(SaWindow *self, const char *text)
{
  adw_toast_overlay_add_toast(self->toast_overlay, adw_toast_new(text));
}

void sa_window_show_message(SaWindow *self, const char *text, gboolean is_error)
{
  g_free(self->last_message);
  self->last_message = g_strdup(text);
  gtk_label_set_label(self->message_label, text);
  gtk_image_set_from_icon_name(self->message_icon,
                               is_error ? "dialog-error-symbolic" : "dialog-information-symbolic");
  if (is_error)
    gtk_widget_remove_css_class(self->message_box, "info");
  else
    gtk_widget_add_css_class(self->message_box, "info");
  gtk_revealer_set_reveal_child(self->message_revealer, TRUE);
}

const char *sa_window_get_last_message(SaWindow *self)
{
  return self->last_message != NULL ? self->last_message : "";
}

static void on_message_close(SaWindow *self)
{
  gtk_revealer_set_reveal_child(self->message_revealer, FALSE);
}

typedef struct {
  SaWindow *window;
  char *name;
  char *vm;
} AddData;

static void add_data_free(AddData *data)
{
  g_object_unref(data->window);
  g_free(data->name);
  g_free(data->vm);
  g_free(data);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AddData, add_data_free)

static void on_share_added(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(AddData) data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *object_path = sa_client_add_share_finish(SA_CLIENT(source), result, &error);
  if (object_path == NULL) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    /* Translators: first %s is a folder name, second the service's explanation */
    g_autofree char *text = g_strdup_printf(_("Could not share “%s”: %s"), data->name, msg);
    sa_window_show_message(data->window, text, TRUE);
    return;
  }
  g_autofree char *text = *data->vm ? g_strdup_printf(_("Sharing “%s” with %s"), data->name, data->vm)
                                    : g_strdup_printf(_("Added “%s”; choose a VM to share it with"), data->name);
  sa_window_toast(data->window, text);
}

static void add_folder(SaWindow *self, GFile *file, const char *vm)
{
  g_autofree char *path = g_file_get_path(file);
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_VARDICT);
  /* A dropped folder should show up in the guest: attach when the VM runs. */
  if (*vm)
    g_variant_builder_add(&options, "{sv}", "attach", g_variant_new_boolean(TRUE));
  AddData *data = g_new0(AddData, 1);
  data->window = g_object_ref(self);
  data->name = sa_format_folder_name(path);
  data->vm = g_strdup(vm);
  sa_client_add_share(self->client, path, vm, g_variant_builder_end(&options), NULL,
                      on_share_added, data);
}

void sa_window_share_files(SaWindow *self, GListModel *files)
{
  g_autofree char *vm = sa_vm_chooser_dup_selected(SA_VM_CHOOSER(self->vm_chooser));
  g_autoptr(GString) problems = g_string_new(NULL);
  guint n = g_list_model_get_n_items(files);

  if (!sa_client_is_connected(self->client)) {
    sa_window_show_message(self, _("The Sluice service is not running, so nothing can be shared right now."), TRUE);
    return;
  }
  for (guint i = 0; i < n; i++) {
    g_autoptr(GFile) file = g_list_model_get_item(files, i);
    g_autofree char *message = NULL;
    if (!sa_drop_zone_check_folder(file, self->client, vm, &message)) {
      if (problems->len > 0)
        g_string_append_c(problems, '\n');
      g_string_append(problems, message);
      continue;
    }
    add_folder(self, file, vm);
  }
  if (problems->len > 0)
    sa_window_show_message(self, problems->str, TRUE);
  else
    gtk_revealer_set_reveal_child(self->message_revealer, FALSE);
}

/* The VM chooser takes the keyboard focus (the user's next step is to pick
 * the VM); without a VM to pick, the Share button does. */
static void focus_next_step(SaWindow *self)
{
  /* Show where the focus is: the user arrives from another application and
   * goes on with the keyboard (arrow keys pick the VM, Tab reaches Share). */
  gtk_window_set_focus_visible(GTK_WINDOW(self), TRUE);
  if (sa_vm_chooser_grab_focus(SA_VM_CHOOSER(self->vm_chooser))) {
    self->focus_chooser = FALSE;
    return;
  }
  gtk_widget_grab_focus(sa_pending_get_share_button(self->pending));
}

void sa_window_add_folders(SaWindow *self, GListModel *files)
{
  g_autoptr(GString) problems = g_string_new(NULL);
  guint n = g_list_model_get_n_items(files);
  for (guint i = 0; i < n; i++) {
    g_autoptr(GFile) file = g_list_model_get_item(files, i);
    g_autofree char *message = NULL;
    if (!sa_drop_zone_check_is_folder(file, FALSE, &message)) {
      if (problems->len > 0)
        g_string_append_c(problems, '\n');
      g_string_append(problems, message);
      continue;
    }
    sa_pending_add(self->pending, file);
  }
  if (problems->len > 0)
    sa_window_show_message(self, problems->str, TRUE);
  if (sa_pending_get_n_folders(self->pending) > 0) {
    self->focus_chooser = TRUE;
    focus_next_step(self);
  }
}

char **sa_window_dup_pending_paths(SaWindow *self)
{
  return sa_pending_dup_paths(self->pending);
}

GtkWidget *sa_window_get_vm_chooser(SaWindow *self)
{
  return self->vm_chooser;
}

static void on_pending_share(SaPending *pending, GListModel *files, gpointer user_data)
{
  SaWindow *self = user_data;
  self->focus_chooser = FALSE;
  sa_window_share_files(self, files);
}

static void on_vms_changed(SaClient *client, gpointer user_data)
{
  SaWindow *self = user_data;
  /* VMs arrive after the window opened: move the focus to the chooser, unless
   * the user has put it somewhere else than where focus_next_step left it. */
  GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(self));
  if (self->focus_chooser && sa_pending_get_n_folders(self->pending) > 0 &&
      (focus == NULL || focus == sa_pending_get_share_button(self->pending)))
    focus_next_step(self);
}

static void on_files_dropped(SaDropZone *zone, GListModel *files, gpointer user_data)
{
  sa_window_share_files(user_data, files);
}

static void on_chooser_response(GtkNativeDialog *dialog, int response, gpointer user_data)
{
  SaWindow *self = user_data;
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GListModel) files = gtk_file_chooser_get_files(GTK_FILE_CHOOSER(dialog));
    sa_window_share_files(self, files);
  }
  g_clear_object(&self->chooser);
}

static void add_folder_activated(GtkWidget *widget, const char *action, GVariant *param)
{
  SaWindow *self = SA_WINDOW(widget);
  if (self->chooser != NULL)
    return;
  /* GtkFileDialog is GTK 4.10; 4.8 has the native chooser (portal-aware). */
  self->chooser = gtk_file_chooser_native_new(_("Choose Folders to Share"), GTK_WINDOW(self),
                                              GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
                                              _("_Share"), _("_Cancel"));
  gtk_file_chooser_set_select_multiple(GTK_FILE_CHOOSER(self->chooser), TRUE);
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(self->chooser), TRUE);
  g_signal_connect(self->chooser, "response", G_CALLBACK(on_chooser_response), self);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(self->chooser));
}

/* --- remove with undo: removal happens at once (other clients see the truth);
 * undo re-adds the share with the settings it had. */

typedef struct {
  SaWindow *window;
  char *name;
  guint undo_id;
} RemoveData;

static void on_share_removed(GObject *source, GAsyncResult *result, gpointer user_data)
{
  RemoveData *data = user_data;
  g_autoptr(GError) error = NULL;
  if (!sa_client_remove_share_finish(SA_CLIENT(source), result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    g_autofree char *text = g_strdup_printf(_("Could not stop sharing “%s”: %s"), data->name, msg);
    sa_window_show_message(data->window, text, TRUE);
    g_hash_table_remove(data->window->undo, GUINT_TO_POINTER(data->undo_id));
  } else {
    g_autofree char *text = g_strdup_printf(_("Stopped sharing “%s”"), data->name);
    AdwToast *toast = adw_toast_new(text);
    adw_toast_set_button_label(toast, _("_Undo"));
    adw_toast_set_action_name(toast, "win.undo-remove");
    adw_toast_set_action_target_value(toast, g_variant_new_uint32(data->undo_id));
    adw_toast_overlay_add_toast(data->window->toast_overlay, toast);
  }
  g_object_unref(data->window);
  g_free(data->name);
  g_free(data);
}

static void on_remove_requested(SaShareRow *row, gpointer user_data)
{
  SaWindow *self = user_data;
  SaShare *share = sa_share_row_get_share(row);
  const char *path = sa_share_get_path(share);
  const char *vm = sa_share_get_vm(share);
  const char *tag = sa_share_get_tag(share);
  const char *state = sa_share_get_state(share);
  gboolean autostart = sa_share_get_autostart(share);
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_VARDICT);

  if (*tag)
    g_variant_builder_add(&options, "{sv}", "tag", g_variant_new_string(tag));
  g_variant_builder_add(&options, "{sv}", "read-only", g_variant_new_boolean(sa_share_get_read_only(share)));
  g_variant_builder_add(&options, "{sv}", "autostart", g_variant_new_boolean(autostart));
  if (sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_ATTACHED))
    g_variant_builder_add(&options, "{sv}", "attach", g_variant_new_boolean(TRUE));

  guint id = ++self->next_undo_id;
  g_hash_table_insert(self->undo, GUINT_TO_POINTER(id),
                      g_variant_ref_sink(g_variant_new("(ss@a{sv})", path, vm,
                                                       g_variant_builder_end(&options))));
  RemoveData *data = g_new0(RemoveData, 1);
  data->window = g_object_ref(self);
  data->name = sa_format_folder_name(path);
  data->undo_id = id;
  sa_client_remove_share(self->client, sa_share_get_object_path(share), on_share_removed, data);
}

static void undo_remove_activated(GtkWidget *widget, const char *action, GVariant *param)
{
  SaWindow *self = SA_WINDOW(widget);
  guint id = g_variant_get_uint32(param);
  GVariant *saved = g_hash_table_lookup(self->undo, GUINT_TO_POINTER(id));
  if (saved == NULL)
    return;
  const char *path, *vm;
  g_autoptr(GVariant) options = NULL;
  g_variant_get(saved, "(&s&s@a{sv})", &path, &vm, &options);
  AddData *data = g_new0(AddData, 1);
  data->window = g_object_ref(self);
  data->name = sa_format_folder_name(path);
  data->vm = g_strdup(vm);
  sa_client_add_share(self->client, path, vm, options, NULL, on_share_added, data);
  g_hash_table_remove(self->undo, GUINT_TO_POINTER(id));
}

static void on_row_message(SaWindow *self, const char *text, gboolean is_error)
{
  sa_window_show_message(self, text, is_error);
}

static GtkWidget *create_row(gpointer item, gpointer user_data)
{
  SaWindow *self = user_data;
  GtkWidget *row = sa_share_row_new(SA_SHARE(item), sa_client_get_vms(self->client));
  g_signal_connect_object(row, "remove-requested", G_CALLBACK(on_remove_requested), user_data, 0);
  g_signal_connect_object(row, "message", G_CALLBACK(on_row_message), user_data, G_CONNECT_SWAPPED);
  g_signal_connect_object(row, "toast", G_CALLBACK(sa_window_toast), user_data, G_CONNECT_SWAPPED);
  return row;
}

GtkWidget *sa_window_get_drop_zone(SaWindow *self)
{
  return GTK_WIDGET(self->drop_zone);
}

GtkWidget *sa_window_find_row_part(SaWindow *self, const char *path, const char *part)
{
  for (int i = 0;; i++) {
    GtkListBoxRow *row = gtk_list_box_get_row_at_index(self->share_list, i);
    if (row == NULL)
      return NULL;
    if (!SA_IS_SHARE_ROW(row))
      continue;
    const char *p = sa_share_get_path(sa_share_row_get_share(SA_SHARE_ROW(row)));
    if (g_str_equal(p, path))
      return sa_share_row_get_part(SA_SHARE_ROW(row), part);
  }
}

static void on_connected(SaClient *client, GParamSpec *pspec, gpointer user_data)
{
  SaWindow *self = user_data;
  gtk_revealer_set_reveal_child(self->service_revealer, !sa_client_is_connected(client));
}

static void on_share_error(SaClient *client, SaShare *share, const char *message, gpointer user_data)
{
  sa_window_show_message(user_data, message, TRUE);
}

static void on_vm_message(SaVmChooser *chooser, const char *message, gboolean is_error, gpointer user_data)
{
  sa_window_show_message(user_data, message, is_error);
}

static void sa_window_dispose(GObject *object)
{
  SaWindow *self = SA_WINDOW(object);
  if (self->client != NULL)
    g_signal_handlers_disconnect_by_data(self->client, self);
  g_clear_object(&self->client);
  if (self->chooser != NULL)
    gtk_native_dialog_destroy(GTK_NATIVE_DIALOG(self->chooser));
  g_clear_object(&self->chooser);
  g_clear_pointer(&self->undo, g_hash_table_unref);
  g_clear_pointer(&self->last_message, g_free);
  gtk_widget_dispose_template(GTK_WIDGET(self), SA_TYPE_WINDOW);
  G_OBJECT_CLASS(sa_window_parent_class)->dispose(object);
}

static void sa_window_class_init(SaWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = sa_window_dispose;

  g_type_ensure(SA_TYPE_DROP_ZONE);
  gtk_widget_class_set_template_from_resource(widget_class, "/org/sluice/Applet/sa-window.ui");
  gtk_widget_class_bind_template_child(widget_class, SaWindow, toast_overlay);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, content_box);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, main_box);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, service_revealer);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, message_revealer);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, message_box);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, message_icon);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, message_label);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, drop_zone);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, vm_box);
  gtk_widget_class_bind_template_child(widget_class, SaWindow, share_list);
  gtk_widget_class_bind_template_callback(widget_class, on_message_close);

  gtk_widget_class_install_action(widget_class, "win.add-folder", NULL, add_folder_activated);
  gtk_widget_class_install_action(widget_class, "win.undo-remove", "u", undo_remove_activated);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.add-folder", NULL);
}

static void sa_window_init(SaWindow *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  self->undo = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_variant_unref);
}

SaWindow *sa_window_new(GtkApplication *app, SaClient *client)
{
  SaWindow *self = g_object_new(SA_TYPE_WINDOW, "application", app, NULL);
  self->client = g_object_ref(client);

  self->vm_chooser = sa_vm_chooser_new(client);
  gtk_box_append(self->vm_box, self->vm_chooser);
  g_signal_connect(self->vm_chooser, "message", G_CALLBACK(on_vm_message), self);

  GtkWidget *placeholder = gtk_label_new(_("No folders shared yet"));
  gtk_widget_add_css_class(placeholder, "dim-label");
  gtk_widget_set_margin_top(placeholder, 18);
  gtk_widget_set_margin_bottom(placeholder, 18);
  gtk_list_box_set_placeholder(self->share_list, placeholder);
  gtk_list_box_bind_model(self->share_list, sa_client_get_shares(client), create_row, self, NULL);

  self->pending = SA_PENDING(sa_pending_new());
  gtk_box_insert_child_after(self->main_box, GTK_WIDGET(self->pending), GTK_WIDGET(self->drop_zone));
  g_signal_connect(self->pending, "share-requested", G_CALLBACK(on_pending_share), self);
  g_signal_connect(client, "vms-changed", G_CALLBACK(on_vms_changed), self);

  sa_drop_zone_attach(self->drop_zone, self->content_box);
  g_signal_connect(self->drop_zone, "files-dropped", G_CALLBACK(on_files_dropped), self);
  g_signal_connect(client, "notify::connected", G_CALLBACK(on_connected), self);
  g_signal_connect(client, "share-error", G_CALLBACK(on_share_error), self);
  on_connected(client, NULL, self);
  return self;
}
