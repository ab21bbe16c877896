/* vm-socket-access.h — letting QEMU reach a worker's socket when QEMU runs as
 * another user (qemu:///system).  The least access that works: a POSIX ACL
 * entry for QEMU's user on the socket (rw, to connect) and search-only (x) on
 * each of our own directories above it that the user could not enter. */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* Returns FALSE with SLUICE_ERROR_PERMISSION_DENIED and a message that says
 * what to do when access cannot be granted (no setfacl, a file system
 * without ACLs, a directory that belongs to someone else). */
gboolean sluice_socket_access_grant(const char *socket_path, uid_t uid, GError **error);

G_END_DECLS
