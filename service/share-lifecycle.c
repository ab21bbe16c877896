/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-lifecycle.c — the lifecycle's table; see share-lifecycle.h. */
#include "share-lifecycle.h"

#define A(name) SLUICE_SHARE_ACTION_##name
#define SET .set = TRUE
#define GO(state) .moves = TRUE, .next = SLUICE_SHARE_##state
#define DO(set) .actions = (set)
#define CALLER(who) .caller = SLUICE_SHARE_CALLER_##who
#define ASK_ATTACHMENT .caller_from_attachment = TRUE
#define ERROR(kind) .error = SLUICE_SHARE_RESULT_##kind
#define FORWARD(event) .forwards = TRUE, .forward = SLUICE_SHARE_ATTACHMENT_##event

typedef struct {
        gboolean set;  /* FALSE: the event's default row (defaults[]) */
        gboolean moves;
        SluiceShareState next;
        SluiceShareActions actions;
        SluiceShareCaller caller;
        gboolean caller_from_attachment;  /* the forwarded event's caller answers */
        SluiceShareResultError error;
        gboolean forwards;
        SluiceShareAttachmentEvent forward;
        gboolean plug_if_vm_running;      /* the worker is ready: into the VM if it runs */
        gboolean while_unmounting;        /* only while the guest is asked (else defaults[]) */
} Row;

/* What the attachment's events do in any state that does not say otherwise:
 * the device is where it is, whatever the worker does. */
static const Row defaults[SLUICE_SHARE_N_EVENTS] = {
        [SLUICE_SHARE_EVENT_DETACH] = { SET, FORWARD(UNPLUG), ASK_ATTACHMENT },
        [SLUICE_SHARE_EVENT_DETACH_FORCED] = { SET, FORWARD(UNPLUG_FORCED), ASK_ATTACHMENT },
        /* no worker to serve it: the device goes out again */
        [SLUICE_SHARE_EVENT_PLUG_DONE] = { SET, FORWARD(PLUG_DONE_UNWANTED) },
        [SLUICE_SHARE_EVENT_PLUG_FAILED] = { SET, FORWARD(PLUG_FAILED) },
        [SLUICE_SHARE_EVENT_PLUG_CANCELLED] = { SET, FORWARD(PLUG_CANCELLED) },
        [SLUICE_SHARE_EVENT_UNPLUG_DONE] = { SET, FORWARD(UNPLUG_DONE) },
        [SLUICE_SHARE_EVENT_UNPLUG_FAILED] = { SET, FORWARD(UNPLUG_FAILED) },
        [SLUICE_SHARE_EVENT_VM_STOPPED] = { SET, FORWARD(VM_STOPPED) },
        [SLUICE_SHARE_EVENT_DEVICE_REMOVED] = { SET, FORWARD(DEVICE_REMOVED) },
        [SLUICE_SHARE_EVENT_VM_UNASSIGNED] = { SET, FORWARD(VM_UNASSIGNED) },
        [SLUICE_SHARE_EVENT_GUEST_READY] = { SET, FORWARD(GUEST_READY) },
        [SLUICE_SHARE_EVENT_GUEST_MOUNTED] = { SET, FORWARD(GUEST_MOUNTED) },
        [SLUICE_SHARE_EVENT_GUEST_MOUNT_FAILED] = { SET, FORWARD(GUEST_MOUNT_FAILED) },
        [SLUICE_SHARE_EVENT_GUEST_UNMOUNTED] = { SET, FORWARD(GUEST_UNMOUNTED) },
        [SLUICE_SHARE_EVENT_GUEST_UNMOUNT_BUSY] = { SET, FORWARD(GUEST_UNMOUNT_BUSY) },
        [SLUICE_SHARE_EVENT_GUEST_UNMOUNT_FAILED] = { SET, FORWARD(GUEST_UNMOUNT_FAILED) },
        [SLUICE_SHARE_EVENT_GUEST_RELEASED] = { SET, FORWARD(GUEST_RELEASED) },
        /* a mounted share's guest learns it now; else the next mount writes the line */
        [SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_ON] = { SET, FORWARD(MOUNT_AT_BOOT_ON) },
        /* the line may be there from any earlier mount, whatever the share does now */
        [SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_OFF] = { SET, DO(A(FORGET_BOOT_LINE)) },
};

