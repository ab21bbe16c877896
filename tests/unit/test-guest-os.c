/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-os.c — which guest OS (which table of guest-ops.h) a VM or a
 * place has, the one rule every place in a guest goes through (what a
 * person sets as Share.MountPoint and what a guest answers alike), the
 * hint a user reads, and the one rule of what untrusted text is shown. */
#include <glib.h>
#include <string.h>

#include "errors.h"
#include "guest-os.h"
#include "printable.h"

static void test_ops_for_vm(void)
{
        /* the running guest's agent is believed first */
        g_assert_true(sluice_guest_os_ops("", SLUICE_WIRE_GUEST_OS_LINUX) == &sluice_guest_linux_ops);
        g_assert_true(sluice_guest_os_ops(NULL, SLUICE_WIRE_GUEST_OS_WINDOWS) == &sluice_guest_windows_ops);
        g_assert_true(sluice_guest_os_ops("win11", SLUICE_WIRE_GUEST_OS_LINUX) == &sluice_guest_linux_ops);
        /* without its word, libosinfo's id names Windows… */
        g_assert_true(sluice_guest_os_ops("win2k22", SLUICE_WIRE_GUEST_OS_UNKNOWN) == &sluice_guest_windows_ops);
        /* …but not Linux: its other ids name BSDs too */
        g_assert_null(sluice_guest_os_ops("freebsd13.1", SLUICE_WIRE_GUEST_OS_UNKNOWN));
        g_assert_null(sluice_guest_os_ops("", SLUICE_WIRE_GUEST_OS_UNKNOWN));
        g_assert_null(sluice_guest_os_ops(NULL, SLUICE_WIRE_GUEST_OS_UNKNOWN));
}

static void test_ops_for_place(void)
{
        g_assert_true(sluice_guest_os_ops_for_place("/mnt/docs") == &sluice_guest_linux_ops);
        g_assert_true(sluice_guest_os_ops_for_place("Z:") == &sluice_guest_windows_ops);
        g_assert_true(sluice_guest_os_ops_for_place("z:") == &sluice_guest_windows_ops);
        g_assert_null(sluice_guest_os_ops_for_place(""));
        g_assert_null(sluice_guest_os_ops_for_place(NULL));
        g_assert_null(sluice_guest_os_ops_for_place("Z:\\docs"));
        g_assert_null(sluice_guest_os_ops_for_place("docs"));
}

static void assert_place_refused(const char *place, const char *says)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *shown = g_strescape(place, NULL);

        if (sluice_guest_os_check_place(place, &error))
                g_error("the place “%s” was taken", shown);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
        if (strstr(error->message, says) == NULL)
                g_error("refusing “%s” says “%s”, not “%s”", shown, error->message, says);
        /* one readable line, whatever the place holds */
        for (const char *p = error->message; *p != '\0'; p++)
                g_assert_cmpint((unsigned char)*p, >=, 0x20);
}

/* One rule for every place: the 255 bytes of a Linux mount point (not the
 * 4096 of a path), a drive exactly as "Z:" (not "Z:" and whatever follows). */
static void test_check_place(void)
{
        static const char *const good[] = { "", "/mnt/docs", "/home/ann/My Docs", "Z:", "d:" };
        char path[300];

        for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
                g_autoptr(GError) error = NULL;

                if (!sluice_guest_os_check_place(good[i], &error))
                        g_error("“%s” refused: %s", good[i], error->message);
        }
        path[0] = '/';
        memset(path + 1, 'a', 255);
        path[256] = '\0';
        assert_place_refused(path, "255 bytes");
        assert_place_refused("Z:docs", "not a place in a guest");
        assert_place_refused("Z:\\", "not a place in a guest");
        assert_place_refused("docs", "not a place in a guest");
        assert_place_refused("C:", "Windows itself");
        assert_place_refused("/proc", "system folder");
        assert_place_refused("/mnt/a\nb", "control");
        assert_place_refused("Z\n:", "Z\\n:");
        assert_place_refused("\xff:", "\\xff:");
        g_assert_false(sluice_guest_os_check_place(NULL, NULL));
}

