/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode.h — the inode table of sluice-fs (handles: handle.h).
 *
 * An inode is a host object the guest knows by a nodeid: an O_PATH|O_NOFOLLOW
 * fd, keyed by (st_dev, st_ino) so that two names of one file are one inode,
 * with the kernel's lookup count (LOOKUP/CREATE/MKDIR/… +1, FORGET −n) and
 * one name it can be reached by.  Only a bounded number of inodes keep their
 * fd; the others are reopened by that name when used (inode-fd.h).
 *
 * Nodeids are never pointers but numbers of a slot table (slot-table.h): the
 * low 32 bits index it and the high 32 bits carry the slot's generation, so a
 * stale or forged number finds nothing (-EBADF) instead of memory.  The root
 * is nodeid 1.
 *
 * Every lookup of a number returns a referenced object; the caller puts it
 * back when the request is done, so a concurrent FORGET/RELEASE on another
 * queue thread never closes an fd that is still in use.  Thread-safe.
 *
 * The per-request calls (inode_get/put/ref, handle_get/put) take no lock:
 * an object's refs counts the table's own reference (while the guest knows
 * the number: nlookup > 0, or not yet released) plus one per holder, and
 * whoever drops it to 0 unlinks the object under the table lock.  A lookup
 * reads the slot, takes a reference only if refs is not already 0 (a dying
 * object cannot come back), then re-checks that the object still carries the
 * number it was asked for.  That is safe because inode and handle structs
 * and slot arrays are never unmapped while their table lives (type-stable
 * memory) and never move.  Memory with no live object in it is still given
 * back (madvise(MADV_DONTNEED): whole chunks of free inode structs, whole
 * pages of free slots): it stays mapped and reads as zeros, which a reader
 * takes as "nothing there" (item NULL, refs 0).  Generations come from a
 * table-wide counter, so a slot that was zeroed never brings an old number
 * back to life.  Inserts, FORGET and RELEASE take the lock. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "inode-types.h"

struct inode_table;

/* root_fd: O_PATH directory fd of the shared folder; owned by the table from now on. */
int inode_table_new(int root_fd, struct inode_table **ret);
void inode_table_free(struct inode_table *t);
/* Called for every inode before it is closed: frees what the FUSE layer hung on it. */
typedef void (*inode_destroy_fn)(struct inode *inode);
void inode_table_set_destroy_fn(struct inode_table *t, inode_destroy_fn fn);

/* The referenced inode of `nodeid`, or NULL when the guest holds no such nodeid. */
struct inode *inode_get(struct inode_table *t, uint64_t nodeid);
void inode_put(struct inode_table *t, struct inode *inode);
/* A new reference to an inode the caller already holds. */
void inode_ref(struct inode_table *t, struct inode *inode);

/* Counts one lookup of the object behind `fd` (O_PATH, consumed, also on
 * failure) whose stat is `st` and birth time mix `birth` (inode_birth(); 0
 * when unknown), found as `name` in the directory `parent` (both NULL when it
 * has no name: then its fd is never dropped): the existing inode when (dev,
 * ino) is known, a new one otherwise.  Stores its nodeid in *ret_nodeid;
 * -ENOMEM. */
int inode_add_lookup_id(struct inode_table *t, int fd, dev_t dev, ino_t ino, mode_t mode,
                        uint64_t birth, struct inode *parent, const char *name,
                        uint64_t *ret_nodeid);
static inline int inode_add_lookup_at(struct inode_table *t, int fd, const struct stat *st,
                                      uint64_t birth, struct inode *parent, const char *name,
                                      uint64_t *ret_nodeid)
{
        return inode_add_lookup_id(t, fd, st->st_dev, st->st_ino, st->st_mode, birth, parent, name,
                                   ret_nodeid);
}
static inline int inode_add_lookup(struct inode_table *t, int fd, const struct stat *st,
                                   struct inode *parent, uint64_t *ret_nodeid)
{
        return inode_add_lookup_at(t, fd, st, 0, parent, NULL, ret_nodeid);
}
/* The birth time mix inode_add_lookup_id() takes, from a statx() that asked
 * for STATX_BTIME (0 when the file system keeps none). */
struct statx;
uint64_t inode_birth(const struct statx *x);
/* The guest renamed or linked the object (dev, ino) to `name` in the
 * directory `parent`: it is reachable there now, when the guest knows it.
 * Cheap: one hash lookup. */
void inode_note_name(struct inode_table *t, dev_t dev, ino_t ino, struct inode *parent,
                     const char *name);
/* The guest removed a name of (dev, ino) (UNLINK, RMDIR, a RENAME over it):
 * the inode keeps its descriptor from now on, since no name may lead to it. */
void inode_note_removed(struct inode_table *t, dev_t dev, ino_t ino);
/* Whether some inode the table holds was reached through `dir` (so that a
 * change of a name in it must be noted); a hint, read without the lock. */
static inline bool inode_has_kids(const struct inode *dir)
{
        return atomic_load_explicit(&dir->kids, memory_order_relaxed) != 0;
}
/* The referenced directory the inode was reached through, or NULL (put it
 * with inode_put()). */
struct inode *inode_parent(struct inode_table *t, const struct inode *inode);

/* ---- the state a successor rebuilds the table from (table-state.h; inode-restore.c) ---- */
struct tstate;
/* Keeps a record of every inode in st from now on (st stays the caller's). */
void inode_table_set_state(struct inode_table *t, struct tstate *st);
/* Rebuilds a table that holds only its root from the records in st, with
 * the same nodeids; nothing is opened (inode_reopen() does when an inode is
 * used).  Keeps its records in st from then on.  -EBADMSG with why when a
 * record cannot be trusted; -ENOMEM. */
int inode_table_restore(struct inode_table *t, struct tstate *st, char *why, size_t why_size);
/* During a restore, before requests run: the inode of nodeid, unreferenced,
 * whatever its counts (NULL when the table has none). */
struct inode *inode_restored(struct inode_table *t, uint64_t nodeid);

/* FORGET: drops n lookups; the inode goes when no lookup and no request holds it. */
void inode_forget(struct inode_table *t, uint64_t nodeid, uint64_t n);
/* Forgets every inode but the root (DESTROY, session reset). */
void inode_forget_all(struct inode_table *t);
/* Inodes in the table, the root included (for tests and stats). */
size_t inode_count(struct inode_table *t);
/* Current lookup count of nodeid (0 when unknown; tests). */
uint64_t inode_lookup_count(struct inode_table *t, uint64_t nodeid);
