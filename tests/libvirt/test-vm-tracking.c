/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-vm-tracking.c — the VM manager against libvirt's test:///default
 * driver (in-process, shared by every connection of this process): Vm
 * objects appear, follow the domain's lifecycle and go away; attach refuses
 * what it must (stopped VM, no shared memory, tag in use, bad tag); Vm
 * EnableSharedMemory over D-Bus rewrites the persistent definition; the
 * guest agent's state (no channel, a channel nobody answers on: this driver
 * has no agent), EnableGuestAgent, and guest operations refused at once
 * where no agent can run them; Vm.Confinement and Vm.ConfinementProblem of
 * a VM confined by AppArmor. */
#include "config.h"

#include "confinement-model.h"
#include "errors.h"
#include "sluice-dbus.h"
#include "sluice-names.h"
#include "vm-guest.h"
#include "vm-manager.h"

#include <glib/gstdio.h>
#include <libvirt/libvirt.h>

#define URI "test:///default"
#define TIMEOUT_US (10 * G_USEC_PER_SEC)

typedef struct {
        GTestDBus *bus;
        GDBusConnection *conn;
        GDBusObjectManagerServer *server;
        SluiceVmManager *manager;
        virConnectPtr raw;
        GPtrArray *events; /* "started:NAME", "stopped:NAME", "guest:NAME" */
} Fixture;

static void on_started(SluiceVmManager *m, const char *name, Fixture *f)
{
        g_ptr_array_add(f->events, g_strdup_printf("started:%s", name));
}

static void on_stopped(SluiceVmManager *m, const char *name, Fixture *f)
{
        g_ptr_array_add(f->events, g_strdup_printf("stopped:%s", name));
}

static void on_guest_changed(SluiceVmManager *m, const char *name, Fixture *f)
{
        g_ptr_array_add(f->events, g_strdup_printf("guest:%s", name));
}

typedef gboolean (*Condition)(Fixture *f, gconstpointer data);

static gboolean wait_for(Fixture *f, Condition cond, gconstpointer data)
{
        gint64 deadline = g_get_monotonic_time() + TIMEOUT_US;

        while (!cond(f, data)) {
                if (g_get_monotonic_time() > deadline)
                        return FALSE;
                g_main_context_iteration(NULL, FALSE);
                g_usleep(1000);
        }
        return TRUE;
}

static gboolean vm_known(Fixture *f, gconstpointer name)
{
        g_autoptr(SluiceVmInfo) info = sluice_vm_manager_lookup(f->manager, name, NULL);
        return info != NULL;
}

static gboolean vm_gone(Fixture *f, gconstpointer name)
{
        return !vm_known(f, name);
}

static gboolean has_event(Fixture *f, gconstpointer event)
{
        for (guint i = 0; i < f->events->len; i++)
                if (g_str_equal(f->events->pdata[i], event))
                        return TRUE;
        return FALSE;
}

static SluiceVm *vm_object(Fixture *f, const char *name)
{
        g_autoptr(SluiceVmInfo) info = sluice_vm_manager_lookup(f->manager, name, NULL);
        g_autoptr(GString) path = g_string_new(SLUICE_VM_PATH_PREFIX);
        g_autoptr(GDBusObject) object = NULL;

        g_assert_nonnull(info);
        for (const char *c = info->uuid; *c; c++)
                if (*c != '-')
                        g_string_append_c(path, *c);
        object = g_dbus_object_manager_get_object(G_DBUS_OBJECT_MANAGER(f->server), path->str);
        g_assert_nonnull(object);
        return SLUICE_VM(g_dbus_object_get_interface(object, SLUICE_VM_INTERFACE));
}

