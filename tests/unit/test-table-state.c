/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-table-state.c — the FUSE layer's state for a successor
 * (fs_session_state_create/restore, fs_process_again; daemon/table-state.h):
 * a session's tables taken up by a new session on the same folder with the
 * same nodeids and fhs, after a clean copy and after a SIGKILL at the named
 * crash points; hostile states refused; what is run again after a crash. */
#include <glib.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "config.h"
#include "crash-point.h"
#include "fuse-test-util.h"
#include "table-state.h"

/* ---- helpers ---- */

static int ts_mkdir(struct ft *t, uint64_t parent, const char *name, struct fuse_entry_out *e)
{
        struct fuse_mkdir_in in = { .mode = 0755, .umask = 022 };
        int err = ft_send(t, FUSE_MKDIR, parent, &in, sizeof(in), name, ft_strsize(name));

        if (err == 0 && e)
                memcpy(e, ft_body(t), sizeof(*e));
        return err;
}

static int ts_getattr(struct ft *t, uint64_t nodeid, struct fuse_attr_out *ret)
{
        struct fuse_getattr_in in = { 0 };
        int err = ft_send(t, FUSE_GETATTR, nodeid, &in, sizeof(in), NULL, 0);

        if (err == 0 && ret)
                memcpy(ret, ft_body(t), sizeof(*ret));
        return err;
}

static void ts_forget(struct ft *t, uint64_t nodeid, uint64_t n)
{
        struct fuse_forget_in in = { .nlookup = n };

        g_assert_cmpint(ft_send(t, FUSE_FORGET, nodeid, &in, sizeof(in), NULL, 0), ==, 1);
}

/* A snapshot of the state as a successor would get it from the store. */
static int memfd_copy(int fd)
{
        int copy = memfd_create("test-copy", MFD_CLOEXEC);
        char buf[65536];
        off_t off = 0;
        ssize_t n;

        g_assert_cmpint(copy, >=, 0);
        while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
                g_assert_cmpint(pwrite(copy, buf, (size_t)n, off), ==, n);
                off += n;
        }
        g_assert_cmpint(n, ==, 0);
        g_assert_cmpint(ftruncate(copy, off), ==, 0);
        return copy;
}

