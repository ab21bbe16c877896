/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-special-files.c — what the host keeps in a shared folder besides
 * files (device nodes, mounted pseudo file systems):
 *  - a device node is never opened for the guest: a CREATE without O_EXCL of
 *    its name, and an OPEN of it, are refused by type before any open (as
 *    root, opening a tape rewinds it, a modem's hangs up).  inotify's IN_OPEN
 *    on the node tells whether anything opened it;
 *  - a pseudo file system (proc, sysfs) mounted below the shared folder is
 *    not entered: LOOKUP answers EACCES, READDIRPLUS lists the name without
 *    attributes, so the host's processes stay out of sight; an ordinary
 *    mount (tmpfs, a bind mount) below it still works.
 * Both need root (mknod, mount): the test skips without it.  The mounts live
 * in the test's own mount namespace (made in main()), which the kernel tears
 * down with the test even when it dies; teardown unmounts them too. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static gboolean have_mount_ns;

static gboolean require_root(void)
{
        if (geteuid() != 0) {
                g_test_skip("needs root (mknod, mount)");
                return FALSE;
        }
        return harness_require_sluice("sluice-fs's own refusals");
}

/* The IN_OPEN events queued on `ifd` so far (non-blocking: an open the
 * worker made before its reply is queued by then). */
static unsigned count_opens(int ifd)
{
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        unsigned opens = 0;
        ssize_t n;

        while ((n = read(ifd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const void *)p;

                        if (ev->mask & IN_OPEN)
                                opens++;
                        p += sizeof(*ev) + ev->len;
                }
        return opens;
}

static void check_never_opened(Harness *h, const char *name, mode_t type, dev_t rdev)
{
        struct vmm *v = h->vmm;
        g_autofree char *path = harness_path(h, name);
        struct fuse_entry_out e;
        int ifd, wd;

        g_assert_cmpint(mknod(path, type | 0666, rdev), ==, 0);
        ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        g_assert_cmpint(ifd, >=, 0);
        wd = inotify_add_watch(ifd, path, IN_OPEN);
        g_assert_cmpint(wd, >=, 0);
        /* LOOKUP takes every name with O_PATH, which opens nothing; kernels
         * before 6.5 still reported IN_OPEN for it, and then tell nothing. */
        {
                int fd = open(path, O_PATH | O_CLOEXEC);

                g_assert_cmpint(fd, >=, 0);
                close(fd);
                if (count_opens(ifd) != 0) {
                        g_test_skip("this kernel reports IN_OPEN for O_PATH opens");
                        close(ifd);
                        return;
                }
        }

        g_test_message("%s: CREATE without O_EXCL, OPEN", name);
        g_assert_cmpint(vmm_create(v, VMM_ROOT, name, O_RDWR | O_CREAT, S_IFREG | 0644, NULL, NULL), ==, -ENXIO);
        g_assert_cmpint(vmm_create(v, VMM_ROOT, name, O_RDONLY | O_CREAT, S_IFREG | 0644, NULL, NULL), ==, -ENXIO);
        g_assert_cmpint(vmm_create(v, VMM_ROOT, name, O_WRONLY | O_CREAT | O_TRUNC, S_IFREG | 0644, NULL, NULL),
                        ==, -ENXIO);
        g_assert_cmpint(vmm_create(v, VMM_ROOT, name, O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, NULL, NULL),
                        ==, -EEXIST);
        assert_ok(vmm_lookup(v, VMM_ROOT, name, &e));
        g_assert_cmpint(vmm_open(v, e.nodeid, O_RDWR, NULL), ==, -ENXIO);
        g_assert_cmpint(vmm_open(v, e.nodeid, O_RDONLY, NULL), ==, -ENXIO);
        g_assert_cmpuint(count_opens(ifd), ==, 0);

        /* The watch does see an open (so the zero above means something). */
        {
                int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

                g_assert_cmpint(fd, >=, 0);
                close(fd);
                g_assert_cmpuint(count_opens(ifd), ==, 1);
        }
        close(ifd);
}

static void test_device_never_opened(gconstpointer data)
{
        gboolean as_root = GPOINTER_TO_INT(data);

        if (!require_root() || !harness_daemon_as_root(as_root))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_up(h, NULL);
        /* /dev/null's numbers: harmless to open, but the open is seen. */
        check_never_opened(h, "null", S_IFCHR, makedev(1, 3));
        check_never_opened(h, "fifo", S_IFIFO, 0);
        /* A regular file still opens through CREATE without O_EXCL, new or not. */
        assert_ok(vmm_create(h->vmm, VMM_ROOT, "plain", O_RDWR | O_CREAT, S_IFREG | 0644, NULL, NULL));
        assert_ok(vmm_create(h->vmm, VMM_ROOT, "plain", O_RDWR | O_CREAT | O_TRUNC, S_IFREG | 0644, NULL, NULL));
        harness_assert_alive(h);
        harness_daemon_as_root(FALSE);
}

typedef struct {
        Harness *h;
        GPtrArray *mounts;      /* mount points to take down, last first */
        gboolean skipped;       /* a mount was refused: nothing to test */
} MountFixture;

static gboolean add_mount(MountFixture *f, const char *rel, const char *source, const char *type,
                          unsigned long flags)
{
        g_autofree char *target = harness_path(f->h, rel);

        harness_mkdir(f->h, rel);
        if (mount(source, target, type, flags, NULL) < 0) {
                g_autofree char *why = g_strdup_printf("cannot mount %s here: %s", type ? type : "--bind",
                                                       g_strerror(errno));

                g_test_skip(why);
                return FALSE;
        }
        g_ptr_array_add(f->mounts, g_steal_pointer(&target));
        return TRUE;
}

static void mount_setup(MountFixture *f, gconstpointer data)
{
        f->h = NULL;
        f->skipped = FALSE;
        f->mounts = g_ptr_array_new_with_free_func(g_free);
        if (!require_root())
                return;
        if (!have_mount_ns) {
                g_test_skip("no private mount namespace for the test's mounts");
                return;
        }
        f->h = harness_new();
        harness_mkdir(f->h, "sub");
        harness_mkdir(f->h, "data");
        harness_write(f->h, "data/file", "bound");
        {
                g_autofree char *data_dir = harness_path(f->h, "data");

                if (!add_mount(f, "sub/proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC) ||
                    !add_mount(f, "sub/sys", "sysfs", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC) ||
                    !add_mount(f, "sub/tmp", "tmpfs", "tmpfs", 0) ||
                    !add_mount(f, "sub/bound", data_dir, NULL, MS_BIND)) {
                        f->skipped = TRUE;
                        return;
                }
        }
        harness_write(f->h, "sub/tmp/file", "tmpfs");
        harness_up(f->h, NULL);
}

static void mount_teardown(MountFixture *f, gconstpointer data)
{
        if (f->h && !f->skipped)
                harness_assert_alive(f->h);
        /* Before the harness removes its folder, which the mounts are in. */
        for (guint i = f->mounts->len; i-- > 0;)
                g_assert_cmpint(umount2(f->mounts->pdata[i], MNT_DETACH), ==, 0);
        g_ptr_array_free(f->mounts, TRUE);
        harness_free(f->h);
}

struct listing {
        GHashTable *nodeids;    /* name -> nodeid (as a pointer) */
};

static void collect(const struct fuse_dirent *d, const char *name, const struct fuse_entry_out *entry,
                    void *userdata)
{
        struct listing *l = userdata;

        g_hash_table_insert(l->nodeids, g_strdup(name), GSIZE_TO_POINTER((gsize)entry->nodeid));
}

static void test_pseudo_fs_not_entered(MountFixture *f, gconstpointer data)
{
        if (!f->h || f->skipped)
                return;
        struct vmm *v = f->h->vmm;
        struct fuse_entry_out e, sub;
        struct listing l = { g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) };
        uint64_t fh;
        size_t len = 0;
        g_autofree char *buf = g_malloc(65536);
        char data_buf[64];

        assert_ok(vmm_lookup(v, VMM_ROOT, "sub", &sub));
        g_assert_cmpint(vmm_lookup(v, sub.nodeid, "proc", &e), ==, -EACCES);
        g_assert_cmpint(vmm_lookup(v, sub.nodeid, "sys", &e), ==, -EACCES);
        g_assert_cmpint(vmm_lookup_path(v, "sub/proc/self/environ", &e), ==, -EACCES);
        g_assert_cmpint(vmm_lookup_path(v, "sub/proc/1/cmdline", &e), ==, -EACCES);
        g_assert_cmpint(vmm_lookup_path(v, "sub/sys/kernel", &e), ==, -EACCES);

        /* The listing names them, without attributes (nodeid 0), and goes on. */
        assert_ok(vmm_opendir(v, sub.nodeid, &fh));
        assert_ok(vmm_readdir(v, sub.nodeid, fh, 0, true, buf, 65536, &len));
        assert_ok(vmm_dirents_foreach(buf, len, true, collect, &l));
        assert_ok(vmm_releasedir(v, sub.nodeid, fh));
        g_assert_true(g_hash_table_contains(l.nodeids, "proc"));
        g_assert_cmpuint(GPOINTER_TO_SIZE(g_hash_table_lookup(l.nodeids, "proc")), ==, 0);
        g_assert_cmpuint(GPOINTER_TO_SIZE(g_hash_table_lookup(l.nodeids, "sys")), ==, 0);
        g_assert_cmpuint(GPOINTER_TO_SIZE(g_hash_table_lookup(l.nodeids, "tmp")), !=, 0);
        g_assert_cmpuint(GPOINTER_TO_SIZE(g_hash_table_lookup(l.nodeids, "bound")), !=, 0);
        g_hash_table_unref(l.nodeids);

        /* Ordinary mounts below the share work as before. */
        assert_ok(vmm_lookup_path(v, "sub/tmp/file", &e));
        assert_ok(vmm_open(v, e.nodeid, O_RDONLY, &fh));
        assert_ok(vmm_read(v, e.nodeid, fh, 0, data_buf, sizeof(data_buf), &len));
        g_assert_cmpmem(data_buf, len, "tmpfs", 5);
        assert_ok(vmm_release(v, e.nodeid, fh));
        assert_ok(vmm_lookup_path(v, "sub/bound/file", &e));
        assert_ok(vmm_open(v, e.nodeid, O_RDONLY, &fh));
        assert_ok(vmm_read(v, e.nodeid, fh, 0, data_buf, sizeof(data_buf), &len));
        g_assert_cmpmem(data_buf, len, "bound", 5);
        assert_ok(vmm_release(v, e.nodeid, fh));
}

int main(int argc, char **argv)
{
        /* Before any thread exists (unshare refuses a threaded process). */
        if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0 &&
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
                have_mount_ns = TRUE;
        harness_test_init(&argc, &argv);
        g_test_add_data_func("/special-files/device-never-opened", GINT_TO_POINTER(FALSE),
                             test_device_never_opened);
        g_test_add_data_func("/special-files/device-never-opened-root-worker", GINT_TO_POINTER(TRUE),
                             test_device_never_opened);
        g_test_add("/special-files/pseudo-fs-not-entered", MountFixture, NULL, mount_setup,
                   test_pseudo_fs_not_entered, mount_teardown);
        return g_test_run();
}
