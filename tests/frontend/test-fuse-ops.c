/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-fuse-ops.c — every FUSE operation sluice-fs serves, through the test
 * VMM: its result, its errno, and the host folder's real state after it. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>

#define OFFSET_MAX INT64_MAX  /* the kernel's "to end of file" in fuse_file_lock.end */

static const char *const xattr_opts[] = { "--xattr", NULL };

static struct stat host_stat(Harness *h, const char *rel)
{
        g_autofree char *p = harness_path(h, rel);
        struct stat st = { 0 };
        if (lstat(p, &st) < 0)
                st.st_mode = 0;
        return st;
}

static gboolean host_exists(Harness *h, const char *rel)
{
        return host_stat(h, rel).st_mode != 0;
}

static uint64_t lookup_ok(struct vmm *v, uint64_t parent, const char *name)
{
        struct fuse_entry_out e = { 0 };
        assert_ok(vmm_lookup(v, parent, name, &e));
        return e.nodeid;
}

static void test_init(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_start(h, NULL);
        struct vmm *v = NULL;
        assert_ok(vmm_connect(h->socket, NULL, &v));
        struct fuse_init_out out;
        assert_ok(vmm_init(v, &out));
        g_assert_cmpuint(out.major, ==, 7);
        g_assert_cmpuint(out.minor, >=, 31);
        g_assert_cmpuint(out.minor, <=, FUSE_KERNEL_MINOR_VERSION);
        /* Linux 6.1 sends up to 1 MiB per request: max_pages 256 of 4 KiB. */
        g_assert_cmpuint(out.max_write, >=, 1u << 20);
        if (out.flags & FUSE_MAX_PAGES)
                g_assert_cmpuint(out.max_pages, >=, 256);
        g_assert_true(out.flags & FUSE_MAX_PAGES);
        vmm_free(v);
}

static void test_lookup(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "hello");
        harness_up(h, xattr_opts);
        struct fuse_entry_out e, e2;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e));
        struct stat st = host_stat(h, "file");
        g_assert_cmpuint(e.nodeid, !=, 0);
        g_assert_cmpuint(e.nodeid, !=, VMM_ROOT);
        g_assert_cmpuint(e.attr.ino, ==, st.st_ino);
        g_assert_cmpuint(e.attr.size, ==, 5);
        g_assert_cmpuint(e.attr.mode, ==, st.st_mode);
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e2));
        g_assert_cmpuint(e2.nodeid, ==, e.nodeid);  /* one inode, counted twice */
        assert_errno(vmm_lookup(h->vmm, VMM_ROOT, "missing", NULL), -ENOENT);
        assert_errno(vmm_lookup(h->vmm, e.nodeid, "x", NULL), -ENOTDIR);
        char longname[300];
        memset(longname, 'n', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        assert_errno(vmm_lookup(h->vmm, VMM_ROOT, longname, NULL), -ENAMETOOLONG);
}

static void test_forget(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "hello");
        harness_mkdir(h, "dir");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = 0;
        for (int i = 0; i < 3; i++)
                node = lookup_ok(v, VMM_ROOT, "file");
        uint64_t dir = lookup_ok(v, VMM_ROOT, "dir");
        /* FORGET and BATCH_FORGET have no reply: used length 0, on hiprio. */
        struct fuse_forget_in fi = { .nlookup = 2 };
        struct vmm_op op = { .hiprio = true, .opcode = FUSE_FORGET, .nodeid = node, .no_reply = true,
                             .arg_cnt = 1, .arg = { { &fi, sizeof(fi) } } };
        assert_ok(vmm_op_run(v, &op));
        g_assert_cmpuint(op.used_len, ==, 0);
        /* One lookup left: the node still works. */
        struct fuse_attr a;
        assert_ok(vmm_getattr(v, node, &a));
        g_assert_cmpuint(a.size, ==, 5);

        struct { struct fuse_batch_forget_in b; struct fuse_forget_one one[3]; } bf = {
                .b = { .count = 3 },
                .one = { { node, 1 }, { dir, 1 }, { 987654321, 5 } /* unknown: ignored */ },
        };
        struct vmm_op op2 = { .hiprio = true, .opcode = FUSE_BATCH_FORGET, .no_reply = true,
                              .arg_cnt = 1, .arg = { { &bf, sizeof(bf) } } };
        assert_ok(vmm_op_run(v, &op2));
        g_assert_cmpuint(op2.used_len, ==, 0);
        /* A FORGET of a node that does not exist changes nothing either. */
        assert_ok(vmm_forget(v, 123456789, 1));
        /* Looked up afresh, everything works. */
        node = lookup_ok(v, VMM_ROOT, "file");
        assert_ok(vmm_getattr(v, node, &a));
        g_assert_cmpuint(a.size, ==, 5);
        harness_assert_alive(h);
}

static void test_getattr(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "0123456789");
        harness_up(h, xattr_opts);
        struct fuse_attr a;
        assert_ok(vmm_getattr(h->vmm, VMM_ROOT, &a));
        g_assert_true(S_ISDIR(a.mode));
        struct stat root;
        g_assert_cmpint(stat(h->share, &root), ==, 0);
        g_assert_cmpuint(a.ino, ==, root.st_ino);
        uint64_t node = lookup_ok(h->vmm, VMM_ROOT, "file");
        assert_ok(vmm_getattr(h->vmm, node, &a));
        struct stat st = host_stat(h, "file");
        g_assert_cmpuint(a.size, ==, 10);
        g_assert_cmpuint(a.mode, ==, st.st_mode);
        g_assert_cmpuint(a.nlink, ==, 1);
        g_assert_cmpuint(a.mtime, ==, (uint64_t)st.st_mtim.tv_sec);
        g_assert_cmpuint(a.mtimensec, ==, (uint32_t)st.st_mtim.tv_nsec);
        /* The host changes the file in place: the next GETATTR sees it. */
        g_autofree char *path = harness_path(h, "file");
        FILE *f = fopen(path, "w");
        fputs("abc", f);
        fclose(f);
        assert_ok(vmm_getattr(h->vmm, node, &a));
        g_assert_cmpuint(a.size, ==, 3);
}

