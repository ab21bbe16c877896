/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-attachment.c — the attachment's table; see share-attachment.h. */
#include "share-attachment.h"

#define A(name) SLUICE_SHARE_ACTION_##name
#define GO(state) .moves = TRUE, .next = SLUICE_SHARE_ATTACHMENT_##state
#define DO(set) .actions = (set)
#define CALLER(who) .caller = SLUICE_SHARE_CALLER_##who

typedef struct {
        gboolean moves;  /* FALSE: the state stays */
        SluiceShareAttachmentState next;
        SluiceShareActions actions;
        SluiceShareCaller caller;
        gboolean retries;  /* RECOVERING's unplug failure: ask again while tries are left */
} Row;

/* A device of ours leaves the VM without a Detach: nothing of it stays shown. */
#define GONE (A(CLEAR_HINT) | A(CLEAR_GUEST) | A(REPORT_DETACHED))
/* ... taken out by someone else: nothing gave QEMU's access back (Sluice's
 * own unplugs do, and report UNPLUG_DONE instead) */
#define REMOVED (GONE | A(REVOKE_ACCESS))
/* Out of the VM without the guest's unmount: Event "detached" says why. */
#define UNPLUG_UNMOUNTED (A(UNPLUG) | A(NOTE_UNMOUNT_SKIPPED))

/* An event a state does not list changes nothing (and a caller of PLUG or
 * UNPLUG there is answered by the row: every state lists those). */
