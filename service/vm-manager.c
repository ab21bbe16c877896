/* vm-manager.c — see vm-manager.h.  libvirt-glib tracks the domains and their
 * lifecycle; the raw API fills its gaps: close callback (libvirt-glib goes
 * silent after a libvirtd restart), device-removed events, XML, hot-plug
 * (hotplug.c).  All state, the libvirt-glib objects and the D-Bus skeletons
 * live in the main thread.  Every call that waits on libvirtd (reading a
 * domain's state and XML, hot-plug with its ACL grant, EnableSharedMemory)
 * runs in a GTask worker thread on its own reference to the raw virDomain
 * (thread-safe), and its result is applied back in the main thread: a hung
 * libvirtd never freezes the D-Bus service. */
#include "config.h"

#include "vm-manager.h"
#include "domain-xml.h"
#include "errors.h"
#include "hotplug.h"
#include "sluice-dbus.h"
#include "vm-socket-access.h"

#include <glib/gi18n.h>
#include <libvirt-gobject/libvirt-gobject.h>
#include <libvirt/virterror.h>
#include <unistd.h>

#define VM_PATH_PREFIX "/org/sluice/Sluice1/vm/"
#define RECONNECT_MIN_S 1
#define RECONNECT_MAX_S 10

typedef struct _VmLink VmLink;

/* One libvirt connection (URI) and its reconnect state. */
struct _VmLink {
        SluiceVmManager *manager; /* owns the link */
        char *uri;
        GVirConnection *conn;     /* NULL while disconnected */
        virConnectPtr raw;        /* our reference, for the raw callbacks */
        int device_removed_id;
        int device_added_id;
        gboolean close_registered;
        gulong added_id, removed_id;
        guint retry_source;
        guint lost_source;
        guint retry_delay_s;
        gboolean connecting;
        gboolean warned;          /* an unreachable URI is logged once */
};

/* One domain, exported as an org.sluice.Sluice1.Vm object. */
typedef struct {
        VmLink *link;
        char *uuid;
        char *name;
        GVirDomain *domain;       /* NULL while the link is down */
        SluiceObjectSkeleton *object;
        SluiceVm *iface;
        gboolean active;
        gboolean shared_memory;
        char *os;
        gint64 qemu_uid;
        GHashTable *alias_to_tag; /* live devices, to name a removed one */
        GHashTable *detaching;    /* tags Sluice itself is unplugging */
        GHashTable *tags;         /* tags plugged in (running VM), for is_attached */
        guint64 tags_epoch;       /* bumped when Sluice changes tags: older reads lose */
        guint serial;             /* tells a refresh result for an older entry apart */
        gboolean ready;           /* first state read: exported and visible to lookups */
        gboolean refreshing;      /* a read is in flight */
        gboolean refresh_again;   /* something changed meanwhile: read again after it */
} VmEntry;

struct _SluiceVmManager {
        GObject parent_instance;
        GDBusObjectManagerServer *server;
        GPtrArray *links;         /* VmLink * */
        GHashTable *vms;          /* uuid → VmEntry * */
        GCancellable *cancellable; /* pending opens and fetches; cancelled at dispose */
        gboolean started;
};

