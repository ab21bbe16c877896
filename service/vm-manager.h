/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-manager.h — the VMs Sluice knows, through libvirt (libvirt-glib plus the
 * raw libvirt API where libvirt-glib lacks something).
 *
 * Contract between the share side of the service (manager.c, share.c) and the
 * libvirt side (vm-*.c, hotplug.c):
 *  - the VM manager exports one org.sluice.Sluice1.Vm object per domain on the
 *    GDBusObjectManagerServer it is given, under /org/sluice/Sluice1/vm/<uuid>,
 *    and keeps them current from libvirt events (reconnecting by itself when
 *    libvirtd restarts);
 *  - it emits "vm-started" / "vm-stopped" (name) so that shares assigned to a
 *    VM are attached when it starts;
 *  - attach/detach hot-plug one vhost-user-fs device into a running domain;
 *  - it knows each VM's QEMU guest agent and offers the guest operations
 *    (mount, unmount, release, forget: vm-guest.h), emitting "guest-changed"
 *    when what sluice_vm_manager_guest_ready() says may have changed.
 * Errors are in the SLUICE_ERROR domain (errors.h). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SLUICE_TYPE_VM_MANAGER (sluice_vm_manager_get_type())
G_DECLARE_FINAL_TYPE(SluiceVmManager, sluice_vm_manager, SLUICE, VM_MANAGER, GObject)

/* uris: libvirt URIs to track; NULL = the default ("qemu:///session", plus
 * "qemu:///system" when reachable).  Nothing is connected until _start(). */
SluiceVmManager *sluice_vm_manager_new(GDBusObjectManagerServer *server,
                                       const char *const *uris);
/* Connects (asynchronously; a libvirtd that is not running is retried). */
void sluice_vm_manager_start(SluiceVmManager *self);

typedef struct {
        char *name;
        char *uuid;
        char *uri;
        char *os;              /* libosinfo short id or "" */
        gboolean running;
        gboolean shared_memory;
        /* the user QEMU runs as for this domain (qemu:///system: e.g. libvirt-qemu);
         * -1 when it is the service's own user */
        gint64 qemu_uid;
} SluiceVmInfo;
void sluice_vm_info_free(SluiceVmInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceVmInfo, sluice_vm_info_free)

/* vm: name or UUID.  Returns NULL with SLUICE_ERROR_NOT_FOUND. */
SluiceVmInfo *sluice_vm_manager_lookup(SluiceVmManager *self, const char *vm, GError **error);

/* The pid of the running VM's QEMU, as libvirt recorded it (vm-qemu-pid.h):
 * its worker serves that process only.  -1 with an error when the VM does
 * not run, or its QEMU cannot be told from here (a remote libvirt). */
gint64 sluice_vm_manager_qemu_pid(SluiceVmManager *self, const char *vm, GError **error);

/* Whether libvirt knows a VM (name or UUID), for refusing a name nobody
 * knows while accepting one whose connection is not up (yet). */
typedef enum {
        /* no tracked connection has listed its domains yet (or all are down) */
        SLUICE_VM_PRESENCE_UNDECIDED,
        SLUICE_VM_PRESENCE_KNOWN,
        /* a connection is up and has listed its domains; none of them is VM */
        SLUICE_VM_PRESENCE_UNKNOWN,
} SluiceVmPresence;
SluiceVmPresence sluice_vm_manager_presence(SluiceVmManager *self, const char *vm);
/* What presence() says, but when it says UNKNOWN, libvirtd is asked too (in
 * a thread): a VM defined a moment ago, whose event has not arrived yet
 * ("virsh define X && sluicectl add DIR --vm X"), is KNOWN. */
void sluice_vm_manager_confirm_presence_async(SluiceVmManager *self, const char *vm,
                                              GAsyncReadyCallback callback, gpointer user_data);
SluiceVmPresence sluice_vm_manager_confirm_presence_finish(SluiceVmManager *self,
                                                           GAsyncResult *result);
/* The names of the VMs known, sorted (for telling a user which there are). */
char **sluice_vm_manager_dup_names(SluiceVmManager *self);
/* The tracked URIs that are not up or have not listed their domains yet. */
char **sluice_vm_manager_dup_unlisted(SluiceVmManager *self);

/* Hot-plugs <filesystem type='mount'><driver type='virtiofs' queue='1024'/>
 * <source socket=SOCKET/><target dir=TAG/></filesystem> into the running VM.
 * Checks that the VM runs, has shared memory and has no other device with TAG;
 * makes the socket reachable for QEMU's user when that is another user.
 * The result is the guest hint (a sentence: mount command or Windows needs). */
void sluice_vm_manager_attach_async(SluiceVmManager *self, const char *vm,
                                    const char *socket_path, const char *tag,
                                    GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data);
char *sluice_vm_manager_attach_finish(SluiceVmManager *self, GAsyncResult *result,
                                      GError **error);
/* Unplugs the device with TAG (no error when it is not plugged in). */
void sluice_vm_manager_detach_async(SluiceVmManager *self, const char *vm, const char *tag,
                                    GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_vm_manager_detach_finish(SluiceVmManager *self, GAsyncResult *result,
                                         GError **error);
/* A device with TAG left VM without Sluice's unplug (which does this
 * itself): QEMU's user may no longer reach its socket.  Queued behind any
 * grant asked before; nothing when the VM is unknown. */
void sluice_vm_manager_revoke_access(SluiceVmManager *self, const char *vm, const char *tag);
/* Whether a device with TAG is currently plugged into the VM, from the state
 * the manager keeps current (device events, its own hot-plug results): it
 * never waits on libvirtd. */
gboolean sluice_vm_manager_is_attached(SluiceVmManager *self, const char *vm, const char *tag);

/* For the VM side's own files (vm-guest.c): the entry of a VM (name or
 * UUID), or NULL with SLUICE_ERROR_NO_VM / SLUICE_ERROR_NOT_FOUND.  The
 * manager keeps it; take a reference to keep it across a thread. */
typedef struct _SluiceVmDomain SluiceVmDomain;
SluiceVmDomain *sluice_vm_manager_find_domain(SluiceVmManager *self, const char *vm, GError **error);

/* Signals:
 *   "vm-started" (const char *name)  — the domain entered the running state
 *   "vm-stopped" (const char *name)  — it stopped (any reason)
 *   "device-removed" (const char *name, const char *tag) — a device of
 *     Sluice's went away: Sluice's own unplugs too (the share knows whether
 *     it asked; sluice_vm_manager_revoke_access() when it did not)
 *   "vms-changed" — a VM was defined or undefined, or a connection listed its
 *     domains or went down: what sluice_vm_manager_presence() says may differ
 *   "guest-changed" (const char *name) — the VM's guest agent connected,
 *     answered, went away, or its OS became known: whether
 *     sluice_vm_manager_guest_ready() is TRUE may differ (shares plugged in
 *     while the agent was not up yet are mounted then).  Also after the
 *     VM stopped ("vm-stopped" comes first). */

G_END_DECLS
