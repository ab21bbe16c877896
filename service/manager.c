/* SPDX-License-Identifier: GPL-2.0-or-later */
/* manager.c — the Manager interface and the list of shares. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "config-store.h"
#include "errors.h"
#include "manager.h"
#include "service-fd-store.h"
#include "share-end-options.h"
#include "share-path.h"
#include "share-service.h"
#include "share-tag.h"
#include "share.h"
#include "sluice-dbus.h"
#include "vm-guest.h"
#include "vm-manager.h"
#include "worker-binary.h"
#include "worker-upgrade.h"

struct _SluiceServiceManager {
        GObject parent_instance;

        char *config_file;
        char *socket_dir;
        guint stats_interval_ms;
        GDBusConnection *connection;
        GDBusObjectManagerServer *server;
        SluiceManager *iface;
        SluiceVmManager *vms;
        GHashTable *shares;     /* object path -> SluiceSharedFolder */
        guint next_id;
        SluiceWorkerBinaryWatch *binary_watch;  /* NULL when it cannot be watched */
        SluiceWorkerUpgrade *upgrade;
};

G_DEFINE_TYPE(SluiceServiceManager, sluice_service_manager, G_TYPE_OBJECT)

/* ---- persistence ---- */

static gint compare_shares(gconstpointer a, gconstpointer b)
{
        const SluiceShareConfig *x = sluice_shared_folder_get_config(*(SluiceSharedFolder **)a);
        const SluiceShareConfig *y = sluice_shared_folder_get_config(*(SluiceSharedFolder **)b);

        return x->id < y->id ? -1 : x->id > y->id;
}

static GPtrArray *sorted_shares(SluiceServiceManager *self)
{
        GPtrArray *list = g_ptr_array_new();
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init(&iter, self->shares);
        while (g_hash_table_iter_next(&iter, NULL, &value))
                g_ptr_array_add(list, value);

        g_ptr_array_sort(list, compare_shares);
        return list;
}

static gboolean save_config(SluiceServiceManager *self, GError **error)
{
        g_autoptr(GPtrArray) shares = sorted_shares(self);
        g_autoptr(GPtrArray) configs = g_ptr_array_new();

        for (guint i = 0; i < shares->len; i++)
                g_ptr_array_add(configs, (gpointer)sluice_shared_folder_get_config(shares->pdata[i]));
        return sluice_config_save(self->config_file, configs, error);
}

static void on_share_changed(SluiceSharedFolder *share, gpointer user_data)
{
        g_autoptr(GError) error = NULL;

        if (!save_config(user_data, &error))
                g_warning("%s", error->message);
}

/* ---- lookups ---- */

static SluiceSharedFolder *find_by_tag(SluiceServiceManager *self, const char *tag)
{
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init(&iter, self->shares);
        while (g_hash_table_iter_next(&iter, NULL, &value))
                if (g_strcmp0(sluice_shared_folder_get_config(value)->tag, tag) == 0)
                        return value;
        return NULL;
}

/* Another share (not EXCEPT) of the same folder with the same VM. */
static SluiceSharedFolder *find_same(SluiceServiceManager *self, const char *path, const char *vm,
                                     SluiceSharedFolder *except)
{
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init(&iter, self->shares);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                const SluiceShareConfig *config = sluice_shared_folder_get_config(value);

                if (value != except && g_strcmp0(config->path, path) == 0 &&
                    g_strcmp0(config->vm, vm) == 0)
                        return value;
        }
        return NULL;
}

static gboolean check_not_shared(SluiceServiceManager *self, const char *path, const char *vm,
                                 SluiceSharedFolder *except, GError **error)
{
        SluiceSharedFolder *same = find_same(self, path, vm, except);

        if (same == NULL)
                return TRUE;
        if (*vm == '\0')
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_ALREADY_SHARED,
                            _("The folder “%s” is already shared as “%s” (not assigned to a VM yet): use that share"),
                            path, sluice_shared_folder_get_config(same)->tag);
        else
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_ALREADY_SHARED,
                            _("The folder “%s” is already shared with %s as “%s”: use that share"),
                            path, vm, sluice_shared_folder_get_config(same)->tag);
        return FALSE;
}

/* ---- AddShare checks ---- */

