/* sluicectl — command-line client of org.sluice.Sluice1, for people and scripts.
 *
 * Exit status: 0 done, 1 the service refused or failed (its message is
 * printed), 2 usage error.  --json prints one JSON document per command
 * (stats --watch: one per line). */
#include "config.h"

#include <inttypes.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <systemd/sd-daemon.h>

#include "errors.h"
#include "state-labels.h"
#include "sluice-dbus.h"

#define BUS_NAME "org.sluice.Sluice1"
#define OBJECT_ROOT "/org/sluice/Sluice1"
#define SHARE_PREFIX OBJECT_ROOT "/share/"
/* Start and Attach wait for a worker and for libvirt. */
#define CALL_TIMEOUT_MS (120 * 1000)

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct {
        gboolean json;
        GDBusObjectManager *objects;
        SluiceManager *manager;
} Ctl;

static int usage_error(const char *format, ...) G_GNUC_PRINTF(1, 2);

static const char usage_text[] = N_(
        "Usage: sluicectl [--json] COMMAND [ARGUMENTS]\n"
        "\n"
        "Commands:\n"
        "  list                              the shares\n"
        "  add PATH [--vm NAME] [--tag TAG] [--readonly] [--no-autostart] [--attach]\n"
        "      [--cache auto|always|never] [--queues N]\n"
        "                                    share a folder\n"
        "  remove SHARE                      stop and forget a share\n"
        "  start SHARE | stop SHARE          run or stop its worker\n"
        "  start --wait SHARE                run it, then stay until it stops (and stop it\n"
        "                                    on SIGTERM): for sluice-share@.service\n"
        "  attach SHARE | detach SHARE       plug it into its VM or unplug it\n"
        "  set SHARE readonly on|off         switch read-only live\n"
        "  set SHARE autostart on|off\n"
        "  set SHARE vm NAME                 assign a VM (\"\" for none)\n"
        "  stats SHARE [--watch [--count N]] throughput, latency and queue counters\n"
        "  vms                               the VMs Sluice can share with\n"
        "\n"
        "SHARE is a tag, a share id or an object path.\n"
        "--json prints JSON for scripts.  Exit status: 0 done, 1 failed, 2 usage error.\n");

static int usage_error(const char *format, ...)
{
        va_list args;
        g_autofree char *message = NULL;

        va_start(args, format);
        message = g_strdup_vprintf(format, args);
        va_end(args);
        g_printerr("sluicectl: %s\n%s", message, _("Try “sluicectl --help”.\n"));
        return EXIT_USAGE;
}

static int fail(GError *error)
{
        g_autofree char *remote = g_dbus_error_get_remote_error(error);

        /* The service's own errors are sentences; a bus error's name (no
         * service, timeout) tells what happened, so it stays. */
        if (remote == NULL || g_str_has_prefix(remote, "org.sluice."))
                g_dbus_error_strip_remote_error(error);
        g_printerr("sluicectl: %s\n", error->message);
        return EXIT_FAILED;
}

static void print_json(JsonNode *node)
{
        g_autoptr(JsonGenerator) generator = json_generator_new();
        g_autofree char *text = NULL;

        json_generator_set_root(generator, node);
        json_generator_set_pretty(generator, FALSE);
        text = json_generator_to_data(generator, NULL);
        g_print("%s\n", text);
}

/* ---- connecting ---- */

static gboolean ctl_connect(Ctl *ctl, GError **error)
{
        g_autoptr(GDBusConnection) bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
        g_autoptr(GVariant) reply = NULL;

        if (bus == NULL)
                return FALSE;
        /* A first call activates the service when it is not running. */
        reply = g_dbus_connection_call_sync(bus, BUS_NAME, OBJECT_ROOT,
                                            "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
                                            G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, error);
        if (reply == NULL)
                return FALSE;
        ctl->objects = sluice_object_manager_client_new_sync(bus,
                                                             G_DBUS_OBJECT_MANAGER_CLIENT_FLAGS_DO_NOT_AUTO_START,
                                                             BUS_NAME, OBJECT_ROOT, NULL, error);
        if (ctl->objects == NULL)
                return FALSE;
        ctl->manager = sluice_manager_proxy_new_sync(bus, G_DBUS_PROXY_FLAGS_NONE, BUS_NAME,
                                                     OBJECT_ROOT, NULL, error);
        if (ctl->manager == NULL)
                return FALSE;
        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(ctl->manager), CALL_TIMEOUT_MS);
        return TRUE;
}

