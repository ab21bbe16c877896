/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode.c — inode and handle tables (see inode.h). */
#include "inode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "confine.h"
#include "util.h"

/* The memory target (bench/README.md): 10,000 looked-up inodes cost at most
 * 3 MiB, slot and hash tables included. */
_Static_assert(sizeof(struct inode) <= 88, "struct inode grew past 88 bytes");

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

/* Set in refs, under the table mutex, while an inode's descriptor is being
 * dropped: a lock-free inode_get() that sees it waits for the mutex, so no
 * request can start using an fd that is about to be closed. */
#define REFS_DROPPING (1u << 31)

/* Descriptors left to open files and the transport (memory regions, ring
 * eventfds, the socket) when the cap on inode descriptors comes from
 * RLIMIT_NOFILE. */
#define FDS_RESERVE 64u
/* Clock steps one trim may take: with most inodes pinned (open files), the
 * cap is exceeded a little rather than every lookup walking them all. */
#define FDS_TRIM_STEPS 256u

struct inode_table {
        pthread_mutex_t mutex;
        /* The clock of non-root inodes holding a descriptor, a ring through
         * their `clock` links; under the mutex. */
        uint32_t hand;           /* slot index the hand is on; 0: the ring is empty */
        size_t n_fds;            /* inodes in the ring */
        size_t max_fds;          /* 0: no cap */
        _Atomic uint64_t drops, reopens;
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

/* ---- the clock of descriptors (under the mutex) ---- */

static bool in_clock(const struct inode *inode)
{
        return inode->nodeid != INODE_ROOT_ID && atomic_load_explicit(&inode->fd, memory_order_relaxed) >= 0;
}

/* Behind the hand: the last the hand comes to. */
static void clock_insert(struct inode_table *t, struct inode *inode)
{
        uint32_t idx = (uint32_t)inode->nodeid;

        if (!t->hand) {
                inode->clock.prev = inode->clock.next = idx;
                t->hand = idx;
        } else {
                struct inode *h = table_inode(t, t->hand);

                inode->clock.next = t->hand;
                inode->clock.prev = h->clock.prev;
                table_inode(t, h->clock.prev)->clock.next = idx;
                h->clock.prev = idx;
        }
        t->n_fds++;
}

static void clock_remove(struct inode_table *t, struct inode *inode)
{
        uint32_t idx = (uint32_t)inode->nodeid, prev = inode->clock.prev, next = inode->clock.next;

        if (next == idx) {
                t->hand = 0;
        } else {
                table_inode(t, prev)->clock.next = next;
                table_inode(t, next)->clock.prev = prev;
                if (t->hand == idx)
                        t->hand = next;
        }
        t->n_fds--;
}

/* A hash of the file handle of fd (it carries the inode's generation where
 * the file system has one, unlike st_ino, which ext4 and others reuse), or
 * 0 when the file system gives none.  name_to_handle_at() needs no
 * privilege; open_by_handle_at() would (CAP_DAC_READ_SEARCH), so the handle
 * only ever identifies, and reopening goes by name. */
static uint64_t handle_hash_of(int fd)
{
        union {
                struct file_handle fh;
                unsigned char room[sizeof(struct file_handle) + MAX_HANDLE_SZ];
        } h;
        const unsigned char *bytes = h.room + sizeof(struct file_handle);
        uint64_t hash = 0xcbf29ce484222325ull;
        int mount_id;

        h.fh.handle_bytes = MAX_HANDLE_SZ;
        if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) < 0)
                return 0;
        hash = (hash ^ (uint32_t)h.fh.handle_type) * 0x100000001b3ull;
        for (unsigned i = 0; i < h.fh.handle_bytes && i < MAX_HANDLE_SZ; i++)
                hash = (hash ^ bytes[i]) * 0x100000001b3ull;
        return hash ? hash : 1;
}

/* Descriptors to close once the mutex is released (close() of the last
 * reference to a dentry may do real work). */
struct fd_batch {
        int fds[8];
        unsigned n;
};

static void fd_batch_add(struct fd_batch *b, int fd)
{
        if (b->n < ELEMENTSOF(b->fds))
                b->fds[b->n++] = fd;
        else
                (void) close(fd);
}

static void fd_batch_close(struct fd_batch *b)
{
        for (unsigned i = 0; i < b->n; i++)
                (void) close(b->fds[i]);
        b->n = 0;
}

/* Drops the inode's descriptor when nothing but the table and its children
 * hold it (no request, no open file, no lock waiter: they hold a reference
 * and use the fd without the lock); returns the fd to close, or -1. */
