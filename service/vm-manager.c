/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-manager.c — see vm-manager.h.  The VMs of every tracked connection
 * (vm-connection.c), one entry each (vm-domain.c), and the attach/detach API
 * on top.  libvirt-glib tracks the domains and their lifecycle; the raw API
 * fills its gaps (vm-connection.h).  All state lives in the main thread;
 * hot-plug runs in GTask worker threads (hotplug.c) and its result is applied
 * back in the main thread: a hung libvirtd never freezes the D-Bus service. */
#include "config.h"

#include "vm-manager.h"
#include "domain-xml.h"
#include "errors.h"
#include "vm-qemu-pid.h"
#include "hotplug.h"
#include "vm-connection.h"
#include "vm-domain.h"
#include "vm-hotplug-slots.h"
#include "vm-doctor.h"
#include "vm-guest-tools.h"
#include "vm-socket-access.h"

#include <glib/gi18n.h>
#include <unistd.h>

struct _SluiceVmManager {
        GObject parent_instance;
        GDBusObjectManagerServer *server;
        GPtrArray *connections;   /* SluiceVmConnection * */
        GHashTable *vms;          /* uuid → SluiceVmDomain * */
        GHashTable *listed;       /* SluiceVmConnection * that are up and listed their domains */
        gboolean started;
};

enum {
        SIGNAL_VM_STARTED,
        SIGNAL_VM_STOPPED,
        SIGNAL_DEVICE_REMOVED,
        SIGNAL_VMS_CHANGED,
        SIGNAL_GUEST_CHANGED,
        N_SIGNALS
};
static guint signals[N_SIGNALS];

G_DEFINE_TYPE(SluiceVmManager, sluice_vm_manager, G_TYPE_OBJECT)

/* The table's value destructor: unexported, then our reference goes. */
static void vm_drop(gpointer data)
{
        sluice_vm_domain_remove(data);
        sluice_vm_domain_unref(data);
}

/* Removes a VM that was running: it stopped (or went away) as far as the shares are concerned. */
static void vm_remove(SluiceVmManager *self, SluiceVmDomain *vm)
{
        g_autofree char *name = g_strdup(vm->name);
        gboolean was_active = vm->active;

        if (was_active) {
                vm->active = FALSE;
                sluice_vm_domain_forget_devices(vm);
        }
        g_hash_table_remove(self->vms, vm->uuid);
        if (was_active)
                g_signal_emit(self, signals[SIGNAL_VM_STOPPED], 0, name);
        g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
}

static void on_vm_changed(SluiceVmDomain *vm, int transition, gpointer user_data)
{
        SluiceVmManager *self = user_data;
        g_autofree char *name = g_strdup(vm->name);

        /* a start, a stop or a device in or out: the free slots may differ */
        sluice_vm_hotplug_slots_refresh(vm);
        if (transition)
                g_signal_emit(self, signals[transition > 0 ? SIGNAL_VM_STARTED : SIGNAL_VM_STOPPED], 0, name);
        else
                /* a renamed VM: shares that named it wait for it now, or no more */
                g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
}

static void on_vm_guest_changed(SluiceVmDomain *vm, gpointer user_data)
{
        g_autofree char *name = g_strdup(vm->name);

        g_signal_emit(user_data, signals[SIGNAL_GUEST_CHANGED], 0, name);
}

/* ---- connection events ------------------------------------------------------------ */

static void on_domain_added(SluiceVmConnection *connection, GVirDomain *domain, gpointer user_data)
{
        SluiceVmManager *self = user_data;
        const char *uuid = gvir_domain_get_uuid(domain);
        SluiceVmDomain *vm;

        if (!uuid)
                return;
        vm = g_hash_table_lookup(self->vms, uuid);
        if (vm) {
                if (vm->connection != connection) {
                        g_warning("VM %s on %s has the same UUID as one on %s; ignoring it",
                                  gvir_domain_get_name(domain), sluice_vm_connection_get_uri(connection),
                                  sluice_vm_connection_get_uri(vm->connection));
                        return;
                }
                /* reconnected: the same VM, a new libvirt-glib object */
                sluice_vm_domain_set_domain(vm, domain);
                sluice_vm_domain_refresh(vm);
                return;
        }
        vm = sluice_vm_domain_new(connection, domain, self->server, on_vm_changed, on_vm_guest_changed, self);
        sluice_vm_hotplug_slots_export(vm);
        sluice_vm_guest_tools_export(vm);
        sluice_vm_doctor_export(vm);
        g_hash_table_insert(self->vms, vm->uuid, vm);
        g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
}

