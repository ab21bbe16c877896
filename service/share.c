/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share.c — one shared folder: drives its state machine (share-lifecycle.h).
 * Callbacks only say what happened (share_step); the machine says what to
 * do, and execute() does it. */
#include "config.h"

#include <unistd.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "share-folder-check.h"
#include "share-lifecycle.h"
#include "share-service.h"
#include "share-stats.h"
#include "share.h"
#include "worker.h"

#define A(name) SLUICE_SHARE_ACTION_##name

/* A call waiting for the machine: what it called decides what it gets. */
typedef struct {
        GTask *task;
        SluiceShareEvent call;  /* START, ATTACH, DETACH or STOP */
        gboolean joined;        /* a Start that waits for a plug: succeeds however it ends */
} Waiter;

struct _SluiceSharedFolder {
        GObject parent_instance;

        SluiceShareConfig *config;
        char *object_path;
        char *socket_path;
        SluiceObjectSkeleton *object;
        SluiceShare *iface;
        SluiceVmManager *vms;
        SluiceWorker *worker;
        SluiceShareLifecycle machine;
        GList *start_waiters;   /* Waiter: until the worker runs */
        GList *attach_waiters;  /* Waiter: until the plug ends */
        GList *detach_waiters;
        GList *stop_waiters;
        GCancellable *folder_check;  /* the pending check before a start */
        SluiceShareStats *stats;
        char *error;            /* what last went wrong, NULL when fine */
        gboolean waiting_for_vm; /* libvirt is asked and does not know config->vm */
        char *last_failure;     /* reported once: a repeat (a missing sluice-fs) is not logged again */
};

G_DEFINE_TYPE(SluiceSharedFolder, sluice_shared_folder, G_TYPE_OBJECT)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint share_signals[N_SIGNALS];

/* What happened, as the machine's event and what came with it. */
typedef struct {
        SluiceShareEvent event;
        GTask *caller;                 /* the call's task (taken), for START ... STOP */
        const GError *error;           /* FOLDER_FAILED, PLUG_FAILED, UNPLUG_FAILED */
        const char *message;           /* WORKER_CRASHED, WORKER_FAILED: for Error and Event */
        const char *hint;              /* PLUG_DONE */
        const SluiceFolderId *folder;  /* FOLDER_OK */
        const char *vm;                /* VM_STOPPED, DEVICE_REMOVED: the VM's name */
} Happening;

static void share_step(SluiceSharedFolder *self, const Happening *what);

char *sluice_shared_folder_path_for_id(guint id)
{
        return g_strdup_printf("/org/sluice/Sluice1/share/%u", id);
}

/* ---- Error and Event ---- */

/* Error shows what went wrong; when nothing did, that the VM is missing. */
static void publish_error(SluiceSharedFolder *self)
{
        g_autofree char *waiting = NULL;

        if (self->error != NULL) {
                sluice_share_set_error(self->iface, self->error);
                return;
        }
        if (self->waiting_for_vm)
                waiting = g_strdup_printf(_("Waiting for VM “%s”: libvirt does not know it. Define it again, or choose another VM (sluicectl set %s vm NAME)"),
                                          self->config->vm, self->config->tag);
        sluice_share_set_error(self->iface, waiting != NULL ? waiting : "");
}

static void set_error(SluiceSharedFolder *self, const char *message)
{
        g_free(self->error);
        self->error = message != NULL && *message != '\0' ? g_strdup(message) : NULL;
        publish_error(self);
}

void sluice_shared_folder_vms_changed(SluiceSharedFolder *self)
{
        gboolean waiting = self->vms != NULL && *self->config->vm != '\0' &&
                sluice_vm_manager_presence(self->vms, self->config->vm) == SLUICE_VM_PRESENCE_UNKNOWN;

        if (waiting == self->waiting_for_vm)
                return;
        self->waiting_for_vm = waiting;
        if (waiting)
                g_message("%s: waiting for VM %s, which libvirt does not know", self->config->tag,
                          self->config->vm);
        publish_error(self);
}

static void emit_event(SluiceSharedFolder *self, const char *kind, const char *message)
{
        g_message("%s: %s", self->config->tag, message);
        sluice_share_emit_event(self->iface, kind, message);
}

/* ---- the share's VM ---- */

/* Whether VM (a name from the VM manager) is the share's VM, which may be
 * stored as a name or a UUID. */
