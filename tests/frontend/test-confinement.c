/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-confinement.c — nothing the guest sends reaches outside the shared
 * directory: "..", names with '/', symlinks inside the share
 * pointing out (never followed on the host), rename/link escapes, /proc magic
 * links, forged node ids.  After each attack the canary outside the share and
 * /etc/passwd are unchanged and nothing appeared outside. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *const xattr_opts[] = { "--xattr", NULL };
/* Without seccomp and Landlock the daemon's own checks are all there is,
 * and metadata changes take the path-based calls (pt-entry.c). */
static const char *const unsandboxed_opts[] = { "--xattr", "--sandbox=none", NULL };

static char *passwd_sum(void)
{
        g_autofree char *data = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents("/etc/passwd", &data, &len, NULL));
        struct stat st;
        g_assert_cmpint(stat("/etc/passwd", &st), ==, 0);
        g_autofree char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (guchar *)data, len);
        return g_strdup_printf("%s %o %u", sum, (unsigned)st.st_mode, (unsigned)st.st_uid);
}

typedef struct {
        Harness *h;
        char *passwd;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data)
{
        f->passwd = passwd_sum();
        f->h = harness_new();
        Harness *h = f->h;
        harness_write(h, "file", "inside");
        harness_mkdir(h, "dir");
        g_autofree char *canary = g_build_filename(h->outside, "canary", NULL);
        harness_symlink(h, "/etc", "etc");
        harness_symlink(h, "/etc/passwd", "passwd");
        harness_symlink(h, canary, "esc");                 /* absolute, to a file the daemon's user owns */
        harness_symlink(h, "../outside/canary", "relesc"); /* relative */
        harness_symlink(h, h->outside, "outdir");
        harness_symlink(h, "/proc/self/root", "procroot");
        harness_symlink(h, "/proc/self/cwd", "proccwd");
        harness_symlink(h, "/proc/self/fd/0", "procfd");
        harness_up(h, data ? data : xattr_opts);
}

/* The same share served by a root worker, which is sealed in its mount
 * namespace and there changes metadata by path (mount-namespace.h). */
static void fixture_setup_root(Fixture *f, gconstpointer data)
{
        if (!harness_daemon_as_root(TRUE)) {
                f->h = NULL;
                f->passwd = NULL;
                return;
        }
        fixture_setup(f, data);
        harness_daemon_as_root(FALSE);
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
        if (!f->h)
                return;   /* skipped */
        harness_assert_alive(f->h);
        harness_assert_outside_untouched(f->h);
        g_autofree char *now = passwd_sum();
        g_assert_cmpstr(now, ==, f->passwd);
        harness_free(f->h);
        g_free(f->passwd);
}

static uint64_t lookup_ok(struct vmm *v, uint64_t parent, const char *name)
{
        struct fuse_entry_out e = { 0 };
        assert_ok(vmm_lookup(v, parent, name, &e));
        return e.nodeid;
}

