/* SPDX-License-Identifier: GPL-2.0-or-later */
/* main.c — sluice-service: options, the bus name, signals, shutdown. */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "config-store.h"
#include "errors.h"
#include "manager.h"
#include "service-fd-store.h"
#include "sluice-names.h"
#include "socket-dir.h"

#define DEFAULT_STATS_INTERVAL_MS 1000
/* Workers get SIGKILL after 5 s; this only guards against a hang elsewhere. */
#define SHUTDOWN_GUARD_S 15
/* Each question to the user manager about a SIGTERM (three in a row): the
 * unit's stop timeout (15 s) must leave the workers their 5 s. */
#define JOB_QUERY_TIMEOUT_MS 1000
#define SYSTEMD_BUS_NAME "org.freedesktop.systemd1"

typedef struct {
        GMainLoop *loop;
        GDBusConnection *connection;
        SluiceServiceManager *manager;
        SluiceServiceOptions options;
        gboolean name_acquired;
        gboolean shutting_down;
        int exit_status;
} Service;

static void on_shutdown_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        Service *service = user_data;

        sluice_service_manager_shutdown_finish(SLUICE_SERVICE_MANAGER(source), result);
        g_main_loop_quit(service->loop);
}

static gboolean on_shutdown_guard(gpointer user_data)
{
        Service *service = user_data;

        g_warning("Workers did not stop within %d s; exiting anyway", SHUTDOWN_GUARD_S);
        g_main_loop_quit(service->loop);
        return G_SOURCE_REMOVE;
}

static void service_shutdown(Service *service, int status)
{
        if (service->shutting_down)
                return;
        service->shutting_down = TRUE;
        service->exit_status = status;
        if (service->manager == NULL) {
                g_main_loop_quit(service->loop);
                return;
        }
        g_timeout_add_seconds(SHUTDOWN_GUARD_S, on_shutdown_guard, service);
        sluice_service_manager_shutdown_async(service->manager, on_shutdown_done, service);
}

static gboolean on_signal(gpointer user_data)
{
        g_message("Stopping: stopping every worker");
        service_shutdown(user_data, EXIT_SUCCESS);
        return G_SOURCE_CONTINUE;
}

static void service_hand_over(Service *service)
{
        if (service->shutting_down)
                return;
        service->shutting_down = TRUE;
        service->exit_status = EXIT_SUCCESS;
        g_message("Restarting: the workers hand their shares over to the next service");
        g_timeout_add_seconds(SHUTDOWN_GUARD_S, on_shutdown_guard, service);
        sluice_service_manager_hand_over_async(service->manager, on_shutdown_done, service);
}

/* A SIGTERM is a stop or a restart of the unit, and only a restart may keep
 * the shares: a stop (logout, `systemctl --user stop`) must close every
 * connection so that QEMU sees its backend go, as it always did.  The
 * signal itself does not say which; the user manager does: the job that
 * made it send the signal is still running, and for `systemctl --user
 * restart` its JobType is "restart" until the stop half is done (then the
 * job turns into a start; seen on systemd 252 by tests/session's
 * service-restart case).  So:
 * GetUnitByPID(our pid) → Unit.Job → Job.JobType, each bounded by
 * JOB_QUERY_TIMEOUT_MS.  Anything else — no job, another type, no user
 * manager on the bus, an error, a timeout, no fd store for the unit — is a
 * stop.  Restart=on-failure is no SIGTERM and needs none of this: the
 * service failed and its workers' stores went with it. */
static void decide_on_sigterm(Service *service, const char *job_type, const char *why)
{
        if (g_strcmp0(job_type, "restart") == 0) {
                g_message("SIGTERM: the user manager restarts the unit (job type %s)", job_type);
                service_hand_over(service);
                return;
        }
        if (job_type != NULL)
                g_message("SIGTERM: the user manager's job for the unit is a %s: stopping", job_type);
        else
                g_message("SIGTERM: %s: stopping", why);
        on_signal(service);
}

static GVariant *get_property_finish(GObject *source, GAsyncResult *result, const char *type)
{
        g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), result, NULL);
        g_autoptr(GVariant) value = NULL;

        if (reply == NULL)
                return NULL;
        g_variant_get(reply, "(v)", &value);
        if (!g_variant_is_of_type(value, G_VARIANT_TYPE(type)))
                return NULL;
        return g_steal_pointer(&value);
}

static void get_property(Service *service, const char *path, const char *iface, const char *name,
                         GAsyncReadyCallback callback)
{
        g_dbus_connection_call(service->connection, SYSTEMD_BUS_NAME, path,
                               "org.freedesktop.DBus.Properties", "Get",
                               g_variant_new("(ss)", iface, name), G_VARIANT_TYPE("(v)"),
                               G_DBUS_CALL_FLAGS_NO_AUTO_START, JOB_QUERY_TIMEOUT_MS, NULL,
                               callback, service);
}

