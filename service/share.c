/* share.c — one shared folder: Share interface, worker, VM attachment. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "share-path.h"
#include "share-service.h"
#include "share.h"
#include "sluice-names.h"
#include "stats.h"
#include "worker-control.h"
#include "worker.h"

typedef enum {
        STATE_STOPPED,
        STATE_STARTING,
        STATE_RUNNING,
        STATE_ATTACHED,
        STATE_FAILED,
} ShareState;

static const char *const state_names[] = {
        [STATE_STOPPED] = "stopped",
        [STATE_STARTING] = "starting",
        [STATE_RUNNING] = "running",
        [STATE_ATTACHED] = "attached",
        [STATE_FAILED] = "failed",
};

struct _SluiceSharedFolder {
        GObject parent_instance;

        SluiceShareConfig *config;
        char *object_path;
        char *socket_path;
        SluiceObjectSkeleton *object;
        SluiceShare *iface;
        SluiceVmManager *vms;
        SluiceWorker *worker;
        ShareState state;
        gboolean stopping;
        gboolean attaching;
        gboolean reattach_after_restart;  /* it was attached when the worker crashed */
        guint recovery_detach_tries;      /* unplug requests made for the crashed worker's device */
        gboolean awaiting_old_device;     /* the guest still holds it: plug in once it is gone */
        GList *start_waiters;             /* GTasks waiting for "running" */
        GList *attach_waiters;            /* GTasks waiting for the hot-plug */
        GList *stop_waiters;
        char *error;                      /* what last went wrong, NULL when fine */
        guint folder_check;               /* the pending folder check before a start, 0: none */
        guint folder_checks;              /* checks made: each gets the next number */
        gboolean waiting_for_vm;          /* libvirt is asked and does not know config->vm */
        char *last_failure;               /* reported once: a repeat (a missing sluice-fs) is not logged again */

        guint stats_interval_ms;
        guint stats_source;
        gboolean stats_in_flight;
        SluiceStatsSampler sampler;
        GVariant *last_stats;
};

G_DEFINE_TYPE(SluiceSharedFolder, sluice_shared_folder, G_TYPE_OBJECT)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint share_signals[N_SIGNALS];

static void share_attach_internal(SluiceSharedFolder *self, GTask *task);

/* A restarted worker needs a fresh device (QEMU cannot reconnect a
 * vhost-user-fs one), so the old one is unplugged first.  A guest that is
 * busy or still booting can miss an unplug request: it is asked this often
 * (each request waits up to 10 s) before Sluice waits for the guest instead. */
#define RECOVERY_DETACH_TRIES 3

char *sluice_shared_folder_path_for_id(guint id)
{
        return g_strdup_printf(SLUICE_SHARE_PATH_PREFIX "%u", id);
}

static void set_state(SluiceSharedFolder *self, ShareState state)
{
        self->state = state;
        sluice_share_set_state(self->iface, state_names[state]);
}

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

static void complete_waiters(GList **waiters, const GError *error, const char *hint)
{
        GList *list = g_steal_pointer(waiters);

        for (GList *l = list; l != NULL; l = l->next) {
                GTask *task = l->data;

                if (error != NULL)
                        g_task_return_error(task, g_error_copy(error));
                else if (hint != NULL)
                        g_task_return_pointer(task, g_strdup(hint), g_free);
                else
                        g_task_return_boolean(task, TRUE);
                g_object_unref(task);
        }
        g_list_free(list);
}

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

/* ---- stats ---- */

static void publish_stats(SluiceSharedFolder *self, GVariant *stats)
{
        g_autoptr(GVariant) sunk = g_variant_ref_sink(stats);

        if (!sluice_stats_differ(self->last_stats, sunk))
                return;
        g_clear_pointer(&self->last_stats, g_variant_unref);
        self->last_stats = g_variant_ref(sunk);
        sluice_share_set_stats(self->iface, sunk);
}