static void test_dotdot(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        struct stat root;
        g_assert_cmpint(stat(f->h->share, &root), ==, 0);
        struct fuse_entry_out e;
        /* ".." at the root is the root itself or an error, never its parent. */
        int r = vmm_lookup(v, VMM_ROOT, "..", &e);
        if (r == 0)
                g_assert_cmpuint(e.attr.ino, ==, root.st_ino);
        uint64_t dir = lookup_ok(v, VMM_ROOT, "dir");
        r = vmm_lookup(v, dir, "..", &e);
        if (r == 0)
                g_assert_cmpuint(e.attr.ino, ==, root.st_ino);
        /* Through whatever ".." gave, still nothing outside. */
        if (r == 0) {
                g_assert_cmpint(vmm_lookup(v, e.nodeid, "outside", NULL), <, 0);
                g_assert_cmpint(vmm_mkdir(v, e.nodeid, "..", 0755, NULL), <, 0);
        }
        g_assert_cmpint(vmm_lookup(v, VMM_ROOT, "../outside", NULL), <, 0);
        g_assert_cmpint(vmm_lookup(v, VMM_ROOT, "../outside/canary", NULL), <, 0);
        g_assert_cmpint(vmm_mkdir(v, VMM_ROOT, "../outside/new", 0755, NULL), <, 0);
        g_assert_cmpint(vmm_create(v, VMM_ROOT, "../outside/new", O_RDWR | O_CREAT,
                                   S_IFREG | 0644, NULL, NULL), <, 0);
        g_assert_cmpint(vmm_symlink(v, VMM_ROOT, "../escape", "x", NULL), <, 0);
        g_assert_cmpint(vmm_mknod(v, VMM_ROOT, "../escape", S_IFIFO | 0644, 0, NULL), <, 0);
        g_assert_cmpint(vmm_unlink(v, VMM_ROOT, "../outside/canary"), <, 0);
        g_assert_cmpint(vmm_rmdir(v, VMM_ROOT, "../outside"), <, 0);
        g_assert_cmpint(vmm_rmdir(v, VMM_ROOT, ".."), <, 0);
}

static void test_slash_names(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        g_autofree char *abs_canary = g_build_filename(f->h->outside, "canary", NULL);
        const char *names[] = { "/etc/passwd", abs_canary, "dir/../../outside/canary", "/", "a/b" };
        for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
                g_test_message("name %s", names[i]);
                g_assert_cmpint(vmm_lookup(v, VMM_ROOT, names[i], NULL), <, 0);
                g_assert_cmpint(vmm_create(v, VMM_ROOT, names[i], O_RDWR | O_CREAT | O_TRUNC,
                                           S_IFREG | 0644, NULL, NULL), <, 0);
                g_assert_cmpint(vmm_unlink(v, VMM_ROOT, names[i]), <, 0);
        }
}

/* A symlink inside the share to /etc: READLINK tells the target, nothing
 * follows it. */
static void test_symlink_to_etc(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        struct fuse_entry_out e;
        assert_ok(vmm_lookup(v, VMM_ROOT, "etc", &e));
        g_assert_true(S_ISLNK(e.attr.mode));
        char buf[256];
        assert_ok(vmm_readlink(v, e.nodeid, buf, sizeof(buf)));
        g_assert_cmpstr(buf, ==, "/etc");
        g_assert_cmpint(vmm_lookup(v, e.nodeid, "passwd", NULL), <, 0);
        g_assert_cmpint(vmm_opendir(v, e.nodeid, NULL), <, 0);

        assert_ok(vmm_lookup(v, VMM_ROOT, "passwd", &e));
        g_assert_true(S_ISLNK(e.attr.mode));
        g_assert_cmpuint(e.attr.size, ==, strlen("/etc/passwd"));
        struct fuse_attr a;
        assert_ok(vmm_getattr(v, e.nodeid, &a));
        g_assert_true(S_ISLNK(a.mode));
        assert_ok(vmm_readlink(v, e.nodeid, buf, sizeof(buf)));
        g_assert_cmpstr(buf, ==, "/etc/passwd");
        uint64_t fh = 0;
        int r = vmm_open(v, e.nodeid, O_RDONLY, &fh);
        if (r == 0) {
                /* Whatever was opened, it must not be /etc/passwd's content. */
                size_t got = 0;
                (void)vmm_read(v, e.nodeid, fh, 0, buf, sizeof(buf), &got);
                g_assert_false(got >= 5 && memcmp(buf, "root:", 5) == 0);
                g_test_message("FAIL: OPEN of a symlink succeeded");
                g_test_fail();
        }
}