static void on_domain_removed(SluiceVmConnection *connection, GVirDomain *domain, gpointer user_data)
{
        SluiceVmManager *self = user_data;
        const char *uuid = gvir_domain_get_uuid(domain);
        SluiceVmDomain *vm = uuid ? g_hash_table_lookup(self->vms, uuid) : NULL;

        /* libvirt-glib can report a removal twice; a transient domain that
         * stops is removed without a "stopped" first */
        if (vm && vm->connection == connection)
                vm_remove(self, vm);
}

/* VMs that went away while the connection was down */
static void on_domains_listed(SluiceVmConnection *connection, gpointer user_data)
{
        SluiceVmManager *self = user_data;
        g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func((GDestroyNotify)sluice_vm_domain_unref);
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init(&iter, self->vms);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                SluiceVmDomain *vm = value;
                if (vm->connection == connection && !vm->domain)
                        g_ptr_array_add(gone, sluice_vm_domain_ref(vm));
        }
        /* not while iterating: a vm-stopped handler may change the table */
        for (guint i = 0; i < gone->len; i++)
                vm_remove(self, gone->pdata[i]);
        g_hash_table_add(self->listed, connection);
        g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
}

static void on_connection_lost(SluiceVmConnection *connection, gpointer user_data)
{
        SluiceVmManager *self = user_data;
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init(&iter, self->vms);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                SluiceVmDomain *vm = value;
                if (vm->connection == connection)
                        sluice_vm_domain_set_domain(vm, NULL);
        }
        if (g_hash_table_remove(self->listed, connection))
                g_signal_emit(self, signals[SIGNAL_VMS_CHANGED], 0);
}

static SluiceVmDomain *vm_of(SluiceVmManager *self, SluiceVmConnection *connection, const char *uuid)
{
        SluiceVmDomain *vm = g_hash_table_lookup(self->vms, uuid);

        return vm && vm->connection == connection ? vm : NULL;
}

static void on_device_added(SluiceVmConnection *connection, const char *uuid, const char *alias,
                            gpointer user_data)
{
        SluiceVmDomain *vm = vm_of(user_data, connection, uuid);

        /* learn its tag and alias (plugged in by Sluice or by someone else) */
        if (vm)
                sluice_vm_domain_refresh(vm);
}

static void on_device_removed(SluiceVmConnection *connection, const char *uuid, const char *alias,
                              gpointer user_data)
{
        SluiceVmManager *self = user_data;
        SluiceVmDomain *vm = vm_of(self, connection, uuid);
        g_autofree char *tag = NULL;
        g_autofree char *name = NULL;

        if (!vm || !alias)
                return;
        tag = g_strdup(g_hash_table_lookup(vm->alias_to_tag, alias));
        name = g_strdup(vm->name);
        g_hash_table_remove(vm->alias_to_tag, alias);
        if (!tag)
                return;
        sluice_vm_domain_set_tag(vm, tag, FALSE);
        /* whether Sluice unplugged it is the share's to know (its attachment
         * state), and so whether the access is given back here */
        g_signal_emit(self, signals[SIGNAL_DEVICE_REMOVED], 0, name, tag);
}

static void on_agent_changed(SluiceVmConnection *connection, const char *uuid, gboolean connected,
                             gpointer user_data)
{
        SluiceVmDomain *vm = vm_of(user_data, connection, uuid);

        if (vm)
                sluice_vm_domain_agent_event(vm, connected);
}

static const SluiceVmConnectionEvents connection_events = {
        .domain_added = on_domain_added,
        .domain_removed = on_domain_removed,
        .domains_listed = on_domains_listed,
        .lost = on_connection_lost,
        .device_added = on_device_added,
        .device_removed = on_device_removed,
        .agent_changed = on_agent_changed,
};

/* ---- the object --------------------------------------------------------------------- */

