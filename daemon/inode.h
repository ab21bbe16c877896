/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode.h — the inode and handle tables of sluice-fs.
 *
 * An inode is a host object the guest knows by a nodeid: an O_PATH|O_NOFOLLOW
 * fd, keyed by (st_dev, st_ino) so that two names of one file are one inode,
 * with the kernel's lookup count (LOOKUP/CREATE/MKDIR/… +1, FORGET −n).  A
 * handle is an open file or directory the guest knows by an fh.
 *
 * Nodeids and fhs are never pointers: the low 32 bits index a slot table and
 * the high 32 bits carry the slot's generation, so a stale or forged number
 * finds nothing (-EBADF) instead of memory.  The root is nodeid 1.
 *
 * Every lookup of a number returns a referenced object; the caller puts it
 * back when the request is done, so a concurrent FORGET/RELEASE on another
 * queue thread never closes an fd that is still in use.  Thread-safe.
 *
 * The per-request calls (inode_get/put/ref, handle_get/put) take no lock:
 * an object's refs counts the table's own reference (while the guest knows
 * the number: nlookup > 0, or not yet released) plus one per holder, and
 * whoever drops it to 0 unlinks the object under the table mutex.  A lookup
 * reads the slot, takes a reference only if refs is not already 0 (a dying
 * object cannot come back), then re-checks that the object still carries the
 * number it was asked for.  That is safe because inode and handle structs
 * are never freed while their table lives (type-stable memory: freed ones
 * wait on a spare list for reuse) and slot arrays grow in chunks that never
 * move.  Inserts, FORGET and RELEASE keep the mutex. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define INODE_ROOT_ID 1

struct inode {
        /* Ordered for size (88 bytes: a million looked-up inodes are ~110 MiB
         * with their names and the slot and hash tables): the 8-byte fields,
         * then the 4-byte ones. */
        dev_t dev;
        ino_t ino;
        uint64_t nodeid;        /* set before the inode is published, then constant */
        /* The fields below belong to the table: nlookup is written under its
         * lock and read without it; refs is atomic (see above). */
        _Atomic uint64_t nlookup;
        /* One name the inode is reachable by: `name` in the directory
         * `parent`, where it was last looked up, created, linked or renamed
         * to through us (NULL for the root and an O_TMPFILE).  The parent is
         * referenced, so it stays in the table while a child may need it to
         * be reopened.  Under the table lock (inode_parent()). */
        struct inode *parent;
        char *name;
        /* What the layer above hangs on the inode (the FUSE layer: its
         * guest lock owners, pt-lock.h).  NULL in a new inode; the table
         * never reads it, and calls the destroy function
         * (inode_table_set_destroy_fn()) before the inode goes. */
        void *private_data;
        union {
                /* fd >= 0: the neighbours (slot indexes) in the clock of
                 * inodes holding a descriptor (inode.c). */
                struct { uint32_t prev, next; } clock;
                /* fd < 0: a hash of the file handle the descriptor had when
                 * it was dropped (0: the file system gives none), so that a
                 * reopen knows the same file from a new one with a reused
                 * inode number. */
                uint64_t handle_hash;
                /* Once no one holds it: inode_forget_all()'s list of inodes
                 * to destroy, or the spare list. */
                struct inode *dead_next;
        };
        /* O_PATH | O_NOFOLLOW, inside the shared folder; -1 while dropped
         * (only when no request holds the inode: use inode_fd()). */
        _Atomic int fd;
        mode_t type;            /* S_IFMT bits: the type of an inode never changes */
        _Atomic uint32_t refs;
        uint32_t hash_next;     /* slot index of the next inode in the bucket; 0 ends */
        _Atomic uint32_t kids;  /* inodes whose `parent` this is (written under the lock) */
        atomic_bool used;       /* used since the clock hand last passed (second chance) */
        bool keep_fd;           /* under the lock: never dropped (root, unlinked, no name) */
        bool stale;             /* under the lock: no longer the file its name leads to */
};

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
 * failure) whose stat is `st`, found as `name` in the directory `parent`
 * (both NULL when it has no name: then its fd is never dropped): the
 * existing inode when (dev, ino) is known, a new one otherwise.  Stores its
 * nodeid in *ret_nodeid; -ENOMEM. */
