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

/* Vm.GuestToolsMissing: what the guest lacks to show shared folders ("winfsp",
 * "virtio-fs"); never NULL (transfer none). */
const char *const *sa_vm_get_guest_tools_missing(SluiceVm *vm);

/* GuestToolsMissing in words: "WinFsp and the VirtIO-FS driver". */
char *sa_vm_dup_guest_tools_missing_text(SluiceVm *vm);

/* Vm.GuestToolsInstall as the window shows it. */
typedef enum {
  SA_VM_INSTALL_NONE,        /* no install, or a state word this applet does not know */
  SA_VM_INSTALL_FINDING,
  SA_VM_INSTALL_COPYING,     /* @fraction of the copy into the guest */
  SA_VM_INSTALL_INSTALLING,  /* msiexec runs: no fraction */
  SA_VM_INSTALL_DONE,
  SA_VM_INSTALL_FAILED,
} SaVmInstallState;

typedef struct {
  SaVmInstallState state;
  double fraction;           /* 0 … 1, clamped */
  const char *what;          /* "winfsp", "virtio-fs" or "" (transfer none) */
  char *message;             /* printable, one line; "" when none */
} SaVmInstallProgress;

void sa_vm_get_guest_tools_install(SluiceVm *vm, SaVmInstallProgress *progress);
void sa_vm_install_progress_clear(SaVmInstallProgress *progress);
/* A name for a package of GuestToolsMissing ("WinFsp", "the VirtIO-FS
 * driver"), or NULL for a word this applet does not know. */
const char *sa_vm_guest_tool_label(const char *what);

/* Calls Vm.InstallGuestTools with no timeout of its own (an MSI install in a
 * slow guest takes minutes; the service bounds it); @installer: a file the
 * user chose, or NULL for what the service finds on the host.  @report as
 * for sa_vm_enable_shared_memory, with the service's message (a reboot
 * needed) or its error sentence. */
void sa_vm_install_guest_tools(SluiceVm *vm, const char *installer, GCallback report, gpointer user_data);

/* Calls Vm.Doctor; @report is a
 * void (*)(const char *report, const char *error, gpointer user_data)
 * called once: the report (printable lines) or, when it failed, NULL and
 * the error sentence. */
void sa_vm_doctor(SluiceVm *vm, GCallback report, gpointer user_data);

G_END_DECLS
