/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-hotplug-slots.c — see vm-hotplug-slots.h.  The Vm skeleton is
 * vm-domain.c's; this file only sets HotplugSlots on it and answers
 * AddHotplugSlots, so that the machine's slots stay one concern. */
#include "config.h"

#include "vm-hotplug-slots.h"
#include "errors.h"
#include "hotplug-slots.h"
#include "hotplug.h"

#include <glib/gi18n.h>

/* HotplugSlots while not counted (documented in data/org.sluice.Sluice1.xml) */
#define SLOTS_UNKNOWN G_MAXUINT32

/* ---- counting ------------------------------------------------------------------ */

/* One count at a time per VM; kept on its skeleton, which lives as long as the entry */
typedef struct {
        gboolean counting;
        gboolean again;
} CountState;

static CountState *count_state(SluiceVmDomain *vm)
{
        static GQuark quark;
        CountState *state;

        if (!quark)
                quark = g_quark_from_static_string("sluice-vm-hotplug-slots");
        state = g_object_get_qdata(G_OBJECT(vm->iface), quark);
        if (!state) {
                state = g_new0(CountState, 1);
                g_object_set_qdata_full(G_OBJECT(vm->iface), quark, state, g_free);
        }
        return state;
}

typedef struct {
        SluiceVmDomain *vm;
        virDomainPtr domain;
} CountData;

static void count_data_free(gpointer data)
{
        CountData *d = data;

        sluice_vm_domain_unref(d->vm);
        g_clear_pointer(&d->domain, virDomainFree);
        g_free(d);
}

static void count_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        CountData *d = task_data;
        /* the live definition while it runs, else the saved one */
        g_autofree char *xml = virDomainGetXMLDesc(d->domain, 0);
        SluiceHotplugSlots slots;
        GError *error = NULL;

        if (!xml)
                sluice_hotplug_set_libvirt_error(&error, "cannot read the definition");
        /* here, not with the result: the connection is not kept open for a
         * main loop that may not run again (a manager being disposed) */
        g_clear_pointer(&d->domain, virDomainFree);
        if (!xml) {
                g_task_return_error(task, error);
                return;
        }
        if (!sluice_hotplug_slots_count(xml, &slots, &error)) {
                g_task_return_error(task, error);
                return;
        }
        g_task_return_int(task, slots.bus == SLUICE_HOTPLUG_BUS_NONE ? SLOTS_UNKNOWN : slots.free);
}

static void on_counted(GObject *source, GAsyncResult *result, gpointer user_data)
{
        CountData *d = g_task_get_task_data(G_TASK(result));
        g_autoptr(SluiceVmDomain) vm = sluice_vm_domain_ref(d->vm);
        g_autoptr(GError) error = NULL;
        gssize free_slots = g_task_propagate_int(G_TASK(result), &error);
        CountState *state;

        if (vm->removed)
                return;
        state = count_state(vm);
        state->counting = FALSE;
        if (error)
                g_debug("%s: hot-plug slots: %s", vm->name, error->message);
        else if (!state->again)
                sluice_vm_set_hotplug_slots(vm->iface, (guint)free_slots);
        if (state->again) {
                state->again = FALSE;
                sluice_vm_hotplug_slots_refresh(vm);
        }
}

void sluice_vm_hotplug_slots_refresh(SluiceVmDomain *vm)
{
        g_autoptr(GTask) task = NULL;
        CountState *state;
        CountData *d;
        virDomainPtr raw;

        if (vm->removed)
                return;
        state = count_state(vm);
        if (state->counting) {
                state->again = TRUE;
                return;
        }
        raw = sluice_vm_domain_get_raw(vm);
        if (!raw)
                return;
        d = g_new0(CountData, 1);
        d->vm = sluice_vm_domain_ref(vm);
        d->domain = raw;
        state->counting = TRUE;
        task = g_task_new(NULL, NULL, on_counted, NULL);
        g_task_set_task_data(task, d, count_data_free);
        g_task_run_in_thread(task, count_thread);
}

/* ---- AddHotplugSlots ----------------------------------------------------------- */

typedef struct {
        SluiceVmDomain *vm;
        virDomainPtr domain;
        char *name;
        char *uri;
        guint count;
        GDBusMethodInvocation *invocation; /* answered once, in the main thread */
        guint answer_timeout;
} AddCall;

static void add_call_free(gpointer data)
{
        AddCall *c = data;

        sluice_vm_domain_unref(c->vm);
        g_clear_pointer(&c->domain, virDomainFree);
        g_free(c->name);
        g_free(c->uri);
        g_clear_object(&c->invocation);
        g_free(c);
}

/* The saved definition's root ports, or -1 with ERROR set. */
static gint64 saved_root_ports(virDomainPtr domain, GError **error)
{
        g_autofree char *xml = virDomainGetXMLDesc(domain, VIR_DOMAIN_XML_INACTIVE);
        SluiceHotplugSlots slots;

        if (!xml) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM's definition"));
                return -1;
        }
        return sluice_hotplug_slots_count(xml, &slots, error) ? (gint64)slots.root_ports : -1;
}

