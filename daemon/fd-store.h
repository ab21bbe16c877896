/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fd-store.h — the worker's half of the keeper's fd store (systemd's
 * FileDescriptorStore, or sluice-service speaking the same protocol).
 *
 * At start (--resume only) the fds the keeper passed as LISTEN_FDS /
 * LISTEN_FDNAMES are read once; main.c and the transport take those they use
 * by name, and fdstore_close_untaken() closes the rest.  While serving, every
 * fd a successor needs is stored under its name (FDSTORE=1, FDNAME=) to
 * $NOTIFY_SOCKET, and removed (FDSTOREREMOVE=1) when it is gone for good.
 * Names: "listen", "conn", "state", "tables", "mem-<slot>", "kick-<ring>",
 * "call-<ring>", "err-<ring>" ([A-Za-z0-9-], at most 32 characters).
 *
 * Without --resume (fdstore_init() not called, or called with false)
 * nothing is taken, stored or removed: every call is a no-op returning
 * -ENOENT (take) or 0 (store, remove).
 * Main thread only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define FDSTORE_NAME_MAX 32

/* Reads LISTEN_FDS/LISTEN_FDNAMES (and unsets them) when enabled.  Returns
 * how many fds were passed, or -errno (logged). */
int fdstore_init(bool enabled);
bool fdstore_enabled(void);
/* The passed fd of this name (now the caller's), or -ENOENT. */
int fdstore_take(const char *name);
/* Whether a passed fd of this name is still there to take. */
bool fdstore_has(const char *name);
/* Closes every passed fd nobody took (after the start-up). */
void fdstore_close_untaken(void);
/* A stored state that cannot be trusted: removes every passed name but
 * `keep` from the store (taken or not; what the caller took it closes
 * itself) and closes the untaken ones, so that the frontend sees the
 * connection end once the last copy is gone. */
void fdstore_drop_all_but(const char *keep);
/* Stores fd under name (the keeper keeps its own copy; ours stays open).
 * 0 or -errno (logged); 0 without --resume or $NOTIFY_SOCKET. */
int fdstore_store(const char *name, int fd);
/* Removes every stored fd of this name. */
int fdstore_remove(const char *name);
/* Removes, then stores (a name that gets a new fd). */
int fdstore_replace(const char *name, int fd);
/* Is name one the protocol allows? */
bool fdstore_name_valid(const char *name);
/* "<prefix>-<n>" into buf. */
void fdstore_name(char *buf, size_t size, const char *prefix, unsigned n);
