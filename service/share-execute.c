/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-execute.c — carrying out what the share's state machine asks
 * (share-actions.h): the worker, the VM, the properties, the events and
 * the calls that wait (the guest's actions: share-guest.c; its boot line:
 * share-boot-line.c); and turning what those report back into events, fed
 * to the machine through the driver (self->driver).  It asks the machine
 * nothing: what to do in which state is the tables'. */
#include "config.h"

#include <unistd.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-place.h"
#include "share-folder-check.h"
#include "share-private.h"
#include "vm-guest.h"
#include "worker-control.h"

#define A(name) SLUICE_SHARE_ACTION_##name

/* The user whose frontend the share's worker accepts besides root: the user
 * the VM's QEMU runs as (ours for qemu:///session), or -1 when that is not
 * known (a qemu:///system VM that does not run: its socket's permissions,
 * which Sluice grants at attach, decide alone). */
static gint64 share_qemu_uid(SluiceSharedFolder *self)
{
        g_autoptr(SluiceVmInfo) info = NULL;
        g_autoptr(GUri) uri = NULL;

        if (self->vms == NULL || *self->config->vm == '\0')
                return -1;
        info = sluice_vm_manager_lookup(self->vms, self->config->vm, NULL);
        if (info == NULL)
                return -1;
        if (info->running)
                return info->qemu_uid >= 0 ? info->qemu_uid : (gint64)geteuid();
        uri = info->uri != NULL ? g_uri_parse(info->uri, G_URI_FLAGS_NONE, NULL) : NULL;
        if (uri != NULL && g_str_has_prefix(g_uri_get_scheme(uri), "qemu") &&
            g_str_equal(g_uri_get_path(uri), "/session") && geteuid() != 0)
                return (gint64)geteuid();
        return -1;
}

static void on_folder_checked(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        SluiceFolderId found = { 0 };
        Happening what = { .event = SLUICE_SHARE_EVENT_FOLDER_OK, .folder = &found };
        /* The worker opens the folder again for each launch (worker.c): this
         * open only answers "is it still the folder?". */
        int fd = sluice_share_folder_check_finish(result, &found, &error);

        if (fd < 0) {
                /* cancelled: stopped (and maybe started again) meanwhile, not this check */
                if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                        return;
                what = (Happening){ .event = SLUICE_SHARE_EVENT_FOLDER_FAILED, .error = error,
                                    .message = error->message };
        } else {
                (void)close(fd);
        }
        self->driver->step(self, &what);
}

static void on_worker_stopped(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;

        sluice_worker_stop_finish(SLUICE_WORKER(source), result);
        self->driver->step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_WORKER_STOPPED });
}

static void on_plugged(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *hint = sluice_vm_manager_attach_finish(SLUICE_VM_MANAGER(source), result,
                                                                &error);
        Happening what = { .event = SLUICE_SHARE_EVENT_PLUG_DONE, .hint = hint, .error = error };

        if (hint == NULL)
                what.event = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                        ? SLUICE_SHARE_EVENT_PLUG_CANCELLED : SLUICE_SHARE_EVENT_PLUG_FAILED;
        self->driver->step(self, &what);
}

static void plug_now(SluiceSharedFolder *self)
{
        /* Not cancellable: a plug-in that completes must be known, to be undone. */
        sluice_vm_manager_attach_async(self->vms, self->config->vm, self->socket_path, self->config->tag,
                                       NULL, on_plugged, g_object_ref(self));
}

static void on_peer_pid_set(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_worker_control_set_peer_pid_finish(SLUICE_WORKER1(source), result, &error))
                g_warning("%s: %s", self->config->tag, error->message);
        plug_now(self);
}

/* Every system VM's QEMU runs as the same user: the worker is told which
 * process is this VM's before the plug, during which QEMU connects.  A VM
 * restarted has a new QEMU, a worker restarted forgot the old one: each plug
 * asks libvirt's record again.  Where it cannot be read, the worker goes back
 * to checking QEMU's user alone, and the log says why. */
