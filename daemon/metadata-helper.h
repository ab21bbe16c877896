/* SPDX-License-Identifier: GPL-2.0-or-later */
/* metadata-helper.h — the times and owner of symlinks, and the mode, owner
 * and times of sockets and device nodes, for a desktop user's worker under
 * the sandbox.
 *
 * Under the sandbox the worker changes metadata only through an fd it opened
 * inside the shared folder (pt-entry.c): the path-based calls (fchownat,
 * utimensat, fchmodat) stay refused by its seccomp filter, because Landlock
 * does not cover them and a planted call could aim them, by path or at an
 * O_PATH fd, at any host file of the user.  A symlink, a socket or a device
 * node has no such fd.  A root worker is sealed in a mount namespace holding
 * only the shared folder (mount-namespace.h) and may call by path; a desktop
 * user's worker cannot build one without a user namespace, in which it would
 * hold capabilities over its own process.
 *
 * So the worker forks this helper at start, before the sandbox and before
 * any thread exists.  The helper keeps one end of a socketpair and an O_PATH
 * fd of the shared folder and closes every other fd; it enters a user
 * namespace of its own (mapping only its own uid and gid) and a mount
 * namespace, makes every mount private, bind-mounts the shared folder (with
 * the mounts below it), pivots into it, detaches the old root and closes the
 * folder's fd from before (its ".." would lead back to the host's tree).
 * Then it drops every capability, sets no_new_privs and loads its own
 * seccomp allow-list: read and write on the socketpair, fchownat, utimensat,
 * fchmodat, exit.  Its root and working directory are the shared folder and
 * no fd it holds leads elsewhere, so every path it resolves — ".." and
 * absolute symlinks included — stays inside.  It is not started where a
 * pseudo file system (pseudo-fs.h: /proc's magic links lead anywhere) is
 * mounted below the shared folder, nor in sanitizer builds (their run-time
 * reads /proc by path), nor where the kernel, AppArmor or a container refuses
 * unprivileged user namespaces: one info line says so and the changes above
 * stay unsupported (EOPNOTSUPP), as before.
 *
 * The worker names the object by its path relative to the shared folder
 * (mdhelper_rel_path()), the helper refuses "", absolute paths and ".."
 * components (harmless there, refused for clarity) and never follows a
 * symlink in the last component.  A rename on the host between the worker's
 * look-up and the helper's call can only make the call hit another object
 * inside the shared folder, as any path-based passthrough may.  The
 * permission checks stay in the worker (pt-entry.c); the helper, unprivileged,
 * can change only what the user could.  In the user namespace only the user's
 * own uid and gid are mapped: a chown or chgrp to any other id answers EPERM
 * (a desktop user's worker could not give a file away anyway).
 *
 * mdhelper_start(): main thread, before any other thread exists (fork,
 * unshare).  mdhelper_change(): any thread; one request at a time (a mutex),
 * the reply awaited for a few seconds at most: a helper that does not answer
 * or is gone is dropped (logged once) and the calls answer EOPNOTSUPP. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define MDHELPER_CHMOD 1u
#define MDHELPER_CHOWN 2u
#define MDHELPER_TIMES 4u

/* Forks the helper for the shared folder `root_fd` (O_PATH) and waits for it
 * to report itself ready.  Returns 0, or -errno when it could not be set up
 * (logged as info: the worker carries on without it). */
int mdhelper_start(int root_fd);

/* Whether a helper is running (mdhelper_start() succeeded, not dropped since). */
bool mdhelper_running(void);

/* Asks the helper to make the changes `ops` (MDHELPER_*) to the object at
 * `rel_path` inside the shared folder: the mode (not for symlinks), the owner
 * (-1 leaves one unchanged), the times as utimensat() takes them (UTIME_NOW,
 * UTIME_OMIT).  0 or -errno; -EOPNOTSUPP without a helper. */
int mdhelper_change(const char *rel_path, unsigned ops, mode_t mode, uid_t uid, gid_t gid,
                    const struct timespec ts[2]);

/* The path of the object behind the O_PATH fd `fd` relative to the shared
 * folder `root_fd`, through /proc/self/fd (`proc_fd`), into buf; checked to
 * name that same object (so not a deleted one) from root_fd.  -EXDEV when it
 * is not below the shared folder, -ENOENT when the name is gone or names
 * another object, -ENAMETOOLONG. */
int mdhelper_rel_path(int proc_fd, int root_fd, int fd, char *buf, size_t size);

/* Whether the helper accepts `path` as a request's: not "", not absolute, no
 * ".." component.  For its tests. */
bool mdhelper_path_acceptable(const char *path);

/* -Dtest_hooks=true builds only.  Sends `path` to the helper as it is,
 * without mdhelper_path_acceptable(): for tests that check what the helper
 * itself refuses or cannot reach. */
int mdhelper_change_unchecked(const char *path, unsigned ops, mode_t mode, uid_t uid, gid_t gid,
                              const struct timespec ts[2]);

/* Stops the helper (end of file on its socket), waits a moment for its
 * exit and forgets it: at the worker's exit, and in tests.  Main thread. */
void mdhelper_stop(void);