static void sluice_vm_manager_dispose(GObject *object)
{
        SluiceVmManager *self = SLUICE_VM_MANAGER(object);

        self->started = FALSE;
        /* first: nothing is reported afterwards */
        g_clear_pointer(&self->listed, g_hash_table_unref);
        g_clear_pointer(&self->connections, g_ptr_array_unref);
        /* nothing of ours stays granted to QEMU's user after the service */
        if (self->vms) {
                sluice_socket_access_revoke_all();
                g_hash_table_remove_all(self->vms);
        }
        g_clear_pointer(&self->vms, g_hash_table_unref);
        g_clear_object(&self->server);
        G_OBJECT_CLASS(sluice_vm_manager_parent_class)->dispose(object);
}

static void sluice_vm_manager_class_init(SluiceVmManagerClass *klass)
{
        G_OBJECT_CLASS(klass)->dispose = sluice_vm_manager_dispose;

        signals[SIGNAL_VM_STARTED] = g_signal_new("vm-started", G_TYPE_FROM_CLASS(klass),
                                                  G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                  G_TYPE_NONE, 1, G_TYPE_STRING);
        signals[SIGNAL_VM_STOPPED] = g_signal_new("vm-stopped", G_TYPE_FROM_CLASS(klass),
                                                  G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                  G_TYPE_NONE, 1, G_TYPE_STRING);
        signals[SIGNAL_DEVICE_REMOVED] = g_signal_new("device-removed", G_TYPE_FROM_CLASS(klass),
                                                      G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                      G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
        signals[SIGNAL_VMS_CHANGED] = g_signal_new("vms-changed", G_TYPE_FROM_CLASS(klass),
                                                   G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                   G_TYPE_NONE, 0);
        signals[SIGNAL_GUEST_CHANGED] = g_signal_new("guest-changed", G_TYPE_FROM_CLASS(klass),
                                                     G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                     G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void sluice_vm_manager_init(SluiceVmManager *self)
{
        self->connections = g_ptr_array_new_with_free_func((GDestroyNotify)sluice_vm_connection_free);
        self->vms = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, vm_drop);
        self->listed = g_hash_table_new(NULL, NULL);
}

SluiceVmManager *sluice_vm_manager_new(GDBusObjectManagerServer *server, const char *const *uris)
{
        SluiceVmManager *self = g_object_new(SLUICE_TYPE_VM_MANAGER, NULL);
        /* root's qemu:///session is the system daemon: track it once */
        static const char *const user_defaults[] = { "qemu:///session", "qemu:///system", NULL };
        static const char *const root_defaults[] = { "qemu:///system", NULL };

        self->server = server ? g_object_ref(server) : NULL;
        if (!uris)
                uris = geteuid() == 0 ? root_defaults : user_defaults;
        for (const char *const *u = uris; *u; u++)
                g_ptr_array_add(self->connections, sluice_vm_connection_new(*u, &connection_events, self));
        return self;
}

void sluice_vm_manager_start(SluiceVmManager *self)
{
        static gsize init_done;

        g_return_if_fail(SLUICE_IS_VM_MANAGER(self));
        if (g_once_init_enter(&init_done)) {
                g_autoptr(GError) error = NULL;
                /* registers libvirt's event loop on GLib's: must come first */
                if (!gvir_init_object_check(NULL, NULL, &error))
                        g_warning("Cannot initialise libvirt-glib: %s", error->message);
                g_once_init_leave(&init_done, 1);
        }
        if (self->started)
                return;
        self->started = TRUE;
        for (guint i = 0; i < self->connections->len; i++)
                sluice_vm_connection_start(self->connections->pdata[i]);
}

/* ---- lookups and hot-plug -------------------------------------------------------------- */

void sluice_vm_info_free(SluiceVmInfo *info)
{
        if (!info)
                return;
        g_free(info->name);
        g_free(info->uuid);
        g_free(info->uri);
        g_free(info->os);
        g_free(info);
}

static SluiceVmDomain *find_vm(SluiceVmManager *self, const char *vm_id, GError **error)
{
        GHashTableIter iter;
        gpointer value;
        SluiceVmDomain *found = NULL;
        guint matches = 0;

        if (!vm_id || !*vm_id) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NO_VM,
                            _("The share is not assigned to a VM yet."));
                return NULL;
        }
        found = g_hash_table_lookup(self->vms, vm_id);
        if (found && found->ready)
                return found;
        found = NULL;
        g_hash_table_iter_init(&iter, self->vms);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                SluiceVmDomain *vm = value;
                /* a VM is known once its state is */
                if (!vm->ready)
                        continue;
                if (g_str_equal(vm->name, vm_id) || g_ascii_strcasecmp(vm->uuid, vm_id) == 0) {
                        /* the session VM wins over a system VM of the same name */
                        if (!found || g_str_equal(sluice_vm_connection_get_uri(vm->connection), "qemu:///session"))
                                found = vm;
                        matches++;
                }
        }
        if (!found)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                            _("There is no VM “%s” (looked in %u libvirt connections)."),
                            vm_id, self->connections->len);
        else if (matches > 1)
                g_debug("several VMs named %s; using the one on %s", vm_id, sluice_vm_connection_get_uri(found->connection));
        return found;
}

