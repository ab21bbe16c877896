/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slot-table.c — numbers -> objects, with generations (see slot-table.h). */
#include "slot-table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The slot whose generation is always 0: number 1, the root inode's nodeid. */
#define SLOT_ROOT 1u

static uint32_t slot_chunk_size(unsigned k)
{
        return k == 0 ? SLOT_CHUNK0 : SLOT_CHUNK0 << (k - 1);
}

void slot_table_init(struct slot_table *st, uint32_t first)
{
        memset(st, 0, sizeof(*st));
        pthread_mutex_init(&st->mutex, NULL);
        atomic_init(&st->next, first);  /* 0 is never a valid number */
        st->first = first;
        st->kept = SLOT_UNIT_NONE;
}

void slot_table_fini(struct slot_table *st)
{
        for (unsigned k = 0; k < SLOT_CHUNKS; k++) {
                struct slot *c = atomic_load_explicit(&st->chunks[k], memory_order_relaxed);

                if (c)
                        munmap(c, slot_chunk_size(k) * sizeof(*c));
        }
        free(st->units);
        free(st->open);
        pthread_mutex_destroy(&st->mutex);
}

/* Under the lock: room in units and open for unit u. */
static bool slot_units_reserve(struct slot_table *st, uint32_t u)
{
        uint32_t cap = st->units_cap ? st->units_cap : 64, old = st->units_cap;
        struct slot_unit *units;
        uint64_t *open;

        if (u < old)
                return true;
        while (cap <= u)
                cap *= 2;
        units = realloc(st->units, cap * sizeof(*units));
        if (!units)
                return false;
        st->units = units;
        open = realloc(st->open, cap / 64 * sizeof(*open));
        if (!open)
                return false;
        st->open = open;
        memset(units + old, 0, (cap - old) * sizeof(*units));
        memset(open + old / 64, 0, (cap - old) / 64 * sizeof(*open));
        st->units_cap = cap;
        return true;
}

/* Under the lock: the lowest free slot below next (its slot in *ret), or 0. */
static uint32_t slot_find_free(struct slot_table *st, uint32_t next, struct slot **ret)
{
        uint32_t words = (next + SLOTS_PER_UNIT * 64 - 1) / (SLOTS_PER_UNIT * 64);

        if (words > st->units_cap / 64)
                words = st->units_cap / 64;   /* none yet */
        for (uint32_t w = st->open_hint; w < words; w++) {
                while (st->open[w]) {
                        uint32_t u = w * 64 + (uint32_t)__builtin_ctzll(st->open[w]);
                        uint32_t base = u * SLOTS_PER_UNIT;
                        uint32_t end = next - base < SLOTS_PER_UNIT ? next - base : SLOTS_PER_UNIT;
                        uint32_t i = st->units[u].hint;
                        /* A unit lies in one chunk. */
                        struct slot *us = slot_at(st, base);

                        if (base + i < st->first)
                                i = st->first - base;
                        for (; i < end; i++) {
                                if (!atomic_load_explicit(&us[i].item, memory_order_relaxed)) {
                                        st->units[u].hint = (uint16_t)(i + 1);
                                        st->open_hint = w;
                                        *ret = &us[i];
                                        return base + i;
                                }
                        }
                        st->units[u].hint = SLOTS_PER_UNIT;
                        st->open[w] &= ~(1ull << (u % 64));
                }
        }
        st->open_hint = words;
        return 0;
}

uint32_t slot_alloc(struct slot_table *st, void *item)
{
        uint32_t next = atomic_load_explicit(&st->next, memory_order_relaxed);
        struct slot *s = NULL;
        uint32_t idx = st->recent, u;

        /* A table that frees one and takes one (a LOOKUP of a new file, its
         * FORGET) reuses that slot without a search.  Still free iff its item
         * is NULL: a search may have taken it since. */
        st->recent = 0;
        if (idx && !atomic_load_explicit(&(s = slot_at(st, idx))->item, memory_order_relaxed)) {
                /* That slot, then. */
        } else {
                idx = slot_find_free(st, next, &s);
        }
        if (!idx) {
                uint32_t base;
                unsigned k;

                idx = next;
                if (idx >= SLOT_MAX || !slot_units_reserve(st, idx / SLOTS_PER_UNIT))
                        return 0;
                k = slot_chunk(idx, &base);
                if (!atomic_load_explicit(&st->chunks[k], memory_order_relaxed)) {
                        struct slot *c = stable_map_zeroed(slot_chunk_size(k) * sizeof(*c));

                        if (!c)
                                return 0;
                        /* Published before next passes idx (below). */
                        atomic_store_explicit(&st->chunks[k], c, memory_order_release);
                }
                s = slot_at(st, idx);
        }
        /* Generation 0 is the root's (nodeid 1) and no one else's. */
        if (idx != SLOT_ROOT && ++st->gen == 0)
                st->gen = 1;
        atomic_store_explicit(&s->gen, idx == SLOT_ROOT ? 0 : st->gen, memory_order_relaxed);
        atomic_store_explicit(&s->item, item, memory_order_release);
        if (idx == next)
                atomic_store_explicit(&st->next, idx + 1, memory_order_release);
        u = idx / SLOTS_PER_UNIT;
        if (st->units[u].used++ == 0 && st->kept == u)
                st->kept = SLOT_UNIT_NONE;
        st->used++;
        return idx;
}