int inode_add_lookup_at(struct inode_table *t, int fd, const struct stat *st,
                        struct inode *parent, const char *name, uint64_t *ret_nodeid);
static inline int inode_add_lookup(struct inode_table *t, int fd, const struct stat *st,
                                   struct inode *parent, uint64_t *ret_nodeid)
{
        return inode_add_lookup_at(t, fd, st, parent, NULL, ret_nodeid);
}
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

/* ---- descriptors ----
 *
 * The table keeps an fd for at most inode_fds_max() inodes that no request
 * or open file holds: beyond, the least recently used give theirs back
 * (a clock with a second chance), and a later request reopens them by name
 * from their parent.  So the worker's descriptors stay bounded however many
 * inodes the guest knows. */

/* The inode's O_PATH fd, valid while the caller holds the inode: reopened
 * when it was dropped.  -ESTALE when its name no longer leads to the same
 * file (removed or replaced on the host), -EMFILE, -ENOMEM. */
int inode_reopen(struct inode_table *t, struct inode *inode);
static inline int inode_fd(struct inode_table *t, struct inode *inode)
{
        int fd = atomic_load_explicit(&inode->fd, memory_order_relaxed);

        if (__builtin_expect(fd < 0, 0))
                return inode_reopen(t, inode);
        if (!atomic_load_explicit(&inode->used, memory_order_relaxed))
                atomic_store_explicit(&inode->used, true, memory_order_relaxed);
        return fd;
}
/* At most `max` descriptors for inodes kept (0: no limit; at least 2). */
void inode_fds_set_max(struct inode_table *t, size_t max);
size_t inode_fds_max(struct inode_table *t);
/* Inodes holding a descriptor now, and drops and reopens so far (stats, tests). */
size_t inode_fds_count(struct inode_table *t);
void inode_fds_stats(struct inode_table *t, uint64_t *ret_drops, uint64_t *ret_reopens);
/* FORGET: drops n lookups; the inode goes when no lookup and no request holds it. */
void inode_forget(struct inode_table *t, uint64_t nodeid, uint64_t n);
/* Forgets every inode but the root (DESTROY, session reset). */
void inode_forget_all(struct inode_table *t);
/* Inodes in the table, the root included (for tests and stats). */
size_t inode_count(struct inode_table *t);
/* Current lookup count of nodeid (0 when unknown; tests). */
uint64_t inode_lookup_count(struct inode_table *t, uint64_t nodeid);

/* ---- handles ---- */

struct handle {
        int fd;                  /* opened for I/O (O_RDONLY/O_WRONLY/O_RDWR, or a directory) */
        struct inode *inode;     /* referenced for the handle's lifetime */
        bool is_dir;
        bool writable;
        /* directories: READDIR seeks and reads the fd, one request at a time */
        pthread_mutex_t dir_mutex;
        /* table fields (refs and released: read without the table lock) */
        uint64_t fh;
        _Atomic uint32_t refs;
        atomic_bool released;
        struct handle *dead_next;
};

struct handle_table;

int handle_table_new(struct inode_table *inodes, struct handle_table **ret);
void handle_table_free(struct handle_table *t);

/* Wraps an open fd (consumed, also on failure) of `inode` (a reference is
 * taken) in a new handle; stores its fh in *ret_fh.  -ENOMEM, -ENFILE. */
int handle_add(struct handle_table *t, int fd, struct inode *inode, bool is_dir,
               bool writable, uint64_t *ret_fh);
/* The referenced handle of `fh` when it exists and is a directory iff want_dir. */
struct handle *handle_get(struct handle_table *t, uint64_t fh, bool want_dir);
void handle_put(struct handle_table *t, struct handle *h);
/* RELEASE/RELEASEDIR: the fh is invalid from now on; the fd closes when the
 * last in-flight request on it is done.  -EBADF for an unknown fh. */
int handle_release(struct handle_table *t, uint64_t fh, bool want_dir);
void handle_release_all(struct handle_table *t);
size_t handle_count(struct handle_table *t);
