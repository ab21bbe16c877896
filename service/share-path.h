/* share-path.h — which host folders may be shared, and by which path.
 *
 * A share is stored and shown with the folder's real path (symbolic links
 * and ".." resolved when it is added): a link that is changed later does not
 * move the share somewhere else.  Refused, with SLUICE_ERROR_NOT_SHAREABLE:
 * the file system's root, /proc, /sys, /dev and /run with everything below
 * them (except the removable drives under /run/media and the network folders
 * GNOME mounts under /run/user/UID/gvfs), and any folder on a file system the
 * kernel makes up (proc, sysfs, cgroup, debugfs, tracefs, bpf …).  tmpfs is
 * a real place people keep files (/tmp): it may be shared. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* PATH (absolute) resolved to the real folder, checked: it exists, is a
 * folder, may be shared, and the service's user can read and enter it.
 * Errors: INVALID_ARGUMENT, NOT_FOUND, NOT_A_DIRECTORY, PERMISSION_DENIED,
 * NOT_SHAREABLE, FAILED; each message says what to do. */
gboolean sluice_share_path_resolve(const char *path, char **ret_resolved, GError **error);

/* Only whether PATH (absolute) is a place that may be shared: the root, the
 * system trees and pseudo file systems are not (NOT_SHAREABLE).  A path that
 * does not exist (a drive not plugged in) passes on its name alone. */
gboolean sluice_share_path_check_location(const char *path, GError **error);
/* The same by the name alone: touches no file system (shares.ini is read at
 * login, when a network folder may hang). */
gboolean sluice_share_path_check_name(const char *path, GError **error);

G_END_DECLS
