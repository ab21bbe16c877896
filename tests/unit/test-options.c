/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-options.c — sluice-fs command lines, good and bad, in both the
 * separate-option spelling and virtiofsd's -o lists that libvirt 9.0 passes. */
#include <errno.h>
#include <glib.h>
#include <string.h>

#include "options.h"

/* Parses a NULL-terminated list of arguments after "sluice-fs". */
static int parse(struct fs_options *o, const char *first, ...)
{
        g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
        const char *a;
        va_list ap;
        int r;

        g_ptr_array_add(args, g_strdup("sluice-fs"));
        va_start(ap, first);
        for (a = first; a; a = va_arg(ap, const char *))
                g_ptr_array_add(args, g_strdup(a));
        va_end(ap);
        g_ptr_array_add(args, NULL);
        r = options_parse((int)args->len - 1, (char **)args->pdata, o);
        return r;
}

static void test_defaults(void)
{
        struct fs_options o;

        g_assert_cmpint(parse(&o, "--socket-path=/tmp/s.sock", "--shared-dir", "/srv/My Files/", NULL),
                        ==, 0);
        g_assert_cmpstr(o.socket_path, ==, "/tmp/s.sock");
        g_assert_cmpstr(o.shared_dir, ==, "/srv/My Files/");
        g_assert_cmpstr(o.tag, ==, "My Files");    /* default tag: the folder's name */
        g_assert_cmpint(o.fd, ==, -1);
        g_assert_cmpint(o.control_fd, ==, -1);
        g_assert_cmpuint(o.queues, ==, 1);
        g_assert_cmpuint(o.poll_us, ==, 50);
        g_assert_cmpint(o.cache, ==, FS_CACHE_AUTO);
        g_assert_cmpint(o.sandbox, ==, FS_SANDBOX_SECCOMP);   /* the sandbox is the default */
        g_assert_false(o.readonly);
        g_assert_false(o.xattr);
        g_assert_false(o.exit_on_disconnect);   /* a socket path serves the next frontend */
        g_assert_cmpuint(o.guest_uid, ==, FS_ID_UNMAPPED);
        g_assert_cmpint(o.log_level, ==, LOG_LEVEL_INFO);
        /* Guest root makes no devices, set-ID files or privileged xattrs by default. */
        g_assert_false(o.allow_devices);
        g_assert_false(o.allow_setuid);
        g_assert_cmpuint(o.xattr_namespaces, ==, 0);
        /* Names as the host has them, matched case-sensitively. */
        g_assert_cmpint(o.names, ==, FS_NAMES_POSIX);
        g_assert_cmpint(o.case_mode, ==, FS_CASE_SENSITIVE);
        options_free(&o);
}

static void test_guest_policy_options(void)
{
        struct fs_options o;

        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/srv", "--allow-devices", "--allow-setuid",
                              "--xattr-namespaces=trusted,security", NULL), ==, 0);
        g_assert_true(o.allow_devices);
        g_assert_true(o.allow_setuid);
        g_assert_cmpuint(o.xattr_namespaces, ==, FS_XATTR_NS_TRUSTED | FS_XATTR_NS_SECURITY);
        options_free(&o);

        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/srv", "--xattr-namespaces", "user,system",
                              NULL), ==, 0);
        g_assert_cmpuint(o.xattr_namespaces, ==, FS_XATTR_NS_SYSTEM);
        options_free(&o);

        /* --allow-peer-uid: repeatable, kept in order; none given: none */
        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/srv", "--allow-peer-uid=64055",
                              "--allow-peer-uid", "0", NULL), ==, 0);
        g_assert_cmpuint(o.n_allow_peer_uids, ==, 2);
        g_assert_cmpuint(o.allow_peer_uids[0], ==, 64055);
        g_assert_cmpuint(o.allow_peer_uids[1], ==, 0);
        /* --allow-peer-pid: one process; none given: 0 (any process) */
        g_assert_cmpint(o.allow_peer_pid, ==, 0);
        options_free(&o);

        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/srv", "--allow-peer-pid=4242", NULL), ==, 0);
        g_assert_cmpint(o.allow_peer_pid, ==, 4242);
        options_free(&o);

        /* The last one wins; an empty list is "user.* only". */
        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/srv", "--xattr-namespaces=security",
                              "--xattr-namespaces=", NULL), ==, 0);
        g_assert_cmpuint(o.xattr_namespaces, ==, 0);
        options_free(&o);
}