static void on_job_type(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GVariant) value = get_property_finish(source, result, "s");

        decide_on_sigterm(user_data, value != NULL ? g_variant_get_string(value, NULL) : NULL,
                          "the job's type could not be read");
}

static void on_unit_job(GObject *source, GAsyncResult *result, gpointer user_data)
{
        Service *service = user_data;
        g_autoptr(GVariant) value = get_property_finish(source, result, "(uo)");
        const char *job_path = NULL;
        guint32 id = 0;

        if (value == NULL) {
                decide_on_sigterm(service, NULL, "the unit's job could not be read");
                return;
        }
        g_variant_get(value, "(u&o)", &id, &job_path);
        if (id == 0) {
                decide_on_sigterm(service, NULL, "no job of the user manager sent it");
                return;
        }
        get_property(service, job_path, "org.freedesktop.systemd1.Job", "JobType", on_job_type);
}

static void on_unit_by_pid(GObject *source, GAsyncResult *result, gpointer user_data)
{
        Service *service = user_data;
        g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), result, NULL);
        const char *unit_path = NULL;

        if (reply == NULL) {
                decide_on_sigterm(service, NULL, "no unit of the user manager runs this service");
                return;
        }
        g_variant_get(reply, "(&o)", &unit_path);
        get_property(service, unit_path, "org.freedesktop.systemd1.Unit", "Job", on_unit_job);
}

static gboolean on_sigterm(gpointer user_data)
{
        Service *service = user_data;

        if (service->shutting_down)
                return G_SOURCE_CONTINUE;
        if (service->connection == NULL || service->manager == NULL ||
            !sluice_service_fd_store_available()) {
                decide_on_sigterm(service, NULL, "not run by a user manager with an fd store");
                return G_SOURCE_CONTINUE;
        }
        g_dbus_connection_call(service->connection, SYSTEMD_BUS_NAME, "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "GetUnitByPID",
                               g_variant_new("(u)", (guint32)getpid()), G_VARIANT_TYPE("(o)"),
                               G_DBUS_CALL_FLAGS_NO_AUTO_START, JOB_QUERY_TIMEOUT_MS, NULL,
                               on_unit_by_pid, service);
        return G_SOURCE_CONTINUE;
}

static void on_bus_acquired(GDBusConnection *connection, const char *name, gpointer user_data)
{
        Service *service = user_data;
        g_autoptr(GError) error = NULL;

        g_set_object(&service->connection, connection);
        service->manager = sluice_service_manager_new(&service->options);
        if (!sluice_service_manager_export(service->manager, connection, &error)) {
                g_printerr(_("sluice-service: cannot publish its objects on the session bus: %s\n"),
                           error->message);
                service_shutdown(service, EXIT_FAILURE);
        }
}

static void on_name_acquired(GDBusConnection *connection, const char *name, gpointer user_data)
{
        Service *service = user_data;

        service->name_acquired = TRUE;
        g_message("Serving %s", name);
        if (service->manager != NULL && !service->shutting_down)
                sluice_service_manager_autostart(service->manager);
}

static void on_name_lost(GDBusConnection *connection, const char *name, gpointer user_data)
{
        Service *service = user_data;

        if (connection == NULL) {
                g_printerr(_("sluice-service: cannot connect to the session bus: run it in a desktop session (DBUS_SESSION_BUS_ADDRESS)\n"));
                service_shutdown(service, EXIT_FAILURE);
        } else if (!service->name_acquired) {
                g_printerr(_("sluice-service: another sluice-service owns %s: stop it, or start this one with --replace\n"),
                           name);
                service_shutdown(service, EXIT_FAILURE);
        } else {
                g_message("Another sluice-service took over %s: stopping", name);
                service_shutdown(service, EXIT_SUCCESS);
        }
}

/* The sockets give access to the shared folders: a private folder of their
 * own, outside the runtime folder (socket-dir.h says why). */
static char *prepare_socket_dir(GError **error)
{
        const char *runtime = g_getenv("XDG_RUNTIME_DIR");

        if (runtime == NULL || *runtime == '\0' || !g_path_is_absolute(runtime)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("XDG_RUNTIME_DIR is not set: run sluice-service in your desktop session, or set XDG_RUNTIME_DIR to a private folder of yours"));
                return NULL;
        }
        return sluice_socket_dir_prepare(runtime, error);
}

