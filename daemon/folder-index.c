/* SPDX-License-Identifier: GPL-2.0-or-later */
/* folder-index.c — per-folder index of folded names (see folder-index.h). */
#include "folder-index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "case-fold.h"

/* A key (folded name) of a name of at most NAME_MAX bytes, with its NUL. */
#define KEY_SIZE CASEFOLD_KEY_SIZE(FINDEX_NAME_SIZE - 1)
/* Marks a slot whose key several names share (twins). */
#define NAME_MANY UINT32_MAX

/* One folded key of a folder.  An empty slot has key_len 0 (no name is
 * empty, so no key is); a removed one stays in the probe chains, dead. */
struct slot {
        uint64_t hash;
        uint32_t key_off;
        uint32_t name_off;      /* NAME_MANY: twins */
        uint16_t key_len;
        uint16_t name_len;
        bool dead;
};

struct folder {
        dev_t dev;
        ino_t ino;
        struct timespec mtime, ctime;
        struct folder *lru_prev, *lru_next;     /* most recently used first */
        struct folder *chain;                   /* next in its bucket */
        size_t n_names;                         /* live slots */
        size_t n_used;                          /* live and dead slots */
        /* Brought up to date by our own changes (findex_note_change()) since
         * the last scan: read again once the folder is quiet for a second,
         * as a host change in the same tick as ours would not show. */
        bool unverified;
        size_t mask;                            /* slots - 1 (a power of 2) */
        struct slot *slots;
        char *arena;                            /* names and keys, NUL-less */
        size_t arena_len, arena_cap;
};

struct findex {
        pthread_mutex_t lock;
        struct findex_limits limits;
        uint64_t k0, k1;                        /* SipHash key */
        struct folder **buckets;
        size_t n_buckets;                       /* a power of 2 */
        struct folder *lru_head, *lru_tail;
        size_t folders, names, bytes;
        uint64_t scans, hits;
};

/* ---- hashing: SipHash-1-3 with the index's random key ---- */

static inline uint64_t rotl(uint64_t x, int b)
{
        return (x << b) | (x >> (64 - b));
}

#define SIPROUND do { \
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2; \
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0; \
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); \
} while (0)

