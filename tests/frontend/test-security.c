/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-security.c — guest users and guest root on the host (what a guest
 * user may do to another, what guest root may make), at the protocol level: no guest kernel checks anything here, so
 * whatever is refused is refused by sluice-fs itself.
 *
 *  - guest root makes no devices, set-ID files or trusted./security. xattrs
 *    unless an option allows it, in both modes;
 *  - a read-only share takes no lock that could block a host writer;
 *  - F_GETLK names the guest process holding the conflicting lock;
 *  - guest users are kept apart: another user's 0600 file, sticky
 *    directories, owner-only changes;
 *  - a worker run by root creates as the requesting guest user (owner,
 *    set-group-ID directories, --translate-uid).
 * Tests of the root mode skip unless the test runs as root. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <glib/gstdio.h>

#define OFFSET_MAX 0x7fffffffffffffffULL

static uint64_t lookup_ok(struct vmm *v, uint64_t parent, const char *name)
{
        struct fuse_entry_out e = { 0 };
        assert_ok(vmm_lookup(v, parent, name, &e));
        return e.nodeid;
}

/* lstat of a share path; mode 0 (and a failed test) when it does not exist. */
static struct stat host_stat(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        struct stat st = { 0 };
        if (lstat(path, &st) < 0) {
                g_test_message("FAIL: %s: %s", rel, g_strerror(errno));
                g_test_fail();
                st.st_mode = 0;
        }
        return st;
}

static gboolean host_exists(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        struct stat st;
        return lstat(path, &st) == 0;
}

static void host_chmod(Harness *h, const char *rel, mode_t mode)
{
        g_autofree char *path = harness_path(h, rel);
        g_assert_cmpint(chmod(path, mode), ==, 0);
}

/* ---- what guest root may make (both modes) ---- */

static void check_no_devices(Harness *h)
{
        struct vmm *v = h->vmm;
        assert_errno(vmm_mknod(v, VMM_ROOT, "null", S_IFCHR | 0666, makedev(1, 3), NULL), -EPERM);
        assert_errno(vmm_mknod(v, VMM_ROOT, "disk", S_IFBLK | 0600, makedev(8, 0), NULL), -EPERM);
        g_assert_false(host_exists(h, "null"));
        g_assert_false(host_exists(h, "disk"));
        /* FIFOs and sockets are no way out. */
        assert_ok(vmm_mknod(v, VMM_ROOT, "fifo", S_IFIFO | 0644, 0, NULL));
        assert_ok(vmm_mknod(v, VMM_ROOT, "sock", S_IFSOCK | 0644, 0, NULL));
        g_assert_true(S_ISFIFO(host_stat(h, "fifo").st_mode));
        g_assert_true(S_ISSOCK(host_stat(h, "sock").st_mode));
}

