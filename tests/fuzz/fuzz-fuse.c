/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-fuse.c — libFuzzer target: a stream of FUSE requests into
 * fs_process() against a scratch shared folder.
 *
 * Once per process: $TMPDIR/sluice-fuzz-fuse-XXXXXX/{share,outside}, where
 * outside/ holds a canary file the guest must never reach, a session on
 * share/ (--xattr; as root, with creds_init() as main.c does) and one
 * worker.  Per input: share/ is filled with a few things to find (a file, a
 * directory, a symlink out of the share, a FIFO), an INIT is answered, then
 * each record of the input is one request:
 *   u8  flags: bit 0 keep the header's len as given (else it is the record's
 *       length), bit 1 keep its unique (else a counter), bit 2 keep its
 *       uid/gid (else the process's), bits 3-5 the reply buffer size class,
 *       bit 6 send it without the harness's INIT first, bit 7 make the share
 *       read-only for this input (both: first record only; a read-only
 *       input that changes anything in share/ is an abort())
 *   u8  node: 0 keep the header's nodeid, else the (node-1)'th nodeid learnt
 *       from earlier replies of this input (the root when none)
 *   u8  handle: 0 keep, else the (handle-1)'th fh learnt (OPEN, CREATE,
 *       OPENDIR replies) written where the opcode carries its fh (RENAME and
 *       LINK: their second nodeid)
 *   u8  layout: low nibble n: the request split into separately allocated
 *       iovecs of n bytes (0: one); high nibble the same for a reply buffer
 *       of up to 4 KiB (a bigger one is cut into 1 + n slices of one buffer)
 *   u16 record length, then that many bytes: fuse_in_header + arguments
 * An input of odd length is served with --names=windows (the U+F0xx
 * decoding of every name, daemon/win-names.c), one of even length with
 * posix names; one whose length has bit 1 set with --case=insensitive (the
 * folded lookups of daemon/folder-index.c): the fuzzer changes lengths all
 * the time, so every mode gets every request (trailing bytes shorter than a
 * record header are ignored).
 * After every reply: it fits the buffer, its header's len is what
 * fs_process() returned, the unique is the request's, the error in
 * [-4095, 0].  After every input: the session is reset (deferred SETLKWs
 * end), share/ is emptied and refilled if the input changed anything in it,
 * nothing outside share/ changed (else abort()), and every 256 inputs the
 * fds are where they were.  Files stay under FZ_FILE_SIZE_MAX (fuzz-util.h). */
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "credentials.h"
#include "fs-session.h"
#include "fuzz-util.h"
#include "options.h"
#include "stats.h"

#define FZ_BIG_OUT   (1024 * 1024 + 4096)
#define FZ_MAX_IDS   32
#define FZ_MAX_IOV   256

static char base[4096], share[4096 + 8], outside[4096 + 8], canary[4096 + 16];
static struct fs_options opts;
static struct stats stats;
static struct fs_session *session;
static struct fs_worker *worker;
static uint8_t *big_out;
static struct stat base_st, outside_st, canary_st;
static unsigned long runs;
static unsigned fd_baseline;
static uint64_t unique_counter;

static uint64_t nodes[FZ_MAX_IDS], fhs[FZ_MAX_IDS];
static unsigned n_nodes, n_fhs;

/* A deferred request (SETLKW): its buffers live until it completes or the
 * session is reset, as the transport keeps a descriptor chain. */
struct pending {
        struct iovec *in, *out;
        unsigned in_cnt, out_cnt;
        struct pending *next;
};
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending *pending;

static const size_t out_sizes[8] = { FZ_BIG_OUT, 4096, 0, 8, 16, 120, 256, 65536 };

static void iov_free(struct iovec *v, unsigned n, bool owned)
{
        if (owned)
                for (unsigned i = 0; i < n; i++)
                        free(v[i].iov_base);
        free(v);
}