static gboolean is_my_vm(SluiceSharedFolder *self, const char *vm)
{
        g_autoptr(SluiceVmInfo) info = NULL;

        if (*self->config->vm == '\0' || vm == NULL)
                return FALSE;
        if (g_strcmp0(self->config->vm, vm) == 0)
                return TRUE;
        info = self->vms != NULL ? sluice_vm_manager_lookup(self->vms, self->config->vm, NULL) : NULL;
        return info != NULL && g_strcmp0(info->name, vm) == 0;
}

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

static gboolean vm_is_running(SluiceSharedFolder *self)
{
        g_autoptr(SluiceVmInfo) info = NULL;

        if (self->vms == NULL || *self->config->vm == '\0')
                return FALSE;
        info = sluice_vm_manager_lookup(self->vms, self->config->vm, NULL);
        return info != NULL && info->running;
}

/* ---- what happened: translated into events ---- */

static void on_folder_checked(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        SluiceFolderId found = { 0 };

        if (sluice_share_folder_check_finish(result, &found, &error))
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_FOLDER_OK, .folder = &found });
        else if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_FOLDER_FAILED,
                                               .error = error, .message = error->message });
        /* cancelled: stopped (and maybe started again) meanwhile, not this check */
}

static void on_worker_ready(SluiceWorker *worker, gboolean restarted, gpointer user_data)
{
        share_step(user_data, &(Happening){ .event = restarted ? SLUICE_SHARE_EVENT_WORKER_RESTARTED
                                                               : SLUICE_SHARE_EVENT_WORKER_READY });
}

static void on_worker_crashed(SluiceWorker *worker, const char *why, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        g_autofree char *message = g_strdup_printf(
                _("The worker of “%s” stopped unexpectedly (%s): restarting it"),
                self->config->tag, why);

        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_WORKER_CRASHED, .message = message });
}

static void on_worker_failed(SluiceWorker *worker, const char *why, gpointer user_data)
{
        share_step(user_data, &(Happening){ .event = SLUICE_SHARE_EVENT_WORKER_FAILED, .message = why });
}

static void on_worker_stopped(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;

        sluice_worker_stop_finish(SLUICE_WORKER(source), result);
        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_WORKER_STOPPED });
}

static void on_plugged(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *hint = sluice_vm_manager_attach_finish(SLUICE_VM_MANAGER(source), result,
                                                                &error);

        if (hint != NULL)
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_PLUG_DONE, .hint = hint });
        else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_PLUG_CANCELLED, .error = error });
        else
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_PLUG_FAILED, .error = error });
}

static void on_unplugged(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;

        if (sluice_vm_manager_detach_finish(SLUICE_VM_MANAGER(source), result, &error)) {
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_UNPLUG_DONE });
                return;
        }
        g_message("%s: unplugging from %s failed: %s", self->config->tag, self->config->vm,
                  error->message);
        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_UNPLUG_FAILED, .error = error });
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

/* ---- executing what the machine says ---- */

/* Making the worker object looks for orphans a killed service left; it
 * starts nothing. */
static void ensure_worker(SluiceSharedFolder *self)
{
        SluiceWorkerConfig wc = {
                .shared_dir = self->config->path,
                .tag = self->config->tag,
                .socket_path = self->socket_path,
                .cache = self->config->cache,
                .readonly = self->config->readonly,
                .queues = self->config->queues,
        };

        if (self->worker != NULL)
                return;
        self->worker = sluice_worker_new(&wc);
        g_signal_connect(self->worker, "ready", G_CALLBACK(on_worker_ready), self);
        g_signal_connect(self->worker, "crashed", G_CALLBACK(on_worker_crashed), self);
        g_signal_connect(self->worker, "failed", G_CALLBACK(on_worker_failed), self);
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
        else
                message = g_strdup_printf(_("“%s” was unplugged from %s"), self->config->tag,
                                          self->config->vm);
        emit_event(self, "detached", message);
}

