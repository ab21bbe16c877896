/* fuse-dispatch.c — fs_process(): the opcode table, INIT/DESTROY, the
 * read-only gate, stats and the request trace (implements fs-session.h).
 *
 * Behaviour worth knowing (the guest sees it):
 *  - INIT answers minor min(guest, 38), max_write 1 MiB, max_pages 256, and
 *    only flags we implement: ASYNC_READ, POSIX_LOCKS, FLOCK_LOCKS,
 *    ATOMIC_O_TRUNC, BIG_WRITES, DONT_MASK, DO_READDIRPLUS, READDIRPLUS_AUTO,
 *    ASYNC_DIO, PARALLEL_DIROPS, MAX_PAGES, plus CACHE_SYMLINKS unless
 *    --cache=never and AUTO_INVAL_DATA with --cache=auto.  Not offered:
 *    EXPORT_SUPPORT (".." lookups could leave a directory moved out of the
 *    share), WRITEBACK_CACHE, POSIX_ACL, HANDLE_KILLPRIV(_V2), SETXATTR_EXT,
 *    SECURITY_CTX, DAX; nothing in flags2.
 *  - Without --xattr the four xattr requests answer ENOSYS, as virtiofsd
 *    does: the kernel then stops sending them (no per-write security.capability
 *    probe).
 *  - SETLKW on a contended lock returns FS_PROCESS_DEFERRED: a helper thread
 *    retries the non-blocking lock with a 1 → 20 ms backoff and replies through
 *    the worker's fs_complete_fn; INTERRUPT of it replies EINTR; a session reset
 *    stops it without a reply.
 *  - Files the guest creates belong to the user running sluice-fs (root when
 *    run by root: then host permission checks are root's too, like virtiofsd
 *    without its sandbox).  The process umask is set to 0 (the guest's umask
 *    comes with each create) and the open file limit is raised to the hard limit.
 *  - Requests before INIT (or after DESTROY) fail with EIO; unknown opcodes ENOSYS. */
#include "fs-session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "log.h"
#include "passthrough.h"

#ifndef FUSE_TMPFILE
#define FUSE_TMPFILE 51
#endif

#define FS_MAX_PAGES 256
/* The oldest protocol we speak: 7.12 brought umask and the current entry/attr sizes. */
#define FS_MIN_MINOR 12

/* Flags we offer in INIT; each one is implemented (see the report in README/man). */
#define FS_INIT_FLAGS (FUSE_ASYNC_READ | FUSE_POSIX_LOCKS | FUSE_ATOMIC_O_TRUNC |          \
                       FUSE_BIG_WRITES | FUSE_DONT_MASK | FUSE_FLOCK_LOCKS |              \
                       FUSE_DO_READDIRPLUS | FUSE_READDIRPLUS_AUTO | FUSE_ASYNC_DIO |     \
                       FUSE_PARALLEL_DIROPS | FUSE_MAX_PAGES)

enum {
        OP_MUTATES = 1 << 0,   /* fails with EROFS on a read-only share */
        OP_BEFORE_INIT = 1 << 1,
};

struct fs_op {
        pt_handler_fn fn;
        unsigned flags;
};

static int op_init(struct fs_worker *w, struct freq *r);
static int op_destroy(struct fs_worker *w, struct freq *r);
static int op_interrupt(struct fs_worker *w, struct freq *r);

