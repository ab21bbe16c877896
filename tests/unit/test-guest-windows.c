/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-windows.c — the drive letters a share may ask for in a Windows
 * guest, and reading what Windows' programs print. */
#include <glib.h>
#include <string.h>

#include "errors.h"
#include "guest-windows.h"

static void assert_refused(const char *drive, const char *says)
{
        g_autoptr(GError) error = NULL;

        g_assert_false(sluice_guest_windows_check_drive(drive, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
        if (strstr(error->message, says) == NULL)
                g_error("refusing “%s” says “%s”, not “%s”", drive, error->message, says);
        g_assert_null(strchr(error->message, '\n'));
}

static void test_check_drive(void)
{
        static const char *const good[] = { "", "D:", "Z:", "z:", "m:", "Q:" };

        for (gsize i = 0; i < G_N_ELEMENTS(good); i++)
                g_assert_true(sluice_guest_windows_check_drive(good[i], NULL));
        g_assert_true(sluice_guest_windows_check_drive(NULL, NULL));   /* first free from Z: down */

        assert_refused("C:", "where Windows itself lives");
        assert_refused("c:", "where Windows itself lives");
        assert_refused("A:", "floppy");
        assert_refused("b:", "floppy");
        assert_refused("Z", "not a drive letter");
        assert_refused("Z:\\", "not a drive letter");
        assert_refused("ZZ:", "not a drive letter");
        assert_refused("1:", "not a drive letter");
        assert_refused("Ä:", "not a drive letter");
        assert_refused("Z:\n", "Z:\\n");
        assert_refused("\xff:", "not UTF-8");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/guest-windows/check-drive", test_check_drive);
        return g_test_run();
}
