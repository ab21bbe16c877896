/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-shares.c — the commands on shares: list, add, remove, start,
 * stop, attach, detach, set.  A call the service answered is checked
 * against what it asked for (sluicectl-exit.c) before "done" is said. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "share-properties.h"
#include "sluicectl.h"
#include "state-labels.h"
#include "wire-enums.h"

int ctl_cmd_list(Ctl *ctl, int argc, char **argv)
{
        g_autolist(GObject) shares = NULL;
        g_autoptr(CtlTable) table = NULL;

        if (argc != 1)
                return ctl_usage_error(_("“list” takes no arguments"));
        shares = ctl_shares(ctl);
        if (ctl->json) {
                g_autoptr(JsonNode) root = json_node_new(JSON_NODE_ARRAY);
                JsonArray *array = json_array_new();

                for (GList *l = shares; l != NULL; l = l->next) {
                        g_autoptr(SluiceShare) share = sluice_object_get_share(SLUICE_OBJECT(l->data));

                        json_array_add_element(array, ctl_share_to_json(share));
                }
                json_node_take_array(root, array);
                ctl_print_json(root);
                return EXIT_OK;
        }
        if (shares == NULL) {
                g_print("%s\n", _("No shares.  Add one with “sluicectl add PATH --vm NAME”."));
                return EXIT_OK;
        }
        table = ctl_table_new(7, _("ID"), _("TAG"), _("STATE"), _("VM"), _("RO"), _("IN GUEST"),
                              _("PATH"));
        for (GList *l = shares; l != NULL; l = l->next) {
                g_autoptr(SluiceShare) share = sluice_object_get_share(SLUICE_OBJECT(l->data));
                const char *vm = sluice_share_get_vm(share);

                ctl_table_add(table, sluice_share_get_error(share), ctl_share_id(share),
                          sluice_share_get_tag(share),
                          sluice_share_state_label(sluice_share_get_state(share)),
                          vm != NULL && *vm != '\0' ? vm : "-",
                          sluice_share_get_read_only(share) ? _("yes") : _("no"),
                          ctl_guest_place(share),
                          sluice_share_get_path(share));
        }
        ctl_table_print(table);
        return EXIT_OK;
}

/* After an attach: where the share is in the guest when Sluice mounted it
 * there, else HINT as Attach gave it (NULL: the share's GuestHint, when it
 * has one). */
static void print_where_in_guest(SluiceShare *share, const char *hint)
{
        g_autofree char *sentence = ctl_guest_sentence(share);
        const char *own = sluice_share_get_guest_hint(share);

        if (sentence != NULL)
                g_print("%s\n", sentence);
        else if (hint != NULL)
                g_print("%s\n", hint);
        else if (own != NULL && *own != '\0')
                g_print("%s\n", own);
}

