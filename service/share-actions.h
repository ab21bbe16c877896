/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-actions.h — what the share's two state machines (share-lifecycle.h,
 * share-attachment.h) ask their driver (share.c) to do.
 *
 * A transition returns a set of actions (bits) and, for a call (Start,
 * Attach, Detach, Stop), what becomes of the caller.  The driver executes
 * the actions in the order of their bits, lowest first: that order is part
 * of the contract (a plug is started before the start waiters are released,
 * so that a Start made while the VM runs completes once the share is
 * plugged in; GuestPath is set before the "attached" event and before the
 * Attach callers complete, so that both can say where the share is; QEMU's
 * access to a socket is revoked before a plug grants it again, from a
 * thread that may run at once). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A set of actions: more than 32, hence 64 bits and defines, not an enum. */
typedef guint64 SluiceShareActions;

#define SLUICE_SHARE_ACTION_FORGET_FOLDER_CHECK    (G_GUINT64_CONSTANT(1) << 0)  /* drop the pending check's answer */
#define SLUICE_SHARE_ACTION_CHECK_FOLDER           (G_GUINT64_CONSTANT(1) << 1)  /* the folder is still the one shared? */
#define SLUICE_SHARE_ACTION_SPAWN_WORKER           (G_GUINT64_CONSTANT(1) << 2)  /* launch sluice-fs on the checked folder */
#define SLUICE_SHARE_ACTION_STOP_STATS             (G_GUINT64_CONSTANT(1) << 3)  /* stop polling; Stats empty */
#define SLUICE_SHARE_ACTION_CLEAR_SOCKET_PATH      (G_GUINT64_CONSTANT(1) << 4)
#define SLUICE_SHARE_ACTION_CLEAR_HINT             (G_GUINT64_CONSTANT(1) << 5)  /* GuestHint "" */
#define SLUICE_SHARE_ACTION_CLEAR_ERROR            (G_GUINT64_CONSTANT(1) << 6)
#define SLUICE_SHARE_ACTION_FORGET_FAILURE         (G_GUINT64_CONSTANT(1) << 7)  /* a later failure is reported again */
#define SLUICE_SHARE_ACTION_SET_ERROR              (G_GUINT64_CONSTANT(1) << 8)  /* Error = the event's message */
#define SLUICE_SHARE_ACTION_REPORT_CRASH           (G_GUINT64_CONSTANT(1) << 9)  /* Event "crashed" */
#define SLUICE_SHARE_ACTION_REPORT_FAILURE         (G_GUINT64_CONSTANT(1) << 10)  /* Event "failed", once per message */
#define SLUICE_SHARE_ACTION_SET_SOCKET_PATH        (G_GUINT64_CONSTANT(1) << 11)
#define SLUICE_SHARE_ACTION_START_STATS            (G_GUINT64_CONSTANT(1) << 12)
#define SLUICE_SHARE_ACTION_REPORT_RESTARTED       (G_GUINT64_CONSTANT(1) << 13)  /* Event "recovered": worker restarted */
#define SLUICE_SHARE_ACTION_REVOKE_ACCESS          (G_GUINT64_CONSTANT(1) << 14)  /* the device left without Sluice:
                                                                                   * QEMU's access to the socket goes */
