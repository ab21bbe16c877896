/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-capabilities.c — the capabilities a worker keeps (capabilities.c):
 * the set for each option, and, run as root, the drop itself in a child
 * process, with the fsuid fix-up that per-request credentials rely on. */
#include <glib.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "capabilities.h"
#include "log.h"
#include "options.h"

#define BIT(c) (UINT64_C(1) << (c))
#define BASE (BIT(CAP_CHOWN) | BIT(CAP_DAC_OVERRIDE) | BIT(CAP_FOWNER) | BIT(CAP_SETGID) | \
              BIT(CAP_SETUID))

static void test_wanted(void)
{
        struct fs_options o = { 0 };

        g_assert_cmphex(caps_wanted(&o, false), ==, 0);
        g_assert_cmphex(caps_wanted(&o, true), ==, BASE);
        o.allow_setuid = true;
        g_assert_cmphex(caps_wanted(&o, true), ==, BASE | BIT(CAP_FSETID));
        g_assert_cmphex(caps_wanted(&o, false), ==, 0);
        o = (struct fs_options){ .allow_devices = true };
        g_assert_cmphex(caps_wanted(&o, true), ==, BASE | BIT(CAP_MKNOD));
        o = (struct fs_options){ .xattr_namespaces = FS_XATTR_NS_TRUSTED };
        g_assert_cmphex(caps_wanted(&o, true), ==, BASE | BIT(CAP_SYS_ADMIN));
        o = (struct fs_options){ .xattr_namespaces = FS_XATTR_NS_SECURITY };
        g_assert_cmphex(caps_wanted(&o, true), ==, BASE | BIT(CAP_SYS_ADMIN) | BIT(CAP_SETFCAP));
        o = (struct fs_options){ .xattr_namespaces = FS_XATTR_NS_SYSTEM };
        g_assert_cmphex(caps_wanted(&o, true), ==, BASE);
}

static uint64_t effective_now(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { { 0 } };

        if (syscall(SYS_capget, &h, d) < 0)
                return UINT64_MAX;
        return d[0].effective | (uint64_t)d[1].effective << 32;
}

/* In a child: drop, then a request's fsuid switch takes the file-system
 * capabilities away and fsuid 0 gives back exactly the kept ones. */
static void test_drop_as_root(void)
{
        if (geteuid() != 0) {
                g_test_skip("needs root");
                return;
        }
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                struct fs_options o = { 0 };
                log_set_level(LOG_LEVEL_ERROR);
                if (caps_drop(&o, true) < 0 || effective_now() != BASE)
                        _exit(1);
                (void)setfsuid(1234);
                if (effective_now() != (BASE & ~(BIT(CAP_CHOWN) | BIT(CAP_DAC_OVERRIDE) | BIT(CAP_FOWNER))))
                        _exit(2);
                (void)setfsuid(0);
                if (effective_now() != BASE || (uid_t)setfsuid((uid_t)-1) != 0)
                        _exit(3);
                _exit(0);
        }
        int status = 0;
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/capabilities/wanted", test_wanted);
        g_test_add_func("/capabilities/drop-as-root", test_drop_as_root);
        return g_test_run();
}
