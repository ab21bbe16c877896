/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-many-inodes.c — a guest that knows more files than the worker may
 * hold descriptors: sluice-fs keeps an fd for recently used inodes only and
 * reopens the others by name when the guest comes back to them.
 *
 * What a user would notice otherwise: a `find` or an indexer over a big tree
 * that stops with "Too many open files"; or, once descriptors are dropped, a
 * file the guest knows that now shows another file's data, a crash when a
 * file went away on the host, a file renamed through the guest that cannot be
 * reached any more, an unlinked but still open file that is lost.
 *
 * The worker runs with RLIMIT_NOFILE 256 (prlimit), so that 3,000 lookups
 * would have run out of descriptors when every inode held one. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PRLIMIT "/usr/bin/prlimit"
#define NOFILE  256
#define FILES   3000u
/* The cap sluice-fs derives from a soft limit of 256 (fd-clock.c): a quarter. */
#define CAP     64u

static unsigned open_fds(GPid pid)
{
        g_autofree char *path = g_strdup_printf("/proc/%d/fd", (int)pid);
        DIR *d = opendir(path);
        struct dirent *e;
        unsigned n = 0;

        g_assert_nonnull(d);
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

static void host_file(Harness *h, const char *rel, const char *content)
{
        g_autofree char *path = harness_path(h, rel);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, content, strlen(content)), ==, (ssize_t)strlen(content));
        close(fd);
}

static char *name_of(unsigned i)
{
        return g_strdup_printf("f%04u", i);
}

static char *content_of(unsigned i)
{
        return g_strdup_printf("file %u", i);
}

/* Reads what nodeid's file holds (up to 63 bytes), "" on failure. */
static char *read_all(struct vmm *v, uint64_t nodeid, int *ret_err)
{
        char buf[64] = { 0 };
        uint64_t fh = 0;
        size_t len = 0;
        int err = vmm_open(v, nodeid, O_RDONLY, &fh);

        if (err == 0) {
                err = vmm_read(v, nodeid, fh, 0, buf, sizeof(buf) - 1, &len);
                assert_ok(vmm_release(v, nodeid, fh));
        }
        *ret_err = err;
        return g_strdup(err == 0 ? buf : "");
}

/* The worker runs under prlimit with RLIMIT_NOFILE `nofile` and `extra` options. */
static void start_limited(Harness *h, unsigned nofile, const char *const *extra)
{
        GPtrArray *argv = harness_daemon_argv(h, TRUE, extra);
        g_autofree char *limit = g_strdup_printf("--nofile=%u:%u", nofile, nofile);
        const char *wrapper[] = { PRLIMIT, limit, "--" };

        for (unsigned i = G_N_ELEMENTS(wrapper); i-- > 0; )
                g_ptr_array_insert(argv, 0, g_strdup(wrapper[i]));
        harness_start_argv(h, argv);
        g_ptr_array_unref(argv);
        h->vmm = harness_connect(h, NULL);
}

