/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-tools.h — the pure parts of installing what a Windows guest lacks
 * to show a shared folder (Vm.InstallGuestTools): which packages there are,
 * finding their installers on the host, checking a file is one, the
 * argument vectors run in the guest, and msiexec's exit codes in words.
 *
 * Nothing here talks to a guest or to libvirt (vm-guest-tools.c does);
 * everything is safe from any thread.  A host path is never given to a
 * shell: it is opened here (as the service's user, O_NOFOLLOW) and its
 * bytes are copied, and the guest path is one of this file's constants.
 *
 * Errors: SLUICE_ERROR (errors.h): INVALID_ARGUMENT for a file that is not
 * such an installer, NOT_FOUND when none was given or found (saying where
 * to get one). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
        SLUICE_GUEST_TOOL_WINFSP,       /* WinFsp, winfsp-*.msi */
        SLUICE_GUEST_TOOL_VIRTIO_FS,    /* virtio-win's VirtIO-FS driver and service */
        SLUICE_GUEST_TOOL_COUNT,
} SluiceGuestTool;

/* "winfsp", "virtio-fs": the words of Vm.GuestToolsMissing. */
const char *sluice_guest_tool_name(SluiceGuestTool tool);
gboolean sluice_guest_tool_parse(const char *word, SluiceGuestTool *ret);

typedef enum {
        SLUICE_INSTALLER_MSI,
        SLUICE_INSTALLER_ISO,           /* virtio-win.iso: inserted as the VM's CD, never copied */
} SluiceInstallerKind;

/* An installer file on the host, open for reading. */
typedef struct {
        int fd;                         /* -1 when none */
        char *path;
        gsize size;
        SluiceInstallerKind kind;
} SluiceInstaller;

void sluice_installer_clear(SluiceInstaller *installer);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SluiceInstaller, sluice_installer_clear)

/* The most an MSI copied into the guest may be: WinFsp's is ~2 MiB,
 * virtio-win-gt-x64.msi ~30 MiB. */
#define SLUICE_GUEST_TOOLS_MSI_MAX ((gsize)256 * 1024 * 1024)
/* virtio-win.iso is ~700 MiB; a DVD image at most. */
#define SLUICE_GUEST_TOOLS_ISO_MAX ((gsize)8 * 1024 * 1024 * 1024)

/* Opens PATH as an installer of TOOL: a regular file (no symlink, no
 * directory, no device), its name that of such a package (winfsp*.msi for
 * WinFsp; *.msi or *.iso for virtio-win), its size sane and its content
 * what the name says (an MSI's compound-file magic D0 CF 11 E0 A1 B1 1A E1,
 * an ISO's "CD001" at 0x8001).  INVALID_ARGUMENT saying what is wrong.
 * RET (initialised, e.g. { .fd = -1 }) is written only on success: what
 * it held is cleared then; a failure leaves it as it was. */
gboolean sluice_guest_tools_open_installer(const char *path, SluiceGuestTool tool, SluiceInstaller *ret,
                                           GError **error);

/* The folders looked in when no file is given: /usr/share/virtio-win (for
 * virtio-win only), $XDG_DOWNLOAD_DIR, the user's download folder and
 * ~/Downloads, each once.  A new vector. */
char **sluice_guest_tools_search_dirs(SluiceGuestTool tool);

/* The best installer of TOOL in DIRS: for WinFsp the newest winfsp-*.msi;
 * for virtio-win virtio-win-gt-x64.msi before the newest virtio-win*.iso
 * ("newest" by the version in the name).  Each candidate is checked as
 * above; one that fails is skipped.  NOT_FOUND naming the folders looked
 * in and where to get the package, when none. */
char *sluice_guest_tools_find_installer(SluiceGuestTool tool, const char *const *dirs, GError **error);

/* Where the MSI of TOOL is copied in the guest (a constant). */
const char *sluice_guest_tools_guest_path(SluiceGuestTool tool);
/* msiexec /i MSI_PATH /qn /norestart, for virtio-win with the VirtIO-FS
 * driver's feature only (never the agent or the serial driver).  MSI_PATH
 * is a guest path built by Sluice (a constant above, or a drive letter
 * read back and "\virtio-win-gt-x64.msi").  A new vector. */
char **sluice_guest_tools_msiexec_argv(SluiceGuestTool tool, const char *msi_path);

/* virtio-win's ISO, inserted as the VM's CD-ROM media: the target of the
 * first CD-ROM drive in DOMAIN_XML (the live definition) that holds no
 * media (its <target dev>, BUS set to its bus), or NULL when there is none. */
char *sluice_guest_tools_empty_cdrom(const char *domain_xml, char **bus);
/* The <disk> that puts ISO_PATH into that drive (virDomainUpdateDeviceFlags). */
char *sluice_guest_tools_cdrom_xml(const char *target_dev, const char *bus, const char *iso_path);
/* From the volume list ("D:\|CDFS|virtio-win-0.1.262" lines, as
 * guest-windows.h reads it): the drive ("D:") whose label starts with
 * "virtio-win", or NULL. */
char *sluice_guest_tools_virtio_win_drive(const char *volumes, gsize len);
/* virtio-win's MSI on that drive ("D:\virtio-win-gt-x64.msi"). */
char *sluice_guest_tools_msi_on_drive(const char *drive);

/* msiexec's exit CODE for a person: NULL for 0 and 3010 (success; REBOOT
 * set for 3010 and 1641), else a sentence naming what Windows Installer
 * said ("another installation is in progress …"), "msiexec ended with
 * code N" for codes without a name here.  A new string or NULL. */
char *sluice_guest_tools_msiexec_result(int code, gboolean *reboot);

/* What a Windows mount learned missing, for Vm.GuestToolsMissing: noted by
 * guest-windows.c in the thread that asked, taken by the caller in the same
 * thread (thread-local, so that calls of two VMs do not mix).  MISSING is
 * copied; an empty vector says nothing is missing. */
void sluice_guest_tools_note_missing(const char *const *missing);
/* The vector noted since the last take in this thread, or NULL if none. */
char **sluice_guest_tools_take_noted(void);

G_END_DECLS