/* Splits [src, src+len) (or len bytes of 0xa5) into iovecs of `chunk`
 * bytes, each its own allocation, so that a read or write one byte past any
 * of them is an ASan report. */
static struct iovec *split(const uint8_t *src, size_t len, unsigned chunk, unsigned *ret_n)
{
        struct iovec *v;
        unsigned n;

        /* A big buffer in small pieces: no more than FZ_MAX_IOV of them. */
        if (chunk && len / chunk >= FZ_MAX_IOV)
                chunk = (unsigned)(len / FZ_MAX_IOV + 1);
        n = chunk ? (unsigned)((len + chunk - 1) / chunk) : 1;
        if (n == 0)
                n = 1;
        v = calloc(n, sizeof(*v));
        if (!v)
                abort();
        for (unsigned i = 0; i < n; i++) {
                size_t off = chunk ? (size_t)i * chunk : 0;
                size_t l = chunk ? (len - off < chunk ? len - off : chunk) : len;

                v[i].iov_base = malloc(l ? l : 1);
                v[i].iov_len = l;
                if (!v[i].iov_base)
                        abort();
                if (src && l)
                        memcpy(v[i].iov_base, src + off, l);
                else
                        memset(v[i].iov_base, 0xa5, l);
        }
        *ret_n = n;
        return v;
}

static size_t gather(const struct iovec *v, unsigned n, uint8_t *dst, size_t len)
{
        size_t done = 0;

        for (unsigned i = 0; i < n && done < len; i++) {
                size_t l = v[i].iov_len < len - done ? v[i].iov_len : len - done;

                memcpy(dst + done, v[i].iov_base, l);
                done += l;
        }
        return done;
}

static void on_complete(void *token, size_t len, void *userdata)
{
        struct pending *p = token;
        size_t out_len = 0;

        for (unsigned i = 0; i < p->out_cnt; i++)
                out_len += p->out[i].iov_len;
        if (len > out_len)
                abort();
        (void)userdata;
}

/* Remembers an id a reply handed out; when the list is full the oldest
 * goes (a guest forgets too). */
static unsigned next_slot;   /* reset with the lists, so that inputs replay alike */

static void remember(uint64_t *ids, unsigned *n, uint64_t id)
{
        bool known = false;

        for (unsigned i = 0; i < *n && !known; i++)
                known = ids[i] == id;
        if (id == 0 || known)
                return;
        if (*n < FZ_MAX_IDS)
                ids[(*n)++] = id;
        else
                ids[next_slot++ % FZ_MAX_IDS] = id;
}

static void learn(uint32_t opcode, const uint8_t *body, size_t len)
{
        switch (opcode) {
        case FUSE_LOOKUP: case FUSE_MKDIR: case FUSE_MKNOD: case FUSE_SYMLINK: case FUSE_LINK:
                if (len >= sizeof(struct fuse_entry_out))
                        remember(nodes, &n_nodes, ((const struct fuse_entry_out *)body)->nodeid);
                break;
        case FUSE_CREATE: case FUSE_TMPFILE:
                if (len >= sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out)) {
                        remember(nodes, &n_nodes, ((const struct fuse_entry_out *)body)->nodeid);
                        remember(fhs, &n_fhs,
                               ((const struct fuse_open_out *)(body + sizeof(struct fuse_entry_out)))->fh);
                }
                break;
        case FUSE_OPEN: case FUSE_OPENDIR:
                if (len >= sizeof(struct fuse_open_out))
                        remember(fhs, &n_fhs, ((const struct fuse_open_out *)body)->fh);
                break;
        case FUSE_READDIRPLUS:
                for (size_t pos = 0; pos + FUSE_NAME_OFFSET_DIRENTPLUS <= len;) {
                        const struct fuse_direntplus *d = (const void *)(body + pos);

                        if (d->dirent.namelen == 0 || d->dirent.namelen > 255)
                                break;
                        remember(nodes, &n_nodes, d->entry_out.nodeid);
                        pos += FUSE_DIRENTPLUS_SIZE(d);
                }
                break;
        }
}

