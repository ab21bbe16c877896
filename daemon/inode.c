/* inode.c — inode and handle tables (see inode.h). */
#include "inode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* ---- slot tables: number -> object, with generations ---- */

#define SLOT_MAX (1u << 30)

struct slot_table {
        void **items;
        uint32_t *gens;
        uint32_t *free_list;
        uint32_t n_free;
        uint32_t next;   /* first never-used slot */
        uint32_t cap;
};

static int slot_table_init(struct slot_table *st, uint32_t cap)
{
        st->items = calloc(cap, sizeof(*st->items));
        st->gens = calloc(cap, sizeof(*st->gens));
        st->free_list = calloc(cap, sizeof(*st->free_list));
        if (!st->items || !st->gens || !st->free_list)
                return -ENOMEM;
        st->cap = cap;
        st->next = 1;    /* 0 is never a valid number */
        st->n_free = 0;
        return 0;
}

static void slot_table_fini(struct slot_table *st)
{
        free(st->items);
        free(st->gens);
        free(st->free_list);
}

static uint64_t slot_number(const struct slot_table *st, uint32_t idx)
{
        return ((uint64_t)st->gens[idx] << 32) | idx;
}

/* Returns the slot index or 0 when full. */
static uint32_t slot_alloc(struct slot_table *st, void *item)
{
        uint32_t idx;

        if (st->n_free > 0) {
                idx = st->free_list[--st->n_free];
        } else {
                if (st->next == st->cap) {
                        uint32_t cap = st->cap * 2;
                        void **items;
                        uint32_t *gens, *fl;

                        if (cap > SLOT_MAX)
                                return 0;
                        items = realloc(st->items, cap * sizeof(*items));
                        if (items)
                                st->items = items;
                        gens = realloc(st->gens, cap * sizeof(*gens));
                        if (gens)
                                st->gens = gens;
                        fl = realloc(st->free_list, cap * sizeof(*fl));
                        if (fl)
                                st->free_list = fl;
                        if (!items || !gens || !fl)
                                return 0;
                        memset(st->items + st->cap, 0, (cap - st->cap) * sizeof(*items));
                        memset(st->gens + st->cap, 0, (cap - st->cap) * sizeof(*gens));
                        st->cap = cap;
                }
                idx = st->next++;
                /* Generation 0 is the root's (nodeid 1); every other slot starts at 1. */
                if (idx != INODE_ROOT_ID)
                        st->gens[idx] = 1;
        }
        st->items[idx] = item;
        return idx;
}

static void slot_free(struct slot_table *st, uint32_t idx)
{
        st->items[idx] = NULL;
        if (++st->gens[idx] == 0)
                st->gens[idx] = 1;
        st->free_list[st->n_free++] = idx;
}

static void *slot_find(const struct slot_table *st, uint64_t number)
{
        uint32_t idx = (uint32_t)number;

        if (idx == 0 || idx >= st->next || st->gens[idx] != (uint32_t)(number >> 32))
                return NULL;
        return st->items[idx];
}

/* ---- inodes ---- */

/* Freed structs kept for reuse (no malloc on steady LOOKUP/FORGET or OPEN/RELEASE traffic). */
#define SPARE_MAX 256

struct inode_table {
        pthread_mutex_t mutex;
        struct inode *spare;     /* linked through dead_next */
        unsigned n_spare;
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
        return t->slots.items[idx];
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

static struct inode *hash_find(struct inode_table *t, dev_t dev, ino_t ino)
{
        for (uint32_t i = t->buckets[hash_key(dev, ino, t->n_buckets)]; i; ) {
                struct inode *inode = table_inode(t, i);

                if (inode->dev == dev && inode->ino == ino)
                        return inode;
                i = inode->hash_next;
        }
        return NULL;
}

static void hash_grow(struct inode_table *t)
{
        uint32_t n = t->n_buckets * 2;
        uint32_t *b = calloc(n, sizeof(*b));

        if (!b || n > SLOT_MAX)
                return free(b); /* a longer chain is slower, not wrong */
        free(t->buckets);
        t->buckets = b;
        t->n_buckets = n;
        for (uint32_t i = 1; i < t->slots.next; i++)
                if (t->slots.items[i])
                        hash_insert(t, table_inode(t, i));
}

/* Closes what the inode holds and keeps the struct for reuse; not under the lock. */
static void inode_destroy(struct inode_table *t, struct inode *inode)
{
        if (t->destroy_fn)
                t->destroy_fn(inode);
        pthread_mutex_destroy(&inode->lock_mutex);
        if (inode->fd >= 0)
                close(inode->fd);
        pthread_mutex_lock(&t->mutex);
        if (t->n_spare < SPARE_MAX) {
                inode->dead_next = t->spare;
                t->spare = inode;
                t->n_spare++;
                inode = NULL;
        }
        pthread_mutex_unlock(&t->mutex);
        free(inode);
}

/* Called with the table locked (or before it is shared). */
static struct inode *inode_alloc(struct inode_table *t, int fd, const struct stat *st)
{
        struct inode *inode = t->spare;

