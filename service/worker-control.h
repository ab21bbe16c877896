/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-control.h — the service's side of one worker's private control
 * channel: a GDBus peer-to-peer client of org.sluice.Worker1
 * (data/org.sluice.Worker1.xml) over a socketpair. */
#pragma once

#include <gio/gio.h>

#include "sluice-worker-dbus.h"

G_BEGIN_DECLS

/* Takes ownership of fd (the service's end of the socketpair).  Completes
 * once the worker has answered a first call: the worker serves the channel
 * only after its vhost-user socket listens, so success means "ready".
 * Its Resume property is read then and cached: sluice_worker1_get_resume()
 * answers (an empty dict from a worker that has none). */
void sluice_worker_control_connect_async(int fd, GCancellable *cancellable,
                                         GAsyncReadyCallback callback, gpointer user_data);
SluiceWorker1 *sluice_worker_control_connect_finish(GAsyncResult *result, GError **error);

/* The worker's raw counters (a{sv} of "t" values, see Worker1.GetStats). */
void sluice_worker_control_get_stats_async(SluiceWorker1 *control, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);
GVariant *sluice_worker_control_get_stats_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                 GError **error);

/* Switches the worker's read-only mode; completes once the worker has
 * switched (it refuses writes from then on), or with
 * SLUICE_ERROR_WORKER_FAILED when it refuses or does not answer in time. */
void sluice_worker_control_set_readonly_async(SluiceWorker1 *control, gboolean readonly,
                                              GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_worker_control_set_readonly_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                   GError **error);

/* Worker1.SetNames: how the worker shows names (NAMES "posix"|"windows")
 * and finds them (CASE "sensitive"|"insensitive") from now on; completes
 * once it holds them, or with SLUICE_ERROR_WORKER_FAILED. */
void sluice_worker_control_set_names_async(SluiceWorker1 *control, const char *names, const char *case_,
                                           GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_worker_control_set_names_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                GError **error);

/* From now on the worker accepts a frontend only from process pid (the VM's
 * QEMU) while it lives; 0: any process of an allowed user.  Completes once
 * the worker holds it, or with SLUICE_ERROR_WORKER_FAILED (no such process). */
void sluice_worker_control_set_peer_pid_async(SluiceWorker1 *control, guint pid,
                                              GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_worker_control_set_peer_pid_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                   GError **error);

/* Closes the channel; the worker notices the hang-up and exits. */
void sluice_worker_control_close(SluiceWorker1 *control);

G_END_DECLS
