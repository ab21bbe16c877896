/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-privileges.c — what a worker run by root keeps (its capabilities, and
 * a mount namespace whose root is the shared folder), seen from outside as an attacker would see it:
 *
 *  - every thread holds only the capabilities sluice-fs(1) documents
 *    (/proc/PID/task/TID/status), more only with the options that need them;
 *  - a guest WRITE or truncate leaves no set-user-ID bit (nor set-group-ID on a
 *    group-executable file) on the host file, as a local write by a non-root
 *    user would, unless --allow-setuid; the desktop user's worker too;
 *  - its "/" is the shared folder and its mount table holds that one mount,
 *    while the share still works through the VMM and the socket goes at exit.
 * The root cases skip unless the test runs as root. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <glib/gstdio.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TEST_SANITIZER 1
#endif
#endif

/* Capability numbers (linux/capability.h), spelled out: what sluice-fs(1) lists. */
#define BIT(n) (UINT64_C(1) << (n))
#define CAP_CHOWN_BIT        BIT(0)
#define CAP_DAC_OVERRIDE_BIT BIT(1)
#define CAP_FOWNER_BIT       BIT(3)
#define CAP_FSETID_BIT       BIT(4)
#define CAP_SETGID_BIT       BIT(6)
#define CAP_SETUID_BIT       BIT(7)
#define CAP_SYS_ADMIN_BIT    BIT(21)
#define CAP_MKNOD_BIT        BIT(27)
#define CAP_SETFCAP_BIT      BIT(31)
#define DOCUMENTED_SET (CAP_CHOWN_BIT | CAP_DAC_OVERRIDE_BIT | CAP_FOWNER_BIT | CAP_SETGID_BIT | \
                        CAP_SETUID_BIT)

/* The hex value of "Key:" in a status file; FALSE when the file or key is gone. */
static gboolean status_hex(const char *status_path, const char *key, guint64 *ret)
{
        g_autofree char *text = NULL;
        if (!g_file_get_contents(status_path, &text, NULL, NULL))
                return FALSE;
        g_autofree char *needle = g_strdup_printf("\n%s:", key);
        const char *at = strstr(text, needle);
        if (!at)
                return FALSE;
        *ret = g_ascii_strtoull(at + strlen(needle), NULL, 16);
        return TRUE;
}

/* Asserts the capability sets of every thread of pid (the bounding set only
 * when `bounding`: an unprivileged worker cannot reduce it); returns the
 * thread count. */
static unsigned assert_thread_caps(GPid pid, guint64 want, gboolean bounding)
{
        g_autofree char *task_dir = g_strdup_printf("/proc/%d/task", (int)pid);
        g_autoptr(GDir) dir = g_dir_open(task_dir, 0, NULL);
        g_assert_nonnull(dir);
        unsigned threads = 0;
        for (const char *tid; (tid = g_dir_read_name(dir));) {
                g_autofree char *path = g_strdup_printf("%s/%s/status", task_dir, tid);
                guint64 eff, prm, bnd, inh, amb;
                if (!status_hex(path, "CapEff", &eff) || !status_hex(path, "CapPrm", &prm) ||
                    !status_hex(path, "CapBnd", &bnd) || !status_hex(path, "CapInh", &inh) ||
                    !status_hex(path, "CapAmb", &amb))
                        continue;   /* the thread ended meanwhile */
                g_test_message("thread %s: CapEff %#" G_GINT64_MODIFIER "x CapPrm %#" G_GINT64_MODIFIER
                               "x CapBnd %#" G_GINT64_MODIFIER "x", tid, eff, prm, bnd);
                g_assert_cmphex(eff, ==, want);
                g_assert_cmphex(prm, ==, want);
                if (bounding)
                        g_assert_cmphex(bnd, ==, want);
                g_assert_cmphex(inh, ==, 0);
                g_assert_cmphex(amb, ==, 0);
                threads++;
        }
        return threads;
}

static uint64_t lookup_ok(struct vmm *v, uint64_t parent, const char *name)
{
        struct fuse_entry_out e = { 0 };
        assert_ok(vmm_lookup(v, parent, name, &e));
        return e.nodeid;
}

static mode_t host_mode(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        struct stat st = { 0 };
        g_assert_cmpint(lstat(path, &st), ==, 0);
        return st.st_mode & 07777;
}

/* A file of uid:gid with `mode` in the share (chmod after chown, which clears set-ID bits). */
static void host_file(Harness *h, const char *rel, uid_t uid, gid_t gid, mode_t mode)
{
        harness_write(h, rel, "original content\n");
        g_autofree char *path = harness_path(h, rel);
        g_assert_cmpint(lchown(path, uid, gid), ==, 0);
        g_assert_cmpint(chmod(path, mode), ==, 0);
}

