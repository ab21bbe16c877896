/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The share's lifecycle table alone (share-lifecycle.h), without D-Bus,
 * libvirt or a worker: every event in every state gives the documented
 * next state, actions, caller and error; and the sequences a user lives
 * through end where the State property says they do. */
#include <glib.h>

#include "share-lifecycle.h"

#define A(name) SLUICE_SHARE_ACTION_##name
#define L(name) SLUICE_SHARE_##name
#define E(name) SLUICE_SHARE_EVENT_##name
#define AT(name) SLUICE_SHARE_ATTACHMENT_##name
#define C(name) SLUICE_SHARE_CALLER_##name
#define R(name) SLUICE_SHARE_RESULT_##name

typedef struct {
        SluiceShareState state;
        SluiceShareEvent event;
        SluiceShareState next;
        SluiceShareActions actions;
        SluiceShareCaller caller;
        SluiceShareResultError error;
} Expected;

#define START_ACTIONS (A(CLEAR_ERROR) | A(CHECK_FOLDER))
#define READY_ACTIONS (A(CLEAR_ERROR) | A(FORGET_FAILURE) | A(SET_SOCKET_PATH) | A(START_STATS) | \
                       A(RELEASE_START_WAITERS))
#define CRASH_ACTIONS (A(STOP_STATS) | A(CLEAR_HINT) | A(SET_ERROR) | A(REPORT_CRASH))
#define FAIL_ACTIONS (A(STOP_STATS) | A(CLEAR_SOCKET_PATH) | A(CLEAR_HINT) | A(SET_ERROR) | \
                      A(REPORT_FAILURE) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS))

/* Each state with nothing in the VM (DETACHING: with its unplug under way,
 * the only way it exists), the VM not running.  Written from the header;
 * anything not listed changes nothing, does nothing and has no caller. */
