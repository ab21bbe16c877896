/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-doctor-dialog: a VM's Doctor report (Vm.Doctor) in a window of its own,
 * as plain selectable text with a Copy button, for a user to send. */
#pragma once

#include <gtk/gtk.h>

#include "sluice-dbus.h"

G_BEGIN_DECLS

#define SA_TYPE_DOCTOR_DIALOG (sa_doctor_dialog_get_type())
G_DECLARE_FINAL_TYPE(SaDoctorDialog, sa_doctor_dialog, SA, DOCTOR_DIALOG, GtkWindow)

/* Shows the dialog over @parent at once and asks @vm for its report; the
 * report, or why there is none, replaces "Asking …" when it comes.  The
 * dialog belongs to @parent's application. */
GtkWidget *sa_doctor_dialog_show(GtkWindow *parent, SluiceVm *vm);

G_END_DECLS
