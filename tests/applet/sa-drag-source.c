/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-drag-source: a tiny GTK4 window that starts a real drag of the paths
 * given on its command line, the way a file manager does (a GdkFileList,
 * which GTK also offers as text/uri-list).  Tests move the pointer with
 * xdotool from this window onto sluice-applet's window.
 *
 *   sa-drag-source PATH...   (window title "sa-drag-source") */
#include <gtk/gtk.h>

static GSList *files;

static GdkContentProvider *on_prepare(GtkDragSource *source, double x, double y, gpointer data)
{
  return gdk_content_provider_new_typed(GDK_TYPE_FILE_LIST, files);
}

static void on_drag_end(GtkDragSource *source, GdkDrag *drag, gboolean delete_data, gpointer data)
{
  g_print("drag-end\n");
}

static void on_activate(GtkApplication *app, gpointer data)
{
  GtkWidget *window = gtk_application_window_new(app);
  gtk_window_set_title(GTK_WINDOW(window), "sa-drag-source");
  gtk_window_set_default_size(GTK_WINDOW(window), 200, 200);
  gtk_window_set_decorated(GTK_WINDOW(window), FALSE);
  GtkWidget *label = gtk_label_new("drag me");
  GtkDragSource *source = gtk_drag_source_new();
  gtk_drag_source_set_actions(source, GDK_ACTION_COPY);
  g_signal_connect(source, "prepare", G_CALLBACK(on_prepare), NULL);
  g_signal_connect(source, "drag-end", G_CALLBACK(on_drag_end), NULL);
  gtk_widget_add_controller(label, GTK_EVENT_CONTROLLER(source));
  gtk_window_set_child(GTK_WINDOW(window), label);
  gtk_window_present(GTK_WINDOW(window));
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    g_printerr("usage: sa-drag-source PATH...\n");
    return 2;
  }
  for (int i = argc - 1; i >= 1; i--)
    files = g_slist_prepend(files, g_file_new_for_commandline_arg(argv[i]));
  /* Not unique: each test run starts its own source. */
  GtkApplication *app = gtk_application_new(NULL, G_APPLICATION_NON_UNIQUE);
  g_signal_connect(app, "activate", G_CALLBACK(on_activate), NULL);
  int status = g_application_run(G_APPLICATION(app), 1, argv);
  g_object_unref(app);
  g_slist_free_full(files, g_object_unref);
  return status;
}
