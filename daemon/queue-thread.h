/* SPDX-License-Identifier: GPL-2.0-or-later */
/* queue-thread.h — one thread per virtqueue (hiprio queue 0 + request queues).
 *
 * Each thread owns an fs_worker and serves its ring inline: wait for a kick,
 * drain the ring through fs_process(), pushing each reply as it is ready and
 * notifying once per drain (earlier before a request that may be slow); it
 * is the only thread that writes its used ring, so the per-request path
 * takes no lock (a deferred request's completion on another thread is handed
 * to it, or pushed directly while it is stopped); then busy-poll the
 * avail ring with guest kicks suppressed, so that a guest doing synchronous
 * I/O gets its next request picked up without a vm-exit or a wake-up (a
 * "sync queue": one request in flight at a time).  The polling window adapts between 0 and
 * --poll-us µs to the guest's real pauses (queue-thread.c: adapt_window());
 * the hiprio queue (FORGETs only) is never polled, and no queue spins while
 * the host has no spare CPU (cpu-spare.h: more tasks running than CPUs, or
 * the spinner preempted), where spinning would take the CPU of the very
 * vCPU or main-loop thread that produces the next request.  Notifications are
 * re-enabled and the ring re-checked before sleeping: no lost wake-up.
 *
 * The vhost-user layer starts a thread when its ring is ready (kick fd,
 * addresses, enabled) and stops it (joined) on GET_VRING_BASE, a memory table
 * change, reset or disconnect.  The thread object lives across stop/start. */
#pragma once

#include <stdbool.h>

#include "fs-session.h"
#include "stats.h"
#include "virtqueue.h"

struct queue_thread;

int qt_new(struct fs_session *session, struct vq *vq, unsigned index, unsigned poll_us,
           struct stats *stats, struct queue_thread **ret);
/* Stops the thread if needed and frees it. */
void qt_free(struct queue_thread *qt);
/* Starts serving with kick_fd (not owned; must stay open until qt_stop()). */
int qt_start(struct queue_thread *qt, int kick_fd);
/* Before qt_start() of a resumed ring, on the caller's thread: answers the
 * previous worker's in-flight heads (vq_resume()), each chain walked again
 * from the descriptor table — run again through fs_process_again() when
 * replay and the FUSE layer finds it safe, else EIO — and counts them in
 * *n_replayed / *n_failed; then interrupts the guest once whatever it asked
 * (a reply the dead worker pushed may never have been signalled). */
void qt_resume_in_flight(struct queue_thread *qt, const uint16_t *heads, unsigned n,
                         bool replay, unsigned *n_replayed, unsigned *n_failed);
/* Stops and joins the thread; the request it is processing completes first. */
void qt_stop(struct queue_thread *qt);
bool qt_running(struct queue_thread *qt);
/* The ring is being torn down (GET_VRING_BASE for good, reset): completions
 * of deferred requests popped before now are dropped instead of pushed. */
void qt_forget_deferred(struct queue_thread *qt);
