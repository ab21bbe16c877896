/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-case.h — --case=insensitive: which host name of a folder a request's
 * name means, and whether making it would make a second file beside one
 * that folds alike.
 *
 * Called for every name a request carries (through pt-name.c) once the name
 * is a host name; only in insensitive mode.  A name that exists as spelled
 * is always that name.  Otherwise the folder `dir_fd`, and only it, is
 * searched for names that fold alike (folder-index.h): the answer is a name
 * read from that folder's own entries, opened afterwards by the caller's
 * usual confined calls (O_NOFOLLOW, RESOLVE_BENEATH), so a folded match
 * never leads through a symlink or out of the folder.
 *
 *   intent        one folds alike       several (twins)    none
 *   FIND          that name             ENOENT (as given)  as given
 *   MAKE_OPEN     that name (opened)    -EEXIST            as given (made)
 *   MAKE_EXCL     -EEXIST               -EEXIST            as given (made)
 *   MAKE_REPLACE  that name (replaced)  -EEXIST            as given (made)
 *
 * A folder the worker cannot read (search permission only) is answered as
 * given: folding needs its names.  System calls: fstatat, and
 * findex_lookup()'s (folder-index.h). */
#pragma once

#include "folder-index.h"

enum pt_case_intent {
        PT_CASE_FIND,           /* the name must exist: LOOKUP, UNLINK, a rename's source … */
        PT_CASE_MAKE_OPEN,      /* made unless it exists, else opened: CREATE without O_EXCL */
        PT_CASE_MAKE_EXCL,      /* made, never an existing one: MKDIR, MKNOD, SYMLINK, LINK, O_EXCL */
        PT_CASE_MAKE_REPLACE,   /* made or replaced: a rename's target */
};

/* Sets *ret_name to `name` or to `buf` (FINDEX_NAME_SIZE bytes, holding a
 * host name of the folder that folds like `name`) and returns 0, or returns
 * -EEXIST as the table above says. */
int pt_case_resolve(struct findex *ix, int dir_fd, const char *name, enum pt_case_intent intent,
                    char buf[FINDEX_NAME_SIZE], const char **ret_name);
