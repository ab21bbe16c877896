/* SPDX-License-Identifier: GPL-2.0-or-later */
/* handle.c — the handle table (see handle.h). */
#include "handle.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "slot-table.h"

/* Start at slot 2 so that no fh looks like the root nodeid in a trace. */
#define HANDLE_FIRST_SLOT 2

struct handle_table {
        struct slot_table slots; /* its lock guards `spare` too */
        struct handle *spare;    /* linked through dead_next; type-stable like inodes' */
        struct inode_table *inodes;
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

int handle_add(struct handle_table *t, int fd, struct inode *inode, bool is_dir,
               bool writable, uint64_t *ret_fh)
{
        struct handle *h;
        uint32_t idx = 0;

        inode_ref(t->inodes, inode);
        slot_table_lock(&t->slots);
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
                /* Not live yet (refs 0): a stale reader cannot take a reference. */
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