static void plug(SluiceSharedFolder *self)
{
        SluiceWorker1 *control = self->worker ? sluice_worker_get_control(self->worker) : NULL;
        g_autoptr(GError) error = NULL;
        gint64 pid;

        if (control == NULL) {
                plug_now(self);
                return;
        }
        pid = sluice_vm_manager_qemu_pid(self->vms, self->config->vm, &error);
        if (pid < 0) {
                g_warning("%s: %s; its worker accepts any process of QEMU’s user", self->config->tag,
                          error->message);
                pid = 0;
        }
        sluice_worker_control_set_peer_pid_async(control, (guint)pid, on_peer_pid_set, g_object_ref(self));
}

static void on_unplugged(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        Happening what = { .event = SLUICE_SHARE_EVENT_UNPLUG_DONE };

        if (!sluice_vm_manager_detach_finish(SLUICE_VM_MANAGER(source), result, &error)) {
                g_debug("%s: unplugging from %s failed: %s", self->config->tag, self->config->vm,
                        error->message);
                what = (Happening){ .event = SLUICE_SHARE_EVENT_UNPLUG_FAILED, .error = error };
        }
        self->driver->step(self, &what);
}

static void on_unplugged_quietly(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_detach_finish(SLUICE_VM_MANAGER(source), result, &error))
                g_message("Unplugging a share nothing uses: %s", error->message);
}

static void on_orphans_stopped(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;

        sluice_worker_stop_finish(SLUICE_WORKER(source), result);
        g_task_return_boolean(task, TRUE);
}

static void waiter_free(Waiter *w)
{
        g_clear_object(&w->task);
        g_free(w);
}

static void complete_waiter(Waiter *w, const GError *error, const char *hint)
{
        if (w->joined)
                /* the worker runs: Start succeeded even if the VM refused (Error says why) */
                g_task_return_boolean(w->task, TRUE);
        else if (error != NULL)
                g_task_return_error(w->task, g_error_copy(error));
        else if (w->call == SLUICE_SHARE_EVENT_ATTACH)
                g_task_return_pointer(w->task, g_strdup(hint != NULL ? hint : ""), g_free);
        else
                g_task_return_boolean(w->task, TRUE);
        waiter_free(w);
}

static void complete_waiters(GList **waiters, const GError *error, const char *hint)
{
        GList *list = g_steal_pointer(waiters);

        for (GList *l = list; l != NULL; l = l->next)
                complete_waiter(l->data, error, hint);
        g_list_free(list);
}

static void add_waiter(GList **waiters, const Happening *what, gboolean joined)
{
        Waiter *w = g_new0(Waiter, 1);

        w->task = what->caller;
        w->call = what->event;
        w->joined = joined;
        *waiters = g_list_append(*waiters, w);
}

static GError *result_error(SluiceSharedFolder *self, const Happening *what, SluiceShareResultError kind)
{
        switch (kind) {
        case SLUICE_SHARE_RESULT_STOPPING:
                return g_error_new(SLUICE_ERROR, SLUICE_ERROR_FAILED,
                                   _("The share “%s” is stopping: try again in a moment"), self->config->tag);
        case SLUICE_SHARE_RESULT_STOPPED:
                return g_error_new(SLUICE_ERROR, SLUICE_ERROR_FAILED, _("The share “%s” was stopped"),
                                   self->config->tag);
        case SLUICE_SHARE_RESULT_EVENT_ERROR:
                if (what->error != NULL)
                        return g_error_copy(what->error);
                return g_error_new_literal(SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                           what->message != NULL ? what->message : "");
        case SLUICE_SHARE_RESULT_OK:
        default:
                return NULL;
        }
}

static void unplug(SluiceSharedFolder *self, GAsyncReadyCallback callback, gpointer user_data)
{
        sluice_vm_manager_detach_async(self->vms, self->config->vm, self->config->tag, NULL,
                                       callback, user_data);
}

