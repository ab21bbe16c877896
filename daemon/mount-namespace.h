/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mount-namespace.h — a root worker's view of the file system: the shared
 * folder and nothing else.
 *
 * A worker run by root (and not with --sandbox=none: the caller decides) moves into a mount
 * namespace of its own, makes every mount in it private (nothing propagates
 * back to the host), bind-mounts the shared folder with the mounts below it
 * and pivots into it, then detaches the old root: its "/" is the shared
 * folder and its mount table holds that mount and those below it
 * (virtiofsd's namespace sandbox), then seals itself (below).
 * Where that cannot be done (a kernel or container refusing unshare or
 * pivot_root, the folder renamed meanwhile) a warning says which step failed
 * and the worker carries on with the host's view, as before.  It is also left
 * out, with an info line, when $NOTIFY_SOCKET names a path (sd_notify connects
 * to it by name at every message) and in sanitizer builds (their run-time reads
 * /proc by path).
 *
 * An ordinary user's worker gets no namespace: it would need a user namespace,
 * which many systems refuse to unprivileged users, and inside one it would
 * hold capabilities over its own files; Landlock (sandbox.h) already keeps
 * its file access inside the shared folder, without privilege.  What Landlock
 * does not cover (metadata by path) it leaves to a helper process that does
 * enter such namespaces, without capabilities (metadata-helper.h).
 *
 * What keeps working is what was opened before: the shared folder's fd (the
 * guest's requests go through it, so the guest's view does not change; once
 * sealed, the same number names the new root), the socket's folder (unless
 * sealed: then a helper removes the socket), the session's /proc/self/fd, the
 * frontend's sockets and fds.  From here on no code may name a host path:
 * absolute paths resolve inside the shared folder.  Calls that must name one
 * of our own fds by path (path-based xattr calls on O_PATH fds, the readlink of
 * an eventfd) take it from mountns_fd_path(): "/proc/self/fd/N" without the
 * namespace, "N" relative to the working directory inside it, which is then a
 * /proc/self/fd opened before the old root went (a detached mount), or once
 * sealed a detached copy of that folder alone.
 *
 * Main thread only, before any other thread exists (the namespace, root and
 * working directory are shared by the threads created later) and before the
 * capabilities are dropped (it needs CAP_SYS_ADMIN) and the seccomp filter is
 * loaded (unshare, mount, pivot_root, umount2, fchdir are not on its list). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* root_fd: the O_PATH fd of the shared folder being served;
 * session_proc_fd (or -1): the session's /proc/self/fd.  Returns 1 when the
 * worker's root is now the shared folder, 0 when it kept the host's view
 * (logged), -errno (logged) when it pivoted but could not finish (detach the
 * old root, set its working directory): the caller exits.
 *
 * The shared folder is bound with the mounts below it (as they are now: later
 * mounts on the host do not show), and a folder fd opened before the pivot
 * still walks the host's tree with ".." (up to the top of its file system).
 * So once pivoted the worker is sealed: root_fd is replaced in place (same
 * number) by the new "/" (the same folder), session_proc_fd by a detached
 * copy of /proc/self/fd alone (open_tree, Linux 5.2), whose top a ".." walk
 * cannot pass, which is also the working directory.  The caller closes any
 * other folder fd it holds before the sandbox (main.c hands the socket's
 * folder to socket-remover.h).  Then no path the worker can name from its
 * root, its working directory or any fd it holds leads outside the shared
 * folder and its own fds: mountns_sealed().  It is not sealed (logged) where
 * no copy can be made, or where a pseudo file system (pseudo-fs.h) is
 * mounted below the shared folder, which the guest never enters but a path
 * could. */
int mountns_enter(int root_fd, int session_proc_fd);

/* Whether mountns_enter() pivoted and replaced the folder fds (above): the
 * sandbox may then allow metadata calls by path (sandbox.h).  Set once by
 * the main thread before any other thread exists. */
bool mountns_sealed(void);

/* The path naming our own fd `fd` through /proc, into buf (≥ 27 bytes): see
 * above.  Any thread, once mountns_enter() has returned. */
void mountns_fd_path(char *buf, size_t size, int fd);

/* Whether a pseudo file system (pseudo-fs.h) is mounted below the absolute
 * path `path` in our mount namespace; unreadable mountinfo counts as yes.
 * Also for the metadata helper (metadata-helper.h). */
bool mountns_pseudo_fs_below(const char *path);

/* The path of the folder (or file) behind `fd` in our namespace, through
 * /proc/self/fd, into buf: 0, -ENOENT when it has none there (deleted, or
 * not reachable from our root), -ENAMETOOLONG, -errno.  Before a pivot. */
int mountns_folder_path(int fd, char *buf, size_t size);

/* The steps a root worker and the metadata helper (metadata-helper.h) take
 * into a namespace of their own, already unshared: */
enum mountns_step {
        MOUNTNS_STEP_PRIVATE, MOUNTNS_STEP_BIND, MOUNTNS_STEP_ENTER, MOUNTNS_STEP_PIVOT,
        MOUNTNS_STEP_DETACH,
};
const char *mountns_step_name(enum mountns_step step);
/* Makes every mount private, bind-mounts the folder `path` (with the mounts
 * below it) and enters it, checking it is still `want` (-ESTALE if not). */
int mountns_bind_and_enter(const char *path, const struct stat *want, enum mountns_step *ret_step);
/* pivot_root into the working directory, detaching the old root: "/" is
 * the folder entered. */
int mountns_pivot_here(enum mountns_step *ret_step);

/* Whether this is an ASan or TSan build, whose run-time reads /proc by path. */
bool mountns_sanitizer_build(void);