/* Worker thread: rewrites the saved definition; returns the ports added or -1. */
static gint64 add_root_ports(const AddCall *c, GError **error)
{
        g_autofree char *xml = NULL;
        g_autofree char *new_xml = NULL;
        virDomainPtr defined;
        gint64 before, after;
        int persistent = virDomainIsPersistent(c->domain);

        if (persistent < 0) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM's definition"));
                return -1;
        }
        if (!persistent) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("The VM “%s” is transient (it has no saved definition to change); add "
                              "<controller type='pci' model='pcie-root-port'/> lines to the XML it is "
                              "started from."),
                            c->name);
                return -1;
        }
        /* SECURE: keep passwords (VNC, SPICE) that the plain XML leaves out */
        xml = virDomainGetXMLDesc(c->domain, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (!xml) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM's definition"));
                return -1;
        }
        before = saved_root_ports(c->domain, error);
        if (before < 0)
                return -1;
        new_xml = sluice_hotplug_slots_add_root_ports(xml, c->name, c->count, error);
        if (!new_xml)
                return -1;
        defined = virDomainDefineXML(virDomainGetConnect(c->domain), new_xml);
        if (!defined) {
                sluice_hotplug_set_libvirt_error(error, _("libvirt refused the new definition"));
                return -1;
        }
        virDomainFree(defined);
        /* what libvirt kept, read back: the caller's figure is the saved one */
        after = saved_root_ports(c->domain, error);
        if (after < 0)
                return -1;
        return after > before ? after - before : 0;
}

static void add_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        AddCall *c = task_data;
        GError *error = NULL;
        gint64 added = add_root_ports(c, &error);

        /* as count_thread: the domain's reference goes in the thread */
        g_clear_pointer(&c->domain, virDomainFree);

        if (added < 0)
                g_task_return_error(task, error);
        else
                g_task_return_int(task, (gssize)added);
}

/* libvirtd is slow or stalled: the caller hears so before its own timeout;
 * the thread goes on, and HotplugSlots or a later call tells the outcome. */
static gboolean on_add_timeout(gpointer user_data)
{
        AddCall *c = g_task_get_task_data(G_TASK(user_data));
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);

        c->answer_timeout = 0;
        g_dbus_method_invocation_return_error(
                invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                _("libvirt (%s) has not answered within %d seconds; the root ports may still be added to "
                  "“%s”. Look at its definition (virsh dumpxml --inactive) before you try again."),
                c->uri, SLUICE_VM_ANSWER_TIMEOUT_S, c->name);
        return G_SOURCE_REMOVE;
}

static void on_added(GObject *source, GAsyncResult *result, gpointer user_data)
{
        AddCall *c = g_task_get_task_data(G_TASK(result));
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);
        g_autoptr(GError) error = NULL;
        gssize added = g_task_propagate_int(G_TASK(result), &error);

        g_clear_handle_id(&c->answer_timeout, g_source_remove);
        if (!error)
                g_message("%s: %zd PCIe root ports added to its saved definition", c->name, added);
        /* a stopped VM's count is the saved definition's: it changed */
        sluice_vm_domain_refresh(c->vm);
        if (!invocation) /* answered at the timeout */
                return;
        if (error)
                g_dbus_method_invocation_return_gerror(invocation, error);
        else
                sluice_vm_complete_add_hotplug_slots(c->vm->iface, invocation, (guint)added);
}

static gboolean on_add_hotplug_slots(SluiceVm *iface, GDBusMethodInvocation *invocation, guint count,
                                     gpointer user_data)
{
        SluiceVmDomain *vm = user_data;
        g_autoptr(GTask) task = NULL;
        virDomainPtr raw;
        AddCall *c;

        if (count == 0)
                count = SLUICE_HOTPLUG_SLOTS_DEFAULT;
        if (count > SLUICE_HOTPLUG_SLOTS_MAX) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                                      _("Sluice adds 1 to %u root ports at a time, not %u."),
                                                      SLUICE_HOTPLUG_SLOTS_MAX, count);
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        raw = sluice_vm_domain_get_raw(vm);
        if (!raw) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                                                      _("The connection to libvirt (%s) is down; try again in a moment."),
                                                      sluice_vm_connection_get_uri(vm->connection));
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        /* it changes the VM's saved definition: worth a line in the log */
        g_message("Adding %u PCIe root ports to the definition of %s (%s)", count, vm->name,
                  sluice_vm_connection_get_uri(vm->connection));
        c = g_new0(AddCall, 1);
        c->vm = sluice_vm_domain_ref(vm);
        c->domain = raw;
        c->name = g_strdup(vm->name);
        c->uri = g_strdup(sluice_vm_connection_get_uri(vm->connection));
        c->count = count;
        c->invocation = g_object_ref(invocation);
        task = g_task_new(NULL, NULL, on_added, NULL);
        g_task_set_task_data(task, c, add_call_free);
        c->answer_timeout = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, SLUICE_VM_ANSWER_TIMEOUT_S,
                                                       on_add_timeout, g_object_ref(task), g_object_unref);
        g_task_run_in_thread(task, add_thread);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

void sluice_vm_hotplug_slots_export(SluiceVmDomain *vm)
{
        sluice_vm_set_hotplug_slots(vm->iface, SLOTS_UNKNOWN);
        /* data = vm: sluice_vm_domain_remove() disconnects it with the others */
        g_signal_connect(vm->iface, "handle-add-hotplug-slots", G_CALLBACK(on_add_hotplug_slots), vm);
}
