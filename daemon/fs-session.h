/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fs-session.h — the FUSE side of sluice-fs, as the transport sees it.
 *
 * The transport (vhost-user.c, virtqueue.c, queue-thread.c) pops a descriptor
 * chain, maps it to iovecs in guest memory and hands them to fs_process(): the
 * device-readable part (the FUSE request) and the device-writable part (where
 * the reply goes).  The FUSE layer (fuse-*.c, pt-*.c, inode.c) decodes,
 * runs the operation on the host folder and writes the reply straight into the
 * writable iovecs — READ payloads are preadv()'d into guest memory, WRITE
 * payloads pwritev()'d from it, with no bounce buffer.
 *
 * Everything in the request is untrusted: fs_process() checks every length
 * against what the iovecs really hold.  A request too short to carry a
 * fuse_in_header gets no reply (length 0); any other malformed request gets an
 * error reply (EINVAL/EIO) when the reply buffer can take a fuse_out_header. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "options.h"
#include "stats.h"

struct fs_session;  /* one per process: the shared folder, inode table, handles */
struct fs_worker;   /* one per queue thread: its scratch buffers, so no malloc per request */

/* Creates the session for opts->shared_dir (opened O_PATH|O_DIRECTORY by the
 * caller, ownership of root_fd passes to the session).  Returns -errno. */
int fs_session_new(const struct fs_options *opts, int root_fd, struct stats *stats,
                   struct fs_session **ret);
void fs_session_free(struct fs_session *s);

/* The session's O_PATH fd of /proc/self/fd (its inodes are reopened through
 * it), for mountns_enter() to replace in place. */
int fs_session_proc_fd(const struct fs_session *s);

/* The frontend went away (or sent RESET_OWNER): forget every inode but the
 * root and close every handle, so that the next guest starts with FUSE INIT
 * from a clean slate.  Called with no queue thread running. */
void fs_session_reset(struct fs_session *s);

/* Guest memory is about to change (SET_MEM_TABLE, REM_MEM_REG): every
 * deferred request (a SETLKW still waiting) is finished now with EINTR — its
 * reply written and its complete callback run while the memory it points into
 * is still mapped — and the call returns when none is left.  The guest's
 * fcntl(F_SETLKW) sees EINTR and may retry.  Called from the transport thread
 * with the queue threads stopped. */
void fs_session_interrupt_deferred(struct fs_session *s);

/* A ring stops (GET_VRING_BASE): the same for the deferred requests that came
 * from queue `queue_index` only (< 0: all queues).  When it returns, none of
 * them is left and nothing will be written to that ring or the memory its
 * requests pointed into.  The queue's own thread must be stopped (no
 * fs_process() of it in flight); other queue threads may run.  The complete
 * callbacks run on other threads while this waits: the caller must not hold
 * a lock they take. */
void fs_session_finish_deferred(struct fs_session *s, int queue_index);

/* The transport starts ring `queue_index` (0 = hiprio) with `num` entries
 * (SET_VRING_NUM); called before its queue thread runs.  INIT offers a guest
 * that asks FUSE_MAX_PAGES as many pages per request as the smallest request
 * queue carries (fuse-dispatch.c); no call means the default 1 MiB. */
void fs_session_set_queue_size(struct fs_session *s, unsigned queue_index, unsigned num);

/* True between an answered INIT and the next DESTROY or reset. */
bool fs_session_is_initialized(struct fs_session *s);

/* Live read-only toggle (the control channel): from the next request on, every
 * mutating request fails with EROFS, including writes through handles that are
 * already open.  Thread-safe. */
void fs_session_set_readonly(struct fs_session *s, bool readonly);
bool fs_session_get_readonly(struct fs_session *s);

/* Live names/case switch (Worker1.SetNames): from the next request on, names
 * are read and listed as --names=NAMES --case=CASE would (pt-name.h); a
 * request being served finishes the way it began.  What the guest cached
 * under the old names (dentries, within --cache's timeouts) it keeps until
 * they expire.  Thread-safe. */
