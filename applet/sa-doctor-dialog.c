/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-doctor-dialog: asks Vm.Doctor and shows its report. */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-doctor-dialog.h"
#include "sa-vm.h"

struct _SaDoctorDialog {
  GtkWindow parent_instance;
  GtkButton *copy_button;
  GtkWidget *asking_box;
  GtkSpinner *spinner;
  GtkLabel *asking_label, *error_label, *report_label;
};

G_DEFINE_TYPE(SaDoctorDialog, sa_doctor_dialog, GTK_TYPE_WINDOW)

static void on_copy_clicked(GtkButton *button, SaDoctorDialog *self)
{
  gdk_clipboard_set_text(gtk_widget_get_clipboard(GTK_WIDGET(self)), gtk_label_get_text(self->report_label));
  gtk_button_set_label(button, _("Copied"));
}

static void on_report(const char *report, const char *error, gpointer user_data)
{
  /* the reference taken for the call: the dialog may have been closed since */
  g_autoptr(SaDoctorDialog) self = user_data;
  if (self->report_label == NULL)
    return;  /* closed before the guest answered: its template is gone */
  gtk_spinner_stop(self->spinner);
  gtk_widget_set_visible(self->asking_box, FALSE);
  if (report == NULL) {
    gtk_label_set_label(self->error_label, error);
    gtk_widget_set_visible(GTK_WIDGET(self->error_label), TRUE);
    return;
  }
  gtk_label_set_label(self->report_label, report);
  gtk_widget_set_sensitive(GTK_WIDGET(self->copy_button), *report != '\0');
}

static void sa_doctor_dialog_dispose(GObject *object)
{
  gtk_widget_dispose_template(GTK_WIDGET(object), SA_TYPE_DOCTOR_DIALOG);
  G_OBJECT_CLASS(sa_doctor_dialog_parent_class)->dispose(object);
}

static void sa_doctor_dialog_class_init(SaDoctorDialogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = sa_doctor_dialog_dispose;
  gtk_widget_class_set_template_from_resource(widget_class, "/org/sluice/Applet/sa-doctor-dialog.ui");
  gtk_widget_class_bind_template_child(widget_class, SaDoctorDialog, copy_button);
  gtk_widget_class_bind_template_child(widget_class, SaDoctorDialog, asking_box);
  gtk_widget_class_bind_template_child(widget_class, SaDoctorDialog, spinner);
  gtk_widget_class_bind_template_child(widget_class, SaDoctorDialog, asking_label);
  gtk_widget_class_bind_template_child(widget_class, SaDoctorDialog, error_label);
  gtk_widget_class_bind_template_child(widget_class, SaDoctorDialog, report_label);
  gtk_widget_class_bind_template_callback(widget_class, on_copy_clicked);
  /* a report to read and close, as a dialog closes */
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void sa_doctor_dialog_init(SaDoctorDialog *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
}

GtkWidget *sa_doctor_dialog_show(GtkWindow *parent, SluiceVm *vm)
{
  SaDoctorDialog *self = g_object_new(SA_TYPE_DOCTOR_DIALOG, "transient-for", parent,
                                      "application", gtk_window_get_application(parent),
                                      "destroy-with-parent", TRUE, NULL);
  const char *name = sa_vm_get_name(vm);
  /* Translators: the title of the Doctor report's window; %s is a VM's name */
  g_autofree char *title = g_strdup_printf(_("What “%s” Has for Shared Folders"), name);
  /* Translators: %s is a VM's name */
  g_autofree char *asking = g_strdup_printf(_("Asking “%s” through its guest agent…"), name);
  gtk_window_set_title(GTK_WINDOW(self), title);
  gtk_label_set_label(self->asking_label, asking);
  sa_vm_doctor(vm, G_CALLBACK(on_report), g_object_ref(self));
  gtk_window_present(GTK_WINDOW(self));
  return GTK_WIDGET(self);
}
