/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuse-dispatch.c — the FUSE session (implements fs-session.h): struct
 * fs_session and the workers, fs_process() with the opcode table and its
 * per-op rules (inode lookup, read-only gate, INIT first, no-reply ops), INIT,
 * DESTROY and INTERRUPT.  The operations themselves are in pt-*.c.
 *
 * Behaviour worth knowing (the guest sees it):
 *  - INIT answers minor min(guest, 38), max_write 1 MiB, max_pages 256 — or
 *    more to a guest that asks FUSE_MAX_PAGES on request queues of more than
 *    260 entries (op_init_max_pages()) — and only flags we implement:
 *    ASYNC_READ, POSIX_LOCKS, FLOCK_LOCKS, ATOMIC_O_TRUNC, BIG_WRITES,
 *    DONT_MASK, DO_READDIRPLUS, READDIRPLUS_AUTO, ASYNC_DIO, PARALLEL_DIROPS,
 *    MAX_PAGES, plus CACHE_SYMLINKS unless --cache=never and AUTO_INVAL_DATA
 *    with --cache=auto.  Not offered:
 *    EXPORT_SUPPORT (".." lookups could leave a directory moved out of the
 *    share), WRITEBACK_CACHE, POSIX_ACL, HANDLE_KILLPRIV(_V2), SETXATTR_EXT,
 *    SECURITY_CTX, DAX.  In flags2 only CREATE_SUPP_GROUP (7.39), when run
 *    by root (its group joins the creator's credentials).
 *  - Without --xattr the four xattr requests answer ENOSYS, as virtiofsd
 *    does: the kernel then stops sending them (no per-write security.capability
 *    probe).
 *  - SETLKW on a contended lock returns FS_PROCESS_DEFERRED: a helper thread
 *    retries the non-blocking lock with a 1 → 20 ms backoff and replies through
 *    the worker's fs_complete_fn; INTERRUPT of it replies EINTR; a session reset
 *    stops it without a reply.
 *  - Run by the desktop user, files the guest creates belong to that user; run
 *    by root, the node-creating requests (OP_CREDS) run with the requester's
 *    fsuid/fsgid, so new files belong to the guest user (credentials.h says
 *    how guest users are kept apart in each mode).  main.c sets the process
 *    umask to 0 (the guest's umask comes with each create) and raises the open
 *    file limit.
 *  - The descriptors the guest makes us keep (inodes, open files, lock
 *    owners) stop FS_FD_RESERVE short of RLIMIT_NOFILE (which main.c raises
 *    to its hard limit): beyond, requests that need one fail with EMFILE, and
 *    the transport still has descriptors for what the frontend sends.
 *  - Requests before INIT (or after DESTROY) fail with EIO; unknown opcodes ENOSYS.
 *  - An INIT while a session is open is a new kernel after a guest reset: the
 *    old session's nodeids, handles, locks and waiting SETLKWs are dropped and
 *    the INIT is answered.  Refused and failed INITs are logged as warnings.
 *  - With a state (fs_session_state_create(), table-state.h) a successor takes
 *    up the session: same nodeids and fhs, no INIT needed; files reopened by
 *    name (a changed one answers ESTALE), open files reopened with their
 *    flags at the restore (one that cannot be answers EBADF).  Requests in
 *    flight at the crash run again only when that is harmless (OP_IDEMPOTENT);
 *    the others answer EIO. */
#include "fs-session.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "credentials.h"
#include "folder-index.h"
#include "log.h"
#include "pt-internal.h"
#include "pt-name.h"
#include "table-state.h"

#ifndef FUSE_TMPFILE
#define FUSE_TMPFILE 51
#endif

/* Descriptors a request needs besides one per page of READ/WRITE data
 * (Linux's virtio-fs reserves as many: FUSE_HEADER_OVERHEAD).  virtio-win
 * lays a WRITE out as one buffer, header + fuse_write_in + data, cut at page
 * boundaries: the data's pages plus up to 2 when the buffer does not start on
 * a page; the 24-byte reply may straddle a page boundary: 2 more.  A READ:
 * an 80-byte request (up to 2) and reply header + data (the pages + up to 2). */
#define FS_HEADER_DESCS 4

/* Descriptors of RLIMIT_NOFILE the guest's inodes and open files leave to
 * the transport (pt_fd_keep()): what a frontend may send or the main loop
 * open while the guest holds everything else — memory regions (one fd each),
 * a ring set up again (3), up to 8 on one message, the next connection.  A
 * quarter of the limit when that is smaller (tiny limits, in tests). */
#define FS_FD_RESERVE 64
/* The oldest protocol we speak: 7.12 brought umask and the current entry/attr sizes. */
#define FS_MIN_MINOR 12

/* Flags we offer in INIT; each one is implemented (see the report in README/man). */
#define FS_INIT_FLAGS (FUSE_ASYNC_READ | FUSE_POSIX_LOCKS | FUSE_ATOMIC_O_TRUNC |          \
                       FUSE_BIG_WRITES | FUSE_DONT_MASK | FUSE_FLOCK_LOCKS |              \
                       FUSE_DO_READDIRPLUS | FUSE_READDIRPLUS_AUTO | FUSE_ASYNC_DIO |     \
                       FUSE_PARALLEL_DIROPS | FUSE_MAX_PAGES)

/* FUSE 7.39 (not in every UAPI header yet): node-creating requests carry the
 * creator's supplementary group that matters (credentials.h). */
#define FS_CREATE_SUPP_GROUP (1ULL << 34)

struct fs_session {
        struct pt_fs fs;              /* what the handlers see */
        atomic_bool initialized;      /* INIT answered, no DESTROY since */
        atomic_bool supp_group;       /* FS_CREATE_SUPP_GROUP negotiated */
        _Atomic uint32_t proto_minor; /* negotiated FUSE minor version */
        /* Sizes of the rings as they started (fs_session_set_queue_size()); 0 = unknown.
         * A ring that went away keeps its entry: every ring serving now has
         * set its own, so the smallest can only err on the small side. */
        _Atomic uint32_t queue_size[FS_MAX_QUEUES + 1];
        /* INIT warnings, limited: a guest can send INITs in a loop. */
        pthread_mutex_t init_log_mutex;
        uint64_t init_log_window_usec;
        unsigned init_log_count;
        /* What a successor takes up (fs_session_state_create()); NULL without. */
        struct tstate *state;
        struct tstate_init init_rec;  /* the INIT answered last (for a state made later) */
};

struct fs_worker {
        struct fs_session *s;
        unsigned queue_index;
        fs_complete_fn complete;
        void *complete_data;
        /* Scratch, so that no request allocates. */
        uint8_t *scratch;             /* FREQ_SCRATCH_SIZE: copied arguments */
        uint8_t *buf;                 /* FREQ_XATTR_SIZE_MAX: xattr values, readlink, dirents */
        struct iovec *iov;            /* FREQ_MAX_IOV: READ/WRITE slices of guest buffers */
};

static struct fs_session *session_of(struct pt_fs *fs)
{
        return container_of(fs, struct fs_session, fs);
}

enum {
        OP_MUTATES = 1 << 0,      /* fails with EROFS on a read-only share */
        OP_BEFORE_INIT = 1 << 1,
        OP_INODE = 1 << 2,        /* the handler gets the inode of in.nodeid (else EBADF) */
        OP_DIR = 1 << 3,          /* ... and it must be a directory (else ENOTDIR) */
        OP_NO_REPLY = 1 << 4,     /* FORGET-like: never a reply, not even an error */
        OP_XATTR = 1 << 5,        /* ENOSYS without --xattr */
        OP_CREDS = 1 << 6,        /* makes a node: runs as the requester when we are root */
        /* Run again after a crash when it was in flight (fs_process_again()):
         * running it twice does no harm.  A LOOKUP (READDIRPLUS) the dead
         * worker had counted is counted twice: a leaked lookup, never an
         * underflow.  An OPEN(DIR) it had answered leaks a handle until the
         * session ends.  RELEASE(DIR) twice: the second finds no fh (fhs carry
         * generations).  Per request (replay_allowed()): WRITE not through an
         * O_APPEND handle, SETATTR without a size, OPEN without O_TRUNC, INIT
         * while no session is open (one that opened the session taken up is
         * answered again as it was).  Not replayed, answered EIO: what makes,
         * removes or renames a name, xattr changes, locks (they died with the
         * worker), FALLOCATE, COPY_FILE_RANGE; FORGETs are dropped (a leaked
         * lookup count, where twice could take a nodeid the guest holds). */
        OP_IDEMPOTENT = 1 << 7,
};

struct fs_op {
        pt_handler_fn fn;
        unsigned flags;
};

static int op_init(struct pt_fs *fs, struct freq *r, struct inode *unused);
static int op_destroy(struct pt_fs *fs, struct freq *r, struct inode *unused);
static int op_interrupt(struct pt_fs *fs, struct freq *r, struct inode *unused);

#define I OP_INODE
#define D (OP_INODE | OP_DIR)
#define M OP_MUTATES
#define X (OP_INODE | OP_XATTR)
#define C OP_CREDS
#define R OP_IDEMPOTENT

static const struct fs_op ops[] = {
        [FUSE_LOOKUP]          = { pt_lookup, D | R },
        [FUSE_FORGET]          = { pt_forget, OP_NO_REPLY },
        [FUSE_GETATTR]         = { pt_getattr, I | R },
        [FUSE_SETATTR]         = { pt_setattr, I | M | R },
        [FUSE_READLINK]        = { pt_readlink, I | R },
        [FUSE_SYMLINK]         = { pt_symlink, D | M | C },
        [FUSE_MKNOD]           = { pt_mknod, D | M | C },
        [FUSE_MKDIR]           = { pt_mkdir, D | M | C },
        [FUSE_UNLINK]          = { pt_unlink, D | M },
        [FUSE_RMDIR]           = { pt_rmdir, D | M },
        [FUSE_RENAME]          = { pt_rename, D | M },
        [FUSE_LINK]            = { pt_link, D | M },
        [FUSE_OPEN]            = { pt_open, I | R },        /* EROFS for write opens, inside */
        [FUSE_READ]            = { pt_read, R },
        [FUSE_WRITE]           = { pt_write, M | R },
        [FUSE_STATFS]          = { pt_statfs, I | R },
        [FUSE_RELEASE]         = { pt_release, R },
        [FUSE_FSYNC]           = { pt_fsync, R },
        [FUSE_SETXATTR]        = { pt_setxattr, X | M },
        [FUSE_GETXATTR]        = { pt_getxattr, X | R },
        [FUSE_LISTXATTR]       = { pt_listxattr, X | R },
        [FUSE_REMOVEXATTR]     = { pt_removexattr, X | M },
        [FUSE_FLUSH]           = { pt_flush, R },
        [FUSE_INIT]            = { op_init, OP_BEFORE_INIT | R },
        [FUSE_OPENDIR]         = { pt_opendir, D | R },
        [FUSE_READDIR]         = { pt_readdir, R },
        [FUSE_RELEASEDIR]      = { pt_releasedir, R },
        [FUSE_FSYNCDIR]        = { pt_fsyncdir, R },
        [FUSE_GETLK]           = { pt_getlk, I | R },
        [FUSE_SETLK]           = { pt_setlk, I },
        [FUSE_SETLKW]          = { pt_setlkw, I },
        [FUSE_ACCESS]          = { pt_access, I | R },
        [FUSE_CREATE]          = { pt_create, D | M | C },
        [FUSE_INTERRUPT]       = { op_interrupt, OP_BEFORE_INIT | OP_NO_REPLY | R },
        [FUSE_DESTROY]         = { op_destroy, R },
        [FUSE_BATCH_FORGET]    = { pt_batch_forget, OP_NO_REPLY },
        [FUSE_FALLOCATE]       = { pt_fallocate, M },
        [FUSE_READDIRPLUS]     = { pt_readdirplus, R },
        [FUSE_RENAME2]         = { pt_rename2, D | M },
        [FUSE_LSEEK]           = { pt_lseek, R },
        [FUSE_COPY_FILE_RANGE] = { pt_copy_file_range, M },
        [FUSE_SYNCFS]          = { pt_syncfs, R },
        [FUSE_TMPFILE]         = { pt_tmpfile, D | M | C },
};

#undef I
#undef D
#undef M
#undef X
#undef C
#undef R

/* ---- session ---- */

/* Read once: main.c has raised the soft limit before the session exists. */
static int fd_ceiling(void)
{
        struct rlimit rl;
        rlim_t reserve;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= INT_MAX)
                return INT_MAX;
        reserve = rl.rlim_cur / 4 < FS_FD_RESERVE ? rl.rlim_cur / 4 : FS_FD_RESERVE;
        return (int)(rl.rlim_cur - reserve);
}

