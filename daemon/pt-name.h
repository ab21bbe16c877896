/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-name.h — the seam every name passes between the guest and the host
 * folder.  Private to the FUSE layer (pt-*.c).
 *
 * In: every handler that takes a name from the guest (LOOKUP, CREATE, MKNOD,
 * MKDIR, SYMLINK's link name, LINK, RENAME/RENAME2's two names, UNLINK,
 * RMDIR) reads it with pt_name_from_guest() instead of freq_name(): it checks
 * the name as freq_name() does, decodes it for --names=windows (win-names.h)
 * and, for --case=insensitive, lets pt_name_case_resolve() pick the host name.
 * Not names in this sense: xattr names, symlink targets (data for the guest,
 * never followed on the host: passed unchanged both ways, READLINK too), and
 * the name a TMPFILE request carries (ignored).
 *
 * Out: the one reply that carries host names, a READDIR(PLUS) entry, goes
 * through pt_name_to_guest() (pt-dir.c).  LISTXATTR carries xattr names.
 *
 * The modes are switched live (Worker1.SetNames): the dispatcher reads them
 * once per request into r->name_modes, so both names of a RENAME and every
 * entry of one READDIR reply are read and written the same way.  In posix +
 * sensitive mode (the default) the seam is freq_name() and one branch. */
#pragma once

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "folder-index.h"
#include "pt-internal.h"

/* r->name_modes / pt_fs.name_modes bits. */
#define PT_NAMES_WINDOWS     0x1u   /* --names=windows */
#define PT_CASE_INSENSITIVE  0x2u   /* --case=insensitive */

static inline unsigned pt_name_modes_of(enum fs_names_mode names, enum fs_case_mode case_mode)
{
        return (names == FS_NAMES_WINDOWS ? PT_NAMES_WINDOWS : 0) |
               (case_mode == FS_CASE_INSENSITIVE ? PT_CASE_INSENSITIVE : 0);
}

/* What the name is for; the case-insensitive resolution (and nothing else
 * yet) depends on it. */
enum pt_name_use {
        PT_NAME_FIND,          /* must exist: LOOKUP, UNLINK, RMDIR, a rename's source */
        PT_NAME_MAKE_EXCL,     /* must not exist: MKDIR, MKNOD, SYMLINK, LINK, CREATE|O_EXCL */
        PT_NAME_MAKE_OPEN,     /* CREATE without O_EXCL: an existing one is opened */
        PT_NAME_MAKE_REPLACE,  /* a rename's target: an existing one is replaced */
};

/* A name in host form.  `name` is NUL-terminated, `len` bytes long, and
 * points either into the request's arguments (nothing to change: no copy) or
 * into `buf`; valid while the request is. */
struct pt_name {
        const char *name;
        size_t len;
        char buf[NAME_MAX + 1];
};

/* Reads the NUL-terminated name at *pos of the request's arguments (and
 * advances *pos past it) into `ret`, as the host name it means in `dir`:
 * -EINVAL for a name that is empty, ".", "..", holds a '/' or decodes to one
 * of those; -ENAMETOOLONG for one longer than NAME_MAX bytes on the host;
 * what pt_name_case_resolve() returns.  `dir` is the directory the name is in
 * (for the case-insensitive search, which gets its fd made valid). */
int pt_name_from_guest_mapped(struct pt_fs *fs, struct freq *r, struct inode *dir, size_t *pos,
                              enum pt_name_use use, struct pt_name *ret);

/* Inline, so that posix + sensitive mode costs what freq_name() did. */
static inline int pt_name_from_guest(struct pt_fs *fs, struct freq *r, struct inode *dir,
                                     size_t *pos, enum pt_name_use use, struct pt_name *ret)
{
        int len;

        if (__builtin_expect(r->name_modes != 0, 0))
                return pt_name_from_guest_mapped(fs, r, dir, pos, use, ret);
        len = freq_name(r, pos, &ret->name);
        if (len < 0)
                return len;
        ret->len = (size_t)len;
        return 0;
}

/* The hook of --case=insensitive (pt-name-case.c): called with `name` already
 * in host spelling (decoded) when r->name_modes has PT_CASE_INSENSITIVE;
 * `dir` is a directory with a valid fd (held for the request).  It
 * may replace `name` (e.g. by the existing host name in `dir` that equals it
 * after case folding, copied into name->buf) or refuse it (-errno: e.g.
 * -EEXIST for a MAKE_EXCL name that another spelling already takes).
 * Returning 0 without a change keeps the name as the guest spelled it. */
int pt_name_case_resolve(struct pt_fs *fs, struct inode *dir, enum pt_name_use use,
                         struct pt_name *name);

/* RENAME's target under --case=insensitive: read as spelled (into `ret`,
 * from *pos, in `newdir`) and resolved by pt_name_case_resolve() with `use`
 * only when it is not the source's own name (`source`, in `olddir`) in
 * another case: `foo` to `FOO` renames the file, as Windows does, where the
 * folded match would name the source itself. */
int pt_name_case_rename_target(struct pt_fs *fs, struct freq *r, struct inode *olddir,
                               const struct pt_name *source, struct inode *newdir, size_t *pos,
                               enum pt_name_use use, struct pt_name *ret);

/* --case=insensitive keeps each folder's index of folded names up to date
 * through the worker's own changes (folder-index.h), so that a guest making
 * many files in one folder does not have the whole folder read again on
 * each: a handler that adds or removes names in `dir` takes the folder's
 * stamp before its system call (pt_name_case_before()) and, after it
 * succeeded, says what changed (pt_name_case_after(): `removed`, `added`,
 * either NULL).  Outside that mode both do nothing.  `dir`'s fd must be
 * valid (PT_NEED_FD). */
struct pt_name_change {
        bool on;
        struct findex_stamp stamp;
};
void pt_name_case_stamp(const struct inode *dir, struct pt_name_change *ret);
void pt_name_case_note(struct pt_fs *fs, const struct inode *dir, const struct pt_name_change *change,
                       const char *removed, const char *added);

/* After a RENAME (RENAME_EXCHANGE in `flags` leaves both names where they
 * were), with the stamps pt_name_case_stamp() took of both folders. */
void pt_name_case_renamed(struct pt_fs *fs, const struct inode *olddir, const struct pt_name_change *old_change,
                          const char *oldname, const struct inode *newdir,
                          const struct pt_name_change *new_change, const char *newname, unsigned flags);

/* Inline, so that case-sensitive requests pay one test each. */
static inline void pt_name_case_before(struct pt_fs *fs, const struct freq *r, const struct inode *dir,
                                       struct pt_name_change *ret)
{
        (void) fs;
        ret->on = false;
        if (__builtin_expect(r->name_modes & PT_CASE_INSENSITIVE, 0))
                pt_name_case_stamp(dir, ret);
}

static inline void pt_name_case_after(struct pt_fs *fs, const struct inode *dir,
                                      const struct pt_name_change *change, const char *removed,
                                      const char *added)
{
        if (__builtin_expect(change->on, 0))
                pt_name_case_note(fs, dir, change, removed, added);
}

/* The most bytes a host name of NAME_MAX bytes takes in guest form. */
#define PT_NAME_GUEST_MAX (NAME_MAX * 3)

/* Writes host name `host` (`len` bytes, 1…NAME_MAX) as the guest is to see
 * it under `modes` into `out` (PT_NAME_GUEST_MAX + 1 bytes, NUL-terminated);
 * returns its length.  "." and ".." stay as they are. */
size_t pt_name_to_guest(unsigned modes, const char *host, size_t len, char *out);