enum { SIGNAL_VM_STARTED, SIGNAL_VM_STOPPED, SIGNAL_DEVICE_REMOVED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_TYPE(SluiceVmManager, sluice_vm_manager, G_TYPE_OBJECT)

static void link_connect(VmLink *link);
static void vm_refresh(VmEntry *vm);

static guint serial_counter;

/* Gives back the access QEMU's user got for the device (tag NULL: for every
 * device of the VM, which stopped).  In the main thread on purpose: it must be
 * done before the attach a restarted VM triggers grants anew, and a thread
 * would not keep that order.  It is local (getfacl/setfacl, milliseconds),
 * never a wait on libvirtd. */
static void revoke_access(const char *uuid, const char *tag)
{
        sluice_socket_access_revoke(uuid, tag);
}

/* The VM stopped: nothing is plugged in any more. */
static void vm_forget_devices(VmEntry *vm)
{
        g_hash_table_remove_all(vm->tags);
        vm->tags_epoch++;
        revoke_access(vm->uuid, NULL);
}

/* ---- Vm entries ---------------------------------------------------------- */

static char *object_path_for(const char *uuid)
{
        g_autoptr(GString) path = g_string_new(VM_PATH_PREFIX);

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

static virDomainPtr vm_raw_domain(VmEntry *vm)
{
        virDomainPtr raw = NULL;

        if (vm->domain)
                g_object_get(vm->domain, "handle", &raw, NULL); /* a new reference */
        return raw;
}

static void vm_detach_domain(VmEntry *vm)
{
        if (vm->domain) {
                g_signal_handlers_disconnect_by_data(vm->domain, vm);
                g_clear_object(&vm->domain);
        }
}

static void vm_entry_free(gpointer data)
{
        VmEntry *vm = data;
        SluiceVmManager *self = vm->link->manager;

        vm_detach_domain(vm);
        if (vm->object) {
                g_autofree char *path = object_path_for(vm->uuid);
                if (self->server)
                        (void)g_dbus_object_manager_server_unexport(self->server, path);
        }
        g_clear_object(&vm->iface);
        g_clear_object(&vm->object);
        g_hash_table_unref(vm->alias_to_tag);
        g_hash_table_unref(vm->detaching);
        g_hash_table_unref(vm->tags);
        g_free(vm->uuid);
        g_free(vm->name);
        g_free(vm->os);
        g_free(vm);
}

static VmEntry *find_by_domain(SluiceVmManager *self, GVirDomain *domain)
{
        const char *uuid = gvir_domain_get_uuid(domain);

        return uuid ? g_hash_table_lookup(self->vms, uuid) : NULL;
}

static void on_domain_event(GVirDomain *domain, gpointer user_data)
{
        VmEntry *vm = user_data;

        vm_refresh(vm);
}

static gboolean on_enable_shared_memory(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                        gpointer user_data);

static void vm_set_domain(VmEntry *vm, GVirDomain *domain)
{
        vm_detach_domain(vm);
        vm->domain = g_object_ref(domain);
        /* every lifecycle signal means "re-read the state" */
        static const char *const lifecycle[] = { "started", "stopped", "suspended", "resumed",
                                                 "updated", "pmsuspended" };
        for (gsize i = 0; i < G_N_ELEMENTS(lifecycle); i++)
                g_signal_connect(domain, lifecycle[i], G_CALLBACK(on_domain_event), vm);
}

static void vm_add(VmLink *link, GVirDomain *domain)
{
        SluiceVmManager *self = link->manager;
        const char *uuid = gvir_domain_get_uuid(domain);
        g_autofree char *path = NULL;
        VmEntry *vm;

        if (!uuid)
                return;
        vm = g_hash_table_lookup(self->vms, uuid);
        if (vm) {
                if (vm->link != link) {
                        g_warning("VM %s on %s has the same UUID as one on %s; ignoring it",
                                  gvir_domain_get_name(domain), link->uri, vm->link->uri);
                        return;
                }
                /* reconnected: the same VM, a new libvirt-glib object */
                vm_set_domain(vm, domain);
                vm_refresh(vm);
                return;
        }

        vm = g_new0(VmEntry, 1);
        vm->serial = ++serial_counter;
        vm->link = link;
        vm->uuid = g_strdup(uuid);
        vm->name = g_strdup(gvir_domain_get_name(domain));
        vm->os = g_strdup("");
        vm->qemu_uid = -1;
        vm->alias_to_tag = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        vm->detaching = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        vm->tags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_hash_table_insert(self->vms, vm->uuid, vm);

        path = object_path_for(uuid);
        vm->object = sluice_object_skeleton_new(path);
        vm->iface = sluice_vm_skeleton_new();
        sluice_vm_set_name(vm->iface, vm->name);
        sluice_vm_set_uuid(vm->iface, vm->uuid);
        sluice_vm_set_uri(vm->iface, link->uri);
        sluice_vm_set_state(vm->iface, "other");
        sluice_vm_set_shared_memory(vm->iface, FALSE);
        sluice_vm_set_os(vm->iface, "");
        g_signal_connect(vm->iface, "handle-enable-shared-memory",
                         G_CALLBACK(on_enable_shared_memory), self);
        sluice_object_skeleton_set_vm(vm->object, vm->iface);

        vm_set_domain(vm, domain);
        /* exported once its state is known (vm_refreshed) */
        vm_refresh(vm);
}

/* What a refresh read from libvirtd, in a worker thread. */
typedef struct {
        char *uuid;
        guint serial;
        guint64 tags_epoch;
        virDomainPtr domain;
        int state;
        SluiceDomainXml *parsed; /* NULL when the XML could not be read */
} RefreshData;

static void refresh_data_free(gpointer data)
{
        RefreshData *d = data;

        g_free(d->uuid);
        if (d->domain)
                virDomainFree(d->domain);
        g_clear_pointer(&d->parsed, sluice_domain_xml_free);
        g_free(d);
}

static void refresh_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        RefreshData *d = task_data;
        g_autofree char *xml = NULL;
        GError *error = NULL;
        int reason;

        if (virDomainGetState(d->domain, &d->state, &reason, 0) < 0) {
                sluice_hotplug_set_libvirt_error(&error, "cannot read the state");
                g_task_return_error(task, error);
                return;
        }
        xml = virDomainGetXMLDesc(d->domain, 0);
        if (xml)
                d->parsed = sluice_domain_xml_parse(xml, NULL);
        g_task_return_boolean(task, TRUE);
}

/* Applies a refresh (main thread); returns whether the VM started or stopped. */
static int vm_apply(VmEntry *vm, RefreshData *d)
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
                vm_forget_devices(vm);
        return vm->active ? 1 : -1;
}