static gboolean tag_taken(const char *tag, gpointer self)
{
        return find_by_tag(self, tag) != NULL;
}

/* The folder's name in the tag's set, made unique with -2, -3 … */
static char *derive_tag(SluiceServiceManager *self, const char *path)
{
        g_autofree char *base = g_path_get_basename(path);
        const char *names[] = { base, NULL };

        return sluice_share_tag_derive(names, tag_taken, self);
}

/* The refusal of a VM no connected libvirt knows, naming those it knows. */
static void set_unknown_vm_error(SluiceServiceManager *self, const char *vm, GError **error)
{
        g_auto(GStrv) names = sluice_vm_manager_dup_names(self->vms);
        g_auto(GStrv) unlisted = sluice_vm_manager_dup_unlisted(self->vms);
        g_autofree char *message = NULL;

        if (names[0] != NULL) {
                g_autofree char *list = g_strjoinv(", ", names);

                message = g_strdup_printf(_("libvirt knows no VM “%s”: the VMs are %s (see “sluicectl vms”); give one of them, or no VM to choose one later"),
                                          vm, list);
        } else {
                message = g_strdup_printf(_("libvirt knows no VM “%s”, and no VM at all: create the VM first (for example in virt-manager), or give no VM to choose one later"),
                                          vm);
        }
        if (unlisted[0] != NULL) {
                g_autofree char *uris = g_strjoinv(", ", unlisted);
                g_autofree char *whole = g_strdup_printf(_("%s. Not reachable now: %s"), message, uris);

                g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_UNKNOWN_VM, whole);
                return;
        }
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_UNKNOWN_VM, message);
}

/* A method call that names a VM the VM manager does not know while libvirt
 * answers: libvirtd is asked before it is refused (a VM defined a moment
 * ago), then the call runs again with vm_confirmed. */
typedef void (*ResumeCall)(SluiceServiceManager *self, GDBusMethodInvocation *invocation,
                           gboolean vm_confirmed);

typedef struct {
        SluiceServiceManager *self;        /* a reference */
        GDBusMethodInvocation *invocation; /* the call's own reference, completed once */
        char *vm;
        ResumeCall resume;
} VmConfirm;

static void on_vm_confirmed(GObject *source, GAsyncResult *result, gpointer user_data)
{
        VmConfirm *c = user_data;
        GError *error = NULL;

        if (sluice_vm_manager_confirm_presence_finish(SLUICE_VM_MANAGER(source), result) ==
            SLUICE_VM_PRESENCE_UNKNOWN) {
                set_unknown_vm_error(c->self, c->vm, &error);
                g_dbus_method_invocation_take_error(c->invocation, error);
        } else {
                c->resume(c->self, c->invocation, TRUE);
        }
        g_object_unref(c->self);
        g_free(c->vm);
        g_free(c);
}

/* TRUE: VM needs no confirmation (empty, known, or libvirt does not answer);
 * FALSE: the call (and its reference) waits for libvirtd and is resumed or
 * refused later. */
static gboolean vm_ready_or_confirm(SluiceServiceManager *self, GDBusMethodInvocation *invocation,
                                    const char *vm, ResumeCall resume)
{
        VmConfirm *c;

        if (*vm == '\0' || sluice_vm_manager_presence(self->vms, vm) != SLUICE_VM_PRESENCE_UNKNOWN)
                return TRUE;
        c = g_new0(VmConfirm, 1);
        c->self = g_object_ref(self);
        c->invocation = invocation;
        c->vm = g_strdup(vm);
        c->resume = resume;
        sluice_vm_manager_confirm_presence_async(self->vms, vm, on_vm_confirmed, c);
        return FALSE;
}

typedef struct {
        char *tag;
        gboolean readonly;
        gboolean autostart;
        gboolean attach;
        char *cache;
        guint queues;
        gboolean auto_mount;
        char *mount_point;
        gboolean mount_at_boot;
        char *names;
        char *case_;
} AddOptions;

