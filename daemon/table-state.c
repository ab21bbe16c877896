/* SPDX-License-Identifier: GPL-2.0-or-later */
/* table-state.c — the `tables` memfd: its layout, its records, growing it
 * and reading one back (see table-state.h). */
#include "table-state.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash-point.h"
#include "slot-table.h"
#include "util.h"

#define PAGE 4096u
#define HEADER_BYTES PAGE
#define LONG_REC (TSTATE_NAME_MAX + 1)
#define MID_REC 64u
/* A name's record: its class in the top bit (LONG_BIT: 256 bytes, else 64),
 * its index (from 1) in the rest. */
#define LONG_BIT 0x80000000u

struct inode_rec {
        _Atomic uint32_t state;
        uint32_t gen;
        uint64_t dev, ino, birth, handle_hash;
        _Atomic uint64_t nlookup;
        uint32_t parent_idx, parent_gen;
        uint32_t type;
        _Atomic uint8_t stale;
        uint8_t reserved;
        uint16_t name_len;
        /* name_len <= TSTATE_NAME_INLINE: the name; longer: a uint32_t,
         * the index of its long-name record (from 1). */
        char name[TSTATE_NAME_INLINE];
};
_Static_assert(sizeof(struct inode_rec) == 96, "an inode record is 96 bytes");

struct handle_rec {
        _Atomic uint32_t state;
        uint32_t gen;
        uint64_t nodeid;
        int32_t flags;
        uint8_t is_dir;
        _Atomic uint8_t had_locks;
        uint8_t reserved[2];
        uint64_t reserved2;
};
_Static_assert(sizeof(struct handle_rec) == 32, "a handle record is 32 bytes");

enum { EXT_INODE, EXT_LONG, EXT_HANDLE, EXT_MID, EXT_KINDS };

static const uint32_t rec_size[EXT_KINDS] = {
        [EXT_INODE] = sizeof(struct inode_rec),
        [EXT_LONG] = LONG_REC,
        [EXT_HANDLE] = sizeof(struct handle_rec),
        [EXT_MID] = MID_REC,
};

struct header {
        /* Written once at creation; covered by `checksum`. */
        uint64_t magic;
        uint32_t version;
        uint32_t header_bytes;
        uint32_t rec_size[EXT_KINDS];
        uint32_t chunks;
        uint64_t checksum;
        /* Written as the session goes. */
        _Atomic uint32_t init_state;
        _Atomic uint32_t broken;
        struct tstate_init init;
        _Atomic uint64_t ext[EXT_KINDS][SLOT_CHUNKS];   /* file offset; 0: none */
};
_Static_assert(sizeof(struct header) <= HEADER_BYTES, "the header fits its page");

struct tstate {
        int fd;
        struct header *hdr;
        pthread_mutex_t grow_mutex;
        uint64_t file_end;                          /* under grow_mutex */
        _Atomic(char *) map[EXT_KINDS][SLOT_CHUNKS];
        /* Long-name records in use (bit i: record i), under the inode
         * table's lock: they are handed out lowest first, so that the long
         * names of a million inodes take as many pages as they fill. */
        struct name_pool {
                uint64_t *used;
                uint32_t words;
                uint32_t hint;                      /* no free record in the words below */
        } pool[2];                                  /* 0: 64-byte records, 1: 256-byte */
};

static uint32_t chunk_slots(unsigned k)
{
        return k == 0 ? SLOT_CHUNK0 : SLOT_CHUNK0 << (k - 1);
}

static uint64_t ext_bytes(unsigned kind, unsigned k)
{
        uint64_t b = (uint64_t)chunk_slots(k) * rec_size[kind];

        return (b + PAGE - 1) / PAGE * PAGE;
}

/* FNV-1a over the header's fixed part. */
static uint64_t header_checksum(const struct header *h)
{
        const uint8_t *p = (const uint8_t *)h;
        uint64_t x = 0xcbf29ce484222325ull;

        for (size_t i = 0; i < offsetof(struct header, checksum); i++)
                x = (x ^ p[i]) * 0x100000001b3ull;
        return x;
}