/* data: the daemon's options; without the seccomp sandbox the changes go
 * by the inode's /proc/self/fd name instead of through a re-opened fd. */
static void test_setattr(gconstpointer data)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "0123456789");
        harness_up(h, data);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        struct fuse_attr a;

        struct fuse_setattr_in in = { .valid = FATTR_MODE, .mode = S_IFREG | 0600 };
        assert_ok(vmm_setattr(v, node, &in, &a));
        g_assert_cmpuint(a.mode & 07777, ==, 0600);
        g_assert_cmpuint(host_stat(h, "file").st_mode & 07777, ==, 0600);

        in = (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = 4 };
        assert_ok(vmm_setattr(v, node, &in, &a));
        g_assert_cmpuint(a.size, ==, 4);
        g_autofree char *content = harness_read(h, "file");
        g_assert_cmpstr(content, ==, "0123");

        in = (struct fuse_setattr_in){ .valid = FATTR_ATIME | FATTR_MTIME,
                                       .atime = 1000000000, .atimensec = 5,
                                       .mtime = 1200000000, .mtimensec = 7 };
        assert_ok(vmm_setattr(v, node, &in, &a));
        struct stat st = host_stat(h, "file");
        g_assert_cmpint(st.st_mtim.tv_sec, ==, 1200000000);
        g_assert_cmpint(st.st_mtim.tv_nsec, ==, 7);
        g_assert_cmpint(st.st_atim.tv_sec, ==, 1000000000);
        g_assert_cmpuint(a.mtime, ==, 1200000000);

        in = (struct fuse_setattr_in){ .valid = FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW |
                                                FATTR_MTIME_NOW };
        assert_ok(vmm_setattr(v, node, &in, &a));
        st = host_stat(h, "file");
        time_t now = time(NULL);
        g_assert_cmpint(st.st_mtim.tv_sec, >=, now - 5);
        g_assert_cmpint(st.st_mtim.tv_sec, <=, now + 1);
        g_assert_cmpint(st.st_atim.tv_sec, >=, now - 5);

        /* Owner: to the daemon's own ids works; to root's, only root may. */
        in = (struct fuse_setattr_in){ .valid = FATTR_UID | FATTR_GID,
                                       .uid = harness_daemon_uid(), .gid = harness_daemon_gid() };
        assert_ok(vmm_setattr(v, node, &in, &a));
        g_assert_cmpuint(host_stat(h, "file").st_uid, ==, harness_daemon_uid());
        if (harness_daemon_uid() != 0) {
                in = (struct fuse_setattr_in){ .valid = FATTR_UID, .uid = 0 };
                assert_errno(vmm_setattr(v, node, &in, NULL), -EPERM);
                g_assert_cmpuint(host_stat(h, "file").st_uid, ==, harness_daemon_uid());
        }

        /* Size through an open handle (ftruncate), as the kernel sends it. */
        uint64_t fh;
        assert_ok(vmm_open(v, node, O_RDWR, &fh));
        in = (struct fuse_setattr_in){ .valid = FATTR_SIZE | FATTR_FH, .size = 1, .fh = fh };
        assert_ok(vmm_setattr(v, node, &in, &a));
        g_assert_cmpuint(host_stat(h, "file").st_size, ==, 1);
        assert_ok(vmm_release(v, node, fh));
}

static void test_symlink_readlink(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_symlink(h, "some/where", "hostlink");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        assert_ok(vmm_symlink(v, VMM_ROOT, "link", "target/x y", &e));
        g_assert_true(S_ISLNK(e.attr.mode));
        g_autofree char *p = harness_path(h, "link");
        g_autofree char *target = g_file_read_link(p, NULL);
        g_assert_cmpstr(target, ==, "target/x y");
        char buf[256];
        assert_ok(vmm_readlink(v, e.nodeid, buf, sizeof(buf)));
        g_assert_cmpstr(buf, ==, "target/x y");
        assert_ok(vmm_readlink(v, lookup_ok(v, VMM_ROOT, "hostlink"), buf, sizeof(buf)));
        g_assert_cmpstr(buf, ==, "some/where");
        assert_errno(vmm_symlink(v, VMM_ROOT, "link", "other", NULL), -EEXIST);
        /* Not a symlink: an error (EINVAL from readlink(2), ENOENT from readlinkat(fd, "")). */
        g_assert_cmpint(vmm_readlink(v, VMM_ROOT, buf, sizeof(buf)), <, 0);
}

