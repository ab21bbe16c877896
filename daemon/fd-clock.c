/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fd-clock.c — the inode table's clock of descriptors (see fd-clock.h). */
#include "fd-clock.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Descriptors left to open files and the transport (memory regions, ring
 * eventfds, the socket) when the cap on inode descriptors comes from
 * RLIMIT_NOFILE. */
#define FDS_RESERVE 64u
/* Clock steps one trim may take: with most inodes pinned (open files), the
 * cap is exceeded a little rather than every lookup walking them all. */
#define FDS_TRIM_STEPS 256u

static struct inode *clock_inode(const struct fd_clock *c, uint32_t idx)
{
        return slot_item(c->slots, idx);
}

void fd_clock_init(struct fd_clock *c, const struct slot_table *slots)
{
        c->slots = slots;
        c->hand = 0;
        c->n_fds = 0;
        c->max_fds = 0;
        atomic_init(&c->drops, 0);
        atomic_init(&c->reopens, 0);
}

void fd_clock_insert(struct fd_clock *c, struct inode *inode)
{
        uint32_t idx = (uint32_t)inode->nodeid;

        if (!c->hand) {
                inode->clock.prev = inode->clock.next = idx;
                c->hand = idx;
        } else {
                struct inode *h = clock_inode(c, c->hand);

                inode->clock.next = c->hand;
                inode->clock.prev = h->clock.prev;
                clock_inode(c, h->clock.prev)->clock.next = idx;
                h->clock.prev = idx;
        }
        c->n_fds++;
}

void fd_clock_remove(struct fd_clock *c, struct inode *inode)
{
        uint32_t idx = (uint32_t)inode->nodeid, prev = inode->clock.prev, next = inode->clock.next;

        if (next == idx) {
                c->hand = 0;
        } else {
                clock_inode(c, prev)->clock.next = next;
                clock_inode(c, next)->clock.prev = prev;
                if (c->hand == idx)
                        c->hand = next;
        }
        c->n_fds--;
}

/* name_to_handle_at() needs no privilege; open_by_handle_at() would
 * (CAP_DAC_READ_SEARCH), so the handle only ever identifies, and reopening
 * goes by name. */
uint64_t fd_handle_hash(int fd)
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

void fd_batch_add(struct fd_batch *b, int fd)
{
        if (b->n < ELEMENTSOF(b->fds))
                b->fds[b->n++] = fd;
        else
                (void) close(fd);
}

void fd_batch_close(struct fd_batch *b)
{
        for (unsigned i = 0; i < b->n; i++)
                (void) close(b->fds[i]);
        b->n = 0;
}

/* Drops the inode's descriptor when nothing but the table and its children
 * hold it (no request, no open file, no lock waiter: they hold a reference
 * and use the fd without the lock); returns the fd to close, or -1. */
static int fd_drop_locked(struct fd_clock *c, struct inode *inode)
{
        uint32_t base = (atomic_load_explicit(&inode->nlookup, memory_order_relaxed) > 0 ? 1u : 0u) +
                        atomic_load_explicit(&inode->kids, memory_order_relaxed);
        uint32_t expect = base;
        int fd;

        if (inode->keep_fd || !inode->parent || !inode_name(inode) || base == 0)
                return -1;
        /* Holders take references without the lock: only if there are none
         * now, and none can come while the bit is set, is the fd ours. */
        if (!atomic_compare_exchange_strong_explicit(&inode->refs, &expect, base | REFS_DROPPING,
                                                     memory_order_acquire, memory_order_relaxed))
                return -1;
        fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);
        fd_clock_remove(c, inode);
        /* The birth time, where there is one, identifies it at no cost. */
        inode->handle_hash = inode->birth ? 0 : fd_handle_hash(fd);
        atomic_store_explicit(&inode->fd, -1, memory_order_relaxed);
        atomic_store_explicit(&inode->refs, base, memory_order_release);
        atomic_fetch_add_explicit(&c->drops, 1, memory_order_relaxed);
        return fd;
}

void fd_clock_trim(struct fd_clock *c, struct fd_batch *b)
{
        for (unsigned steps = 0; fd_clock_over(c) && c->hand && steps < FDS_TRIM_STEPS; steps++) {
                struct inode *i = clock_inode(c, c->hand);
                int fd;

                c->hand = i->clock.next;
                if (atomic_load_explicit(&i->used, memory_order_relaxed)) {
                        atomic_store_explicit(&i->used, false, memory_order_relaxed);
                        continue;
                }
                fd = fd_drop_locked(c, i);
                if (fd >= 0)
                        fd_batch_add(b, fd);
        }
}

size_t fd_clock_max_for(size_t max)
{
        struct rlimit rl;

        if (max == 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
                /* Half the soft limit (main.c has raised it to the hard
                 * one), less what open files and the transport need. */
                size_t half = (size_t)rl.rlim_cur / 2;

                max = half > 2 * FDS_RESERVE ? half - FDS_RESERVE : half / 2;
        }
        return max == 0 ? 0 : max < 2 ? 2 : max;
}
