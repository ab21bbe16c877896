/* SPDX-License-Identifier: GPL-2.0-or-later */
/* socket-dir.h — where the workers' sockets live.
 *
 * Not in $XDG_RUNTIME_DIR: a qemu:///system VM's QEMU runs as another user
 * (libvirt-qemu, shared by every system VM), and letting it search the
 * runtime folder would open every socket there that relies on the folder's
 * 0700 (pipewire-0 and others are 0666).  The sockets get a folder of their
 * own, /tmp/sluice-UID-XXXXXX (made by mkdtemp: nobody can have made it
 * first), owned by the user, 0700; /tmp is searchable by every user, so the
 * only ACL entries QEMU's user needs are on that folder and on a socket
 * (vm-socket-access.h).  The link $XDG_RUNTIME_DIR/sluice/sockets names it,
 * so that a restarted service finds the sockets its old workers listen on.
 * The service holds a BSD lock on the folder while it runs: systemd-tmpfiles
 * does not age a locked folder out of /tmp (tmpfiles.d(5)).
 * Main thread; plain file-system calls. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Makes (or finds again) the sockets' folder for the runtime folder runtime
 * (absolute) and returns its path; the caller frees it.  NULL with
 * SLUICE_ERROR_FAILED and a message saying what to do. */
char *sluice_socket_dir_prepare(const char *runtime, GError **error);

G_END_DECLS