static void fixture_setup(Fixture *f, gconstpointer data)
{
        const char *uris[] = { URI, NULL };

        f->bus = g_test_dbus_new(G_TEST_DBUS_NONE);
        g_test_dbus_up(f->bus);
        f->conn = g_dbus_connection_new_for_address_sync(g_test_dbus_get_bus_address(f->bus),
                                                         G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                         G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                         NULL, NULL, NULL);
        g_assert_nonnull(f->conn);
        f->server = g_dbus_object_manager_server_new(SLUICE_OBJECT_ROOT);
        g_dbus_object_manager_server_set_connection(f->server, f->conn);
        f->events = g_ptr_array_new_with_free_func(g_free);
        f->manager = sluice_vm_manager_new(f->server, uris);
        g_signal_connect(f->manager, "vm-started", G_CALLBACK(on_started), f);
        g_signal_connect(f->manager, "vm-stopped", G_CALLBACK(on_stopped), f);
        g_signal_connect(f->manager, "guest-changed", G_CALLBACK(on_guest_changed), f);
        sluice_vm_manager_start(f->manager);
        /* the same in-process test driver state as the manager's connection */
        f->raw = virConnectOpen(URI);
        g_assert_nonnull(f->raw);
        g_assert_true(wait_for(f, vm_known, "test"));
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
        g_clear_object(&f->manager);
        virConnectClose(f->raw);
        g_clear_object(&f->server);
        g_dbus_connection_close_sync(f->conn, NULL, NULL);
        g_clear_object(&f->conn);
        g_test_dbus_down(f->bus);
        g_clear_object(&f->bus);
        g_ptr_array_unref(f->events);
}

static void test_initial_vm(Fixture *f, gconstpointer data)
{
        g_autoptr(SluiceVm) vm = vm_object(f, "test");
        g_autoptr(SluiceVmInfo) info = sluice_vm_manager_lookup(f->manager, "test", NULL);
        g_autoptr(SluiceVmInfo) by_uuid = sluice_vm_manager_lookup(f->manager, info->uuid, NULL);

        g_assert_cmpstr(sluice_vm_get_name(vm), ==, "test");
        g_assert_cmpstr(sluice_vm_get_uri(vm), ==, URI);
        g_assert_cmpstr(sluice_vm_get_uuid(vm), ==, info->uuid);
        g_assert_cmpstr(sluice_vm_get_state(vm), ==, "running");
        g_assert_false(sluice_vm_get_shared_memory(vm));
        g_assert_cmpstr(sluice_vm_get_os(vm), ==, "");
        g_assert_true(info->running);
        g_assert_nonnull(by_uuid);
        g_assert_cmpstr(by_uuid->name, ==, "test");
        /* the VM that was running at start-up counts as started */
        g_assert_true(has_event(f, "started:test"));
}

static gboolean state_is(Fixture *f, gconstpointer state)
{
        g_autoptr(SluiceVm) vm = vm_object(f, "test");
        return g_str_equal(sluice_vm_get_state(vm), state);
}

static void test_lifecycle(Fixture *f, gconstpointer data)
{
        virDomainPtr dom = virDomainLookupByName(f->raw, "test");

        g_assert_nonnull(dom);
        g_assert_cmpint(virDomainDestroy(dom), ==, 0);
        g_assert_true(wait_for(f, has_event, "stopped:test"));
        g_assert_true(wait_for(f, state_is, "shutoff"));

        g_assert_cmpint(virDomainCreate(dom), ==, 0);
        g_ptr_array_set_size(f->events, 0);
        g_assert_true(wait_for(f, has_event, "started:test"));
        g_assert_true(wait_for(f, state_is, "running"));

        g_assert_cmpint(virDomainSuspend(dom), ==, 0);
        g_assert_true(wait_for(f, state_is, "paused"));
        g_assert_cmpint(virDomainResume(dom), ==, 0);
        g_assert_true(wait_for(f, state_is, "running"));
        virDomainFree(dom);
}

#define WIN_XML \
        "<domain type='test'><name>%s</name><memory>262144</memory>" \
        "<metadata><libosinfo:libosinfo xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'>" \
        "<libosinfo:os id='http://microsoft.com/win/11'/></libosinfo:libosinfo></metadata>" \
        "<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>" \
        "<os><type>hvm</type></os><devices>" \
        "<filesystem type='mount'><driver type='virtiofs'/><source socket='/tmp/other.sock'/>" \
        "<target dir='taken'/></filesystem></devices></domain>"

static void test_added_removed(Fixture *f, gconstpointer data)
{
        g_autofree char *xml = g_strdup_printf(WIN_XML, "win-vm");
        virDomainPtr dom = virDomainDefineXML(f->raw, xml);
        g_autoptr(SluiceVm) vm = NULL;

        g_assert_nonnull(dom);
        g_assert_true(wait_for(f, vm_known, "win-vm"));
        vm = vm_object(f, "win-vm");
        g_assert_cmpstr(sluice_vm_get_os(vm), ==, "win11");
        g_assert_true(sluice_vm_get_shared_memory(vm));
        g_assert_cmpstr(sluice_vm_get_state(vm), ==, "shutoff");

        g_assert_cmpint(virDomainUndefine(dom), ==, 0);
        g_assert_true(wait_for(f, vm_gone, "win-vm"));
        virDomainFree(dom);
}