/* A new session on the same folder, not initialized (as a new worker). */
static void succ_new(struct ft *old, struct ft *n)
{
        int fd;

        memset(n, 0, sizeof(*n));
        n->dir = g_strdup(old->dir);
        n->outside = g_strdup(old->outside);
        n->opts = old->opts;
        stats_init(&n->stats, 1);
        n->out = g_malloc(FT_OUT_SIZE);
        n->unique = 1000;
        fd = open(n->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(fs_session_new(&n->opts, fd, &n->stats, &n->s), ==, 0);
        g_assert_cmpint(fs_worker_new(n->s, 1, &n->w), ==, 0);
}

static void succ_free(struct ft *n)
{
        fs_worker_free(n->w);
        fs_session_free(n->s);
        g_free(n->dir);
        g_free(n->outside);
        g_free(n->out);
}

static int succ_restore(struct ft *n, int state_fd, char *why, size_t why_size)
{
        return fs_session_state_restore(n->s, memfd_copy(state_fd), why, why_size);
}

/* ---- a clean hand-over ---- */

static void test_restore_tables(void)
{
        struct ft t, n;
        struct fuse_entry_out d, f, lf, vl, again;
        char verylong[201];
        struct fuse_attr_out a;
        uint64_t fh, dfh;
        const char *longname = "a-name-longer-than-thirty-two-bytes-for-the-long-area.txt";
        char why[256];
        size_t len;
        int state_fd;

        ft_setup(&t);
        g_assert_cmpint(fs_session_state_create(t.s, &state_fd), ==, 0);
        g_assert_cmpint(ts_mkdir(&t, 1, "d", &d), ==, 0);
        g_assert_cmpint(ft_create(&t, d.nodeid, "file", 0644, O_RDWR, &f, &fh), ==, 0);
        g_assert_cmpint(ft_write(&t, f.nodeid, fh, 0, "hello", 5), ==, 0);
        g_assert_cmpint(ft_create(&t, d.nodeid, longname, 0644, O_RDWR, &lf, NULL), ==, 0);
        /* Names of every size class: inline, 64-byte and 256-byte records. */
        memset(verylong, 'v', 200);
        verylong[200] = '\0';
        g_assert_cmpint(ft_create(&t, d.nodeid, verylong, 0644, O_RDWR, &vl, NULL), ==, 0);
        /* Two lookups of lf: the successor must keep the count. */
        g_assert_cmpint(ft_lookup(&t, d.nodeid, longname, &again), ==, 0);
        g_assert_cmpuint(again.nodeid, ==, lf.nodeid);
        g_assert_cmpint(ft_send(&t, FUSE_OPENDIR, d.nodeid, &(struct fuse_open_in){ .flags = O_RDONLY },
                                sizeof(struct fuse_open_in), NULL, 0), ==, 0);
        dfh = ((const struct fuse_open_out *)ft_body(&t))->fh;

        succ_new(&t, &n);
        g_assert_cmpint(succ_restore(&n, state_fd, why, sizeof(why)), ==, 0);
        /* Initialized from the state: no INIT needed, requests are served. */
        g_assert_cmpint(ts_getattr(&n, d.nodeid, &a), ==, 0);
        g_assert_true(S_ISDIR(a.attr.mode));
        g_assert_cmpuint(a.attr.ino, ==, d.attr.ino);
        g_assert_cmpint(ts_getattr(&n, lf.nodeid, &a), ==, 0);
        g_assert_cmpuint(a.attr.ino, ==, lf.attr.ino);
        g_assert_cmpint(ts_getattr(&n, vl.nodeid, &a), ==, 0);
        g_assert_cmpuint(a.attr.ino, ==, vl.attr.ino);
        /* The open file: its fh reads what was written through it. */
        g_assert_cmpint(ft_read(&n, f.nodeid, fh, 0, 100, &len), ==, 0);
        g_assert_cmpmem(ft_body(&n), len, "hello", 5);
        g_assert_cmpint(ft_write(&n, f.nodeid, fh, 5, " world", 6), ==, 0);
        g_assert_cmpint(ft_release(&n, f.nodeid, fh, false), ==, 0);
        g_assert_cmpint(ft_release(&n, d.nodeid, dfh, true), ==, 0);
        /* Same nodeid for a new lookup of the same file. */
        g_assert_cmpint(ft_lookup(&n, d.nodeid, "file", &again), ==, 0);
        g_assert_cmpuint(again.nodeid, ==, f.nodeid);
        /* Lookup counts kept: lf was looked up twice. */
        ts_forget(&n, lf.nodeid, 1);
        g_assert_cmpint(ts_getattr(&n, lf.nodeid, NULL), ==, 0);
        ts_forget(&n, lf.nodeid, 1);
        g_assert_cmpint(ts_getattr(&n, lf.nodeid, NULL), ==, -EBADF);
        /* A forged nodeid (right slot, wrong generation) finds nothing. */
        g_assert_cmpint(ts_getattr(&n, f.nodeid + (1ull << 32), NULL), ==, -EBADF);
        {
                g_autofree char *p = ft_path(&t, "d/file"), *c = NULL;

                g_assert_true(g_file_get_contents(p, &c, NULL, NULL));
                g_assert_cmpstr(c, ==, "hello world");
        }
        succ_free(&n);
        close(state_fd);
        ft_teardown(&t);
}

/* A file replaced behind the workers' backs: its old nodeid says ESTALE. */
static void test_replaced_file_estale(void)
{
        struct ft t, n;
        struct fuse_entry_out f;
        char why[256];
        int state_fd;
        g_autofree char *p = NULL, *tmp = NULL;

        ft_setup(&t);
        g_assert_cmpint(fs_session_state_create(t.s, &state_fd), ==, 0);
        g_assert_cmpint(ft_create(&t, 1, "f", 0644, O_RDWR, &f, NULL), ==, 0);
        p = ft_path(&t, "f");
        tmp = ft_path(&t, "f.new");
        g_assert_true(g_file_set_contents(tmp, "other", -1, NULL));
        g_assert_cmpint(rename(tmp, p), ==, 0);

        succ_new(&t, &n);
        g_assert_cmpint(succ_restore(&n, state_fd, why, sizeof(why)), ==, 0);
        g_assert_cmpint(ts_getattr(&n, f.nodeid, NULL), ==, -ESTALE);
        /* The new file gets a nodeid of its own. */
        {
                struct fuse_entry_out e;

                g_assert_cmpint(ft_lookup(&n, 1, "f", &e), ==, 0);
                g_assert_cmpuint(e.nodeid, !=, f.nodeid);
        }
        succ_free(&n);
        close(state_fd);
        ft_teardown(&t);
}

/* Locks died with the previous worker: the first lock through such a handle says so. */
static void test_locks_lost(void)
{
        struct ft t, n;
        struct fuse_entry_out f;
        uint64_t fh;
        char why[256];
        int state_fd;
        struct fuse_lk_in lk = { .owner = 7, .lk = { .start = 0, .end = 9, .type = F_WRLCK, .pid = 1 } };

        ft_setup(&t);
        g_assert_cmpint(fs_session_state_create(t.s, &state_fd), ==, 0);
        g_assert_cmpint(ft_create(&t, 1, "locked", 0644, O_RDWR, &f, &fh), ==, 0);
        lk.fh = fh;
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, f.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);

        succ_new(&t, &n);
        g_assert_cmpint(succ_restore(&n, state_fd, why, sizeof(why)), ==, 0);
        /* Unlocking is fine; the first lock is refused, the next served. */
        lk.lk.type = F_UNLCK;
        g_assert_cmpint(ft_send(&n, FUSE_SETLK, f.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);
        lk.lk.type = F_RDLCK;
        g_assert_cmpint(ft_send(&n, FUSE_SETLK, f.nodeid, &lk, sizeof(lk), NULL, 0), ==, -ENOLCK);
        g_assert_cmpint(ft_send(&n, FUSE_SETLK, f.nodeid, &lk, sizeof(lk), NULL, 0), ==, -EAGAIN);
        succ_free(&n);
        close(state_fd);
        ft_teardown(&t);
}

/* ---- SIGKILL at the crash points ---- */

#if SLUICE_TEST_HOOKS
/* Runs fn in a child armed to die at `point`; asserts it did (SIGKILL). */
static void die_at(const char *point, void (*fn)(struct ft *t, void *arg), struct ft *t, void *arg)
{
        pid_t pid = fork();
        int status;

        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                setenv("SLUICE_FS_TEST_CRASH_AT", point, 1);
                crash_point_init();
                fn(t, arg);
                _exit(3);   /* the point was not reached */
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFSIGNALED(status));
        g_assert_cmpint(WTERMSIG(status), ==, SIGKILL);
}

