/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-windows.h — a share in a Windows guest, through its agent
 * (guest-agent.h): virtio-win's VirtIO-FS service (VirtioFsSvc) for a VM's
 * first share, WinFsp's launcher (one instance per share: its own tag and
 * drive letter) for more; what is missing (virtio-win's guest tools,
 * WinFsp) said exactly.
 *
 * The guest runs fixed argument vectors built here (sc.exe, WinFsp's
 * launchctl-x64.exe …), never a command line with text from a person: the
 * tag is checked by share-tag.h and the drive letter by
 * sluice_guest_windows_check_drive.  What the guest answers is only parsed.
 *
 * Blocking: call from a worker thread.  Errors are SLUICE_ERROR (errors.h):
 * GUEST_AGENT with what is missing or what Windows said. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>

G_BEGIN_DECLS

/* "D:" … "Z:" (a lower-case letter is taken too) or "" (the first free from
 * Z: down).  SLUICE_ERROR_INVALID_ARGUMENT otherwise. */
gboolean sluice_guest_windows_check_drive(const char *drive, GError **error);

/* Mounts TAG: with no other share of Sluice mounted in this guest
 * (OTHERS_MOUNTED FALSE) through VirtioFsSvc (set to start automatically,
 * started), else as a WinFsp launcher instance of its own.  DRIVE as
 * checked above.  Returns the letter Windows gave, read back ("Z:"). */
char *sluice_guest_windows_mount(virDomainPtr domain, const char *tag, const char *drive,
                                 gboolean others_mounted, GError **error);
/* Stops what serves TAG at DRIVE (the service, or its launcher instance). */
gboolean sluice_guest_windows_unmount(virDomainPtr domain, const char *tag, const char *drive,
                                      GError **error);

G_END_DECLS