static void test_sluice_options(void)
{
        struct fs_options o;

        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/srv/a", "--tag=docs", "--readonly",
                              "--cache=never", "--xattr", "--sandbox=none", "--queues=4",
                              "--poll-us", "0", "--control-fd=5", "--translate-uid=1000:4242",
                              "--translate-gid=100:4243", "--log-level=warning", NULL), ==, 0);
        g_assert_cmpint(o.fd, ==, 3);
        g_assert_true(o.exit_on_disconnect);    /* --fd: one VM, exit when it goes */
        g_assert_cmpstr(o.tag, ==, "docs");
        g_assert_true(o.readonly);
        g_assert_cmpint(o.cache, ==, FS_CACHE_NEVER);
        g_assert_true(o.xattr);
        g_assert_cmpint(o.sandbox, ==, FS_SANDBOX_NONE);
        g_assert_cmpuint(o.queues, ==, 4);
        g_assert_cmpuint(o.poll_us, ==, 0);
        g_assert_cmpint(o.control_fd, ==, 5);
        g_assert_cmpuint(o.guest_uid, ==, 1000);
        g_assert_cmpuint(o.host_uid, ==, 4242);
        g_assert_cmpuint(o.guest_gid, ==, 100);
        g_assert_cmpuint(o.host_gid, ==, 4243);
        g_assert_cmpint(o.log_level, ==, LOG_LEVEL_WARNING);
        options_free(&o);

        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/", "-d", "--cache=always", NULL), ==, 0);
        g_assert_cmpint(o.log_level, ==, LOG_LEVEL_DEBUG);
        g_assert_cmpint(o.cache, ==, FS_CACHE_ALWAYS);
        g_assert_cmpstr(o.tag, ==, "sluice");
        options_free(&o);

        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/", "--names=windows", "--case", "insensitive",
                              NULL), ==, 0);
        g_assert_cmpint(o.names, ==, FS_NAMES_WINDOWS);
        g_assert_cmpint(o.case_mode, ==, FS_CASE_INSENSITIVE);
        /* the one spelling, both ways */
        g_assert_cmpstr(options_names_name(o.names), ==, "windows");
        g_assert_cmpstr(options_case_name(o.case_mode), ==, "insensitive");
        options_free(&o);
        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/", "--names=windows", "--names=posix", NULL), ==, 0);
        g_assert_cmpint(o.names, ==, FS_NAMES_POSIX);
        options_free(&o);
}

/* What libvirt 9.0 runs: --fd=N -o source=…,cache=…,sandbox=…,xattr --thread-pool-size=N. */
static void test_virtiofsd_compat(void)
{
        struct fs_options o;

        g_assert_cmpint(parse(&o, "--fd=7", "-o", "source=/srv/a,,b,cache=none,sandbox=chroot,xattr,no_flock,posix_lock",
                              "--thread-pool-size=16", "-f", NULL), ==, 0);
        g_assert_cmpstr(o.shared_dir, ==, "/srv/a,b");   /* ",," is an escaped comma */
        g_assert_cmpint(o.cache, ==, FS_CACHE_NEVER);
        g_assert_cmpint(o.sandbox, ==, FS_SANDBOX_SECCOMP);
        g_assert_true(o.xattr);
        g_assert_cmpstr(o.tag, ==, "a,b");
        options_free(&o);

        g_assert_cmpint(parse(&o, "--socket-path=/tmp/x", "-o", "source=/srv", "-o", "readonly,log_level=debug",
                              "--log-level", "warn", "--sandbox", "namespace", NULL), ==, 0);
        g_assert_true(o.readonly);
        g_assert_cmpint(o.log_level, ==, LOG_LEVEL_WARNING);   /* the later one wins */
        g_assert_cmpint(o.sandbox, ==, FS_SANDBOX_SECCOMP);
        options_free(&o);

        /* Rust virtiofsd's --sandbox none and the -o spelling turn it off; the
         * last word wins, so a later namespace turns it back on. */
        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/srv", "--sandbox", "none", NULL), ==, 0);
        g_assert_cmpint(o.sandbox, ==, FS_SANDBOX_NONE);
        options_free(&o);
        g_assert_cmpint(parse(&o, "--fd=3", "-o", "source=/srv,sandbox=none", NULL), ==, 0);
        g_assert_cmpint(o.sandbox, ==, FS_SANDBOX_NONE);
        options_free(&o);
        g_assert_cmpint(parse(&o, "--fd=3", "-o", "source=/srv,sandbox=none", "--sandbox=namespace",
                              NULL), ==, 0);
        g_assert_cmpint(o.sandbox, ==, FS_SANDBOX_SECCOMP);
        options_free(&o);

        /* The shared dir from the separate option, then -o source overrides it. */
        g_assert_cmpint(parse(&o, "--fd=3", "--shared-dir=/one", "-osource=/two", NULL), ==, 0);
        g_assert_cmpstr(o.shared_dir, ==, "/two");
        options_free(&o);
}

