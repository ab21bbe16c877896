/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-guest.c — where a share is in its VM's guest, as sluicectl
 * says it: the list's IN GUEST cell, and the line after an attach ("“docs”
 * is at /mnt/docs in debian") in place of the hint when Sluice mounted it. */
#include "config.h"

#include <glib/gi18n.h>

#include "guest-place.h"
#include "sluicectl.h"

const char *ctl_guest_place(SluiceShare *share)
{
        const char *state = sluice_share_get_guest_state(share);
        const char *path = sluice_share_get_guest_path(share);

        if (g_strcmp0(state, "mounted") == 0 && path != NULL && *path != '\0')
                return path;
        if (g_strcmp0(state, "mounting") == 0)
                return _("mounting…");
        if (g_strcmp0(state, "unmounting") == 0)
                return _("unmounting…");
        if (g_strcmp0(state, "failed") == 0)
                return _("not mounted");
        return "-";
}

char *ctl_guest_sentence(SluiceShare *share)
{
        const char *path = sluice_share_get_guest_path(share);
        const char *vm = sluice_share_get_vm(share);
        g_autofree char *place = NULL;

        if (g_strcmp0(sluice_share_get_guest_state(share), "mounted") != 0 || path == NULL ||
            *path == '\0')
                return NULL;
        place = ctl_printable(path);  /* the guest's words reach a terminal */
        return sluice_guest_place_sentence(sluice_share_get_tag(share), place, vm != NULL ? vm : "");
}

typedef struct {
        GMainLoop *loop;
        guint timeout;
} Settle;

static gboolean guest_busy(SluiceShare *share)
{
        const char *state = sluice_share_get_guest_state(share);

        return g_strcmp0(state, "mounting") == 0 || g_strcmp0(state, "unmounting") == 0;
}

static void on_guest_state(GObject *object, GParamSpec *pspec, gpointer user_data)
{
        Settle *settle = user_data;

        if (!guest_busy(SLUICE_SHARE(object)))
                g_main_loop_quit(settle->loop);
}

static gboolean on_settle_timeout(gpointer user_data)
{
        Settle *settle = user_data;

        settle->timeout = 0;
        g_main_loop_quit(settle->loop);
        return G_SOURCE_REMOVE;
}

SluiceShare *ctl_guest_settled_share(SluiceShare *share, GError **error)
{
        g_autoptr(GMainLoop) loop = NULL;
        g_autoptr(SluiceShare) fresh = NULL;
        Settle settle = { 0 };

        /* a new proxy reads the properties the service has after the call's
         * reply; the old one's copy may still be the one before */
        fresh = sluice_share_proxy_new_sync(g_dbus_proxy_get_connection(G_DBUS_PROXY(share)),
                                            G_DBUS_PROXY_FLAGS_NONE, SLUICE_BUS_NAME,
                                            g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)),
                                            NULL, error);
        if (fresh == NULL || !guest_busy(fresh))
                return g_steal_pointer(&fresh);
        loop = g_main_loop_new(NULL, FALSE);
        settle.loop = loop;
        g_signal_connect(fresh, "notify::guest-state", G_CALLBACK(on_guest_state), &settle);
        /* the agent's commands are bounded; so is this wait */
        settle.timeout = g_timeout_add(CTL_CALL_TIMEOUT_MS, on_settle_timeout, &settle);
        if (guest_busy(fresh))
                g_main_loop_run(loop);
        if (settle.timeout != 0)
                g_source_remove(settle.timeout);
        g_signal_handlers_disconnect_by_data(fresh, &settle);
        return g_steal_pointer(&fresh);
}
