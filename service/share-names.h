/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-names.h — what a share's worker serves (Share.ServedNames,
 * ServedCase), from its settings (Share.Names, Case: "" follows the VM's
 * OS) and whether its VM runs Windows (guest-os.h decides that).  Pure: no
 * GObject, no D-Bus; share-settings.c applies the result. */
#pragma once

#include <glib.h>

#include "wire-enums.h"

G_BEGIN_DECLS

typedef struct {
        SluiceWireNames names;  /* POSIX or WINDOWS, never DEFAULT */
        SluiceWireCase case_;   /* SENSITIVE or INSENSITIVE, never DEFAULT */
} SluiceShareServed;

/* NAMES and CASE as Share.Names and Share.Case hold them (an unknown word
 * counts as ""); WINDOWS_GUEST: the VM is known to run Windows.  A Windows
 * guest gets WinFsp's names and case-insensitive lookups, any other guest
 * the host's names as they are. */
SluiceShareServed sluice_share_names_resolve(const char *names, const char *case_, gboolean windows_guest);

G_END_DECLS
