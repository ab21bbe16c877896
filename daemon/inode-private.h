/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode-private.h — the inode table's insides, for its own files only:
 * inode.c (the table, names, lookups, FORGET) and inode-fd.c (an inode's
 * descriptor: reopened by name when the clock dropped it). */
#pragma once

#include <stdint.h>

#include "fd-clock.h"
#include "inode-pool.h"
#include "inode.h"
#include "slot-table.h"

struct inode_table {
        /* nodeid -> inode; its lock is the table's: everything below but the
         * clock's counters is written under it. */
        struct slot_table slots;
        /* The non-root inodes holding a descriptor. */
        struct fd_clock clock;
        struct inode_pool pool;  /* the inode structs */
        uint32_t *buckets;       /* (dev, ino) hash: slot index of the first inode; 0 = empty */
        uint32_t n_buckets;      /* power of two */
        inode_destroy_fn destroy_fn;
        /* Where a successor finds the table (table-state.h); NULL without --resume. */
        struct tstate *state;
};

static inline struct inode *table_inode(struct inode_table *t, uint32_t idx)
{
        return slot_item(&t->slots, idx);
}

/* Under the lock: the inode is no longer the file its name and (dev, ino)
 * lead to: its nodeid gives ESTALE, and a new lookup makes a new inode. */
void inode_mark_stale_locked(struct inode_table *t, struct inode *inode);

/* For inode-restore.c (a table rebuilt from a state, table-state.h). */
/* Under the lock: a struct for a new inode, not live yet (refs 0). */
struct inode *inode_alloc(struct inode_table *t, int fd, dev_t dev, ino_t ino, mode_t mode);
void inode_hash_insert_locked(struct inode_table *t, struct inode *inode);
/* n buckets, a power of two. */
void inode_hash_resize_locked(struct inode_table *t, uint32_t n);
/* Under the lock: `name` in `parent` is where the inode is found from now
 * on (written to the state when `record`); returns the parent it had, for
 * the caller to put outside the lock. */
struct inode *inode_set_name_locked(struct inode_table *t, struct inode *inode,
                                    struct inode *parent, const char *name, bool record);
/* Under the lock: the inode's whole record in the state. */
void inode_state_write_locked(struct inode_table *t, struct inode *inode, bool inserting);
