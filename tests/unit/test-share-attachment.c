/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The attachment's table alone (share-attachment.h): every event in every
 * state gives the documented next state, actions and answer to a caller. */
#include <glib.h>

#include "share-attachment.h"

#define A(name) SLUICE_SHARE_ACTION_##name
#define S(name) SLUICE_SHARE_ATTACHMENT_##name
#define C(name) SLUICE_SHARE_CALLER_##name

typedef struct {
        SluiceShareAttachmentState state;
        SluiceShareAttachmentEvent event;
        SluiceShareAttachmentState next;
        SluiceShareActions actions;
        SluiceShareCaller caller;
} Expected;

/* Written from the header's diagram and comments, not from the table:
 * anything not listed leaves the state as it is and does nothing. */
static const Expected expected[] = {
        { S(UNPLUGGED), S(PLUG), S(PLUGGING), A(PLUG), C(WAIT_PLUG) },
        { S(UNPLUGGED), S(UNPLUG), S(UNPLUGGED), 0, C(DONE) },
        { S(UNPLUGGED), S(SETTLE), S(UNPLUGGED), 0, C(DONE) },
        { S(UNPLUGGED), S(WORKER_RESTARTED), S(UNPLUGGED), A(REPORT_RESTARTED), C(NONE) },

        { S(PLUGGING), S(PLUG), S(PLUGGING), 0, C(WAIT_PLUG) },
        { S(PLUGGING), S(UNPLUG), S(PLUGGING), 0, C(DONE) },
        { S(PLUGGING), S(SETTLE), S(PLUGGING), 0, C(JOIN_PLUG) },
        { S(PLUGGING), S(PLUG_DONE), S(PLUGGED),
          A(CLEAR_ERROR) | A(SET_HINT) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(PLUGGING), S(PLUG_DONE_WORKER_LOST), S(STALE), A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(PLUGGING), S(PLUG_DONE_UNWANTED), S(UNPLUGGED),
          A(UNPLUG_QUIETLY) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(PLUGGING), S(PLUG_FAILED), S(UNPLUGGED), A(REPORT_PLUG_FAILED) | A(FAIL_ATTACH_WAITERS), C(NONE) },
        { S(PLUGGING), S(PLUG_CANCELLED), S(UNPLUGGED), A(FAIL_ATTACH_WAITERS), C(NONE) },
        { S(PLUGGING), S(WORKER_RESTARTED), S(PLUGGING), A(REPORT_RESTARTED), C(NONE) },

        { S(PLUGGED), S(PLUG), S(PLUGGED), 0, C(HINT) },
        { S(PLUGGED), S(UNPLUG), S(UNPLUGGING), A(UNPLUG), C(WAIT_UNPLUG) },
        { S(PLUGGED), S(SETTLE), S(PLUGGED), 0, C(DONE) },
        { S(PLUGGED), S(DEVICE_REMOVED), S(UNPLUGGED), A(CLEAR_HINT) | A(REPORT_DETACHED), C(NONE) },
        { S(PLUGGED), S(VM_STOPPED), S(UNPLUGGED), A(CLEAR_HINT) | A(REPORT_DETACHED), C(NONE) },
        { S(PLUGGED), S(VM_UNASSIGNED), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_HINT), C(NONE) },
        { S(PLUGGED), S(WORKER_LOST), S(STALE), 0, C(NONE) },
        { S(PLUGGED), S(WORKER_GONE), S(UNPLUGGED), A(UNPLUG_QUIETLY), C(NONE) },

        { S(UNPLUGGING), S(PLUG), S(UNPLUGGING), 0, C(HINT) },
        { S(UNPLUGGING), S(UNPLUG), S(UNPLUGGING), 0, C(WAIT_UNPLUG) },
        { S(UNPLUGGING), S(SETTLE), S(UNPLUGGING), 0, C(DONE) },
        { S(UNPLUGGING), S(UNPLUG_DONE), S(UNPLUGGED),
          A(CLEAR_HINT) | A(REPORT_DETACHED) | A(COMPLETE_DETACH_WAITERS), C(NONE) },
        { S(UNPLUGGING), S(UNPLUG_FAILED), S(PLUGGED), A(FAIL_DETACH_WAITERS), C(NONE) },

        { S(STALE), S(PLUG), S(STALE), 0, C(WAIT_PLUG) },
        { S(STALE), S(UNPLUG), S(UNPLUGGED), A(UNPLUG_QUIETLY), C(DONE) },
        { S(STALE), S(SETTLE), S(STALE), 0, C(DONE) },
        { S(STALE), S(DEVICE_REMOVED), S(UNPLUGGED), 0, C(NONE) },
        { S(STALE), S(VM_STOPPED), S(UNPLUGGED), 0, C(NONE) },
        { S(STALE), S(VM_UNASSIGNED), S(UNPLUGGED), 0, C(NONE) },
        { S(STALE), S(WORKER_READY), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(STALE), S(WORKER_RESTARTED), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(STALE), S(WORKER_GONE), S(UNPLUGGED), A(UNPLUG_QUIETLY), C(NONE) },

        { S(RECOVERING), S(PLUG), S(RECOVERING), 0, C(WAIT_PLUG) },
        { S(RECOVERING), S(UNPLUG), S(UNPLUGGED), 0, C(DONE) },
        { S(RECOVERING), S(SETTLE), S(RECOVERING), 0, C(DONE) },
        { S(RECOVERING), S(UNPLUG_DONE), S(REPLUGGING), A(PLUG), C(NONE) },
        /* with tries left (the walk starts each case at the first try) */
        { S(RECOVERING), S(UNPLUG_FAILED), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(RECOVERING), S(VM_STOPPED), S(UNPLUGGED), 0, C(NONE) },
        { S(RECOVERING), S(WORKER_LOST), S(STALE), 0, C(NONE) },
        { S(RECOVERING), S(WORKER_GONE), S(UNPLUGGED), 0, C(NONE) },

        { S(AWAITING_OLD_DEVICE), S(PLUG), S(PLUGGING), A(PLUG), C(WAIT_PLUG) },
        { S(AWAITING_OLD_DEVICE), S(UNPLUG), S(UNPLUGGED), A(UNPLUG_QUIETLY), C(DONE) },
        { S(AWAITING_OLD_DEVICE), S(SETTLE), S(AWAITING_OLD_DEVICE), 0, C(DONE) },
        { S(AWAITING_OLD_DEVICE), S(DEVICE_REMOVED), S(REPLUGGING), A(CLEAR_ERROR) | A(PLUG), C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(VM_STOPPED), S(UNPLUGGED), 0, C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(VM_UNASSIGNED), S(UNPLUGGED), 0, C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(WORKER_LOST), S(STALE), 0, C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(WORKER_GONE), S(UNPLUGGED), 0, C(NONE) },

        { S(REPLUGGING), S(PLUG), S(REPLUGGING), 0, C(WAIT_PLUG) },
        { S(REPLUGGING), S(UNPLUG), S(REPLUGGING), 0, C(DONE) },
        { S(REPLUGGING), S(SETTLE), S(REPLUGGING), 0, C(JOIN_PLUG) },
        { S(REPLUGGING), S(PLUG_DONE), S(PLUGGED),
          A(CLEAR_ERROR) | A(SET_HINT) | A(REPORT_ATTACHED) | A(REPORT_RECOVERED) |
          A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_DONE_WORKER_LOST), S(STALE), A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_DONE_UNWANTED), S(UNPLUGGED),
          A(UNPLUG_QUIETLY) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_FAILED), S(UNPLUGGED), A(REPORT_REPLUG_FAILED) | A(FAIL_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_CANCELLED), S(UNPLUGGED), A(REPORT_REPLUG_FAILED) | A(FAIL_ATTACH_WAITERS), C(NONE) },
};