static void test_mknod(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_up(h, xattr_opts);
        struct fuse_entry_out e;
        assert_ok(vmm_mknod(h->vmm, VMM_ROOT, "fifo", S_IFIFO | 0640, 0, &e));
        g_assert_true(S_ISFIFO(e.attr.mode));
        struct stat st = host_stat(h, "fifo");
        g_assert_true(S_ISFIFO(st.st_mode));
        g_assert_cmpuint(st.st_mode & 0777, ==, 0640);
        g_assert_cmpuint(st.st_uid, ==, harness_daemon_uid());
        assert_ok(vmm_mknod(h->vmm, VMM_ROOT, "plain", S_IFREG | 0600, 0, &e));
        g_assert_true(S_ISREG(host_stat(h, "plain").st_mode));
        assert_errno(vmm_mknod(h->vmm, VMM_ROOT, "plain", S_IFREG | 0600, 0, NULL), -EEXIST);
}

static void test_mkdir_rmdir(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        assert_ok(vmm_mkdir(v, VMM_ROOT, "d", 0750, &e));
        g_assert_true(S_ISDIR(e.attr.mode));
        struct stat st = host_stat(h, "d");
        g_assert_true(S_ISDIR(st.st_mode));
        g_assert_cmpuint(st.st_mode & 0777, ==, 0750);
        g_assert_cmpuint(st.st_uid, ==, harness_daemon_uid());
        assert_ok(vmm_mkdir(v, e.nodeid, "sub", 0755, NULL));
        g_assert_true(host_exists(h, "d/sub"));
        assert_errno(vmm_mkdir(v, VMM_ROOT, "d", 0755, NULL), -EEXIST);
        assert_errno(vmm_rmdir(v, VMM_ROOT, "d"), -ENOTEMPTY);
        assert_errno(vmm_rmdir(v, VMM_ROOT, "file"), -ENOTDIR);
        assert_errno(vmm_rmdir(v, VMM_ROOT, "missing"), -ENOENT);
        assert_ok(vmm_rmdir(v, e.nodeid, "sub"));
        assert_ok(vmm_rmdir(v, VMM_ROOT, "d"));
        g_assert_false(host_exists(h, "d"));
}

static void test_unlink(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_mkdir(h, "dir");
        harness_up(h, xattr_opts);
        assert_ok(vmm_unlink(h->vmm, VMM_ROOT, "file"));
        g_assert_false(host_exists(h, "file"));
        assert_errno(vmm_unlink(h->vmm, VMM_ROOT, "file"), -ENOENT);
        assert_errno(vmm_unlink(h->vmm, VMM_ROOT, "dir"), -EISDIR);
        g_assert_true(host_exists(h, "dir"));
}

static void test_rename(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "a", "AAA");
        harness_write(h, "b", "BBB");
        harness_write(h, "c", "CCC");
        harness_mkdir(h, "dir");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t dir = lookup_ok(v, VMM_ROOT, "dir");

        assert_ok(vmm_rename(v, VMM_ROOT, "a", dir, "moved", 0));
        g_assert_false(host_exists(h, "a"));
        g_autofree char *moved = harness_read(h, "dir/moved");
        g_assert_cmpstr(moved, ==, "AAA");

        assert_errno(vmm_rename(v, VMM_ROOT, "b", VMM_ROOT, "c", RENAME_NOREPLACE), -EEXIST);
        g_autofree char *b1 = harness_read(h, "b");
        g_autofree char *c1 = harness_read(h, "c");
        g_assert_cmpstr(b1, ==, "BBB");
        g_assert_cmpstr(c1, ==, "CCC");

        assert_ok(vmm_rename(v, VMM_ROOT, "b", VMM_ROOT, "c", RENAME_EXCHANGE));
        g_autofree char *b2 = harness_read(h, "b");
        g_autofree char *c2 = harness_read(h, "c");
        g_assert_cmpstr(b2, ==, "CCC");
        g_assert_cmpstr(c2, ==, "BBB");

        assert_ok(vmm_rename(v, VMM_ROOT, "b", VMM_ROOT, "new", RENAME_NOREPLACE));
        g_autofree char *n = harness_read(h, "new");
        g_assert_cmpstr(n, ==, "CCC");

        assert_ok(vmm_rename(v, VMM_ROOT, "new", VMM_ROOT, "c", 0));  /* replaces */
        g_autofree char *c3 = harness_read(h, "c");
        g_assert_cmpstr(c3, ==, "CCC");
        g_assert_false(host_exists(h, "new"));
        assert_errno(vmm_rename(v, VMM_ROOT, "missing", VMM_ROOT, "x", 0), -ENOENT);
        assert_errno(vmm_rename(v, VMM_ROOT, "c", VMM_ROOT, "x", RENAME_EXCHANGE), -ENOENT);
}

static void test_link(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "data");
        harness_mkdir(h, "dir");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        uint64_t dir = lookup_ok(v, VMM_ROOT, "dir");
        struct fuse_entry_out e;
        assert_ok(vmm_link(v, node, dir, "hard", &e));
        g_assert_cmpuint(e.nodeid, ==, node);
        g_assert_cmpuint(e.attr.nlink, ==, 2);
        struct stat a = host_stat(h, "file"), b = host_stat(h, "dir/hard");
        g_assert_cmpuint(a.st_ino, ==, b.st_ino);
        g_assert_cmpuint(a.st_nlink, ==, 2);
        assert_errno(vmm_link(v, node, dir, "hard", NULL), -EEXIST);
        assert_errno(vmm_link(v, dir, VMM_ROOT, "dirlink", NULL), -EPERM);
}