static void report_detached(SluiceSharedFolder *self, const Happening *what)
{
        g_autofree char *message = NULL;

        if (what->event == SLUICE_SHARE_EVENT_VM_STOPPED)
                message = g_strdup_printf(_("“%s” was detached: %s stopped"), self->config->tag, what->vm);
        else if (what->event == SLUICE_SHARE_EVENT_DEVICE_REMOVED)
                message = g_strdup_printf(_("“%s” was removed from %s outside Sluice: attach it again to use it"),
                                          self->config->tag, what->vm);
        else if (self->unmount_skipped != NULL)
                /* TRANSLATORS: the share's tag, the VM's name, then what the guest did */
                message = g_strdup_printf(_("“%s” was unplugged from %s without unmounting it in the guest: %s"),
                                          self->config->tag, self->config->vm, self->unmount_skipped);
        else
                message = g_strdup_printf(_("“%s” was unplugged from %s"), self->config->tag,
                                          self->config->vm);
        g_clear_pointer(&self->unmount_skipped, g_free);
        sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_DETACHED, message);
}

/* What one pass of actions leaves to do once they all ran. */
typedef struct {
        GList *released;         /* Waiter: start waiters, asked again */
        gboolean nothing_to_release; /* RELEASE_DEAD_MOUNT found no mount: GUEST_RELEASED now */
} After;

/* A Windows guest's drive: the letter Windows first gave is kept (it is
 * asked for at every later mount, after a reboot too), and a letter other
 * than the one asked for is said, never silently: once, when the share
 * comes to it (BEFORE: where it was), not again while it stays there (a
 * drive still mounted where it was is found there, not given). */
static void note_drive_letter(SluiceSharedFolder *self, const char *wanted, const char *before, const char *place)
{
        g_autofree char *message = NULL;

        if (!sluice_guest_place_is_drive(place))
                return;
        if (*self->config->mount_point == '\0' && *self->config->guest_letter == '\0') {
                g_free(self->config->guest_letter);
                self->config->guest_letter = g_ascii_strup(place, -1);
                g_signal_emit_by_name(self, "changed");
        }
        if (wanted == NULL || !sluice_guest_place_is_drive(wanted) || g_ascii_strcasecmp(wanted, place) == 0 ||
            (before != NULL && g_ascii_strcasecmp(before, place) == 0))
                return;
        g_message("%s: drive %s was taken in %s: it is %s", self->config->tag, wanted, self->config->vm, place);
        /* TRANSLATORS: the share's tag, the drive it got, the VM's name, the drive it wanted */
        message = g_strdup_printf(_("“%s” is drive %s in %s: %s is taken by another drive"), self->config->tag,
                                  place, self->config->vm, wanted);
        sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_LETTER_CHANGED, message);
}