static void on_stats(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) raw = sluice_worker_control_get_stats_finish(SLUICE_WORKER1(source),
                                                                         result, &error);

        self->stats_in_flight = FALSE;
        if (raw == NULL) {
                g_debug("No stats from the worker of %s: %s", self->config->tag, error->message);
                return;
        }
        /* The worker may have stopped meanwhile: its stats are gone with it.  A
         * late answer of a replaced worker would be counted twice. */
        if (self->stats_source == 0 || self->worker == NULL ||
            (gpointer)source != (gpointer)sluice_worker_get_control(self->worker))
                return;
        publish_stats(self, sluice_stats_sample(&self->sampler, raw, g_get_monotonic_time()));
}

static gboolean on_stats_tick(gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        SluiceWorker1 *control = self->worker != NULL ? sluice_worker_get_control(self->worker) : NULL;

        if (control != NULL && !self->stats_in_flight) {
                self->stats_in_flight = TRUE;
                sluice_worker_control_get_stats_async(control, NULL, on_stats, g_object_ref(self));
        }
        return G_SOURCE_CONTINUE;
}

/* restarted: the share runs on with a new worker, whose counters are added
 * to what the share counted so far (stats.h); else the count begins now. */
static void stats_start(SluiceSharedFolder *self, gboolean restarted)
{
        if (self->stats_source != 0)
                return;
        if (restarted)
                sluice_stats_sampler_new_worker(&self->sampler);
        else
                sluice_stats_sampler_begin(&self->sampler, g_get_real_time());
        self->stats_source = g_timeout_add(self->stats_interval_ms, on_stats_tick, self);
        on_stats_tick(self);
}

static void stats_stop(SluiceSharedFolder *self)
{
        if (self->stats_source != 0) {
                g_source_remove(self->stats_source);
                self->stats_source = 0;
        }
        publish_stats(self, g_variant_new("a{sv}", NULL));
}

/* ---- worker events ---- */

static void on_recovered_attach(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *hint = sluice_shared_folder_attach_finish(self, result, &error);
        g_autofree char *message = NULL;

        if (hint == NULL) {
                message = g_strdup_printf(
                        _("The worker of “%s” was restarted, but plugging it into %s again failed: %s"),
                        self->config->tag, self->config->vm, error->message);
                set_error(self, message);
                emit_event(self, "failed", message);
                return;
        }
        message = g_strdup_printf(_("“%s” was restarted and is back in %s: remount it in the guest if it hangs"),
                                  self->config->tag, self->config->vm);
        emit_event(self, "recovered", message);
}

static void plug_in_recovered(SluiceSharedFolder *self)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, on_recovered_attach, g_object_ref(self));

        share_attach_internal(self, g_steal_pointer(&task));
}

static void on_recovery_detached(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *message = NULL;

        if (sluice_vm_manager_detach_finish(SLUICE_VM_MANAGER(source), result, &error)) {
                if (self->state == STATE_RUNNING)
                        plug_in_recovered(self);
                return;
        }
        if (self->state != STATE_RUNNING)
                return;
        /* Plugging in now would find the old device (same socket) and report a
         * share that does not work: ask again, then wait for the guest. */
        if (self->recovery_detach_tries < RECOVERY_DETACH_TRIES) {
                self->recovery_detach_tries++;
                g_message("%s: unplugging the old device failed (%s); asking again (%u of %u)",
                          self->config->tag, error->message, self->recovery_detach_tries,
                          RECOVERY_DETACH_TRIES);
                sluice_vm_manager_detach_async(self->vms, self->config->vm, self->config->tag,
                                               NULL, on_recovery_detached, g_object_ref(self));
                return;
        }
        self->awaiting_old_device = TRUE;
        message = g_strdup_printf(
                _("The worker of “%s” was restarted, but %s still holds the old device (%s). "
                  "It is plugged in again as soon as the guest lets it go: unmount “%s” in the guest, "
                  "or restart the VM."),
                self->config->tag, self->config->vm, error->message, self->config->tag);
        set_error(self, message);
        emit_event(self, "failed", message);
}

