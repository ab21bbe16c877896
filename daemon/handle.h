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
