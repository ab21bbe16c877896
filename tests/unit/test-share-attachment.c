/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The attachment's table alone (share-attachment.h): every event in every
 * state gives the documented next state, actions and answer to a caller. */
#include <glib.h>

#include "share-attachment.h"

#define A(name) SLUICE_SHARE_ACTION_##name
#define S(name) SLUICE_SHARE_ATTACHMENT_##name
#define C(name) SLUICE_SHARE_CALLER_##name
#define GONE (A(CLEAR_HINT) | A(CLEAR_GUEST) | A(REPORT_DETACHED))
/* taken out by someone else: QEMU's access goes with it */
#define REMOVED (GONE | A(REVOKE_ACCESS))
#define UNPLUG_UNMOUNTED (A(UNPLUG) | A(NOTE_UNMOUNT_SKIPPED))

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
        { S(UNPLUGGED), S(UNPLUG_FORCED), S(UNPLUGGED), 0, C(DONE) },
        { S(UNPLUGGED), S(SETTLE), S(UNPLUGGED), 0, C(DONE) },
        { S(UNPLUGGED), S(WORKER_RESTARTED), S(UNPLUGGED), A(REPORT_RESTARTED), C(NONE) },

        { S(PLUGGING), S(PLUG), S(PLUGGING), 0, C(WAIT_PLUG) },
        { S(PLUGGING), S(UNPLUG), S(PLUGGING), 0, C(DONE) },
        { S(PLUGGING), S(UNPLUG_FORCED), S(PLUGGING), 0, C(DONE) },
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
        { S(PLUGGED), S(UNPLUG_FORCED), S(UNPLUGGING), A(UNPLUG), C(WAIT_UNPLUG) },
        { S(PLUGGED), S(SETTLE), S(PLUGGED), 0, C(DONE) },
        { S(PLUGGED), S(DEVICE_REMOVED), S(UNPLUGGED), REMOVED, C(NONE) },
        { S(PLUGGED), S(VM_STOPPED), S(UNPLUGGED), GONE, C(NONE) },
        { S(PLUGGED), S(VM_UNASSIGNED), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST), C(NONE) },
        { S(PLUGGED), S(WORKER_LOST), S(STALE), 0, C(NONE) },
        { S(PLUGGED), S(WORKER_GONE), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_GUEST), C(NONE) },

        { S(UNPLUGGING), S(PLUG), S(UNPLUGGING), 0, C(HINT) },
        { S(UNPLUGGING), S(UNPLUG), S(UNPLUGGING), 0, C(WAIT_UNPLUG) },
        { S(UNPLUGGING), S(UNPLUG_FORCED), S(UNPLUGGING), 0, C(WAIT_UNPLUG) },
        { S(UNPLUGGING), S(SETTLE), S(UNPLUGGING), 0, C(DONE) },
        { S(UNPLUGGING), S(UNPLUG_DONE), S(UNPLUGGED), GONE | A(COMPLETE_DETACH_WAITERS), C(NONE) },
        { S(UNPLUGGING), S(UNPLUG_FAILED), S(PLUGGED), A(FAIL_DETACH_WAITERS), C(NONE) },

        { S(STALE), S(PLUG), S(STALE), 0, C(WAIT_PLUG) },
        { S(STALE), S(UNPLUG), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_GUEST), C(DONE) },
        { S(STALE), S(UNPLUG_FORCED), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_GUEST), C(DONE) },
        { S(STALE), S(SETTLE), S(STALE), 0, C(DONE) },
        { S(STALE), S(DEVICE_REMOVED), S(UNPLUGGED), A(CLEAR_GUEST) | A(REVOKE_ACCESS), C(NONE) },
        { S(STALE), S(VM_STOPPED), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },
        { S(STALE), S(VM_UNASSIGNED), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },
        { S(STALE), S(WORKER_READY), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(STALE), S(WORKER_RESTARTED), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(STALE), S(WORKER_GONE), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_GUEST), C(NONE) },

        { S(RECOVERING), S(PLUG), S(RECOVERING), 0, C(WAIT_PLUG) },
        { S(RECOVERING), S(UNPLUG), S(UNPLUGGED), A(CLEAR_GUEST), C(DONE) },
        { S(RECOVERING), S(UNPLUG_FORCED), S(UNPLUGGED), A(CLEAR_GUEST), C(DONE) },
        { S(RECOVERING), S(SETTLE), S(RECOVERING), 0, C(DONE) },
        { S(RECOVERING), S(UNPLUG_DONE), S(REPLUGGING), A(PLUG), C(NONE) },
        /* with tries left (the walk starts each case at the first try) */
        { S(RECOVERING), S(UNPLUG_FAILED), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(RECOVERING), S(VM_STOPPED), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },
        { S(RECOVERING), S(WORKER_LOST), S(STALE), 0, C(NONE) },
        { S(RECOVERING), S(WORKER_GONE), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },

        { S(AWAITING_OLD_DEVICE), S(PLUG), S(PLUGGING), A(PLUG), C(WAIT_PLUG) },
        { S(AWAITING_OLD_DEVICE), S(UNPLUG), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_GUEST), C(DONE) },
        { S(AWAITING_OLD_DEVICE), S(UNPLUG_FORCED), S(UNPLUGGED), A(UNPLUG_QUIETLY) | A(CLEAR_GUEST), C(DONE) },
        { S(AWAITING_OLD_DEVICE), S(SETTLE), S(AWAITING_OLD_DEVICE), 0, C(DONE) },
        { S(AWAITING_OLD_DEVICE), S(DEVICE_REMOVED), S(REPLUGGING), A(CLEAR_ERROR) | A(REVOKE_ACCESS) | A(PLUG), C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(VM_STOPPED), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(VM_UNASSIGNED), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(WORKER_LOST), S(STALE), 0, C(NONE) },
        { S(AWAITING_OLD_DEVICE), S(WORKER_GONE), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },

        { S(REPLUGGING), S(PLUG), S(REPLUGGING), 0, C(WAIT_PLUG) },
        { S(REPLUGGING), S(UNPLUG), S(REPLUGGING), 0, C(DONE) },
        { S(REPLUGGING), S(UNPLUG_FORCED), S(REPLUGGING), 0, C(DONE) },
        { S(REPLUGGING), S(SETTLE), S(REPLUGGING), 0, C(JOIN_PLUG) },
        { S(REPLUGGING), S(PLUG_DONE), S(PLUGGED),
          A(CLEAR_ERROR) | A(CLEAR_GUEST) | A(SET_HINT) | A(REPORT_ATTACHED) | A(REPORT_RECOVERED) |
          A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_DONE_WORKER_LOST), S(STALE), A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_DONE_UNWANTED), S(UNPLUGGED),
          A(UNPLUG_QUIETLY) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_FAILED), S(UNPLUGGED),
          A(CLEAR_GUEST) | A(REPORT_REPLUG_FAILED) | A(FAIL_ATTACH_WAITERS), C(NONE) },
        { S(REPLUGGING), S(PLUG_CANCELLED), S(UNPLUGGED),
          A(CLEAR_GUEST) | A(REPORT_REPLUG_FAILED) | A(FAIL_ATTACH_WAITERS), C(NONE) },

        /* the guest: an Attach ends when the mount attempt does */
        { S(MOUNTING), S(PLUG), S(MOUNTING), 0, C(WAIT_PLUG) },
        { S(MOUNTING), S(UNPLUG), S(UNMOUNTING), 0, C(WAIT_UNPLUG) },
        /* force: the guest is not asked, not even waited for */
        { S(MOUNTING), S(UNPLUG_FORCED), S(UNPLUGGING_MOUNTED), UNPLUG_UNMOUNTED, C(WAIT_UNPLUG) },
        { S(MOUNTING), S(SETTLE), S(MOUNTING), 0, C(JOIN_PLUG) },
        { S(MOUNTING), S(GUEST_MOUNTED), S(MOUNTED),
          A(CLEAR_ERROR) | A(SET_GUEST_PATH) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(MOUNTING), S(GUEST_MOUNT_FAILED), S(PLUGGED),
          A(REPORT_MOUNT_FAILED) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(MOUNTING), S(DEVICE_REMOVED), S(UNPLUGGED), REMOVED | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(MOUNTING), S(VM_STOPPED), S(UNPLUGGED), GONE | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(MOUNTING), S(VM_UNASSIGNED), S(UNPLUGGED),
          A(UNMOUNT_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(MOUNTING), S(WORKER_LOST), S(STALE_MOUNTED), 0, C(NONE) },
        { S(MOUNTING), S(WORKER_GONE), S(UNPLUGGED), A(RELEASE_QUIETLY) | A(CLEAR_GUEST), C(NONE) },

        { S(MOUNTED), S(PLUG), S(MOUNTED), 0, C(HINT) },
        { S(MOUNTED), S(UNPLUG), S(UNMOUNTING), A(UNMOUNT_IN_GUEST), C(WAIT_UNPLUG) },
        { S(MOUNTED), S(UNPLUG_FORCED), S(UNPLUGGING_MOUNTED), UNPLUG_UNMOUNTED, C(WAIT_UNPLUG) },
        { S(MOUNTED), S(SETTLE), S(MOUNTED), 0, C(DONE) },
        { S(MOUNTED), S(DEVICE_REMOVED), S(UNPLUGGED), REMOVED, C(NONE) },
        { S(MOUNTED), S(VM_STOPPED), S(UNPLUGGED), GONE, C(NONE) },
        { S(MOUNTED), S(VM_UNASSIGNED), S(UNPLUGGED), A(UNMOUNT_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST), C(NONE) },
        { S(MOUNTED), S(WORKER_LOST), S(STALE_MOUNTED), 0, C(NONE) },
        { S(MOUNTED), S(WORKER_GONE), S(UNPLUGGED), A(RELEASE_QUIETLY) | A(CLEAR_GUEST), C(NONE) },
        /* MountAtBoot switched on: the mounted share's guest writes its line now */
        { S(MOUNTED), S(MOUNT_AT_BOOT_ON), S(MOUNTED), A(WRITE_BOOT_LINE), C(NONE) },

        { S(UNMOUNTING), S(PLUG), S(UNMOUNTING), 0, C(HINT) },
        { S(UNMOUNTING), S(UNPLUG), S(UNMOUNTING), 0, C(WAIT_UNPLUG) },
        { S(UNMOUNTING), S(UNPLUG_FORCED), S(UNPLUGGING_MOUNTED), UNPLUG_UNMOUNTED, C(WAIT_UNPLUG) },
        { S(UNMOUNTING), S(SETTLE), S(UNMOUNTING), 0, C(DONE) },
        { S(UNMOUNTING), S(GUEST_UNMOUNTED), S(UNPLUGGING), A(CLEAR_GUEST) | A(UNPLUG), C(NONE) },
        { S(UNMOUNTING), S(GUEST_UNMOUNT_BUSY), S(MOUNTED), A(SET_GUEST_PATH) | A(FAIL_DETACH_WAITERS), C(NONE) },
        /* silence, garbage, the deadline: not busy; out, and Error says why */
        { S(UNMOUNTING), S(GUEST_UNMOUNT_FAILED), S(UNPLUGGING_MOUNTED), UNPLUG_UNMOUNTED | A(REPORT_UNMOUNT_FAILED),
          C(NONE) },
        { S(UNMOUNTING), S(GUEST_MOUNTED), S(UNMOUNTING), A(UNMOUNT_IN_GUEST) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(UNMOUNTING), S(GUEST_MOUNT_FAILED), S(UNPLUGGING),
          A(CLEAR_GUEST) | A(UNPLUG) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        /* a Detach while a crash's dead mount was let go: nothing mounted, out */
        { S(UNMOUNTING), S(GUEST_RELEASED), S(UNPLUGGING),
          A(CLEAR_GUEST) | A(UNPLUG) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(UNMOUNTING), S(DEVICE_REMOVED), S(UNPLUGGED),
          REMOVED | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS), C(NONE) },
        { S(UNMOUNTING), S(VM_STOPPED), S(UNPLUGGED),
          GONE | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS), C(NONE) },
        { S(UNMOUNTING), S(VM_UNASSIGNED), S(UNPLUGGED),
          A(UNPLUG_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS) |
          A(COMPLETE_DETACH_WAITERS), C(NONE) },

        { S(REMOUNTING), S(PLUG), S(REMOUNTING), 0, C(WAIT_PLUG) },
        { S(REMOUNTING), S(UNPLUG), S(UNMOUNTING), 0, C(WAIT_UNPLUG) },
        { S(REMOUNTING), S(UNPLUG_FORCED), S(UNPLUGGING_MOUNTED), UNPLUG_UNMOUNTED, C(WAIT_UNPLUG) },
        { S(REMOUNTING), S(SETTLE), S(REMOUNTING), 0, C(JOIN_PLUG) },
        { S(REMOUNTING), S(GUEST_MOUNTED), S(MOUNTED),
          A(CLEAR_ERROR) | A(SET_GUEST_PATH) | A(REPORT_ATTACHED) | A(REPORT_RECOVERED) |
          A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REMOUNTING), S(GUEST_MOUNT_FAILED), S(PLUGGED),
          A(REPORT_MOUNT_FAILED) | A(REPORT_ATTACHED) | A(REPORT_RECOVERED) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REMOUNTING), S(DEVICE_REMOVED), S(UNPLUGGED), REMOVED | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        /* the dead mount is gone: mounted again (at the same place) */
        { S(REMOUNTING), S(GUEST_RELEASED), S(REMOUNTING), A(MOUNT_IN_GUEST), C(NONE) },
        { S(REMOUNTING), S(VM_STOPPED), S(UNPLUGGED), GONE | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REMOUNTING), S(VM_UNASSIGNED), S(UNPLUGGED),
          A(UNMOUNT_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS), C(NONE) },
        { S(REMOUNTING), S(WORKER_LOST), S(STALE_MOUNTED), 0, C(NONE) },
        { S(REMOUNTING), S(WORKER_GONE), S(UNPLUGGED), A(RELEASE_QUIETLY) | A(CLEAR_GUEST), C(NONE) },

        { S(STALE_MOUNTED), S(PLUG), S(STALE_MOUNTED), 0, C(WAIT_PLUG) },
        { S(STALE_MOUNTED), S(UNPLUG), S(UNPLUGGED), A(RELEASE_QUIETLY) | A(CLEAR_GUEST), C(DONE) },
        { S(STALE_MOUNTED), S(UNPLUG_FORCED), S(UNPLUGGED), A(RELEASE_QUIETLY) | A(CLEAR_GUEST), C(DONE) },
        { S(STALE_MOUNTED), S(SETTLE), S(STALE_MOUNTED), 0, C(DONE) },
        { S(STALE_MOUNTED), S(DEVICE_REMOVED), S(UNPLUGGED), A(CLEAR_GUEST) | A(REVOKE_ACCESS), C(NONE) },
        { S(STALE_MOUNTED), S(VM_STOPPED), S(UNPLUGGED), A(CLEAR_GUEST), C(NONE) },
        { S(STALE_MOUNTED), S(VM_UNASSIGNED), S(UNPLUGGED), A(RELEASE_QUIETLY) | A(CLEAR_GUEST), C(NONE) },
        { S(STALE_MOUNTED), S(WORKER_READY), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(STALE_MOUNTED), S(WORKER_RESTARTED), S(RECOVERING), A(UNPLUG_OLD_DEVICE), C(NONE) },
        { S(STALE_MOUNTED), S(WORKER_GONE), S(UNPLUGGED), A(RELEASE_QUIETLY) | A(CLEAR_GUEST), C(NONE) },

        /* out without the guest's unmount: its mount is let go once the device is */
        { S(UNPLUGGING_MOUNTED), S(PLUG), S(UNPLUGGING_MOUNTED), 0, C(HINT) },
        { S(UNPLUGGING_MOUNTED), S(UNPLUG), S(UNPLUGGING_MOUNTED), 0, C(WAIT_UNPLUG) },
        { S(UNPLUGGING_MOUNTED), S(UNPLUG_FORCED), S(UNPLUGGING_MOUNTED), 0, C(WAIT_UNPLUG) },
        { S(UNPLUGGING_MOUNTED), S(SETTLE), S(UNPLUGGING_MOUNTED), 0, C(DONE) },
        { S(UNPLUGGING_MOUNTED), S(UNPLUG_DONE), S(UNPLUGGED),
          GONE | A(LET_GO_QUIETLY) | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS), C(NONE) },
        { S(UNPLUGGING_MOUNTED), S(UNPLUG_FAILED), S(MOUNTED),
          A(COMPLETE_ATTACH_WAITERS) | A(FAIL_DETACH_WAITERS), C(NONE) },
        /* DEVICE_REMOVED: Sluice's own unplug, which UNPLUG_DONE reports */
        { S(UNPLUGGING_MOUNTED), S(VM_STOPPED), S(UNPLUGGED),
          GONE | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS), C(NONE) },
        { S(UNPLUGGING_MOUNTED), S(VM_UNASSIGNED), S(UNPLUGGED),
          A(UNPLUG_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS) |
          A(COMPLETE_DETACH_WAITERS), C(NONE) },
};

