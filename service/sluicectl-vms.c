/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-vms.c — "vms": the VMs the service follows. */
#include "config.h"

#include <glib/gi18n.h>

#include "sluicectl.h"
#include "state-labels.h"

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

                if (vm == NULL)
                        continue;
                if (ctl->json) {
                        json_builder_begin_object(b);
#define VM_MEMBER(name, getter)                                         \
                        json_builder_set_member_name(b, name);          \
                        json_builder_add_string_value(b, getter(vm) ?: "")
                        VM_MEMBER("name", sluice_vm_get_name);
                        VM_MEMBER("uuid", sluice_vm_get_uuid);
                        VM_MEMBER("uri", sluice_vm_get_uri);
                        VM_MEMBER("state", sluice_vm_get_state);
                        VM_MEMBER("os", sluice_vm_get_os);
#undef VM_MEMBER
                        json_builder_set_member_name(b, "shared_memory");
                        json_builder_add_boolean_value(b, sluice_vm_get_shared_memory(vm));
                        json_builder_set_member_name(b, "object_path");
                        json_builder_add_string_value(b, g_dbus_object_get_object_path(l->data));
                        json_builder_end_object(b);
                        continue;
                }
                if (table == NULL)
                        table = ctl_table_new(5, _("NAME"), _("STATE"), _("SHARED-MEMORY"), _("OS"),
                                          _("URI"));
                ctl_table_add(table, NULL, sluice_vm_get_name(vm), sluice_vm_state_label(sluice_vm_get_state(vm)),
                          sluice_vm_get_shared_memory(vm) ? _("yes") : _("no"),
                          *sluice_vm_get_os(vm) != '\0' ? sluice_vm_get_os(vm) : "-",
                          sluice_vm_get_uri(vm));
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
