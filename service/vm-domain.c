/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-domain.c — see vm-domain.h.  Every call that waits on libvirtd (state
 * and XML, EnableSharedMemory) runs in a GTask worker thread on its own
 * reference to the raw virDomain (thread-safe), and its result is applied
 * back in the main thread. */
#include "config.h"

#include "vm-domain.h"
#include "domain-xml.h"
#include "errors.h"
#include "hotplug.h"
#include "sluice-names.h"
#include "vm-socket-access.h"

#include <glib/gi18n.h>
#include <libvirt/virterror.h>
#include <unistd.h>

static gboolean on_enable_shared_memory(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                        gpointer user_data);

/* ---- the entry ------------------------------------------------------------------ */

static char *object_path_for(const char *uuid)
{
        g_autoptr(GString) path = g_string_new(SLUICE_VM_PATH_PREFIX);

        for (const char *c = uuid; *c; c++)
                if (g_ascii_isxdigit(*c))
                        g_string_append_c(path, g_ascii_tolower(*c));
        return g_string_free(g_steal_pointer(&path), FALSE);
}

static const char *state_name(int state)
{
        switch (state) {
        case VIR_DOMAIN_RUNNING:
        case VIR_DOMAIN_BLOCKED:
        case VIR_DOMAIN_SHUTDOWN: /* still running while it shuts down */
                return "running";
        case VIR_DOMAIN_PAUSED:
        case VIR_DOMAIN_PMSUSPENDED:
                return "paused";
        case VIR_DOMAIN_SHUTOFF:
                return "shutoff";
        case VIR_DOMAIN_CRASHED:
                return "crashed";
        default:
                return "other";
        }
}

static void on_domain_event(GVirDomain *domain, gpointer user_data)
{
        sluice_vm_domain_refresh(user_data);
}

void sluice_vm_domain_set_domain(SluiceVmDomain *vm, GVirDomain *domain)
{
        /* every lifecycle signal means "re-read the state" */
        static const char *const lifecycle[] = { "started", "stopped", "suspended", "resumed",
                                                 "updated", "pmsuspended" };

        if (vm->domain) {
                g_signal_handlers_disconnect_by_data(vm->domain, vm);
                g_clear_object(&vm->domain);
        }
        if (!domain || vm->removed)
                return;
        vm->domain = g_object_ref(domain);
        for (gsize i = 0; i < G_N_ELEMENTS(lifecycle); i++)
                g_signal_connect(domain, lifecycle[i], G_CALLBACK(on_domain_event), vm);
}

SluiceVmDomain *sluice_vm_domain_new(SluiceVmConnection *connection, GVirDomain *domain,
                                     GDBusObjectManagerServer *server,
                                     SluiceVmDomainChanged changed, gpointer changed_data)
{
        SluiceVmDomain *vm = g_atomic_rc_box_new0(SluiceVmDomain);
        g_autofree char *path = NULL;

        vm->connection = connection;
        vm->uuid = g_strdup(gvir_domain_get_uuid(domain));
        vm->name = g_strdup(gvir_domain_get_name(domain));
        vm->os = g_strdup("");
        vm->qemu_uid = -1;
        vm->alias_to_tag = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        vm->detaching = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        vm->tags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        vm->server = server ? g_object_ref(server) : NULL;
        vm->changed = changed;
        vm->changed_data = changed_data;

        path = object_path_for(vm->uuid);
        vm->object = sluice_object_skeleton_new(path);
        vm->iface = sluice_vm_skeleton_new();
        sluice_vm_set_name(vm->iface, vm->name);
        sluice_vm_set_uuid(vm->iface, vm->uuid);
        sluice_vm_set_uri(vm->iface, sluice_vm_connection_get_uri(connection));
        sluice_vm_set_state(vm->iface, "other");
        sluice_vm_set_shared_memory(vm->iface, FALSE);
        sluice_vm_set_os(vm->iface, "");
        g_signal_connect(vm->iface, "handle-enable-shared-memory",
                         G_CALLBACK(on_enable_shared_memory), vm);
        sluice_object_skeleton_set_vm(vm->object, vm->iface);

        sluice_vm_domain_set_domain(vm, domain);
        /* exported once its state is known (on_refreshed) */
        sluice_vm_domain_refresh(vm);
        return vm;
}

SluiceVmDomain *sluice_vm_domain_ref(SluiceVmDomain *vm)
{
        return g_atomic_rc_box_acquire(vm);
}

static void vm_domain_clear(gpointer data)
{
        SluiceVmDomain *vm = data;

        /* removed first (main thread): nothing is exported or connected any more */
        g_clear_object(&vm->iface);
        g_clear_object(&vm->object);
        g_clear_object(&vm->server);
        g_hash_table_unref(vm->alias_to_tag);
        g_hash_table_unref(vm->detaching);
        g_hash_table_unref(vm->tags);
        g_free(vm->uuid);
        g_free(vm->name);
        g_free(vm->os);
}

