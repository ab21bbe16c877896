/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker.h — one supervised sluice-fs process (a share's worker).
 *
 * The service is the worker's parent: it spawns it with one end of a
 * socketpair as --control-fd and the shared folder, opened by the service,
 * as --shared-dir-fd; waits for readiness on that channel, restarts
 * it with backoff (1 s, 2 s, 4 s … at most 30 s) when it dies unexpectedly
 * and gives up after 5 failures within 60 s.  Every launch runs with
 * --resume and keeps its fds in the worker's store (worker-fd-store.h);
 * after a crash while it served a frontend (the store holds "state" and
 * "conn") the relaunch is at once, with the stored fds (LISTEN_FDS); any
 * other relaunch also gets the stored fds, after the backoff.  Crashes close together (3 within 30 s) are a
 * loop: the 2nd relaunch answers what was in flight with EIO
 * (--replay=no), the 3rd drops the stored state, so the frontend sees the
 * connection end and the share takes the replug path.  A stop closes the
 * store; a restart (sluice_worker_restart_async) hands it over, and so does
 * the service's own restart (sluice_worker_hand_over_async), which keeps it.  Stopping sends SIGTERM and,
 * after a timeout, SIGKILL; the process is always reaped.  Workers a killed
 * service left serving a VM on the share's socket ("orphans") are tracked
 * and ended by whatever they cannot honour (worker-orphans.h).  The program
 * run is sluice_worker_binary() (worker-binary.h). */
#pragma once

#include <gio/gio.h>

#include "share-path.h"
#include "wire-enums.h"
#include "worker-fd-store.h"
#include "sluice-worker-dbus.h"

G_BEGIN_DECLS

typedef struct {
        char *shared_dir;
        char *tag;
        char *socket_path;
        char *cache;        /* auto|always|never */
        gboolean readonly;
        guint queues;
} SluiceWorkerConfig;

#define SLUICE_TYPE_WORKER (sluice_worker_get_type())
G_DECLARE_FINAL_TYPE(SluiceWorker, sluice_worker, SLUICE, WORKER, GObject)

/* Signals:
 *   "ready" (gboolean restarted)      the worker answers on its control channel
 *   "crashed" (const char *message)   it died unexpectedly; a restart is scheduled
 *   "failed" (const char *message)    it could not start or keeps crashing: given up
 *   "peer-refused" (guint pid, guint uid, const char *reason)
 *                                     it closed a process's connection to its socket:
 *                                     not QEMU's user, or not the VM's QEMU (SetPeerPid) */

/* Also looks for orphans on config's socket (worker-orphans.h). */
SluiceWorker *sluice_worker_new(const SluiceWorkerConfig *config);

/* Launches the process (no-op when it runs or is starting).  Before every
 * launch, this one and each restart, the folder (config's shared_dir) is
 * opened in a thread with sluice_share_path_open(): it must be FOLDER (known)
 * or the worker fails ("failed") without being run; the worker gets the
 * opened folder and resolves no path itself. */
void sluice_worker_start(SluiceWorker *self, const SluiceFolderId *folder);
/* The one user besides ours (and root) whose frontend the worker accepts
 * from its next launch on (sluice-fs --allow-peer-uid): the user a
 * qemu:///system VM's QEMU runs as.  -1 (the default): whoever the socket's
 * permissions let in. */
void sluice_worker_set_peer_uid(SluiceWorker *self, gint64 uid);
/* Stops the process and any pending restart; completes once it is reaped. */
void sluice_worker_stop_async(SluiceWorker *self, GAsyncReadyCallback callback, gpointer user_data);
void sluice_worker_stop_finish(SluiceWorker *self, GAsyncResult *result);

gboolean sluice_worker_is_ready(SluiceWorker *self);
/* The control channel while ready, else NULL. */
SluiceWorker1 *sluice_worker_get_control(SluiceWorker *self);
GPid sluice_worker_get_pid(SluiceWorker *self);
/* Applies to every later launch and, when ready, live: completes once the
 * worker has switched (an error when it refuses or does not answer). */
void sluice_worker_set_readonly_async(SluiceWorker *self, gboolean readonly,
                                      GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_worker_set_readonly_finish(SluiceWorker *self, GAsyncResult *result, GError **error);

/* How the worker shows and finds names (Worker1.SetNames): for every later
 * launch (--names, --case) and, when ready and different from what it
 * has, live.  A refusal is logged: the next launch takes them. */
void sluice_worker_set_names(SluiceWorker *self, SluiceWireNames names, SluiceWireCase case_);

/* A hand-over: SIGTERM (the worker keeps its store, protocol "Stopping"),
 * then a launch at once with the store.  Completes when the new worker is
 * ready: an error when it did not start or did not resume (with why). */
void sluice_worker_restart_async(SluiceWorker *self, GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_worker_restart_finish(SluiceWorker *self, GAsyncResult *result, GError **error);
/* The service's own restart: a hand-over (SIGTERM, the worker keeps its
 * store and exits) without a relaunch; the store and the socket file stay
 * for the service to pass on.  Completes (with sluice_worker_stop_finish)
 * once the process is reaped.  A worker that is not ready is stopped as by
 * sluice_worker_stop_async(), which closes the store. */
void sluice_worker_hand_over_async(SluiceWorker *self, GAsyncReadyCallback callback, gpointer user_data);
/* The worker's fd store (worker-fd-store.h): it lives as long as the
 * SluiceWorker, across its processes. */
SluiceWorkerFdStore *sluice_worker_get_fd_store(SluiceWorker *self);
/* What the running worker took over (its Worker1.Resume, a{sv}), NULL when
 * not ready. */
GVariant *sluice_worker_get_resume(SluiceWorker *self);
/* From the last process's death seen to the next ready (microseconds; 0
 * when the launch followed no death). */
gint64 sluice_worker_get_resume_pause_us(SluiceWorker *self);
/* Between "crashed" and the next "ready": whether the relaunch has a stored
 * state to resume (the crash-loop policy did not drop it). */
gboolean sluice_worker_resume_expected(SluiceWorker *self);

G_END_DECLS
