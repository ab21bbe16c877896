/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode-fd.c — an inode's descriptor when the clock dropped it
 * (fd-clock.h): reopened by its name in its parent, checked to be the same
 * file; and the cap on kept descriptors (see inode-fd.h). */
#include "inode-fd.h"
#include "inode-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "confine.h"

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
        struct statx x;
        uint64_t want_hash;
        char *name;
        int pfd, fd, err = 0;

        slot_table_lock(&t->slots);
        fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);
        parent = inode->parent;
        if (fd >= 0 || inode->stale || !parent || !inode_name(inode) || depth > 4096) {
                slot_table_unlock(&t->slots);
                return fd >= 0 ? fd : -ESTALE;
        }
        /* Held by inode (its child reference): live, not being dropped. */
        atomic_fetch_add_explicit(&parent->refs, 1, memory_order_relaxed);
        name = strdup(inode_name(inode));
        want_hash = inode->handle_hash;
        slot_table_unlock(&t->slots);
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
        else if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_BTIME,
                       &x) < 0)
                err = -errno;
        else if (makedev(x.stx_dev_major, x.stx_dev_minor) != inode->dev || x.stx_ino != inode->ino ||
                 (x.stx_mode & S_IFMT) != inode->type ||
                 (inode->birth && inode_birth(&x) != inode->birth) ||
                 (!inode->birth && want_hash && fd_handle_hash(fd) != want_hash))
                err = -ESTALE;   /* the name leads to another file now */

        slot_table_lock(&t->slots);
        if (err == -ESTALE && pfd >= 0 && !inode->stale &&
            atomic_load_explicit(&inode->fd, memory_order_relaxed) < 0)
                inode_mark_stale_locked(t, inode);
        if (err == 0) {
                if (atomic_load_explicit(&inode->fd, memory_order_relaxed) < 0) {
                        atomic_store_explicit(&inode->fd, fd, memory_order_relaxed);
                        fd_clock_insert(&t->clock, inode);
                        atomic_fetch_add_explicit(&t->clock.reopens, 1, memory_order_relaxed);
                        fd_clock_trim(&t->clock, &closing);
                } else {
                        fd_batch_add(&closing, fd);   /* another request was first */
                }
                fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);
        } else if (fd >= 0) {
                fd_batch_add(&closing, fd);
        }
        slot_table_unlock(&t->slots);
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

        max = fd_clock_max_for(max);
        slot_table_lock(&t->slots);
        t->clock.max_fds = max;
        fd_clock_trim(&t->clock, &closing);
        slot_table_unlock(&t->slots);
        fd_batch_close(&closing);
}

size_t inode_fds_max(struct inode_table *t)
{
        size_t n;

        slot_table_lock(&t->slots);
        n = t->clock.max_fds;
        slot_table_unlock(&t->slots);
        return n;
}

size_t inode_fds_count(struct inode_table *t)
{
        size_t n;

        slot_table_lock(&t->slots);
        n = t->clock.n_fds;
        slot_table_unlock(&t->slots);
        return n;
}

void inode_fds_stats(struct inode_table *t, uint64_t *ret_drops, uint64_t *ret_reopens)
{
        *ret_drops = atomic_load_explicit(&t->clock.drops, memory_order_relaxed);
        *ret_reopens = atomic_load_explicit(&t->clock.reopens, memory_order_relaxed);
}