int ctl_cmd_add(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(GVariantBuilder) options = g_variant_builder_new(G_VARIANT_TYPE_VARDICT);
        g_autofree char *object_path = NULL;
        g_autofree char *absolute = NULL;
        g_autofree char *cwd = g_get_current_dir();
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        const char *path = NULL, *vm = "";
        gboolean attach = FALSE;

        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i];
                const char *value = i + 1 < argc ? argv[i + 1] : NULL;
                guint64 number;

                if (strcmp(arg, "--vm") == 0 || strcmp(arg, "--tag") == 0 ||
                    strcmp(arg, "--cache") == 0 || strcmp(arg, "--queues") == 0 ||
                    strcmp(arg, "--mount-point") == 0) {
                        if (value == NULL)
                                return ctl_usage_error(_("%s needs a value"), arg);
                        i++;
                        if (strcmp(arg, "--vm") == 0)
                                vm = value;
                        else if (strcmp(arg, "--tag") == 0)
                                g_variant_builder_add(options, "{sv}", "tag", g_variant_new_string(value));
                        else if (strcmp(arg, "--cache") == 0)
                                g_variant_builder_add(options, "{sv}", "cache", g_variant_new_string(value));
                        else if (strcmp(arg, "--mount-point") == 0 && !g_utf8_validate(value, -1, NULL))
                                return ctl_usage_error(_("The mount point must be UTF-8 text"));
                        else if (strcmp(arg, "--mount-point") == 0)
                                g_variant_builder_add(options, "{sv}", "mount-point", g_variant_new_string(value));
                        else if (ctl_parse_uint(value, 1, G_MAXUINT32, &number))
                                g_variant_builder_add(options, "{sv}", "queues",
                                                      g_variant_new_uint32((guint32)number));
                        else
                                return ctl_usage_error(_("--queues needs a number, not “%s”"), value);
                } else if (strcmp(arg, "--readonly") == 0 || strcmp(arg, "--read-only") == 0) {
                        g_variant_builder_add(options, "{sv}", "read-only", g_variant_new_boolean(TRUE));
                } else if (strcmp(arg, "--no-autostart") == 0) {
                        g_variant_builder_add(options, "{sv}", "autostart", g_variant_new_boolean(FALSE));
                } else if (strcmp(arg, "--attach") == 0) {
                        g_variant_builder_add(options, "{sv}", "attach", g_variant_new_boolean(TRUE));
                        attach = TRUE;
                } else if (strcmp(arg, "--no-automount") == 0) {
                        g_variant_builder_add(options, "{sv}", "auto-mount", g_variant_new_boolean(FALSE));
                } else if (strcmp(arg, "--mount-at-boot") == 0) {
                        g_variant_builder_add(options, "{sv}", "mount-at-boot", g_variant_new_boolean(TRUE));
                } else if (g_str_has_prefix(arg, "-") && strcmp(arg, "-") != 0) {
                        return ctl_usage_error(_("Unknown option “%s” for “add”"), arg);
                } else if (path == NULL) {
                        path = arg;
                } else {
                        return ctl_usage_error(_("“add” takes one folder"));
                }
        }
        if (path == NULL)
                return ctl_usage_error(_("“add” needs the folder to share"));
        if (!g_utf8_validate(path, -1, NULL) || !g_utf8_validate(vm, -1, NULL))
                return ctl_usage_error(_("The path and the VM name must be UTF-8 text"));

        /* The service runs elsewhere: a relative path means ours. */
        absolute = g_canonicalize_filename(path, cwd);
        if (!sluice_manager_call_add_share_sync(ctl->manager, absolute, vm,
                                                g_variant_builder_end(options), &object_path,
                                                NULL, &error))
                return ctl_fail(error);
        if (!ctl->json && !attach) {
                g_print("%s\n", object_path);
                return EXIT_OK;
        }
        share = sluice_share_proxy_new_sync(g_dbus_proxy_get_connection(G_DBUS_PROXY(ctl->manager)),
                                            G_DBUS_PROXY_FLAGS_NONE, SLUICE_BUS_NAME, object_path, NULL,
                                            &error);
        if (share == NULL)
                return ctl_fail(error);
        if (attach) {
                /* where it is in the guest once Sluice has mounted it there */
                g_autoptr(SluiceShare) settled = ctl_guest_settled_share(share, &error);

                if (settled == NULL)
                        return ctl_fail(error);
                g_clear_object(&share);
                share = g_steal_pointer(&settled);
        }
        if (ctl->json) {
                ctl_print_share_json(share);
        } else {
                g_print("%s\n", object_path);
                print_where_in_guest(share, NULL);
        }
        /* The share exists either way (its path is printed for a script to
         * remove it); AddShare answers once the worker runs, also when
         * plugging it into the VM failed: the share's Error says why. */
        if (attach && !ctl_check_outcome(ctl, share, CTL_EXPECT_ATTACHED, &error))
                return ctl_fail(error);
        return EXIT_OK;
}

/* The options of StopWithOptions & co.: {"force": true}. */
static GVariant *force_options(void)
{
        g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_VARDICT);

        g_variant_builder_add(&b, "{sv}", "force", g_variant_new_boolean(TRUE));
        return g_variant_builder_end(&b);
}

/* The call succeeded: whether what it asked for happened, by the values
 * the service has now; prints "done" when it did. */
static int check_and_print_done(Ctl *ctl, SluiceShare *share, CtlExpect expect)
{
        g_autoptr(SluiceShare) fresh = NULL;
        g_autoptr(GError) error = NULL;

        fresh = ctl_fresh_share(share, &error);
        if (fresh == NULL || !ctl_check_outcome(ctl, fresh, expect, &error))
                return ctl_fail(error);
        return ctl_print_done(ctl, fresh, NULL);
}

/* Attach answered: the device is in the VM.  Where it is in the guest
 * once Sluice is done there; a mount that failed there is said on stderr
 * (the hint says how to mount it by hand) but the attach happened. */