static void vm_refreshed(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SluiceVmManager *self = user_data;
        GTask *task = G_TASK(result);
        RefreshData *d = g_task_get_task_data(task);
        g_autoptr(GError) error = NULL;
        g_autofree char *name = NULL;
        VmEntry *vm;
        int change = 0;

        if (!g_task_propagate_boolean(task, &error) &&
            g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return; /* the manager is gone */
        vm = g_hash_table_lookup(self->vms, d->uuid);
        if (!vm || vm->serial != d->serial)
                return;
        vm->refreshing = FALSE;
        if (error)
                g_debug("%s: %s: %s", vm->link->uri, vm->name, error->message);
        else
                change = vm_apply(vm, d);
        if (!vm->ready) {
                vm->ready = TRUE;
                if (self->server)
                        g_dbus_object_manager_server_export(self->server,
                                                            G_DBUS_OBJECT_SKELETON(vm->object));
        }
        if (vm->refresh_again) {
                vm->refresh_again = FALSE;
                vm_refresh(vm);
        }
        /* a handler may change the VM table: emit last, with our own copy */
        name = g_strdup(vm->name);
        if (change)
                g_signal_emit(self, signals[change > 0 ? SIGNAL_VM_STARTED : SIGNAL_VM_STOPPED], 0, name);
}

/* Re-reads state and XML in a worker thread; vm_refreshed applies them and
 * emits vm-started / vm-stopped on transitions.  One read per VM at a time:
 * events during a read coalesce into one more read after it. */
static void vm_refresh(VmEntry *vm)
{
        SluiceVmManager *self = vm->link->manager;
        g_autoptr(GTask) task = NULL;
        RefreshData *d;

        if (!vm->domain)
                return;
        if (vm->refreshing) {
                vm->refresh_again = TRUE;
                return;
        }
        d = g_new0(RefreshData, 1);
        d->domain = vm_raw_domain(vm);
        if (!d->domain) {
                refresh_data_free(d);
                return;
        }
        d->uuid = g_strdup(vm->uuid);
        d->serial = vm->serial;
        d->tags_epoch = vm->tags_epoch;
        vm->refreshing = TRUE;
        /* no source object: the manager may go first (the cancellable tells) */
        task = g_task_new(NULL, self->cancellable, vm_refreshed, self);
        g_task_set_task_data(task, d, refresh_data_free);
        g_task_run_in_thread(task, refresh_thread);
}

/* ---- connections --------------------------------------------------------- */

static void on_domain_added(GVirConnection *conn, GVirDomain *domain, gpointer user_data)
{
        vm_add(user_data, domain);
}

static void on_domain_removed(GVirConnection *conn, GVirDomain *domain, gpointer user_data)
{
        VmLink *link = user_data;
        VmEntry *vm = find_by_domain(link->manager, domain);

        /* libvirt-glib can report a removal twice; a transient domain that
         * stops is removed without a "stopped" first */
        if (!vm || vm->link != link)
                return;
        if (vm->active) {
                g_autofree char *name = g_strdup(vm->name);
                vm->active = FALSE;
                vm_forget_devices(vm);
                g_hash_table_remove(link->manager->vms, vm->uuid);
                g_signal_emit(link->manager, signals[SIGNAL_VM_STOPPED], 0, name);
                return;
        }
        g_hash_table_remove(link->manager->vms, vm->uuid);
}

static void on_device_removed(virConnectPtr conn, virDomainPtr domain, const char *alias,
                              void *opaque)
{
        VmLink *link = opaque;
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autofree char *tag = NULL;
        g_autofree char *name = NULL;
        VmEntry *vm;

        if (virDomainGetUUIDString(domain, uuid) < 0)
                return;
        vm = g_hash_table_lookup(link->manager->vms, uuid);
        if (!vm || vm->link != link || !alias)
                return;
        tag = g_strdup(g_hash_table_lookup(vm->alias_to_tag, alias));
        name = g_strdup(vm->name);
        g_hash_table_remove(vm->alias_to_tag, alias);
        if (!tag)
                return;
        g_hash_table_remove(vm->tags, tag);
        vm->tags_epoch++;
        /* Sluice's own detach gives the access back itself */
        if (!g_hash_table_contains(vm->detaching, tag)) {
                revoke_access(vm->uuid, tag);
                g_signal_emit(link->manager, signals[SIGNAL_DEVICE_REMOVED], 0, name, tag);
        }
}

static void on_device_added(virConnectPtr conn, virDomainPtr domain, const char *alias, void *opaque)
{
        VmLink *link = opaque;
        char uuid[VIR_UUID_STRING_BUFLEN];
        VmEntry *vm;

        if (virDomainGetUUIDString(domain, uuid) < 0)
                return;
        vm = g_hash_table_lookup(link->manager->vms, uuid);
        /* learn its tag and alias (plugged in by Sluice or by someone else) */
        if (vm && vm->link == link)
                vm_refresh(vm);
}

static void link_schedule_reconnect(VmLink *link);
static void on_connection_closed(virConnectPtr conn, int reason, void *opaque);

static void link_drop(VmLink *link)
{
        GHashTableIter iter;
        gpointer value;

        g_hash_table_iter_init(&iter, link->manager->vms);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                VmEntry *vm = value;
                if (vm->link == link)
                        vm_detach_domain(vm);
        }
        if (link->raw) {
                if (link->device_removed_id >= 0)
                        (void)virConnectDomainEventDeregisterAny(link->raw, link->device_removed_id);
                if (link->device_added_id >= 0)
                        (void)virConnectDomainEventDeregisterAny(link->raw, link->device_added_id);
                link->device_removed_id = link->device_added_id = -1;
                if (link->close_registered)
                        (void)virConnectUnregisterCloseCallback(link->raw, on_connection_closed);
                link->close_registered = FALSE;
                virConnectClose(link->raw);
                link->raw = NULL;
        }
        if (link->conn) {
                g_clear_signal_handler(&link->added_id, link->conn);
                g_clear_signal_handler(&link->removed_id, link->conn);
                g_clear_object(&link->conn);
        }
}