static uint64_t key_hash(const struct findex *ix, const char *s, size_t len)
{
        uint64_t v0 = ix->k0 ^ 0x736f6d6570736575ULL, v1 = ix->k1 ^ 0x646f72616e646f6dULL;
        uint64_t v2 = ix->k0 ^ 0x6c7967656e657261ULL, v3 = ix->k1 ^ 0x7465646279746573ULL;
        const unsigned char *p = (const unsigned char *)s;
        size_t left = len;

        for (; left >= 8; p += 8, left -= 8) {
                uint64_t m;
                memcpy(&m, p, 8);
                v3 ^= m;
                SIPROUND;
                v0 ^= m;
        }
        uint64_t b = (uint64_t)len << 56;
        for (size_t i = 0; i < left; i++)
                b |= (uint64_t)p[i] << (8 * i);
        v3 ^= b;
        SIPROUND;
        v0 ^= b;
        v2 ^= 0xff;
        SIPROUND;
        SIPROUND;
        SIPROUND;
        return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- one folder's table ---- */

static size_t folder_bytes(const struct folder *f)
{
        return sizeof(*f) + (f->mask + 1) * sizeof(struct slot) + f->arena_cap;
}

static void folder_free(struct folder *f)
{
        if (!f)
                return;
        free(f->slots);
        free(f->arena);
        free(f);
}

static struct slot *folder_find(const struct folder *f, uint64_t hash, const char *key, size_t key_len)
{
        for (size_t i = hash & f->mask;; i = (i + 1) & f->mask) {
                struct slot *s = &f->slots[i];
                if (s->key_len == 0)
                        return s;
                if (!s->dead && s->hash == hash && s->key_len == key_len &&
                    memcmp(f->arena + s->key_off, key, key_len) == 0)
                        return s;
        }
}

/* Rehashes into a table where the live names fill at most 3/8 (dead slots
 * are left behind). */
static int folder_grow(struct folder *f)
{
        size_t n = 16;
        while (n * 3 < (f->n_names + 1) * 8)
                n *= 2;
        struct slot *slots = calloc(n, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        struct folder moved = *f;
        moved.slots = slots;
        moved.mask = n - 1;
        for (size_t i = 0; i <= f->mask; i++) {
                const struct slot *s = &f->slots[i];
                if (s->key_len == 0 || s->dead)
                        continue;
                for (size_t j = s->hash & moved.mask;; j = (j + 1) & moved.mask) {
                        if (slots[j].key_len == 0) {
                                slots[j] = *s;
                                break;
                        }
                }
        }
        free(f->slots);
        f->slots = slots;
        f->mask = n - 1;
        f->n_used = f->n_names;
        return 0;
}

static int arena_add(struct folder *f, const char *s, size_t len, uint32_t *ret_off)
{
        if (f->arena_len + len > f->arena_cap) {
                size_t cap = f->arena_cap ? f->arena_cap * 2 : 4096;
                while (cap < f->arena_len + len)
                        cap *= 2;
                if (cap > UINT32_MAX)
                        return -E2BIG;
                char *a = realloc(f->arena, cap);
                if (!a)
                        return -ENOMEM;
                f->arena = a;
                f->arena_cap = cap;
        }
        memcpy(f->arena + f->arena_len, s, len);
        *ret_off = (uint32_t)f->arena_len;
        f->arena_len += len;
        return 0;
}

/* Adds one host name (and its key) to the folder's table. */
static int folder_add(const struct findex *ix, struct folder *f, const char *name, size_t name_len,
                      const char *key, size_t key_len)
{
        if ((f->n_used + 1) * 4 > (f->mask + 1) * 3) {
                int r = folder_grow(f);
                if (r < 0)
                        return r;
        }
        uint64_t hash = key_hash(ix, key, key_len);
        struct slot *s = folder_find(f, hash, key, key_len);
        if (s->key_len != 0) {
                /* the same name again (a rename onto it replaced it) is no twin */
                if (s->name_off != NAME_MANY &&
                    !(s->name_len == name_len && memcmp(f->arena + s->name_off, name, name_len) == 0))
                        s->name_off = NAME_MANY;
                return 0;
        }
        uint32_t key_off, name_off;
        int r = arena_add(f, key, key_len, &key_off);
        if (r < 0)
                return r;
        r = arena_add(f, name, name_len, &name_off);
        if (r < 0)
                return r;
        *s = (struct slot){ .hash = hash, .key_off = key_off, .name_off = name_off,
                            .key_len = (uint16_t)key_len, .name_len = (uint16_t)name_len };
        f->n_names++;
        f->n_used++;
        return 0;
}

static int folder_answer(const struct folder *f, uint64_t hash, const char *key, size_t key_len,
                         char ret_name[FINDEX_NAME_SIZE])
{
        const struct slot *s = folder_find(f, hash, key, key_len);
        if (s->key_len == 0)
                return FINDEX_NONE;
        if (s->name_off == NAME_MANY)
                return FINDEX_MANY;
        memcpy(ret_name, f->arena + s->name_off, s->name_len);
        ret_name[s->name_len] = '\0';
        return FINDEX_ONE;
}

/* ---- the index: folders by (dev, ino), LRU ---- */

static size_t bucket_of(const struct findex *ix, dev_t dev, ino_t ino)
{
        uint64_t h = ((uint64_t)ino * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)dev;
        return (size_t)(h ^ (h >> 29)) & (ix->n_buckets - 1);
}

static struct folder **find_link(struct findex *ix, dev_t dev, ino_t ino)
{
        struct folder **link = &ix->buckets[bucket_of(ix, dev, ino)];
        while (*link && ((*link)->dev != dev || (*link)->ino != ino))
                link = &(*link)->chain;
        return link;
}

static void lru_unlink(struct findex *ix, struct folder *f)
{
        if (f->lru_prev)
                f->lru_prev->lru_next = f->lru_next;
        else
                ix->lru_head = f->lru_next;
        if (f->lru_next)
                f->lru_next->lru_prev = f->lru_prev;
        else
                ix->lru_tail = f->lru_prev;
        f->lru_prev = f->lru_next = NULL;
}

static void lru_push_front(struct findex *ix, struct folder *f)
{
        f->lru_prev = NULL;
        f->lru_next = ix->lru_head;
        if (ix->lru_head)
                ix->lru_head->lru_prev = f;
        ix->lru_head = f;
        if (!ix->lru_tail)
                ix->lru_tail = f;
}

/* Takes the folder out of the index (the caller frees it).  Lock held. */
static void drop_locked(struct findex *ix, struct folder *f)
{
        struct folder **link = find_link(ix, f->dev, f->ino);
        if (*link == f)
                *link = f->chain;
        lru_unlink(ix, f);
        ix->folders--;
        ix->names -= f->n_names;
        ix->bytes -= folder_bytes(f);
}

static bool fits_alone(const struct findex *ix, const struct folder *f)
{
        return f->n_names <= ix->limits.max_names && folder_bytes(f) <= ix->limits.max_bytes;
}

/* Keeps `f`, evicting the least recently used folders to make room; frees
 * what it replaces or evicts.  Lock held. */
static void keep_locked(struct findex *ix, struct folder *f)
{
        struct folder *old = *find_link(ix, f->dev, f->ino);
        if (old) {
                drop_locked(ix, old);
                folder_free(old);
        }
        while (ix->lru_tail && (ix->folders + 1 > ix->limits.max_folders ||
                                ix->names + f->n_names > ix->limits.max_names ||
                                ix->bytes + folder_bytes(f) > ix->limits.max_bytes)) {
                struct folder *victim = ix->lru_tail;
                drop_locked(ix, victim);
                folder_free(victim);
        }
        struct folder **link = find_link(ix, f->dev, f->ino);
        f->chain = NULL;
        *link = f;
        lru_push_front(ix, f);
        ix->folders++;
        ix->names += f->n_names;
        ix->bytes += folder_bytes(f);
}

struct findex *findex_new(const struct findex_limits *limits)
{
        struct findex *ix = calloc(1, sizeof(*ix));
        if (!ix)
                return NULL;
        ix->limits = (struct findex_limits){ FINDEX_MAX_FOLDERS, FINDEX_MAX_NAMES, FINDEX_MAX_BYTES };
        if (limits) {
                if (limits->max_folders)
                        ix->limits.max_folders = limits->max_folders;
                if (limits->max_names)
                        ix->limits.max_names = limits->max_names;
                if (limits->max_bytes)
                        ix->limits.max_bytes = limits->max_bytes;
        }
        ix->n_buckets = 16;
        while (ix->n_buckets < ix->limits.max_folders)
                ix->n_buckets *= 2;
        ix->buckets = calloc(ix->n_buckets, sizeof(*ix->buckets));
        if (!ix->buckets) {
                free(ix);
                return NULL;
        }
        uint64_t k[2];
        if (getrandom(k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
                /* no entropy yet (early boot): a weaker key, never none */
                struct timespec ts;
                (void)clock_gettime(CLOCK_MONOTONIC, &ts);
                k[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)ix;
                k[1] = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)&k;
        }
        ix->k0 = k[0];
        ix->k1 = k[1];
        pthread_mutex_init(&ix->lock, NULL);
        return ix;
}

void findex_free(struct findex *ix)
{
        if (!ix)
                return;
        while (ix->lru_head) {
                struct folder *f = ix->lru_head;
                drop_locked(ix, f);
                folder_free(f);
        }
        pthread_mutex_destroy(&ix->lock);
        free(ix->buckets);
        free(ix);
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool before(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Whether the folder's last change (`st`) is older than the clock's tick
 * at `t0`, read before `st`: then any later change gets other times. */
static bool quiet(const struct stat *st, const struct timespec *t0)
{
        return before(&st->st_mtim, t0) && before(&st->st_ctim, t0);
}

/* Whether an index our own changes kept up is to be read again: the folder
 * has not changed for a second (not just a tick: while the guest keeps
 * changing a folder, no miss reads it all again). */
static bool settled(const struct stat *st, const struct timespec *t0)
{
        const struct timespec a_second_ago = { t0->tv_sec - 1, t0->tv_nsec };
        return before(&st->st_mtim, &a_second_ago) && before(&st->st_ctim, &a_second_ago);
}

/* Linux's getdents64 record. */
struct dirent64_rec {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

/* What one scan found for the name asked. */
struct scan_answer {
        int match;
        char name[FINDEX_NAME_SIZE];
};

static void note_match(struct scan_answer *a, const char *name, size_t len)
{
        if (a->match == FINDEX_NONE) {
                a->match = FINDEX_ONE;
                memcpy(a->name, name, len);
                a->name[len] = '\0';
        } else {
                a->match = FINDEX_MANY;
        }
}

/* Reads the folder once: answers the asked key in *answer and returns the
 * folder's table in *ret (NULL when it must not be kept: over the bounds,
 * or read too soon after a change).  0 or -errno. */
static int scan(struct findex *ix, int dir_fd, const char *key, size_t key_len,
                struct scan_answer *answer, struct folder **ret)
{
        struct timespec t0;
        struct stat st;
        char buf[32768] __attribute__((aligned(8)));
        char k[KEY_SIZE];
        int r = 0;

        *ret = NULL;
        answer->match = FINDEX_NONE;
        /* the coarse clock is the one the kernel stamps files with */
        if (clock_gettime(CLOCK_REALTIME_COARSE, &t0) < 0)
                return -errno;
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        struct folder *f = calloc(1, sizeof(*f));
        bool keep = f != NULL;
        if (keep) {
                f->dev = st.st_dev;
                f->ino = st.st_ino;
                f->mtime = st.st_mtim;
                f->ctime = st.st_ctim;
                f->mask = 15;
                f->slots = calloc(16, sizeof(*f->slots));
                keep = f->slots != NULL;
        }
        for (;;) {
                ssize_t n = getdents64(fd, buf, sizeof(buf));
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (n == 0)
                        break;
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64_rec *d = (const void *)(buf + off);
                        off += d->d_reclen;
                        const char *name = d->d_name;
                        size_t len = strnlen(name, FINDEX_NAME_SIZE);
                        if (len == 0 || len >= FINDEX_NAME_SIZE ||
                            (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))))
                                continue;
                        int kl = casefold_key(name, len, k, sizeof(k));
                        if (kl < 0)
                                continue;
                        if ((size_t)kl == key_len && memcmp(k, key, key_len) == 0)
                                note_match(answer, name, len);
                        if (keep && (folder_add(ix, f, name, len, k, (size_t)kl) < 0 ||
                                     !fits_alone(ix, f))) {
                                /* too big to keep: finish the answer only */
                                keep = false;
                                free(f->slots);
                                free(f->arena);
                                f->slots = NULL;
                                f->arena = NULL;
                        }
                }
        }
        close(fd);
        /* a change in the tick the times were read in could leave them as
         * they are: such a scan answers now, and is not trusted later */
        if (r < 0 || !quiet(&st, &t0))
                keep = false;
        if (keep)
                *ret = f;
        else
                folder_free(f);
        return r;
}

int findex_lookup(struct findex *ix, int dir_fd, const char *name, size_t len,
                  char ret_name[FINDEX_NAME_SIZE])
{
        char key[KEY_SIZE];
        struct stat st;

        if (len == 0 || len >= FINDEX_NAME_SIZE)
                return -ENAMETOOLONG;
        int kl = casefold_key(name, len, key, sizeof(key));
        if (kl < 0)
                return kl;
        uint64_t hash = key_hash(ix, key, (size_t)kl);
        struct timespec t0;
        /* before the fstat: see settled() */
        if (clock_gettime(CLOCK_REALTIME_COARSE, &t0) < 0)
                return -errno;
        if (fstat(dir_fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;

        pthread_mutex_lock(&ix->lock);
        struct folder *f = *find_link(ix, st.st_dev, st.st_ino);
        if (f && same_time(&f->mtime, &st.st_mtim) && same_time(&f->ctime, &st.st_ctim) &&
            !(f->unverified && settled(&st, &t0))) {
                int match = folder_answer(f, hash, key, (size_t)kl, ret_name);
                lru_unlink(ix, f);
                lru_push_front(ix, f);
                ix->hits++;
                pthread_mutex_unlock(&ix->lock);
                return match;
        }
        if (f) {
                drop_locked(ix, f);
                folder_free(f);
        }
        ix->scans++;
        pthread_mutex_unlock(&ix->lock);

        struct scan_answer answer;
        struct folder *fresh;
        int r = scan(ix, dir_fd, key, (size_t)kl, &answer, &fresh);
        if (r < 0)
                return r;
        if (fresh) {
                pthread_mutex_lock(&ix->lock);
                keep_locked(ix, fresh);
                pthread_mutex_unlock(&ix->lock);
        }
        if (answer.match == FINDEX_ONE)
                memcpy(ret_name, answer.name, strlen(answer.name) + 1);
        return answer.match;
}

void findex_forget(struct findex *ix, dev_t dev, ino_t ino)
{
        pthread_mutex_lock(&ix->lock);
        struct folder *f = *find_link(ix, dev, ino);
        if (f)
                drop_locked(ix, f);
        pthread_mutex_unlock(&ix->lock);
        folder_free(f);
}

int findex_stamp(int dir_fd, struct findex_stamp *ret)
{
        struct stat st;

        if (fstat(dir_fd, &st) < 0)
                return -errno;
        *ret = (struct findex_stamp){ .dev = st.st_dev, .ino = st.st_ino,
                                      .mtime = st.st_mtim, .ctime = st.st_ctim };
        return 0;
}

/* Takes `name` out of the folder's table: false when the table cannot say
 * what is left (twins, or a name it did not have). */
static bool folder_remove(const struct findex *ix, struct folder *f, const char *name)
{
        char key[KEY_SIZE];
        size_t len = strlen(name);
        int kl = casefold_key(name, len, key, sizeof(key));
        if (kl < 0)
                return false;
        struct slot *s = folder_find(f, key_hash(ix, key, (size_t)kl), key, (size_t)kl);
        if (s->key_len == 0 || s->name_off == NAME_MANY || s->name_len != len ||
            memcmp(f->arena + s->name_off, name, len) != 0)
                return false;
        s->dead = true;
        f->n_names--;
        return true;
}

static int folder_add_name(const struct findex *ix, struct folder *f, const char *name)
{
        char key[KEY_SIZE];
        size_t len = strlen(name);
        int kl = casefold_key(name, len, key, sizeof(key));
        if (kl < 0)
                return kl;
        return folder_add(ix, f, name, len, key, (size_t)kl);
}

void findex_note_change(struct findex *ix, int dir_fd, const struct findex_stamp *before_change,
                        const char *removed, const char *added)
{
        struct stat st;
        bool ok;

        pthread_mutex_lock(&ix->lock);
        struct folder *f = *find_link(ix, before_change->dev, before_change->ino);
        if (!f) {
                pthread_mutex_unlock(&ix->lock);
                return;
        }
        /* only a table that was the folder just before our change can be
         * brought up to date by it; and it must still fit the bounds */
        ok = same_time(&f->mtime, &before_change->mtime) && same_time(&f->ctime, &before_change->ctime) &&
             fstat(dir_fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
        drop_locked(ix, f);
        if (ok && removed)
                ok = folder_remove(ix, f, removed);
        if (ok && added)
                ok = folder_add_name(ix, f, added) == 0 && fits_alone(ix, f);
        if (ok) {
                f->mtime = st.st_mtim;
                f->ctime = st.st_ctim;
                f->unverified = true;
                keep_locked(ix, f);
                f = NULL;
        }
        pthread_mutex_unlock(&ix->lock);
        folder_free(f);
}

void findex_get_stats(struct findex *ix, struct findex_stats *ret)
{
        pthread_mutex_lock(&ix->lock);
        *ret = (struct findex_stats){ .folders = ix->folders, .names = ix->names, .bytes = ix->bytes,
                                      .scans = ix->scans, .hits = ix->hits };
        pthread_mutex_unlock(&ix->lock);
}
