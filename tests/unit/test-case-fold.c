/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-case-fold.c — the folded key of a name (daemon/case-fold.c): every
 * code point of the BMP against Unicode's CaseFolding.txt, read here, and the
 * cases a Windows user meets. */
#include <errno.h>
#include <glib.h>
#include <string.h>

#include "case-fold.h"

/* The key of a NUL-terminated name, for comparisons. */
static char *key_of(const char *name)
{
        size_t len = strlen(name);
        char *out = g_malloc(CASEFOLD_KEY_SIZE(len));
        int r = casefold_key(name, len, out, CASEFOLD_KEY_SIZE(len));
        g_assert_cmpint(r, >=, 0);
        g_assert_cmpint(r, ==, (int)strlen(out));
        return out;
}

static void assert_key(const char *name, const char *want)
{
        g_autofree char *k = key_of(name);
        g_assert_cmpstr(k, ==, want);
        g_assert_true(casefold_equal(name, strlen(name), want, strlen(want)));
}

static void test_every_bmp_code_point(void)
{
        g_autofree char *text = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GHashTable) fold = g_hash_table_new(NULL, NULL);

        if (!g_file_get_contents(CASEFOLDING_TXT, &text, NULL, &error))
                g_error("%s (the Debian package unicode-data)", error->message);
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        guint n_rules = 0;
        for (guint i = 0; lines[i]; i++) {
                if (lines[i][0] == '#' || lines[i][0] == '\0')
                        continue;
                g_auto(GStrv) f = g_strsplit(lines[i], "; ", 4);
                g_assert_cmpuint(g_strv_length(f), >=, 3);
                if (strcmp(f[1], "C") != 0 && strcmp(f[1], "S") != 0)
                        continue;
                guint64 from = g_ascii_strtoull(f[0], NULL, 16);
                guint64 to = g_ascii_strtoull(f[2], NULL, 16);
                if (from <= 0xFFFF) {
                        g_hash_table_insert(fold, GUINT_TO_POINTER(from), GUINT_TO_POINTER(to));
                        n_rules++;
                }
        }
        g_assert_cmpuint(n_rules, >, 1000);

        guint folded = 0;
        for (gunichar c = 1; c <= 0xFFFF; c++) {
                if (c >= 0xD800 && c <= 0xDFFF)
                        continue;       /* not scalar values: test_invalid_utf8 */
                gpointer to;
                gunichar want = g_hash_table_lookup_extended(fold, GUINT_TO_POINTER(c), NULL, &to)
                                ? GPOINTER_TO_UINT(to) : c;
                g_assert_cmpuint(casefold_code_point(c), ==, want);
                char name[8] = { 0 }, want_s[8] = { 0 };
                g_unichar_to_utf8(c, name);
                g_unichar_to_utf8(want, want_s);
                if (c == '/')
                        continue;       /* never in a name; folds to itself above */
                g_autofree char *k = key_of(name);
                if (strcmp(k, want_s) != 0)
                        g_error("U+%04X: key %s, CaseFolding.txt says U+%04X", c, k, want);
                folded += want != c;
        }
        g_assert_cmpuint(folded, ==, n_rules);
}

static void test_ascii(void)
{
        assert_key("README.TXT", "readme.txt");
        assert_key("readme.txt", "readme.txt");
        assert_key("Makefile.AM-1_2~", "makefile.am-1_2~");
        g_assert_false(casefold_equal("a", 1, "b", 1));
        g_assert_false(casefold_equal("ab", 2, "a", 1));
}

static void test_german_sharp_s(void)
{
        /* simple folding keeps ß: STRASSE and straße are different names */
        assert_key("Straße", "straße");
        g_assert_false(casefold_equal("STRASSE", 7, "straße", strlen("straße")));
        /* capital ẞ (U+1E9E) folds to ß (status S) */
        assert_key("\u1E9E", "ß");
}

static void test_turkish_i(void)
{
        /* no special casing: I is i, dotted İ and dotless ı stay themselves */
        assert_key("I", "i");
        assert_key("İ", "İ");
        assert_key("ı", "ı");
        g_assert_false(casefold_equal("ı", strlen("ı"), "i", 1));
        g_assert_false(casefold_equal("İ", strlen("İ"), "i", 1));
}

static void test_greek_sigma(void)
{
        /* Σ, σ and the final ς are one letter to NTFS and to folding */
        assert_key("ΟΔΥΣΣΕΥΣ", "οδυσσευσ");
        assert_key("Οδυσσευς", "οδυσσευσ");
        g_assert_true(casefold_equal("ς", strlen("ς"), "Σ", strlen("Σ")));
}