static int attach_done(Ctl *ctl, SluiceShare *share, const char *hint)
{
        g_autoptr(SluiceShare) settled = NULL;
        g_autoptr(GError) error = NULL;
        const char *why;

        settled = ctl_guest_settled_share(share, &error);
        if (settled == NULL)
                return ctl_fail(error);
        why = sluice_share_get_error(settled);
        if (sluice_wire_guest_state_is(sluice_share_get_guest_state(settled), SLUICE_WIRE_GUEST_FAILED) &&
            why != NULL && *why != '\0') {
                g_autofree char *printable = ctl_printable(why);

                g_printerr("sluicectl: %s\n", printable);
        }
        if (ctl->json)
                return ctl_print_done(ctl, settled, hint);
        print_where_in_guest(settled, hint);
        return EXIT_OK;
}

/* The arguments of a command on one share (argv[0]): SHARE, and the one
 * flag `flag` when it is not NULL.  FALSE with *ret_status the usage
 * error's exit status when they are wrong (said on stderr). */
static gboolean one_share_args(int argc, char **argv, const char *flag, gboolean *ret_flag,
                               const char **ret_name, int *ret_status)
{
        *ret_name = NULL;
        if (ret_flag != NULL)
                *ret_flag = FALSE;
        for (int i = 1; i < argc; i++) {
                if (flag != NULL && strcmp(argv[i], flag) == 0) {
                        *ret_flag = TRUE;
                } else if (argv[i][0] == '-') {
                        *ret_status = ctl_usage_error(_("Unknown option “%s” for “%s”"), argv[i], argv[0]);
                        return FALSE;
                } else if (*ret_name == NULL) {
                        *ret_name = argv[i];
                } else {
                        *ret_name = NULL;
                        break;
                }
        }
        if (*ret_name == NULL) {
                *ret_status = ctl_usage_error(_("“%s” needs exactly one SHARE (a tag, id or object path)"),
                                              argv[0]);
                return FALSE;
        }
        return TRUE;
}

/* remove, stop, attach, detach: SHARE is the only argument; remove, stop
 * and detach take --force (not asking the guest to unmount first). */
int ctl_cmd_share_action(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *hint = NULL;
        const char *command = argv[0];
        const char *name = NULL;
        gboolean force = FALSE;
        gboolean ok;
        int status;

        if (!one_share_args(argc, argv, strcmp(command, "attach") != 0 ? "--force" : NULL, &force,
                            &name, &status))
                return status;
        share = ctl_find_share(ctl, name, &error);
        if (share == NULL)
                return ctl_fail(error);
        /* without --force the old methods: a service older than the options still works */
        if (strcmp(command, "remove") == 0 && force)
                ok = sluice_manager_call_remove_share_with_options_sync(ctl->manager,
                        g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)), force_options(), NULL, &error);
        else if (strcmp(command, "remove") == 0)
                ok = sluice_manager_call_remove_share_sync(ctl->manager,
                        g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)), NULL, &error);
        else if (strcmp(command, "stop") == 0 && force)
                ok = sluice_share_call_stop_with_options_sync(share, force_options(), NULL, &error);
        else if (strcmp(command, "stop") == 0)
                ok = sluice_share_call_stop_sync(share, NULL, &error);
        else if (strcmp(command, "attach") == 0)
                ok = sluice_share_call_attach_sync(share, &hint, NULL, &error);
        else if (force)
                ok = sluice_share_call_detach_with_options_sync(share, force_options(), NULL, &error);
        else
                ok = sluice_share_call_detach_sync(share, NULL, &error);
        if (!ok)
                return ctl_fail(error);
        if (hint != NULL)
                return attach_done(ctl, share, hint);
        if (strcmp(command, "remove") == 0)
                return ctl_print_done(ctl, share, NULL);
        return check_and_print_done(ctl, share,
                                    strcmp(command, "stop") == 0 ? CTL_EXPECT_STOPPED : CTL_EXPECT_DETACHED);
}

int ctl_cmd_start(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        const char *name = NULL;
        gboolean wait = FALSE;

        int status;

        if (!one_share_args(argc, argv, "--wait", &wait, &name, &status))
                return status;
        share = ctl_find_share(ctl, name, &error);
        if (share == NULL)
                return ctl_fail(error);
        if (wait)
                return ctl_start_and_wait(ctl, share);
        if (!sluice_share_call_start_sync(share, NULL, &error))
                return ctl_fail(error);
        /* Start answers once the worker runs, also when plugging it into
         * its running VM failed: the share's Error says why */
        return check_and_print_done(ctl, share, CTL_EXPECT_STARTED);
}

/* restart SHARE: the worker hands over to the sluice-fs on disk; the
 * share stays as it was (attached stays attached), which is checked as
 * for start. */
