/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode.c — inode and handle tables (see inode.h). */
#include "inode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* The memory target (bench/README.md): 10,000 looked-up inodes cost at most
 * 3 MiB, slot and hash tables included. */
_Static_assert(sizeof(struct inode) <= 64, "struct inode grew past 64 bytes");

/* ---- slot tables: number -> object, with generations ----
 *
 * Readers (inode_get, handle_get) walk them without the table mutex; writers
 * hold it.  The slots live in chunks that are allocated once and never move
 * or shrink while the table lives: chunk 0 holds slots [0, SLOT_CHUNK0),
 * chunk k >= 1 holds [SLOT_CHUNK0 << (k - 1), SLOT_CHUNK0 << k).  A chunk
 * pointer is published (release) before `next` moves past its first slot, so
 * a reader that sees idx < next (acquire) sees the chunk. */

#define SLOT_MAX (1u << 30)
#define SLOT_CHUNK0 1024u
#define SLOT_CHUNKS 21          /* SLOT_CHUNK0 << 20 == SLOT_MAX */

struct slot {
        _Atomic(void *) item;
        _Atomic uint32_t gen;
};

struct slot_table {
        _Atomic(struct slot *) chunks[SLOT_CHUNKS];
        _Atomic uint32_t next;  /* first never-used slot */
        /* Under the table mutex only. */
        uint32_t *free_list;
        uint32_t n_free;
        uint32_t free_cap;      /* >= next: slot_free() never needs memory */
};

static unsigned slot_chunk(uint32_t idx, uint32_t *ret_base)
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

static uint32_t slot_chunk_size(unsigned k)
{
        return k == 0 ? SLOT_CHUNK0 : SLOT_CHUNK0 << (k - 1);
}

/* idx must be below next (readers) or be `next` with its chunk ensured (writers). */
static struct slot *slot_at(const struct slot_table *st, uint32_t idx)
{
        uint32_t base;
        unsigned k = slot_chunk(idx, &base);

        return &atomic_load_explicit(&st->chunks[k], memory_order_acquire)[idx - base];
}

static int slot_table_init(struct slot_table *st, uint32_t first)
{
        memset(st, 0, sizeof(*st));
        atomic_init(&st->next, first);  /* 0 is never a valid number */
        return 0;
}

static void slot_table_fini(struct slot_table *st)
{
        for (unsigned k = 0; k < SLOT_CHUNKS; k++)
                free(atomic_load_explicit(&st->chunks[k], memory_order_relaxed));
        free(st->free_list);
}

static uint32_t slot_next(const struct slot_table *st)
{
        return atomic_load_explicit(&st->next, memory_order_acquire);
}

static void *slot_item(const struct slot_table *st, uint32_t idx)
{
        return atomic_load_explicit(&slot_at(st, idx)->item, memory_order_acquire);
}

static uint64_t slot_number(const struct slot_table *st, uint32_t idx)
{
        return ((uint64_t)atomic_load_explicit(&slot_at(st, idx)->gen, memory_order_relaxed) << 32) | idx;
}

/* Under the mutex.  Returns the slot index, or 0 when full or out of memory. */
static uint32_t slot_alloc(struct slot_table *st, void *item)
{
        uint32_t idx, base;
        struct slot *s;

        if (st->n_free > 0) {
                idx = st->free_list[--st->n_free];
                s = slot_at(st, idx);
        } else {
                unsigned k;

                idx = atomic_load_explicit(&st->next, memory_order_relaxed);
                if (idx >= SLOT_MAX)
                        return 0;
                if (idx >= st->free_cap) {
                        uint32_t cap = st->free_cap ? st->free_cap * 2 : SLOT_CHUNK0;
                        uint32_t *fl = realloc(st->free_list, cap * sizeof(*fl));

                        if (!fl)
                                return 0;
                        st->free_list = fl;
                        st->free_cap = cap;
                }
                k = slot_chunk(idx, &base);
                if (!atomic_load_explicit(&st->chunks[k], memory_order_relaxed)) {
                        struct slot *c = calloc(slot_chunk_size(k), sizeof(*c));

                        if (!c)
                                return 0;
                        /* Published before next passes idx (below). */
                        atomic_store_explicit(&st->chunks[k], c, memory_order_release);
                }
                s = slot_at(st, idx);
                /* Generation 0 is the root's (nodeid 1); every other slot starts at 1. */
                atomic_store_explicit(&s->gen, idx == INODE_ROOT_ID ? 0 : 1, memory_order_relaxed);
                atomic_store_explicit(&st->next, idx + 1, memory_order_release);
        }
        atomic_store_explicit(&s->item, item, memory_order_release);
        return idx;
}