void slot_free(struct slot_table *st, uint32_t idx)
{
        uint32_t u = idx / SLOTS_PER_UNIT, in = idx % SLOTS_PER_UNIT;

        atomic_store_explicit(&slot_at(st, idx)->item, NULL, memory_order_release);
        st->used--;
        st->recent = idx;
        if (in < st->units[u].hint)
                st->units[u].hint = (uint16_t)in;
        st->open[u / 64] |= 1ull << (u % 64);
        if (u / 64 < st->open_hint)
                st->open_hint = u / 64;
        if (--st->units[u].used > 0)
                return;
        if (st->kept == SLOT_UNIT_NONE) {
                st->kept = u;
        } else {
                /* Not one live slot: readers of it see item NULL, gen 0. */
                stable_release(slot_at(st, u * SLOTS_PER_UNIT), STABLE_UNIT_BYTES);
        }
}

bool slot_place(struct slot_table *st, uint32_t idx, uint32_t gen, void *item)
{
        uint32_t next = atomic_load_explicit(&st->next, memory_order_relaxed), u, base;
        unsigned last;
        struct slot *s;

        if (idx < st->first || idx >= SLOT_MAX || (idx == SLOT_ROOT) != (gen == 0) ||
            !slot_units_reserve(st, idx / SLOTS_PER_UNIT))
                return false;
        /* Every chunk up to idx's: a later search walks the units below next. */
        last = slot_chunk(idx, &base);
        for (unsigned k = 0; k <= last; k++) {
                if (!atomic_load_explicit(&st->chunks[k], memory_order_relaxed)) {
                        struct slot *c = stable_map_zeroed(slot_chunk_size(k) * sizeof(*c));

                        if (!c)
                                return false;
                        atomic_store_explicit(&st->chunks[k], c, memory_order_release);
                }
        }
        s = slot_at(st, idx);
        if (atomic_load_explicit(&s->item, memory_order_relaxed))
                return false;
        if (gen > st->gen)
                st->gen = gen;
        atomic_store_explicit(&s->gen, gen, memory_order_relaxed);
        atomic_store_explicit(&s->item, item, memory_order_release);
        if (idx >= next)
                atomic_store_explicit(&st->next, idx + 1, memory_order_release);
        u = idx / SLOTS_PER_UNIT;
        if (st->units[u].used++ == 0 && st->kept == u)
                st->kept = SLOT_UNIT_NONE;
        st->used++;
        return true;
}

void slot_table_settle(struct slot_table *st)
{
        uint32_t units = (slot_next(st) + SLOTS_PER_UNIT - 1) / SLOTS_PER_UNIT;

        /* Any unit below next may have a free slot: the search finds out
         * and clears the bits of full ones. */
        for (uint32_t u = 0; u < units && u < st->units_cap; u++) {
                st->units[u].hint = 0;
                st->open[u / 64] |= 1ull << (u % 64);
        }
        st->open_hint = 0;
        st->recent = 0;
}

void slot_table_gone(struct slot_table *st, void *item, const struct slot_ops *ops, void *owner)
{
        slot_table_lock(st);
        ops->unlink_locked(owner, item);
        slot_table_unlock(st);
        ops->destroy(owner, item);
}

static void **dead_next(void *item, const struct slot_ops *ops)
{
        return (void **)((char *)item + ops->dead_next);
}

void slot_table_drop_all(struct slot_table *st, const struct slot_ops *ops, void *owner)
{
        void *dead = NULL;
        uint32_t next;

        slot_table_lock(st);
        next = slot_next(st);
        for (uint32_t i = st->first; i < next; i++) {
                void *item = slot_item(st, i);

                if (item && ops->drop_locked(owner, item)) {
                        *dead_next(item, ops) = dead;
                        dead = item;
                }
        }
        slot_table_unlock(st);
        /* Closing may take long (the last reference to a dentry): not under the lock. */
        while (dead) {
                void *n = *dead_next(dead, ops);

                ops->destroy(owner, dead);
                dead = n;
        }
}

size_t slot_table_count(struct slot_table *st)
{
        size_t n;

        slot_table_lock(st);
        n = st->used;
        slot_table_unlock(st);
        return n;
}
