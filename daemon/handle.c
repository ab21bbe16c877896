/* SPDX-License-Identifier: GPL-2.0-or-later */
/* handle.c — the handle table (see handle.h). */
#include "handle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "slot-table.h"
#include "table-state.h"

/* Start at slot 2 so that no fh looks like the root nodeid in a trace. */
#define HANDLE_FIRST_SLOT 2

struct handle_table {
        struct slot_table slots; /* its lock guards `spare` too */
        struct handle *spare;    /* linked through dead_next; type-stable like inodes' */
        struct inode_table *inodes;
        struct tstate *state;    /* NULL without --resume; written under the lock */
};

static bool handle_drop_locked(void *owner, void *item);
static void handle_unlink_locked(void *owner, void *item);
static void handle_destroy(void *owner, void *item);

static const struct slot_ops handle_ops = {
        .drop_locked = handle_drop_locked,
        .unlink_locked = handle_unlink_locked,
        .destroy = handle_destroy,
        .dead_next = offsetof(struct handle, dead_next),
};

int handle_table_new(struct inode_table *inodes, struct handle_table **ret)
{
        struct handle_table *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        slot_table_init(&t->slots, HANDLE_FIRST_SLOT);
        t->inodes = inodes;
        *ret = t;
        return 0;
}

/* Closes what h holds and keeps the struct for reuse; not under the lock. */
static void handle_destroy(void *owner, void *item)
{
        struct handle_table *t = owner;
        struct handle *h = item;

        if (h->fd >= 0)
                close(h->fd);
        h->fd = -1;
        pthread_mutex_destroy(&h->dir_mutex);
        inode_put(t->inodes, h->inode);
        h->inode = NULL;
        slot_table_lock(&t->slots);
        h->dead_next = t->spare;
        t->spare = h;
        slot_table_unlock(&t->slots);
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
        free(t);
}

/* Under the lock: h's record in the state. */
static void state_write_locked(struct handle_table *t, struct handle *h)
{
        struct tstate_handle rec = {
                .gen = (uint32_t)(h->fh >> 32),
                .nodeid = h->inode->nodeid,
                .flags = h->open_flags,
                .is_dir = h->is_dir,
                .had_locks = atomic_load_explicit(&h->had_locks, memory_order_relaxed),
        };

        if (t->state)
                tstate_handle_write(t->state, (uint32_t)h->fh, &rec);
}

/* A fresh struct or a spare one, under the lock; not live yet. */
static struct handle *handle_struct_locked(struct handle_table *t)
{
        struct handle *h = t->spare;

        if (h) {
                t->spare = h->dead_next;
        } else {
                h = calloc(1, sizeof(*h));
                if (h) {
                        atomic_init(&h->refs, 0);
                        atomic_init(&h->released, false);
                }
        }
        return h;
}

static void handle_fill(struct handle *h, int fd, struct inode *inode, bool is_dir, int open_flags)
{
        h->fd = fd;
        h->inode = inode;
        h->is_dir = is_dir;
        h->open_flags = open_flags & ~(O_CREAT | O_TRUNC | O_EXCL);
        h->writable = (open_flags & O_ACCMODE) != O_RDONLY;
        h->dead_next = NULL;
        atomic_store_explicit(&h->released, false, memory_order_relaxed);
        atomic_store_explicit(&h->had_locks, false, memory_order_relaxed);
        atomic_store_explicit(&h->locks_lost, false, memory_order_relaxed);
        pthread_mutex_init(&h->dir_mutex, NULL);
}

int handle_add(struct handle_table *t, int fd, struct inode *inode, bool is_dir,
               int open_flags, uint64_t *ret_fh)
{
        struct handle *h;
        uint32_t idx = 0;

        inode_ref(t->inodes, inode);
        slot_table_lock(&t->slots);
        h = handle_struct_locked(t);
        if (h) {
                /* Not live yet (refs 0): a stale reader cannot take a reference. */
                handle_fill(h, fd, inode, is_dir, open_flags);
                idx = slot_alloc(&t->slots, h);
                if (idx) {
                        h->fh = slot_number(&t->slots, idx);
                        state_write_locked(t, h);
                        /* The table's reference, until RELEASE; publishes the fields. */
                        atomic_store_explicit(&h->refs, 1, memory_order_release);
                }
        }
        slot_table_unlock(&t->slots);
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

        if (!h || !slot_ref_if_live(&h->refs))
                return NULL;
        /* As in inode_get(): the struct may have been reused for another fh. */
        if (h->fh != fh || h->is_dir != want_dir ||
            atomic_load_explicit(&h->released, memory_order_relaxed)) {
                handle_put(t, h);
                return NULL;
        }
        return h;
}

static void handle_unlink_locked(void *owner, void *item)
{
        struct handle_table *t = owner;
        struct handle *h = item;

        if (t->state)
                tstate_handle_clear(t->state, (uint32_t)h->fh);
        slot_free(&t->slots, (uint32_t)h->fh);
}