static void add_options_clear(AddOptions *o)
{
        g_free(o->tag);
        g_free(o->cache);
        g_free(o->mount_point);
        g_free(o->names);
        g_free(o->case_);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(AddOptions, add_options_clear)

static gboolean parse_add_options(GVariant *options, AddOptions *out, GError **error)
{
        static const struct {
                const char *key;
                const char *type;
        } known[] = {
                { "tag", "s" }, { "read-only", "b" }, { "autostart", "b" },
                { "attach", "b" }, { "cache", "s" }, { "queues", "u" },
                { "auto-mount", "b" }, { "mount-point", "s" }, { "mount-at-boot", "b" },
                { "names", "s" }, { "case", "s" },
        };
        GVariantIter iter;
        const char *key;
        GVariant *value;

        out->autostart = TRUE;
        out->queues = 1;
        out->cache = g_strdup("auto");
        out->auto_mount = TRUE;
        out->mount_point = g_strdup("");
        out->names = g_strdup("");
        out->case_ = g_strdup("");
        g_variant_iter_init(&iter, options);
        while (g_variant_iter_next(&iter, "{&sv}", &key, &value)) {
                G_GNUC_UNUSED g_autoptr(GVariant) owned = value;  /* frees value */
                gsize i;

                for (i = 0; i < G_N_ELEMENTS(known); i++)
                        if (strcmp(known[i].key, key) == 0)
                                break;
                if (i == G_N_ELEMENTS(known)) {
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("Unknown option “%s”: the options are tag, read-only, autostart, attach, cache, queues, auto-mount, mount-point, mount-at-boot, names and case"),
                                    key);
                        return FALSE;
                }
                if (!g_variant_is_of_type(owned, G_VARIANT_TYPE(known[i].type))) {
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("The option “%s” must be of type “%s”, not “%s”"),
                                    key, known[i].type, g_variant_get_type_string(owned));
                        return FALSE;
                }
                if (strcmp(key, "tag") == 0) {
                        g_free(out->tag);
                        out->tag = g_variant_dup_string(owned, NULL);
                } else if (strcmp(key, "read-only") == 0) {
                        out->readonly = g_variant_get_boolean(owned);
                } else if (strcmp(key, "autostart") == 0) {
                        out->autostart = g_variant_get_boolean(owned);
                } else if (strcmp(key, "attach") == 0) {
                        out->attach = g_variant_get_boolean(owned);
                } else if (strcmp(key, "cache") == 0) {
                        g_free(out->cache);
                        out->cache = g_variant_dup_string(owned, NULL);
                } else if (strcmp(key, "auto-mount") == 0) {
                        out->auto_mount = g_variant_get_boolean(owned);
                } else if (strcmp(key, "mount-point") == 0) {
                        g_free(out->mount_point);
                        out->mount_point = g_variant_dup_string(owned, NULL);
                } else if (strcmp(key, "mount-at-boot") == 0) {
                        out->mount_at_boot = g_variant_get_boolean(owned);
                } else if (strcmp(key, "names") == 0) {
                        g_free(out->names);
                        out->names = g_variant_dup_string(owned, NULL);
                } else if (strcmp(key, "case") == 0) {
                        g_free(out->case_);
                        out->case_ = g_variant_dup_string(owned, NULL);
                } else {
                        out->queues = g_variant_get_uint32(owned);
                }
        }
        return sluice_config_check_cache(out->cache, error) &&
               sluice_config_check_queues(out->queues, error) &&
               sluice_config_check_mount_point(out->mount_point, error) &&
               sluice_config_check_names(out->names, error) && sluice_config_check_case(out->case_, error);
}

/* ---- shares on the bus ---- */

static gboolean on_handle_set_vm(SluiceShare *iface, GDBusMethodInvocation *invocation,
                                 const char *vm, gpointer user_data);

static SluiceSharedFolder *add_share(SluiceServiceManager *self, const SluiceShareConfig *config)
{
        SluiceSharedFolder *share = sluice_share_service_new_folder(config, self->vms, self->socket_dir,
                                                                    self->stats_interval_ms);

        g_hash_table_insert(self->shares, g_strdup(sluice_shared_folder_get_object_path(share)),
                            share);
        g_signal_connect(share, "changed", G_CALLBACK(on_share_changed), self);
        g_signal_connect(sluice_shared_folder_get_iface(share), "handle-set-vm",
                         G_CALLBACK(on_handle_set_vm), self);
        g_dbus_object_manager_server_export(self->server,
                                            G_DBUS_OBJECT_SKELETON(sluice_shared_folder_get_object(share)));
        self->next_id = MAX(self->next_id, config->id + 1);
        return share;
}

