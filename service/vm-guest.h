/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-guest.h — a share's folder inside its VM's guest, through the guest's
 * QEMU guest agent: what the VM manager offers the share side (share.c,
 * share-execute.c).  The OS-specific steps are one table per guest OS
 * (guest-ops.h), chosen by guest-os.h; the transport is guest-agent.h.
 *
 * The VM manager keeps, per VM, what its agent is (Vm.GuestAgent,
 * GuestAgentMessage, GuestOsType, GuestOsName): it probes the agent when the
 * domain runs and libvirt reports the agent (dis)connected, and emits
 * "guest-changed" (const char *vm_name) when whether Sluice can act in the
 * guest changes (an agent came up after the boot: shares plugged in
 * meanwhile are mounted then).
 *
 * Every call runs its agent commands in a worker thread, bounded by the
 * agent timeouts; results arrive in the main thread.  Nothing runs in a
 * guest but the fixed argument vectors of guest-linux.c/guest-windows.c,
 * for a share the user shared with that VM.
 *
 * Errors are SLUICE_ERROR: an agent's failure worded once
 * (sluice_guest_agent_error_sentence) as GUEST_AGENT, and when it says the
 * agent went away or hangs, the VM asks its agent anew
 * (sluice_vm_domain_agent_recheck). */
#pragma once

#include <gio/gio.h>

#include "guest-agent.h"
#include "vm-manager.h"
#include "wire-enums.h"

G_BEGIN_DECLS

typedef struct {
        const char *tag;
        const char *mount_point;  /* Share.MountPoint: "" = the OS's default (/mnt/TAG, Z: downwards) */
        gboolean at_boot;         /* Share.MountAtBoot (Linux: the fstab line) */
        gboolean case_insensitive; /* Share.ServedCase "insensitive" (Windows: virtiofs.exe -i) */
} SluiceGuestMountSpec;

/* Whether Sluice can mount in VM's guest now: its agent is READY and the
 * guest's OS is Linux or Windows. */
gboolean sluice_vm_manager_guest_ready(SluiceVmManager *self, const char *vm);
/* Whether VM is known to run Windows (its agent said so, or its definition
 * names a Windows OS: guest-os.h), running or not; FALSE for a VM nobody knows. */
gboolean sluice_vm_manager_guest_is_windows(SluiceVmManager *self, const char *vm);
/* The agent's state, as Vm.GuestAgent (NONE for a VM nobody knows). */
SluiceWireGuestAgent sluice_vm_manager_guest_agent(SluiceVmManager *self, const char *vm);
/* Vm.GuestAgentMessage: what to do when the agent is not READY (a new
 * string), or NULL for a VM nobody knows. */
char *sluice_vm_manager_guest_agent_message(SluiceVmManager *self, const char *vm);

/* Mounts the share in the guest (Linux: mkdir, mount -t virtiofs, confirmed
 * from /proc/mounts, and the fstab line kept or removed as SPEC says;
 * Windows: the VirtIO-FS service or a WinFsp launcher instance).  The
 * result is where it is, as the guest calls it: "/mnt/docs", "Z:".
 * Errors: SLUICE_ERROR_GUEST_AGENT with what the guest said and what to do. */
void sluice_vm_manager_guest_mount_async(SluiceVmManager *self, const char *vm,
                                         const SluiceGuestMountSpec *spec,
                                         GAsyncReadyCallback callback, gpointer user_data);
char *sluice_vm_manager_guest_mount_finish(SluiceVmManager *self, GAsyncResult *result, GError **error);

/* Unmounts what guest_mount mounted at PLACE, before an unplug.  Not
 * mounted (any more): success.  In use: SLUICE_ERROR_BUSY naming what uses
 * it, nothing changed.  Other failures: SLUICE_ERROR_GUEST_AGENT. */
void sluice_vm_manager_guest_unmount_async(SluiceVmManager *self, const char *vm, const char *tag,
                                           const char *place, GAsyncReadyCallback callback,
                                           gpointer user_data);
gboolean sluice_vm_manager_guest_unmount_finish(SluiceVmManager *self, GAsyncResult *result, GError **error);

/* The share's worker died with the share mounted at PLACE and its old
 * device has been unplugged: makes the guest let go of the dead mount
 * (detached), so that the new device can be mounted at the same place.
 * Never before the unplug: see guest-linux.h. */
void sluice_vm_manager_guest_release_async(SluiceVmManager *self, const char *vm, const char *tag,
                                           const char *place, GAsyncReadyCallback callback,
                                           gpointer user_data);
gboolean sluice_vm_manager_guest_release_finish(SluiceVmManager *self, GAsyncResult *result, GError **error);

/* Removes what Sluice keeps in the guest for TAG across boots (Linux: its
 * /etc/fstab line), when the share is removed or MountAtBoot switched off. */
void sluice_vm_manager_guest_forget_async(SluiceVmManager *self, const char *vm, const char *tag,
                                          GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_vm_manager_guest_forget_finish(SluiceVmManager *self, GAsyncResult *result, GError **error);

G_END_DECLS
