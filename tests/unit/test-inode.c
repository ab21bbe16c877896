/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-inode.c — the inode and handle tables: lookup counting, stale and
 * forged numbers, two names of one file, concurrent use. */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "handle.h"
#include "inode-fd.h"
#include "inode.h"
#include "slot-table.h"

struct fixture {
        char *dir;
        int dir_fd;
        struct inode_table *t;
};

static void fixture_set_up(struct fixture *f, gconstpointer data)
{
        int root;

        f->dir = g_dir_make_tmp("sluice-inode-XXXXXX", NULL);
        g_assert_nonnull(f->dir);
        f->dir_fd = open(f->dir, O_PATH | O_DIRECTORY);
        root = open(f->dir, O_PATH | O_DIRECTORY);
        g_assert_cmpint(inode_table_new(root, &f->t), ==, 0);
}

static void fixture_tear_down(struct fixture *f, gconstpointer data)
{
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);

        inode_table_free(f->t);
        close(f->dir_fd);
        g_assert_cmpint(system(cmd), ==, 0);
        g_free(f->dir);
}

/* Counts one lookup of dir/name. */
static uint64_t add(struct fixture *f, const char *name)
{
        int fd = openat(f->dir_fd, name, O_PATH | O_NOFOLLOW);
        struct stat st;
        uint64_t id = 0;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(fstat(fd, &st), ==, 0);
        g_assert_cmpint(inode_add_lookup(f->t, fd, &st, 0, &id), ==, 0);
        g_assert_cmpuint(id, !=, 0);
        return id;
}

static void touch(struct fixture *f, const char *name)
{
        g_autofree char *p = g_build_filename(f->dir, name, NULL);

        g_assert_true(g_file_set_contents(p, "", 0, NULL));
}

static void test_counting(struct fixture *f, gconstpointer data)
{
        struct inode *i;
        uint64_t a, a2, b, old_b;

        touch(f, "a");
        touch(f, "b");
        g_assert_cmpuint(inode_count(f->t), ==, 1);
        i = inode_get(f->t, INODE_ROOT_ID);
        g_assert_nonnull(i);
        g_assert_cmpuint(i->nodeid, ==, 1);
        inode_put(f->t, i);

        a = add(f, "a");
        a2 = add(f, "a");
        b = add(f, "b");
        g_assert_cmpuint(a, ==, a2);
        g_assert_cmpuint(a, !=, b);
        g_assert_cmpuint(inode_count(f->t), ==, 3);
        g_assert_cmpuint(inode_lookup_count(f->t, a), ==, 2);

        inode_forget(f->t, a, 1);
        g_assert_cmpuint(inode_lookup_count(f->t, a), ==, 1);
        g_assert_nonnull((i = inode_get(f->t, a)));
        inode_put(f->t, i);
        inode_forget(f->t, a, 1);
        g_assert_null(inode_get(f->t, a));
        g_assert_cmpuint(inode_count(f->t), ==, 2);
        /* Forgetting more than was looked up, or an unknown nodeid, is harmless. */
        inode_forget(f->t, b, 100);
        inode_forget(f->t, a, 1);
        inode_forget(f->t, 0x777700000005ull, 1);
        g_assert_cmpuint(inode_count(f->t), ==, 1);
        /* The last freed slot is reused with a new generation: the old nodeid stays dead. */
        old_b = b;
        b = add(f, "b");
        g_assert_cmpuint(b & 0xffffffffu, ==, old_b & 0xffffffffu);
        g_assert_cmpuint(b, !=, old_b);
        /* Then the lowest free one (a's: the table packs into its low slots). */
        a2 = add(f, "a");
        g_assert_cmpuint(a2 & 0xffffffffu, ==, a & 0xffffffffu);
        g_assert_cmpuint(a2, !=, a);
        inode_forget(f->t, a2, 1);
        g_assert_null(inode_get(f->t, a));
        g_assert_null(inode_get(f->t, old_b));
        g_assert_nonnull((i = inode_get(f->t, b)));
        inode_put(f->t, i);
        /* The root survives everything. */
        inode_forget(f->t, INODE_ROOT_ID, 1000);
        inode_forget_all(f->t);
        g_assert_cmpuint(inode_count(f->t), ==, 1);
        g_assert_nonnull((i = inode_get(f->t, INODE_ROOT_ID)));
        inode_put(f->t, i);
        g_assert_null(inode_get(f->t, b));
}

