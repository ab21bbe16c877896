/* SPDX-License-Identifier: GPL-2.0-or-later */
/* capabilities.h — the capabilities a worker keeps.
 *
 * A worker run by root (libvirt's <binary> route) needs a few capabilities to
 * serve requests as root after the guest kernel's check and to switch to the
 * requester's fsuid/fsgid for creates (credentials.h); everything else root
 * holds (CAP_SYS_ADMIN, CAP_SYS_MODULE, CAP_SYS_PTRACE, ...) is dropped from
 * the effective, permitted and inheritable sets and the bounding set, and the
 * ambient set is cleared, once at start-up:
 *
 *   CAP_CHOWN          chown on behalf of guest root (SETATTR uid/gid)
 *   CAP_DAC_OVERRIDE   requests other than creates run as root, after the
 *                      guest kernel checked the caller's permissions
 *   CAP_FOWNER         chmod, utimes, xattrs, sticky-directory removals and
 *                      hard links of files the worker does not own
 *   CAP_SETUID/SETGID  setfsuid/setfsgid and the per-thread setgroups of a
 *                      request run as its guest user
 *   CAP_FSETID         only with --allow-setuid.  Without it the host kernel
 *                      clears S_ISUID (and S_ISGID on group-executable files)
 *                      on every write, truncate and fallocate of the worker,
 *                      as on a local write by a non-root user (kill-priv)
 *   CAP_MKNOD          only with --allow-devices
 *   CAP_SETFCAP        only with --xattr-namespaces=security (security.capability)
 *   CAP_SYS_ADMIN      only with --xattr-namespaces=trusted or security: the
 *                      kernel asks for it to write trusted.* and security.*
 *
 * Not kept: CAP_DAC_READ_SEARCH (no file handles; LINK falls back to the
 * /proc link where AT_EMPTY_PATH would need it), CAP_SYS_RESOURCE (the guest
 * must not fill root's reserved blocks), CAP_SETPCAP and all others.  The
 * securebits NOROOT (locked) are set too: an exec as root would gain nothing.
 *
 * A worker run by an ordinary user holds no capabilities; should it have
 * some (file capabilities, an ambient set), it drops them all.
 *
 * Capabilities are per thread: caps_drop() runs on the main thread before any
 * other thread exists, so every later thread inherits the reduced sets.  The
 * kernel's fsuid fix-up still works afterwards: a non-zero fsuid takes the
 * file-system capabilities out of the thread's effective set, fsuid 0 puts
 * back what the permitted set holds.  Runs before the seccomp filter: it uses
 * capget, capset and prctl(PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_SET_SECUREBITS). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct fs_options;

/* The capability mask (bit n = capability n) a worker keeps: for root with
 * `opts`, or nothing (0) when !root_mode. */
uint64_t caps_wanted(const struct fs_options *opts, bool root_mode);

/* Reduces the calling thread's sets to caps_wanted() (bounded by what it
 * holds): effective = permitted = wanted, inheritable and ambient empty,
 * bounding set = wanted.  Logs what it kept.  Returns 0, or -errno after
 * logging when the permitted set could not be reduced (the caller exits); a
 * bounding set that cannot be reduced (no CAP_SETPCAP) is only a warning:
 * the worker never executes anything (the sandbox forbids execve). */
int caps_drop(const struct fs_options *opts, bool root_mode);