static gint compare_objects(gconstpointer a, gconstpointer b)
{
        const char *pa = g_dbus_object_get_object_path(G_DBUS_OBJECT(a));
        const char *pb = g_dbus_object_get_object_path(G_DBUS_OBJECT(b));

        /* Shares in id order: compare the numeric tails. */
        if (g_str_has_prefix(pa, SHARE_PREFIX) && g_str_has_prefix(pb, SHARE_PREFIX)) {
                guint64 ia = g_ascii_strtoull(pa + strlen(SHARE_PREFIX), NULL, 10);
                guint64 ib = g_ascii_strtoull(pb + strlen(SHARE_PREFIX), NULL, 10);

                if (ia != ib)
                        return ia < ib ? -1 : 1;
        }
        return strcmp(pa, pb);
}

static GList *ctl_shares(Ctl *ctl)
{
        GList *objects = g_dbus_object_manager_get_objects(ctl->objects);
        GList *shares = NULL;

        for (GList *l = objects; l != NULL; l = l->next) {
                SluiceShare *share = sluice_object_get_share(SLUICE_OBJECT(l->data));

                if (share != NULL) {
                        shares = g_list_prepend(shares, g_object_ref(l->data));
                        g_object_unref(share);
                }
        }
        g_list_free_full(objects, g_object_unref);
        return g_list_sort(shares, compare_objects);
}

static const char *share_id(SluiceShare *share)
{
        const char *path = g_dbus_proxy_get_object_path(G_DBUS_PROXY(share));

        return g_str_has_prefix(path, SHARE_PREFIX) ? path + strlen(SHARE_PREFIX) : path;
}

/* SHARE: an object path, an id or a tag. */
static SluiceShare *ctl_find_share(Ctl *ctl, const char *name, GError **error)
{
        g_autolist(GObject) shares = ctl_shares(ctl);
        gboolean numeric = *name != '\0' && strspn(name, "0123456789") == strlen(name);

        for (GList *l = shares; l != NULL; l = l->next) {
                SluiceShare *share = sluice_object_get_share(SLUICE_OBJECT(l->data));
                const char *path = g_dbus_proxy_get_object_path(G_DBUS_PROXY(share));

                if (g_strcmp0(path, name) == 0 || (numeric && g_strcmp0(share_id(share), name) == 0) ||
                    g_strcmp0(sluice_share_get_tag(share), name) == 0) {
                        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(share), CALL_TIMEOUT_MS);
                        return share;
                }
                g_object_unref(share);
        }
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                    _("There is no share “%s”: see the shares with “sluicectl list”"), name);
        return NULL;
}

/* ---- output ---- */

static JsonNode *share_to_json(SluiceShare *share)
{
        g_autoptr(JsonBuilder) b = json_builder_new();

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "id");
        json_builder_add_string_value(b, share_id(share));
        json_builder_set_member_name(b, "object_path");
        json_builder_add_string_value(b, g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)));
#define STRING_MEMBER(name, getter)                                     \
        json_builder_set_member_name(b, name);                          \
        json_builder_add_string_value(b, getter(share) ?: "")
        STRING_MEMBER("path", sluice_share_get_path);
        STRING_MEMBER("tag", sluice_share_get_tag);
        STRING_MEMBER("vm", sluice_share_get_vm);
        STRING_MEMBER("state", sluice_share_get_state);
        STRING_MEMBER("error", sluice_share_get_error);
        STRING_MEMBER("socket_path", sluice_share_get_socket_path);
        STRING_MEMBER("guest_hint", sluice_share_get_guest_hint);
#undef STRING_MEMBER
        json_builder_set_member_name(b, "read_only");
        json_builder_add_boolean_value(b, sluice_share_get_read_only(share));
        json_builder_set_member_name(b, "autostart");
        json_builder_add_boolean_value(b, sluice_share_get_autostart(share));
        json_builder_end_object(b);
        return json_builder_get_root(b);
}

static void print_share_json(SluiceShare *share)
{
        g_autoptr(JsonNode) node = share_to_json(share);

        print_json(node);
}

/* ---- tables for people ---- */

/* Terminal columns @text takes: CJK wide characters two, combining marks
 * and other zero-width characters none (bytes and characters both lie). */
static gsize text_width(const char *text)
{
        gsize width = 0;

        for (const char *p = text; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                if (!g_unichar_iszerowidth(c))
                        width += g_unichar_iswide(c) ? 2 : 1;
        }
        return width;
}