/* One action; RELEASED collects the start waiters to ask again afterwards. */
static void execute(SluiceSharedFolder *self, SluiceShareActions action, const Happening *what,
                    const GError *error, GList **released)
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
                ensure_worker(self);
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
                set_error(self, NULL);
                break;
        case A(FORGET_FAILURE):
                g_clear_pointer(&self->last_failure, g_free);
                break;
        case A(SET_ERROR):
                set_error(self, what->message);
                break;
        case A(REPORT_CRASH):
                emit_event(self, "crashed", what->message);
                break;
        case A(REPORT_FAILURE):
                if (g_strcmp0(what->message, self->last_failure) != 0)
                        emit_event(self, "failed", what->message);
                g_free(self->last_failure);
                self->last_failure = g_strdup(what->message);
                break;
        case A(SET_SOCKET_PATH):
                sluice_share_set_socket_path(self->iface, self->socket_path);
                break;
        case A(START_STATS):
                sluice_share_stats_start(self->stats, self->worker);
                break;
        case A(REPORT_RESTARTED):
                message = g_strdup_printf(_("The worker of “%s” was restarted"), tag);
                emit_event(self, "recovered", message);
                break;
        case A(UNPLUG_QUIETLY):
                if (self->vms != NULL)
                        unplug(self, on_unplugged_quietly, NULL);
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
                set_error(self, message);
                emit_event(self, "failed", message);
                break;
        case A(PLUG):
                /* Not cancellable: a plug-in that completes must be known, to be undone. */
                sluice_vm_manager_attach_async(self->vms, vm, self->socket_path, tag, NULL, on_plugged,
                                               g_object_ref(self));
                break;
        case A(UNPLUG):
                unplug(self, on_unplugged, g_object_ref(self));
                break;
        case A(SET_HINT):
                sluice_share_set_guest_hint(self->iface, what->hint);
                break;
        case A(REPORT_ATTACHED):
                message = g_strdup_printf(_("“%s” is now shared with %s"), tag, vm);
                emit_event(self, "attached", message);
                break;
        case A(REPORT_RECOVERED):
                message = g_strdup_printf(_("“%s” was restarted and is back in %s: remount it in the guest if it hangs"),
                                          tag, vm);
                emit_event(self, "recovered", message);
                break;
        case A(REPORT_PLUG_FAILED):
                message = g_strdup_printf(_("Could not attach “%s” to %s: %s"), tag, vm, why);
                set_error(self, message);
                break;
        case A(REPORT_REPLUG_FAILED):
                message = g_strdup_printf(
                        _("The worker of “%s” was restarted, but plugging it into %s again failed: %s"),
                        tag, vm, why);
                set_error(self, message);
                emit_event(self, "failed", message);
                break;
        case A(REPORT_DETACHED):
                report_detached(self, what);
                break;
        case A(STOP_WORKER):
                ensure_worker(self);
                sluice_worker_stop_async(self->worker, on_worker_stopped, g_object_ref(self));
                break;
        case A(RELEASE_START_WAITERS):
                *released = g_list_concat(*released, g_steal_pointer(&self->start_waiters));
                break;
        case A(FAIL_START_WAITERS):
                complete_waiters(&self->start_waiters, error, NULL);
                break;
        case A(COMPLETE_ATTACH_WAITERS):
                complete_waiters(&self->attach_waiters, NULL, what->hint);
                break;
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
                ensure_worker(self);
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

static void share_step(SluiceSharedFolder *self, const Happening *what)
{
        gboolean ready = what->event == SLUICE_SHARE_EVENT_WORKER_READY ||
                         what->event == SLUICE_SHARE_EVENT_WORKER_RESTARTED;
        SluiceShareState before = self->machine.state;
        SluiceShareAttachmentState attachment_before = self->machine.attachment.state;
        SluiceShareLifecycleResult r = sluice_share_lifecycle_step(&self->machine, what->event,
                                                                   ready && vm_is_running(self));
        g_autoptr(GError) error = result_error(self, what, r.error);
        g_autoptr(SluiceSharedFolder) hold = g_object_ref(self);  /* a waiter's callback may drop the last */
        GList *released = NULL;

        g_debug("%s: %s: %s/%s -> %s/%s", self->config->tag, sluice_share_event_name(what->event),
                sluice_share_state_name(before), sluice_share_attachment_state_name(attachment_before),
                sluice_share_state_name(r.next), sluice_share_attachment_state_name(r.attachment));
        sluice_share_set_state(self->iface, sluice_share_published_name(r.published));
        for (guint bit = 0; bit < SLUICE_SHARE_N_ACTIONS; bit++) {
                SluiceShareActions action = G_GUINT64_CONSTANT(1) << bit;

                if (r.actions & action)
                        execute(self, action, what, error, &released);
        }
        if (what->caller != NULL)
                answer_caller(self, what, r.caller, error);
        /* the worker runs: each call that waited for it is asked again */
        for (GList *l = released; l != NULL; l = l->next) {
                Waiter *w = l->data;

                share_step(self, &(Happening){ .event = w->call, .caller = g_steal_pointer(&w->task) });
                waiter_free(w);
        }
        g_list_free(released);
}

