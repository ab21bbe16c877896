/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-place.c — where a share is in its guest; see guest-place.h. */
#include "config.h"

#include <glib/gi18n.h>

#include "guest-place.h"

gboolean sluice_guest_place_is_drive(const char *place)
{
        return g_ascii_isalpha(place[0]) && place[1] == ':' && place[2] == '\0';
}

char *sluice_guest_place_sentence(const char *tag, const char *place, const char *vm)
{
        if (sluice_guest_place_is_drive(place))
                return g_strdup_printf(_("“%s” is drive %s in %s"), tag, place, vm);
        return g_strdup_printf(_("“%s” is at %s in %s"), tag, place, vm);
}