static gboolean link_lost_idle(gpointer data)
{
        VmLink *link = data;

        link->lost_source = 0;
        g_message("libvirt connection %s closed; reconnecting", link->uri);
        link_drop(link);
        link->retry_delay_s = RECONNECT_MIN_S;
        link_schedule_reconnect(link);
        return G_SOURCE_REMOVE;
}

static void on_connection_closed(virConnectPtr conn, int reason, void *opaque)
{
        VmLink *link = opaque;

        /* never tear a connection down inside its own callback; link_free
         * removes the source if the manager goes first */
        if (!link->lost_source)
                link->lost_source = g_idle_add(link_lost_idle, link);
}

static void on_domains_fetched(GObject *source, GAsyncResult *result, gpointer user_data)
{
        VmLink *link = user_data;
        GVirConnection *conn = GVIR_CONNECTION(source);
        g_autoptr(GError) error = NULL;
        GList *domains;
        GHashTableIter iter;
        gpointer value;

        if (!gvir_connection_fetch_domains_finish(conn, result, &error)) {
                /* cancelled: the manager (and link) may be gone */
                if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || link->conn != conn)
                        return;
                g_warning("libvirt %s: cannot list domains: %s", link->uri, error->message);
                link_drop(link);
                link_schedule_reconnect(link);
                return;
        }
        if (link->conn != conn)
                return;

        domains = gvir_connection_get_domains(conn);
        for (GList *l = domains; l; l = l->next)
                vm_add(link, l->data);
        g_list_free_full(domains, g_object_unref);

        /* VMs that went away while the link was down */
        g_hash_table_iter_init(&iter, link->manager->vms);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
                VmEntry *vm = value;
                if (vm->link != link || vm->domain)
                        continue;
                if (vm->active) {
                        g_autofree char *name = g_strdup(vm->name);
                        vm_forget_devices(vm);
                        g_hash_table_iter_remove(&iter);
                        g_signal_emit(link->manager, signals[SIGNAL_VM_STOPPED], 0, name);
                        /* a handler may have changed the table */
                        g_hash_table_iter_init(&iter, link->manager->vms);
                        continue;
                }
                g_hash_table_iter_remove(&iter);
        }
}

