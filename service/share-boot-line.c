/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-boot-line.c — the line in a Linux guest's /etc/fstab that mounts
 * the share at every boot (MountAtBoot): written and removed when the
 * machine says (share-private.h), in the share's VM, where its agent
 * answers.  A line that cannot be changed is told in Error (or, once the
 * share is removed, in the log), with what to do by hand. */
#include "config.h"

#include <glib/gi18n.h>

#include "guest-linux.h"
#include "guest-place.h"
#include "share-private.h"
#include "vm-guest.h"

static gboolean guest_reachable(SluiceSharedFolder *self)
{
        return self->vms != NULL && *self->config->vm != '\0' &&
               sluice_vm_manager_guest_ready(self->vms, self->config->vm);
}

static void on_written(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *place = sluice_vm_manager_guest_mount_finish(SLUICE_VM_MANAGER(source), result, &error);
        g_autofree char *message = NULL;

        if (place != NULL) {
                g_message("%s: the guest's /etc/fstab now mounts it at %s at every boot", self->config->tag, place);
                return;
        }
        message = g_strdup_printf(
                _("Could not add “%s” to the /etc/fstab of VM “%s” (%s): it is mounted now, but not at the guest's next boot"),
                self->config->tag, self->config->vm, error->message);
        g_warning("%s", message);
        sluice_shared_folder_set_error(self, message);
}

void sluice_shared_folder_write_boot_line(SluiceSharedFolder *self)
{
        /* a mount of what is mounted there already only writes the line */
        SluiceGuestMountSpec spec = {
                .tag = self->config->tag,
                .mount_point = self->guest_place,
                .at_boot = TRUE,
        };

        /* a drive (Windows) has no fstab: its service mounts it again by itself */
        if (!guest_reachable(self) || self->guest_place == NULL || sluice_guest_place_is_drive(self->guest_place))
                return;
        sluice_vm_manager_guest_mount_async(self->vms, self->config->vm, &spec, on_written, g_object_ref(self));
}

static void on_forgotten(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *message = NULL;

        if (sluice_vm_manager_guest_forget_finish(SLUICE_VM_MANAGER(source), result, &error)) {
                g_message("%s: removed its line from the /etc/fstab of VM %s", self->config->tag, self->config->vm);
                return;
        }
        message = g_strdup_printf(
                _("Could not remove the line of “%s” from the /etc/fstab of VM “%s” (%s): the guest still mounts it at boot; remove the line ending in “%s: %s” there by hand"),
                self->config->tag, self->config->vm, error->message, SLUICE_GUEST_FSTAB_MARK, self->config->tag);
        g_warning("%s", message);
        sluice_shared_folder_set_error(self, message);
}

/* A removed share has no Error to show it in: the log is all. */
static void on_forgotten_after_removal(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;

        if (sluice_vm_manager_guest_forget_finish(SLUICE_VM_MANAGER(source), result, &error))
                g_message("%s: removed its line from the /etc/fstab of VM %s", self->config->tag, self->config->vm);
        else
                g_warning(_("Could not remove the line of the removed share “%s” from the /etc/fstab of VM “%s” (%s): remove the line “%s: %s” and the line after it there by hand"),
                          self->config->tag, self->config->vm, error->message, SLUICE_GUEST_FSTAB_MARK,
                          self->config->tag);
}

void sluice_shared_folder_forget_boot_line(SluiceSharedFolder *self, gboolean after_removal)
{
        if (after_removal && (!self->config->mount_at_boot || *self->config->vm == '\0' || self->vms == NULL))
                return;  /* it never wrote one */
        if (!guest_reachable(self)) {
                /* a share that stays has its line removed by the next mount */
                if (after_removal)
                        g_warning(_("The guest of VM “%s” cannot be reached now: its /etc/fstab keeps the line of the removed share “%s” (harmless: nofail); remove the line “%s: %s” and the line after it there by hand"),
                                  self->config->vm, self->config->tag, SLUICE_GUEST_FSTAB_MARK, self->config->tag);
                return;
        }
        sluice_vm_manager_guest_forget_async(self->vms, self->config->vm, self->config->tag,
                                             after_removal ? on_forgotten_after_removal : on_forgotten,
                                             g_object_ref(self));
}