void fs_session_set_names(struct fs_session *s, enum fs_names_mode names, enum fs_case_mode case_mode);
void fs_session_get_names(struct fs_session *s, enum fs_names_mode *ret_names,
                          enum fs_case_mode *ret_case);

/* Per-thread context.  queue_index: 0 = hiprio, 1… request queues (for stats). */
int fs_worker_new(struct fs_session *s, unsigned queue_index, struct fs_worker **ret);
void fs_worker_free(struct fs_worker *w);

/* A request that cannot be answered right away (SETLKW on a contended lock)
 * is finished later, from another thread, through this callback.  The
 * transport registers it once per worker; `token` is what it passed to
 * fs_process().  The callback pushes `len` bytes as the used length and
 * notifies the guest; it must be thread-safe against the queue thread. */
typedef void (*fs_complete_fn)(void *token, size_t len, void *userdata);
void fs_worker_set_complete(struct fs_worker *w, fs_complete_fn fn, void *userdata);

/* fs_process() returns this when it took ownership of the request: the
 * transport must keep the descriptor chain (and the memory its iovecs point
 * to) alive and un-pushed until the complete callback runs for `token`.
 * The iovec arrays themselves are copied by the FUSE layer. */
#define FS_PROCESS_DEFERRED ((size_t)-1)

/* Processes one request.  Returns the number of bytes written to out (the used
 * length for the ring; 0 for requests that have no reply, like FORGET), or
 * FS_PROCESS_DEFERRED. */
size_t fs_process(struct fs_worker *w, const struct iovec *in, unsigned in_cnt,
                  const struct iovec *out, unsigned out_cnt, void *token);

/* ---- Resuming after a crash or an upgrade (the transport's side: resume-state.h) ----
 *
 * The FUSE layer keeps what a successor needs to serve the same guest — the
 * INIT result, every nodeid the guest holds (identity, lookup count, and the
 * (parent, name) it can be reopened by) and every open handle (its nodeid
 * and open flags) — in a memfd of its own, updated as the tables change, in
 * an order that a SIGKILL at any instruction leaves consistent: a leaked
 * lookup count is acceptable, a nodeid that names the wrong file never is.
 * The transport stores the memfd with the others (fd-store.h). */

/* From now on keep the session's state in a new memfd; *ret_fd is a
 * descriptor of it for the store (the session keeps its own).  Called once,
 * before the first request; -errno. */
int fs_session_state_create(struct fs_session *s, int *ret_fd);
/* Takes up the state a previous worker kept in fd (consumed): the INIT
 * result, the tables with the same nodeids and fhs.  Nothing is opened yet:
 * inodes are reopened by name when first used, handles with their flags
 * (never O_CREAT or O_TRUNC again), each confined to the share and its
 * identity checked (a file that changed answers ESTALE).  From then on the
 * session keeps its state in that memfd.  -EBADMSG when the state cannot be
 * trusted (version, checksum, a torn update, a record that points outside
 * the tables), with why in `why`: the caller falls back to a fresh start.
 * Called before any queue thread runs. */
int fs_session_state_restore(struct fs_session *s, int fd, char *why, size_t why_size);
/* The restored state is not used after all (the device it belongs to could
 * not be taken up): every nodeid and handle rebuilt from it is forgotten and
 * the session keeps no state, so that fs_session_state_create() can start a
 * new one.  Called before any queue thread runs. */
void fs_session_state_forget(struct fs_session *s);

/* A request a previous worker had taken from the ring and not answered.
 * Run again when running it twice does no harm (GETATTR, LOOKUP, READ,
 * READDIR(PLUS), STATFS, GETXATTR, LISTXATTR, ACCESS, a WRITE at an offset
 * through a handle not opened O_APPEND, …); anything else is answered EIO,
 * logged and counted.  *ret_replayed says which.  Otherwise as fs_process(). */
size_t fs_process_again(struct fs_worker *w, const struct iovec *in, unsigned in_cnt,
                        const struct iovec *out, unsigned out_cnt, void *token,
                        bool *ret_replayed);