static void on_worker_ready(SluiceWorker *worker, gboolean restarted, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;

        set_state(self, STATE_RUNNING);
        set_error(self, NULL);
        g_clear_pointer(&self->last_failure, g_free);
        sluice_share_set_socket_path(self->iface, self->socket_path);
        stats_start(self, restarted);

        if (restarted && self->reattach_after_restart && self->vms != NULL) {
                self->reattach_after_restart = FALSE;
                self->awaiting_old_device = FALSE;
                self->recovery_detach_tries = 1;
                sluice_vm_manager_detach_async(self->vms, self->config->vm, self->config->tag,
                                               NULL, on_recovery_detached, g_object_ref(self));
        } else {
                if (restarted) {
                        g_autofree char *message = g_strdup_printf(
                                _("The worker of “%s” was restarted"), self->config->tag);
                        emit_event(self, "recovered", message);
                }
                if (!self->attaching && vm_is_running(self))
                        share_attach_internal(self, NULL);
        }
        complete_waiters(&self->start_waiters, NULL, NULL);
}

static void on_worker_crashed(SluiceWorker *worker, const char *why, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        g_autofree char *message = g_strdup_printf(
                _("The worker of “%s” stopped unexpectedly (%s): restarting it"),
                self->config->tag, why);

        self->reattach_after_restart |= self->state == STATE_ATTACHED;
        stats_stop(self);
        sluice_share_set_guest_hint(self->iface, "");
        set_state(self, STATE_STARTING);
        set_error(self, message);
        emit_event(self, "crashed", message);
}

static void on_failed_detached(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GError) error = NULL;

        if (!sluice_vm_manager_detach_finish(SLUICE_VM_MANAGER(source), result, &error))
                g_message("Unplugging a failed share: %s", error->message);
}

static void on_worker_failed(SluiceWorker *worker, const char *why, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        g_autoptr(GError) error = g_error_new_literal(SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED, why);
        gboolean plugged = self->state == STATE_ATTACHED || self->reattach_after_restart;

        self->reattach_after_restart = FALSE;
        stats_stop(self);
        sluice_share_set_socket_path(self->iface, "");
        sluice_share_set_guest_hint(self->iface, "");
        set_state(self, STATE_FAILED);
        set_error(self, why);
        if (g_strcmp0(why, self->last_failure) != 0)
                emit_event(self, "failed", why);
        g_free(self->last_failure);
        self->last_failure = g_strdup(why);
        if (plugged && self->vms != NULL)
                sluice_vm_manager_detach_async(self->vms, self->config->vm, self->config->tag,
                                               NULL, on_failed_detached, NULL);
        complete_waiters(&self->start_waiters, error, NULL);
        complete_waiters(&self->attach_waiters, error, NULL);
}

/* ---- start ---- */

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

typedef struct {
        char *path;
        SluiceFolderId expected;  /* unknown at the first start after loading */
        SluiceFolderId found;     /* written by the thread, read once it is done */
} FolderCheck;

static void folder_check_free(gpointer data)
{
        FolderCheck *check = data;

        g_free(check->path);
        g_free(check);
}

/* The folder was resolved when the share was added: if a link took its
 * place since, the worker would serve wherever it points now.  In a thread:
 * realpath and statfs of a network folder can hang. */
static void folder_check_thread(GTask *task, gpointer source, gpointer task_data,
                                GCancellable *cancellable)
{
        FolderCheck *check = task_data;
        const char *path = check->path;
        g_autofree char *real = realpath(path, NULL);
        GError *error = NULL;
        int fd;

        if (real != NULL && strcmp(real, path) != 0) {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE,
                        _("“%s” is no longer the folder that was shared: it now leads to “%s”. Sluice does not follow it there; remove the share and add the folder you mean"),
                        path, real);
                return;
        }
        if (real != NULL && !sluice_share_path_check_location(real, &error)) {
                g_task_return_error(task, error);
                return;
        }
        /* Opened the way each launch of the worker opens it (worker.c): a
         * share loaded from shares.ini has its folder recorded here. */
        fd = sluice_share_path_open(path, &check->expected, &check->found, &error);
        if (fd < 0) {
                g_task_return_error(task, error);
                return;
        }
        (void)close(fd);
        g_task_return_boolean(task, TRUE);
}

