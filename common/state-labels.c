/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-labels.c — see state-labels.h. */
#include "config.h"

#include <glib/gi18n.h>

#include "state-labels.h"
#include "wire-enums.h"

const char *sluice_share_state_label(const char *state)
{
        SluiceWireShareState s;

        if (!sluice_wire_share_state_parse(state, &s))
                return state != NULL ? state : "";
        switch (s) {
        case SLUICE_WIRE_SHARE_STOPPED:
                return C_("share state", "Stopped");
        case SLUICE_WIRE_SHARE_STARTING:
                return C_("share state", "Starting");
        case SLUICE_WIRE_SHARE_RUNNING:
                /* Running but not plugged into a VM: ready to be attached. */
                return C_("share state", "Ready");
        case SLUICE_WIRE_SHARE_ATTACHED:
                return C_("share state", "Attached");
        case SLUICE_WIRE_SHARE_FAILED:
                return C_("share state", "Failed");
        }
        return state;
}

const char *sluice_vm_state_label(const char *state)
{
        SluiceWireVmState s;

        if (!sluice_wire_vm_state_parse(state, &s))
                return state != NULL ? state : "";
        switch (s) {
        case SLUICE_WIRE_VM_RUNNING:
                return C_("vm state", "Running");
        case SLUICE_WIRE_VM_PAUSED:
                return C_("vm state", "Paused");
        case SLUICE_WIRE_VM_SHUTOFF:
                return C_("vm state", "Shut off");
        case SLUICE_WIRE_VM_CRASHED:
                return C_("vm state", "Crashed");
        case SLUICE_WIRE_VM_OTHER:
                break;
        }
        return state;
}

const char *sluice_guest_agent_label(const char *agent)
{
        SluiceWireGuestAgent a;

        if (!sluice_wire_guest_agent_parse(agent, &a))
                return agent != NULL ? agent : "";
        switch (a) {
        case SLUICE_WIRE_AGENT_NONE:
                return C_("guest agent", "none");
        case SLUICE_WIRE_AGENT_DISCONNECTED:
                return C_("guest agent", "not answering");
        case SLUICE_WIRE_AGENT_READY:
                return C_("guest agent", "ready");
        case SLUICE_WIRE_AGENT_RESTRICTED:
                return C_("guest agent", "restricted");
        }
        return agent;
}

const char *sluice_guest_state_label(const char *guest_state)
{
        SluiceWireGuestState s;

        if (!sluice_wire_guest_state_parse(guest_state, &s))
                return guest_state != NULL ? guest_state : "";
        switch (s) {
        case SLUICE_WIRE_GUEST_MOUNTING:
                return _("mounting…");
        case SLUICE_WIRE_GUEST_UNMOUNTING:
                return _("unmounting…");
        case SLUICE_WIRE_GUEST_FAILED:
                return _("not mounted");
        case SLUICE_WIRE_GUEST_IDLE:
        case SLUICE_WIRE_GUEST_MOUNTED:
                break;
        }
        return "";
}