static void test_open_read_write(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "hello world");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        uint64_t fh, rofh;
        assert_ok(vmm_open(v, node, O_RDWR, &fh));
        char buf[64];
        size_t got;
        assert_ok(vmm_read(v, node, fh, 6, buf, sizeof(buf), &got));
        g_assert_cmpuint(got, ==, 5);
        g_assert_cmpmem(buf, got, "world", 5);
        uint32_t written;
        assert_ok(vmm_write(v, node, fh, 6, "WORLD!", 6, &written));
        g_assert_cmpuint(written, ==, 6);
        assert_ok(vmm_flush(v, node, fh));
        assert_ok(vmm_fsync(v, node, fh, false));
        assert_ok(vmm_fsync(v, node, fh, true));
        g_autofree char *content = harness_read(h, "file");
        g_assert_cmpstr(content, ==, "hello WORLD!");
        assert_ok(vmm_read(v, node, fh, 100, buf, sizeof(buf), &got));  /* past EOF: empty */
        g_assert_cmpuint(got, ==, 0);
        assert_ok(vmm_release(v, node, fh));

        assert_ok(vmm_open(v, node, O_RDONLY, &rofh));
        assert_errno(vmm_write(v, node, rofh, 0, "x", 1, NULL), -EBADF);
        assert_ok(vmm_release(v, node, rofh));
        g_autofree char *same = harness_read(h, "file");
        g_assert_cmpstr(same, ==, "hello WORLD!");

        assert_ok(vmm_open(v, node, O_WRONLY | O_TRUNC, &fh));
        g_assert_cmpuint(host_stat(h, "file").st_size, ==, 0);
        assert_ok(vmm_release(v, node, fh));
        assert_errno(vmm_open(v, VMM_ROOT, O_RDWR, NULL), -EISDIR);
        /* A handle that was never opened. */
        assert_errno(vmm_read(v, node, 0xdeadbeef, 0, buf, sizeof(buf), NULL), -EBADF);
}

static void test_create(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "exists", "x");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_create(v, VMM_ROOT, "new", O_RDWR | O_CREAT, S_IFREG | 0640, &e, &fh));
        g_assert_true(S_ISREG(e.attr.mode));
        struct stat st = host_stat(h, "new");
        g_assert_true(S_ISREG(st.st_mode));
        g_assert_cmpuint(st.st_mode & 0777, ==, 0640);
        g_assert_cmpuint(st.st_uid, ==, harness_daemon_uid());
        g_assert_cmpuint(e.attr.ino, ==, st.st_ino);
        assert_ok(vmm_write(v, e.nodeid, fh, 0, "created", 7, NULL));
        assert_ok(vmm_release(v, e.nodeid, fh));
        g_autofree char *content = harness_read(h, "new");
        g_assert_cmpstr(content, ==, "created");
        assert_errno(vmm_create(v, VMM_ROOT, "exists", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644,
                                NULL, NULL), -EEXIST);
}

static void fill_pattern(uint8_t *p, size_t len, unsigned seed)
{
        for (size_t i = 0; i < len; i++)
                p[i] = (uint8_t)((i * 7 + seed + (i >> 12)) & 0xff);
}

/* 1 MiB in one request, spread over many descriptors and an indirect table,
 * as a guest with max_pages 256 sends it. */