int ctl_cmd_restart(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        const char *name = NULL;
        int status;

        if (!one_share_args(argc, argv, NULL, NULL, &name, &status))
                return status;
        share = ctl_find_share(ctl, name, &error);
        if (share == NULL)
                return ctl_fail(error);
        if (!sluice_share_call_restart_sync(share, NULL, &error))
                return ctl_fail(error);
        return check_and_print_done(ctl, share, CTL_EXPECT_STARTED);
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

/* The settings of `set SHARE NAME VALUE` that are on or off, by every name taken. */
static const struct {
        const char *name;
        gboolean (*set)(SluiceShare *, gboolean, GCancellable *, GError **);
} switches[] = {
        { "readonly", sluice_client_share_set_read_only_sync },
        { "read-only", sluice_client_share_set_read_only_sync },
        { "autostart", sluice_client_share_set_autostart_sync },
        { "automount", sluice_client_share_set_auto_mount_sync },
        { "auto-mount", sluice_client_share_set_auto_mount_sync },
        { "mount-at-boot", sluice_client_share_set_mount_at_boot_sync },
        { "boot-mount", sluice_client_share_set_mount_at_boot_sync },
};

static gboolean is_mount_point_setting(const char *name)
{
        return strcmp(name, "mount-point") == 0 || strcmp(name, "mountpoint") == 0;
}

int ctl_cmd_set(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        gboolean (*set)(SluiceShare *, gboolean, GCancellable *, GError **) = NULL;
        gboolean value = FALSE;
        const char *mount_point = NULL;
        /* names, case: a word of the service's ("default": follow the VM's OS) */
        gboolean (*set_word)(SluiceShare *, const char *, GCancellable *, GError **) = NULL;
        const char *word = NULL;

        if (argc != 4)
                return ctl_usage_error(_("Use “set SHARE readonly|autostart|automount|mount-at-boot on|off”, “set SHARE mount-point PATH|default”, “set SHARE names windows|posix|default”, “set SHARE case insensitive|sensitive|default” or “set SHARE vm NAME”"));
        if (strcmp(argv[2], "names") == 0 || strcmp(argv[2], "case") == 0) {
                set_word = strcmp(argv[2], "names") == 0 ? sluice_client_share_set_names_sync
                                                         : sluice_client_share_set_case_sync;
                /* the service checks the word and says what it takes */
                word = strcmp(argv[3], "default") == 0 ? "" : argv[3];
                if (!g_utf8_validate(word, -1, NULL))
                        return ctl_usage_error(_("“%s” takes windows, posix, insensitive, sensitive or default"), argv[2]);
        } else if (is_mount_point_setting(argv[2])) {
                if (!g_utf8_validate(argv[3], -1, NULL))
                        return ctl_usage_error(_("The mount point must be UTF-8 text"));
                /* "default": the guest's own place (/mnt/TAG, a free drive from Z: down) */
                mount_point = strcmp(argv[3], "default") == 0 ? "" : argv[3];
        } else if (strcmp(argv[2], "vm") != 0) {
                for (gsize i = 0; i < G_N_ELEMENTS(switches) && set == NULL; i++)
                        if (strcmp(argv[2], switches[i].name) == 0)
                                set = switches[i].set;
                if (set == NULL)
                        return ctl_usage_error(_("Unknown setting “%s”: use readonly, autostart, automount, mount-point, mount-at-boot, names, case or vm"), argv[2]);
                if (!parse_on_off(argv[3], &value))
                        return ctl_usage_error(_("“%s” is not on or off"), argv[3]);
        }
        share = ctl_find_share(ctl, argv[1], &error);
        if (share == NULL)
                return ctl_fail(error);
        if (strcmp(argv[2], "vm") == 0) {
                if (!g_utf8_validate(argv[3], -1, NULL))
                        return ctl_usage_error(_("The VM name must be UTF-8 text"));
                if (!sluice_share_call_set_vm_sync(share, argv[3], NULL, &error))
                        return ctl_fail(error);
                return ctl_print_done(ctl, share, NULL);
        }
        /* Not the generated setters: they would not report a refusal. */
        if (set_word != NULL) {
                if (!set_word(share, word, NULL, &error))
                        return ctl_fail(error);
                return ctl_print_done(ctl, share, NULL);
        }
        if (mount_point != NULL ? !sluice_client_share_set_mount_point_sync(share, mount_point, NULL, &error)
                                : !set(share, value, NULL, &error))
                return ctl_fail(error);
        return ctl_print_done(ctl, share, NULL);
}