/* Under the mutex. */
static void slot_free(struct slot_table *st, uint32_t idx)
{
        struct slot *s = slot_at(st, idx);
        uint32_t gen = atomic_load_explicit(&s->gen, memory_order_relaxed) + 1;

        atomic_store_explicit(&s->item, NULL, memory_order_release);
        atomic_store_explicit(&s->gen, gen == 0 ? 1 : gen, memory_order_relaxed);
        st->free_list[st->n_free++] = idx;
}

/* Without the mutex: the object in number's slot, unreferenced.  The caller
 * must take a reference with ref_if_live() and then check that the object
 * still carries `number`: the slot may be freed and reused meanwhile. */
static void *slot_find(const struct slot_table *st, uint64_t number)
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
static bool ref_if_live(_Atomic uint32_t *refs)
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
static bool unref(_Atomic uint32_t *refs)
{
        return atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel) == 1;
}

/* ---- inodes ---- */

struct inode_table {
        pthread_mutex_t mutex;
        /* Freed structs, kept for reuse and never freed before the table:
         * lock-free readers may still touch them (type-stable memory). */
        struct inode *spare;     /* linked through dead_next */
        struct slot_table slots;
        uint32_t *buckets;       /* slot index of the first inode; 0 = empty */
        uint32_t n_buckets;      /* power of two */
        size_t count;
        inode_destroy_fn destroy_fn;
};

static uint32_t hash_key(dev_t dev, ino_t ino, uint32_t n_buckets)
{
        uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;

        return (uint32_t)(h >> 32) & (n_buckets - 1);
}

static struct inode *table_inode(struct inode_table *t, uint32_t idx)
{
        return slot_item(&t->slots, idx);
}

static void hash_insert(struct inode_table *t, struct inode *inode)
{
        uint32_t b = hash_key(inode->dev, inode->ino, t->n_buckets);
        uint32_t idx = (uint32_t)inode->nodeid;

        inode->hash_next = t->buckets[b];
        t->buckets[b] = idx;
}

static void hash_remove(struct inode_table *t, struct inode *inode)
{
        uint32_t *p = &t->buckets[hash_key(inode->dev, inode->ino, t->n_buckets)];
        uint32_t idx = (uint32_t)inode->nodeid;

        while (*p && *p != idx)
                p = &table_inode(t, *p)->hash_next;
        if (*p)
                *p = inode->hash_next;
}

/* Under the mutex: the inode of (dev, ino) that is not dying (refs 0: its
 * last holder is about to unlink it; a new lookup needs a new inode). */
static struct inode *hash_find(struct inode_table *t, dev_t dev, ino_t ino)
{
        for (uint32_t i = t->buckets[hash_key(dev, ino, t->n_buckets)]; i; ) {
                struct inode *inode = table_inode(t, i);

                if (inode->dev == dev && inode->ino == ino &&
                    atomic_load_explicit(&inode->refs, memory_order_relaxed) != 0)
                        return inode;
                i = inode->hash_next;
        }
        return NULL;
}

static void hash_grow(struct inode_table *t)
{
        uint32_t n = t->n_buckets * 2, next = slot_next(&t->slots);
        uint32_t *b = calloc(n, sizeof(*b));

        if (!b || n > SLOT_MAX)
                return free(b); /* a longer chain is slower, not wrong */
        free(t->buckets);
        t->buckets = b;
        t->n_buckets = n;
        for (uint32_t i = 1; i < next; i++)
                if (table_inode(t, i))
                        hash_insert(t, table_inode(t, i));
}

