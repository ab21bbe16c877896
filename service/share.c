/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share.c — one shared folder: drives its state machine (share-lifecycle.h).
 * What happens (calls, the worker's signals, the VM's events) becomes an
 * event for the machine; what the machine answers is carried out by
 * share-execute.c, which hears back through the SluiceShareDriver this
 * file hands it.  Nothing here decides what a share does next. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "sluice-names.h"
#include "service-fd-store.h"
#include "share-private.h"
#include "vm-guest.h"

G_DEFINE_TYPE(SluiceSharedFolder, sluice_shared_folder, G_TYPE_OBJECT)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint share_signals[N_SIGNALS];

char *sluice_shared_folder_path_for_id(guint id)
{
        return g_strdup_printf(SLUICE_SHARE_PATH_PREFIX "%u", id);
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

static gboolean vm_is_running(SluiceSharedFolder *self)
{
        g_autoptr(SluiceVmInfo) info = NULL;

        if (self->vms == NULL || *self->config->vm == '\0')
                return FALSE;
        info = sluice_vm_manager_lookup(self->vms, self->config->vm, NULL);
        return info != NULL && info->running;
}

/* Whether Sluice mounts the share in its VM's guest now. */
static gboolean guest_managed(SluiceSharedFolder *self)
{
        return self->config->auto_mount && self->vms != NULL && *self->config->vm != '\0' &&
               sluice_vm_manager_guest_ready(self->vms, self->config->vm);
}

/* ---- what happened: translated into events ---- */

static gboolean worker_resumed(SluiceWorker *worker, const char **ret_why)
{
        GVariant *resume = sluice_worker_get_resume(worker);
        gboolean resumed = FALSE;

        *ret_why = NULL;
        if (resume == NULL)
                return FALSE;
        if (g_variant_lookup(resume, "resumed", "b", &resumed) && resumed)
                return TRUE;
        (void)g_variant_lookup(resume, "why-not", "&s", ret_why);
        return FALSE;
}

/* A relaunch after a crash (or a restart's hand-over) is ready: either the
 * new worker serves the same device, or the crash is fed as it is now, with
 * why the device could not be kept (the replug path follows).  A hand-over
 * that had no device to keep (no why) changes nothing for the share. */
static void worker_back(SluiceSharedFolder *self, SluiceWorker *worker)
{
        g_autofree char *deferred = g_steal_pointer(&self->deferred_crash);
        g_autofree char *message = NULL;
        g_autofree char *shown = NULL;
        const char *why = NULL;
        gboolean device_lost;

        if (worker_resumed(worker, &why)) {
                sluice_shared_folder_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_WORKER_RESUMED });
                return;
        }
        device_lost = why != NULL && *why != '\0';
        if (deferred == NULL && device_lost && self->machine.state == SLUICE_SHARE_RUNNING)
                deferred = g_strdup_printf(_("The worker of “%s” was restarted"), self->config->tag);
        if (deferred != NULL) {
                /* the worker's why is its own words, shown as they are (trimmed) */
                shown = g_strndup(device_lost ? why : "", 200);
                message = device_lost
                        ? g_strdup_printf(_("%s; its device could not be taken over (%s), so the share is plugged in again"),
                                          deferred, shown)
                        : g_steal_pointer(&deferred);
                sluice_shared_folder_step(self, &(Happening){
                        .event = SLUICE_SHARE_EVENT_WORKER_CRASHED,
                        .message = message,
                });
        }
        sluice_shared_folder_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_WORKER_RESTARTED });
}

static void on_worker_ready(SluiceWorker *worker, gboolean restarted, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;

        if (restarted) {
                worker_back(self, worker);
                return;
        }
        g_clear_pointer(&self->deferred_crash, g_free);
        sluice_shared_folder_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_WORKER_READY });
}

static void on_worker_crashed(SluiceWorker *worker, const char *why, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        g_autofree char *message = g_strdup_printf(
                _("The worker of “%s” stopped unexpectedly (%s): restarting it"),
                self->config->tag, why);

        sluice_share_stats_count_crash(self->stats);
        /* relaunched at once with its store: the guest may never notice, so
         * nothing is said or changed until the new worker says whether it
         * took over (worker_back) */
        if (sluice_worker_resume_expected(worker) && self->machine.state == SLUICE_SHARE_RUNNING) {
                g_message("%s", message);
                g_free(self->deferred_crash);
                self->deferred_crash = g_steal_pointer(&message);
                return;
        }
        g_clear_pointer(&self->deferred_crash, g_free);
        sluice_shared_folder_step(self, &(Happening){
                .event = SLUICE_SHARE_EVENT_WORKER_CRASHED,
                .message = message,
        });
}

