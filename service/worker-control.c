/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-control.c — GDBus client of one worker's org.sluice.Worker1. */
#include "config.h"

#include <glib/gi18n.h>
#include <gio/gunixsocketaddress.h>

#include "errors.h"
#include "worker-control.h"

#define WORKER_OBJECT_PATH "/org/sluice/Worker1"
/* A worker answers from its event loop; anything slower is a hung worker. */
#define WORKER_CALL_TIMEOUT_MS 5000

static void on_resume_read(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceWorker1 *control = g_task_get_task_data(task);
        g_autoptr(GVariant) reply = NULL;
        g_autoptr(GVariant) value = NULL;
        g_autoptr(GError) error = NULL;

        reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), result, &error);
        if (reply != NULL)
                g_variant_get(reply, "(v)", &value);
        /* a worker without the property (an older sluice-fs) took nothing over */
        if (value == NULL || !g_variant_is_of_type(value, G_VARIANT_TYPE_VARDICT))
                g_clear_pointer(&value, g_variant_unref);
        if (value == NULL)
                value = g_variant_ref_sink(g_variant_new_array(G_VARIANT_TYPE("{sv}"), NULL, 0));
        g_dbus_proxy_set_cached_property(G_DBUS_PROXY(control), "Resume", value);
        g_task_return_pointer(task, g_object_ref(control), g_object_unref);
}

static void on_probe_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceWorker1 *control = SLUICE_WORKER1(source);
        g_autoptr(GVariant) stats = NULL;
        GError *error = NULL;

        if (!sluice_worker1_call_get_stats_finish(control, &stats, result, &error)) {
                g_task_return_error(task, error);
                return;
        }
        /* Resume is constant for the worker's life and set before the channel
         * answers: read once, into the proxy's cache (properties are not
         * loaded otherwise), so sluice_worker1_get_resume() answers. */
        GCancellable *cancellable = g_task_get_cancellable(task);

        g_task_set_task_data(task, g_object_ref(control), g_object_unref);
        g_dbus_connection_call(g_dbus_proxy_get_connection(G_DBUS_PROXY(control)), NULL,
                               WORKER_OBJECT_PATH, "org.freedesktop.DBus.Properties", "Get",
                               g_variant_new("(ss)", "org.sluice.Worker1", "Resume"),
                               G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NONE, WORKER_CALL_TIMEOUT_MS,
                               cancellable, on_resume_read, g_steal_pointer(&task));
}

static void on_proxy_ready(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        GCancellable *cancellable = g_task_get_cancellable(task);
        g_autoptr(SluiceWorker1) control = NULL;
        GError *error = NULL;

        control = sluice_worker1_proxy_new_finish(result, &error);
        if (control == NULL) {
                g_task_return_error(task, error);
                return;
        }
        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(control), WORKER_CALL_TIMEOUT_MS);
        /* The first answered call is the readiness signal. */
        sluice_worker1_call_get_stats(control, cancellable, on_probe_done, g_steal_pointer(&task));
}

static void on_connection_ready(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        GCancellable *cancellable = g_task_get_cancellable(task);
        g_autoptr(GDBusConnection) connection = NULL;
        GError *error = NULL;

        connection = g_dbus_connection_new_finish(result, &error);
        if (connection == NULL) {
                g_task_return_error(task, error);
                return;
        }
        /* The channel belongs to one process: never let GDBus exit ours when
         * the worker goes away. */
        g_dbus_connection_set_exit_on_close(connection, FALSE);

        /* No bus name on a peer connection; properties are not needed here.
         * Signals are: PeerRefused becomes the proxy's "peer-refused". */
        sluice_worker1_proxy_new(connection, G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES,
                                 NULL, WORKER_OBJECT_PATH, cancellable, on_proxy_ready,
                                 g_steal_pointer(&task));
}

void sluice_worker_control_connect_async(int fd, GCancellable *cancellable,
                                         GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, user_data);
        g_autoptr(GSocket) socket = NULL;
        g_autoptr(GSocketConnection) stream = NULL;
        GError *error = NULL;

        g_task_set_source_tag(task, sluice_worker_control_connect_async);
        socket = g_socket_new_from_fd(fd, &error);
        if (socket == NULL) {
                g_task_return_error(task, error);
                return;
        }
        stream = g_socket_connection_factory_create_connection(socket);
        g_dbus_connection_new(G_IO_STREAM(stream), NULL,
                              G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                              NULL, cancellable, on_connection_ready, g_steal_pointer(&task));
}

