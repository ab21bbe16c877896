/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode.c — the inode table: nodeids, the (dev, ino) hash, the names inodes
 * are reached by, lookup counts and FORGET (see inode.h).  Its slots are a
 * slot table (slot-table.h), its structs come from inode-pool.h, which
 * inodes keep a descriptor is fd-clock.h's, reopening a dropped one
 * inode-fd.c's. */
#include "inode-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stable-memory.h"
#include "table-state.h"
#include "util.h"

/* The memory target (bench/README.md): 10,000 looked-up inodes cost at most
 * 3 MiB, slot and hash tables included. */
_Static_assert(sizeof(struct inode) <= 104, "struct inode grew past 104 bytes");

static uint32_t hash_key(dev_t dev, ino_t ino, uint32_t n_buckets)
{
        uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;

        return (uint32_t)(h >> 32) & (n_buckets - 1);
}

/* Forgets the name; returns what to free() (outside the lock, or at once). */
static char *name_take(struct inode *inode)
{
        char *heap = inode->name_inline ? NULL : inode->name_ptr;

        inode->name_inline = false;
        inode->name_ptr = NULL;
        return heap;
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

/* Under the lock: the inode's whole record in the state (table-state.h).
 * handle_hash shares its place with the clock while the inode has an fd: a
 * new inode without a birth time asks the file system for it once (a
 * syscall under the lock, on inserts only, with --resume only), a rewrite
 * keeps what its record says. */
__attribute__((noinline)) void inode_state_write_locked(struct inode_table *t, struct inode *inode,
                                                        bool inserting)
{
        struct tstate_inode rec;
        const char *name = inode_name(inode);
        int fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);

        if (!t->state)
                return;
        rec = (struct tstate_inode){
                .gen = (uint32_t)(inode->nodeid >> 32),
                .dev = inode->dev,
                .ino = inode->ino,
                .birth = inode->birth,
                .nlookup = atomic_load_explicit(&inode->nlookup, memory_order_relaxed),
                .type = inode->type,
                .stale = inode->stale,
        };
        if (!inode->birth && fd < 0)
                rec.handle_hash = inode->handle_hash;
        else if (!inode->birth)
                rec.handle_hash = inserting ? fd_handle_hash(fd)
                                            : tstate_inode_handle_hash(t->state, (uint32_t)inode->nodeid);
        if (inode->parent && name) {
                rec.parent_idx = (uint32_t)inode->parent->nodeid;
                rec.parent_gen = (uint32_t)(inode->parent->nodeid >> 32);
                rec.name_len = strlen(name);
                memcpy(rec.name, name, rec.name_len + 1);
        }
        tstate_inode_write(t->state, (uint32_t)inode->nodeid, &rec, inserting);
}

/* Under the lock: `name` in `parent` (which the caller holds) is where the
 * inode can be found from now on.  The parent it had is returned to be put
 * once the lock is released. */
static struct inode *set_name_locked(struct inode_table *t, struct inode *inode,
                                     struct inode *parent, const char *name, bool record)
{
        struct inode *old = inode->parent;
        const char *cur = inode_name(inode);
        size_t len;