typedef struct {
        gboolean done;
        char *hint;
        GError *error;
} AttachResult;

static void attach_done(GObject *source, GAsyncResult *result, gpointer data)
{
        AttachResult *r = data;

        r->hint = sluice_vm_manager_attach_finish(SLUICE_VM_MANAGER(source), result, &r->error);
        r->done = TRUE;
}

static gboolean attach_finished(Fixture *f, gconstpointer data)
{
        return ((const AttachResult *)data)->done;
}

static void attach_expect(Fixture *f, const char *vm, const char *tag, int code)
{
        AttachResult r = { 0 };

        sluice_vm_manager_attach_async(f->manager, vm, "/tmp/sluice-test.sock", tag, NULL, attach_done, &r);
        g_assert_true(wait_for(f, attach_finished, &r));
        g_assert_null(r.hint);
        g_assert_error(r.error, SLUICE_ERROR, code);
        g_test_message("%s: %s", tag, r.error->message);
        g_clear_error(&r.error);
}

static void test_attach_refusals(Fixture *f, gconstpointer data)
{
        g_autofree char *xml = g_strdup_printf(WIN_XML, "win-run");
        virDomainPtr dom = virDomainDefineXML(f->raw, xml);
        virDomainPtr test = virDomainLookupByName(f->raw, "test");

        attach_expect(f, "no-such-vm", "docs", SLUICE_ERROR_NOT_FOUND);
        attach_expect(f, "", "docs", SLUICE_ERROR_NO_VM);
        attach_expect(f, "test", "docs", SLUICE_ERROR_NO_SHARED_MEMORY);
        attach_expect(f, "test", "bad\ntag", SLUICE_ERROR_INVALID_ARGUMENT);

        g_assert_true(wait_for(f, vm_known, "win-run"));
        attach_expect(f, "win-run", "docs", SLUICE_ERROR_VM_NOT_RUNNING);
        g_assert_cmpint(virDomainCreate(dom), ==, 0);
        g_assert_true(wait_for(f, has_event, "started:win-run"));
        /* libvirt does not check tags: Sluice does */
        attach_expect(f, "win-run", "taken", SLUICE_ERROR_TAG_IN_USE);
        g_assert_true(sluice_vm_manager_is_attached(f->manager, "win-run", "taken"));
        g_assert_false(sluice_vm_manager_is_attached(f->manager, "win-run", "docs"));
        g_assert_false(sluice_vm_manager_is_attached(f->manager, "test", "taken"));

        virDomainDestroy(dom);
        virDomainUndefine(dom);
        virDomainFree(dom);
        virDomainFree(test);
}

typedef struct {
        gboolean done;
        gboolean ok;
        char *message;
        GError *error;
} CallResult;

static void call_done(GObject *source, GAsyncResult *result, gpointer data)
{
        CallResult *r = data;

        r->ok = sluice_vm_call_enable_shared_memory_finish(SLUICE_VM(source), &r->message, result, &r->error);
        r->done = TRUE;
}

static void agent_call_done(GObject *source, GAsyncResult *result, gpointer data)
{
        CallResult *r = data;

        r->ok = sluice_vm_call_enable_guest_agent_finish(SLUICE_VM(source), &r->message, result, &r->error);
        r->done = TRUE;
}

static gboolean call_finished(Fixture *f, gconstpointer data)
{
        return ((const CallResult *)data)->done;
}

/* Calls Vm.EnableSharedMemory (or EnableGuestAgent) over the bus, as a client would. */
static CallResult enable_call(Fixture *f, SluiceVm *vm, gboolean agent)
{
        g_autoptr(SluiceVm) proxy = NULL;
        g_autoptr(GError) error = NULL;
        CallResult r = { 0 };

        proxy = sluice_vm_proxy_new_sync(f->conn, G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES,
                                         g_dbus_connection_get_unique_name(f->conn),
                                         g_dbus_interface_skeleton_get_object_path(G_DBUS_INTERFACE_SKELETON(vm)),
                                         NULL, &error);
        g_assert_no_error(error);
        if (agent)
                sluice_vm_call_enable_guest_agent(proxy, NULL, agent_call_done, &r);
        else
                sluice_vm_call_enable_shared_memory(proxy, NULL, call_done, &r);
        g_assert_true(wait_for(f, call_finished, &r));
        return r;
}

