/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-policy.c — what guest root may make on the host (guest-policy.c),
 * the daemon's permission checks between guest users (perm.c) and the log
 * rate limit that keeps refusals from flooding the log (log.c). */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest-policy.h"
#include "log.h"
#include "options.h"
#include "perm.h"

static void test_devices(void)
{
        struct fs_options o = { 0 };
        struct policy p;

        policy_init(&p, &o);
        g_assert_cmpint(policy_check_mknod(&p, S_IFCHR | 0666, "null", 0), ==, -EPERM);
        g_assert_cmpint(policy_check_mknod(&p, S_IFBLK | 0600, "sda", 0), ==, -EPERM);
        g_assert_cmpint(policy_check_mknod(&p, S_IFIFO | 0644, "fifo", 0), ==, 0);
        g_assert_cmpint(policy_check_mknod(&p, S_IFSOCK | 0644, "sock", 0), ==, 0);
        g_assert_cmpint(policy_check_mknod(&p, S_IFREG | 0644, "file", 0), ==, 0);
        o.allow_devices = true;
        policy_init(&p, &o);
        g_assert_cmpint(policy_check_mknod(&p, S_IFCHR | 0666, "null", 0), ==, 0);
        g_assert_cmpint(policy_check_mknod(&p, S_IFBLK | 0600, "sda", 0), ==, 0);
}

static void test_setid_bits(void)
{
        struct fs_options o = { 0 };
        struct policy p;

        policy_init(&p, &o);
        g_assert_cmphex(policy_mode(&p, S_IFREG, 04755, "f", 0), ==, 0755);
        g_assert_cmphex(policy_mode(&p, S_IFREG, 02755, "f", 0), ==, 0755);
        g_assert_cmphex(policy_mode(&p, S_IFREG, 07777, "f", 0), ==, 01777);
        g_assert_cmphex(policy_mode(&p, S_IFIFO, 06644, "f", 0), ==, 0644);
        /* set-group-ID directories stay; S_ISUID on a directory goes */
        g_assert_cmphex(policy_mode(&p, S_IFDIR, 02775, "d", 0), ==, 02775);
        g_assert_cmphex(policy_mode(&p, S_IFDIR, 07777, "d", 0), ==, 03777);
        /* type bits never come back */
        g_assert_cmphex(policy_mode(&p, S_IFREG, S_IFREG | 0644, "f", 0), ==, 0644);
        o.allow_setuid = true;
        policy_init(&p, &o);
        g_assert_cmphex(policy_mode(&p, S_IFREG, 06755, "f", 0), ==, 06755);
}

static void test_xattr_namespaces(void)
{
        struct fs_options o = { 0 };
        struct policy p;

        policy_init(&p, &o);
        g_assert_cmpint(policy_check_xattr_write(&p, "user.x", 0), ==, 0);
        g_assert_cmpint(policy_check_xattr_write(&p, "security.capability", 0), ==, -EPERM);
        g_assert_cmpint(policy_check_xattr_write(&p, "security.selinux", 0), ==, -EPERM);
        g_assert_cmpint(policy_check_xattr_write(&p, "trusted.overlay.opaque", 0), ==, -EPERM);
        g_assert_cmpint(policy_check_xattr_write(&p, "system.posix_acl_access", 0), ==, -EOPNOTSUPP);
        /* Not a namespace prefix: left to the host (which refuses unknown ones). */
        g_assert_cmpint(policy_check_xattr_write(&p, "securityx", 0), ==, 0);
        g_assert_cmpint(policy_check_xattr_write(&p, "Security.capability", 0), ==, 0);
        o.xattr_namespaces = FS_XATTR_NS_TRUSTED | FS_XATTR_NS_SYSTEM;
        policy_init(&p, &o);
        g_assert_cmpint(policy_check_xattr_write(&p, "trusted.x", 0), ==, 0);
        g_assert_cmpint(policy_check_xattr_write(&p, "system.posix_acl_default", 0), ==, 0);
        g_assert_cmpint(policy_check_xattr_write(&p, "security.capability", 0), ==, -EPERM);
}

static void test_readonly_locks(void)
{
        g_assert_cmpint(policy_check_lock(true, F_WRLCK, false, 1), ==, -EBADF);
        g_assert_cmpint(policy_check_lock(true, F_WRLCK, true, 1), ==, -EBADF);
        g_assert_cmpint(policy_check_lock(true, F_RDLCK, false, 1), ==, 0);
        g_assert_cmpint(policy_check_lock(true, F_UNLCK, true, 1), ==, 0);
        g_assert_cmpint(policy_check_lock(false, F_WRLCK, false, 1), ==, 0);
}

/* Mounts of the kernel's own state are not entered; data file systems are. */
static void test_pseudo_fs_mounts(void)
{
        const char *const refused[] = { "/proc", "/proc/self", "/sys", "/sys/kernel" };
        const char *const allowed[] = { "/", "/tmp", "/dev/shm" };

        for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
                int fd = open(refused[i], O_PATH | O_CLOEXEC);

                if (fd < 0)
                        continue;       /* not mounted here */
                g_test_message("%s", refused[i]);
                g_assert_cmpint(policy_check_mount(fd, refused[i]), ==, -EACCES);
                close(fd);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(allowed); i++) {
                int fd = open(allowed[i], O_PATH | O_CLOEXEC);

                if (fd < 0)
                        continue;
                g_assert_cmpint(policy_check_mount(fd, allowed[i]), ==, 0);
                close(fd);
        }
}