static void on_opened(GObject *source, GAsyncResult *result, gpointer user_data)
{
        VmLink *link = user_data;
        GVirConnection *conn = GVIR_CONNECTION(source);
        g_autoptr(GError) error = NULL;

        if (!gvir_connection_open_finish(conn, result, &error) &&
            g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
                g_object_unref(conn); /* the manager (and link) may be gone */
                return;
        }
        link->connecting = FALSE;
        if (error) {
                if (!link->warned)
                        g_message("libvirt %s not reachable (%s); retrying", link->uri, error->message);
                link->warned = TRUE;
                g_object_unref(conn);
                link_schedule_reconnect(link);
                return;
        }
        if (!link->manager->started) { /* stopped meanwhile */
                g_object_unref(conn);
                return;
        }

        link->conn = conn;
        link->warned = FALSE;
        link->retry_delay_s = RECONNECT_MIN_S;
        g_object_get(conn, "handle", &link->raw, NULL); /* a new reference */
        if (link->raw) {
                link->close_registered =
                        virConnectRegisterCloseCallback(link->raw, on_connection_closed, link, NULL) == 0;
                link->device_removed_id = virConnectDomainEventRegisterAny(
                        link->raw, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
                        VIR_DOMAIN_EVENT_CALLBACK(on_device_removed), link, NULL);
                link->device_added_id = virConnectDomainEventRegisterAny(
                        link->raw, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_ADDED,
                        VIR_DOMAIN_EVENT_CALLBACK(on_device_added), link, NULL);
        }
        link->added_id = g_signal_connect(conn, "domain-added", G_CALLBACK(on_domain_added), link);
        link->removed_id = g_signal_connect(conn, "domain-removed", G_CALLBACK(on_domain_removed), link);
        g_debug("libvirt %s connected", link->uri);
        gvir_connection_fetch_domains_async(conn, link->manager->cancellable, on_domains_fetched, link);
}

static void link_connect(VmLink *link)
{
        GVirConnection *conn;

        if (link->connecting || link->conn)
                return;
        link->connecting = TRUE;
        conn = gvir_connection_new(link->uri);
        gvir_connection_open_async(conn, link->manager->cancellable, on_opened, link);
}

static gboolean link_retry(gpointer data)
{
        VmLink *link = data;

        link->retry_source = 0;
        link_connect(link);
        return G_SOURCE_REMOVE;
}

static void link_schedule_reconnect(VmLink *link)
{
        if (link->retry_source || !link->manager->started)
                return;
        link->retry_source = g_timeout_add_seconds(link->retry_delay_s, link_retry, link);
        link->retry_delay_s = MIN(link->retry_delay_s * 2, RECONNECT_MAX_S);
}

static void link_free(gpointer data)
{
        VmLink *link = data;

        g_clear_handle_id(&link->retry_source, g_source_remove);
        g_clear_handle_id(&link->lost_source, g_source_remove);
        link_drop(link);
        g_free(link->uri);
        g_free(link);
}

