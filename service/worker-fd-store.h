/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-fd-store.h — the keeper of one worker's file descriptor store.
 *
 * A worker run with --resume keeps every fd it must not lose in a crash (the
 * vhost-user connection, guest memory, ring eventfds, its state memfds) in a
 * store outside itself, with systemd's protocol: datagrams "FDSTORE=1\n
 * FDNAME=<name>" with the fd as SCM_RIGHTS, and "FDSTOREREMOVE=1\nFDNAME=
 * <name>", sent to $NOTIFY_SOCKET.  The next launch gets the stored fds back
 * as LISTEN_FDS/LISTEN_FDNAMES (worker.c).  The store outlives the worker
 * processes; clearing it closes the fds, which is how QEMU learns that the
 * backend is gone for good.
 *
 * The notify socket is an abstract, autobound SOCK_DGRAM socket: the worker
 * reaches it whatever its mount namespace hides (it keeps the host's network
 * namespace), the kernel picks a name nobody can take first, and since
 * anyone may send to an abstract socket every datagram is checked: the
 * sender's pid (SCM_CREDENTIALS, which the kernel vouches for) must be the
 * worker's, the name must follow the rule below, at most
 * SLUICE_WORKER_FD_STORE_MAX fds are held.  Anything else is logged and its
 * fds closed.  A datagram cannot make the service read guest memory: the
 * fds are only held and passed on.
 *
 * Names: only the protocol's (listen, conn, state, tables, mem-N, kick-N,
 * call-N, err-N; N decimal), at most 32 characters.  A store of an fd whose open file
 * description is already held (kcmp(KCMP_FILE)) is ignored, as systemd
 * does: a resumed worker may store again what it was given.  A stored fd
 * that reports POLLHUP or POLLERR (the frontend hung up while no worker
 * served it) is dropped. */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

#define SLUICE_WORKER_FD_STORE_MAX 512
#define SLUICE_WORKER_FD_NAME_MAX 32

typedef struct _SluiceWorkerFdStore SluiceWorkerFdStore;

/* tag: for the log only. */
SluiceWorkerFdStore *sluice_worker_fd_store_new(const char *tag);
/* Closes every fd and the notify socket. */
void sluice_worker_fd_store_free(SluiceWorkerFdStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceWorkerFdStore, sluice_worker_fd_store_free)

/* Binds the notify socket (once; later calls return TRUE) and watches it on
 * the thread-default main context. */
gboolean sluice_worker_fd_store_listen(SluiceWorkerFdStore *store, GError **error);
/* The value for $NOTIFY_SOCKET ("@…"), NULL before a successful listen. */
const char *sluice_worker_fd_store_get_notify_socket(SluiceWorkerFdStore *store);
/* The one process whose datagrams are accepted (the running worker); 0:
 * none (between launches every datagram is refused). */
void sluice_worker_fd_store_set_sender(SluiceWorkerFdStore *store, pid_t pid);
/* Reads every datagram already queued on the notify socket now: a worker
 * that stored an fd and then died has its store complete before the
 * relaunch. */
void sluice_worker_fd_store_drain(SluiceWorkerFdStore *store);

guint sluice_worker_fd_store_count(SluiceWorkerFdStore *store);
/* In the order they were stored (the order of LISTEN_FDNAMES).  The fd
 * stays the store's. */
void sluice_worker_fd_store_foreach(SluiceWorkerFdStore *store,
                                    void (*fn)(const char *name, int fd, gpointer data),
                                    gpointer data);
/* Whether an fd of that name is held. */
gboolean sluice_worker_fd_store_has(SluiceWorkerFdStore *store, const char *name);
/* Adds fd (consumed) under name, with the checks of a stored fd (name rule,
 * limit, dedup): a service that restarts hands its workers' stores on with
 * this.  A refused fd is closed. */
void sluice_worker_fd_store_add(SluiceWorkerFdStore *store, const char *name, int fd);
/* Closes every fd of that name. */
void sluice_worker_fd_store_remove(SluiceWorkerFdStore *store, const char *name);
/* Closes every fd whose name is not KEEP. */
void sluice_worker_fd_store_remove_all_but(SluiceWorkerFdStore *store, const char *keep);
/* Closes every fd. */
void sluice_worker_fd_store_clear(SluiceWorkerFdStore *store);

/* The name rule above (for the tests and sluice_worker_fd_store_add's callers). */
gboolean sluice_worker_fd_store_name_is_valid(const char *name);

G_END_DECLS
