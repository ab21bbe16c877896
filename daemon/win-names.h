/* SPDX-License-Identifier: GPL-2.0-or-later */
/* win-names.h — host names as Windows can open them, and back (--names=windows).
 *
 * Pure functions on byte strings: no allocation, no system call, no state;
 * safe from any thread.  The convention is WinFsp's (src/shared/ku/posix.c,
 * FspPosixMapPosixToWindowsPathEx and FspPosixMapWindowsToPosixPathEx), the
 * one virtio-win's virtiofs.exe uses on the way in, extended where WinFsp
 * leaves a name Windows cannot open or a name ambiguous.  See README.md
 * "Windows names" for what a user sees. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The guest form of a host name `host` (`len` bytes, at most NAME_MAX) into
 * `out`, which holds at least 3 × len + 1 bytes; NUL-terminated; returns its
 * length.  "." and ".." are returned as they are. */
size_t winname_to_guest(const char *host, size_t len, char *out);

/* The host name a guest name `guest` (`len` bytes) stands for, into `out`
 * (`size` bytes), NUL-terminated; returns its length, or -ENAMETOOLONG when
 * it does not fit.  Never fails otherwise: whether the result is a name the
 * host may take ("", ".", "..") is the caller's to check. */
ssize_t winname_to_host(const char *guest, size_t len, char *out, size_t size);
