/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-deep-paths.c — a tree deeper than PATH_MAX works like any other
 * (paths longer than PATH_MAX): the worker's "is it still inside the shared folder"
 * check cannot read a /proc/self/fd link longer than PATH_MAX, and refused
 * chmod, chown, truncate, rename, unlink and xattr changes there with EACCES,
 * which virtiofsd allows.  A directory moved out of the share at such a
 * depth is still refused.
 *
 * The guest builds the tree itself (MKDIR of 255-byte names, one per level);
 * the host side reaches it with openat() one component at a time, since its
 * paths do not fit PATH_MAX either. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* 40 levels of 255-byte names: about 10 KiB of path, 2.5 times PATH_MAX. */
#define DEPTH 40

static char long_name[256];

static const char *level_name(unsigned i)
{
        memset(long_name, 'd', 255);
        long_name[255] = '\0';
        long_name[0] = (char)('A' + i % 26);
        long_name[1] = (char)('a' + i / 26);
        return long_name;
}

/* Removes `name` in `dir_fd` and everything below it, by fds (no path fits). */
static void rm_tree_at(int dir_fd, const char *name)
{
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd >= 0) {
                DIR *d = fdopendir(fd);
                struct dirent *de;
                GPtrArray *names = g_ptr_array_new_with_free_func(g_free);

                while (d && (de = readdir(d)))
                        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                                g_ptr_array_add(names, g_strdup(de->d_name));
                for (guint i = 0; i < names->len; i++)
                        rm_tree_at(dirfd(d), names->pdata[i]);
                g_ptr_array_free(names, TRUE);
                if (d)
                        closedir(d);
                else
                        close(fd);
                (void) unlinkat(dir_fd, name, AT_REMOVEDIR);
        } else {
                (void) unlinkat(dir_fd, name, 0);
        }
}

/* The host's fd of the directory `levels` deep below `top` (O_PATH). */
static int open_levels(const char *top, unsigned levels)
{
        int fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);

        for (unsigned i = 0; i < levels && fd >= 0; i++) {
                int next = openat(fd, level_name(i), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                close(fd);
                fd = next;
        }
        g_assert_cmpint(fd, >=, 0);
        return fd;
}

/* The length of the /proc link of `fd` as the test sees it: -ENAMETOOLONG
 * proves the tree is deep enough to matter. */
static int proc_link_len(int fd)
{
        char link[64], buf[PATH_MAX];
        ssize_t n;

        g_snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, buf, sizeof(buf));
        return n < 0 ? -errno : (int)n;
}

typedef struct {
        Harness *h;
        uint64_t dirs[DEPTH + 1];       /* dirs[0] is the root, dirs[DEPTH] the deepest */
        uint64_t leaf;                  /* "leaf" in dirs[DEPTH] */
        char *far;                      /* dir/far: a deep tree outside the share */
} Fixture;

static void build_guest_tree(Fixture *f)
{
        struct vmm *v = f->h->vmm;
        struct fuse_entry_out e;

        f->dirs[0] = VMM_ROOT;
        for (unsigned i = 0; i < DEPTH; i++) {
                assert_ok(vmm_mkdir(v, f->dirs[i], level_name(i), 0755, &e));
                f->dirs[i + 1] = e.nodeid;
        }
        assert_ok(vmm_create(v, f->dirs[DEPTH], "leaf", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, &e, NULL));
        f->leaf = e.nodeid;
        assert_ok(vmm_create(v, f->dirs[DEPTH], "victim", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, &e, NULL));
        assert_ok(vmm_mkdir(v, f->dirs[DEPTH], "subdir", 0755, &e));
}

static void setup(Fixture *f, gconstpointer data)
{
        const char *const *opts = data;

        f->h = harness_new();
        f->far = g_build_filename(f->h->dir, "far", NULL);
        g_assert_cmpint(mkdir(f->far, 0755), ==, 0);
        harness_up(f->h, opts);
        build_guest_tree(f);
}