/* A cell as it may reach a terminal: valid UTF-8 with control characters
 * (a newline or an escape in a folder name) shown as U+FFFD. */
static char *table_cell(const char *text)
{
        g_autofree char *valid = g_utf8_make_valid(text != NULL ? text : "", -1);
        GString *cell = g_string_sized_new(strlen(valid));

        for (const char *p = valid; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                g_string_append_unichar(cell, g_unichar_iscntrl(c) ? 0xFFFD : c);
        }
        return g_string_free(cell, FALSE);
}

typedef struct {
        char **cells;   /* table->columns of them */
        char *note;     /* a line of its own under the row, or NULL */
} TableRow;

/* Columns as wide as their widest cell; the last one is not padded. */
typedef struct {
        guint columns;
        GPtrArray *rows;        /* of TableRow; the first is the header */
} Table;

static void table_row_free(gpointer data)
{
        TableRow *row = data;

        g_strfreev(row->cells);
        g_free(row->note);
        g_free(row);
}

static void table_add_valist(Table *table, const char *note, va_list args)
{
        TableRow *row = g_new0(TableRow, 1);

        row->cells = g_new0(char *, table->columns + 1);
        for (guint c = 0; c < table->columns; c++)
                row->cells[c] = table_cell(va_arg(args, const char *));
        row->note = note != NULL && *note != '\0' ? table_cell(note) : NULL;
        g_ptr_array_add(table->rows, row);
}

/* A row: @note, then one string per column. */
static void table_add(Table *table, const char *note, ...)
{
        va_list args;

        va_start(args, note);
        table_add_valist(table, note, args);
        va_end(args);
}

/* A table with its header: one string per column. */
static Table *table_new(guint columns, ...)
{
        Table *table = g_new0(Table, 1);
        va_list args;

        table->columns = columns;
        table->rows = g_ptr_array_new_with_free_func(table_row_free);
        va_start(args, columns);
        table_add_valist(table, NULL, args);
        va_end(args);
        return table;
}

static void table_free(Table *table)
{
        g_ptr_array_unref(table->rows);
        g_free(table);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Table, table_free)

static void table_print(Table *table)
{
        g_autofree gsize *widths = g_new0(gsize, table->columns);
        g_autoptr(GString) line = g_string_new(NULL);

        for (guint r = 0; r < table->rows->len; r++) {
                TableRow *row = g_ptr_array_index(table->rows, r);

                for (guint c = 0; c < table->columns; c++)
                        widths[c] = MAX(widths[c], text_width(row->cells[c]));
        }
        for (guint r = 0; r < table->rows->len; r++) {
                TableRow *row = g_ptr_array_index(table->rows, r);

                g_string_truncate(line, 0);
                for (guint c = 0; c < table->columns; c++) {
                        g_string_append(line, row->cells[c]);
                        if (c + 1 == table->columns)
                                break;
                        for (gsize w = text_width(row->cells[c]); w <= widths[c]; w++)
                                g_string_append_c(line, ' ');
                }
                g_print("%s\n", line->str);
                /* Notes start under the second column. */
                if (row->note != NULL)
                        g_print("%*s%s\n", (int)widths[0] + 1, "", row->note);
        }
}

/* ---- commands ---- */

static int cmd_list(Ctl *ctl, int argc, char **argv)
{
        g_autolist(GObject) shares = NULL;
        g_autoptr(Table) table = NULL;

        if (argc != 1)
                return usage_error(_("“list” takes no arguments"));
        shares = ctl_shares(ctl);
        if (ctl->json) {
                g_autoptr(JsonNode) root = json_node_new(JSON_NODE_ARRAY);
                JsonArray *array = json_array_new();

                for (GList *l = shares; l != NULL; l = l->next) {
                        g_autoptr(SluiceShare) share = sluice_object_get_share(SLUICE_OBJECT(l->data));

                        json_array_add_element(array, share_to_json(share));
                }
                json_node_take_array(root, array);
                print_json(root);
                return EXIT_OK;
        }
        if (shares == NULL) {
                g_print("%s\n", _("No shares.  Add one with “sluicectl add PATH --vm NAME”."));
                return EXIT_OK;
        }
        table = table_new(6, _("ID"), _("TAG"), _("STATE"), _("VM"), _("RO"), _("PATH"));
        for (GList *l = shares; l != NULL; l = l->next) {
                g_autoptr(SluiceShare) share = sluice_object_get_share(SLUICE_OBJECT(l->data));
                const char *vm = sluice_share_get_vm(share);

                table_add(table, sluice_share_get_error(share), share_id(share),
                          sluice_share_get_tag(share),
                          sluice_share_state_label(sluice_share_get_state(share)),
                          vm != NULL && *vm != '\0' ? vm : "-",
                          sluice_share_get_read_only(share) ? _("yes") : _("no"),
                          sluice_share_get_path(share));
        }
        table_print(table);
        return EXIT_OK;
}

