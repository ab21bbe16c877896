/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl — command-line client of org.sluice.Sluice1, for people and scripts.
 *
 * This file: the command table, global options, connecting.  sluicectl.h
 * lists the other files, one per concern. */
#include "config.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gi18n.h>

#include "sluicectl.h"

static const char usage_text[] = N_(
        "Usage: sluicectl [--json] COMMAND [ARGUMENTS]\n"
        "\n"
        "Commands:\n"
        "  list                              the shares\n"
        "  add PATH [--vm NAME] [--tag TAG] [--readonly] [--no-autostart] [--attach]\n"
        "      [--cache auto|always|never] [--queues N]\n"
        "      [--mount-point PATH|X:] [--no-automount] [--mount-at-boot]\n"
        "                                    share a folder\n"
        "  remove SHARE                      stop and forget a share\n"
        "  start SHARE | stop SHARE          run or stop its worker\n"
        "  start --wait SHARE                run it, then stay until it stops (and stop it\n"
        "                                    on SIGTERM): for sluice-share@.service\n"
        "  attach SHARE | detach SHARE       plug it into its VM or unplug it\n"
        "  set SHARE readonly on|off         switch read-only live\n"
        "  set SHARE autostart on|off\n"
        "  set SHARE vm NAME                 assign a VM (\"\" for none)\n"
        "  set SHARE automount on|off        mount it in the guest through its agent\n"
        "  set SHARE mount-point PATH|X:|default\n"
        "  set SHARE names windows|posix|default\n"
        "  set SHARE case insensitive|sensitive|default\n"
        "                                    where in the guest (next mount)\n"
        "  set SHARE mount-at-boot on|off    a Linux guest's /etc/fstab line\n"
        "  stats SHARE [--watch [--count N]] throughput, latency and queue counters\n"
        "  vms                               the VMs Sluice can share with\n"
        "\n"
        "SHARE is a tag, a share id or an object path.\n"
        "--json prints JSON for scripts.  Exit status: 0 done, 1 failed, 2 usage error.\n");

/* Its own text, so that the translations of the one above stay whole. */
static const char force_usage_text[] = N_(
        "\n"
        "  stop --force SHARE | detach --force SHARE | remove --force SHARE\n"
        "                                    without asking the guest to unmount it first\n"
        "                                    (when it says the share is busy, or does not\n"
        "                                    answer): unplugged at once\n");

/* Its own text, so that the translations of the one above stay whole. */
static const char restart_usage_text[] = N_(
        "  restart SHARE                     restart its worker into the sluice-fs now\n"
        "                                    installed (after an upgrade); the guest keeps\n"
        "                                    the share\n");

/* Its own text, so that the translations of the one above stay whole. */
static const char vm_usage_text[] = N_(
        "\n"
        "Changes to a VM's definition (they take effect at its next boot):\n"
        "  vm NAME enable-agent              add the QEMU guest agent's channel, which lets\n"
        "                                    Sluice mount shares in the guest by itself\n"
        "  vm NAME enable-shared-memory      the shared memory virtiofs needs\n");

/* Its own text, so that the translations of the one above stay whole. */
static const char slots_usage_text[] = N_(
        "  vm NAME add-slots [COUNT]         spare PCIe root ports (default 4): a VM needs a\n"
        "                                    free one for every share plugged in while it runs\n");

/* Its own text, so that the translations of the one above stay whole. */
static const char guest_tools_usage_text[] = N_(
        "\n"
        "A Windows VM's guest pieces, through its guest agent:\n"
        "  vm NAME install-guest-tools [--winfsp MSI] [--virtio-win ISO|MSI]\n"
        "                                    install what Windows lacks to show shares\n"
        "                                    (WinFsp, virtio-win's VirtIO-FS driver) from\n"
        "                                    these files, or from ones found in\n"
        "                                    /usr/share/virtio-win and your Downloads folder\n"
        "  vm NAME doctor                    what the guest has and what Sluice would do\n"
        "                                    next: a report to read and send\n");

static gboolean ctl_connect(Ctl *ctl, GError **error)
{
        g_autoptr(GDBusConnection) bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
        g_autoptr(GVariant) reply = NULL;

        if (bus == NULL)
                return FALSE;
        /* A first call activates the service when it is not running. */
        reply = g_dbus_connection_call_sync(bus, SLUICE_BUS_NAME, SLUICE_OBJECT_ROOT,
                                            "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
                                            G_DBUS_CALL_FLAGS_NONE, CTL_CALL_TIMEOUT_MS, NULL, error);
        if (reply == NULL)
                return FALSE;
        ctl->objects = sluice_object_manager_client_new_sync(bus,
                                                             G_DBUS_OBJECT_MANAGER_CLIENT_FLAGS_DO_NOT_AUTO_START,
                                                             SLUICE_BUS_NAME, SLUICE_OBJECT_ROOT, NULL, error);
        if (ctl->objects == NULL)
                return FALSE;
        ctl->manager = sluice_manager_proxy_new_sync(bus, G_DBUS_PROXY_FLAGS_NONE, SLUICE_BUS_NAME,
                                                     SLUICE_MANAGER_PATH, NULL, error);
        if (ctl->manager == NULL)
                return FALSE;
        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(ctl->manager), CTL_CALL_TIMEOUT_MS);
        return TRUE;
}

static const struct {
        const char *name;
        int (*run)(Ctl *ctl, int argc, char **argv);
} commands[] = {
        { "list", ctl_cmd_list },
        { "add", ctl_cmd_add },
        { "remove", ctl_cmd_share_action },
        { "start", ctl_cmd_start },
        { "stop", ctl_cmd_share_action },
        { "restart", ctl_cmd_restart },
        { "attach", ctl_cmd_share_action },
        { "detach", ctl_cmd_share_action },
        { "set", ctl_cmd_set },
        { "stats", ctl_cmd_stats },
        { "vms", ctl_cmd_vms },
        { "vm", ctl_cmd_vm },
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
                        g_print("%s%s%s%s%s%s", _(usage_text), _(force_usage_text), _(restart_usage_text),
                                _(vm_usage_text), _(slots_usage_text), _(guest_tools_usage_text));
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
                return ctl_usage_error(_("No command given"));
        for (gsize c = 0; c < G_N_ELEMENTS(commands); c++) {
                if (strcmp(commands[c].name, args->pdata[0]) != 0)
                        continue;
                if (!ctl_connect(&ctl, &error))
                        return ctl_fail(error);
                status = commands[c].run(&ctl, (int)args->len, (char **)args->pdata);
                g_clear_object(&ctl.objects);
                g_clear_object(&ctl.manager);
                return status;
        }
        return ctl_usage_error(_("Unknown command “%s”"), (const char *)args->pdata[0]);
}