static void lookup_new(struct ft *t, void *arg)
{
        (void) ft_lookup(t, 1, arg, NULL);
}

static void test_crash_inode_insert(void)
{
        struct ft t, n;
        struct fuse_entry_out d, e, known;
        char why[256];
        int state_fd;
        g_autofree char *p = NULL;

        ft_setup(&t);
        g_assert_cmpint(fs_session_state_create(t.s, &state_fd), ==, 0);
        g_assert_cmpint(ts_mkdir(&t, 1, "d", &d), ==, 0);
        g_assert_cmpint(ft_create(&t, d.nodeid, "known", 0644, O_RDWR, &known, NULL), ==, 0);
        p = ft_path(&t, "torn");
        g_assert_true(g_file_set_contents(p, "x", -1, NULL));
        die_at("inode-insert", lookup_new, &t, (void *)"torn");

        succ_new(&t, &n);
        g_assert_cmpint(succ_restore(&n, state_fd, why, sizeof(why)), ==, 0);
        /* What was known before is still there, under its nodeid. */
        g_assert_cmpint(ts_getattr(&n, d.nodeid, NULL), ==, 0);
        g_assert_cmpint(ts_getattr(&n, known.nodeid, NULL), ==, 0);
        /* The half-inserted inode was never answered: dropped, and a new
         * lookup of its name makes a good one. */
        g_assert_cmpint(ft_lookup(&n, 1, "torn", &e), ==, 0);
        g_assert_cmpint(ts_getattr(&n, e.nodeid, NULL), ==, 0);
        succ_free(&n);
        close(state_fd);
        ft_teardown(&t);
}

