/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-doctor.h — Vm.Doctor on a VM's org.sluice.Sluice1.Vm object: the
 * guest's report (guest-doctor.h) asked in a GTask worker thread on its own
 * reference to the raw domain, with the shares plugged into the VM and
 * where Sluice mounted them.  A Windows guest's answer also refreshes
 * Vm.GuestToolsMissing.  Main thread only. */
#pragma once

#include "vm-domain.h"

G_BEGIN_DECLS

/* Handles Vm.Doctor for VM (until sluice_vm_domain_remove(), which
 * disconnects it). */
void sluice_vm_doctor_export(SluiceVmDomain *vm);

G_END_DECLS
