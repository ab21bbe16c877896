/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-linux.h — a share in a Linux guest, through its agent
 * (guest-agent.h): mount, unmount before an unplug, let go of a dead mount
 * after a worker crash, and the /etc/fstab line for "mount at every boot".
 *
 * The guest runs fixed argument vectors built here (/bin/mkdir -p DIR,
 * /bin/mount -t virtiofs TAG DIR, /bin/umount DIR, and for the fstab
 * readlink -f, cp -p, chmod, mv -f, rm -f …), never a shell line;
 * TAG is checked by share-tag.h and DIR by sluice_guest_linux_check_mount_point
 * before they get here.  What the guest answers (/proc/mounts, a command's
 * output) is only parsed and quoted, printable and bounded, in error
 * messages (sluice_guest_agent_printable, sluice_guest_agent_set_error).
 *
 * Its procedures are also the table sluice_guest_linux_ops (guest-ops.h),
 * through which vm-guest.c calls them.
 *
 * Blocking: call from a worker thread.  Errors: the agent's own failure in
 * SLUICE_GUEST_AGENT_ERROR with its code, its message saying what was
 * being done (guest-ops.h); else SLUICE_ERROR (errors.h): GUEST_AGENT with
 * what the guest said and what to do, BUSY when an unmount is refused
 * because something uses the share (naming what). */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>

G_BEGIN_DECLS

/* The mark on the /etc/fstab lines Sluice writes: "# sluice: TAG" after them. */
#define SLUICE_GUEST_FSTAB_MARK "# sluice"

/* A mount point from a person or the config: absolute, at most 255 bytes,
 * printable, no "." or ".." component, no trailing "/", not "/" nor a
 * system folder.  SLUICE_ERROR_INVALID_ARGUMENT saying what is wrong. */
gboolean sluice_guest_linux_check_mount_point(const char *path, GError **error);
/* "/mnt/TAG" */
char *sluice_guest_linux_default_mount_point(const char *tag);

/* mkdir -p, mount -t virtiofs TAG MOUNT_POINT, then confirmed from
 * /proc/mounts.  Already mounted there: success.  The device may take a
 * moment to appear after a hot-plug: retried for a few seconds. */
gboolean sluice_guest_linux_mount(virDomainPtr domain, const char *tag, const char *mount_point,
                                  GError **error);
/* umount MOUNT_POINT; not mounted: success; busy: SLUICE_ERROR_BUSY naming
 * the processes that use it (when the guest can tell). */
gboolean sluice_guest_linux_unmount(virDomainPtr domain, const char *tag, const char *mount_point,
                                    GError **error);
/* After the worker died and its old device was unplugged: detaches the
 * dead mount (umount -l) so that the share can be mounted there again.
 * Call it after the unplug, not before: virtio-fs has no fusectl entry to
 * abort with, and a request sent to the dead worker while the device is
 * still there (busybox's umount looks the path up) never ends. */
gboolean sluice_guest_linux_release(virDomainPtr domain, const char *tag, const char *mount_point,
                                    GError **error);
/* Keeps (PRESENT) or removes the marked /etc/fstab line for TAG.  Never
 * rewritten in place: the new file is written next to it (.fstab.sluice,
 * a copy first for its mode and owner), read back, then renamed over it; a
 * failure anywhere leaves /etc/fstab as it was and ERROR says so.  An
 * fstab larger than SLUICE_GUEST_AGENT_FILE_MAX is refused, not cut. */
gboolean sluice_guest_linux_set_fstab(virDomainPtr domain, const char *tag, const char *mount_point,
                                      gboolean present, GError **error);

/* Pure, for the above and the unit tests. */
/* Whether /proc/mounts text PROC_MOUNTS has a virtiofs mount of TAG at
 * MOUNT_POINT (octal escapes such as \040 understood). */
gboolean sluice_guest_linux_is_mounted(const char *proc_mounts, const char *tag, const char *mount_point);
/* FSTAB with TAG's marked line added/replaced (PRESENT) or removed; other
 * lines untouched, byte for byte.  A line is Sluice's only when it is
 * exactly what Sluice writes for TAG right after its mark; a mark without
 * it (its line deleted by hand) is dropped alone. */
char *sluice_guest_linux_fstab_edit(const char *fstab, const char *tag, const char *mount_point,
                                    gboolean present);

G_END_DECLS