static void test_devices_refused(void)
{
        if (!harness_require_sluice("legacy virtiofsd lets the host decide"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);
        check_no_devices(h);
        harness_assert_alive(h);
}

static void check_setid_stripped(Harness *h)
{
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;

        assert_ok(vmm_create(v, VMM_ROOT, "suid", O_RDWR | O_CREAT, S_IFREG | 06755, &e, &fh));
        g_assert_cmphex(e.attr.mode & 07777, ==, 0755);      /* what the guest is told */
        g_assert_cmphex(host_stat(h, "suid").st_mode & 07777, ==, 0755);
        assert_ok(vmm_release(v, e.nodeid, fh));
        uint64_t node = e.nodeid;

        /* chmod u+s / g+s afterwards: stripped too. */
        struct fuse_setattr_in in = { .valid = FATTR_MODE, .mode = S_IFREG | 04711 };
        struct fuse_attr attr;
        assert_ok(vmm_setattr(v, node, &in, &attr));
        g_assert_cmphex(attr.mode & 07777, ==, 0711);
        g_assert_cmphex(host_stat(h, "suid").st_mode & 07777, ==, 0711);
        in.mode = S_IFREG | 02750;
        assert_ok(vmm_setattr(v, node, &in, &attr));
        g_assert_cmphex(host_stat(h, "suid").st_mode & 07777, ==, 0750);

        assert_ok(vmm_mknod(v, VMM_ROOT, "sfifo", S_IFIFO | 06644, 0, &e));
        g_assert_cmphex(host_stat(h, "sfifo").st_mode & 07777, ==, 0644);

        /* mkdir(2) takes neither bit on Linux; chmod g+s on a directory is kept
         * (group inheritance), S_ISUID is not. */
        assert_ok(vmm_mkdir(v, VMM_ROOT, "sgid-dir", 06775, &e));
        g_assert_cmphex(host_stat(h, "sgid-dir").st_mode & 07777, ==, 0775);
        in = (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = S_IFDIR | 02775 };
        assert_ok(vmm_setattr(v, e.nodeid, &in, &attr));
        g_assert_cmphex(attr.mode & 07777, ==, 02775);
        g_assert_cmphex(host_stat(h, "sgid-dir").st_mode & 07777, ==, 02775);
        in = (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = S_IFDIR | 04755 };
        assert_ok(vmm_setattr(v, e.nodeid, &in, &attr));
        g_assert_cmphex(host_stat(h, "sgid-dir").st_mode & 07777, ==, 0755);

        int r = vmm_tmpfile(v, VMM_ROOT, O_RDWR, S_IFREG | 04700, &e, &fh);
        if (r == 0) {
                g_assert_cmphex(e.attr.mode & 07777, ==, 0700);
                assert_ok(vmm_release(v, e.nodeid, fh));
        } else {
                assert_errno(r, -EOPNOTSUPP);   /* a host file system without O_TMPFILE */
        }
}

static void test_setid_stripped(void)
{
        if (!harness_require_sluice("legacy virtiofsd keeps set-ID bits"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);
        check_setid_stripped(h);
        harness_assert_alive(h);
}

static void test_setid_allowed(void)
{
        if (!harness_require_sluice("--allow-setuid is sluice-fs's"))
                return;
        static const char *const opts[] = { "--allow-setuid", NULL };
        g_autoptr(Harness) h = harness_new();
        harness_up(h, opts);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;

        assert_ok(vmm_create(v, VMM_ROOT, "suid", O_RDWR | O_CREAT, S_IFREG | 04755, &e, &fh));
        g_assert_cmphex(host_stat(h, "suid").st_mode & 07777, ==, 04755);
        assert_ok(vmm_release(v, e.nodeid, fh));
        /* The file's group is the worker's own: the host keeps S_ISGID too. */
        struct fuse_setattr_in in = { .valid = FATTR_MODE, .mode = S_IFREG | 02755 };
        assert_ok(vmm_setattr(v, e.nodeid, &in, NULL));
        g_assert_cmphex(host_stat(h, "suid").st_mode & 07777, ==, 02755);
}

static void check_xattrs_refused(Harness *h)
{
        struct vmm *v = h->vmm;
        harness_write(h, "file", "x");
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        /* A file capability: version 2, CAP_SETUID permitted and effective. */
        static const uint32_t cap[5] = { 0x02000001, 1u << 7, 0, 0, 0 };
        g_autofree char *path = harness_path(h, "file");
        char buf[64];

        assert_errno(vmm_setxattr(v, node, "security.capability", cap, sizeof(cap), 0), -EPERM);
        assert_errno(vmm_setxattr(v, node, "security.sluice-test", "1", 1, 0), -EPERM);
        assert_errno(vmm_setxattr(v, node, "trusted.sluice-test", "1", 1, 0), -EPERM);
        assert_errno(vmm_setxattr(v, node, "system.posix_acl_access", "\2\0\0\0", 4, 0), -EOPNOTSUPP);
        assert_errno(vmm_removexattr(v, node, "security.capability"), -EPERM);
        assert_errno(vmm_removexattr(v, node, "trusted.sluice-test"), -EPERM);
        g_assert_cmpint(lgetxattr(path, "security.capability", buf, sizeof(buf)), <, 0);
        g_assert_cmpint(lgetxattr(path, "trusted.sluice-test", buf, sizeof(buf)), <, 0);
        /* user.* is the guest's. */
        assert_ok(vmm_setxattr(v, node, "user.sluice-test", "1", 1, 0));
        g_assert_cmpint(lgetxattr(path, "user.sluice-test", buf, sizeof(buf)), ==, 1);
        assert_ok(vmm_removexattr(v, node, "user.sluice-test"));
}

static void test_xattrs_refused(void)
{
        if (!harness_require_sluice("legacy virtiofsd passes every xattr"))
                return;
        static const char *const opts[] = { "--xattr", NULL };
        g_autoptr(Harness) h = harness_new();
        harness_up(h, opts);
        check_xattrs_refused(h);
        harness_assert_alive(h);
}


/* ---- read-only: nothing that blocks a host writer ---- */

static void test_readonly_locks(void)
{
        if (!harness_require_sluice("legacy virtiofsd has no --readonly"))
                return;
        static const char *const opts[] = { "--readonly", NULL };
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "read me");
        harness_up(h, opts);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file"), fh;
        assert_ok(vmm_open(v, node, O_RDONLY, &fh));
        struct fuse_file_lock wr = { .start = 0, .end = OFFSET_MAX, .type = F_WRLCK, .pid = 77 };
        struct fuse_file_lock rd = { .start = 0, .end = OFFSET_MAX, .type = F_RDLCK, .pid = 77 };
        struct fuse_file_lock un = { .start = 0, .end = OFFSET_MAX, .type = F_UNLCK, .pid = 77 };

        assert_errno(vmm_setlk(v, node, fh, 1, &wr, false, false), -EBADF);
        assert_errno(vmm_setlk(v, node, fh, 1, &wr, true, false), -EBADF);
        assert_errno(vmm_setlk(v, node, fh, 1, &wr, false, true), -EBADF);   /* flock(LOCK_EX) */
        assert_errno(vmm_setlk(v, node, fh, 1, &wr, true, true), -EBADF);

        /* A host writer takes every lock it wants. */
        g_autofree char *path = harness_path(h, "file");
        int fd = open(path, O_RDWR | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(flock(fd, LOCK_EX | LOCK_NB), ==, 0);
        g_assert_cmpint(flock(fd, LOCK_UN), ==, 0);
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        g_assert_cmpint(fcntl(fd, F_OFD_SETLK, &fl), ==, 0);
        fl.l_type = F_UNLCK;
        g_assert_cmpint(fcntl(fd, F_OFD_SETLK, &fl), ==, 0);
        close(fd);

        /* Shared locks still work. */
        assert_ok(vmm_setlk(v, node, fh, 1, &rd, false, false));
        assert_ok(vmm_setlk(v, node, fh, 1, &un, false, false));
        assert_ok(vmm_setlk(v, node, fh, 1, &rd, false, true));
        assert_ok(vmm_setlk(v, node, fh, 1, &un, false, true));
        assert_ok(vmm_release(v, node, fh));
        harness_assert_alive(h);
}

/* ---- F_GETLK: the holder's pid ---- */

static void test_getlk_pid(void)
{
        if (!harness_require_sluice("legacy virtiofsd reports no pid"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "locked content");
        harness_up(h, NULL);
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, "file"), fh1, fh2, fh3;
        assert_ok(vmm_open(v, node, O_RDWR, &fh1));
        assert_ok(vmm_open(v, node, O_RDWR, &fh2));
        assert_ok(vmm_open(v, node, O_RDWR, &fh3));
        struct fuse_file_lock got;

        struct fuse_file_lock a = { .start = 0, .end = 99, .type = F_WRLCK, .pid = 4242 };
        struct fuse_file_lock b = { .start = 200, .end = 299, .type = F_RDLCK, .pid = 5151 };
        assert_ok(vmm_setlk(v, node, fh1, 1, &a, false, false));
        assert_ok(vmm_setlk(v, node, fh3, 3, &b, false, false));

        struct fuse_file_lock probe = { .start = 50, .end = 59, .type = F_WRLCK, .pid = 600 };
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_WRLCK);
        g_assert_cmpuint(got.pid, ==, 4242);
        g_assert_cmpuint(got.start, ==, 0);
        g_assert_cmpuint(got.end, ==, 99);
        probe.start = 250, probe.end = 250;
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_RDLCK);
        g_assert_cmpuint(got.pid, ==, 5151);

        /* Half of a's range unlocked: the rest is still 4242's. */
        struct fuse_file_lock half = { .start = 0, .end = 49, .type = F_UNLCK, .pid = 4242 };
        assert_ok(vmm_setlk(v, node, fh1, 1, &half, false, false));
        probe.start = 10, probe.end = 10;
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_UNLCK);
        probe.start = 60, probe.end = 60;
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.pid, ==, 4242);

        /* A lock of a host process: no guest pid to name. */
        g_autofree char *path = harness_path(h, "file");
        int fd = open(path, O_RDWR | O_CLOEXEC);
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1000, .l_len = 100 };
        g_assert_cmpint(fcntl(fd, F_OFD_SETLK, &fl), ==, 0);
        probe.start = 1050, probe.end = 1050;
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_WRLCK);
        g_assert_cmpuint(got.pid, ==, 0);
        close(fd);

        /* The holder closed its file (FLUSH): nothing left to report. */
        struct fuse_flush_in flush = { .fh = fh1, .lock_owner = 1 };
        assert_ok(vmm_call(v, FUSE_FLUSH, node, &flush, sizeof(flush), NULL, 0, NULL, 0, NULL, 0, NULL));
        probe.start = 60, probe.end = 60;
        assert_ok(vmm_getlk(v, node, fh2, 2, &probe, &got));
        g_assert_cmpuint(got.type, ==, F_UNLCK);
        assert_ok(vmm_release(v, node, fh1));
        assert_ok(vmm_release(v, node, fh2));
        assert_ok(vmm_release(v, node, fh3));
}

