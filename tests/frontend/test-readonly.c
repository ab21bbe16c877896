/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-readonly.c — sluice-fs --readonly: every mutating request fails with
 * EROFS whatever the guest asks, reading still works, and the host folder is
 * byte for byte what it was. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const ro_opts[] = { "--readonly", "--xattr", NULL };

static void test_readonly(void)
{
        if (!harness_require_sluice("legacy virtiofsd has no --readonly"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "read me");
        harness_write(h, "other", "other");
        harness_mkdir(h, "dir");
        harness_write(h, "dir/inner", "x");
        harness_symlink(h, "file", "link");
        g_autofree char *before = harness_snapshot(h->share);
        harness_up(h, ro_opts);
        struct vmm *v = h->vmm;

        /* Reading works. */
        struct fuse_entry_out e, d;
        assert_ok(vmm_lookup(v, VMM_ROOT, "file", &e));
        assert_ok(vmm_lookup(v, VMM_ROOT, "dir", &d));
        uint64_t node = e.nodeid, dir = d.nodeid, fh;
        assert_ok(vmm_open(v, node, O_RDONLY, &fh));
        char buf[64];
        size_t got = 0;
        assert_ok(vmm_read(v, node, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "read me", 7);
        uint64_t dfh;
        assert_ok(vmm_opendir(v, VMM_ROOT, &dfh));
        {
                char dbuf[4096];
                assert_ok(vmm_readdir(v, VMM_ROOT, dfh, 0, true, dbuf, sizeof(dbuf), &got));
        }
        assert_ok(vmm_releasedir(v, VMM_ROOT, dfh));
        struct fuse_kstatfs st;
        assert_ok(vmm_statfs(v, VMM_ROOT, &st));
        assert_ok(vmm_access(v, node, R_OK));

        /* Every mutation: EROFS. */
        assert_errno(vmm_create(v, VMM_ROOT, "new", O_RDWR | O_CREAT, S_IFREG | 0644, NULL, NULL), -EROFS);
        assert_errno(vmm_create(v, VMM_ROOT, "file", O_RDWR | O_CREAT | O_TRUNC, S_IFREG | 0644, NULL, NULL), -EROFS);
        assert_errno(vmm_mkdir(v, VMM_ROOT, "newdir", 0755, NULL), -EROFS);
        assert_errno(vmm_mknod(v, VMM_ROOT, "fifo", S_IFIFO | 0644, 0, NULL), -EROFS);
        assert_errno(vmm_symlink(v, VMM_ROOT, "sl", "file", NULL), -EROFS);
        assert_errno(vmm_link(v, node, VMM_ROOT, "hard", NULL), -EROFS);
        assert_errno(vmm_unlink(v, VMM_ROOT, "file"), -EROFS);
        assert_errno(vmm_unlink(v, VMM_ROOT, "link"), -EROFS);
        assert_errno(vmm_rmdir(v, dir, "inner"), -EROFS);
        assert_errno(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, "renamed", 0), -EROFS);
        assert_errno(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, "other", RENAME_EXCHANGE), -EROFS);
        assert_errno(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, "n2", RENAME_NOREPLACE), -EROFS);
        struct fuse_setattr_in in = { .valid = FATTR_MODE, .mode = S_IFREG | 0777 };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EROFS);
        in = (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = 0 };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EROFS);
        in = (struct fuse_setattr_in){ .valid = FATTR_SIZE | FATTR_FH, .size = 0, .fh = fh };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EROFS);
        in = (struct fuse_setattr_in){ .valid = FATTR_MTIME | FATTR_MTIME_NOW };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EROFS);
        in = (struct fuse_setattr_in){ .valid = FATTR_UID | FATTR_GID, .uid = harness_daemon_uid(),
                                       .gid = harness_daemon_gid() };
        assert_errno(vmm_setattr(v, node, &in, NULL), -EROFS);
        assert_errno(vmm_open(v, node, O_WRONLY, NULL), -EROFS);
        assert_errno(vmm_open(v, node, O_RDWR, NULL), -EROFS);
        assert_errno(vmm_open(v, node, O_RDONLY | O_TRUNC, NULL), -EROFS);
        assert_errno(vmm_access(v, node, W_OK), -EROFS);
        /* A write through a read-only handle: refused one way or another. */
        int r = vmm_write(v, node, fh, 0, "x", 1, NULL);
        g_assert_true(r == -EROFS || r == -EBADF);
        r = vmm_fallocate(v, node, fh, 0, 0, 1 << 20);
        g_assert_true(r == -EROFS || r == -EBADF);
        assert_errno(vmm_setxattr(v, node, "user.x", "1", 1, 0), -EROFS);
        assert_errno(vmm_removexattr(v, node, "user.x"), -EROFS);
        assert_errno(vmm_tmpfile(v, VMM_ROOT, O_RDWR, S_IFREG | 0600, NULL, NULL), -EROFS);
        uint64_t other = 0, ofh = 0;
        struct fuse_entry_out oe;
        assert_ok(vmm_lookup(v, VMM_ROOT, "other", &oe));
        other = oe.nodeid;
        assert_ok(vmm_open(v, other, O_RDONLY, &ofh));
        r = vmm_copy_file_range(v, node, fh, 0, other, ofh, 0, 4, NULL);
        g_assert_true(r == -EROFS || r == -EBADF);
        assert_ok(vmm_release(v, node, fh));
        assert_ok(vmm_release(v, other, ofh));

        g_autofree char *after = harness_snapshot(h->share);
        g_assert_cmpstr(after, ==, before);
        harness_assert_alive(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/readonly/every-mutation", test_readonly);
        return g_test_run();
}