static void session_freep(struct fs_session **s)
{
        fs_session_free(*s);
}

int fs_session_new(const struct fs_options *opts, int root_fd, struct stats *stats,
                   struct fs_session **ret)
{
        _cleanup_close_ int root = root_fd;
        _cleanup_(session_freep) struct fs_session *s = NULL;
        struct pt_fs *fs;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        fs = &s->fs;
        pt_lock_waiters_init(&fs->waiters);
        pthread_mutex_init(&s->init_log_mutex, NULL);
        fs->proc_fd = confine_open_proc_fd();
        if (fs->proc_fd < 0) {
                r = fs->proc_fd;
                log_error("Cannot open /proc/self/fd (is /proc mounted?): %s", strerror(-r));
                return r;
        }
        r = inode_table_new(root, &fs->inodes);
        if (r < 0)
                return r;
        TAKE_FD(root);   /* the table's now */
        inode_table_set_destroy_fn(fs->inodes, pt_lock_owners_free);
        inode_fds_set_max(fs->inodes, opts->max_inode_fds);
        r = handle_table_new(fs->inodes, &fs->handles);
        if (r < 0)
                return r;
        fs->stats = stats;
        idmap_init(&fs->idmap, opts);
        policy_init(&fs->policy, opts);
        fs->cache = opts->cache;
        fs->xattr = opts->xattr;
        switch (fs->cache) {
        case FS_CACHE_ALWAYS: fs->timeout_sec = 86400; break;
        case FS_CACHE_NEVER:  fs->timeout_sec = 0; break;
        default:              fs->timeout_sec = 1; break;
        }
        atomic_init(&fs->readonly, opts->readonly);
        atomic_init(&fs->name_modes, pt_name_modes_of(opts->names, opts->case_mode));
        /* before the sandbox: its hash key comes from getrandom */
        fs->case_index = findex_new(NULL);
        if (!fs->case_index)
                return -ENOMEM;
        atomic_init(&fs->max_io, FREQ_MAX_WRITE);
        fs->fd_ceiling = fd_ceiling();
        atomic_init(&s->initialized, false);
        (void) confine_have_openat2();
        *ret = TAKE_PTR(s);
        return 0;
}

