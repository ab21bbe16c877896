/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-vm-guest.c — the guest side a share sees (vm-guest.h): what happens
 * when the guest agent goes away in the middle of a call.
 *
 * vm-guest.c runs here as in the service, its guest procedures
 * (guest-linux.c, guest-windows.c) talking to the pretend guest agent
 * (fake-guest-agent.c).  The VM it acts on is a pretend one too: this file
 * defines the few vm-domain.c / vm-manager.c functions vm-guest.c calls, so
 * that a test can see whether the VM was asked to look at its agent again
 * (sluice_vm_domain_agent_recheck), which is what makes Vm.GuestAgent say
 * "disconnected" instead of "ready" once an agent stopped answering. */
#include <glib.h>
#include <string.h>

#include "errors.h"
#include "fake-guest-agent.h"
#include "guest-agent.h"
#include "vm-domain.h"
#include "vm-guest.h"
#include "vm-manager.h"

/* ---- a pretend VM manager holding one pretend VM ---- */

struct _SluiceVmManager {
        GObject parent;
        SluiceVmDomain *vm;
};

G_DEFINE_TYPE(SluiceVmManager, sluice_vm_manager, G_TYPE_OBJECT)

static void sluice_vm_manager_init(SluiceVmManager *self)
{
        (void)self;
}

static void sluice_vm_manager_class_init(SluiceVmManagerClass *klass)
{
        (void)klass;
}

static guint rechecks;

SluiceVmDomain *sluice_vm_manager_find_domain(SluiceVmManager *self, const char *vm_id, GError **error)
{
        if (self->vm != NULL && strcmp(vm_id, self->vm->name) == 0)
                return self->vm;
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NO_VM, "no VM “%s”", vm_id);
        return NULL;
}

SluiceVmDomain *sluice_vm_domain_ref(SluiceVmDomain *vm)
{
        return vm;      /* the test owns the one VM for its whole run */
}

void sluice_vm_domain_unref(SluiceVmDomain *vm)
{
        (void)vm;
}

virDomainPtr sluice_vm_domain_get_raw(SluiceVmDomain *vm)
{
        (void)vm;
        return NULL;    /* the pretend agent does not look at the domain */
}

const char *sluice_vm_domain_agent_message(SluiceVmDomain *vm)
{
        return vm->guest_agent == SLUICE_WIRE_AGENT_READY ? "" : "The guest agent does not answer.";
}

char *sluice_vm_domain_restricted_message(const char *blocked)
{
        return g_strdup_printf("The agent blocks %s.", blocked != NULL ? blocked : "something");
}

void sluice_vm_domain_agent_recheck(SluiceVmDomain *vm)
{
        (void)vm;
        rechecks++;
}

const char *sluice_vm_connection_get_uri(SluiceVmConnection *connection)
{
        (void)connection;
        return "test:///default";
}

/* ---- the test ---- */

typedef struct {
        gboolean done;
        gboolean ok;
        GError *error;
} Answer;

static void on_unmounted(GObject *source, GAsyncResult *result, gpointer user_data)
{
        Answer *answer = user_data;

        answer->ok = sluice_vm_manager_guest_unmount_finish(SLUICE_VM_MANAGER(source), result, &answer->error);
        answer->done = TRUE;
}

static gboolean on_too_long(gpointer user_data)
{
        (void)user_data;
        g_error("the unmount did not answer within 30 s");
        return G_SOURCE_REMOVE;
}

/* Unmounts "docs" in a running Linux guest whose agent answers every
 * guest-exec with libvirt's error AGENT_SAYS; returns the share's error. */
static GError *unmount_with_agent_saying(const char *agent_says)
{
        g_autoptr(SluiceVmManager) manager = g_object_new(SLUICE_TYPE_VM_MANAGER, NULL);
        SluiceVmDomain vm = { 0 };
        Answer answer = { 0 };
        guint too_long;

        vm.name = (char *)"vm1";
        vm.os = (char *)"";
        vm.active = TRUE;
        vm.guest_agent = SLUICE_WIRE_AGENT_READY;
        vm.guest_os_type = SLUICE_WIRE_GUEST_OS_LINUX;
        vm.guest_calls = g_queue_new();
        vm.guest_mounts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        /* connected to libvirt: vm-guest.c only asks whether it is */
        vm.domain = (GVirDomain *)&vm;
        manager->vm = &vm;

        fake_guest_reset();
        fake_guest_put_file("/proc/mounts", "docs /mnt/docs virtiofs rw,relatime 0 0\n", -1, 0444);
        fake_guest_fail("guest-exec", 0, agent_says);
        rechecks = 0;

        too_long = g_timeout_add_seconds(30, on_too_long, NULL);
        sluice_vm_manager_guest_unmount_async(manager, "vm1", "docs", "/mnt/docs", on_unmounted, &answer);
        while (!answer.done)
                g_main_context_iteration(NULL, TRUE);
        g_source_remove(too_long);

        g_assert_false(answer.ok);
        g_assert_true(g_queue_is_empty(vm.guest_calls));
        g_queue_free(vm.guest_calls);
        g_hash_table_unref(vm.guest_mounts);
        fake_guest_fail(NULL, 0, NULL);
        return answer.error;
}

/* A Linux guest's agent that stops answering in the middle of an unmount:
 * the share's Error says the agent did not answer, and the VM asks its
 * agent anew (so that Vm.GuestAgent stops saying "ready"). */
static void test_agent_gone_rechecks(void)
{
        g_autoptr(GError) error = unmount_with_agent_saying(
                "Guest agent is not responding: Guest agent didn't respond to command, timed out");

        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT);
        g_test_message("it says: %s", error->message);
        g_assert_nonnull(strstr(error->message, "did not answer in time"));
        g_assert_cmpuint(rechecks, ==, 1);
}

/* An agent that answers, with an error of the guest's: said as the
 * guest's words, and the agent is not asked anew (it is there). */
static void test_agent_error_no_recheck(void)
{
        g_autoptr(GError) error = unmount_with_agent_saying(
                "internal error: unable to execute QEMU agent command 'guest-exec': Permission denied");

        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT);
        g_test_message("it says: %s", error->message);
        g_assert_nonnull(strstr(error->message, "the guest said"));
        g_assert_nonnull(strstr(error->message, "Permission denied"));
        g_assert_cmpuint(rechecks, ==, 0);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/vm-guest/agent-gone-rechecks", test_agent_gone_rechecks);
        g_test_add_func("/vm-guest/agent-error-no-recheck", test_agent_error_no_recheck);
        return g_test_run();
}