/* ---- guest users kept apart ---- */

/* A (uid a) made `file` 0600 in sticky directory `dir`; B (uid b) may not
 * read, write, truncate, chmod, remove or rename it; A may. */
static void check_users_apart(Harness *h, uint64_t dir, uint32_t a, uint32_t b)
{
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;

        vmm_set_creds(v, a, a, 300);
        assert_ok(vmm_create(v, dir, "private", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0600, &e, &fh));
        assert_ok(vmm_write(v, e.nodeid, fh, 0, "A's", 3, NULL));
        assert_ok(vmm_release(v, e.nodeid, fh));
        uint64_t node = e.nodeid;

        vmm_set_creds(v, b, b, 301);
        assert_errno(vmm_open(v, node, O_RDONLY, NULL), -EACCES);
        assert_errno(vmm_open(v, node, O_WRONLY, NULL), -EACCES);
        assert_errno(vmm_open(v, node, O_RDWR | O_TRUNC, NULL), -EACCES);
        struct fuse_setattr_in in = { .valid = FATTR_SIZE, .size = 0 };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EACCES);
        in = (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = S_IFREG | 0666 };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EPERM);
        in = (struct fuse_setattr_in){ .valid = FATTR_MTIME, .mtime = 1 };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EPERM);
        in = (struct fuse_setattr_in){ .valid = FATTR_UID, .uid = b };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EPERM);
        assert_errno(vmm_unlink(v, dir, "private"), -EPERM);
        assert_errno(vmm_rename(v, dir, "private", dir, "mine-now", 0), -EPERM);
        assert_errno(vmm_setxattr(v, node, "user.b", "1", 1, 0), -EACCES);

        vmm_set_creds(v, a, a, 302);
        assert_ok(vmm_open(v, node, O_RDWR, &fh));
        assert_ok(vmm_release(v, node, fh));
        in = (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = S_IFREG | 0640 };
        assert_ok(vmm_setattr(v, node, &in, NULL));
        in = (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = 1 };
        assert_ok(vmm_setattr(v, node, &in, NULL));
        assert_ok(vmm_rename(v, dir, "private", dir, "renamed", 0));
        assert_ok(vmm_unlink(v, dir, "renamed"));
        vmm_clear_creds(v);
}