#define START_ROW { SET, GO(CHECKING), DO(A(CLEAR_ERROR) | A(CHECK_FOLDER)), CALLER(WAIT_RUNNING) }
#define STOP_ROW { SET, GO(DETACHING), CALLER(WAIT_STOP), FORWARD(UNPLUG) }
#define STOP_FORCED_ROW { SET, GO(DETACHING), CALLER(WAIT_STOP), FORWARD(UNPLUG_FORCED) }
#define READY_ROW(event) { SET, GO(RUNNING), \
        DO(A(CLEAR_ERROR) | A(FORGET_FAILURE) | A(SET_SOCKET_PATH) | A(START_STATS) | \
           A(RELEASE_START_WAITERS)), \
        FORWARD(event), .plug_if_vm_running = TRUE }
#define CRASHED_ROW { SET, GO(STARTING), \
        DO(A(STOP_STATS) | A(CLEAR_HINT) | A(SET_ERROR) | A(REPORT_CRASH)), FORWARD(WORKER_LOST) }
#define FAILED_ROW { SET, GO(FAILED), \
        DO(A(STOP_STATS) | A(CLEAR_SOCKET_PATH) | A(CLEAR_HINT) | A(SET_ERROR) | A(REPORT_FAILURE) | \
           A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS)), \
        ERROR(EVENT_ERROR), FORWARD(WORKER_GONE) }
#define REFUSED_ROW { SET, CALLER(REFUSED), ERROR(STOPPING) }