static int fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t n, const char *fmt, ...)
{
        va_list ap;

        if (why && n) {
                va_start(ap, fmt);
                (void) vsnprintf(why, n, fmt, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

static struct tstate *tstate_alloc(int fd)
{
        struct tstate *st = calloc(1, sizeof(*st));

        if (!st)
                return NULL;
        st->fd = fd;
        pthread_mutex_init(&st->grow_mutex, NULL);
        return st;
}

void tstate_free(struct tstate *st)
{
        if (!st)
                return;
        for (unsigned kind = 0; kind < EXT_KINDS; kind++)
                for (unsigned k = 0; k < SLOT_CHUNKS; k++) {
                        char *m = atomic_load_explicit(&st->map[kind][k], memory_order_relaxed);

                        if (m)
                                munmap(m, ext_bytes(kind, k));
                }
        if (st->hdr)
                munmap(st->hdr, HEADER_BYTES);
        if (st->fd >= 0)
                close(st->fd);
        pthread_mutex_destroy(&st->grow_mutex);
        free(st->pool[0].used);
        free(st->pool[1].used);
        free(st);
}

static void tstate_freep(struct tstate **st)
{
        tstate_free(*st);
}

int tstate_new(struct tstate **ret, int *ret_fd)
{
        _cleanup_(tstate_freep) struct tstate *st = NULL;
        struct header *h;
        int fd, dup_fd;

        fd = memfd_create("sluice-fs-tables", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        st = tstate_alloc(fd);
        if (!st) {
                close(fd);
                return -ENOMEM;
        }
        if (ftruncate(fd, HEADER_BYTES) < 0)
                return -errno;
        h = mmap(NULL, HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (h == MAP_FAILED)
                return -errno;
        st->hdr = h;
        st->file_end = HEADER_BYTES;
        h->magic = TSTATE_MAGIC;
        h->version = TSTATE_VERSION;
        h->header_bytes = HEADER_BYTES;
        for (unsigned kind = 0; kind < EXT_KINDS; kind++)
                h->rec_size[kind] = rec_size[kind];
        h->chunks = SLOT_CHUNKS;
        h->checksum = header_checksum(h);
        dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0)
                return -errno;
        *ret_fd = dup_fd;
        *ret = TAKE_PTR(st);
        return 0;
}

/* The extent of chunk k of `kind`, mapped; NULL when the file cannot grow. */
static char *ext_get(struct tstate *st, unsigned kind, unsigned k)
{
        char *m = atomic_load_explicit(&st->map[kind][k], memory_order_acquire);
        uint64_t bytes = ext_bytes(kind, k), off;

        if (m)
                return m;
        pthread_mutex_lock(&st->grow_mutex);
        m = atomic_load_explicit(&st->map[kind][k], memory_order_relaxed);
        if (!m) {
                off = st->file_end;
                if (ftruncate(st->fd, (off_t)(off + bytes)) == 0) {
                        m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, (off_t)off);
                        if (m == MAP_FAILED) {
                                m = NULL;
                        } else {
                                st->file_end = off + bytes;
                                atomic_store_explicit(&st->map[kind][k], m, memory_order_release);
                                /* Zeros (FREE records) before the directory names them. */
                                atomic_store_explicit(&st->hdr->ext[kind][k], off, memory_order_release);
                        }
                }
                if (!m)
                        atomic_store_explicit(&st->hdr->broken, 1, memory_order_release);
        }
        pthread_mutex_unlock(&st->grow_mutex);
        return m;
}

static uint32_t limit_of(struct tstate *st, unsigned kind);

/* After a WRITING mark: the record's other stores stay after it.  A
 * release store keeps what comes before it before it, not what comes after.
 * A SIGKILL lands between two instructions of the thread, as a signal
 * handler would: a signal fence is the order such an observer sees (the
 * compiler moves no store across it; the CPU retires in program order for
 * an interrupt of its own thread). */
static inline void writing_fence(void)
{
        atomic_signal_fence(memory_order_seq_cst);
}

static void *rec_at(struct tstate *st, unsigned kind, uint32_t idx, bool grow)
{
        uint32_t base;
        unsigned k;
        char *m;

        if (idx >= SLOT_MAX)
                return NULL;
        k = slot_chunk(idx, &base);
        m = grow ? ext_get(st, kind, k) : atomic_load_explicit(&st->map[kind][k], memory_order_acquire);
        return m ? m + (uint64_t)(idx - base) * rec_size[kind] : NULL;
}

void tstate_size(struct tstate *st, uint64_t *ret_allocated, uint64_t *ret_size)
{
        struct stat s;

        if (fstat(st->fd, &s) < 0) {
                *ret_allocated = *ret_size = 0;
                return;
        }
        *ret_allocated = (uint64_t)s.st_blocks * 512;
        *ret_size = (uint64_t)s.st_size;
}

bool tstate_broken(struct tstate *st)
{
        return atomic_load_explicit(&st->hdr->broken, memory_order_relaxed) != 0;
}

void tstate_set_init(struct tstate *st, const struct tstate_init *init)
{
        atomic_store_explicit(&st->hdr->init_state, TSTATE_WRITING, memory_order_release);
        writing_fence();
        st->hdr->init = *init;
        atomic_store_explicit(&st->hdr->init_state, TSTATE_LIVE, memory_order_release);
}

void tstate_clear_init(struct tstate *st)
{
        atomic_store_explicit(&st->hdr->init_state, TSTATE_FREE, memory_order_release);
}

bool tstate_get_init(struct tstate *st, struct tstate_init *ret)
{
        if (atomic_load_explicit(&st->hdr->init_state, memory_order_acquire) != TSTATE_LIVE)
                return false;
        *ret = st->hdr->init;
        return true;
}

/* Room in a pool for record i. */
static bool pool_reserve(struct name_pool *p, uint32_t i)
{
        while (i / 64 >= p->words) {
                uint32_t n = p->words ? p->words * 2 : 16;
                uint64_t *u;

                if ((uint64_t)n * 64 > SLOT_MAX)
                        return false;
                u = realloc(p->used, n * sizeof(*u));
                if (!u)
                        return false;
                memset(u + p->words, 0, (n - p->words) * sizeof(*u));
                u[0] |= 1;   /* record 0 means "none" */
                p->used = u;
                p->words = n;
        }
        return true;
}

/* A free name record of the class a name of len bytes needs, as a
 * reference (0: none: out of memory). */
static uint32_t name_alloc(struct tstate *st, size_t len)
{
        unsigned cls = len > MID_REC;
        struct name_pool *p = &st->pool[cls];

        for (uint32_t w = p->hint;; w++) {
                if (!pool_reserve(p, w * 64))
                        return 0;
                if (~p->used[w]) {
                        uint32_t b = (uint32_t)__builtin_ctzll(~p->used[w]);

                        p->used[w] |= 1ull << b;
                        p->hint = w;
                        return (w * 64 + b) | (cls ? LONG_BIT : 0);
                }
        }
}

static void name_free(struct tstate *st, uint32_t ref)
{
        struct name_pool *p = &st->pool[(ref & LONG_BIT) != 0];
        uint32_t i = ref & ~LONG_BIT;

        if (i == 0 || i / 64 >= p->words)
                return;
        p->used[i / 64] &= ~(1ull << (i % 64));
        if (i / 64 < p->hint)
                p->hint = i / 64;
}

static char *name_at(struct tstate *st, uint32_t ref, bool grow)
{
        uint32_t i = ref & ~LONG_BIT;

        return i ? rec_at(st, ref & LONG_BIT ? EXT_LONG : EXT_MID, i, grow) : NULL;
}

/* The name record a (LIVE or WRITING) record of ours points to, 0: none. */
static uint32_t long_of(const struct inode_rec *r)
{
        uint32_t l = 0;

        if (atomic_load_explicit(&r->state, memory_order_relaxed) != TSTATE_FREE &&
            r->name_len > TSTATE_NAME_INLINE)
                memcpy(&l, r->name, sizeof(l));
        return l;
}

void tstate_inode_write(struct tstate *st, uint32_t idx, const struct tstate_inode *rec,
                        bool inserting)
{
        struct inode_rec *r = rec_at(st, EXT_INODE, idx, true);
        size_t len = rec->name_len > TSTATE_NAME_MAX ? 0 : rec->name_len;
        uint32_t old_long, new_long = 0;
        char *l = NULL;

        if (!r)
                return;
        old_long = long_of(r);
        if (len > TSTATE_NAME_INLINE) {
                /* Written into a record no live one names, before the
                 * record points to it. */
                new_long = name_alloc(st, len);
                l = new_long ? name_at(st, new_long, true) : NULL;
                if (!l) {
                        atomic_store_explicit(&st->hdr->broken, 1, memory_order_release);
                        return;
                }
                memcpy(l, rec->name, len);
        }
        atomic_store_explicit(&r->state, TSTATE_WRITING, memory_order_release);
        writing_fence();
        if (inserting)
                CRASH_POINT("inode-insert");
        r->gen = rec->gen;
        r->dev = rec->dev;
        r->ino = rec->ino;
        r->birth = rec->birth;
        r->handle_hash = rec->handle_hash;
        atomic_store_explicit(&r->nlookup, rec->nlookup, memory_order_relaxed);
        r->parent_idx = rec->parent_idx;
        r->parent_gen = rec->parent_gen;
        r->type = rec->type;
        atomic_store_explicit(&r->stale, rec->stale, memory_order_relaxed);
        r->name_len = (uint16_t)len;
        if (new_long)
                memcpy(r->name, &new_long, sizeof(new_long));
        else
                memcpy(r->name, rec->name, len);
        atomic_store_explicit(&r->state, TSTATE_LIVE, memory_order_release);
        name_free(st, old_long);
}

uint64_t tstate_inode_handle_hash(struct tstate *st, uint32_t idx)
{
        struct inode_rec *r = rec_at(st, EXT_INODE, idx, false);

        return r && atomic_load_explicit(&r->state, memory_order_relaxed) == TSTATE_LIVE ? r->handle_hash : 0;
}

void tstate_inode_set_nlookup(struct tstate *st, uint32_t idx, uint64_t nlookup)
{
        struct inode_rec *r = rec_at(st, EXT_INODE, idx, false);

        if (r)
                atomic_store_explicit(&r->nlookup, nlookup, memory_order_release);
}

void tstate_inode_set_stale(struct tstate *st, uint32_t idx)
{
        struct inode_rec *r = rec_at(st, EXT_INODE, idx, false);

        if (r)
                atomic_store_explicit(&r->stale, 1, memory_order_release);
}

void tstate_inode_clear(struct tstate *st, uint32_t idx)
{
        struct inode_rec *r = rec_at(st, EXT_INODE, idx, false);
        uint32_t l;

        if (!r)
                return;
        l = long_of(r);
        atomic_store_explicit(&r->state, TSTATE_FREE, memory_order_release);
        name_free(st, l);
}

int tstate_take_long_names(struct tstate *st)
{
        uint32_t limit = limit_of(st, EXT_INODE);

        for (uint32_t i = 1; i < limit; i++) {
                struct inode_rec *r = rec_at(st, EXT_INODE, i, false);
                uint32_t ref = r ? long_of(r) : 0, li = ref & ~LONG_BIT;
                struct name_pool *p = &st->pool[(ref & LONG_BIT) != 0];

                if (!li)
                        continue;
                if (!pool_reserve(p, li))
                        return -ENOMEM;
                p->used[li / 64] |= 1ull << (li % 64);
        }
        return 0;
}

void tstate_handle_write(struct tstate *st, uint32_t idx, const struct tstate_handle *rec)
{
        struct handle_rec *r = rec_at(st, EXT_HANDLE, idx, true);

        if (!r)
                return;
        atomic_store_explicit(&r->state, TSTATE_WRITING, memory_order_release);
        writing_fence();
        r->gen = rec->gen;
        r->nodeid = rec->nodeid;
        r->flags = rec->flags & ~(O_CREAT | O_TRUNC | O_EXCL);
        r->is_dir = rec->is_dir;
        atomic_store_explicit(&r->had_locks, rec->had_locks, memory_order_relaxed);
        atomic_store_explicit(&r->state, TSTATE_LIVE, memory_order_release);
}

void tstate_handle_set_locks(struct tstate *st, uint32_t idx)
{
        struct handle_rec *r = rec_at(st, EXT_HANDLE, idx, false);

        if (r)
                atomic_store_explicit(&r->had_locks, 1, memory_order_release);
}

void tstate_handle_clear(struct tstate *st, uint32_t idx)
{
        struct handle_rec *r = rec_at(st, EXT_HANDLE, idx, false);

        if (r)
                atomic_store_explicit(&r->state, TSTATE_FREE, memory_order_release);
}

/* ---- reading a state back ---- */

int tstate_open(int fd, struct tstate **ret, char *why, size_t why_size)
{
        _cleanup_(tstate_freep) struct tstate *st = tstate_alloc(fd);
        struct header *h;
        struct stat s;
        uint64_t offs[EXT_KINDS * SLOT_CHUNKS], lens[EXT_KINDS * SLOT_CHUNKS];
        unsigned n = 0;
        int err;

        if (!st) {
                close(fd);
                return -ENOMEM;
        }
        if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode)) {
                return fail(why, why_size, "the state is not a memfd");
        }
        if ((uint64_t)s.st_size < HEADER_BYTES || s.st_size % PAGE) {
                return fail(why, why_size, "the state is %lld bytes: truncated", (long long)s.st_size);
        }
        h = mmap(NULL, HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (h == MAP_FAILED) {
                err = -errno;
                (void) snprintf(why, why_size, "cannot map the state: %s", strerror(-err));
                return err;
        }
        st->hdr = h;
        st->file_end = (uint64_t)s.st_size;
        if (h->magic != TSTATE_MAGIC || h->version != TSTATE_VERSION) {
                return fail(why, why_size, "not a table state of version %u", TSTATE_VERSION);
        }
        if (h->checksum != header_checksum(h)) {
                return fail(why, why_size, "the header's checksum does not match");
        }
        if (h->header_bytes != HEADER_BYTES || h->chunks != SLOT_CHUNKS ||
            h->rec_size[EXT_INODE] != rec_size[EXT_INODE] || h->rec_size[EXT_LONG] != rec_size[EXT_LONG] ||
            h->rec_size[EXT_HANDLE] != rec_size[EXT_HANDLE]) {
                return fail(why, why_size, "the header's sizes are not this build's");
        }
        if (atomic_load(&h->broken)) {
                return fail(why, why_size, "the previous worker could not keep its state complete");
        }
        for (unsigned kind = 0; kind < EXT_KINDS; kind++) {
                for (unsigned k = 0; k < SLOT_CHUNKS; k++) {
                        uint64_t off = atomic_load(&h->ext[kind][k]), len = ext_bytes(kind, k);
                        char *m;

                        if (!off)
                                continue;
                        if (off % PAGE || off < HEADER_BYTES || off > (uint64_t)s.st_size ||
                            len > (uint64_t)s.st_size - off) {
                                return fail(why, why_size, "extent %u/%u lies outside the state", kind, k);
                        }
                        for (unsigned i = 0; i < n; i++)
                                if (off < offs[i] + lens[i] && offs[i] < off + len) {
                                        return fail(why, why_size, "extents overlap");
                                }
                        offs[n] = off;
                        lens[n++] = len;
                        m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
                        if (m == MAP_FAILED) {
                                err = -errno;
                                (void) snprintf(why, why_size, "cannot map the state: %s", strerror(-err));
                                return err;
                        }
                        atomic_store(&st->map[kind][k], m);
                }
        }
        if (atomic_load(&h->init_state) > TSTATE_LIVE) {
                return fail(why, why_size, "the INIT record's state word is %u", atomic_load(&h->init_state));
        }
        *ret = TAKE_PTR(st);
        return 0;
}

static uint32_t limit_of(struct tstate *st, unsigned kind)
{
        uint32_t limit = 0;

        for (unsigned k = 0; k < SLOT_CHUNKS; k++)
                if (atomic_load_explicit(&st->map[kind][k], memory_order_relaxed))
                        limit = k == 0 ? SLOT_CHUNK0 : SLOT_CHUNK0 << k;
        return limit;
}

uint32_t tstate_inode_limit(struct tstate *st)
{
        return limit_of(st, EXT_INODE);
}

uint32_t tstate_handle_limit(struct tstate *st)
{
        return limit_of(st, EXT_HANDLE);
}

static bool type_valid(uint32_t type)
{
        switch (type) {
        case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
                return true;
        default:
                return false;
        }
}

int tstate_inode_read(struct tstate *st, uint32_t idx, unsigned *ret_state,
                      struct tstate_inode *ret, char *why, size_t why_size)
{
        struct inode_rec *r = rec_at(st, EXT_INODE, idx, false);
        unsigned state = r ? atomic_load_explicit(&r->state, memory_order_acquire) : TSTATE_FREE;

        *ret_state = state;
        if (state != TSTATE_LIVE)
                return 0;
        /* Copied field by field: the memfd is shared and the writer untrusted. */
        ret->gen = r->gen;
        ret->dev = r->dev;
        ret->ino = r->ino;
        ret->birth = r->birth;
        ret->handle_hash = r->handle_hash;
        ret->nlookup = atomic_load(&r->nlookup);
        ret->parent_idx = r->parent_idx;
        ret->parent_gen = r->parent_gen;
        ret->type = r->type;
        ret->stale = atomic_load(&r->stale) != 0;
        ret->name_len = r->name_len;
        if (!type_valid(ret->type))
                return fail(why, why_size, "inode %u has file type 0%o", idx, ret->type);
        if (ret->name_len > TSTATE_NAME_MAX)
                return fail(why, why_size, "inode %u has a name of %zu bytes", idx, ret->name_len);
        if (ret->name_len <= TSTATE_NAME_INLINE) {
                memcpy(ret->name, r->name, ret->name_len);
        } else {
                uint32_t ref;
                const char *l;

                memcpy(&ref, r->name, sizeof(ref));
                l = name_at(st, ref, false);
                if (!l || (!(ref & LONG_BIT) && ret->name_len > MID_REC))
                        return fail(why, why_size, "inode %u names a long name the state lacks", idx);
                memcpy(ret->name, l, ret->name_len);
        }
        ret->name[ret->name_len] = '\0';
        if (strlen(ret->name) != ret->name_len)
                return fail(why, why_size, "inode %u has a NUL in its name", idx);
        if (ret->nlookup > UINT64_MAX / 2)
                return fail(why, why_size, "inode %u has a lookup count of %llu", idx,
                            (unsigned long long)ret->nlookup);
        return 0;
}

int tstate_handle_read(struct tstate *st, uint32_t idx, unsigned *ret_state,
                       struct tstate_handle *ret, char *why, size_t why_size)
{
        struct handle_rec *r = rec_at(st, EXT_HANDLE, idx, false);
        unsigned state = r ? atomic_load_explicit(&r->state, memory_order_acquire) : TSTATE_FREE;

        *ret_state = state;
        if (state != TSTATE_LIVE)
                return 0;
        ret->gen = r->gen;
        ret->nodeid = r->nodeid;
        ret->flags = r->flags;
        ret->is_dir = r->is_dir != 0;
        ret->had_locks = atomic_load(&r->had_locks) != 0;
        if (r->is_dir > 1 || (ret->flags & O_ACCMODE) == O_ACCMODE ||
            (ret->flags & (O_CREAT | O_TRUNC | O_EXCL)))
                return fail(why, why_size, "handle %u has open flags 0%o", idx, (unsigned)ret->flags);
        if (ret->is_dir && (ret->flags & O_ACCMODE) != O_RDONLY)
                return fail(why, why_size, "directory handle %u is open for writing", idx);
        return 0;
}
