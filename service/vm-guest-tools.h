/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-guest-tools.h — a Windows VM's guest pieces on its
 * org.sluice.Sluice1.Vm object: Vm.GuestToolsMissing (what a mount, an
 * install or the doctor learned missing), Vm.InstallGuestTools and its
 * progress in Vm.GuestToolsInstall.
 *
 * An install runs in a GTask worker thread on its own reference to the raw
 * domain, one at a time per VM (.Busy otherwise): the installer is found
 * and checked on the host (guest-tools.h), copied into the guest through
 * guest-file-write (guest-agent.h), run with msiexec, and its exit code
 * read back.  Progress reaches the main thread a few times a second at
 * most.  Once nothing is missing, the VM's "guest changed" callback runs,
 * so that its shares are mounted again (vm-guest.h).
 *
 * Main thread only. */
#pragma once

#include "vm-domain.h"

G_BEGIN_DECLS

/* Handles Vm.InstallGuestTools for VM (until sluice_vm_domain_remove(),
 * which disconnects it) and sets GuestToolsMissing and GuestToolsInstall
 * empty. */
void sluice_vm_guest_tools_export(SluiceVmDomain *vm);

/* What the guest lacks now ("winfsp", "virtio-fs"; empty: nothing). */
void sluice_vm_guest_tools_set_missing(SluiceVmDomain *vm, const char *const *missing);

/* The sentence a share's Error ends with when something is missing: how to
 * let Sluice install it.  A new string. */
char *sluice_vm_guest_tools_offer(const char *vm_name);

G_END_DECLS
