/* SPDX-License-Identifier: GPL-2.0-or-later */
/* options.h — sluice-fs command line.
 *
 * Spellings follow QEMU's virtiofsd where the two overlap (so that libvirt can
 * use sluice-fs as a drop-in <binary path=…>); Sluice's own options are
 * --queues, --poll-us, --control-fd and --shared-dir-fd.  Parsed once in options.c; every other
 * module reads the resulting struct fs_options. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"

enum fs_cache_mode {
        FS_CACHE_AUTO = 0,   /* 1 s entry/attr timeouts, page cache kept while the file is unchanged */
        FS_CACHE_ALWAYS,     /* long timeouts, keep page cache: the host does not change the folder */
        FS_CACHE_NEVER,      /* no timeouts, direct I/O: the host changes the folder all the time */
};

enum fs_sandbox_mode {
        FS_SANDBOX_SECCOMP = 0, /* default: no_new_privs, Landlock on the shared folder and a
                                 * seccomp allow-list on top of openat2/O_NOFOLLOW (sandbox.c) */
        FS_SANDBOX_NONE,        /* openat2/O_NOFOLLOW confinement only */
};

/* How names reach the guest (--names; pt-name.h, win-names.h). */
enum fs_names_mode {
        FS_NAMES_POSIX = 0,  /* default: host names as they are */
        FS_NAMES_WINDOWS,    /* names Windows can open: WinFsp's U+F0xx mapping and more */
};

/* How the guest's names are matched (--case; pt-name.h). */
enum fs_case_mode {
        FS_CASE_SENSITIVE = 0,  /* default: as the host file system does */
        FS_CASE_INSENSITIVE,    /* a name finds the host name equal to it after case folding */
};

#define FS_MAX_QUEUES     64   /* request queues; the hiprio queue comes on top */
#define FS_TAG_MAX        36   /* virtio-fs config space tag: 36 bytes, not NUL-terminated */
#define FS_ID_UNMAPPED    ((uint32_t)-1)

/* Extended-attribute namespaces beyond user.* the guest may write (set or
 * remove) with --xattr-namespaces; reading is never restricted. */
enum {
        FS_XATTR_NS_TRUSTED  = 1 << 0,  /* trusted.*: root-only metadata (overlayfs, ...) */
        FS_XATTR_NS_SECURITY = 1 << 1,  /* security.*: LSM labels, file capabilities */
        FS_XATTR_NS_SYSTEM   = 1 << 2,  /* system.*: POSIX ACLs */
};

/* How many --allow-peer-uid a command line may hold. */
#define FS_MAX_PEER_UIDS 16

struct fs_options {
        char *socket_path;          /* --socket-path=PATH: listen here (one frontend at a time) */
        int fd;                     /* --fd=N: an already listening socket (libvirt); -1 if unset */
        char *shared_dir;           /* --shared-dir=DIR or -o source=DIR; with --shared-dir-fd,
                                     * main.c sets it to the folder's name, for messages */
        int shared_dir_fd;          /* --shared-dir-fd=N: the folder, opened by the caller; -1 */
        char tag[FS_TAG_MAX + 1];   /* --tag=TAG, or the folder's name */
        bool tag_given;             /* --tag was on the command line: offer the config space */
        bool readonly;              /* --readonly or -o readonly */
        enum fs_cache_mode cache;   /* --cache=auto|always|never (-o cache=none is accepted too) */
        bool xattr;                 /* --xattr or -o xattr */
        enum fs_names_mode names;   /* --names=posix|windows */
        enum fs_case_mode case_mode; /* --case=sensitive|insensitive */
        enum fs_sandbox_mode sandbox; /* --sandbox=seccomp|none (virtiofsd's namespace/chroot: seccomp) */
        unsigned queues;            /* --queues=N request queues (default 1) */
        unsigned poll_us;           /* --poll-us=N busy-poll after each batch (default 50) */
        unsigned max_inode_fds;     /* --max-inode-fds=N inode descriptors kept (0: from RLIMIT_NOFILE) */
        int control_fd;             /* --control-fd=N: sd-bus peer socket from sluice-service; -1 */
        /* --translate-uid=GUEST:HOST / --translate-gid=GUEST:HOST (repeatable is not needed:
         * one pair each).  Files owned by HOST on the host appear owned by GUEST in the guest,
         * and GUEST's requests to create files create them as the worker's own user
         * (as HOST when the worker runs as root: credentials.h). */
        uint32_t guest_uid, host_uid;
        uint32_t guest_gid, host_gid;
        /* What guest root may make on the host (guest-policy.c): device nodes
         * (--allow-devices), set-user/group-ID files (--allow-setuid), xattrs in
         * the FS_XATTR_NS_* namespaces (--xattr-namespaces=LIST). */
        bool allow_devices;
        bool allow_setuid;
        unsigned xattr_namespaces;
        /* --allow-peer-uid=UID (repeatable): accept a frontend only from these
         * users, the worker's own and root (SO_PEERCRED); none given: any peer
         * the socket's permissions let in. */
        uint32_t allow_peer_uids[FS_MAX_PEER_UIDS];
        unsigned n_allow_peer_uids;
        /* --allow-peer-pid=PID: accept a frontend only from this process
         * (peer.h); 0: any process of an allowed user. */
        int32_t allow_peer_pid;
        /* --resume: keep what a successor needs in the keeper's fd store and
         * take it up when started with it (fd-store.h, resume-state.h). */
        bool resume;
        bool replay;                /* --replay=yes|no: run in-flight requests again (default yes) */
        bool exit_on_disconnect;    /* --fd implies it; --socket-path serves the next frontend */
        enum log_level log_level;   /* --log-level=…, -d/--debug = debug */
        bool print_capabilities;
};

/* Parses argv into *opts.  On a usage error prints one line saying what is
 * wrong and how to get help, and returns -EINVAL (main exits 2).  Returns 1
 * when the command was fully handled (--help, --version, --print-capabilities)
 * and main should exit 0. */
/* The one spelling of each names/case mode (options, Worker1.SetNames and its
 * properties): the name of a mode, and the mode of a name (-EINVAL: unknown). */
const char *options_names_name(enum fs_names_mode mode);
int options_names_parse(const char *s, enum fs_names_mode *ret);
const char *options_case_name(enum fs_case_mode mode);
int options_case_parse(const char *s, enum fs_case_mode *ret);

int options_parse(int argc, char **argv, struct fs_options *opts);
void options_free(struct fs_options *opts);
