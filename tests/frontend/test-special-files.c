/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-special-files.c — what the host keeps in a shared folder besides
 * files (device nodes, mounted pseudo file systems):
 *  - a device node is never opened for the guest: a CREATE without O_EXCL of
 *    its name, and an OPEN of it, are refused by type before any open (as
 *    root, opening a tape rewinds it, a modem's hangs up).  inotify's IN_OPEN
 *    on the node tells whether anything opened it;
 *  - under the default sandbox a FIFO takes chmod, chown and times (tar -x,
 *    cp -a); a symlink, socket or device node answers EOPNOTSUPP, unchanged;
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
#include <grp.h>
#include <sched.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_BUILD 1
#endif
#endif

#ifndef SANITIZER_BUILD
/* Whether the daemon's user may have a user namespace with its own mounts,
 * as the metadata helper does (some kernels, AppArmor policies and containers
 * refuse it): tried in a child with the daemon's ids. */
static gboolean userns_allowed(void)
{
        int status;
        pid_t pid = fork();

        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                gid_t gid = harness_daemon_gid();

                if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 ||
                    setresuid(harness_daemon_uid(), harness_daemon_uid(), harness_daemon_uid()) < 0 ||
                    unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(1);
                _exit(0);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
#endif

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

/* What tar -x, cp -a and rsync -a do after mkfifo, under the default
 * sandbox: chmod, chown and explicit times of a FIFO reach the host's FIFO
 * (through a non-blocking open for reading, which nothing notices).  A
 * symlink, a socket and a device node are never opened: a root worker sealed
 * in its mount namespace changes them by path; any other worker answers
 * EOPNOTSUPP cleanly and leaves them as they were (README.md says why). */
static void check_fifo_takes_metadata(Harness *h, gboolean worker_is_root)
{
        g_autofree char *path = harness_path(h, "fifo");
        struct fuse_setattr_in in = {
                .valid = FATTR_MODE | FATTR_UID | FATTR_GID | FATTR_ATIME | FATTR_MTIME,
                .mode = S_IFIFO | 0640,
                .uid = worker_is_root ? 4242 : harness_daemon_uid(),
                .gid = worker_is_root ? 4243 : harness_daemon_gid(),
                .atime = 1234567890, .atimensec = 5,
                .mtime = 1234567891, .mtimensec = 7,
        };
        struct fuse_entry_out e;
        struct fuse_attr a;
        struct stat st;

        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "fifo", &e));
        assert_ok(vmm_setattr(h->vmm, e.nodeid, &in, &a));
        g_assert_cmpint(lstat(path, &st), ==, 0);
        g_assert_true(S_ISFIFO(st.st_mode));
        g_assert_cmpuint(st.st_mode & 07777, ==, 0640);
        g_assert_cmpuint(st.st_uid, ==, in.uid);
        g_assert_cmpuint(st.st_gid, ==, in.gid);
        g_assert_cmpint(st.st_atim.tv_sec, ==, 1234567890);
        g_assert_cmpint(st.st_atim.tv_nsec, ==, 5);
        g_assert_cmpint(st.st_mtim.tv_sec, ==, 1234567891);
        g_assert_cmpint(st.st_mtim.tv_nsec, ==, 7);
        g_assert_cmpuint(a.mode & 07777, ==, 0640);
        g_assert_cmpuint(a.mtime, ==, 1234567891);
}

/* chmod (none for a symlink: Linux has no lchmod), chown -h and touch -h of
 * a node that is never opened: done by a sealed root worker, refused with
 * EOPNOTSUPP and left as it was by any other. */
/* Who changes the metadata of what the sandboxed worker cannot open. */
typedef enum {
        CHANGER_NONE,      /* nobody: EOPNOTSUPP */
        CHANGER_SEALED,    /* a root worker sealed in its mount namespace, by path */
        CHANGER_HELPER,    /* a desktop user's worker's metadata helper */
} Changer;