void handle_put(struct handle_table *t, struct handle *h)
{
        if (h && slot_unref(&h->refs))
                slot_table_gone(&t->slots, h, &handle_ops, t);
}

/* Under the lock: marks h released and drops the table's reference; true
 * when that was the last one (then h is unlinked: the caller destroys it). */
static bool handle_drop_locked(void *owner, void *item)
{
        struct handle *h = item;

        if (atomic_load_explicit(&h->released, memory_order_relaxed))
                return false;
        atomic_store_explicit(&h->released, true, memory_order_relaxed);
        if (!slot_unref(&h->refs))
                return false;
        handle_unlink_locked(owner, h);
        return true;
}

int handle_release(struct handle_table *t, uint64_t fh, bool want_dir)
{
        struct handle *h;
        bool gone = false;

        slot_table_lock(&t->slots);
        h = slot_find(&t->slots, fh);
        if (h && !atomic_load_explicit(&h->released, memory_order_relaxed) && h->is_dir == want_dir)
                gone = handle_drop_locked(t, h);
        else
                h = NULL;
        slot_table_unlock(&t->slots);
        if (gone)
                handle_destroy(t, h);
        return h ? 0 : -EBADF;
}

void handle_release_all(struct handle_table *t)
{
        slot_table_drop_all(&t->slots, &handle_ops, t);
}

size_t handle_count(struct handle_table *t)
{
        return slot_table_count(&t->slots);
}

void handle_note_locks(struct handle_table *t, struct handle *h)
{
        if (atomic_load_explicit(&h->had_locks, memory_order_relaxed))
                return;
        slot_table_lock(&t->slots);
        atomic_store_explicit(&h->had_locks, true, memory_order_relaxed);
        if (t->state && !atomic_load_explicit(&h->released, memory_order_relaxed))
                tstate_handle_set_locks(t->state, (uint32_t)h->fh);
        slot_table_unlock(&t->slots);
}

void handle_table_set_state(struct handle_table *t, struct tstate *st)
{
        uint32_t next;

        slot_table_lock(&t->slots);
        t->state = st;
        next = slot_next(&t->slots);
        for (uint32_t i = HANDLE_FIRST_SLOT; i < next; i++) {
                struct handle *h = slot_item(&t->slots, i);

                if (h && !atomic_load_explicit(&h->released, memory_order_relaxed))
                        state_write_locked(t, h);
        }
        slot_table_unlock(&t->slots);
}

int handle_table_restore(struct handle_table *t, struct tstate *st, handle_reopen_fn reopen,
                         void *data, char *why, size_t why_size)
{
        uint32_t limit = tstate_handle_limit(st);
        int r = 0;

        slot_table_lock(&t->slots);
        if (t->slots.used) {
                slot_table_unlock(&t->slots);
                (void) snprintf(why, why_size, "the session already has open files");
                return -EBUSY;
        }
        for (uint32_t i = HANDLE_FIRST_SLOT; i < limit && r == 0; i++) {
                struct tstate_handle rec;
                struct inode *inode;
                struct handle *h;
                unsigned state;

                if ((r = tstate_handle_read(st, i, &state, &rec, why, why_size)) < 0)
                        break;
                if (state != TSTATE_LIVE)
                        continue;
                inode = inode_restored(t->inodes, rec.nodeid);
                if (!inode || (inode->type == S_IFDIR) != rec.is_dir) {
                        /* Its inode was torn: the fh goes with it. */
                        tstate_handle_clear(st, i);
                        continue;
                }
                h = handle_struct_locked(t);
                if (!h) {
                        r = -ENOMEM;
                        break;
                }
                /* Unlocked for the open: nothing else runs during a restore. */
                slot_table_unlock(&t->slots);
                handle_fill(h, reopen(data, inode, rec.flags, rec.is_dir), inode, rec.is_dir, rec.flags);
                slot_table_lock(&t->slots);
                if (h->fd < 0)
                        h->fd = -1;
                atomic_store_explicit(&h->had_locks, rec.had_locks, memory_order_relaxed);
                atomic_store_explicit(&h->locks_lost, rec.had_locks, memory_order_relaxed);
                if (!slot_place(&t->slots, i, rec.gen, h)) {
                        if (h->fd >= 0)
                                close(h->fd);
                        h->dead_next = t->spare;
                        t->spare = h;
                        r = -ENOMEM;
                        break;
                }
                inode_ref(t->inodes, inode);
                h->fh = ((uint64_t)rec.gen << 32) | i;
                atomic_store_explicit(&h->refs, 1, memory_order_release);
        }
        if (r == 0) {
                slot_table_settle(&t->slots);
                t->state = st;
        } else if (r == -ENOMEM) {
                (void) snprintf(why, why_size, "rebuilding the handle table: out of memory");
        }
        slot_table_unlock(&t->slots);
        return r;
}