/* Where Sluice handles the guest, these rows differ; every other is as above. */
static const Expected managed[] = {
        { S(PLUGGING), S(PLUG_DONE), S(MOUNTING), A(CLEAR_ERROR) | A(SET_HINT) | A(MOUNT_IN_GUEST), C(NONE) },
        { S(PLUGGED), S(GUEST_READY), S(MOUNTING), A(MOUNT_IN_GUEST), C(NONE) },
        { S(MOUNTED), S(GUEST_READY), S(MOUNTING), A(MOUNT_IN_GUEST), C(NONE) },
        { S(REPLUGGING), S(PLUG_DONE), S(REMOUNTING), A(CLEAR_ERROR) | A(SET_HINT) | A(RELEASE_DEAD_MOUNT), C(NONE) },
};

static void check_every_event(gboolean guest_managed)
{
        guint listed = 0, overridden = 0;

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
                        for (guint i = 0; guest_managed && i < G_N_ELEMENTS(managed); i++) {
                                if (managed[i].state == state && managed[i].event == event) {
                                        want = managed[i];
                                        overridden++;
                                }
                        }
                        got = sluice_share_attachment_step(&machine, event, guest_managed);
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
        g_assert_cmpuint(overridden, ==, guest_managed ? G_N_ELEMENTS(managed) : 0);
}

