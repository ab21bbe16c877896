/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-fuzz-requests.c — a seeded, bounded random FUSE request generator
 * against fs_process(), in-process over heap iovecs (run under ASan/UBSan).
 *
 * It mixes well-formed sequences (operations on the nodeids and fhs the
 * daemon handed out, plus stale and forged ones) with mutated requests (wrong
 * header lengths, truncated and scribbled arguments, names without a NUL,
 * huge counts), and splits requests and replies over many tiny separately
 * allocated iovecs so that any access past one is a sanitizer report.
 * After every request: the reply fits the writable space, a reply with a
 * header has len == the returned length, an error in [-4095, 0] and the
 * request's unique.  Every few thousand requests the session is reset and the
 * open fds must be back to where they were; nothing may ever appear next to
 * the shared folder; a read-only slice must leave the folder unchanged.
 *
 * SLUICE_FUZZ_SEED=N runs only seed N, SLUICE_FUZZ_ITERATIONS=N sets the
 * requests per seed (default: a few seconds in all).  A failure prints the
 * seed and the iteration. */
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/xattr.h>

#include "fuse-request.h"
#include "fuse-test-util.h"
#include "inode.h"
#include "pt-lock.h"

#ifndef FUSE_TMPFILE
#define FUSE_TMPFILE 51
#endif

#define FZ_DEFAULT_ITERATIONS 24000
#define FZ_RESET_EVERY        3000
#define FZ_MAX_IDS            64
#define FZ_REQ_MAX            (FREQ_SCRATCH_SIZE + 8192)

struct fz {
        struct ft t;
        GRand *rng;
        uint64_t seed;
        unsigned long iter;
        uint64_t nodes[FZ_MAX_IDS];
        unsigned n_nodes;
        uint64_t files[FZ_MAX_IDS];   /* nodeids that were regular files */
        unsigned n_files;
        uint64_t dirs[FZ_MAX_IDS];    /* and directories */
        unsigned n_dirs;
        uint64_t fhs[FZ_MAX_IDS];
        unsigned n_fhs;
        uint64_t dirfhs[FZ_MAX_IDS];
        unsigned n_dirfhs;
        uint64_t last_unique;
        uint8_t *req;           /* the request being built, flat */
        size_t req_len;
        uint8_t *flat_out;      /* the reply gathered back from its iovecs */
        uint8_t *big_out;       /* a reused 1 MiB + 4 KiB reply buffer */
        unsigned fd_baseline;
        char *outside_snapshot;
        unsigned long replies, errors, no_replies, deferred, completed;
        /* SETLKW requests the daemon deferred: their buffers live until completion. */
        /* A pthread mutex, not a GMutex: GLib's futex-based GMutex is invisible
         * to ThreadSanitizer, which would report the completions as races. */
        pthread_mutex_t pending_mutex;
        GPtrArray *pending;
};

/* ---- helpers ---- */

static uint32_t rnd(struct fz *f, uint32_t n)
{
        return n ? (uint32_t)g_rand_int_range(f->rng, 0, (gint32)MIN(n, (uint32_t)G_MAXINT32)) : 0;
}

static bool chance(struct fz *f, unsigned percent)
{
        return rnd(f, 100) < percent;
}

static uint64_t rnd64(struct fz *f)
{
        return ((uint64_t)g_rand_int(f->rng) << 32) | g_rand_int(f->rng);
}

/* Values that tend to break length and offset arithmetic. */
static uint64_t nasty64(struct fz *f)
{
        static const uint64_t v[] = {
                0, 1, 4095, 4096, 65535, 65536, 0x7fffffff, 0x80000000, 0xffffffff,
                0x100000000ull, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX - 1,
                (uint64_t)INT64_MAX - 4095, (uint64_t)INT64_MAX + 1, UINT64_MAX,
                UINT64_MAX - 1, 1ull << 62, 4ull << 30,
        };

        return chance(f, 70) ? v[rnd(f, G_N_ELEMENTS(v))] : rnd64(f);
}

static uint64_t small_off(struct fz *f)
{
        return chance(f, 85) ? rnd(f, 70000) : nasty64(f);
}

static uint32_t rnd_size(struct fz *f)
{
        switch (rnd(f, 6)) {
        case 0: return 0;
        case 1: return (uint32_t)nasty64(f);
        case 2: return rnd(f, 1u << 21);
        default: return rnd(f, 9000);
        }
}

static unsigned count_fds(void)
{
        g_autoptr(GDir) d = g_dir_open("/proc/self/fd", 0, NULL);
        unsigned n = 0;

        g_assert_nonnull(d);
        while (g_dir_read_name(d))
                n++;
        return n;
}

static void add_id(uint64_t *ids, unsigned *n, uint64_t id)
{
        if (id == 0)
                return;
        for (unsigned i = 0; i < *n; i++)
                if (ids[i] == id)
                        return;
        if (*n < FZ_MAX_IDS)
                ids[(*n)++] = id;
        else
                ids[g_random_int_range(0, FZ_MAX_IDS)] = id;
}

static uint64_t pick(struct fz *f, const uint64_t *ids, unsigned n)
{
        switch (rnd(f, 12)) {
        case 0: return rnd64(f);                                   /* forged */
        case 1: return n ? ids[rnd(f, n)] + (1ull << 32) : 2;      /* stale generation */
        case 2: return rnd(f, 6);                                  /* small numbers: 0, root… */
        default: return n ? ids[rnd(f, n)] : 1;
        }
}

static uint64_t node(struct fz *f)
{
        return chance(f, 20) ? INODE_ROOT_ID : pick(f, f->nodes, f->n_nodes);
}

static uint64_t file_node(struct fz *f)
{
        return chance(f, 75) && f->n_files ? f->files[rnd(f, f->n_files)] : node(f);
}

static uint64_t dir_node(struct fz *f)
{
        if (chance(f, 40))
                return INODE_ROOT_ID;
        return chance(f, 75) && f->n_dirs ? f->dirs[rnd(f, f->n_dirs)] : node(f);
}

static uint64_t fh(struct fz *f)
{
        return pick(f, f->fhs, f->n_fhs);
}

static uint64_t dirfh(struct fz *f)
{
        return chance(f, 10) ? fh(f) : pick(f, f->dirfhs, f->n_dirfhs);
}

/* ---- building requests ---- */

static void put(struct fz *f, const void *p, size_t len)
{
        g_assert_cmpuint(f->req_len + len, <=, FZ_REQ_MAX);
        memcpy(f->req + f->req_len, p, len);
        f->req_len += len;
}