/* ---- calls ---- */

void sluice_shared_folder_start_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                      gpointer user_data)
{
        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_START,
                                       .caller = g_task_new(self, NULL, callback, user_data) });
}

gboolean sluice_shared_folder_start_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                           GError **error)
{
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_shared_folder_attach_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);
        g_autoptr(SluiceVmInfo) info = NULL;
        GError *error = NULL;

        if (*self->config->vm == '\0') {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_NO_VM,
                                        _("The share “%s” is not assigned to a VM: assign one first (sluicectl set %s vm NAME)"),
                                        self->config->tag, self->config->tag);
                return;
        }
        if (self->vms == NULL) {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                                        _("This sluice-service tracks no VMs: restart it without --libvirt-uri=none"));
                return;
        }
        /* Fail before launching a worker for a VM that cannot take it. */
        info = sluice_vm_manager_lookup(self->vms, self->config->vm, &error);
        if (info == NULL) {
                g_task_return_error(task, error);
                return;
        }
        if (!info->running) {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_VM_NOT_RUNNING,
                                        _("The VM “%s” is not running: start it, and the share is attached by itself"),
                                        info->name);
                return;
        }
        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_ATTACH, .caller = g_steal_pointer(&task) });
}

char *sluice_shared_folder_attach_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                         GError **error)
{
        return g_task_propagate_pointer(G_TASK(result), error);
}

void sluice_shared_folder_detach_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
        GTask *task = g_task_new(self, NULL, callback, user_data);

        if (*self->config->vm == '\0') {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_NO_VM,
                        _("The share “%s” is not assigned to a VM: there is nothing to detach"),
                        self->config->tag);
                g_object_unref(task);
                return;
        }
        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_DETACH, .caller = task });
}

gboolean sluice_shared_folder_detach_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                            GError **error)
{
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_shared_folder_stop_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_STOP,
                                       .caller = g_task_new(self, NULL, callback, user_data) });
}

void sluice_shared_folder_stop_finish(SluiceSharedFolder *self, GAsyncResult *result)
{
        (void)g_task_propagate_boolean(G_TASK(result), NULL);
}

void sluice_shared_folder_set_vm(SluiceSharedFolder *self, const char *vm)
{
        if (g_strcmp0(self->config->vm, vm) == 0)
                return;
        share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_VM_UNASSIGNED });
        g_free(self->config->vm);
        self->config->vm = g_strdup(vm);
        sluice_share_set_vm(self->iface, vm);
        sluice_shared_folder_vms_changed(self);
        g_signal_emit(self, share_signals[SIGNAL_CHANGED], 0);
        if (vm_is_running(self))
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_VM_STARTED });
}

/* ---- VM events ---- */

void sluice_shared_folder_vm_started(SluiceSharedFolder *self, const char *vm)
{
        if (is_my_vm(self, vm))
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_VM_STARTED, .vm = vm });
}

void sluice_shared_folder_vm_stopped(SluiceSharedFolder *self, const char *vm)
{
        if (is_my_vm(self, vm))
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_VM_STOPPED, .vm = vm });
}

void sluice_shared_folder_device_removed(SluiceSharedFolder *self, const char *vm, const char *tag)
{
        if (is_my_vm(self, vm) && g_strcmp0(tag, self->config->tag) == 0)
                share_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_DEVICE_REMOVED, .vm = vm });
}

/* ---- settings ---- */

static void apply_read_only(SluiceSharedFolder *self, gboolean readonly)
{
        if (readonly == self->config->readonly)
                return;
        self->config->readonly = readonly;
        sluice_share_set_read_only(self->iface, readonly);
        g_signal_emit(self, share_signals[SIGNAL_CHANGED], 0);
}

static void on_read_only_switched(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceSharedFolder *self = g_task_get_source_object(task);
        GError *error = NULL;

        if (!sluice_worker_set_readonly_finish(SLUICE_WORKER(source), result, &error)) {
                g_warning("%s", error->message);
                g_task_return_error(task, error);
                return;
        }
        apply_read_only(self, GPOINTER_TO_INT(g_task_get_task_data(task)));
        g_task_return_boolean(task, TRUE);
}