static void test_hard_links_are_one_inode(struct fixture *f, gconstpointer data)
{
        g_autofree char *a = g_build_filename(f->dir, "a", NULL);
        g_autofree char *l = g_build_filename(f->dir, "l", NULL);

        touch(f, "a");
        g_assert_cmpint(link(a, l), ==, 0);
        g_assert_cmpuint(add(f, "a"), ==, add(f, "l"));
        g_assert_cmpuint(inode_count(f->t), ==, 2);
}

static void test_in_use_survives_forget(struct fixture *f, gconstpointer data)
{
        struct inode *i;
        uint64_t a;
        struct stat st;

        touch(f, "a");
        a = add(f, "a");
        i = inode_get(f->t, a);
        inode_forget(f->t, a, 1);
        /* No longer the guest's, but the fd stays valid for the request holding it. */
        g_assert_null(inode_get(f->t, a));
        g_assert_cmpint(fstatat(i->fd, "", &st, AT_EMPTY_PATH), ==, 0);
        g_assert_cmpuint(inode_count(f->t), ==, 2);
        inode_put(f->t, i);
        g_assert_cmpuint(inode_count(f->t), ==, 1);
}

static void test_many_and_forged(struct fixture *f, gconstpointer data)
{
        enum { N = 3000 };
        uint64_t *ids = g_new(uint64_t, N);

        for (int k = 0; k < N; k++) {
                g_autofree char *n = g_strdup_printf("f%d", k);

                touch(f, n);
                ids[k] = add(f, n);
        }
        g_assert_cmpuint(inode_count(f->t), ==, N + 1);
        for (int k = 0; k < N; k++) {
                g_autofree char *n = g_strdup_printf("f%d", k);

                g_assert_cmpuint(add(f, n), ==, ids[k]);   /* the hash finds each again */
        }
        /* Numbers the table never handed out. */
        g_assert_null(inode_get(f->t, 0));
        g_assert_null(inode_get(f->t, 0xffffffffull));
        g_assert_null(inode_get(f->t, ids[5] ^ (1ull << 40)));
        g_assert_null(inode_get(f->t, (uint64_t)-1));
        for (int k = 0; k < N; k++)
                inode_forget(f->t, ids[k], 2);
        g_assert_cmpuint(inode_count(f->t), ==, 1);
        g_free(ids);
}

static void test_handles(struct fixture *f, gconstpointer data)
{
        struct handle_table *ht;
        struct inode *i;
        struct handle *h;
        uint64_t a, fh = 0, dfh = 0;
        int fd;

        touch(f, "a");
        a = add(f, "a");
        g_assert_cmpint(handle_table_new(f->t, &ht), ==, 0);
        i = inode_get(f->t, a);
        fd = openat(f->dir_fd, "a", O_RDWR);
        g_assert_cmpint(handle_add(ht, fd, i, false, true, &fh), ==, 0);
        g_assert_cmpuint(fh, !=, 0);
        inode_put(f->t, i);
        /* The handle keeps its inode alive after FORGET. */
        inode_forget(f->t, a, 1);
        g_assert_cmpuint(inode_count(f->t), ==, 2);
        g_assert_null(handle_get(ht, fh, true));        /* not a directory handle */
        g_assert_null(handle_get(ht, fh + 1, false));
        g_assert_null(handle_get(ht, fh ^ (1ull << 33), false));
        h = handle_get(ht, fh, false);
        g_assert_nonnull(h);
        g_assert_true(h->writable);
        /* RELEASE while a request holds it: the fd outlives the release. */
        g_assert_cmpint(handle_release(ht, fh, false), ==, 0);
        g_assert_cmpint(handle_release(ht, fh, false), ==, -EBADF);
        g_assert_null(handle_get(ht, fh, false));
        g_assert_cmpint(write(h->fd, "x", 1), ==, 1);
        handle_put(ht, h);
        g_assert_cmpuint(handle_count(ht), ==, 0);
        g_assert_cmpuint(inode_count(f->t), ==, 1);

        i = inode_get(f->t, INODE_ROOT_ID);
        g_assert_cmpint(handle_add(ht, openat(f->dir_fd, ".", O_RDONLY | O_DIRECTORY), i, true, false, &dfh), ==, 0);
        inode_put(f->t, i);
        g_assert_cmpuint(dfh, !=, 0);
        g_assert_nonnull((h = handle_get(ht, dfh, true)));
        g_assert_true(h->is_dir);
        handle_put(ht, h);
        handle_release_all(ht);
        g_assert_cmpuint(handle_count(ht), ==, 0);
        handle_table_free(ht);
}

struct race {
        struct fixture *f;
        uint64_t id;
        int loops;
};