static void on_folder_checked(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SluiceSharedFolder *self = SLUICE_SHARED_FOLDER(source);
        FolderCheck *check = g_task_get_task_data(G_TASK(result));
        g_autoptr(GError) error = NULL;
        gboolean ok = g_task_propagate_boolean(G_TASK(result), &error);

        /* stopped (and maybe started again) meanwhile: that check is not this one */
        if (GPOINTER_TO_UINT(user_data) != self->folder_check)
                return;
        self->folder_check = 0;
        if (!ok) {
                set_state(self, STATE_FAILED);
                set_error(self, error->message);
                complete_waiters(&self->start_waiters, error, NULL);
                complete_waiters(&self->attach_waiters, error, NULL);
                return;
        }
        if (!self->config->folder.known)
                self->config->folder = check->found;
        ensure_worker(self);
        sluice_worker_set_peer_uid(self->worker, share_qemu_uid(self));
        /* every launch, restarts too, serves this folder or fails (worker.h) */
        sluice_worker_start(self->worker, &self->config->folder);
}

/* Completes task (boolean) once the worker is ready. */
static void share_ensure_running(SluiceSharedFolder *self, GTask *task)
{
        g_autoptr(GTask) check = NULL;
        FolderCheck *folder;

        if (self->stopping) {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                                        _("The share “%s” is stopping: try again in a moment"),
                                        self->config->tag);
                g_object_unref(task);
                return;
        }
        if (self->state == STATE_RUNNING || self->state == STATE_ATTACHED) {
                g_task_return_boolean(task, TRUE);
                g_object_unref(task);
                return;
        }
        self->start_waiters = g_list_append(self->start_waiters, task);
        if (self->state == STATE_STARTING)
                return;
        set_state(self, STATE_STARTING);
        set_error(self, NULL);
        /* the worker is started once the folder is checked (on_folder_checked) */
        self->folder_check = ++self->folder_checks;
        if (self->folder_check == 0)
                self->folder_check = ++self->folder_checks;
        check = g_task_new(self, NULL, on_folder_checked, GUINT_TO_POINTER(self->folder_check));
        folder = g_new0(FolderCheck, 1);
        folder->path = g_strdup(self->config->path);
        folder->expected = self->config->folder;
        g_task_set_task_data(check, folder, folder_check_free);
        g_task_run_in_thread(check, folder_check_thread);
}

static void on_start_attached(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *hint = sluice_shared_folder_attach_finish(SLUICE_SHARED_FOLDER(source),
                                                                   result, &error);

        /* The worker runs: Start succeeded even if the VM refused (Error says why). */
        g_task_return_boolean(task, TRUE);
}

static void on_start_running(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceSharedFolder *self = SLUICE_SHARED_FOLDER(source);
        GError *error = NULL;

        if (!g_task_propagate_boolean(G_TASK(result), &error)) {
                g_task_return_error(task, error);
                return;
        }
        if (self->attaching) {
                GTask *join = g_task_new(self, NULL, on_start_attached, g_steal_pointer(&task));

                self->attach_waiters = g_list_append(self->attach_waiters, join);
                return;
        }
        g_task_return_boolean(task, TRUE);
}

void sluice_shared_folder_start_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                      gpointer user_data)
{
        GTask *task = g_task_new(self, NULL, callback, user_data);

        share_ensure_running(self, g_task_new(self, NULL, on_start_running, task));
}

gboolean sluice_shared_folder_start_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                           GError **error)
{
        return g_task_propagate_boolean(G_TASK(result), error);
}

/* ---- attach / detach ---- */