void sluice_vm_domain_unref(SluiceVmDomain *vm)
{
        g_atomic_rc_box_release_full(vm, vm_domain_clear);
}

void sluice_vm_domain_remove(SluiceVmDomain *vm)
{
        if (vm->removed)
                return;
        sluice_vm_domain_set_domain(vm, NULL);
        vm->removed = TRUE;
        g_signal_handlers_disconnect_by_data(vm->iface, vm);
        if (vm->ready && vm->server) {
                g_autofree char *path = object_path_for(vm->uuid);
                (void)g_dbus_object_manager_server_unexport(vm->server, path);
        }
}

virDomainPtr sluice_vm_domain_get_raw(SluiceVmDomain *vm)
{
        virDomainPtr raw = NULL;

        if (vm->domain)
                g_object_get(vm->domain, "handle", &raw, NULL); /* a new reference */
        return raw;
}

void sluice_vm_domain_set_tag(SluiceVmDomain *vm, const char *tag, gboolean plugged)
{
        if (plugged)
                g_hash_table_add(vm->tags, g_strdup(tag));
        else
                g_hash_table_remove(vm->tags, tag);
        vm->tags_epoch++;
}

void sluice_vm_domain_forget_devices(SluiceVmDomain *vm)
{
        g_hash_table_remove_all(vm->tags);
        vm->tags_epoch++;
        sluice_socket_access_revoke(vm->uuid, NULL);
}

/* ---- reading the state ---------------------------------------------------------- */

/* What a thread works on: the entry and the raw domain, both references. */
typedef struct {
        SluiceVmDomain *vm;
        virDomainPtr domain;
} DomainRef;

static void domain_ref_clear(DomainRef *r)
{
        g_clear_pointer(&r->vm, sluice_vm_domain_unref);
        g_clear_pointer(&r->domain, virDomainFree);
}

/* What a refresh read from libvirtd, in a worker thread. */
typedef struct {
        DomainRef ref;
        guint64 tags_epoch;
        int state;
        SluiceDomainXml *parsed; /* NULL when the XML could not be read */
} RefreshData;

static void refresh_data_free(gpointer data)
{
        RefreshData *d = data;

        domain_ref_clear(&d->ref);
        g_clear_pointer(&d->parsed, sluice_domain_xml_free);
        g_free(d);
}

static void refresh_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        RefreshData *d = task_data;
        g_autofree char *xml = NULL;
        GError *error = NULL;
        int reason;

        if (virDomainGetState(d->ref.domain, &d->state, &reason, 0) < 0) {
                sluice_hotplug_set_libvirt_error(&error, "cannot read the state");
                g_task_return_error(task, error);
                return;
        }
        xml = virDomainGetXMLDesc(d->ref.domain, 0);
        if (xml)
                d->parsed = sluice_domain_xml_parse(xml, NULL);
        g_task_return_boolean(task, TRUE);
}

/* Applies a refresh; returns whether the VM started (1) or stopped (-1). */
static int vm_apply(SluiceVmDomain *vm, RefreshData *d)
{
        gboolean was_active = vm->active;
        SluiceDomainXml *parsed = d->parsed;

        vm->active = d->state != VIR_DOMAIN_SHUTOFF && d->state != VIR_DOMAIN_CRASHED &&
                     d->state != VIR_DOMAIN_NOSTATE;
        if (parsed) {
                GHashTableIter iter;
                gpointer value;
                /* a hot-plug finished after this read started: its result is newer */
                gboolean tags_current = d->tags_epoch == vm->tags_epoch;

                vm->shared_memory = parsed->shared_memory;
                g_free(vm->os);
                vm->os = sluice_domain_xml_os_short_id(parsed->os_id);
                vm->qemu_uid = vm->active && parsed->dac_uid != (gint64)geteuid() ? parsed->dac_uid : -1;
                g_hash_table_remove_all(vm->alias_to_tag);
                if (tags_current)
                        g_hash_table_remove_all(vm->tags);
                g_hash_table_iter_init(&iter, parsed->filesystems);
                while (g_hash_table_iter_next(&iter, NULL, &value)) {
                        SluiceDomainFilesystem *fs = value;
                        if (fs->alias)
                                g_hash_table_insert(vm->alias_to_tag, g_strdup(fs->alias),
                                                    g_strdup(fs->tag));
                        if (tags_current && vm->active)
                                g_hash_table_add(vm->tags, g_strdup(fs->tag));
                }
        }
        if (vm->domain && !g_str_equal(vm->name, gvir_domain_get_name(vm->domain))) {
                g_free(vm->name);
                vm->name = g_strdup(gvir_domain_get_name(vm->domain));
        }

        g_object_freeze_notify(G_OBJECT(vm->iface));
        sluice_vm_set_name(vm->iface, vm->name);
        sluice_vm_set_state(vm->iface, state_name(d->state));
        sluice_vm_set_shared_memory(vm->iface, vm->shared_memory);
        sluice_vm_set_os(vm->iface, vm->os);
        g_object_thaw_notify(G_OBJECT(vm->iface));

        if (vm->active == was_active)
                return 0;
        if (!vm->active)
                sluice_vm_domain_forget_devices(vm);
        return vm->active ? 1 : -1;
}