static void test_every_event_in_every_state(void)
{
        guint listed = 0;

        for (guint state = 0; state < SLUICE_SHARE_ATTACHMENT_N_STATES; state++) {
                for (guint event = 0; event < SLUICE_SHARE_ATTACHMENT_N_EVENTS; event++) {
                        Expected want = { state, event, state, 0, C(NONE) };
                        SluiceShareAttachment machine = { .state = state, .recovery_tries = 1 };
                        SluiceShareAttachmentResult got;

                        for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
                                if (expected[i].state == state && expected[i].event == event) {
                                        want = expected[i];
                                        listed++;
                                }
                        }
                        got = sluice_share_attachment_step(&machine, event);
                        g_test_message("%s + %s -> %s", sluice_share_attachment_state_name(state),
                                       sluice_share_attachment_event_name(event),
                                       sluice_share_attachment_state_name(got.next));
                        g_assert_cmpstr(sluice_share_attachment_state_name(got.next), ==,
                                        sluice_share_attachment_state_name(want.next));
                        g_assert_cmpuint(machine.state, ==, got.next);
                        g_assert_cmphex(got.actions, ==, want.actions);
                        g_assert_cmpint(got.caller, ==, want.caller);
                }
        }
        /* each listed row names a real pair, once */
        g_assert_cmpuint(listed, ==, G_N_ELEMENTS(expected));
}