static void on_attached(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autofree char *hint = sluice_vm_manager_attach_finish(SLUICE_VM_MANAGER(source), result,
                                                                &error);
        g_autofree char *message = NULL;

        self->attaching = FALSE;
        if (hint == NULL) {
                if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
                        message = g_strdup_printf(_("Could not attach “%s” to %s: %s"),
                                                  self->config->tag, self->config->vm,
                                                  error->message);
                        set_error(self, message);
                }
                complete_waiters(&self->attach_waiters, error, NULL);
                return;
        }
        if (self->stopping || self->state == STATE_STOPPED || self->state == STATE_FAILED) {
                /* Stopped while the device was being plugged in: take it out again. */
                sluice_vm_manager_detach_async(self->vms, self->config->vm, self->config->tag,
                                               NULL, on_failed_detached, NULL);
        } else if (self->state == STATE_STARTING) {
                /* The worker crashed while the device was being plugged in. */
                self->reattach_after_restart = TRUE;
        } else if (self->state == STATE_RUNNING && !self->stopping) {
                set_state(self, STATE_ATTACHED);
                set_error(self, NULL);
                sluice_share_set_guest_hint(self->iface, hint);
                message = g_strdup_printf(_("“%s” is now shared with %s"), self->config->tag,
                                          self->config->vm);
                emit_event(self, "attached", message);
        }
        complete_waiters(&self->attach_waiters, NULL, hint);
}

/* Hot-plugs the running worker; task (may be NULL) gets the guest hint. */
static void share_attach_internal(SluiceSharedFolder *self, GTask *task)
{
        if (self->state == STATE_ATTACHED) {
                if (task != NULL) {
                        g_task_return_pointer(task, sluice_share_dup_guest_hint(self->iface), g_free);
                        g_object_unref(task);
                }
                return;
        }
        if (task != NULL)
                self->attach_waiters = g_list_append(self->attach_waiters, task);
        if (self->attaching)
                return;
        self->attaching = TRUE;
        /* Not cancellable: a plug-in that completes must be known, to be undone. */
        sluice_vm_manager_attach_async(self->vms, self->config->vm, self->socket_path,
                                       self->config->tag, NULL, on_attached, g_object_ref(self));
}

static void on_attach_running(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceSharedFolder *self = SLUICE_SHARED_FOLDER(source);
        GError *error = NULL;

        if (!g_task_propagate_boolean(G_TASK(result), &error)) {
                g_task_return_error(task, error);
                return;
        }
        share_attach_internal(self, g_steal_pointer(&task));
}

void sluice_shared_folder_attach_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
        GTask *task = g_task_new(self, NULL, callback, user_data);
        g_autoptr(SluiceVmInfo) info = NULL;
        GError *error = NULL;

        if (*self->config->vm == '\0') {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_NO_VM,
                                        _("The share “%s” is not assigned to a VM: assign one first (sluicectl set %s vm NAME)"),
                                        self->config->tag, self->config->tag);
                g_object_unref(task);
                return;
        }
        if (self->vms == NULL) {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                                        _("This sluice-service tracks no VMs: restart it without --libvirt-uri=none"));
                g_object_unref(task);
                return;
        }
        /* Fail before launching a worker for a VM that cannot take it. */
        info = sluice_vm_manager_lookup(self->vms, self->config->vm, &error);
        if (info == NULL) {
                g_task_return_error(task, error);
                g_object_unref(task);
                return;
        }
        if (!info->running) {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_VM_NOT_RUNNING,
                                        _("The VM “%s” is not running: start it, and the share is attached by itself"),
                                        info->name);
                g_object_unref(task);
                return;
        }
        share_ensure_running(self, g_task_new(self, NULL, on_attach_running, task));
}

char *sluice_shared_folder_attach_finish(SluiceSharedFolder *self, GAsyncResult *result,
                                         GError **error)
{
        return g_task_propagate_pointer(G_TASK(result), error);
}

/* Leaves "attached" for "running" after the device went away. */
static void share_unplugged(SluiceSharedFolder *self, const char *message)
{
        self->reattach_after_restart = FALSE;
        self->awaiting_old_device = FALSE;
        if (self->state != STATE_ATTACHED)
                return;
        set_state(self, STATE_RUNNING);
        sluice_share_set_guest_hint(self->iface, "");
        emit_event(self, "detached", message);
}

