/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-windows.c — a share in a Windows guest; see guest-windows.h.
 * PLACEHOLDER until the implementation lands: every call fails. */
#include "config.h"

#include "errors.h"
#include "guest-windows.h"

gboolean sluice_guest_windows_check_drive(const char *drive, GError **error)
{
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED, "not implemented yet");
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
