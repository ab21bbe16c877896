/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-share-tag.c — the tags a guest can mount without quoting, and the
 * tags the service makes from a folder's name. */
#include <glib.h>
#include <string.h>

#include "errors.h"
#include "share-tag.h"

static void assert_refused(const char *tag, const char *says)
{
        g_autoptr(GError) error = NULL;

        g_assert_false(sluice_share_tag_check(tag, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
        if (says != NULL && strstr(error->message, says) == NULL)
                g_error("refusing “%s” says “%s”, not “%s”", tag, error->message, says);
}

static void test_check(void)
{
        static const char *const good[] = { "home", "Photos_2024", "a.b-c", "9lives", "x" };
        char longest[SLUICE_TAG_MAX_BYTES + 2];

        for (gsize i = 0; i < G_N_ELEMENTS(good); i++)
                g_assert_true(sluice_share_tag_check(good[i], NULL));
        memset(longest, 'a', SLUICE_TAG_MAX_BYTES);
        longest[SLUICE_TAG_MAX_BYTES] = '\0';
        g_assert_true(sluice_share_tag_check(longest, NULL));   /* virtio-fs holds 36 bytes */

        longest[SLUICE_TAG_MAX_BYTES] = 'a';
        longest[SLUICE_TAG_MAX_BYTES + 1] = '\0';
        assert_refused(longest, "at most 36 bytes");
        assert_refused("", "empty");
        assert_refused(NULL, "empty");
        assert_refused("my share", "quoting");        /* a space splits an fstab line */
        assert_refused("a/b", "quoting");
        assert_refused("café", "quoting");
        assert_refused("-o", "option");                /* mount would take it for one */
        assert_refused(".hidden", "start it with a letter or a digit");
}

/* A newline in a refused tag is shown as \n: the message stays one line. */
static void test_printable_messages(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *shown = sluice_share_tag_printable("a\nb\tc\x01");

        g_assert_cmpstr(shown, ==, "a\\nb\\tc\\x01");
        g_assert_false(sluice_share_tag_check("evil\nline", &error));
        g_assert_nonnull(strstr(error->message, "evil\\nline"));
        g_assert_null(strchr(error->message, '\n'));
}

static gboolean taken_in(const char *tag, gpointer user_data)
{
        return g_strv_contains(user_data, tag);
}

static char *derive1(const char *name, const char *const *taken)
{
        const char *names[] = { name, NULL };

        return sluice_share_tag_derive(names, taken != NULL ? taken_in : NULL, (gpointer)taken);
}

static void test_derive(void)
{
        static const char *const home_taken[] = { "home", "home-2", NULL };
        const char *names[] = { "-- not valid --", "Fallback", NULL };
        const char *nothing[] = { "홈", "???", NULL };
        g_autofree char *plain = derive1("home", NULL);
        g_autofree char *third = derive1("home", home_taken);
        g_autofree char *accents = derive1("Été à Paris", NULL);
        g_autofree char *spaces = derive1("  my  holiday photos ", NULL);
        g_autofree char *korean = derive1("사진", NULL);
        g_autofree char *first_usable = sluice_share_tag_derive(names, NULL, NULL);
        g_autofree char *none = sluice_share_tag_derive(nothing, NULL, NULL);
        g_autofree char *longname = derive1("a-very-long-folder-name-that-goes-on-and-on", NULL);

        g_assert_cmpstr(plain, ==, "home");
        g_assert_cmpstr(third, ==, "home-3");
        g_assert_cmpstr(accents, ==, "Ete_a_Paris");
        g_assert_cmpstr(spaces, ==, "my_holiday_photos");
        g_assert_cmpstr(korean, ==, "share");
        g_assert_cmpstr(first_usable, ==, "not_valid");
        g_assert_cmpstr(none, ==, "share");
        /* cut to fit, never ending on a separator */
        g_assert_cmpuint(strlen(longname), <=, SLUICE_TAG_MAX_BYTES);
        g_assert_true(g_ascii_isalnum(longname[strlen(longname) - 1]));
        g_assert_true(sluice_share_tag_check(longname, NULL));
}

/* The suffix fits too: a long name's "-2" cuts the name, not the limit. */
static void test_derive_long_taken(void)
{
        char name[SLUICE_TAG_MAX_BYTES + 1];
        const char *taken[] = { name, NULL };
        g_autofree char *second = NULL;

        memset(name, 'x', SLUICE_TAG_MAX_BYTES);
        name[SLUICE_TAG_MAX_BYTES] = '\0';
        second = derive1(name, taken);
        g_assert_cmpuint(strlen(second), ==, SLUICE_TAG_MAX_BYTES);
        g_assert_true(g_str_has_suffix(second, "-2"));
        g_assert_true(sluice_share_tag_check(second, NULL));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/share-tag/check", test_check);
        g_test_add_func("/share-tag/printable-messages", test_printable_messages);
        g_test_add_func("/share-tag/derive", test_derive);
        g_test_add_func("/share-tag/derive-long-taken", test_derive_long_taken);
        return g_test_run();
}