static const struct fs_op ops[] = {
        [FUSE_LOOKUP]          = { pt_lookup, 0 },
        [FUSE_FORGET]          = { pt_forget, 0 },
        [FUSE_GETATTR]         = { pt_getattr, 0 },
        [FUSE_SETATTR]         = { pt_setattr, OP_MUTATES },
        [FUSE_READLINK]        = { pt_readlink, 0 },
        [FUSE_SYMLINK]         = { pt_symlink, OP_MUTATES },
        [FUSE_MKNOD]           = { pt_mknod, OP_MUTATES },
        [FUSE_MKDIR]           = { pt_mkdir, OP_MUTATES },
        [FUSE_UNLINK]          = { pt_unlink, OP_MUTATES },
        [FUSE_RMDIR]           = { pt_rmdir, OP_MUTATES },
        [FUSE_RENAME]          = { pt_rename, OP_MUTATES },
        [FUSE_LINK]            = { pt_link, OP_MUTATES },
        [FUSE_OPEN]            = { pt_open, 0 },        /* EROFS for write opens, inside */
        [FUSE_READ]            = { pt_read, 0 },
        [FUSE_WRITE]           = { pt_write, OP_MUTATES },
        [FUSE_STATFS]          = { pt_statfs, 0 },
        [FUSE_RELEASE]         = { pt_release, 0 },
        [FUSE_FSYNC]           = { pt_fsync, 0 },
        [FUSE_SETXATTR]        = { pt_setxattr, OP_MUTATES },
        [FUSE_GETXATTR]        = { pt_getxattr, 0 },
        [FUSE_LISTXATTR]       = { pt_listxattr, 0 },
        [FUSE_REMOVEXATTR]     = { pt_removexattr, OP_MUTATES },
        [FUSE_FLUSH]           = { pt_flush, 0 },
        [FUSE_INIT]            = { op_init, OP_BEFORE_INIT },
        [FUSE_OPENDIR]         = { pt_opendir, 0 },
        [FUSE_READDIR]         = { pt_readdir, 0 },
        [FUSE_RELEASEDIR]      = { pt_releasedir, 0 },
        [FUSE_FSYNCDIR]        = { pt_fsyncdir, 0 },
        [FUSE_GETLK]           = { pt_getlk, 0 },
        [FUSE_SETLK]           = { pt_setlk, 0 },
        [FUSE_SETLKW]          = { pt_setlkw, 0 },
        [FUSE_ACCESS]          = { pt_access, 0 },
        [FUSE_CREATE]          = { pt_create, OP_MUTATES },
        [FUSE_INTERRUPT]       = { op_interrupt, OP_BEFORE_INIT },
        [FUSE_DESTROY]         = { op_destroy, 0 },
        [FUSE_BATCH_FORGET]    = { pt_batch_forget, 0 },
        [FUSE_FALLOCATE]       = { pt_fallocate, OP_MUTATES },
        [FUSE_READDIRPLUS]     = { pt_readdirplus, 0 },
        [FUSE_RENAME2]         = { pt_rename2, OP_MUTATES },
        [FUSE_LSEEK]           = { pt_lseek, 0 },
        [FUSE_COPY_FILE_RANGE] = { pt_copy_file_range, OP_MUTATES },
        [FUSE_SYNCFS]          = { pt_syncfs, 0 },
        [FUSE_TMPFILE]         = { pt_tmpfile, OP_MUTATES },
};

/* ---- session ---- */

/* Every inode the guest knows holds an O_PATH fd: a tree of a few thousand
 * files needs more than the usual soft limit of 1024, so take the hard limit
 * (as virtiofsd does).  Process-wide, once. */
static void raise_fd_limit(void)
{
        struct rlimit rl;
        rlim_t want;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 1048576 ? 1048576 : rl.rlim_max;
        if (rl.rlim_cur >= want)
                return;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_warning("cannot raise the open file limit to %llu: %s (large folders may fail with EMFILE)",
                            (unsigned long long)want, strerror(errno));
        else
                log_debug("open file limit raised to %llu", (unsigned long long)want);
}

