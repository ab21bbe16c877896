/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-ops.h — what Sluice does in a guest, as one table per guest OS:
 * guest-linux.c exports sluice_guest_linux_ops, guest-windows.c
 * sluice_guest_windows_ops.  vm-guest.c takes a VM's table once (guest-os.h
 * says which OS a VM or a place has) and calls through it, never asking
 * which it holds, as libvhost-user's VuDevIface and libfuse
 * passthrough_ll's lo_oper are called; a new guest OS is one new file with
 * one table.
 *
 * The procedures block on the guest agent: call them from a worker thread
 * (vm-guest.c's queue runs one at a time per VM).  TAG is checked by
 * share-tag.h, PLACE by check_place, before they are called.
 *
 * Errors: an agent that failed as such (not there, too slow, its policy)
 * stays in SLUICE_GUEST_AGENT_ERROR (guest-agent.h) with its code, its
 * message saying what was being done, so that the caller can tell an agent
 * that went away and words it once (sluice_guest_agent_error_sentence);
 * else SLUICE_ERROR: GUEST_AGENT with what the guest said and what to do,
 * BUSY when what is mounted is in use, INVALID_ARGUMENT for a place. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>

G_BEGIN_DECLS

typedef struct {
        /* "linux", "windows": for log lines */
        const char *name;

        /* Whether PLACE is one this OS takes (a mount point, a drive); ""
         * is: the default.  INVALID_ARGUMENT saying what is wrong. */
        gboolean (*check_place)(const char *place, GError **error);
        /* The place of TAG when none was chosen: "/mnt/TAG"; "" where the
         * guest chooses itself (Windows: the first free letter from Z: down). */
        char *(*default_place)(const char *tag);
        /* Share.GuestHint: what to do in the guest to use TAG by hand. */
        char *(*hint)(const char *tag);

        /* Mounts TAG at PLACE (checked; "" the guest's choice); OTHERS: how
         * many other shares Sluice has mounted in this guest now;
         * CASE_INSENSITIVE: the share is served so (Share.ServedCase), for
         * a guest that must know (Windows).  Already mounted: success.
         * Returns where it is, as the guest calls it (Windows: another
         * letter where PLACE's was taken). */
        char *(*mount)(virDomainPtr domain, const char *tag, const char *place, guint others,
                       gboolean case_insensitive, GError **error);
        /* Unmounts TAG at PLACE before an unplug; not mounted: success; in
         * use: BUSY naming what uses it (find_users), nothing changed. */
        gboolean (*unmount)(virDomainPtr domain, const char *tag, const char *place, GError **error);
        /* After the worker died and its device was unplugged: lets go of the
         * dead mount so that TAG can be mounted at PLACE again. */
        gboolean (*release)(virDomainPtr domain, const char *tag, const char *place, GError **error);
        /* What keeps PLACE busy, as "sleep (pid 123), bash (pid 99)", MORE
         * set to how many more there are; NULL when the guest cannot tell.
         * NULL where the OS has no way to ask. */
        char *(*find_users)(virDomainPtr domain, const char *place, guint *more);
        /* Keeps (PRESENT) or forgets what mounts TAG at PLACE at every boot
         * (Linux: its /etc/fstab line).  NULL where nothing of a share is
         * kept across boots. */
        gboolean (*set_at_boot)(virDomainPtr domain, const char *tag, const char *place, gboolean present,
                                GError **error);
} SluiceGuestOps;

extern const SluiceGuestOps sluice_guest_linux_ops;
extern const SluiceGuestOps sluice_guest_windows_ops;

G_END_DECLS