/* Forgets everything the guest knew: its nodeids but the root's, its handles,
 * its waiting SETLKWs and leased opens (dropped without a reply). */
static void session_forget_guest(struct fs_session *s)
{
        pt_lock_cancel_waiters(&s->fs);
        handle_release_all(s->fs.handles);
        inode_forget_all(s->fs.inodes);
}

void fs_session_reset(struct fs_session *s)
{
        session_forget_guest(s);
        atomic_store(&s->initialized, false);
        if (s->state)
                tstate_clear_init(s->state);
}

void fs_session_finish_deferred(struct fs_session *s, int queue_index)
{
        pt_lock_finish_waiters(&s->fs, queue_index);
}

void fs_session_interrupt_deferred(struct fs_session *s)
{
        fs_session_finish_deferred(s, -1);
}

void fs_session_set_queue_size(struct fs_session *s, unsigned queue_index, unsigned num)
{
        if (queue_index <= FS_MAX_QUEUES)
                atomic_store_explicit(&s->queue_size[queue_index], num, memory_order_relaxed);
}

int fs_session_proc_fd(const struct fs_session *s)
{
        return s->fs.proc_fd;
}

bool fs_session_is_initialized(struct fs_session *s)
{
        return atomic_load(&s->initialized);
}

void fs_session_free(struct fs_session *s)
{
        if (!s)
                return;
        /* Also for a half-made session (fs_session_new() failing). */
        pt_lock_cancel_waiters(&s->fs);
        /* The state stays as it is for a successor: freeing is not RELEASE. */
        if (s->fs.handles)
                handle_table_set_state(s->fs.handles, NULL);
        if (s->fs.inodes)
                inode_table_set_state(s->fs.inodes, NULL);
        handle_table_free(s->fs.handles);
        inode_table_free(s->fs.inodes);
        findex_free(s->fs.case_index);
        tstate_free(s->state);
        if (s->fs.proc_fd >= 0)
                (void) close(s->fs.proc_fd);
        pt_lock_waiters_fini(&s->fs.waiters);
        pthread_mutex_destroy(&s->init_log_mutex);
        free(s);
}

