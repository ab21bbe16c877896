/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-name-case.c — --case=insensitive: which host name a guest's name means
 * (pt_name_case_resolve(), pt-name.h).
 *
 * A name that exists as spelled is always that name (the common case, and
 * the only way to reach one of two twins).  Otherwise the folder `dir`, and
 * only it, is searched for names that fold alike (folder-index.h): the
 * answer is one of that folder's own entries, which the handler then opens
 * with its usual confined calls (O_NOFOLLOW, RESOLVE_BENEATH), so a folded
 * match never leads through a symlink or out of the folder.
 *
 *   use           one folds alike       several (twins)    none
 *   FIND          that name             as spelled         as spelled
 *                                       (so ENOENT)
 *   MAKE_OPEN     that name (opened)    -EEXIST            as spelled (made)
 *   MAKE_EXCL     -EEXIST               -EEXIST            as spelled (made)
 *   MAKE_REPLACE  that name (replaced)  -EEXIST            as spelled (made)
 *
 * A folder the worker cannot list (search permission only) is answered as
 * spelled: folding needs its names.  The daemon's own changes to a folder
 * bring its index up to date (pt_name_case_after()); the host's move its
 * times, which the index checks on every lookup. */
#include "pt-name.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "case-fold.h"
#include "folder-index.h"

int pt_name_case_resolve(struct pt_fs *fs, struct inode *dir, enum pt_name_use use,
                         struct pt_name *name)
{
        char found[FINDEX_NAME_SIZE];
        struct stat st;
        int fd = inode_fd(fs->inodes, dir);

        if (fd < 0)
                return fd;
        if (fstatat(fd, name->name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                return 0;
        int match = findex_lookup(fs->case_index, fd, name->name, name->len, found);
        switch (match) {
        case FINDEX_ONE:
                if (use == PT_NAME_MAKE_EXCL)
                        return -EEXIST;
                name->len = strlen(found);
                memcpy(name->buf, found, name->len + 1);
                name->name = name->buf;
                return 0;
        case FINDEX_MANY:
                return use == PT_NAME_FIND ? 0 : -EEXIST;
        default:
                /* FINDEX_NONE, or a folder we cannot list: as spelled (the
                 * operation then answers for that name) */
                return 0;
        }
}

int pt_name_case_rename_target(struct pt_fs *fs, struct freq *r, struct inode *olddir,
                               const struct pt_name *source, struct inode *newdir, size_t *pos,
                               enum pt_name_use use, struct pt_name *ret)
{
        const unsigned modes = r->name_modes;
        int err;

        /* the seam without its case step, then the step here */
        r->name_modes = modes & ~PT_CASE_INSENSITIVE;
        err = pt_name_from_guest(fs, r, newdir, pos, use, ret);
        r->name_modes = modes;
        if (err < 0)
                return err;
        if (newdir == olddir && casefold_equal(source->name, source->len, ret->name, ret->len))
                return 0;
        return pt_name_case_resolve(fs, newdir, use, ret);
}

void pt_name_case_stamp(const struct inode *dir, struct pt_name_change *ret)
{
        ret->on = dir->fd >= 0 && findex_stamp(dir->fd, &ret->stamp) == 0;
}

void pt_name_case_note(struct pt_fs *fs, const struct inode *dir, const struct pt_name_change *change,
                       const char *removed, const char *added)
{
        findex_note_change(fs->case_index, dir->fd, &change->stamp, removed, added);
}

void pt_name_case_renamed(struct pt_fs *fs, const struct inode *olddir, const struct pt_name_change *old_change,
                          const char *oldname, const struct inode *newdir,
                          const struct pt_name_change *new_change, const char *newname, unsigned flags)
{
        const bool exchange = flags & RENAME_EXCHANGE;

        if (newdir == olddir) {
                pt_name_case_after(fs, olddir, old_change, exchange ? NULL : oldname, exchange ? NULL : newname);
                return;
        }
        pt_name_case_after(fs, olddir, old_change, exchange ? NULL : oldname, NULL);
        pt_name_case_after(fs, newdir, new_change, NULL, exchange ? NULL : newname);
}
