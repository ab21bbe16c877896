/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode-types.h — struct inode: what the inode table keeps per inode, and
 * who may read or write which field.  The table's calls are in inode.h; the
 * clock that decides which inodes keep their fd (fd-clock.h) and the pool
 * their structs live in (inode-pool.h) work on this struct alone. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define INODE_ROOT_ID 1

struct inode {
        /* Ordered for size (104 bytes: a million looked-up inodes are ~130 MiB
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
        union {
                char *name_ptr;         /* !name_inline: on the heap, or NULL: none */
                char name_in[16];       /* name_inline: short names, no allocation */
        };
        /* What the layer above hangs on the inode (the FUSE layer: its
         * guest lock owners, pt-lock.h).  NULL in a new inode; the table
         * never reads it, and calls the destroy function
         * (inode_table_set_destroy_fn()) before the inode goes. */
        void *private_data;
        /* A mix of the file's birth time (statx), 0 when unknown: with
         * (dev, ino) it tells the file from a later one that reuses the
         * inode number (ext4 and others do), when a dropped fd is reopened. */
        uint64_t birth;
        union {
                /* fd >= 0: the neighbours (slot indexes) in the clock of
                 * inodes holding a descriptor (fd-clock.h). */
                struct { uint32_t prev, next; } clock;
                /* fd < 0 and no birth time: a hash of the file handle the
                 * descriptor had when it was dropped (0: the file system
                 * gives none), for the same purpose as `birth`. */
                uint64_t handle_hash;
                /* Once no one holds it (a struct inode): inode_forget_all()'s
                 * list of inodes to destroy, or its chunk's list of free
                 * structs (inode-pool.h). */
                void *dead_next;
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
        bool name_inline;       /* under the lock: the name is in name_in */
};

/* The name the inode is reachable by in its parent, NULL when none (under
 * the table's lock). */
static inline const char *inode_name(const struct inode *inode)
{
        return inode->name_inline ? inode->name_in : inode->name_ptr;
}
