/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-vm-chooser: picks the VM new shares go to — running VMs first, with
 * their state; a VM without shared memory is marked and the fix offered. */
#pragma once

#include <gtk/gtk.h>
#include "sa-client.h"

G_BEGIN_DECLS

#define SA_TYPE_VM_CHOOSER (sa_vm_chooser_get_type())
G_DECLARE_FINAL_TYPE(SaVmChooser, sa_vm_chooser, SA, VM_CHOOSER, GtkBox)

/* Emits "message" (string text, boolean is_error) with what a fix did. */
GtkWidget *sa_vm_chooser_new(SaClient *client);
/* The chosen VM's name, or "" when there is none (share not assigned yet). */
char *sa_vm_chooser_dup_selected(SaVmChooser *self);
/* Selects a VM by name; FALSE when there is no such VM. */
gboolean sa_vm_chooser_select(SaVmChooser *self, const char *name);

/* Gives the drop-down the keyboard focus; FALSE when there is no VM to choose. */
gboolean sa_vm_chooser_grab_focus(SaVmChooser *self);
/* TRUE when @focus (a window's focus widget) is the drop-down or inside it. */
gboolean sa_vm_chooser_has_focus(SaVmChooser *self, GtkWidget *focus);

G_END_DECLS