void fs_session_set_readonly(struct fs_session *s, bool readonly)
{
        atomic_store(&s->fs.readonly, readonly);
}

bool fs_session_get_readonly(struct fs_session *s)
{
        return atomic_load(&s->fs.readonly);
}

void fs_session_set_names(struct fs_session *s, enum fs_names_mode names, enum fs_case_mode case_mode)
{
        atomic_store(&s->fs.name_modes, pt_name_modes_of(names, case_mode));
}

void fs_session_get_names(struct fs_session *s, enum fs_names_mode *ret_names,
                          enum fs_case_mode *ret_case)
{
        unsigned modes = atomic_load(&s->fs.name_modes);

        *ret_names = (modes & PT_NAMES_WINDOWS) ? FS_NAMES_WINDOWS : FS_NAMES_POSIX;
        *ret_case = (modes & PT_CASE_INSENSITIVE) ? FS_CASE_INSENSITIVE : FS_CASE_SENSITIVE;
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

#define INIT_LOG_BURST 10
#define INIT_LOG_WINDOW_USEC (60 * 1000000ull)

/* A warning about INIT: at most INIT_LOG_BURST a minute, then one line saying so. */
static void init_warning(struct fs_session *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void init_warning(struct fs_session *s, const char *fmt, ...)
{
        uint64_t now = stats_now_usec();
        unsigned n;
        char msg[256];
        va_list ap;

        pthread_mutex_lock(&s->init_log_mutex);
        if (s->init_log_count == 0 || now - s->init_log_window_usec >= INIT_LOG_WINDOW_USEC) {
                s->init_log_window_usec = now;
                s->init_log_count = 0;
        }
        n = ++s->init_log_count;
        pthread_mutex_unlock(&s->init_log_mutex);
        if (n > INIT_LOG_BURST + 1)
                return;
        if (n == INIT_LOG_BURST + 1) {
                log_warning("FUSE INIT: more warnings this minute are not logged");
                return;
        }
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_warning("FUSE INIT: %s", msg);
}

/* Pages per READ/WRITE for a guest that asked FUSE_MAX_PAGES: as many as the
 * smallest request queue carries at one page per descriptor plus
 * FS_HEADER_DESCS (a queue's size bounds a chain, indirect or not), up to
 * what one indirect table of ours takes; never fewer than every guest gets.
 * Linux caps it itself (at 256 and its queue size - 4), so it is Windows
 * guests, which cut requests at max_write, that make fewer round trips. */
static uint32_t op_init_max_pages(struct fs_session *s)
{
        uint32_t smallest = 0;

        for (unsigned i = 1; i <= FS_MAX_QUEUES; i++) {
                uint32_t n = atomic_load_explicit(&s->queue_size[i], memory_order_relaxed);

                if (n && (!smallest || n < smallest))
                        smallest = n;
        }
        if (smallest <= FREQ_MAX_PAGES_DEFAULT + FS_HEADER_DESCS)
                return FREQ_MAX_PAGES_DEFAULT;
        smallest -= FS_HEADER_DESCS;
        return smallest < FREQ_MAX_PAGES_LIMIT ? smallest : FREQ_MAX_PAGES_LIMIT;
}

static int op_init(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        struct fs_session *s = session_of(fs);
        /* 7.36+ kernels send 64 bytes; older ones the first 16. */
        const struct fuse_init_in *in = freq_arg(r, offsetof(struct fuse_init_in, flags2));
        struct fuse_init_out out = { .major = FUSE_KERNEL_VERSION };
        uint64_t offered, want = FS_INIT_FLAGS;
        uint32_t max_pages = FREQ_MAX_PAGES_DEFAULT;

        if (!in) {
                init_warning(s, "refused: %zu argument bytes, %zu needed", r->arg_len,
                             offsetof(struct fuse_init_in, flags2));
                return -EINVAL;
        }
        if (in->major > FUSE_KERNEL_VERSION) {
                /* Tell the kernel our major; it sends a new INIT. */
                log_info("FUSE INIT: the guest offers %u.%u, answering with major %u", in->major,
                         in->minor, FUSE_KERNEL_VERSION);
                return pt_reply(r, &out, FUSE_COMPAT_INIT_OUT_SIZE);
        }
        if (in->major < FUSE_KERNEL_VERSION || in->minor < FS_MIN_MINOR) {
                init_warning(s, "refused: the guest speaks FUSE %u.%u, sluice-fs needs %u.%u or later",
                             in->major, in->minor, FUSE_KERNEL_VERSION, FS_MIN_MINOR);
                return -EPROTO;
        }
        if (atomic_load(&s->initialized)) {
                /* A new kernel mounts without the old one having unmounted: the
                 * guest was reset (sysrq b, virsh reset, a crash).  Nothing the
                 * old kernel knew is valid any more, and its waiting SETLKWs must
                 * not write into memory that now belongs to the new one. */
                init_warning(s, "a new session without DESTROY (guest reset?): forgetting %zu inodes and %zu open files of the old one",
                             inode_count(fs->inodes) - 1, handle_count(fs->handles));
                session_forget_guest(s);
        }

        offered = in->flags;
        if ((in->flags & FUSE_INIT_EXT) && r->arg_len >= sizeof(*in))
                offered |= (uint64_t)in->flags2 << 32;
        if (fs->cache != FS_CACHE_NEVER)
                want |= FUSE_CACHE_SYMLINKS;
        if (fs->cache == FS_CACHE_AUTO)
                want |= FUSE_AUTO_INVAL_DATA;
        /* Only a root worker switches credentials: then the group is worth having. */
        if (creds_root_mode())
                want |= FS_CREATE_SUPP_GROUP;

        out.minor = in->minor < FUSE_KERNEL_MINOR_VERSION ? in->minor : FUSE_KERNEL_MINOR_VERSION;
        out.max_readahead = in->max_readahead;
        out.flags = (uint32_t)(want & offered);
        out.flags2 = (uint32_t)((want & offered) >> 32);
        if (out.flags2)
                out.flags |= FUSE_INIT_EXT;   /* the kernel reads flags2 only with it */
        atomic_store(&s->supp_group, (want & offered & FS_CREATE_SUPP_GROUP) != 0);
        out.max_background = 64;
        out.congestion_threshold = 48;
        if (out.flags & FUSE_MAX_PAGES)
                max_pages = op_init_max_pages(s);
        out.max_write = max_pages * FREQ_PAGE_SIZE;
        out.time_gran = 1;
        out.max_pages = (uint16_t)max_pages;
        (void) freq_reply(r, &out, out.minor < 23 ? FUSE_COMPAT_22_INIT_OUT_SIZE : sizeof(out));
        if (r->error < 0 || r->reply_len == 0) {
                init_warning(s, "failed: the reply does not fit the guest's %zu-byte buffer", r->out_size);
                atomic_store(&s->initialized, false);
                if (s->state)
                        tstate_clear_init(s->state);
                return 0;
        }
        /* Queue threads run INITs one at a time: the kernel sends one. */
        s->init_rec = (struct tstate_init){
                .minor = out.minor,
                .max_write = out.max_write,
                .flags = out.flags,
                .flags2 = out.flags2,
                .supp_group = atomic_load(&s->supp_group),
        };
        if (s->state)
                tstate_set_init(s->state, &s->init_rec);
        atomic_store(&s->proto_minor, out.minor);
        atomic_store(&fs->max_io, out.max_write);
        atomic_store(&s->initialized, true);
        log_info("FUSE session: guest %u.%u, flags 0x%x offered, 0x%x accepted, max_write %u",
                 in->major, in->minor, in->flags, out.flags, out.max_write);
        return 0;
}

static int op_destroy(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        /* Unmounted: every nodeid and fh the guest had is gone. */
        fs_session_reset(session_of(fs));
        return pt_reply_ok(r);
}

static int op_interrupt(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        const struct fuse_interrupt_in *in = freq_arg(r, sizeof(*in));

        /* Only a request waiting for a lock or a lease (SETLKW, a leased
         * open) can be interrupted (it ends with EINTR); everything else
         * runs to completion.  No reply either way. */
        if (in)
                pt_lock_interrupt(fs, in->unique);
        return pt_reply_none(r);
}

static const struct fs_op *op_of(uint32_t opcode)
{
        return opcode < ELEMENTSOF(ops) && ops[opcode].fn ? &ops[opcode] : NULL;
}

/* Runs the handler of a decoded request under the table's rules; returns its
 * result (0: replied or deferred, < 0: the error to reply). */
static int dispatch(struct fs_session *s, struct freq *r, const struct fs_op *op)
{
        _cleanup_iref_ i = { s->fs.inodes, NULL };

        if (!op)
                return -ENOSYS;
        r->name_modes = atomic_load_explicit(&s->fs.name_modes, memory_order_relaxed);
        if (!(op->flags & OP_BEFORE_INIT) &&
            !atomic_load_explicit(&s->initialized, memory_order_acquire))
                return -EIO;
        if ((op->flags & OP_XATTR) && !s->fs.xattr)
                return -ENOSYS;
        if ((op->flags & OP_MUTATES) && pt_is_readonly(&s->fs))
                return -EROFS;
        if (op->flags & OP_INODE) {
                /* Referenced until the handler is done: a FORGET on another queue cannot close it. */
                i.p = inode_get(s->fs.inodes, r->in.nodeid);
                if (!i.p)
                        return -EBADF;
                if ((op->flags & OP_DIR) && i.p->type != S_IFDIR)
                        return -ENOTDIR;
        }
        if (op->flags & OP_CREDS) {
                /* Until the handler returns: the node and its lookup are the requester's doing. */
                _cleanup_creds_ creds = { 0 };
                uint32_t group;
                gid_t host_group;
                int n = atomic_load(&s->supp_group) ? freq_ext_groups(r, &group, 1) : 0, err;

                if (n < 0)
                        return n;
                if (n > 0)
                        host_group = idmap_gid_to_host(&s->fs.idmap, group);
                err = creds_enter(idmap_uid_to_host(&s->fs.idmap, r->in.uid),
                                  idmap_gid_to_host(&s->fs.idmap, r->in.gid),
                                  n > 0 ? &host_group : NULL, (size_t)n, &creds);
                return err < 0 ? err : op->fn(&s->fs, r, i.p);
        }
        return op->fn(&s->fs, r, i.p);
}

/* A decoded request gets its worker's scratch buffers and says where its
 * reply goes (and, deferred, how it completes). */
static void worker_bind(struct fs_worker *w, struct freq *r, void *token, uint64_t start_usec)
{
        r->buf = w->buf;
        r->iov = w->iov;
        r->origin = (struct freq_origin) {
                .complete = w->complete,
                .complete_data = w->complete_data,
                .token = token,
                .queue_index = (int) w->queue_index,
                .stats = w->s->fs.stats,
                .start_usec = start_usec,
        };
}

size_t fs_process(struct fs_worker *w, const struct iovec *in, unsigned in_cnt,
                  const struct iovec *out, unsigned out_cnt, void *token)
{
        struct fs_session *s = w->s;
        const struct fs_op *op;
        struct freq r;
        uint64_t start = stats_now_usec();
        int d, err;

        d = freq_decode(&r, w->scratch, FREQ_SCRATCH_SIZE, in, in_cnt, out, out_cnt);
        if (d == FREQ_DECODE_NO_REPLY) {
                log_debug("request shorter than a FUSE header (%zu bytes): dropped", r.in_size);
                stats_count_request(s->fs.stats, 0, -EINVAL, 0);
                return 0;
        }
        worker_bind(w, &r, token, start);
        op = op_of(r.in.opcode);
        err = d == FREQ_DECODE_ERROR ? r.error : dispatch(s, &r, op);
        if (r.deferred)
                return FS_PROCESS_DEFERRED;
        if (op && (op->flags & OP_NO_REPLY)) {
                if (!r.replied)
                        freq_reply_none(&r);
        } else if (err < 0) {
                if (r.replied)
                        log_error("%s: handler replied and failed (%d); reply kept",
                                  stats_opcode_name(r.in.opcode), err);
                else
                        freq_reply_error(&r, err);
        } else if (!r.replied) {
                log_error("%s: handler neither replied nor failed", stats_opcode_name(r.in.opcode));
                freq_reply_error(&r, -EIO);
        }
        freq_done(&r);
        return r.reply_len;
}

/* ---- resuming after a crash or an upgrade ---- */

int fs_session_state_create(struct fs_session *s, int *ret_fd)
{
        struct tstate *st;
        int r;

        if (s->state)
                return -EBUSY;
        r = tstate_new(&st, ret_fd);
        if (r < 0)
                return r;
        s->state = st;
        inode_table_set_state(s->fs.inodes, st);
        handle_table_set_state(s->fs.handles, st);
        if (atomic_load(&s->initialized))
                tstate_set_init(st, &s->init_rec);
        return 0;
}

/* A rebuilt handle's file, opened again the way OPEN and OPENDIR do. */
static int reopen_handle(void *data, struct inode *inode, int open_flags, bool is_dir)
{
        struct pt_fs *fs = data;
        int path_fd = inode_reopen(fs->inodes, inode), fd;

        if (path_fd < 0)
                return path_fd;
        if (is_dir)
                open_flags = O_RDONLY | O_DIRECTORY;
        fd = pt_fd_keep(fs, confine_reopen(fs->proc_fd, path_fd, open_flags | O_NONBLOCK));
        if (fd >= 0 && !(open_flags & O_NONBLOCK) && fcntl(fd, F_SETFL, open_flags & ~O_NONBLOCK) < 0) {
                int err = -errno;

                (void) close(fd);
                return err;
        }
        return fd;
}

int fs_session_state_restore(struct fs_session *s, int fd, char *why, size_t why_size)
{
        struct tstate *st;
        struct tstate_init init;
        bool have_init;
        int r;

        if (why_size)
                why[0] = '\0';
        if (s->state) {
                (void) close(fd);
                (void) snprintf(why, why_size, "the session keeps a state already");
                return -EBUSY;
        }
        r = tstate_open(fd, &st, why, why_size);
        if (r < 0)
                return r;
        have_init = tstate_get_init(st, &init);
        if (have_init && (init.minor < FS_MIN_MINOR || init.minor > FUSE_KERNEL_MINOR_VERSION ||
                          init.max_write < FREQ_PAGE_SIZE ||
                          init.max_write > FREQ_MAX_PAGES_LIMIT * FREQ_PAGE_SIZE ||
                          init.max_write % FREQ_PAGE_SIZE || init.supp_group > 1 ||
                          (init.flags & ~(uint32_t)(FS_INIT_FLAGS | FUSE_CACHE_SYMLINKS |
                                                    FUSE_AUTO_INVAL_DATA | FUSE_INIT_EXT)) ||
                          (init.flags2 & ~(uint32_t)(FS_CREATE_SUPP_GROUP >> 32)))) {
                (void) snprintf(why, why_size, "the INIT record is not one this build answers");
                tstate_free(st);
                return -EBADMSG;
        }
        r = inode_table_restore(s->fs.inodes, st, why, why_size);
        if (r == 0)
                r = handle_table_restore(s->fs.handles, st, reopen_handle, &s->fs, why, why_size);
        if (r < 0) {
                /* Whatever was rebuilt goes: a fresh start. */
                handle_table_set_state(s->fs.handles, NULL);
                inode_table_set_state(s->fs.inodes, NULL);
                session_forget_guest(s);
                tstate_free(st);
                return r;
        }
        s->state = st;
        if (have_init) {
                s->init_rec = init;
                atomic_store(&s->proto_minor, init.minor);
                atomic_store(&s->supp_group, init.supp_group != 0);
                atomic_store(&s->fs.max_io, init.max_write);
                atomic_store(&s->initialized, true);
        }
        log_info("FUSE session taken up from the previous worker: %zu inodes, %zu open files%s",
                 inode_count(s->fs.inodes) - 1, handle_count(s->fs.handles),
                 have_init ? "" : " (before INIT)");
        return 0;
}

void fs_session_state_forget(struct fs_session *s)
{
        if (!s->state)
                return;
        handle_table_set_state(s->fs.handles, NULL);
        inode_table_set_state(s->fs.inodes, NULL);
        session_forget_guest(s);
        atomic_store(&s->initialized, false);
        tstate_free(s->state);
        s->state = NULL;
}

/* Per request: may this one of an OP_IDEMPOTENT opcode run again? */
static bool replay_allowed(struct fs_session *s, struct freq *r)
{
        switch (r->in.opcode) {
        case FUSE_WRITE: {
                const struct fuse_write_in *in = freq_arg(r, sizeof(*in));
                struct handle *h;
                bool append;

                if (!in)
                        return true;   /* answered EINVAL again: harmless */
                h = handle_get(s->fs.handles, in->fh, false);
                if (!h)
                        return true;   /* EBADF again */
                append = (h->open_flags & O_APPEND) != 0;
                handle_put(s->fs.handles, h);
                /* An append goes wherever the end is now: twice is twice. */
                return !append;
        }
        case FUSE_SETATTR: {
                const struct fuse_setattr_in *in = freq_arg(r, sizeof(*in));

                /* A size set again could cut what a later WRITE added. */
                return !in || !(in->valid & FATTR_SIZE);
        }
        case FUSE_OPEN: {
                const struct fuse_open_in *in = freq_arg(r, sizeof(*in));

                return !in || !(in->flags & O_TRUNC);
        }
        case FUSE_INIT:
                /* One that took effect would reset the session it opened:
                 * answered again instead (fs_process_again()). */
                return !atomic_load(&s->initialized);
        default:
                return true;
        }
}

size_t fs_process_again(struct fs_worker *w, const struct iovec *in, unsigned in_cnt,
                        const struct iovec *out, unsigned out_cnt, void *token,
                        bool *ret_replayed)
{
        struct fs_session *s = w->s;
        const struct fs_op *op;
        struct freq r;
        int d;

        d = freq_decode(&r, w->scratch, FREQ_SCRATCH_SIZE, in, in_cnt, out, out_cnt);
        op = d == FREQ_DECODE_NO_REPLY ? NULL : op_of(r.in.opcode);
        /* Malformed or unknown: the same error again, no harm. */
        if (d != 0 || !op || ((op->flags & OP_IDEMPOTENT) && replay_allowed(s, &r))) {
                *ret_replayed = true;
                return fs_process(w, in, in_cnt, out, out_cnt, token);
        }
        *ret_replayed = false;
        worker_bind(w, &r, token, stats_now_usec());
        if (r.in.opcode == FUSE_INIT) {
                /* The session it opened is the one taken up: the same answer again. */
                const struct fuse_init_in *ii = freq_arg(&r, offsetof(struct fuse_init_in, flags2));
                struct fuse_init_out o = {
                        .major = FUSE_KERNEL_VERSION,
                        .minor = s->init_rec.minor,
                        .max_readahead = ii ? ii->max_readahead : 0,
                        .flags = s->init_rec.flags,
                        .flags2 = s->init_rec.flags2,
                        .max_background = 64,
                        .congestion_threshold = 48,
                        .max_write = s->init_rec.max_write,
                        .time_gran = 1,
                        .max_pages = (uint16_t)(s->init_rec.max_write / FREQ_PAGE_SIZE),
                };

                *ret_replayed = true;
                (void) freq_reply(&r, &o, o.minor < 23 ? FUSE_COMPAT_22_INIT_OUT_SIZE : sizeof(o));
                freq_done(&r);
                return r.reply_len;
        }
        log_warning("%s (unique %llu) was in flight when the previous worker died: not run again, %s",
                    stats_opcode_name(r.in.opcode), (unsigned long long)r.in.unique,
                    op->flags & OP_NO_REPLY ? "dropped" : "answered EIO");
        if (op->flags & OP_NO_REPLY)
                freq_reply_none(&r);
        else
                freq_reply_error(&r, -EIO);
        freq_done(&r);
        return r.reply_len;
}
