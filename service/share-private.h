/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-private.h — what the files of one share have in common: share.c
 * (the driver: callbacks in, the machine's step), share-execute.c,
 * share-guest.c and share-boot-line.c (the machine's actions out), share-notice.c (Error and
 * Event) and share-settings.c.  Not for any other file.
 *
 * The calls run one way: the driver calls the actions and the notices; the
 * actions reach the driver only through SluiceShareDriver, which it hands
 * them, never by name (so no two of these files call each other). */
#pragma once

#include "share-lifecycle.h"
#include "share-stats.h"
#include "share.h"
#include "worker.h"

G_BEGIN_DECLS

/* How long a Detach or Stop waits for the guest's unmount, from the moment
 * it asks (its call may wait in the VM's queue behind another): then the
 * device is unplugged anyway.  A little more than the guest operation's own
 * deadline (guest-agent.h), which normally answers first. */
#define SLUICE_SHARE_UNMOUNT_DEADLINE_S 12

typedef struct _SluiceShareHappening Happening;

/* What the actions need of the driver: feeding what they hear back to the
 * machine, and the worker object (made once, its signals in the driver). */
typedef struct {
        void (*step)(SluiceSharedFolder *self, const Happening *what);
        void (*ensure_worker)(SluiceSharedFolder *self);
} SluiceShareDriver;

/* A call waiting for the machine: what it called decides what it gets. */
typedef struct {
        GTask *task;
        SluiceShareEvent call;  /* START, ATTACH, DETACH or STOP */
        gboolean joined;        /* a Start that waits for a plug: succeeds however it ends */
} Waiter;

struct _SluiceSharedFolder {
        GObject parent_instance;

        const SluiceShareDriver *driver;
        SluiceShareConfig *config;
        char *object_path;
        char *socket_path;
        SluiceObjectSkeleton *object;
        SluiceShare *iface;
        SluiceVmManager *vms;
        SluiceWorker *worker;
        SluiceShareLifecycle machine;
        GList *start_waiters;   /* Waiter: until the worker runs */
        GList *attach_waiters;  /* Waiter: until the plug ends */
        GList *detach_waiters;
        GList *stop_waiters;
        GCancellable *folder_check;  /* the pending check before a start */
        SluiceShareStats *stats;
        char *error;            /* what last went wrong, NULL when fine */
        gboolean waiting_for_vm; /* libvirt is asked and does not know config->vm */
        char *last_failure;     /* reported once: a repeat (a missing sluice-fs) is not logged again */
        char *guest_place;      /* where Sluice mounted it in the guest (checked), NULL when nowhere;
                                 * kept across a crash to mount again at the same place */
        guint unmount_deadline; /* the source that ends the wait for the guest's unmount */
        char *unmount_skipped;  /* why the device goes out without the guest's unmount, for its Event */
        char *deferred_crash;   /* a crash not fed yet: a resume is expected (its message) */
};

/* What happened, as the machine's event and what came with it. */
struct _SluiceShareHappening {
        SluiceShareEvent event;
        GTask *caller;                 /* the call's task (taken), for START ... STOP */
        const GError *error;           /* FOLDER_FAILED, PLUG_FAILED, UNPLUG_FAILED, GUEST_*_FAILED, _BUSY */
        const char *message;           /* WORKER_CRASHED, WORKER_FAILED: for Error and Event */
        const char *hint;              /* PLUG_DONE */
        const SluiceFolderId *folder;  /* FOLDER_OK */
        const char *vm;                /* VM_STOPPED, DEVICE_REMOVED: the VM's name */
        const char *place;             /* GUEST_MOUNTED: where, checked ("/mnt/docs", "Z:") */
};

/* share.c: feeds WHAT to the machine and executes what it says. */
void sluice_shared_folder_step(SluiceSharedFolder *self, const Happening *what);

/* share-execute.c: carries out R, the machine's answer to WHAT. */
void sluice_shared_folder_execute(SluiceSharedFolder *self, const SluiceShareLifecycleResult *r,
                                  const Happening *what);

/* share-guest.c: the guest actions.  set_guest: GuestPath (PLACE, kept
 * as the place to mount again after a crash; NULL: forgotten) and
 * GuestState.  mount_in_guest: at the remembered place, else the
 * setting's; GUEST_MOUNTED or GUEST_MOUNT_FAILED follows.
 * unmount_in_guest: PLACE (NULL: the remembered one); GUEST_UNMOUNTED,
 * _BUSY or _FAILED follows, within SLUICE_SHARE_UNMOUNT_DEADLINE_S.
 * release_dead_mount: GUEST_RELEASED follows; FALSE when nothing was
 * mounted (nothing asked, nothing follows).  leave_guest_quietly: unmount
 * then unplug (RELEASE: the worker is dead, unplug then let go);
 * let_go_quietly: the device is out, its mount goes; nothing follows
 * either. */
void sluice_shared_folder_set_guest(SluiceSharedFolder *self, const char *place, SluiceWireGuestState state);
/* Where the next mount asks to be (NULL: the OS's default): after a crash
 * or a reboot where it was, but a Windows drive at the share's own letter
 * (MountPoint, else the one Windows first gave, config's guest_letter),
 * not the one it fell back to when that was taken. */
const char *sluice_shared_folder_wanted_place(SluiceSharedFolder *self);
void sluice_shared_folder_mount_in_guest(SluiceSharedFolder *self);
void sluice_shared_folder_unmount_in_guest(SluiceSharedFolder *self, const char *place);
gboolean sluice_shared_folder_release_dead_mount(SluiceSharedFolder *self);
void sluice_shared_folder_leave_guest_quietly(SluiceSharedFolder *self, gboolean release);
void sluice_shared_folder_let_go_quietly(SluiceSharedFolder *self);

/* share-boot-line.c: the guest's line that mounts the share at boot
 * (WRITE_BOOT_LINE, FORGET_BOOT_LINE).  Nothing waits for either; a
 * failure is told in Error.  FORGET_AFTER_REMOVAL: the share is gone (the
 * log says what is left to do by hand). */
void sluice_shared_folder_write_boot_line(SluiceSharedFolder *self);
void sluice_shared_folder_forget_boot_line(SluiceSharedFolder *self, gboolean after_removal);

/* share-notice.c: Error (set_error: what went wrong, NULL when fine;
 * publish_error: shown again, the VM's and the guest's notices with it)
 * and Event. */
void sluice_shared_folder_set_error(SluiceSharedFolder *self, const char *message);
void sluice_shared_folder_publish_error(SluiceSharedFolder *self);
void sluice_shared_folder_emit_event(SluiceSharedFolder *self, SluiceWireEvent event, const char *message);
/* The Event of a worker that took over its predecessor's device (Resume):
 * after a crash, how long the guest waited and what became of the requests
 * in flight; after a restart's hand-over, that nothing was interrupted. */
char *sluice_shared_folder_resumed_sentence(SluiceSharedFolder *self);
/* The requests in flight at that crash that were answered EIO. */
guint32 sluice_shared_folder_resume_failed(SluiceSharedFolder *self);

G_END_DECLS