static void *racer(void *p)
{
        struct race *r = p;

        for (int k = 0; k < r->loops; k++) {
                struct inode *i = inode_get(r->f->t, r->id);

                if (i) {
                        struct stat st;

                        g_assert_cmpint(fstatat(i->fd, "", &st, AT_EMPTY_PATH), ==, 0);
                        inode_put(r->f->t, i);
                }
                /* Add before forget: the count never drops to 0, so the nodeid never changes. */
                if (k % 2 == 0)
                        g_assert_cmpuint(add(r->f, "a"), ==, r->id);
                else
                        inode_forget(r->f->t, r->id, 1);
        }
        return NULL;
}

static void test_threads(struct fixture *f, gconstpointer data)
{
        pthread_t th[4];
        struct race r[4];

        touch(f, "a");
        for (int k = 0; k < 4; k++) {
                r[k] = (struct race){ f, add(f, "a"), 2000 };
                pthread_create(&th[k], NULL, racer, &r[k]);
        }
        for (int k = 0; k < 4; k++)
                pthread_join(th[k], NULL);
        /* Each thread added as often as it forgot, plus its first add. */
        g_assert_cmpuint(inode_lookup_count(f->t, r[0].id), ==, 4);
}

/* Lookups without the table lock against slots being freed and reused: a
 * reader holding a stale nodeid must get NULL or the inode that carries
 * exactly that nodeid, never another one, and every fd it gets is open. */
struct reuse {
        struct fixture *f;
        _Atomic uint64_t current;   /* the nodeid the writer last handed out */
        atomic_bool done;
        atomic_uint hits;
};

static void *reuse_reader(void *p)
{
        struct reuse *r = p;

        while (!atomic_load(&r->done)) {
                uint64_t id = atomic_load(&r->current);
                struct inode *i = inode_get(r->f->t, id);

                if (i) {
                        struct stat st;

                        g_assert_cmpuint(i->nodeid, ==, id);
                        g_assert_cmpint(fstatat(i->fd, "", &st, AT_EMPTY_PATH), ==, 0);
                        inode_put(r->f->t, i);
                        r->hits++;
                }
                /* And a forged one (a generation this test never reaches): never found. */
                g_assert_null(inode_get(r->f->t, id ^ (1ull << 62)));
        }
        return NULL;
}

static void test_reuse_race(struct fixture *f, gconstpointer data)
{
        struct reuse r = { .f = f };
        pthread_t th[2];

        touch(f, "a");
        touch(f, "b");
        atomic_store(&r.current, add(f, "a"));
        for (int k = 0; k < 2; k++)
                pthread_create(&th[k], NULL, reuse_reader, &r);
        for (int k = 0; k < 3000; k++) {
                uint64_t old = atomic_load(&r.current);

                /* A new inode (another file) takes the slot the old one frees. */
                atomic_store(&r.current, add(f, k % 2 ? "a" : "b"));
                inode_forget(f->t, old, 1);
        }
        atomic_store(&r.done, true);
        for (int k = 0; k < 2; k++)
                pthread_join(th[k], NULL);
        g_assert_cmpuint(inode_count(f->t), ==, 2);
}

