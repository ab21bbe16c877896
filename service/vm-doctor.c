/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-doctor.c — see vm-doctor.h. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-doctor.h"
#include "vm-doctor.h"
#include "vm-guest-tools.h"

/* all the doctor's questions together; each waits 30 s at most */
#define DOCTOR_TIMEOUT_S 120

typedef struct {
        SluiceVmDomain *vm;
        virDomainPtr domain;
        char *vm_name;
        SluiceWireGuestOs os;
        GStrv tags;
        GStrv places;
        GDBusMethodInvocation *invocation;
        /* the thread's */
        char *report;
        GVariant *facts;
        char **missing;
} DoctorCall;

static void doctor_call_free(gpointer data)
{
        DoctorCall *c = data;

        sluice_vm_domain_unref(c->vm);
        g_clear_pointer(&c->domain, virDomainFree);
        g_free(c->vm_name);
        g_strfreev(c->tags);
        g_strfreev(c->places);
        g_clear_object(&c->invocation);
        g_free(c->report);
        g_clear_pointer(&c->facts, g_variant_unref);
        g_strfreev(c->missing);
        g_free(c);
}

static void doctor_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        DoctorCall *c = task_data;
        SluiceDoctorInput in = {
                .vm_name = c->vm_name,
                .os = c->os,
                .tags = (const char *const *)c->tags,
                .places = (const char *const *)c->places,
        };
        GError *error = NULL;

        sluice_guest_agent_set_deadline(DOCTOR_TIMEOUT_S);
        c->report = sluice_guest_doctor_run(c->domain, &in, &c->facts, &c->missing, &error);
        sluice_guest_agent_set_deadline(0);
        g_clear_pointer(&c->domain, virDomainFree);
        if (c->report == NULL) {
                /* TRANSLATORS: the VM's name */
                g_autofree char *what = g_strdup_printf(_("The doctor could not ask the guest of “%s”"), c->vm_name);
                char *message = sluice_guest_agent_error_sentence(error, what, NULL);

                g_clear_error(&error);
                g_set_error_literal(&error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, message);
                g_free(message);
                g_task_return_error(task, error);
                return;
        }
        g_task_return_boolean(task, TRUE);
}

static void on_doctored(GObject *source, GAsyncResult *result, gpointer user_data)
{
        DoctorCall *c = g_task_get_task_data(G_TASK(result));
        g_autoptr(SluiceVmDomain) vm = sluice_vm_domain_ref(c->vm);
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);
        g_autoptr(GError) error = NULL;

        if (!g_task_propagate_boolean(G_TASK(result), &error)) {
                if (!vm->removed)
                        sluice_vm_domain_agent_recheck(vm);
                g_dbus_method_invocation_return_gerror(invocation, error);
                return;
        }
        if (c->missing != NULL)
                sluice_vm_guest_tools_set_missing(vm, (const char *const *)c->missing);
        sluice_vm_complete_doctor(vm->iface, invocation, c->report, c->facts);
}

static gboolean on_doctor(SluiceVm *iface, GDBusMethodInvocation *invocation, gpointer user_data)
{
        SluiceVmDomain *vm = user_data;
        g_autoptr(GTask) task = NULL;
        g_autoptr(GStrvBuilder) tags = NULL;
        g_autoptr(GStrvBuilder) places = NULL;
        GHashTableIter iter;
        gpointer tag;
        DoctorCall *c;

        if (!vm->active || vm->guest_agent != SLUICE_WIRE_AGENT_READY || vm->domain == NULL) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                                      _("The doctor cannot ask the guest of “%s” now: %s"), vm->name,
                                                      !vm->active ? _("it is not running.")
                                                                  : sluice_vm_domain_agent_message(vm));
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        tags = g_strv_builder_new();
        places = g_strv_builder_new();
        g_hash_table_iter_init(&iter, vm->tags);
        while (g_hash_table_iter_next(&iter, &tag, NULL)) {
                const char *place = g_hash_table_lookup(vm->guest_mounts, tag);

                g_strv_builder_add(tags, tag);
                g_strv_builder_add(places, place != NULL ? place : "");
        }
        c = g_new0(DoctorCall, 1);
        c->vm = sluice_vm_domain_ref(vm);
        c->domain = sluice_vm_domain_get_raw(vm);
        c->vm_name = g_strdup(vm->name);
        c->os = vm->guest_os_type;
        c->tags = g_strv_builder_end(tags);
        c->places = g_strv_builder_end(places);
        c->invocation = g_object_ref(invocation);
        task = g_task_new(NULL, NULL, on_doctored, NULL);
        g_task_set_task_data(task, c, doctor_call_free);
        g_task_run_in_thread(task, doctor_thread);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

void sluice_vm_doctor_export(SluiceVmDomain *vm)
{
        g_signal_connect(vm->iface, "handle-doctor", G_CALLBACK(on_doctor), vm);
}
