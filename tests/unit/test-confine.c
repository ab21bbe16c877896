/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-confine.c — nothing the guest sends reaches outside the shared folder. */
#include <glib.h>
#include <sys/xattr.h>

#include "confine.h"
#include "fuse-test-util.h"

static void test_check_name(void)
{
        char long_name[300];

        g_assert_cmpint(confine_check_name("file", 4), ==, 0);
        g_assert_cmpint(confine_check_name("...", 3), ==, 0);
        g_assert_cmpint(confine_check_name(".hidden", 7), ==, 0);
        g_assert_cmpint(confine_check_name("", 0), ==, -EINVAL);
        g_assert_cmpint(confine_check_name(".", 1), ==, -EINVAL);
        g_assert_cmpint(confine_check_name("..", 2), ==, -EINVAL);
        g_assert_cmpint(confine_check_name("a/b", 3), ==, -EINVAL);
        g_assert_cmpint(confine_check_name("/etc", 4), ==, -EINVAL);
        g_assert_cmpint(confine_check_name("a\0b", 3), ==, -EINVAL);
        memset(long_name, 'x', sizeof(long_name));
        g_assert_cmpint(confine_check_name(long_name, 255), ==, 0);
        g_assert_cmpint(confine_check_name(long_name, 256), ==, -ENAMETOOLONG);
}

static void test_open_child_refuses_symlinks(void)
{
        g_autofree char *dir = g_dir_make_tmp("sluice-confine-XXXXXX", NULL);
        g_autofree char *link = g_build_filename(dir, "escape", NULL);
        g_autofree char *file = g_build_filename(dir, "plain", NULL);
        int dfd, fd, proc, lfd;

        g_assert_cmpint(symlink("/etc/passwd", link), ==, 0);
        g_assert_true(g_file_set_contents(file, "x", 1, NULL));
        dfd = open(dir, O_PATH | O_DIRECTORY);
        g_assert_cmpint(dfd, >=, 0);
        g_assert_cmpint(confine_open_child(dfd, "escape", O_RDONLY, 0), ==, -ELOOP);
        /* O_PATH gets the link itself, which is how inodes hold symlinks. */
        lfd = confine_open_child(dfd, "escape", O_PATH, 0);
        g_assert_cmpint(lfd, >=, 0);
        /* ... and reopening that link for I/O is refused, not followed. */
        proc = confine_open_proc_fd();
        g_assert_cmpint(proc, >=, 0);
        g_assert_cmpint(confine_reopen(proc, lfd, O_RDONLY), ==, -ELOOP);
        fd = confine_open_child(dfd, "plain", O_RDONLY, 0);
        g_assert_cmpint(fd, >=, 0);
        close(fd);
        if (confine_have_openat2())
                g_assert_cmpint(confine_open_child(dfd, "../etc", O_PATH, 0), ==, -EXDEV);
        close(lfd);
        close(proc);
        close(dfd);
        ft_rm_rf(dir);
}

static void test_attack_names(void)
{
        struct ft t;
        struct fuse_mkdir_in mk = { .mode = 0755 };
        struct fuse_rename_in rn = { .newdir = 1 };
        char longname[300];

        ft_setup(&t);
        g_assert_cmpint(ft_lookup(&t, 1, "..", NULL), ==, -EINVAL);
        g_assert_cmpint(ft_lookup(&t, 1, ".", NULL), ==, -EINVAL);
        g_assert_cmpint(ft_lookup(&t, 1, "../outside", NULL), ==, -EINVAL);
        g_assert_cmpint(ft_lookup(&t, 1, "/etc", NULL), ==, -EINVAL);
        g_assert_cmpint(ft_lookup(&t, 1, "", NULL), ==, -EINVAL);
        memset(longname, 'a', sizeof(longname));
        longname[sizeof(longname) - 1] = '\0';
        g_assert_cmpint(ft_lookup(&t, 1, longname, NULL), ==, -ENAMETOOLONG);
        /* A name without its NUL. */
        g_assert_cmpint(ft_send(&t, FUSE_LOOKUP, 1, "abc", 3, NULL, 0), ==, -EINVAL);
        g_assert_cmpint(ft_create(&t, 1, "../outside/new", 0644, O_RDWR, NULL, NULL), ==, -EINVAL);
        g_assert_cmpint(ft_send(&t, FUSE_MKDIR, 1, &mk, sizeof(mk), "..", 3), ==, -EINVAL);
        g_assert_cmpint(ft_send(&t, FUSE_UNLINK, 1, "../outside/secret", 18, NULL, 0), ==, -EINVAL);
        g_assert_cmpint(ft_send(&t, FUSE_SYMLINK, 1, "a/b", 4, "x", 2), ==, -EINVAL);
        g_assert_cmpint(ft_create(&t, 1, "f", 0644, O_RDWR, NULL, NULL), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_RENAME, 1, &rn, sizeof(rn), "f\0../outside/f", 15), ==, -EINVAL);
        /* Forged nodeids find nothing. */
        g_assert_cmpint(ft_lookup(&t, 0, "f", NULL), ==, -EBADF);
        g_assert_cmpint(ft_lookup(&t, 2, "f", NULL), ==, -EBADF);
        g_assert_cmpint(ft_lookup(&t, (1ull << 32) | 1, "f", NULL), ==, -EBADF);
        g_assert_cmpint(ft_lookup(&t, 0xffffffffffffffffull, "f", NULL), ==, -EBADF);
        g_assert_cmpint(ft_read(&t, 1, 0x1234, 0, 10, NULL), ==, -EBADF);

        {
                g_autofree char *escaped = g_build_filename(t.outside, "new", NULL);
                g_autofree char *secret = g_build_filename(t.outside, "secret", NULL);

                g_assert_false(g_file_test(escaped, G_FILE_TEST_EXISTS));
                g_assert_true(g_file_test(secret, G_FILE_TEST_EXISTS));
        }
        ft_teardown(&t);
}