/* Closes what the inode holds and keeps the struct for reuse; not under the lock. */
static void inode_destroy(struct inode_table *t, struct inode *inode)
{
        if (t->destroy_fn)
                t->destroy_fn(inode);
        if (inode->fd >= 0)
                close(inode->fd);
        inode->fd = -1;
        pthread_mutex_lock(&t->mutex);
        inode->dead_next = t->spare;
        t->spare = inode;
        pthread_mutex_unlock(&t->mutex);
}

/* Called with the table locked (or before it is shared).  The inode is not
 * live yet (refs 0): a stale reader holding its address cannot take a
 * reference, so plain stores are fine; inode_publish() makes it live. */
static struct inode *inode_alloc(struct inode_table *t, int fd, const struct stat *st)
{
        struct inode *inode = t->spare;

        if (inode) {
                t->spare = inode->dead_next;
        } else {
                inode = calloc(1, sizeof(*inode));
                if (!inode)
                        return NULL;
                atomic_init(&inode->refs, 0);
                atomic_init(&inode->nlookup, 0);
        }
        inode->fd = fd;
        inode->dev = st->st_dev;
        inode->ino = st->st_ino;
        inode->type = st->st_mode & S_IFMT;
        inode->nodeid = 0;
        inode->hash_next = 0;
        inode->dead_next = NULL;
        inode->private_data = NULL;
        atomic_store_explicit(&inode->nlookup, 0, memory_order_relaxed);
        return inode;
}

/* The table's own reference (the guest knows the nodeid): release, so that
 * whoever takes the next one (acquire, ref_if_live()) sees every field. */
static void inode_publish(struct inode *inode)
{
        atomic_store_explicit(&inode->refs, 1, memory_order_release);
}

/* Called with the table locked, for an inode whose refs reached 0. */
static void inode_unlink(struct inode_table *t, struct inode *inode)
{
        hash_remove(t, inode);
        slot_free(&t->slots, (uint32_t)inode->nodeid);
        t->count--;
}