SluiceVmDomain *sluice_vm_manager_find_domain(SluiceVmManager *self, const char *vm_id, GError **error)
{
        g_return_val_if_fail(SLUICE_IS_VM_MANAGER(self), NULL);
        return find_vm(self, vm_id, error);
}

SluiceVmInfo *sluice_vm_manager_lookup(SluiceVmManager *self, const char *vm_id, GError **error)
{
        SluiceVmDomain *vm;
        SluiceVmInfo *info;

        g_return_val_if_fail(SLUICE_IS_VM_MANAGER(self), NULL);
        vm = find_vm(self, vm_id, error);
        if (!vm)
                return NULL;
        info = g_new0(SluiceVmInfo, 1);
        info->name = g_strdup(vm->name);
        info->uuid = g_strdup(vm->uuid);
        info->uri = g_strdup(sluice_vm_connection_get_uri(vm->connection));
        info->os = g_strdup(vm->os);
        info->running = vm->active;
        info->shared_memory = vm->shared_memory;
        info->qemu_uid = vm->qemu_uid;
        return info;
}

gint64 sluice_vm_manager_qemu_pid(SluiceVmManager *self, const char *vm_id, GError **error)
{
        g_autofree char *path = NULL;
        SluiceVmDomain *vm;

        g_return_val_if_fail(SLUICE_IS_VM_MANAGER(self), -1);
        vm = find_vm(self, vm_id, error);
        if (!vm)
                return -1;
        if (!vm->active) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_VM_NOT_RUNNING,
                            _("The VM “%s” is not running."), vm->name);
                return -1;
        }
        path = sluice_vm_qemu_pid_path(sluice_vm_connection_get_uri(vm->connection), vm->name, error);
        return path ? sluice_vm_qemu_pid_read(path, vm->qemu_uid, error) : -1;
}

SluiceVmPresence sluice_vm_manager_presence(SluiceVmManager *self, const char *vm_id)
{
        GHashTableIter iter;
        gpointer value;

        g_return_val_if_fail(SLUICE_IS_VM_MANAGER(self), SLUICE_VM_PRESENCE_UNDECIDED);
        /* every domain listed is in the table, also before its state is read */
        g_hash_table_iter_init(&iter, self->vms);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                SluiceVmDomain *vm = value;

                if (g_strcmp0(vm->name, vm_id) == 0 || g_ascii_strcasecmp(vm->uuid, vm_id) == 0)
                        return SLUICE_VM_PRESENCE_KNOWN;
        }
        return g_hash_table_size(self->listed) > 0 ? SLUICE_VM_PRESENCE_UNKNOWN
                                                   : SLUICE_VM_PRESENCE_UNDECIDED;
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
        return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

char **sluice_vm_manager_dup_names(SluiceVmManager *self)
{
        /* a name can be on two connections: once is enough */
        g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init(&iter, self->vms);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                SluiceVmDomain *vm = value;

                if (vm->name != NULL && g_hash_table_add(seen, vm->name))
                        g_ptr_array_add(names, g_strdup(vm->name));
        }
        g_ptr_array_sort(names, compare_names);
        g_ptr_array_add(names, NULL);
        return (char **)g_ptr_array_free(g_steal_pointer(&names), FALSE);
}

typedef struct {
        char *vm;
        GPtrArray *raw;           /* virConnectPtr of the connections that are up */
} ConfirmData;

static void confirm_data_free(gpointer data)
{
        ConfirmData *d = data;

        for (guint i = 0; i < d->raw->len; i++)
                virConnectClose(d->raw->pdata[i]);
        g_ptr_array_unref(d->raw);
        g_free(d->vm);
        g_free(d);
}