static void test_users_apart_desktop(void)
{
        if (!harness_require_sluice("legacy virtiofsd checks as root"))
                return;
        if (harness_daemon_uid() == 0) {
                g_test_skip("the worker would run as root: set SLUICE_TEST_USER");
                return;
        }
        /* The worker's files appear owned by guest user 1000; 1001 is someone else. */
        g_autofree char *uid_map = g_strdup_printf("--translate-uid=1000:%u", (unsigned)harness_daemon_uid());
        g_autofree char *gid_map = g_strdup_printf("--translate-gid=1000:%u", (unsigned)harness_daemon_gid());
        const char *const opts[] = { "--xattr", uid_map, gid_map, NULL };
        g_autoptr(Harness) h = harness_new();
        harness_mkdir(h, "tmp");
        host_chmod(h, "tmp", 01777);
        harness_up(h, opts);
        uint64_t dir = lookup_ok(h->vmm, VMM_ROOT, "tmp");

        /* Guest user 1001's new file belongs to the worker's user, shown as 1000. */
        struct fuse_entry_out e;
        vmm_set_creds(h->vmm, 1001, 1001, 0);
        assert_ok(vmm_mkdir(h->vmm, dir, "b-made", 0700, &e));
        g_assert_cmpuint(e.attr.uid, ==, 1000);
        g_assert_cmpuint(host_stat(h, "tmp/b-made").st_uid, ==, harness_daemon_uid());
        vmm_clear_creds(h->vmm);

        check_users_apart(h, dir, 1000, 1001);

        /* A writer who is not the owner may drop the set-ID bits (what the guest
         * kernel does before its write), and change nothing else. */
        harness_write(h, "tmp/shared-suid", "x");
        host_chmod(h, "tmp/shared-suid", 06666);
        uint64_t node = lookup_ok(h->vmm, dir, "shared-suid");
        vmm_set_creds(h->vmm, 1001, 1001, 0);
        struct fuse_setattr_in in = { .valid = FATTR_MODE, .mode = S_IFREG | 0777 };
        assert_errno(vmm_setattr(h->vmm, node, &in, NULL), -EPERM);
        in.mode = S_IFREG | 04666;   /* S_ISGID dropped, S_ISUID kept */
        assert_ok(vmm_setattr(h->vmm, node, &in, NULL));
        in.mode = S_IFREG | 0666;
        assert_ok(vmm_setattr(h->vmm, node, &in, NULL));
        g_assert_cmphex(host_stat(h, "tmp/shared-suid").st_mode & 07777, ==, 0666);
        vmm_clear_creds(h->vmm);
        harness_assert_alive(h);
}

