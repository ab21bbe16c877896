/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-place.h — where a share is in its guest (Share.GuestPath), as the
 * service announces it and sluicectl repeats it: a Linux path or a Windows
 * drive letter. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether PLACE is written as a drive letter ("Z:"), the form Windows
 * guests take; anything else is a path. */
gboolean sluice_guest_place_is_drive(const char *place);
/* "“docs” is at /mnt/docs in debian" or "“Dropbox” is drive Z: in win11"
 * (translated). */
char *sluice_guest_place_sentence(const char *tag, const char *place, const char *vm);

G_END_DECLS