static void on_worker_failed(SluiceWorker *worker, const char *why, gpointer user_data)
{
        g_clear_pointer(&((SluiceSharedFolder *)user_data)->deferred_crash, g_free);
        sluice_shared_folder_step(user_data, &(Happening){
                .event = SLUICE_SHARE_EVENT_WORKER_FAILED,
                .message = why,
        });
}

/* Not a step of the share's life: the worker refused the connection and
 * serves on; the user hears that another program tried. */
static void on_worker_peer_refused(SluiceWorker *worker, guint pid, guint uid, const char *reason,
                                   gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        g_autofree char *message = g_strdup_printf(
                _("Another program (process %u of user %u) tried to connect to “%s” and was refused: "
                  "only the QEMU of %s may use it"), pid, uid, self->config->tag, self->config->vm);

        g_message("%s: sluice-fs refused process %u of user %u: %s", self->config->tag, pid, uid, reason);
        sluice_shared_folder_emit_event(self, SLUICE_WIRE_EVENT_FAILED, message);
}

/* ---- the worker, and the machine ---- */

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
        /* its first launch has the names the VM's OS asks for */
        sluice_shared_folder_update_served(self);
        /* what the worker stored before the service restarted: it resumes */
        sluice_service_fd_store_give(self->config->tag, sluice_worker_get_fd_store(self->worker));
        g_signal_connect(self->worker, "ready", G_CALLBACK(on_worker_ready), self);
        g_signal_connect(self->worker, "crashed", G_CALLBACK(on_worker_crashed), self);
        g_signal_connect(self->worker, "failed", G_CALLBACK(on_worker_failed), self);
        g_signal_connect(self->worker, "peer-refused", G_CALLBACK(on_worker_peer_refused), self);
}

static const SluiceShareDriver driver = {
        .step = sluice_shared_folder_step,
        .ensure_worker = ensure_worker,
};

void sluice_shared_folder_step(SluiceSharedFolder *self, const Happening *what)
{
        gboolean ready = what->event == SLUICE_SHARE_EVENT_WORKER_READY ||
                         what->event == SLUICE_SHARE_EVENT_WORKER_RESTARTED ||
                         what->event == SLUICE_SHARE_EVENT_WORKER_RESUMED;
        SluiceShareState before = self->machine.state;
        SluiceShareAttachmentState attachment_before = self->machine.attachment.state;
        SluiceShareLifecycleResult r = sluice_share_lifecycle_step(&self->machine, what->event,
                                                                   ready && vm_is_running(self),
                                                                   guest_managed(self));
        /* a waiter's callback may drop the last reference */
        SluiceSharedFolder *hold = g_object_ref(self);

        g_debug("%s: %s: %s/%s -> %s/%s", self->config->tag, sluice_share_event_name(what->event),
                sluice_share_state_name(before), sluice_share_attachment_state_name(attachment_before),
                sluice_share_state_name(r.next), sluice_share_attachment_state_name(r.attachment));
        sluice_share_set_state(self->iface, sluice_wire_share_state_name(r.published));
        sluice_shared_folder_execute(self, &r, what);
        /* plugged in or out, the agent's state known: the notice may change */
        sluice_shared_folder_publish_error(self);
        /* ServedNames and ServedCase are empty while no worker runs */
        sluice_shared_folder_update_served(self);
        g_object_unref(hold);
}

/* ---- calls ---- */

void sluice_shared_folder_start_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                      gpointer user_data)
{
        sluice_shared_folder_step(self, &(Happening){
                .event = SLUICE_SHARE_EVENT_START,
                .caller = g_task_new(self, NULL, callback, user_data),
        });
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
        sluice_shared_folder_step(self, &(Happening){
                .event = SLUICE_SHARE_EVENT_ATTACH,
                .caller = g_steal_pointer(&task),
        });
}

char *sluice_shared_folder_attach_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                         GError **error)
{
        return g_task_propagate_pointer(G_TASK(result), error);
}

void sluice_shared_folder_detach_async(SluiceSharedFolder *self, gboolean force, GAsyncReadyCallback callback,
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
        sluice_shared_folder_step(self, &(Happening){
                .event = force ? SLUICE_SHARE_EVENT_DETACH_FORCED : SLUICE_SHARE_EVENT_DETACH,
                .caller = task,
        });
}

gboolean sluice_shared_folder_detach_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                            GError **error)
{
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_shared_folder_stop_async(SluiceSharedFolder *self, gboolean force, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
        sluice_shared_folder_step(self, &(Happening){
                .event = force ? SLUICE_SHARE_EVENT_STOP_FORCED : SLUICE_SHARE_EVENT_STOP,
                .caller = g_task_new(self, NULL, callback, user_data),
        });
}

gboolean sluice_shared_folder_stop_finish(SluiceSharedFolder *self, GAsyncResult *result, GError **error)
{
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_shared_folder_set_vm(SluiceSharedFolder *self, const char *vm)
{
        if (g_strcmp0(self->config->vm, vm) == 0)
                return;
        sluice_shared_folder_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_VM_UNASSIGNED });
        g_free(self->config->vm);
        self->config->vm = g_strdup(vm);
        sluice_share_set_vm(self->iface, vm);
        sluice_shared_folder_vms_changed(self);
        sluice_shared_folder_update_served(self);
        g_signal_emit(self, share_signals[SIGNAL_CHANGED], 0);
        if (vm_is_running(self))
                sluice_shared_folder_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_VM_STARTED });
}

