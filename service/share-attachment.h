/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-attachment.h — the share's device in its VM, as a state machine of
 * its own.  Pure: a table of (state x event) -> next state, actions
 * (share-actions.h) and what becomes of a caller; no GObject, libvirt or
 * worker.  The share's lifecycle (share-lifecycle.h) feeds it, translating
 * what happened into these events according to whether the worker serves.
 *
 *                 PLUG                  PLUG_DONE                 UNPLUG
 *   UNPLUGGED -------------> PLUGGING -------------> PLUGGED -------------> UNPLUGGING
 *       ^     <-------------    |                     ^   |   <-------------     |
 *       |      PLUG_FAILED,     | PLUG_DONE_          |   |   UNPLUG_FAILED      |
 *       |      PLUG_DONE_       | WORKER_LOST         |   | WORKER_LOST          |
 *       |      UNWANTED         v                     |   v                      |
 *       |                     STALE <-----------------)---+                      |
 *       |                       | WORKER_READY,       |                          |
 *       |                       | WORKER_RESTARTED    | PLUG_DONE                |
 *       |                       v                     | (Event "recovered")      |
 *       |                  RECOVERING -------------> REPLUGGING                  |
 *       |                   |  ^   UNPLUG_DONE          ^                        |
 *       |     UNPLUG_FAILED |  | UNPLUG_FAILED,         | DEVICE_REMOVED         |
 *       |    (tries used up)|  | tries left: ask again  |                        |
 *       |                   v  +                        |                        |
 *       |            AWAITING_OLD_DEVICE ---------------+                        |
 *       |                                                                        |
 *       +------------------------------ UNPLUG_DONE ------------------------------+
 *
 *   Also, from the states with a device in the VM: VM_STOPPED, DEVICE_REMOVED
 *   (from PLUGGED: Event "detached"), VM_UNASSIGNED and WORKER_GONE lead to
 *   UNPLUGGED, a device of ours left behind being unplugged quietly; a plug
 *   that fails while replugging (REPLUGGING --PLUG_FAILED--> UNPLUGGED) says
 *   so in Error and Event "failed".
 *
 *   DEVICE_REMOVED is every removal the VM reports, Sluice's own unplugs
 *   too: where an unplug of ours is under way (UNPLUGGING,
 *   UNPLUGGING_MOUNTED, RECOVERING) or done (UNPLUGGED) it changes nothing
 *   (UNPLUG_DONE decides); elsewhere someone else took the device out, and
 *   QEMU's access to the socket is revoked (REVOKE_ACCESS).
 *
 * Why RECOVERING: QEMU cannot reconnect a vhost-user-fs device to a new
 * backend, so a restarted worker needs a fresh device: the old one is
 * unplugged first.  A busy or booting guest can miss an unplug request, so
 * it is asked again, then Sluice waits for the guest (AWAITING_OLD_DEVICE).
 *
 * WORKER_RESUMED changes nothing, in any state: a worker that resumed
 * (worker.h: the fd store) serves the very device, rings and node ids of
 * the one that died, so what was under way (a plug, an unplug, a mount in
 * the guest) goes on and its completion arrives as it would have.  Only a
 * crash that could not be resumed is WORKER_LOST (the lifecycle does not
 * forward a crash it expects to be resumed), and takes the path above.
 *
 * Requests with a caller (PLUG for Attach, UNPLUG for Detach, SETTLE for a
 * Start that should wait for a pending plug) say what becomes of it
 * (SluiceShareCaller).  Completions (PLUG_DONE, UNPLUG_DONE, ...) that
 * arrive in a state that no longer waits for them change nothing.
 *
 * In the guest (share-attachment.c has the rows).  When Sluice handles the
 * guest (GUEST_MANAGED: AutoMount on and the VM's agent ready, a fact the
 * driver passes in at each step, like the lifecycle's vm_running), a plug
 * is followed by a mount in the guest, and an unplug preceded by an unmount:
 *
 *               PLUG_DONE (managed)        GUEST_MOUNTED              UNPLUG
 *   PLUGGING -----------------------> MOUNTING ------------> MOUNTED ---------> UNMOUNTING
 *                                      |  ^                   ^   |                 |
 *                   GUEST_MOUNT_FAILED |  | GUEST_READY       |   | WORKER_LOST     | GUEST_UNMOUNTED,
 *                   (Error; GuestHint) v  | (managed)         |   v                 | GUEST_UNMOUNT_FAILED
 *                                    PLUGGED    GUEST_UNMOUNT_BUSY STALE_MOUNTED    v (logged)
 *                                               (Detach, Stop fail)  |           UNPLUGGING
 *                                                                    | WORKER_READY,
 *                                                                    v WORKER_RESTARTED
 *   REPLUGGING --PLUG_DONE (managed)--> REMOUNTING              RECOVERING ...
 *       ^          RELEASE_DEAD_MOUNT     |  ^  GUEST_RELEASED:   | (the old device
 *       |                                 |  |  MOUNT_IN_GUEST    |  is unplugged first)
 *       |                                 +--+  at the same place |
 *       |                                 (Event "recovered"      |
 *       |                                  once mounted)          |
 *       +-------------------------------- UNPLUG_DONE ------------+
 *
 *   GUEST_READY while MOUNTED (managed: the agent came back after a reboot
 *   or its own restart) goes to MOUNTING and mounts again at the same
 *   place: a rebooted guest lost its mounts (Linux without an fstab line,
 *   Windows' WinFsp launcher instances); one still mounted is found there
 *   and the mount succeeds at once.
 *
 *   MountAtBoot switched on while MOUNTED writes the guest's boot line at
 *   once (MOUNT_AT_BOOT_ON: WRITE_BOOT_LINE); otherwise the next mount
 *   does.  Switching it off, and removing the share, forget the line
 *   whatever the device does (the lifecycle's rows: FORGET_BOOT_LINE).
 *
 *   Without GUEST_MANAGED everything is as above the mount states.  A Detach
 *   while the mount is under way (MOUNTING, REMOUNTING) waits in UNMOUNTING
 *   for the mount to end, then unmounts.  VM_STOPPED and DEVICE_REMOVED
 *   lead from every mount state to UNPLUGGED; VM_UNASSIGNED unmounts quietly
 *   in the old VM, then unplugs there.  A Detach while a crash's dead mount
 *   is let go (REMOUNTING, before GUEST_RELEASED) unplugs once it is gone.  An unmount the guest refuses because
 *   the share is in use (GUEST_UNMOUNT_BUSY) changes nothing but failing the
 *   Detach or Stop; any other failed unmount is logged and the unplug goes on.
 *
 * Why the dead mount is let go only after the unplug: while the crashed
 * worker's device is in the guest, anything that touches the mount (even
 * a lazy umount's path lookup) sends it a request nobody answers; that
 * request hangs, and Linux 6.1's virtio-fs then holds the device and every
 * later virtiofs mount until the VM resets.  Once the device is out, the
 * mount answers ENOTCONN at once: REMOUNTING detaches it (umount -l) before
 * mounting the new device at the same place.  (virtio-fs connections have
 * no fusectl abort file.)  The quiet exits of a crashed worker's mount
 * (RELEASE_QUIETLY) likewise unplug first, then let the mount go. */
#pragma once

#include <glib.h>

#include "share-actions.h"

G_BEGIN_DECLS

typedef enum {
        SLUICE_SHARE_ATTACHMENT_UNPLUGGED,          /* nothing of the share in its VM */
        SLUICE_SHARE_ATTACHMENT_PLUGGING,           /* a hot-plug is under way */
        SLUICE_SHARE_ATTACHMENT_PLUGGED,            /* in the VM, served by the running worker */
        SLUICE_SHARE_ATTACHMENT_UNPLUGGING,         /* a Detach (or Stop) is taking it out */
        SLUICE_SHARE_ATTACHMENT_STALE,              /* in the VM, but its worker died: restart pending */
        SLUICE_SHARE_ATTACHMENT_RECOVERING,         /* unplugging the dead worker's device */
        SLUICE_SHARE_ATTACHMENT_AWAITING_OLD_DEVICE, /* the guest still holds it: plug once it is gone */
        SLUICE_SHARE_ATTACHMENT_REPLUGGING,         /* plugging the restarted worker in */
        SLUICE_SHARE_ATTACHMENT_MOUNTING,           /* plugged; being mounted in the guest */
        SLUICE_SHARE_ATTACHMENT_MOUNTED,            /* plugged and mounted in the guest */
        SLUICE_SHARE_ATTACHMENT_UNMOUNTING,         /* a Detach (or Stop): unmounting before the unplug */
        SLUICE_SHARE_ATTACHMENT_REMOUNTING,         /* plugged again after a crash; mounting at the same place */
        SLUICE_SHARE_ATTACHMENT_STALE_MOUNTED,      /* STALE, with the guest still holding the mount */
        SLUICE_SHARE_ATTACHMENT_UNPLUGGING_MOUNTED, /* taken out without the guest's unmount (forced, or
                                                     * the guest did not answer): its mount is let go after */
        SLUICE_SHARE_ATTACHMENT_N_STATES,
} SluiceShareAttachmentState;

typedef enum {
        /* requests */
        SLUICE_SHARE_ATTACHMENT_PLUG,               /* Attach, or the VM runs while the worker does */
        SLUICE_SHARE_ATTACHMENT_UNPLUG,             /* Detach, or Stop */
        SLUICE_SHARE_ATTACHMENT_UNPLUG_FORCED,      /* the same with force: the guest is not asked */
        SLUICE_SHARE_ATTACHMENT_SETTLE,             /* a Start: wait for a plug under way */
        /* results of what the actions asked for */
        SLUICE_SHARE_ATTACHMENT_PLUG_DONE,          /* ... and the worker serves */
        SLUICE_SHARE_ATTACHMENT_PLUG_DONE_WORKER_LOST, /* ... but the worker crashed meanwhile */
        SLUICE_SHARE_ATTACHMENT_PLUG_DONE_UNWANTED, /* ... but the share stopped or failed meanwhile */
        SLUICE_SHARE_ATTACHMENT_PLUG_FAILED,
        SLUICE_SHARE_ATTACHMENT_PLUG_CANCELLED,     /* the service is going away: not an error to show */
        SLUICE_SHARE_ATTACHMENT_UNPLUG_DONE,
        SLUICE_SHARE_ATTACHMENT_UNPLUG_FAILED,
        /* the VM */
        SLUICE_SHARE_ATTACHMENT_DEVICE_REMOVED,     /* the share's device left the VM */
        SLUICE_SHARE_ATTACHMENT_VM_STOPPED,
        SLUICE_SHARE_ATTACHMENT_VM_UNASSIGNED,      /* the share moves to another VM */
        /* the worker */
        SLUICE_SHARE_ATTACHMENT_WORKER_LOST,        /* crashed; a restart is coming */
        SLUICE_SHARE_ATTACHMENT_WORKER_READY,       /* ready after a launch */
        SLUICE_SHARE_ATTACHMENT_WORKER_RESTARTED,   /* ready after a crash */
        SLUICE_SHARE_ATTACHMENT_WORKER_GONE,        /* failed for good, or stopped */
        SLUICE_SHARE_ATTACHMENT_WORKER_RESUMED,     /* a new worker serves the same device */
        /* the guest (its agent) */
        SLUICE_SHARE_ATTACHMENT_GUEST_READY,        /* the agent came up, or AutoMount was switched on */
        SLUICE_SHARE_ATTACHMENT_GUEST_MOUNTED,
        SLUICE_SHARE_ATTACHMENT_GUEST_MOUNT_FAILED,
        SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNTED,
        SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNT_BUSY,  /* in use in the guest: nothing changed */
        SLUICE_SHARE_ATTACHMENT_GUEST_UNMOUNT_FAILED, /* anything else (no agent, no answer in time,
                                                       * an answer that makes no sense) */
        SLUICE_SHARE_ATTACHMENT_GUEST_RELEASED,     /* RELEASE_DEAD_MOUNT ended (a failure is only logged) */
        /* the share's settings */
        SLUICE_SHARE_ATTACHMENT_MOUNT_AT_BOOT_ON,   /* MountAtBoot switched on */
        SLUICE_SHARE_ATTACHMENT_N_EVENTS,
} SluiceShareAttachmentEvent;

/* Unplug requests for a crashed worker's device before waiting for the
 * guest (each request waits up to 10 s in the VM manager). */
#define SLUICE_SHARE_RECOVERY_UNPLUG_TRIES 3

typedef struct {
        SluiceShareAttachmentState state;
        guint recovery_tries;  /* unplug requests made for the old device */
} SluiceShareAttachment;

typedef struct {
        SluiceShareAttachmentState next;
        SluiceShareActions actions;
        SluiceShareCaller caller;
} SluiceShareAttachmentResult;

void sluice_share_attachment_init(SluiceShareAttachment *self);
/* Moves SELF by EVENT and says what to do.  GUEST_MANAGED: whether Sluice
 * mounts the share in the guest now (AutoMount on, the VM's agent ready). */
SluiceShareAttachmentResult sluice_share_attachment_step(SluiceShareAttachment *self,
                                                         SluiceShareAttachmentEvent event,
                                                         gboolean guest_managed);
/* Whether the VM holds a device of the share's running worker (State
 * "attached"), mounted in the guest or not. */
gboolean sluice_share_attachment_in_vm(SluiceShareAttachmentState state);

const char *sluice_share_attachment_state_name(SluiceShareAttachmentState state);
const char *sluice_share_attachment_event_name(SluiceShareAttachmentEvent event);

G_END_DECLS
