/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-service.c — see share-service.h.  GDBus sends a property write to the
 * vtable's method_call when its set_property is NULL (documented for
 * g_dbus_connection_register_object): that is the hook. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "share-end-options.h"
#include "share-service.h"
#include "worker-binary.h"

#define PROPERTIES_INTERFACE "org.freedesktop.DBus.Properties"

struct _SluiceShareService {
        SluiceShareSkeleton parent_instance;
        SluiceSharedFolder *folder;  /* NULL once the share is being removed */
};

G_DEFINE_TYPE(SluiceShareService, sluice_share_service, SLUICE_TYPE_SHARE_SKELETON)

static GDBusInterfaceVTable *parent_vtable;

static gboolean refuse_when_removed(SluiceShareService *self, GDBusMethodInvocation *invocation)
{
        if (self->folder != NULL)
                return FALSE;
        g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                                              _("The share is being removed."));
        return TRUE;
}

static void on_read_only_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        GError *error = NULL;

        if (sluice_shared_folder_set_read_only_finish(SLUICE_SHARED_FOLDER(source), result, &error))
                g_dbus_method_invocation_return_value(g_steal_pointer(&invocation), NULL);
        else
                g_dbus_method_invocation_take_error(g_steal_pointer(&invocation), error);
}

/* AutoMount, MountPoint, MountAtBoot, Names, Case: the share checks and
 * applies them, so a refused MountPoint, Names or Case is the caller's error and the property keeps its
 * value.  FALSE when NAME is none of them. */
static gboolean set_guest_setting(SluiceShareService *self, const char *name, GVariant *value,
                                  GDBusMethodInvocation *invocation)
{
        GError *error = NULL;

        if (!g_str_equal(name, "AutoMount") && !g_str_equal(name, "MountPoint") &&
            !g_str_equal(name, "MountAtBoot") && !g_str_equal(name, "Names") && !g_str_equal(name, "Case"))
                return FALSE;
        if (refuse_when_removed(self, invocation))
                return TRUE;
        if (g_str_equal(name, "AutoMount")) {
                sluice_shared_folder_set_auto_mount(self->folder, g_variant_get_boolean(value));
        } else if (g_str_equal(name, "MountAtBoot")) {
                sluice_shared_folder_set_mount_at_boot(self->folder, g_variant_get_boolean(value));
        } else if (g_str_equal(name, "Names") || g_str_equal(name, "Case")) {
                const char *word = g_variant_get_string(value, NULL);

                if (!(g_str_equal(name, "Names") ? sluice_shared_folder_set_names(self->folder, word, &error)
                                                 : sluice_shared_folder_set_case(self->folder, word, &error))) {
                        g_dbus_method_invocation_take_error(invocation, error);
                        return TRUE;
                }
        } else if (!sluice_shared_folder_set_mount_point(self->folder,
                                                         g_variant_get_string(value, NULL), &error)) {
                g_dbus_method_invocation_take_error(invocation, error);
                return TRUE;
        }
        g_dbus_method_invocation_return_value(invocation, NULL);
        return TRUE;
}

static void share_service_method_call(GDBusConnection *connection, const char *sender,
                                    const char *object_path, const char *interface_name,
                                    const char *method_name, GVariant *parameters,
                                    GDBusMethodInvocation *invocation, gpointer user_data)
{
        SluiceShareService *self = user_data;
        const char *iface = NULL;
        const char *name = NULL;
        g_autoptr(GVariant) value = NULL;
        GError *error = NULL;

        if (g_strcmp0(interface_name, PROPERTIES_INTERFACE) != 0) {
                parent_vtable->method_call(connection, sender, object_path, interface_name, method_name,
                                           parameters, invocation, user_data);
                return;
        }
        /* only Set comes here (Get and GetAll use get_property); GDBus has
         * checked that the property exists, is writable and has its type */
        g_variant_get(parameters, "(&s&sv)", &iface, &name, &value);
        if (set_guest_setting(self, name, value, invocation))
                return;
        if (g_str_equal(name, "ReadOnly")) {
                if (refuse_when_removed(self, invocation))
                        return;
                sluice_shared_folder_set_read_only_async(self->folder, g_variant_get_boolean(value),
                                                         on_read_only_done, g_object_ref(invocation));
                return;
        }
        if (parent_vtable->set_property(connection, sender, object_path, iface, name, value, &error,
                                        user_data))
                g_dbus_method_invocation_return_value(invocation, NULL);
        else
                g_dbus_method_invocation_take_error(invocation, error);
}

