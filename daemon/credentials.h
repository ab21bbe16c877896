/* SPDX-License-Identifier: GPL-2.0-or-later */
/* credentials.h — a guest request's credentials on the calling thread.
 *
 * How permissions between guest users work (the design; README and
 * sluice-fs(1) say the same for users):
 *
 * The guest's virtiofs driver mounts with default_permissions: the guest
 * kernel checks every access against the mode bits and owners this daemon
 * reports, with the caller's full credentials (supplementary groups too).
 * FUSE sends the daemon only the caller's uid, gid and pid, so the daemon
 * never has the whole picture and does not pretend to.
 *
 * Worker run by root (libvirt's <binary> route, qemu:///system): as
 * virtiofsd, a request that makes a node (CREATE, MKNOD, MKDIR, SYMLINK,
 * TMPFILE) runs with the requester's fsuid/fsgid (after --translate-uid/gid)
 * and no supplementary groups on the serving thread, so the host kernel
 * gives new files their real owner, applies set-group-ID directories and
 * checks the parent directory as that user.  setfsuid/setfsgid and the raw
 * setgroups system call are per thread (glibc's setgroups() would change
 * every thread), and a non-zero fsuid drops the file-system capabilities
 * (CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_MKNOD, ...) of that thread only.  Every
 * other request runs as root, after the guest kernel's check; on top the
 * daemon re-checks what it can decide without supplementary groups
 * (daemon-side checks in perm.h: another user's 0600 file, sticky
 * directories, owner-only attribute changes).  A guest that offers
 * FUSE_CREATE_SUPP_GROUP (Linux ≥ 6.7) sends, with a create in a directory
 * whose group is one of the creator's supplementary groups, that group: it
 * joins the thread's groups for the request.  On older guests a user who may
 * write a directory only through a supplementary group cannot create in it —
 * the same as with virtiofsd.
 *
 * Worker run by the desktop user (the default): every file belongs to that
 * user on the host, and that is what the guest is shown (mapped to a guest
 * user with --translate-uid/gid).  Guest users are kept apart by the guest
 * kernel checking those attributes, and by the same daemon-side re-checks:
 * the share behaves like a single-owner file system (vfat with uid=): the
 * mapped guest user owns everything, other guest users get the "other" (or
 * group) permissions on every file, including files they created.  So guest
 * user B cannot read or change a 0600 file that guest user A made.
 *
 * Neither mode lets guest root become host root: see guest-policy.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Decides the mode once, at start-up, before any thread exists: running as
 * root (euid 0) means serving with the requesters' credentials; then the
 * process's supplementary groups are dropped (so a switched thread holds none
 * of root's).  Returns 1 in root mode, 0 otherwise, -errno on failure. */
int creds_init(void);
bool creds_root_mode(void);

/* The credentials a thread had before creds_enter() (restored by creds_leave()). */
struct creds_scope {
        bool active;
        bool groups_set;
        uid_t saved_fsuid;
        gid_t saved_fsgid;
};

/* In root mode: switches the calling thread's fsuid/fsgid to uid/gid (host
 * ids) and its supplementary groups to `groups` (n_groups ≤ 1 in practice:
 * FUSE_CREATE_SUPP_GROUP's one group).  Outside root mode it does nothing and
 * returns 0 with an inactive scope.  -EPERM for the "no id" value (uid_t)-1
 * or when the kernel did not take the ids (the thread is back as it was). */
int creds_enter(uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups, struct creds_scope *ret);
/* Back to the daemon's own credentials; an inactive scope does nothing. */
void creds_leave(struct creds_scope *scope);

#define _cleanup_creds_ __attribute__((cleanup(creds_leave))) struct creds_scope