static gboolean parse_uint_arg(const char *text, guint64 min, guint64 max, guint64 *out)
{
        return text != NULL && g_ascii_string_to_unsigned(text, 10, min, max, out, NULL);
}

static int cmd_add(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(GVariantBuilder) options = g_variant_builder_new(G_VARIANT_TYPE_VARDICT);
        g_autofree char *object_path = NULL;
        g_autofree char *absolute = NULL;
        g_autofree char *cwd = g_get_current_dir();
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        const char *path = NULL, *vm = "";

        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i];
                const char *value = i + 1 < argc ? argv[i + 1] : NULL;
                guint64 number;

                if (strcmp(arg, "--vm") == 0 || strcmp(arg, "--tag") == 0 ||
                    strcmp(arg, "--cache") == 0 || strcmp(arg, "--queues") == 0) {
                        if (value == NULL)
                                return usage_error(_("%s needs a value"), arg);
                        i++;
                        if (strcmp(arg, "--vm") == 0)
                                vm = value;
                        else if (strcmp(arg, "--tag") == 0)
                                g_variant_builder_add(options, "{sv}", "tag", g_variant_new_string(value));
                        else if (strcmp(arg, "--cache") == 0)
                                g_variant_builder_add(options, "{sv}", "cache", g_variant_new_string(value));
                        else if (parse_uint_arg(value, 1, G_MAXUINT32, &number))
                                g_variant_builder_add(options, "{sv}", "queues",
                                                      g_variant_new_uint32((guint32)number));
                        else
                                return usage_error(_("--queues needs a number, not “%s”"), value);
                } else if (strcmp(arg, "--readonly") == 0 || strcmp(arg, "--read-only") == 0) {
                        g_variant_builder_add(options, "{sv}", "read-only", g_variant_new_boolean(TRUE));
                } else if (strcmp(arg, "--no-autostart") == 0) {
                        g_variant_builder_add(options, "{sv}", "autostart", g_variant_new_boolean(FALSE));
                } else if (strcmp(arg, "--attach") == 0) {
                        g_variant_builder_add(options, "{sv}", "attach", g_variant_new_boolean(TRUE));
                } else if (g_str_has_prefix(arg, "-") && strcmp(arg, "-") != 0) {
                        return usage_error(_("Unknown option “%s” for “add”"), arg);
                } else if (path == NULL) {
                        path = arg;
                } else {
                        return usage_error(_("“add” takes one folder"));
                }
        }
        if (path == NULL)
                return usage_error(_("“add” needs the folder to share"));
        if (!g_utf8_validate(path, -1, NULL) || !g_utf8_validate(vm, -1, NULL))
                return usage_error(_("The path and the VM name must be UTF-8 text"));

        /* The service runs elsewhere: a relative path means ours. */
        absolute = g_canonicalize_filename(path, cwd);
        if (!sluice_manager_call_add_share_sync(ctl->manager, absolute, vm,
                                                g_variant_builder_end(options), &object_path,
                                                NULL, &error))
                return fail(error);
        if (!ctl->json) {
                g_print("%s\n", object_path);
                return EXIT_OK;
        }
        share = sluice_share_proxy_new_sync(g_dbus_proxy_get_connection(G_DBUS_PROXY(ctl->manager)),
                                            G_DBUS_PROXY_FLAGS_NONE, BUS_NAME, object_path, NULL,
                                            &error);
        if (share == NULL)
                return fail(error);
        print_share_json(share);
        return EXIT_OK;
}

static int print_done(Ctl *ctl, SluiceShare *share, const char *hint)
{
        if (ctl->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;

                json_builder_begin_object(b);
                json_builder_set_member_name(b, "object_path");
                json_builder_add_string_value(b, g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)));
                json_builder_set_member_name(b, "tag");
                json_builder_add_string_value(b, sluice_share_get_tag(share));
                if (hint != NULL) {
                        json_builder_set_member_name(b, "guest_hint");
                        json_builder_add_string_value(b, hint);
                }
                json_builder_set_member_name(b, "ok");
                json_builder_add_boolean_value(b, TRUE);
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                print_json(root);
        } else if (hint != NULL) {
                g_print("%s\n", hint);
        }
        return EXIT_OK;
}

