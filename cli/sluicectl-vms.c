/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-vms.c — "vms": the VMs the service follows, with their guest
 * agents and what the host's confinement keeps from them; "vm NAME
 * enable-agent | enable-shared-memory": the two changes the service makes to
 * a VM's definition. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "sluicectl.h"
#include "state-labels.h"

/* Vm.GuestAgent in words (an unknown token, from a newer service, as it is). */
static const char *agent_label(const char *agent)
{
        if (g_strcmp0(agent, "none") == 0)
                return C_("guest agent", "none");
        if (g_strcmp0(agent, "disconnected") == 0)
                return C_("guest agent", "not answering");
        if (g_strcmp0(agent, "ready") == 0)
                return C_("guest agent", "ready");
        if (g_strcmp0(agent, "restricted") == 0)
                return C_("guest agent", "restricted");
        return agent != NULL && *agent != '\0' ? agent : "-";
}

/* What the guest said it runs, else its kind, else "-". */
static const char *guest_os(SluiceVm *vm)
{
        const char *name = sluice_vm_get_guest_os_name(vm);
        const char *type = sluice_vm_get_guest_os_type(vm);

        if (name != NULL && *name != '\0')
                return name;
        if (g_strcmp0(type, "linux") == 0)
                return "Linux";
        if (g_strcmp0(type, "windows") == 0)
                return "Windows";
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
                              g_strcmp0(sluice_vm_get_state(vm), "running") == 0 &&
                                              g_strcmp0(agent, "ready") != 0 ? message : NULL,
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

/* The VM named NAME (or with that UUID or object path); NULL with a message. */
static SluiceVm *find_vm(Ctl *ctl, const char *name, GError **error)
{
        g_autolist(GObject) objects = g_dbus_object_manager_get_objects(ctl->objects);
        g_autoptr(GString) known = g_string_new(NULL);

        for (GList *l = objects; l != NULL; l = l->next) {
                g_autoptr(SluiceVm) vm = sluice_object_get_vm(SLUICE_OBJECT(l->data));

                if (vm == NULL)
                        continue;
                if (g_strcmp0(sluice_vm_get_name(vm), name) == 0 ||
                    g_ascii_strcasecmp(sluice_vm_get_uuid(vm) ?: "", name) == 0 ||
                    g_strcmp0(g_dbus_object_get_object_path(l->data), name) == 0)
                        return g_steal_pointer(&vm);
                g_string_append_printf(known, "%s%s", known->len > 0 ? ", " : "", sluice_vm_get_name(vm));
        }
        if (known->len > 0)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND, _("There is no VM “%s”; there are: %s."),
                            name, known->str);
        else
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                            _("There is no VM “%s” (sluice-service looks in qemu:///session and qemu:///system)."),
                            name);
        return NULL;
}

int ctl_cmd_vm(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(SluiceVm) vm = NULL;
        g_autofree char *message = NULL;
        gboolean ok;

        if (argc != 3 || (strcmp(argv[2], "enable-agent") != 0 && strcmp(argv[2], "enable-shared-memory") != 0))
                return ctl_usage_error(_("Use “vm NAME enable-agent” or “vm NAME enable-shared-memory”"));
        if (!g_utf8_validate(argv[1], -1, NULL))
                return ctl_usage_error(_("The VM's name is not valid UTF-8"));
        vm = find_vm(ctl, argv[1], &error);
        if (vm == NULL)
                return ctl_fail(error);
        /* the service answers within its own bound (it waits on libvirtd) */
        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(vm), CTL_CALL_TIMEOUT_MS);
        if (strcmp(argv[2], "enable-agent") == 0)
                ok = sluice_vm_call_enable_guest_agent_sync(vm, &message, NULL, &error);
        else
                ok = sluice_vm_call_enable_shared_memory_sync(vm, &message, NULL, &error);
        if (!ok)
                return ctl_fail(error);
        if (ctl->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;

                json_builder_begin_object(b);
                json_builder_set_member_name(b, "name");
                json_builder_add_string_value(b, sluice_vm_get_name(vm));
                json_builder_set_member_name(b, "message");
                json_builder_add_string_value(b, message);
                json_builder_set_member_name(b, "ok");
                json_builder_add_boolean_value(b, TRUE);
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                ctl_print_json(root);
        } else {
                g_print("%s\n", message);
        }
        return EXIT_OK;
}