        /* Looked up again by the name it has: the common case, first. */
        if (old == parent && cur && strcmp(cur, name) == 0)
                return NULL;
        if (!parent || parent == inode || !name_usable(name))
                return NULL;
        if (old != parent && atomic_load_explicit(&inode->kids, memory_order_relaxed) &&
            is_ancestor_locked(inode, parent))
                return NULL;
        len = strlen(name);
        if (len < sizeof(inode->name_in)) {
                free(name_take(inode));
                memcpy(inode->name_in, name, len + 1);
                inode->name_inline = true;
        } else {
                char *copy = strdup(name);

                if (!copy)
                        return NULL;   /* the old name still serves, or none: then it keeps its fd */
                free(name_take(inode));
                inode->name_ptr = copy;
        }
        if (old == parent) {
                if (record && __builtin_expect(t->state != NULL, 0))
                        inode_state_write_locked(t, inode, false);
                return NULL;
        }
        /* The caller holds parent: refs is not 0 and no drop is under way. */
        atomic_fetch_add_explicit(&parent->refs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&parent->kids, 1, memory_order_relaxed);
        inode->parent = parent;
        if (old)
                atomic_fetch_sub_explicit(&old->kids, 1, memory_order_relaxed);
        if (record && __builtin_expect(t->state != NULL, 0))
                inode_state_write_locked(t, inode, false);
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

/* Under the lock: the inode of (dev, ino) that is not dying (refs 0: its
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

void inode_mark_stale_locked(struct inode_table *t, struct inode *inode)
{
        inode->stale = true;
        hash_remove(t, inode);
        if (t->state)
                tstate_inode_set_stale(t->state, (uint32_t)inode->nodeid);
}

/* Buckets come from mmap() (4 KiB at least): a big array given back goes
 * back to the system at once, not into malloc's heap. */
#define BUCKETS_MIN (STABLE_UNIT_BYTES / (uint32_t)sizeof(uint32_t))

/* Under the lock: n buckets (a power of two) for the inodes in the hash. */
void inode_hash_resize_locked(struct inode_table *t, uint32_t n)
{
        uint32_t *old = t->buckets, old_n = t->n_buckets;
        uint32_t *b = stable_map_zeroed((size_t)n * sizeof(*b));

        if (!b)
                return;   /* a longer chain is slower, not wrong */
        t->buckets = b;
        t->n_buckets = n;
        for (uint32_t i = 0; i < old_n; i++) {
                for (uint32_t idx = old[i]; idx; ) {
                        struct inode *inode = table_inode(t, idx);

                        idx = inode->hash_next;
                        hash_insert(t, inode);
                }
        }
        munmap(old, (size_t)old_n * sizeof(*old));
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
        slot_table_lock(&t->slots);
        parent = inode->parent;
        inode->parent = NULL;
        if (parent)
                atomic_fetch_sub_explicit(&parent->kids, 1, memory_order_relaxed);
        name = name_take(inode);
        inode_pool_free(&t->pool, inode);
        slot_table_unlock(&t->slots);
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
                if (parent && slot_unref(&parent->refs)) {
                        slot_table_lock(&t->slots);
                        inode_unlink(t, parent);
                        slot_table_unlock(&t->slots);
                        inode = parent;
                }
        }
}

static bool forget_locked(struct inode_table *t, struct inode *inode, uint64_t n);

static bool inode_drop_locked(void *owner, void *item)
{
        return forget_locked(owner, item, UINT64_MAX);
}

static void inode_unlink_locked(void *owner, void *item)
{
        inode_unlink(owner, item);
}

static void inode_destroy_item(void *owner, void *item)
{
        inode_destroy_up(owner, item);
}

static const struct slot_ops inode_ops = {
        .drop_locked = inode_drop_locked,
        .unlink_locked = inode_unlink_locked,
        .destroy = inode_destroy_item,
        .dead_next = offsetof(struct inode, dead_next),
};

/* Drops a reference to a parent that set_name_locked() replaced. */
static void parent_put(struct inode_table *t, struct inode *parent)
{
        if (parent && slot_unref(&parent->refs))
                slot_table_gone(&t->slots, parent, &inode_ops, t);
}

/* inode-restore.c's (inode-private.h); static above so that the hot path inlines them. */
struct inode *inode_set_name_locked(struct inode_table *t, struct inode *inode,
                                    struct inode *parent, const char *name, bool record)
{
        return set_name_locked(t, inode, parent, name, record);
}

void inode_hash_insert_locked(struct inode_table *t, struct inode *inode)
{
        hash_insert(t, inode);
}

/* Called with the table locked (or before it is shared).  The inode is not
 * live yet (refs 0): a stale reader holding its address cannot take a
 * reference, so plain stores are fine; inode_publish() makes it live. */
struct inode *inode_alloc(struct inode_table *t, int fd, dev_t dev, ino_t ino, mode_t mode)
{
        struct inode *inode = inode_pool_alloc(&t->pool);