static void test_every_event_in_every_state(void)
{
        check_every_event(FALSE);
}

static void test_every_event_in_every_state_managed(void)
{
        check_every_event(TRUE);
}

/* A busy guest misses unplug requests: asked three times in all, then
 * Sluice waits for the guest, and plugs in once the device is gone. */
static void test_recovery_asks_three_times_then_waits(void)
{
        SluiceShareAttachment machine;
        SluiceShareAttachmentResult r;

        sluice_share_attachment_init(&machine);
        machine.state = S(STALE);
        r = sluice_share_attachment_step(&machine, S(WORKER_RESTARTED), FALSE);
        g_assert_cmphex(r.actions, ==, A(UNPLUG_OLD_DEVICE));
        g_assert_cmpuint(machine.recovery_tries, ==, 1);
        for (guint try = 2; try <= SLUICE_SHARE_RECOVERY_UNPLUG_TRIES; try++) {
                r = sluice_share_attachment_step(&machine, S(UNPLUG_FAILED), FALSE);
                g_assert_cmpint(r.next, ==, S(RECOVERING));
                g_assert_cmphex(r.actions, ==, A(UNPLUG_OLD_DEVICE));
                g_assert_cmpuint(machine.recovery_tries, ==, try);
        }
        r = sluice_share_attachment_step(&machine, S(UNPLUG_FAILED), FALSE);
        g_assert_cmpint(r.next, ==, S(AWAITING_OLD_DEVICE));
        g_assert_cmphex(r.actions, ==, A(REPORT_OLD_DEVICE_HELD) | A(FAIL_ATTACH_WAITERS));
        g_assert_false(sluice_share_attachment_in_vm(r.next));

        r = sluice_share_attachment_step(&machine, S(DEVICE_REMOVED), FALSE);
        g_assert_cmpint(r.next, ==, S(REPLUGGING));
        g_assert_cmphex(r.actions, ==, A(CLEAR_ERROR) | A(REVOKE_ACCESS) | A(PLUG));
        r = sluice_share_attachment_step(&machine, S(PLUG_DONE), FALSE);
        g_assert_cmpint(r.next, ==, S(PLUGGED));
        g_assert_true(r.actions & A(REPORT_RECOVERED));
        g_assert_true(sluice_share_attachment_in_vm(r.next));

        /* a second crash starts counting again */
        (void)sluice_share_attachment_step(&machine, S(WORKER_LOST), FALSE);
        r = sluice_share_attachment_step(&machine, S(WORKER_RESTARTED), FALSE);
        g_assert_cmpint(r.next, ==, S(RECOVERING));
        g_assert_cmpuint(machine.recovery_tries, ==, 1);
}