struct batch {
        uint64_t ids[3];
};

static void batch_forget(struct ft *t, void *arg)
{
        struct batch *b = arg;
        struct fuse_batch_forget_in in = { .count = 3 };
        struct fuse_forget_one one[3];

        for (int i = 0; i < 3; i++)
                one[i] = (struct fuse_forget_one){ .nodeid = b->ids[i], .nlookup = 1 };
        (void) ft_send(t, FUSE_BATCH_FORGET, 0, &in, sizeof(in), one, sizeof(one));
}

/* A BATCH_FORGET cut after `done` of its 3 entries: those are gone (or
 * leaked: fine), the others are still the guest's. */
static void crash_forget_batch(const char *point, int done)
{
        struct ft t, n;
        struct batch b;
        char why[256];
        int state_fd;

        ft_setup(&t);
        g_assert_cmpint(fs_session_state_create(t.s, &state_fd), ==, 0);
        for (int i = 0; i < 3; i++) {
                g_autofree char *name = g_strdup_printf("f%d", i);
                struct fuse_entry_out e;

                g_assert_cmpint(ft_create(&t, 1, name, 0644, O_RDWR, &e, NULL), ==, 0);
                b.ids[i] = e.nodeid;
        }
        die_at(point, batch_forget, &t, &b);

        succ_new(&t, &n);
        g_assert_cmpint(succ_restore(&n, state_fd, why, sizeof(why)), ==, 0);
        for (int i = 0; i < 3; i++)
                g_assert_cmpint(ts_getattr(&n, b.ids[i], NULL), ==, i < done ? -EBADF : 0);
        succ_free(&n);
        close(state_fd);
        ft_teardown(&t);
}

static void test_crash_forget_batch_first(void)
{
        crash_forget_batch("forget-batch", 1);
}

static void test_crash_forget_batch_last(void)
{
        crash_forget_batch("forget-batch@3", 3);
}
#endif

/* ---- hostile states ---- */

struct hostile {
        struct ft t;
        struct tstate *st;
        int fd;
        struct stat root;
};

static void hostile_new(struct hostile *h)
{
        struct tstate_inode root = { .gen = 0, .type = S_IFDIR, .nlookup = 1 };

        ft_setup(&h->t);
        g_assert_cmpint(stat(h->t.dir, &h->root), ==, 0);
        g_assert_cmpint(tstate_new(&h->st, &h->fd), ==, 0);
        root.dev = h->root.st_dev;
        root.ino = h->root.st_ino;
        tstate_inode_write(h->st, 1, &root, true);
}

static void hostile_inode(struct hostile *h, uint32_t idx, uint32_t parent, uint32_t parent_gen,
                          const char *name, mode_t type)
{
        struct tstate_inode rec = {
                .gen = idx + 100, .dev = h->root.st_dev, .ino = 424242 + idx, .type = type,
                .nlookup = 1, .parent_idx = parent, .parent_gen = parent_gen,
        };

        rec.name_len = strlen(name);
        memcpy(rec.name, name, rec.name_len + 1);
        tstate_inode_write(h->st, idx, &rec, true);
}

/* Restores h's state in a successor: -EBADMSG expected, with a reason. */
static void hostile_refused(struct hostile *h, const char *what)
{
        struct ft n;
        char why[256] = "";
        struct fuse_entry_out e;

        succ_new(&h->t, &n);
        g_assert_cmpint(succ_restore(&n, h->fd, why, sizeof(why)), ==, -EBADMSG);
        g_test_message("%s: %s", what, why);
        g_assert_cmpstr(why, !=, "");
        /* The session is as fresh: nothing of the state, INIT needed. */
        g_assert_cmpint(ft_lookup(&n, 1, "x", &e), ==, -EIO);
        succ_free(&n);
        tstate_free(h->st);
        close(h->fd);
        ft_teardown(&h->t);
}

static void test_hostile_cycle(void)
{
        struct hostile h;

        hostile_new(&h);
        hostile_inode(&h, 5, 6, 106, "a", S_IFDIR);
        hostile_inode(&h, 6, 5, 105, "b", S_IFDIR);
        hostile_refused(&h, "cycle");
}

