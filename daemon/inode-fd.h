/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode-fd.h — an inode's descriptor (inode.h): kept for a bounded number of
 * inodes, reopened by name for the others.
 *
 * The table keeps an fd for at most inode_fds_max() inodes that no request
 * or open file holds: beyond, the least recently used give theirs back
 * (a clock with a second chance, fd-clock.h), and a later request reopens
 * them by name from their parent.  So the worker's descriptors stay bounded
 * however many inodes the guest knows.  Thread-safe. */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "inode.h"

/* The inode's O_PATH fd, valid while the caller holds the inode: reopened
 * when it was dropped.  -ESTALE when its name no longer leads to the same
 * file (removed or replaced on the host), -EMFILE, -ENOMEM. */
int inode_reopen(struct inode_table *t, struct inode *inode);
static inline int inode_fd(struct inode_table *t, struct inode *inode)
{
        int fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);

        if (__builtin_expect(fd < 0, 0))
                return inode_reopen(t, inode);
        if (!atomic_load_explicit(&inode->used, memory_order_relaxed))
                atomic_store_explicit(&inode->used, true, memory_order_relaxed);
        return fd;
}
/* At most `max` descriptors for inodes kept (at least 2; 0: derived from
 * RLIMIT_NOFILE, no limit when that is unlimited). */
void inode_fds_set_max(struct inode_table *t, size_t max);
size_t inode_fds_max(struct inode_table *t);
/* Inodes holding a descriptor now, and drops and reopens so far (stats, tests). */
size_t inode_fds_count(struct inode_table *t);
void inode_fds_stats(struct inode_table *t, uint64_t *ret_drops, uint64_t *ret_reopens);