static CallResult enable_shared_memory_call(Fixture *f, SluiceVm *vm)
{
        return enable_call(f, vm, FALSE);
}

static void test_enable_shared_memory(Fixture *f, gconstpointer data)
{
        g_autoptr(SluiceVm) vm = vm_object(f, "test");
        g_autofree char *xml = NULL;
        CallResult r = enable_shared_memory_call(f, vm);
        virDomainPtr dom;

        g_assert_no_error(r.error);
        g_assert_true(r.ok);
        g_test_message("%s", r.message);
        g_assert_nonnull(strstr(r.message, "next boot"));
        g_free(r.message);

        dom = virDomainLookupByName(f->raw, "test");
        xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
        g_assert_nonnull(strstr(xml, "<source type='memfd'/>"));
        g_assert_nonnull(strstr(xml, "<access mode='shared'/>"));
        /* the rest of the definition is still there */
        g_assert_nonnull(strstr(xml, "<name>test</name>"));
        g_assert_nonnull(strstr(xml, "<interface"));
        /* running VM: not yet (live definition unchanged) */
        g_assert_false(sluice_vm_get_shared_memory(vm));

        virDomainDestroy(dom);
        g_assert_true(wait_for(f, state_is, "shutoff"));
        g_assert_true(sluice_vm_get_shared_memory(vm));
        virDomainFree(dom);
}

static void test_enable_shared_memory_refused(Fixture *f, gconstpointer data)
{
        const char *xml = "<domain type='test'><name>huge</name><memory>262144</memory>"
                          "<memoryBacking><hugepages/></memoryBacking><os><type>hvm</type></os></domain>";
        virDomainPtr dom = virDomainDefineXML(f->raw, xml);
        g_autoptr(SluiceVm) vm = NULL;
        g_autofree char *remote = NULL;
        CallResult r;

        g_assert_nonnull(dom);
        g_assert_true(wait_for(f, vm_known, "huge"));
        vm = vm_object(f, "huge");
        r = enable_shared_memory_call(f, vm);
        g_assert_false(r.ok);
        remote = g_dbus_error_get_remote_error(r.error);
        g_assert_cmpstr(remote, ==, SLUICE_ERROR_NAME_PREFIX "Unsupported");
        g_assert_error(r.error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED);
        g_assert_nonnull(strstr(r.error->message, "huge pages"));
        g_clear_error(&r.error);
        virDomainUndefine(dom);
        virDomainFree(dom);
}

/* ---- the guest agent ---- */

typedef struct {
        const char *vm;
        const char *agent;
        const char *message_part;
} AgentExpect;

static gboolean agent_is(Fixture *f, gconstpointer data)
{
        const AgentExpect *e = data;
        g_autoptr(SluiceVm) vm = vm_object(f, e->vm);

        return g_str_equal(sluice_vm_get_guest_agent(vm), e->agent) &&
               (e->message_part == NULL || strstr(sluice_vm_get_guest_agent_message(vm), e->message_part) != NULL);
}

static void assert_agent(Fixture *f, const char *name, const char *agent, const char *message_part)
{
        AgentExpect e = { name, agent, message_part };
        g_autoptr(SluiceVm) vm = NULL;

        if (!wait_for(f, agent_is, &e)) {
                vm = vm_object(f, name);
                g_error("%s: GuestAgent %s (%s), expected %s (…%s…)", name, sluice_vm_get_guest_agent(vm),
                        sluice_vm_get_guest_agent_message(vm), agent, message_part ? message_part : "");
        }
        vm = vm_object(f, name);
        g_test_message("%s: %s: %s", name, agent, sluice_vm_get_guest_agent_message(vm));
        g_assert_cmpstr(sluice_vm_get_guest_os_type(vm), ==, "");
        g_assert_cmpstr(sluice_vm_get_guest_os_name(vm), ==, "");
        g_assert_false(sluice_vm_manager_guest_ready(f->manager, name));
}

