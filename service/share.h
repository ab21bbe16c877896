/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share.h — one shared folder: its worker and its device in its VM, driven
 * by the state machine of share-lifecycle.h (read that first); its
 * org.sluice.Sluice1.Share object (share-service.h, which makes the share)
 * only translates calls and properties into these functions.  Attached when the worker runs and
 * the VM runs, re-attached after a worker restart. */
#pragma once

#include <gio/gio.h>

#include "config-store.h"
#include "sluice-dbus.h"
#include "share-stats.h"
#include "vm-manager.h"
#include "worker.h"

G_BEGIN_DECLS

#define SLUICE_TYPE_SHARED_FOLDER (sluice_shared_folder_get_type())
G_DECLARE_FINAL_TYPE(SluiceSharedFolder, sluice_shared_folder, SLUICE, SHARED_FOLDER, GObject)

/* Signal "changed": a persisted setting changed (save the config). */

/* IFACE: the share's exported Share object (share-service.h makes both,
 * and translates its calls into the functions below); the share keeps a
 * reference and sets its properties.  vms may be NULL (no VM support); the
 * socket is SOCKET_DIR/<id>.sock. */
SluiceSharedFolder *sluice_shared_folder_new(const SluiceShareConfig *config, SluiceShare *iface,
                                             SluiceVmManager *vms, const char *socket_dir,
                                             guint stats_interval_ms);

const SluiceShareConfig *sluice_shared_folder_get_config(SluiceSharedFolder *self);
const char *sluice_shared_folder_get_object_path(SluiceSharedFolder *self);
SluiceObjectSkeleton *sluice_shared_folder_get_object(SluiceSharedFolder *self);
SluiceShare *sluice_shared_folder_get_iface(SluiceSharedFolder *self);
/* The share's Stats sampler (share-stats.h): its watchers and samples on demand. */
SluiceShareStats *sluice_shared_folder_get_stats(SluiceSharedFolder *self);
/* The share's worker, NULL before its first start: Restart and the
 * upgrade in place (worker-binary.h) restart it into the binary on disk. */
SluiceWorker *sluice_shared_folder_get_worker(SluiceSharedFolder *self);
/* Object path of share ID. */
char *sluice_shared_folder_path_for_id(guint id);

/* Start the worker; completes when it is ready (and attached, when its VM runs). */
void sluice_shared_folder_start_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                      gpointer user_data);
gboolean sluice_shared_folder_start_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                           GError **error);
/* Detach (unmounted in the guest first) and stop the worker.  Fails with
 * SLUICE_ERROR_BUSY only when the guest uses the share: then nothing
 * changed, the share runs on and stays mounted.  A guest that does not
 * answer (or answers nonsense) within SLUICE_SHARE_UNMOUNT_DEADLINE_S does
 * not hold it: the share stops, Error says so.  FORCE: the guest is not
 * asked; the device is unplugged and the worker stopped. */
void sluice_shared_folder_stop_async(SluiceSharedFolder *self, gboolean force, GAsyncReadyCallback callback,
                                     gpointer user_data);
gboolean sluice_shared_folder_stop_finish(SluiceSharedFolder *self, GAsyncResult *result, GError **error);
/* Start if needed and hot-plug into the VM; returns the guest hint.  Where
 * Sluice handles the guest, completes once the mount there was tried
 * (GuestPath says where it is; a failed mount does not fail Attach). */
void sluice_shared_folder_attach_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                       gpointer user_data);
char *sluice_shared_folder_attach_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                         GError **error);
/* Unmounts in the guest and unplugs from the VM; fails with NO_VM when
 * none is assigned, with BUSY (nothing changed) when the guest uses it.
 * FORCE, silence or nonsense from the guest: unplugged without its unmount. */
void sluice_shared_folder_detach_async(SluiceSharedFolder *self, gboolean force, GAsyncReadyCallback callback,
                                       gpointer user_data);
gboolean sluice_shared_folder_detach_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                            GError **error);
/* ReadOnly: the property and the saved setting change once the worker has
 * switched (at once when there is none); an error when it refuses. */
void sluice_shared_folder_set_read_only_async(SluiceSharedFolder *self, gboolean readonly,
                                              GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_shared_folder_set_read_only_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                                   GError **error);
void sluice_shared_folder_set_autostart(SluiceSharedFolder *self, gboolean autostart);
/* The guest settings (share-settings.c): each changes the config, the
 * property and emits "changed".  MountPoint ("" or what
 * sluice_config_check_mount_point takes; SLUICE_ERROR_INVALID_ARGUMENT
 * otherwise) takes effect at the next mount.  AutoMount switched on mounts
 * a share already plugged into a ready guest; MountAtBoot switched on or off
 * writes or removes the guest's /etc/fstab line at once where the guest
 * answers (a failure shows in Error). */
void sluice_shared_folder_set_auto_mount(SluiceSharedFolder *self, gboolean auto_mount);
gboolean sluice_shared_folder_set_mount_point(SluiceSharedFolder *self, const char *mount_point,
                                              GError **error);
void sluice_shared_folder_set_mount_at_boot(SluiceSharedFolder *self, gboolean mount_at_boot);
/* Names and Case ("" or what sluice_config_check_names/_case take;
 * SLUICE_ERROR_INVALID_ARGUMENT otherwise): saved, resolved at once. */
gboolean sluice_shared_folder_set_names(SluiceSharedFolder *self, const char *names, GError **error);
gboolean sluice_shared_folder_set_case(SluiceSharedFolder *self, const char *case_, GError **error);
/* ServedNames and ServedCase anew (share-names.h) from the settings and the
 * VM's OS, told to a running worker when they changed: called whenever
 * either may have changed (a setting, SetVm, the agent saying its OS). */
void sluice_shared_folder_update_served(SluiceSharedFolder *self);
/* Assigns another VM (already validated); detaches from the old one first. */
void sluice_shared_folder_set_vm(SluiceSharedFolder *self, const char *vm);

/* From the VM manager's signals. */
void sluice_shared_folder_vm_started(SluiceSharedFolder *self, const char *vm);
void sluice_shared_folder_vm_stopped(SluiceSharedFolder *self, const char *vm);
void sluice_shared_folder_device_removed(SluiceSharedFolder *self, const char *vm, const char *tag);
/* "guest-changed" (VM: the VM's name): a share in the VM that Sluice did
 * not mount is mounted now if Sluice handles that guest. */
void sluice_shared_folder_guest_changed(SluiceSharedFolder *self, const char *vm);
/* RemoveShare, once the share is stopped and forgotten by the service: a
 * line it left in its guest's /etc/fstab is removed where the guest
 * answers (the log says what is left to do by hand). */
void sluice_shared_folder_removed(SluiceSharedFolder *self);
/* "vms-changed": when libvirt does not know the share's VM (any more), the
 * share stays and its Error says that it waits for that VM. */
void sluice_shared_folder_vms_changed(SluiceSharedFolder *self);

G_END_DECLS
