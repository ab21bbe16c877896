/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode-pool.c — type-stable inode structs in chunks (see inode-pool.h). */
#include "inode-pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "slot-table.h"
#include "stable-memory.h"

#define INODE_POOL_CHUNK_BYTES (64u << 10)
#define CHUNK_INODES (INODE_POOL_CHUNK_BYTES / (uint32_t)sizeof(struct inode))

struct inode_pool_chunk {
        char *mem;
        struct inode *free;     /* freed structs, through dead_next */
        uint32_t used;          /* structs handed out */
        uint32_t carved;        /* structs taken from mem since it was last released */
};

void inode_pool_init(struct inode_pool *p)
{
        memset(p, 0, sizeof(*p));
        p->kept = SLOT_UNIT_NONE;
}

/* A new empty chunk; its index, or SLOT_UNIT_NONE. */
static uint32_t chunk_new(struct inode_pool *p)
{
        uint32_t i = p->n, pos;
        char *mem;

        if (i == p->cap) {
                uint32_t cap = p->cap ? p->cap * 2 : 64;
                struct inode_pool_chunk *a = realloc(p->chunks, cap * sizeof(*a));
                uint32_t *by;
                uint64_t *room;

                if (!a)
                        return SLOT_UNIT_NONE;
                p->chunks = a;
                by = realloc(p->by_addr, cap * sizeof(*by));
                if (!by)
                        return SLOT_UNIT_NONE;
                p->by_addr = by;
                room = realloc(p->room, cap / 64 * sizeof(*room));
                if (!room)
                        return SLOT_UNIT_NONE;
                memset(room + p->cap / 64, 0, (cap - p->cap) / 64 * sizeof(*room));
                p->room = room;
                p->cap = cap;
        }
        mem = stable_map_zeroed(INODE_POOL_CHUNK_BYTES);
        if (!mem)
                return SLOT_UNIT_NONE;
        p->chunks[i] = (struct inode_pool_chunk){ .mem = mem };
        for (pos = i; pos > 0 && p->chunks[p->by_addr[pos - 1]].mem > mem; pos--)
                p->by_addr[pos] = p->by_addr[pos - 1];
        p->by_addr[pos] = i;
        p->room[i / 64] |= 1ull << (i % 64);
        if (i / 64 < p->hint)
                p->hint = i / 64;
        p->n++;
        return i;
}

struct inode *inode_pool_alloc(struct inode_pool *p)
{
        uint32_t words = (p->n + 63) / 64, i = SLOT_UNIT_NONE, w;
        struct inode_pool_chunk *c;
        struct inode *inode;

        for (w = p->hint; w < words; w++) {
                if (p->room[w]) {
                        i = w * 64 + (uint32_t)__builtin_ctzll(p->room[w]);
                        break;
                }
        }
        p->hint = w;
        if (i == SLOT_UNIT_NONE && (i = chunk_new(p)) == SLOT_UNIT_NONE)
                return NULL;
        c = &p->chunks[i];
        if (c->free) {
                inode = c->free;
                c->free = inode->dead_next;
        } else {
                inode = (struct inode *)c->mem + c->carved++;
        }
        if (c->used++ == 0 && p->kept == i)
                p->kept = SLOT_UNIT_NONE;
        if (c->used == CHUNK_INODES)
                p->room[i / 64] &= ~(1ull << (i % 64));
        return inode;
}

static uint32_t chunk_of(const struct inode_pool *p, const struct inode *inode)
{
        uint32_t lo = 0, hi = p->n;

        /* The last chunk that starts at or below the inode. */
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;

                if ((const char *)inode >= p->chunks[p->by_addr[mid]].mem)
                        lo = mid;
                else
                        hi = mid;
        }
        return p->by_addr[lo];
}

void inode_pool_free(struct inode_pool *p, struct inode *inode)
{
        uint32_t i = chunk_of(p, inode);
        struct inode_pool_chunk *c = &p->chunks[i];

        inode->dead_next = c->free;
        c->free = inode;
        p->room[i / 64] |= 1ull << (i % 64);
        if (i / 64 < p->hint)
                p->hint = i / 64;
        if (--c->used > 0)
                return;
        if (p->kept == SLOT_UNIT_NONE) {
                p->kept = i;
        } else {
                stable_release(c->mem, INODE_POOL_CHUNK_BYTES);
                c->free = NULL;
                c->carved = 0;
        }
}

void inode_pool_fini(struct inode_pool *p)
{
        for (uint32_t i = 0; i < p->n; i++)
                munmap(p->chunks[i].mem, INODE_POOL_CHUNK_BYTES);
        free(p->chunks);
        free(p->by_addr);
        free(p->room);
}