static void teardown(Fixture *f, gconstpointer data)
{
        int top = open(f->h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        harness_assert_alive(f->h);
        /* nftw() in the harness cannot walk paths beyond PATH_MAX: the deep
         * trees go first (the tests check what the worker did to them). */
        g_assert_cmpint(top, >=, 0);
        rm_tree_at(top, "far");
        {
                int share = open(f->h->share, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                g_assert_cmpint(share, >=, 0);
                rm_tree_at(share, level_name(0));
                close(share);
        }
        close(top);
        harness_assert_outside_untouched(f->h);
        harness_daemon_as_root(FALSE);
        harness_free(f->h);
        g_free(f->far);
}

static const char *const xattr_opts[] = { "--xattr", NULL };
static const char *const unsandboxed_opts[] = { "--xattr", "--sandbox=none", NULL };

/* Everything a POSIX conformance suite does at the end of a long path. */
static void check_deep_changes(Fixture *f, bool as_root)
{
        struct vmm *v = f->h->vmm;
        uint64_t dir = f->dirs[DEPTH], fh;
        struct fuse_setattr_in chmod_in = { .valid = FATTR_MODE, .mode = S_IFREG | 0600 };
        struct fuse_setattr_in trunc_in = { .valid = FATTR_SIZE, .size = 3 };
        struct fuse_setattr_in chown_in = { .valid = FATTR_UID | FATTR_GID,
                                            .uid = as_root ? 4242 : harness_daemon_uid(),
                                            .gid = as_root ? 4243 : harness_daemon_gid() };
        struct fuse_setattr_in dir_chmod = { .valid = FATTR_MODE, .mode = S_IFDIR | 0711 };
        struct fuse_entry_out e;
        struct stat st;
        char value[8];
        size_t got = 0;
        int host;

        host = open_levels(f->h->share, DEPTH);
        g_assert_cmpint(proc_link_len(host), ==, -ENAMETOOLONG);

        assert_ok(vmm_setattr(v, f->leaf, &chmod_in, NULL));
        assert_ok(vmm_setattr(v, f->leaf, &chown_in, NULL));
        assert_ok(vmm_setattr(v, f->leaf, &trunc_in, NULL));
        assert_ok(vmm_setxattr(v, f->leaf, "user.deep", "yes", 3, 0));
        assert_ok(vmm_getxattr(v, f->leaf, "user.deep", value, sizeof(value), &got));
        assert_ok(vmm_removexattr(v, f->leaf, "user.deep"));
        assert_ok(vmm_setxattr(v, f->leaf, "user.deep", "yes", 3, 0));
        /* ftruncate: SETATTR on an open handle */
        assert_ok(vmm_open(v, f->leaf, O_RDWR, &fh));
        trunc_in.valid = FATTR_SIZE | FATTR_FH;
        trunc_in.fh = fh;
        trunc_in.size = 5;
        assert_ok(vmm_setattr(v, f->leaf, &trunc_in, NULL));
        assert_ok(vmm_release(v, f->leaf, fh));
        assert_ok(vmm_setattr(v, dir, &dir_chmod, NULL));
        dir_chmod.mode = S_IFDIR | 0755;
        assert_ok(vmm_setattr(v, dir, &dir_chmod, NULL));

        g_assert_cmpint(fstatat(host, "leaf", &st, AT_SYMLINK_NOFOLLOW), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0600);
        g_assert_cmpint((long)st.st_size, ==, 5);
        g_assert_cmpuint(st.st_uid, ==, chown_in.uid);
        g_assert_cmpuint(st.st_gid, ==, chown_in.gid);
        {
                char procpath[64];

                g_snprintf(procpath, sizeof(procpath), "/proc/self/fd/%d/leaf", host);
                /* The magic link plus one name: the kernel resolves it without the long path. */
                g_assert_cmpint(getxattr(procpath, "user.deep", value, sizeof(value)), ==, 3);
        }

        /* A rename at the leaf, one into the directory above, unlink and rmdir. */
        assert_ok(vmm_rename(v, dir, "leaf", dir, "renamed", 0));
        assert_ok(vmm_rename(v, dir, "renamed", f->dirs[DEPTH - 1], "up", 0));
        g_assert_cmpint(fstatat(host, "renamed", &st, AT_SYMLINK_NOFOLLOW), ==, -1);
        /* The file moved up a level (by the guest): still where it can be changed. */
        chmod_in.mode = S_IFREG | 0640;
        assert_ok(vmm_setattr(v, f->leaf, &chmod_in, NULL));
        assert_ok(vmm_unlink(v, dir, "victim"));
        assert_ok(vmm_rmdir(v, dir, "subdir"));
        g_assert_cmpint(fstatat(host, "victim", &st, AT_SYMLINK_NOFOLLOW), ==, -1);
        g_assert_cmpint(fstatat(host, "subdir", &st, AT_SYMLINK_NOFOLLOW), ==, -1);
        /* New names down there still work (creates, links, symlinks). */
        assert_ok(vmm_create(v, dir, "new", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, &e, NULL));
        assert_ok(vmm_link(v, e.nodeid, dir, "hard", NULL));
        assert_ok(vmm_symlink(v, dir, "sym", "new", NULL));
        assert_ok(vmm_rename(v, dir, "new", dir, "sym", RENAME_EXCHANGE));
        close(host);
        host = open_levels(f->h->share, DEPTH - 1);
        g_assert_cmpint(fstatat(host, "up", &st, AT_SYMLINK_NOFOLLOW), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0640);
        close(host);
}

static void test_user(Fixture *f, gconstpointer data)
{
        check_deep_changes(f, false);
}

static void setup_root(Fixture *f, gconstpointer data)
{
        if (!harness_daemon_as_root(TRUE)) {
                f->h = NULL;
                return;
        }
        setup(f, data);
}

static void teardown_root(Fixture *f, gconstpointer data)
{
        if (f->h)
                teardown(f, data);
}

static void test_root(Fixture *f, gconstpointer data)
{
        if (f->h)
                check_deep_changes(f, true);
}

/* The host moves the guest's deep tree out of the share, into another tree
 * just as deep: no link of any of it fits PATH_MAX, and nothing there may
 * change.  Moved back, it is the guest's again. */
static void test_moved_out(Fixture *f, gconstpointer data)
{
        struct vmm *v = f->h->vmm;
        struct fuse_setattr_in chmod_in = { .valid = FATTR_MODE, .mode = S_IFREG | 0600 };
        struct fuse_setattr_in dir_chmod = { .valid = FATTR_MODE, .mode = S_IFDIR | 0700 };
        struct fuse_setattr_in trunc_in = { .valid = FATTR_SIZE, .size = 0 };
        uint64_t dir = f->dirs[DEPTH];
        int share, far, host;
        struct stat st;

        if (!harness_require_sluice("sluice-fs's own confinement of moved-out inodes"))
                return;
        far = open(f->far, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(far, >=, 0);
        for (unsigned i = 0; i < DEPTH / 2; i++) {
                int next;

                g_assert_cmpint(mkdirat(far, level_name(i), 0755), ==, 0);
                next = openat(far, level_name(i), O_PATH | O_DIRECTORY | O_CLOEXEC);
                close(far);
                far = next;
                g_assert_cmpint(far, >=, 0);
        }
        g_assert_cmpint(proc_link_len(far), ==, -ENAMETOOLONG);
        assert_ok(vmm_setxattr(v, f->leaf, "user.before", "1", 1, 0));
        share = open(f->h->share, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(share, >=, 0);
        g_assert_cmpint(renameat(share, level_name(0), far, "moved"), ==, 0);

        g_assert_cmpint(vmm_setattr(v, f->leaf, &chmod_in, NULL), ==, -EACCES);
        g_assert_cmpint(vmm_setattr(v, f->leaf, &trunc_in, NULL), <, 0);
        g_assert_cmpint(vmm_setattr(v, dir, &dir_chmod, NULL), ==, -EACCES);
        g_assert_cmpint(vmm_setattr(v, f->dirs[1], &dir_chmod, NULL), ==, -EACCES);
        g_assert_cmpint(vmm_setxattr(v, f->leaf, "user.planted", "x", 1, 0), ==, -EACCES);
        g_assert_cmpint(vmm_removexattr(v, f->leaf, "user.before"), ==, -EACCES);
        g_assert_cmpint(vmm_unlink(v, dir, "victim"), ==, -EACCES);
        g_assert_cmpint(vmm_rmdir(v, dir, "subdir"), ==, -EACCES);
        g_assert_cmpint(vmm_rename(v, dir, "leaf", dir, "renamed", 0), ==, -EACCES);
        g_assert_cmpint(vmm_rename(v, dir, "leaf", VMM_ROOT, "fetched", 0), ==, -EACCES);
        g_assert_cmpint(vmm_create(v, dir, "made", O_RDWR | O_CREAT, S_IFREG | 0644, NULL, NULL), <, 0);

        /* Nothing changed out there. */
        host = openat(far, "moved", O_PATH | O_DIRECTORY | O_CLOEXEC);
        for (unsigned i = 1; i < DEPTH && host >= 0; i++) {
                int next = openat(host, level_name(i), O_PATH | O_DIRECTORY | O_CLOEXEC);

                close(host);
                host = next;
        }
        g_assert_cmpint(host, >=, 0);
        g_assert_cmpint(fstatat(host, "leaf", &st, AT_SYMLINK_NOFOLLOW), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0644);
        g_assert_cmpint(fstatat(host, "victim", &st, AT_SYMLINK_NOFOLLOW), ==, 0);
        g_assert_cmpint(fstatat(host, "subdir", &st, AT_SYMLINK_NOFOLLOW), ==, 0);
        g_assert_cmpint(fstatat(host, "made", &st, AT_SYMLINK_NOFOLLOW), ==, -1);
        g_assert_cmpint(fstatat(host, ".", &st, 0), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0755);
        {
                char procpath[64], value[8];

                g_snprintf(procpath, sizeof(procpath), "/proc/self/fd/%d/leaf", host);
                g_assert_cmpint(getxattr(procpath, "user.planted", value, sizeof(value)), ==, -1);
                g_assert_cmpint(getxattr(procpath, "user.before", value, sizeof(value)), ==, 1);
        }
        close(host);

        /* Back in the share, it is the guest's again. */
        g_assert_cmpint(renameat(far, "moved", share, level_name(0)), ==, 0);
        assert_ok(vmm_setattr(v, f->leaf, &chmod_in, NULL));
        assert_ok(vmm_unlink(v, dir, "victim"));
        close(far);
        close(share);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add("/deep-paths/changes", Fixture, xattr_opts, setup, test_user, teardown);
        g_test_add("/deep-paths/changes-unsandboxed", Fixture, unsandboxed_opts, setup, test_user, teardown);
        g_test_add("/deep-paths/changes-root-worker", Fixture, xattr_opts, setup_root, test_root,
                   teardown_root);
        g_test_add("/deep-paths/moved-out", Fixture, xattr_opts, setup, test_moved_out, teardown);
        g_test_add("/deep-paths/moved-out-unsandboxed", Fixture, unsandboxed_opts, setup, test_moved_out,
                   teardown);
        return g_test_run();
}
