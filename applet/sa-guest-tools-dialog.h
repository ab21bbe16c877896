/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-guest-tools-dialog: "Install in the VM…" asks before Sluice installs
 * what a Windows guest lacks (Vm.GuestToolsMissing): which pieces, into
 * which VM, from which installer — the ones the service finds on the host,
 * or a file the user picks instead. */
#pragma once

#include <gtk/gtk.h>

#include "sluice-dbus.h"

G_BEGIN_DECLS

/* Called when the user said Install: @installer is the file they picked, or
 * NULL for what the service finds on the host. */
typedef void (*SaGuestToolsConfirmed)(GObject *owner, SluiceVm *vm, const char *installer);

/* Asks over @parent; @confirmed is called (with @owner, kept alive until
 * then) at most once.  @installer: a file already picked, or NULL. */
void sa_guest_tools_dialog_ask(GtkWindow *parent, SluiceVm *vm, const char *installer,
                               SaGuestToolsConfirmed confirmed, GObject *owner);

G_END_DECLS