static void forget_share(SluiceServiceManager *self, SluiceSharedFolder *share)
{
        g_signal_handlers_disconnect_by_data(share, self);
        g_signal_handlers_disconnect_by_data(sluice_shared_folder_get_iface(share), self);
        (void)g_dbus_object_manager_server_unexport(self->server,
                                                    sluice_shared_folder_get_object_path(share));
        g_hash_table_remove(self->shares, sluice_shared_folder_get_object_path(share));
}

/* SetVm; invocation is completed here (or by the VM's confirmation). */
static void set_vm_from_call(SluiceServiceManager *self, GDBusMethodInvocation *invocation,
                             gboolean vm_confirmed)
{
        SluiceSharedFolder *share = g_hash_table_lookup(self->shares,
                g_dbus_method_invocation_get_object_path(invocation));
        const char *vm = NULL;
        GError *error = NULL;

        g_variant_get(g_dbus_method_invocation_get_parameters(invocation), "(&s)", &vm);
        if (share == NULL) {
                /* removed while libvirtd was asked */
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                        _("There is no share %s: see the shares with “sluicectl list”"),
                        g_dbus_method_invocation_get_object_path(invocation));
                return;
        }
        if (!sluice_config_check_vm(vm, &error) ||
            !check_not_shared(self, sluice_shared_folder_get_config(share)->path, vm, share,
                              &error)) {
                g_dbus_method_invocation_take_error(invocation, error);
                return;
        }
        if (!vm_confirmed && !vm_ready_or_confirm(self, invocation, vm, set_vm_from_call))
                return;
        sluice_shared_folder_set_vm(share, vm);
        sluice_share_complete_set_vm(NULL, invocation);
}

static gboolean on_handle_set_vm(SluiceShare *iface, GDBusMethodInvocation *invocation,
                                 const char *vm, gpointer user_data)
{
        SluiceServiceManager *self = user_data;

        if (g_hash_table_lookup(self->shares,
                g_dbus_interface_skeleton_get_object_path(G_DBUS_INTERFACE_SKELETON(iface))) == NULL)
                return G_DBUS_METHOD_INVOCATION_UNHANDLED;
        set_vm_from_call(self, invocation, FALSE);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void on_add_started(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GDBusMethodInvocation) invocation = user_data;
        SluiceSharedFolder *share = SLUICE_SHARED_FOLDER(source);
        g_autoptr(GError) error = NULL;

        /* The share exists either way; a start failure shows in its State and Error. */
        if (!sluice_shared_folder_start_finish(share, result, &error))
                g_message("%s", error->message);
        sluice_manager_complete_add_share(NULL, g_steal_pointer(&invocation),
                                          sluice_shared_folder_get_object_path(share));
}