static void test_symlinks_not_followed(void)
{
        struct ft t;
        struct fuse_entry_out e, d;
        g_autofree char *l1 = NULL, *l2 = NULL, *secret = NULL;
        struct fuse_setattr_in sa = { .valid = FATTR_MODE, .mode = 0777 };
        struct fuse_setattr_in tr = { .valid = FATTR_SIZE, .size = 0 };
        struct fuse_link_in ln;
        struct stat st;
        uint64_t fh;
        g_autofree char *contents = NULL;

        ft_setup(&t);
        secret = g_build_filename(t.outside, "secret", NULL);
        /* Host-side symlinks placed in the share, pointing outside. */
        l1 = ft_path(&t, "to-secret");
        l2 = ft_path(&t, "to-outside");
        g_assert_cmpint(symlink(secret, l1), ==, 0);
        g_assert_cmpint(symlink(t.outside, l2), ==, 0);

        /* LOOKUP gives the link itself. */
        g_assert_cmpint(ft_lookup(&t, 1, "to-secret", &e), ==, 0);
        g_assert_true(S_ISLNK(e.attr.mode));
        /* OPEN of the link does not reach the target. */
        g_assert_cmpint(ft_open(&t, e.nodeid, O_RDONLY, &fh), ==, -ELOOP);
        g_assert_cmpint(ft_open(&t, e.nodeid, O_RDWR | O_TRUNC, &fh), ==, -ELOOP);
        /* chmod and truncate through the link are refused; the target keeps its data. */
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), !=, 0);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &tr, sizeof(tr), NULL, 0), !=, 0);
        /* A hard link of the link is a link, not the secret. */
        ln.oldnodeid = e.nodeid;
        g_assert_cmpint(ft_send(&t, FUSE_LINK, 1, &ln, sizeof(ln), "copy", 5), ==, 0);
        {
                g_autofree char *cp = ft_path(&t, "copy");

                g_assert_cmpint(lstat(cp, &st), ==, 0);
                g_assert_true(S_ISLNK(st.st_mode));
        }
        /* A symlinked directory is not a directory to walk through. */
        g_assert_cmpint(ft_lookup(&t, 1, "to-outside", &d), ==, 0);
        g_assert_true(S_ISLNK(d.attr.mode));
        g_assert_cmpint(ft_lookup(&t, d.nodeid, "secret", NULL), ==, -ENOTDIR);
        g_assert_cmpint(ft_create(&t, d.nodeid, "planted", 0644, O_RDWR, NULL, NULL), ==, -ENOTDIR);
        g_assert_cmpint(ft_send(&t, FUSE_OPENDIR, d.nodeid, &(struct fuse_open_in){ 0 },
                                sizeof(struct fuse_open_in), NULL, 0), ==, -ENOTDIR);
        /* CREATE over an existing link does not write through it. */
        g_assert_cmpint(ft_create(&t, 1, "to-secret", 0644, O_RDWR | O_TRUNC, NULL, NULL), ==, -ELOOP);

        g_assert_true(g_file_get_contents(secret, &contents, NULL, NULL));
        g_assert_cmpstr(contents, ==, "secret");
        g_assert_cmpint(stat(secret, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & 0777, !=, 0777);
        {
                g_autofree char *planted = g_build_filename(t.outside, "planted", NULL);

                g_assert_false(g_file_test(planted, G_FILE_TEST_EXISTS));
        }
        ft_teardown(&t);
}

