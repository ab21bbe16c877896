/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-path-settle.c — see guest-path-settle.h. */
#include "config.h"

#include "guest-path-settle.h"
#include "share-properties.h"
#include "sluice-names.h"

typedef struct {
        SluiceShare *share;
        GMainContext *context;
        guint subscription;     /* PropertiesChanged of the share; 0 once done */
        GSource *timeout;
        GSource *cancelled;
        gboolean done;          /* answered: later signals and fetches are ignored */
        gboolean fetching;
        gboolean changed;       /* a change came while a fetch was on its way */
        SluiceWireGuestState state;
} Settle;

static void drop_source(GSource **source)
{
        if (*source != NULL) {
                g_source_destroy(*source);
                g_clear_pointer(source, g_source_unref);
        }
}

/* Lets go of what can call back; the subscription holds the task, so this
 * comes before every answer or the task would never be freed. */
static void settle_stop(Settle *settle)
{
        settle->done = TRUE;
        if (settle->subscription != 0)
                g_dbus_connection_signal_unsubscribe(g_dbus_proxy_get_connection(G_DBUS_PROXY(settle->share)),
                                                     settle->subscription);
        settle->subscription = 0;
        drop_source(&settle->timeout);
        drop_source(&settle->cancelled);
}

static void settle_free(gpointer data)
{
        Settle *settle = data;

        settle_stop(settle);
        g_main_context_unref(settle->context);
        g_object_unref(settle->share);
        g_free(settle);
}

static gboolean busy(SluiceWireGuestState state)
{
        return state == SLUICE_WIRE_GUEST_MOUNTING || state == SLUICE_WIRE_GUEST_UNMOUNTING;
}

static void settle_return(GTask *task, const char *path)
{
        Settle *settle = g_task_get_task_data(task);

        if (settle->done)
                return;
        settle_stop(settle);
        g_task_return_pointer(task, g_strdup(path), g_free);
}

static void settle_return_error(GTask *task, GError *error)
{
        Settle *settle = g_task_get_task_data(task);

        if (settle->done) {
                g_error_free(error);
                return;
        }
        settle_stop(settle);
        g_task_return_error(task, error);
}

static void settle_fetch(GTask *task);

static void on_fetched(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        Settle *settle = g_task_get_task_data(task);
        g_autoptr(GError) error = NULL;
        g_autofree char *state = NULL, *path = NULL;

        settle->fetching = FALSE;
        if (!sluice_client_share_fetch_guest_place_finish(SLUICE_SHARE(source), result, &state, &path,
                                                          &error)) {
                settle_return_error(task, g_steal_pointer(&error));
                return;
        }
        if (settle->done)
                return;
        /* a word of a newer service: nothing this build waits for */
        if (!sluice_wire_guest_state_parse(state, &settle->state))
                settle->state = SLUICE_WIRE_GUEST_IDLE;
        if (!busy(settle->state)) {
                settle_return(task, settle->state == SLUICE_WIRE_GUEST_MOUNTED ? path : "");
                return;
        }
        if (settle->changed)
                settle_fetch(task);
}

static void settle_fetch(GTask *task)
{
        Settle *settle = g_task_get_task_data(task);

        settle->fetching = TRUE;
        settle->changed = FALSE;
        sluice_client_share_fetch_guest_place(settle->share, g_task_get_cancellable(task), on_fetched,
                                              g_object_ref(task));
}

static void on_properties_changed(GDBusConnection *connection, const char *sender, const char *path,
                                  const char *interface, const char *signal, GVariant *parameters,
                                  gpointer user_data)
{
        GTask *task = user_data;
        Settle *settle = g_task_get_task_data(task);

        if (settle->done)
                return;
        /* read again rather than trust the signal's subset of the values */
        if (settle->fetching)
                settle->changed = TRUE;
        else
                settle_fetch(task);
}

static gboolean on_timeout(gpointer user_data)
{
        GTask *task = user_data;

        /* still busy: the guest's own commands are bounded, so is this wait */
        settle_return(task, "");
        return G_SOURCE_REMOVE;
}

static gboolean on_cancelled(GCancellable *cancellable, gpointer user_data)
{
        GTask *task = user_data;
        GError *error = NULL;

        if (g_cancellable_set_error_if_cancelled(cancellable, &error))
                settle_return_error(task, error);
        return G_SOURCE_REMOVE;
}

void sluice_client_share_settle_guest_path(SluiceShare *share, guint timeout_ms,
                                           GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(share, cancellable, callback, user_data);
        Settle *settle = g_new0(Settle, 1);
        g_autofree char *owner = g_dbus_proxy_get_name_owner(G_DBUS_PROXY(share));

        g_task_set_source_tag(task, sluice_client_share_settle_guest_path);
        settle->share = g_object_ref(share);
        settle->context = g_main_context_ref_thread_default();
        /* nothing read yet: as busy as anyone knows, should the bound pass first */
        settle->state = SLUICE_WIRE_GUEST_MOUNTING;
        g_task_set_task_data(task, settle, settle_free);
        /* subscribed before the first read: a change between the two is not missed */
        settle->subscription = g_dbus_connection_signal_subscribe(
                g_dbus_proxy_get_connection(G_DBUS_PROXY(share)),
                owner != NULL ? owner : g_dbus_proxy_get_name(G_DBUS_PROXY(share)),
                "org.freedesktop.DBus.Properties", "PropertiesChanged",
                g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)), SLUICE_SHARE_INTERFACE,
                G_DBUS_SIGNAL_FLAGS_NONE, on_properties_changed, g_object_ref(task), g_object_unref);
        settle->timeout = g_timeout_source_new(timeout_ms);
        g_source_set_callback(settle->timeout, on_timeout, task, NULL);
        g_source_attach(settle->timeout, settle->context);
        if (cancellable != NULL) {
                settle->cancelled = g_cancellable_source_new(cancellable);
                g_source_set_callback(settle->cancelled, G_SOURCE_FUNC(on_cancelled), task, NULL);
                g_source_attach(settle->cancelled, settle->context);
        }
        settle_fetch(task);
}

char *sluice_client_share_settle_guest_path_finish(SluiceShare *share, GAsyncResult *result,
                                                   SluiceWireGuestState *state, GError **error)
{
        Settle *settle = g_task_get_task_data(G_TASK(result));
        char *path = g_task_propagate_pointer(G_TASK(result), error);

        if (path != NULL && state != NULL)
                *state = settle->state;
        return path;
}

typedef struct {
        GAsyncResult *result;
} SyncWait;

static void on_sync_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SyncWait *wait = user_data;

        wait->result = g_object_ref(result);
}

char *sluice_client_share_settle_guest_path_sync(SluiceShare *share, guint timeout_ms,
                                                 GCancellable *cancellable,
                                                 SluiceWireGuestState *state, GError **error)
{
        g_autoptr(GMainContext) context = g_main_context_new();
        SyncWait wait = { 0 };
        char *path;

        g_main_context_push_thread_default(context);
        sluice_client_share_settle_guest_path(share, timeout_ms, cancellable, on_sync_done, &wait);
        while (wait.result == NULL)
                g_main_context_iteration(context, TRUE);
        path = sluice_client_share_settle_guest_path_finish(share, wait.result, state, error);
        g_object_unref(wait.result);
        /* the subscription's and the calls' leftovers run in this context */
        while (g_main_context_iteration(context, FALSE))
                ;
        g_main_context_pop_thread_default(context);
        return path;
}