static void test_hostile_parent_out_of_range(void)
{
        struct hostile h;

        hostile_new(&h);
        hostile_inode(&h, 5, 900000, 1, "a", S_IFREG);
        hostile_refused(&h, "parent out of range");
}

static void test_hostile_names(void)
{
        const char *bad[] = { "../x", "..", ".", "a/b" };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                struct hostile h;

                hostile_new(&h);
                hostile_inode(&h, 5, 1, 0, bad[i], S_IFREG);
                hostile_refused(&h, bad[i]);
        }
        {
                struct hostile h;
                struct tstate_inode rec = { .gen = 9, .dev = 1, .ino = 2, .type = S_IFREG, .nlookup = 1,
                                            .parent_idx = 1, .name_len = 0 };

                hostile_new(&h);
                tstate_inode_write(h.st, 5, &rec, true);   /* a parent but no name */
                hostile_refused(&h, "empty name");
        }
}

static void test_hostile_parent_not_dir(void)
{
        struct hostile h;

        hostile_new(&h);
        hostile_inode(&h, 5, 1, 0, "file", S_IFREG);
        hostile_inode(&h, 6, 5, 105, "child", S_IFREG);
        hostile_refused(&h, "parent is a file");
}

static void test_hostile_checksum(void)
{
        struct hostile h;
        uint32_t big = 12345;

        hostile_new(&h);
        /* header_bytes, a field the checksum covers */
        g_assert_cmpint(pwrite(h.fd, &big, sizeof(big), 12), ==, sizeof(big));
        hostile_refused(&h, "checksum");
}

static void test_hostile_truncated(void)
{
        struct hostile h;

        hostile_new(&h);
        g_assert_cmpint(ftruncate(h.fd, 100), ==, 0);
        hostile_refused(&h, "truncated");
}

static void test_hostile_other_folder(void)
{
        struct hostile h;
        struct tstate_inode root = { .gen = 0, .type = S_IFDIR, .nlookup = 1, .dev = 1, .ino = 2 };

        hostile_new(&h);
        tstate_inode_write(h.st, 1, &root, false);
        hostile_refused(&h, "another folder");
}

/* A handle whose inode the state does not have, or of the wrong kind. */
static void test_hostile_handle(void)
{
        struct tstate_handle bad[] = {
                { .gen = 3, .nodeid = (105ull << 32) | 7, .flags = O_RDONLY },     /* slot 7: free */
                { .gen = 3, .nodeid = (104ull << 32) | 5, .flags = O_RDONLY },     /* wrong generation */
                { .gen = 3, .nodeid = (105ull << 32) | 5, .flags = O_RDONLY, .is_dir = true },  /* a file */
                { .gen = 0, .nodeid = (105ull << 32) | 5, .flags = O_RDONLY },     /* generation 0 */
        };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                struct hostile h;

                hostile_new(&h);
                hostile_inode(&h, 5, 1, 0, "f", S_IFREG);
                tstate_handle_write(h.st, 2, &bad[i]);
                hostile_refused(&h, "handle");
        }
}

/* An INIT result this build never answers (a flag it does not implement, a
 * max_write it never offers). */
static void test_hostile_init(void)
{
        struct tstate_init bad[] = {
                { .minor = 38, .max_write = 1 << 20, .flags = FUSE_WRITEBACK_CACHE },
                { .minor = 38, .max_write = 1 << 30 },
                { .minor = 99, .max_write = 1 << 20 },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                struct hostile h;

                hostile_new(&h);
                tstate_set_init(h.st, &bad[i]);
                hostile_refused(&h, "INIT record");
        }
}

/* A state a crash left with a record half written drops that record and
 * what hangs below it, and trusts the rest. */