/* ---- EnableSharedMemory ---------------------------------------------------- */

/* One Vm.EnableSharedMemory call: what the thread needs, copied in the main thread. */
typedef struct {
        virDomainPtr domain;
        char *uuid;
        char *name;
        gboolean active;
        gboolean shared_memory;
        GDBusMethodInvocation *invocation; /* answered in the main thread */
} SharedMemoryCall;

static void shared_memory_call_free(gpointer data)
{
        SharedMemoryCall *c = data;

        if (c->domain)
                virDomainFree(c->domain);
        g_free(c->uuid);
        g_free(c->name);
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

        if (virDomainIsPersistent(c->domain) != 1) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("The VM “%s” is transient (it has no saved definition to change); "
                              "add shared memory to the XML it is started from."), c->name);
                return NULL;
        }
        /* SECURE: keep passwords (VNC, SPICE) that the plain XML leaves out */
        xml = virDomainGetXMLDesc(c->domain, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (!xml) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM’s definition"));
                return NULL;
        }
        new_xml = sluice_domain_xml_enable_shared_memory(xml, &changed, error);
        if (!new_xml)
                return NULL;
        if (changed) {
                defined = virDomainDefineXML(virDomainGetConnect(c->domain), new_xml);
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

static void enable_shared_memory_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SluiceVmManager *self = user_data;
        SharedMemoryCall *c = g_task_get_task_data(G_TASK(result));
        GDBusMethodInvocation *invocation = g_steal_pointer(&c->invocation);
        g_autoptr(GError) error = NULL;
        g_autofree char *message = g_task_propagate_pointer(G_TASK(result), &error);
        VmEntry *vm;

        if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
                /* the manager is gone (the service stops): answer, touch nothing else */
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                                                      _("Sluice is stopping; try again when it runs."));
                return;
        }
        if (!message) {
                g_dbus_method_invocation_return_gerror(invocation, error);
                return;
        }
        vm = g_hash_table_lookup(self->vms, c->uuid);
        if (vm)
                vm_refresh(vm);
        g_dbus_method_invocation_return_value(invocation, g_variant_new("(s)", message));
}

static gboolean on_enable_shared_memory(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                        gpointer user_data)
{
        SluiceVmManager *self = user_data;
        VmEntry *vm = g_hash_table_lookup(self->vms, sluice_vm_get_uuid(iface));
        g_autoptr(GTask) task = NULL;
        SharedMemoryCall *c;

        if (!vm) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                                                      _("The VM no longer exists."));
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        c = g_new0(SharedMemoryCall, 1);
        c->domain = vm_raw_domain(vm);
        if (!c->domain) {
                shared_memory_call_free(c);
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                                                      _("The connection to libvirt (%s) is down; try again in a moment."),
                                                      vm->link->uri);
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        c->uuid = g_strdup(vm->uuid);
        c->name = g_strdup(vm->name);
        c->active = vm->active;
        c->shared_memory = vm->shared_memory;
        c->invocation = g_object_ref(invocation);
        task = g_task_new(NULL, self->cancellable, enable_shared_memory_done, self);
        g_task_set_task_data(task, c, shared_memory_call_free);
        g_task_run_in_thread(task, enable_shared_memory_thread);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- public API -------------------------------------------------------------- */

static void sluice_vm_manager_dispose(GObject *object)
{
        SluiceVmManager *self = SLUICE_VM_MANAGER(object);

        self->started = FALSE;
        if (self->cancellable)
                g_cancellable_cancel(self->cancellable);
        /* nothing of ours stays granted to QEMU's user after the service */
        if (self->vms)
                sluice_socket_access_revoke_all();
        g_clear_object(&self->cancellable);
        if (self->vms)
                g_hash_table_remove_all(self->vms);
        g_clear_pointer(&self->links, g_ptr_array_unref);
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
}

static void sluice_vm_manager_init(SluiceVmManager *self)
{
        self->links = g_ptr_array_new_with_free_func(link_free);
        self->vms = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, vm_entry_free);
        self->cancellable = g_cancellable_new();
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
        for (const char *const *u = uris; *u; u++) {
                VmLink *link = g_new0(VmLink, 1);

                link->manager = self;
                link->uri = g_strdup(*u);
                link->device_removed_id = -1;
                link->device_added_id = -1;
                link->retry_delay_s = RECONNECT_MIN_S;
                g_ptr_array_add(self->links, link);
        }
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
        for (guint i = 0; i < self->links->len; i++)
                link_connect(self->links->pdata[i]);
}

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

