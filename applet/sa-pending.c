/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-pending: the "ready to share" card (see sa-pending.h). */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-format.h"
#include "sa-pending.h"

struct _SaPending {
  GtkBox parent_instance;
  GListStore *files;
  GtkLabel *names;
  GtkWidget *share_button;
};

G_DEFINE_TYPE(SaPending, sa_pending, GTK_TYPE_BOX)

enum { SIGNAL_SHARE_REQUESTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void update(SaPending *self)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->files));
  g_autoptr(GString) names = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    g_autoptr(GFile) file = g_list_model_get_item(G_LIST_MODEL(self->files), i);
    g_autofree char *path = g_file_get_path(file);
    g_autofree char *name = sa_format_folder_name(path);
    if (i > 0)
      g_string_append_c(names, '\n');
    /* Translators: a folder waiting to be shared; %s is its name */
    g_string_append_printf(names, _("“%s”"), name);
  }
  gtk_label_set_label(self->names, names->str);
  gtk_widget_set_visible(GTK_WIDGET(self), n > 0);
}

void sa_pending_add(SaPending *self, GFile *file)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->files));
  for (guint i = 0; i < n; i++) {
    g_autoptr(GFile) other = g_list_model_get_item(G_LIST_MODEL(self->files), i);
    if (g_file_equal(other, file))
      return;
  }
  g_list_store_append(self->files, file);
  update(self);
}

guint sa_pending_get_n_folders(SaPending *self)
{
  return g_list_model_get_n_items(G_LIST_MODEL(self->files));
}

char **sa_pending_dup_paths(SaPending *self)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->files));
  char **paths = g_new0(char *, n + 1);
  for (guint i = 0; i < n; i++) {
    g_autoptr(GFile) file = g_list_model_get_item(G_LIST_MODEL(self->files), i);
    paths[i] = g_file_get_path(file);
  }
  return paths;
}

GtkWidget *sa_pending_get_share_button(SaPending *self)
{
  return self->share_button;
}

static void on_share(GtkButton *button, gpointer user_data)
{
  SaPending *self = user_data;
  /* Emptied first: what the handler shares must not be offered again. */
  g_autoptr(GListStore) files = g_steal_pointer(&self->files);
  self->files = g_list_store_new(G_TYPE_FILE);
  update(self);
  g_signal_emit(self, signals[SIGNAL_SHARE_REQUESTED], 0, files);
}

static void on_cancel(GtkButton *button, gpointer user_data)
{
  SaPending *self = user_data;
  g_list_store_remove_all(self->files);
  update(self);
}

static void sa_pending_dispose(GObject *object)
{
  g_clear_object(&SA_PENDING(object)->files);
  G_OBJECT_CLASS(sa_pending_parent_class)->dispose(object);
}

static void sa_pending_class_init(SaPendingClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = sa_pending_dispose;
  gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "sluice-pending");
  signals[SIGNAL_SHARE_REQUESTED] =
    g_signal_new("share-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                 NULL, G_TYPE_NONE, 1, G_TYPE_LIST_MODEL);
}

static void sa_pending_init(SaPending *self)
{
  self->files = g_list_store_new(G_TYPE_FILE);
  gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing(GTK_BOX(self), 6);

  GtkWidget *title = gtk_label_new(_("Ready to Share"));
  gtk_widget_add_css_class(title, "title-4");
  gtk_label_set_xalign(GTK_LABEL(title), 0);
  self->names = GTK_LABEL(gtk_label_new(NULL));
  gtk_label_set_xalign(self->names, 0);
  gtk_label_set_wrap(self->names, TRUE);
  GtkWidget *hint = gtk_label_new(_("Choose the virtual machine below, then press Share."));
  gtk_label_set_xalign(GTK_LABEL(hint), 0);
  gtk_label_set_wrap(GTK_LABEL(hint), TRUE);
  gtk_widget_add_css_class(hint, "dim-label");

  GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_halign(buttons, GTK_ALIGN_END);
  GtkWidget *cancel = gtk_button_new_with_mnemonic(_("_Cancel"));
  self->share_button = gtk_button_new_with_mnemonic(_("_Share"));
  gtk_widget_add_css_class(self->share_button, "suggested-action");
  g_signal_connect(cancel, "clicked", G_CALLBACK(on_cancel), self);
  g_signal_connect(self->share_button, "clicked", G_CALLBACK(on_share), self);
  gtk_box_append(GTK_BOX(buttons), cancel);
  gtk_box_append(GTK_BOX(buttons), self->share_button);

  gtk_box_append(GTK_BOX(self), title);
  gtk_box_append(GTK_BOX(self), GTK_WIDGET(self->names));
  gtk_box_append(GTK_BOX(self), hint);
  gtk_box_append(GTK_BOX(self), buttons);
  gtk_widget_set_visible(GTK_WIDGET(self), FALSE);
}

GtkWidget *sa_pending_new(void)
{
  return g_object_new(SA_TYPE_PENDING, NULL);
}