static void test_torn_record_dropped(void)
{
        struct hostile h;
        struct ft n;
        char why[256];

        hostile_new(&h);
        hostile_inode(&h, 5, 1, 0, "dir", S_IFDIR);
        {
                /* WRITING: as a SIGKILL between the mark and the rest leaves it */
                int fd = h.fd;
                struct stat s;
                uint32_t writing = TSTATE_WRITING, state;

                g_assert_cmpint(fstat(fd, &s), ==, 0);
                /* The only inode extent starts right after the header page;
                 * record 5 is 96 bytes a record in. */
                g_assert_cmpint(pread(fd, &state, 4, 4096 + 5 * 96), ==, 4);
                g_assert_cmpuint(state, ==, TSTATE_LIVE);
                g_assert_cmpint(pwrite(fd, &writing, 4, 4096 + 5 * 96), ==, 4);
        }
        hostile_inode(&h, 6, 5, 105, "below", S_IFREG);
        succ_new(&h.t, &n);
        g_assert_cmpint(succ_restore(&n, h.fd, why, sizeof(why)), ==, 0);
        {
                /* This state has no INIT record: the guest's INIT comes first. */
                struct fuse_init_in init = { .major = 7, .minor = 38, .max_readahead = 65536 };

                g_assert_cmpint(ft_send(&n, FUSE_INIT, 0, &init, sizeof(init), NULL, 0), ==, 0);
        }
        g_assert_cmpint(ts_getattr(&n, (105ull << 32) | 5, NULL), ==, -EBADF);
        g_assert_cmpint(ts_getattr(&n, (106ull << 32) | 6, NULL), ==, -EBADF);
        succ_free(&n);
        tstate_free(h.st);
        close(h.fd);
        ft_teardown(&h.t);
}

/* ---- requests in flight at the crash ---- */

static size_t again(struct ft *t, uint32_t opcode, uint64_t nodeid, const void *a1, size_t l1,
                    const void *a2, size_t l2, bool *replayed)
{
        struct fuse_in_header hd = {
                .len = (uint32_t)(sizeof(hd) + l1 + l2), .opcode = opcode, .unique = ++t->unique,
                .nodeid = nodeid, .uid = getuid(), .gid = getgid(), .pid = 1,
        };
        struct iovec in[3] = { { &hd, sizeof(hd) }, { (void *)a1, l1 }, { (void *)a2, l2 } };
        struct iovec out = { t->out, FT_OUT_SIZE };

        return fs_process_again(t->w, in, 3, &out, 1, NULL, replayed);
}

static void test_replay(void)
{
        struct ft t;
        struct fuse_entry_out f;
        struct fuse_mkdir_in mk = { .mode = 0755 };
        struct fuse_write_in w = { .offset = 0, .size = 3 };
        uint64_t fh, afh;
        bool replayed;
        g_autofree char *p = NULL;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "f", 0644, O_RDWR, &f, &fh), ==, 0);
        /* GETATTR runs again. */
        g_assert_cmpuint(again(&t, FUSE_GETATTR, f.nodeid, &(struct fuse_getattr_in){ 0 },
                               sizeof(struct fuse_getattr_in), NULL, 0, &replayed), >, 0);
        g_assert_true(replayed);
        g_assert_cmpint(ft_hdr(&t)->error, ==, 0);
        /* MKDIR does not: EIO, and no directory made. */
        g_assert_cmpuint(again(&t, FUSE_MKDIR, 1, &mk, sizeof(mk), "nd", 3, &replayed), >, 0);
        g_assert_false(replayed);
        g_assert_cmpint(ft_hdr(&t)->error, ==, -EIO);
        p = ft_path(&t, "nd");
        g_assert_false(g_file_test(p, G_FILE_TEST_EXISTS));
        /* A WRITE at an offset runs again; through an O_APPEND handle it does not. */
        w.fh = fh;
        g_assert_cmpuint(again(&t, FUSE_WRITE, f.nodeid, &w, sizeof(w), "abc", 3, &replayed), >, 0);
        g_assert_true(replayed);
        g_assert_cmpint(ft_hdr(&t)->error, ==, 0);
        g_assert_cmpint(ft_open(&t, f.nodeid, O_WRONLY | O_APPEND, &afh), ==, 0);
        w.fh = afh;
        g_assert_cmpuint(again(&t, FUSE_WRITE, f.nodeid, &w, sizeof(w), "abc", 3, &replayed), >, 0);
        g_assert_false(replayed);
        g_assert_cmpint(ft_hdr(&t)->error, ==, -EIO);
        /* An INIT that took effect is answered again, the session kept. */
        {
                struct fuse_init_in init = { .major = 7, .minor = 38, .max_readahead = 65536,
                                             .flags = 0xfffffffb };

                g_assert_cmpuint(again(&t, FUSE_INIT, 0, &init, sizeof(init), NULL, 0, &replayed), >, 0);
                g_assert_true(replayed);
                g_assert_cmpint(ft_hdr(&t)->error, ==, 0);
                g_assert_cmpuint(((const struct fuse_init_out *)ft_body(&t))->minor, ==, 38);
                g_assert_cmpuint(((const struct fuse_init_out *)ft_body(&t))->max_write, ==, 1024 * 1024);
                g_assert_cmpint(ts_getattr(&t, f.nodeid, NULL), ==, 0);
        }
        /* A FORGET is dropped (a leaked count), with no reply. */
        g_assert_cmpuint(again(&t, FUSE_FORGET, f.nodeid, &(struct fuse_forget_in){ .nlookup = 1 },
                               sizeof(struct fuse_forget_in), NULL, 0, &replayed), ==, 0);
        g_assert_false(replayed);
        g_assert_cmpint(ts_getattr(&t, f.nodeid, NULL), ==, 0);
        ft_teardown(&t);
}

