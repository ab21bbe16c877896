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
 * Its procedures are also the table sluice_guest_windows_ops (guest-ops.h),
 * through which vm-guest.c calls them.
 *
 * Blocking: call from a worker thread.  Errors: the agent's own failure in
 * SLUICE_GUEST_AGENT_ERROR with its code, its message saying what was
 * being run (guest-ops.h); else SLUICE_ERROR (errors.h): GUEST_AGENT with
 * what is missing or what Windows said. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>

G_BEGIN_DECLS

/* "D:" … "Z:" (a lower-case letter is taken too; the form is
 * sluice_guest_place_is_drive's) or "" (the first free from Z: down).
 * SLUICE_ERROR_INVALID_ARGUMENT otherwise. */
gboolean sluice_guest_windows_check_drive(const char *drive, GError **error);

/* Mounts TAG: with no other share of Sluice mounted in this guest
 * (OTHERS_MOUNTED FALSE) and VirtioFsSvc serving no other share (as it does
 * after a reboot) through VirtioFsSvc (registry MountPoint set to the
 * letter and CaseInsensitive to CASE_INSENSITIVE, both of which it reads at
 * boot; set to start automatically; started), else as a WinFsp launcher
 * instance of its own (which a reboot ends: mount again after one).  DRIVE
 * as checked above; a DRIVE taken by another drive gets the next free one
 * (sluice_guest_windows_pick_drive).  Returns the letter Windows gave, read
 * back ("Z:"): the caller compares it with DRIVE. */
char *sluice_guest_windows_mount(virDomainPtr domain, const char *tag, const char *drive,
                                 gboolean others_mounted, gboolean case_insensitive, GError **error);
/* Stops what serves TAG at DRIVE (the service, or its launcher instance). */
gboolean sluice_guest_windows_unmount(virDomainPtr domain, const char *tag, const char *drive,
                                      GError **error);

/* The programs and keys Sluice uses in a Windows guest, for guest-tools'
 * installer and the doctor too. */
#define SLUICE_WIN_SC_EXE "C:\\Windows\\System32\\sc.exe"
#define SLUICE_WIN_REG_EXE "C:\\Windows\\System32\\reg.exe"
#define SLUICE_WIN_POWERSHELL_EXE "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"
#define SLUICE_WIN_VIOFS_SERVICE "VirtioFsSvc"
#define SLUICE_WIN_WINFSP_SERVICE "WinFsp.Launcher"
#define SLUICE_WIN_VIOFS_REGKEY "HKLM\\SOFTWARE\\VirtIO-FS"
#define SLUICE_WIN_LAUNCHER_REGKEY "HKLM\\SOFTWARE\\WOW6432Node\\WinFsp\\Services\\virtiofs"

/* The state of service NAME as sc.exe says (4 running …), 0 when it is
 * not installed, -1 with ERROR set. */
int sluice_guest_windows_service_state(virDomainPtr domain, const char *name, GError **error);
/* What the guest lacks to show a shared folder: a vector of "virtio-fs",
 * "winfsp" (empty when nothing), also noted for Vm.GuestToolsMissing
 * (guest-tools.h); VIOFS_STATE (may be NULL) VirtioFsSvc's state.  NULL
 * with ERROR set when Windows did not say. */
char **sluice_guest_windows_missing(virDomainPtr domain, int *viofs_state, GError **error);
/* Every volume with a letter, as lines "Z:\|FORMAT|LABEL" (PowerShell's
 * DriveInfo), or NULL with ERROR set. */
char *sluice_guest_windows_list_volumes(virDomainPtr domain, gsize *len, GError **error);

/* Pure helpers, for the procedures above and the unit tests: they read
 * what Windows' programs print (CRLF or LF lines, bounded, anything else
 * skipped). */

/* The next line of OUT[0..LEN) from *POS, without its CR LF (and NULs
 * PowerShell may leave at its end); FALSE at the end or for a NULL OUT. */
gboolean sluice_guest_windows_next_line(const char *out, gsize len, gsize *pos, const char **line,
                                        gsize *line_len);
/* The state number in `sc.exe query NAME` (1 stopped, 2 start pending,
 * 3 stop pending, 4 running …; the numbers are the same in every language),
 * or 0 when the text has none. */
int sluice_guest_windows_sc_state(const char *out, gsize len);
/* TRUE when WinFsp's launchctl answered "OK"; else FALSE and, in MESSAGE, a
 * printable copy of what it said instead. */
gboolean sluice_guest_windows_launchctl_ok(const char *out, gsize len, char **message);
/* WANTED ("Y:") when it is not in IN_USE (bit 0 = A:), else the first free
 * letter from Z: down to D:; NULL when none is free. */
char *sluice_guest_windows_pick_drive(const char *wanted, guint32 in_use);
/* From lines "Z:\|FORMAT|LABEL" (the volumes read back): the drive ("Z:")
 * whose file system is VirtIO-FS and whose label is TAG (any case), or
 * NULL; IN_USE (may be NULL) gets every drive listed as a bit mask
 * (bit 0 = A:). */
char *sluice_guest_windows_drive_of(const char *out, gsize len, const char *tag, guint32 *in_use);

G_END_DECLS