#define SLUICE_SHARE_ACTION_UNPLUG_QUIETLY         (G_GUINT64_CONSTANT(1) << 15)  /* unplug; nothing waits for it */
#define SLUICE_SHARE_ACTION_UNMOUNT_QUIETLY        (G_GUINT64_CONSTANT(1) << 16)  /* unmount in the guest, then unplug; nothing waits */
#define SLUICE_SHARE_ACTION_RELEASE_QUIETLY        (G_GUINT64_CONSTANT(1) << 17)  /* unplug, then the guest lets the dead mount go; nothing waits */
#define SLUICE_SHARE_ACTION_LET_GO_QUIETLY         (G_GUINT64_CONSTANT(1) << 18)  /* the device is out: the guest lets its mount go; nothing waits */
#define SLUICE_SHARE_ACTION_CLEAR_GUEST            (G_GUINT64_CONSTANT(1) << 19)  /* GuestPath, GuestState ""; the mount place forgotten */
#define SLUICE_SHARE_ACTION_UNPLUG_OLD_DEVICE      (G_GUINT64_CONSTANT(1) << 20)  /* unplug the crashed worker's device */
#define SLUICE_SHARE_ACTION_REPORT_OLD_DEVICE_HELD (G_GUINT64_CONSTANT(1) << 21)  /* Error + Event "failed": guest holds it */
#define SLUICE_SHARE_ACTION_PLUG                   (G_GUINT64_CONSTANT(1) << 22)  /* hot-plug the worker's socket */
#define SLUICE_SHARE_ACTION_UNPLUG                 (G_GUINT64_CONSTANT(1) << 23)  /* unplug; UNPLUG_DONE/FAILED follows */
#define SLUICE_SHARE_ACTION_UNMOUNT_IN_GUEST       (G_GUINT64_CONSTANT(1) << 24)  /* before an unplug; GUEST_UNMOUNTED/... follows */
#define SLUICE_SHARE_ACTION_SET_HINT               (G_GUINT64_CONSTANT(1) << 25)  /* GuestHint = what the plug returned */
#define SLUICE_SHARE_ACTION_MOUNT_IN_GUEST         (G_GUINT64_CONSTANT(1) << 26)  /* at the remembered place, else the setting's */
#define SLUICE_SHARE_ACTION_SET_GUEST_PATH         (G_GUINT64_CONSTANT(1) << 27)  /* GuestPath = the place, GuestState "mounted" */
#define SLUICE_SHARE_ACTION_REPORT_MOUNT_FAILED    (G_GUINT64_CONSTANT(1) << 28)  /* Error + GuestState "failed" */
#define SLUICE_SHARE_ACTION_REPORT_ATTACHED        (G_GUINT64_CONSTANT(1) << 29)  /* Event "attached" (where, when mounted) */
#define SLUICE_SHARE_ACTION_REPORT_RECOVERED       (G_GUINT64_CONSTANT(1) << 30)  /* Event "recovered": back in the VM */
#define SLUICE_SHARE_ACTION_REPORT_PLUG_FAILED     (G_GUINT64_CONSTANT(1) << 31)  /* Error: could not attach */
#define SLUICE_SHARE_ACTION_REPORT_REPLUG_FAILED   (G_GUINT64_CONSTANT(1) << 32)  /* Error + Event "failed" */
#define SLUICE_SHARE_ACTION_REPORT_DETACHED        (G_GUINT64_CONSTANT(1) << 33)  /* Event "detached", worded by the event */
#define SLUICE_SHARE_ACTION_STOP_WORKER            (G_GUINT64_CONSTANT(1) << 34)  /* STOPPED follows once it is reaped */
#define SLUICE_SHARE_ACTION_RELEASE_START_WAITERS  (G_GUINT64_CONSTANT(1) << 35)  /* the worker runs */
#define SLUICE_SHARE_ACTION_FAIL_START_WAITERS     (G_GUINT64_CONSTANT(1) << 36)  /* with the result's error */
#define SLUICE_SHARE_ACTION_COMPLETE_ATTACH_WAITERS (G_GUINT64_CONSTANT(1) << 37)  /* with the guest hint */
#define SLUICE_SHARE_ACTION_FAIL_ATTACH_WAITERS    (G_GUINT64_CONSTANT(1) << 38)
#define SLUICE_SHARE_ACTION_COMPLETE_DETACH_WAITERS (G_GUINT64_CONSTANT(1) << 39)
#define SLUICE_SHARE_ACTION_FAIL_DETACH_WAITERS    (G_GUINT64_CONSTANT(1) << 40)
#define SLUICE_SHARE_ACTION_COMPLETE_STOP_WAITERS  (G_GUINT64_CONSTANT(1) << 41)
#define SLUICE_SHARE_ACTION_FAIL_STOP_WAITERS      (G_GUINT64_CONSTANT(1) << 42)  /* the guest keeps it busy: still running */
#define SLUICE_SHARE_ACTION_REPORT_UNMOUNT_FAILED  (G_GUINT64_CONSTANT(1) << 43)  /* Error: unplugged without the guest's unmount */
#define SLUICE_SHARE_ACTION_NOTE_UNMOUNT_SKIPPED   (G_GUINT64_CONSTANT(1) << 44)  /* the unplug goes without the guest's
                                                                                   * unmount: its Event says why */
#define SLUICE_SHARE_ACTION_RELEASE_DEAD_MOUNT     (G_GUINT64_CONSTANT(1) << 45)  /* the guest lets the crashed worker's
                                                                                   * mount go; GUEST_RELEASED follows */
#define SLUICE_SHARE_ACTION_WRITE_BOOT_LINE        (G_GUINT64_CONSTANT(1) << 46)  /* the guest mounts it at boot (fstab) */
#define SLUICE_SHARE_ACTION_FORGET_BOOT_LINE       (G_GUINT64_CONSTANT(1) << 47)  /* ... no more: its line is removed */

#define SLUICE_SHARE_ACTION_REPORT_RESUMED         (G_GUINT64_CONSTANT(1) << 48)  /* Event "recovered": a worker took
                                                                                   * over the same device (Resume) */

#define SLUICE_SHARE_N_ACTIONS 49

/* What becomes of the caller of Start, Attach, Detach or Stop. */
typedef enum {
        SLUICE_SHARE_CALLER_NONE,         /* no caller (an event, not a call) */
        SLUICE_SHARE_CALLER_DONE,         /* succeeds now */
        SLUICE_SHARE_CALLER_REFUSED,      /* fails now with the result's error */
        SLUICE_SHARE_CALLER_WAIT_RUNNING, /* a start waiter: asks again once the worker runs */
        SLUICE_SHARE_CALLER_WAIT_PLUG,    /* an attach waiter: gets the guest hint or an error */
        SLUICE_SHARE_CALLER_JOIN_PLUG,    /* succeeds once the pending plug ends, however it ends */
        SLUICE_SHARE_CALLER_HINT,         /* succeeds now with the current guest hint */
        SLUICE_SHARE_CALLER_WAIT_UNPLUG,  /* a detach waiter */
        SLUICE_SHARE_CALLER_WAIT_STOP,    /* a stop waiter */
        SLUICE_SHARE_CALLER_STOP_ORPHANS, /* succeeds once any worker left for the share has ended */
} SluiceShareCaller;

/* The error a result carries for REFUSED and the FAIL_* actions. */
typedef enum {
        SLUICE_SHARE_RESULT_OK,
        SLUICE_SHARE_RESULT_STOPPING,     /* a call while the share stops: try again */
        SLUICE_SHARE_RESULT_STOPPED,      /* the share was stopped */
        SLUICE_SHARE_RESULT_EVENT_ERROR,  /* what the event reported (its GError or message) */
} SluiceShareResultError;

G_END_DECLS