/* AddShare; invocation is completed here (or by the VM's confirmation). */
static void add_share_from_call(SluiceServiceManager *self, GDBusMethodInvocation *invocation,
                                gboolean vm_confirmed)
{
        g_autoptr(GVariant) options = NULL;
        const char *path = NULL, *vm = NULL;
        g_auto(AddOptions) opts = { 0 };
        g_autoptr(SluiceShareConfig) config = NULL;
        g_autofree char *resolved = NULL;
        SluiceFolderId folder = { 0 };
        SluiceSharedFolder *share;
        GError *error = NULL;

        g_variant_get(g_dbus_method_invocation_get_parameters(invocation), "(&s&s@a{sv})",
                      &path, &vm, &options);
        /* The folder's real path: a link changed later does not move the share. */
        if (!sluice_share_path_resolve(path, &resolved, &folder, &error) ||
            !sluice_config_check_vm(vm, &error) ||
            !parse_add_options(options, &opts, &error) ||
            (opts.tag != NULL && !sluice_share_tag_check(opts.tag, &error)) ||
            !check_not_shared(self, resolved, vm, NULL, &error)) {
                g_dbus_method_invocation_take_error(invocation, error);
                return;
        }
        if (opts.tag != NULL && find_by_tag(self, opts.tag) != NULL) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR,
                        SLUICE_ERROR_TAG_IN_USE,
                        _("The tag “%s” is already used by the share of “%s”: choose another tag"),
                        opts.tag, sluice_shared_folder_get_config(find_by_tag(self, opts.tag))->path);
                return;
        }
        if (!vm_confirmed && !vm_ready_or_confirm(self, invocation, vm, add_share_from_call))
                return;

        config = sluice_share_config_new();
        config->id = self->next_id;
        g_free(config->path);
        config->path = g_steal_pointer(&resolved);
        config->folder = folder;  /* every launch serves this folder or none */
        g_free(config->tag);
        config->tag = opts.tag != NULL ? g_strdup(opts.tag) : derive_tag(self, config->path);
        g_free(config->vm);
        config->vm = g_strdup(vm);
        g_free(config->cache);
        config->cache = g_strdup(opts.cache);
        config->readonly = opts.readonly;
        config->autostart = opts.autostart;
        config->queues = opts.queues;
        config->auto_mount = opts.auto_mount;
        g_free(config->mount_point);
        config->mount_point = g_strdup(opts.mount_point);
        config->mount_at_boot = opts.mount_at_boot;
        g_free(config->names);
        config->names = g_strdup(opts.names);
        g_free(config->case_);
        config->case_ = g_strdup(opts.case_);

        share = add_share(self, config);
        if (!save_config(self, &error)) {
                /* A share that would vanish at the next start is not added. */
                forget_share(self, share);
                g_dbus_method_invocation_take_error(invocation, error);
                return;
        }
        g_message("Added share %u: %s as “%s”", config->id, config->path, config->tag);
        if (opts.attach) {
                sluice_shared_folder_start_async(share, on_add_started, invocation);
                return;
        }
        sluice_manager_complete_add_share(NULL, invocation,
                                          sluice_shared_folder_get_object_path(share));
}

static gboolean on_handle_add_share(SluiceManager *iface, GDBusMethodInvocation *invocation,
                                    const char *path, const char *vm, GVariant *options,
                                    gpointer user_data)
{
        add_share_from_call(user_data, invocation, FALSE);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

typedef struct {
        SluiceServiceManager *self;
        GDBusMethodInvocation *invocation;
} RemoveData;

static void remove_data_free(RemoveData *data)
{
        g_object_unref(data->self);
        g_free(data);
}

static void on_remove_stopped(GObject *source, GAsyncResult *result, gpointer user_data)
{
        RemoveData *data = user_data;
        SluiceSharedFolder *share = SLUICE_SHARED_FOLDER(source);
        g_autoptr(GError) error = NULL;

        if (!sluice_shared_folder_stop_finish(share, result, &error)) {
                /* the guest uses it (Busy): the share stays as it was */
                g_dbus_method_invocation_return_gerror(data->invocation, error);
                remove_data_free(data);
                return;
        }
        g_message("Removed share %s", sluice_shared_folder_get_config(share)->tag);
        /* The share may be gone already (removed twice at once). */
        if (g_hash_table_lookup(data->self->shares, sluice_shared_folder_get_object_path(share)) == share)
                forget_share(data->self, share);
        if (!save_config(data->self, &error))
                g_warning("%s", error->message);
        /* the share is out of its VM and forgotten: the caller waits no longer
         * (what the share still does in its guest has a deadline of its own);
         * RemoveShare and RemoveShareWithOptions both answer nothing */
        sluice_manager_complete_remove_share(NULL, g_steal_pointer(&data->invocation));
        /* the task still holds the share; what it still does holds it too */
        sluice_shared_folder_removed(share);
        remove_data_free(data);
}

static void remove_share(SluiceServiceManager *self, GDBusMethodInvocation *invocation, const char *path,
                         gboolean force)
{
        SluiceSharedFolder *share = g_hash_table_lookup(self->shares, path);
        RemoveData *data;

        if (share == NULL) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                        _("There is no share %s: see the shares with “sluicectl list”"), path);
                return;
        }
        data = g_new0(RemoveData, 1);
        data->self = g_object_ref(self);
        data->invocation = invocation;
        /* The stop callback holds the share until it is done with it. */
        g_object_ref(share);
        sluice_shared_folder_stop_async(share, force, on_remove_stopped, data);
        g_object_unref(share);
}

