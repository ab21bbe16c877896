/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-orphans.h — sluice-fs processes a killed service left serving a
 * share's VM ("orphans"), tracked and ended by the share's next worker.
 *
 * When sluice-service dies (SIGKILL, a crash), its workers are not
 * adopted by the next service; they are replaced, without cutting off a guest.
 *  - A worker outlives the service only while a frontend (QEMU) is connected:
 *    QEMU cannot reconnect a vhost-user-fs device, so ending that worker would
 *    lose the running guest's mount until the device is re-plugged.  An idle
 *    worker exits with the service (its control channel closes).
 *  - On losing its control channel the worker stops listening and removes its
 *    socket at once (daemon/main.c, on_control_lost()), serves the connected
 *    frontend, and exits 0 when that frontend leaves (VM shut down or device
 *    unplugged).  So the socket path is free for the restarted service's own
 *    worker: never two listeners on one socket, and the VM's next connection
 *    (its next boot, a re-plug) reaches the supervised worker.
 *  - The restarted service finds such orphans once, when it creates a share's
 *    worker object at start-up (same user, /proc/PID/exe is the sluice-fs it
 *    runs, --socket-path= this share's socket, not its own child), and holds a
 *    pidfd of each: no new orphan can appear later, since only a service that
 *    died leaves them.  They cannot be controlled (the control channel
 *    was a socketpair with the dead service and nothing can reopen it), so
 *    whatever the user asks that an orphan cannot honour ends it: stopping a
 *    running share, RemoveShare, the service's own exit, and switching
 *    read-only on (a writable orphan must not keep writing).  The orphan of a
 *    share the new service does not start (autostart off) serves its VM until
 *    it lets go, unless one of those comes first.  Switching read-only off leaves a
 *    read-only orphan read-only until its device is re-plugged.  While one
 *    serves, the share's stats are those of the new worker only.
 *  Adoption (reopening a control channel to the orphan) was not chosen: it
 *  needs a second listening socket in every worker, reachable by any process
 *  of the user, for a state that only lasts until the VM's next shutdown. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SluiceWorkerOrphans SluiceWorkerOrphans;

/* Called on the main loop each time one of the orphans has exited. */
typedef void (*SluiceWorkerOrphanGoneFunc)(gpointer user_data);

/* Looks once for our user's sluice-fs processes (sluice_worker_binary()) that
 * serve socket_path and are not our children, and watches each through a
 * pidfd.  tag names the share in the log.  gone is called after one exited
 * (with user_data, which must outlive the set: free the set first). */
SluiceWorkerOrphans *sluice_worker_orphans_find(const char *socket_path, const char *tag,
                                                SluiceWorkerOrphanGoneFunc gone,
                                                gpointer user_data);
/* How many still run (0 for NULL). */
guint sluice_worker_orphans_count(SluiceWorkerOrphans *orphans);
/* Ends every orphan because of why (logged): SIGTERM now, SIGKILL to those
 * still running after a few seconds.  Nothing when there are none (or NULL). */
void sluice_worker_orphans_end(SluiceWorkerOrphans *orphans, const char *why);
/* Stops watching (a pending SIGKILL is not sent); the processes are left as
 * they are. */
void sluice_worker_orphans_free(SluiceWorkerOrphans *orphans);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceWorkerOrphans, sluice_worker_orphans_free)

G_END_DECLS
