/* SPDX-License-Identifier: GPL-2.0-or-later */
/* table-state.h — the FUSE layer's state for a successor (the `tables`
 * memfd of the fd store): the INIT result and one record per inode slot and
 * per handle slot, written as the tables change (fs-session.h).
 *
 * Layout: a header page (magic, version, record sizes, a checksum of those,
 * the INIT record, and a directory of extents: where in the file the records
 * of slot chunk k live, slot-table.h's chunks), then extents appended as the
 * tables grow.  An extent is allocated (ftruncate: zeros) before the
 * directory names it; a directory entry is one aligned 8-byte store.  A name
 * longer than TSTATE_NAME_INLINE goes to a name record of 64 bytes (or 256
 * above 64) handed out lowest first, written before the inode record names
 * it and given back after it no longer does: long names take the pages they
 * fill.  A million inodes named as /usr's files take ~102 MiB
 * (bench/state-size), the in-memory table ~130 MiB.
 *
 * Crash consistency: every record starts with a state word.  A record of
 * several fields is first marked TSTATE_WRITING, then written, then marked
 * TSTATE_LIVE: a release store, a fence after the WRITING mark and a
 * release store for LIVE keep the fields between the two marks.  A SIGKILL
 * stops a process between two instructions in program order and its stores
 * so far stay in the memfd.  A record a SIGKILL caught WRITING is
 * dropped by the successor, with every inode below it.  A lookup count
 * changes with one aligned 8-byte store: never torn; a leaked count is
 * harmless.  A record goes (FORGET, RELEASE) with one store of TSTATE_FREE.
 *
 * Every call is made under the lock of the table the record belongs to (the
 * inode table's for inode records, the handle table's for handles): one
 * writer per record.  Growing the file takes the state's own lock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TSTATE_MAGIC 0x31534c5445424154ull   /* "TABETLS1" little-endian */
#define TSTATE_VERSION 1u
#define TSTATE_NAME_INLINE 32u
#define TSTATE_NAME_MAX 255u

enum {
        TSTATE_FREE = 0,
        TSTATE_WRITING = 1,
        TSTATE_LIVE = 2,
};

/* The INIT result fuse-dispatch.c keeps. */
struct tstate_init {
        uint32_t minor;
        uint32_t max_write;
        uint32_t flags;          /* out.flags */
        uint32_t flags2;         /* out.flags2 */
        uint32_t supp_group;     /* FS_CREATE_SUPP_GROUP negotiated (0/1) */
        uint32_t reserved;
};

/* What an inode record says (the copy restore works on). */
struct tstate_inode {
        uint32_t gen;
        uint64_t dev, ino;
        uint64_t birth;          /* inode_birth(), 0: unknown */
        uint64_t handle_hash;    /* when birth is 0 */
        uint64_t nlookup;
        uint32_t parent_idx;     /* 0: none (the root, an O_TMPFILE, a nameless inode) */
        uint32_t parent_gen;
        uint32_t type;           /* S_IFMT bits */
        bool stale;
        size_t name_len;         /* 0: none */
        char name[TSTATE_NAME_MAX + 1];
};

struct tstate_handle {
        uint32_t gen;
        uint64_t nodeid;
        int flags;               /* the open flags, without O_CREAT, O_TRUNC, O_EXCL */
        bool is_dir;
        bool had_locks;          /* POSIX or flock() locks were taken through it */
};

struct tstate;

/* A new, empty state in a memfd; *ret_fd is a descriptor of it (the caller's). */
int tstate_new(struct tstate **ret, int *ret_fd);
/* Maps a state another worker wrote (fd consumed); checks the header and the
 * extent directory.  -EBADMSG with why. */
int tstate_open(int fd, struct tstate **ret, char *why, size_t why_size);
void tstate_free(struct tstate *st);
/* Allocated bytes of the memfd (st_blocks: holes are free) and its size. */
void tstate_size(struct tstate *st, uint64_t *ret_allocated, uint64_t *ret_size);
/* Whether a record could not be written (out of memory): the state is
 * incomplete from then on, and a successor refuses it. */
bool tstate_broken(struct tstate *st);

void tstate_set_init(struct tstate *st, const struct tstate_init *init);
/* false: no INIT recorded (a successor starts before INIT: fine). */
bool tstate_get_init(struct tstate *st, struct tstate_init *ret);
void tstate_clear_init(struct tstate *st);

/* Writes the whole record of inode slot idx.  `inserting`: a new inode
 * (CRASH_POINT("inode-insert") sits between the WRITING mark and the rest). */
void tstate_inode_write(struct tstate *st, uint32_t idx, const struct tstate_inode *rec,
                        bool inserting);
/* The handle hash the record of slot idx holds (0: none), for a rewrite
 * that has no other source of it. */
uint64_t tstate_inode_handle_hash(struct tstate *st, uint32_t idx);
void tstate_inode_set_nlookup(struct tstate *st, uint32_t idx, uint64_t nlookup);
void tstate_inode_set_stale(struct tstate *st, uint32_t idx);
void tstate_inode_clear(struct tstate *st, uint32_t idx);
/* After a restore: the long-name records the live inode records name are
 * in use (a successor's own writes must not reuse them).  -ENOMEM. */
int tstate_take_long_names(struct tstate *st);

void tstate_handle_write(struct tstate *st, uint32_t idx, const struct tstate_handle *rec);
void tstate_handle_set_locks(struct tstate *st, uint32_t idx);
void tstate_handle_clear(struct tstate *st, uint32_t idx);

/* Reading a state (restore): slots below the returned limit may hold records. */
uint32_t tstate_inode_limit(struct tstate *st);
uint32_t tstate_handle_limit(struct tstate *st);
/* The record's state word (TSTATE_*, or another value: hostile) and, when
 * LIVE, a copy of it.  -EBADMSG when the record's fields are malformed
 * (with why). */
int tstate_inode_read(struct tstate *st, uint32_t idx, unsigned *ret_state,
                      struct tstate_inode *ret, char *why, size_t why_size);
int tstate_handle_read(struct tstate *st, uint32_t idx, unsigned *ret_state,
                       struct tstate_handle *ret, char *why, size_t why_size);
