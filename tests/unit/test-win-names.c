/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-win-names.c — the oracle of --names=windows (daemon/win-names.c):
 * every byte value, the round trips, device names, a trailing dot or space,
 * the host's own U+F0xx characters, and a corpus of real file names (this
 * source tree's and awkward ones), checked against an extract of WinFsp's
 * mapping written here from its documented table (src/shared/ku/posix.c:
 * the characters 1–31 and " * : < > ? \ | become U+F000 + c, and back only
 * those), which is what virtio-win's virtiofs.exe applies to every name it
 * sends.  WinFsp's own code is compared by bench/winfsp-names-check.sh. */
#include <errno.h>
#include <ftw.h>
#include <glib.h>
#include <limits.h>
#include <string.h>

#include "win-names.h"

/* ---- WinFsp's convention, independently ---- */

/* WinFsp's FspPosixInvalidPathChars, as the characters it lists. */
static gboolean winfsp_maps(unsigned c)
{
        return (c >= 1 && c < 32) || (c < 128 && strchr("<>:\"\\|?*", (int)c) && c != 0);
}

/* FspPosixMapPosixToWindowsPathEx on one name (no '/'), in UTF-8. */
static GString *winfsp_to_windows(const char *s, size_t len)
{
        GString *o = g_string_new(NULL);

        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];

                if (winfsp_maps(c)) {
                        gunichar u = 0xf000 + c;
                        g_string_append_unichar(o, u);
                } else {
                        g_string_append_c(o, (char)c);
                }
        }
        return o;
}

/* FspPosixMapWindowsToPosixPathEx on one name: what virtiofs.exe sends. */
static GString *winfsp_to_posix(const char *s, size_t len)
{
        GString *o = g_string_new(NULL);
        const unsigned char *p = (const unsigned char *)s;

        for (size_t i = 0; i < len; i++) {
                if (p[i] == 0xef && i + 2 < len && (p[i + 1] & 0xfc) == 0x80 && (p[i + 2] & 0xc0) == 0x80) {
                        unsigned c = ((p[i + 1] & 3u) << 6) | (p[i + 2] & 0x3fu);

                        if (c < 128 && winfsp_maps(c)) {
                                g_string_append_c(o, (char)c);
                                i += 2;
                                continue;
                        }
                }
                g_string_append_c(o, (char)p[i]);
        }
        return o;
}

/* ---- helpers ---- */

/* A name written with '`' before a character for U+F000 + that character
 * ("CO`N" is C O U+F04E) and "`0" for U+F000 itself. */
static char *w(const char *spec)
{
        GString *o = g_string_new(NULL);

        for (const char *p = spec; *p; p++) {
                if (*p == '`' && p[1]) {
                        p++;
                        g_string_append_unichar(o, 0xf000 + (*p == '0' ? 0 : (unsigned char)*p));
                } else {
                        g_string_append_c(o, *p);
                }
        }
        return g_string_free(o, FALSE);
}

static char *to_guest(const char *host, size_t len, size_t *ret_len)
{
        char *out = g_malloc(3 * len + 1);
        size_t n = winname_to_guest(host, len, out);

        g_assert_cmpuint(n, <=, 3 * len);
        g_assert_cmpuint(strlen(out), ==, n);
        if (ret_len)
                *ret_len = n;
        return out;
}

static char *to_host(const char *guest, size_t len)
{
        char buf[NAME_MAX * 4];
        ssize_t n = winname_to_host(guest, len, buf, sizeof(buf));

        g_assert_cmpint(n, >=, 0);
        g_assert_cmpuint(strlen(buf), ==, (size_t)n);
        return g_strndup(buf, (size_t)n);
}

static void assert_guest(const char *host, const char *spec)
{
        g_autofree char *want = w(spec);
        g_autofree char *got = to_guest(host, strlen(host), NULL);

        g_assert_cmpstr(got, ==, want);
}

static void assert_host(const char *spec, const char *host)
{
        g_autofree char *guest = w(spec);
        g_autofree char *got = to_host(guest, strlen(guest));

        g_assert_cmpstr(got, ==, host);
}

/* assert_host() with the host name written in w()'s form too */
static void assert_host_w(const char *spec, const char *host_spec)
{
        g_autofree char *host = w(host_spec);

        assert_host(spec, host);
}

