/* SPDX-License-Identifier: GPL-2.0-or-later */
/* perm.c — conservative daemon-side permission checks (see perm.h). */
#include "perm.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

int perm_access(const struct perm_who *who, const struct perm_node *node, int mask)
{
        mode_t granted;

        mask &= R_OK | W_OK | X_OK;
        if (who->uid == 0 || mask == 0)
                return 0;
        if (who->uid == node->uid) {
                granted = (node->mode >> 6) & 7;
        } else if (who->gid == node->gid) {
                granted = (node->mode >> 3) & 7;
        } else {
                /* Group or other: we cannot tell without the supplementary
                 * groups, so either class's grant is enough. */
                granted = ((node->mode >> 3) | node->mode) & 7;
        }
        return ((mode_t)mask & ~granted) ? -EACCES : 0;
}

int perm_owner(const struct perm_who *who, const struct perm_node *node)
{
        return who->uid == 0 || who->uid == node->uid ? 0 : -EPERM;
}

int perm_remove(const struct perm_who *who, const struct perm_node *dir, const struct perm_node *victim)
{
        int r = perm_access(who, dir, W_OK | X_OK);

        if (r < 0)
                return r;
        if (!(dir->mode & S_ISVTX) || who->uid == 0)
                return 0;
        return who->uid == victim->uid || who->uid == dir->uid ? 0 : -EPERM;
}
