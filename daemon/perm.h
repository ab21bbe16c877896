/* SPDX-License-Identifier: GPL-2.0-or-later */
/* perm.h — the daemon's own permission checks between guest users.
 *
 * The guest kernel has checked the request already (default_permissions,
 * with the caller's supplementary groups, which FUSE does not send us); these
 * checks are a second line against a guest kernel that did not, and they are
 * made on the attributes the guest was shown (owners after --translate-uid/gid),
 * so they mean the same in both modes (credentials.h).  They are conservative:
 * without the caller's supplementary groups, a permission that the group
 * bits or the other bits would grant is granted, so they never refuse what a
 * correct guest kernel allowed; what they refuse, every guest kernel refuses
 * (another user's 0600 file, a sticky directory's entries of other users,
 * chmod of a file one does not own).  Guest uid 0 passes every check. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The caller (the FUSE header's ids) and a node as the guest sees it. */
struct perm_who { uint32_t uid, gid; };
struct perm_node { uint32_t uid, gid; mode_t mode; };

/* mask: R_OK | W_OK | X_OK.  0 or -EACCES. */
int perm_access(const struct perm_who *who, const struct perm_node *node, int mask);
/* Changing a node's mode, owner uid or explicit times: its owner (or root).  0 or -EPERM. */
int perm_owner(const struct perm_who *who, const struct perm_node *node);
/* Removing or renaming away `victim` from directory `dir`: write and search
 * on dir (-EACCES), and when dir is sticky the caller owns victim or dir (-EPERM). */
int perm_remove(const struct perm_who *who, const struct perm_node *dir, const struct perm_node *victim);