static void test_walk_and_reopen(void)
{
        if (!harness_require_sluice("sluice-fs's descriptor cache"))
                return;
        if (access(PRLIMIT, X_OK) < 0) {
                g_test_skip(PRLIMIT " is not installed");
                return;
        }
        g_autoptr(Harness) h = harness_new();
        harness_mkdir(h, "d");
        harness_mkdir(h, "a");
        harness_mkdir(h, "a/b");
        harness_mkdir(h, "a/b/c");
        host_file(h, "a/b/c/deep", "deep down");
        for (unsigned i = 0; i < FILES; i++) {
                g_autofree char *name = name_of(i);
                g_autofree char *rel = g_strdup_printf("d/%s", name);
                g_autofree char *content = content_of(i);
                host_file(h, rel, content);
        }
        start_limited(h, NOFILE, NULL);
        struct vmm *v = h->vmm;
        unsigned base_fds = open_fds(h->pid);
        g_test_message("worker descriptors before the walk: %u", base_fds);

        /* A chain of directories, then a walk of 3,000 files: every one of
         * them looked up (and kept by the guest: no FORGET). */
        struct fuse_entry_out a, b, c, deep, d;
        assert_ok(vmm_lookup(v, VMM_ROOT, "a", &a));
        assert_ok(vmm_lookup(v, a.nodeid, "b", &b));
        assert_ok(vmm_lookup(v, b.nodeid, "c", &c));
        assert_ok(vmm_lookup(v, c.nodeid, "deep", &deep));
        assert_ok(vmm_lookup(v, VMM_ROOT, "d", &d));
        static uint64_t ids[FILES];
        unsigned max_fds = 0;
        for (unsigned i = 0; i < FILES; i++) {
                g_autofree char *name = name_of(i);
                struct fuse_entry_out e;
                int err = vmm_lookup(v, d.nodeid, name, &e);
                if (err != 0) {
                        assert_errno(err, 0);
                        g_test_message("LOOKUP of file %u failed", i);
                        return;
                }
                ids[i] = e.nodeid;
                if (i % 500 == 499) {
                        unsigned n = open_fds(h->pid);
                        max_fds = n > max_fds ? n : max_fds;
                }
        }
        g_test_message("worker descriptors after %u lookups: %u (at most %u seen)", FILES,
                       open_fds(h->pid), max_fds);
        g_assert_cmpuint(max_fds, <=, base_fds + CAP);
        g_assert_cmpuint(open_fds(h->pid), <=, base_fds + CAP);

        /* The early ones were dropped: GETATTR and READ reopen them, and
         * give their own attributes and data. */
        for (unsigned i = 0; i < 20; i++) {
                struct fuse_attr attr;
                g_autofree char *want = content_of(i);
                assert_ok(vmm_getattr(v, ids[i], &attr));
                g_assert_cmpuint(attr.size, ==, strlen(want));
                int err;
                g_autofree char *got = read_all(v, ids[i], &err);
                assert_ok(err);
                g_assert_cmpstr(got, ==, want);
        }
        /* Four levels of dropped directories above it. */
        {
                int err;
                g_autofree char *got = read_all(v, deep.nodeid, &err);
                assert_ok(err);
                g_assert_cmpstr(got, ==, "deep down");
        }

        /* Renamed through the daemon while dropped: reached by its new name. */
        assert_ok(vmm_rename(v, d.nodeid, "f0100", d.nodeid, "renamed", 0));
        {
                struct fuse_entry_out e;
                int err;
                assert_ok(vmm_lookup(v, d.nodeid, "renamed", &e));
                g_assert_cmpuint(e.nodeid, ==, ids[100]);
                assert_ok(vmm_forget(v, e.nodeid, 1));
                g_autofree char *got = read_all(v, ids[100], &err);
                assert_ok(err);
                g_assert_cmpstr(got, ==, "file 100");
        }
        /* Moved to another directory through the daemon, then dropped again
         * by a walk: reopened from its new directory. */
        assert_ok(vmm_rename(v, d.nodeid, "f0150", c.nodeid, "moved", 0));
        for (unsigned i = 1000; i < 1200; i++)
                assert_ok(vmm_access(v, ids[i], 0));

        /* Removed on the host behind the daemon's back: ESTALE (or ENOENT),
         * not a crash and not another file's data. */
        {
                g_autofree char *path = harness_path(h, "d/f0200");
                struct fuse_attr attr;
                g_assert_cmpint(unlink(path), ==, 0);
                int err = vmm_getattr(v, ids[200], &attr);
                g_assert_true(err == -ESTALE || err == -ENOENT);
                g_autofree char *got = read_all(v, ids[200], &err);
                g_assert_true(err == -ESTALE || err == -ENOENT);
                g_assert_cmpstr(got, ==, "");
        }
        /* Replaced on the host by another file of the same name: ESTALE (the
         * identity check), not the new file's data. */
        {
                struct fuse_attr attr;
                host_file(h, "d/f0300.new", "an impostor");
                g_autofree char *from = harness_path(h, "d/f0300.new");
                g_autofree char *to = harness_path(h, "d/f0300");
                g_assert_cmpint(rename(from, to), ==, 0);
                assert_errno(vmm_getattr(v, ids[300], &attr), -ESTALE);
                int err;
                g_autofree char *got = read_all(v, ids[300], &err);
                assert_errno(err, -ESTALE);
                g_assert_cmpstr(got, ==, "");
                /* The name itself leads to the new file, as a new inode. */
                struct fuse_entry_out e;
                assert_ok(vmm_lookup(v, d.nodeid, "f0300", &e));
                g_assert_cmpuint(e.nodeid, !=, ids[300]);
                g_autofree char *now = read_all(v, e.nodeid, &err);
                g_assert_cmpstr(now, ==, "an impostor");
                assert_ok(vmm_forget(v, e.nodeid, 1));
        }

        /* Unlinked through the daemon while the guest still knows it (one
         * open, one not): they keep their descriptors through another walk. */
        uint64_t fh = 0;
        {
                struct fuse_attr attr;
                assert_ok(vmm_open(v, ids[500], O_RDONLY, &fh));
                assert_ok(vmm_getattr(v, ids[600], &attr));
                assert_ok(vmm_unlink(v, d.nodeid, "f0500"));
                assert_ok(vmm_unlink(v, d.nodeid, "f0600"));
        }
        for (unsigned i = 2000; i < FILES; i++)
                assert_ok(vmm_access(v, ids[i], 0));
        {
                struct fuse_attr attr;
                char buf[16] = { 0 };
                size_t len = 0;
                assert_ok(vmm_getattr(v, ids[500], &attr));
                g_assert_cmpuint(attr.nlink, ==, 0);
                assert_ok(vmm_read(v, ids[500], fh, 0, buf, sizeof(buf) - 1, &len));
                g_assert_cmpstr(buf, ==, "file 500");
                assert_ok(vmm_release(v, ids[500], fh));
                assert_ok(vmm_getattr(v, ids[600], &attr));
                g_assert_cmpuint(attr.nlink, ==, 0);
                g_assert_cmpuint(attr.size, ==, strlen("file 600"));
        }
        /* The moved one, after the walk. */
        {
                int err;
                g_autofree char *got = read_all(v, ids[150], &err);
                assert_ok(err);
                g_assert_cmpstr(got, ==, "file 150");
        }

        g_assert_cmpuint(open_fds(h->pid), <=, base_fds + CAP);
        /* The guest forgets everything: the descriptors go back to where they were. */
        for (unsigned i = 0; i < FILES; i++)
                assert_ok(vmm_forget(v, ids[i], 1));
        assert_ok(vmm_forget(v, deep.nodeid, 1));
        g_test_message("worker descriptors after the FORGETs: %u", open_fds(h->pid));
        g_assert_cmpuint(open_fds(h->pid), <=, base_fds + 5);
        harness_assert_alive(h);
}