#define AGENT_XML \
        "<domain type='test'><name>%s</name><memory>262144</memory>" \
        "<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>" \
        "<os><type>hvm</type></os><devices>" \
        "<channel type='unix'><source mode='bind' path='/tmp/vm-test-agent.sock'/>" \
        "<target type='virtio' name='org.qemu.guest_agent.0'/></channel></devices></domain>"

static void test_agent_none(Fixture *f, gconstpointer data)
{
        assert_agent(f, "test", "none", "enable-agent");
        g_assert_cmpint(sluice_vm_manager_guest_agent(f->manager, "test"), ==, SLUICE_WIRE_AGENT_NONE);
        g_assert_cmpint(sluice_vm_manager_guest_agent(f->manager, "no-such-vm"), ==, SLUICE_WIRE_AGENT_NONE);
        g_assert_false(sluice_vm_manager_guest_ready(f->manager, "no-such-vm"));
}

static void test_agent_channel(Fixture *f, gconstpointer data)
{
        g_autofree char *xml = g_strdup_printf(AGENT_XML, "agent-vm");
        virDomainPtr dom = virDomainDefineXML(f->raw, xml);

        g_assert_nonnull(dom);
        g_assert_true(wait_for(f, vm_known, "agent-vm"));
        /* off: the channel is there, nobody answers on it */
        assert_agent(f, "agent-vm", "disconnected", "not running");
        g_assert_cmpint(sluice_vm_manager_guest_agent(f->manager, "agent-vm"), ==, SLUICE_WIRE_AGENT_DISCONNECTED);

        /* running: Sluice asks, this driver has no agent: the reason and what to do */
        g_assert_cmpint(virDomainCreate(dom), ==, 0);
        g_assert_true(wait_for(f, has_event, "started:agent-vm"));
        assert_agent(f, "agent-vm", "disconnected", "qemu-guest-agent");
        g_assert_true(wait_for(f, has_event, "guest:agent-vm"));

        g_assert_cmpint(virDomainDestroy(dom), ==, 0);
        assert_agent(f, "agent-vm", "disconnected", "not running");
        virDomainUndefine(dom);
        virDomainFree(dom);
}

static void test_enable_guest_agent(Fixture *f, gconstpointer data)
{
        g_autoptr(SluiceVm) vm = vm_object(f, "test");
        g_autofree char *xml = NULL;
        CallResult r = enable_call(f, vm, TRUE);
        virDomainPtr dom;

        g_assert_no_error(r.error);
        g_assert_true(r.ok);
        g_test_message("%s", r.message);
        g_assert_nonnull(strstr(r.message, "next boot"));
        g_assert_nonnull(strstr(r.message, "qemu-guest-agent"));
        g_free(r.message);

        dom = virDomainLookupByName(f->raw, "test");
        xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
        g_assert_nonnull(strstr(xml, "org.qemu.guest_agent.0"));
        /* the rest of the definition is still there */
        g_assert_nonnull(strstr(xml, "<name>test</name>"));
        g_assert_nonnull(strstr(xml, "<interface"));
        /* running: not yet, and the VM says when */
        assert_agent(f, "test", "none", "next boot");

        /* a second call leaves it alone and says so */
        r = enable_call(f, vm, TRUE);
        g_assert_no_error(r.error);
        g_assert_nonnull(strstr(r.message, "already"));
        g_assert_nonnull(strstr(r.message, "next boot"));
        g_free(r.message);

        virDomainDestroy(dom);
        assert_agent(f, "test", "disconnected", "not running");
        r = enable_call(f, vm, TRUE);
        g_assert_no_error(r.error);
        g_test_message("%s", r.message);
        g_assert_nonnull(strstr(r.message, "already"));
        g_free(r.message);
        virDomainFree(dom);
}

typedef struct {
        gboolean done;
        char *place;
        GError *error;
} GuestResult;

static void guest_done(GObject *source, GAsyncResult *result, gpointer data)
{
        GuestResult *r = data;
        SluiceVmManager *m = SLUICE_VM_MANAGER(source);

        if (g_task_get_source_tag(G_TASK(result)) == sluice_vm_manager_guest_mount_async)
                r->place = sluice_vm_manager_guest_mount_finish(m, result, &r->error);
        else if (sluice_vm_manager_guest_unmount_finish(m, result, &r->error))
                r->place = g_strdup("");
        r->done = TRUE;
}

