/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-vms.c — "vms": the VMs the service follows, with their guest
 * agents and what the host's confinement keeps from them; "vm NAME
 * enable-agent | enable-shared-memory | add-slots [COUNT]": the changes the
 * service makes to a VM's definition (install-guest-tools and doctor are
 * sluicectl-guest-tools.c's). */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "sluicectl.h"
#include "state-labels.h"
#include "wire-enums.h"

/* Vm.GuestAgent in words; "-" when the service says nothing. */
static const char *agent_label(const char *agent)
{
        const char *label = sluice_guest_agent_label(agent);

        return *label != '\0' ? label : "-";
}

/* What the guest said it runs, else its kind, else "-". */
static const char *guest_os(SluiceVm *vm)
{
        const char *name = sluice_vm_get_guest_os_name(vm);
        SluiceWireGuestOs os = SLUICE_WIRE_GUEST_OS_UNKNOWN;

        if (name != NULL && *name != '\0')
                return name;
        (void)sluice_wire_guest_os_parse(sluice_vm_get_guest_os_type(vm), &os);
        switch (os) {
        case SLUICE_WIRE_GUEST_OS_LINUX:
                return "Linux";
        case SLUICE_WIRE_GUEST_OS_WINDOWS:
                return "Windows";
        case SLUICE_WIRE_GUEST_OS_UNKNOWN:
                break;
        }
        return "-";
}

static void vm_to_json(JsonBuilder *b, SluiceVm *vm, const char *object_path)
{
        json_builder_begin_object(b);
#define VM_MEMBER(name, getter)                                 \
        json_builder_set_member_name(b, name);                  \
        json_builder_add_string_value(b, getter(vm) ?: "")
        VM_MEMBER("name", sluice_vm_get_name);
        VM_MEMBER("uuid", sluice_vm_get_uuid);
        VM_MEMBER("uri", sluice_vm_get_uri);
        VM_MEMBER("state", sluice_vm_get_state);
        VM_MEMBER("os", sluice_vm_get_os);
        VM_MEMBER("guest_agent", sluice_vm_get_guest_agent);
        VM_MEMBER("guest_agent_message", sluice_vm_get_guest_agent_message);
        VM_MEMBER("guest_os_type", sluice_vm_get_guest_os_type);
        VM_MEMBER("guest_os_name", sluice_vm_get_guest_os_name);
        VM_MEMBER("confinement", sluice_vm_get_confinement);
        VM_MEMBER("confinement_problem", sluice_vm_get_confinement_problem);
#undef VM_MEMBER
        json_builder_set_member_name(b, "shared_memory");
        json_builder_add_boolean_value(b, sluice_vm_get_shared_memory(vm));
        json_builder_set_member_name(b, "object_path");
        json_builder_add_string_value(b, object_path);
        json_builder_end_object(b);
}

int ctl_cmd_vms(Ctl *ctl, int argc, char **argv)
{
        g_autolist(GObject) objects = NULL;
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autoptr(CtlTable) table = NULL;

        if (argc != 1)
                return ctl_usage_error(_("“vms” takes no arguments"));
        objects = g_list_sort(g_dbus_object_manager_get_objects(ctl->objects), ctl_compare_objects);
        json_builder_begin_array(b);
        for (GList *l = objects; l != NULL; l = l->next) {
                g_autoptr(SluiceVm) vm = sluice_object_get_vm(SLUICE_OBJECT(l->data));
                const char *agent, *message;

                if (vm == NULL)
                        continue;
                if (ctl->json) {
                        vm_to_json(b, vm, g_dbus_object_get_object_path(l->data));
                        continue;
                }
                if (table == NULL)
                        table = ctl_table_new(7, _("NAME"), _("STATE"), _("SHARED-MEMORY"), _("OS"),
                                              _("GUEST-AGENT"), _("GUEST-OS"), _("URI"));
                agent = sluice_vm_get_guest_agent(vm);
                message = sluice_vm_get_guest_agent_message(vm);
                /* why the agent cannot help, under a VM where it matters now */
                ctl_table_add(table,
                              sluice_wire_vm_state_is(sluice_vm_get_state(vm), SLUICE_WIRE_VM_RUNNING) &&
                                              !sluice_wire_guest_agent_is(agent, SLUICE_WIRE_AGENT_READY)
                                      ? message
                                      : NULL,
                              sluice_vm_get_name(vm), sluice_vm_state_label(sluice_vm_get_state(vm)),
                              sluice_vm_get_shared_memory(vm) ? _("yes") : _("no"),
                              *sluice_vm_get_os(vm) != '\0' ? sluice_vm_get_os(vm) : "-", agent_label(agent),
                              guest_os(vm), sluice_vm_get_uri(vm));
                /* what keeps QEMU from the shares, whenever something does */
                ctl_table_add_note(table, sluice_vm_get_confinement_problem(vm));
        }
        json_builder_end_array(b);
        if (ctl->json) {
                root = json_builder_get_root(b);
                ctl_print_json(root);
        } else if (table != NULL) {
                ctl_table_print(table);
        } else {
                g_print("%s\n", _("No VMs found (sluice-service looks in qemu:///session and qemu:///system)."));
        }
        return EXIT_OK;
}

