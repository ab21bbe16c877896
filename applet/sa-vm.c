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
