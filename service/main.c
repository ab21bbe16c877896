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
#include "sluice-names.h"
#include "socket-dir.h"

#define DEFAULT_STATS_INTERVAL_MS 1000
/* Workers get SIGKILL after 5 s; this only guards against a hang elsewhere. */
#define SHUTDOWN_GUARD_S 15

typedef struct {
        GMainLoop *loop;
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

static void on_bus_acquired(GDBusConnection *connection, const char *name, gpointer user_data)
{
        Service *service = user_data;
        g_autoptr(GError) error = NULL;

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

        g_unix_signal_add(SIGTERM, on_signal, &service);
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
        return service.exit_status;
}