int fs_session_new(const struct fs_options *opts, int root_fd, struct stats *stats,
                   struct fs_session **ret)
{
        struct fs_session *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->proc_fd = confine_open_proc_fd();
        if (s->proc_fd < 0) {
                r = s->proc_fd;
                log_error("Cannot open /proc/self/fd (is /proc mounted?): %s", strerror(-r));
                free(s);
                return r;
        }
        r = inode_table_new(root_fd, &s->inodes);
        if (r < 0) {
                close(s->proc_fd);
                free(s);
                return r;
        }
        r = handle_table_new(s->inodes, &s->handles);
        if (r < 0) {
                inode_table_free(s->inodes);   /* closes root_fd */
                close(s->proc_fd);
                free(s);
                return r;
        }
        s->stats = stats;
        idmap_init(&s->idmap, opts);
        s->cache = opts->cache;
        s->xattr = opts->xattr;
        switch (s->cache) {
        case FS_CACHE_ALWAYS: s->timeout_sec = 86400; break;
        case FS_CACHE_NEVER:  s->timeout_sec = 0; break;
        default:              s->timeout_sec = 1; break;
        }
        atomic_init(&s->readonly, opts->readonly);
        atomic_init(&s->initialized, false);
        pthread_mutex_init(&s->wait_mutex, NULL);
        {
                pthread_condattr_t ca;

                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&s->wait_cond, &ca);
                pthread_condattr_destroy(&ca);
        }
        /* The guest's umask comes with each create (DONT_MASK); ours must not add to it. */
        umask(0);
        raise_fd_limit();
        (void)confine_have_openat2();
        *ret = s;
        return 0;
}

void fs_session_reset(struct fs_session *s)
{
        pt_cancel_waiters(s);
        handle_release_all(s->handles);
        inode_forget_all(s->inodes);
        atomic_store(&s->initialized, false);
}

void fs_session_interrupt_deferred(struct fs_session *s)
{
        pt_interrupt_all(s);
}

void fs_session_free(struct fs_session *s)
{
        if (!s)
                return;
        fs_session_reset(s);
        handle_table_free(s->handles);
        inode_table_free(s->inodes);
        close(s->proc_fd);
        pthread_mutex_destroy(&s->wait_mutex);
        pthread_cond_destroy(&s->wait_cond);
        free(s);
}

void fs_session_set_readonly(struct fs_session *s, bool readonly)
{
        atomic_store(&s->readonly, readonly);
}

bool fs_session_get_readonly(struct fs_session *s)
{
        return atomic_load(&s->readonly);
}

/* ---- workers ---- */

int fs_worker_new(struct fs_session *s, unsigned queue_index, struct fs_worker **ret)
{
        struct fs_worker *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->s = s;
        w->queue_index = queue_index;
        w->scratch = malloc(FREQ_SCRATCH_SIZE);
        w->buf = malloc(FREQ_XATTR_SIZE_MAX);
        w->iov = calloc(FREQ_MAX_IOV, sizeof(*w->iov));
        if (!w->scratch || !w->buf || !w->iov) {
                fs_worker_free(w);
                return -ENOMEM;
        }
        *ret = w;
        return 0;
}

void fs_worker_free(struct fs_worker *w)
{
        if (!w)
                return;
        free(w->scratch);
        free(w->buf);
        free(w->iov);
        free(w);
}

void fs_worker_set_complete(struct fs_worker *w, fs_complete_fn fn, void *userdata)
{
        w->complete = fn;
        w->complete_data = userdata;
}

/* ---- protocol ---- */

static int op_init(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;
        /* 7.36+ kernels send 64 bytes; older ones the first 16. */
        const struct fuse_init_in *in = freq_arg(r, offsetof(struct fuse_init_in, flags2));
        struct fuse_init_out out = { .major = FUSE_KERNEL_VERSION };
        uint64_t offered, want = FS_INIT_FLAGS;

        if (!in)
                return -EINVAL;
        if (in->major < FUSE_KERNEL_VERSION)
                return -EPROTO;
        if (in->major > FUSE_KERNEL_VERSION) {
                /* Tell the kernel our major; it sends a new INIT. */
                freq_reply(r, &out, FUSE_COMPAT_INIT_OUT_SIZE);
                return 0;
        }
        if (in->minor < FS_MIN_MINOR)
                return -EPROTO;
        if (atomic_load(&s->initialized))
                return -EPROTO;   /* a second INIT without DESTROY */

        offered = in->flags;
        if ((in->flags & FUSE_INIT_EXT) && r->arg_len >= sizeof(*in))
                offered |= (uint64_t)in->flags2 << 32;
        if (s->cache != FS_CACHE_NEVER)
                want |= FUSE_CACHE_SYMLINKS;
        if (s->cache == FS_CACHE_AUTO)
                want |= FUSE_AUTO_INVAL_DATA;

        out.minor = in->minor < FUSE_KERNEL_MINOR_VERSION ? in->minor : FUSE_KERNEL_MINOR_VERSION;
        out.max_readahead = in->max_readahead;
        out.flags = (uint32_t)(want & offered);
        out.flags2 = 0;   /* nothing of ours lives above bit 31 */
        out.max_background = 64;
        out.congestion_threshold = 48;
        out.max_write = FREQ_MAX_WRITE;
        out.time_gran = 1;
        out.max_pages = FS_MAX_PAGES;
        atomic_store(&s->proto_minor, out.minor);
        atomic_store(&s->initialized, true);
        log_info("FUSE session: guest %u.%u, flags 0x%x offered, 0x%x accepted", in->major,
                 in->minor, in->flags, out.flags);
        freq_reply(r, &out, out.minor < 23 ? FUSE_COMPAT_22_INIT_OUT_SIZE : sizeof(out));
        return 0;
}