        if (!inode)
                return NULL;
        atomic_store_explicit(&inode->fd, fd, memory_order_relaxed);
        inode->dev = dev;
        inode->ino = ino;
        inode->type = mode & S_IFMT;
        inode->nodeid = 0;
        inode->hash_next = 0;
        inode->dead_next = NULL;
        inode->private_data = NULL;
        inode->parent = NULL;
        inode->name_ptr = NULL;
        inode->name_inline = false;
        inode->keep_fd = false;
        inode->stale = false;
        atomic_store_explicit(&inode->kids, 0, memory_order_relaxed);
        atomic_store_explicit(&inode->used, false, memory_order_relaxed);
        atomic_store_explicit(&inode->nlookup, 0, memory_order_relaxed);
        return inode;
}

/* The table's own reference (the guest knows the nodeid): release, so that
 * whoever takes the next one (acquire, slot_ref_if_live()) sees every field. */
static void inode_publish(struct inode *inode)
{
        atomic_store_explicit(&inode->refs, 1, memory_order_release);
}

/* Called with the table locked, for an inode whose refs reached 0. */
static void inode_unlink(struct inode_table *t, struct inode *inode)
{
        if (fd_clock_holds(inode))
                fd_clock_remove(&t->clock, inode);
        if (!inode->stale)
                hash_remove(t, inode);
        if (t->state)
                tstate_inode_clear(t->state, (uint32_t)inode->nodeid);
        slot_free(&t->slots, (uint32_t)inode->nodeid);
        /* Fewer buckets once the table has shrunk well below them (a
         * quarter of as many, so that it takes many lookups to grow again). */
        if (t->slots.used < t->n_buckets / 8 && t->n_buckets > BUCKETS_MIN)
                inode_hash_resize_locked(t, t->n_buckets / 4 < BUCKETS_MIN ? BUCKETS_MIN : t->n_buckets / 4);
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
        t->n_buckets = BUCKETS_MIN;
        t->buckets = stable_map_zeroed(BUCKETS_MIN * sizeof(*t->buckets));
        slot_table_init(&t->slots, INODE_ROOT_ID);
        fd_clock_init(&t->clock, &t->slots);
        inode_pool_init(&t->pool);
        root = t->buckets ? inode_alloc(t, root_fd, st.st_dev, st.st_ino, st.st_mode) : NULL;
        idx = root ? slot_alloc(&t->slots, root) : 0;   /* slot 1, generation 0: nodeid 1 */
        if (idx != INODE_ROOT_ID) {
                /* The caller still owns root_fd on failure. */
                inode_pool_fini(&t->pool);
                slot_table_fini(&t->slots);
                if (t->buckets)
                        munmap(t->buckets, (size_t)t->n_buckets * sizeof(*t->buckets));
                free(t);
                return -ENOMEM;
        }
        root->nodeid = slot_number(&t->slots, idx);
        root->keep_fd = true;
        atomic_store_explicit(&root->nlookup, 1, memory_order_relaxed);
        hash_insert(t, root);
        inode_publish(root);   /* never dropped: inode_forget() leaves the root alone */
        t->clock.max_fds = fd_clock_max_for(0);
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
                free(name_take(inode));
        }
        inode_pool_fini(&t->pool);
        slot_table_fini(&t->slots);
        munmap(t->buckets, (size_t)t->n_buckets * sizeof(*t->buckets));
        free(t);
}

void inode_table_set_destroy_fn(struct inode_table *t, inode_destroy_fn fn)
{
        t->destroy_fn = fn;
}

/* slot_ref_if_live() for inodes: while a descriptor is being dropped (under
 * the lock), wait for the lock and look again. */