static gboolean on_handle_remove_share(SluiceManager *iface, GDBusMethodInvocation *invocation,
                                       const char *path, gpointer user_data)
{
        remove_share(user_data, invocation, path, FALSE);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_handle_remove_share_with_options(SluiceManager *iface, GDBusMethodInvocation *invocation,
                                                    const char *path, GVariant *options, gpointer user_data)
{
        SluiceShareEndOptions opts;
        GError *error = NULL;

        if (!sluice_share_end_options_parse(options, &opts, &error))
                g_dbus_method_invocation_take_error(invocation, error);
        else
                remove_share(user_data, invocation, path, opts.force);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- VM events ---- */

/* An agent came up (or went): a share plugged in meanwhile is mounted now. */
static void on_guest_changed(SluiceVmManager *vms, const char *name, gpointer user_data)
{
        SluiceServiceManager *self = user_data;
        g_autoptr(GPtrArray) shares = sorted_shares(self);

        for (guint i = 0; i < shares->len; i++)
                sluice_shared_folder_guest_changed(shares->pdata[i], name);
}

static void on_vm_started(SluiceVmManager *vms, const char *name, gpointer user_data)
{
        SluiceServiceManager *self = user_data;
        g_autoptr(GPtrArray) shares = sorted_shares(self);

        for (guint i = 0; i < shares->len; i++)
                sluice_shared_folder_vm_started(shares->pdata[i], name);
}

static void on_vm_stopped(SluiceVmManager *vms, const char *name, gpointer user_data)
{
        SluiceServiceManager *self = user_data;
        g_autoptr(GPtrArray) shares = sorted_shares(self);

        for (guint i = 0; i < shares->len; i++)
                sluice_shared_folder_vm_stopped(shares->pdata[i], name);
}

static void on_device_removed(SluiceVmManager *vms, const char *name, const char *tag,
                              gpointer user_data)
{
        SluiceServiceManager *self = user_data;
        g_autoptr(GPtrArray) shares = sorted_shares(self);

        for (guint i = 0; i < shares->len; i++)
                sluice_shared_folder_device_removed(shares->pdata[i], name, tag);
}

static void on_vms_changed(SluiceVmManager *vms, gpointer user_data)
{
        SluiceServiceManager *self = user_data;
        g_autoptr(GPtrArray) shares = sorted_shares(self);

        for (guint i = 0; i < shares->len; i++)
                sluice_shared_folder_vms_changed(shares->pdata[i]);
}

/* ---- life cycle ---- */

SluiceServiceManager *sluice_service_manager_new(const SluiceServiceOptions *options)
{
        SluiceServiceManager *self = g_object_new(SLUICE_TYPE_SERVICE_MANAGER, NULL);

        self->config_file = g_strdup(options->config_file);
        self->socket_dir = g_strdup(options->socket_dir);
        self->stats_interval_ms = options->stats_interval_ms;
        self->server = g_dbus_object_manager_server_new(SLUICE_OBJECT_ROOT);
        self->vms = sluice_vm_manager_new(self->server, options->libvirt_uris);
        g_signal_connect(self->vms, "vm-started", G_CALLBACK(on_vm_started), self);
        g_signal_connect(self->vms, "vm-stopped", G_CALLBACK(on_vm_stopped), self);
        g_signal_connect(self->vms, "device-removed", G_CALLBACK(on_device_removed), self);
        g_signal_connect(self->vms, "vms-changed", G_CALLBACK(on_vms_changed), self);
        g_signal_connect(self->vms, "guest-changed", G_CALLBACK(on_guest_changed), self);

        self->iface = sluice_manager_skeleton_new();
        sluice_manager_set_version(self->iface, PACKAGE_VERSION);
        g_signal_connect(self->iface, "handle-add-share", G_CALLBACK(on_handle_add_share), self);
        g_signal_connect(self->iface, "handle-remove-share", G_CALLBACK(on_handle_remove_share), self);
        g_signal_connect(self->iface, "handle-remove-share-with-options",
                         G_CALLBACK(on_handle_remove_share_with_options), self);
        return self;
}

static GPtrArray *shares_to_upgrade(gpointer user_data)
{
        return sorted_shares(user_data);
}

static void on_worker_binary_changed(const char *path, gpointer user_data)
{
        SluiceServiceManager *self = user_data;

        sluice_worker_upgrade_run(self->upgrade);
}

gboolean sluice_service_manager_export(SluiceServiceManager *self, GDBusConnection *connection,
                                       GError **error)
{
        g_autoptr(GPtrArray) configs = NULL;
        g_autoptr(GError) load_error = NULL;

        self->connection = g_object_ref(connection);
        configs = sluice_config_load(self->config_file, &load_error);
        if (configs == NULL) {
                /* Start with no shares rather than not at all; the file stays as it is
                 * until the user changes something. */
                g_warning("%s", load_error->message);
        }
        for (guint i = 0; configs != NULL && i < configs->len; i++)
                add_share(self, configs->pdata[i]);
        if (configs != NULL)
                g_message("Loaded %u share(s) from %s", configs->len, self->config_file);

        /* The Manager interface sits at the ObjectManager's own path, which the
         * ObjectManagerServer does not export objects at. */
        if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(self->iface), connection,
                                              SLUICE_OBJECT_ROOT, error))
                return FALSE;
        g_dbus_object_manager_server_set_connection(self->server, connection);
        sluice_vm_manager_start(self->vms);
        /* an upgraded sluice-fs reaches the running shares without a replug */
        self->upgrade = sluice_worker_upgrade_new(shares_to_upgrade, self);
        self->binary_watch = sluice_worker_binary_watch_new(on_worker_binary_changed, self);
        return TRUE;
}

