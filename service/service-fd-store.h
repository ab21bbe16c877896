/* SPDX-License-Identifier: GPL-2.0-or-later */
/* service-fd-store.h — sluice-service's own fd store, which carries its
 * workers' stores across a restart of the service.
 *
 * Each worker keeps its fds in a store the service holds
 * (worker-fd-store.h); the service would lose them all when it exits.  On
 * a restart (main.c decides whether a SIGTERM is one) the service hands its
 * workers over, then pushes every fd of their stores into its unit's store
 * (systemd's protocol: "FDSTORE=1\nFDNAME=<tag>.<name>" to $NOTIFY_SOCKET,
 * FileDescriptorStoreMax= in sluice-service.service).  systemd keeps that
 * store across the restart and passes it to the next service as
 * LISTEN_FDS/LISTEN_FDNAMES; that service takes the fds back at start,
 * groups them by share tag and gives each share's worker its store before
 * the worker's first launch, so the worker resumes.  A stop empties the
 * unit's store (systemd closes it when the unit stops for good), so QEMU
 * sees the connection end as it always did.
 *
 * Names: a tag is [A-Za-z0-9_.-] (share-tag.h) and a worker's fd name
 * [A-Za-z0-9-] (worker-fd-store.h), so "<tag>.<name>" is printable ASCII
 * without ':' and far below systemd's 255 characters; it is split at its
 * last '.'.  Everything the unit's store hands back is checked: a name that
 * does not split into a valid tag and a valid worker fd name is closed and
 * logged, and so are the fds of a tag no share has.
 *
 * The fds taken at start are removed from the unit's store at once: from
 * then on they are the workers' (which change them as frontends come and
 * go), and only a restart puts the current ones back.  A service that
 * crashes therefore leaves no stale fds behind; its workers go on as
 * orphans (worker-orphans.h), as before. */
#pragma once

#include <glib.h>

#include "worker-fd-store.h"

G_BEGIN_DECLS

/* Once, early in main(): takes the fds systemd passed (LISTEN_FDS, which
 * it unsets) and empties the unit's store of them. */
void sluice_service_fd_store_init(void);
/* What init does with the fds: FIRST_FD … FIRST_FD+N-1 named NAMES (as
 * systemd names them), each consumed.  For the tests. */
void sluice_service_fd_store_take(int first_fd, int n, char **names);
/* Closes every fd taken and not given (the tests, between cases). */
void sluice_service_fd_store_reset(void);
/* Whether there is a unit store to push to ($NOTIFY_SOCKET is set). */
gboolean sluice_service_fd_store_available(void);
/* Whether fds for TAG were taken at start and not yet given to a worker. */
gboolean sluice_service_fd_store_has(const char *tag);
/* Moves the fds taken for TAG into STORE (a worker's, before its first
 * launch); nothing when there are none. */
void sluice_service_fd_store_give(const char *tag, SluiceWorkerFdStore *store);
/* Closes (and logs) the fds still kept for TAG (its worker never came:
 * nothing will serve them). */
void sluice_service_fd_store_drop(const char *tag);
/* Closes (and logs) the fds of every tag for which KNOWN says no share
 * exists. */
void sluice_service_fd_store_drop_unknown(gboolean (*known)(const char *tag, gpointer data),
                                          gpointer data);
/* Pushes every fd of STORE into the unit's store as "<tag>.<name>".  An
 * error when one could not be sent (the unit's store then holds part of
 * the share's fds: the next worker finds its state torn and starts
 * fresh). */
gboolean sluice_service_fd_store_push(const char *tag, SluiceWorkerFdStore *store, GError **error);

G_END_DECLS