/* An event a state does not list (and defaults[] does not) changes nothing. */
static const Row table[SLUICE_SHARE_N_STATES][SLUICE_SHARE_N_EVENTS] = {
        [SLUICE_SHARE_STOPPED] = {
                [SLUICE_SHARE_EVENT_START] = START_ROW,
                [SLUICE_SHARE_EVENT_ATTACH] = START_ROW,
                /* nothing of ours runs, but a worker a killed service left
                 * may still serve the share's VM: Stop ends it */
                [SLUICE_SHARE_EVENT_STOP] = { SET, CALLER(STOP_ORPHANS) },
                [SLUICE_SHARE_EVENT_STOP_FORCED] = { SET, CALLER(STOP_ORPHANS) },
                /* stopped and forgotten: a line it left in the guest's fstab
                 * would mount a tag no device has at every boot */
                [SLUICE_SHARE_EVENT_REMOVED] = { SET, DO(A(FORGET_BOOT_LINE)) },
        },
        [SLUICE_SHARE_CHECKING] = {
                [SLUICE_SHARE_EVENT_START] = { SET, CALLER(WAIT_RUNNING) },
                [SLUICE_SHARE_EVENT_ATTACH] = { SET, CALLER(WAIT_RUNNING) },
                /* nothing runs yet: the pending check's answer is dropped */
                [SLUICE_SHARE_EVENT_STOP] = { SET, GO(STOPPED),
                        DO(A(FORGET_FOLDER_CHECK) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS)),
                        CALLER(STOP_ORPHANS), ERROR(STOPPED) },
                [SLUICE_SHARE_EVENT_STOP_FORCED] = { SET, GO(STOPPED),
                        DO(A(FORGET_FOLDER_CHECK) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS)),
                        CALLER(STOP_ORPHANS), ERROR(STOPPED) },
                [SLUICE_SHARE_EVENT_FOLDER_OK] = { SET, GO(STARTING), DO(A(SPAWN_WORKER)) },
                [SLUICE_SHARE_EVENT_FOLDER_FAILED] = { SET, GO(FAILED),
                        DO(A(SET_ERROR) | A(FAIL_START_WAITERS) | A(FAIL_ATTACH_WAITERS)),
                        ERROR(EVENT_ERROR) },
        },
        [SLUICE_SHARE_STARTING] = {
                [SLUICE_SHARE_EVENT_START] = { SET, CALLER(WAIT_RUNNING) },
                [SLUICE_SHARE_EVENT_ATTACH] = { SET, CALLER(WAIT_RUNNING) },
                [SLUICE_SHARE_EVENT_STOP] = STOP_ROW,
                [SLUICE_SHARE_EVENT_STOP_FORCED] = STOP_FORCED_ROW,
                [SLUICE_SHARE_EVENT_WORKER_READY] = READY_ROW(WORKER_READY),
                [SLUICE_SHARE_EVENT_WORKER_RESTARTED] = READY_ROW(WORKER_RESTARTED),
                /* the crash was fed: the device was written off already */
                [SLUICE_SHARE_EVENT_WORKER_RESUMED] = READY_ROW(WORKER_RESTARTED),
                [SLUICE_SHARE_EVENT_WORKER_CRASHED] = CRASHED_ROW,
                [SLUICE_SHARE_EVENT_WORKER_FAILED] = FAILED_ROW,
                /* plugged in while the worker restarts: the restart replaces it */
                [SLUICE_SHARE_EVENT_PLUG_DONE] = { SET, FORWARD(PLUG_DONE_WORKER_LOST) },
        },
        [SLUICE_SHARE_RUNNING] = {
                /* a Start made while the device is being plugged in ends with it */
                [SLUICE_SHARE_EVENT_START] = { SET, FORWARD(SETTLE), ASK_ATTACHMENT },
                [SLUICE_SHARE_EVENT_ATTACH] = { SET, FORWARD(PLUG), ASK_ATTACHMENT },
                [SLUICE_SHARE_EVENT_STOP] = STOP_ROW,
                [SLUICE_SHARE_EVENT_STOP_FORCED] = STOP_FORCED_ROW,
                [SLUICE_SHARE_EVENT_WORKER_CRASHED] = CRASHED_ROW,
                [SLUICE_SHARE_EVENT_WORKER_FAILED] = FAILED_ROW,
                /* the same device, rings and node ids: the guest saw nothing */
                [SLUICE_SHARE_EVENT_WORKER_RESUMED] = { SET,
                        DO(A(CLEAR_ERROR) | A(START_STATS) | A(REPORT_RESUMED)), FORWARD(WORKER_RESUMED) },
                [SLUICE_SHARE_EVENT_PLUG_DONE] = { SET, FORWARD(PLUG_DONE) },
                [SLUICE_SHARE_EVENT_VM_STARTED] = { SET, FORWARD(PLUG) },
        },
        /* DETACHING moves on to STOPPING by itself once the device is out
         * (see sluice_share_lifecycle_step) */
        [SLUICE_SHARE_DETACHING] = {
                [SLUICE_SHARE_EVENT_START] = REFUSED_ROW,
                [SLUICE_SHARE_EVENT_ATTACH] = REFUSED_ROW,
                [SLUICE_SHARE_EVENT_STOP] = { SET, CALLER(WAIT_STOP) },
                /* a Stop that waits for the guest is forced on: the guest's
                 * answer is not waited for any more */
                [SLUICE_SHARE_EVENT_STOP_FORCED] = { SET, CALLER(WAIT_STOP), FORWARD(UNPLUG_FORCED) },
                /* the guest uses the share: it stays running and mounted */
                [SLUICE_SHARE_EVENT_GUEST_UNMOUNT_BUSY] = { SET, GO(RUNNING), DO(A(FAIL_STOP_WAITERS)),
                        ERROR(EVENT_ERROR), FORWARD(GUEST_UNMOUNT_BUSY), .while_unmounting = TRUE },
        },
        [SLUICE_SHARE_STOPPING] = {
                [SLUICE_SHARE_EVENT_START] = REFUSED_ROW,
                [SLUICE_SHARE_EVENT_ATTACH] = REFUSED_ROW,
                [SLUICE_SHARE_EVENT_STOP] = { SET, CALLER(WAIT_STOP) },
                [SLUICE_SHARE_EVENT_STOP_FORCED] = { SET, CALLER(WAIT_STOP) },
                [SLUICE_SHARE_EVENT_WORKER_STOPPED] = { SET, GO(STOPPED),
                        DO(A(STOP_STATS) | A(CLEAR_SOCKET_PATH) | A(CLEAR_HINT) | A(FAIL_START_WAITERS) |
                           A(FAIL_ATTACH_WAITERS) | A(COMPLETE_STOP_WAITERS)),
                        ERROR(STOPPED), FORWARD(WORKER_GONE) },
        },
        [SLUICE_SHARE_FAILED] = {
                [SLUICE_SHARE_EVENT_START] = START_ROW,
                [SLUICE_SHARE_EVENT_ATTACH] = START_ROW,
                [SLUICE_SHARE_EVENT_STOP] = STOP_ROW,
                [SLUICE_SHARE_EVENT_STOP_FORCED] = STOP_FORCED_ROW,
        },
};