/* A share that had fds kept across the restart and did not get as far as
 * a worker (its folder is gone, say): nothing will serve them, so they are
 * closed and QEMU sees the connection end (the replug path) instead of
 * waiting on it for good. */
static void on_kept_share_started(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SluiceSharedFolder *share = SLUICE_SHARED_FOLDER(source);
        const char *tag = sluice_shared_folder_get_config(share)->tag;
        g_autoptr(GError) error = NULL;

        if (!sluice_shared_folder_start_finish(share, result, &error))
                g_message("%s did not start again after the service's restart: %s", tag, error->message);
        sluice_service_fd_store_drop(tag);
}

void sluice_service_manager_autostart(SluiceServiceManager *self)
{
        g_autoptr(GPtrArray) shares = sorted_shares(self);

        /* fds kept for a share removed from shares.ini meanwhile go now:
         * nothing will serve them */
        sluice_service_fd_store_drop_unknown(tag_taken, self);
        for (guint i = 0; i < shares->len; i++) {
                const SluiceShareConfig *config = sluice_shared_folder_get_config(shares->pdata[i]);

                /* a share that ran before the service's restart runs again,
                 * autostart or not: its frontend waits on the kept store */
                if (sluice_service_fd_store_has(config->tag))
                        sluice_shared_folder_start_async(shares->pdata[i], on_kept_share_started, NULL);
                else if (config->autostart)
                        sluice_shared_folder_start_async(shares->pdata[i], NULL, NULL);
        }
}

/* A task that completes once each of the shares it was started for has
 * called fan_out_done() on it, and the starter too (a count of N + 1, so
 * that it cannot complete while the starter still hands it out). */
static GTask *fan_out_new(SluiceServiceManager *self, guint n, GAsyncReadyCallback callback, gpointer user_data)
{
        GTask *task = g_task_new(self, NULL, callback, user_data);
        guint *pending = g_new0(guint, 1);

        *pending = n + 1;
        g_task_set_task_data(task, pending, g_free);
        return task;
}

static void fan_out_done(GTask *task)
{
        guint *pending = g_task_get_task_data(task);

        if (--*pending == 0)
                g_task_return_boolean(task, TRUE);
}

static void on_share_stopped_for_shutdown(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        g_autoptr(GError) error = NULL;

        if (!sluice_shared_folder_stop_finish(SLUICE_SHARED_FOLDER(source), result, &error))
                g_warning("%s", error->message);
        fan_out_done(task);
}

void sluice_service_manager_shutdown_async(SluiceServiceManager *self, GAsyncReadyCallback callback,
                                           gpointer user_data)
{
        g_autoptr(GPtrArray) shares = sorted_shares(self);
        g_autoptr(GTask) task = fan_out_new(self, shares->len, callback, user_data);

        for (guint i = 0; i < shares->len; i++)
                /* a service going away (SIGTERM, logout, the bus name lost)
                 * never waits for a guest: forced */
                sluice_shared_folder_stop_async(shares->pdata[i], TRUE, on_share_stopped_for_shutdown,
                                                g_object_ref(task));
        fan_out_done(task);
}