/* Opens rel for writing and writes through the VMM with the current credentials. */
static void guest_write(Harness *h, const char *rel)
{
        struct vmm *v = h->vmm;
        uint64_t node = lookup_ok(v, VMM_ROOT, rel), fh = 0;
        uint32_t written = 0;
        assert_ok(vmm_open(v, node, O_WRONLY, &fh));
        assert_ok(vmm_write(v, node, fh, 0, "guest", 5, &written));
        g_assert_cmpuint(written, ==, 5);
        assert_ok(vmm_release(v, node, fh));
        g_autofree char *content = harness_read(h, rel);
        g_assert_true(content && g_str_has_prefix(content, "guest"));
}

/* ---- capabilities ---- */

static void test_root_capabilities(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        g_autoptr(Harness) h = harness_new();
        g_assert_cmpint(g_chmod(h->share, 0777), ==, 0);   /* guest user 1234 creates there */
        harness_up(h, NULL);   /* INIT answered: the set-up, and so the drop, is over */
        harness_daemon_as_root(FALSE);
        g_assert_cmpuint(assert_thread_caps(h->pid, DOCUMENTED_SET, TRUE), >=, 2);   /* main + a queue */

        /* A create runs as the guest user (fsuid 1234 drops CHOWN, DAC_OVERRIDE,
         * FOWNER from that thread) and gives them back afterwards: nothing more. */
        struct fuse_entry_out e;
        uint64_t fh;
        vmm_set_creds(h->vmm, 1234, 1234, 0);
        assert_ok(vmm_create(h->vmm, VMM_ROOT, "made", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_release(h->vmm, e.nodeid, fh));
        vmm_clear_creds(h->vmm);
        assert_thread_caps(h->pid, DOCUMENTED_SET, TRUE);
        /* And it still stops cleanly (in sanitizer builds: LeakSanitizer's
         * checks at exit work without CAP_SYS_PTRACE). */
        kill(h->pid, SIGTERM);
        harness_assert_clean_exit(h, 10000, "SIGTERM");
}

static void test_root_capabilities_options(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        static const char *const opts[] = { "--xattr", "--allow-setuid", "--allow-devices",
                                            "--xattr-namespaces=trusted,security", NULL };
        g_autoptr(Harness) h = harness_new();
        harness_up(h, opts);
        harness_daemon_as_root(FALSE);
        assert_thread_caps(h->pid, DOCUMENTED_SET | CAP_FSETID_BIT | CAP_MKNOD_BIT |
                                   CAP_SETFCAP_BIT | CAP_SYS_ADMIN_BIT, TRUE);
        harness_assert_alive(h);
}

/* ---- set-ID bits on a guest write (kill-priv) ---- */

static void test_root_write_kills_setid(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        g_autoptr(Harness) h = harness_new();
        host_file(h, "suid", 0, 0, 04755);
        host_file(h, "sgid", 0, 0, 02755);
        host_file(h, "sgid-noexec", 0, 0, 02745);   /* not a set-group-ID program: kept */
        host_file(h, "other-write", 0, 0, 04777);
        host_file(h, "other-trunc", 0, 0, 06777);
        harness_up(h, NULL);
        harness_daemon_as_root(FALSE);

        /* Guest root: a set-user-ID root program on the host must not be rewritten and stay one. */
        vmm_set_creds(h->vmm, 0, 0, 0);
        guest_write(h, "suid");
        g_assert_cmphex(host_mode(h, "suid"), ==, 0755);
        guest_write(h, "sgid");
        g_assert_cmphex(host_mode(h, "sgid"), ==, 0755);
        guest_write(h, "sgid-noexec");
        g_assert_cmphex(host_mode(h, "sgid-noexec"), ==, 02745);

        /* A guest user who may write the file but does not own it (a guest kernel
         * that did not drop the bits itself first): the same. */
        vmm_set_creds(h->vmm, 1234, 1234, 0);
        guest_write(h, "other-write");
        g_assert_cmphex(host_mode(h, "other-write"), ==, 0777);
        struct fuse_setattr_in in = { .valid = FATTR_SIZE, .size = 3 };
        assert_ok(vmm_setattr(h->vmm, lookup_ok(h->vmm, VMM_ROOT, "other-trunc"), &in, NULL));
        g_assert_cmphex(host_mode(h, "other-trunc"), ==, 0777);

        /* Without CAP_FSETID the worker still makes set-group-ID directories of
         * any group (what they are for), for guest root and for their owner. */
        static const char *const dirs[] = { "group-dir", "owned-dir" };
        for (unsigned k = 0; k < G_N_ELEMENTS(dirs); k++) {
                harness_mkdir(h, dirs[k]);
                g_autofree char *path = harness_path(h, dirs[k]);
                g_assert_cmpint(lchown(path, k == 0 ? 0 : 1234, 3000), ==, 0);
                vmm_set_creds(h->vmm, k == 0 ? 0 : 1234, k == 0 ? 0 : 3000, 0);
                struct fuse_setattr_in mode = { .valid = FATTR_MODE, .mode = S_IFDIR | 02775 };
                assert_ok(vmm_setattr(h->vmm, lookup_ok(h->vmm, VMM_ROOT, dirs[k]), &mode, NULL));
                g_assert_cmphex(host_mode(h, dirs[k]), ==, 02775);
        }
        vmm_clear_creds(h->vmm);
        harness_assert_alive(h);
}

static void test_root_allow_setuid_keeps(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        static const char *const opts[] = { "--allow-setuid", NULL };
        g_autoptr(Harness) h = harness_new();
        host_file(h, "suid", 0, 0, 04755);
        host_file(h, "sgid", 0, 0, 02755);
        harness_up(h, opts);
        harness_daemon_as_root(FALSE);
        vmm_set_creds(h->vmm, 0, 0, 0);
        guest_write(h, "suid");
        g_assert_cmphex(host_mode(h, "suid"), ==, 04755);
        guest_write(h, "sgid");
        g_assert_cmphex(host_mode(h, "sgid"), ==, 02755);
        vmm_clear_creds(h->vmm);
        harness_assert_alive(h);
}

/* The desktop user's worker holds no capabilities: its host writes clear the
 * bits as any user's do (with or without --allow-setuid), and writing works. */
static void test_desktop_write_kills_setid(void)
{
        if (!harness_require_sluice("legacy virtiofsd runs as root"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "suid", "original content\n");
        g_autofree char *path = harness_path(h, "suid");
        g_assert_cmpint(g_chmod(path, 04755), ==, 0);
        harness_up(h, NULL);
        gboolean root = harness_daemon_uid() == 0;
        assert_thread_caps(h->pid, root ? DOCUMENTED_SET : 0, root);
        guest_write(h, "suid");
        g_assert_cmphex(host_mode(h, "suid"), ==, 0755);
        harness_assert_alive(h);
}

/* ---- the mount namespace ---- */

static void test_root_namespace(void)
{
#ifdef TEST_SANITIZER
        g_test_skip("a sanitizer build leaves the mount namespace out (its run-time reads /proc)");
        return;
#endif
        if (!harness_daemon_as_root(TRUE))
                return;
        static const char *const opts[] = { "--xattr", NULL };
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "before", "made on the host\n");
        harness_up(h, opts);
        harness_daemon_as_root(FALSE);

        /* Its root is the shared folder... */
        g_autofree char *root = g_strdup_printf("/proc/%d/root", (int)h->pid);
        struct stat root_st, share_st;
        g_assert_cmpint(stat(root, &root_st), ==, 0);
        g_assert_cmpint(stat(h->share, &share_st), ==, 0);
        g_assert_cmpuint(root_st.st_dev, ==, share_st.st_dev);
        g_assert_cmpuint(root_st.st_ino, ==, share_st.st_ino);
        g_autofree char *seen = g_strdup_printf("%s/before", root);
        g_assert_true(g_file_test(seen, G_FILE_TEST_IS_REGULAR));
        g_autofree char *etc = g_strdup_printf("%s/etc", root);
        g_assert_false(g_file_test(etc, G_FILE_TEST_EXISTS));
        /* ... and its mount table that one mount. */
        g_autofree char *mountinfo_path = g_strdup_printf("/proc/%d/mountinfo", (int)h->pid);
        g_autofree char *mountinfo = NULL;
        g_assert_true(g_file_get_contents(mountinfo_path, &mountinfo, NULL, NULL));
        g_test_message("worker's mountinfo:\n%s", mountinfo);
        g_auto(GStrv) lines = g_strsplit(g_strchomp(mountinfo), "\n", -1);
        g_assert_cmpuint(g_strv_length(lines), ==, 1);
        g_auto(GStrv) fields = g_strsplit(lines[0], " ", -1);
        g_assert_cmpuint(g_strv_length(fields), >, 5);
        g_assert_cmpstr(fields[4], ==, "/");

        /* The share works as before: create, write, read, rename, xattrs, mkdir. */
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh = 0;
        uint32_t written = 0;
        assert_ok(vmm_create(v, VMM_ROOT, "new", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_write(v, e.nodeid, fh, 0, "inside", 6, &written));
        g_assert_cmpuint(written, ==, 6);
        char buf[16] = "";
        size_t got = 0;
        assert_ok(vmm_read(v, e.nodeid, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "inside", 6);
        assert_ok(vmm_release(v, e.nodeid, fh));
        assert_ok(vmm_rename(v, VMM_ROOT, "new", VMM_ROOT, "renamed", 0));
        g_autofree char *content = harness_read(h, "renamed");
        g_assert_cmpstr(content, ==, "inside");
        int r = vmm_setxattr(v, e.nodeid, "user.sluice-test", "1", 1, 0);
        if (r != -EOPNOTSUPP) {
                assert_ok(r);
                assert_ok(vmm_getxattr(v, e.nodeid, "user.sluice-test", buf, sizeof(buf), &got));
                g_assert_cmpmem(buf, got, "1", 1);
                g_autofree char *path = harness_path(h, "renamed");
                g_assert_cmpint(lgetxattr(path, "user.sluice-test", buf, sizeof(buf)), ==, 1);
        }
        assert_ok(vmm_mkdir(v, VMM_ROOT, "dir", 0755, NULL));
        g_autofree char *dir = harness_path(h, "dir");
        g_assert_true(g_file_test(dir, G_FILE_TEST_IS_DIR));
        harness_assert_outside_untouched(h);

        /* The socket, outside the share, still goes at exit. */
        kill(h->pid, SIGTERM);
        harness_assert_clean_exit(h, 10000, "SIGTERM");
        struct stat st;
        g_assert_cmpint(g_lstat(h->socket, &st), ==, -1);
        g_assert_cmpint(errno, ==, ENOENT);
}

/* Where the namespace cannot be made (here: no CAP_SYS_ADMIN, as in a
 * container), the worker says so and serves as before, with the same set. */
static void test_root_namespace_refused(void)
{
        if (!harness_daemon_as_root(TRUE))
                return;
        if (!g_file_test("/usr/bin/setpriv", G_FILE_TEST_IS_EXECUTABLE)) {
                harness_daemon_as_root(FALSE);
                g_test_skip("no /usr/bin/setpriv (util-linux)");
                return;
        }
        static const char *const opts[] = { "--xattr", NULL };
        g_autoptr(Harness) h = harness_new();
        g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, opts);
        g_ptr_array_insert(argv, 0, g_strdup("--"));
        g_ptr_array_insert(argv, 0, g_strdup("--bounding-set=-sys_admin"));
        g_ptr_array_insert(argv, 0, g_strdup("/usr/bin/setpriv"));
        harness_start_argv(h, argv);
        h->vmm = harness_connect(h, NULL);   /* its eventfds checked through /proc/self/fd */
        harness_daemon_as_root(FALSE);

        g_autofree char *root = g_strdup_printf("/proc/%d/root", (int)h->pid);
        struct stat root_st, host_root;
        g_assert_cmpint(stat(root, &root_st), ==, 0);
        g_assert_cmpint(stat("/", &host_root), ==, 0);
        g_assert_cmpuint(root_st.st_ino, ==, host_root.st_ino);   /* the host's view */
        assert_thread_caps(h->pid, DOCUMENTED_SET, TRUE);

        struct fuse_entry_out e;
        uint64_t fh = 0;
        assert_ok(vmm_create(h->vmm, VMM_ROOT, "f", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_release(h->vmm, e.nodeid, fh));
        int r = vmm_setxattr(h->vmm, e.nodeid, "user.sluice-test", "1", 1, 0);
        if (r != -EOPNOTSUPP) {
                char buf[4];
                size_t got = 0;
                assert_ok(r);
                assert_ok(vmm_getxattr(h->vmm, e.nodeid, "user.sluice-test", buf, sizeof(buf), &got));
                g_assert_cmpmem(buf, got, "1", 1);
        }
        kill(h->pid, SIGTERM);
        harness_assert_clean_exit(h, 10000, "SIGTERM");
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/privileges/root/capabilities", test_root_capabilities);
        g_test_add_func("/privileges/root/capabilities-options", test_root_capabilities_options);
        g_test_add_func("/privileges/root/write-kills-setid", test_root_write_kills_setid);
        g_test_add_func("/privileges/root/allow-setuid-keeps", test_root_allow_setuid_keeps);
        g_test_add_func("/privileges/desktop/write-kills-setid", test_desktop_write_kills_setid);
        g_test_add_func("/privileges/root/namespace", test_root_namespace);
        g_test_add_func("/privileges/root/namespace-refused", test_root_namespace_refused);
        return g_test_run();
}
