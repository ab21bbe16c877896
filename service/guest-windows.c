/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-windows.c — a share in a Windows guest; see guest-windows.h. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-windows.h"
#include "share-tag.h"

/* A person types "z:" as often as "Z:"; anything longer ("Z:\", "Z:foo")
 * would reach a command line in the guest, so it is refused, not trimmed. */
gboolean sluice_guest_windows_check_drive(const char *drive, GError **error)
{
        g_autofree char *shown = NULL;
        char letter;

        if (drive == NULL || *drive == '\0')
                return TRUE;
        letter = g_ascii_toupper(drive[0]);
        if (strlen(drive) == 2 && drive[1] == ':' && letter >= 'A' && letter <= 'C') {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            letter == 'C'
                                    ? _("Drive C: is where Windows itself lives: choose a letter from D: to Z:, or leave it empty for the first free one from Z: down")
                                    : _("Drives A: and B: are kept for floppy disks in Windows: choose a letter from D: to Z:, or leave it empty for the first free one from Z: down"));
                return FALSE;
        }
        if (strlen(drive) == 2 && drive[1] == ':' && letter >= 'D' && letter <= 'Z')
                return TRUE;
        shown = g_utf8_validate(drive, -1, NULL) ? sluice_share_tag_printable(drive)
                                                 : g_strdup(_("(not UTF-8 text)"));
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("“%s” is not a drive letter: give one like “Z:” (D: to Z:), or leave it empty for the first free one from Z: down"),
                    shown);
        return FALSE;
}

char *sluice_guest_windows_mount(virDomainPtr domain, const char *tag, const char *drive,
                                 gboolean others_mounted, GError **error)
{
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED, "not implemented yet");
        return NULL;
}

gboolean sluice_guest_windows_unmount(virDomainPtr domain, const char *tag, const char *drive, GError **error)
{
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED, "not implemented yet");
        return FALSE;
}