/* Where the opcode's arguments carry a handle (or, for RENAME and LINK, a
 * second nodeid); -1 when they carry none. */
static int handle_offset(uint32_t opcode, bool *is_node)
{
        *is_node = false;
        switch (opcode) {
        case FUSE_GETATTR: case FUSE_SETATTR:
                return 8;
        case FUSE_READ: case FUSE_WRITE: case FUSE_RELEASE: case FUSE_RELEASEDIR:
        case FUSE_FLUSH: case FUSE_FSYNC: case FUSE_FSYNCDIR: case FUSE_READDIR:
        case FUSE_READDIRPLUS: case FUSE_GETLK: case FUSE_SETLK: case FUSE_SETLKW:
        case FUSE_FALLOCATE: case FUSE_LSEEK: case FUSE_COPY_FILE_RANGE: case FUSE_IOCTL:
        case FUSE_POLL:
                return 0;
        case FUSE_RENAME: case FUSE_RENAME2: case FUSE_LINK:
                *is_node = true;
                return 0;
        default:
                return -1;
        }
}

static void check_reply(const struct fuse_in_header *h, bool have_hdr, size_t out_size,
                        const struct iovec *out, unsigned out_cnt, size_t ret)
{
        static uint8_t flat[FZ_BIG_OUT];
        struct fuse_out_header oh;

        if (ret == 0)
                return;
        if (ret > out_size || ret < sizeof(oh) || !have_hdr) {
                fprintf(stderr, "fuzz: reply of %zu bytes to a request of opcode %u (buffer %zu)\n",
                        ret, h->opcode, out_size);
                abort();
        }
        gather(out, out_cnt, flat, ret);
        memcpy(&oh, flat, sizeof(oh));
        if (oh.len != ret || oh.unique != h->unique || oh.error > 0 || oh.error < -4095) {
                fprintf(stderr, "fuzz: bad reply header (len %u of %zu, unique %llu for %llu, error %d)\n",
                        oh.len, ret, (unsigned long long)oh.unique, (unsigned long long)h->unique,
                        oh.error);
                abort();
        }
        if (oh.error == 0)
                learn(h->opcode, flat + sizeof(oh), ret - sizeof(oh));
}