/* remove, stop, attach, detach: SHARE is the only argument. */
static int cmd_share_action(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *hint = NULL;
        const char *command = argv[0];
        gboolean ok;

        if (argc != 2)
                return usage_error(_("“%s” needs exactly one SHARE (a tag, id or object path)"), command);
        share = ctl_find_share(ctl, argv[1], &error);
        if (share == NULL)
                return fail(error);
        if (strcmp(command, "remove") == 0)
                ok = sluice_manager_call_remove_share_sync(ctl->manager,
                        g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)), NULL, &error);
        else if (strcmp(command, "stop") == 0)
                ok = sluice_share_call_stop_sync(share, NULL, &error);
        else if (strcmp(command, "attach") == 0)
                ok = sluice_share_call_attach_sync(share, &hint, NULL, &error);
        else
                ok = sluice_share_call_detach_sync(share, NULL, &error);
        if (!ok)
                return fail(error);
        return print_done(ctl, share, hint);
}

/* ---- start --wait: a share for as long as this command runs ----
 *
 * sluice-share@.service runs it as its main process (Type=notify): READY=1
 * once Start has returned (the worker listens; it is attached when its VM
 * runs), STATUS= lines as the share's state changes, and the exit tells
 * systemd what became of the share: 0 when it was stopped (ExecStop's
 * "sluicectl stop", another client, or our SIGTERM), 1 when it failed, was
 * removed, or the service went away (Restart=on-failure starts it again). */

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

/* The State property as the service has it now: after Start's reply the
 * proxy's copy is still the old one until PropertiesChanged is dispatched. */
static char *share_fetch_state(SluiceShare *share, GError **error)
{
        g_autoptr(GVariant) reply = NULL;
        g_autoptr(GVariant) value = NULL;

        reply = g_dbus_proxy_call_sync(G_DBUS_PROXY(share), "org.freedesktop.DBus.Properties.Get",
                                       g_variant_new("(ss)", "org.sluice.Sluice1.Share", "State"),
                                       G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, error);
        if (reply == NULL)
                return NULL;
        g_variant_get(reply, "(v)", &value);
        if (!g_variant_is_of_type(value, G_VARIANT_TYPE_STRING)) {
                g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "State is not a string");
                return NULL;
        }
        return g_variant_dup_string(value, NULL);
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

        if (g_strcmp0(state, "stopped") == 0) {
                wait_finish(wait, EXIT_OK, NULL);
        } else if (g_strcmp0(state, "failed") == 0) {
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

static int start_and_wait(Ctl *ctl, SluiceShare *share)
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
            (state = share_fetch_state(share, &error)) == NULL) {
                wait.status = fail(error);
        } else {
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
                        return fail(error);
                return EXIT_OK;
        }
        return wait.status;
}

static int cmd_start(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        const char *name = NULL;
        gboolean wait = FALSE;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--wait") == 0)
                        wait = TRUE;
                else if (argv[i][0] == '-')
                        return usage_error(_("Unknown option “%s” for “start”"), argv[i]);
                else if (name == NULL)
                        name = argv[i];
                else
                        return usage_error(_("“%s” needs exactly one SHARE (a tag, id or object path)"), argv[0]);
        }
        if (name == NULL)
                return usage_error(_("“%s” needs exactly one SHARE (a tag, id or object path)"), argv[0]);
        share = ctl_find_share(ctl, name, &error);
        if (share == NULL)
                return fail(error);
        if (wait)
                return start_and_wait(ctl, share);
        if (!sluice_share_call_start_sync(share, NULL, &error))
                return fail(error);
        return print_done(ctl, share, NULL);
}

static gboolean parse_on_off(const char *text, gboolean *value)
{
        if (g_strcmp0(text, "on") == 0 || g_strcmp0(text, "true") == 0 || g_strcmp0(text, "yes") == 0) {
                *value = TRUE;
                return TRUE;
        }
        if (g_strcmp0(text, "off") == 0 || g_strcmp0(text, "false") == 0 || g_strcmp0(text, "no") == 0) {
                *value = FALSE;
                return TRUE;
        }
        return FALSE;
}