/* The share counts as "attached" exactly while a device of its running
 * worker is in the VM. */
static void test_in_vm(void)
{
        for (guint state = 0; state < SLUICE_SHARE_ATTACHMENT_N_STATES; state++)
                g_assert_cmpint(sluice_share_attachment_in_vm(state), ==,
                                state == S(PLUGGED) || state == S(UNPLUGGING) || state == S(UNPLUGGING_MOUNTED) ||
                                state == S(MOUNTING) || state == S(MOUNTED) || state == S(UNMOUNTING) ||
                                state == S(REMOUNTING));
}

static SluiceShareAttachmentResult go(SluiceShareAttachment *machine, SluiceShareAttachmentEvent event,
                                      gboolean guest_managed, SluiceShareAttachmentState next)
{
        SluiceShareAttachmentResult r = sluice_share_attachment_step(machine, event, guest_managed);

        g_assert_cmpstr(sluice_share_attachment_state_name(r.next), ==, sluice_share_attachment_state_name(next));
        return r;
}

/* With an agent (and AutoMount): the plug is followed by a mount, and the
 * Attach ends (with "attached" saying where) once it is mounted; without,
 * exactly as before. */
static void test_mounted_after_plug_when_managed(void)
{
        SluiceShareAttachment machine;
        SluiceShareAttachmentResult r;

        sluice_share_attachment_init(&machine);
        (void)go(&machine, S(PLUG), TRUE, S(PLUGGING));
        r = go(&machine, S(PLUG_DONE), TRUE, S(MOUNTING));
        g_assert_true(r.actions & A(MOUNT_IN_GUEST));
        g_assert_false(r.actions & (A(COMPLETE_ATTACH_WAITERS) | A(REPORT_ATTACHED)));
        g_assert_true(sluice_share_attachment_in_vm(r.next));
        r = go(&machine, S(GUEST_MOUNTED), TRUE, S(MOUNTED));
        g_assert_true(r.actions & A(SET_GUEST_PATH));
        g_assert_true(r.actions & A(COMPLETE_ATTACH_WAITERS));
        /* where it is, before the event and the callers hear of it */
        g_assert_cmphex(A(SET_GUEST_PATH), <, A(REPORT_ATTACHED));
        g_assert_cmphex(A(SET_GUEST_PATH), <, A(COMPLETE_ATTACH_WAITERS));

        /* a failed mount still attaches: Error says why */
        sluice_share_attachment_init(&machine);
        (void)go(&machine, S(PLUG), TRUE, S(PLUGGING));
        (void)go(&machine, S(PLUG_DONE), TRUE, S(MOUNTING));
        r = go(&machine, S(GUEST_MOUNT_FAILED), TRUE, S(PLUGGED));
        g_assert_cmphex(r.actions, ==, A(REPORT_MOUNT_FAILED) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS));
        g_assert_false(r.actions & A(FAIL_ATTACH_WAITERS));

        /* not managed: as before */
        sluice_share_attachment_init(&machine);
        (void)go(&machine, S(PLUG), FALSE, S(PLUGGING));
        r = go(&machine, S(PLUG_DONE), FALSE, S(PLUGGED));
        g_assert_false(r.actions & A(MOUNT_IN_GUEST));
        r = go(&machine, S(GUEST_READY), FALSE, S(PLUGGED));
        g_assert_cmphex(r.actions, ==, 0);
}