static void test_big_io(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_create(v, VMM_ROOT, "big", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        const size_t size = 1u << 20;
        g_autofree uint8_t *data = g_malloc(size);
        g_autofree uint8_t *back = g_malloc(size);

        for (int round = 0; round < 2; round++) {
                gboolean indirect_write = round == 0;
                fill_pattern(data, size, (unsigned)round * 13 + 1);
                struct fuse_write_in wi = { .fh = fh, .offset = 0, .size = (uint32_t)size };
                struct fuse_write_out wo = { 0 };
                struct vmm_op w = { .opcode = FUSE_WRITE, .nodeid = e.nodeid, .arg_cnt = 2,
                                    .arg = { { &wi, sizeof(wi) }, { data, size } },
                                    .out = &wo, .out_size = sizeof(wo),
                                    .indirect = indirect_write,
                                    .chunk = indirect_write ? 4096 : 65536 };
                assert_ok(vmm_op_run(v, &w));
                assert_ok(w.error);
                g_assert_cmpuint(wo.size, ==, size);

                g_autofree char *path = harness_path(h, "big");
                g_autofree char *host = NULL;
                gsize len = 0;
                g_assert_true(g_file_get_contents(path, &host, &len, NULL));
                g_assert_cmpuint(len, ==, size);
                g_assert_true(memcmp(host, data, size) == 0);

                memset(back, 0, size);
                struct fuse_read_in ri = { .fh = fh, .offset = 0, .size = (uint32_t)size };
                struct vmm_op r = { .opcode = FUSE_READ, .nodeid = e.nodeid, .arg_cnt = 1,
                                    .arg = { { &ri, sizeof(ri) } }, .out = back, .out_size = size,
                                    .indirect = !indirect_write,
                                    .chunk = indirect_write ? 65536 : 4096 };
                assert_ok(vmm_op_run(v, &r));
                assert_ok(r.error);
                g_assert_cmpuint(r.out_len, ==, size);
                g_assert_true(memcmp(back, data, size) == 0);
        }
        /* A short read at an unaligned offset across descriptor boundaries. */
        struct fuse_read_in ri = { .fh = fh, .offset = 4095, .size = 10000 };
        struct vmm_op r = { .opcode = FUSE_READ, .nodeid = e.nodeid, .arg_cnt = 1,
                            .arg = { { &ri, sizeof(ri) } }, .out = back, .out_size = 10000,
                            .chunk = 333 };
        assert_ok(vmm_op_run(v, &r));
        g_assert_cmpuint(r.out_len, ==, 10000);
        g_assert_true(memcmp(back, data + 4095, 10000) == 0);
        assert_ok(vmm_release(v, e.nodeid, fh));
}

struct names { GPtrArray *names; uint64_t last_off; gboolean plus_ok; };

static void collect(const struct fuse_dirent *d, const char *name,
                    const struct fuse_entry_out *entry, void *userdata)
{
        struct names *n = userdata;
        g_ptr_array_add(n->names, g_strdup(name));
        n->last_off = d->off;
        if (entry && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
            (entry->nodeid == 0 || entry->attr.ino != d->ino))
                n->plus_ok = FALSE;
}

static GPtrArray *list_dir(struct vmm *v, uint64_t node, gboolean plus, size_t bufsize)
{
        struct names n = { g_ptr_array_new_with_free_func(g_free), 0, TRUE };
        uint64_t fh;
        assert_ok(vmm_opendir(v, node, &fh));
        g_autofree char *buf = g_malloc(bufsize);
        for (int i = 0; i < 10000; i++) {
                size_t got = 0;
                int r = vmm_readdir(v, node, fh, n.last_off, plus, buf, bufsize, &got);
                assert_ok(r);
                if (r < 0 || got == 0)
                        break;
                assert_ok(vmm_dirents_foreach(buf, got, plus, collect, &n));
        }
        g_assert_true(n.plus_ok);
        assert_ok(vmm_fsyncdir(v, node, fh));
        assert_ok(vmm_releasedir(v, node, fh));
        g_ptr_array_sort(n.names, (GCompareFunc)g_strcmp0);
        return n.names;
}

static void test_readdir(void)
{
        g_autoptr(Harness) h = harness_new();
        for (int i = 0; i < 300; i++) {
                g_autofree char *name = g_strdup_printf("entry-%03d-with-a-longish-name", i);
                harness_write(h, name, "");
        }
        harness_mkdir(h, "sub");
        harness_up(h, xattr_opts);
        for (int plus = 0; plus < 2; plus++) {
                g_autoptr(GPtrArray) names = list_dir(h->vmm, VMM_ROOT, plus, 4096);
                /* Every entry exactly once, across many small READDIR replies. */
                GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
                for (unsigned i = 0; i < names->len; i++) {
                        if (g_hash_table_contains(seen, names->pdata[i])) {
                                g_test_message("FAIL: %s listed twice", (char *)names->pdata[i]);
                                g_test_fail();
                        }
                        g_hash_table_add(seen, names->pdata[i]);
                }
                g_assert_cmpuint(g_hash_table_size(seen), ==, 300 + 1 + 2);
                g_assert_true(g_hash_table_contains(seen, "."));
                g_assert_true(g_hash_table_contains(seen, ".."));
                g_assert_true(g_hash_table_contains(seen, "sub"));
                g_assert_true(g_hash_table_contains(seen, "entry-299-with-a-longish-name"));
                g_hash_table_unref(seen);
        }
        uint64_t sub = lookup_ok(h->vmm, VMM_ROOT, "sub");
        g_autoptr(GPtrArray) empty = list_dir(h->vmm, sub, FALSE, 65536);
        g_assert_cmpuint(empty->len, ==, 2);
        assert_errno(vmm_opendir(h->vmm, lookup_ok(h->vmm, VMM_ROOT, "entry-000-with-a-longish-name"),
                                 NULL), -ENOTDIR);
}

static void test_statfs_access(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, xattr_opts);
        struct fuse_kstatfs st;
        assert_ok(vmm_statfs(h->vmm, VMM_ROOT, &st));
        struct statvfs host;
        g_assert_cmpint(statvfs(h->share, &host), ==, 0);
        g_assert_cmpuint(st.blocks, ==, host.f_blocks);
        g_assert_cmpuint(st.bsize, ==, host.f_bsize);
        g_assert_cmpuint(st.namelen, ==, host.f_namemax);
        uint64_t node = lookup_ok(h->vmm, VMM_ROOT, "file");
        assert_ok(vmm_access(h->vmm, node, F_OK));
        assert_ok(vmm_access(h->vmm, node, R_OK | W_OK));
        assert_errno(vmm_access(h->vmm, node, X_OK), -EACCES);  /* even root needs an x bit */
        assert_ok(vmm_access(h->vmm, VMM_ROOT, X_OK));
}

static void test_xattr(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        g_autofree char *path = harness_path(h, "file");

        assert_ok(vmm_setxattr(v, node, "user.sluice", "value", 5, 0));
        char host[64] = { 0 };
        g_assert_cmpint(lgetxattr(path, "user.sluice", host, sizeof(host)), ==, 5);
        g_assert_cmpstr(host, ==, "value");
        assert_errno(vmm_setxattr(v, node, "user.sluice", "v2", 2, XATTR_CREATE), -EEXIST);
        assert_errno(vmm_setxattr(v, node, "user.other", "v2", 2, XATTR_REPLACE), -ENODATA);

        size_t len = 0;
        assert_ok(vmm_getxattr(v, node, "user.sluice", NULL, 0, &len));
        g_assert_cmpuint(len, ==, 5);
        char buf[256];
        assert_ok(vmm_getxattr(v, node, "user.sluice", buf, sizeof(buf), &len));
        g_assert_cmpmem(buf, len, "value", 5);
        assert_errno(vmm_getxattr(v, node, "user.sluice", buf, 2, &len), -ERANGE);
        assert_errno(vmm_getxattr(v, node, "user.missing", buf, sizeof(buf), &len), -ENODATA);

        assert_ok(vmm_listxattr(v, node, NULL, 0, &len));
        g_assert_cmpuint(len, >=, sizeof("user.sluice"));
        assert_ok(vmm_listxattr(v, node, buf, sizeof(buf), &len));
        gboolean found = FALSE;
        for (size_t off = 0; off < len; off += strlen(buf + off) + 1)
                found |= strcmp(buf + off, "user.sluice") == 0;
        g_assert_true(found);

        assert_ok(vmm_removexattr(v, node, "user.sluice"));
        g_assert_cmpint(lgetxattr(path, "user.sluice", host, sizeof(host)), <, 0);
        g_assert_cmpint(errno, ==, ENODATA);
        assert_errno(vmm_removexattr(v, node, "user.sluice"), -ENODATA);
}