/* Each bad command line: -EINVAL, and one line on stderr that names the
 * problem and points at --help. */
static const struct {
        const char *args[6];
        const char *message;
} bad_lines[] = {
        { { "--shared-dir=/srv" }, "no socket" },
        { { "--socket-path=/tmp/s" }, "no folder to share" },
        { { "--socket-path=/tmp/s", "--fd=3", "--shared-dir=/srv" }, "cannot be used together" },
        { { "--fd=3", "--shared-dir=/srv", "--bogus" }, "unknown option '--bogus'" },
        { { "--fd=3", "--shared-dir=/srv", "-z" }, "unknown option '-z'" },
        { { "--fd=3", "--shared-dir=/srv", "--cache=sometimes" }, "unknown cache mode 'sometimes'" },
        { { "--fd=3", "--shared-dir=/srv", "--sandbox=jail" }, "unknown sandbox mode" },
        { { "--fd=3", "--shared-dir=/srv", "--names=dos" }, "unknown names mode 'dos' (posix or windows)" },
        { { "--fd=3", "--shared-dir=/srv", "--names=Windows" }, "unknown names mode" },
        { { "--fd=3", "--shared-dir=/srv", "--names=" }, "unknown names mode" },
        { { "--fd=3", "--shared-dir=/srv", "--case=upper" }, "unknown case mode 'upper' (sensitive or insensitive)" },
        { { "--fd=3", "--shared-dir=/srv", "--queues=0" }, "--queues must be" },
        { { "--fd=3", "--shared-dir=/srv", "--queues=65" }, "--queues must be" },
        { { "--fd=3", "--shared-dir=/srv", "--queues=2x" }, "--queues must be" },
        { { "--fd=3", "--shared-dir=/srv", "--poll-us=-1" }, "--poll-us must be" },
        { { "--fd=-3", "--shared-dir=/srv" }, "--fd needs a file descriptor" },
        { { "--fd=3", "--shared-dir=/srv", "--control-fd=three" }, "--control-fd needs" },
        { { "--fd=3", "--shared-dir=/srv", "--control-fd=3" }, "must be different" },
        { { "--fd=3", "--shared-dir=/srv", "--tag=0123456789012345678901234567890123456" }, "--tag must be" },
        { { "--fd=3", "--shared-dir=/srv", "--translate-uid=1000" }, "GUEST:HOST" },
        { { "--fd=3", "--shared-dir=/srv", "--translate-gid=a:b" }, "GUEST:HOST" },
        { { "--fd=3", "--shared-dir=/srv", "--translate-uid=1:4294967295" }, "GUEST:HOST" },
        { { "--fd=3", "--shared-dir=/srv", "--log-level=loud" }, "unknown log level" },
        { { "--fd=3", "-o", "source=/srv,frobnicate" }, "unknown -o option 'frobnicate'" },
        { { "--fd=3", "-o", "source=/srv,cache=maybe" }, "unknown cache mode" },
        { { "--fd=3", "--shared-dir=/srv", "extra" }, "unexpected argument 'extra'" },
        { { "--fd=3", "--shared-dir" }, "needs a value" },
        { { "--fd=3", "--shared-dir=/srv", "--thread-pool-size=many" }, "--thread-pool-size needs" },
        { { "--fd=3", "--shared-dir=/srv", "--xattr-namespaces=trusted,selinux" }, "unknown xattr namespace 'selinux'" },
        { { "--fd=3", "--shared-dir=/srv", "--xattr-namespaces=Security" }, "unknown xattr namespace 'Security'" },
        { { "--fd=3", "--shared-dir=/srv", "--allow-peer-uid=qemu" }, "--allow-peer-uid needs a user id" },
        { { "--fd=3", "--shared-dir=/srv", "--allow-peer-uid=4294967295" }, "--allow-peer-uid needs a user id" },
        { { "--fd=3", "--shared-dir=/srv", "--allow-peer-uid=-1" }, "--allow-peer-uid needs a user id" },
        { { "--fd=3", "--shared-dir=/srv", "--allow-peer-pid=0" }, "--allow-peer-pid needs a process id" },
        { { "--fd=3", "--shared-dir=/srv", "--allow-peer-pid=qemu" }, "--allow-peer-pid needs a process id" },
        { { "--fd=3", "--shared-dir=/srv", "--allow-peer-pid=2147483648" }, "--allow-peer-pid needs a process id" },
};