/* ---- the figure: the state of a million inodes ---- */

static void test_size_million(void)
{
        struct tstate *st;
        struct tstate_inode rec = { .type = S_IFREG, .nlookup = 1, .parent_idx = 1, .dev = 1 };
        uint64_t allocated, size;
        uint32_t n = g_test_slow() ? 1000000 : 100000;
        int fd;

        g_assert_cmpint(tstate_new(&st, &fd), ==, 0);
        for (uint32_t i = 2; i < n + 2; i++) {
                /* Typical names: mostly short, one in 20 longer than the inline 32 bytes. */
                if (i % 20 == 0)
                        rec.name_len = (size_t)g_snprintf(rec.name, sizeof(rec.name),
                                                          "a-rather-long-file-name-of-a-build-tree-%08u.o", i);
                else
                        rec.name_len = (size_t)g_snprintf(rec.name, sizeof(rec.name), "file-%08u.c", i);
                rec.gen = i;
                rec.ino = i;
                tstate_inode_write(st, i, &rec, true);
        }
        tstate_size(st, &allocated, &size);
        g_test_message("state of %u inodes: %.1f MiB in memory (%.1f MiB file size)", n,
                       allocated / 1048576.0, size / 1048576.0);
        g_assert_false(tstate_broken(st));
        /* 96 bytes a record plus the long names' pages: well under the
         * in-memory table's ~130 bytes an inode. */
        g_assert_cmpuint(allocated, <, (uint64_t)n * 130);
        tstate_free(st);
        close(fd);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/table-state/restore-tables", test_restore_tables);
        g_test_add_func("/table-state/replaced-file-estale", test_replaced_file_estale);
        g_test_add_func("/table-state/locks-lost", test_locks_lost);
#if SLUICE_TEST_HOOKS
        g_test_add_func("/table-state/crash/inode-insert", test_crash_inode_insert);
        g_test_add_func("/table-state/crash/forget-batch-first", test_crash_forget_batch_first);
        g_test_add_func("/table-state/crash/forget-batch-last", test_crash_forget_batch_last);
#endif
        g_test_add_func("/table-state/hostile/cycle", test_hostile_cycle);
        g_test_add_func("/table-state/hostile/parent-out-of-range", test_hostile_parent_out_of_range);
        g_test_add_func("/table-state/hostile/names", test_hostile_names);
        g_test_add_func("/table-state/hostile/parent-not-dir", test_hostile_parent_not_dir);
        g_test_add_func("/table-state/hostile/checksum", test_hostile_checksum);
        g_test_add_func("/table-state/hostile/truncated", test_hostile_truncated);
        g_test_add_func("/table-state/hostile/other-folder", test_hostile_other_folder);
        g_test_add_func("/table-state/hostile/init", test_hostile_init);
        g_test_add_func("/table-state/hostile/handle", test_hostile_handle);
        g_test_add_func("/table-state/torn-record-dropped", test_torn_record_dropped);
        g_test_add_func("/table-state/replay", test_replay);
        g_test_add_func("/table-state/size", test_size_million);
        return g_test_run();
}