static void test_xattr_disabled(void)
{
        if (!harness_require_sluice("the legacy daemon answers ENOSYS; sluice-fs's choice is tested"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, NULL);
        uint64_t node = lookup_ok(h->vmm, VMM_ROOT, "file");
        int r = vmm_setxattr(h->vmm, node, "user.sluice", "value", 5, 0);
        if (r != -EOPNOTSUPP && r != -ENOSYS) {
                g_test_message("FAIL: SETXATTR without --xattr = %d, expected EOPNOTSUPP or ENOSYS", r);
                g_test_fail();
        }
        g_autofree char *path = harness_path(h, "file");
        char host[16];
        g_assert_cmpint(lgetxattr(path, "user.sluice", host, sizeof(host)), <, 0);
}

static void test_posix_locks(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "locked content");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        uint64_t fh1, fh2;
        assert_ok(vmm_open(v, node, O_RDWR, &fh1));
        assert_ok(vmm_open(v, node, O_RDWR, &fh2));
        struct fuse_file_lock wr = { .start = 0, .end = 99, .type = F_WRLCK, .pid = 100 };
        struct fuse_file_lock un = { .start = 0, .end = 99, .type = F_UNLCK, .pid = 100 };
        struct fuse_file_lock got;

        assert_ok(vmm_setlk(v, node, fh1, 1, &wr, false, false));
        /* Another owner sees the lock and cannot take it. */
        struct fuse_file_lock probe = { .start = 10, .end = 20, .type = F_RDLCK, .pid = 200 };
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_WRLCK);
        assert_errno(vmm_setlk(v, node, fh2, 2, &probe, false, false), -EAGAIN);
        /* The lock is real on the host too. */
        g_autofree char *path = harness_path(h, "file");
        int fd = open(path, O_RDWR);
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
        g_assert_cmpint(fcntl(fd, F_OFD_GETLK, &fl), ==, 0);
        g_assert_cmpint(fl.l_type, ==, F_WRLCK);
        /* Outside the range is free. */
        struct fuse_file_lock far = { .start = 200, .end = 300, .type = F_WRLCK, .pid = 200 };
        assert_ok(vmm_setlk(v, node, fh2, 2, &far, false, false));

        assert_ok(vmm_setlk(v, node, fh1, 1, &un, false, false));
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_UNLCK);
        assert_ok(vmm_setlk(v, node, fh2, 2, &probe, false, false));
        fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 10 };
        g_assert_cmpint(fcntl(fd, F_OFD_GETLK, &fl), ==, 0);
        g_assert_cmpint(fl.l_type, ==, F_RDLCK);
        close(fd);
        assert_ok(vmm_release(v, node, fh1));
        assert_ok(vmm_release(v, node, fh2));
}

static void test_flock(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        uint64_t fh1, fh2;
        assert_ok(vmm_open(v, node, O_RDWR, &fh1));
        assert_ok(vmm_open(v, node, O_RDWR, &fh2));
        struct fuse_file_lock ex = { .type = F_WRLCK, .end = OFFSET_MAX };
        struct fuse_file_lock un = { .type = F_UNLCK, .end = OFFSET_MAX };
        assert_ok(vmm_setlk(v, node, fh1, 1, &ex, false, true));
        assert_errno(vmm_setlk(v, node, fh2, 2, &ex, false, true), -EWOULDBLOCK);
        g_autofree char *path = harness_path(h, "file");
        int fd = open(path, O_RDONLY);
        g_assert_cmpint(flock(fd, LOCK_SH | LOCK_NB), ==, -1);  /* the host sees it */
        assert_ok(vmm_setlk(v, node, fh1, 1, &un, false, true));
        assert_ok(vmm_setlk(v, node, fh2, 2, &ex, false, true));
        close(fd);
        assert_ok(vmm_release(v, node, fh1));
        assert_ok(vmm_release(v, node, fh2));
}

/* SETLKW on a held lock: the reply comes later, and meanwhile the same queue
 * keeps serving other requests. */
