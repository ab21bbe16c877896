/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode-pool.h — where struct inodes live: type-stable memory, in chunks that
 * are given back when empty.
 *
 * A struct is never unmapped while the table lives, as lock-free readers
 * (inode_get()) may still look at one that was freed.  A chunk is
 * INODE_POOL_CHUNK_BYTES of stable memory (stable-memory.h); its freed
 * structs wait on its own list for reuse; a chunk whose structs are all free
 * is released (zeros, refs 0, which inode_get() takes as dying), but for one
 * kept empty against faulting at a chunk's edge.  New structs come from the
 * oldest chunk with room (a bit per chunk), so the newer ones empty out.
 *
 * Under the inode table's lock (or before the table is shared). */
#pragma once

#include <stdint.h>

#include "inode-types.h"

struct inode_pool_chunk;

struct inode_pool {
        struct inode_pool_chunk *chunks;  /* in the order they were made */
        uint32_t *by_addr;       /* their indexes in address order (chunk_of()) */
        uint64_t *room;          /* bit i: chunk i has a free struct */
        uint32_t n, cap;
        uint32_t hint;           /* no bit set in the words of `room` below this one */
        uint32_t kept;           /* an empty chunk left in memory, or SLOT_UNIT_NONE */
};

void inode_pool_init(struct inode_pool *p);
/* Unmaps every chunk: no reader may be left. */
void inode_pool_fini(struct inode_pool *p);
/* A struct with refs 0 (not live), or NULL. */
struct inode *inode_pool_alloc(struct inode_pool *p);
/* The inode (refs 0, unlinked, closed) goes back to its chunk. */
void inode_pool_free(struct inode_pool *p, struct inode *inode);