static void put_name(struct fz *f)
{
        static const char *names[] = {
                "a", "b", "c", "d", "dir", "sub", "f1", "f2", "lnk", "out", "fifo",
        };
        char buf[300];

        switch (rnd(f, 20)) {
        case 0: put(f, "..", 3); return;
        case 1: put(f, ".", 2); return;
        case 2: put(f, "", 1); return;
        case 3: put(f, "x/y", 4); return;
        case 4:
                memset(buf, 'n', sizeof(buf));
                put(f, buf, 256 + rnd(f, 44));           /* too long, maybe no NUL */
                if (chance(f, 50))
                        put(f, "", 1);
                return;
        case 5:
                put(f, "noterm", 6);                     /* no NUL */
                return;
        default:
                {
                        const char *n = names[rnd(f, G_N_ELEMENTS(names))];

                        put(f, n, strlen(n) + 1);
                }
        }
}

static uint32_t open_flags(struct fz *f)
{
        static const uint32_t v[] = {
                O_RDONLY, O_WRONLY, O_RDWR, O_RDWR | O_TRUNC, O_WRONLY | O_APPEND,
                O_RDONLY | O_TRUNC, O_RDWR | O_EXCL, O_RDONLY | O_DIRECTORY,
                O_RDWR | O_DIRECT, O_RDONLY | O_NOATIME, O_RDWR | O_CREAT,
        };

        return chance(f, 85) ? v[rnd(f, G_N_ELEMENTS(v))] : g_rand_int(f->rng);
}

static uint32_t file_mode(struct fz *f)
{
        static const uint32_t types[] = { S_IFREG, S_IFIFO, S_IFDIR, S_IFLNK, S_IFSOCK, S_IFCHR, 0 };

        if (chance(f, 10))
                return g_rand_int(f->rng);
        return types[rnd(f, G_N_ELEMENTS(types))] | (rnd(f, 8) ? 0644 : 07777);
}

static void lock_arg(struct fz *f, struct fuse_lk_in *in)
{
        static const uint32_t types[] = { F_RDLCK, F_WRLCK, F_UNLCK };

        in->fh = fh(f);
        in->owner = chance(f, 90) ? rnd(f, 4) : rnd64(f);
        in->lk.start = chance(f, 80) ? rnd(f, 200) : nasty64(f);
        in->lk.end = chance(f, 80) ? in->lk.start + rnd(f, 100) : nasty64(f);
        in->lk.type = chance(f, 90) ? types[rnd(f, 3)] : g_rand_int(f->rng);
        in->lk.pid = g_rand_int(f->rng);
        in->lk_flags = chance(f, 30) ? FUSE_LK_FLOCK : (chance(f, 5) ? g_rand_int(f->rng) : 0);
}

/* Fills f->req with a well-formed request (before any mutation) and returns
 * its opcode.  The header's len is fixed up by the caller. */