static void test_setlkw(void)
{
        if (!harness_require_sluice("legacy virtiofsd does not support blocking locks"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        uint64_t fh1, fh2;
        assert_ok(vmm_open(v, node, O_RDWR, &fh1));
        assert_ok(vmm_open(v, node, O_RDWR, &fh2));
        struct fuse_file_lock wr = { .start = 0, .end = OFFSET_MAX, .type = F_WRLCK, .pid = 1 };
        struct fuse_file_lock un = { .start = 0, .end = OFFSET_MAX, .type = F_UNLCK, .pid = 1 };
        assert_ok(vmm_setlk(v, node, fh1, 1, &wr, false, false));

        struct fuse_lk_in lk = { .fh = fh2, .owner = 2, .lk = wr };
        struct vmm_op w = { .opcode = FUSE_SETLKW, .nodeid = node, .arg_cnt = 1,
                            .arg = { { &lk, sizeof(lk) } } };
        assert_ok(vmm_op_submit(v, &w));
        assert_errno(vmm_op_wait(v, &w, 300), -ETIMEDOUT);  /* must wait */
        struct fuse_attr a;
        for (int i = 0; i < 5; i++)
                assert_ok(vmm_getattr(v, node, &a));
        size_t got;
        char buf[4];
        assert_ok(vmm_read(v, node, fh1, 0, buf, sizeof(buf), &got));
        assert_errno(vmm_op_wait(v, &w, 100), -ETIMEDOUT);  /* still waiting */
        assert_ok(vmm_setlk(v, node, fh1, 1, &un, false, false));
        assert_ok(vmm_op_wait(v, &w, -1));
        assert_ok(w.error);
        /* Now owner 2 holds it. */
        assert_errno(vmm_setlk(v, node, fh1, 1, &wr, false, false), -EAGAIN);
        assert_ok(vmm_release(v, node, fh2));
        assert_ok(vmm_release(v, node, fh1));
}

/* INTERRUPT of a waiting SETLKW ends it with EINTR. */
static void test_interrupt(void)
{
        if (!harness_require_sluice("legacy virtiofsd does not support blocking locks"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        uint64_t fh1, fh2;
        assert_ok(vmm_open(v, node, O_RDWR, &fh1));
        assert_ok(vmm_open(v, node, O_RDWR, &fh2));
        struct fuse_file_lock wr = { .start = 0, .end = OFFSET_MAX, .type = F_WRLCK, .pid = 1 };
        assert_ok(vmm_setlk(v, node, fh1, 1, &wr, false, false));
        struct fuse_lk_in lk = { .fh = fh2, .owner = 2, .lk = wr };
        struct vmm_op w = { .opcode = FUSE_SETLKW, .nodeid = node, .arg_cnt = 1,
                            .arg = { { &lk, sizeof(lk) } } };
        assert_ok(vmm_op_submit(v, &w));
        assert_errno(vmm_op_wait(v, &w, 200), -ETIMEDOUT);
        struct fuse_interrupt_in ii = { .unique = w.unique };
        struct vmm_op i = { .hiprio = true, .opcode = FUSE_INTERRUPT, .arg_cnt = 1,
                            .arg = { { &ii, sizeof(ii) } }, .no_reply = true };
        assert_ok(vmm_op_run(v, &i));
        assert_ok(vmm_op_wait(v, &w, -1));
        assert_errno(w.error, -EINTR);
        /* The interrupted waiter got no lock. */
        struct fuse_file_lock probe = { .start = 0, .end = 10, .type = F_WRLCK, .pid = 3 };
        struct fuse_file_lock got;
        assert_ok(vmm_getlk(v, node, fh2, 3, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_WRLCK);
        /* An INTERRUPT for a request that is not waiting is harmless. */
        ii.unique = 424242;
        struct vmm_op i2 = { .hiprio = true, .opcode = FUSE_INTERRUPT, .arg_cnt = 1,
                             .arg = { { &ii, sizeof(ii) } }, .no_reply = true };
        assert_ok(vmm_op_run(v, &i2));
        struct fuse_attr a;
        assert_ok(vmm_getattr(v, node, &a));
}

static void test_fallocate_lseek(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_create(v, VMM_ROOT, "sparse", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_fallocate(v, e.nodeid, fh, 0, 0, 1 << 20));
        struct stat st = host_stat(h, "sparse");
        g_assert_cmpint(st.st_size, ==, 1 << 20);
        g_assert_cmpint(st.st_blocks * 512, >=, 1 << 20);
        /* Punch a hole in the middle, keeping the size. */
        assert_ok(vmm_fallocate(v, e.nodeid, fh, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                256 << 10, 512 << 10));
        st = host_stat(h, "sparse");
        g_assert_cmpint(st.st_size, ==, 1 << 20);
        g_assert_cmpint(st.st_blocks * 512, <, 1 << 20);
        /* Data at [0, 4K) and [768K, 772K), holes around: SEEK_DATA/SEEK_HOLE
         * must answer what lseek(2) on the host file answers. */
        assert_ok(vmm_setattr(v, e.nodeid, &(struct fuse_setattr_in){ .valid = FATTR_SIZE }, NULL));
        uint8_t page[4096];
        memset(page, 'd', sizeof(page));
        assert_ok(vmm_write(v, e.nodeid, fh, 0, page, sizeof(page), NULL));
        assert_ok(vmm_write(v, e.nodeid, fh, 768 << 10, page, sizeof(page), NULL));
        assert_ok(vmm_setattr(v, e.nodeid, &(struct fuse_setattr_in){ .valid = FATTR_SIZE,
                                                                      .size = 1 << 20 }, NULL));
        g_autofree char *path = harness_path(h, "sparse");
        int hostfd = open(path, O_RDONLY);
        const struct { uint64_t off; int whence; } probes[] = {
                { 0, SEEK_DATA }, { 0, SEEK_HOLE }, { 4096, SEEK_DATA }, { 8192, SEEK_HOLE },
                { 770 << 10, SEEK_HOLE }, { 770 << 10, SEEK_DATA },
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(probes); i++) {
                uint64_t off = 0;
                off_t want = lseek(hostfd, (off_t)probes[i].off, probes[i].whence);
                g_assert_cmpint(want, >=, 0);
                assert_ok(vmm_lseek(v, e.nodeid, fh, probes[i].off, (uint32_t)probes[i].whence, &off));
                g_assert_cmpuint(off, ==, (uint64_t)want);
        }
        close(hostfd);
        uint64_t off;
        assert_ok(vmm_lseek(v, e.nodeid, fh, 4096, SEEK_DATA, &off));
        g_assert_cmpuint(off, >, 4096);  /* skipped the hole */
        assert_errno(vmm_lseek(v, e.nodeid, fh, 2 << 20, SEEK_DATA, &off), -ENXIO);
        assert_ok(vmm_release(v, e.nodeid, fh));
}

static void test_copy_file_range(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "src", "0123456789");
        harness_write(h, "dst", "abcdefghij");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t src = lookup_ok(v, VMM_ROOT, "src"), dst = lookup_ok(v, VMM_ROOT, "dst");
        uint64_t fs, fd;
        assert_ok(vmm_open(v, src, O_RDONLY, &fs));
        assert_ok(vmm_open(v, dst, O_RDWR, &fd));
        uint32_t copied = 0;
        assert_ok(vmm_copy_file_range(v, src, fs, 2, dst, fd, 5, 4, &copied));
        g_assert_cmpuint(copied, ==, 4);
        g_autofree char *content = harness_read(h, "dst");
        g_assert_cmpstr(content, ==, "abcde2345j");
        assert_errno(vmm_copy_file_range(v, src, fs, 0, src, fs, 0, 4, NULL), -EBADF);
        assert_ok(vmm_release(v, src, fs));
        assert_ok(vmm_release(v, dst, fd));
}

static void test_syncfs_destroy(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_up(h, xattr_opts);
        assert_ok(vmm_syncfs(h->vmm));
        assert_ok(vmm_destroy(h->vmm));
        harness_assert_alive(h);
}

static void test_tmpfile(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_mkdir(h, "dir");
        harness_up(h, xattr_opts);
        struct vmm *v = h->vmm;
        uint64_t dir = lookup_ok(v, VMM_ROOT, "dir");
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_tmpfile(v, dir, O_RDWR, S_IFREG | 0600, &e, &fh));
        g_assert_true(S_ISREG(e.attr.mode));
        g_assert_cmpuint(e.attr.nlink, ==, 0);
        assert_ok(vmm_write(v, e.nodeid, fh, 0, "anon", 4, NULL));
        char buf[8];
        size_t got;
        assert_ok(vmm_read(v, e.nodeid, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "anon", 4);
        /* Nameless: nothing appears in the host directory. */
        g_autofree char *p = harness_path(h, "dir");
        g_autoptr(GDir) d = g_dir_open(p, 0, NULL);
        g_assert_null(g_dir_read_name(d));
        assert_ok(vmm_release(v, e.nodeid, fh));
}

static void test_unknown_opcode(void)
{
        g_autoptr(Harness) h = harness_new();
        harness_up(h, xattr_opts);
        uint32_t opcodes[] = { 0, 9999, 4096 /* CUSE_INIT */, 52, 0xffffffff };
        char arg[64] = { 0 };
        for (unsigned i = 0; i < G_N_ELEMENTS(opcodes); i++)
                assert_errno(vmm_call(h->vmm, opcodes[i], VMM_ROOT, arg, sizeof(arg), NULL, 0, NULL, 0,
                                      NULL, 0, NULL), -ENOSYS);
        struct fuse_attr a;
        assert_ok(vmm_getattr(h->vmm, VMM_ROOT, &a));
        harness_assert_alive(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/fuse/init", test_init);
        g_test_add_func("/fuse/lookup", test_lookup);
        g_test_add_func("/fuse/forget", test_forget);
        g_test_add_func("/fuse/getattr", test_getattr);
        g_test_add_data_func("/fuse/setattr", xattr_opts, test_setattr);
        g_test_add_data_func("/fuse/setattr-unsandboxed",
                             (const char *const[]){ "--xattr", "--sandbox=none", NULL }, test_setattr);
        g_test_add_func("/fuse/symlink-readlink", test_symlink_readlink);
        g_test_add_func("/fuse/mknod", test_mknod);
        g_test_add_func("/fuse/mkdir-rmdir", test_mkdir_rmdir);
        g_test_add_func("/fuse/unlink", test_unlink);
        g_test_add_func("/fuse/rename", test_rename);
        g_test_add_func("/fuse/link", test_link);
        g_test_add_func("/fuse/open-read-write", test_open_read_write);
        g_test_add_func("/fuse/create", test_create);
        g_test_add_func("/fuse/big-io", test_big_io);
        g_test_add_func("/fuse/readdir", test_readdir);
        g_test_add_func("/fuse/statfs-access", test_statfs_access);
        g_test_add_func("/fuse/xattr", test_xattr);
        g_test_add_func("/fuse/xattr-disabled", test_xattr_disabled);
        g_test_add_func("/fuse/posix-locks", test_posix_locks);
        g_test_add_func("/fuse/flock", test_flock);
        g_test_add_func("/fuse/setlkw", test_setlkw);
        g_test_add_func("/fuse/interrupt", test_interrupt);
        g_test_add_func("/fuse/fallocate-lseek", test_fallocate_lseek);
        g_test_add_func("/fuse/copy-file-range", test_copy_file_range);
        g_test_add_func("/fuse/syncfs-destroy", test_syncfs_destroy);
        g_test_add_func("/fuse/tmpfile", test_tmpfile);
        g_test_add_func("/fuse/unknown-opcode", test_unknown_opcode);
        return g_test_run();
}
