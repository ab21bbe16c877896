/* SPDX-License-Identifier: GPL-2.0-or-later */
/* confine.h — keeping every host access of sluice-fs inside the shared folder.
 *
 * The guest never names a host path: every request names an inode we handed
 * out (an O_PATH|O_NOFOLLOW fd inside the folder) plus at most one path
 * component.  These helpers are the only places where such a component or an
 * inode fd turns into a host file, and they refuse everything that could walk
 * out: '/', ".", "..", symlinks (never followed on the host) and /proc magic
 * links other than the one that reopens our own O_PATH fd. */
#pragma once

#include <limits.h>
#include <stdbool.h>

#include <stddef.h>
#include <sys/types.h>

#define CONFINE_NAME_MAX 255

/* 0 when `name` (len bytes, no NUL inside) is one ordinary path component:
 * non-empty, at most CONFINE_NAME_MAX bytes, no '/', not "." or "..".
 * -ENAMETOOLONG or -EINVAL otherwise. */
int confine_check_name(const char *name, size_t len);

/* Opens the child `name` of the directory `dir_fd` with `flags` (O_NOFOLLOW
 * and O_CLOEXEC are always added).  Uses openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) where the kernel has it and
 * plain openat() otherwise.  `name` must have passed confine_check_name()
 * (or be "." for O_TMPFILE).  Returns an fd or -errno; -EAGAIN with
 * O_NONBLOCK: a host lease on the file is being broken (the kernel told its
 * holder), and an open without O_NONBLOCK would wait for it (pt-file.c). */
int confine_open_child(int dir_fd, const char *name, int flags, mode_t mode);

/* Opens the object behind the O_PATH fd `path_fd` again, for I/O, through
 * /proc/self/fd (proc_fd is an O_PATH fd of that directory).  Refuses
 * symlinks (-ELOOP) without touching them, and checks that what it opened is
 * the same (st_dev, st_ino) as path_fd.  Returns an fd or -errno. */
int confine_reopen(int proc_fd, int path_fd, int flags);

/* An O_PATH fd of the file that `open_fd`, a file we opened for I/O (never an
 * O_PATH fd, so never a symlink), has open, through /proc/self/fd.  Our own
 * fd's magic link names exactly that file, so no identity check is needed
 * (CREATE's reply makes one per new file: two system calls fewer).  Returns
 * an fd or -errno. */
int confine_path_of_open_fd(int proc_fd, int open_fd);

/* 0 when the object behind `fd` is the directory of `root_fd` or below it
 * where the kernel names them now (their /proc/self/fd links), -EACCES when
 * it is not: the host moved it (or a directory above it) out of the shared
 * folder after the guest looked it up.  Landlock refuses every open, create
 * and link there, but not chmod, chown, utimes or xattrs, and it grants
 * removals (so renames away) anywhere below the socket's folder, for the
 * socket's own removal at exit: this guards those.  A deleted shared folder
 * also answers -EACCES (we cannot tell).  Renaming the shared folder itself
 * moves its inside with it: still 0.  In a sealed root worker (the shared
 * folder is its "/") an object moved out of its reach answers -EACCES by the
 * path the kernel gives it ("/"); pass the root as `root_fd` itself.
 *
 * A link longer than PATH_MAX cannot be read: then a directory `fd` is
 * walked up with ".." (openat O_PATH and statx, two calls a level, at most
 * CONFINE_INSIDE_MAX_DEPTH levels, the caller's fsuid needing search
 * permission on the way) until it meets the shared folder's (st_dev, st_ino,
 * mount id); any other `fd` answers -ENAMETOOLONG: the caller asks about the
 * directory it found it in (a non-directory has no ".."). */
#define CONFINE_INSIDE_MAX_DEPTH 65536
int confine_check_inside(int proc_fd, int root_fd, int fd);

/* Whether Landlock confines this process to the shared folder (set once by
 * the sandbox, before any queue thread starts).  Without it (--sandbox=none,
 * a kernel without Landlock) the passthrough layer checks with
 * confine_check_inside() before the opens, creates and links Landlock would
 * have refused in a directory moved out of the share. */
void confine_note_landlock(void);
bool confine_landlock_active(void);

/* Writes the name of `fd` inside /proc/self/fd ("17") into buf (≥ 16 bytes). */
void confine_fd_name(char *buf, size_t size, int fd);

/* The current path of our fd `fd` as /proc/self/fd (`proc_fd`) names it, into
 * buf: its length, or -errno (-ENAMETOOLONG when cut).  A deleted object's
 * ends in " (deleted)"; one out of our root's reach is not absolute. */
ssize_t confine_fd_path(int proc_fd, int fd, char buf[static PATH_MAX]);

/* Opens /proc/self/fd as an O_PATH directory; -errno when /proc is missing. */
int confine_open_proc_fd(void);

/* Whether openat2() with RESOLVE_BENEATH works on this kernel (probed once). */
int confine_have_openat2(void);

/* Whether metadata may change only through fds opened for I/O (fchmod,
 * fchown, futimens, fsetxattr, fremovexattr): set once by the seccomp
 * sandbox, before any queue thread starts, because its allow-list refuses the
 * path-based calls (a path, even "" with AT_EMPTY_PATH on an O_PATH fd, can
 * name any file on the host: Landlock does not cover metadata nor O_PATH
 * opens).  Then the owner, mode and times of symlinks and special files,
 * which cannot be opened without effects, cannot be changed (sandbox.c),
 * except a FIFO (opened for reading with O_NONBLOCK) and in a sealed
 * namespace (below). */
void confine_note_fd_metadata_only(void);
bool confine_fd_metadata_only(void);

/* Whether the seccomp sandbox also allows the metadata calls on an O_PATH fd
 * (fchownat and utimensat with AT_EMPTY_PATH, fchmodat2 with AT_EMPTY_PATH,
 * and fchmodat relative to the working directory, for our own fd's name
 * there): set once by the sandbox, before any queue thread starts, for a
 * root worker sealed in its mount namespace (mountns_sealed()), where no
 * path it can name leads outside the shared folder.  Symlinks, sockets and
 * device nodes change that way, never opened. */
void confine_note_sealed_namespace(void);
bool confine_sealed_namespace(void);
