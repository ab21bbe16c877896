/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-lifecycle.h — a share's life as one state machine: read this first.
 *
 *              START,               FOLDER_OK                 WORKER_READY,
 *              ATTACH                                         WORKER_RESTARTED
 *   STOPPED ----------> CHECKING -------------> STARTING ---------------------> RUNNING
 *     ^      <---------    |                        |  ^     WORKER_CRASHED      |  |
 *     |        STOP        | FOLDER_FAILED          |  +-------------------------+  |
 *     |                    v                        |                               |
 *     |                 FAILED <--------------------+------- WORKER_FAILED ----------+
 *     |                    |
 *     |                    | STOP, STOP_FORCED                     STOP, STOP_FORCED (from STARTING
 *     |                    v                                        and RUNNING too)
 *     +-------------- STOPPING <------------------- DETACHING <--------------------
 *      WORKER_STOPPED     STOP_WORKER    the device is out (at once
 *                                        when none is in the VM)
 *
 *   Also: FAILED --START, ATTACH--> CHECKING (Error cleared, checked again);
 *   STARTING --WORKER_CRASHED--> STARTING (a crash before it was ready);
 *   RUNNING --WORKER_RESUMED--> RUNNING: a worker took over its
 *   predecessor's device, rings and node ids (worker.h: the fd store) after
 *   a crash or a restart; the guest saw nothing, so nothing moves, not even
 *   the attachment (Event "recovered", Stats go on with the new process).
 *   The driver does not feed a crash it expects to be resumed
 *   (sluice_worker_resume_expected): the share stays RUNNING, its device
 *   where it is (a plug, unplug or mount under way goes on: the resumed
 *   worker answers the guest), until the outcome: WORKER_RESUMED, or, when
 *   the new worker could not resume, WORKER_CRASHED then WORKER_RESTARTED
 *   (the replug path, with why in Error and Event).  In STARTING (a crash
 *   fed as such), WORKER_RESUMED is taken as WORKER_RESTARTED: the device
 *   was already written off;
 *   MOUNT_AT_BOOT_OFF in any state, and REMOVED in STOPPED (RemoveShare
 *   stops first): FORGET_BOOT_LINE, the guest's fstab line goes whatever
 *   the device does (MOUNT_AT_BOOT_ON goes to the attachment: it writes
 *   the line where the share is mounted).
 *
 *   CHECKING   the folder is checked (in a thread) before the worker starts
 *   STARTING   the worker is launched, or restarts after a crash (worker.c
 *              restarts with backoff and gives up: WORKER_FAILED)
 *   RUNNING    the worker serves; where its device is: share-attachment.h
 *   DETACHING  Stop: the device leaves the VM first (unmounted in the guest
 *              before; a guest that keeps it busy fails the Stop, back to
 *              RUNNING: GUEST_UNMOUNT_BUSY).  A guest that does not answer,
 *              answers garbage or misses the deadline does not hold it: the
 *              device is unplugged anyway.  STOP_FORCED (Stop with force, a
 *              shutdown) takes the same way without asking the guest, and
 *              forces a Stop already waiting for the guest.
 *   STOPPING   Stop: the worker is being stopped and reaped
 *
 * The attachment (the device in the VM) is a sub-machine: each lifecycle
 * event that concerns it is forwarded to it as an attachment event chosen by
 * the lifecycle state (a plug that completes while the worker restarts is
 * PLUG_DONE_WORKER_LOST; while the share stops, PLUG_DONE_UNWANTED).  The
 * actions of both are returned together (share-actions.h).
 *
 * The published State (D-Bus, stopped|starting|running|attached|failed: the
 * words of wire-enums.h, which the machine returns as SluiceWireShareState):
 *   STOPPED stopped; CHECKING, STARTING starting; FAILED failed;
 *   RUNNING attached while the device is in the VM (mounted in the guest
 *   or not), else running;
 *   DETACHING, STOPPING: what it was, "attached" turning "running" once
 *   the device is out.
 *
 * Pure: no GObject, D-Bus, libvirt or worker; the caller owns the struct. */
#pragma once

#include <glib.h>

#include "share-actions.h"
#include "share-attachment.h"
#include "wire-enums.h"

G_BEGIN_DECLS

typedef enum {
        SLUICE_SHARE_STOPPED,
        SLUICE_SHARE_CHECKING,
        SLUICE_SHARE_STARTING,
        SLUICE_SHARE_RUNNING,
        SLUICE_SHARE_DETACHING,
        SLUICE_SHARE_STOPPING,
        SLUICE_SHARE_FAILED,
        SLUICE_SHARE_N_STATES,
} SluiceShareState;