static guint stats_interval_from_env(void)
{
        const char *env = g_getenv("SLUICE_STATS_INTERVAL_MS");
        guint64 value;

        if (env != NULL && g_ascii_string_to_unsigned(env, 10, 50, 3600000, &value, NULL))
                return (guint)value;
        return DEFAULT_STATS_INTERVAL_MS;
}

int main(int argc, char **argv)
{
        gboolean replace = FALSE, version = FALSE;
        gint stats_interval = 0;
        g_auto(GStrv) uris = NULL;
        g_autofree char *socket_dir = NULL;
        g_autofree char *config_file = NULL;
        g_autoptr(GOptionContext) context = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GMainLoop) loop = NULL;
        g_autoptr(GStrvBuilder) uri_list = g_strv_builder_new();
        g_auto(GStrv) uri_array = NULL;
        gboolean default_uris = TRUE;
        Service service = { 0 };
        guint owner_id;
        const GOptionEntry entries[] = {
                { "replace", 'r', 0, G_OPTION_ARG_NONE, &replace,
                  N_("Replace a running sluice-service"), NULL },
                { "stats-interval", 0, 0, G_OPTION_ARG_INT, &stats_interval,
                  N_("Sample a watched share’s stats every MS milliseconds (default 1000, or $SLUICE_STATS_INTERVAL_MS)"),
                  N_("MS") },
                { "libvirt-uri", 0, 0, G_OPTION_ARG_STRING_ARRAY, &uris,
                  N_("Track the VMs of this libvirt URI (repeatable; “none” for no VMs; default qemu:///session and qemu:///system, or $SLUICE_LIBVIRT_URIS)"),
                  N_("URI") },
                { "version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version"), NULL },
                G_OPTION_ENTRY_NULL,
        };

        setlocale(LC_ALL, "");
        bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
        bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
        textdomain(GETTEXT_PACKAGE);
        /* A worker or client that goes away mid-write must not kill the service. */
        signal(SIGPIPE, SIG_IGN);

        context = g_option_context_new(NULL);
        g_option_context_set_summary(context,
                _("Shares folders with virtual machines over virtiofs (D-Bus service org.sluice.Sluice1)."));
        g_option_context_add_main_entries(context, entries, GETTEXT_PACKAGE);
        if (!g_option_context_parse(context, &argc, &argv, &error)) {
                g_printerr("sluice-service: %s (see --help)\n", error->message);
                return 2;
        }
        if (version) {
                g_print("sluice-service %s\n", PACKAGE_VERSION);
                return 0;
        }
        if (stats_interval != 0 && (stats_interval < 50 || stats_interval > 3600000)) {
                g_printerr(_("sluice-service: --stats-interval must be 50 to 3600000 ms\n"));
                return 2;
        }

        if (uris == NULL && g_getenv("SLUICE_LIBVIRT_URIS") != NULL)
                uris = g_strsplit(g_getenv("SLUICE_LIBVIRT_URIS"), ",", -1);
        for (guint i = 0; uris != NULL && uris[i] != NULL; i++) {
                default_uris = FALSE;
                if (*uris[i] != '\0' && g_strcmp0(uris[i], "none") != 0)
                        g_strv_builder_add(uri_list, uris[i]);
        }
        uri_array = g_strv_builder_end(uri_list);

        socket_dir = prepare_socket_dir(&error);
        if (socket_dir == NULL) {
                g_printerr("sluice-service: %s\n", error->message);
                return 1;
        }
        config_file = sluice_config_default_path();

        loop = g_main_loop_new(NULL, FALSE);
        service.loop = loop;
        service.options.config_file = config_file;
        service.options.socket_dir = socket_dir;
        service.options.stats_interval_ms = stats_interval != 0 ? (guint)stats_interval
                                                                 : stats_interval_from_env();
        service.options.libvirt_uris = default_uris ? NULL : (const char *const *)uri_array;

        /* the fds a restart kept, before any share starts */
        sluice_service_fd_store_init();
        g_unix_signal_add(SIGTERM, on_sigterm, &service);
        g_unix_signal_add(SIGINT, on_signal, &service);
        owner_id = g_bus_own_name(G_BUS_TYPE_SESSION, SLUICE_BUS_NAME,
                                  G_BUS_NAME_OWNER_FLAGS_ALLOW_REPLACEMENT |
                                  (replace ? G_BUS_NAME_OWNER_FLAGS_REPLACE : 0),
                                  on_bus_acquired, on_name_acquired, on_name_lost,
                                  &service, NULL);
        g_main_loop_run(loop);

        g_bus_unown_name(owner_id);
        if (service.manager != NULL) {
                sluice_service_manager_unexport(service.manager);
                g_clear_object(&service.manager);
        }
        g_clear_object(&service.connection);
        return service.exit_status;
}