static void test_cyrillic_fullwidth(void)
{
        assert_key("ДОКУМЕНТ.doc", "документ.doc");
        assert_key("ЯБЛОКО Ёж", "яблоко ёж");
        /* fullwidth Latin (U+FF21…) folds to fullwidth lower case, not ASCII */
        assert_key("ＡＢＣ", "ａｂｃ");
        g_assert_false(casefold_equal("ＡＢＣ", strlen("ＡＢＣ"), "abc", 3));
        /* the Kelvin sign (3 bytes) folds to ASCII k (1 byte) */
        assert_key("\u212A", "k");
}

static void test_longer_key(void)
{
        /* Ⱥ (U+023A, 2 bytes) folds to ⱥ (U+2C65, 3 bytes) */
        const char *name = "\u023A\u023A";
        char out[16];
        g_assert_cmpint(casefold_key(name, strlen(name), out, sizeof(out)), ==, 6);
        g_assert_cmpstr(out, ==, "\u2C65\u2C65");
        g_assert_cmpuint(CASEFOLD_KEY_SIZE(strlen(name)), >=, 7);
        /* too small a buffer: an error, never a cut key */
        g_assert_cmpint(casefold_key(name, strlen(name), out, 6), ==, -ENAMETOOLONG);
        g_assert_cmpint(casefold_key("ab", 2, out, 2), ==, -ENAMETOOLONG);
        /* a name of NAME_MAX bytes of Ⱥ fits its CASEFOLD_KEY_SIZE */
        char big[255], key[CASEFOLD_KEY_SIZE(255)];
        for (int i = 0; i + 1 < 255; i += 2)
                memcpy(big + i, "\u023A", 2);
        big[254] = 'A';
        g_assert_cmpint(casefold_key(big, 255, key, sizeof(key)), ==, 127 * 3 + 1);
}

static void test_outside_bmp(void)
{
        /* Deseret 𐐀 (U+10400) has a folding in CaseFolding.txt, but NTFS
         * compares only the BMP: kept as it is */
        assert_key("\U00010400x", "\U00010400x");
        g_assert_false(casefold_equal("\U00010400", 4, "\U00010428", 4));
        g_assert_cmpuint(casefold_code_point(0x10400), ==, 0x10400);
        assert_key("😀.TXT", "😀.txt");
}

static void test_invalid_utf8(void)
{
        static const struct {
                const char *name, *key;
        } cases[] = {
                { "\xff\xfe" "AB", "\xff\xfe" "ab" },   /* stray bytes kept, the rest folds */
                { "A\xC3", "a\xC3" },                   /* a sequence cut off at the end */
                { "\xC3(", "\xC3(" },                   /* a lead byte without its tail */
                { "\xC0\xC1\xAF", "\xC0\xC1\xAF" },     /* an overlong '/' is not '/' */
                { "\xE0\x80\xAF", "\xE0\x80\xAF" },
                { "\xED\xA0\x80Z", "\xED\xA0\x80z" },   /* a UTF-16 surrogate */
                { "\xF4\x90\x80\x80", "\xF4\x90\x80\x80" },     /* beyond U+10FFFF */
                { "\x80\xBF", "\x80\xBF" },             /* continuation bytes alone */
                { "\xC3\x89", "\xC3\xA9" },             /* valid É, for contrast */
        };
        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
                assert_key(cases[i].name, cases[i].key);
        /* invalid bytes only match themselves */
        g_assert_false(casefold_equal("\xC3", 1, "\xC3\xA9", 2));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/case-fold/every-bmp-code-point", test_every_bmp_code_point);
        g_test_add_func("/case-fold/ascii", test_ascii);
        g_test_add_func("/case-fold/german-sharp-s", test_german_sharp_s);
        g_test_add_func("/case-fold/turkish-i", test_turkish_i);
        g_test_add_func("/case-fold/greek-sigma", test_greek_sigma);
        g_test_add_func("/case-fold/cyrillic-fullwidth", test_cyrillic_fullwidth);
        g_test_add_func("/case-fold/longer-key", test_longer_key);
        g_test_add_func("/case-fold/outside-bmp", test_outside_bmp);
        g_test_add_func("/case-fold/invalid-utf8", test_invalid_utf8);
        return g_test_run();
}