/* One action. */
static void execute(SluiceSharedFolder *self, SluiceShareActions action, const Happening *what,
                    const GError *error, After *after)
{
        const char *tag = self->config->tag;
        const char *vm = self->config->vm;
        const char *why = what->error != NULL ? what->error->message : "";
        g_autofree char *message = NULL;

        switch (action) {
        case A(FORGET_FOLDER_CHECK):
                g_cancellable_cancel(self->folder_check);
                g_clear_object(&self->folder_check);
                break;
        case A(CHECK_FOLDER):
                g_clear_object(&self->folder_check);
                self->folder_check = g_cancellable_new();
                sluice_share_folder_check_async(self->config->path, &self->config->folder, self->folder_check,
                                                on_folder_checked, g_object_ref(self));
                break;
        case A(SPAWN_WORKER):
                g_clear_object(&self->folder_check);
                if (!self->config->folder.known)
                        self->config->folder = *what->folder;
                self->driver->ensure_worker(self);
                sluice_worker_set_peer_uid(self->worker, share_qemu_uid(self));
                /* every launch, restarts too, serves this folder or fails (worker.h) */
                sluice_worker_start(self->worker, &self->config->folder);
                break;
        case A(STOP_STATS):
                sluice_share_stats_stop(self->stats);
                break;
        case A(CLEAR_SOCKET_PATH):
                sluice_share_set_socket_path(self->iface, "");
                break;
        case A(CLEAR_HINT):
                sluice_share_set_guest_hint(self->iface, "");
                break;
        case A(CLEAR_ERROR):
                sluice_shared_folder_set_error(self, NULL);
                break;
        case A(FORGET_FAILURE):
                g_clear_pointer(&self->last_failure, g_free);
                break;
        case A(SET_ERROR):
                sluice_shared_folder_set_error(self, what->message);
                break;
        case A(REPORT_CRASH):
                sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_CRASHED, what->message);
                break;
        case A(REPORT_FAILURE):
                if (g_strcmp0(what->message, self->last_failure) != 0)
                        sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_FAILED, what->message);
                g_free(self->last_failure);
                self->last_failure = g_strdup(what->message);
                break;
        case A(SET_SOCKET_PATH):
                sluice_share_set_socket_path(self->iface, self->socket_path);
                break;
        case A(START_STATS):
                sluice_share_stats_start(self->stats, self->worker,
                                         what->event == SLUICE_SHARE_EVENT_WORKER_RESTARTED ||
                                         what->event == SLUICE_SHARE_EVENT_WORKER_RESUMED);
                break;
        case A(REPORT_RESTARTED):
                message = g_strdup_printf(_("The worker of “%s” was restarted"), tag);
                sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_RECOVERED, message);
                break;
        case A(UNPLUG_QUIETLY):
                if (self->vms != NULL)
                        unplug(self, on_unplugged_quietly, NULL);
                break;
        case A(UNMOUNT_QUIETLY):
                sluice_shared_folder_leave_guest_quietly(self, FALSE);
                break;
        case A(RELEASE_QUIETLY):
                sluice_shared_folder_leave_guest_quietly(self, TRUE);
                break;
        case A(LET_GO_QUIETLY):
                sluice_shared_folder_let_go_quietly(self);
                break;
        case A(CLEAR_GUEST):
                sluice_shared_folder_set_guest(self, NULL, SLUICE_WIRE_GUEST_IDLE);
                break;
        case A(UNPLUG_OLD_DEVICE):
                if (self->machine.attachment.recovery_tries > 1)
                        g_message("%s: unplugging the old device failed (%s); asking again (%u of %u)", tag,
                                  why, self->machine.attachment.recovery_tries,
                                  SLUICE_SHARE_RECOVERY_UNPLUG_TRIES);
                unplug(self, on_unplugged, g_object_ref(self));
                break;
        case A(REPORT_OLD_DEVICE_HELD):
                message = g_strdup_printf(
                        _("The worker of “%s” was restarted, but %s still holds the old device (%s). "
                          "It is plugged in again as soon as the guest lets it go: unmount “%s” in the guest, "
                          "or restart the VM."), tag, vm, why, tag);
                sluice_shared_folder_set_error(self, message);
                sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_FAILED, message);
                break;
        case A(PLUG):
                plug(self);
                break;
        case A(UNPLUG):
                unplug(self, on_unplugged, g_object_ref(self));
                break;
        case A(NOTE_UNMOUNT_SKIPPED):
                g_message("%s: unplugging from %s without unmounting in the guest", tag, vm);
                g_free(self->unmount_skipped);
                self->unmount_skipped = g_strdup(what->error != NULL ? what->error->message
                                                                     : _("the user chose to stop it anyway"));
                break;
        case A(UNMOUNT_IN_GUEST):
                sluice_shared_folder_unmount_in_guest(self, what->place);
                break;
        case A(SET_HINT):
                sluice_share_set_guest_hint(self->iface, what->hint);
                break;
        case A(MOUNT_IN_GUEST):
                sluice_shared_folder_mount_in_guest(self);
                break;
        case A(RELEASE_DEAD_MOUNT):
                if (!sluice_shared_folder_release_dead_mount(self))
                        after->nothing_to_release = TRUE;
                break;
        case A(SET_GUEST_PATH): {
                g_autofree char *wanted = g_strdup(sluice_shared_folder_wanted_place(self));
                g_autofree char *before = g_strdup(self->guest_place);

                sluice_shared_folder_set_guest(self, what->place != NULL ? what->place : self->guest_place, SLUICE_WIRE_GUEST_MOUNTED);
                if (what->place != NULL)
                        note_drive_letter(self, wanted, before, what->place);
                break;
        }
        case A(REPORT_MOUNT_FAILED):
                sluice_shared_folder_set_guest(self, NULL, SLUICE_WIRE_GUEST_FAILED);
                message = g_strdup_printf(_("Could not mount “%s” in %s: %s"), tag, vm, why);
                sluice_shared_folder_set_error(self, message);
                break;
        case A(REPORT_ATTACHED):
                if (self->guest_place == NULL)
                        message = g_strdup_printf(_("“%s” is now shared with %s"), tag, vm);
                else
                        message = sluice_guest_place_sentence(tag, self->guest_place, vm);
                sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_ATTACHED, message);
                break;
        case A(REPORT_RECOVERED):
                if (self->guest_place == NULL)
                        message = g_strdup_printf(_("“%s” was restarted and is back in %s: remount it in the guest if it hangs"),
                                                  tag, vm);
                else if (sluice_guest_place_is_drive(self->guest_place))
                        message = g_strdup_printf(_("“%s” was restarted and is back as drive %s in %s"),
                                                  tag, self->guest_place, vm);
                else
                        message = g_strdup_printf(_("“%s” was restarted and is back at %s in %s"),
                                                  tag, self->guest_place, vm);
                sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_RECOVERED, message);
                break;
        case A(REPORT_RESUMED):
                message = sluice_shared_folder_resumed_sentence(self);
                sluice_shared_folder_emit_event(self, sluice_shared_folder_resume_failed(self) > 0
                                                ? SLUICE_WIRE_EVENT_RECOVERED : SLUICE_WIRE_EVENT_RESUMED,
                                                message);
                break;
        case A(REPORT_PLUG_FAILED):
                message = g_strdup_printf(_("Could not attach “%s” to %s: %s"), tag, vm, why);
                sluice_shared_folder_set_error(self, message);
                break;
        case A(REPORT_REPLUG_FAILED):
                message = g_strdup_printf(
                        _("The worker of “%s” was restarted, but plugging it into %s again failed: %s"),
                        tag, vm, why);
                sluice_shared_folder_set_error(self, message);
                sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_FAILED, message);
                break;
        case A(REPORT_DETACHED):
                report_detached(self, what);
                break;
        case A(STOP_WORKER):
                self->driver->ensure_worker(self);
                sluice_worker_stop_async(self->worker, on_worker_stopped, g_object_ref(self));
                break;
        case A(RELEASE_START_WAITERS):
                after->released = g_list_concat(after->released, g_steal_pointer(&self->start_waiters));
                break;
        case A(FAIL_START_WAITERS):
                complete_waiters(&self->start_waiters, error, NULL);
                break;
        case A(COMPLETE_ATTACH_WAITERS): {
                /* after a mount the event has no hint: the plug's is current */
                g_autofree char *hint = what->hint == NULL ? sluice_share_dup_guest_hint(self->iface) : NULL;

                complete_waiters(&self->attach_waiters, NULL, what->hint != NULL ? what->hint : hint);
                break;
        }
        case A(FAIL_ATTACH_WAITERS):
                complete_waiters(&self->attach_waiters, error, NULL);
                break;
        case A(COMPLETE_DETACH_WAITERS):
                complete_waiters(&self->detach_waiters, NULL, NULL);
                break;
        case A(FAIL_DETACH_WAITERS):
                complete_waiters(&self->detach_waiters, error, NULL);
                break;
        case A(COMPLETE_STOP_WAITERS):
                complete_waiters(&self->stop_waiters, NULL, NULL);
                break;
        case A(FAIL_STOP_WAITERS):
                complete_waiters(&self->stop_waiters, error, NULL);
                break;
        case A(REPORT_UNMOUNT_FAILED):
                message = g_strdup_printf(_("“%s” was taken out of %s without unmounting it in the guest: the guest "
                                            "did not answer as it should (%s). Programs in the guest that still use "
                                            "%s get errors until it is unmounted there."),
                                          tag, vm, why, self->guest_place != NULL ? self->guest_place : tag);
                sluice_shared_folder_set_error(self, message);
                break;
        case A(WRITE_BOOT_LINE):
                sluice_shared_folder_write_boot_line(self);
                break;
        case A(FORGET_BOOT_LINE):
                sluice_shared_folder_forget_boot_line(self, what->event == SLUICE_SHARE_EVENT_REMOVED);
                break;
        case A(REVOKE_ACCESS):
                if (self->vms != NULL)
                        sluice_vm_manager_revoke_access(self->vms, vm, tag);
                break;
        default:
                g_warn_if_reached();
        }
}

