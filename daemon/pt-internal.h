/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-internal.h — what the FUSE operations (pt-*.c) share: the served folder
 * as the handlers see it, the handler signature and the small helpers every
 * handler file uses.  Private to the FUSE layer: the transport sees only
 * fs-session.h, and fuse-dispatch.c calls the handlers through its table.
 *
 * The handler contract:
 *   int pt_OP(struct pt_fs *fs, struct freq *r, struct inode *i);
 * `i` is the request's nodeid, looked up (and referenced for the duration of
 * the call) by the dispatcher when the opcode's table entry asks for it —
 * NULL for operations on handles.  A handler either returns -errno (the
 * dispatcher replies the error) or fills the reply with pt_reply*() and
 * returns 0 — never both.  A handler that cannot answer now takes the request
 * over with freq_defer() and returns 0 without a reply. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fuse-request.h"
#include "guest-policy.h"
#include "idmap.h"
#include "handle.h"
#include "inode-fd.h"
#include "inode.h"
#include "options.h"
#include "perm.h"
#include "pt-lock.h"
#include "stats.h"
#include "util.h"

/* The served folder and its policy: everything a handler may look at. */
struct pt_fs {
        struct inode_table *inodes;
        struct handle_table *handles;
        int proc_fd;                  /* O_PATH /proc/self/fd, for reopening inodes */
        struct stats *stats;
        struct idmap idmap;
        enum fs_cache_mode cache;
        bool xattr;
        uint64_t timeout_sec;         /* entry and attr timeouts from --cache */
        uint32_t timeout_nsec;
        atomic_bool readonly;
        /* PT_NAMES_WINDOWS | PT_CASE_INSENSITIVE (pt-name.h), switched live. */
        atomic_uint name_modes;
        /* Folded names per folder, for PT_CASE_INSENSITIVE (folder-index.h);
         * made at start whatever the mode, so a live switch finds it. */
        struct findex *case_index;
        /* READ/WRITE payload bytes at most: the max_write INIT offered
         * (FREQ_MAX_WRITE until then). */
        _Atomic uint32_t max_io;
        /* Kept descriptors (inodes, handles) must be below this (pt_fd_keep()). */
        int fd_ceiling;
        struct policy policy;         /* what guest root may make (guest-policy.h) */
        struct pt_lock_waiters waiters;      /* pt-lock.h */
        atomic_uint lock_records;     /* POSIX lock records the guest holds (pt-lock.c) */
};

typedef int (*pt_handler_fn)(struct pt_fs *fs, struct freq *r, struct inode *i);

/* The fixed-size argument of a request, or -EINVAL from the handler. */
#define PT_ARG(type, var, r)                                              \
        const struct type *var = freq_arg((r), sizeof(struct type));     \
        if (!var)                                                         \
                return -EINVAL

/* ---- references that end with their scope ---- */

struct pt_iref { struct inode_table *t; struct inode *p; };
struct pt_href { struct handle_table *t; struct handle *p; };

static inline void pt_iref_put(struct pt_iref *ref)
{
        inode_put(ref->t, ref->p);
}

static inline void pt_href_put(struct pt_href *ref)
{
        handle_put(ref->t, ref->p);
}

#define _cleanup_iref_ _cleanup_(pt_iref_put) struct pt_iref
#define _cleanup_href_ _cleanup_(pt_href_put) struct pt_href

#define PT_INODE(fs, id) { (fs)->inodes, inode_get((fs)->inodes, (id)) }

/* Makes sure the held inode `i` has its O_PATH fd (the table drops those of
 * inodes nobody used lately: inode.h), so that i->fd is valid until the
 * inode is put; returns the error (ESTALE: its file is gone) otherwise.
 * Every handler calls it before it touches i->fd. */
#define PT_NEED_FD(fs, i)                                                 \
        do {                                                              \
                int need_fd_ = inode_fd((fs)->inodes, (i));               \
                if (need_fd_ < 0)                                         \
                        return need_fd_;                                  \
        } while (0)
#define PT_FILE(fs, fh)  { (fs)->handles, handle_get((fs)->handles, (fh), false) }
#define PT_DIR(fs, fh)   { (fs)->handles, handle_get((fs)->handles, (fh), true) }

/* ---- replies (the `return 0` half of the contract) ---- */

static inline int pt_reply(struct freq *r, const void *arg, size_t len)
{
        (void) freq_reply(r, arg, len);
        return 0;
}

static inline int pt_reply_ok(struct freq *r)
{
        return pt_reply(r, NULL, 0);
}

static inline int pt_reply_payload(struct freq *r, size_t len)
{
        (void) freq_reply_payload(r, len);
        return 0;
}

static inline int pt_reply_none(struct freq *r)
{
        (void) freq_reply_none(r);
        return 0;
}

/* ---- pt-common.c ---- */

static inline bool pt_is_readonly(const struct pt_fs *fs)
{
        return atomic_load_explicit(&fs->readonly, memory_order_relaxed);
}