static void test_bad_line(gconstpointer data)
{
        unsigned i = GPOINTER_TO_UINT(data);
        g_autofree char *pattern = NULL;

        if (g_test_subprocess()) {
                struct fs_options o;
                const char *const *a = bad_lines[i].args;

                g_assert_cmpint(parse(&o, a[0], a[1], a[2], a[3], a[4], a[5]), ==, -EINVAL);
                options_free(&o);
                return;
        }
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        pattern = g_strdup_printf("sluice-fs: *%s*. Try 'sluice-fs --help'.\n", bad_lines[i].message);
        g_test_trap_assert_stderr(pattern);
        g_test_trap_assert_stdout("");
}

static void test_help_version(void)
{
        if (g_test_subprocess()) {
                struct fs_options o;

                g_assert_cmpint(parse(&o, "--help", NULL), ==, 1);
                return;
        }
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        /* Every option is documented, and so is what happens on disconnect. */
        g_test_trap_assert_stdout("*--socket-path*--fd*--shared-dir*--tag*--readonly*--cache*"
                                  "--xattr*--translate-uid*--translate-gid*--allow-devices*--allow-setuid*"
                                  "--xattr-namespaces*--sandbox*--queues*"
                                  "--poll-us*--allow-peer-uid*--allow-peer-pid*--control-fd*--log-level*--debug*"
                                  "--print-capabilities*--help*--version*disconnects*");
}

static void test_version(void)
{
        if (g_test_subprocess()) {
                struct fs_options o;

                g_assert_cmpint(parse(&o, "-V", NULL), ==, 1);
                return;
        }
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        g_test_trap_assert_stdout("sluice-fs *.*.*\n");
}

/* libvirt reads this JSON to learn what the binary supports. */
static void test_print_capabilities(void)
{
        if (g_test_subprocess()) {
                struct fs_options o;

                /* No shared dir or socket needed. */
                g_assert_cmpint(parse(&o, "--print-capabilities", NULL), ==, 1);
                return;
        }
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        g_test_trap_assert_stdout("{*\"type\": \"fs\"*\"features\": [*\"separate-options\"*]*}\n");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/options/defaults", test_defaults);
        g_test_add_func("/options/sluice-options", test_sluice_options);
        g_test_add_func("/options/virtiofsd-compat", test_virtiofsd_compat);
        g_test_add_func("/options/guest-policy", test_guest_policy_options);
        g_test_add_func("/options/help", test_help_version);
        g_test_add_func("/options/version", test_version);
        g_test_add_func("/options/print-capabilities", test_print_capabilities);
        for (unsigned i = 0; i < G_N_ELEMENTS(bad_lines); i++) {
                g_autofree char *path = g_strdup_printf("/options/bad/%u", i);

                g_test_add_data_func(path, GUINT_TO_POINTER(i), test_bad_line);
        }
        return g_test_run();
}
