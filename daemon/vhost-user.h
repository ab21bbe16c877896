/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vhost-user.h — the vhost-user protocol, device (back-end) side, for one
 * connected frontend (QEMU's vhost-user-fs-pci, or the test VMM).
 *
 * The main loop calls vu_dev_dispatch() whenever the connection is readable;
 * each call reads and handles one message.  Every field of every message is
 * checked: a request that merely fails is nacked (REPLY_ACK) and the device
 * carries on; a message that breaks the protocol (size, ring index, an fd
 * that is not an eventfd…) breaks the device — logged once, every ring
 * stopped — and vu_dev_dispatch() fails, so the caller drops the connection.
 * Rings are served by queue threads (queue-thread.h) that this module starts
 * and stops.
 *
 * System calls the checks of frontend fds use (for the sandbox's
 * allow-list): fstat (newfstatat), readlinkat of /proc/self/fd/N (no open:
 * Landlock does not restrict it), fcntl F_GETFL/F_SETFL, and on a kick fd
 * one write and one read (telling a semaphore eventfd apart); guest-memory.h
 * lists the memory ones. */
#pragma once

#include <stdbool.h>

#include "fs-session.h"
#include "options.h"
#include "stats.h"

struct vu_dev;

/* Takes ownership of conn_fd. */
int vu_dev_new(int conn_fd, const struct fs_options *opts, struct fs_session *session,
               struct stats *stats, struct vu_dev **ret);
int vu_dev_fd(struct vu_dev *d);
/* Reads and handles one message.  0 on success; -ECONNRESET when the peer
 * closed the connection; another -errno when the message was malformed or the
 * socket failed (logged).  Either way a negative return means: drop it. */
int vu_dev_dispatch(struct vu_dev *d);
/* Stops every queue thread, resets the FUSE session (so the next frontend
 * starts from FUSE INIT), unmaps guest memory, closes every fd. */
void vu_dev_free(struct vu_dev *d);

struct rstate;

/* --resume: keeps the device's configuration and ring positions in rs from
 * now on (a new device: before its first message). */
void vu_dev_set_state(struct vu_dev *d, struct rstate *rs);
/* Takes up the device a previous worker served, from the stored state rs
 * (rstate_open()ed) and the fds it names (fd-store.h): the same memory, rings
 * at the stored positions, the in-flight heads reconciled with the guest's
 * rings (*ret_in_flight).  Nothing runs yet.  -EBADMSG with why when the
 * state and the store or the rings disagree: the caller frees the device and
 * starts fresh.  rs stays the caller's. */
int vu_dev_resume(struct vu_dev *d, struct rstate *rs, char *why, size_t why_size,
                  unsigned *ret_in_flight);
/* After the sandbox is on: answers the in-flight requests (run again when
 * replay and the FUSE layer finds it safe, else EIO; counted), signals every
 * ring once and starts the queue threads. */
void vu_dev_start_resumed(struct vu_dev *d, bool replay, unsigned *ret_replayed,
                          unsigned *ret_failed);
/* SIGTERM with --resume: stops the rings after the requests they are running
 * (a waiting SETLKW answered EINTR), brings the state up to date with
 * nothing in flight and marks it handed over; vu_dev_free() then keeps
 * every stored fd and the session's tables. */
void vu_dev_hand_over(struct vu_dev *d);

/* Virtio and vhost-user protocol features we offer (also used by tests). */
uint64_t vu_device_features(void);
uint64_t vu_protocol_features(const struct fs_options *opts);