static void confirm_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        ConfirmData *d = task_data;
        SluiceVmPresence presence = SLUICE_VM_PRESENCE_UNKNOWN;

        for (guint i = 0; i < d->raw->len && presence == SLUICE_VM_PRESENCE_UNKNOWN; i++) {
                /* a libvirtd that stalls is cut off by keepalive (vm-connection.h) */
                virDomainPtr domain = virDomainLookupByName(d->raw->pdata[i], d->vm);

                if (domain == NULL && g_uuid_string_is_valid(d->vm))
                        domain = virDomainLookupByUUIDString(d->raw->pdata[i], d->vm);
                if (domain != NULL) {
                        presence = SLUICE_VM_PRESENCE_KNOWN;
                        virDomainFree(domain);
                }
        }
        /* here, not in the main thread: the last reference's close waits on libvirtd */
        for (guint i = 0; i < d->raw->len; i++)
                virConnectClose(d->raw->pdata[i]);
        g_ptr_array_set_size(d->raw, 0);
        g_task_return_int(task, presence);
}

void sluice_vm_manager_confirm_presence_async(SluiceVmManager *self, const char *vm,
                                              GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);
        SluiceVmPresence presence = sluice_vm_manager_presence(self, vm);
        ConfirmData *d;

        if (presence != SLUICE_VM_PRESENCE_UNKNOWN) {
                g_task_return_int(task, presence);
                return;
        }
        d = g_new0(ConfirmData, 1);
        d->vm = g_strdup(vm);
        d->raw = g_ptr_array_new();
        for (guint i = 0; i < self->connections->len; i++) {
                /* also one that is up but still listing: its VM is known to libvirtd */
                virConnectPtr raw = sluice_vm_connection_ref_raw(self->connections->pdata[i]);

                if (raw != NULL)
                        g_ptr_array_add(d->raw, raw);
        }
        g_task_set_task_data(task, d, confirm_data_free);
        g_task_run_in_thread(task, confirm_thread);
}

SluiceVmPresence sluice_vm_manager_confirm_presence_finish(SluiceVmManager *self, GAsyncResult *result)
{
        return (SluiceVmPresence)g_task_propagate_int(G_TASK(result), NULL);
}

char **sluice_vm_manager_dup_unlisted(SluiceVmManager *self)
{
        g_autoptr(GStrvBuilder) uris = g_strv_builder_new();

        for (guint i = 0; i < self->connections->len; i++)
                if (!g_hash_table_contains(self->listed, self->connections->pdata[i]))
                        g_strv_builder_add(uris, sluice_vm_connection_get_uri(self->connections->pdata[i]));
        return g_strv_builder_end(uris);
}

typedef struct {
        char *uuid;
        char *socket_path;
        char *tag;
        char *hint;
        char *confinement_problem; /* the host's confinement refused QEMU: why */
        virDomainPtr domain;
} HotplugData;

static void hotplug_data_free(gpointer data)
{
        HotplugData *d = data;

        g_free(d->uuid);
        g_free(d->socket_path);
        g_free(d->tag);
        g_free(d->hint);
        g_free(d->confinement_problem);
        if (d->domain)
                virDomainFree(d->domain);
        g_free(d);
}

static void attach_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        HotplugData *d = task_data;
        GError *error = NULL;

        if (sluice_hotplug_attach(d->domain, d->socket_path, d->tag, &d->confinement_problem, &error))
                g_task_return_pointer(task, g_strdup(d->hint), g_free);
        else
                g_task_return_error(task, error);
}

static void detach_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        HotplugData *d = task_data;
        GError *error = NULL;

        if (sluice_hotplug_detach(d->domain, d->tag, &error))
                g_task_return_boolean(task, TRUE);
        else
                g_task_return_error(task, error);
}