static int cmd_set(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) reply = NULL;
        const char *property = NULL;
        gboolean value = FALSE;

        if (argc != 4)
                return usage_error(_("Use “set SHARE readonly on|off”, “set SHARE autostart on|off” or “set SHARE vm NAME”"));
        if (strcmp(argv[2], "vm") != 0) {
                if (strcmp(argv[2], "readonly") == 0 || strcmp(argv[2], "read-only") == 0)
                        property = "ReadOnly";
                else if (strcmp(argv[2], "autostart") == 0)
                        property = "Autostart";
                else
                        return usage_error(_("Unknown setting “%s”: use readonly, autostart or vm"), argv[2]);
                if (!parse_on_off(argv[3], &value))
                        return usage_error(_("“%s” is not on or off"), argv[3]);
        }
        share = ctl_find_share(ctl, argv[1], &error);
        if (share == NULL)
                return fail(error);
        if (strcmp(argv[2], "vm") == 0) {
                if (!g_utf8_validate(argv[3], -1, NULL))
                        return usage_error(_("The VM name must be UTF-8 text"));
                if (!sluice_share_call_set_vm_sync(share, argv[3], NULL, &error))
                        return fail(error);
                return print_done(ctl, share, NULL);
        }
        /* Properties.Set directly: the generated setter would not report errors. */
        reply = g_dbus_proxy_call_sync(G_DBUS_PROXY(share), "org.freedesktop.DBus.Properties.Set",
                                       g_variant_new("(ssv)", "org.sluice.Sluice1.Share", property,
                                                     g_variant_new_boolean(value)),
                                       G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, NULL, &error);
        if (reply == NULL)
                return fail(error);
        return print_done(ctl, share, NULL);
}

static guint64 stat_u64(GVariant *stats, const char *key)
{
        guint64 value = 0;

        (void)g_variant_lookup(stats, key, "t", &value);
        return value;
}

static double stat_double(GVariant *stats, const char *key)
{
        double value = 0;

        (void)g_variant_lookup(stats, key, "d", &value);
        return value;
}

/* When the totals began (Share.Stats "since-us"): a time of day, with the
 * date when it is not today. */
static void print_stats_since(guint64 since_us)
{
        g_autoptr(GDateTime) since = NULL;
        g_autoptr(GDateTime) now = g_date_time_new_now_local();
        g_autofree char *when = NULL;

        if (since_us == 0)
                return;
        since = g_date_time_new_from_unix_local((gint64)(since_us / G_USEC_PER_SEC));
        if (since == NULL)
                return;
        when = g_date_time_format(since, g_date_time_get_day_of_year(since) ==
                                                 g_date_time_get_day_of_year(now) &&
                                         g_date_time_get_year(since) == g_date_time_get_year(now)
                                         ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S");
        /* Translators: %s is a time ("14:02:11") or a date and time */
        g_print(_("  totals since %s\n"), when);
}

static void print_stats(Ctl *ctl, SluiceShare *share, GVariant *stats)
{
        g_autoptr(GVariant) queues = NULL;
        g_autofree char *read_rate = NULL, *write_rate = NULL, *read_total = NULL, *write_total = NULL;

        if (ctl->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;

                json_builder_begin_object(b);
                json_builder_set_member_name(b, "tag");
                json_builder_add_string_value(b, sluice_share_get_tag(share));
                json_builder_set_member_name(b, "state");
                json_builder_add_string_value(b, sluice_share_get_state(share));
                json_builder_set_member_name(b, "stats");
                json_builder_add_value(b, json_gvariant_serialize(stats));
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                print_json(root);
                return;
        }
        if (g_variant_n_children(stats) == 0) {
                /* Translators: the second %s is a share state ("Stopped", "Failed") */
                g_print(_("%s: no stats (share state: %s)\n"), sluice_share_get_tag(share),
                        sluice_share_state_label(sluice_share_get_state(share)));
                return;
        }
        read_rate = g_format_size((guint64)stat_double(stats, "read-bytes-per-sec"));
        write_rate = g_format_size((guint64)stat_double(stats, "write-bytes-per-sec"));
        read_total = g_format_size(stat_u64(stats, "bytes-read"));
        write_total = g_format_size(stat_u64(stats, "bytes-written"));
        g_print(_("%s: read %s/s (%s total), write %s/s (%s total), %.0f ops/s (%" PRIu64
                  " total), %" PRIu64 " errors, latency p50 %" PRIu64
                  " µs p99 %" PRIu64 " µs\n"),
                sluice_share_get_tag(share), read_rate, read_total, write_rate, write_total,
                stat_double(stats, "ops-per-sec"), stat_u64(stats, "requests"),
                stat_u64(stats, "errors"), stat_u64(stats, "latency-p50-us"),
                stat_u64(stats, "latency-p99-us"));
        print_stats_since(stat_u64(stats, "since-us"));
        queues = g_variant_lookup_value(stats, "queues", G_VARIANT_TYPE("aa{sv}"));
        for (gsize i = 0; queues != NULL && i < g_variant_n_children(queues); i++) {
                g_autoptr(GVariant) q = g_variant_get_child_value(queues, i);
                guint32 index = 0;

                (void)g_variant_lookup(q, "index", "u", &index);
                g_print(_("  queue %u%s: %" PRIu64 " requests, %" PRIu64
                          " kicks, %" PRIu64 " polled, %" PRIu64
                          " batches, %" PRIu64 " in flight\n"),
                        index, index == 0 ? _(" (hiprio)") : "", stat_u64(q, "requests"),
                        stat_u64(q, "kicks"), stat_u64(q, "polled"), stat_u64(q, "batches"),
                        stat_u64(q, "in-flight"));
        }
}

typedef struct {
        Ctl *ctl;
        SluiceShare *share;
        GMainLoop *loop;
        guint64 remaining;   /* 0 = until interrupted */
        int status;
} Watch;

static void on_stats_changed(GDBusProxy *proxy, GVariant *changed, GStrv invalidated,
                             gpointer user_data)
{
        Watch *watch = user_data;
        g_autoptr(GVariant) stats = g_variant_lookup_value(changed, "Stats", G_VARIANT_TYPE_VARDICT);

        if (stats == NULL)
                return;
        print_stats(watch->ctl, watch->share, stats);
        if (watch->remaining > 0 && --watch->remaining == 0)
                g_main_loop_quit(watch->loop);
}

static void on_owner_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
        Watch *watch = user_data;
        g_autofree char *owner = g_dbus_proxy_get_name_owner(G_DBUS_PROXY(object));

        if (owner == NULL) {
                g_printerr("sluicectl: %s\n", _("sluice-service stopped"));
                watch->status = EXIT_FAILED;
                g_main_loop_quit(watch->loop);
        }
}

