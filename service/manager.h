/* SPDX-License-Identifier: GPL-2.0-or-later */
/* manager.h — org.sluice.Sluice1.Manager at /org/sluice/Sluice1, the
 * ObjectManager every share and VM object lives under, AddShare's checks,
 * and the persisted list of shares. */
#pragma once

#include <gio/gio.h>

#include "sluice-names.h"

G_BEGIN_DECLS

typedef struct {
        const char *config_file;            /* shares.ini */
        const char *socket_dir;             /* existing, mode 0700 */
        guint stats_interval_ms;
        const char *const *libvirt_uris;    /* NULL: the VM manager's defaults */
} SluiceServiceOptions;

#define SLUICE_TYPE_SERVICE_MANAGER (sluice_service_manager_get_type())
G_DECLARE_FINAL_TYPE(SluiceServiceManager, sluice_service_manager, SLUICE, SERVICE_MANAGER, GObject)

SluiceServiceManager *sluice_service_manager_new(const SluiceServiceOptions *options);
/* Exports the objects on connection, restores the saved shares and starts
 * tracking VMs. */
gboolean sluice_service_manager_export(SluiceServiceManager *self, GDBusConnection *connection,
                                       GError **error);
/* Starts the shares marked Autostart. */
void sluice_service_manager_autostart(SluiceServiceManager *self);
/* Stops every worker; completes when all are reaped. */
void sluice_service_manager_shutdown_async(SluiceServiceManager *self, GAsyncReadyCallback callback,
                                           gpointer user_data);
void sluice_service_manager_shutdown_finish(SluiceServiceManager *self, GAsyncResult *result);
/* The service restarts: every ready worker hands over (worker.h) and its
 * store goes into the service's own (service-fd-store.h); no share is
 * stopped, unplugged or unmounted.  Shares without a ready worker are
 * stopped as by a shutdown.  Finish with ..._shutdown_finish. */
void sluice_service_manager_hand_over_async(SluiceServiceManager *self, GAsyncReadyCallback callback,
                                            gpointer user_data);
void sluice_service_manager_unexport(SluiceServiceManager *self);

G_END_DECLS