/* Whether the host name uses none of the mappings WinFsp does not make. */
static gboolean winfsp_alone(const char *h, size_t len)
{
        const char *dot = memchr(h, '.', len);
        size_t stem = dot ? (size_t)(dot - h) : len;
        g_autofree char *s = g_ascii_strup(h, (gssize)stem);
        static const char *const dev[] = { "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3",
                                           "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1",
                                           "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8",
                                           "LPT9" };

        if (len == 0 || h[len - 1] == '.' || h[len - 1] == ' ')
                return FALSE;
        for (size_t i = 0; i < G_N_ELEMENTS(dev); i++)
                if (stem == strlen(dev[i]) && strcmp(s, dev[i]) == 0)
                        return FALSE;
        for (size_t i = 0; i + 2 < len; i++)
                if ((unsigned char)h[i] == 0xef && ((unsigned char)h[i + 1] == 0x80 ||
                                                    (unsigned char)h[i + 1] == 0x81))
                        return FALSE;
        return TRUE;
}

static unsigned checked;

/* Every property one host name must have.  Returns nothing: asserts. */
static void check_name(const char *h, size_t len)
{
        size_t glen;
        g_autofree char *g = to_guest(h, len, &glen);
        g_autofree char *back = to_host(g, glen);
        g_autofree char *again = NULL;
        g_autoptr(GString) sent = winfsp_to_posix(g, glen);
        g_autofree char *back_sent = to_host(sent->str, sent->len);

        if (g_getenv("WIN_NAMES_DEBUG")) {
                g_autofree char *e = g_strescape(h, NULL);
                g_printerr("%s\n", e);
        }
        /* posix → windows → posix is the identity, for every name ... */
        g_assert_cmpmem(back, strlen(back), h, len);
        /* ... also when virtiofs.exe decoded WinFsp's part on the way in (a
         * name Windows was shown: not UTF-8 it would be U+FFFD there) ... */
        if (g_utf8_validate(h, (gssize)len, NULL))
                g_assert_cmpmem(back_sent, strlen(back_sent), h, len);
        /* ... and windows → posix → windows for every mapped name. */
        again = to_guest(back, len, NULL);
        g_assert_cmpstr(again, ==, g);
        if (g_utf8_validate(h, (gssize)len, NULL)) {
                /* What Windows is shown is valid UTF-16 without a character it
                 * forbids, and is WinFsp's form where WinFsp has one. */
                g_assert_true(g_utf8_validate(g, (gssize)glen, NULL));
                for (size_t i = 0; i < glen; i++)
                        g_assert_false(winfsp_maps((unsigned char)g[i]));
                if (!(len == 1 && h[0] == '.') && !(len == 2 && h[0] == '.' && h[1] == '.'))
                        g_assert_true(glen == 0 || (g[glen - 1] != '.' && g[glen - 1] != ' '));
                if (winfsp_alone(h, len)) {
                        g_autoptr(GString) ref = winfsp_to_windows(h, len);

                        g_assert_cmpstr(g, ==, ref->str);
                }
        } else {
                g_assert_cmpmem(g, glen, h, len);   /* not UTF-8: unchanged */
        }
        checked++;
}

/* ---- the tests ---- */

static void test_every_byte(void)
{
        for (unsigned b = 1; b < 256; b++) {
                char alone[2] = { (char)b, 0 }, mid[4] = { 'a', (char)b, 'b', 0 };
                char end[3] = { 'a', (char)b, 0 };
                g_autofree char *ga = NULL, *gm = NULL, *ge = NULL;
                char pua[4];

                if (b == '/')
                        continue;                   /* never in a name */
                pua[g_unichar_to_utf8(0xf000 + b, pua)] = '\0';
                ga = to_guest(alone, 1, NULL);
                gm = to_guest(mid, 3, NULL);
                ge = to_guest(end, 2, NULL);
                if (winfsp_maps(b)) {
                        g_assert_cmpstr(ga, ==, pua);
                        g_autofree char *pua_b = g_strconcat(pua, "b", NULL);

                        g_assert_cmpstr(gm + 1, ==, pua_b);
                } else if (b >= 0x80) {
                        g_assert_cmpstr(ga, ==, alone);   /* not UTF-8 alone */
                        g_assert_cmpstr(gm, ==, mid);
                } else if (b == '.') {
                        g_assert_cmpstr(ga, ==, ".");     /* the directory itself */
                        g_assert_cmpstr(gm, ==, mid);
                        g_assert_cmpstr(ge + 1, ==, pua); /* a trailing dot */
                } else if (b == ' ') {
                        g_assert_cmpstr(ga, ==, pua);
                        g_assert_cmpstr(gm, ==, mid);
                        g_assert_cmpstr(ge + 1, ==, pua);
                } else {
                        g_assert_cmpstr(ga, ==, alone);
                        g_assert_cmpstr(gm, ==, mid);
                        g_assert_cmpstr(ge, ==, end);
                }
                check_name(alone, 1);
                check_name(mid, 3);
                check_name(end, 2);
        }
        /* Every character U+F000 + b back: WinFsp's set anywhere, the rest as sent. */
        for (unsigned b = 0; b < 256; b++) {
                char spec[8];
                g_autofree char *guest = NULL, *host = NULL;

                spec[g_unichar_to_utf8(0xf000 + b, spec)] = '\0';
                g_strlcat(spec, "x", sizeof(spec));
                guest = g_strdup(spec);
                host = to_host(guest, strlen(guest));
                if (winfsp_maps(b)) {
                        g_assert_cmpuint(strlen(host), ==, 2);
                        g_assert_cmpuint((unsigned char)host[0], ==, b);
                } else {
                        g_assert_cmpstr(host, ==, guest);
                }
        }
}

