/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-settings.c — the share's guest settings (AutoMount, MountPoint,
 * MountAtBoot): kept in its config and on its Share object, saved through
 * "changed", and carried to the guest at once where waiting for the next
 * mount would surprise: an fstab line switched on or off while the share is
 * mounted, automatic mounting switched on while the device is in the guest. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-linux.h"
#include "share-private.h"
#include "vm-guest.h"

/* Where the share is mounted in a Linux guest now, or NULL. */
static const char *mounted_linux_path(SluiceSharedFolder *self)
{
        const char *state = sluice_share_get_guest_state(self->iface);
        const char *path = sluice_share_get_guest_path(self->iface);

        if (g_strcmp0(state, "mounted") != 0 || path == NULL || path[0] != '/')
                return NULL;
        return path;
}

static gboolean guest_reachable(SluiceSharedFolder *self)
{
        return self->vms != NULL && *self->config->vm != '\0' &&
               sluice_vm_manager_guest_ready(self->vms, self->config->vm);
}

/* CALL SITE for the share's "the guest may be ready" hook of share.h
 * (sluice_shared_folder_guest_changed), which is not on this branch yet:
 * until it is, switching AutoMount on takes effect at the next plug. */
static void guest_may_be_ready(SluiceSharedFolder *self)
{
        (void)self;
}

static void settings_changed(SluiceSharedFolder *self)
{
        g_signal_emit_by_name(self, "changed");
}

void sluice_shared_folder_set_auto_mount(SluiceSharedFolder *self, gboolean auto_mount)
{
        if (auto_mount == self->config->auto_mount)
                return;
        self->config->auto_mount = auto_mount;
        sluice_share_set_auto_mount(self->iface, auto_mount);
        settings_changed(self);
        /* A device already in the guest is mounted now, not at the next plug;
         * the share knows whether it is plugged and whether the guest is ready. */
        if (auto_mount)
                guest_may_be_ready(self);
}

gboolean sluice_shared_folder_set_mount_point(SluiceSharedFolder *self, const char *mount_point,
                                              GError **error)
{
        if (!sluice_config_check_mount_point(mount_point, error))
                return FALSE;
        if (g_strcmp0(mount_point, self->config->mount_point) == 0)
                return TRUE;
        /* the mount there now stays where it is: the next mount uses the new place */
        g_free(self->config->mount_point);
        self->config->mount_point = g_strdup(mount_point);
        sluice_share_set_mount_point(self->iface, mount_point);
        settings_changed(self);
        return TRUE;
}

static void on_fstab_written(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *place = sluice_vm_manager_guest_mount_finish(SLUICE_VM_MANAGER(source),
                                                                      result, &error);

        if (place != NULL) {
                g_message("%s: the guest's /etc/fstab now mounts it at %s at every boot",
                          self->config->tag, place);
                return;
        }
        {
                g_autofree char *message = g_strdup_printf(
                        _("Could not add “%s” to the /etc/fstab of VM “%s” (%s): it is mounted now, but not at the guest's next boot"),
                        self->config->tag, self->config->vm, error->message);

                g_warning("%s", message);
                sluice_shared_folder_set_error(self, message);
        }
}

static void on_fstab_forgotten(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *message = NULL;

        if (sluice_vm_manager_guest_forget_finish(SLUICE_VM_MANAGER(source), result, &error)) {
                g_message("%s: removed its line from the guest's /etc/fstab", self->config->tag);
                return;
        }
        message = g_strdup_printf(
                _("Could not remove the line of “%s” from the /etc/fstab of VM “%s” (%s): the guest still mounts it at boot; remove the line ending in “%s: %s” there by hand"),
                self->config->tag, self->config->vm, error->message, SLUICE_GUEST_FSTAB_MARK,
                self->config->tag);
        g_warning("%s", message);
        sluice_shared_folder_set_error(self, message);
}

void sluice_shared_folder_set_mount_at_boot(SluiceSharedFolder *self, gboolean mount_at_boot)
{
        const char *place;

        if (mount_at_boot == self->config->mount_at_boot)
                return;
        self->config->mount_at_boot = mount_at_boot;
        sluice_share_set_mount_at_boot(self->iface, mount_at_boot);
        settings_changed(self);
        if (!guest_reachable(self))
                return;  /* the next mount writes or removes the line */
        place = mounted_linux_path(self);
        if (mount_at_boot && place != NULL) {
                /* a mount of what is mounted there already only writes the line */
                SluiceGuestMountSpec spec = {
                        .tag = self->config->tag,
                        .mount_point = place,
                        .at_boot = TRUE,
                };

                sluice_vm_manager_guest_mount_async(self->vms, self->config->vm, &spec,
                                                    on_fstab_written, g_object_ref(self));
        } else if (!mount_at_boot) {
                sluice_vm_manager_guest_forget_async(self->vms, self->config->vm, self->config->tag,
                                                     on_fstab_forgotten, g_object_ref(self));
        }
}