static void check_unopenable(Harness *h, const char *name, Changer changer)
{
        g_autofree char *path = harness_path(h, name);
        gboolean sealed = changer == CHANGER_SEALED;
        /* The helper maps only the worker's own ids: a desktop user keeps its files. */
        uid_t to_uid = sealed ? 4242 : harness_daemon_uid();
        gid_t to_gid = sealed ? 4243 : harness_daemon_gid();
        struct fuse_setattr_in chmod_in = { .valid = FATTR_MODE, .mode = 0600 };
        struct fuse_setattr_in chown_in = { .valid = FATTR_UID | FATTR_GID, .uid = to_uid,
                                            .gid = to_gid };
        struct fuse_setattr_in touch_in = { .valid = FATTR_ATIME | FATTR_MTIME,
                                            .atime = 1234567890, .mtime = 1234567891,
                                            .mtimensec = 9 };
        struct fuse_entry_out e;
        struct stat before, after;
        gboolean is_link;

        g_assert_cmpint(lstat(path, &before), ==, 0);
        is_link = S_ISLNK(before.st_mode);
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, name, &e));
        chmod_in.mode |= before.st_mode & S_IFMT;
        assert_errno(vmm_setattr(h->vmm, e.nodeid, &chmod_in, NULL),
                     changer != CHANGER_NONE && !is_link ? 0 : -EOPNOTSUPP);
        assert_errno(vmm_setattr(h->vmm, e.nodeid, &touch_in, NULL),
                     changer != CHANGER_NONE ? 0 : -EOPNOTSUPP);
        if (changer != CHANGER_NONE)
                assert_ok(vmm_setattr(h->vmm, e.nodeid, &chown_in, NULL));
        g_assert_cmpint(lstat(path, &after), ==, 0);
        if (changer == CHANGER_NONE) {
                g_assert_cmpuint(after.st_mode, ==, before.st_mode);
                g_assert_cmpint(after.st_mtim.tv_sec, ==, before.st_mtim.tv_sec);
                return;
        }
        g_assert_cmpuint(after.st_mode & 07777, ==, is_link ? before.st_mode & 07777 : 0600);
        g_assert_cmpuint(after.st_uid, ==, to_uid);
        g_assert_cmpuint(after.st_gid, ==, to_gid);
        g_assert_cmpint(after.st_atim.tv_sec, ==, 1234567890);
        g_assert_cmpint(after.st_mtim.tv_sec, ==, 1234567891);
        g_assert_cmpint(after.st_mtim.tv_nsec, ==, 9);
}

static void test_metadata_under_sandbox(gconstpointer data)
{
        gboolean as_root = GPOINTER_TO_INT(data);

        if (!require_root() || !harness_daemon_as_root(as_root))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *fifo = harness_path(h, "fifo");
        g_autofree char *sock = harness_path(h, "sock");
        g_autofree char *dev = harness_path(h, "null");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int s;

        g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
        harness_chown_to_user(fifo);
        harness_symlink(h, "fifo", "link");
        g_assert_cmpuint(strlen(sock), <, sizeof(sa.sun_path));
        strcpy(sa.sun_path, sock);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(s, >=, 0);
        g_assert_cmpint(bind(s, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
        close(s);
        harness_chown_to_user(sock);
        g_assert_cmpint(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), ==, 0);
        harness_chown_to_user(dev);
        harness_up(h, NULL);   /* the default: the sandbox on */

        gboolean worker_is_root = as_root || harness_daemon_uid() == 0;
        Changer changer = harness_daemon_pivoted(h) ? CHANGER_SEALED
                          : !worker_is_root && harness_daemon_metadata_helper(h) ? CHANGER_HELPER
                          : CHANGER_NONE;

        g_test_message("worker %s", changer == CHANGER_SEALED ? "sealed in its mount namespace"
                                    : changer == CHANGER_HELPER ? "not pivoted, with a metadata helper"
                                    : "not pivoted, no metadata helper");
#ifndef SANITIZER_BUILD
        /* Only a system refusing unprivileged user namespaces leaves it out. */
        if (!worker_is_root && changer == CHANGER_NONE && userns_allowed())
                g_error("a desktop user's worker started no metadata helper");
#endif
        check_fifo_takes_metadata(h, worker_is_root);
        check_unopenable(h, "link", changer);
        check_unopenable(h, "sock", changer);
        check_unopenable(h, "null", changer);
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
        g_test_add_data_func("/special-files/metadata-under-sandbox", GINT_TO_POINTER(FALSE),
                             test_metadata_under_sandbox);
        g_test_add_data_func("/special-files/metadata-under-sandbox-root-worker",
                             GINT_TO_POINTER(TRUE), test_metadata_under_sandbox);
        g_test_add("/special-files/pseudo-fs-not-entered", MountFixture, NULL, mount_setup,
                   test_pseudo_fs_not_entered, mount_teardown);
        return g_test_run();
}