static void answer_caller(SluiceSharedFolder *self, const Happening *what, SluiceShareCaller caller,
                          const GError *error)
{
        Waiter *now;

        switch (caller) {
        case SLUICE_SHARE_CALLER_WAIT_RUNNING:
                add_waiter(&self->start_waiters, what, FALSE);
                return;
        case SLUICE_SHARE_CALLER_WAIT_PLUG:
                add_waiter(&self->attach_waiters, what, FALSE);
                return;
        case SLUICE_SHARE_CALLER_JOIN_PLUG:
                add_waiter(&self->attach_waiters, what, TRUE);
                return;
        case SLUICE_SHARE_CALLER_WAIT_UNPLUG:
                add_waiter(&self->detach_waiters, what, FALSE);
                return;
        case SLUICE_SHARE_CALLER_WAIT_STOP:
                add_waiter(&self->stop_waiters, what, FALSE);
                return;
        case SLUICE_SHARE_CALLER_STOP_ORPHANS:
                self->driver->ensure_worker(self);
                sluice_worker_stop_async(self->worker, on_orphans_stopped, what->caller);
                return;
        default:
                break;
        }
        now = g_new0(Waiter, 1);
        now->task = what->caller;
        now->call = what->event;
        if (caller == SLUICE_SHARE_CALLER_HINT) {
                g_autofree char *hint = sluice_share_dup_guest_hint(self->iface);

                complete_waiter(now, NULL, hint);
        } else {
                complete_waiter(now, caller == SLUICE_SHARE_CALLER_REFUSED ? error : NULL, NULL);
        }
}

void sluice_shared_folder_execute(SluiceSharedFolder *self, const SluiceShareLifecycleResult *r,
                                  const Happening *what)
{
        g_autoptr(GError) error = result_error(self, what, r->error);
        After after = { 0 };

        for (guint bit = 0; bit < SLUICE_SHARE_N_ACTIONS; bit++) {
                SluiceShareActions action = G_GUINT64_CONSTANT(1) << bit;

                if (r->actions & action)
                        execute(self, action, what, error, &after);
        }
        if (what->caller != NULL)
                answer_caller(self, what, r->caller, error);
        /* once this step is done: the guest's answer, had there been anything to ask */
        if (after.nothing_to_release)
                self->driver->step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_GUEST_RELEASED });
        /* the worker runs: each call that waited for it is asked again */
        for (GList *l = after.released; l != NULL; l = l->next) {
                Waiter *w = l->data;

                self->driver->step(self, &(Happening){
                        .event = w->call,
                        .caller = g_steal_pointer(&w->task),
                });
                waiter_free(w);
        }
        g_list_free(after.released);
}