/* An agent that comes up after the plug (or AutoMount switched on) mounts
 * a plugged share; an agent that comes back (the guest rebooted, or the
 * agent restarted) mounts a mounted one again, at the place it had. */
static void test_guest_ready_mounts_plugged(void)
{
        SluiceShareAttachment machine = { .state = S(PLUGGED) };
        SluiceShareAttachmentResult r;

        r = go(&machine, S(GUEST_READY), TRUE, S(MOUNTING));
        g_assert_cmphex(r.actions, ==, A(MOUNT_IN_GUEST));
        (void)go(&machine, S(GUEST_MOUNTED), TRUE, S(MOUNTED));
        /* the agent went away (not managed meanwhile): nothing is done */
        r = go(&machine, S(GUEST_READY), FALSE, S(MOUNTED));
        g_assert_cmphex(r.actions, ==, 0);
        /* … and is back: mounted again, and GuestPath set from the answer */
        r = go(&machine, S(GUEST_READY), TRUE, S(MOUNTING));
        g_assert_cmphex(r.actions, ==, A(MOUNT_IN_GUEST));
        r = go(&machine, S(GUEST_MOUNTED), TRUE, S(MOUNTED));
        g_assert_true(r.actions & A(SET_GUEST_PATH));
        for (guint state = 0; state < SLUICE_SHARE_ATTACHMENT_N_STATES; state++) {
                SluiceShareAttachment m = { .state = state };

                r = sluice_share_attachment_step(&m, S(GUEST_READY), TRUE);
                if (state != S(PLUGGED) && state != S(MOUNTED))
                        g_assert_cmphex(r.actions, ==, 0);
        }
}

/* Detach of a mounted share: unmounted in the guest, then unplugged; an
 * unmount that fails for another reason than use is unplugged anyway. */
static void test_unmounted_before_unplug(void)
{
        SluiceShareAttachment machine = { .state = S(MOUNTED) };
        SluiceShareAttachmentResult r;

        r = go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        g_assert_cmphex(r.actions, ==, A(UNMOUNT_IN_GUEST));
        g_assert_cmpint(r.caller, ==, C(WAIT_UNPLUG));
        g_assert_true(sluice_share_attachment_in_vm(r.next));
        /* the device stays until the guest let go */
        r = go(&machine, S(UNPLUG_DONE), TRUE, S(UNMOUNTING));
        g_assert_cmphex(r.actions, ==, 0);
        r = go(&machine, S(GUEST_UNMOUNTED), TRUE, S(UNPLUGGING));
        g_assert_cmphex(r.actions, ==, A(CLEAR_GUEST) | A(UNPLUG));
        r = go(&machine, S(UNPLUG_DONE), TRUE, S(UNPLUGGED));
        g_assert_true(r.actions & A(COMPLETE_DETACH_WAITERS));

        machine.state = S(MOUNTED);
        (void)go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        r = go(&machine, S(GUEST_UNMOUNT_FAILED), TRUE, S(UNPLUGGING_MOUNTED));
        g_assert_true(r.actions & A(UNPLUG));
        g_assert_false(r.actions & A(FAIL_DETACH_WAITERS));
}

/* A guest that says nothing, says garbage or misses the deadline does not
 * keep the share (that is not "busy"): the device goes out, Error says the
 * guest did not answer, its mount is let go once the device is out, and a
 * late "busy" from it changes nothing. */
static void test_silent_guest_does_not_keep_it(void)
{
        SluiceShareAttachment machine = { .state = S(MOUNTED) };
        SluiceShareAttachmentResult r;

        (void)go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        r = go(&machine, S(GUEST_UNMOUNT_FAILED), TRUE, S(UNPLUGGING_MOUNTED));
        g_assert_cmphex(r.actions, ==, UNPLUG_UNMOUNTED | A(REPORT_UNMOUNT_FAILED));
        g_assert_true(sluice_share_attachment_in_vm(r.next));
        r = go(&machine, S(GUEST_UNMOUNT_BUSY), TRUE, S(UNPLUGGING_MOUNTED));
        g_assert_cmphex(r.actions, ==, 0);
        r = go(&machine, S(UNPLUG_DONE), TRUE, S(UNPLUGGED));
        g_assert_true(r.actions & A(LET_GO_QUIETLY));
        g_assert_true(r.actions & A(COMPLETE_DETACH_WAITERS));
        g_assert_false(sluice_share_attachment_in_vm(r.next));
}

