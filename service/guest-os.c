/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-os.c — which guest OS a VM or a place has; see guest-os.h. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-os.h"
#include "guest-place.h"
#include "printable.h"

const SluiceGuestOps *sluice_guest_os_ops(const char *osinfo_id, SluiceWireGuestOs agent_os)
{
        /* the running guest's word first: the definition may be stale */
        switch (agent_os) {
        case SLUICE_WIRE_GUEST_OS_LINUX:
                return &sluice_guest_linux_ops;
        case SLUICE_WIRE_GUEST_OS_WINDOWS:
                return &sluice_guest_windows_ops;
        case SLUICE_WIRE_GUEST_OS_UNKNOWN:
        default:
                break;
        }
        /* libosinfo names every Windows "win…" ("win10", "win2k22"); its
         * other ids name BSDs and more besides Linux, so only Windows is
         * taken from it */
        if (osinfo_id != NULL && g_str_has_prefix(osinfo_id, "win"))
                return &sluice_guest_windows_ops;
        return NULL;
}

const SluiceGuestOps *sluice_guest_os_ops_for_place(const char *place)
{
        if (place == NULL || *place == '\0')
                return NULL;
        if (place[0] == '/')
                return &sluice_guest_linux_ops;
        if (sluice_guest_place_is_drive(place))
                return &sluice_guest_windows_ops;
        return NULL;
}

gboolean sluice_guest_os_check_place(const char *place, GError **error)
{
        const SluiceGuestOps *ops;
        g_autofree char *shown = NULL;

        if (place == NULL) {
                g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("No place in the guest was given"));
                return FALSE;
        }
        if (*place == '\0')
                return TRUE;
        ops = sluice_guest_os_ops_for_place(place);
        if (ops != NULL)
                return ops->check_place(place, error);
        shown = sluice_printable_escaped(place);
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("“%s” is not a place in a guest: give an absolute path for a Linux guest (such as /mnt/docs), a drive letter for a Windows guest (such as Z:), or nothing for the default"),
                    shown);
        return FALSE;
}

char *sluice_guest_os_hint(const char *osinfo_id, SluiceWireGuestOs agent_os, const char *tag)
{
        const SluiceGuestOps *ops = sluice_guest_os_ops(osinfo_id, agent_os);

        /* an OS nobody named: the mount command is what most guests take */
        return (ops != NULL ? ops : &sluice_guest_linux_ops)->hint(tag);
}