/* A busy guest misses unplug requests: asked three times in all, then
 * Sluice waits for the guest, and plugs in once the device is gone. */
static void test_recovery_asks_three_times_then_waits(void)
{
        SluiceShareAttachment machine;
        SluiceShareAttachmentResult r;

        sluice_share_attachment_init(&machine);
        machine.state = S(STALE);
        r = sluice_share_attachment_step(&machine, S(WORKER_RESTARTED));
        g_assert_cmphex(r.actions, ==, A(UNPLUG_OLD_DEVICE));
        g_assert_cmpuint(machine.recovery_tries, ==, 1);
        for (guint try = 2; try <= SLUICE_SHARE_RECOVERY_UNPLUG_TRIES; try++) {
                r = sluice_share_attachment_step(&machine, S(UNPLUG_FAILED));
                g_assert_cmpint(r.next, ==, S(RECOVERING));
                g_assert_cmphex(r.actions, ==, A(UNPLUG_OLD_DEVICE));
                g_assert_cmpuint(machine.recovery_tries, ==, try);
        }
        r = sluice_share_attachment_step(&machine, S(UNPLUG_FAILED));
        g_assert_cmpint(r.next, ==, S(AWAITING_OLD_DEVICE));
        g_assert_cmphex(r.actions, ==, A(REPORT_OLD_DEVICE_HELD) | A(FAIL_ATTACH_WAITERS));
        g_assert_false(sluice_share_attachment_in_vm(r.next));

        r = sluice_share_attachment_step(&machine, S(DEVICE_REMOVED));
        g_assert_cmpint(r.next, ==, S(REPLUGGING));
        g_assert_cmphex(r.actions, ==, A(CLEAR_ERROR) | A(PLUG));
        r = sluice_share_attachment_step(&machine, S(PLUG_DONE));
        g_assert_cmpint(r.next, ==, S(PLUGGED));
        g_assert_true(r.actions & A(REPORT_RECOVERED));
        g_assert_true(sluice_share_attachment_in_vm(r.next));

        /* a second crash starts counting again */
        (void)sluice_share_attachment_step(&machine, S(WORKER_LOST));
        r = sluice_share_attachment_step(&machine, S(WORKER_RESTARTED));
        g_assert_cmpint(r.next, ==, S(RECOVERING));
        g_assert_cmpuint(machine.recovery_tries, ==, 1);
}

/* The share counts as "attached" exactly while a device of its running
 * worker is in the VM. */
static void test_in_vm(void)
{
        for (guint state = 0; state < SLUICE_SHARE_ATTACHMENT_N_STATES; state++)
                g_assert_cmpint(sluice_share_attachment_in_vm(state), ==,
                                state == S(PLUGGED) || state == S(UNPLUGGING));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/share-attachment/every-event-in-every-state", test_every_event_in_every_state);
        g_test_add_func("/share-attachment/recovery-asks-three-times-then-waits",
                        test_recovery_asks_three_times_then_waits);
        g_test_add_func("/share-attachment/in-vm", test_in_vm);
        return g_test_run();
}
