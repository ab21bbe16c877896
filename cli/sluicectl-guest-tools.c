/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-guest-tools.c — "vm NAME install-guest-tools [--winfsp MSI]
 * [--virtio-win ISO|MSI]": Vm.InstallGuestTools with its progress
 * (Vm.GuestToolsInstall) as a line that updates on a terminal; "vm NAME
 * doctor": Vm.Doctor's report, or its facts with --json. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>

#include "sluicectl.h"

typedef struct {
        Ctl *ctl;
        SluiceVm *vm;
        GMainLoop *loop;
        char *message;
        GError *error;
        gboolean tty;
        gboolean line_open;       /* a progress line without its newline yet */
        char *last_state;
        char *last_message;
} Install;

/* One GuestToolsInstall value for a person: a line that updates on a terminal. */
static void show_progress(Install *in)
{
        g_autoptr(GVariant) progress = sluice_vm_dup_guest_tools_install(in->vm);
        const char *state = "", *message = "";
        double fraction = 0;
        g_autofree char *shown = NULL;

        if (progress == NULL || in->ctl->json)
                return;
        (void)g_variant_lookup(progress, "state", "&s", &state);
        (void)g_variant_lookup(progress, "message", "&s", &message);
        (void)g_variant_lookup(progress, "fraction", "d", &fraction);
        if (*state == '\0' || g_strcmp0(message, in->last_message) == 0)
                return;
        /* the final word is the method's answer, printed once */
        if (strcmp(state, "done") == 0 || strcmp(state, "failed") == 0)
                return;
        shown = ctl_printable(message);
        if (in->tty) {
                /* \r and erase to the end: the line is rewritten in place */
                g_print("\r\033[K%s", shown);
                if (strcmp(state, "copying") == 0)
                        g_print(" (%d %%)", (int)CLAMP(fraction * 100.0, 0.0, 100.0));
                in->line_open = TRUE;
        } else if (g_strcmp0(state, in->last_state) != 0) {
                g_print("%s\n", shown);
        }
        g_free(in->last_state);
        in->last_state = g_strdup(state);
        g_free(in->last_message);
        in->last_message = g_strdup(message);
}

static void on_properties_changed(GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
        g_autoptr(GVariant) value = g_variant_lookup_value(changed, "GuestToolsInstall", NULL);

        if (value != NULL)
                show_progress(user_data);
}

static void on_installed(GObject *source, GAsyncResult *result, gpointer user_data)
{
        Install *in = user_data;

        (void)sluice_vm_call_install_guest_tools_finish(SLUICE_VM(source), &in->message, result, &in->error);
        g_main_loop_quit(in->loop);
}

/* "--winfsp FILE": FILE as the service opens it, whole from /. */
static char *absolute(const char *path)
{
        return g_canonicalize_filename(path, NULL);
}

static int install_guest_tools(Ctl *ctl, SluiceVm *vm, int argc, char **argv)
{
        GVariantBuilder options;
        Install in = { .ctl = ctl, .vm = vm, .tty = isatty(STDOUT_FILENO) };
        g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
        gulong handler;
        int status;

        g_variant_builder_init(&options, G_VARIANT_TYPE_VARDICT);
        for (int i = 3; i < argc; i++) {
                const char *key = strcmp(argv[i], "--winfsp") == 0       ? "winfsp"
                                  : strcmp(argv[i], "--virtio-win") == 0 ? "virtio-win"
                                                                         : NULL;
                g_autofree char *path = NULL;

                if (key == NULL || i + 1 >= argc) {
                        g_variant_builder_clear(&options);
                        return ctl_usage_error(_("Use “vm NAME install-guest-tools [--winfsp MSI] [--virtio-win ISO|MSI]”"));
                }
                path = absolute(argv[++i]);
                g_variant_builder_add(&options, "{sv}", key, g_variant_new_string(path));
        }
        in.loop = loop;
        handler = g_signal_connect(vm, "g-properties-changed", G_CALLBACK(on_properties_changed), &in);
        /* the service bounds it (a copy, then msiexec): no bus timeout of ours */
        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(vm), G_MAXINT);
        sluice_vm_call_install_guest_tools(vm, g_variant_builder_end(&options), NULL, on_installed, &in);
        g_main_loop_run(loop);
        g_signal_handler_disconnect(vm, handler);
        if (in.line_open)
                g_print("\r\033[K");
        if (in.error != NULL) {
                status = ctl_fail(in.error);
                g_clear_error(&in.error);
        } else if (ctl->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;

                json_builder_begin_object(b);
                json_builder_set_member_name(b, "name");
                json_builder_add_string_value(b, sluice_vm_get_name(vm));
                json_builder_set_member_name(b, "message");
                json_builder_add_string_value(b, in.message);
                json_builder_set_member_name(b, "ok");
                json_builder_add_boolean_value(b, TRUE);
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                ctl_print_json(root);
                status = EXIT_OK;
        } else {
                g_autofree char *shown = ctl_printable(in.message);

                g_print("%s\n", shown);
                status = EXIT_OK;
        }
        g_free(in.message);
        g_free(in.last_state);
        g_free(in.last_message);
        return status;
}

static int doctor(Ctl *ctl, SluiceVm *vm)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *report = NULL;
        g_autoptr(GVariant) facts = NULL;

        if (!sluice_vm_call_doctor_sync(vm, &report, &facts, NULL, &error))
                return ctl_fail(error);
        if (ctl->json) {
                g_autoptr(JsonNode) node = json_gvariant_serialize(facts);

                ctl_print_json(node);
        } else {
                g_autofree char *shown = NULL;
                g_auto(GStrv) lines = g_strsplit(report, "\n", -1);

                /* line by line: the report's own newlines stay */
                for (gsize i = 0; lines[i] != NULL; i++) {
                        if (lines[i + 1] == NULL && *lines[i] == '\0')
                                break;
                        g_free(shown);
                        shown = ctl_printable(lines[i]);
                        g_print("%s\n", shown);
                }
        }
        return EXIT_OK;
}

int ctl_cmd_vm_guest_tools(Ctl *ctl, SluiceVm *vm, int argc, char **argv)
{
        if (strcmp(argv[2], "doctor") == 0) {
                if (argc != 3)
                        return ctl_usage_error(_("Use “vm NAME doctor”"));
                return doctor(ctl, vm);
        }
        return install_guest_tools(ctl, vm, argc, argv);
}