static const Expected expected[] = {
        { L(STOPPED), E(START), L(CHECKING), START_ACTIONS, C(WAIT_RUNNING), R(OK) },
        { L(STOPPED), E(ATTACH), L(CHECKING), START_ACTIONS, C(WAIT_RUNNING), R(OK) },
        { L(STOPPED), E(DETACH), L(STOPPED), 0, C(DONE), R(OK) },
        { L(STOPPED), E(STOP), L(STOPPED), 0, C(STOP_ORPHANS), R(OK) },
        { L(STOPPED), E(STOP_FORCED), L(STOPPED), 0, C(STOP_ORPHANS), R(OK) },
        { L(STOPPED), E(DETACH_FORCED), L(STOPPED), 0, C(DONE), R(OK) },

        { L(CHECKING), E(START), L(CHECKING), 0, C(WAIT_RUNNING), R(OK) },
        { L(CHECKING), E(ATTACH), L(CHECKING), 0, C(WAIT_RUNNING), R(OK) },
        { L(CHECKING), E(DETACH), L(CHECKING), 0, C(DONE), R(OK) },
        { L(CHECKING), E(STOP), L(STOPPED),
          A(FORGET_FOLDER_CHECK) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS), C(STOP_ORPHANS), R(STOPPED) },
        { L(CHECKING), E(STOP_FORCED), L(STOPPED),
          A(FORGET_FOLDER_CHECK) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS), C(STOP_ORPHANS), R(STOPPED) },
        { L(CHECKING), E(DETACH_FORCED), L(CHECKING), 0, C(DONE), R(OK) },
        { L(CHECKING), E(FOLDER_OK), L(STARTING), A(SPAWN_WORKER), C(NONE), R(OK) },
        { L(CHECKING), E(FOLDER_FAILED), L(FAILED),
          A(SET_ERROR) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS), C(NONE), R(EVENT_ERROR) },

        { L(STARTING), E(START), L(STARTING), 0, C(WAIT_RUNNING), R(OK) },
        { L(STARTING), E(ATTACH), L(STARTING), 0, C(WAIT_RUNNING), R(OK) },
        { L(STARTING), E(DETACH), L(STARTING), 0, C(DONE), R(OK) },
        { L(STARTING), E(STOP), L(STOPPING), A(STOP_WORKER), C(WAIT_STOP), R(OK) },
        { L(STARTING), E(STOP_FORCED), L(STOPPING), A(STOP_WORKER), C(WAIT_STOP), R(OK) },
        { L(STARTING), E(DETACH_FORCED), L(STARTING), 0, C(DONE), R(OK) },
        { L(STARTING), E(WORKER_READY), L(RUNNING), READY_ACTIONS, C(NONE), R(OK) },
        { L(STARTING), E(WORKER_RESTARTED), L(RUNNING), READY_ACTIONS | A(REPORT_RESTARTED), C(NONE), R(OK) },
        { L(STARTING), E(WORKER_CRASHED), L(STARTING), CRASH_ACTIONS, C(NONE), R(OK) },
        /* the crash was fed: the device is written off, a resume is a restart */
        { L(STARTING), E(WORKER_RESUMED), L(RUNNING), READY_ACTIONS | A(REPORT_RESTARTED), C(NONE), R(OK) },
        { L(STARTING), E(WORKER_FAILED), L(FAILED), FAIL_ACTIONS, C(NONE), R(EVENT_ERROR) },

        { L(RUNNING), E(START), L(RUNNING), 0, C(DONE), R(OK) },
        { L(RUNNING), E(ATTACH), L(RUNNING), A(PLUG), C(WAIT_PLUG), R(OK) },
        { L(RUNNING), E(DETACH), L(RUNNING), 0, C(DONE), R(OK) },
        { L(RUNNING), E(STOP), L(STOPPING), A(STOP_WORKER), C(WAIT_STOP), R(OK) },
        { L(RUNNING), E(STOP_FORCED), L(STOPPING), A(STOP_WORKER), C(WAIT_STOP), R(OK) },
        { L(RUNNING), E(DETACH_FORCED), L(RUNNING), 0, C(DONE), R(OK) },
        { L(RUNNING), E(WORKER_CRASHED), L(STARTING), CRASH_ACTIONS, C(NONE), R(OK) },
        { L(RUNNING), E(WORKER_FAILED), L(FAILED), FAIL_ACTIONS, C(NONE), R(EVENT_ERROR) },
        /* a resumed worker: the share runs on, said once, Stats go on */
        { L(RUNNING), E(WORKER_RESUMED), L(RUNNING), A(CLEAR_ERROR) | A(START_STATS) | A(REPORT_RESUMED),
          C(NONE), R(OK) },
        { L(RUNNING), E(VM_STARTED), L(RUNNING), A(PLUG), C(NONE), R(OK) },

        { L(DETACHING), E(START), L(DETACHING), 0, C(REFUSED), R(STOPPING) },
        { L(DETACHING), E(ATTACH), L(DETACHING), 0, C(REFUSED), R(STOPPING) },
        { L(DETACHING), E(DETACH), L(DETACHING), 0, C(WAIT_UNPLUG), R(OK) },
        { L(DETACHING), E(STOP), L(DETACHING), 0, C(WAIT_STOP), R(OK) },
        { L(DETACHING), E(STOP_FORCED), L(DETACHING), 0, C(WAIT_STOP), R(OK) },
        { L(DETACHING), E(DETACH_FORCED), L(DETACHING), 0, C(WAIT_UNPLUG), R(OK) },
        { L(DETACHING), E(UNPLUG_DONE), L(STOPPING),
          A(CLEAR_HINT) | A(CLEAR_GUEST) | A(REPORT_DETACHED) | A(COMPLETE_DETACH_WAITERS) | A(STOP_WORKER),
          C(NONE), R(OK) },
        /* "busy" fails a Stop only while the guest is asked (the device
         * unplugging here: a late answer, nothing changes); asked, see
         * test_busy_guest_fails_stop_and_detach */
        /* the device stays, the worker goes all the same */
        { L(DETACHING), E(UNPLUG_FAILED), L(STOPPING), A(FAIL_DETACH_WAITERS) | A(STOP_WORKER), C(NONE),
          R(EVENT_ERROR) },

        { L(STOPPING), E(START), L(STOPPING), 0, C(REFUSED), R(STOPPING) },
        { L(STOPPING), E(ATTACH), L(STOPPING), 0, C(REFUSED), R(STOPPING) },
        { L(STOPPING), E(DETACH), L(STOPPING), 0, C(DONE), R(OK) },
        { L(STOPPING), E(STOP), L(STOPPING), 0, C(WAIT_STOP), R(OK) },
        { L(STOPPING), E(STOP_FORCED), L(STOPPING), 0, C(WAIT_STOP), R(OK) },
        { L(STOPPING), E(DETACH_FORCED), L(STOPPING), 0, C(DONE), R(OK) },
        { L(STOPPING), E(WORKER_STOPPED), L(STOPPED),
          A(STOP_STATS) | A(CLEAR_SOCKET_PATH) | A(CLEAR_HINT) | A(FAIL_START_WAITERS) |
          A(FAIL_ATTACH_WAITERS) | A(COMPLETE_STOP_WAITERS), C(NONE), R(STOPPED) },

        { L(FAILED), E(START), L(CHECKING), START_ACTIONS, C(WAIT_RUNNING), R(OK) },
        { L(FAILED), E(ATTACH), L(CHECKING), START_ACTIONS, C(WAIT_RUNNING), R(OK) },
        { L(FAILED), E(DETACH), L(FAILED), 0, C(DONE), R(OK) },
        { L(FAILED), E(STOP), L(STOPPING), A(STOP_WORKER), C(WAIT_STOP), R(OK) },
        { L(FAILED), E(STOP_FORCED), L(STOPPING), A(STOP_WORKER), C(WAIT_STOP), R(OK) },
        { L(FAILED), E(DETACH_FORCED), L(FAILED), 0, C(DONE), R(OK) },

        /* MountAtBoot switched off: a line from any earlier mount goes,
         * whatever the share does now */
        { L(STOPPED), E(MOUNT_AT_BOOT_OFF), L(STOPPED), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
        { L(CHECKING), E(MOUNT_AT_BOOT_OFF), L(CHECKING), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
        { L(STARTING), E(MOUNT_AT_BOOT_OFF), L(STARTING), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
        { L(RUNNING), E(MOUNT_AT_BOOT_OFF), L(RUNNING), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
        { L(DETACHING), E(MOUNT_AT_BOOT_OFF), L(DETACHING), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
        { L(STOPPING), E(MOUNT_AT_BOOT_OFF), L(STOPPING), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
        { L(FAILED), E(MOUNT_AT_BOOT_OFF), L(FAILED), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
        /* RemoveShare stops the share first: the line it left goes */
        { L(STOPPED), E(REMOVED), L(STOPPED), A(FORGET_BOOT_LINE), C(NONE), R(OK) },
};

static SluiceShareLifecycle machine_in(SluiceShareState state, SluiceShareAttachmentState attachment)
{
        SluiceShareLifecycle m;

        sluice_share_lifecycle_init(&m);
        m.state = state;
        m.attachment.state = attachment;
        return m;
}

static void test_every_event_in_every_state(void)
{
        guint listed = 0;

        for (guint state = 0; state < SLUICE_SHARE_N_STATES; state++) {
                for (guint event = 0; event < SLUICE_SHARE_N_EVENTS; event++) {
                        Expected want = { state, event, state, 0, C(NONE), R(OK) };
                        SluiceShareLifecycle m = machine_in(state, state == L(DETACHING) ? AT(UNPLUGGING)
                                                                                         : AT(UNPLUGGED));
                        SluiceShareLifecycleResult got;

                        for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
                                if (expected[i].state == state && expected[i].event == event) {
                                        want = expected[i];
                                        listed++;
                                }
                        }
                        got = sluice_share_lifecycle_step(&m, event, FALSE, FALSE);
                        g_test_message("%s + %s -> %s", sluice_share_state_name(state),
                                       sluice_share_event_name(event), sluice_share_state_name(got.next));
                        g_assert_cmpstr(sluice_share_state_name(got.next), ==, sluice_share_state_name(want.next));
                        g_assert_cmpint(m.state, ==, got.next);
                        g_assert_cmphex(got.actions, ==, want.actions);
                        g_assert_cmpint(got.caller, ==, want.caller);
                        g_assert_cmpint(got.error, ==, want.error);
                }
        }
        g_assert_cmpuint(listed, ==, G_N_ELEMENTS(expected));
}

/* The published State of every lifecycle state, with the device in the VM
 * and without (a Stop keeps what it was until the device is out). */
static void test_published_state(void)
{
        static const struct {
                SluiceShareState state;
                SluiceShareAttachmentState attachment;
                SluiceWireShareState before;
                const char *published;
        } cases[] = {
                { L(STOPPED), AT(UNPLUGGED), SLUICE_WIRE_SHARE_RUNNING, "stopped" },
                { L(CHECKING), AT(UNPLUGGED), SLUICE_WIRE_SHARE_STOPPED, "starting" },
                { L(STARTING), AT(STALE), SLUICE_WIRE_SHARE_ATTACHED, "starting" },
                { L(RUNNING), AT(UNPLUGGED), SLUICE_WIRE_SHARE_STARTING, "running" },
                { L(RUNNING), AT(PLUGGING), SLUICE_WIRE_SHARE_RUNNING, "running" },
                { L(RUNNING), AT(RECOVERING), SLUICE_WIRE_SHARE_STARTING, "running" },
                { L(RUNNING), AT(PLUGGED), SLUICE_WIRE_SHARE_RUNNING, "attached" },
                { L(RUNNING), AT(UNPLUGGING), SLUICE_WIRE_SHARE_ATTACHED, "attached" },
                { L(DETACHING), AT(UNPLUGGING), SLUICE_WIRE_SHARE_ATTACHED, "attached" },
                { L(STOPPING), AT(UNPLUGGED), SLUICE_WIRE_SHARE_ATTACHED, "running" },
                { L(STOPPING), AT(UNPLUGGED), SLUICE_WIRE_SHARE_STARTING, "starting" },
                { L(STOPPING), AT(UNPLUGGED), SLUICE_WIRE_SHARE_FAILED, "failed" },
                { L(FAILED), AT(UNPLUGGED), SLUICE_WIRE_SHARE_RUNNING, "failed" },
        };

        for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
                SluiceShareLifecycle m = machine_in(cases[i].state, cases[i].attachment);
                SluiceShareLifecycleResult r;

                m.published = cases[i].before;
                /* an event that changes nothing in any of these states */
                r = sluice_share_lifecycle_step(&m, E(FOLDER_OK), FALSE, FALSE);
                if (cases[i].state == L(CHECKING))
                        continue;  /* FOLDER_OK moves it on; CHECKING is "starting" below */
                g_assert_cmpstr(sluice_wire_share_state_name(r.published), ==, cases[i].published);
        }
        {
                SluiceShareLifecycle m = machine_in(L(STOPPED), AT(UNPLUGGED));
                SluiceShareLifecycleResult r = sluice_share_lifecycle_step(&m, E(START), FALSE, FALSE);

                g_assert_cmpstr(sluice_wire_share_state_name(r.published), ==, "starting");
        }
}

static SluiceShareLifecycleResult step_guest(SluiceShareLifecycle *m, SluiceShareEvent event, gboolean vm_running,
                                             gboolean guest_managed, SluiceShareState next,
                                             SluiceShareAttachmentState attachment, const char *published)
{
        SluiceShareLifecycleResult r = sluice_share_lifecycle_step(m, event, vm_running, guest_managed);

        g_assert_cmpstr(sluice_share_state_name(r.next), ==, sluice_share_state_name(next));
        g_assert_cmpstr(sluice_share_attachment_state_name(r.attachment), ==,
                        sluice_share_attachment_state_name(attachment));
        g_assert_cmpstr(sluice_wire_share_state_name(r.published), ==, published);
        return r;
}

static SluiceShareLifecycleResult step(SluiceShareLifecycle *m, SluiceShareEvent event, gboolean vm_running,
                                       SluiceShareState next, SluiceShareAttachmentState attachment,
                                       const char *published)
{
        return step_guest(m, event, vm_running, FALSE, next, attachment, published);
}

/* With the guest handled: Attach plugs, mounts, and ends once mounted; a
 * Start made meanwhile too; "attached" throughout. */
static void test_attach_mounts_when_managed(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(UNPLUGGED));
        SluiceShareLifecycleResult r;

        r = step_guest(&m, E(ATTACH), TRUE, TRUE, L(RUNNING), AT(PLUGGING), "running");
        g_assert_cmpint(r.caller, ==, C(WAIT_PLUG));
        r = step_guest(&m, E(PLUG_DONE), TRUE, TRUE, L(RUNNING), AT(MOUNTING), "attached");
        g_assert_cmphex(r.actions, ==, A(CLEAR_ERROR) | A(SET_HINT) | A(MOUNT_IN_GUEST));
        r = step_guest(&m, E(START), TRUE, TRUE, L(RUNNING), AT(MOUNTING), "attached");
        g_assert_cmpint(r.caller, ==, C(JOIN_PLUG));
        r = step_guest(&m, E(GUEST_MOUNTED), TRUE, TRUE, L(RUNNING), AT(MOUNTED), "attached");
        g_assert_true(r.actions & A(COMPLETE_ATTACH_WAITERS));
        g_assert_true(r.actions & A(REPORT_ATTACHED));

        /* no agent: as today */
        m = machine_in(L(RUNNING), AT(UNPLUGGED));
        (void)step_guest(&m, E(ATTACH), TRUE, FALSE, L(RUNNING), AT(PLUGGING), "running");
        r = step_guest(&m, E(PLUG_DONE), TRUE, FALSE, L(RUNNING), AT(PLUGGED), "attached");
        g_assert_cmphex(r.actions, ==,
                        A(CLEAR_ERROR) | A(SET_HINT) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS));
        /* ... until an agent comes up */
        r = step_guest(&m, E(GUEST_READY), TRUE, TRUE, L(RUNNING), AT(MOUNTING), "attached");
        g_assert_cmphex(r.actions, ==, A(MOUNT_IN_GUEST));
}

/* Stop of a mounted share: unmounted in the guest, unplugged, stopped. */
static void test_stop_while_mounted_unmounts_first(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
        g_assert_cmphex(r.actions, ==, A(UNMOUNT_IN_GUEST));
        g_assert_cmpint(r.caller, ==, C(WAIT_STOP));
        r = step_guest(&m, E(GUEST_UNMOUNTED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING), "attached");
        g_assert_cmphex(r.actions, ==, A(CLEAR_GUEST) | A(UNPLUG));
        r = step_guest(&m, E(UNPLUG_DONE), TRUE, TRUE, L(STOPPING), AT(UNPLUGGED), "running");
        g_assert_true(r.actions & A(STOP_WORKER));
        (void)step_guest(&m, E(WORKER_STOPPED), TRUE, TRUE, L(STOPPED), AT(UNPLUGGED), "stopped");
}

/* The guest uses the share: Stop and Detach fail with its error, the share
 * runs on, mounted. */
static void test_busy_guest_fails_stop_and_detach(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        (void)step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
        r = step_guest(&m, E(GUEST_UNMOUNT_BUSY), TRUE, TRUE, L(RUNNING), AT(MOUNTED), "attached");
        g_assert_true(r.actions & A(FAIL_STOP_WAITERS));
        g_assert_false(r.actions & (A(STOP_WORKER) | A(UNPLUG)));
        g_assert_cmpint(r.error, ==, R(EVENT_ERROR));

        r = step_guest(&m, E(DETACH), TRUE, TRUE, L(RUNNING), AT(UNMOUNTING), "attached");
        g_assert_cmpint(r.caller, ==, C(WAIT_UNPLUG));
        r = step_guest(&m, E(GUEST_UNMOUNT_BUSY), TRUE, TRUE, L(RUNNING), AT(MOUNTED), "attached");
        g_assert_true(r.actions & A(FAIL_DETACH_WAITERS));
        g_assert_cmpint(r.error, ==, R(EVENT_ERROR));

        /* any other failure: unplugged all the same, the Stop goes on */
        (void)step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
        r = step_guest(&m, E(GUEST_UNMOUNT_FAILED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
        g_assert_true(r.actions & A(UNPLUG));
        g_assert_cmpint(r.error, ==, R(OK));
}

/* A guest that does not answer the unmount, answers garbage, or misses the
 * deadline (all GUEST_UNMOUNT_FAILED) does not keep the share: the Stop
 * unplugs, stops the worker and ends "stopped", Error saying why; a "busy"
 * that comes after the deadline changes nothing. */
static void test_silent_guest_does_not_keep_it(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        (void)step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
        r = step_guest(&m, E(GUEST_UNMOUNT_FAILED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
        g_assert_cmphex(r.actions, ==, A(UNPLUG) | A(NOTE_UNMOUNT_SKIPPED) | A(REPORT_UNMOUNT_FAILED));
        g_assert_false(r.actions & A(FAIL_STOP_WAITERS));
        r = step_guest(&m, E(GUEST_UNMOUNT_BUSY), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
        g_assert_false(r.actions & A(FAIL_STOP_WAITERS));
        r = step_guest(&m, E(UNPLUG_DONE), TRUE, TRUE, L(STOPPING), AT(UNPLUGGED), "running");
        g_assert_true(r.actions & A(STOP_WORKER));
        g_assert_true(r.actions & A(LET_GO_QUIETLY));
        r = step_guest(&m, E(WORKER_STOPPED), TRUE, TRUE, L(STOPPED), AT(UNPLUGGED), "stopped");
        g_assert_true(r.actions & A(COMPLETE_STOP_WAITERS));
}

/* Stop with force (and a shutdown) never asks the guest: straight to the
 * unplug, then the worker; the mount left in the guest is let go once the
 * device is out. */
static void test_forced_stop_skips_the_guest(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step_guest(&m, E(STOP_FORCED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
        g_assert_cmphex(r.actions, ==, A(UNPLUG) | A(NOTE_UNMOUNT_SKIPPED));
        g_assert_cmpint(r.caller, ==, C(WAIT_STOP));
        r = step_guest(&m, E(UNPLUG_DONE), TRUE, TRUE, L(STOPPING), AT(UNPLUGGED), "running");
        g_assert_true(r.actions & A(STOP_WORKER));
        g_assert_true(r.actions & A(LET_GO_QUIETLY));
        (void)step_guest(&m, E(WORKER_STOPPED), TRUE, TRUE, L(STOPPED), AT(UNPLUGGED), "stopped");

        /* a guest that refuses the unplug too: the worker stops all the same */
        m = machine_in(L(RUNNING), AT(MOUNTED));
        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        (void)step_guest(&m, E(STOP_FORCED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
        r = step_guest(&m, E(UNPLUG_FAILED), TRUE, TRUE, L(STOPPING), AT(MOUNTED), "attached");
        g_assert_true(r.actions & A(STOP_WORKER));

        /* force on a Stop that waits for the guest: it waits no more */
        m = machine_in(L(RUNNING), AT(MOUNTED));
        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        (void)step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
        r = step_guest(&m, E(STOP_FORCED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
        g_assert_cmphex(r.actions, ==, A(UNPLUG) | A(NOTE_UNMOUNT_SKIPPED));
        g_assert_cmpint(r.caller, ==, C(WAIT_STOP));
        /* the guest's "busy" that comes after does not bring it back */
        r = step_guest(&m, E(GUEST_UNMOUNT_BUSY), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
        g_assert_false(r.actions & A(FAIL_STOP_WAITERS));

        /* after a busy Stop, the user's "Stop Anyway" */
        m = machine_in(L(RUNNING), AT(MOUNTED));
        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        (void)step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
        (void)step_guest(&m, E(GUEST_UNMOUNT_BUSY), TRUE, TRUE, L(RUNNING), AT(MOUNTED), "attached");
        (void)step_guest(&m, E(STOP_FORCED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING_MOUNTED), "attached");
}

/* Detach with force unplugs a mounted share without the guest; the worker
 * keeps running. */
static void test_forced_detach_skips_the_guest(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step_guest(&m, E(DETACH_FORCED), TRUE, TRUE, L(RUNNING), AT(UNPLUGGING_MOUNTED), "attached");
        g_assert_cmphex(r.actions, ==, A(UNPLUG) | A(NOTE_UNMOUNT_SKIPPED));
        g_assert_cmpint(r.caller, ==, C(WAIT_UNPLUG));
        r = step_guest(&m, E(UNPLUG_DONE), TRUE, TRUE, L(RUNNING), AT(UNPLUGGED), "running");
        g_assert_true(r.actions & A(COMPLETE_DETACH_WAITERS));
        g_assert_true(r.actions & A(LET_GO_QUIETLY));
        g_assert_false(r.actions & A(STOP_WORKER));
}

/* A crash while mounted: the old device goes, the new one is plugged and
 * mounted again (the dead mount let go first); "attached" at the end. */
static void test_crash_while_mounted_remounts(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step_guest(&m, E(WORKER_CRASHED), TRUE, TRUE, L(STARTING), AT(STALE_MOUNTED), "starting");
        g_assert_cmphex(r.actions, ==, CRASH_ACTIONS);
        r = step_guest(&m, E(WORKER_RESTARTED), TRUE, TRUE, L(RUNNING), AT(RECOVERING), "running");
        g_assert_cmphex(r.actions, ==, READY_ACTIONS | A(UNPLUG_OLD_DEVICE));
        (void)step_guest(&m, E(UNPLUG_DONE), TRUE, TRUE, L(RUNNING), AT(REPLUGGING), "running");
        r = step_guest(&m, E(PLUG_DONE), TRUE, TRUE, L(RUNNING), AT(REMOUNTING), "attached");
        g_assert_true(r.actions & A(RELEASE_DEAD_MOUNT));
        g_assert_false(r.actions & A(MOUNT_IN_GUEST));
        r = step_guest(&m, E(GUEST_RELEASED), TRUE, TRUE, L(RUNNING), AT(REMOUNTING), "attached");
        g_assert_cmphex(r.actions, ==, A(MOUNT_IN_GUEST));
        r = step_guest(&m, E(GUEST_MOUNTED), TRUE, TRUE, L(RUNNING), AT(MOUNTED), "attached");
        g_assert_true(r.actions & A(REPORT_RECOVERED));
}

/* A Stop while the crash's dead mount is let go: once the guest let go,
 * the device goes out and the worker stops (it used to wait for good). */
static void test_stop_while_releasing_dead_mount(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(REMOUNTING));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
        g_assert_cmpint(r.caller, ==, C(WAIT_STOP));
        r = step_guest(&m, E(GUEST_RELEASED), TRUE, TRUE, L(DETACHING), AT(UNPLUGGING), "attached");
        g_assert_true(r.actions & A(UNPLUG));
        r = step_guest(&m, E(UNPLUG_DONE), TRUE, TRUE, L(STOPPING), AT(UNPLUGGED), "running");
        g_assert_true(r.actions & A(STOP_WORKER));
}

/* MountAtBoot: switched on, the line is written now only where the share
 * is mounted; switched off or the share removed, it goes whatever the
 * share does (the settings only store; the machine decides). */
static void test_mount_at_boot(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step_guest(&m, E(MOUNT_AT_BOOT_ON), TRUE, TRUE, L(RUNNING), AT(MOUNTED), "attached");
        g_assert_cmphex(r.actions, ==, A(WRITE_BOOT_LINE));
        r = step_guest(&m, E(MOUNT_AT_BOOT_OFF), TRUE, TRUE, L(RUNNING), AT(MOUNTED), "attached");
        g_assert_cmphex(r.actions, ==, A(FORGET_BOOT_LINE));

        m = machine_in(L(RUNNING), AT(PLUGGED));
        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step_guest(&m, E(MOUNT_AT_BOOT_ON), TRUE, TRUE, L(RUNNING), AT(PLUGGED), "attached");
        g_assert_cmphex(r.actions, ==, 0);

        m = machine_in(L(STOPPED), AT(UNPLUGGED));
        r = step_guest(&m, E(REMOVED), FALSE, FALSE, L(STOPPED), AT(UNPLUGGED), "stopped");
        g_assert_cmphex(r.actions, ==, A(FORGET_BOOT_LINE));
}

/* The VM stops whatever the guest side does: unplugged, "running". */
static void test_vm_stops_in_mount_states(void)
{
        static const SluiceShareAttachmentState states[] = {
                AT(MOUNTING), AT(MOUNTED), AT(UNMOUNTING), AT(REMOUNTING), AT(STALE_MOUNTED),
        };

        for (guint i = 0; i < G_N_ELEMENTS(states); i++) {
                SluiceShareLifecycle m = machine_in(L(RUNNING), states[i]);
                SluiceShareLifecycleResult r;

                r = step_guest(&m, E(VM_STOPPED), FALSE, TRUE, L(RUNNING), AT(UNPLUGGED), "running");
                g_assert_true(r.actions & A(CLEAR_GUEST));
        }
        /* a Stop waiting for the unmount goes on once the VM is gone */
        {
                SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));

                m.published = SLUICE_WIRE_SHARE_ATTACHED;
                (void)step_guest(&m, E(STOP), TRUE, TRUE, L(DETACHING), AT(UNMOUNTING), "attached");
                (void)step_guest(&m, E(VM_STOPPED), FALSE, TRUE, L(STOPPING), AT(UNPLUGGED), "running");
        }
}

/* Every event in every pair of states, with and without the guest handled:
 * no crash, a state that exists, and "attached" only with a device in. */
static void test_every_event_in_every_pair(void)
{
        for (guint state = 0; state < SLUICE_SHARE_N_STATES; state++)
                for (guint attachment = 0; attachment < SLUICE_SHARE_ATTACHMENT_N_STATES; attachment++)
                        for (guint event = 0; event < SLUICE_SHARE_N_EVENTS; event++)
                                for (guint managed = 0; managed < 2; managed++) {
                                        SluiceShareLifecycle m = machine_in(state, attachment);
                                        SluiceShareLifecycleResult r = sluice_share_lifecycle_step(&m, event,
                                                                                                   TRUE, managed);

                                        g_assert_cmpint(r.next, <, SLUICE_SHARE_N_STATES);
                                        g_assert_cmpint(r.attachment, <, SLUICE_SHARE_ATTACHMENT_N_STATES);
                                        if (r.published == SLUICE_WIRE_SHARE_ATTACHED)
                                                g_assert_true(sluice_share_attachment_in_vm(r.attachment));
                                }
}

/* Start while the VM runs: the share is checked, started, plugged in, and
 * the Start call ends once it is attached. */
static void test_start_ready_vm_running_plugged(void)
{
        SluiceShareLifecycle m;
        SluiceShareLifecycleResult r;

        sluice_share_lifecycle_init(&m);
        r = step(&m, E(START), FALSE, L(CHECKING), AT(UNPLUGGED), "starting");
        g_assert_cmpint(r.caller, ==, C(WAIT_RUNNING));
        r = step(&m, E(FOLDER_OK), FALSE, L(STARTING), AT(UNPLUGGED), "starting");
        g_assert_cmphex(r.actions, ==, A(SPAWN_WORKER));
        r = step(&m, E(WORKER_READY), TRUE, L(RUNNING), AT(PLUGGING), "running");
        g_assert_cmphex(r.actions, ==, READY_ACTIONS | A(PLUG));
        /* the plug is asked for before the waiting Start is released */
        g_assert_cmphex(A(PLUG), <, A(RELEASE_START_WAITERS));
        /* the released Start asks again and waits for the plug */
        r = step(&m, E(START), FALSE, L(RUNNING), AT(PLUGGING), "running");
        g_assert_cmpint(r.caller, ==, C(JOIN_PLUG));
        r = step(&m, E(PLUG_DONE), FALSE, L(RUNNING), AT(PLUGGED), "attached");
        g_assert_cmphex(r.actions, ==,
                        A(CLEAR_ERROR) | A(SET_HINT) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS));
        r = step(&m, E(ATTACH), FALSE, L(RUNNING), AT(PLUGGED), "attached");
        g_assert_cmpint(r.caller, ==, C(HINT));
        /* the VM stops: detached, still running, plugged in again when it starts */
        r = step(&m, E(VM_STOPPED), FALSE, L(RUNNING), AT(UNPLUGGED), "running");
        g_assert_cmphex(r.actions, ==, A(CLEAR_HINT) | A(CLEAR_GUEST) | A(REPORT_DETACHED));
        r = step(&m, E(VM_STARTED), FALSE, L(RUNNING), AT(PLUGGING), "running");
        g_assert_cmphex(r.actions, ==, A(PLUG));
}

/* A worker crash while attached: "starting", then the restarted worker's
 * fresh device replaces the old one and the share is "attached" again. */
static void test_crash_while_attached_recovers(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(PLUGGED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step(&m, E(WORKER_CRASHED), TRUE, L(STARTING), AT(STALE), "starting");
        g_assert_cmphex(r.actions, ==, CRASH_ACTIONS);
        /* the old device goes first; no plug yet, no "restarted" event */
        r = step(&m, E(WORKER_RESTARTED), TRUE, L(RUNNING), AT(RECOVERING), "running");
        g_assert_cmphex(r.actions, ==, READY_ACTIONS | A(UNPLUG_OLD_DEVICE));
        r = step(&m, E(UNPLUG_DONE), TRUE, L(RUNNING), AT(REPLUGGING), "running");
        g_assert_cmphex(r.actions, ==, A(PLUG));
        r = step(&m, E(PLUG_DONE), TRUE, L(RUNNING), AT(PLUGGED), "attached");
        g_assert_true(r.actions & A(REPORT_RECOVERED));
}

/* A worker that resumed after a crash (the driver fed no crash: it
 * expected the resume): the share stays attached and mounted, nothing is
 * unplugged, plugged or asked of the guest; Event "recovered"/"resumed". */
static void test_resumed_crash_keeps_the_device(void)
{
        static const SluiceShareAttachmentState states[] = {
                AT(PLUGGED), AT(MOUNTED), AT(MOUNTING), AT(PLUGGING), AT(UNMOUNTING),
        };

        for (guint i = 0; i < G_N_ELEMENTS(states); i++) {
                SluiceShareLifecycle m = machine_in(L(RUNNING), states[i]);
                SluiceShareLifecycleResult r;

                r = step_guest(&m, E(WORKER_RESUMED), TRUE, TRUE, L(RUNNING), states[i],
                               sluice_share_attachment_in_vm(states[i]) ? "attached" : "running");
                g_assert_cmphex(r.actions, ==, A(CLEAR_ERROR) | A(START_STATS) | A(REPORT_RESUMED));
        }
}

/* A relaunch that could not resume: the driver feeds the crash then, and
 * the replug path runs as before. */
static void test_failed_resume_recovers(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(MOUNTED));
        SluiceShareLifecycleResult r;

        r = step_guest(&m, E(WORKER_CRASHED), TRUE, TRUE, L(STARTING), AT(STALE_MOUNTED), "starting");
        g_assert_cmphex(r.actions, ==, CRASH_ACTIONS);
        r = step_guest(&m, E(WORKER_RESTARTED), TRUE, TRUE, L(RUNNING), AT(RECOVERING), "running");
        g_assert_true(r.actions & A(UNPLUG_OLD_DEVICE));
        g_assert_false(r.actions & A(REPORT_RESUMED));

        /* a crash fed as such and then a worker that says it resumed: the
         * device was written off, it is replaced all the same */
        m = machine_in(L(RUNNING), AT(PLUGGED));
        (void)step(&m, E(WORKER_CRASHED), TRUE, L(STARTING), AT(STALE), "starting");
        r = step(&m, E(WORKER_RESUMED), TRUE, L(RUNNING), AT(RECOVERING), "running");
        g_assert_true(r.actions & A(UNPLUG_OLD_DEVICE));
}

/* A crash while not attached: "recovered" is reported at once. */
static void test_crash_while_running_reports_restart(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(UNPLUGGED));
        SluiceShareLifecycleResult r;

        (void)step(&m, E(WORKER_CRASHED), FALSE, L(STARTING), AT(UNPLUGGED), "starting");
        r = step(&m, E(WORKER_RESTARTED), FALSE, L(RUNNING), AT(UNPLUGGED), "running");
        g_assert_true(r.actions & A(REPORT_RESTARTED));
}

/* The device plugged in while the worker crashed belongs to the old worker. */
static void test_crash_during_plug(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(PLUGGING));
        SluiceShareLifecycleResult r;

        (void)step(&m, E(WORKER_CRASHED), TRUE, L(STARTING), AT(PLUGGING), "starting");
        r = step(&m, E(PLUG_DONE), TRUE, L(STARTING), AT(STALE), "starting");
        g_assert_cmphex(r.actions, ==, A(COMPLETE_ATTACH_WAITERS));
        r = step(&m, E(WORKER_RESTARTED), TRUE, L(RUNNING), AT(RECOVERING), "running");
        g_assert_true(r.actions & A(UNPLUG_OLD_DEVICE));
}

/* Stop during the folder check: stopped at once, the check's answer dropped,
 * a waiting Start told it was stopped. */
static void test_stop_while_checking(void)
{
        SluiceShareLifecycle m;
        SluiceShareLifecycleResult r;

        sluice_share_lifecycle_init(&m);
        (void)step(&m, E(START), FALSE, L(CHECKING), AT(UNPLUGGED), "starting");
        r = step(&m, E(STOP), FALSE, L(STOPPED), AT(UNPLUGGED), "stopped");
        g_assert_true(r.actions & A(FORGET_FOLDER_CHECK));
        g_assert_true(r.actions & A(FAIL_START_WAITERS));
        g_assert_cmpint(r.error, ==, R(STOPPED));
        r = step(&m, E(FOLDER_OK), FALSE, L(STOPPED), AT(UNPLUGGED), "stopped");
        g_assert_cmphex(r.actions, ==, 0);
}

/* Stop while the worker starts: it is stopped, a Start meanwhile refused,
 * the waiting Start fails once it is stopped. */
static void test_stop_while_starting(void)
{
        SluiceShareLifecycle m = machine_in(L(STARTING), AT(UNPLUGGED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_STARTING;
        r = step(&m, E(STOP), FALSE, L(STOPPING), AT(UNPLUGGED), "starting");
        g_assert_cmphex(r.actions, ==, A(STOP_WORKER));
        r = step(&m, E(START), FALSE, L(STOPPING), AT(UNPLUGGED), "starting");
        g_assert_cmpint(r.caller, ==, C(REFUSED));
        g_assert_cmpint(r.error, ==, R(STOPPING));
        r = step(&m, E(WORKER_READY), TRUE, L(STOPPING), AT(UNPLUGGED), "starting");
        g_assert_cmphex(r.actions, ==, 0);
        r = step(&m, E(WORKER_STOPPED), FALSE, L(STOPPED), AT(UNPLUGGED), "stopped");
        g_assert_true(r.actions & A(FAIL_START_WAITERS));
        g_assert_true(r.actions & A(COMPLETE_STOP_WAITERS));
        g_assert_cmpint(r.error, ==, R(STOPPED));
}

/* Stop while attached: the device goes first ("running"), then the worker. */
static void test_stop_while_attached(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(PLUGGED));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_ATTACHED;
        r = step(&m, E(STOP), TRUE, L(DETACHING), AT(UNPLUGGING), "attached");
        g_assert_cmphex(r.actions, ==, A(UNPLUG));
        g_assert_cmpint(r.caller, ==, C(WAIT_STOP));
        r = step(&m, E(UNPLUG_DONE), TRUE, L(STOPPING), AT(UNPLUGGED), "running");
        g_assert_true(r.actions & A(STOP_WORKER));
        g_assert_true(r.actions & A(REPORT_DETACHED));
        (void)step(&m, E(WORKER_STOPPED), TRUE, L(STOPPED), AT(UNPLUGGED), "stopped");
}

/* A plug that completes after Stop is undone. */
static void test_plug_completing_after_stop_is_undone(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(PLUGGING));
        SluiceShareLifecycleResult r;

        m.published = SLUICE_WIRE_SHARE_RUNNING;
        r = step(&m, E(STOP), TRUE, L(STOPPING), AT(PLUGGING), "running");
        g_assert_cmphex(r.actions, ==, A(STOP_WORKER));
        (void)step(&m, E(WORKER_STOPPED), TRUE, L(STOPPED), AT(PLUGGING), "stopped");
        r = step(&m, E(PLUG_DONE), TRUE, L(STOPPED), AT(UNPLUGGED), "stopped");
        g_assert_cmphex(r.actions, ==, A(UNPLUG_QUIETLY) | A(COMPLETE_ATTACH_WAITERS));
}

/* The folder check fails: "failed" with the check's error; Start tries again. */
static void test_folder_check_fails(void)
{
        SluiceShareLifecycle m;
        SluiceShareLifecycleResult r;

        sluice_share_lifecycle_init(&m);
        (void)step(&m, E(ATTACH), TRUE, L(CHECKING), AT(UNPLUGGED), "starting");
        r = step(&m, E(FOLDER_FAILED), TRUE, L(FAILED), AT(UNPLUGGED), "failed");
        g_assert_cmphex(r.actions, ==, A(SET_ERROR) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS));
        g_assert_cmpint(r.error, ==, R(EVENT_ERROR));
        r = step(&m, E(START), TRUE, L(CHECKING), AT(UNPLUGGED), "starting");
        g_assert_cmphex(r.actions, ==, START_ACTIONS);
}

/* The worker gives up while attached: failed, the device unplugged. */
static void test_worker_gives_up_while_attached(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(PLUGGED));
        SluiceShareLifecycleResult r;

        r = step(&m, E(WORKER_FAILED), TRUE, L(FAILED), AT(UNPLUGGED), "failed");
        g_assert_cmphex(r.actions, ==, FAIL_ACTIONS | A(UNPLUG_QUIETLY) | A(CLEAR_GUEST));
}

/* Another VM for an attached share: the old VM loses the device quietly. */
static void test_vm_changed_while_attached(void)
{
        SluiceShareLifecycle m = machine_in(L(RUNNING), AT(PLUGGED));
        SluiceShareLifecycleResult r;

        r = step(&m, E(VM_UNASSIGNED), FALSE, L(RUNNING), AT(UNPLUGGED), "running");
        g_assert_cmphex(r.actions, ==, A(UNPLUG_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST));
        r = step(&m, E(VM_STARTED), FALSE, L(RUNNING), AT(PLUGGING), "running");
        g_assert_cmphex(r.actions, ==, A(PLUG));
}

/* Every call (Start, Attach, Detach, Stop) gets an answer or waits for one,
 * whatever the share and its device are doing: none is left hanging. */
static void test_every_call_is_answered(void)
{
        static const SluiceShareEvent calls[] = { E(START), E(ATTACH), E(DETACH), E(STOP), E(DETACH_FORCED),
                                                  E(STOP_FORCED) };

        for (guint state = 0; state < SLUICE_SHARE_N_STATES; state++) {
                for (guint attachment = 0; attachment < SLUICE_SHARE_ATTACHMENT_N_STATES; attachment++) {
                        for (guint i = 0; i < G_N_ELEMENTS(calls); i++) {
                                SluiceShareLifecycle m = machine_in(state, attachment);
                                SluiceShareLifecycleResult r = sluice_share_lifecycle_step(&m, calls[i], TRUE, TRUE);

                                g_test_message("%s/%s + %s", sluice_share_state_name(state),
                                               sluice_share_attachment_state_name(attachment),
                                               sluice_share_event_name(calls[i]));
                                g_assert_cmpint(r.caller, !=, C(NONE));
                                if (r.caller == C(REFUSED))
                                        g_assert_cmpint(r.error, !=, R(OK));
                        }
                }
        }
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/share-lifecycle/stop-while-releasing-dead-mount", test_stop_while_releasing_dead_mount);
        g_test_add_func("/share-lifecycle/mount-at-boot", test_mount_at_boot);
        g_test_add_func("/share-lifecycle/every-event-in-every-state", test_every_event_in_every_state);
        g_test_add_func("/share-lifecycle/published-state", test_published_state);
        g_test_add_func("/share-lifecycle/every-call-is-answered", test_every_call_is_answered);
        g_test_add_func("/share-lifecycle/start-ready-vm-running-plugged", test_start_ready_vm_running_plugged);
        g_test_add_func("/share-lifecycle/crash-while-attached-recovers", test_crash_while_attached_recovers);
        g_test_add_func("/share-lifecycle/crash-while-running-reports-restart",
                        test_crash_while_running_reports_restart);
        g_test_add_func("/share-lifecycle/crash-during-plug", test_crash_during_plug);
        g_test_add_func("/share-lifecycle/resumed-crash-keeps-the-device", test_resumed_crash_keeps_the_device);
        g_test_add_func("/share-lifecycle/failed-resume-recovers", test_failed_resume_recovers);
        g_test_add_func("/share-lifecycle/stop-while-checking", test_stop_while_checking);
        g_test_add_func("/share-lifecycle/stop-while-starting", test_stop_while_starting);
        g_test_add_func("/share-lifecycle/stop-while-attached", test_stop_while_attached);
        g_test_add_func("/share-lifecycle/plug-completing-after-stop-is-undone",
                        test_plug_completing_after_stop_is_undone);
        g_test_add_func("/share-lifecycle/folder-check-fails", test_folder_check_fails);
        g_test_add_func("/share-lifecycle/worker-gives-up-while-attached", test_worker_gives_up_while_attached);
        g_test_add_func("/share-lifecycle/vm-changed-while-attached", test_vm_changed_while_attached);
        g_test_add_func("/share-lifecycle/attach-mounts-when-managed", test_attach_mounts_when_managed);
        g_test_add_func("/share-lifecycle/stop-while-mounted-unmounts-first", test_stop_while_mounted_unmounts_first);
        g_test_add_func("/share-lifecycle/busy-guest-fails-stop-and-detach", test_busy_guest_fails_stop_and_detach);
        g_test_add_func("/share-lifecycle/silent-guest-does-not-keep-it", test_silent_guest_does_not_keep_it);
        g_test_add_func("/share-lifecycle/forced-stop-skips-the-guest", test_forced_stop_skips_the_guest);
        g_test_add_func("/share-lifecycle/forced-detach-skips-the-guest", test_forced_detach_skips_the_guest);
        g_test_add_func("/share-lifecycle/crash-while-mounted-remounts", test_crash_while_mounted_remounts);
        g_test_add_func("/share-lifecycle/vm-stops-in-mount-states", test_vm_stops_in_mount_states);
        g_test_add_func("/share-lifecycle/every-event-in-every-pair", test_every_event_in_every_pair);
        return g_test_run();
}
