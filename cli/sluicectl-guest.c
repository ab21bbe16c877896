/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-guest.c — where a share is in its VM's guest, as sluicectl
 * says it: the list's IN GUEST cell, and the line after an attach ("“docs”
 * is at /mnt/docs in debian") in place of the hint when Sluice mounted it. */
#include "config.h"

#include "guest-path-settle.h"
#include "guest-place.h"
#include "sluicectl.h"
#include "state-labels.h"
#include "wire-enums.h"

const char *ctl_guest_place(SluiceShare *share)
{
        const char *state = sluice_share_get_guest_state(share);
        const char *path = sluice_share_get_guest_path(share);
        const char *label = sluice_guest_state_label(state);

        if (sluice_wire_guest_state_is(state, SLUICE_WIRE_GUEST_MOUNTED) && path != NULL && *path != '\0')
                return path;
        return *label != '\0' ? label : "-";
}

char *ctl_guest_sentence(SluiceShare *share)
{
        const char *path = sluice_share_get_guest_path(share);
        const char *vm = sluice_share_get_vm(share);
        g_autofree char *place = NULL;

        if (!sluice_wire_guest_state_is(sluice_share_get_guest_state(share), SLUICE_WIRE_GUEST_MOUNTED) ||
            path == NULL || *path == '\0')
                return NULL;
        place = ctl_printable(path);  /* the guest's words reach a terminal */
        return sluice_guest_place_sentence(sluice_share_get_tag(share), place, vm != NULL ? vm : "");
}

SluiceShare *ctl_guest_settled_share(SluiceShare *share, GError **error)
{
        g_autofree char *path = NULL;

        /* the agent's commands are bounded; so is this wait */
        path = sluice_client_share_settle_guest_path_sync(share, CTL_CALL_TIMEOUT_MS, NULL, NULL, error);
        if (path == NULL)
                return NULL;
        /* read after the guest settled: the proxy has the values of then */
        return ctl_fresh_share(share, error);
}