static bool inode_ref_if_live(struct inode_table *t, struct inode *inode)
{
        uint32_t n = atomic_load_explicit(&inode->refs, memory_order_relaxed);

        for (;;) {
                if (n == 0)
                        return false;
                if (__builtin_expect(n & REFS_DROPPING, 0)) {
                        slot_table_lock(&t->slots);
                        slot_table_unlock(&t->slots);
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

void inode_put(struct inode_table *t, struct inode *inode)
{
        if (inode && slot_unref(&inode->refs))
                slot_table_gone(&t->slots, inode, &inode_ops, t);
}

uint64_t inode_birth(const struct statx *x)
{
        uint64_t b;

        if (!(x->stx_mask & STATX_BTIME))
                return 0;
        b = ((uint64_t)x->stx_btime.tv_sec << 30) ^ x->stx_btime.tv_nsec;
        return b ? b : 1;
}

/* Under the lock: inode (known by its (dev, ino)) had its descriptor
 * dropped, and a lookup just opened `fd` for it.  Takes fd when it is the same
 * file (true); marks the inode stale when the file handle says it is another
 * that reuses the inode number (false: the caller makes a new inode). */
static bool refill_locked(struct inode_table *t, struct inode *inode, int fd, uint64_t birth)
{
        struct statx x;

        /* A new file (CREATE, TMPFILE) comes without a birth time: ask, as
         * its inode number may be that of a file gone since. */
        if (!birth && inode->birth &&
            statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BTIME, &x) == 0)
                birth = inode_birth(&x);
        if ((inode->birth && birth && birth != inode->birth) ||
            (!inode->birth && inode->handle_hash && fd_handle_hash(fd) != inode->handle_hash)) {
                inode_mark_stale_locked(t, inode);
                return false;
        }
        atomic_store_explicit(&inode->fd, fd, memory_order_relaxed);
        fd_clock_insert(&t->clock, inode);
        return true;
}

int inode_add_lookup_id(struct inode_table *t, int fd, dev_t dev, ino_t ino, mode_t mode,
                        uint64_t birth, struct inode *parent, const char *name,
                        uint64_t *ret_nodeid)
{
        _cleanup_close_ int owned_fd = fd;   /* closed unless an inode keeps it */
        struct fd_batch closing = { .n = 0 };
        struct inode *inode, *fresh, *old_parent = NULL;
        uint32_t idx;
        bool inserted = false;

        slot_table_lock(&t->slots);
        inode = hash_find(t, dev, ino);
        /* A forgotten inode still held by a request (or by its children)
         * comes back to the guest with its nodeid: the table takes its
         * reference again, unless the last holder just dropped it (then it
         * is dying: make a new one). */
        if (inode && atomic_load_explicit(&inode->nlookup, memory_order_relaxed) == 0 &&
            !slot_ref_if_live(&inode->refs))
                inode = NULL;
        if (inode && atomic_load_explicit(&inode->fd, memory_order_relaxed) < 0 &&
            !refill_locked(t, inode, fd, birth)) {
                /* Another file now: the old inode is stale (its nodeid gives
                 * ESTALE) and this one gets its own. */
                if (atomic_load_explicit(&inode->nlookup, memory_order_relaxed) == 0)
                        (void) slot_unref(&inode->refs);   /* the reference revived above; others remain */
                inode = NULL;
        } else if (inode && atomic_load_explicit(&inode->fd, memory_order_relaxed) == fd) {
                TAKE_FD(owned_fd);
        }
        if (!inode) {
                /* Allocating under the lock is rare (new inodes only) and keeps this simple. */
                fresh = inode_alloc(t, fd, dev, ino, mode);
                idx = fresh ? slot_alloc(&t->slots, fresh) : 0;
                if (idx == 0) {
                        if (fresh) {
                                atomic_store_explicit(&fresh->fd, -1, memory_order_relaxed);
                                inode_pool_free(&t->pool, fresh);
                        }
                        slot_table_unlock(&t->slots);
                        return -ENOMEM;
                }
                TAKE_FD(owned_fd);
                fresh->nodeid = slot_number(&t->slots, idx);
                hash_insert(t, fresh);
                if (t->slots.used > t->n_buckets && t->n_buckets <= SLOT_MAX / 2)
                        inode_hash_resize_locked(t, t->n_buckets * 2);
                inode = fresh;
                inode->birth = birth;
                fd_clock_insert(&t->clock, inode);
                inode_publish(inode);
                inserted = true;
        }
        atomic_store_explicit(&inode->nlookup, atomic_load_explicit(&inode->nlookup, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        old_parent = set_name_locked(t, inode, parent, name, !inserted);
        if (!inode_name(inode))
                inode->keep_fd = true;   /* nothing to reopen it by */
        /* With a state: a known inode looked up again costs one store, no syscall. */
        if (__builtin_expect(t->state != NULL, 0)) {
                if (inserted)
                        inode_state_write_locked(t, inode, true);
                else
                        tstate_inode_set_nlookup(t->state, (uint32_t)inode->nodeid,
                                                 atomic_load_explicit(&inode->nlookup, memory_order_relaxed));
        }
        *ret_nodeid = inode->nodeid;
        if (fd_clock_over(&t->clock))
                fd_clock_trim(&t->clock, &closing);
        slot_table_unlock(&t->slots);
        fd_batch_close(&closing);
        parent_put(t, old_parent);
        return 0;
}

void inode_note_name(struct inode_table *t, dev_t dev, ino_t ino, struct inode *parent,
                     const char *name)
{
        struct inode *inode, *old_parent = NULL;

        slot_table_lock(&t->slots);
        inode = hash_find(t, dev, ino);
        if (inode)
                old_parent = set_name_locked(t, inode, parent, name, true);
        slot_table_unlock(&t->slots);
        parent_put(t, old_parent);
}

void inode_note_removed(struct inode_table *t, dev_t dev, ino_t ino)
{
        struct inode *inode;

        slot_table_lock(&t->slots);
        inode = hash_find(t, dev, ino);
        /* Its name (maybe the one just removed) may lead nowhere now: the fd
         * is the only way to it.  One already dropped stays reachable by
         * its name if that was another link; otherwise a reopen says ESTALE. */
        if (inode)
                inode->keep_fd = true;
        slot_table_unlock(&t->slots);
}

struct inode *inode_parent(struct inode_table *t, const struct inode *inode)
{
        struct inode *parent;

        slot_table_lock(&t->slots);
        parent = inode->parent;
        /* Held by inode's reference: live, and no drop runs while we hold the lock. */
        if (parent)
                atomic_fetch_add_explicit(&parent->refs, 1, memory_order_relaxed);
        slot_table_unlock(&t->slots);
        return parent;
}

/* Under the lock: drops n lookups; true when that dropped the last reference. */
static bool forget_locked(struct inode_table *t, struct inode *inode, uint64_t n)
{
        uint64_t nl = atomic_load_explicit(&inode->nlookup, memory_order_relaxed);

        if (nl == 0 || inode->nodeid == INODE_ROOT_ID)
                return false;
        nl = n >= nl ? 0 : nl - n;
        atomic_store_explicit(&inode->nlookup, nl, memory_order_relaxed);
        if (t->state)
                tstate_inode_set_nlookup(t->state, (uint32_t)inode->nodeid, nl);
        if (nl > 0 || !slot_unref(&inode->refs))
                return false;
        inode_unlink(t, inode);
        return true;
}

void inode_forget(struct inode_table *t, uint64_t nodeid, uint64_t n)
{
        struct inode *inode;
        bool gone = false;

        slot_table_lock(&t->slots);
        /* Under the lock, a linked inode's slot is current: no re-check needed
         * beyond the generation slot_find() compares. */
        inode = slot_find(&t->slots, nodeid);
        if (inode)
                gone = forget_locked(t, inode, n);
        slot_table_unlock(&t->slots);
        if (gone)
                inode_destroy_up(t, inode);
}

void inode_forget_all(struct inode_table *t)
{
        /* forget_locked() leaves the root alone. */
        slot_table_drop_all(&t->slots, &inode_ops, t);
}

size_t inode_count(struct inode_table *t)
{
        return slot_table_count(&t->slots);
}

uint64_t inode_lookup_count(struct inode_table *t, uint64_t nodeid)
{
        struct inode *inode;
        uint64_t n = 0;

        slot_table_lock(&t->slots);
        inode = slot_find(&t->slots, nodeid);
        if (inode)
                n = atomic_load_explicit(&inode->nlookup, memory_order_relaxed);
        slot_table_unlock(&t->slots);
        return n;
}
