/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-names.c — see share-names.h. */
#include "config.h"

#include "share-names.h"

SluiceShareServed sluice_share_names_resolve(const char *names, const char *case_, gboolean windows_guest)
{
        SluiceShareServed served = {
                .names = windows_guest ? SLUICE_WIRE_NAMES_WINDOWS : SLUICE_WIRE_NAMES_POSIX,
                .case_ = windows_guest ? SLUICE_WIRE_CASE_INSENSITIVE : SLUICE_WIRE_CASE_SENSITIVE,
        };
        SluiceWireNames chosen_names;
        SluiceWireCase chosen_case;

        /* a setting of the person's wins over the OS's default, each on its own */
        if (sluice_wire_names_parse(names, &chosen_names) && chosen_names != SLUICE_WIRE_NAMES_DEFAULT)
                served.names = chosen_names;
        if (sluice_wire_case_parse(case_, &chosen_case) && chosen_case != SLUICE_WIRE_CASE_DEFAULT)
                served.case_ = chosen_case;
        return served;
}
