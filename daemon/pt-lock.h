/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-lock.h — the FUSE layer's locks (pt-lock.c): GETLK, SETLK, SETLKW, the
 * guest's lock owners on each inode, and requests that wait for a lock or a
 * lease without holding up their queue.  Private to the FUSE layer, like
 * pt-internal.h, which includes it.
 *
 * A guest lock owner's locks live on an open file description of its own
 * (OFD locks), hung on the inode (struct inode's private_data, freed by
 * pt_lock_owners_free(), the inode table's destroy function).  Everything the
 * guest can make the kernel keep is bounded below: owners per inode, records
 * per owner and per session, waiting requests. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct freq;
struct inode;
struct pt_fs;
struct pt_lock_waiter;

/* Guest lock owners per inode at most: each holds an fd, and the guest
 * chooses the owner numbers (beyond it, new owners' locks fail with ENOLCK). */
#define PT_LOCK_OWNERS_MAX 1024
/* The kernel's records of one guest lock owner's POSIX locks on one file,
 * and of the whole session, at most: a SETLK/SETLKW (an unlock that splits a
 * range too) that would make more fails with ENOLCK. */
#define LOCK_RECORDS_PER_OWNER   128
#define LOCK_RECORDS_PER_SESSION 4096

/* The SETLKW requests waiting for a contended lock, each in its own thread. */
struct pt_lock_waiters {
        pthread_mutex_t mutex;
        pthread_cond_t cond;
        unsigned n;                   /* waiter threads still running */
        bool cancel;                  /* session reset: stop without a reply */
        struct pt_lock_waiter *list;  /* for INTERRUPT and ring stops */
};

int pt_getlk(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_setlk(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_setlkw(struct pt_fs *fs, struct freq *r, struct inode *i);
/* After a restart (fs_session_state_restore()): the POSIX and flock() locks
 * the previous worker held went with it (the kernel drops a process's
 * locks when it dies), and the guest still believes it holds them.  What a
 * lock request through a handle that had locks before gets:
 *  - F_UNLCK (SETLK, flock(LOCK_UN)) succeeds, as unlocking a lock one does
 *    not hold always does;
 *  - GETLK answers truthfully about the host as it is now;
 *  - the first SETLK/SETLKW taking a lock through it answers ENOLCK, logged
 *    (the application learns its earlier locks are not to be trusted); the
 *    next ones are served as usual.
 * Handles opened after the restart are not concerned. */

/* The owner closed its file (FLUSH): closing its fd drops its POSIX locks. */
void pt_lock_owner_release(struct inode *inode, uint64_t owner);
/* inode_destroy_fn of the inode table: closes the inode's lock owners' fds. */
void pt_lock_owners_free(struct inode *inode);

void pt_lock_waiters_init(struct pt_lock_waiters *lw);
void pt_lock_waiters_fini(struct pt_lock_waiters *lw);
/* INTERRUPT: a request (SETLKW, leased open) still waiting for `unique` ends with EINTR. */
void pt_lock_interrupt(struct pt_fs *fs, uint64_t unique);
/* Finishes with EINTR (they reply) every waiting request from queue
 * `queue_index` (< 0: all queues) and returns when none of them is left. */
void pt_lock_finish_waiters(struct pt_fs *fs, int queue_index);
/* Stops every waiting request (they reply nothing) and waits for them. */
void pt_lock_cancel_waiters(struct pt_fs *fs);
/* A request that has to wait for a lock or a lease (an open behind a host
 * lease being broken) without holding up its queue: pt_lock_wait_defer()
 * defers r (freq_defer()) to a thread of its own, which calls try(fs, d,
 * arg) on the deferred copy d with a 1 → 20 ms backoff while it returns
 * -EAGAIN.  Any other result ends the wait: 0 after try replied on d
 * (pt_reply*(); without a reply, an empty success is sent), -errno to reply
 * that error.  INTERRUPT and a ring stop end it with EINTR, a session reset
 * drops it without a reply (the three calls above).  done(fs, arg) runs
 * once in every case, before the reply leaves (and before this returns an
 * error).  The thread starts with the caller's credentials (per thread:
 * credentials.h).  Returns 0 (deferred: the handler returns 0), -EAGAIN when
 * too many wait already (256), -ENOMEM, -EDEADLK. */
typedef int (*pt_lock_try_fn)(struct pt_fs *fs, struct freq *d, void *arg);
typedef void (*pt_lock_done_fn)(struct pt_fs *fs, void *arg);
int pt_lock_wait_defer(struct pt_fs *fs, struct freq *r, pt_lock_try_fn try, pt_lock_done_fn done,
                       void *arg);