static void on_detached(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceSharedFolder *self = g_task_get_source_object(task);
        GError *error = NULL;
        g_autofree char *message = NULL;

        if (!sluice_vm_manager_detach_finish(SLUICE_VM_MANAGER(source), result, &error)) {
                g_task_return_error(task, error);
                return;
        }
        message = g_strdup_printf(_("“%s” was unplugged from %s"), self->config->tag,
                                  self->config->vm);
        share_unplugged(self, message);
        g_task_return_boolean(task, TRUE);
}

static void share_detach(SluiceSharedFolder *self, GTask *task)
{
        if (self->vms == NULL || *self->config->vm == '\0' ||
            (self->state != STATE_ATTACHED && !self->reattach_after_restart &&
             !self->awaiting_old_device)) {
                self->reattach_after_restart = FALSE;
                g_task_return_boolean(task, TRUE);
                g_object_unref(task);
                return;
        }
        self->awaiting_old_device = FALSE;  /* whatever is plugged in goes: not again after it */
        sluice_vm_manager_detach_async(self->vms, self->config->vm, self->config->tag, NULL,
                                       on_detached, task);
}

void sluice_shared_folder_set_vm(SluiceSharedFolder *self, const char *vm)
{
        if (g_strcmp0(self->config->vm, vm) == 0)
                return;
        if (self->state == STATE_ATTACHED && self->vms != NULL)
                /* The old VM loses the device; nothing waits for it. */
                sluice_vm_manager_detach_async(self->vms, self->config->vm, self->config->tag,
                                               NULL, on_failed_detached, NULL);
        if (self->state == STATE_ATTACHED) {
                set_state(self, STATE_RUNNING);
                sluice_share_set_guest_hint(self->iface, "");
        }
        self->reattach_after_restart = FALSE;
        g_free(self->config->vm);
        self->config->vm = g_strdup(vm);
        sluice_share_set_vm(self->iface, vm);
        sluice_shared_folder_vms_changed(self);
        g_signal_emit(self, share_signals[SIGNAL_CHANGED], 0);
        if (self->state == STATE_RUNNING && !self->attaching && vm_is_running(self))
                share_attach_internal(self, NULL);
}

/* ---- stop ---- */

static void on_worker_stopped(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = g_error_new(SLUICE_ERROR, SLUICE_ERROR_FAILED,
                                              _("The share “%s” was stopped"), self->config->tag);

        sluice_worker_stop_finish(SLUICE_WORKER(source), result);
        self->stopping = FALSE;
        stats_stop(self);
        sluice_share_set_socket_path(self->iface, "");
        sluice_share_set_guest_hint(self->iface, "");
        set_state(self, STATE_STOPPED);
        complete_waiters(&self->start_waiters, error, NULL);
        complete_waiters(&self->attach_waiters, error, NULL);
        complete_waiters(&self->stop_waiters, NULL, NULL);
}

static void on_stop_detached(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceSharedFolder) self = user_data;
        g_autoptr(GError) error = NULL;

        if (!g_task_propagate_boolean(G_TASK(result), &error))
                g_message("%s: unplugging before stop failed: %s", self->config->tag, error->message);
        sluice_worker_stop_async(self->worker, on_worker_stopped, g_object_ref(self));
}

static void on_stopped_worker_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;

        sluice_worker_stop_finish(SLUICE_WORKER(source), result);
        g_task_return_boolean(task, TRUE);
}