static uint32_t build(struct fz *f)
{
        static const uint32_t opcodes[] = {
                FUSE_LOOKUP, FUSE_LOOKUP, FUSE_LOOKUP, FUSE_FORGET, FUSE_BATCH_FORGET,
                FUSE_GETATTR, FUSE_SETATTR, FUSE_SETATTR, FUSE_READLINK, FUSE_SYMLINK,
                FUSE_MKNOD, FUSE_MKDIR, FUSE_MKDIR, FUSE_UNLINK, FUSE_RMDIR, FUSE_RENAME,
                FUSE_RENAME2, FUSE_LINK, FUSE_OPEN, FUSE_OPEN, FUSE_READ, FUSE_READ,
                FUSE_WRITE, FUSE_WRITE, FUSE_STATFS, FUSE_RELEASE, FUSE_FSYNC,
                FUSE_SETXATTR, FUSE_GETXATTR, FUSE_LISTXATTR, FUSE_REMOVEXATTR,
                FUSE_FLUSH, FUSE_OPENDIR, FUSE_READDIR, FUSE_RELEASEDIR, FUSE_FSYNCDIR,
                FUSE_GETLK, FUSE_SETLK, FUSE_SETLK, FUSE_SETLKW, FUSE_ACCESS, FUSE_CREATE,
                FUSE_CREATE, FUSE_INTERRUPT, FUSE_FALLOCATE, FUSE_READDIRPLUS,
                FUSE_READDIRPLUS, FUSE_LSEEK, FUSE_COPY_FILE_RANGE, FUSE_SYNCFS,
                FUSE_TMPFILE, FUSE_INIT,
        };
        struct fuse_in_header h = {
                .unique = ++f->last_unique,
                .uid = getuid(), .gid = getgid(), .pid = 1,
        };
        uint32_t op;

        if (!fs_session_is_initialized(f->t.s) && chance(f, 90))
                op = FUSE_INIT;
        else if (chance(f, 1))
                op = chance(f, 30) ? FUSE_DESTROY : g_rand_int_range(f->rng, 0, 60);
        else if (chance(f, 1))
                op = g_rand_int(f->rng);
        else
                op = opcodes[rnd(f, G_N_ELEMENTS(opcodes))];
        /* INIT in a running session is a guest reset: now and then, not every 60 requests. */
        if (op == FUSE_INIT && fs_session_is_initialized(f->t.s) && !chance(f, 10))
                op = FUSE_GETATTR;
        h.opcode = op;
        switch (op) {
        case FUSE_GETLK: case FUSE_SETLK: case FUSE_SETLKW: case FUSE_OPEN: case FUSE_READ:
        case FUSE_WRITE: case FUSE_SETATTR: case FUSE_FLUSH: case FUSE_RELEASE: case FUSE_FALLOCATE:
                h.nodeid = file_node(f);
                break;
        case FUSE_LOOKUP: case FUSE_MKDIR: case FUSE_CREATE: case FUSE_MKNOD: case FUSE_SYMLINK:
        case FUSE_UNLINK: case FUSE_RMDIR: case FUSE_RENAME: case FUSE_RENAME2: case FUSE_LINK:
        case FUSE_OPENDIR: case FUSE_TMPFILE:
                h.nodeid = dir_node(f);
                break;
        default:
                h.nodeid = node(f);
        }
        f->req_len = 0;
        put(f, &h, sizeof(h));

        switch (op) {
        case FUSE_INIT: {
                struct fuse_init_in in = {
                        .major = chance(f, 90) ? 7 : rnd(f, 10), .minor = chance(f, 80) ? 38 : rnd(f, 50),
                        .max_readahead = g_rand_int(f->rng), .flags = g_rand_int(f->rng),
                        .flags2 = g_rand_int(f->rng),
                };

                put(f, &in, chance(f, 50) ? sizeof(in) : 16);
                break;
        }
        case FUSE_LOOKUP: case FUSE_UNLINK: case FUSE_RMDIR: case FUSE_REMOVEXATTR:
                put_name(f);
                break;
        case FUSE_FORGET: {
                struct fuse_forget_in in = { .nlookup = chance(f, 80) ? rnd(f, 3) : nasty64(f) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_BATCH_FORGET: {
                unsigned n = rnd(f, 8);
                struct fuse_batch_forget_in in = { .count = chance(f, 70) ? n : (uint32_t)nasty64(f) };

                put(f, &in, sizeof(in));
                for (unsigned i = 0; i < n; i++) {
                        struct fuse_forget_one one = { .nodeid = node(f), .nlookup = rnd(f, 3) };

                        put(f, &one, sizeof(one));
                }
                break;
        }
        case FUSE_GETATTR: {
                struct fuse_getattr_in in = { .getattr_flags = rnd(f, 2) ? FUSE_GETATTR_FH : 0, .fh = fh(f) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_SETATTR: {
                struct fuse_setattr_in in = {
                        .valid = chance(f, 80) ? (1u << rnd(f, 10)) | (1u << rnd(f, 10)) : g_rand_int(f->rng),
                        .fh = fh(f),
                        /* Sizes stay small or fail (> INT64_MAX): a real 4 GiB file helps nobody. */
                        .size = chance(f, 85) ? rnd(f, 100000) : (uint64_t)INT64_MAX + 1 + rnd(f, 5),
                        .atime = nasty64(f), .mtime = nasty64(f), .ctime = nasty64(f),
                        .atimensec = chance(f, 70) ? rnd(f, 1000000000) : g_rand_int(f->rng),
                        .mtimensec = chance(f, 70) ? rnd(f, 1000000000) : g_rand_int(f->rng),
                        .mode = file_mode(f), .uid = chance(f, 50) ? getuid() : g_rand_int(f->rng),
                        .gid = chance(f, 50) ? getgid() : g_rand_int(f->rng),
                };

                in.valid &= ~(uint32_t)(chance(f, 50) ? FATTR_FH : 0);
                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_SYMLINK: {
                static const char *targets[] = { "a", "../outside", "/etc", "../outside/secret", "." };
                const char *tg = targets[rnd(f, G_N_ELEMENTS(targets))];

                put_name(f);
                if (chance(f, 90))
                        put(f, tg, strlen(tg) + 1);
                break;
        }
        case FUSE_MKNOD: {
                struct fuse_mknod_in in = { .mode = file_mode(f), .rdev = chance(f, 80) ? 0 : g_rand_int(f->rng),
                                            .umask = chance(f, 80) ? 022 : g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                put_name(f);
                break;
        }
        case FUSE_MKDIR: {
                struct fuse_mkdir_in in = { .mode = chance(f, 80) ? 0755 : g_rand_int(f->rng),
                                            .umask = chance(f, 80) ? 022 : g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                put_name(f);
                break;
        }
        case FUSE_RENAME: {
                struct fuse_rename_in in = { .newdir = dir_node(f) };

                put(f, &in, sizeof(in));
                put_name(f);
                put_name(f);
                break;
        }
        case FUSE_RENAME2: {
                static const uint32_t v[] = { 0, RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT,
                                              RENAME_NOREPLACE | RENAME_EXCHANGE };
                struct fuse_rename2_in in = { .newdir = dir_node(f),
                                              .flags = chance(f, 90) ? v[rnd(f, G_N_ELEMENTS(v))] : g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                put_name(f);
                put_name(f);
                break;
        }
        case FUSE_LINK: {
                struct fuse_link_in in = { .oldnodeid = file_node(f) };

                put(f, &in, sizeof(in));
                put_name(f);
                break;
        }
        case FUSE_OPEN: case FUSE_OPENDIR: {
                struct fuse_open_in in = { .flags = open_flags(f), .open_flags = g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_READ: case FUSE_READDIR: case FUSE_READDIRPLUS: {
                struct fuse_read_in in = {
                        .fh = op == FUSE_READ ? fh(f) : dirfh(f),
                        .offset = op == FUSE_READ ? small_off(f) : (chance(f, 70) ? 0 : nasty64(f)),
                        .size = rnd_size(f), .read_flags = g_rand_int(f->rng),
                        .lock_owner = rnd64(f), .flags = g_rand_int(f->rng),
                };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_WRITE: {
                uint8_t data[4096];
                uint32_t n = rnd(f, sizeof(data));
                struct fuse_write_in in = {
                        .fh = fh(f), .offset = small_off(f), .size = chance(f, 85) ? n : (uint32_t)nasty64(f),
                        .write_flags = g_rand_int(f->rng), .lock_owner = rnd64(f),
                        .flags = g_rand_int(f->rng),
                };

                memset(data, 'w', n);
                put(f, &in, sizeof(in));
                put(f, data, n);
                break;
        }
        case FUSE_RELEASE: case FUSE_RELEASEDIR: {
                struct fuse_release_in in = {
                        .fh = op == FUSE_RELEASE ? fh(f) : dirfh(f), .flags = g_rand_int(f->rng),
                        .release_flags = chance(f, 30) ? FUSE_RELEASE_FLOCK_UNLOCK : g_rand_int(f->rng),
                        .lock_owner = rnd(f, 4),
                };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_FSYNC: case FUSE_FSYNCDIR: {
                struct fuse_fsync_in in = { .fh = op == FUSE_FSYNC ? fh(f) : dirfh(f),
                                            .fsync_flags = g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_FLUSH: {
                struct fuse_flush_in in = { .fh = fh(f), .lock_owner = chance(f, 80) ? rnd(f, 4) : rnd64(f) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_SETXATTR: {
                struct fuse_setxattr_in in = { .size = chance(f, 80) ? rnd(f, 64) : (uint32_t)nasty64(f),
                                               .flags = chance(f, 80) ? rnd(f, 3) : g_rand_int(f->rng) };
                static const char *names[] = { "user.a", "user.b", "trusted.x", "security.capability", "bogus" };
                const char *n = names[rnd(f, G_N_ELEMENTS(names))];
                uint8_t val[64];

                memset(val, 'v', sizeof(val));
                put(f, &in, 8);
                put(f, n, strlen(n) + 1);
                put(f, val, rnd(f, sizeof(val)));
                break;
        }
        case FUSE_GETXATTR: case FUSE_LISTXATTR: {
                struct fuse_getxattr_in in = { .size = rnd_size(f) };

                put(f, &in, sizeof(in));
                if (op == FUSE_GETXATTR)
                        put(f, chance(f, 50) ? "user.a" : "user.b", 7);
                break;
        }
        case FUSE_GETLK: case FUSE_SETLK: case FUSE_SETLKW: {
                struct fuse_lk_in in;

                memset(&in, 0, sizeof(in));
                lock_arg(f, &in);
                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_ACCESS: {
                struct fuse_access_in in = { .mask = chance(f, 80) ? rnd(f, 8) : g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_CREATE: case FUSE_TMPFILE: {
                struct fuse_create_in in = { .flags = open_flags(f), .mode = file_mode(f),
                                             .umask = chance(f, 80) ? 022 : g_rand_int(f->rng),
                                             .open_flags = g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                put_name(f);
                break;
        }
        case FUSE_INTERRUPT: {
                struct fuse_interrupt_in in = { .unique = f->last_unique - rnd(f, 3) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_FALLOCATE: {
                static const uint32_t modes[] = { 0, FALLOC_FL_KEEP_SIZE,
                                                  FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                                  FALLOC_FL_ZERO_RANGE, FALLOC_FL_COLLAPSE_RANGE };
                struct fuse_fallocate_in in = {
                        .fh = fh(f), .offset = small_off(f),
                        .mode = chance(f, 90) ? modes[rnd(f, G_N_ELEMENTS(modes))] : g_rand_int(f->rng),
                };

                /* Huge lengths only where they cannot allocate (punching, or past INT64_MAX). */
                in.length = chance(f, 80) ? rnd(f, 1u << 20) :
                            (in.mode & FALLOC_FL_PUNCH_HOLE) ? nasty64(f) : (uint64_t)INT64_MAX + rnd(f, 3);
                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_LSEEK: {
                struct fuse_lseek_in in = { .fh = fh(f), .offset = small_off(f),
                                            .whence = chance(f, 80) ? rnd(f, 5) : g_rand_int(f->rng) };

                put(f, &in, sizeof(in));
                break;
        }
        case FUSE_COPY_FILE_RANGE: {
                struct fuse_copy_file_range_in in = {
                        .fh_in = fh(f), .off_in = small_off(f), .nodeid_out = node(f), .fh_out = fh(f),
                        .off_out = small_off(f), .len = chance(f, 90) ? rnd(f, 1u << 20) : nasty64(f),
                        .flags = chance(f, 90) ? 0 : rnd64(f),
                };

                /* Copying gigabytes of holes would fill the disk: huge lengths only from far offsets. */
                if (in.len > (1u << 20))
                        in.off_in = (uint64_t)INT64_MAX - rnd(f, 3);
                put(f, &in, sizeof(in));
                break;
        }
        default:
                /* STATFS, READLINK, SYNCFS, DESTROY, unknown: random bytes, maybe none. */
                while (chance(f, 50) && f->req_len < 200) {
                        uint32_t v = g_rand_int(f->rng);

                        put(f, &v, sizeof(v));
                }
        }
        return op;
}

/* Damages the well-formed request in f->req. */
static void mutate(struct fz *f)
{
        struct fuse_in_header *h = (struct fuse_in_header *)f->req;
        unsigned n = 1 + rnd(f, 3);

        for (unsigned k = 0; k < n; k++) {
                switch (rnd(f, 7)) {
                case 0:   /* a lying length */
                        h->len = chance(f, 50) ? rnd(f, (uint32_t)f->req_len + 64) : g_rand_int(f->rng);
                        break;
                case 1:   /* truncated */
                        f->req_len = rnd(f, (uint32_t)f->req_len + 1);
                        if (f->req_len >= sizeof(*h))
                                h->len = (uint32_t)f->req_len;
                        break;
                case 2:   /* random bytes in the arguments */
                        for (unsigned i = 0; i < 1 + rnd(f, 8) && f->req_len > sizeof(*h); i++)
                                f->req[sizeof(*h) + rnd(f, (uint32_t)(f->req_len - sizeof(*h)))] =
                                        (uint8_t)g_rand_int(f->rng);
                        break;
                case 3:   /* a nasty 64-bit value somewhere in the arguments */
                        if (f->req_len >= sizeof(*h) + 8) {
                                uint64_t v = nasty64(f);
                                size_t at = sizeof(*h) + 8 * rnd(f, (uint32_t)(f->req_len - sizeof(*h)) / 8);

                                memcpy(f->req + at, &v, MIN(sizeof(v), f->req_len - at));
                        }
                        break;
                case 4:   /* no NUL anywhere */
                        for (size_t i = sizeof(*h); i < f->req_len; i++)
                                if (f->req[i] == 0)
                                        f->req[i] = 'A';
                        break;
                case 5:   /* another opcode over these arguments */
                        h->opcode = chance(f, 80) ? rnd(f, 55) : g_rand_int(f->rng);
                        break;
                case 6:   /* extra garbage after the arguments */
                        while (f->req_len < FZ_REQ_MAX - 64 && chance(f, 80)) {
                                uint64_t v = rnd64(f);

                                put(f, &v, sizeof(v));
                        }
                        if (chance(f, 50))
                                h->len = (uint32_t)f->req_len;
                        break;
                }
        }
}

/* Opcodes fs_process() implements (anything else must fail). */
static bool ops_known(uint32_t op)
{
        switch (op) {
        case FUSE_LOOKUP: case FUSE_FORGET: case FUSE_GETATTR: case FUSE_SETATTR:
        case FUSE_READLINK: case FUSE_SYMLINK: case FUSE_MKNOD: case FUSE_MKDIR:
        case FUSE_UNLINK: case FUSE_RMDIR: case FUSE_RENAME: case FUSE_LINK: case FUSE_OPEN:
        case FUSE_READ: case FUSE_WRITE: case FUSE_STATFS: case FUSE_RELEASE: case FUSE_FSYNC:
        case FUSE_SETXATTR: case FUSE_GETXATTR: case FUSE_LISTXATTR: case FUSE_REMOVEXATTR:
        case FUSE_FLUSH: case FUSE_INIT: case FUSE_OPENDIR: case FUSE_READDIR:
        case FUSE_RELEASEDIR: case FUSE_FSYNCDIR: case FUSE_GETLK: case FUSE_SETLK:
        case FUSE_SETLKW: case FUSE_ACCESS: case FUSE_CREATE: case FUSE_INTERRUPT:
        case FUSE_DESTROY: case FUSE_BATCH_FORGET: case FUSE_FALLOCATE: case FUSE_READDIRPLUS:
        case FUSE_RENAME2: case FUSE_LSEEK: case FUSE_COPY_FILE_RANGE: case FUSE_SYNCFS:
        case FUSE_TMPFILE:
                return true;
        default:
                return false;
        }
}

/* ---- sending ---- */

struct chunks {
        struct iovec *iov;
        unsigned cnt;
        bool owned;     /* each iov_base is its own allocation */
};

/* A deferred request: kept (as the transport keeps the descriptor chain)
 * until the daemon's completion callback says how long the reply is. */
struct pending {
        struct chunks in, out;
        size_t out_size;
        uint64_t unique;
        bool done;          /* under pending_mutex */
        size_t len;
        struct fz *f;
};

static void chunks_free(struct chunks *c)
{
        if (c->owned)
                for (unsigned i = 0; i < c->cnt; i++)
                        g_free(c->iov[i].iov_base);
        g_free(c->iov);
}

/* Splits `len` bytes into separately allocated iovecs of 1–max bytes (and
 * some empty ones); `src` (or NULL) is copied in. */
static void split(struct fz *f, struct chunks *c, const uint8_t *src, size_t len, unsigned max)
{
        size_t done = 0;
        unsigned cap = (unsigned)len + 4;

        c->iov = g_new0(struct iovec, cap);
        c->cnt = 0;
        c->owned = true;
        while (done < len || (c->cnt == 0 && len == 0)) {
                size_t want = 1 + rnd(f, max);   /* not inside MIN(): evaluated twice */
                size_t n = chance(f, 3) ? 0 : MIN(len - done, want);

                if (c->cnt + 1 >= cap) {
                        cap *= 2;
                        c->iov = g_renew(struct iovec, c->iov, cap);
                }
                c->iov[c->cnt].iov_base = n ? g_malloc(n) : NULL;
                c->iov[c->cnt].iov_len = n;
                if (n && src)
                        memcpy(c->iov[c->cnt].iov_base, src + done, n);
                else if (n)
                        memset(c->iov[c->cnt].iov_base, 0xa5, n);
                c->cnt++;
                done += n;
                if (len == 0)
                        break;
        }
}

static size_t gather(const struct chunks *c, uint8_t *dst, size_t len)
{
        size_t done = 0;

        for (unsigned i = 0; i < c->cnt && done < len; i++) {
                size_t n = MIN(c->iov[i].iov_len, len - done);

                if (n)
                        memcpy(dst + done, c->iov[i].iov_base, n);
                done += n;
        }
        return done;
}

static void learn_entry(struct fz *f, const struct fuse_entry_out *e)
{
        add_id(f->nodes, &f->n_nodes, e->nodeid);
        if (S_ISREG(e->attr.mode))
                add_id(f->files, &f->n_files, e->nodeid);
        if (S_ISDIR(e->attr.mode))
                add_id(f->dirs, &f->n_dirs, e->nodeid);
}

static void learn(struct fz *f, uint32_t op, const uint8_t *body, size_t len)
{
        switch (op) {
        case FUSE_LOOKUP: case FUSE_MKDIR: case FUSE_MKNOD: case FUSE_SYMLINK: case FUSE_LINK:
                if (len >= sizeof(struct fuse_entry_out))
                        learn_entry(f, (const struct fuse_entry_out *)body);
                break;
        case FUSE_CREATE: case FUSE_TMPFILE:
                if (len >= sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out)) {
                        const struct fuse_open_out *o = (const void *)(body + sizeof(struct fuse_entry_out));

                        learn_entry(f, (const struct fuse_entry_out *)body);
                        add_id(f->fhs, &f->n_fhs, o->fh);
                }
                break;
        case FUSE_OPEN:
                if (len >= sizeof(struct fuse_open_out))
                        add_id(f->fhs, &f->n_fhs, ((const struct fuse_open_out *)body)->fh);
                break;
        case FUSE_OPENDIR:
                if (len >= sizeof(struct fuse_open_out))
                        add_id(f->dirfhs, &f->n_dirfhs, ((const struct fuse_open_out *)body)->fh);
                break;
        case FUSE_READDIRPLUS:
                for (size_t pos = 0; pos + FUSE_NAME_OFFSET_DIRENTPLUS <= len;) {
                        const struct fuse_direntplus *d = (const void *)(body + pos);

                        learn_entry(f, &d->entry_out);
                        pos += FUSE_DIRENTPLUS_SIZE(d);
                        if (d->dirent.namelen == 0 || d->dirent.namelen > 255)
                                break;
                }
                break;
        }
}

#define FZ_FAIL(f, ...)                                                                        \
        do {                                                                                   \
                g_printerr("fuzz: seed %" PRIu64 " iteration %lu: ", (f)->seed, (f)->iter);  \
                g_printerr(__VA_ARGS__);                                                       \
                g_printerr("\n");                                                              \
                g_assert_not_reached();                                                        \
        } while (0)

static void on_complete(void *token, size_t len, void *userdata)
{
        struct pending *p = token;
        struct fz *f = userdata;

        pthread_mutex_lock(&f->pending_mutex);
        g_assert_false(p->done);
        p->done = true;
        p->len = len;
        pthread_mutex_unlock(&f->pending_mutex);
}

static void check_reply(struct fz *f, const struct chunks *out, size_t out_size, size_t ret,
                        const struct fuse_in_header *h, bool have_hdr, uint32_t built_op);
static void check_fresh_session(struct fz *f, const char *how);

/* Checks and frees deferred requests that completed; with `all` (after a
 * session reset, when no completion can come any more) frees the rest too. */
static void reap_pending(struct fz *f, bool all)
{
        pthread_mutex_lock(&f->pending_mutex);
        for (unsigned i = 0; i < f->pending->len;) {
                struct pending *p = f->pending->pdata[i];

                if (p->done) {
                        struct fuse_in_header h = { .unique = p->unique, .opcode = FUSE_SETLKW };

                        f->completed++;
                        if (p->len == 0 && p->out_size >= sizeof(struct fuse_out_header))
                                FZ_FAIL(f, "deferred SETLKW %" PRIu64 " completed without a reply", p->unique);
                        check_reply(f, &p->out, p->out_size, p->len, &h, true, 0);
                } else if (!all) {
                        i++;
                        continue;
                }
                chunks_free(&p->in);
                chunks_free(&p->out);
                g_free(p);
                g_ptr_array_remove_index_fast(f->pending, i);
        }
        pthread_mutex_unlock(&f->pending_mutex);
}

/* Sends f->req (f->req_len bytes) over a random iovec layout and checks the reply. */
static void send_and_check(struct fz *f, uint32_t built_op)
{
        struct chunks in = { 0 }, out = { 0 };
        size_t out_size, ret;
        struct fuse_in_header h = { 0 };
        bool have_hdr = f->req_len >= sizeof(h);

        if (have_hdr)
                memcpy(&h, f->req, sizeof(h));

        /* The request's layout. */
        if (chance(f, 40)) {
                split(f, &in, f->req, f->req_len, chance(f, 70) ? 7 : 64);
        } else {
                in.iov = g_new0(struct iovec, 1);
                in.cnt = 1;
                in.owned = true;
                in.iov[0].iov_base = g_memdup2(f->req, f->req_len ? f->req_len : 1);
                in.iov[0].iov_len = f->req_len;
        }
        /* The reply's. */
        switch (rnd(f, 10)) {
        case 0: out_size = rnd(f, 16); break;                   /* not even a header */
        case 1: out_size = 16 + rnd(f, 200); break;
        case 2: out_size = 4096; break;
        case 3: case 4: out_size = FT_OUT_SIZE; break;
        default: out_size = 16 + rnd(f, 8192); break;
        }
        if (out_size < FT_OUT_SIZE && chance(f, 40)) {
                split(f, &out, NULL, out_size, chance(f, 70) ? 7 : 512);
        } else if (out_size == FT_OUT_SIZE && h.opcode != FUSE_SETLKW) {
                out.iov = g_new0(struct iovec, 1);
                out.cnt = 1;
                out.iov[0].iov_base = f->big_out;
                out.iov[0].iov_len = out_size;
        } else {
                out.iov = g_new0(struct iovec, 1);
                out.cnt = 1;
                out.owned = true;
                out.iov[0].iov_base = out_size ? g_malloc(out_size) : NULL;
                out.iov[0].iov_len = out_size;
                if (out_size)
                        memset(out.iov[0].iov_base, 0xa5, out_size);
        }

        struct pending *p = g_new0(struct pending, 1);
        bool was_initialized = fs_session_is_initialized(f->t.s);

        ret = fs_process(f->t.w, in.iov, in.cnt, out.iov, out.cnt, p);
        if (g_getenv("FZ_DEBUG")) {
                size_t tot = 0;
                for (unsigned i = 0; i < in.cnt; i++)
                        tot += in.iov[i].iov_len;
                g_printerr("iter %lu: req_len %zu iov total %zu cnt %u op %u -> %zu error %d\n", f->iter,
                           f->req_len, tot, in.cnt, h.opcode, ret,
                           ret >= 16 && out.iov[0].iov_len >= 16 ? ((struct fuse_out_header *)out.iov[0].iov_base)->error : 1);
        }

        if (ret == FS_PROCESS_DEFERRED) {
                if (h.opcode != FUSE_SETLKW)
                        FZ_FAIL(f, "opcode %u deferred", h.opcode);
                f->deferred++;
                p->in = in;
                p->out = out;
                p->out_size = out_size;
                p->unique = h.unique;
                p->f = f;
                pthread_mutex_lock(&f->pending_mutex);
                g_ptr_array_add(f->pending, p);
                pthread_mutex_unlock(&f->pending_mutex);
                return;
        }
        g_free(p);
        check_reply(f, &out, out_size, ret, &h, have_hdr, built_op);
        if (have_hdr && h.opcode == FUSE_INIT && was_initialized) {
                struct fuse_init_in ii = { 0 };
                bool ok = ret >= sizeof(struct fuse_out_header) &&
                          ((const struct fuse_out_header *)f->flat_out)->error == 0;

                memcpy(&ii, f->req + sizeof(h), MIN(f->req_len - sizeof(h), sizeof(ii)));
                /* A new kernel's INIT (guest reset; a higher major only gets ours
                 * back): the old session is gone. */
                if ((ok && ii.major == 7) || !fs_session_is_initialized(f->t.s))
                        check_fresh_session(f, "an INIT without DESTROY");
        }
        chunks_free(&in);
        if (out.owned)
                chunks_free(&out);
        else
                g_free(out.iov);
}

static void check_reply(struct fz *f, const struct chunks *out, size_t out_size, size_t ret,
                        const struct fuse_in_header *h, bool have_hdr, uint32_t built_op)
{
        if (ret > out_size)
                FZ_FAIL(f, "reply of %zu bytes in %zu writable", ret, out_size);
        if (ret > 0 && ret < sizeof(struct fuse_out_header))
                FZ_FAIL(f, "reply of %zu bytes: shorter than a header", ret);
        if (ret == 0) {
                bool silent = h->opcode == FUSE_FORGET || h->opcode == FUSE_BATCH_FORGET ||
                              h->opcode == FUSE_INTERRUPT;

                f->no_replies++;
                /* Only header-less requests, no-reply opcodes and no room for a header are silent. */
                if (have_hdr && !silent && out_size >= sizeof(struct fuse_out_header) &&
                    h->len >= sizeof(h) && h->len <= f->req_len)
                        FZ_FAIL(f, "no reply to opcode %u (len %u of %zu)", h->opcode, h->len, f->req_len);
        } else {
                struct fuse_out_header oh;

                gather(out, f->flat_out, ret);
                memcpy(&oh, f->flat_out, sizeof(oh));
                if (!have_hdr)
                        FZ_FAIL(f, "a reply to a %zu-byte request (%u iovecs, reply %zu: error %d, unique %" PRIu64 ")",
                                f->req_len, 0u, ret, oh.error, (uint64_t)oh.unique);
                if (oh.len != ret)
                        FZ_FAIL(f, "header len %u, returned %zu (opcode %u)", oh.len, ret, h->opcode);
                if (oh.error > 0 || oh.error < -4095)
                        FZ_FAIL(f, "error %d (opcode %u)", oh.error, h->opcode);
                if (oh.unique != h->unique)
                        FZ_FAIL(f, "unique %" PRIu64 " for request %" PRIu64, (uint64_t)oh.unique,
                                (uint64_t)h->unique);
                if (oh.error == 0 && h->opcode != FUSE_INIT && h->opcode != FUSE_DESTROY &&
                    h->opcode != FUSE_FORGET && h->opcode != FUSE_BATCH_FORGET &&
                    h->opcode != FUSE_INTERRUPT && (h->opcode >= 60 || !ops_known(h->opcode)))
                        FZ_FAIL(f, "success for unknown opcode %u", h->opcode);
                f->replies++;
                if (oh.error)
                        f->errors++;
                else if (h->opcode == built_op)
                        learn(f, h->opcode, f->flat_out + sizeof(oh), ret - sizeof(oh));
        }
}

/* ---- snapshots of the host side ---- */

static gint cmp_names(gconstpointer a, gconstpointer b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line per object under dir (recursively): what a mutation would change.
 * Only the first 64 KiB of a file are hashed (files may be sparse and huge). */
static void snapshot_dir(GString *out, int parent, const char *rel, const char *skip)
{
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        DIR *d;
        struct dirent *de;
        int fd = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        d = fdopendir(fd);
        g_assert_nonnull(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
                    !(skip && !strcmp(de->d_name, skip)))
                        g_ptr_array_add(names, g_strdup(de->d_name));
        g_ptr_array_sort(names, cmp_names);
        for (unsigned i = 0; i < names->len; i++) {
                const char *n = names->pdata[i];
                g_autofree char *path = g_strconcat(rel, "/", n, NULL);
                g_autofree char *sum = NULL;
                struct stat st;

                g_assert_cmpint(fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW), ==, 0);
                if (S_ISREG(st.st_mode)) {
                        int ffd = openat(dirfd(d), n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
                        g_autofree uint8_t *buf = g_malloc(65536);
                        ssize_t got = ffd >= 0 ? pread(ffd, buf, 65536, 0) : -1;

                        sum = got >= 0 ? g_compute_checksum_for_data(G_CHECKSUM_SHA1, buf, (size_t)got)
                                       : g_strdup("unreadable");
                        if (ffd >= 0)
                                close(ffd);
                }
                g_string_append_printf(out, "%s mode=%o size=%lld nlink=%lu mtime=%lld.%09ld ctime=%lld.%09ld %s\n",
                                       path, st.st_mode, (long long)st.st_size, (unsigned long)st.st_nlink,
                                       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                                       (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec, sum ? sum : "");
                if (S_ISDIR(st.st_mode)) {
                        int sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (sub >= 0) {
                                snapshot_dir(out, sub, path, NULL);
                                close(sub);
                        } else {
                                g_string_append_printf(out, "%s unreadable\n", path);
                        }
                }
        }
        closedir(d);
}

static char *snapshot(const char *dir, const char *skip)
{
        GString *out = g_string_new(NULL);
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        snapshot_dir(out, fd, "", skip);
        close(fd);
        return g_string_free(out, FALSE);
}

/* Everything next to the shared folder (the canary directory "outside" and
 * the base directory itself), which no request may touch. */
static char *snapshot_outside(struct fz *f)
{
        g_autofree char *base = g_path_get_dirname(f->t.dir);

        return snapshot(base, "share");
}

static void check_outside(struct fz *f)
{
        g_autofree char *now = snapshot_outside(f);

        if (strcmp(now, f->outside_snapshot))
                FZ_FAIL(f, "something changed outside the share:\nbefore:\n%s\nafter:\n%s",
                        f->outside_snapshot, now);
}

/* After a session reset (`how`): every fd the guest's requests opened must be
 * closed again, and nothing the guest knew is worth aiming at any more. */
static void check_fresh_session(struct fz *f, const char *how)
{
        unsigned n;

        /* Waiting SETLKWs end without a reply at a reset: their buffers are ours again. */
        reap_pending(f, true);
        n = count_fds();
        if (n != f->fd_baseline)
                FZ_FAIL(f, "%u fds open after %s, %u before the run", n, how, f->fd_baseline);
        f->n_nodes = f->n_files = f->n_dirs = f->n_fhs = f->n_dirfhs = 0;
        check_outside(f);
}

/* Resets the session as a frontend disconnect does. */
static void reset_and_check_fds(struct fz *f)
{
        fs_session_reset(f->t.s);
        check_fresh_session(f, "a session reset");
}

/* ---- the runs ---- */

static void fz_setup(struct fz *f, uint64_t seed)
{
        struct fs_options opts = {
                .guest_uid = FS_ID_UNMAPPED, .host_uid = FS_ID_UNMAPPED,
                .guest_gid = FS_ID_UNMAPPED, .host_gid = FS_ID_UNMAPPED,
                .xattr = true,
        };
        g_autofree char *lnk = NULL, *sub = NULL, *file = NULL;

        memset(f, 0, sizeof(*f));
        f->seed = seed;
        f->rng = g_rand_new_with_seed_array((const guint32[]){ (guint32)seed, (guint32)(seed >> 32) }, 2);
        ft_setup_opts(&f->t, &opts);
        f->last_unique = f->t.unique;
        f->req = g_malloc(FZ_REQ_MAX);
        f->flat_out = g_malloc(FT_OUT_SIZE);
        f->big_out = g_malloc(FT_OUT_SIZE);
        pthread_mutex_init(&f->pending_mutex, NULL);
        f->pending = g_ptr_array_new();
        fs_worker_set_complete(f->t.w, on_complete, f);
        /* Some things to find: a file, a directory, a link out of the share. */
        file = ft_path(&f->t, "f1");
        g_assert_true(g_file_set_contents(file, "contents of f1\n", -1, NULL));
        sub = ft_path(&f->t, "sub");
        g_assert_cmpint(g_mkdir(sub, 0755), ==, 0);
        lnk = ft_path(&f->t, "lnk");
        g_assert_cmpint(symlink("../outside", lnk), ==, 0);
        f->outside_snapshot = snapshot_outside(f);
        f->fd_baseline = count_fds();
}

static void fz_teardown(struct fz *f)
{
        g_printerr("seed %" PRIu64 ": %lu requests, %lu replies (%lu errors), %lu without reply, "
                   "%lu deferred (%lu completed)\n", f->seed, f->iter, f->replies, f->errors,
                   f->no_replies, f->deferred, f->completed);
        g_assert_cmpuint(f->pending->len, ==, 0);
        g_ptr_array_free(f->pending, TRUE);
        pthread_mutex_destroy(&f->pending_mutex);
        g_free(f->req);
        g_free(f->flat_out);
        g_free(f->big_out);
        g_free(f->outside_snapshot);
        g_rand_free(f->rng);
        ft_teardown(&f->t);
}

/* A contended lock: owner 1 takes a write lock, owner 2 waits for it (the
 * daemon defers that SETLKW); random FLUSHes and INTERRUPTs end the wait. */
static void lock_pair(struct fz *f)
{
        uint64_t nodeid = file_node(f);

        for (unsigned k = 0; k < 2; k++) {
                struct fuse_in_header h = {
                        .len = sizeof(h) + sizeof(struct fuse_lk_in), .opcode = k ? FUSE_SETLKW : FUSE_SETLK,
                        .unique = ++f->last_unique, .nodeid = nodeid, .uid = getuid(), .gid = getgid(),
                };
                struct fuse_lk_in in = {
                        .fh = fh(f), .owner = 1 + k,
                        .lk = { .start = 0, .end = chance(f, 50) ? 100 : (uint64_t)INT64_MAX, .type = F_WRLCK },
                        .lk_flags = chance(f, 20) ? FUSE_LK_FLOCK : 0,
                };

                f->req_len = 0;
                put(f, &h, sizeof(h));
                put(f, &in, sizeof(in));
                send_and_check(f, h.opcode);
        }
}

static void fz_step(struct fz *f)
{
        uint32_t op;

        reap_pending(f, false);
        if (chance(f, 2)) {
                lock_pair(f);
                return;
        }
        op = build(f);

        if (chance(f, 35))
                mutate(f);
        else
                ((struct fuse_in_header *)f->req)->len = (uint32_t)f->req_len;
        send_and_check(f, op);
}

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
        const char *v = g_getenv(name);

        return v && *v ? strtoul(v, NULL, 0) : dflt;
}

static void run_seed(uint64_t seed, unsigned long iterations)
{
        struct fz f;
        gint64 start = g_get_monotonic_time();

        fz_setup(&f, seed);
        for (f.iter = 0; f.iter < iterations; f.iter++) {
                fz_step(&f);
                if ((f.iter + 1) % FZ_RESET_EVERY == 0)
                        reset_and_check_fds(&f);
        }
        reset_and_check_fds(&f);
        g_printerr("seed %" PRIu64 ": %.2f s\n", seed, (double)(g_get_monotonic_time() - start) / 1e6);
        fz_teardown(&f);
}

static const uint64_t default_seeds[] = { 1, 2, 0x5eed, 0xdecafbad };

static void test_fuzz(void)
{
        unsigned long iterations = env_ulong("SLUICE_FUZZ_ITERATIONS", FZ_DEFAULT_ITERATIONS);

        if (g_getenv("SLUICE_FUZZ_SEED")) {
                run_seed(env_ulong("SLUICE_FUZZ_SEED", 0), iterations);
                return;
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(default_seeds); i++)
                run_seed(default_seeds[i], iterations / G_N_ELEMENTS(default_seeds));
}

/* A read-only share: however wild the requests, the folder stays as it was. */
static void test_fuzz_readonly(void)
{
        unsigned long iterations = env_ulong("SLUICE_FUZZ_ITERATIONS", FZ_DEFAULT_ITERATIONS) / 4;
        uint64_t seed = g_getenv("SLUICE_FUZZ_SEED") ? env_ulong("SLUICE_FUZZ_SEED", 0) : 77;
        g_autofree char *before = NULL, *after = NULL;
        struct fz f;

        fz_setup(&f, seed);
        /* A writable slice first, so that there are open writable handles and files to abuse. */
        for (f.iter = 0; f.iter < 500; f.iter++)
                fz_step(&f);
        before = snapshot(f.t.dir, NULL);
        fs_session_set_readonly(f.t.s, true);
        for (; f.iter < 500 + iterations; f.iter++) {
                fz_step(&f);
                if (f.iter % 500 == 0) {
                        g_free(after);
                        after = snapshot(f.t.dir, NULL);
                        if (strcmp(before, after))
                                FZ_FAIL(&f, "read-only share changed:\nbefore:\n%s\nafter:\n%s", before, after);
                }
        }
        g_free(after);
        after = snapshot(f.t.dir, NULL);
        if (strcmp(before, after))
                FZ_FAIL(&f, "read-only share changed:\nbefore:\n%s\nafter:\n%s", before, after);
        reset_and_check_fds(&f);
        fz_teardown(&f);
}

/* ---- regressions found by the fuzzer ---- */

/* CREATE without O_EXCL of a name that is a FIFO used to open the FIFO
 * blocking: the queue thread hung until some writer came.  It is refused like
 * OPEN refuses it, at once. */
static void test_create_on_fifo(void)
{
        struct ft t;
        g_autofree char *fifo = NULL;
        struct fuse_entry_out e;
        uint64_t fh = 0;

        ft_setup(&t);
        fifo = ft_path(&t, "fifo");
        g_assert_cmpint(mkfifo(fifo, 0644), ==, 0);
        alarm(20);   /* the old bug hangs here */
        g_assert_cmpint(ft_create(&t, 1, "fifo", 0644, O_RDONLY, &e, &fh), ==, -ENXIO);
        g_assert_cmpint(ft_create(&t, 1, "fifo", 0644, O_RDWR | O_TRUNC, &e, &fh), ==, -ENXIO);
        alarm(0);
        g_assert_cmpint(ft_create(&t, 1, "sub", 0644, O_RDONLY, &e, &fh), ==, 0);
        /* An existing regular file still opens, blocking as asked. */
        g_assert_cmpint(ft_create(&t, 1, "sub", 0644, O_RDWR, &e, &fh), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "x", 1), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_MKDIR, 1, &(struct fuse_mkdir_in){ .mode = 0755 },
                                sizeof(struct fuse_mkdir_in), "d", 2), ==, 0);
        g_assert_cmpint(ft_create(&t, 1, "d", 0644, O_RDONLY, &e, &fh), ==, -EISDIR);
        ft_teardown(&t);
}

static int lk(struct ft *t, uint32_t op, uint64_t nodeid, uint64_t owner, uint32_t type, uint64_t start)
{
        struct fuse_lk_in in = {
                .owner = owner, .lk = { .start = start, .end = start, .type = type },
        };

        return ft_send(t, op, nodeid, &in, sizeof(in), NULL, 0);
}

/* Every GETLK or SETLK of a new lock owner number used to open an fd kept
 * until the inode went: a guest making up owners grew the daemon's fds
 * without bound.  Queries and unlocks now keep nothing, and the owners that
 * really hold locks are capped per inode. */
static void test_lock_owner_fds(void)
{
        struct ft t;
        struct fuse_entry_out e;
        const struct fuse_lk_out *o;
        uint64_t fh;
        unsigned before;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "locked", 0644, O_RDWR, &e, &fh), ==, 0);
        g_assert_cmpint(lk(&t, FUSE_SETLK, e.nodeid, 1, F_WRLCK, 0), ==, 0);
        before = count_fds();
        for (uint64_t owner = 100; owner < 2100; owner++) {
                g_assert_cmpint(lk(&t, FUSE_GETLK, e.nodeid, owner, F_WRLCK, 0), ==, 0);
                g_assert_cmpint(lk(&t, FUSE_SETLK, e.nodeid, owner, F_UNLCK, 0), ==, 0);
        }
        g_assert_cmpuint(count_fds(), ==, before);
        /* The queries still see the lock of owner 1, and owner 1 its own as free. */
        g_assert_cmpint(lk(&t, FUSE_GETLK, e.nodeid, 7, F_RDLCK, 0), ==, 0);
        o = ft_body(&t);
        g_assert_cmpuint(o->lk.type, ==, F_WRLCK);
        g_assert_cmpint(lk(&t, FUSE_GETLK, e.nodeid, 1, F_WRLCK, 0), ==, 0);
        o = ft_body(&t);
        g_assert_cmpuint(o->lk.type, ==, F_UNLCK);
        /* Owners holding locks: at most PT_LOCK_OWNERS_MAX of them. */
        for (uint64_t owner = 2; owner < PT_LOCK_OWNERS_MAX + 10; owner++)
                g_assert_cmpint(lk(&t, FUSE_SETLK, e.nodeid, owner, F_RDLCK, 100 + owner),
                                ==, owner <= PT_LOCK_OWNERS_MAX ? 0 : -ENOLCK);
        g_assert_cmpuint(count_fds(), <=, before + PT_LOCK_OWNERS_MAX);
        /* FLUSH of an owner gives its slot back. */
        g_assert_cmpint(ft_send(&t, FUSE_FLUSH, e.nodeid, &(struct fuse_flush_in){ .fh = fh, .lock_owner = 2 },
                                sizeof(struct fuse_flush_in), NULL, 0), ==, 0);
        g_assert_cmpint(lk(&t, FUSE_SETLK, e.nodeid, 5000, F_RDLCK, 0), ==, -EAGAIN);
        g_assert_cmpint(lk(&t, FUSE_SETLK, e.nodeid, 5000, F_RDLCK, 50), ==, 0);
        ft_teardown(&t);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/fuzz/regression/lock-owner-fds", test_lock_owner_fds);
        g_test_add_func("/fuzz/regression/create-on-fifo", test_create_on_fifo);
        g_test_add_func("/fuzz/requests", test_fuzz);
        g_test_add_func("/fuzz/readonly", test_fuzz_readonly);
        return g_test_run();
}