static gboolean guest_finished(Fixture *f, gconstpointer data)
{
        return ((const GuestResult *)data)->done;
}

/* No agent to run them: refused at once, saying why and what to do. */
static void test_guest_calls_refused(Fixture *f, gconstpointer data)
{
        SluiceGuestMountSpec spec = { .tag = "docs", .mount_point = "", .at_boot = FALSE };
        const char *vms[] = { "test", "no-such-vm", "" };
        virDomainPtr dom;

        for (gsize i = 0; i < G_N_ELEMENTS(vms); i++) {
                GuestResult r = { 0 };

                sluice_vm_manager_guest_mount_async(f->manager, vms[i], &spec, guest_done, &r);
                g_assert_true(wait_for(f, guest_finished, &r));
                g_assert_null(r.place);
                g_assert_error(r.error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT);
                g_test_message("mount in “%s”: %s", vms[i], r.error->message);
                g_clear_error(&r.error);
        }
        {
                GuestResult r = { 0 };

                sluice_vm_manager_guest_mount_async(f->manager, "test", &spec, guest_done, &r);
                g_assert_true(wait_for(f, guest_finished, &r));
                g_assert_nonnull(strstr(r.error->message, "enable-agent"));
                g_clear_error(&r.error);
        }
        /* running without an agent: unmounting cannot be done either */
        {
                GuestResult r = { 0 };

                sluice_vm_manager_guest_unmount_async(f->manager, "test", "docs", "/mnt/docs", guest_done, &r);
                g_assert_true(wait_for(f, guest_finished, &r));
                g_assert_error(r.error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT);
                g_clear_error(&r.error);
        }
        /* a stopped VM (or one that is gone) has nothing mounted: unmounting is done */
        dom = virDomainLookupByName(f->raw, "test");
        virDomainDestroy(dom);
        g_assert_true(wait_for(f, state_is, "shutoff"));
        for (gsize i = 0; i < 2; i++) {
                GuestResult r = { 0 };

                sluice_vm_manager_guest_unmount_async(f->manager, vms[i], "docs", "/mnt/docs", guest_done, &r);
                g_assert_true(wait_for(f, guest_finished, &r));
                g_assert_no_error(r.error);
                g_free(r.place);
        }
        {
                GuestResult r = { 0 };

                sluice_vm_manager_guest_mount_async(f->manager, "test", &spec, guest_done, &r);
                g_assert_true(wait_for(f, guest_finished, &r));
                g_assert_error(r.error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT);
                g_assert_nonnull(strstr(r.error->message, "not running"));
                g_clear_error(&r.error);
        }
        virDomainFree(dom);
}

/* The host's files the confinement check reads (test builds read them
 * under $SLUICE_TEST_CONFINEMENT_ROOT).  This machine has no AppArmor and
 * its libvirtd no security driver: the planted files and the test driver's
 * seclabel stand in for a real Ubuntu/Debian host, which cannot run here. */
static char *confinement_root;

static void plant(const char *path, const char *text)
{
        g_autofree char *full = g_build_filename(confinement_root, path, NULL);
        g_autofree char *dir = g_path_get_dirname(full);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(full, text, -1, NULL));
}

#define AA_UUID "6f1e9b2c-4a8d-4e0f-9c3b-2d7a5e8f1a40"
/* libvirt labels a dynamic profile at start; the test driver keeps the
 * model but not the label, so the profile is found by the UUID */
#define AA_XML \
        "<domain type='test'><name>confined</name><uuid>" AA_UUID "</uuid><memory>262144</memory>" \
        "<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>" \
        "<os><type>hvm</type></os>" \
        "<seclabel type='dynamic' model='apparmor' relabel='yes'/></domain>"

typedef struct {
        const char *name;
        const char *problem_part; /* NULL: no problem */
} ConfinementExpect;

static gboolean confinement_is(Fixture *f, gconstpointer data)
{
        const ConfinementExpect *e = data;
        g_autoptr(SluiceVm) vm = vm_object(f, e->name);
        const char *problem = sluice_vm_get_confinement_problem(vm);

        return e->problem_part ? strstr(problem, e->problem_part) != NULL : *problem == '\0';
}

