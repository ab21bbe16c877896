/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sandbox.h — confinement of the running worker (--sandbox=seccomp, the default).
 *
 * The first line of defence is in the FUSE layer itself (confine.c: openat2
 * with RESOLVE_BENEATH, O_NOFOLLOW, no host path ever resolved outside the
 * shared folder).  The sandbox is the second, for the day that layer has a
 * bug: once the worker is set up (socket listening, control channel started,
 * before any queue thread exists) it sets no_new_privs, restricts itself with
 * Landlock to the shared folder (plus read access to /proc/self), and installs
 * a seccomp allow-list of the system calls the worker makes, with argument
 * filters where a call could reach outside the process (kill, tgkill, clone,
 * ioctl, fcntl, prctl, socket, utimensat, pidfd_open: peer.h's expected
 * frontend, without flags).  Landlock has no rights for
 * metadata, so the list holds no call that changes a mode, owner, time or
 * xattr by path: the passthrough changes them through fds it opened inside
 * the folder (confine_fd_metadata_only() tells it so).  Except in a root
 * worker sealed in its mount namespace (mountns_sealed()), where no path
 * leads outside the folder: there fchownat, fchmodat and utimensat by path
 * are allowed too (confine_sealed_namespace()).  A call outside the list
 * kills the worker with a last log line naming it.  Everything works unprivileged; Landlock is
 * probed at run time and skipped (with a warning) on kernels without it.
 *
 * --sandbox=none leaves all of this out.  Built without libseccomp there is
 * no system call filter (a warning says so); Landlock still applies. */
#pragma once

/* root_fd: the O_PATH fd of the shared folder that the session serves (the
 * Landlock rule is built on it, so the rule covers exactly the folder served,
 * even if its path was renamed meanwhile).  socket_dir_fd (or -1): the O_PATH
 * fd of the folder holding the --socket-path socket, where removing a file
 * stays allowed so that the exit can remove the socket.  Returns -errno after
 * logging what failed; the caller exits, since the user did not turn the
 * sandbox off. */
int sandbox_apply(int root_fd, int socket_dir_fd);