static void send_one(uint8_t flags, uint8_t node_sel, uint8_t handle_sel, uint8_t layout,
                     uint8_t *req, size_t len)
{
        struct fuse_in_header h = { 0 };
        bool have_hdr = len >= sizeof(h);
        size_t out_size = out_sizes[(flags >> 3) & 7], ret;
        struct iovec *in, *out;
        unsigned in_cnt, out_cnt;
        bool owned_out = true;
        struct pending *p;

        if (have_hdr) {
                memcpy(&h, req, sizeof(h));
                if (!(flags & 1))
                        h.len = (uint32_t)len;
                if (!(flags & 2))
                        h.unique = ++unique_counter;
                if (!(flags & 4)) {
                        h.uid = getuid();
                        h.gid = getgid();
                }
                if (node_sel)
                        h.nodeid = (unsigned)(node_sel - 1) < n_nodes ? nodes[node_sel - 1] :
                                                                         FUSE_ROOT_ID;
                if (handle_sel) {
                        bool is_node;
                        int off = handle_offset(h.opcode, &is_node);
                        uint64_t v = is_node ? (n_nodes ? nodes[(handle_sel - 1) % n_nodes] : FUSE_ROOT_ID)
                                             : (n_fhs ? fhs[(handle_sel - 1) % n_fhs] : 0);

                        if (off >= 0 && len >= sizeof(h) + (size_t)off + 8)
                                memcpy(req + sizeof(h) + off, &v, 8);
                }
                memcpy(req, &h, sizeof(h));
        }
        in = split(req, len, layout & 15, &in_cnt);
        if (out_size > 4096 && h.opcode != FUSE_SETLKW) {
                /* Big reply buffers: slices of one reused allocation (a fresh
                 * one per request is what made this target slow: page faults);
                 * the small ones below get allocations of their own, exact to
                 * the byte, for ASan to guard. */
                unsigned n = 1 + (layout >> 4);

                out = calloc(n, sizeof(*out));
                if (!out)
                        abort();
                for (unsigned i = 0; i < n; i++) {
                        out[i].iov_base = big_out + i * (out_size / n);
                        out[i].iov_len = i + 1 < n ? out_size / n : out_size - i * (out_size / n);
                }
                out_cnt = n;
                owned_out = false;
        } else {
                out = split(NULL, out_size, layout >> 4, &out_cnt);
        }
        p = calloc(1, sizeof(*p));
        if (!p)
                abort();
        p->in = in;
        p->in_cnt = in_cnt;
        p->out = out;
        p->out_cnt = out_cnt;
        ret = fs_process(worker, in, in_cnt, out, out_cnt, p);
        if (ret == FS_PROCESS_DEFERRED) {
                if (h.opcode != FUSE_SETLKW || !owned_out)
                        abort();
                pthread_mutex_lock(&pending_lock);
                p->next = pending;
                pending = p;
                pthread_mutex_unlock(&pending_lock);
                return;
        }
        check_reply(&h, have_hdr, out_size, out, out_cnt, ret);
        free(p);
        iov_free(in, in_cnt, true);
        iov_free(out, out_cnt, owned_out);
}

static void send_init(void)
{
        struct {
                struct fuse_in_header h;
                struct fuse_init_in in;
        } req = {
                .h = { .len = sizeof(req), .opcode = FUSE_INIT },
                .in = { .major = 7, .minor = 38, .max_readahead = 128 * 1024,
                        .flags = 0xfffffffb, .flags2 = 0xb },
        };

        send_one(0, 0, 0, 0, (uint8_t *)&req, sizeof(req));
}


static bool same_stat(const struct stat *a, const struct stat *b);

/* share/ and what fill_share() put in it, as it left them: an input that
 * changed none of them (most inputs) needs no clean-up, the slow part; one
 * that did gets a fresh share/, so that every input starts from the same. */
static const char *const filled[] = { "", "/f1", "/sub", "/lnk", "/fifo" };
static struct stat filled_st[5];
static bool share_filled;

static bool share_unchanged(void)
{
        for (unsigned i = 0; i < 5; i++) {
                char path[sizeof(share) + 8];
                struct stat st;

                snprintf(path, sizeof(path), "%s%s", share, filled[i]);
                if (lstat(path, &st) < 0 || !same_stat(&st, &filled_st[i]))
                        return false;
        }
        return true;
}