/* Operations on a symlink to a file outside must act on the link or fail. */
static void test_symlink_out_mutations(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        const char *links[] = { "esc", "relesc", "procfd" };
        for (unsigned i = 0; i < G_N_ELEMENTS(links); i++) {
                g_test_message("through %s", links[i]);
                uint64_t node = lookup_ok(v, VMM_ROOT, links[i]);
                struct fuse_setattr_in in = { .valid = FATTR_SIZE, .size = 0 };
                (void)vmm_setattr(v, node, &in, NULL);
                in = (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = S_IFREG | 0777 };
                (void)vmm_setattr(v, node, &in, NULL);
                in = (struct fuse_setattr_in){ .valid = FATTR_MTIME, .mtime = 12345 };
                (void)vmm_setattr(v, node, &in, NULL);
                uint64_t fh;
                if (vmm_open(v, node, O_RDWR | O_TRUNC, &fh) == 0) {
                        g_test_message("FAIL: OPEN of symlink %s for writing succeeded", links[i]);
                        g_test_fail();
                        (void)vmm_write(v, node, fh, 0, "pwned", 5, NULL);
                }
                /* CREATE without O_EXCL on the link's name must not follow it. */
                (void)vmm_create(v, VMM_ROOT, links[i], O_RDWR | O_CREAT | O_TRUNC, S_IFREG | 0644,
                                 NULL, &fh);
                (void)vmm_setxattr(v, node, "user.pwned", "1", 1, 0);
                harness_assert_outside_untouched(f->h);
        }
}

static void test_symlink_to_outside_dir(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        const char *links[] = { "outdir", "procroot", "proccwd" };
        for (unsigned i = 0; i < G_N_ELEMENTS(links); i++) {
                g_test_message("through %s", links[i]);
                uint64_t node = lookup_ok(v, VMM_ROOT, links[i]);
                g_assert_cmpint(vmm_lookup(v, node, "canary", NULL), <, 0);
                g_assert_cmpint(vmm_lookup(v, node, "etc", NULL), <, 0);
                g_assert_cmpint(vmm_mkdir(v, node, "new", 0755, NULL), <, 0);
                g_assert_cmpint(vmm_create(v, node, "new", O_RDWR | O_CREAT, S_IFREG | 0644, NULL, NULL), <, 0);
                g_assert_cmpint(vmm_symlink(v, node, "new", "x", NULL), <, 0);
                g_assert_cmpint(vmm_unlink(v, node, "canary"), <, 0);
                g_assert_cmpint(vmm_opendir(v, node, NULL), <, 0);
                g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", node, "moved", 0), <, 0);
                g_assert_cmpint(vmm_rename(v, node, "canary", VMM_ROOT, "stolen", 0), <, 0);
                g_assert_cmpint(vmm_link(v, lookup_ok(v, VMM_ROOT, "file"), node, "linked", NULL), <, 0);
                g_assert_cmpint(vmm_tmpfile(v, node, O_RDWR, S_IFREG | 0600, NULL, NULL), <, 0);
                harness_assert_outside_untouched(f->h);
        }
        /* The share's own content is where it was. */
        g_autofree char *content = harness_read(f->h, "file");
        g_assert_cmpstr(content, ==, "inside");
}

/* The host swaps a directory the guest knows for a symlink pointing out. */
static void test_host_swaps_in_symlink(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        uint64_t dir = lookup_ok(v, VMM_ROOT, "dir");
        g_autofree char *dpath = harness_path(f->h, "dir");
        g_autofree char *moved = harness_path(f->h, "dir.old");
        g_assert_cmpint(rename(dpath, moved), ==, 0);
        harness_symlink(f->h, f->h->outside, "dir");
        /* The old node is the real directory, wherever it went. */
        struct fuse_entry_out e;
        assert_ok(vmm_create(v, dir, "made", O_RDWR | O_CREAT, S_IFREG | 0644, &e, NULL));
        g_autofree char *made = harness_path(f->h, "dir.old/made");
        g_assert_true(g_file_test(made, G_FILE_TEST_EXISTS));
        /* A fresh lookup sees the symlink, and nothing goes through it. */
        assert_ok(vmm_lookup(v, VMM_ROOT, "dir", &e));
        g_assert_true(S_ISLNK(e.attr.mode));
        g_assert_cmpint(vmm_create(v, e.nodeid, "made2", O_RDWR | O_CREAT, S_IFREG | 0644, NULL, NULL), <, 0);
        g_assert_cmpint(vmm_lookup(v, e.nodeid, "canary", NULL), <, 0);
}

