/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-vm: the applet's helpers over a SluiceVm proxy. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "sa-vm.h"
#include "wire-enums.h"

const char *sa_vm_get_name(SluiceVm *vm)
{
  const char *name = sluice_vm_get_name(vm);
  return name != NULL ? name : "";
}

const char *sa_vm_get_state(SluiceVm *vm)
{
  const char *state = sluice_vm_get_state(vm);
  return state != NULL ? state : "";
}

gboolean sa_vm_is_running(SluiceVm *vm)
{
  return sluice_wire_vm_state_is(sa_vm_get_state(vm), SLUICE_WIRE_VM_RUNNING);
}

const char *sa_vm_get_guest_agent(SluiceVm *vm)
{
  const char *agent = sluice_vm_get_guest_agent(vm);
  return agent != NULL ? agent : "";
}

const char *sa_vm_get_guest_agent_message(SluiceVm *vm)
{
  const char *message = sluice_vm_get_guest_agent_message(vm);
  return message != NULL ? message : "";
}

typedef struct {
  GCallback report;
  gpointer user_data;
} FixData;

static void on_enable_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree FixData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  void (*report)(const char *, gboolean, gpointer) = (void *)data->report;
  if (!sluice_vm_call_enable_shared_memory_finish(SLUICE_VM(source), &message, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(msg, TRUE, data->user_data);
    return;
  }
  report(*message ? message : _("Shared memory enabled."), FALSE, data->user_data);
}

void sa_vm_enable_shared_memory(SluiceVm *vm, GCallback report, gpointer user_data)
{
  FixData *data = g_new0(FixData, 1);
  data->report = report;
  data->user_data = user_data;
  sluice_vm_call_enable_shared_memory(vm, NULL, on_enable_done, data);
}

static void on_enable_agent_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree FixData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  void (*report)(const char *, gboolean, gpointer) = (void *)data->report;
  if (!sluice_vm_call_enable_guest_agent_finish(SLUICE_VM(source), &message, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(msg, TRUE, data->user_data);
    return;
  }
  report(*message ? message : _("The guest agent's channel was added."), FALSE, data->user_data);
}

void sa_vm_enable_guest_agent(SluiceVm *vm, GCallback report, gpointer user_data)
{
  FixData *data = g_new0(FixData, 1);
  data->report = report;
  data->user_data = user_data;
  sluice_vm_call_enable_guest_agent(vm, NULL, on_enable_agent_done, data);
}

gboolean sa_vm_lacks_hotplug_slot(SluiceVm *vm)
{
  /* absent from the cache: a service that does not count them */
  g_autoptr(GVariant) slots = g_dbus_proxy_get_cached_property(G_DBUS_PROXY(vm), "HotplugSlots");
  return slots != NULL && g_variant_is_of_type(slots, G_VARIANT_TYPE_UINT32) && g_variant_get_uint32(slots) == 0;
}

typedef struct {
  FixData fix;
  char *name;
} SlotsData;

static void on_add_slots_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  SlotsData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *name = data->name;
  guint added = 0;
  void (*report)(const char *, gboolean, gpointer) = (void *)data->fix.report;
  gpointer report_data = data->fix.user_data;

  g_free(data);
  if (!sluice_vm_call_add_hotplug_slots_finish(SLUICE_VM(source), &added, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(msg, TRUE, report_data);
    return;
  }
  g_autofree char *msg =
    /* Translators: %u spare ports, %s the VM's name */
    g_strdup_printf(g_dngettext(GETTEXT_PACKAGE,
                                "%u spare PCIe root port was added to “%s”. It takes effect at the VM's next "
                                "start: shut it down and start it again.",
                                "%u spare PCIe root ports were added to “%s”. They take effect at the VM's next "
                                "start: shut it down and start it again.",
                                added),
                    added, name);
  report(msg, FALSE, report_data);
}

void sa_vm_add_hotplug_slots(SluiceVm *vm, GCallback report, gpointer user_data)
{
  SlotsData *data = g_new0(SlotsData, 1);
  data->fix.report = report;
  data->fix.user_data = user_data;
  data->name = g_strdup(sa_vm_get_name(vm));
  /* 0: the service's default */
  sluice_vm_call_add_hotplug_slots(vm, 0, NULL, on_add_slots_done, data);
}