void sluice_shared_folder_set_read_only_async(SluiceSharedFolder *self, gboolean readonly,
                                              GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);

        if (self->worker == NULL) {
                apply_read_only(self, readonly);
                g_task_return_boolean(task, TRUE);
                return;
        }
        g_task_set_task_data(task, GINT_TO_POINTER(readonly), NULL);
        /* a worker that is not ready takes it at once (at its launch) */
        sluice_worker_set_readonly_async(self->worker, readonly, on_read_only_switched,
                                         g_steal_pointer(&task));
}

gboolean sluice_shared_folder_set_read_only_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                                   GError **error)
{
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_shared_folder_set_autostart(SluiceSharedFolder *self, gboolean autostart)
{
        if (autostart == self->config->autostart)
                return;
        self->config->autostart = autostart;
        g_signal_emit(self, share_signals[SIGNAL_CHANGED], 0);
}

/* ---- object ---- */

SluiceSharedFolder *sluice_shared_folder_new(const SluiceShareConfig *config,
                                             SluiceVmManager *vms, const char *socket_dir,
                                             guint stats_interval_ms)
{
        SluiceSharedFolder *self = g_object_new(SLUICE_TYPE_SHARED_FOLDER, NULL);
        g_autofree char *socket_name = g_strdup_printf("%u.sock", config->id);

        self->config = sluice_share_config_copy(config);
        self->object_path = sluice_shared_folder_path_for_id(config->id);
        self->socket_path = g_build_filename(socket_dir, socket_name, NULL);
        self->vms = vms != NULL ? g_object_ref(vms) : NULL;

        self->iface = sluice_share_service_new(self);
        self->stats = sluice_share_stats_new(self->iface, stats_interval_ms, config->tag);
        sluice_share_set_path(self->iface, config->path);
        sluice_share_set_tag(self->iface, config->tag);
        sluice_share_set_vm(self->iface, config->vm);
        sluice_share_set_read_only(self->iface, config->readonly);
        sluice_share_set_autostart(self->iface, config->autostart);
        sluice_share_set_socket_path(self->iface, "");
        sluice_share_set_guest_hint(self->iface, "");
        sluice_share_set_error(self->iface, "");
        sluice_share_set_stats(self->iface, g_variant_new("a{sv}", NULL));
        sluice_share_set_state(self->iface, sluice_share_published_name(self->machine.published));
        sluice_shared_folder_vms_changed(self);

        self->object = sluice_object_skeleton_new(self->object_path);
        sluice_object_skeleton_set_share(self->object, self->iface);
        return self;
}

const SluiceShareConfig *sluice_shared_folder_get_config(SluiceSharedFolder *self)
{
        return self->config;
}

const char *sluice_shared_folder_get_object_path(SluiceSharedFolder *self)
{
        return self->object_path;
}

SluiceObjectSkeleton *sluice_shared_folder_get_object(SluiceSharedFolder *self)
{
        return self->object;
}

SluiceShare *sluice_shared_folder_get_iface(SluiceSharedFolder *self)
{
        return self->iface;
}

static void sluice_shared_folder_dispose(GObject *object)
{
        SluiceSharedFolder *self = SLUICE_SHARED_FOLDER(object);

        g_cancellable_cancel(self->folder_check);
        g_clear_object(&self->folder_check);
        g_clear_object(&self->stats);
        if (self->iface != NULL)
                sluice_share_service_forget_folder(SLUICE_SHARE_SERVICE(self->iface));
        if (self->worker != NULL)
                g_signal_handlers_disconnect_by_data(self->worker, self);
        g_clear_object(&self->worker);
        g_clear_object(&self->object);
        g_clear_object(&self->iface);
        g_clear_object(&self->vms);
        G_OBJECT_CLASS(sluice_shared_folder_parent_class)->dispose(object);
}

static void sluice_shared_folder_finalize(GObject *object)
{
        SluiceSharedFolder *self = SLUICE_SHARED_FOLDER(object);

        sluice_share_config_free(self->config);
        g_free(self->error);
        g_free(self->object_path);
        g_free(self->socket_path);
        g_free(self->last_failure);
        G_OBJECT_CLASS(sluice_shared_folder_parent_class)->finalize(object);
}

static void sluice_shared_folder_class_init(SluiceSharedFolderClass *klass)
{
        GObjectClass *object_class = G_OBJECT_CLASS(klass);

        object_class->dispose = sluice_shared_folder_dispose;
        object_class->finalize = sluice_shared_folder_finalize;
        share_signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass),
                G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void sluice_shared_folder_init(SluiceSharedFolder *self)
{
        sluice_share_lifecycle_init(&self->machine);
}
