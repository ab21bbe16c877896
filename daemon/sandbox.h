/* sandbox.h — optional extra confinement of sluice-fs (--sandbox=seccomp).
 *
 * The default confinement is in the FUSE layer itself (confine.c: openat2 with
 * RESOLVE_BENEATH, O_NOFOLLOW, no path ever resolved on the host outside the
 * shared folder).  --sandbox=seccomp adds, after start-up: Landlock rules that
 * limit the process to the shared folder (where the kernel has Landlock; the
 * ABI is probed at run time), and a seccomp allow-list of the system calls the
 * worker needs.  Both work unprivileged (no_new_privs). */
#pragma once

/* shared_dir_fd: O_PATH fd of the shared folder.  Returns -errno; the caller
 * exits with a message when it fails, because the user asked for it. */
int sandbox_apply(int shared_dir_fd, const char *shared_dir);