static const char *const state_names[] = {
        [SLUICE_SHARE_STOPPED] = "stopped",
        [SLUICE_SHARE_CHECKING] = "checking",
        [SLUICE_SHARE_STARTING] = "starting",
        [SLUICE_SHARE_RUNNING] = "running",
        [SLUICE_SHARE_DETACHING] = "detaching",
        [SLUICE_SHARE_STOPPING] = "stopping",
        [SLUICE_SHARE_FAILED] = "failed",
};

static const char *const event_names[] = {
        [SLUICE_SHARE_EVENT_START] = "start",
        [SLUICE_SHARE_EVENT_ATTACH] = "attach",
        [SLUICE_SHARE_EVENT_DETACH] = "detach",
        [SLUICE_SHARE_EVENT_STOP] = "stop",
        [SLUICE_SHARE_EVENT_STOP_FORCED] = "stop-forced",
        [SLUICE_SHARE_EVENT_DETACH_FORCED] = "detach-forced",
        [SLUICE_SHARE_EVENT_FOLDER_OK] = "folder-ok",
        [SLUICE_SHARE_EVENT_FOLDER_FAILED] = "folder-failed",
        [SLUICE_SHARE_EVENT_WORKER_READY] = "worker-ready",
        [SLUICE_SHARE_EVENT_WORKER_RESTARTED] = "worker-restarted",
        [SLUICE_SHARE_EVENT_WORKER_CRASHED] = "worker-crashed",
        [SLUICE_SHARE_EVENT_WORKER_FAILED] = "worker-failed",
        [SLUICE_SHARE_EVENT_WORKER_STOPPED] = "worker-stopped",
        [SLUICE_SHARE_EVENT_WORKER_RESUMED] = "worker-resumed",
        [SLUICE_SHARE_EVENT_PLUG_DONE] = "plug-done",
        [SLUICE_SHARE_EVENT_PLUG_FAILED] = "plug-failed",
        [SLUICE_SHARE_EVENT_PLUG_CANCELLED] = "plug-cancelled",
        [SLUICE_SHARE_EVENT_UNPLUG_DONE] = "unplug-done",
        [SLUICE_SHARE_EVENT_UNPLUG_FAILED] = "unplug-failed",
        [SLUICE_SHARE_EVENT_VM_STARTED] = "vm-started",
        [SLUICE_SHARE_EVENT_VM_STOPPED] = "vm-stopped",
        [SLUICE_SHARE_EVENT_DEVICE_REMOVED] = "device-removed",
        [SLUICE_SHARE_EVENT_VM_UNASSIGNED] = "vm-unassigned",
        [SLUICE_SHARE_EVENT_GUEST_READY] = "guest-ready",
        [SLUICE_SHARE_EVENT_GUEST_MOUNTED] = "guest-mounted",
        [SLUICE_SHARE_EVENT_GUEST_MOUNT_FAILED] = "guest-mount-failed",
        [SLUICE_SHARE_EVENT_GUEST_UNMOUNTED] = "guest-unmounted",
        [SLUICE_SHARE_EVENT_GUEST_UNMOUNT_BUSY] = "guest-unmount-busy",
        [SLUICE_SHARE_EVENT_GUEST_UNMOUNT_FAILED] = "guest-unmount-failed",
        [SLUICE_SHARE_EVENT_GUEST_RELEASED] = "guest-released",
        [SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_ON] = "mount-at-boot-on",
        [SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_OFF] = "mount-at-boot-off",
        [SLUICE_SHARE_EVENT_REMOVED] = "removed",
};

G_STATIC_ASSERT(G_N_ELEMENTS(state_names) == SLUICE_SHARE_N_STATES);
G_STATIC_ASSERT(G_N_ELEMENTS(event_names) == SLUICE_SHARE_N_EVENTS);