/* --max-inode-fds sets the cap: with 8, a hundred lookups leave at most 8
 * more descriptors, and every file still reads as itself (names short and
 * long: the table keeps them two ways). */
static char *option_name(unsigned i)
{
        return g_strdup_printf(i % 2 ? "f%04u" : "a-name-longer-than-sixteen-bytes-%04u", i);
}

static void test_option(void)
{
        if (!harness_require_sluice("--max-inode-fds"))
                return;
        g_autoptr(Harness) h = harness_new();
        for (unsigned i = 0; i < 100; i++) {
                g_autofree char *name = option_name(i);
                g_autofree char *content = content_of(i);
                host_file(h, name, content);
        }
        const char *extra[] = { "--max-inode-fds=8", NULL };
        harness_up(h, extra);
        struct vmm *v = h->vmm;
        unsigned base_fds = open_fds(h->pid);
        uint64_t ids[100];
        for (unsigned i = 0; i < 100; i++) {
                g_autofree char *name = option_name(i);
                struct fuse_entry_out e;
                assert_ok(vmm_lookup(v, VMM_ROOT, name, &e));
                ids[i] = e.nodeid;
        }
        g_assert_cmpuint(open_fds(h->pid), <=, base_fds + 8);
        for (unsigned i = 0; i < 100; i += 3) {
                int err;
                g_autofree char *want = content_of(i);
                g_autofree char *got = read_all(v, ids[i], &err);
                assert_ok(err);
                g_assert_cmpstr(got, ==, want);
        }
        g_assert_cmpuint(open_fds(h->pid), <=, base_fds + 8);
        harness_assert_alive(h);
}