static void test_devices(void)
{
        assert_guest("CON", "CO`N");
        assert_guest("con", "co`n");
        assert_guest("Con.txt", "Co`n.txt");
        assert_guest("PRN", "PR`N");
        assert_guest("aux.txt", "au`x.txt");
        assert_guest("AUX.tar.gz", "AU`X.tar.gz");
        assert_guest("nul", "nu`l");
        assert_guest("com1.log", "com`1.log");
        assert_guest("COM9", "COM`9");
        assert_guest("lpt9", "lpt`9");
        assert_guest("LPT1.", "LPT`1`.");
        assert_guest("CON.", "CO`N`.");
        /* not device names */
        assert_guest("conference.txt", "conference.txt");
        assert_guest("COM0", "COM0");
        assert_guest("COM10", "COM10");
        assert_guest("LPT", "LPT");
        assert_guest("xcon", "xcon");
        assert_guest(".con", ".con");
        assert_guest("con_", "con_");
        assert_guest("CON ", "CON` ");
        /* back: the mapped form and the device name itself */
        assert_host("CO`N", "CON");
        assert_host("CON", "CON");
        assert_host("au`x.txt", "aux.txt");
        assert_host("lpt`9", "lpt9");
        assert_host("CO`N`.", "CON.");
        /* U+F04E is a device's N only where mapping puts it */
        assert_host_w("`N", "`N");
        assert_host_w("CO`Nx", "CO`Nx");
        assert_host_w("xCO`N", "xCO`N");
        assert_host_w("conferenc`e", "conferenc`e");
}

static void test_trailing(void)
{
        assert_guest("end.", "end`.");
        assert_guest("end ", "end` ");
        assert_guest("end. ", "end.` ");
        assert_guest("end..", "end.`.");
        assert_guest("...", "..`.");
        assert_guest(" ", "` ");
        assert_guest(" x", " x");
        assert_guest(".", ".");
        assert_guest("..", "..");
        assert_guest(".hidden", ".hidden");
        assert_host("end`.", "end.");
        assert_host("end` ", "end ");
        /* only at the end is it the guest's dot */
        assert_host_w("a`.b", "a`.b");
        /* decoding may make ".", "..": the caller refuses them (pt-name.c) */
        assert_host("`.", ".");
        assert_host(".`.", "..");
}

static void test_host_pua(void)
{
        g_autofree char *lit = w("a`:b");          /* a file really named so on the host */
        g_autofree char *lit0 = w("`0");

        /* `a:b` shows as a U+F03A b; the host's own a U+F03A b cannot look the same */
        assert_guest("a:b", "a`:b");
        assert_guest(lit, "a`0`:b");
        assert_host("a`:b", "a:b");
        assert_host("a`0`:b", lit);
        /* as virtiofs.exe sends the latter: it decodes U+F03A, not U+F000 */
        assert_host("a`0:b", lit);
        assert_guest(lit0, "`0`0");
        assert_host("`0`0", lit0);
        /* U+F000 alone (no guest form makes it) stays itself */
        assert_host("`0", lit0);
        assert_host_w("a`0", "a`0");
        /* U+F080 and above are no business of the mapping */
        assert_guest("a\xef\x82\x80", "a\xef\x82\x80");
        /* U+F02F is never a '/' */
        assert_host_w("a`/b", "a`/b");
}

static void test_not_utf8(void)
{
        /* unchanged both ways, forbidden bytes included: nothing would show them */
        assert_guest("\xff:?", "\xff:?");
        assert_guest("caf\xe9.", "caf\xe9.");
        assert_guest("\xc0\xaf", "\xc0\xaf");                /* overlong '/' */
        assert_guest("\xed\xa0\x80:", "\xed\xa0\x80:");      /* a surrogate */
        assert_host("\xff`:", "\xff\xef\x80\xba");
}

