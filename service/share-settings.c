/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-settings.c — the share's guest settings (AutoMount, MountPoint,
 * MountAtBoot): kept in its config and on its Share object, saved through
 * "changed".  What a change means for the guest now (a plugged share
 * mounted, an fstab line written or removed) is the machine's to say: a
 * change that matters before the next mount is fed to it as an event. */
#include "config.h"

#include "share-private.h"

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
        /* a device in the guest already is Sluice's to mount from now on */
        if (auto_mount)
                sluice_shared_folder_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_GUEST_READY });
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

void sluice_shared_folder_set_mount_at_boot(SluiceSharedFolder *self, gboolean mount_at_boot)
{
        if (mount_at_boot == self->config->mount_at_boot)
                return;
        self->config->mount_at_boot = mount_at_boot;
        sluice_share_set_mount_at_boot(self->iface, mount_at_boot);
        settings_changed(self);
        sluice_shared_folder_step(self, &(Happening){
                .event = mount_at_boot ? SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_ON : SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_OFF,
        });
}