static void on_refreshed(GObject *source, GAsyncResult *result, gpointer user_data)
{
        GTask *task = G_TASK(result);
        RefreshData *d = g_task_get_task_data(task);
        g_autoptr(SluiceVmDomain) vm = sluice_vm_domain_ref(d->ref.vm);
        g_autoptr(GError) error = NULL;
        int change = 0;

        if (vm->removed)
                return;
        vm->refreshing = FALSE;
        if (!g_task_propagate_boolean(task, &error))
                g_debug("%s: %s: %s", sluice_vm_connection_get_uri(vm->connection), vm->name,
                        error->message);
        else
                change = vm_apply(vm, d);
        if (!vm->ready) {
                vm->ready = TRUE;
                if (vm->server)
                        g_dbus_object_manager_server_export(vm->server, G_DBUS_OBJECT_SKELETON(vm->object));
        }
        if (vm->refresh_again) {
                vm->refresh_again = FALSE;
                sluice_vm_domain_refresh(vm);
        }
        /* last: a handler may remove this VM (our reference keeps it alive) */
        if (vm->changed)
                vm->changed(vm, change, vm->changed_data);
}

void sluice_vm_domain_refresh(SluiceVmDomain *vm)
{
        g_autoptr(GTask) task = NULL;
        RefreshData *d;

        if (!vm->domain || vm->removed)
                return;
        if (vm->refreshing) {
                vm->refresh_again = TRUE;
                return;
        }
        d = g_new0(RefreshData, 1);
        d->ref.vm = sluice_vm_domain_ref(vm);
        d->ref.domain = sluice_vm_domain_get_raw(vm);
        if (!d->ref.domain) {
                refresh_data_free(d);
                return;
        }
        d->tags_epoch = vm->tags_epoch;
        vm->refreshing = TRUE;
        task = g_task_new(NULL, NULL, on_refreshed, NULL);
        g_task_set_task_data(task, d, refresh_data_free);
        g_task_run_in_thread(task, refresh_thread);
}

/* ---- guest hint -------------------------------------------------------------------- */

char *sluice_vm_domain_guest_hint(const SluiceVmDomain *vm, const char *tag)
{
        if (g_str_has_prefix(vm->os, "win"))
                return g_strdup_printf(
                        _("Windows guest: install the VirtIO-FS driver from virtio-win and WinFsp, and "
                          "set the “VirtIO-FS Service” to start Automatically; the shared folder “%s” "
                          "then appears as a drive letter (Z: unless it is taken)."),
                        tag);
        gboolean plain = TRUE;
        for (const char *c = tag; *c; c++)
                if (!g_ascii_isalnum(*c) && !strchr("._-", *c))
                        plain = FALSE;
        /* quote for the shell only when the tag needs it */
        g_autofree char *quoted = plain ? g_strdup(tag) : g_shell_quote(tag);
        g_autofree char *dir = g_strdup(tag);
        /* a mount point named after the tag, without path separators */
        g_strdelimit(dir, "/ \t'\"\\", '_');
        return g_strdup_printf(_("In the guest: mkdir -p /mnt/%s && mount -t virtiofs %s /mnt/%s"),
                               dir, quoted, dir);
}

/* ---- EnableSharedMemory ------------------------------------------------------------ */

/* One Vm.EnableSharedMemory call: what the thread needs, copied in the main thread. */
typedef struct {
        DomainRef ref;
        char *name;
        char *uri;
        gboolean active;
        gboolean shared_memory;
        GDBusMethodInvocation *invocation; /* answered once, in the main thread */
        guint answer_timeout;
} SharedMemoryCall;

static void shared_memory_call_free(gpointer data)
{
        SharedMemoryCall *c = data;

        domain_ref_clear(&c->ref);
        g_free(c->name);
        g_free(c->uri);
        g_clear_object(&c->invocation);
        g_free(c);
}

