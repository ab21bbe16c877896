/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-guest.c — the machine's actions in the share's guest (share-private.h):
 * mount, unmount before an unplug (with its deadline), let a crashed
 * worker's mount go, leave quietly; GuestPath and GuestState.  What the
 * guest answers is untrusted, checked here and fed back to the machine as
 * its event, through the driver. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-os.h"
#include "guest-place.h"
#include "share-private.h"
#include "vm-guest.h"

static void on_let_go_quietly(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autofree char *tag = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_guest_release_finish(SLUICE_VM_MANAGER(source), result, &error))
                g_message("%s: letting the unplugged mount go in the guest: %s", tag, error->message);
}

/* What the guest says is untrusted: a place is shown in properties and
 * notifications, and handed back to the guest, never used on the host.  It
 * must be one Share.MountPoint would take (guest-os.h), and not empty. */
static gboolean guest_place_is_usable(const char *place)
{
        return place != NULL && *place != '\0' && sluice_guest_os_check_place(place, NULL);
}

static void on_guest_mounted(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *place = sluice_vm_manager_guest_mount_finish(SLUICE_VM_MANAGER(source), result,
                                                                       &error);
        Happening what = { .event = SLUICE_SHARE_EVENT_GUEST_MOUNTED, .place = place };

        if (place != NULL && !guest_place_is_usable(place)) {
                g_set_error(&error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("the guest named a place that is not a path or a drive"));
                g_clear_pointer(&place, g_free);
        }
        if (place == NULL)
                what = (Happening){ .event = SLUICE_SHARE_EVENT_GUEST_MOUNT_FAILED, .error = error };
        self->driver->step(self, &what);
}

/* The unmount's answer, or its deadline: whichever comes first is the
 * machine's event; the other comes to a machine that has gone on (forced
 * out, or the deadline passed), which it changes nothing. */
static void unmount_answered(SluiceSharedFolder *self, const Happening *what)
{
        g_clear_handle_id(&self->unmount_deadline, g_source_remove);
        self->driver->step(self, what);
}

static gboolean on_unmount_deadline(gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        g_autoptr(GError) error = g_error_new(SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                              _("the guest did not answer within %d s"),
                                              SLUICE_SHARE_UNMOUNT_DEADLINE_S);

        self->unmount_deadline = 0;
        g_message("%s: the guest's unmount passed its deadline", self->config->tag);
        unmount_answered(self, &(Happening){ .event = SLUICE_SHARE_EVENT_GUEST_UNMOUNT_FAILED, .error = error });
        return G_SOURCE_REMOVE;
}

static void on_guest_unmounted(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autoptr(GError) offered = NULL;
        Happening what = { .event = SLUICE_SHARE_EVENT_GUEST_UNMOUNTED };

        if (!sluice_vm_manager_guest_unmount_finish(SLUICE_VM_MANAGER(source), result, &error)) {
                gboolean busy = g_error_matches(error, SLUICE_ERROR, SLUICE_ERROR_BUSY);

                g_message("%s: %s the guest: %s", self->config->tag,
                          busy ? "in use in" : "could not unmount it in", error->message);
                /* the user who reads "busy" learns the way out */
                if (busy)
                        offered = g_error_new(SLUICE_ERROR, SLUICE_ERROR_BUSY,
                                              /* TRANSLATORS: the guest's sentence, then the share's tag */
                                              _("%s. To take it from the guest anyway, use force (“Stop Anyway”, or "
                                                "“sluicectl stop --force %s”)"),
                                              error->message, self->config->tag);
                what = (Happening){
                        .event = busy ? SLUICE_SHARE_EVENT_GUEST_UNMOUNT_BUSY : SLUICE_SHARE_EVENT_GUEST_UNMOUNT_FAILED,
                        .error = busy ? offered : error,
                };
        }
        unmount_answered(self, &what);
}

/* A guest step that nothing waits for, and the unplug with it: both in
 * the VM of the moment it was asked (the share may move to another).  A
 * live worker's mount is unmounted, then the device unplugged; a dead
 * worker's device is unplugged first, then its mount let go (see
 * share-attachment.h: touching it before would hang in the guest). */
typedef struct {
        SluiceVmManager *vms;
        char *vm;
        char *tag;
        char *place;
} QuietLeave;

static void quiet_leave_free(QuietLeave *q)
{
        g_object_unref(q->vms);
        g_free(q->vm);
        g_free(q->tag);
        g_free(q->place);
        g_free(q);
}

static void on_left_unplugged(GObject *source, GAsyncResult *result, gpointer user_data)
{
        QuietLeave *q = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_detach_finish(q->vms, result, &error))
                g_message("%s: unplugging from %s after leaving its guest: %s", q->tag, q->vm, error->message);
        quiet_leave_free(q);
}

static void on_unmounted_quietly(GObject *source, GAsyncResult *result, gpointer user_data)
{
        QuietLeave *q = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_guest_unmount_finish(q->vms, result, &error))
                g_message("%s: leaving the guest of %s: %s; unplugging anyway", q->tag, q->vm, error->message);
        sluice_vm_manager_detach_async(q->vms, q->vm, q->tag, NULL, on_left_unplugged, q);
}

static void on_released_quietly(GObject *source, GAsyncResult *result, gpointer user_data)
{
        QuietLeave *q = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_guest_release_finish(q->vms, result, &error))
                g_message("%s: letting the dead mount go in the guest of %s: %s", q->tag, q->vm, error->message);
        quiet_leave_free(q);
}