static void test_lengths(void)
{
        char host[NAME_MAX + 2], out[NAME_MAX + 1];
        g_autofree char *g = NULL;
        size_t glen;

        memset(host, ':', NAME_MAX);
        host[NAME_MAX] = '\0';
        g = to_guest(host, NAME_MAX, &glen);
        g_assert_cmpuint(glen, ==, 3 * NAME_MAX);
        /* exactly fits back into NAME_MAX + 1 bytes */
        g_assert_cmpint(winname_to_host(g, glen, out, sizeof(out)), ==, NAME_MAX);
        g_assert_cmpmem(out, NAME_MAX, host, NAME_MAX);
        g_assert_cmpint(winname_to_host(g, glen, out, NAME_MAX), ==, -ENAMETOOLONG);
        g_assert_cmpint(winname_to_host("abc", 3, out, 3), ==, -ENAMETOOLONG);
        g_assert_cmpint(winname_to_host("\xff\xff\xff", 3, out, 3), ==, -ENAMETOOLONG);
        g_assert_cmpint(winname_to_host("", 0, out, 1), ==, 0);
}

static const char *const awkward[] = {
        "Meeting 10:30.txt", "what?.md", "a<b>.c", "x|y", "\"quoted\"", "end.", "end ", "CON",
        "aux.txt", "com1.log", "lpt9", "conference.txt", "back\\slash", "star*", "tab\there",
        "new\nline", "bell\a", "\x1f", "\x7f", "Ünïcödé ≠ ascii", "日本語のファイル.txt",
        "emoji 😀.png", "Ω:Ω", "a\xef\x80\xba\x62", "\xef\x80\x80", "\xef\x81\xbf", "\xef\x80\xae",
        "x\xef\x80\xae", "x\xef\x80\xa0", "CO\xef\x81\x8e", "...", ". .", " . ", "-", "~$lock.docx",
        "Thumbs.db", "desktop.ini", "file.", "file..", "a.b.c.", "NUL.", "prn.PRN", "con.con",
        "CoM5.tar", "LpT3 .txt", "\xff\xfe", "caf\xe9", "\xe2\x82", "::::", "?*?*", "<>",
};

static int collect_name(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        const char *base = path + ftw->base;

        if (strcmp(base, ".git") == 0 || g_str_has_prefix(base, "build"))
                return flag == FTW_D ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
        check_name(base, strlen(base));
        /* and the same with every mapping WinFsp knows of inside it */
        {
                g_autofree char *odd = g_strconcat(base, ":?|", NULL);

                check_name(odd, strlen(odd));
        }
        return FTW_CONTINUE;
}

static void test_corpus(void)
{
        const char *root = g_getenv("SLUICE_SOURCE_ROOT");
        unsigned before;

        for (size_t i = 0; i < G_N_ELEMENTS(awkward); i++)
                check_name(awkward[i], strlen(awkward[i]));
        before = checked;
        if (!root)
                root = ".";
        g_assert_cmpint(nftw(root, collect_name, 16, FTW_PHYS | FTW_ACTIONRETVAL), ==, 0);
        /* the source tree has hundreds of files: make sure it was walked */
        g_assert_cmpuint(checked - before, >, 200);
        g_test_message("%u names checked", checked);
}

/* Random names over an alphabet of everything that matters. */
static void test_random(void)
{
        static const char *const parts[] = {
                "a", "Z", ".", " ", ":", "?", "\\", "\x01", "\x1f", "\xef\x80\xba", "\xef\x80\x80",
                "\xef\x80\xae", "\xef\x80\xa0", "\xef\x81\x8e", "\xef\x81\xbf", "\xef\x82\x80",
                "CON", "aux", "com", "1", "0", "lpt", "é", "😀", "\xff",
        };
        GRand *rand = g_rand_new_with_seed(32);

        for (unsigned n = 0; n < 200000; n++) {
                char name[NAME_MAX + 1] = "";
                size_t len = 0;
                unsigned k = (unsigned)g_rand_int_range(rand, 1, 8);

                for (unsigned i = 0; i < k; i++) {
                        const char *p = parts[g_rand_int_range(rand, 0, G_N_ELEMENTS(parts))];

                        memcpy(name + len, p, strlen(p));
                        len += strlen(p);
                }
                check_name(name, len);
        }
        g_rand_free(rand);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/win-names/every-byte", test_every_byte);
        g_test_add_func("/win-names/devices", test_devices);
        g_test_add_func("/win-names/trailing", test_trailing);
        g_test_add_func("/win-names/host-pua", test_host_pua);
        g_test_add_func("/win-names/not-utf8", test_not_utf8);
        g_test_add_func("/win-names/lengths", test_lengths);
        g_test_add_func("/win-names/corpus", test_corpus);
        g_test_add_func("/win-names/random", test_random);
        return g_test_run();
}
