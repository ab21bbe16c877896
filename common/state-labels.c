/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-labels.c — see state-labels.h. */
#include "config.h"

#include <glib/gi18n.h>

#include "state-labels.h"

const char *sluice_share_state_label(const char *state)
{
        if (g_strcmp0(state, "stopped") == 0)
                return C_("share state", "Stopped");
        if (g_strcmp0(state, "starting") == 0)
                return C_("share state", "Starting");
        /* Running but not plugged into a VM: ready to be attached. */
        if (g_strcmp0(state, "running") == 0)
                return C_("share state", "Ready");
        if (g_strcmp0(state, "attached") == 0)
                return C_("share state", "Attached");
        if (g_strcmp0(state, "failed") == 0)
                return C_("share state", "Failed");
        return state != NULL ? state : "";
}

const char *sluice_vm_state_label(const char *state)
{
        if (g_strcmp0(state, "running") == 0)
                return C_("vm state", "Running");
        if (g_strcmp0(state, "paused") == 0)
                return C_("vm state", "Paused");
        if (g_strcmp0(state, "shutoff") == 0)
                return C_("vm state", "Shut off");
        if (g_strcmp0(state, "crashed") == 0)
                return C_("vm state", "Crashed");
        return state != NULL ? state : "";
}