void sluice_shared_folder_stop_async(SluiceSharedFolder *self, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
        GTask *task = g_task_new(self, NULL, callback, user_data);

        if (self->folder_check != 0) {
                /* nothing runs yet: the pending check's answer is dropped */
                g_autoptr(GError) error = g_error_new(SLUICE_ERROR, SLUICE_ERROR_FAILED,
                                                      _("The share “%s” was stopped"),
                                                      self->config->tag);

                self->folder_check = 0;
                set_state(self, STATE_STOPPED);
                complete_waiters(&self->start_waiters, error, NULL);
                complete_waiters(&self->attach_waiters, error, NULL);
        }

        if (self->worker == NULL || self->state == STATE_STOPPED) {
                /* Nothing of ours runs, but a worker a killed service left may
                 * still serve this share's VM (worker.c, DESIGN): Stop ends it.
                 * (Making the worker object looks for such orphans; it starts
                 * nothing.) */
                ensure_worker(self);
                sluice_worker_stop_async(self->worker, on_stopped_worker_done, task);
                return;
        }
        self->stop_waiters = g_list_append(self->stop_waiters, task);
        if (self->stopping)
                return;
        self->stopping = TRUE;
        share_detach(self, g_task_new(self, NULL, on_stop_detached, g_object_ref(self)));
}

void sluice_shared_folder_stop_finish(SluiceSharedFolder *self, GAsyncResult *result)
{
        (void)g_task_propagate_boolean(G_TASK(result), NULL);
}

/* ---- VM events ---- */

void sluice_shared_folder_vm_started(SluiceSharedFolder *self, const char *vm)
{
        if (is_my_vm(self, vm) && self->state == STATE_RUNNING && !self->stopping &&
            !self->attaching)
                share_attach_internal(self, NULL);
}

void sluice_shared_folder_vm_stopped(SluiceSharedFolder *self, const char *vm)
{
        g_autofree char *message = NULL;

        if (!is_my_vm(self, vm))
                return;
        message = g_strdup_printf(_("“%s” was detached: %s stopped"), self->config->tag, vm);
        share_unplugged(self, message);
}

void sluice_shared_folder_device_removed(SluiceSharedFolder *self, const char *vm, const char *tag)
{
        g_autofree char *message = NULL;

        if (!is_my_vm(self, vm) || g_strcmp0(tag, self->config->tag) != 0)
                return;
        if (self->awaiting_old_device) {
                /* the guest let the crashed worker's device go at last */
                self->awaiting_old_device = FALSE;
                set_error(self, NULL);
                if (self->state == STATE_RUNNING && !self->attaching)
                        plug_in_recovered(self);
                return;
        }
        message = g_strdup_printf(_("“%s” was removed from %s outside Sluice: attach it again to use it"),
                                  self->config->tag, vm);
        share_unplugged(self, message);
}

/* ---- D-Bus methods and writable properties ---- */

static void on_handle_start_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        GError *error = NULL;

        if (!sluice_shared_folder_start_finish(SLUICE_SHARED_FOLDER(source), result, &error))
                g_dbus_method_invocation_take_error(invocation, error);
        else
                sluice_share_complete_start(NULL, g_steal_pointer(&invocation));
}