/* Runs in the main thread after a hot-plug: refresh the VM, then answer. */
static void hotplug_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SluiceVmManager *self = SLUICE_VM_MANAGER(source);
        g_autoptr(GTask) outer = user_data;
        GTask *inner = G_TASK(result);
        HotplugData *d = g_task_get_task_data(inner);
        SluiceVmDomain *vm = g_hash_table_lookup(self->vms, d->uuid);
        GError *error = NULL;

        if (vm) {
                gboolean attach = g_task_get_source_tag(outer) == sluice_vm_manager_attach_async;

                /* is_attached answers from this at once; the refresh confirms it */
                if (!g_task_had_error(inner))
                        sluice_vm_domain_set_tag(vm, d->tag, attach);
                if (attach && (d->confinement_problem || !g_task_had_error(inner)))
                        sluice_vm_domain_set_confinement_refused(vm, d->confinement_problem);
                sluice_vm_domain_refresh(vm);
        }
        if (g_task_get_source_tag(outer) == sluice_vm_manager_attach_async) {
                char *hint = g_task_propagate_pointer(inner, &error);
                if (hint)
                        g_task_return_pointer(outer, hint, g_free);
                else
                        g_task_return_error(outer, error);
        } else {
                if (g_task_propagate_boolean(inner, &error))
                        g_task_return_boolean(outer, TRUE);
                else
                        g_task_return_error(outer, error);
        }
}

static gboolean start_hotplug(SluiceVmManager *self, GTask *outer, const char *vm_id,
                              const char *socket_path, const char *tag, gboolean attach)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(GTask) inner = NULL;
        SluiceVmDomain *vm = find_vm(self, vm_id, &error);
        HotplugData *d;

        /* nothing can be plugged into a VM that is gone or stopped */
        if (!attach && (!vm || !vm->active)) {
                g_task_return_boolean(outer, TRUE);
                return FALSE;
        }
        if (!vm) {
                g_task_return_error(outer, g_steal_pointer(&error));
                return FALSE;
        }
        if (!sluice_domain_xml_check_tag(tag, &error) ||
            (attach && !sluice_domain_xml_check_socket(socket_path, &error))) {
                g_task_return_error(outer, g_steal_pointer(&error));
                return FALSE;
        }
        if (attach && !vm->active) {
                g_task_return_new_error(outer, SLUICE_ERROR, SLUICE_ERROR_VM_NOT_RUNNING,
                                        _("The VM “%s” is not running; the share is attached when it starts."),
                                        vm->name);
                return FALSE;
        }
        if (!vm->domain) {
                g_task_return_new_error(outer, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                                        _("The connection to libvirt (%s) is down; Sluice is reconnecting."),
                                        sluice_vm_connection_get_uri(vm->connection));
                return FALSE;
        }
        d = g_new0(HotplugData, 1);
        d->uuid = g_strdup(vm->uuid);
        d->socket_path = g_strdup(socket_path);
        d->tag = g_strdup(tag);
        d->hint = sluice_vm_domain_guest_hint(vm, tag);
        d->domain = sluice_vm_domain_get_raw(vm);

        inner = g_task_new(self, NULL, hotplug_done, g_object_ref(outer));
        g_task_set_task_data(inner, d, hotplug_data_free);
        g_task_run_in_thread(inner, attach ? attach_thread : detach_thread);
        return TRUE;
}

void sluice_vm_manager_attach_async(SluiceVmManager *self, const char *vm, const char *socket_path,
                                    const char *tag, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);

        g_task_set_source_tag(task, sluice_vm_manager_attach_async);
        (void)start_hotplug(self, task, vm, socket_path, tag, TRUE);
}

char *sluice_vm_manager_attach_finish(SluiceVmManager *self, GAsyncResult *result, GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, self), NULL);
        return g_task_propagate_pointer(G_TASK(result), error);
}

void sluice_vm_manager_detach_async(SluiceVmManager *self, const char *vm, const char *tag,
                                    GCancellable *cancellable, GAsyncReadyCallback callback,
                                    gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);

        g_task_set_source_tag(task, sluice_vm_manager_detach_async);
        (void)start_hotplug(self, task, vm, NULL, tag, FALSE);
}

gboolean sluice_vm_manager_detach_finish(SluiceVmManager *self, GAsyncResult *result, GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_vm_manager_revoke_access(SluiceVmManager *self, const char *vm_id, const char *tag)
{
        SluiceVmDomain *vm = find_vm(self, vm_id, NULL);

        if (vm != NULL && tag != NULL)
                sluice_socket_access_revoke(vm->uuid, tag);
}

/* From the state kept current by refreshes, device events and Sluice's own
 * hot-plug results: no call to libvirtd. */
gboolean sluice_vm_manager_is_attached(SluiceVmManager *self, const char *vm_id, const char *tag)
{
        SluiceVmDomain *vm = find_vm(self, vm_id, NULL);

        return vm && vm->active && tag && g_hash_table_contains(vm->tags, tag);
}