static int fd_drop_locked(struct inode_table *t, struct inode *inode)
{
        uint32_t base = (atomic_load_explicit(&inode->nlookup, memory_order_relaxed) > 0 ? 1u : 0u) +
                        atomic_load_explicit(&inode->kids, memory_order_relaxed);
        uint32_t expect = base;
        int fd;

        if (inode->keep_fd || !inode->parent || !inode->name || base == 0)
                return -1;
        /* Holders take references without the lock: only if there are none
         * now, and none can come while the bit is set, is the fd ours. */
        if (!atomic_compare_exchange_strong_explicit(&inode->refs, &expect, base | REFS_DROPPING,
                                                     memory_order_acquire, memory_order_relaxed))
                return -1;
        fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);
        clock_remove(t, inode);
        inode->handle_hash = handle_hash_of(fd);
        atomic_store_explicit(&inode->fd, -1, memory_order_relaxed);
        atomic_store_explicit(&inode->refs, base, memory_order_release);
        atomic_fetch_add_explicit(&t->drops, 1, memory_order_relaxed);
        return fd;
}

/* Brings the ring back under the cap: the hand clears the second chance of
 * recently used inodes and drops the first it finds unused and unheld. */
static void fds_trim_locked(struct inode_table *t, struct fd_batch *b)
{
        for (unsigned steps = 0; t->max_fds && t->n_fds > t->max_fds && t->hand &&
                                 steps < FDS_TRIM_STEPS; steps++) {
                struct inode *c = table_inode(t, t->hand);
                int fd;

                t->hand = c->clock.next;
                if (atomic_load_explicit(&c->used, memory_order_relaxed)) {
                        atomic_store_explicit(&c->used, false, memory_order_relaxed);
                        continue;
                }
                fd = fd_drop_locked(t, c);
                if (fd >= 0)
                        fd_batch_add(b, fd);
        }
}

/* A name an inode can be reopened by: one component (lookups of "." and
 * ".." name another inode's place, not this one's). */
static bool name_usable(const char *name)
{
        return name && name[0] && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
               strcmp(name, "..") != 0;
}

/* Is `inode` `dir` or above it?  (A directory the host moved below its own
 * child must not become its child's child: the chain up must end.) */
static bool is_ancestor_locked(const struct inode *inode, const struct inode *dir)
{
        for (unsigned depth = 0; dir && depth < 65536; dir = dir->parent, depth++)
                if (dir == inode)
                        return true;
        return dir != NULL;
}

/* Under the mutex: `name` in `parent` (which the caller holds) is where the
 * inode can be found from now on.  The parent it had is returned to be put
 * once the mutex is released. */
static struct inode *set_name_locked(struct inode *inode, struct inode *parent, const char *name)
{
        struct inode *old = inode->parent;
        char *copy;

        if (!parent || !name_usable(name) || parent == inode)
                return NULL;
        if (old == parent && inode->name && strcmp(inode->name, name) == 0)
                return NULL;
        if (old != parent && atomic_load_explicit(&inode->kids, memory_order_relaxed) &&
            is_ancestor_locked(inode, parent))
                return NULL;
        copy = strdup(name);
        if (!copy)
                return NULL;   /* the old name still serves, or none: then it keeps its fd */
        free(inode->name);
        inode->name = copy;
        if (old == parent)
                return NULL;
        /* The caller holds parent: refs is not 0 and no drop is under way. */
        atomic_fetch_add_explicit(&parent->refs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&parent->kids, 1, memory_order_relaxed);
        inode->parent = parent;
        if (old)
                atomic_fetch_sub_explicit(&old->kids, 1, memory_order_relaxed);
        return old;
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

                if (inode->dev == dev && inode->ino == ino && !inode->stale &&
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
                if (table_inode(t, i) && !table_inode(t, i)->stale)
                        hash_insert(t, table_inode(t, i));
}

/* Closes what the inode holds and keeps the struct for reuse; not under the
 * lock.  Returns its parent, whose reference the caller drops. */
static struct inode *inode_destroy(struct inode_table *t, struct inode *inode)
{
        struct inode *parent;
        char *name;
        int fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);