/* Force never asks the guest: from every mount state straight to the
 * unplug, a pending unmount included; elsewhere it is a plain unplug. */
static void test_force_skips_the_guest(void)
{
        static const SluiceShareAttachmentState mounts[] = { S(MOUNTING), S(MOUNTED), S(UNMOUNTING), S(REMOUNTING) };

        for (guint i = 0; i < G_N_ELEMENTS(mounts); i++) {
                SluiceShareAttachment machine = { .state = mounts[i] };
                SluiceShareAttachmentResult r = go(&machine, S(UNPLUG_FORCED), TRUE, S(UNPLUGGING_MOUNTED));

                g_assert_cmphex(r.actions, ==, UNPLUG_UNMOUNTED);
                g_assert_false(r.actions & A(UNMOUNT_IN_GUEST));
                g_assert_cmpint(r.caller, ==, C(WAIT_UNPLUG));
                /* the guest's late answers are not waited for */
                r = go(&machine, S(GUEST_UNMOUNTED), TRUE, S(UNPLUGGING_MOUNTED));
                g_assert_cmphex(r.actions, ==, 0);
                r = go(&machine, S(GUEST_MOUNTED), TRUE, S(UNPLUGGING_MOUNTED));
                g_assert_cmphex(r.actions, ==, 0);
                r = go(&machine, S(UNPLUG_DONE), TRUE, S(UNPLUGGED));
                g_assert_true(r.actions & A(LET_GO_QUIETLY));
        }
        for (guint state = 0; state < SLUICE_SHARE_ATTACHMENT_N_STATES; state++) {
                SluiceShareAttachment polite = { .state = state, .recovery_tries = 1 };
                SluiceShareAttachment forced = { .state = state, .recovery_tries = 1 };
                SluiceShareAttachmentResult p = sluice_share_attachment_step(&polite, S(UNPLUG), TRUE);
                SluiceShareAttachmentResult f = sluice_share_attachment_step(&forced, S(UNPLUG_FORCED), TRUE);

                g_assert_false(f.actions & (A(UNMOUNT_IN_GUEST) | A(UNMOUNT_QUIETLY)));
                if (state == S(MOUNTING) || state == S(MOUNTED) || state == S(UNMOUNTING) || state == S(REMOUNTING))
                        continue;
                g_assert_cmpint(f.next, ==, p.next);
                g_assert_cmphex(f.actions, ==, p.actions);
                g_assert_cmpint(f.caller, ==, p.caller);
        }
}

/* The guest uses the share: the Detach fails, it stays mounted. */
static void test_busy_keeps_it_mounted(void)
{
        SluiceShareAttachment machine = { .state = S(MOUNTED) };
        SluiceShareAttachmentResult r;

        (void)go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        r = go(&machine, S(GUEST_UNMOUNT_BUSY), TRUE, S(MOUNTED));
        g_assert_cmphex(r.actions, ==, A(SET_GUEST_PATH) | A(FAIL_DETACH_WAITERS));
        g_assert_false(r.actions & (A(UNPLUG) | A(UNPLUG_QUIETLY) | A(CLEAR_GUEST)));
        /* and can be detached later */
        r = go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        g_assert_cmphex(r.actions, ==, A(UNMOUNT_IN_GUEST));
}

/* A Detach while the mount is under way waits for it, then unmounts. */
static void test_detach_while_mounting(void)
{
        SluiceShareAttachment machine = { .state = S(MOUNTING) };
        SluiceShareAttachmentResult r;

        r = go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        g_assert_cmphex(r.actions, ==, 0);
        r = go(&machine, S(GUEST_MOUNTED), TRUE, S(UNMOUNTING));
        g_assert_cmphex(r.actions, ==, A(UNMOUNT_IN_GUEST) | A(COMPLETE_ATTACH_WAITERS));
        (void)go(&machine, S(GUEST_UNMOUNTED), TRUE, S(UNPLUGGING));

        machine.state = S(MOUNTING);
        (void)go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        r = go(&machine, S(GUEST_MOUNT_FAILED), TRUE, S(UNPLUGGING));
        g_assert_cmphex(r.actions, ==, A(CLEAR_GUEST) | A(UNPLUG) | A(COMPLETE_ATTACH_WAITERS));
}

/* A crash while mounted: the old device is unplugged first (nothing asks
 * the guest before: it would hang on the dead connection), the new one
 * plugged and mounted at the same place (REMOUNTING lets the dead mount go
 * first), and "recovered" reported once it is. */
