/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-vm-chooser: a drop-down of the service's VMs plus the shared-memory fix. */
#include "config.h"

#include <glib/gi18n.h>

#include <adwaita.h>

#include "state-labels.h"
#include "sa-doctor-dialog.h"
#include "sa-vm-chooser.h"

struct _SaVmChooser {
  GtkBox parent_instance;
  SaClient *client;
  GtkDropDown *dropdown;
  AdwActionRow *row;
  GtkRevealer *fix_revealer;
  GtkLabel *fix_label;
  GtkButton *fix_button;
  GtkButton *doctor_button;
  char *selected;        /* kept by name: the list re-sorts as VMs change state */
  gboolean restoring;
};

G_DEFINE_TYPE(SaVmChooser, sa_vm_chooser, GTK_TYPE_BOX)

enum { SIGNAL_MESSAGE, N_SIGNALS };
static guint signals[N_SIGNALS];

static SluiceVm *selected_vm(SaVmChooser *self)
{
  gpointer item = gtk_drop_down_get_selected_item(self->dropdown);
  return item != NULL ? SLUICE_VM(item) : NULL;
}

char *sa_vm_chooser_dup_selected(SaVmChooser *self)
{
  SluiceVm *vm = selected_vm(self);
  return g_strdup(vm != NULL ? sa_vm_get_name(vm) : "");
}

gboolean sa_vm_chooser_select(SaVmChooser *self, const char *name)
{
  GListModel *vms = sa_client_get_vms(self->client);
  guint n = g_list_model_get_n_items(vms);
  for (guint i = 0; i < n; i++) {
    g_autoptr(SluiceVm) vm = g_list_model_get_item(vms, i);
    const char *vm_name = sa_vm_get_name(vm);
    if (g_str_equal(vm_name, name)) {
      gtk_drop_down_set_selected(self->dropdown, i);
      return TRUE;
    }
  }
  return FALSE;
}

gboolean sa_vm_chooser_grab_focus(SaVmChooser *self)
{
  if (!gtk_widget_get_visible(GTK_WIDGET(self->dropdown)))
    return FALSE;
  return gtk_widget_grab_focus(GTK_WIDGET(self->dropdown));
}

gboolean sa_vm_chooser_has_focus(SaVmChooser *self, GtkWidget *focus)
{
  return focus != NULL && (focus == GTK_WIDGET(self->dropdown) ||
                           gtk_widget_is_ancestor(focus, GTK_WIDGET(self->dropdown)));
}

static void update_fix(SaVmChooser *self)
{
  SluiceVm *vm = selected_vm(self);
  gboolean lacks = vm != NULL && !sluice_vm_get_shared_memory(vm);
  if (lacks) {
    const char *name = sa_vm_get_name(vm);
    g_autofree char *text =
      g_strdup_printf(_("“%s” has no shared memory, which folder sharing needs."), name);
    gtk_label_set_label(self->fix_label, text);
  }
  gtk_revealer_set_reveal_child(self->fix_revealer, lacks);
  guint n = g_list_model_get_n_items(sa_client_get_vms(self->client));
  gtk_widget_set_visible(GTK_WIDGET(self->dropdown), n > 0);
  gtk_widget_set_visible(GTK_WIDGET(self->doctor_button), vm != NULL);
  adw_action_row_set_subtitle(self->row, n > 0 ? _("Running virtual machines are listed first")
                                               : _("No virtual machines found — shares wait until you assign one"));
}

static void on_selected(GObject *dropdown, GParamSpec *pspec, gpointer user_data)
{
  SaVmChooser *self = user_data;
  if (!self->restoring) {
    g_free(self->selected);
    self->selected = sa_vm_chooser_dup_selected(self);
  }
  update_fix(self);
}

static void on_vms_changed(SaClient *client, gpointer user_data)
{
  SaVmChooser *self = user_data;
  /* Re-sorting moves items; keep the user's choice by name. */
  self->restoring = TRUE;
  if (self->selected == NULL || !sa_vm_chooser_select(self, self->selected))
    gtk_drop_down_set_selected(self->dropdown, 0);
  self->restoring = FALSE;
  update_fix(self);
}

static void report_to_signal(const char *message, gboolean is_error, gpointer user_data)
{
  g_signal_emit(user_data, signals[SIGNAL_MESSAGE], 0, message, is_error);
  g_object_unref(user_data);
}

static void on_fix_clicked(GtkButton *button, gpointer user_data)
{
  SaVmChooser *self = user_data;
  SluiceVm *vm = selected_vm(self);
  if (vm != NULL)
    sa_vm_enable_shared_memory(vm, G_CALLBACK(report_to_signal), g_object_ref(self));
}

static void on_doctor_clicked(GtkButton *button, gpointer user_data)
{
  SaVmChooser *self = user_data;
  SluiceVm *vm = selected_vm(self);
  GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
  if (vm != NULL && GTK_IS_WINDOW(root))
    sa_doctor_dialog_show(GTK_WINDOW(root), vm);
}

static void item_setup(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *name = gtk_label_new(NULL);
  GtkWidget *state = gtk_label_new(NULL);
  GtkWidget *warning = gtk_image_new_from_icon_name("dialog-warning-symbolic");
  gtk_label_set_xalign(GTK_LABEL(name), 0);
  gtk_widget_add_css_class(state, "dim-label");
  gtk_widget_add_css_class(warning, "warning");
  gtk_box_append(GTK_BOX(box), name);
  gtk_box_append(GTK_BOX(box), state);
  gtk_box_append(GTK_BOX(box), warning);
  gtk_list_item_set_child(item, box);
}