        if (inode) {
                t->spare = inode->dead_next;
                t->n_spare--;
                memset(inode, 0, sizeof(*inode));
        } else {
                inode = calloc(1, sizeof(*inode));
                if (!inode)
                        return NULL;
        }
        inode->fd = fd;
        inode->dev = st->st_dev;
        inode->ino = st->st_ino;
        inode->type = st->st_mode & S_IFMT;
        pthread_mutex_init(&inode->lock_mutex, NULL);
        return inode;
}

/* Called with the table locked: unlinks an unused inode; the caller destroys it unlocked. */
static bool inode_unlink_if_unused(struct inode_table *t, struct inode *inode)
{
        if (inode->nlookup > 0 || inode->refs > 0 || inode->nodeid == INODE_ROOT_ID)
                return false;
        hash_remove(t, inode);
        slot_free(&t->slots, (uint32_t)inode->nodeid);
        t->count--;
        return true;
}

int inode_table_new(int root_fd, struct inode_table **ret)
{
        struct inode_table *t;
        struct inode *root;
        struct stat st;
        int r;

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
        r = slot_table_init(&t->slots, 1024);
        root = t->buckets ? inode_alloc(t, root_fd, &st) : NULL;
        if (r < 0 || !t->buckets || !root) {
                if (root)
                        root->fd = -1; /* the caller still owns root_fd on failure */
                free(root);
                slot_table_fini(&t->slots);
                free(t->buckets);
                free(t);
                return -ENOMEM;
        }
        r = (int)slot_alloc(&t->slots, root);   /* slot 1, generation 0: nodeid 1 */
        root->nodeid = slot_number(&t->slots, (uint32_t)r);
        root->nlookup = 1;
        hash_insert(t, root);
        t->count = 1;
        *ret = t;
        return 0;
}

void inode_table_free(struct inode_table *t)
{
        if (!t)
                return;
        for (uint32_t i = 1; i < t->slots.next; i++)
                if (t->slots.items[i])
                        inode_destroy(t, table_inode(t, i));
        while (t->spare) {
                struct inode *next = t->spare->dead_next;

                free(t->spare);
                t->spare = next;
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
        struct inode *inode;

        pthread_mutex_lock(&t->mutex);
        inode = slot_find(&t->slots, nodeid);
        /* A forgotten inode that a request still holds is not the guest's any more. */
        if (inode && inode->nlookup == 0)
                inode = NULL;
        if (inode)
                inode->refs++;
        pthread_mutex_unlock(&t->mutex);
        return inode;
}

void inode_ref(struct inode_table *t, struct inode *inode)
{
        pthread_mutex_lock(&t->mutex);
        inode->refs++;
        pthread_mutex_unlock(&t->mutex);
}

void inode_put(struct inode_table *t, struct inode *inode)
{
        bool gone;

        if (!inode)
                return;
        pthread_mutex_lock(&t->mutex);
        inode->refs--;
        gone = inode_unlink_if_unused(t, inode);
        pthread_mutex_unlock(&t->mutex);
        if (gone)
                inode_destroy(t, inode);
}

int inode_add_lookup(struct inode_table *t, int fd, const struct stat *st, uint64_t *ret_nodeid)
{
        _cleanup_close_ int owned_fd = fd;   /* closed unless a new inode keeps it */
        struct inode *inode, *fresh = NULL;
        uint32_t idx;

        pthread_mutex_lock(&t->mutex);
        inode = hash_find(t, st->st_dev, st->st_ino);
        if (!inode) {
                /* Allocating under the lock is rare (new inodes only) and keeps this simple. */
                fresh = inode_alloc(t, fd, st);
                idx = fresh ? slot_alloc(&t->slots, fresh) : 0;
                if (idx == 0) {
                        pthread_mutex_unlock(&t->mutex);
                        if (fresh) {
                                fresh->fd = -1;
                                inode_destroy(t, fresh);
                        }
                        return -ENOMEM;
                }
                TAKE_FD(owned_fd);
                fresh->nodeid = slot_number(&t->slots, idx);
                hash_insert(t, fresh);
                if (++t->count > t->n_buckets)
                        hash_grow(t);
                inode = fresh;
        }
        inode->nlookup++;
        *ret_nodeid = inode->nodeid;
        pthread_mutex_unlock(&t->mutex);
        return 0;
}

void inode_forget(struct inode_table *t, uint64_t nodeid, uint64_t n)
{
        struct inode *inode;
        bool gone = false;

        pthread_mutex_lock(&t->mutex);
        inode = slot_find(&t->slots, nodeid);
        if (inode && nodeid != INODE_ROOT_ID) {
                inode->nlookup = n >= inode->nlookup ? 0 : inode->nlookup - n;
                gone = inode_unlink_if_unused(t, inode);
        }
        pthread_mutex_unlock(&t->mutex);
        if (gone)
                inode_destroy(t, inode);
}

void inode_forget_all(struct inode_table *t)
{
        struct inode *dead = NULL;

        pthread_mutex_lock(&t->mutex);
        for (uint32_t i = INODE_ROOT_ID + 1; i < t->slots.next; i++) {
                struct inode *inode = table_inode(t, i);

                if (!inode)
                        continue;
                inode->nlookup = 0;
                if (inode_unlink_if_unused(t, inode)) {
                        inode->dead_next = dead;
                        dead = inode;
                }
        }
        pthread_mutex_unlock(&t->mutex);
        while (dead) {
                struct inode *next = dead->dead_next;

                inode_destroy(t, dead);
                dead = next;
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
                n = inode->nlookup;
        pthread_mutex_unlock(&t->mutex);
        return n;
}

/* ---- handles ---- */

struct handle_table {
        pthread_mutex_t mutex;
        struct handle *spare;    /* linked through dead_next */
        unsigned n_spare;
        struct slot_table slots;
        struct inode_table *inodes;
        size_t count;
};

int handle_table_new(struct inode_table *inodes, struct handle_table **ret)
{
        struct handle_table *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        if (slot_table_init(&t->slots, 256) < 0) {
                slot_table_fini(&t->slots);
                free(t);
                return -ENOMEM;
        }
        /* Skip slot 1 so that no fh looks like the root nodeid in a trace. */
        t->slots.next = 2;
        pthread_mutex_init(&t->mutex, NULL);
        t->inodes = inodes;
        *ret = t;
        return 0;
}

static void handle_destroy(struct handle_table *t, struct handle *h)
{
        if (h->fd >= 0)
                close(h->fd);
        pthread_mutex_destroy(&h->dir_mutex);
        inode_put(t->inodes, h->inode);
        pthread_mutex_lock(&t->mutex);
        if (t->n_spare < SPARE_MAX) {
                h->dead_next = t->spare;
                t->spare = h;
                t->n_spare++;
                h = NULL;
        }
        pthread_mutex_unlock(&t->mutex);
        free(h);
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
                t->n_spare--;
                memset(h, 0, sizeof(*h));
        } else {
                h = calloc(1, sizeof(*h));
        }
        if (h) {
                h->fd = fd;
                h->inode = inode;
                h->is_dir = is_dir;
                h->writable = writable;
                pthread_mutex_init(&h->dir_mutex, NULL);
                idx = slot_alloc(&t->slots, h);
                if (idx) {
                        h->fh = slot_number(&t->slots, idx);
                        t->count++;
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
        struct handle *h;

        pthread_mutex_lock(&t->mutex);
        h = slot_find(&t->slots, fh);
        if (h && (h->released || h->is_dir != want_dir))
                h = NULL;
        if (h)
                h->refs++;
        pthread_mutex_unlock(&t->mutex);
        return h;
}

/* Called locked; true when the caller must destroy h. */
static bool handle_unlink_if_unused(struct handle_table *t, struct handle *h)
{
        if (!h->released || h->refs > 0)
                return false;
        slot_free(&t->slots, (uint32_t)h->fh);
        t->count--;
        return true;
}

void handle_put(struct handle_table *t, struct handle *h)
{
        bool gone;

        if (!h)
                return;
        pthread_mutex_lock(&t->mutex);
        h->refs--;
        gone = handle_unlink_if_unused(t, h);
        pthread_mutex_unlock(&t->mutex);
        if (gone)
                handle_destroy(t, h);
}

int handle_release(struct handle_table *t, uint64_t fh, bool want_dir)
{
        struct handle *h;
        bool gone = false;

        pthread_mutex_lock(&t->mutex);
        h = slot_find(&t->slots, fh);
        if (h && !h->released && h->is_dir == want_dir) {
                h->released = true;
                gone = handle_unlink_if_unused(t, h);
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

        pthread_mutex_lock(&t->mutex);
        for (uint32_t i = 1; i < t->slots.next; i++) {
                struct handle *h = t->slots.items[i];

                if (!h)
                        continue;
                h->released = true;
                if (handle_unlink_if_unused(t, h)) {
                        h->dead_next = dead;
                        dead = h;
                }
        }
        pthread_mutex_unlock(&t->mutex);
        while (dead) {
                struct handle *next = dead->dead_next;

                handle_destroy(t, dead);
                dead = next;
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