static void fill_share(void)
{

        int dir = open(share, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

        if (dir < 0)
                abort();
        fd = openat(dir, "f1", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, "contents of f1\n", 15) != 15)
                abort();
        close(fd);
        (void)mkdirat(dir, "sub", 0755);
        (void)symlinkat("../outside/canary", dir, "lnk");
        (void)mkfifoat(dir, "fifo", 0644);
        close(dir);
        for (unsigned i = 0; i < 5; i++) {
                char path[sizeof(share) + 8];

                snprintf(path, sizeof(path), "%s%s", share, filled[i]);
                if (lstat(path, &filled_st[i]) < 0)
                        abort();
        }
        share_filled = true;
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
        /* Everything but the access time (reads are allowed). */
        return a->st_ino == b->st_ino && a->st_mode == b->st_mode && a->st_uid == b->st_uid &&
               a->st_gid == b->st_gid && a->st_size == b->st_size && a->st_nlink == b->st_nlink &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
               a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Nothing next to share/ or in outside/ may appear, go or change: the
 * directories' mtimes move with any entry made or removed in them, the
 * canary's ctime with any write, chmod, chown or link to it. */
static void check_outside(void)
{
        struct stat st;

        if (lstat(base, &st) < 0 || !same_stat(&st, &base_st) ||
            lstat(outside, &st) < 0 || !same_stat(&st, &outside_st) ||
            lstat(canary, &st) < 0 || !same_stat(&st, &canary_st)) {
                fprintf(stderr, "fuzz: something outside the shared folder changed\n");
                abort();
        }
}

static void setup(void)
{
        int fd;

        /* A tmpfs is much faster for the per-input clean-up: TMPDIR=/dev/shm. */
        snprintf(base, sizeof(base), "%s", fz_make_scratch("sluice-fuzz-fuse"));
        snprintf(share, sizeof(share), "%s/share", base);
        snprintf(outside, sizeof(outside), "%s/outside", base);
        snprintf(canary, sizeof(canary), "%s/canary", outside);
        if (mkdir(share, 0755) < 0 || mkdir(outside, 0755) < 0)
                abort();
        fd = open(canary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, "canary\n", 7) != 7)
                abort();
        close(fd);
        if (lstat(base, &base_st) < 0 || lstat(outside, &outside_st) < 0 ||
            lstat(canary, &canary_st) < 0)
                abort();
        umask(0);
        if (creds_init() < 0)
                abort();
        opts.guest_uid = opts.host_uid = FS_ID_UNMAPPED;
        opts.guest_gid = opts.host_gid = FS_ID_UNMAPPED;
        opts.xattr = true;
        opts.queues = 1;
        stats_init(&stats, 1);
        fd = open(share, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fs_session_new(&opts, fd, &stats, &session) < 0 ||
            fs_worker_new(session, 1, &worker) < 0)
                abort();
        fs_worker_set_complete(worker, on_complete, NULL);
        big_out = malloc(FZ_BIG_OUT);
        if (!big_out)
                abort();
}

static void end_input(bool readonly)
{
        struct pending *p;

        fs_session_reset(session);
        /* After the reset no completion comes any more: the buffers are ours. */
        pthread_mutex_lock(&pending_lock);
        while ((p = pending)) {
                pending = p->next;
                iov_free(p->in, p->in_cnt, true);
                iov_free(p->out, p->out_cnt, true);
                free(p);
        }
        pthread_mutex_unlock(&pending_lock);
        if (readonly) {
                if (!share_unchanged()) {
                        fprintf(stderr, "fuzz: a read-only share changed\n");
                        abort();
                }
                fs_session_set_readonly(session, false);
        }
        if (!share_unchanged()) {
                fz_empty_dir(share);
                share_filled = false;
        }
        check_outside();
        n_nodes = n_fhs = next_slot = 0;
        fz_check_fds(&runs, &fd_baseline);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static uint8_t req[65536 + 8];
        struct fz_input in = { data, size };
        bool first = true, readonly = false;

        if (!session)
                setup();
        if (!share_filled)
                fill_share();
        fs_session_set_names(session, (size & 1) ? FS_NAMES_WINDOWS : FS_NAMES_POSIX,
                             (size & 2) ? FS_CASE_INSENSITIVE : FS_CASE_SENSITIVE);
        while (in.left >= 6) {
                uint8_t flags = fz_u8(&in), node_sel = fz_u8(&in), handle_sel = fz_u8(&in);
                uint8_t layout = fz_u8(&in);
                size_t len = fz_u16(&in);

                if (len > in.left)
                        len = in.left;
                if (first && (flags & 128)) {
                        readonly = true;
                        fs_session_set_readonly(session, true);
                }
                if (first && !(flags & 64))
                        send_init();
                first = false;
                fz_bytes(&in, req, len);
                send_one(flags, node_sel, handle_sel, layout, req, len);
        }
        end_input(readonly);
        return 0;
}