static gboolean on_interrupt(gpointer user_data)
{
        g_main_loop_quit(((Watch *)user_data)->loop);
        return G_SOURCE_REMOVE;
}

static int cmd_stats(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) stats = NULL;
        g_autoptr(GMainLoop) loop = NULL;
        const char *name = NULL;
        gboolean watch_mode = FALSE;
        guint64 count = 0;
        Watch watch = { 0 };

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--watch") == 0)
                        watch_mode = TRUE;
                else if (strcmp(argv[i], "--count") == 0) {
                        if (!parse_uint_arg(i + 1 < argc ? argv[i + 1] : NULL, 1, G_MAXUINT32, &count))
                                return usage_error(_("--count needs a positive number"));
                        i++;
                } else if (argv[i][0] == '-')
                        return usage_error(_("Unknown option “%s” for “stats”"), argv[i]);
                else if (name == NULL)
                        name = argv[i];
                else
                        return usage_error(_("“stats” takes one SHARE"));
        }
        if (name == NULL)
                return usage_error(_("“stats” needs a SHARE (a tag, id or object path)"));
        if (count > 0 && !watch_mode)
                return usage_error(_("--count goes with --watch"));
        share = ctl_find_share(ctl, name, &error);
        if (share == NULL)
                return fail(error);
        stats = sluice_share_dup_stats(share);
        if (stats == NULL)
                stats = g_variant_ref_sink(g_variant_new("a{sv}", NULL));
        print_stats(ctl, share, stats);
        if (!watch_mode)
                return EXIT_OK;

        loop = g_main_loop_new(NULL, FALSE);
        watch = (Watch){ .ctl = ctl, .share = share, .loop = loop, .remaining = count };
        g_signal_connect(share, "g-properties-changed", G_CALLBACK(on_stats_changed), &watch);
        g_signal_connect(share, "notify::g-name-owner", G_CALLBACK(on_owner_changed), &watch);
        g_unix_signal_add(SIGINT, on_interrupt, &watch);
        g_unix_signal_add(SIGTERM, on_interrupt, &watch);
        g_main_loop_run(loop);
        g_signal_handlers_disconnect_by_data(share, &watch);
        return watch.status;
}

