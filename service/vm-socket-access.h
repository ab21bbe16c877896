/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-socket-access.h — letting QEMU reach a worker's socket when QEMU runs as
 * another user (qemu:///system).  The least access that works: a POSIX ACL
 * entry for QEMU's user on the socket (rw, to connect) and search-only (x) on
 * each of our own directories above it that the user could not enter.
 *
 * A grant lets nobody else do more: where the ACL's mask must grow for QEMU's
 * user, the other entries it limits are cut to what they could do before.
 * Every change is remembered (the path's whole ACL before and after) and
 * counted: a folder's entry is shared by every device whose socket lies below
 * it, and is given back when the last of them goes.  The give-back restores
 * the ACL exactly (getfacl before == after) when nobody changed it meanwhile;
 * otherwise their changes stay, and only what is still as Sluice set it goes
 * back (never more than either allowed: vm-socket-access.c).  Entries Sluice
 * did not add are never removed.
 * Grants are keyed by device: (domain UUID, tag).  Thread-safe.  The work
 * (libacl: local file-system calls, but they may block on a slow or remote
 * file system) runs in one thread of its own, in the order it was asked for:
 * revoke returns at once; grant and revoke_all wait for it, so they belong in
 * worker threads (hotplug.c's attach runs in a GTask thread; revoke_all also
 * at exit). */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* Grants uid access to socket_path for the device (domain_uuid, tag); a
 * device granted again first gives back what it held.  Returns FALSE with
 * SLUICE_ERROR_PERMISSION_DENIED and a message that says what to do when
 * access cannot be granted (a file system without ACLs, a
 * directory that belongs to someone else); nothing is left granted then. */
gboolean sluice_socket_access_grant(const char *domain_uuid, const char *tag,
                                    const char *socket_path, uid_t uid, GError **error);

/* Gives back what the device (domain_uuid, tag) was granted: the socket's
 * entry, and each folder's entry once no other device needs it.  tag NULL:
 * every device of the domain (it stopped).  Nothing granted: no-op. */
void sluice_socket_access_revoke(const char *domain_uuid, const char *tag);

/* Gives back everything (the service stops); returns when it is done. */
void sluice_socket_access_revoke_all(void);

G_END_DECLS