/* Resident memory of this process, in KiB. */
static long rss_kib(void)
{
        g_autofree char *statm = NULL;
        long size = 0, resident = 0;

        g_assert_true(g_file_get_contents("/proc/self/statm", &statm, NULL, NULL));
        g_assert_cmpint(sscanf(statm, "%ld %ld", &size, &resident), ==, 2);
        return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

struct churn {
        struct fixture *f;
        uint64_t *ids;
        int n;
        atomic_bool done;
        unsigned long found;
};

/* Looks up numbers while they are forgotten and their memory given back:
 * every hit must be the inode asked for. */
static void *churn_reader(void *data)
{
        struct churn *c = data;
        unsigned k = 0;

        while (!atomic_load(&c->done)) {
                uint64_t id = c->ids[(k++ * 7919u) % (unsigned)c->n];
                struct inode *i = inode_get(c->f->t, id);

                if (i) {
                        g_assert_cmpuint(i->nodeid, ==, id);
                        inode_put(c->f->t, i);
                        c->found++;
                }
        }
        return NULL;
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* Memory comes back after the FORGETs, while lock-free readers look up
 * numbers whose memory is being given back, and old numbers stay dead. */
static void test_memory_returns(struct fixture *f, gconstpointer data)
{
        enum { N = SANITIZED ? 30000 : 150000 };
        struct churn c = { .f = f, .n = N };
        struct inode *root = inode_get(f->t, INODE_ROOT_ID);
        long before, walked, after;
        pthread_t th;

        c.ids = g_new(uint64_t, N);
        memset(c.ids, 0, N * sizeof(*c.ids));   /* resident before we measure */
        inode_fds_set_max(f->t, 64);
        before = rss_kib();
        for (int round = 0; round < 2; round++) {
                for (int k = 0; k < N; k++) {
                        /* Made-up files (dev, ino) with a name: their fds
                         * are dropped beyond the cap and never reopened. */
                        int fd = dup(f->dir_fd);
                        uint64_t old = c.ids[k];

                        g_assert_cmpint(fd, >=, 0);
                        g_assert_cmpint(inode_add_lookup_id(f->t, fd, 0x7777, 1000 + (ino_t)k, S_IFREG,
                                                            1, root, "x", &c.ids[k]), ==, 0);
                        if (round > 0)
                                g_assert_cmpuint(c.ids[k], !=, old);
                }
                g_assert_cmpuint(inode_count(f->t), ==, N + 1);
                walked = rss_kib();
                atomic_store(&c.done, false);
                pthread_create(&th, NULL, churn_reader, &c);
                for (int k = 0; k < N; k++)
                        inode_forget(f->t, c.ids[k], 1);
                atomic_store(&c.done, true);
                pthread_join(th, NULL);
                after = rss_kib();
                g_assert_cmpuint(inode_count(f->t), ==, 1);
                for (int k = 0; k < N; k += 97)
                        g_assert_null(inode_get(f->t, c.ids[k]));
                g_test_message("RSS before %ld KiB, %d inodes %ld KiB, after the FORGETs %ld KiB",
                               before, N, walked, after);
                /* A sanitizer's shadow memory stays: no figures to check. */
                if (!SANITIZED) {
                        g_assert_cmpint(walked - before, >, N / 10);
                        g_assert_cmpint(after - before, <, 1024);
                }
        }
        inode_put(f->t, root);
        g_free(c.ids);
}

/* A table rebuilt by a successor (slot_place()): the numbers placed are
 * found, forged generations are not, every gap below the highest placed slot
 * is handed out again, and new numbers never repeat a placed generation. */
static void test_slot_place(void)
{
        struct slot_table st;
        int a, b, c;
        uint32_t idx, taken = 0;

        slot_table_init(&st, 2);
        slot_table_lock(&st);
        g_assert_true(slot_place(&st, 5, 100, &a));
        g_assert_true(slot_place(&st, 3000, 7, &b));    /* in a later chunk */
        g_assert_false(slot_place(&st, 5, 101, &c));    /* taken */
        g_assert_false(slot_place(&st, 6, 0, &c));      /* generation 0 is the root's alone */
        g_assert_false(slot_place(&st, 1, 0, &c));      /* below the table's first slot */
        slot_table_settle(&st);
        g_assert_true(slot_find(&st, (100ull << 32) | 5) == &a);
        g_assert_null(slot_find(&st, (99ull << 32) | 5));
        g_assert_true(slot_find(&st, (7ull << 32) | 3000) == &b);
        idx = slot_alloc(&st, &c);
        g_assert_cmpuint(idx, ==, 2);                   /* lowest free first */
        g_assert_cmpuint(slot_number(&st, idx) >> 32, >, 100);
        for (taken = 1; (idx = slot_alloc(&st, &c)) < 3000; taken++) {
                g_assert_cmpuint(idx, !=, 5);
                g_assert_cmpuint(idx, !=, 0);
        }
        g_assert_cmpuint(idx, ==, 3001);                /* every gap was taken first */
        g_assert_cmpuint(taken, ==, 3000 - 2 - 1);
        slot_table_unlock(&st);
        slot_table_fini(&st);
}

int main(int argc, char **argv)
{
        struct rlimit rl;

        g_test_init(&argc, &argv, NULL);
        /* Each inode holds an fd; main.c raises the limit the same way. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
                rl.rlim_cur = 4096;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
#define ADD(name, fn) g_test_add("/inode/" name, struct fixture, NULL, fixture_set_up, fn, fixture_tear_down)
        ADD("counting", test_counting);
        ADD("hard-links", test_hard_links_are_one_inode);
        ADD("in-use-survives-forget", test_in_use_survives_forget);
        ADD("many-and-forged", test_many_and_forged);
        ADD("handles", test_handles);
        ADD("threads", test_threads);
        ADD("reuse-race", test_reuse_race);
        ADD("memory-returns", test_memory_returns);
        g_test_add_func("/inode/slot-place", test_slot_place);
        return g_test_run();
}