static int cmd_vms(Ctl *ctl, int argc, char **argv)
{
        g_autolist(GObject) objects = NULL;
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autoptr(Table) table = NULL;

        if (argc != 1)
                return usage_error(_("“vms” takes no arguments"));
        objects = g_list_sort(g_dbus_object_manager_get_objects(ctl->objects), compare_objects);
        json_builder_begin_array(b);
        for (GList *l = objects; l != NULL; l = l->next) {
                g_autoptr(SluiceVm) vm = sluice_object_get_vm(SLUICE_OBJECT(l->data));

                if (vm == NULL)
                        continue;
                if (ctl->json) {
                        json_builder_begin_object(b);
#define VM_MEMBER(name, getter)                                         \
                        json_builder_set_member_name(b, name);          \
                        json_builder_add_string_value(b, getter(vm) ?: "")
                        VM_MEMBER("name", sluice_vm_get_name);
                        VM_MEMBER("uuid", sluice_vm_get_uuid);
                        VM_MEMBER("uri", sluice_vm_get_uri);
                        VM_MEMBER("state", sluice_vm_get_state);
                        VM_MEMBER("os", sluice_vm_get_os);
#undef VM_MEMBER
                        json_builder_set_member_name(b, "shared_memory");
                        json_builder_add_boolean_value(b, sluice_vm_get_shared_memory(vm));
                        json_builder_set_member_name(b, "object_path");
                        json_builder_add_string_value(b, g_dbus_object_get_object_path(l->data));
                        json_builder_end_object(b);
                        continue;
                }
                if (table == NULL)
                        table = table_new(5, _("NAME"), _("STATE"), _("SHARED-MEMORY"), _("OS"),
                                          _("URI"));
                table_add(table, NULL, sluice_vm_get_name(vm), sluice_vm_state_label(sluice_vm_get_state(vm)),
                          sluice_vm_get_shared_memory(vm) ? _("yes") : _("no"),
                          *sluice_vm_get_os(vm) != '\0' ? sluice_vm_get_os(vm) : "-",
                          sluice_vm_get_uri(vm));
        }
        json_builder_end_array(b);
        if (ctl->json) {
                root = json_builder_get_root(b);
                print_json(root);
        } else if (table != NULL) {
                table_print(table);
        } else {
                g_print("%s\n", _("No VMs found (sluice-service looks in qemu:///session and qemu:///system)."));
        }
        return EXIT_OK;
}

static const struct {
        const char *name;
        int (*run)(Ctl *ctl, int argc, char **argv);
} commands[] = {
        { "list", cmd_list },
        { "add", cmd_add },
        { "remove", cmd_share_action },
        { "start", cmd_start },
        { "stop", cmd_share_action },
        { "attach", cmd_share_action },
        { "detach", cmd_share_action },
        { "set", cmd_set },
        { "stats", cmd_stats },
        { "vms", cmd_vms },
};

int main(int argc, char **argv)
{
        g_autoptr(GPtrArray) args = g_ptr_array_new();
        g_autoptr(GError) error = NULL;
        Ctl ctl = { 0 };
        int status;

        setlocale(LC_ALL, "");
        bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
        bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
        textdomain(GETTEXT_PACKAGE);
        (void)sluice_error_quark();  /* named errors come back as SLUICE_ERROR codes */

        /* Global options may stand anywhere; "--" ends them. */
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--json") == 0) {
                        ctl.json = TRUE;
                } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        g_print("%s", _(usage_text));
                        return EXIT_OK;
                } else if (strcmp(argv[i], "--version") == 0) {
                        g_print("sluicectl %s\n", PACKAGE_VERSION);
                        return EXIT_OK;
                } else if (strcmp(argv[i], "--") == 0) {
                        for (i++; i < argc; i++)
                                g_ptr_array_add(args, argv[i]);
                } else {
                        g_ptr_array_add(args, argv[i]);
                }
        }
        if (args->len == 0)
                return usage_error(_("No command given"));
        for (gsize c = 0; c < G_N_ELEMENTS(commands); c++) {
                if (strcmp(commands[c].name, args->pdata[0]) != 0)
                        continue;
                if (!ctl_connect(&ctl, &error))
                        return fail(error);
                status = commands[c].run(&ctl, (int)args->len, (char **)args->pdata);
                g_clear_object(&ctl.objects);
                g_clear_object(&ctl.manager);
                return status;
        }
        return usage_error(_("Unknown command “%s”"), (const char *)args->pdata[0]);
}