/* What a user reads in Share.GuestHint, by the VM's OS. */
static void test_hint(void)
{
        g_autofree char *linux_hint = sluice_guest_os_hint("", SLUICE_WIRE_GUEST_OS_LINUX, "docs");
        g_autofree char *windows_hint = sluice_guest_os_hint("win10", SLUICE_WIRE_GUEST_OS_UNKNOWN, "docs");
        g_autofree char *unknown_hint = sluice_guest_os_hint("", SLUICE_WIRE_GUEST_OS_UNKNOWN, "docs");

        g_assert_cmpstr(linux_hint, ==, "In the guest: mkdir -p /mnt/docs && mount -t virtiofs docs /mnt/docs");
        g_assert_nonnull(strstr(windows_hint, "WinFsp"));
        g_assert_nonnull(strstr(windows_hint, "“docs”"));
        /* an OS nobody named: the mount command most guests take */
        g_assert_cmpstr(unknown_hint, ==, linux_hint);
}

/* The default place each OS gives a share nobody placed. */
static void test_default_place(void)
{
        g_autofree char *linux_place = sluice_guest_linux_ops.default_place("docs");
        g_autofree char *windows_place = sluice_guest_windows_ops.default_place("docs");

        g_assert_cmpstr(linux_place, ==, "/mnt/docs");
        g_assert_cmpstr(windows_place, ==, "");  /* Windows picks the first free letter from Z: down */
        g_assert_true(sluice_guest_linux_ops.check_place(linux_place, NULL));
        g_assert_true(sluice_guest_windows_ops.check_place(windows_place, NULL));
}

/* The one rule of what of an untrusted text is shown. */
static void test_printable(void)
{
        g_autofree char *quoted = sluice_printable("it said:\x1b[31m red\n\xff \u202eevil", -1, 100);
        g_autofree char *cut = sluice_printable("abcdef", -1, 3);
        g_autofree char *escaped = sluice_printable_escaped("a\nb\tc\x01\u202ed\xff");
        g_autofree char *none = sluice_printable(NULL, 5, 10);

        /* escapes, line breaks, bidi overrides: spaces, invalid UTF-8 replaced */
        g_assert_true(g_utf8_validate(quoted, -1, NULL));
        g_assert_null(strchr(quoted, '\x1b'));
        g_assert_null(strchr(quoted, '\n'));
        g_assert_null(strstr(quoted, "\u202e"));
        g_assert_true(g_str_has_prefix(quoted, "it said: [31m red"));
        g_assert_cmpstr(cut, ==, "abc…");
        g_assert_cmpstr(escaped, ==, "a\\nb\\tc\\x01\\u202ed\\xff");
        g_assert_cmpstr(none, ==, "");
        g_assert_false(sluice_printable_char(0x1b));
        g_assert_false(sluice_printable_char(0x2028));
        g_assert_true(sluice_printable_char(0xe9));
}

/* A VM name in a command line shown to a person: as it is, or quoted. */
static void test_shell_word(void)
{
        g_autofree char *plain = sluice_shell_word("win11-pro_2.x");
        g_autofree char *spaced = sluice_shell_word("my vm");
        g_autofree char *hostile = sluice_shell_word("a'; rm -rf ~");

        g_assert_cmpstr(plain, ==, "win11-pro_2.x");
        g_assert_cmpstr(spaced, ==, "'my vm'");
        g_assert_cmpstr(hostile, ==, "'a'\\''; rm -rf ~'");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/guest-os/ops-for-vm", test_ops_for_vm);
        g_test_add_func("/guest-os/ops-for-place", test_ops_for_place);
        g_test_add_func("/guest-os/check-place", test_check_place);
        g_test_add_func("/guest-os/hint", test_hint);
        g_test_add_func("/guest-os/default-place", test_default_place);
        g_test_add_func("/printable/one-rule", test_printable);
        g_test_add_func("/printable/shell-word", test_shell_word);
        return g_test_run();
}