static GDBusInterfaceVTable *share_service_get_vtable(GDBusInterfaceSkeleton *skeleton)
{
        static GDBusInterfaceVTable vtable;
        static gsize done;

        if (g_once_init_enter(&done)) {
                GDBusInterfaceSkeletonClass *parent =
                        G_DBUS_INTERFACE_SKELETON_CLASS(sluice_share_service_parent_class);

                parent_vtable = parent->get_vtable(skeleton);
                vtable = *parent_vtable;
                vtable.method_call = share_service_method_call;
                vtable.set_property = NULL;
                g_once_init_leave(&done, 1);
        }
        return &vtable;
}

/* ---- methods ---- */

static void on_start_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        GError *error = NULL;

        if (!sluice_shared_folder_start_finish(SLUICE_SHARED_FOLDER(source), result, &error))
                g_dbus_method_invocation_take_error(g_steal_pointer(&invocation), error);
        else
                sluice_share_complete_start(NULL, g_steal_pointer(&invocation));
}

static gboolean share_service_handle_start(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(iface);

        if (!refuse_when_removed(self, invocation))
                sluice_shared_folder_start_async(self->folder, on_start_done, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Stop and Detach, with options or without: one way in (share_service_end)
 * and one answer (answer_end); only the share's call differs. */
typedef enum { END_STOP, END_DETACH } End;

static void answer_end(GDBusMethodInvocation *invocation, gboolean done, GError *error)
{
        /* only a guest that uses the share refuses (Busy): it runs on, mounted */
        if (!done)
                g_dbus_method_invocation_take_error(invocation, error);
        else
                /* the four calls answer nothing */
                g_dbus_method_invocation_return_value(invocation, NULL);
}

static void on_stopped(GObject *source, GAsyncResult *result, gpointer user_data)
{
        GError *error = NULL;
        gboolean done = sluice_shared_folder_stop_finish(SLUICE_SHARED_FOLDER(source), result, &error);

        answer_end(user_data, done, error);
}

static void on_detached(GObject *source, GAsyncResult *result, gpointer user_data)
{
        GError *error = NULL;
        gboolean done = sluice_shared_folder_detach_finish(SLUICE_SHARED_FOLDER(source), result, &error);

        answer_end(user_data, done, error);
}

/* OPTIONS: NULL for Stop and Detach (no force). */
static gboolean share_service_end(SluiceShareService *self, GDBusMethodInvocation *invocation, GVariant *options,
                                  End end)
{
        SluiceShareEndOptions opts;
        GError *error = NULL;

        if (!sluice_share_end_options_parse(options, &opts, &error)) {
                g_dbus_method_invocation_take_error(invocation, error);
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        if (refuse_when_removed(self, invocation))
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        /* the reference taken here is the one answer_end's reply gives up */
        if (end == END_STOP)
                sluice_shared_folder_stop_async(self->folder, opts.force, on_stopped, g_object_ref(invocation));
        else
                sluice_shared_folder_detach_async(self->folder, opts.force, on_detached, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean share_service_handle_stop(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        return share_service_end(SLUICE_SHARE_SERVICE(iface), invocation, NULL, END_STOP);
}

static gboolean share_service_handle_stop_with_options(SluiceShare *iface, GDBusMethodInvocation *invocation,
                                                       GVariant *options)
{
        return share_service_end(SLUICE_SHARE_SERVICE(iface), invocation, options, END_STOP);
}

static gboolean share_service_handle_detach(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        return share_service_end(SLUICE_SHARE_SERVICE(iface), invocation, NULL, END_DETACH);
}

static gboolean share_service_handle_detach_with_options(SluiceShare *iface, GDBusMethodInvocation *invocation,
                                                         GVariant *options)
{
        return share_service_end(SLUICE_SHARE_SERVICE(iface), invocation, options, END_DETACH);
}

static void on_attach_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        GError *error = NULL;
        g_autofree char *hint = sluice_shared_folder_attach_finish(SLUICE_SHARED_FOLDER(source),
                                                                   result, &error);

        if (hint == NULL)
                g_dbus_method_invocation_take_error(g_steal_pointer(&invocation), error);
        else
                sluice_share_complete_attach(NULL, g_steal_pointer(&invocation), hint);
}

static gboolean share_service_handle_attach(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(iface);

        if (!refuse_when_removed(self, invocation))
                sluice_shared_folder_attach_async(self->folder, on_attach_done, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void on_restart_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        GError *error = NULL;

        if (sluice_worker_restart_finish(SLUICE_WORKER(source), result, &error))
                sluice_share_complete_restart(NULL, g_steal_pointer(&invocation));
        else
                g_dbus_method_invocation_take_error(g_steal_pointer(&invocation), error);
}

/* A hand-over, not a stop and start: the worker keeps its store, so the
 * share stays in its state (attached stays attached) and the share's own
 * "ready" handling says how it went (the "resumed" Event). */
static gboolean share_service_handle_restart(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(iface);
        SluiceWorker *worker;

        if (refuse_when_removed(self, invocation))
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        worker = sluice_shared_folder_get_worker(self->folder);
        if (worker == NULL) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                                      _("sluice-fs for “%s” is not running"),
                                                      sluice_shared_folder_get_config(self->folder)->tag);
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        g_message("%s: restarting its worker into %s", sluice_shared_folder_get_config(self->folder)->tag,
                  sluice_worker_binary());
        sluice_worker_restart_async(worker, on_restart_done, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The watch belongs to the caller's unique name: a client that crashes
 * without UnwatchStats ends its watch by leaving the bus. */
static gboolean share_service_handle_watch_stats(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(iface);

        if (refuse_when_removed(self, invocation))
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        sluice_share_stats_watch(sluice_shared_folder_get_stats(self->folder),
                                 g_dbus_method_invocation_get_connection(invocation),
                                 g_dbus_method_invocation_get_sender(invocation));
        sluice_share_complete_watch_stats(iface, invocation);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean share_service_handle_unwatch_stats(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(iface);

        if (self->folder != NULL)
                sluice_share_stats_unwatch(sluice_shared_folder_get_stats(self->folder),
                                           g_dbus_method_invocation_get_sender(invocation));
        sluice_share_complete_unwatch_stats(iface, invocation);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void on_sample_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        g_autoptr(GVariant) stats = sluice_share_stats_sample_finish(SLUICE_SHARE_STATS(source), result);

        sluice_share_complete_sample_stats(NULL, g_steal_pointer(&invocation), stats);
}

static gboolean share_service_handle_sample_stats(SluiceShare *iface, GDBusMethodInvocation *invocation)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(iface);

        if (!refuse_when_removed(self, invocation))
                sluice_share_stats_sample_async(sluice_shared_folder_get_stats(self->folder),
                                                on_sample_done, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void on_autostart_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(object);

        if (self->folder != NULL)
                sluice_shared_folder_set_autostart(self->folder, sluice_share_get_autostart(SLUICE_SHARE(self)));
}

static void sluice_share_service_finalize(GObject *object)
{
        SluiceShareService *self = SLUICE_SHARE_SERVICE(object);

        if (self->folder != NULL)
                g_object_remove_weak_pointer(G_OBJECT(self->folder), (gpointer *)&self->folder);
        G_OBJECT_CLASS(sluice_share_service_parent_class)->finalize(object);
}

static void sluice_share_service_class_init(SluiceShareServiceClass *klass)
{
        G_OBJECT_CLASS(klass)->finalize = sluice_share_service_finalize;
        G_DBUS_INTERFACE_SKELETON_CLASS(klass)->get_vtable = share_service_get_vtable;
}

static void sluice_share_service_init(SluiceShareService *self)
{
}

SluiceSharedFolder *sluice_share_service_new_folder(const SluiceShareConfig *config, SluiceVmManager *vms,
                                                    const char *socket_dir, guint stats_interval_ms)
{
        g_autoptr(SluiceShareService) self = g_object_new(SLUICE_TYPE_SHARE_SERVICE, NULL);
        SluiceSharedFolder *folder = sluice_shared_folder_new(config, SLUICE_SHARE(self), vms, socket_dir,
                                                              stats_interval_ms);

        /* the folder owns this object: calls that come after it went are refused */
        self->folder = folder;
        g_object_add_weak_pointer(G_OBJECT(folder), (gpointer *)&self->folder);
        g_signal_connect(self, "handle-start", G_CALLBACK(share_service_handle_start), NULL);
        g_signal_connect(self, "handle-stop", G_CALLBACK(share_service_handle_stop), NULL);
        g_signal_connect(self, "handle-attach", G_CALLBACK(share_service_handle_attach), NULL);
        g_signal_connect(self, "handle-detach", G_CALLBACK(share_service_handle_detach), NULL);
        g_signal_connect(self, "handle-stop-with-options", G_CALLBACK(share_service_handle_stop_with_options),
                         NULL);
        g_signal_connect(self, "handle-detach-with-options",
                         G_CALLBACK(share_service_handle_detach_with_options), NULL);
        g_signal_connect(self, "handle-restart", G_CALLBACK(share_service_handle_restart), NULL);
        g_signal_connect(self, "handle-watch-stats", G_CALLBACK(share_service_handle_watch_stats), NULL);
        g_signal_connect(self, "handle-unwatch-stats", G_CALLBACK(share_service_handle_unwatch_stats), NULL);
        g_signal_connect(self, "handle-sample-stats", G_CALLBACK(share_service_handle_sample_stats), NULL);
        g_signal_connect(self, "notify::autostart", G_CALLBACK(on_autostart_changed), NULL);
        return folder;
}
