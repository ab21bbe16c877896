/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-wait.c — start --wait: a share for as long as this command runs.
 *
 * sluice-share@.service runs it as its main process (Type=notify): READY=1
 * once Start has returned (the worker listens; it is attached when its VM
 * runs), STATUS= lines as the share's state changes, and the exit tells
 * systemd what became of the share: 0 when it was stopped (ExecStop's
 * "sluicectl stop", another client, or our SIGTERM), 1 when it failed, was
 * removed, or the service went away (Restart=on-failure starts it again). */
#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <systemd/sd-daemon.h>

#include "share-properties.h"
#include "sluicectl.h"
#include "state-labels.h"
#include "wire-enums.h"

typedef struct {
        SluiceShare *share;
        GMainLoop *loop;
        gboolean stop_requested;
        gboolean done;   /* a quit before g_main_loop_run() would be lost */
        int status;
} Wait;

static void wait_notify(const char *prefix, SluiceShare *share, const char *state)
{
        g_autofree char *message = g_strdup_printf("%sSTATUS=%s: %s", prefix, sluice_share_get_tag(share),
                                                   sluice_share_state_label(state));

        (void)sd_notify(0, message);
}

static void wait_finish(Wait *wait, int status, const char *message)
{
        if (message != NULL)
                g_printerr("sluicectl: %s\n", message);
        wait->status = status;
        wait->done = TRUE;
        g_main_loop_quit(wait->loop);
}

static void wait_check_state(Wait *wait, const char *state)
{
        g_autofree char *message = NULL;

        if (sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_STOPPED)) {
                wait_finish(wait, EXIT_OK, NULL);
        } else if (sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_FAILED)) {
                message = g_strdup_printf(_("The share “%s” failed: %s"), sluice_share_get_tag(wait->share),
                                          sluice_share_get_error(wait->share));
                wait_finish(wait, EXIT_FAILED, message);
        } else {
                wait_notify("", wait->share, state);
        }
}

static void on_wait_state(GObject *object, GParamSpec *pspec, gpointer user_data)
{
        Wait *wait = user_data;

        wait_check_state(wait, sluice_share_get_state(wait->share));
}

static void on_wait_object_removed(GDBusObjectManager *objects, GDBusObject *object, gpointer user_data)
{
        Wait *wait = user_data;
        g_autofree char *owner = g_dbus_object_manager_client_get_name_owner(
                G_DBUS_OBJECT_MANAGER_CLIENT(objects));
        g_autofree char *message = NULL;

        if (g_strcmp0(g_dbus_object_get_object_path(object),
                      g_dbus_proxy_get_object_path(G_DBUS_PROXY(wait->share))) != 0)
                return;
        if (owner == NULL)
                message = g_strdup(_("sluice-service stopped"));
        else
                message = g_strdup_printf(_("The share “%s” was removed"), sluice_share_get_tag(wait->share));
        wait_finish(wait, EXIT_FAILED, message);
}

static gboolean on_wait_signal(gpointer user_data)
{
        Wait *wait = user_data;

        wait->stop_requested = TRUE;
        wait->done = TRUE;
        g_main_loop_quit(wait->loop);
        /* kept: without a handler GLib restores the default, and a second
         * SIGTERM would kill us half-way through Stop */
        return G_SOURCE_CONTINUE;
}

int ctl_start_and_wait(Ctl *ctl, SluiceShare *share)
{
        g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
        g_autoptr(GError) error = NULL;
        Wait wait = { .share = share, .loop = loop, .status = EXIT_OK };
        g_autofree char *state = NULL;

        /* Watch first: a stop right after Start must not be missed.  The
         * signal handlers stay until exit: a SIGTERM is always a stop. */
        g_signal_connect(share, "notify::state", G_CALLBACK(on_wait_state), &wait);
        g_signal_connect(ctl->objects, "object-removed", G_CALLBACK(on_wait_object_removed), &wait);
        (void)g_unix_signal_add(SIGTERM, on_wait_signal, &wait);
        (void)g_unix_signal_add(SIGINT, on_wait_signal, &wait);
        if (!sluice_share_call_start_sync(share, NULL, &error) ||
            (state = sluice_client_share_fetch_state_sync(share, NULL, &error)) == NULL) {
                wait.status = ctl_fail(error);
        } else {
                /* The State the service has now: after Start's reply the
                 * proxy's copy is the old one until PropertiesChanged is
                 * dispatched. */
                wait_notify("READY=1\n", share, state);
                wait_check_state(&wait, state);
                if (!wait.done)
                        g_main_loop_run(loop);
        }
        g_signal_handlers_disconnect_by_data(share, &wait);
        g_signal_handlers_disconnect_by_data(ctl->objects, &wait);
        if (wait.stop_requested) {
                (void)sd_notify(0, "STOPPING=1");
                if (!sluice_share_call_stop_sync(share, NULL, &error))
                        return ctl_fail(error);
                return EXIT_OK;
        }
        return wait.status;
}