static int op_destroy(struct fs_worker *w, struct freq *r)
{
        struct fs_session *s = w->s;

        /* Unmounted: every nodeid and fh the guest had is gone. */
        pt_cancel_waiters(s);
        handle_release_all(s->handles);
        inode_forget_all(s->inodes);
        atomic_store(&s->initialized, false);
        freq_reply(r, NULL, 0);
        return 0;
}

static int op_interrupt(struct fs_worker *w, struct freq *r)
{
        const struct fuse_interrupt_in *in = freq_arg(r, sizeof(*in));

        /* Only a SETLKW waiting for a lock can be interrupted (it ends with
         * EINTR); everything else runs to completion.  No reply either way. */
        if (in)
                pt_interrupt(w->s, in->unique);
        freq_reply_none(r);
        return 0;
}

void pt_request_done(struct fs_session *s, const struct freq *r, uint64_t start_usec)
{
        uint64_t now = stats_now_usec();

        stats_count_request(s->stats, r->in.opcode, r->error, now - start_usec);
        log_debug("unique=%llu %s nodeid=%llu -> %d (%zu bytes)",
                  (unsigned long long)r->in.unique, stats_opcode_name(r->in.opcode),
                  (unsigned long long)r->in.nodeid, r->error, r->reply_len);
}

size_t fs_process(struct fs_worker *w, const struct iovec *in, unsigned in_cnt,
                  const struct iovec *out, unsigned out_cnt, void *token)
{
        struct fs_session *s = w->s;
        struct freq r;
        int d, err = 0;

        w->start_usec = stats_now_usec();
        w->token = token;
        w->deferred = false;
        d = freq_decode(&r, w->scratch, FREQ_SCRATCH_SIZE, in, in_cnt, out, out_cnt);
        if (d == FREQ_DECODE_NO_REPLY) {
                log_debug("request shorter than a FUSE header (%zu bytes): dropped", r.in_size);
                stats_count_request(s->stats, 0, -EINVAL, 0);
                return 0;
        }
        if (d == FREQ_DECODE_ERROR) {
                err = r.error;
        } else {
                uint32_t opcode = r.in.opcode;
                const struct fs_op *op = opcode < sizeof(ops) / sizeof(ops[0]) ? &ops[opcode] : NULL;

                if (!op || !op->fn)
                        err = -ENOSYS;
                else if (!(op->flags & OP_BEFORE_INIT) && !atomic_load_explicit(&s->initialized, memory_order_acquire))
                        err = -EIO;
                else if ((op->flags & OP_MUTATES) && fs_session_get_readonly(s))
                        err = -EROFS;
                else
                        err = op->fn(w, &r);
        }
        if (w->deferred)
                return FS_PROCESS_DEFERRED;
        if (!r.replied) {
                /* FORGET-like requests never reply, not even with an error. */
                if (r.in.opcode == FUSE_FORGET || r.in.opcode == FUSE_BATCH_FORGET ||
                    r.in.opcode == FUSE_INTERRUPT)
                        freq_reply_none(&r);
                else
                        freq_reply_error(&r, err < 0 ? err : -EIO);
        }
        pt_request_done(s, &r, w->start_usec);
        return r.reply_len;
}
