/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-qemu-pid.h — which process is a running domain's QEMU, as libvirt
 * recorded it, so that its worker serves that process only (sluice-fs
 * --allow-peer-pid, Worker1.SetPeerPid).
 *
 * libvirt's QEMU driver writes the pid of each running domain's QEMU to
 * STATEDIR/NAME.pid and removes it when the domain stops: for qemu:///system
 * /run/libvirt/qemu (root's folder, the file 0644: any user reads it, only
 * root writes it), for qemu:///session $XDG_RUNTIME_DIR/libvirt/qemu/run or,
 * without a runtime folder, ~/.cache/libvirt/qemu/run (our own).  No libvirt
 * API call returns the pid.  The file must be a regular file owned by root
 * (system) or by us (session), the process must exist and run as QEMU's
 * user: another user's file or process is never taken for QEMU.
 * Main thread or any thread: no shared state. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The pid file of domain NAME under URI, or NULL with SLUICE_ERROR_UNSUPPORTED
 * for a URI whose layout is not libvirt's local QEMU driver's (a remote
 * host, qemu:///embed) or a name that cannot be a file name. */
char *sluice_vm_qemu_pid_path(const char *uri, const char *name, GError **error);
/* The pid recorded at path, checked (see above): the process must run as
 * qemu_uid (-1: our own user).  -1 with SLUICE_ERROR_FAILED saying why. */
gint64 sluice_vm_qemu_pid_read(const char *path, gint64 qemu_uid, GError **error);

G_END_DECLS