/* ---- a worker run by root ---- */

static void test_root_ownership(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        static const char *const opts[] = { "--xattr", "--translate-uid=1000:2000",
                                            "--translate-gid=1000:2000", NULL };
        g_autoptr(Harness) h = harness_new();
        host_chmod(h, ".", 0777);
        harness_mkdir(h, "tmp");
        host_chmod(h, "tmp", 01777);
        harness_mkdir(h, "sgid");
        {
                g_autofree char *p = harness_path(h, "sgid");
                g_assert_cmpint(chown(p, 0, 3000), ==, 0);
                g_assert_cmpint(chmod(p, 02777), ==, 0);
        }
        harness_up(h, opts);
        harness_daemon_as_root(FALSE);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;

        vmm_set_creds(v, 1234, 1234, 0);
        assert_ok(vmm_create(v, VMM_ROOT, "file", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_release(v, e.nodeid, fh));
        g_assert_cmpuint(e.attr.uid, ==, 1234);
        assert_ok(vmm_mkdir(v, VMM_ROOT, "dir", 0755, NULL));
        assert_ok(vmm_symlink(v, VMM_ROOT, "link", "file", NULL));
        assert_ok(vmm_mknod(v, VMM_ROOT, "fifo", S_IFIFO | 0600, 0, NULL));
        static const char *const made[] = { "file", "dir", "link", "fifo" };
        for (unsigned i = 0; i < G_N_ELEMENTS(made); i++) {
                struct stat st = host_stat(h, made[i]);
                g_assert_cmpuint(st.st_uid, ==, 1234);
                g_assert_cmpuint(st.st_gid, ==, 1234);
        }
        /* --translate-uid: guest user 1000 is host user 2000, and is shown as 1000. */
        vmm_set_creds(v, 1000, 1000, 0);
        assert_ok(vmm_mkdir(v, VMM_ROOT, "mapped", 0755, &e));
        g_assert_cmpuint(host_stat(h, "mapped").st_uid, ==, 2000);
        g_assert_cmpuint(host_stat(h, "mapped").st_gid, ==, 2000);
        g_assert_cmpuint(e.attr.uid, ==, 1000);

        /* A set-group-ID directory gives its group, and its bit to subdirectories. */
        uint64_t sgid = lookup_ok(v, VMM_ROOT, "sgid");
        vmm_set_creds(v, 1234, 1234, 0);
        assert_ok(vmm_create(v, sgid, "f", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_release(v, e.nodeid, fh));
        assert_ok(vmm_mkdir(v, sgid, "sub", 0755, NULL));
        g_assert_cmpuint(host_stat(h, "sgid/f").st_gid, ==, 3000);
        g_assert_cmpuint(host_stat(h, "sgid/f").st_uid, ==, 1234);
        g_assert_cmpuint(host_stat(h, "sgid/sub").st_gid, ==, 3000);
        g_assert_true(host_stat(h, "sgid/sub").st_mode & S_ISGID);

        /* The host checks the creator too: 1234 may not create in a directory of 1235's. */
        vmm_set_creds(v, 1235, 1235, 0);
        assert_ok(vmm_mkdir(v, VMM_ROOT, "b-only", 0755, &e));
        vmm_set_creds(v, 1234, 1234, 0);
        assert_errno(vmm_mkdir(v, e.nodeid, "intruder", 0755, NULL), -EACCES);
        g_assert_false(host_exists(h, "b-only/intruder"));

        check_users_apart(h, lookup_ok(v, VMM_ROOT, "tmp"), 1234, 1235);
        harness_assert_alive(h);
}

static void test_root_guest_root(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        static const char *const opts[] = { "--xattr", NULL };
        g_autoptr(Harness) h = harness_new();
        harness_up(h, opts);
        harness_daemon_as_root(FALSE);
        vmm_set_creds(h->vmm, 0, 0, 0);
        check_no_devices(h);
        check_setid_stripped(h);
        check_xattrs_refused(h);
        /* What guest root made is root's on the host, without the set-ID bits. */
        struct stat st = host_stat(h, "suid");
        g_assert_cmpuint(st.st_uid, ==, 0);
        g_assert_cmphex(st.st_mode & (S_ISUID | S_ISGID), ==, 0);
        harness_assert_alive(h);
}

static void test_root_allowed(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        static const char *const opts[] = { "--xattr", "--allow-devices", "--allow-setuid",
                                            "--xattr-namespaces=trusted", NULL };
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        harness_up(h, opts);
        harness_daemon_as_root(FALSE);
        struct vmm *v = h->vmm;
        vmm_set_creds(v, 0, 0, 0);
        assert_ok(vmm_mknod(v, VMM_ROOT, "null", S_IFCHR | 0666, makedev(1, 3), NULL));
        struct stat st = host_stat(h, "null");
        g_assert_true(S_ISCHR(st.st_mode));
        g_assert_cmpuint(st.st_rdev, ==, makedev(1, 3));
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_create(v, VMM_ROOT, "suid", O_RDWR | O_CREAT, S_IFREG | 04755, &e, &fh));
        assert_ok(vmm_release(v, e.nodeid, fh));
        g_assert_cmphex(host_stat(h, "suid").st_mode & 07777, ==, 04755);
        uint64_t node = lookup_ok(v, VMM_ROOT, "file");
        g_autofree char *path = harness_path(h, "file");
        char buf[8];
        assert_ok(vmm_setxattr(v, node, "trusted.sluice-test", "1", 1, 0));
        g_assert_cmpint(lgetxattr(path, "trusted.sluice-test", buf, sizeof(buf)), ==, 1);
        assert_ok(vmm_removexattr(v, node, "trusted.sluice-test"));
        /* Not listed: still refused. */
        assert_errno(vmm_setxattr(v, node, "security.capability", "1234", 4, 0), -EPERM);
        assert_errno(vmm_setxattr(v, node, "security.sluice-test", "1", 1, 0), -EPERM);
}

/* ---- FUSE_CREATE_SUPP_GROUP (7.39) ---- */

#define CREATE_SUPP_GROUP_FLAGS2 (1u << 2)   /* FUSE_CREATE_SUPP_GROUP >> 32 */

/* Connects and sends a 7.39-style INIT that also offers FUSE_CREATE_SUPP_GROUP. */
static struct vmm *connect_offering_supp_group(Harness *h, struct fuse_init_out *ret)
{
        struct vmm *v = NULL;
        g_assert_cmpint(vmm_connect(h->socket, NULL, &v), ==, 0);
        struct fuse_init_in in = {
                .major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
                .max_readahead = 128 * 1024,
                .flags = FUSE_ASYNC_READ | FUSE_POSIX_LOCKS | FUSE_DONT_MASK | FUSE_INIT_EXT,
                .flags2 = CREATE_SUPP_GROUP_FLAGS2,
        };
        *ret = (struct fuse_init_out){ 0 };
        assert_ok(vmm_call(v, FUSE_INIT, 0, &in, sizeof(in), NULL, 0, NULL, 0, ret, sizeof(*ret), NULL));
        vmm_set_init_flags(v, ret->flags);
        h->vmm = v;
        return v;
}

/* MKDIR `name` in `dir` carrying `ext` (ext_len bytes, a multiple of 8) as its extension area. */
static int mkdir_with_ext(struct vmm *v, uint64_t dir, const char *name, const void *ext, size_t ext_len)
{
        struct fuse_mkdir_in in = { .mode = 0755 };
        struct fuse_entry_out e;
        struct vmm_op op = {
                .opcode = FUSE_MKDIR, .nodeid = dir, .out = &e, .out_size = sizeof(e),
                .total_extlen = (uint16_t)(ext_len / 8), .arg_cnt = 3,
                .arg = { { &in, sizeof(in) }, { (void *)name, strlen(name) + 1 }, { (void *)ext, ext_len } },
        };
        int r = vmm_op_run(v, &op);
        return r < 0 ? r : op.error;
}

static void test_supp_group_desktop(void)
{
        if (!harness_require_sluice("legacy virtiofsd speaks FUSE 7.36"))
                return;
        if (harness_daemon_uid() == 0) {
                g_test_skip("the worker would run as root: set SLUICE_TEST_USER");
                return;
        }
        g_autoptr(Harness) h = harness_new();
        harness_start(h, NULL);
        struct fuse_init_out out;
        connect_offering_supp_group(h, &out);
        /* The desktop user's worker switches no credentials: nothing to take the group. */
        g_assert_cmphex(out.flags2 & CREATE_SUPP_GROUP_FLAGS2, ==, 0);
}

static void test_root_supp_group(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_mkdir(h, "grp");
        {
                g_autofree char *p = harness_path(h, "grp");
                g_assert_cmpint(chown(p, 0, 777), ==, 0);
                g_assert_cmpint(chmod(p, 0770), ==, 0);
        }
        harness_start(h, NULL);
        harness_daemon_as_root(FALSE);
        struct fuse_init_out out;
        struct vmm *v = connect_offering_supp_group(h, &out);
        g_assert_cmphex(out.flags & FUSE_INIT_EXT, ==, FUSE_INIT_EXT);
        g_assert_cmphex(out.flags2 & CREATE_SUPP_GROUP_FLAGS2, ==, CREATE_SUPP_GROUP_FLAGS2);
        uint64_t grp = lookup_ok(v, VMM_ROOT, "grp");

        /* 1234 may write grp only as a member of group 777, which the guest says it is. */
        vmm_set_creds(v, 1234, 1234, 0);
        assert_errno(vmm_mkdir(v, grp, "without", 0755, NULL), -EACCES);
        struct { struct fuse_ext_header h; uint32_t nr, groups[1]; } ext = {
                .h = { .size = sizeof(ext), .type = 32 /* FUSE_EXT_GROUPS */ }, .nr = 1, .groups = { 777 },
        };
        assert_ok(mkdir_with_ext(v, grp, "with", &ext, sizeof(ext)));
        struct stat st = host_stat(h, "grp/with");
        g_assert_cmpuint(st.st_uid, ==, 1234);
        g_assert_cmpuint(st.st_gid, ==, 1234);
        /* Not a member of another group because the guest says so for this one. */
        ext.groups[0] = 778;
        assert_errno(mkdir_with_ext(v, grp, "other-group", &ext, sizeof(ext)), -EACCES);

        /* Malformed areas: refused, nothing made, the worker fine. */
        ext.groups[0] = 777;
        ext.h.size = 24;                 /* longer than the area */
        assert_errno(mkdir_with_ext(v, grp, "bad1", &ext, sizeof(ext)), -EINVAL);
        ext.h.size = 4;                  /* shorter than its header */
        assert_errno(mkdir_with_ext(v, grp, "bad2", &ext, sizeof(ext)), -EINVAL);
        ext.h.size = sizeof(ext);
        ext.nr = 1000;                   /* more groups than it holds */
        assert_errno(mkdir_with_ext(v, grp, "bad3", &ext, sizeof(ext)), -EINVAL);
        g_assert_false(host_exists(h, "grp/bad1") || host_exists(h, "grp/bad2") || host_exists(h, "grp/bad3"));
        vmm_clear_creds(v);
        harness_assert_alive(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/security/devices-refused", test_devices_refused);
        g_test_add_func("/security/setid-stripped", test_setid_stripped);
        g_test_add_func("/security/setid-allowed", test_setid_allowed);
        g_test_add_func("/security/xattrs-refused", test_xattrs_refused);
        g_test_add_func("/security/readonly-locks", test_readonly_locks);
        g_test_add_func("/security/getlk-pid", test_getlk_pid);
        g_test_add_func("/security/users-apart-desktop", test_users_apart_desktop);
        g_test_add_func("/security/root/ownership", test_root_ownership);
        g_test_add_func("/security/root/guest-root", test_root_guest_root);
        g_test_add_func("/security/root/allowed", test_root_allowed);
        g_test_add_func("/security/supp-group-desktop", test_supp_group_desktop);
        g_test_add_func("/security/root/supp-group", test_root_supp_group);
        return g_test_run();
}
