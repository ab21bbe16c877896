/* passthrough.h — the FUSE operations on the host folder, and the session
 * and worker state they share with fuse-dispatch.c (private to the FUSE layer;
 * the transport sees only fs-session.h). */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fs-session.h"
#include "fuse-request.h"
#include "idmap.h"
#include "inode.h"

struct lock_waiter;

struct fs_session {
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
        atomic_bool initialized;      /* INIT answered, no DESTROY since */
        _Atomic uint32_t proto_minor; /* negotiated FUSE minor version */

        /* SETLKW requests waiting for a contended lock, each in its own thread. */
        pthread_mutex_t wait_mutex;
        pthread_cond_t wait_cond;
        unsigned n_waiters;
        bool cancel_waiters;
        struct lock_waiter *waiters;  /* list, for INTERRUPT */
};

struct fs_worker {
        struct fs_session *s;
        unsigned queue_index;
        fs_complete_fn complete;
        void *complete_data;
        /* The request being processed. */
        void *token;
        bool deferred;                /* a handler took the request over */
        uint64_t start_usec;
        /* Scratch, so that no request allocates. */
        uint8_t *scratch;             /* FREQ_SCRATCH_SIZE: copied arguments */
        uint8_t *buf;                 /* FREQ_XATTR_SIZE_MAX: xattr values, readlink */
        struct iovec *iov;            /* FREQ_MAX_IOV: READ/WRITE slices of guest buffers */
};

/* A handler returns 0 after replying (freq_reply*), or -errno for an error reply. */
typedef int (*pt_handler_fn)(struct fs_worker *w, struct freq *r);

int pt_lookup(struct fs_worker *w, struct freq *r);
int pt_forget(struct fs_worker *w, struct freq *r);
int pt_batch_forget(struct fs_worker *w, struct freq *r);
int pt_getattr(struct fs_worker *w, struct freq *r);
int pt_setattr(struct fs_worker *w, struct freq *r);
int pt_readlink(struct fs_worker *w, struct freq *r);
int pt_symlink(struct fs_worker *w, struct freq *r);
int pt_mknod(struct fs_worker *w, struct freq *r);
int pt_mkdir(struct fs_worker *w, struct freq *r);
int pt_unlink(struct fs_worker *w, struct freq *r);
int pt_rmdir(struct fs_worker *w, struct freq *r);
int pt_rename(struct fs_worker *w, struct freq *r);
int pt_rename2(struct fs_worker *w, struct freq *r);
int pt_link(struct fs_worker *w, struct freq *r);
int pt_open(struct fs_worker *w, struct freq *r);
int pt_create(struct fs_worker *w, struct freq *r);
int pt_tmpfile(struct fs_worker *w, struct freq *r);
int pt_read(struct fs_worker *w, struct freq *r);
int pt_write(struct fs_worker *w, struct freq *r);
int pt_flush(struct fs_worker *w, struct freq *r);
int pt_release(struct fs_worker *w, struct freq *r);
int pt_fsync(struct fs_worker *w, struct freq *r);
int pt_opendir(struct fs_worker *w, struct freq *r);
int pt_readdir(struct fs_worker *w, struct freq *r);
int pt_readdirplus(struct fs_worker *w, struct freq *r);
int pt_releasedir(struct fs_worker *w, struct freq *r);
int pt_fsyncdir(struct fs_worker *w, struct freq *r);
int pt_statfs(struct fs_worker *w, struct freq *r);
int pt_access(struct fs_worker *w, struct freq *r);
int pt_setxattr(struct fs_worker *w, struct freq *r);
int pt_getxattr(struct fs_worker *w, struct freq *r);
int pt_listxattr(struct fs_worker *w, struct freq *r);
int pt_removexattr(struct fs_worker *w, struct freq *r);
int pt_getlk(struct fs_worker *w, struct freq *r);
int pt_setlk(struct fs_worker *w, struct freq *r);
int pt_setlkw(struct fs_worker *w, struct freq *r);
int pt_fallocate(struct fs_worker *w, struct freq *r);
int pt_lseek(struct fs_worker *w, struct freq *r);
int pt_copy_file_range(struct fs_worker *w, struct freq *r);
int pt_syncfs(struct fs_worker *w, struct freq *r);

/* Stats and trace of a finished request (also for deferred ones). */
void pt_request_done(struct fs_session *s, const struct freq *r, uint64_t start_usec);

/* INTERRUPT: a SETLKW still waiting for `unique` ends with EINTR. */
void pt_interrupt(struct fs_session *s, uint64_t unique);

/* Finishes every SETLKW waiter with EINTR (they reply) and waits for them. */
void pt_interrupt_all(struct fs_session *s);
/* Stops every SETLKW waiter (they reply nothing) and waits for them. */
void pt_cancel_waiters(struct fs_session *s);
