/* SPDX-License-Identifier: GPL-2.0-or-later */
/* handle.h — the handle table of sluice-fs: open files and directories the
 * guest knows by an fh.
 *
 * An fh is a number of a slot table (slot-table.h): a stale or forged fh
 * finds nothing.  Every lookup returns a referenced handle that the caller
 * puts back when the request is done, so a concurrent RELEASE on another
 * queue thread never closes an fd still in use; handle_get()/handle_put()
 * take no lock.  Handle structs are never freed while the table lives (a
 * late lock-free reader may still look at one): a released one waits on a
 * spare list for reuse.  Thread-safe. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inode.h"

struct handle {
        int fd;                  /* opened for I/O (O_RDONLY/O_WRONLY/O_RDWR, or a directory) */
        struct inode *inode;     /* referenced for the handle's lifetime */
        bool is_dir;
        bool writable;
        int open_flags;          /* as opened, without O_CREAT, O_TRUNC, O_EXCL (a successor's reopen) */
        /* Locks were taken through it (a successor's state says so). */
        atomic_bool had_locks;
        /* Rebuilt after a restart from one that had locks: they died with
         * the previous worker (pt-lock.h says what a lock request gets). */
        atomic_bool locks_lost;
        /* directories: READDIR seeks and reads the fd, one request at a time */
        pthread_mutex_t dir_mutex;
        /* table fields (refs and released: read without the table lock) */
        uint64_t fh;
        _Atomic uint32_t refs;
        atomic_bool released;
        void *dead_next;         /* a struct handle: the spare list, or a list to destroy */
};

struct handle_table;

int handle_table_new(struct inode_table *inodes, struct handle_table **ret);
void handle_table_free(struct handle_table *t);

/* Wraps an open fd (consumed, also on failure) of `inode` (a reference is
 * taken), opened with open_flags, in a new handle; stores its fh in
 * *ret_fh.  -ENOMEM, -ENFILE. */
int handle_add(struct handle_table *t, int fd, struct inode *inode, bool is_dir,
               int open_flags, uint64_t *ret_fh);
/* A lock was taken through h: noted in the state, once. */
void handle_note_locks(struct handle_table *t, struct handle *h);

/* ---- the state a successor rebuilds the table from (table-state.h) ---- */
struct tstate;
/* Keeps a record of every handle in st from now on. */
void handle_table_set_state(struct handle_table *t, struct tstate *st);
/* Opens a rebuilt handle's file again: an fd or -errno. */
typedef int (*handle_reopen_fn)(void *data, struct inode *inode, int open_flags, bool is_dir);
/* Rebuilds an empty table from the records in st with the same fhs, after
 * inode_table_restore() on the same state (a handle whose inode was not
 * rebuilt is dropped).  Each is reopened with `reopen`; one that cannot be
 * keeps its fh and fails its requests (EBADF).  -EBADMSG with why. */
int handle_table_restore(struct handle_table *t, struct tstate *st, handle_reopen_fn reopen,
                         void *data, char *why, size_t why_size);
/* The referenced handle of `fh` when it exists and is a directory iff want_dir. */
struct handle *handle_get(struct handle_table *t, uint64_t fh, bool want_dir);
void handle_put(struct handle_table *t, struct handle *h);
/* RELEASE/RELEASEDIR: the fh is invalid from now on; the fd closes when the
 * last in-flight request on it is done.  -EBADF for an unknown fh. */
int handle_release(struct handle_table *t, uint64_t fh, bool want_dir);
void handle_release_all(struct handle_table *t);
size_t handle_count(struct handle_table *t);