static void test_dir_moved_outside(void)
{
        struct ft t;
        struct fuse_mkdir_in mk = { .mode = 0755 };
        struct fuse_entry_out d;
        g_autofree char *from = NULL, *to = NULL;

        ft_setup(&t);
        g_assert_cmpint(ft_send(&t, FUSE_MKDIR, 1, &mk, sizeof(mk), "sub", 4), ==, 0);
        memcpy(&d, ft_body(&t), sizeof(d));
        /* The host moves the directory out of the share: ".." from it is still refused. */
        from = ft_path(&t, "sub");
        to = g_build_filename(t.outside, "sub", NULL);
        g_assert_cmpint(rename(from, to), ==, 0);
        g_assert_cmpint(ft_lookup(&t, d.nodeid, "..", NULL), ==, -EINVAL);
        ft_teardown(&t);
}

/* Makes `levels` directories of 255-byte names below dir_fd, one openat at a
 * time (their paths do not fit PATH_MAX); returns an O_PATH fd of the last. */
static int make_deep(int dir_fd, unsigned levels)
{
        char name[256];
        int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);

        memset(name, 'x', 255);
        name[255] = '\0';
        for (unsigned i = 0; i < levels; i++) {
                int next;

                g_assert_cmpint(mkdirat(fd, name, 0755), ==, 0);
                next = openat(fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                g_assert_cmpint(next, >=, 0);
                close(fd);
                fd = next;
        }
        return fd;
}

