/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slot-table.h — numbers the guest holds -> objects, with generations: the
 * one table under the inode and handle tables (inode.h, handle.h).
 *
 * A number is a slot index in its low 32 bits and the slot's generation in
 * its high 32 bits, so a stale or forged number finds nothing instead of
 * memory.  Readers (slot_find()) walk the table without its lock; writers
 * (slot_alloc(), slot_free()) and the owner's own bookkeeping hold it.
 *
 * The slots live in chunks that are allocated once and never move while the
 * table lives: chunk 0 holds slots [0, SLOT_CHUNK0), chunk k >= 1 holds
 * [SLOT_CHUNK0 << (k - 1), SLOT_CHUNK0 << k).  A chunk pointer is published
 * (release) before `next` moves past its first slot, so a reader that sees
 * idx < next (acquire) sees the chunk.
 *
 * Slots are counted in units of one page (SLOTS_PER_UNIT): a unit whose
 * slots are all free is given back (stable_release()), except one kept so
 * that a table going up and down across a unit's edge does not fault and
 * madvise on every lookup.  A released slot reads item NULL, generation 0.
 * So generations cannot live in the slots alone: every allocation takes the
 * next value of a table-wide counter, and a stale number matches a later
 * object only after 2^32 allocations.  Slot 1 alone always has generation 0,
 * so that its number is 1 (the root's nodeid).  The slot freed last is taken
 * again first; otherwise a free slot is found lowest first (a bit per unit
 * that may have one, a hint per unit), which packs the table into its low
 * units and lets the high ones empty out.
 *
 * Objects in a slot table carry an atomic reference count: the table's own
 * reference (while the guest holds the number) plus one per holder.  A
 * lock-free reader takes one with slot_ref_if_live() and then checks that the
 * object still carries the number it asked for: the slot may have been freed
 * and the object's memory reused (type-stable) meanwhile.  Whoever drops the
 * count to 0 unlinks the object under the lock and destroys it outside it
 * (slot_table_gone()). */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stable-memory.h"

#define SLOT_MAX (1u << 30)
#define SLOT_CHUNK0 1024u
#define SLOT_CHUNKS 21          /* SLOT_CHUNK0 << 20 == SLOT_MAX */
#define SLOT_UNIT_NONE UINT32_MAX

struct slot {
        _Atomic(void *) item;
        _Atomic uint32_t gen;
};

#define SLOTS_PER_UNIT (STABLE_UNIT_BYTES / (uint32_t)sizeof(struct slot))
_Static_assert(SLOT_CHUNK0 % SLOTS_PER_UNIT == 0, "a unit never straddles two chunks");

struct slot_unit {
        uint16_t used;          /* slots in use */
        uint16_t hint;          /* no free slot below this one (in the unit) */
};

struct slot_table {
        /* The table's lock: slot_alloc()/slot_free() and the owner's own
         * bookkeeping happen under it. */
        pthread_mutex_t mutex;
        _Atomic(struct slot *) chunks[SLOT_CHUNKS];
        _Atomic uint32_t next;  /* first never-used slot */
        /* Under the lock only. */
        uint32_t first;         /* the lowest slot ever handed out */
        uint32_t gen;           /* the last generation handed out */
        size_t used;            /* slots holding an object */
        struct slot_unit *units;
        uint64_t *open;         /* bit u: unit u may have a free slot below next */
        uint32_t units_cap;     /* units and open have room for this many units */
        uint32_t open_hint;     /* no bit set in the words of `open` below this one */
        uint32_t kept;          /* an empty unit left in memory, or SLOT_UNIT_NONE */
        uint32_t recent;        /* the slot freed last (0: none), taken first if still free */
};

/* An empty table whose first number is `first` (>= 1: 0 is never a number). */
void slot_table_init(struct slot_table *st, uint32_t first);
/* Unmaps the slots; the objects in them are the owner's to free first. */
void slot_table_fini(struct slot_table *st);

static inline void slot_table_lock(struct slot_table *st)
{
        pthread_mutex_lock(&st->mutex);
}

static inline void slot_table_unlock(struct slot_table *st)
{
        pthread_mutex_unlock(&st->mutex);
}

/* Under the lock: puts item in a free slot and returns its index, or 0 when
 * the table is full or out of memory.  Its number is slot_number(). */
uint32_t slot_alloc(struct slot_table *st, void *item);
/* Under the lock, before readers exist (a restore, fs-session.h): puts item
 * in slot idx with generation gen, so that its number is what a previous
 * process handed out.  false when idx is taken, out of range or out of
 * memory.  Generations handed out later are above every placed one.  Call
 * slot_table_settle() once every item is placed. */
bool slot_place(struct slot_table *st, uint32_t idx, uint32_t gen, void *item);
void slot_table_settle(struct slot_table *st);
/* Under the lock: the slot is free from now on (readers see item NULL). */
void slot_free(struct slot_table *st, uint32_t idx);

static inline unsigned slot_chunk(uint32_t idx, uint32_t *ret_base)
{
        unsigned k;

        if (idx < SLOT_CHUNK0) {
                *ret_base = 0;
                return 0;
        }
        k = 32 - (unsigned)__builtin_clz(idx / SLOT_CHUNK0);
        *ret_base = SLOT_CHUNK0 << (k - 1);
        return k;
}

/* idx must be below next (readers) or be `next` with its chunk ensured (writers). */
static inline struct slot *slot_at(const struct slot_table *st, uint32_t idx)
{
        uint32_t base;
        unsigned k = slot_chunk(idx, &base);

        return &atomic_load_explicit(&st->chunks[k], memory_order_acquire)[idx - base];
}

/* The first never-used slot: every object is below it. */
static inline uint32_t slot_next(const struct slot_table *st)
{
        return atomic_load_explicit(&st->next, memory_order_acquire);
}

/* The object in slot idx (< slot_next()), NULL when free. */
static inline void *slot_item(const struct slot_table *st, uint32_t idx)
{
        return atomic_load_explicit(&slot_at(st, idx)->item, memory_order_acquire);
}

/* The number of the object in slot idx: its generation and index. */
static inline uint64_t slot_number(const struct slot_table *st, uint32_t idx)
{
        return ((uint64_t)atomic_load_explicit(&slot_at(st, idx)->gen, memory_order_relaxed) << 32) | idx;
}

/* Without the lock: the object in number's slot, unreferenced.  The caller
 * must take a reference with slot_ref_if_live() and then check that the
 * object still carries `number`: the slot may be freed and reused meanwhile. */
static inline void *slot_find(const struct slot_table *st, uint64_t number)
{
        uint32_t idx = (uint32_t)number, base;
        struct slot *chunk;
        unsigned k;

        /* idx < next also bounds idx below SLOT_MAX, so k < SLOT_CHUNKS; the
         * chunk may still be missing (a table that starts at slot 2). */
        if (idx == 0 || idx >= slot_next(st))
                return NULL;
        k = slot_chunk(idx, &base);
        chunk = atomic_load_explicit(&st->chunks[k], memory_order_acquire);
        if (!chunk || atomic_load_explicit(&chunk[idx - base].gen, memory_order_relaxed) != (uint32_t)(number >> 32))
                return NULL;
        return atomic_load_explicit(&chunk[idx - base].item, memory_order_acquire);
}

/* Takes a reference unless refs is 0 (the object is dying or spare: it must
 * not come back).  Acquire on success: the holder sees the object's fields as
 * whoever published it (release) wrote them. */
static inline bool slot_ref_if_live(_Atomic uint32_t *refs)
{
        uint32_t n = atomic_load_explicit(refs, memory_order_relaxed);

        while (n != 0)
                if (atomic_compare_exchange_weak_explicit(refs, &n, n + 1, memory_order_acquire,
                                                          memory_order_relaxed))
                        return true;
        return false;
}

/* Drops a reference; true when it was the last (the caller unlinks and
 * destroys).  Release so that our use of the object happens before its
 * destruction; acquire so that the last one sees everyone else's.  (acq_rel
 * on every put rather than release + an acquire fence on the last: the same
 * code on x86, and ThreadSanitizer understands it.) */
static inline bool slot_unref(_Atomic uint32_t *refs)
{
        return atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel) == 1;
}

/* What a table built on a slot table does with its objects, for the calls below. */
struct slot_ops {
        /* Under the lock: drops the table's own reference to item (FORGET of
         * every lookup, RELEASE); true when that was the last reference and
         * item is unlinked: it goes to destroy. */
        bool (*drop_locked)(void *owner, void *item);
        /* Under the lock: item's last reference went; frees its slot and
         * whatever else leads to it. */
        void (*unlink_locked)(void *owner, void *item);
        /* Without the lock: closes what an unlinked item holds. */
        void (*destroy)(void *owner, void *item);
        /* offsetof() the item's `void *dead_next`: the list of items to destroy. */
        size_t dead_next;
};

/* The last reference to item went: unlinks it under the lock, destroys it
 * outside the lock. */
void slot_table_gone(struct slot_table *st, void *item, const struct slot_ops *ops, void *owner);
/* Drops the table's reference to every object (DESTROY, a session reset,
 * freeing the table) and destroys those it was the last of, outside the lock. */
void slot_table_drop_all(struct slot_table *st, const struct slot_ops *ops, void *owner);
/* Objects in the table (stats and tests). */
size_t slot_table_count(struct slot_table *st);