static gboolean on_handle_start(SluiceShare *iface, GDBusMethodInvocation *invocation,
                                gpointer user_data)
{
        sluice_shared_folder_start_async(user_data, on_handle_start_done, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void on_handle_stop_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        sluice_shared_folder_stop_finish(SLUICE_SHARED_FOLDER(source), result);
        sluice_share_complete_stop(NULL, user_data);
}

static gboolean on_handle_stop(SluiceShare *iface, GDBusMethodInvocation *invocation,
                               gpointer user_data)
{
        sluice_shared_folder_stop_async(user_data, on_handle_stop_done, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void on_handle_attach_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        GError *error = NULL;
        g_autofree char *hint = sluice_shared_folder_attach_finish(SLUICE_SHARED_FOLDER(source),
                                                                   result, &error);

        if (hint == NULL)
                g_dbus_method_invocation_take_error(invocation, error);
        else
                sluice_share_complete_attach(NULL, g_steal_pointer(&invocation), hint);
}

static gboolean on_handle_attach(SluiceShare *iface, GDBusMethodInvocation *invocation,
                                 gpointer user_data)
{
        sluice_shared_folder_attach_async(user_data, on_handle_attach_done, g_object_ref(invocation));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void on_handle_detach_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        GError *error = NULL;

        if (!g_task_propagate_boolean(G_TASK(result), &error))
                g_dbus_method_invocation_take_error(invocation, error);
        else
                sluice_share_complete_detach(NULL, g_steal_pointer(&invocation));
}

static gboolean on_handle_detach(SluiceShare *iface, GDBusMethodInvocation *invocation,
                                 gpointer user_data)
{
        SluiceSharedFolder *self = user_data;

        if (*self->config->vm == '\0') {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_NO_VM,
                        _("The share “%s” is not assigned to a VM: there is nothing to detach"),
                        self->config->tag);
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        share_detach(self, g_task_new(self, NULL, on_handle_detach_done, g_object_ref(invocation)));
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* A ReadOnly write (share-service.h): the property and the saved setting
 * change once the worker has switched; the caller hears of a refusal. */
typedef struct {
        SluiceSharedFolder *self; /* a reference */
        GDBusMethodInvocation *invocation;
        gboolean readonly;
} ReadOnlyWrite;

static void read_only_write_free(ReadOnlyWrite *w)
{
        g_object_unref(w->self);
        g_clear_object(&w->invocation);
        g_free(w);
}

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
        ReadOnlyWrite *w = user_data;
        GError *error = NULL;

        if (sluice_worker_set_readonly_finish(SLUICE_WORKER(source), result, &error)) {
                apply_read_only(w->self, w->readonly);
                g_dbus_method_invocation_return_value(g_steal_pointer(&w->invocation), NULL);
        } else {
                g_warning("%s", error->message);
                g_dbus_method_invocation_take_error(g_steal_pointer(&w->invocation), error);
        }
        read_only_write_free(w);
}

static void on_set_read_only(gboolean readonly, GDBusMethodInvocation *invocation, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        ReadOnlyWrite *w;

        if (self->worker == NULL) {
                apply_read_only(self, readonly);
                g_dbus_method_invocation_return_value(invocation, NULL);
                return;
        }
        w = g_new0(ReadOnlyWrite, 1);
        w->self = g_object_ref(self);
        w->invocation = invocation;
        w->readonly = readonly;
        /* a worker that is not ready takes it at once (at its launch) */
        sluice_worker_set_readonly_async(self->worker, readonly, on_read_only_switched, w);
}

static void on_autostart_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
        SluiceSharedFolder *self = user_data;
        gboolean autostart = sluice_share_get_autostart(self->iface);

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
        self->stats_interval_ms = MAX(stats_interval_ms, 50);

        self->iface = sluice_share_service_new(on_set_read_only, self);
        sluice_share_set_path(self->iface, config->path);
        sluice_share_set_tag(self->iface, config->tag);
        sluice_share_set_vm(self->iface, config->vm);
        sluice_share_set_read_only(self->iface, config->readonly);
        sluice_share_set_autostart(self->iface, config->autostart);
        sluice_share_set_socket_path(self->iface, "");
        sluice_share_set_guest_hint(self->iface, "");
        sluice_share_set_error(self->iface, "");
        sluice_share_set_stats(self->iface, g_variant_new("a{sv}", NULL));
        set_state(self, STATE_STOPPED);
        sluice_shared_folder_vms_changed(self);
        g_signal_connect(self->iface, "handle-start", G_CALLBACK(on_handle_start), self);
        g_signal_connect(self->iface, "handle-stop", G_CALLBACK(on_handle_stop), self);
        g_signal_connect(self->iface, "handle-attach", G_CALLBACK(on_handle_attach), self);
        g_signal_connect(self->iface, "handle-detach", G_CALLBACK(on_handle_detach), self);
        g_signal_connect(self->iface, "notify::autostart", G_CALLBACK(on_autostart_changed), self);

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

        if (self->stats_source != 0) {
                g_source_remove(self->stats_source);
                self->stats_source = 0;
        }
        if (self->iface != NULL) {
                g_signal_handlers_disconnect_by_data(self->iface, self);
                sluice_share_service_clear_handler(SLUICE_SHARE_SERVICE(self->iface));
        }
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
        g_clear_pointer(&self->last_stats, g_variant_unref);
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
        self->state = STATE_STOPPED;
}