/* Worker thread: rewrites the persistent definition; returns the message. */
static char *enable_shared_memory(const SharedMemoryCall *c, GError **error)
{
        g_autofree char *xml = NULL;
        g_autofree char *new_xml = NULL;
        gboolean changed = FALSE;
        virDomainPtr defined;
        int persistent = virDomainIsPersistent(c->ref.domain);

        if (persistent < 0) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM’s definition"));
                return NULL;
        }
        if (!persistent) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("The VM “%s” is transient (it has no saved definition to change); "
                              "add shared memory to the XML it is started from."), c->name);
                return NULL;
        }
        /* SECURE: keep passwords (VNC, SPICE) that the plain XML leaves out */
        xml = virDomainGetXMLDesc(c->ref.domain, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (!xml) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM’s definition"));
                return NULL;
        }
        new_xml = sluice_domain_xml_enable_shared_memory(xml, &changed, error);
        if (!new_xml)
                return NULL;
        if (changed) {
                defined = virDomainDefineXML(virDomainGetConnect(c->ref.domain), new_xml);
                if (!defined) {
                        sluice_hotplug_set_libvirt_error(error, _("libvirt refused the new definition"));
                        return NULL;
                }
                virDomainFree(defined);
        }
        if (!changed && (!c->active || c->shared_memory))
                return g_strdup_printf(_("The VM “%s” already has shared memory."), c->name);
        if (c->active)
                return g_strdup_printf(_("Shared memory is enabled for “%s”. It takes effect at the next "
                                         "boot: shut the VM down and start it again."), c->name);
        return g_strdup_printf(_("Shared memory is enabled for “%s”. It takes effect at the next boot."),
                               c->name);
}

static void enable_shared_memory_thread(GTask *task, gpointer source, gpointer task_data,
                                        GCancellable *cancellable)
{
        GError *error = NULL;
        char *message = enable_shared_memory(task_data, &error);

        if (message)
                g_task_return_pointer(task, message, g_free);
        else
                g_task_return_error(task, error);
}

/* libvirtd is slow or stalled: the caller hears so before its own timeout; the
 * thread goes on (a stalled connection fails by keepalive) and a later call
 * tells whether the change was made. */
static gboolean on_enable_shared_memory_timeout(gpointer user_data)
{
        SharedMemoryCall *c = g_task_get_task_data(G_TASK(user_data));
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);

        c->answer_timeout = 0;
        g_dbus_method_invocation_return_error(
                invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                _("libvirt (%s) has not answered within %d seconds; the change may still be made. "
                  "Try again in a minute: Sluice then says whether “%s” has shared memory."),
                c->uri, SLUICE_VM_ANSWER_TIMEOUT_S, c->name);
        return G_SOURCE_REMOVE;
}

static void enable_shared_memory_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SharedMemoryCall *c = g_task_get_task_data(G_TASK(result));
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);
        g_autoptr(GError) error = NULL;
        g_autofree char *message = g_task_propagate_pointer(G_TASK(result), &error);

        g_clear_handle_id(&c->answer_timeout, g_source_remove);
        sluice_vm_domain_refresh(c->ref.vm);
        if (!invocation) /* answered at the timeout */
                return;
        if (!message)
                g_dbus_method_invocation_return_gerror(invocation, error);
        else
                g_dbus_method_invocation_return_value(invocation, g_variant_new("(s)", message));
}

static gboolean on_enable_shared_memory(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                        gpointer user_data)
{
        SluiceVmDomain *vm = user_data;
        g_autoptr(GTask) task = NULL;
        SharedMemoryCall *c;
        virDomainPtr raw = sluice_vm_domain_get_raw(vm);

        if (!raw) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                                                      _("The connection to libvirt (%s) is down; try again in a moment."),
                                                      sluice_vm_connection_get_uri(vm->connection));
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        /* it changes the VM's saved definition: worth a line in the log */
        g_message("Enabling shared memory in the definition of %s (%s)", vm->name,
                  sluice_vm_connection_get_uri(vm->connection));
        c = g_new0(SharedMemoryCall, 1);
        c->ref.vm = sluice_vm_domain_ref(vm);
        c->ref.domain = raw;
        c->name = g_strdup(vm->name);
        c->uri = g_strdup(sluice_vm_connection_get_uri(vm->connection));
        c->active = vm->active;
        c->shared_memory = vm->shared_memory;
        c->invocation = g_object_ref(invocation);
        task = g_task_new(NULL, NULL, enable_shared_memory_done, NULL);
        g_task_set_task_data(task, c, shared_memory_call_free);
        c->answer_timeout = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, SLUICE_VM_ANSWER_TIMEOUT_S,
                                                       on_enable_shared_memory_timeout,
                                                       g_object_ref(task), g_object_unref);
        g_task_run_in_thread(task, enable_shared_memory_thread);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}
