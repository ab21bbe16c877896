/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-exit.c — sluicectl's exit status: 2 for a command line it cannot
 * run, 1 when the service refused or failed, and 1 when a call the service
 * answered did not do what it was asked: Start and AddShare's "attach"
 * succeed once the worker runs even when plugging it into the VM failed
 * (the share's Error says why), so the share's values after the call are
 * checked too, and a script can trust the status alone. */
#include "config.h"

#include <glib/gi18n.h>

#include "sluicectl.h"
#include "state-labels.h"
#include "wire-enums.h"

int ctl_usage_error(const char *format, ...)
{
        va_list args;
        g_autofree char *message = NULL;

        va_start(args, format);
        message = g_strdup_vprintf(format, args);
        va_end(args);
        g_printerr("sluicectl: %s\n%s", message, _("Try “sluicectl --help”.\n"));
        return EXIT_USAGE;
}

int ctl_fail(GError *error)
{
        g_autofree char *remote = g_dbus_error_get_remote_error(error);

        /* The service's own errors are sentences; a bus error's name (no
         * service, timeout) tells what happened, so it stays. */
        if (remote == NULL || g_str_has_prefix(remote, "org.sluice."))
                g_dbus_error_strip_remote_error(error);
        g_printerr("sluicectl: %s\n", error->message);
        return EXIT_FAILED;
}

/* Whether the share's VM runs now, as the service last said: a share whose
 * VM is off (or unknown to libvirt) waits for it, attached when it starts. */
static gboolean vm_running(Ctl *ctl, const char *name)
{
        g_autoptr(SluiceVm) vm = NULL;

        if (name == NULL || *name == '\0')
                return FALSE;
        vm = ctl_find_vm(ctl, name, NULL);
        return vm != NULL && sluice_wire_vm_state_is(sluice_vm_get_state(vm), SLUICE_WIRE_VM_RUNNING);
}

static gboolean outcome_ok(Ctl *ctl, SluiceShare *fresh, SluiceWireShareState state, CtlExpect expect)
{
        const char *why = sluice_share_get_error(fresh);

        switch (expect) {
        case CTL_EXPECT_STOPPED:
                return state == SLUICE_WIRE_SHARE_STOPPED;
        case CTL_EXPECT_DETACHED:
                return state != SLUICE_WIRE_SHARE_ATTACHED;
        case CTL_EXPECT_STARTED:
        case CTL_EXPECT_ATTACHED:
                if (state == SLUICE_WIRE_SHARE_FAILED || state == SLUICE_WIRE_SHARE_STOPPED)
                        return FALSE;
                if (state == SLUICE_WIRE_SHARE_ATTACHED)
                        return TRUE;
                /* running beside a running VM: a plug that failed leaves an
                 * Error; without one the plug may just be on its way */
                return why == NULL || *why == '\0' || !vm_running(ctl, sluice_share_get_vm(fresh));
        }
        return TRUE;
}

gboolean ctl_check_outcome(Ctl *ctl, SluiceShare *fresh, CtlExpect expect, GError **error)
{
        SluiceWireShareState state;
        const char *word = sluice_share_get_state(fresh);
        const char *why = sluice_share_get_error(fresh);
        const char *tag = sluice_share_get_tag(fresh);

        /* a state of a newer service: the call's success is all there is to go by */
        if (!sluice_wire_share_state_parse(word, &state) || outcome_ok(ctl, fresh, state, expect))
                return TRUE;
        if (why != NULL && *why != '\0') {
                g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_FAILED, why);
                return FALSE;
        }
        switch (expect) {
        case CTL_EXPECT_DETACHED:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED, _("The share “%s” is still attached to %s"),
                            tag, sluice_share_get_vm(fresh));
                break;
        case CTL_EXPECT_STOPPED:
        case CTL_EXPECT_STARTED:
        case CTL_EXPECT_ATTACHED:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED, _("The share “%s” is %s"), tag,
                            sluice_share_state_label(word));
                break;
        }
        return FALSE;
}