void sluice_share_lifecycle_init(SluiceShareLifecycle *self)
{
        self->state = SLUICE_SHARE_STOPPED;
        sluice_share_attachment_init(&self->attachment);
        self->published = SLUICE_WIRE_SHARE_STOPPED;
}

static SluiceWireShareState published_for(const SluiceShareLifecycle *self)
{
        gboolean in_vm = sluice_share_attachment_in_vm(self->attachment.state);

        switch (self->state) {
        case SLUICE_SHARE_STOPPED:
                return SLUICE_WIRE_SHARE_STOPPED;
        case SLUICE_SHARE_CHECKING:
        case SLUICE_SHARE_STARTING:
                return SLUICE_WIRE_SHARE_STARTING;
        case SLUICE_SHARE_RUNNING:
                return in_vm ? SLUICE_WIRE_SHARE_ATTACHED : SLUICE_WIRE_SHARE_RUNNING;
        case SLUICE_SHARE_DETACHING:
        case SLUICE_SHARE_STOPPING:
                /* a Stop shows what it was until it is stopped; the device
                 * leaving the VM is seen on the way */
                if (self->published == SLUICE_WIRE_SHARE_ATTACHED && !in_vm)
                        return SLUICE_WIRE_SHARE_RUNNING;
                return self->published;
        case SLUICE_SHARE_FAILED:
        default:
                return SLUICE_WIRE_SHARE_FAILED;
        }
}

static void forward(SluiceShareLifecycle *self, SluiceShareAttachmentEvent event, gboolean guest_managed,
                    SluiceShareLifecycleResult *result, gboolean answers_caller)
{
        SluiceShareAttachmentResult sub = sluice_share_attachment_step(&self->attachment, event, guest_managed);

        result->actions |= sub.actions;
        if (result->error == SLUICE_SHARE_RESULT_OK &&
            (sub.actions & (A(FAIL_ATTACH_WAITERS) | A(FAIL_DETACH_WAITERS))))
                result->error = SLUICE_SHARE_RESULT_EVENT_ERROR;
        if (answers_caller)
                result->caller = sub.caller;
}

SluiceShareLifecycleResult sluice_share_lifecycle_step(SluiceShareLifecycle *self, SluiceShareEvent event,
                                                       gboolean vm_running, gboolean guest_managed)
{
        SluiceShareLifecycleResult result = { 0 };
        const Row *row;

        g_return_val_if_fail(self->state < SLUICE_SHARE_N_STATES, result);
        g_return_val_if_fail(event < SLUICE_SHARE_N_EVENTS, result);
        row = &table[self->state][event];
        /* a "busy" that comes after force or the deadline holds nothing back */
        if (!row->set ||
            (row->while_unmounting && self->attachment.state != SLUICE_SHARE_ATTACHMENT_UNMOUNTING))
                row = &defaults[event];

        if (row->moves)
                self->state = row->next;
        result.actions = row->actions;
        result.caller = row->caller;
        result.error = row->error;
        if (row->forwards)
                forward(self, row->forward, guest_managed, &result, row->caller_from_attachment);
        if (row->plug_if_vm_running && vm_running)
                forward(self, SLUICE_SHARE_ATTACHMENT_PLUG, guest_managed, &result, FALSE);

        /* Stop takes the device out of the VM (unmounted in the guest
         * first) before it stops the worker: once nothing is being
         * unmounted or unplugged, the worker goes. */
        if (self->state == SLUICE_SHARE_DETACHING &&
            self->attachment.state != SLUICE_SHARE_ATTACHMENT_UNPLUGGING &&
            self->attachment.state != SLUICE_SHARE_ATTACHMENT_UNPLUGGING_MOUNTED &&
            self->attachment.state != SLUICE_SHARE_ATTACHMENT_UNMOUNTING) {
                self->state = SLUICE_SHARE_STOPPING;
                result.actions |= A(STOP_WORKER);
        }

        self->published = published_for(self);
        result.next = self->state;
        result.attachment = self->attachment.state;
        result.published = self->published;
        return result;
}

const char *sluice_share_state_name(SluiceShareState state)
{
        return state < SLUICE_SHARE_N_STATES ? state_names[state] : "?";
}

const char *sluice_share_event_name(SluiceShareEvent event)
{
        return event < SLUICE_SHARE_N_EVENTS ? event_names[event] : "?";
}
