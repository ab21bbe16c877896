/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-linux.c — a share in a Linux guest; see guest-linux.h.
 * PLACEHOLDER until the implementation lands: every call fails. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-linux.h"

static gboolean not_yet(GError **error)
{
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED, "not implemented yet");
        return FALSE;
}

gboolean sluice_guest_linux_check_mount_point(const char *path, GError **error) { return not_yet(error); }
char *sluice_guest_linux_default_mount_point(const char *tag) { return g_strconcat("/mnt/", tag, NULL); }
gboolean sluice_guest_linux_mount(virDomainPtr domain, const char *tag, const char *mount_point, GError **error) { return not_yet(error); }
gboolean sluice_guest_linux_unmount(virDomainPtr domain, const char *tag, const char *mount_point, GError **error) { return not_yet(error); }
gboolean sluice_guest_linux_release(virDomainPtr domain, const char *tag, const char *mount_point, GError **error) { return not_yet(error); }
gboolean sluice_guest_linux_set_fstab(virDomainPtr domain, const char *tag, const char *mount_point, gboolean present, GError **error) { return not_yet(error); }
gboolean sluice_guest_linux_is_mounted(const char *proc_mounts, const char *tag, const char *mount_point) { return FALSE; }
char *sluice_guest_linux_fstab_edit(const char *fstab, const char *tag, const char *mount_point, gboolean present) { return g_strdup(fstab); }
