/* SPDX-License-Identifier: GPL-2.0-or-later */
/* socket-remover.h — removing a sealed root worker's socket at its exit.
 *
 * A root worker sealed in its mount namespace (mount-namespace.h) may hold
 * no fd of the socket's folder: that folder may hold other files (libvirt's
 * monitor sockets), and the sealed worker's sandbox lets a path-based call
 * change the metadata of whatever a folder it holds leads to.  So before the
 * sandbox, the folder's fd goes to a helper process forked for the purpose:
 * it keeps that fd and one end of a socketpair, closes every other fd, and
 * waits.  When the worker asks (its exit) or goes away (a crash: end of
 * file), the helper removes the socket if the name still holds the one the
 * worker bound (dev, ino: a new worker may own the path by now), answers,
 * and exits.  Its only input is one byte: it removes the worker's own
 * socket or nothing.
 *
 * Main thread only, before any other thread exists (fork). */
#pragma once

#include <sys/types.h>

/* Forks the helper for the socket `name` in the folder `dir_fd` (bound by
 * us as dev/ino).  The caller closes dir_fd afterwards, success or not.
 * Returns our end of the socketpair, or -errno (logged). */
int sockrm_start(int dir_fd, const char *name, dev_t dev, ino_t ino);

/* Asks the helper on `fd` to remove the socket and waits for its answer
 * (the helper works alone: no lock, no deadline needed); closes fd. */
void sockrm_remove(int fd);
