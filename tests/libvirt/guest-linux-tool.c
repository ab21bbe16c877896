/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-linux-tool.c — runs one of guest-linux.h's procedures against a real
 * guest, for tests/libvirt/guest-linux.sh:
 *
 *   guest-linux-tool URI DOMAIN mount|unmount|release|fstab-on|fstab-off|is-mounted TAG MOUNT_POINT
 *
 * Prints "ok" (is-mounted: "mounted" or "not mounted"), or "error NAME:
 * MESSAGE" on standard error with NAME the SluiceError's D-Bus name tail
 * (GuestAgent, Busy, InvalidArgument …).  Exit: 0 ok, 1 error, 2 usage. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-linux.h"

static void quiet(void *data, virErrorPtr e)
{
        (void)data;
        (void)e;
}

static const char *error_name(const GError *e)
{
        /* the agent's own failure keeps its domain (guest-ops.h); the
         * service says it as GuestAgent */
        if (e->domain == SLUICE_GUEST_AGENT_ERROR)
                return "GuestAgent";
        if (e->domain != SLUICE_ERROR)
                return "Other";
        switch (e->code) {
        case SLUICE_ERROR_GUEST_AGENT: return "GuestAgent";
        case SLUICE_ERROR_BUSY: return "Busy";
        case SLUICE_ERROR_INVALID_ARGUMENT: return "InvalidArgument";
        default: return "Failed";
        }
}

int main(int argc, char **argv)
{
        g_autoptr(GError) error = NULL;
        const char *op, *tag, *mount_point;
        virConnectPtr conn;
        virDomainPtr domain;
        gboolean ok = FALSE;

        if (argc != 6) {
                fprintf(stderr, "usage: %s URI DOMAIN mount|unmount|release|fstab-on|fstab-off|is-mounted TAG "
                                "MOUNT_POINT\n", argv[0]);
                return 2;
        }
        op = argv[3];
        tag = argv[4];
        mount_point = argv[5];
        virSetErrorFunc(NULL, quiet);
        conn = virConnectOpen(argv[1]);
        if (conn == NULL) {
                fprintf(stderr, "error Failed: cannot connect to %s\n", argv[1]);
                return 1;
        }
        domain = virDomainLookupByName(conn, argv[2]);
        if (domain == NULL) {
                fprintf(stderr, "error Failed: no domain %s\n", argv[2]);
                virConnectClose(conn);
                return 1;
        }
        if (strcmp(op, "mount") == 0)
                ok = sluice_guest_linux_mount(domain, tag, mount_point, &error);
        else if (strcmp(op, "unmount") == 0)
                ok = sluice_guest_linux_unmount(domain, tag, mount_point, &error);
        else if (strcmp(op, "release") == 0)
                ok = sluice_guest_linux_release(domain, tag, mount_point, &error);
        else if (strcmp(op, "fstab-on") == 0 || strcmp(op, "fstab-off") == 0)
                ok = sluice_guest_linux_set_fstab(domain, tag, mount_point, strcmp(op, "fstab-on") == 0, &error);
        else if (strcmp(op, "is-mounted") == 0) {
                g_autoptr(GBytes) mounts = sluice_guest_agent_read_file(domain, "/proc/mounts",
                                                                        SLUICE_GUEST_AGENT_FILE_MAX, &error);

                if (mounts != NULL) {
                        g_autofree char *text = g_strndup(g_bytes_get_data(mounts, NULL), g_bytes_get_size(mounts));

                        printf("%s\n", sluice_guest_linux_is_mounted(text, tag, mount_point) ? "mounted" : "not mounted");
                        ok = TRUE;
                }
        } else {
                fprintf(stderr, "error Failed: unknown procedure %s\n", op);
        }
        if (ok && strcmp(op, "is-mounted") != 0)
                printf("ok\n");
        if (!ok && error != NULL)
                fprintf(stderr, "error %s: %s\n", error_name(error), error->message);
        virDomainFree(domain);
        virConnectClose(conn);
        return ok ? 0 : 1;
}