static void test_confinement(Fixture *f, gconstpointer data)
{
        static const ConfinementExpect blocked = { "confined", "Sluice's AppArmor rule is not installed" };
        static const ConfinementExpect clear = { "confined", NULL };
        virDomainPtr dom = virDomainDefineXML(f->raw, AA_XML);
        g_autoptr(SluiceVm) unconfined = vm_object(f, "test");
        g_autoptr(SluiceVm) vm = NULL;
        SluiceConfinementModel model;

        if (!SLUICE_TEST_HOOKS) {
                g_test_skip("needs -Dtest_hooks=true (the host's files are planted)");
                virDomainFree(dom);
                return;
        }
        g_assert_true(sluice_confinement_model_from_wire(sluice_vm_get_confinement(unconfined), &model));
        g_assert_cmpint(model, ==, SLUICE_CONFINEMENT_MODEL_NONE);
        g_assert_cmpstr(sluice_vm_get_confinement_problem(unconfined), ==, "");

        /* AppArmor on, libvirt 9.6's abstraction, Sluice's rule not installed */
        g_assert_nonnull(dom);
        g_assert_cmpint(virDomainCreate(dom), ==, 0);
        g_assert_true(wait_for(f, vm_known, "confined"));
        g_assert_true(wait_for(f, confinement_is, &blocked));
        vm = vm_object(f, "confined");
        g_assert_true(sluice_confinement_model_from_wire(sluice_vm_get_confinement(vm), &model));
        g_assert_cmpint(model, ==, SLUICE_CONFINEMENT_MODEL_APPARMOR);
        g_assert_nonnull(strstr(sluice_vm_get_confinement_problem(vm),
                                "sudo apparmor_parser -r /etc/apparmor.d/libvirt/libvirt-" AA_UUID));
        g_test_message("%s", sluice_vm_get_confinement_problem(vm));

        /* the package installed, then the VM's profile made (a restart): nothing blocks */
        plant("/etc/apparmor.d/abstractions/libvirt-qemu.d/sluice", "/tmp/sluice-[0-9]*-*/[0-9]*.sock rw,\n");
        g_usleep(20 * 1000);
        plant("/etc/apparmor.d/libvirt/libvirt-" AA_UUID, "profile libvirt-" AA_UUID " {}\n");
        g_assert_cmpint(virDomainSuspend(dom), ==, 0);
        g_assert_cmpint(virDomainResume(dom), ==, 0);
        g_assert_true(wait_for(f, confinement_is, &clear));

        g_assert_cmpint(virDomainDestroy(dom), ==, 0);
        g_assert_cmpint(virDomainUndefine(dom), ==, 0);
        g_assert_true(wait_for(f, vm_gone, "confined"));
        virDomainFree(dom);
}

static void remove_tree(const char *path)
{
        g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
        const char *name;

        while (dir && (name = g_dir_read_name(dir))) {
                g_autofree char *child = g_build_filename(path, name, NULL);
                remove_tree(child);
        }
        (void)g_remove(path);
}

int main(int argc, char **argv)
{
        int status;

        g_test_init(&argc, &argv, NULL);
        /* set before any thread of the manager reads it */
        confinement_root = g_dir_make_tmp("sluice-vm-tracking-XXXXXX", NULL);
        g_assert_nonnull(confinement_root);
        g_setenv("SLUICE_TEST_CONFINEMENT_ROOT", confinement_root, TRUE);
        plant("/sys/module/apparmor/parameters/enabled", "Y\n");
        plant("/etc/apparmor.d/abstractions/libvirt-qemu",
              "include if exists <local/abstractions/libvirt-qemu>\n"
              "include if exists <abstractions/libvirt-qemu.d>\n");
#define ADD(path, fn) g_test_add("/vm-tracking/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
        ADD("initial-vm", test_initial_vm);
        ADD("lifecycle", test_lifecycle);
        ADD("added-removed", test_added_removed);
        ADD("attach-refusals", test_attach_refusals);
        ADD("enable-shared-memory", test_enable_shared_memory);
        ADD("enable-shared-memory-refused", test_enable_shared_memory_refused);
        ADD("agent-none", test_agent_none);
        ADD("agent-channel", test_agent_channel);
        ADD("enable-guest-agent", test_enable_guest_agent);
        ADD("guest-calls-refused", test_guest_calls_refused);
        ADD("confinement", test_confinement);
        status = g_test_run();
        remove_tree(confinement_root);
        g_free(confinement_root);
        return status;
}