static void test_perm_access(void)
{
        const struct perm_who a = { 1000, 1000 }, b = { 1001, 1001 }, root = { 0, 0 };
        const struct perm_who member = { 1002, 500 };
        const struct perm_node private = { 1000, 1000, S_IFREG | 0600 };
        const struct perm_node group_rw = { 1000, 500, S_IFREG | 0660 };
        const struct perm_node other_r_only = { 1000, 500, S_IFREG | 0604 };

        g_assert_cmpint(perm_access(&a, &private, R_OK | W_OK), ==, 0);
        g_assert_cmpint(perm_access(&b, &private, R_OK), ==, -EACCES);
        g_assert_cmpint(perm_access(&b, &private, W_OK), ==, -EACCES);
        g_assert_cmpint(perm_access(&root, &private, R_OK | W_OK | X_OK), ==, 0);
        /* Owner class only: the owner's bits decide even when others' grant more. */
        const struct perm_node owner_none = { 1000, 1000, S_IFREG | 0077 };
        g_assert_cmpint(perm_access(&a, &owner_none, R_OK), ==, -EACCES);
        /* Primary group: the group class for sure. */
        g_assert_cmpint(perm_access(&member, &group_rw, W_OK), ==, 0);
        g_assert_cmpint(perm_access(&member, &other_r_only, R_OK), ==, -EACCES);
        /* Unknown membership: group or other bits may grant (b might be in group 500). */
        g_assert_cmpint(perm_access(&b, &group_rw, R_OK | W_OK), ==, 0);
        g_assert_cmpint(perm_access(&b, &other_r_only, R_OK), ==, 0);
        g_assert_cmpint(perm_access(&b, &other_r_only, W_OK), ==, -EACCES);
}

static void test_perm_owner_and_sticky(void)
{
        const struct perm_who a = { 1000, 1000 }, b = { 1001, 1001 }, root = { 0, 0 };
        const struct perm_node afile = { 1000, 1000, S_IFREG | 0644 };
        const struct perm_node sticky = { 0, 0, S_IFDIR | 01777 };
        const struct perm_node open_dir = { 0, 0, S_IFDIR | 0777 };
        const struct perm_node closed_dir = { 0, 0, S_IFDIR | 0755 };
        const struct perm_node bdir = { 1001, 1001, S_IFDIR | 01777 };

        g_assert_cmpint(perm_owner(&a, &afile), ==, 0);
        g_assert_cmpint(perm_owner(&b, &afile), ==, -EPERM);
        g_assert_cmpint(perm_owner(&root, &afile), ==, 0);
        g_assert_cmpint(perm_remove(&b, &sticky, &afile), ==, -EPERM);
        g_assert_cmpint(perm_remove(&a, &sticky, &afile), ==, 0);
        g_assert_cmpint(perm_remove(&root, &sticky, &afile), ==, 0);
        g_assert_cmpint(perm_remove(&b, &bdir, &afile), ==, 0);      /* b owns the directory */
        g_assert_cmpint(perm_remove(&b, &open_dir, &afile), ==, 0);
        g_assert_cmpint(perm_remove(&b, &closed_dir, &afile), ==, -EACCES);
}

static void test_ratelimit(void)
{
        struct log_ratelimit rl = LOG_RATELIMIT_INIT;
        unsigned suppressed = 99;
        uint64_t t = 5000000;

        for (unsigned i = 0; i < LOG_RATELIMIT_BURST; i++) {
                g_assert_true(log_ratelimit_pass(&rl, t + i, &suppressed));
                g_assert_cmpuint(suppressed, ==, 0);
        }
        for (unsigned i = 0; i < 7; i++)
                g_assert_false(log_ratelimit_pass(&rl, t + 100 + i, &suppressed));
        /* Still inside the window: quiet. */
        g_assert_false(log_ratelimit_pass(&rl, t + LOG_RATELIMIT_INTERVAL_USEC - 1, &suppressed));
        /* A new window: the first line says how many were dropped. */
        g_assert_true(log_ratelimit_pass(&rl, t + LOG_RATELIMIT_INTERVAL_USEC, &suppressed));
        g_assert_cmpuint(suppressed, ==, 8);
        g_assert_true(log_ratelimit_pass(&rl, t + LOG_RATELIMIT_INTERVAL_USEC + 1, &suppressed));
        g_assert_cmpuint(suppressed, ==, 0);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        log_set_level(LOG_LEVEL_ERROR);   /* the refusals' warnings are not the point here */
        g_test_add_func("/policy/devices", test_devices);
        g_test_add_func("/policy/setid-bits", test_setid_bits);
        g_test_add_func("/policy/xattr-namespaces", test_xattr_namespaces);
        g_test_add_func("/policy/readonly-locks", test_readonly_locks);
        g_test_add_func("/policy/pseudo-fs-mounts", test_pseudo_fs_mounts);
        g_test_add_func("/perm/access", test_perm_access);
        g_test_add_func("/perm/owner-and-sticky", test_perm_owner_and_sticky);
        g_test_add_func("/log/ratelimit", test_ratelimit);
        return g_test_run();
}