typedef enum {
        /* calls: the result's caller says what becomes of the caller */
        SLUICE_SHARE_EVENT_START,
        SLUICE_SHARE_EVENT_ATTACH,          /* after its checks (a VM assigned, known, running) */
        SLUICE_SHARE_EVENT_DETACH,
        SLUICE_SHARE_EVENT_STOP,
        SLUICE_SHARE_EVENT_DETACH_FORCED,   /* with force: the guest is not asked to unmount */
        SLUICE_SHARE_EVENT_STOP_FORCED,     /* likewise; also a service shutdown */
        /* the folder check */
        SLUICE_SHARE_EVENT_FOLDER_OK,
        SLUICE_SHARE_EVENT_FOLDER_FAILED,
        /* the worker */
        SLUICE_SHARE_EVENT_WORKER_READY,
        SLUICE_SHARE_EVENT_WORKER_RESTARTED, /* ready again after a crash */
        SLUICE_SHARE_EVENT_WORKER_CRASHED,   /* a restart is scheduled */
        SLUICE_SHARE_EVENT_WORKER_FAILED,    /* given up */
        SLUICE_SHARE_EVENT_WORKER_STOPPED,   /* STOP_WORKER completed */
        SLUICE_SHARE_EVENT_WORKER_RESUMED,   /* ready again, serving the same device (Resume) */
        /* what PLUG, UNPLUG and UNPLUG_OLD_DEVICE asked of the VM */
        SLUICE_SHARE_EVENT_PLUG_DONE,
        SLUICE_SHARE_EVENT_PLUG_FAILED,
        SLUICE_SHARE_EVENT_PLUG_CANCELLED,
        SLUICE_SHARE_EVENT_UNPLUG_DONE,
        SLUICE_SHARE_EVENT_UNPLUG_FAILED,
        /* the share's VM */
        SLUICE_SHARE_EVENT_VM_STARTED,
        SLUICE_SHARE_EVENT_VM_STOPPED,
        SLUICE_SHARE_EVENT_DEVICE_REMOVED,
        SLUICE_SHARE_EVENT_VM_UNASSIGNED,    /* before the share moves to another VM */
        /* the guest: what MOUNT_IN_GUEST and UNMOUNT_IN_GUEST asked of its
         * agent, and the agent coming up (forwarded as they are) */
        SLUICE_SHARE_EVENT_GUEST_READY,
        SLUICE_SHARE_EVENT_GUEST_MOUNTED,
        SLUICE_SHARE_EVENT_GUEST_MOUNT_FAILED,
        SLUICE_SHARE_EVENT_GUEST_UNMOUNTED,
        SLUICE_SHARE_EVENT_GUEST_UNMOUNT_BUSY, /* in use in the guest: a Stop fails, the share runs on */
        SLUICE_SHARE_EVENT_GUEST_UNMOUNT_FAILED,
        SLUICE_SHARE_EVENT_GUEST_RELEASED,     /* what RELEASE_DEAD_MOUNT asked */
        /* the share's settings and its end */
        SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_ON,   /* MountAtBoot switched on */
        SLUICE_SHARE_EVENT_MOUNT_AT_BOOT_OFF,  /* ... off */
        SLUICE_SHARE_EVENT_REMOVED,            /* RemoveShare: stopped, and forgotten by the service */
        SLUICE_SHARE_N_EVENTS,
} SluiceShareEvent;

typedef struct {
        SluiceShareState state;
        SluiceShareAttachment attachment;
        SluiceWireShareState published;
} SluiceShareLifecycle;

typedef struct {
        SluiceShareState next;
        SluiceShareAttachmentState attachment;  /* the sub-machine's state after the step */
        SluiceWireShareState published;
        SluiceShareActions actions;
        SluiceShareCaller caller;
        SluiceShareResultError error;           /* for REFUSED and the FAIL_* actions */
} SluiceShareLifecycleResult;

void sluice_share_lifecycle_init(SluiceShareLifecycle *self);
/* Moves SELF by EVENT.  VM_RUNNING: whether the share's VM runs now; read
 * only when the worker becomes ready (it is plugged in then).
 * GUEST_MANAGED: whether Sluice mounts the share in its VM's guest now
 * (AutoMount on, the agent ready); passed to the attachment. */
SluiceShareLifecycleResult sluice_share_lifecycle_step(SluiceShareLifecycle *self, SluiceShareEvent event,
                                                       gboolean vm_running, gboolean guest_managed);

const char *sluice_share_state_name(SluiceShareState state);
const char *sluice_share_event_name(SluiceShareEvent event);

G_END_DECLS