/* The descriptors the guest makes us keep (inodes, open files) stop short of
 * RLIMIT_NOFILE by a reserve (fuse-dispatch.c), so that when the guest has
 * used up its share it gets EMFILE while the transport can still take the
 * fds a frontend sends (memory regions, ring eventfds) and accept().  Passes
 * fd (or an error) through; closes an fd at or above the ceiling: -EMFILE. */
int pt_fd_keep(const struct pt_fs *fs, int fd);
int pt_stat(const struct inode *i, struct stat *ret_st);
void pt_fill_attr(const struct pt_fs *fs, struct fuse_attr *a, const struct stat *st);
int pt_reply_attr(struct pt_fs *fs, struct freq *r, const struct stat *st);
/* Looks `name` up in `dir`, counts one lookup of it and fills its entry. */
int pt_lookup_entry(struct pt_fs *fs, struct inode *dir, const char *name,
                    struct fuse_entry_out *ret_entry);
/* Every node-creating request (MKNOD, MKDIR, SYMLINK, LINK, CREATE, TMPFILE)
 * ends here: counts a lookup of the new node and replies its entry.  With
 * open_fd ≥ 0 (consumed) that fd is the new node's open file (CREATE,
 * TMPFILE): it becomes a handle and the reply is entry + open; `name` may then
 * be NULL, and `open_st` is that fd's fstat when the caller has it (NULL: made
 * here).  Otherwise the node is `name` in `dir`. */
int pt_reply_new_node(struct pt_fs *fs, struct freq *r, struct inode *dir, const char *name,
                      int open_fd, const struct stat *open_st, int open_flags);
/* The guest's mode bits with its umask applied (DONT_MASK is negotiated and
 * the process umask is 0, so this is the only place the umask is applied). */
static inline mode_t pt_masked(uint32_t mode, uint32_t umask_bits)
{
        return (mode_t)(mode & ~umask_bits & 07777);
}
/* The daemon's own checks between guest users (perm.h), on the attributes
 * the guest is shown.  `mask` is R_OK|W_OK|X_OK; guest root passes without a
 * stat.  pt_check_child() is about `name` in `dir`; -ENOENT when it is not there. */
static inline struct perm_who pt_who(const struct freq *r)
{
        return (struct perm_who){ .uid = r->in.uid, .gid = r->in.gid };
}
void pt_perm_node(const struct pt_fs *fs, const struct stat *st, struct perm_node *ret);
int pt_check_access(const struct pt_fs *fs, const struct freq *r, const struct inode *i, int mask);
/* May the requester remove (or rename away) `name` from `dir`? */
int pt_check_remove(const struct pt_fs *fs, const struct freq *r, const struct inode *dir,
                    const char *name);
/* 0 when `i` is still inside the shared folder on the host, -EACCES when the
 * host moved it out after the guest looked it up (confine_check_inside()):
 * for the changes Landlock does not cover (SETATTR, SETXATTR, REMOVEXATTR;
 * UNLINK, RMDIR and RENAME below the socket's folder). */
int pt_check_inside(struct pt_fs *fs, const struct inode *i);
/* pt_check_inside() for what Landlock covers (opens, creates, links): only
 * when Landlock does not confine this worker (--sandbox=none, an old kernel)
 * or does not see moves out of the share (a sealed root worker). */
int pt_check_inside_unconfined(struct pt_fs *fs, const struct inode *i);
/* The open flags of OPEN/CREATE that reach the host (see pt-common.c). */
int pt_open_flags(uint32_t guest_flags);
/* FOPEN_* flags of a file handle for the --cache mode. */
uint32_t pt_file_open_flags(const struct pt_fs *fs);

/* ---- the handlers, by file ---- */

/* pt-entry.c: names, attributes and the file system */
int pt_lookup(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_forget(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_batch_forget(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_getattr(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_setattr(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_readlink(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_symlink(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_mknod(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_mkdir(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_unlink(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_rmdir(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_rename(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_rename2(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_link(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_statfs(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_access(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_syncfs(struct pt_fs *fs, struct freq *r, struct inode *unused);

/* pt-file.c: open files and their I/O */
int pt_open(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_create(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_tmpfile(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_read(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_write(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_flush(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_release(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_fsync(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_fallocate(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_lseek(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_copy_file_range(struct pt_fs *fs, struct freq *r, struct inode *unused);
/* FSYNC and FSYNCDIR: fsync()/fdatasync() of the request's file resp. directory handle. */
int pt_sync_handle(struct pt_fs *fs, struct freq *r, bool is_dir);

/* pt-dir.c: directory handles and listing */
int pt_opendir(struct pt_fs *fs, struct freq *r, struct inode *dir);
int pt_readdir(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_readdirplus(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_releasedir(struct pt_fs *fs, struct freq *r, struct inode *unused);
int pt_fsyncdir(struct pt_fs *fs, struct freq *r, struct inode *unused);

/* pt-xattr.c: extended attributes (--xattr) */
int pt_setxattr(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_getxattr(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_listxattr(struct pt_fs *fs, struct freq *r, struct inode *i);
int pt_removexattr(struct pt_fs *fs, struct freq *r, struct inode *i);

/* pt-lock.c: POSIX and flock locks, lock owners, requests that wait: pt-lock.h */
