/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fd-clock.h — which inodes keep their descriptor: the inode table's clock.
 *
 * The non-root inodes holding an fd form a ring through their `clock` links
 * (slot indexes of the inode table's slot table).  Beyond the cap, the hand
 * clears the second chance (`used`) of recently used inodes and drops the fd
 * of the first it finds unused and unheld; a later request reopens it by name
 * (inode-fd.c).  A dropped inode keeps what tells its file from a later
 * one that reuses the inode number: its birth time, or a hash of its file
 * handle.
 *
 * Internal to the inode table (inode.c, inode-fd.c): every call but
 * fd_clock_max_for(), fd_handle_hash() and the fd_batch ones runs under the
 * table's lock. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inode-types.h"
#include "slot-table.h"

/* Set in refs, under the table lock, while an inode's descriptor is being
 * dropped: a lock-free inode_get() that sees it waits for the lock, so no
 * request can start using an fd that is about to be closed. */
#define REFS_DROPPING (1u << 31)

struct fd_clock {
        const struct slot_table *slots;   /* the inode table's: ring links are its indexes */
        uint32_t hand;           /* slot index the hand is on; 0: the ring is empty */
        size_t n_fds;            /* inodes in the ring */
        size_t max_fds;          /* 0: no cap */
        _Atomic uint64_t drops, reopens;
};

void fd_clock_init(struct fd_clock *c, const struct slot_table *slots);

/* Whether the inode is in the ring: it holds an fd and is not the root. */
static inline bool fd_clock_holds(const struct inode *inode)
{
        return inode->nodeid != INODE_ROOT_ID && atomic_load_explicit(&inode->fd, memory_order_relaxed) >= 0;
}
/* Puts the inode (holding an fd now) behind the hand: the last it comes to. */
void fd_clock_insert(struct fd_clock *c, struct inode *inode);
void fd_clock_remove(struct fd_clock *c, struct inode *inode);

/* Descriptors to close once the lock is released (close() of the last
 * reference to a dentry may do real work). */
struct fd_batch {
        int fds[8];
        unsigned n;
};
void fd_batch_add(struct fd_batch *b, int fd);
void fd_batch_close(struct fd_batch *b);

/* Whether the ring is over the cap. */
static inline bool fd_clock_over(const struct fd_clock *c)
{
        return c->max_fds && c->n_fds > c->max_fds;
}
/* Brings the ring back under the cap (a bounded number of steps); the
 * dropped fds go into b. */
void fd_clock_trim(struct fd_clock *c, struct fd_batch *b);
/* The cap for a requested max: 0 takes it from RLIMIT_NOFILE (0 again when
 * that is unlimited: no cap), and a cap is at least 2.  Without the lock. */
size_t fd_clock_max_for(size_t max);

/* A hash of the file handle of fd (it carries the inode's generation where
 * the file system has one, unlike st_ino), or 0 when the file system gives
 * none.  Without the lock. */
uint64_t fd_handle_hash(int fd);