int inode_table_new(int root_fd, struct inode_table **ret)
{
        struct inode_table *t;
        struct inode *root;
        struct stat st;
        uint32_t idx;

        if (fstatat(root_fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        pthread_mutex_init(&t->mutex, NULL);
        t->n_buckets = 1024;
        t->buckets = calloc(t->n_buckets, sizeof(*t->buckets));
        slot_table_init(&t->slots, 1);
        root = t->buckets ? inode_alloc(t, root_fd, &st) : NULL;
        idx = root ? slot_alloc(&t->slots, root) : 0;   /* slot 1, generation 0: nodeid 1 */
        if (idx != INODE_ROOT_ID) {
                free(root);   /* the caller still owns root_fd on failure */
                slot_table_fini(&t->slots);
                free(t->buckets);
                free(t);
                return -ENOMEM;
        }
        root->nodeid = slot_number(&t->slots, idx);
        atomic_store_explicit(&root->nlookup, 1, memory_order_relaxed);
        hash_insert(t, root);
        inode_publish(root);   /* never dropped: inode_forget() leaves the root alone */
        t->count = 1;
        *ret = t;
        return 0;
}

void inode_table_free(struct inode_table *t)
{
        uint32_t next;

        if (!t)
                return;
        next = slot_next(&t->slots);
        for (uint32_t i = 1; i < next; i++)
                if (table_inode(t, i))
                        inode_destroy(t, table_inode(t, i));
        while (t->spare) {
                struct inode *n = t->spare->dead_next;

                free(t->spare);
                t->spare = n;
        }
        slot_table_fini(&t->slots);
        free(t->buckets);
        pthread_mutex_destroy(&t->mutex);
        free(t);
}

void inode_table_set_destroy_fn(struct inode_table *t, inode_destroy_fn fn)
{
        t->destroy_fn = fn;
}

struct inode *inode_get(struct inode_table *t, uint64_t nodeid)
{
        struct inode *inode = slot_find(&t->slots, nodeid);

        if (!inode || !ref_if_live(&inode->refs))
                return NULL;
        /* Ours now, and it cannot be recycled: is it still the one asked for?
         * (The slot may have been freed and the struct reused since we read
         * it.)  A forgotten inode that a request still holds is not the
         * guest's any more either. */
        if (inode->nodeid != nodeid || atomic_load_explicit(&inode->nlookup, memory_order_relaxed) == 0) {
                inode_put(t, inode);
                return NULL;
        }
        return inode;
}

void inode_ref(struct inode_table *t, struct inode *inode)
{
        (void)t;
        /* The caller holds a reference: refs cannot be 0 here. */
        atomic_fetch_add_explicit(&inode->refs, 1, memory_order_relaxed);
}

/* The last reference went: unlink under the lock, destroy outside it. */
static void inode_gone(struct inode_table *t, struct inode *inode)
{
        pthread_mutex_lock(&t->mutex);
        inode_unlink(t, inode);
        pthread_mutex_unlock(&t->mutex);
        inode_destroy(t, inode);
}

void inode_put(struct inode_table *t, struct inode *inode)
{
        if (inode && unref(&inode->refs))
                inode_gone(t, inode);
}

int inode_add_lookup(struct inode_table *t, int fd, const struct stat *st, uint64_t parent,
                     uint64_t *ret_nodeid)
{
        _cleanup_close_ int owned_fd = fd;   /* closed unless a new inode keeps it */
        struct inode *inode, *fresh;
        uint32_t idx;

        pthread_mutex_lock(&t->mutex);
        inode = hash_find(t, st->st_dev, st->st_ino);
        /* A forgotten inode still held by a request comes back to the guest
         * with its nodeid: the table takes its reference again, unless the
         * last holder just dropped it (then it is dying: make a new one). */
        if (inode && atomic_load_explicit(&inode->nlookup, memory_order_relaxed) == 0 &&
            !ref_if_live(&inode->refs))
                inode = NULL;
        if (!inode) {
                /* Allocating under the lock is rare (new inodes only) and keeps this simple. */
                fresh = inode_alloc(t, fd, st);
                idx = fresh ? slot_alloc(&t->slots, fresh) : 0;
                if (idx == 0) {
                        if (fresh) {
                                fresh->fd = -1;
                                fresh->dead_next = t->spare;
                                t->spare = fresh;
                        }
                        pthread_mutex_unlock(&t->mutex);
                        return -ENOMEM;
                }
                TAKE_FD(owned_fd);
                fresh->nodeid = slot_number(&t->slots, idx);
                hash_insert(t, fresh);
                if (++t->count > t->n_buckets)
                        hash_grow(t);
                inode = fresh;
                inode_publish(inode);
        }
        atomic_store_explicit(&inode->nlookup, atomic_load_explicit(&inode->nlookup, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        if (parent)
                atomic_store_explicit(&inode->parent, parent, memory_order_relaxed);
        *ret_nodeid = inode->nodeid;
        pthread_mutex_unlock(&t->mutex);
        return 0;
}

void inode_note_parent(struct inode_table *t, dev_t dev, ino_t ino, uint64_t parent)
{
        struct inode *inode;

        pthread_mutex_lock(&t->mutex);
        inode = hash_find(t, dev, ino);
        /* Only a live one: a dying inode's union holds its list link. */
        if (inode && atomic_load_explicit(&inode->nlookup, memory_order_relaxed) > 0 &&
            atomic_load_explicit(&inode->refs, memory_order_relaxed) > 0)
                atomic_store_explicit(&inode->parent, parent, memory_order_relaxed);
        pthread_mutex_unlock(&t->mutex);
}

/* Under the mutex: drops n lookups; true when that dropped the last reference. */
static bool forget_locked(struct inode_table *t, struct inode *inode, uint64_t n)
{
        uint64_t nl = atomic_load_explicit(&inode->nlookup, memory_order_relaxed);

        if (nl == 0 || inode->nodeid == INODE_ROOT_ID)
                return false;
        nl = n >= nl ? 0 : nl - n;
        atomic_store_explicit(&inode->nlookup, nl, memory_order_relaxed);
        if (nl > 0 || !unref(&inode->refs))
                return false;
        inode_unlink(t, inode);
        return true;
}

void inode_forget(struct inode_table *t, uint64_t nodeid, uint64_t n)
{
        struct inode *inode;
        bool gone = false;

        pthread_mutex_lock(&t->mutex);
        /* Under the mutex, a linked inode's slot is current: no re-check needed
         * beyond the generation slot_find() compares. */
        inode = slot_find(&t->slots, nodeid);
        if (inode)
                gone = forget_locked(t, inode, n);
        pthread_mutex_unlock(&t->mutex);
        if (gone)
                inode_destroy(t, inode);
}

void inode_forget_all(struct inode_table *t)
{
        struct inode *dead = NULL;
        uint32_t next;

        pthread_mutex_lock(&t->mutex);
        next = slot_next(&t->slots);
        for (uint32_t i = INODE_ROOT_ID + 1; i < next; i++) {
                struct inode *inode = table_inode(t, i);

                if (inode && forget_locked(t, inode, UINT64_MAX)) {
                        inode->dead_next = dead;
                        dead = inode;
                }
        }
        pthread_mutex_unlock(&t->mutex);
        while (dead) {
                struct inode *n = dead->dead_next;

                inode_destroy(t, dead);
                dead = n;
        }
}

size_t inode_count(struct inode_table *t)
{
        size_t n;

        pthread_mutex_lock(&t->mutex);
        n = t->count;
        pthread_mutex_unlock(&t->mutex);
        return n;
}

uint64_t inode_lookup_count(struct inode_table *t, uint64_t nodeid)
{
        struct inode *inode;
        uint64_t n = 0;

        pthread_mutex_lock(&t->mutex);
        inode = slot_find(&t->slots, nodeid);
        if (inode)
                n = atomic_load_explicit(&inode->nlookup, memory_order_relaxed);
        pthread_mutex_unlock(&t->mutex);
        return n;
}

/* ---- handles ---- */

struct handle_table {
        pthread_mutex_t mutex;
        struct handle *spare;    /* linked through dead_next; type-stable like inodes' */
        struct slot_table slots;
        struct inode_table *inodes;
        size_t count;
};

int handle_table_new(struct inode_table *inodes, struct handle_table **ret)
{
        struct handle_table *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        /* Start at slot 2 so that no fh looks like the root nodeid in a trace. */
        slot_table_init(&t->slots, 2);
        pthread_mutex_init(&t->mutex, NULL);
        t->inodes = inodes;
        *ret = t;
        return 0;
}

/* Closes what h holds and keeps the struct for reuse; not under the lock. */
static void handle_destroy(struct handle_table *t, struct handle *h)
{
        if (h->fd >= 0)
                close(h->fd);
        h->fd = -1;
        pthread_mutex_destroy(&h->dir_mutex);
        inode_put(t->inodes, h->inode);
        h->inode = NULL;
        pthread_mutex_lock(&t->mutex);
        h->dead_next = t->spare;
        t->spare = h;
        pthread_mutex_unlock(&t->mutex);
}

void handle_table_free(struct handle_table *t)
{
        if (!t)
                return;
        handle_release_all(t);
        while (t->spare) {
                struct handle *next = t->spare->dead_next;

                free(t->spare);
                t->spare = next;
        }
        slot_table_fini(&t->slots);
        pthread_mutex_destroy(&t->mutex);
        free(t);
}

int handle_add(struct handle_table *t, int fd, struct inode *inode, bool is_dir,
               bool writable, uint64_t *ret_fh)
{
        struct handle *h;
        uint32_t idx = 0;

        inode_ref(t->inodes, inode);
        pthread_mutex_lock(&t->mutex);
        h = t->spare;
        if (h) {
                t->spare = h->dead_next;
        } else {
                h = calloc(1, sizeof(*h));
                if (h) {
                        atomic_init(&h->refs, 0);
                        atomic_init(&h->released, false);
                }
        }
        if (h) {
                /* Not live yet (refs 0): see inode_alloc(). */
                h->fd = fd;
                h->inode = inode;
                h->is_dir = is_dir;
                h->writable = writable;
                h->dead_next = NULL;
                atomic_store_explicit(&h->released, false, memory_order_relaxed);
                pthread_mutex_init(&h->dir_mutex, NULL);
                idx = slot_alloc(&t->slots, h);
                if (idx) {
                        h->fh = slot_number(&t->slots, idx);
                        t->count++;
                        /* The table's reference, until RELEASE; publishes the fields. */
                        atomic_store_explicit(&h->refs, 1, memory_order_release);
                }
        }
        pthread_mutex_unlock(&t->mutex);
        if (!h) {
                close(fd);
                inode_put(t->inodes, inode);
                return -ENOMEM;
        }
        if (!idx) {
                handle_destroy(t, h);
                return -ENFILE;
        }
        *ret_fh = h->fh;
        return 0;
}

struct handle *handle_get(struct handle_table *t, uint64_t fh, bool want_dir)
{
        struct handle *h = slot_find(&t->slots, fh);

        if (!h || !ref_if_live(&h->refs))
                return NULL;
        /* As in inode_get(): the struct may have been reused for another fh. */
        if (h->fh != fh || h->is_dir != want_dir ||
            atomic_load_explicit(&h->released, memory_order_relaxed)) {
                handle_put(t, h);
                return NULL;
        }
        return h;
}

/* The last reference went: unlink under the lock, destroy outside it. */
static void handle_gone(struct handle_table *t, struct handle *h)
{
        pthread_mutex_lock(&t->mutex);
        slot_free(&t->slots, (uint32_t)h->fh);
        t->count--;
        pthread_mutex_unlock(&t->mutex);
        handle_destroy(t, h);
}

void handle_put(struct handle_table *t, struct handle *h)
{
        if (h && unref(&h->refs))
                handle_gone(t, h);
}

/* Under the mutex: marks h released and drops the table's reference; true
 * when that was the last one (the caller unlinks and destroys h). */
static bool release_locked(struct handle *h)
{
        if (atomic_load_explicit(&h->released, memory_order_relaxed))
                return false;
        atomic_store_explicit(&h->released, true, memory_order_relaxed);
        return unref(&h->refs);
}

int handle_release(struct handle_table *t, uint64_t fh, bool want_dir)
{
        struct handle *h;
        bool gone = false;

        pthread_mutex_lock(&t->mutex);
        h = slot_find(&t->slots, fh);
        if (h && !atomic_load_explicit(&h->released, memory_order_relaxed) && h->is_dir == want_dir) {
                gone = release_locked(h);
                if (gone) {
                        slot_free(&t->slots, (uint32_t)h->fh);
                        t->count--;
                }
        } else {
                h = NULL;
        }
        pthread_mutex_unlock(&t->mutex);
        if (gone)
                handle_destroy(t, h);
        return h ? 0 : -EBADF;
}

void handle_release_all(struct handle_table *t)
{
        struct handle *dead = NULL;
        uint32_t next;

        pthread_mutex_lock(&t->mutex);
        next = slot_next(&t->slots);
        for (uint32_t i = 2; i < next; i++) {
                struct handle *h = slot_item(&t->slots, i);

                if (h && release_locked(h)) {
                        slot_free(&t->slots, i);
                        t->count--;
                        h->dead_next = dead;
                        dead = h;
                }
        }
        pthread_mutex_unlock(&t->mutex);
        while (dead) {
                struct handle *next_h = dead->dead_next;

                handle_destroy(t, dead);
                dead = next_h;
        }
}

size_t handle_count(struct handle_table *t)
{
        size_t n;

        pthread_mutex_lock(&t->mutex);
        n = t->count;
        pthread_mutex_unlock(&t->mutex);
        return n;
}
