/* SPDX-License-Identifier: GPL-2.0-or-later */
/* folder-index.h — which host name of a folder a case-insensitive name means.
 *
 * With --case=insensitive a name the guest sends that misses exactly is
 * looked up by its folded key (case-fold.h) among the names of that one
 * folder.  Scanning the folder on every miss would make each miss cost the
 * folder's size, so the index keeps, per folder, a hash of folded key → host
 * name, built by one scan (getdents64 through a fresh fd of the folder) and
 * trusted while the folder's mtime and ctime, to the nanosecond, are what
 * they were when the scan began: any change of the folder's entries, by the
 * host or by us, moves them.
 *
 * A scan that began less than a timestamp tick after the folder last changed
 * answers its own request but is not kept: a change in that same tick could
 * leave the times as they were (git's "racily clean" index entries).
 *
 * The daemon's own changes (a guest copying a thousand files into a folder)
 * would make every next miss read the whole folder again: instead they
 * bring the index up to date (findex_note_change(): the name removed, the
 * name added, the times after), when the index was the folder just before
 * the change.  A host change in the same tick as one of ours, or between
 * our stamp and our change, would not show: so such an index is read again
 * on the first miss once the folder has been quiet for a second.  Until then
 * (while the guest keeps changing the folder) a name the host made in that
 * window may be missed by a folded lookup; its exact name always works.
 *
 * Twins: where two or more names of a folder fold alike (`Foo` and `foo`,
 * made on the host), the index records the key as ambiguous, and a folded
 * lookup of it answers FINDEX_MANY, never one of them at random: each stays
 * reachable by its exact name only.
 *
 * Memory is bounded: at most FINDEX_MAX_FOLDERS folders, FINDEX_MAX_NAMES
 * names and FINDEX_MAX_BYTES bytes of names, keys and slots in all (or the
 * limits given to findex_new); the least recently used folders are evicted
 * to make room.  A folder too big for the bounds on its own is scanned on
 * every miss and never kept: correct, slower (its size is the guest's cost,
 * not the daemon's memory).
 *
 * Threads: every function may be called from any thread; one mutex guards
 * the index, and scans run outside it.  Hash keys are seeded from getrandom
 * (SipHash-1-3), so names made in the guest cannot be picked to collide.
 *
 * System calls: fstat, clock_gettime (every lookup; the clock through the
 * vDSO), openat(dir, ".", O_RDONLY|O_DIRECTORY), getdents64, close (a
 * scan); fstat (findex_stamp, findex_note_change); getrandom (findex_new). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FINDEX_MAX_FOLDERS 1024
#define FINDEX_MAX_NAMES   (1u << 20)
#define FINDEX_MAX_BYTES   (96u << 20)

/* A name the index hands back fits in this (NAME_MAX and its NUL). */
#define FINDEX_NAME_SIZE 256

struct findex_limits {
        size_t max_folders;
        size_t max_names;
        size_t max_bytes;
};

enum findex_match {
        FINDEX_NONE = 0,        /* no name of the folder folds like it */
        FINDEX_ONE = 1,         /* exactly one: its host name is returned */
        FINDEX_MANY = 2,        /* twins: several fold like it, none is chosen */
};

struct findex_stats {
        size_t folders, names, bytes;   /* kept now */
        uint64_t scans;                 /* folders read */
        uint64_t hits;                  /* lookups answered by a kept index */
};

struct findex;

/* A new, empty index with `limits` (NULL: the FINDEX_MAX_* defaults; a zero
 * field takes its default too).  NULL when out of memory. */
struct findex *findex_new(const struct findex_limits *limits);
void findex_free(struct findex *ix);

/* The names of the folder `dir_fd` (any fd of a directory, O_PATH is fine)
 * that fold like `name` (`len` bytes).  Returns FINDEX_ONE with that name in
 * ret_name (FINDEX_NAME_SIZE bytes), FINDEX_NONE, FINDEX_MANY, or -errno
 * when the folder cannot be read (-ENOTDIR, -EACCES, -ENOMEM, …).  The
 * returned name was in the folder when it was read: the caller opens it with
 * its usual confined calls and handles -ENOENT as any race. */
int findex_lookup(struct findex *ix, int dir_fd, const char *name, size_t len,
                  char ret_name[FINDEX_NAME_SIZE]);

/* Drops what the index knew of the folder (st_dev, st_ino). */
void findex_forget(struct findex *ix, dev_t dev, ino_t ino);

/* A folder's identity and times, taken before the daemon changes it. */
struct findex_stamp {
        dev_t dev;
        ino_t ino;
        struct timespec mtime, ctime;
};

/* The stamp of the folder `dir_fd` now (one fstat); 0 or -errno. */
int findex_stamp(int dir_fd, struct findex_stamp *ret);

/* The daemon just changed the folder `dir_fd`, whose stamp before the change
 * was `before_change`: `removed` (NULL: none) is no longer a name of it,
 * `added` (NULL: none) is one now (a rename within one folder passes both;
 * a replaced target is `added` again).  Brings the folder's index up to
 * date, or drops it when it was not the folder before the change, the
 * change makes twins ambiguous, or it no longer fits the bounds. */
void findex_note_change(struct findex *ix, int dir_fd, const struct findex_stamp *before_change,
                        const char *removed, const char *added);

void findex_get_stats(struct findex *ix, struct findex_stats *ret);
