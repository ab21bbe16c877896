/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-guest.c — a share's folder in its VM's guest; see vm-guest.h.
 * PLACEHOLDER until the implementation lands: no guest is ever ready. */
#include "config.h"

#include "errors.h"
#include "vm-guest.h"

const char *sluice_guest_agent_state_name(SluiceGuestAgentState state)
{
        static const char *const names[] = { "none", "disconnected", "ready", "restricted" };

        return state < G_N_ELEMENTS(names) ? names[state] : "none";
}

gboolean sluice_vm_manager_guest_ready(SluiceVmManager *self, const char *vm) { return FALSE; }
SluiceGuestAgentState sluice_vm_manager_guest_agent(SluiceVmManager *self, const char *vm) { return SLUICE_GUEST_AGENT_NONE; }

static void fail(SluiceVmManager *self, GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);

        g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED, "not implemented yet");
}

void sluice_vm_manager_guest_mount_async(SluiceVmManager *self, const char *vm, const SluiceGuestMountSpec *spec,
                                         GAsyncReadyCallback callback, gpointer user_data) { fail(self, callback, user_data); }
char *sluice_vm_manager_guest_mount_finish(SluiceVmManager *self, GAsyncResult *result, GError **error) { return g_task_propagate_pointer(G_TASK(result), error); }
void sluice_vm_manager_guest_unmount_async(SluiceVmManager *self, const char *vm, const char *tag, const char *place,
                                           GAsyncReadyCallback callback, gpointer user_data) { fail(self, callback, user_data); }
gboolean sluice_vm_manager_guest_unmount_finish(SluiceVmManager *self, GAsyncResult *result, GError **error) { return g_task_propagate_boolean(G_TASK(result), error); }
void sluice_vm_manager_guest_release_async(SluiceVmManager *self, const char *vm, const char *tag, const char *place,
                                           GAsyncReadyCallback callback, gpointer user_data) { fail(self, callback, user_data); }
gboolean sluice_vm_manager_guest_release_finish(SluiceVmManager *self, GAsyncResult *result, GError **error) { return g_task_propagate_boolean(G_TASK(result), error); }
void sluice_vm_manager_guest_forget_async(SluiceVmManager *self, const char *vm, const char *tag,
                                          GAsyncReadyCallback callback, gpointer user_data) { fail(self, callback, user_data); }
gboolean sluice_vm_manager_guest_forget_finish(SluiceVmManager *self, GAsyncResult *result, GError **error) { return g_task_propagate_boolean(G_TASK(result), error); }