/* Four queues at once over 200 files with a cap of 4: descriptors are
 * dropped and reopened all the time, under requests on other queues that
 * hold the same inodes (ThreadSanitizer runs this too). */
#define RACE_FILES   200u
#define RACE_THREADS 4u
#define RACE_OPS     1500u

struct race {
        struct vmm *v;
        const uint64_t *ids;
        uint64_t dir;
        unsigned t;
        unsigned failures;
};

static void *race_thread(void *arg)
{
        struct race *r = arg;

        for (unsigned i = 0; i < RACE_OPS; i++) {
                unsigned k = (r->t * 7919u + i * 31u) % RACE_FILES;
                g_autofree char *want = content_of(k);
                struct vmm_op op = { .queue = r->t + 1 };
                struct fuse_attr_out ao;
                struct fuse_entry_out eo;
                struct fuse_getattr_in gi = { 0 };
                char name[16];

                if (i % 5 == 0) {
                        g_snprintf(name, sizeof(name), "f%04u", k);
                        op.opcode = FUSE_LOOKUP;
                        op.nodeid = r->dir;
                        op.arg[0] = (struct iovec){ name, strlen(name) + 1 };
                        op.arg_cnt = 1;
                        op.out = &eo;
                        op.out_size = sizeof(eo);
                } else {
                        op.opcode = FUSE_GETATTR;
                        op.nodeid = r->ids[k];
                        op.out = &ao;
                        op.out_size = sizeof(ao);
                        /* gi, not a compound literal: the request is
                         * sent after this block ends */
                        op.arg[0] = (struct iovec){ &gi, sizeof(gi) };
                        op.arg_cnt = 1;
                }
                if (vmm_op_run(r->v, &op) < 0 || op.error != 0 ||
                    (op.opcode == FUSE_LOOKUP && (eo.nodeid != r->ids[k] || eo.attr.size != strlen(want))) ||
                    (op.opcode == FUSE_GETATTR && ao.attr.size != strlen(want)))
                        r->failures++;
        }
        return NULL;
}

static void test_concurrent_reopen(void)
{
        if (!harness_require_sluice("sluice-fs's descriptor cache"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_mkdir(h, "d");
        for (unsigned i = 0; i < RACE_FILES; i++) {
                g_autofree char *name = name_of(i);
                g_autofree char *rel = g_strdup_printf("d/%s", name);
                g_autofree char *content = content_of(i);
                host_file(h, rel, content);
        }
        const char *extra[] = { "--max-inode-fds=4", "--queues=4", NULL };
        harness_start(h, extra);
        struct vmm_config cfg = { .request_queues = RACE_THREADS };
        struct vmm *v = h->vmm = harness_connect(h, &cfg);
        struct fuse_entry_out d;
        static uint64_t ids[RACE_FILES];
        assert_ok(vmm_lookup(v, VMM_ROOT, "d", &d));
        for (unsigned i = 0; i < RACE_FILES; i++) {
                g_autofree char *name = name_of(i);
                struct fuse_entry_out e;
                assert_ok(vmm_lookup(v, d.nodeid, name, &e));
                ids[i] = e.nodeid;
        }
        struct race r[RACE_THREADS];
        pthread_t th[RACE_THREADS];
        for (unsigned t = 0; t < RACE_THREADS; t++) {
                r[t] = (struct race){ .v = v, .ids = ids, .dir = d.nodeid, .t = t };
                g_assert_cmpint(pthread_create(&th[t], NULL, race_thread, &r[t]), ==, 0);
        }
        for (unsigned t = 0; t < RACE_THREADS; t++) {
                pthread_join(th[t], NULL);
                g_assert_cmpuint(r[t].failures, ==, 0);
        }
        harness_assert_alive(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/many-inodes/walk-and-reopen", test_walk_and_reopen);
        g_test_add_func("/many-inodes/option", test_option);
        g_test_add_func("/many-inodes/concurrent-reopen", test_concurrent_reopen);
        return g_test_run();
}
