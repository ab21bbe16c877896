/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-drop-zone: the drop target and the checks a dropped item must pass. */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-drop-zone.h"

struct _SaDropZone {
  GtkBox parent_instance;
};

G_DEFINE_TYPE(SaDropZone, sa_drop_zone, GTK_TYPE_BOX)

enum { SIGNAL_FILES_DROPPED, N_SIGNALS };
static guint signals[N_SIGNALS];

gboolean sa_drop_zone_check_is_folder(GFile *file, gboolean dropped, char **message)
{
  g_autofree char *path = g_file_get_path(file);
  g_autofree char *uri = g_file_get_uri(file);
  g_autoptr(GError) error = NULL;

  if (path == NULL) {
    /* Translators: %s is a URI such as sftp://host/dir */
    *message = g_strdup_printf(_("“%s” is not a local folder. Only folders on this computer can be shared."), uri);
    return FALSE;
  }
  g_autofree char *name = g_file_get_basename(file);
  g_autoptr(GFileInfo) info = g_file_query_info(file,
                                                G_FILE_ATTRIBUTE_STANDARD_TYPE ","
                                                G_FILE_ATTRIBUTE_ACCESS_CAN_READ ","
                                                G_FILE_ATTRIBUTE_ACCESS_CAN_EXECUTE,
                                                G_FILE_QUERY_INFO_NONE, NULL, &error);
  if (info == NULL && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)) {
    /* Translators: %s is a path */
    *message = g_strdup_printf(_("“%s” does not exist."), path);
    return FALSE;
  }
  if (info == NULL) {
    *message = g_strdup_printf(_("Cannot open “%s”: %s"), path, error->message);
    return FALSE;
  }
  if (g_file_info_get_file_type(info) != G_FILE_TYPE_DIRECTORY) {
    /* Translators: %s is a file name */
    *message = dropped ? g_strdup_printf(_("“%s” is a file. Drop the folder that contains it to share it."), name)
                       : g_strdup_printf(_("“%s” is not a folder. Only folders can be shared with a virtual machine."), name);
    return FALSE;
  }
  if (!g_file_info_get_attribute_boolean(info, G_FILE_ATTRIBUTE_ACCESS_CAN_READ) ||
      !g_file_info_get_attribute_boolean(info, G_FILE_ATTRIBUTE_ACCESS_CAN_EXECUTE)) {
    *message = g_strdup_printf(_("You cannot open the folder “%s”, so it cannot be shared. Check its permissions."), name);
    return FALSE;
  }
  return TRUE;
}

gboolean sa_drop_zone_check_folder(GFile *file, SaClient *client, const char *vm, char **message)
{
  if (!sa_drop_zone_check_is_folder(file, TRUE, message))
    return FALSE;
  g_autofree char *path = g_file_get_path(file);
  g_autofree char *name = g_file_get_basename(file);
  if (sa_client_find_share_by_path(client, path, vm) != NULL) {
    if (vm != NULL && *vm)
      *message = g_strdup_printf(_("“%s” is already shared with %s."), name, vm);
    else
      *message = g_strdup_printf(_("“%s” is already shared."), name);
    return FALSE;
  }
  return TRUE;
}

static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x, double y,
                        gpointer user_data)
{
  SaDropZone *self = user_data;
  if (!G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST))
    return FALSE;
  GSList *list = g_value_get_boxed(value);
  g_autoptr(GListStore) files = g_list_store_new(G_TYPE_FILE);
  for (GSList *l = list; l != NULL; l = l->next)
    g_list_store_append(files, l->data);
  gtk_widget_remove_css_class(GTK_WIDGET(self), "drop-hover");
  if (g_list_model_get_n_items(G_LIST_MODEL(files)) == 0)
    return FALSE;
  g_signal_emit(self, signals[SIGNAL_FILES_DROPPED], 0, files);
  return TRUE;
}

static GdkDragAction on_enter(GtkDropTarget *target, double x, double y, gpointer user_data)
{
  gtk_widget_add_css_class(GTK_WIDGET(user_data), "drop-hover");
  return GDK_ACTION_COPY;
}

static void on_leave(GtkDropTarget *target, gpointer user_data)
{
  gtk_widget_remove_css_class(GTK_WIDGET(user_data), "drop-hover");
}

void sa_drop_zone_attach(SaDropZone *self, GtkWidget *widget)
{
  GtkDropTarget *target = gtk_drop_target_new(GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect_object(target, "drop", G_CALLBACK(on_drop), self, 0);
  g_signal_connect_object(target, "enter", G_CALLBACK(on_enter), self, 0);
  g_signal_connect_object(target, "leave", G_CALLBACK(on_leave), self, 0);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(target));
}

static void sa_drop_zone_class_init(SaDropZoneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  gtk_widget_class_set_css_name(widget_class, "sluice-drop-zone");
  signals[SIGNAL_FILES_DROPPED] =
    g_signal_new("files-dropped", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                 NULL, G_TYPE_NONE, 1, G_TYPE_LIST_MODEL);
}

static void sa_drop_zone_init(SaDropZone *self)
{
  gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing(GTK_BOX(self), 6);
  gtk_widget_set_valign(GTK_WIDGET(self), GTK_ALIGN_START);

  GtkWidget *icon = gtk_image_new_from_icon_name("folder-new-symbolic");
  gtk_image_set_pixel_size(GTK_IMAGE(icon), 48);
  gtk_widget_add_css_class(icon, "dim-label");
  GtkWidget *title = gtk_label_new(_("Drop Folders Here"));
  gtk_widget_add_css_class(title, "title-3");
  GtkWidget *hint = gtk_label_new(_("Each folder you drop is shared with the virtual machine chosen below"));
  gtk_label_set_wrap(GTK_LABEL(hint), TRUE);
  gtk_label_set_justify(GTK_LABEL(hint), GTK_JUSTIFY_CENTER);
  gtk_widget_add_css_class(hint, "dim-label");
  gtk_box_append(GTK_BOX(self), icon);
  gtk_box_append(GTK_BOX(self), title);
  gtk_box_append(GTK_BOX(self), hint);
}

GtkWidget *sa_drop_zone_new(void)
{
  return g_object_new(SA_TYPE_DROP_ZONE, NULL);
}