        if (t->destroy_fn)
                t->destroy_fn(inode);
        if (fd >= 0)
                close(fd);
        atomic_store_explicit(&inode->fd, -1, memory_order_relaxed);
        pthread_mutex_lock(&t->mutex);
        parent = inode->parent;
        inode->parent = NULL;
        if (parent)
                atomic_fetch_sub_explicit(&parent->kids, 1, memory_order_relaxed);
        name = inode->name;
        inode->name = NULL;
        inode->dead_next = t->spare;
        t->spare = inode;
        pthread_mutex_unlock(&t->mutex);
        free(name);
        return parent;
}

static void inode_unlink(struct inode_table *t, struct inode *inode);

/* Destroys the inode, then each parent whose last reference that was (a
 * loop, not a recursion: a deep tree forgotten at once). */
static void inode_destroy_up(struct inode_table *t, struct inode *inode)
{
        while (inode) {
                struct inode *parent = inode_destroy(t, inode);

                inode = NULL;
                if (parent && unref(&parent->refs)) {
                        pthread_mutex_lock(&t->mutex);
                        inode_unlink(t, parent);
                        pthread_mutex_unlock(&t->mutex);
                        inode = parent;
                }
        }
}

/* Drops a reference to a parent that set_name_locked() replaced. */
static void parent_put(struct inode_table *t, struct inode *parent)
{
        if (parent && unref(&parent->refs)) {
                pthread_mutex_lock(&t->mutex);
                inode_unlink(t, parent);
                pthread_mutex_unlock(&t->mutex);
                inode_destroy_up(t, parent);
        }
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
        atomic_store_explicit(&inode->fd, fd, memory_order_relaxed);
        inode->dev = st->st_dev;
        inode->ino = st->st_ino;
        inode->type = st->st_mode & S_IFMT;
        inode->nodeid = 0;
        inode->hash_next = 0;
        inode->dead_next = NULL;
        inode->private_data = NULL;
        inode->parent = NULL;
        inode->name = NULL;
        inode->keep_fd = false;
        inode->stale = false;
        atomic_store_explicit(&inode->kids, 0, memory_order_relaxed);
        atomic_store_explicit(&inode->used, false, memory_order_relaxed);
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
        if (in_clock(inode))
                clock_remove(t, inode);
        if (!inode->stale)
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
        root->keep_fd = true;
        atomic_store_explicit(&root->nlookup, 1, memory_order_relaxed);
        hash_insert(t, root);
        inode_publish(root);   /* never dropped: inode_forget() leaves the root alone */
        t->count = 1;
        inode_fds_set_max(t, 0);
        *ret = t;
        return 0;
}

void inode_table_free(struct inode_table *t)
{
        uint32_t next;

        if (!t)
                return;
        next = slot_next(&t->slots);
        /* Everything goes at once: no parent to put, no slot to free. */
        for (uint32_t i = 1; i < next; i++) {
                struct inode *inode = table_inode(t, i);
                int fd;

                if (!inode)
                        continue;
                if (t->destroy_fn)
                        t->destroy_fn(inode);
                fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);
                if (fd >= 0)
                        close(fd);
                free(inode->name);
                free(inode);
        }
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

/* ref_if_live() for inodes: while a descriptor is being dropped (under the
 * mutex), wait for the mutex and look again. */
static bool inode_ref_if_live(struct inode_table *t, struct inode *inode)
{
        uint32_t n = atomic_load_explicit(&inode->refs, memory_order_relaxed);

        for (;;) {
                if (n == 0)
                        return false;
                if (__builtin_expect(n & REFS_DROPPING, 0)) {
                        pthread_mutex_lock(&t->mutex);
                        pthread_mutex_unlock(&t->mutex);
                        n = atomic_load_explicit(&inode->refs, memory_order_relaxed);
                        continue;
                }
                if (atomic_compare_exchange_weak_explicit(&inode->refs, &n, n + 1, memory_order_acquire,
                                                          memory_order_relaxed))
                        return true;
        }
}

struct inode *inode_get(struct inode_table *t, uint64_t nodeid)
{
        struct inode *inode = slot_find(&t->slots, nodeid);

        if (!inode || !inode_ref_if_live(t, inode))
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
        inode_destroy_up(t, inode);
}

void inode_put(struct inode_table *t, struct inode *inode)
{
        if (inode && unref(&inode->refs))
                inode_gone(t, inode);
}

/* Under the mutex: inode (known by its (dev, ino)) had its descriptor
 * dropped, and a lookup just opened `fd` for it.  Takes fd when it is the same
 * file (true); marks the inode stale when the file handle says it is another
 * that reuses the inode number (false: the caller makes a new inode). */