/* How many hot-plug slots `vm NAME add-slots` asks for without a COUNT. */
#define CTL_DEFAULT_SLOTS 4
/* The most Vm.AddHotplugSlots adds at once. */
#define CTL_MAX_SLOTS 16

static void print_vm_json(SluiceVm *vm, const char *member, JsonNode *value)
{
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, sluice_vm_get_name(vm));
        json_builder_set_member_name(b, member);
        json_builder_add_value(b, value);
        json_builder_set_member_name(b, "ok");
        json_builder_add_boolean_value(b, TRUE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        ctl_print_json(root);
}

/* vm NAME add-slots [COUNT]: spare PCIe root ports in the saved definition,
 * one per share a VM on q35 can take hot-plugged (next boot). */
static int vm_add_slots(Ctl *ctl, SluiceVm *vm, guint32 count)
{
        g_autoptr(GError) error = NULL;
        guint added = 0;

        if (!sluice_vm_call_add_hotplug_slots_sync(vm, count, &added, NULL, &error))
                return ctl_fail(error);
        if (ctl->json) {
                JsonNode *value = json_node_new(JSON_NODE_VALUE);

                json_node_set_int(value, added);
                print_vm_json(vm, "added", value);
        } else if (added == 0) {
                g_print(_("No hot-plug slots were added to %s: its definition has its spare ones already.\n"),
                        sluice_vm_get_name(vm));
        } else {
                g_print(g_dngettext(GETTEXT_PACKAGE,
                                    "Added %u hot-plug slot to %s; it takes effect at the VM's next boot.\n",
                                    "Added %u hot-plug slots to %s; they take effect at the VM's next boot.\n",
                                    added),
                        added, sluice_vm_get_name(vm));
        }
        return EXIT_OK;
}

int ctl_cmd_vm(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(SluiceVm) vm = NULL;
        g_autofree char *message = NULL;
        guint64 count = CTL_DEFAULT_SLOTS;
        gboolean ok;

        gboolean guest_tools = argc >= 3 && (strcmp(argv[2], "install-guest-tools") == 0 ||
                                             strcmp(argv[2], "doctor") == 0);

        if (guest_tools) {
                /* its own file checks its arguments */
        } else if (argc >= 3 && strcmp(argv[2], "add-slots") == 0) {
                if (argc > 4)
                        return ctl_usage_error(_("Use “vm NAME add-slots [COUNT]”"));
                if (argc == 4 && !ctl_parse_uint(argv[3], 1, CTL_MAX_SLOTS, &count))
                        return ctl_usage_error(_("COUNT must be a number from 1 to %d, not “%s”"), CTL_MAX_SLOTS,
                                               argv[3]);
        } else if (argc != 3 ||
                   (strcmp(argv[2], "enable-agent") != 0 && strcmp(argv[2], "enable-shared-memory") != 0)) {
                return ctl_usage_error(_("Use “vm NAME enable-agent”, “vm NAME enable-shared-memory”, “vm NAME add-slots [COUNT]”, “vm NAME install-guest-tools” or “vm NAME doctor”"));
        }
        if (!g_utf8_validate(argv[1], -1, NULL))
                return ctl_usage_error(_("The VM's name is not valid UTF-8"));
        vm = ctl_find_vm(ctl, argv[1], &error);
        if (vm == NULL)
                return ctl_fail(error);
        /* the service answers within its own bound (it waits on libvirtd) */
        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(vm), CTL_CALL_TIMEOUT_MS);
        if (guest_tools)
                return ctl_cmd_vm_guest_tools(ctl, vm, argc, argv);
        if (strcmp(argv[2], "add-slots") == 0)
                return vm_add_slots(ctl, vm, (guint32)count);
        if (strcmp(argv[2], "enable-agent") == 0)
                ok = sluice_vm_call_enable_guest_agent_sync(vm, &message, NULL, &error);
        else
                ok = sluice_vm_call_enable_shared_memory_sync(vm, &message, NULL, &error);
        if (!ok)
                return ctl_fail(error);
        if (ctl->json) {
                JsonNode *value = json_node_new(JSON_NODE_VALUE);

                json_node_set_string(value, message);
                print_vm_json(vm, "message", value);
        } else {
                g_print("%s\n", message);
        }
        return EXIT_OK;
}