static VmEntry *find_vm(SluiceVmManager *self, const char *vm_id, GError **error)
{
        GHashTableIter iter;
        gpointer value;
        VmEntry *found = NULL;
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
                VmEntry *vm = value;
                /* a VM is known once its state is */
                if (!vm->ready)
                        continue;
                if (g_str_equal(vm->name, vm_id) || g_ascii_strcasecmp(vm->uuid, vm_id) == 0) {
                        /* the session VM wins over a system VM of the same name */
                        if (!found || g_str_equal(vm->link->uri, "qemu:///session"))
                                found = vm;
                        matches++;
                }
        }
        if (!found)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                            _("There is no VM “%s” (looked in %u libvirt connections)."),
                            vm_id, self->links->len);
        else if (matches > 1)
                g_debug("several VMs named %s; using the one on %s", vm_id, found->link->uri);
        return found;
}

SluiceVmInfo *sluice_vm_manager_lookup(SluiceVmManager *self, const char *vm_id, GError **error)
{
        VmEntry *vm;
        SluiceVmInfo *info;

        g_return_val_if_fail(SLUICE_IS_VM_MANAGER(self), NULL);
        vm = find_vm(self, vm_id, error);
        if (!vm)
                return NULL;
        info = g_new0(SluiceVmInfo, 1);
        info->name = g_strdup(vm->name);
        info->uuid = g_strdup(vm->uuid);
        info->uri = g_strdup(vm->link->uri);
        info->os = g_strdup(vm->os);
        info->running = vm->active;
        info->shared_memory = vm->shared_memory;
        info->qemu_uid = vm->qemu_uid;
        return info;
}

/* What the guest needs to do, for the VM's OS. */
static char *guest_hint(const VmEntry *vm, const char *tag)
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

typedef struct {
        char *uuid;
        char *socket_path;
        char *tag;
        char *hint;
        virDomainPtr domain;
} HotplugData;

static void hotplug_data_free(gpointer data)
{
        HotplugData *d = data;

        g_free(d->uuid);
        g_free(d->socket_path);
        g_free(d->tag);
        g_free(d->hint);
        if (d->domain)
                virDomainFree(d->domain);
        g_free(d);
}

static void attach_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        HotplugData *d = task_data;
        GError *error = NULL;

        if (sluice_hotplug_attach(d->domain, d->socket_path, d->tag, &error))
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
        VmEntry *vm = g_hash_table_lookup(self->vms, d->uuid);
        GError *error = NULL;

        if (vm) {
                gboolean attach = g_task_get_source_tag(outer) == sluice_vm_manager_attach_async;

                g_hash_table_remove(vm->detaching, d->tag);
                /* is_attached answers from this at once; the refresh confirms it */
                if (!g_task_had_error(inner)) {
                        if (attach)
                                g_hash_table_add(vm->tags, g_strdup(d->tag));
                        else
                                g_hash_table_remove(vm->tags, d->tag);
                        vm->tags_epoch++;
                }
                vm_refresh(vm);
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
        VmEntry *vm = find_vm(self, vm_id, &error);
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
                                        vm->link->uri);
                return FALSE;
        }
        d = g_new0(HotplugData, 1);
        d->uuid = g_strdup(vm->uuid);
        d->socket_path = g_strdup(socket_path);
        d->tag = g_strdup(tag);
        d->hint = guest_hint(vm, tag);
        d->domain = vm_raw_domain(vm);
        if (!attach)
                g_hash_table_add(vm->detaching, g_strdup(tag));

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

/* From the state kept current by refreshes, device events and Sluice's own
 * hot-plug results: no call to libvirtd. */
gboolean sluice_vm_manager_is_attached(SluiceVmManager *self, const char *vm_id, const char *tag)
{
        VmEntry *vm = find_vm(self, vm_id, NULL);

        return vm && vm->active && tag && g_hash_table_contains(vm->tags, tag);
}