static void item_bind(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  SluiceVm *vm = SLUICE_VM(gtk_list_item_get_item(item));
  GtkWidget *name = gtk_widget_get_first_child(gtk_list_item_get_child(item));
  GtkWidget *state = gtk_widget_get_next_sibling(name);
  GtkWidget *warning = gtk_widget_get_next_sibling(state);
  const char *vm_name = sa_vm_get_name(vm);
  const char *vm_state = sa_vm_get_state(vm);
  gboolean shm = sluice_vm_get_shared_memory(vm);
  gtk_label_set_label(GTK_LABEL(name), vm_name);
  gtk_label_set_label(GTK_LABEL(state), sluice_vm_state_label(vm_state));
  gtk_widget_set_visible(warning, !shm);
  gtk_widget_set_tooltip_text(warning, shm ? NULL : _("No shared memory: folder sharing needs it"));
}

static void sa_vm_chooser_dispose(GObject *object)
{
  SaVmChooser *self = SA_VM_CHOOSER(object);
  if (self->client != NULL)
    g_signal_handlers_disconnect_by_data(self->client, self);
  g_clear_object(&self->client);
  g_clear_pointer(&self->selected, g_free);
  G_OBJECT_CLASS(sa_vm_chooser_parent_class)->dispose(object);
}

static void sa_vm_chooser_class_init(SaVmChooserClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = sa_vm_chooser_dispose;
  signals[SIGNAL_MESSAGE] =
    g_signal_new("message", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                 G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);
}

static void sa_vm_chooser_init(SaVmChooser *self)
{
  gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing(GTK_BOX(self), 6);
}

GtkWidget *sa_vm_chooser_new(SaClient *client)
{
  SaVmChooser *self = g_object_new(SA_TYPE_VM_CHOOSER, NULL);
  self->client = g_object_ref(client);

  GtkWidget *list = gtk_list_box_new();
  gtk_list_box_set_selection_mode(GTK_LIST_BOX(list), GTK_SELECTION_NONE);
  gtk_widget_add_css_class(list, "boxed-list");
  self->row = ADW_ACTION_ROW(adw_action_row_new());
  adw_preferences_row_set_title(ADW_PREFERENCES_ROW(self->row), _("Share _with"));
  adw_preferences_row_set_use_underline(ADW_PREFERENCES_ROW(self->row), TRUE);
  adw_action_row_add_prefix(self->row, gtk_image_new_from_icon_name("computer-symbolic"));

  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(item_setup), NULL);
  g_signal_connect(factory, "bind", G_CALLBACK(item_bind), NULL);
  /* gtk_drop_down_new() takes a reference it owns. */
  GListModel *vms = g_object_ref(sa_client_get_vms(client));
  self->dropdown = GTK_DROP_DOWN(gtk_drop_down_new(vms, NULL));
  gtk_drop_down_set_factory(self->dropdown, factory);
  g_object_unref(factory);
  gtk_widget_set_valign(GTK_WIDGET(self->dropdown), GTK_ALIGN_CENTER);
  adw_action_row_add_suffix(self->row, GTK_WIDGET(self->dropdown));
  /* the VM's report for a user to read and send: what it has, what Sluice would do */
  self->doctor_button = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Doctor…")));
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->doctor_button),
                              _("What the VM has for shared folders, and what Sluice would do next: a report to read "
                                "or send"));
  gtk_widget_set_valign(GTK_WIDGET(self->doctor_button), GTK_ALIGN_CENTER);
  g_signal_connect(self->doctor_button, "clicked", G_CALLBACK(on_doctor_clicked), self);
  adw_action_row_add_suffix(self->row, GTK_WIDGET(self->doctor_button));
  adw_action_row_set_activatable_widget(self->row, GTK_WIDGET(self->dropdown));
  gtk_list_box_append(GTK_LIST_BOX(list), GTK_WIDGET(self->row));
  gtk_box_append(GTK_BOX(self), list);

  GtkWidget *fix = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_add_css_class(fix, "vm-fix");
  GtkWidget *icon = gtk_image_new_from_icon_name("dialog-warning-symbolic");
  gtk_widget_add_css_class(icon, "warning");
  self->fix_label = GTK_LABEL(gtk_label_new(NULL));
  gtk_label_set_wrap(self->fix_label, TRUE);
  gtk_label_set_xalign(self->fix_label, 0);
  gtk_widget_set_hexpand(GTK_WIDGET(self->fix_label), TRUE);
  self->fix_button = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Enable Shared Memory")));
  gtk_widget_set_valign(GTK_WIDGET(self->fix_button), GTK_ALIGN_CENTER);
  g_signal_connect(self->fix_button, "clicked", G_CALLBACK(on_fix_clicked), self);
  gtk_box_append(GTK_BOX(fix), icon);
  gtk_box_append(GTK_BOX(fix), GTK_WIDGET(self->fix_label));
  gtk_box_append(GTK_BOX(fix), GTK_WIDGET(self->fix_button));
  self->fix_revealer = GTK_REVEALER(gtk_revealer_new());
  gtk_revealer_set_child(self->fix_revealer, fix);
  gtk_box_append(GTK_BOX(self), GTK_WIDGET(self->fix_revealer));

  g_signal_connect(self->dropdown, "notify::selected", G_CALLBACK(on_selected), self);
  g_signal_connect(client, "vms-changed", G_CALLBACK(on_vms_changed), self);
  update_fix(self);
  return GTK_WIDGET(self);
}