static void test_recovery_releases_and_remounts(void)
{
        SluiceShareAttachment machine = { .state = S(MOUNTED) };
        SluiceShareAttachmentResult r;

        r = go(&machine, S(WORKER_LOST), TRUE, S(STALE_MOUNTED));
        g_assert_cmphex(r.actions, ==, 0);  /* the place is kept */
        r = go(&machine, S(WORKER_RESTARTED), TRUE, S(RECOVERING));
        g_assert_cmphex(r.actions, ==, A(UNPLUG_OLD_DEVICE));
        g_assert_cmpuint(machine.recovery_tries, ==, 1);
        r = go(&machine, S(UNPLUG_DONE), TRUE, S(REPLUGGING));
        g_assert_cmphex(r.actions, ==, A(PLUG));
        r = go(&machine, S(PLUG_DONE), TRUE, S(REMOUNTING));
        /* the dead mount is let go first: mounting over it would find it "mounted" */
        g_assert_cmphex(r.actions, ==, A(CLEAR_ERROR) | A(SET_HINT) | A(RELEASE_DEAD_MOUNT));
        g_assert_false(r.actions & A(REPORT_RECOVERED));
        r = go(&machine, S(GUEST_RELEASED), TRUE, S(REMOUNTING));
        g_assert_cmphex(r.actions, ==, A(MOUNT_IN_GUEST));
        r = go(&machine, S(GUEST_MOUNTED), TRUE, S(MOUNTED));
        g_assert_true(r.actions & A(REPORT_RECOVERED));
        g_assert_true(r.actions & A(SET_GUEST_PATH));

        /* a dead worker's device that goes quietly (Stop): unplugged, then released */
        machine.state = S(STALE_MOUNTED);
        r = go(&machine, S(UNPLUG), TRUE, S(UNPLUGGED));
        g_assert_cmphex(r.actions, ==, A(RELEASE_QUIETLY) | A(CLEAR_GUEST));

        /* the VM stops in any mount state: unplugged, nothing shown */
        {
                static const SluiceShareAttachmentState mount_states[] = {
                        S(MOUNTING), S(MOUNTED), S(UNMOUNTING), S(REMOUNTING), S(STALE_MOUNTED),
                };

                for (guint i = 0; i < G_N_ELEMENTS(mount_states); i++) {
                        SluiceShareAttachment m = { .state = mount_states[i] };

                        r = go(&m, S(VM_STOPPED), TRUE, S(UNPLUGGED));
                        g_assert_true(r.actions & A(CLEAR_GUEST));
                        r = sluice_share_attachment_step(&(SluiceShareAttachment){ .state = mount_states[i] },
                                                         S(DEVICE_REMOVED), TRUE);
                        g_assert_cmpint(r.next, ==, S(UNPLUGGED));
                        g_assert_true(r.actions & A(CLEAR_GUEST));
                }
        }
}

/* The VM reports Sluice's own unplugs as removals too: while an unplug of
 * ours is under way (or done) the removal is not news, so the user hears
 * "unplugged" (UNPLUG_DONE), not "removed outside Sluice", and the access
 * the unplug gives back itself is not revoked a second time.  Elsewhere
 * someone else took it: Event "detached", and the access goes. */
static void test_own_unplug_is_not_a_removal(void)
{
        static const SluiceShareAttachmentState ours[] = {
                S(UNPLUGGED), S(UNPLUGGING), S(UNPLUGGING_MOUNTED), S(RECOVERING),
        };
        static const SluiceShareAttachmentState theirs[] = {
                S(PLUGGED), S(MOUNTING), S(MOUNTED), S(UNMOUNTING), S(REMOUNTING),
        };
        SluiceShareAttachmentResult r;

        for (guint i = 0; i < G_N_ELEMENTS(ours); i++) {
                for (gboolean handled = FALSE; handled <= TRUE; handled++) {
                        SluiceShareAttachment m = { .state = ours[i] };

                        r = go(&m, S(DEVICE_REMOVED), handled, ours[i]);
                        g_assert_cmphex(r.actions, ==, 0);
                }
        }
        for (guint i = 0; i < G_N_ELEMENTS(theirs); i++) {
                SluiceShareAttachment m = { .state = theirs[i] };

                r = go(&m, S(DEVICE_REMOVED), TRUE, S(UNPLUGGED));
                g_assert_true(r.actions & A(REPORT_DETACHED));
                g_assert_true(r.actions & A(REVOKE_ACCESS));
        }
        /* a forced Detach of a mounted share: out once UNPLUG_DONE says so */
        {
                SluiceShareAttachment m = { .state = S(MOUNTED) };

                r = go(&m, S(UNPLUG_FORCED), TRUE, S(UNPLUGGING_MOUNTED));
                g_assert_true(r.actions & A(NOTE_UNMOUNT_SKIPPED));
                (void)go(&m, S(DEVICE_REMOVED), TRUE, S(UNPLUGGING_MOUNTED));
                r = go(&m, S(UNPLUG_DONE), TRUE, S(UNPLUGGED));
                g_assert_cmphex(r.actions & (A(REPORT_DETACHED) | A(LET_GO_QUIETLY) | A(COMPLETE_DETACH_WAITERS)), ==,
                                A(REPORT_DETACHED) | A(LET_GO_QUIETLY) | A(COMPLETE_DETACH_WAITERS));
                g_assert_false(r.actions & A(REVOKE_ACCESS));
        }
}

/* A Detach (or Stop) while a crash's dead mount is being let go: nothing
 * of ours is mounted then, so once the guest let go the device is
 * unplugged (it used to wait for a mount nobody had asked for). */
static void test_detach_while_releasing_dead_mount(void)
{
        SluiceShareAttachment machine = { .state = S(REPLUGGING) };
        SluiceShareAttachmentResult r;

        r = go(&machine, S(PLUG_DONE), TRUE, S(REMOUNTING));
        g_assert_true(r.actions & A(RELEASE_DEAD_MOUNT));
        r = go(&machine, S(UNPLUG), TRUE, S(UNMOUNTING));
        g_assert_cmpint(r.caller, ==, C(WAIT_UNPLUG));
        g_assert_false(r.actions & (A(MOUNT_IN_GUEST) | A(UNMOUNT_IN_GUEST)));
        r = go(&machine, S(GUEST_RELEASED), TRUE, S(UNPLUGGING));
        g_assert_cmphex(r.actions, ==, A(CLEAR_GUEST) | A(UNPLUG) | A(COMPLETE_ATTACH_WAITERS));
        r = go(&machine, S(UNPLUG_DONE), TRUE, S(UNPLUGGED));
        g_assert_true(r.actions & A(COMPLETE_DETACH_WAITERS));

        /* a late answer (the share went on meanwhile) asks nothing */
        for (guint state = 0; state < SLUICE_SHARE_ATTACHMENT_N_STATES; state++) {
                SluiceShareAttachment m = { .state = state };

                if (state == S(REMOUNTING) || state == S(UNMOUNTING))
                        continue;
                r = go(&m, S(GUEST_RELEASED), TRUE, state);
                g_assert_cmphex(r.actions, ==, 0);
        }
}