static void rm_deep(int dir_fd, unsigned levels)
{
        char name[256];
        int fds[64];

        g_assert_cmpuint(levels, <=, G_N_ELEMENTS(fds));
        memset(name, 'x', 255);
        name[255] = '\0';
        fds[0] = dir_fd;
        for (unsigned i = 1; i < levels; i++)
                fds[i] = openat(fds[i - 1], name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        for (unsigned i = levels; i-- > 0;) {
                unlinkat(fds[i], "leaf", 0);
                unlinkat(fds[i], name, AT_REMOVEDIR);
                if (i)
                        close(fds[i]);
        }
}

/* Paths beyond PATH_MAX: a directory is walked up with
 * "..", a file is left to its caller (-ENAMETOOLONG), and a deep directory
 * moved out, into a tree just as deep, is still outside. */
static void test_check_inside_deep(void)
{
        g_autofree char *dir = g_dir_make_tmp("sluice-deep-XXXXXX", NULL);
        g_autofree char *share = g_build_filename(dir, "share", NULL);
        g_autofree char *far = g_build_filename(dir, "far", NULL);
        int proc_fd = confine_open_proc_fd(), root_fd, far_fd, deep, far_deep, leaf;

        g_assert_cmpint(proc_fd, >=, 0);
        g_assert_cmpint(mkdir(share, 0755), ==, 0);
        g_assert_cmpint(mkdir(far, 0755), ==, 0);
        root_fd = open(share, O_PATH | O_DIRECTORY | O_CLOEXEC);
        far_fd = open(far, O_PATH | O_DIRECTORY | O_CLOEXEC);
        deep = make_deep(root_fd, 40);
        far_deep = make_deep(far_fd, 20);
        g_assert_cmpint(mknodat(deep, "leaf", S_IFREG | 0644, 0), ==, 0);
        leaf = openat(deep, "leaf", O_PATH | O_CLOEXEC);
        g_assert_cmpint(leaf, >=, 0);

        g_assert_cmpint(confine_check_inside(proc_fd, root_fd, deep), ==, 0);
        g_assert_cmpint(confine_check_inside(proc_fd, root_fd, leaf), ==, -ENAMETOOLONG);
        g_assert_cmpint(confine_check_inside(proc_fd, far_fd, deep), ==, -EACCES);
        g_assert_cmpint(confine_check_inside(proc_fd, deep, deep), ==, 0);
        g_assert_cmpint(confine_check_inside(proc_fd, deep, root_fd), ==, -EACCES);

        {
                char name[256];

                memset(name, 'x', 255);
                name[255] = '\0';
                g_assert_cmpint(renameat(root_fd, name, far_deep, "moved"), ==, 0);
                g_assert_cmpint(confine_check_inside(proc_fd, root_fd, deep), ==, -EACCES);
                g_assert_cmpint(confine_check_inside(proc_fd, far_fd, deep), ==, 0);
                g_assert_cmpint(renameat(far_deep, "moved", root_fd, name), ==, 0);
                g_assert_cmpint(confine_check_inside(proc_fd, root_fd, deep), ==, 0);
        }
        {
                /* Renaming the shared folder itself takes its inside along. */
                g_autofree char *renamed = g_build_filename(dir, "share2", NULL);

                g_assert_cmpint(rename(share, renamed), ==, 0);
                g_assert_cmpint(confine_check_inside(proc_fd, root_fd, deep), ==, 0);
                g_assert_cmpint(rename(renamed, share), ==, 0);
        }

        close(leaf);
        close(deep);
        close(far_deep);
        rm_deep(root_fd, 41);
        rm_deep(far_fd, 21);
        close(root_fd);
        close(far_fd);
        close(proc_fd);
        g_assert_cmpint(rmdir(share), ==, 0);
        g_assert_cmpint(rmdir(far), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/* The host moves a directory the guest knows out of the share (guest-faults
 * does it under a real guest): Landlock keeps opens and creates out, but not
 * chmod, chown, utimes or xattrs, nor removals below the socket's folder; the
 * daemon refuses those itself.  Renaming
 * the shared folder itself changes nothing for the guest. */
static void test_moved_outside_no_changes(void)
{
        struct ft t;
        struct fuse_mkdir_in mk = { .mode = 0755 };
        struct fuse_entry_out d, f;
        struct fuse_setattr_in chmod_in = { .valid = FATTR_MODE, .mode = S_IFREG | 0600 };
        struct fuse_setattr_in times_in = { .valid = FATTR_MTIME, .mtime = 12345 };
        struct fuse_setxattr_in sx = { .size = 3 };
        g_autofree char *from = NULL, *to = NULL, *moved_file = NULL, *base = NULL, *renamed = NULL;
        struct stat st;
        struct fs_options opts = {
                .guest_uid = FS_ID_UNMAPPED, .host_uid = FS_ID_UNMAPPED,
                .guest_gid = FS_ID_UNMAPPED, .host_gid = FS_ID_UNMAPPED,
                .xattr = true,
        };

        ft_setup_opts(&t, &opts);
        g_assert_cmpint(ft_send(&t, FUSE_MKDIR, 1, &mk, sizeof(mk), "sub", 4), ==, 0);
        memcpy(&d, ft_body(&t), sizeof(d));
        g_assert_cmpint(ft_create(&t, d.nodeid, "f", 0644, O_RDWR, &f, NULL), ==, 0);
        /* Inside, all three work. */
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, f.nodeid, &times_in, sizeof(times_in), NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_SETXATTR, f.nodeid, &sx, FUSE_COMPAT_SETXATTR_IN_SIZE,
                                "user.a\0abc", 10), ==, 0);

        from = ft_path(&t, "sub");
        to = g_build_filename(t.outside, "sub", NULL);
        moved_file = g_build_filename(to, "f", NULL);
        g_assert_cmpint(rename(from, to), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, f.nodeid, &chmod_in, sizeof(chmod_in), NULL, 0), ==, -EACCES);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, d.nodeid, &chmod_in, sizeof(chmod_in), NULL, 0), ==, -EACCES);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, f.nodeid, &times_in, sizeof(times_in), NULL, 0), ==, -EACCES);
        g_assert_cmpint(ft_send(&t, FUSE_SETXATTR, f.nodeid, &sx, FUSE_COMPAT_SETXATTR_IN_SIZE,
                                "user.b\0xyz", 10), ==, -EACCES);
        g_assert_cmpint(ft_send(&t, FUSE_REMOVEXATTR, f.nodeid, "user.a", 7, NULL, 0), ==, -EACCES);
        g_assert_cmpint(stat(moved_file, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0644);
        g_assert_cmpint((int)st.st_mtime, ==, 12345);
        g_assert_cmpint(getxattr(moved_file, "user.b", NULL, 0), <, 0);
        g_assert_cmpint(getxattr(moved_file, "user.a", NULL, 0), ==, 3);
        /* Removals and renames out of it or into it (Landlock grants removals below
         * the socket's folder, and this harness has no Landlock at all). */
        g_assert_cmpint(ft_send(&t, FUSE_UNLINK, d.nodeid, "f", 2, NULL, 0), ==, -EACCES);
        {
                struct fuse_rename_in rn = { .newdir = 1 };
                struct fuse_rename_in back = { .newdir = d.nodeid };

                g_assert_cmpint(ft_send(&t, FUSE_RENAME, d.nodeid, &rn, sizeof(rn), "f\0fetched", 10),
                                ==, -EACCES);
                g_assert_cmpint(ft_create(&t, 1, "g", 0644, O_RDWR, NULL, NULL), ==, 0);
                g_assert_cmpint(ft_send(&t, FUSE_RENAME, 1, &back, sizeof(back), "g\0f", 4), ==, -EACCES);
        }
        g_assert_cmpint(stat(moved_file, &st), ==, 0);
        /* Reading its attributes still works: nothing is written. */
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, f.nodeid, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, 0);
        /* What Landlock refuses in a sandboxed worker is refused here too, since
         * this harness has no Landlock (as --sandbox=none or an old kernel):
         * opening, creating, linking in or out of the moved directory. */
        g_assert_false(confine_landlock_active());
        {
                struct fuse_open_in op = { .flags = O_RDWR };
                struct fuse_link_in ln = { .oldnodeid = f.nodeid };
                g_autofree char *new_file = g_build_filename(to, "new", NULL);
                g_autofree char *new_dir = g_build_filename(to, "nd", NULL);
                g_autofree char *new_link = g_build_filename(to, "sl", NULL);
                g_autofree char *linked = ft_path(&t, "linked");

                g_assert_cmpint(ft_send(&t, FUSE_OPEN, f.nodeid, &op, sizeof(op), NULL, 0), ==, -EACCES);
                g_assert_cmpint(ft_send(&t, FUSE_OPENDIR, d.nodeid, &op, sizeof(op), NULL, 0), ==, -EACCES);
                g_assert_cmpint(ft_create(&t, d.nodeid, "new", 0644, O_RDWR, NULL, NULL), ==, -EACCES);
                g_assert_cmpint(ft_send(&t, FUSE_MKDIR, d.nodeid, &mk, sizeof(mk), "nd", 3), ==, -EACCES);
                g_assert_cmpint(ft_send(&t, FUSE_SYMLINK, d.nodeid, "sl\0/etc", 8, NULL, 0), ==, -EACCES);
                g_assert_cmpint(ft_send(&t, FUSE_LINK, 1, &ln, sizeof(ln), "linked", 7), ==, -EACCES);
                g_assert_cmpint(lstat(new_file, &st), <, 0);
                g_assert_cmpint(lstat(new_dir, &st), <, 0);
                g_assert_cmpint(lstat(new_link, &st), <, 0);
                g_assert_cmpint(lstat(linked, &st), <, 0);
        }

        /* Moved back in, it may change again. */
        g_assert_cmpint(rename(to, from), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, f.nodeid, &chmod_in, sizeof(chmod_in), NULL, 0), ==, 0);

        /* The shared folder itself renamed: its files are still inside it. */
        base = g_path_get_dirname(t.dir);
        renamed = g_build_filename(base, "share-renamed", NULL);
        g_assert_cmpint(rename(t.dir, renamed), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, f.nodeid, &times_in, sizeof(times_in), NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, 1, &times_in, sizeof(times_in), NULL, 0), ==, 0);
        /* A folder at the old path with a name that extends it is not inside. */
        g_assert_cmpint(rename(renamed, t.dir), ==, 0);
        {
                g_autofree char *sibling = g_strconcat(t.dir, "-sibling", NULL);
                g_autofree char *there = g_build_filename(sibling, "sub", NULL);

                g_assert_cmpint(g_mkdir(sibling, 0755), ==, 0);
                g_assert_cmpint(rename(from, there), ==, 0);
                g_assert_cmpint(ft_send(&t, FUSE_SETATTR, f.nodeid, &times_in, sizeof(times_in), NULL, 0),
                                ==, -EACCES);
        }
        ft_teardown(&t);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        log_set_level(LOG_LEVEL_WARNING);
        g_test_add_func("/confine/check-name", test_check_name);
        g_test_add_func("/confine/open-child-symlinks", test_open_child_refuses_symlinks);
        g_test_add_func("/confine/attack-names", test_attack_names);
        g_test_add_func("/confine/symlinks-not-followed", test_symlinks_not_followed);
        g_test_add_func("/confine/dir-moved-outside", test_dir_moved_outside);
        g_test_add_func("/confine/moved-outside-no-changes", test_moved_outside_no_changes);
        g_test_add_func("/confine/check-inside-deep", test_check_inside_deep);
        return g_test_run();
}
