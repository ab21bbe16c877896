/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-vm: what the applet asks of a VM the service follows.  The VMs are the
 * generated SluiceVm proxies themselves (sa_client_get_vms()); these add the
 * applet's defaults and its way of reporting a call's outcome. */
#pragma once

#include <gio/gio.h>

#include "sluice-dbus.h"

G_BEGIN_DECLS

/* The VM's name, "" while unknown (transfer none: valid until its next change). */
const char *sa_vm_get_name(SluiceVm *vm);
/* The Vm.State word, "" while unknown (transfer none). */
const char *sa_vm_get_state(SluiceVm *vm);
gboolean sa_vm_is_running(SluiceVm *vm);
/* Vm.GuestAgent ("none", "disconnected", "ready", "restricted"; "" while
 * unknown) and Vm.GuestAgentMessage (transfer none). */
const char *sa_vm_get_guest_agent(SluiceVm *vm);
const char *sa_vm_get_guest_agent_message(SluiceVm *vm);

/* Calls Vm.EnableSharedMemory; @report is a
 * void (*)(const char *message, gboolean is_error, gpointer user_data)
 * called once with a sentence for the user. */
void sa_vm_enable_shared_memory(SluiceVm *vm, GCallback report, gpointer user_data);

/* Calls Vm.EnableGuestAgent; @report as for sa_vm_enable_shared_memory. */
void sa_vm_enable_guest_agent(SluiceVm *vm, GCallback report, gpointer user_data);

/* Whether the VM is known to have no place left for another hot-plugged
 * device (Vm.HotplugSlots is 0): FALSE while it is not counted, or from a
 * service that does not publish it. */
gboolean sa_vm_lacks_hotplug_slot(SluiceVm *vm);

/* Calls Vm.AddHotplugSlots (the service's default count); @report as for
 * sa_vm_enable_shared_memory, with what was added and that the VM must be
 * restarted. */
void sa_vm_add_hotplug_slots(SluiceVm *vm, GCallback report, gpointer user_data);

G_END_DECLS