/* MountAtBoot switched on writes the guest's line at once only where the
 * share is mounted (elsewhere the next mount does); the machine, not the
 * setting's code, knows where that is. */
static void test_mount_at_boot_on_writes_where_mounted(void)
{
        for (guint state = 0; state < SLUICE_SHARE_ATTACHMENT_N_STATES; state++) {
                for (gboolean handled = FALSE; handled <= TRUE; handled++) {
                        SluiceShareAttachment m = { .state = state };
                        SluiceShareAttachmentResult r = go(&m, S(MOUNT_AT_BOOT_ON), handled, state);

                        g_assert_cmphex(r.actions, ==, state == S(MOUNTED) ? A(WRITE_BOOT_LINE) : 0);
                }
        }
}

/* A worker that resumed serves the very device of the one that died: what
 * was under way when it died (a plug, an unplug, a mount in the guest)
 * goes on, and its completion arrives as it would have.  No unplug, no
 * agent call, no hot-plug, whatever the state. */
static void test_resumed_worker_changes_nothing(void)
{
        static const struct {
                SluiceShareAttachmentState state;
                SluiceShareAttachmentEvent completion;
                gboolean managed;
                SluiceShareAttachmentState then;
        } under_way[] = {
                { S(PLUGGING), S(PLUG_DONE), FALSE, S(PLUGGED) },
                { S(PLUGGING), S(PLUG_DONE), TRUE, S(MOUNTING) },
                { S(UNPLUGGING), S(UNPLUG_DONE), FALSE, S(UNPLUGGED) },
                { S(MOUNTING), S(GUEST_MOUNTED), TRUE, S(MOUNTED) },
                { S(UNMOUNTING), S(GUEST_UNMOUNTED), TRUE, S(UNPLUGGING) },
                { S(REMOUNTING), S(GUEST_MOUNTED), TRUE, S(MOUNTED) },
                { S(PLUGGED), S(UNPLUG), FALSE, S(UNPLUGGING) },
                { S(MOUNTED), S(UNPLUG), TRUE, S(UNMOUNTING) },
        };

        for (guint i = 0; i < G_N_ELEMENTS(under_way); i++) {
                SluiceShareAttachment m = { .state = under_way[i].state };
                SluiceShareAttachmentResult r;

                r = go(&m, S(WORKER_RESUMED), under_way[i].managed, under_way[i].state);
                g_assert_cmphex(r.actions, ==, 0);
                g_assert_cmpint(r.caller, ==, C(NONE));
                r = go(&m, under_way[i].completion, under_way[i].managed, under_way[i].then);
                g_assert_false(r.actions & (A(UNPLUG_OLD_DEVICE) | A(RELEASE_DEAD_MOUNT) | A(PLUG)));
        }
}

/* A resume that failed is a crash as before: the old device is unplugged
 * first and a new one plugged in, from wherever the crash found it. */
static void test_failed_resume_replugs(void)
{
        SluiceShareAttachment m = { .state = S(MOUNTED) };
        SluiceShareAttachmentResult r;

        (void)go(&m, S(WORKER_LOST), TRUE, S(STALE_MOUNTED));
        r = go(&m, S(WORKER_RESTARTED), TRUE, S(RECOVERING));
        g_assert_cmphex(r.actions, ==, A(UNPLUG_OLD_DEVICE));

        /* died while plugging: the device that arrives is the dead worker's */
        m.state = S(PLUGGING);
        (void)go(&m, S(PLUG_DONE_WORKER_LOST), FALSE, S(STALE));
        r = go(&m, S(WORKER_RESTARTED), FALSE, S(RECOVERING));
        g_assert_cmphex(r.actions, ==, A(UNPLUG_OLD_DEVICE));

        /* died while a Detach unplugged it: the unplug's end decides */
        m.state = S(UNPLUGGING);
        (void)go(&m, S(WORKER_LOST), FALSE, S(UNPLUGGING));
        (void)go(&m, S(UNPLUG_DONE), FALSE, S(UNPLUGGED));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/share-attachment/every-event-in-every-state", test_every_event_in_every_state);
        g_test_add_func("/share-attachment/recovery-asks-three-times-then-waits",
                        test_recovery_asks_three_times_then_waits);
        g_test_add_func("/share-attachment/every-event-in-every-state-managed",
                        test_every_event_in_every_state_managed);
        g_test_add_func("/share-attachment/in-vm", test_in_vm);
        g_test_add_func("/share-attachment/mounted-after-plug-when-managed", test_mounted_after_plug_when_managed);
        g_test_add_func("/share-attachment/guest-ready-mounts-plugged", test_guest_ready_mounts_plugged);
        g_test_add_func("/share-attachment/unmounted-before-unplug", test_unmounted_before_unplug);
        g_test_add_func("/share-attachment/busy-keeps-it-mounted", test_busy_keeps_it_mounted);
        g_test_add_func("/share-attachment/silent-guest-does-not-keep-it", test_silent_guest_does_not_keep_it);
        g_test_add_func("/share-attachment/force-skips-the-guest", test_force_skips_the_guest);
        g_test_add_func("/share-attachment/detach-while-mounting", test_detach_while_mounting);
        g_test_add_func("/share-attachment/recovery-releases-and-remounts", test_recovery_releases_and_remounts);
        g_test_add_func("/share-attachment/own-unplug-is-not-a-removal", test_own_unplug_is_not_a_removal);
        g_test_add_func("/share-attachment/detach-while-releasing-dead-mount",
                        test_detach_while_releasing_dead_mount);
        g_test_add_func("/share-attachment/mount-at-boot-on-writes-where-mounted",
                        test_mount_at_boot_on_writes_where_mounted);
        g_test_add_func("/share-attachment/resumed-worker-changes-nothing", test_resumed_worker_changes_nothing);
        g_test_add_func("/share-attachment/failed-resume-replugs", test_failed_resume_replugs);
        return g_test_run();
}