/* The host moves a directory the guest knows out of the share (guest-faults
 * does it under a real guest): nothing the guest sends for it, or for a file
 * in it, changes anything there.  Landlock refuses opens, creates and links;
 * the daemon itself refuses chmod, utimes and xattrs (Landlock does not cover
 * them) and removals and renames (Landlock grants those below the socket's
 * folder, which here holds outside/ too).  The directory is moved back before
 * the fixture's check of outside/. */
static void test_dir_moved_out(Fixture *f, gconstpointer data)
{
        if (!f->h)
                return;   /* the root-worker variant without root */
        struct vmm *v = f->h->vmm;
        struct fuse_setattr_in chmod_in = { .valid = FATTR_MODE, .mode = S_IFREG | 0600 };
        struct fuse_setattr_in times_in = { .valid = FATTR_MTIME, .mtime = 12345 };
        struct fuse_setattr_in trunc_in = { .valid = FATTR_SIZE, .size = 0 };
        struct fuse_entry_out e;
        uint64_t file = lookup_ok(v, VMM_ROOT, "file");
        uint64_t dir, inner;
        struct stat st;

        if (!harness_require_sluice("sluice-fs's own confinement of moved-out inodes"))
                return;
        assert_ok(vmm_create(v, lookup_ok(v, VMM_ROOT, "dir"), "inner", O_RDWR | O_CREAT, S_IFREG | 0644,
                             &e, NULL));
        inner = e.nodeid;
        dir = lookup_ok(v, VMM_ROOT, "dir");
        g_autofree char *from = harness_path(f->h, "dir");
        g_autofree char *to = g_build_filename(f->h->outside, "moved", NULL);
        g_autofree char *moved_inner = g_build_filename(to, "inner", NULL);
        struct stat outside_before;

        /* The test's own two renames change the outside folder's times; they
         * are put back at the end, so that the harness's check that nothing
         * outside changed still sees any change the worker made there (and does
         * not depend on both renames falling in the snapshot's second). */
        g_assert_cmpint(stat(f->h->outside, &outside_before), ==, 0);
        g_assert_cmpint(rename(from, to), ==, 0);

        g_assert_cmpint(vmm_create(v, dir, "made", O_RDWR | O_CREAT, S_IFREG | 0644, NULL, NULL), <, 0);
        g_assert_cmpint(vmm_mkdir(v, dir, "madedir", 0755, NULL), <, 0);
        g_assert_cmpint(vmm_link(v, file, dir, "hard", NULL), <, 0);
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", dir, "stolen", 0), <, 0);
        g_assert_cmpint(vmm_unlink(v, dir, "inner"), ==, -EACCES);
        g_assert_cmpint(vmm_rename(v, dir, "inner", VMM_ROOT, "fetched", 0), ==, -EACCES);
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", dir, "inner", 0), ==, -EACCES);
        g_assert_cmpint(vmm_open(v, inner, O_WRONLY, NULL), <, 0);
        g_assert_cmpint(vmm_setattr(v, inner, &trunc_in, NULL), <, 0);
        g_assert_cmpint(vmm_setattr(v, inner, &chmod_in, NULL), ==, -EACCES);
        g_assert_cmpint(vmm_setattr(v, inner, &times_in, NULL), ==, -EACCES);
        g_assert_cmpint(vmm_setattr(v, dir, &chmod_in, NULL), ==, -EACCES);
        g_assert_cmpint(vmm_setxattr(v, inner, "user.planted", "x", 1, 0), ==, -EACCES);

        g_assert_cmpint(stat(moved_inner, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0644);
        g_assert_cmpint((long)st.st_mtime, !=, 12345);
        g_autofree char *listing = harness_snapshot(to);
        g_test_message("moved-out directory: %s", listing);
        g_assert_cmpint(lgetxattr(moved_inner, "user.planted", NULL, 0), <, 0);
        g_autofree char *made = g_build_filename(to, "made", NULL);
        g_autofree char *stolen = g_build_filename(to, "stolen", NULL);
        g_assert_false(g_file_test(made, G_FILE_TEST_EXISTS));
        g_assert_false(g_file_test(stolen, G_FILE_TEST_EXISTS));
        /* Back in the share, it is the guest's again. */
        g_assert_cmpint(rename(to, from), ==, 0);
        g_assert_cmpint(utimensat(AT_FDCWD, f->h->outside,
                                  (struct timespec[2]){ outside_before.st_atim, outside_before.st_mtim }, 0),
                        ==, 0);
        assert_ok(vmm_setattr(v, inner, &chmod_in, NULL));
}

static void test_rename_link_escape(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        uint64_t file = lookup_ok(v, VMM_ROOT, "file");
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, "../outside/file", 0), <, 0);
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, "../outside/canary", 0), <, 0);
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, "../file", RENAME_NOREPLACE), <, 0);
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, "../outside/canary", RENAME_EXCHANGE), <, 0);
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "../outside/canary", VMM_ROOT, "stolen", 0), <, 0);
        g_assert_cmpint(vmm_link(v, file, VMM_ROOT, "../outside/hard", NULL), <, 0);
        g_autofree char *proc = g_strdup_printf("/proc/self/fd/%d", 3);
        g_assert_cmpint(vmm_link(v, file, VMM_ROOT, proc, NULL), <, 0);
        g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, proc, 0), <, 0);
        g_autofree char *content = harness_read(f->h, "file");
        g_assert_cmpstr(content, ==, "inside");
}