static const Row table[SLUICE_SHARE_ATTACHMENT_N_STATES][SLUICE_SHARE_ATTACHMENT_N_EVENTS] = {
        [SLUICE_SHARE_ATTACHMENT_UNPLUGGED] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { GO(PLUGGING), DO(A(PLUG)), CALLER(WAIT_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_RESTARTED] = { DO(A(REPORT_RESTARTED)) },
        },
        [SLUICE_SHARE_ATTACHMENT_PLUGGING] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(WAIT_PLUG) },
                /* nothing is in the VM yet; the plug's result decides */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(JOIN_PLUG) },
                /* managed: MOUNTING (managed_table) */
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE] = { GO(PLUGGED),
                        DO(A(CLEAR_ERROR) | A(SET_HINT) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS)) },
                /* the device is the crashed worker's: the restart replaces it */
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE_WORKER_LOST] = { GO(STALE),
                        DO(A(COMPLETE_ATTACH_WAITERS)) },
                /* stopped while the device was being plugged in: take it out again */
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE_UNWANTED] = { GO(UNPLUGGED),
                        DO(A(UNPLUG_QUIETLY) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_PLUG_FAILED] = { GO(UNPLUGGED),
                        DO(A(REPORT_PLUG_FAILED) | A(FAIL_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_PLUG_CANCELLED] = { GO(UNPLUGGED), DO(A(FAIL_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_RESTARTED] = { DO(A(REPORT_RESTARTED)) },
        },
        [SLUICE_SHARE_ATTACHMENT_PLUGGED] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(HINT) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNPLUGGING), DO(A(UNPLUG)), CALLER(WAIT_UNPLUG) },
                /* nothing of ours is mounted in the guest: the same */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGING), DO(A(UNPLUG)), CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(UNPLUGGED), DO(REMOVED) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(GONE) },
                /* the old VM loses the device; nothing waits for it */
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED),
                        DO(A(UNPLUG_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_LOST] = { GO(STALE) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(UNPLUG_QUIETLY) | A(CLEAR_GUEST)) },
                /* GUEST_READY: MOUNTING when managed (managed_table) */
        },
        [SLUICE_SHARE_ATTACHMENT_UNPLUGGING] = {
                /* still in the VM until the unplug completes */
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(HINT) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_DONE] = { GO(UNPLUGGED),
                        DO(GONE | A(COMPLETE_DETACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FAILED] = { GO(PLUGGED), DO(A(FAIL_DETACH_WAITERS)) },
        },
        [SLUICE_SHARE_ATTACHMENT_STALE] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(WAIT_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNPLUGGED), DO(A(UNPLUG_QUIETLY) | A(CLEAR_GUEST)),
                        CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGED), DO(A(UNPLUG_QUIETLY) | A(CLEAR_GUEST)),
                        CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST) | A(REVOKE_ACCESS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_READY] = { GO(RECOVERING), DO(A(UNPLUG_OLD_DEVICE)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_RESTARTED] = { GO(RECOVERING), DO(A(UNPLUG_OLD_DEVICE)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(UNPLUG_QUIETLY) | A(CLEAR_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_RECOVERING] = {
                /* the recovery plugs it in: an Attach waits for that */
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(WAIT_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)), CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)), CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_DONE] = { GO(REPLUGGING), DO(A(PLUG)) },
                /* an Attach waiting for the recovery hears why it cannot end yet */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FAILED] = { GO(AWAITING_OLD_DEVICE),
                        DO(A(REPORT_OLD_DEVICE_HELD) | A(FAIL_ATTACH_WAITERS)), .retries = TRUE },
                /* DEVICE_REMOVED: the unplug under way reports it too, and decides */
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_LOST] = { GO(STALE) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_AWAITING_OLD_DEVICE] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { GO(PLUGGING), DO(A(PLUG)), CALLER(WAIT_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNPLUGGED), DO(A(UNPLUG_QUIETLY) | A(CLEAR_GUEST)),
                        CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGED), DO(A(UNPLUG_QUIETLY) | A(CLEAR_GUEST)),
                        CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                /* the guest let the old device go at last */
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(REPLUGGING), DO(A(CLEAR_ERROR) | A(REVOKE_ACCESS) | A(PLUG)) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_LOST] = { GO(STALE) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_REPLUGGING] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(WAIT_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(JOIN_PLUG) },
                /* not managed: back, but nothing of ours is mounted (managed: REMOUNTING) */
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE] = { GO(PLUGGED),
                        DO(A(CLEAR_ERROR) | A(CLEAR_GUEST) | A(SET_HINT) | A(REPORT_ATTACHED) |
                           A(REPORT_RECOVERED) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE_WORKER_LOST] = { GO(STALE),
                        DO(A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE_UNWANTED] = { GO(UNPLUGGED),
                        DO(A(UNPLUG_QUIETLY) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_PLUG_FAILED] = { GO(UNPLUGGED),
                        DO(A(CLEAR_GUEST) | A(REPORT_REPLUG_FAILED) | A(FAIL_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_PLUG_CANCELLED] = { GO(UNPLUGGED),
                        DO(A(CLEAR_GUEST) | A(REPORT_REPLUG_FAILED) | A(FAIL_ATTACH_WAITERS)) },
        },
        /* An Attach (and a Start that joined the plug) ends when the mount
         * attempt does, either way: a share the guest did not mount is
         * still attached (Error and GuestHint say what to do by hand). */
        [SLUICE_SHARE_ATTACHMENT_MOUNTING] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(WAIT_PLUG) },
                /* the mount under way ends first (UNMOUNTING) */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNMOUNTING), CALLER(WAIT_UNPLUG) },
                /* forced: out at once, whatever the guest does with its mount */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGING_MOUNTED), DO(UNPLUG_UNMOUNTED),
                        CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(JOIN_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNTED] = { GO(MOUNTED),
                        DO(A(CLEAR_ERROR) | A(SET_GUEST_PATH) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNT_FAILED] = { GO(PLUGGED),
                        DO(A(REPORT_MOUNT_FAILED) | A(REPORT_ATTACHED) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(UNPLUGGED), DO(REMOVED | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(GONE | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED),
                        DO(A(UNMOUNT_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS)) },
                /* the guest may hold the mount by now: the recovery releases it */
                [SLUICE_SHARE_ATTACHMENT_WORKER_LOST] = { GO(STALE_MOUNTED) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(RELEASE_QUIETLY) | A(CLEAR_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_MOUNTED] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(HINT) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNMOUNTING), DO(A(UNMOUNT_IN_GUEST)), CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGING_MOUNTED), DO(UNPLUG_UNMOUNTED),
                        CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(UNPLUGGED), DO(REMOVED) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(GONE) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED),
                        DO(A(UNMOUNT_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_LOST] = { GO(STALE_MOUNTED) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(RELEASE_QUIETLY) | A(CLEAR_GUEST)) },
                /* switched on while mounted: the guest learns it now, not at the next mount */
                [SLUICE_SHARE_ATTACHMENT_MOUNT_AT_BOOT_ON] = { DO(A(WRITE_BOOT_LINE)) },
        },
        [SLUICE_SHARE_ATTACHMENT_UNMOUNTING] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(HINT) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { CALLER(WAIT_UNPLUG) },
                /* force while the guest is asked: its answer is not waited for */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGING_MOUNTED), DO(UNPLUG_UNMOUNTED),
                        CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNTED] = { GO(UNPLUGGING), DO(A(CLEAR_GUEST) | A(UNPLUG)) },
                /* in use: nothing changes but the Detach (or Stop) failing */
                [SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNT_BUSY] = { GO(MOUNTED),
                        DO(A(SET_GUEST_PATH) | A(FAIL_DETACH_WAITERS)) },
                /* no agent (any more), silence, garbage, the deadline: not "busy";
                 * unplugged all the same, and Error says why */
                [SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNT_FAILED] = { GO(UNPLUGGING_MOUNTED),
                        DO(UNPLUG_UNMOUNTED | A(REPORT_UNMOUNT_FAILED)) },
                /* a Detach came while mounting: now that the mount ended, on */
                [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNTED] = {
                        DO(A(UNMOUNT_IN_GUEST) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNT_FAILED] = { GO(UNPLUGGING),
                        DO(A(CLEAR_GUEST) | A(UNPLUG) | A(COMPLETE_ATTACH_WAITERS)) },
                /* a Detach came while a crash's dead mount was let go: nothing
                 * of ours is mounted now, so out it goes */
                [SLUICE_SHARE_ATTACHMENT_GUEST_RELEASED] = { GO(UNPLUGGING),
                        DO(A(CLEAR_GUEST) | A(UNPLUG) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(UNPLUGGED),
                        DO(REMOVED | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED),
                        DO(GONE | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED),
                        DO(A(UNPLUG_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS) |
                           A(COMPLETE_DETACH_WAITERS)) },
        },
        [SLUICE_SHARE_ATTACHMENT_REMOUNTING] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(WAIT_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNMOUNTING), CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGING_MOUNTED), DO(UNPLUG_UNMOUNTED),
                        CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(JOIN_PLUG) },
                /* the dead mount is gone (or letting it go failed: the mount says) */
                [SLUICE_SHARE_ATTACHMENT_GUEST_RELEASED] = { DO(A(MOUNT_IN_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNTED] = { GO(MOUNTED),
                        DO(A(CLEAR_ERROR) | A(SET_GUEST_PATH) | A(REPORT_ATTACHED) | A(REPORT_RECOVERED) |
                           A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNT_FAILED] = { GO(PLUGGED),
                        DO(A(REPORT_MOUNT_FAILED) | A(REPORT_ATTACHED) | A(REPORT_RECOVERED) |
                           A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(UNPLUGGED), DO(REMOVED | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(GONE | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED),
                        DO(A(UNMOUNT_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_LOST] = { GO(STALE_MOUNTED) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(RELEASE_QUIETLY) | A(CLEAR_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_STALE_MOUNTED] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(WAIT_PLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { GO(UNPLUGGED), DO(A(RELEASE_QUIETLY) | A(CLEAR_GUEST)),
                        CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { GO(UNPLUGGED), DO(A(RELEASE_QUIETLY) | A(CLEAR_GUEST)),
                        CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST) | A(REVOKE_ACCESS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED), DO(A(CLEAR_GUEST)) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED), DO(A(RELEASE_QUIETLY) | A(CLEAR_GUEST)) },
                /* the dead mount is let go once the old device is out (a guest
                 * asked before that hangs on the dead connection): REMOUNTING */
                [SLUICE_SHARE_ATTACHMENT_WORKER_READY] = { GO(RECOVERING), DO(A(UNPLUG_OLD_DEVICE)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_RESTARTED] = { GO(RECOVERING), DO(A(UNPLUG_OLD_DEVICE)) },
                [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = { GO(UNPLUGGED), DO(A(RELEASE_QUIETLY) | A(CLEAR_GUEST)) },
        },
        /* the guest was not asked, or did not answer: its mount is left
         * until the device is out, then let go (it answers ENOTCONN by then) */
        [SLUICE_SHARE_ATTACHMENT_UNPLUGGING_MOUNTED] = {
                [SLUICE_SHARE_ATTACHMENT_PLUG] = { CALLER(HINT) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG] = { CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = { CALLER(WAIT_UNPLUG) },
                [SLUICE_SHARE_ATTACHMENT_SETTLE] = { CALLER(DONE) },
                /* an Attach that waited for a mount forced out ends too */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_DONE] = { GO(UNPLUGGED),
                        DO(GONE | A(LET_GO_QUIETLY) | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS)) },
                /* still in the VM, still mounted there */
                [SLUICE_SHARE_ATTACHMENT_UNPLUG_FAILED] = { GO(MOUNTED),
                        DO(A(COMPLETE_ATTACH_WAITERS) | A(FAIL_DETACH_WAITERS)) },
                /* DEVICE_REMOVED: the unplug under way reports it too, and decides */
                [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = { GO(UNPLUGGED),
                        DO(GONE | A(COMPLETE_ATTACH_WAITERS) | A(COMPLETE_DETACH_WAITERS)) },
                [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = { GO(UNPLUGGED),
                        DO(A(UNPLUG_QUIETLY) | A(CLEAR_HINT) | A(CLEAR_GUEST) | A(COMPLETE_ATTACH_WAITERS) |
                           A(COMPLETE_DETACH_WAITERS)) },
        },
};

/* Where Sluice handles the guest, these rows replace the table's. */
static const Row managed_table[SLUICE_SHARE_ATTACHMENT_N_STATES][SLUICE_SHARE_ATTACHMENT_N_EVENTS] = {
        [SLUICE_SHARE_ATTACHMENT_PLUGGING] = {
                /* "attached" and the Attach callers wait for the mount: they say where */
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE] = { GO(MOUNTING),
                        DO(A(CLEAR_ERROR) | A(SET_HINT) | A(MOUNT_IN_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_PLUGGED] = {
                /* the agent came up after the plug, or AutoMount was switched on */
                [SLUICE_SHARE_ATTACHMENT_GUEST_READY] = { GO(MOUNTING), DO(A(MOUNT_IN_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_MOUNTED] = {
                /* the agent is back (a reboot, an agent restart): a reboot
                 * lost what mounted it (a Linux mount, a WinFsp launcher
                 * instance), so it is asked again at the same place; one
                 * still there is found and left as it is */
                [SLUICE_SHARE_ATTACHMENT_GUEST_READY] = { GO(MOUNTING), DO(A(MOUNT_IN_GUEST)) },
        },
        [SLUICE_SHARE_ATTACHMENT_REPLUGGING] = {
                /* the dead mount is let go first (GUEST_RELEASED), then mounted again */
                [SLUICE_SHARE_ATTACHMENT_PLUG_DONE] = { GO(REMOUNTING),
                        DO(A(CLEAR_ERROR) | A(SET_HINT) | A(RELEASE_DEAD_MOUNT)) },
        },
};

static const char *const state_names[] = {
        [SLUICE_SHARE_ATTACHMENT_UNPLUGGED] = "unplugged",
        [SLUICE_SHARE_ATTACHMENT_PLUGGING] = "plugging",
        [SLUICE_SHARE_ATTACHMENT_PLUGGED] = "plugged",
        [SLUICE_SHARE_ATTACHMENT_UNPLUGGING] = "unplugging",
        [SLUICE_SHARE_ATTACHMENT_STALE] = "stale",
        [SLUICE_SHARE_ATTACHMENT_RECOVERING] = "recovering",
        [SLUICE_SHARE_ATTACHMENT_AWAITING_OLD_DEVICE] = "awaiting-old-device",
        [SLUICE_SHARE_ATTACHMENT_REPLUGGING] = "replugging",
        [SLUICE_SHARE_ATTACHMENT_MOUNTING] = "mounting",
        [SLUICE_SHARE_ATTACHMENT_MOUNTED] = "mounted",
        [SLUICE_SHARE_ATTACHMENT_UNMOUNTING] = "unmounting",
        [SLUICE_SHARE_ATTACHMENT_REMOUNTING] = "remounting",
        [SLUICE_SHARE_ATTACHMENT_STALE_MOUNTED] = "stale-mounted",
        [SLUICE_SHARE_ATTACHMENT_UNPLUGGING_MOUNTED] = "unplugging-mounted",
};

static const char *const event_names[] = {
        [SLUICE_SHARE_ATTACHMENT_PLUG] = "plug",
        [SLUICE_SHARE_ATTACHMENT_UNPLUG] = "unplug",
        [SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED] = "unplug-forced",
        [SLUICE_SHARE_ATTACHMENT_SETTLE] = "settle",
        [SLUICE_SHARE_ATTACHMENT_PLUG_DONE] = "plug-done",
        [SLUICE_SHARE_ATTACHMENT_PLUG_DONE_WORKER_LOST] = "plug-done-worker-lost",
        [SLUICE_SHARE_ATTACHMENT_PLUG_DONE_UNWANTED] = "plug-done-unwanted",
        [SLUICE_SHARE_ATTACHMENT_PLUG_FAILED] = "plug-failed",
        [SLUICE_SHARE_ATTACHMENT_PLUG_CANCELLED] = "plug-cancelled",
        [SLUICE_SHARE_ATTACHMENT_UNPLUG_DONE] = "unplug-done",
        [SLUICE_SHARE_ATTACHMENT_UNPLUG_FAILED] = "unplug-failed",
        [SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED] = "device-removed",
        [SLUICE_SHARE_ATTACHMENT_VM_STOPPED] = "vm-stopped",
        [SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED] = "vm-unassigned",
        [SLUICE_SHARE_ATTACHMENT_WORKER_LOST] = "worker-lost",
        [SLUICE_SHARE_ATTACHMENT_WORKER_READY] = "worker-ready",
        [SLUICE_SHARE_ATTACHMENT_WORKER_RESTARTED] = "worker-restarted",
        [SLUICE_SHARE_ATTACHMENT_WORKER_GONE] = "worker-gone",
        [SLUICE_SHARE_ATTACHMENT_GUEST_READY] = "guest-ready",
        [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNTED] = "guest-mounted",
        [SLUICE_SHARE_ATTACHMENT_GUEST_MOUNT_FAILED] = "guest-mount-failed",
        [SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNTED] = "guest-unmounted",
        [SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNT_BUSY] = "guest-unmount-busy",
        [SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNT_FAILED] = "guest-unmount-failed",
        [SLUICE_SHARE_ATTACHMENT_GUEST_RELEASED] = "guest-released",
        [SLUICE_SHARE_ATTACHMENT_MOUNT_AT_BOOT_ON] = "mount-at-boot-on",
        [SLUICE_SHARE_ATTACHMENT_WORKER_RESUMED] = "worker-resumed",
};

G_STATIC_ASSERT(G_N_ELEMENTS(state_names) == SLUICE_SHARE_ATTACHMENT_N_STATES);
G_STATIC_ASSERT(G_N_ELEMENTS(event_names) == SLUICE_SHARE_ATTACHMENT_N_EVENTS);

void sluice_share_attachment_init(SluiceShareAttachment *self)
{
        self->state = SLUICE_SHARE_ATTACHMENT_UNPLUGGED;
        self->recovery_tries = 0;
}

SluiceShareAttachmentResult sluice_share_attachment_step(SluiceShareAttachment *self,
                                                         SluiceShareAttachmentEvent event,
                                                         gboolean guest_managed)
{
        const Row *row;
        SluiceShareAttachmentResult result;

        g_return_val_if_fail(self->state < SLUICE_SHARE_ATTACHMENT_N_STATES, (SluiceShareAttachmentResult){ 0 });
        g_return_val_if_fail(event < SLUICE_SHARE_ATTACHMENT_N_EVENTS, (SluiceShareAttachmentResult){ 0 });
        row = &table[self->state][event];
        if (guest_managed && managed_table[self->state][event].moves)
                row = &managed_table[self->state][event];
        if (row->retries && self->recovery_tries < SLUICE_SHARE_RECOVERY_UNPLUG_TRIES) {
                /* plugging in now would find the old device (same socket) and
                 * give a share that does not work: ask again */
                self->recovery_tries++;
                return (SluiceShareAttachmentResult){ .next = self->state,
                                                      .actions = A(UNPLUG_OLD_DEVICE) };
        }
        result.next = row->moves ? row->next : self->state;
        result.actions = row->actions;
        result.caller = row->caller;
        if (result.actions & A(UNPLUG_OLD_DEVICE))
                self->recovery_tries = 1;  /* the first request of a recovery */
        self->state = result.next;
        return result;
}

gboolean sluice_share_attachment_in_vm(SluiceShareAttachmentState state)
{
        switch (state) {
        case SLUICE_SHARE_ATTACHMENT_PLUGGED:
        case SLUICE_SHARE_ATTACHMENT_UNPLUGGING:
        case SLUICE_SHARE_ATTACHMENT_UNPLUGGING_MOUNTED:
        case SLUICE_SHARE_ATTACHMENT_MOUNTING:
        case SLUICE_SHARE_ATTACHMENT_MOUNTED:
        case SLUICE_SHARE_ATTACHMENT_UNMOUNTING:
        case SLUICE_SHARE_ATTACHMENT_REMOUNTING:
                return TRUE;
        default:
                return FALSE;
        }
}

const char *sluice_share_attachment_state_name(SluiceShareAttachmentState state)
{
        return state < SLUICE_SHARE_ATTACHMENT_N_STATES ? state_names[state] : "?";
}

const char *sluice_share_attachment_event_name(SluiceShareAttachmentEvent event)
{
        return event < SLUICE_SHARE_ATTACHMENT_N_EVENTS ? event_names[event] : "?";
}
