/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-settings.c — the share's guest settings (AutoMount, MountPoint,
 * MountAtBoot, Names, Case; ServedNames and ServedCase follow): kept in its
 * config and on its Share object, saved through "changed".  What a change
 * means for the guest now (a plugged share mounted, an fstab line written or
 * removed) is the machine's to say: a change that matters before the next
 * mount is fed to it as an event; Names and Case go to the worker. */
#include "config.h"

#include "share-names.h"
#include "share-private.h"
#include "vm-guest.h"

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

void sluice_shared_folder_update_served(SluiceSharedFolder *self)
{
        gboolean windows = self->vms != NULL && *self->config->vm != '\0' &&
                           sluice_vm_manager_guest_is_windows(self->vms, self->config->vm);
        SluiceShareServed served = sluice_share_names_resolve(self->config->names, self->config->case_, windows);
        const char *names = sluice_wire_names_name(served.names);
        const char *case_ = sluice_wire_case_name(served.case_);
        gboolean serving = self->worker != NULL && (self->machine.state == SLUICE_SHARE_STARTING ||
                                                    self->machine.state == SLUICE_SHARE_RUNNING ||
                                                    self->machine.state == SLUICE_SHARE_DETACHING);

        /* every later launch of the worker takes them, whatever it does now */
        if (self->worker != NULL)
                sluice_worker_set_names(self->worker, served.names, served.case_);
        /* "empty when no worker runs" (the API) */
        if (!serving) {
                sluice_share_set_served_names(self->iface, "");
                sluice_share_set_served_case(self->iface, "");
                return;
        }
        if (g_strcmp0(sluice_share_get_served_names(self->iface), names) != 0 ||
            g_strcmp0(sluice_share_get_served_case(self->iface), case_) != 0)
                g_message("%s: names %s, case %s%s", self->config->tag, names, case_,
                          windows ? " (a Windows guest)" : "");
        sluice_share_set_served_names(self->iface, names);
        sluice_share_set_served_case(self->iface, case_);
}

gboolean sluice_shared_folder_set_names(SluiceSharedFolder *self, const char *names, GError **error)
{
        if (!sluice_config_check_names(names, error))
                return FALSE;
        if (g_strcmp0(names, self->config->names) == 0)
                return TRUE;
        g_free(self->config->names);
        self->config->names = g_strdup(names);
        sluice_share_set_names(self->iface, names);
        settings_changed(self);
        sluice_shared_folder_update_served(self);
        return TRUE;
}

gboolean sluice_shared_folder_set_case(SluiceSharedFolder *self, const char *case_, GError **error)
{
        if (!sluice_config_check_case(case_, error))
                return FALSE;
        if (g_strcmp0(case_, self->config->case_) == 0)
                return TRUE;
        g_free(self->config->case_);
        self->config->case_ = g_strdup(case_);
        sluice_share_set_case(self->iface, case_);
        settings_changed(self);
        sluice_shared_folder_update_served(self);
        return TRUE;
}