void sluice_service_manager_shutdown_finish(SluiceServiceManager *self, GAsyncResult *result)
{
        (void)g_task_propagate_boolean(G_TASK(result), NULL);
}

static void on_worker_handed_over(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceWorker *worker = SLUICE_WORKER(source);
        SluiceWorkerFdStore *store = sluice_worker_get_fd_store(worker);
        const char *tag = g_object_get_data(G_OBJECT(worker), "sluice-hand-over-tag");
        g_autoptr(GError) error = NULL;

        sluice_worker_stop_finish(worker, result);
        /* after the exit: the worker brought its state up to date and
         * stored everything it had (the store was drained on its exit) */
        if (sluice_worker_fd_store_count(store) > 0) {
                if (sluice_service_fd_store_push(tag, store, &error))
                        g_message("%s: %u fd(s) kept in the service's fd store for the next service",
                                  tag, sluice_worker_fd_store_count(store));
                else
                        g_warning("%s", error->message);
        }
        fan_out_done(task);
}

void sluice_service_manager_hand_over_async(SluiceServiceManager *self, GAsyncReadyCallback callback,
                                            gpointer user_data)
{
        g_autoptr(GPtrArray) shares = sorted_shares(self);
        g_autoptr(GTask) task = fan_out_new(self, shares->len, callback, user_data);

        for (guint i = 0; i < shares->len; i++) {
                SluiceWorker *worker = sluice_shared_folder_get_worker(shares->pdata[i]);

                if (worker == NULL || !sluice_worker_is_ready(worker)) {
                        /* nothing to keep (not running, or between launches):
                         * stopped as on a stop of the service */
                        sluice_shared_folder_stop_async(shares->pdata[i], TRUE,
                                                        on_share_stopped_for_shutdown,
                                                        g_object_ref(task));
                        continue;
                }
                /* the share's machine is left as it is: no unplug, no
                 * unmount; only its process goes */
                g_object_set_data_full(G_OBJECT(worker), "sluice-hand-over-tag",
                                       g_strdup(sluice_shared_folder_get_config(shares->pdata[i])->tag),
                                       g_free);
                sluice_worker_hand_over_async(worker, on_worker_handed_over, g_object_ref(task));
        }
        fan_out_done(task);
}

void sluice_service_manager_unexport(SluiceServiceManager *self)
{
        if (self->connection == NULL)
                return;
        g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(self->iface));
        g_dbus_object_manager_server_set_connection(self->server, NULL);
        g_clear_object(&self->connection);
}

static void sluice_service_manager_dispose(GObject *object)
{
        SluiceServiceManager *self = SLUICE_SERVICE_MANAGER(object);

        sluice_service_manager_unexport(self);
        g_clear_pointer(&self->binary_watch, sluice_worker_binary_watch_free);
        g_clear_pointer(&self->upgrade, sluice_worker_upgrade_free);
        if (self->vms != NULL)
                g_signal_handlers_disconnect_by_data(self->vms, self);
        g_clear_pointer(&self->shares, g_hash_table_unref);
        g_clear_object(&self->vms);
        g_clear_object(&self->iface);
        g_clear_object(&self->server);
        G_OBJECT_CLASS(sluice_service_manager_parent_class)->dispose(object);
}

static void sluice_service_manager_finalize(GObject *object)
{
        SluiceServiceManager *self = SLUICE_SERVICE_MANAGER(object);

        g_free(self->config_file);
        g_free(self->socket_dir);
        G_OBJECT_CLASS(sluice_service_manager_parent_class)->finalize(object);
}

static void sluice_service_manager_class_init(SluiceServiceManagerClass *klass)
{
        G_OBJECT_CLASS(klass)->dispose = sluice_service_manager_dispose;
        G_OBJECT_CLASS(klass)->finalize = sluice_service_manager_finalize;
}

static void sluice_service_manager_init(SluiceServiceManager *self)
{
        self->shares = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
        self->next_id = 1;
}