/* ---- VM events ---- */

void sluice_shared_folder_vm_started(SluiceSharedFolder *self, const char *vm)
{
        if (is_my_vm(self, vm))
                sluice_shared_folder_step(self, &(Happening){
                        .event = SLUICE_SHARE_EVENT_VM_STARTED,
                        .vm = vm,
                });
}

void sluice_shared_folder_vm_stopped(SluiceSharedFolder *self, const char *vm)
{
        if (is_my_vm(self, vm))
                sluice_shared_folder_step(self, &(Happening){
                        .event = SLUICE_SHARE_EVENT_VM_STOPPED,
                        .vm = vm,
                });
}

void sluice_shared_folder_device_removed(SluiceSharedFolder *self, const char *vm, const char *tag)
{
        if (is_my_vm(self, vm) && g_strcmp0(tag, self->config->tag) == 0)
                sluice_shared_folder_step(self, &(Happening){
                        .event = SLUICE_SHARE_EVENT_DEVICE_REMOVED,
                        .vm = vm,
                });
}

void sluice_shared_folder_guest_changed(SluiceSharedFolder *self, const char *vm)
{
        if (!is_my_vm(self, vm))
                return;
        /* the agent may have just said that the guest runs Windows */
        sluice_shared_folder_update_served(self);
        sluice_shared_folder_step(self, &(Happening){
                .event = SLUICE_SHARE_EVENT_GUEST_READY,
                .vm = vm,
        });
}

void sluice_shared_folder_removed(SluiceSharedFolder *self)
{
        sluice_shared_folder_step(self, &(Happening){ .event = SLUICE_SHARE_EVENT_REMOVED });
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

SluiceSharedFolder *sluice_shared_folder_new(const SluiceShareConfig *config, SluiceShare *iface,
                                             SluiceVmManager *vms, const char *socket_dir,
                                             guint stats_interval_ms)
{
        SluiceSharedFolder *self = g_object_new(SLUICE_TYPE_SHARED_FOLDER, NULL);
        g_autofree char *socket_name = g_strdup_printf("%u.sock", config->id);

        self->config = sluice_share_config_copy(config);
        self->object_path = sluice_shared_folder_path_for_id(config->id);
        self->socket_path = g_build_filename(socket_dir, socket_name, NULL);
        self->vms = vms != NULL ? g_object_ref(vms) : NULL;

        self->iface = g_object_ref(iface);
        self->stats = sluice_share_stats_new(self->iface, stats_interval_ms, config->tag);
        sluice_share_set_path(self->iface, config->path);
        sluice_share_set_tag(self->iface, config->tag);
        sluice_share_set_vm(self->iface, config->vm);
        sluice_share_set_read_only(self->iface, config->readonly);
        sluice_share_set_autostart(self->iface, config->autostart);
        sluice_share_set_auto_mount(self->iface, config->auto_mount);
        sluice_share_set_mount_point(self->iface, config->mount_point);
        sluice_share_set_mount_at_boot(self->iface, config->mount_at_boot);
        sluice_share_set_names(self->iface, config->names);
        sluice_share_set_case(self->iface, config->case_);
        sluice_share_set_served_names(self->iface, "");
        sluice_share_set_served_case(self->iface, "");
        sluice_share_set_socket_path(self->iface, "");
        sluice_share_set_guest_hint(self->iface, "");
        sluice_share_set_guest_path(self->iface, "");
        sluice_share_set_guest_state(self->iface, sluice_wire_guest_state_name(SLUICE_WIRE_GUEST_IDLE));
        sluice_share_set_error(self->iface, "");
        sluice_share_set_stats(self->iface, g_variant_new("a{sv}", NULL));
        sluice_share_set_state(self->iface, sluice_wire_share_state_name(self->machine.published));
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

SluiceShareStats *sluice_shared_folder_get_stats(SluiceSharedFolder *self)
{
        return self->stats;
}

SluiceWorker *sluice_shared_folder_get_worker(SluiceSharedFolder *self)
{
        return self->worker;
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
        g_clear_handle_id(&self->unmount_deadline, g_source_remove);
        g_clear_object(&self->stats);
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
        g_free(self->guest_place);
        g_free(self->unmount_skipped);
        g_free(self->deferred_crash);
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
        self->driver = &driver;
        sluice_share_lifecycle_init(&self->machine);
}
