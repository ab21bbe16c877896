/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-policy.h — what the guest may make on the host, in every mode.
 *
 * A worker run by root (libvirt's <binary> route) serves guest root's
 * requests as host root, and a desktop user's worker lands guest-set bits on
 * the desktop user's files, where other local users may run them.  So,
 * whatever the credentials (credentials.h):
 *  - block and character devices are refused with EPERM unless
 *    --allow-devices (FIFOs and sockets are harmless and allowed);
 *  - S_ISUID and S_ISGID are stripped from the modes of CREATE, MKNOD, MKDIR,
 *    TMPFILE and SETATTR unless --allow-setuid; S_ISGID on a directory is kept:
 *    it only makes new entries inherit the directory's group (what set-group-ID
 *    directories are for) and grants nothing to anyone running anything;
 *  - SETXATTR/REMOVEXATTR outside user.* are refused unless the namespace is
 *    listed in --xattr-namespaces: trusted.* and security.* (file capabilities
 *    among them) with EPERM, system.* (POSIX ACLs, which this daemon does not
 *    negotiate) with EOPNOTSUPP;
 *  - on a read-only share no lock that could block a host writer is taken:
 *    POSIX write locks and exclusive flock()s fail with EBADF, as on a file
 *    opened read-only (what NFS answers for flock(LOCK_EX) there too); shared
 *    locks still work.
 *  - a LOOKUP that crosses into a mount of a pseudo file system (proc, sysfs,
 *    debugfs, cgroup, … mounted somewhere below the shared folder) is refused
 *    with EACCES: their files are the kernel's live state (a root worker
 *    would hand the guest the host's processes and settings), not data;
 *    READDIRPLUS lists such a name without attributes;
 * Each refusal (and each stripped bit) is logged at warning level, at most
 * LOG_RATELIMIT_BURST lines a minute per kind, so a guest cannot flood the log. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct fs_options;

struct policy {
        bool allow_devices;
        bool allow_setuid;
        unsigned xattr_namespaces;    /* FS_XATTR_NS_* */
};

void policy_init(struct policy *p, const struct fs_options *opts);

/* MKNOD of `mode` (type bits included) named `name` by guest uid `uid`:
 * 0 or -EPERM. */
int policy_check_mknod(const struct policy *p, mode_t mode, const char *name, uint32_t uid);

/* The permission bits (07777) a node of `type` (S_IFMT bits) gets when the
 * guest asks for `mode`; logs when it drops a bit. */
mode_t policy_mode(const struct policy *p, mode_t type, mode_t mode, const char *what, uint32_t uid);

/* A lookup of `name` landed on `fd` (O_PATH), a mount point (its st_dev is
 * not its directory's): 0, or -EACCES when a pseudo file system is mounted
 * there.  One fstatfs(). */
int policy_check_mount(int fd, const char *name);

/* SETXATTR or REMOVEXATTR of `name`: 0, -EPERM or -EOPNOTSUPP. */
int policy_check_xattr_write(const struct policy *p, const char *name, uint32_t uid);

/* A lock request of `lock_type` (F_RDLCK/F_WRLCK/F_UNLCK; flock's LOCK_EX is
 * F_WRLCK) on a share that is `readonly`: 0 or -EBADF. */
int policy_check_lock(bool readonly, int lock_type, bool is_flock, uint32_t pid);
