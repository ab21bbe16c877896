/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-hotplug-slots.h — a VM's places for hot-plugged devices on its
 * org.sluice.Sluice1.Vm object: the Vm.HotplugSlots count (hotplug-slots.h,
 * read in a worker thread from the definition in use) and the
 * Vm.AddHotplugSlots method, which gives the saved definition spare PCIe
 * root ports.  Main thread only; the calls that wait on libvirtd run in
 * GTask worker threads on their own reference to the domain. */
#pragma once

#include "vm-domain.h"

G_BEGIN_DECLS

/* Handles Vm.AddHotplugSlots for VM (until sluice_vm_domain_remove(), which
 * disconnects it) and shows HotplugSlots as not counted yet. */
void sluice_vm_hotplug_slots_export(SluiceVmDomain *vm);

/* Counts again (after each read of the VM's state: a start, a stop, a
 * device plugged in or out).  Coalesced: one count at a time per VM. */
void sluice_vm_hotplug_slots_refresh(SluiceVmDomain *vm);

G_END_DECLS