SluiceWorker1 *sluice_worker_control_connect_finish(GAsyncResult *result, GError **error)
{
        return g_task_propagate_pointer(G_TASK(result), error);
}

void sluice_worker_control_get_stats_async(SluiceWorker1 *control, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data)
{
        sluice_worker1_call_get_stats(control, cancellable, callback, user_data);
}

GVariant *sluice_worker_control_get_stats_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                 GError **error)
{
        GVariant *stats = NULL;

        if (!sluice_worker1_call_get_stats_finish(control, &stats, result, error))
                return NULL;
        return stats;
}

static void on_set_read_only_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        g_autoptr(GError) error = NULL;

        if (sluice_worker1_call_set_read_only_finish(SLUICE_WORKER1(source), result, &error)) {
                g_task_return_boolean(task, TRUE);
                return;
        }
        g_dbus_error_strip_remote_error(error);
        g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                _("sluice-fs did not switch read-only mode (%s): stop and start the share"),
                                error->message);
}

void sluice_worker_control_set_readonly_async(SluiceWorker1 *control, gboolean readonly,
                                              GAsyncReadyCallback callback, gpointer user_data)
{
        GTask *task = g_task_new(control, NULL, callback, user_data);

        g_task_set_source_tag(task, sluice_worker_control_set_readonly_async);
        sluice_worker1_call_set_read_only(control, readonly, NULL, on_set_read_only_done, task);
}

gboolean sluice_worker_control_set_readonly_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                   GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, control), FALSE);
        return g_task_propagate_boolean(G_TASK(result), error);
}

static void on_set_names_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        g_autoptr(GError) error = NULL;

        if (sluice_worker1_call_set_names_finish(SLUICE_WORKER1(source), result, &error)) {
                g_task_return_boolean(task, TRUE);
                return;
        }
        g_dbus_error_strip_remote_error(error);
        g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                _("sluice-fs did not switch how it shows names (%s): stop and start the share"),
                                error->message);
}

void sluice_worker_control_set_names_async(SluiceWorker1 *control, const char *names, const char *case_,
                                           GAsyncReadyCallback callback, gpointer user_data)
{
        GTask *task = g_task_new(control, NULL, callback, user_data);

        g_task_set_source_tag(task, sluice_worker_control_set_names_async);
        sluice_worker1_call_set_names(control, names, case_, NULL, on_set_names_done, task);
}

gboolean sluice_worker_control_set_names_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, control), FALSE);
        return g_task_propagate_boolean(G_TASK(result), error);
}

static void on_set_peer_pid_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        g_autoptr(GError) error = NULL;

        if (sluice_worker1_call_set_peer_pid_finish(SLUICE_WORKER1(source), result, &error)) {
                g_task_return_boolean(task, TRUE);
                return;
        }
        g_dbus_error_strip_remote_error(error);
        g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                _("sluice-fs cannot be tied to the VM’s QEMU (process %u): %s"),
                                GPOINTER_TO_UINT(g_task_get_task_data(task)), error->message);
}

void sluice_worker_control_set_peer_pid_async(SluiceWorker1 *control, guint pid,
                                              GAsyncReadyCallback callback, gpointer user_data)
{
        GTask *task = g_task_new(control, NULL, callback, user_data);

        g_task_set_source_tag(task, sluice_worker_control_set_peer_pid_async);
        g_task_set_task_data(task, GUINT_TO_POINTER(pid), NULL);
        sluice_worker1_call_set_peer_pid(control, pid, NULL, on_set_peer_pid_done, task);
}

gboolean sluice_worker_control_set_peer_pid_finish(SluiceWorker1 *control, GAsyncResult *result,
                                                   GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, control), FALSE);
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_worker_control_close(SluiceWorker1 *control)
{
        GDBusConnection *connection = g_dbus_proxy_get_connection(G_DBUS_PROXY(control));

        if (!g_dbus_connection_is_closed(connection))
                g_dbus_connection_close(connection, NULL, NULL, NULL);
}
