/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-path.h — which host folders may be shared, and by which path.
 *
 * A share is stored and shown with the folder's real path (symbolic links
 * and ".." resolved when it is added): a link that is changed later does not
 * move the share somewhere else.  Refused, with SLUICE_ERROR_NOT_SHAREABLE:
 * the file system's root, /proc, /sys, /dev and /run with everything below
 * them (except the removable drives under /run/media and the network folders
 * GNOME mounts under /run/user/UID/gvfs), and any folder on a file system the
 * kernel makes up (proc, sysfs, cgroup, debugfs, tracefs, bpf …).  tmpfs is
 * a real place people keep files (/tmp): it may be shared.
 *
 * The folder a worker serves is the folder that was checked: the check
 * records its identity (SluiceFolderId), and every launch of its worker opens
 * the stored real path again without following any symbolic link and
 * verifies that identity (sluice_share_path_open), then hands the worker the
 * opened folder (sluice-fs --shared-dir-fd), so no path is resolved between
 * the check and the serving.  Without it, a guest of a share that holds this
 * folder (a parent folder shared with another VM) could swap a folder on the
 * path for a link to the user's home between the check and a (re)start. */
#pragma once

#include <sys/types.h>

#include <glib.h>

G_BEGIN_DECLS

/* Which folder: its file system (st_dev) and its inode there.  Not saved in
 * shares.ini: device numbers change across boots and re-plugs (btrfs
 * subvolumes, removable drives), so it holds for one run of the service,
 * recorded when a share is added or at its first start after loading. */
typedef struct {
        gboolean known;
        dev_t dev;
        ino_t ino;
} SluiceFolderId;

/* PATH (absolute) resolved to the real folder, checked: it exists, is a
 * folder, may be shared, and the service's user can read and enter it.
 * Errors: INVALID_ARGUMENT, NOT_FOUND, NOT_A_DIRECTORY, PERMISSION_DENIED,
 * NOT_SHAREABLE, FAILED; each message says what to do. */
gboolean sluice_share_path_resolve(const char *path, char **ret_resolved, SluiceFolderId *ret_id,
                                   GError **error);

/* Opens the folder at PATH, a real path as stored (absolute, no "." or ".."),
 * O_PATH|O_CLOEXEC, one component at a time from "/" with O_NOFOLLOW: a
 * symbolic link anywhere on the path is refused, not followed.  Checks that
 * it is a folder on no pseudo file system and, when EXPECTED is known, that
 * it is that folder.  Returns the fd (the caller closes it) and its identity
 * in RET_ID (may be NULL), or -1 with NOT_FOUND, NOT_A_DIRECTORY,
 * PERMISSION_DENIED, NOT_SHAREABLE (a link on the path, another folder in its
 * place, a pseudo file system) or FAILED.  Blocks (a network folder can
 * hang): call it in a thread. */
int sluice_share_path_open(const char *path, const SluiceFolderId *expected, SluiceFolderId *ret_id,
                           GError **error);

/* Only whether PATH (absolute) is a place that may be shared: the root, the
 * system trees and pseudo file systems are not (NOT_SHAREABLE).  A path that
 * does not exist (a drive not plugged in) passes on its name alone. */
gboolean sluice_share_path_check_location(const char *path, GError **error);
/* The same by the name alone: touches no file system (shares.ini is read at
 * login, when a network folder may hang). */
gboolean sluice_share_path_check_name(const char *path, GError **error);

G_END_DECLS