static void test_forged_nodeids(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        const uint64_t ids[] = { 0, 2, 3, 0x1000, 0xdeadbeefull, UINT64_MAX, 1ull << 63 };
        for (unsigned i = 0; i < G_N_ELEMENTS(ids); i++) {
                g_test_message("nodeid %#llx", (unsigned long long)ids[i]);
                struct fuse_attr a;
                struct fuse_entry_out e;
                int r = vmm_getattr(v, ids[i], &a);
                /* A node id this connection never got must not resolve (the
                 * daemon may hand out small ids, so only check unknown ones
                 * that are unlikely to exist). */
                if (ids[i] == 0 || ids[i] >= 0x1000)
                        g_assert_cmpint(r, <, 0);
                if (ids[i] == 0 || ids[i] >= 0x1000) {
                        g_assert_cmpint(vmm_lookup(v, ids[i], "canary", &e), <, 0);
                        g_assert_cmpint(vmm_create(v, ids[i], "x", O_RDWR | O_CREAT, S_IFREG | 0644,
                                                   NULL, NULL), <, 0);
                }
        }
        struct fuse_attr a;
        assert_ok(vmm_getattr(v, VMM_ROOT, &a));
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
#define ADD(path, fn) g_test_add(path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
        ADD("/confinement/dotdot", test_dotdot);
        ADD("/confinement/slash-names", test_slash_names);
        ADD("/confinement/symlink-to-etc", test_symlink_to_etc);
        ADD("/confinement/symlink-out-mutations", test_symlink_out_mutations);
        ADD("/confinement/symlink-to-outside-dir", test_symlink_to_outside_dir);
        ADD("/confinement/host-swaps-in-symlink", test_host_swaps_in_symlink);
        ADD("/confinement/rename-link-escape", test_rename_link_escape);
        ADD("/confinement/dir-moved-out", test_dir_moved_out);
        g_test_add("/confinement/dir-moved-out-unsandboxed", Fixture, unsandboxed_opts, fixture_setup,
                   test_dir_moved_out, fixture_teardown);
        g_test_add("/confinement/dir-moved-out-root-worker", Fixture, NULL, fixture_setup_root,
                   test_dir_moved_out, fixture_teardown);
        ADD("/confinement/forged-nodeids", test_forged_nodeids);
        return g_test_run();
}