static bool refill_locked(struct inode_table *t, struct inode *inode, int fd)
{
        if (inode->handle_hash && handle_hash_of(fd) != inode->handle_hash) {
                inode->stale = true;
                hash_remove(t, inode);
                return false;
        }
        atomic_store_explicit(&inode->fd, fd, memory_order_relaxed);
        clock_insert(t, inode);
        return true;
}

int inode_add_lookup_at(struct inode_table *t, int fd, const struct stat *st,
                        struct inode *parent, const char *name, uint64_t *ret_nodeid)
{
        _cleanup_close_ int owned_fd = fd;   /* closed unless an inode keeps it */
        struct fd_batch closing = { .n = 0 };
        struct inode *inode, *fresh, *old_parent = NULL;
        uint32_t idx;

        pthread_mutex_lock(&t->mutex);
        inode = hash_find(t, st->st_dev, st->st_ino);
        /* A forgotten inode still held by a request (or by its children)
         * comes back to the guest with its nodeid: the table takes its
         * reference again, unless the last holder just dropped it (then it
         * is dying: make a new one). */
        if (inode && atomic_load_explicit(&inode->nlookup, memory_order_relaxed) == 0 &&
            !ref_if_live(&inode->refs))
                inode = NULL;
        if (inode && atomic_load_explicit(&inode->fd, memory_order_relaxed) < 0 &&
            !refill_locked(t, inode, fd)) {
                /* Another file now: the old inode is stale (its nodeid gives
                 * ESTALE) and this one gets its own. */
                if (atomic_load_explicit(&inode->nlookup, memory_order_relaxed) == 0)
                        (void) unref(&inode->refs);   /* the reference revived above; others remain */
                inode = NULL;
        } else if (inode && atomic_load_explicit(&inode->fd, memory_order_relaxed) == fd) {
                TAKE_FD(owned_fd);
        }
        if (!inode) {
                /* Allocating under the lock is rare (new inodes only) and keeps this simple. */
                fresh = inode_alloc(t, fd, st);
                idx = fresh ? slot_alloc(&t->slots, fresh) : 0;
                if (idx == 0) {
                        if (fresh) {
                                atomic_store_explicit(&fresh->fd, -1, memory_order_relaxed);
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
                clock_insert(t, inode);
                inode_publish(inode);
        }
        atomic_store_explicit(&inode->nlookup, atomic_load_explicit(&inode->nlookup, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        old_parent = set_name_locked(inode, parent, name);
        if (!inode->name)
                inode->keep_fd = true;   /* nothing to reopen it by */
        *ret_nodeid = inode->nodeid;
        fds_trim_locked(t, &closing);
        pthread_mutex_unlock(&t->mutex);
        fd_batch_close(&closing);
        parent_put(t, old_parent);
        return 0;
}

void inode_note_name(struct inode_table *t, dev_t dev, ino_t ino, struct inode *parent,
                     const char *name)
{
        struct inode *inode, *old_parent = NULL;

        pthread_mutex_lock(&t->mutex);
        inode = hash_find(t, dev, ino);
        if (inode)
                old_parent = set_name_locked(inode, parent, name);
        pthread_mutex_unlock(&t->mutex);
        parent_put(t, old_parent);
}

void inode_note_removed(struct inode_table *t, dev_t dev, ino_t ino)
{
        struct inode *inode;

        pthread_mutex_lock(&t->mutex);
        inode = hash_find(t, dev, ino);
        /* Its name (maybe the one just removed) may lead nowhere now: the fd
         * is the only way to it.  One already dropped stays reachable by
         * its name if that was another link; otherwise a reopen says ESTALE. */
        if (inode)
                inode->keep_fd = true;
        pthread_mutex_unlock(&t->mutex);
}

struct inode *inode_parent(struct inode_table *t, const struct inode *inode)
{
        struct inode *parent;

        pthread_mutex_lock(&t->mutex);
        parent = inode->parent;
        /* Held by inode's reference: live, and no drop runs while we hold the mutex. */
        if (parent)
                atomic_fetch_add_explicit(&parent->refs, 1, memory_order_relaxed);
        pthread_mutex_unlock(&t->mutex);
        return parent;
}

/* ---- reopening dropped descriptors ---- */

/* Errors of a reopen by name that mean "not the file the guest knows any
 * more".  ESTALE is what the guest's kernel turns into "Stale file handle"
 * for a nodeid whose file is gone: the same answer Rust virtiofsd gives for a
 * handle that no longer opens.  ENOENT would wrongly say that the name the
 * guest holds does not exist (the guest would cache it as negative). */
static bool gone_errno(int e)
{
        return e == ENOENT || e == ENOTDIR || e == ELOOP || e == EXDEV || e == ESTALE;
}

static int reopen_at(struct inode_table *t, struct inode *inode, unsigned depth)
{
        struct fd_batch closing = { .n = 0 };
        struct inode *parent;
        struct stat st;
        uint64_t want_hash;
        char *name;
        int pfd, fd, err = 0;

        pthread_mutex_lock(&t->mutex);
        fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);
        parent = inode->parent;
        if (fd >= 0 || inode->stale || !parent || !inode->name || depth > 4096) {
                pthread_mutex_unlock(&t->mutex);
                return fd >= 0 ? fd : -ESTALE;
        }
        /* Held by inode (its child reference): live, not being dropped. */
        atomic_fetch_add_explicit(&parent->refs, 1, memory_order_relaxed);
        name = strdup(inode->name);
        want_hash = inode->handle_hash;
        pthread_mutex_unlock(&t->mutex);
        if (!name) {
                inode_put(t, parent);
                return -ENOMEM;
        }

        pfd = atomic_load_explicit(&parent->fd, memory_order_relaxed);
        if (pfd < 0)
                pfd = reopen_at(t, parent, depth + 1);
        fd = pfd < 0 ? pfd : confine_open_child(pfd, name, O_PATH, 0);
        if (fd < 0)
                err = gone_errno(-fd) ? -ESTALE : fd;
        else if (fstat(fd, &st) < 0)
                err = -errno;
        else if (st.st_dev != inode->dev || st.st_ino != inode->ino ||
                 (st.st_mode & S_IFMT) != inode->type ||
                 (want_hash && handle_hash_of(fd) != want_hash))
                err = -ESTALE;   /* the name leads to another file now */

        pthread_mutex_lock(&t->mutex);
        if (err == -ESTALE && pfd >= 0 && !inode->stale &&
            atomic_load_explicit(&inode->fd, memory_order_relaxed) < 0) {
                inode->stale = true;
                hash_remove(t, inode);
        }
        if (err == 0) {
                if (atomic_load_explicit(&inode->fd, memory_order_relaxed) < 0) {
                        atomic_store_explicit(&inode->fd, fd, memory_order_relaxed);
                        clock_insert(t, inode);
                        atomic_fetch_add_explicit(&t->reopens, 1, memory_order_relaxed);
                        fds_trim_locked(t, &closing);
                } else {
                        fd_batch_add(&closing, fd);   /* another request was first */
                }
                fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);
        } else if (fd >= 0) {
                fd_batch_add(&closing, fd);
        }
        pthread_mutex_unlock(&t->mutex);
        atomic_store_explicit(&inode->used, true, memory_order_relaxed);
        fd_batch_close(&closing);
        free(name);
        inode_put(t, parent);
        return err < 0 ? err : fd;
}

int inode_reopen(struct inode_table *t, struct inode *inode)
{
        return reopen_at(t, inode, 0);
}

void inode_fds_set_max(struct inode_table *t, size_t max)
{
        struct fd_batch closing = { .n = 0 };
        struct rlimit rl;

        if (max == 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
                /* Half the soft limit (main.c has raised it to the hard
                 * one), less what open files and the transport need. */
                size_t half = (size_t)rl.rlim_cur / 2;

                max = half > 2 * FDS_RESERVE ? half - FDS_RESERVE : half / 2;
        }
        pthread_mutex_lock(&t->mutex);
        t->max_fds = max == 0 ? 0 : max < 2 ? 2 : max;
        fds_trim_locked(t, &closing);
        pthread_mutex_unlock(&t->mutex);
        fd_batch_close(&closing);
}

size_t inode_fds_max(struct inode_table *t)
{
        size_t n;

        pthread_mutex_lock(&t->mutex);
        n = t->max_fds;
        pthread_mutex_unlock(&t->mutex);
        return n;
}

size_t inode_fds_count(struct inode_table *t)
{
        size_t n;

        pthread_mutex_lock(&t->mutex);
        n = t->n_fds;
        pthread_mutex_unlock(&t->mutex);
        return n;
}

void inode_fds_stats(struct inode_table *t, uint64_t *ret_drops, uint64_t *ret_reopens)
{
        *ret_drops = atomic_load_explicit(&t->drops, memory_order_relaxed);
        *ret_reopens = atomic_load_explicit(&t->reopens, memory_order_relaxed);
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
                inode_destroy_up(t, inode);
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

                inode_destroy_up(t, dead);
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