static void on_dead_device_unplugged_quietly(GObject *source, GAsyncResult *result, gpointer user_data)
{
        QuietLeave *q = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_detach_finish(q->vms, result, &error)) {
                /* still in the guest: touching the mount now would hang there */
                g_message("Unplugging a share nothing uses: %s", error->message);
                quiet_leave_free(q);
                return;
        }
        sluice_vm_manager_guest_release_async(q->vms, q->vm, q->tag, q->place, on_released_quietly, q);
}

/* RELEASE: the worker is dead; else it serves and the guest unmounts. */
void sluice_shared_folder_leave_guest_quietly(SluiceSharedFolder *self, gboolean release)
{
        QuietLeave *q;

        if (self->vms == NULL)
                return;
        q = g_new0(QuietLeave, 1);
        q->vms = g_object_ref(self->vms);
        q->vm = g_strdup(self->config->vm);
        q->tag = g_strdup(self->config->tag);
        q->place = g_strdup(self->guest_place != NULL ? self->guest_place : self->config->mount_point);
        if (release)
                sluice_vm_manager_detach_async(self->vms, q->vm, q->tag, NULL, on_dead_device_unplugged_quietly, q);
        else
                sluice_vm_manager_guest_unmount_async(self->vms, q->vm, q->tag, q->place, on_unmounted_quietly, q);
}

void sluice_shared_folder_set_guest(SluiceSharedFolder *self, const char *place, SluiceWireGuestState state)
{
        if (place != self->guest_place) {
                g_free(self->guest_place);
                self->guest_place = g_strdup(place);
        }
        sluice_share_set_guest_path(self->iface, self->guest_place != NULL ? self->guest_place : "");
        sluice_share_set_guest_state(self->iface, sluice_wire_guest_state_name(state));
}

const char *sluice_shared_folder_wanted_place(SluiceSharedFolder *self)
{
        const char *own = *self->config->mount_point != '\0' ? self->config->mount_point : self->config->guest_letter;

        if (self->guest_place == NULL)
                return *own != '\0' ? own : NULL;
        if (sluice_guest_place_is_drive(self->guest_place) && sluice_guest_place_is_drive(own))
                return own;
        return self->guest_place;
}

void sluice_shared_folder_mount_in_guest(SluiceSharedFolder *self)
{
        const char *wanted = sluice_shared_folder_wanted_place(self);
        /* after a crash or a reboot, at the same place as before */
        SluiceGuestMountSpec spec = {
                .tag = self->config->tag,
                .mount_point = wanted != NULL ? wanted : "",
                .at_boot = self->config->mount_at_boot,
                .case_insensitive = sluice_wire_case_is(sluice_share_get_served_case(self->iface),
                                                        SLUICE_WIRE_CASE_INSENSITIVE),
        };

        sluice_shared_folder_set_guest(self, self->guest_place, SLUICE_WIRE_GUEST_MOUNTING);
        sluice_vm_manager_guest_mount_async(self->vms, self->config->vm, &spec, on_guest_mounted,
                                            g_object_ref(self));
}

/* A failure is only logged: the mount that follows says whether the
 * place is usable. */
static void on_dead_mount_released(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_guest_release_finish(SLUICE_VM_MANAGER(source), result, &error))
                g_message("%s: letting the dead mount go in the guest failed: %s", self->config->tag,
                          error->message);
        else
                g_debug("%s: the dead mount is gone from the guest", self->config->tag);
        self->driver->step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_GUEST_RELEASED });
}

/* The crashed worker's device is out: the dead mount it left answers
 * ENOTCONN now and is detached before the new device is mounted there (a
 * guest would take the dead mount for the share already mounted).  FALSE:
 * nothing was mounted, there is nothing to let go. */
gboolean sluice_shared_folder_release_dead_mount(SluiceSharedFolder *self)
{
        if (self->guest_place == NULL)
                return FALSE;
        sluice_shared_folder_set_guest(self, self->guest_place, SLUICE_WIRE_GUEST_MOUNTING);
        sluice_vm_manager_guest_release_async(self->vms, self->config->vm, self->config->tag, self->guest_place,
                                              on_dead_mount_released, g_object_ref(self));
        return TRUE;
}

void sluice_shared_folder_unmount_in_guest(SluiceSharedFolder *self, const char *place)
{
        /* a mount that ended while the Detach waited names the place */
        sluice_shared_folder_set_guest(self, place != NULL ? place : self->guest_place, SLUICE_WIRE_GUEST_UNMOUNTING);
        /* the guest's answer is waited for this long, however it is kept */
        g_clear_handle_id(&self->unmount_deadline, g_source_remove);
        self->unmount_deadline = g_timeout_add_seconds(SLUICE_SHARE_UNMOUNT_DEADLINE_S, on_unmount_deadline, self);
        sluice_vm_manager_guest_unmount_async(self->vms, self->config->vm, self->config->tag,
                                              self->guest_place != NULL ? self->guest_place : "",
                                              on_guest_unmounted, g_object_ref(self));
}

/* The device is out: the mount answers ENOTCONN and goes at once. */
void sluice_shared_folder_let_go_quietly(SluiceSharedFolder *self)
{
        if (self->vms == NULL)
                return;
        sluice_vm_manager_guest_release_async(self->vms, self->config->vm, self->config->tag,
                                              self->guest_place != NULL ? self->guest_place : "",
                                              on_let_go_quietly, g_strdup(self->config->tag));
}
