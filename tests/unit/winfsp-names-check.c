/* SPDX-License-Identifier: GPL-2.0-or-later */
/* winfsp-names-check.c — daemon/win-names.c held against WinFsp's own
 * FspPosixMapPosixToWindowsPathEx and FspPosixMapWindowsToPosixPathEx,
 * compiled from a WinFsp source tree by winfsp-names-check.sh.  For every
 * name (valid UTF-8, as Windows would be shown it):
 *   same      winname_to_guest() is WinFsp's Posix→Windows form, where none
 *             of Sluice's additions (a trailing dot or space, a device name,
 *             the host's own U+F000–U+F07F) applies;
 *   through   what virtiofs.exe sends back for the listed name — WinFsp's
 *             Windows→Posix of it — decodes to the host name;
 *   winfsp    for names WinFsp alone maps, what virtiofs.exe sends is the
 *             host name already.
 * Prints the counts; exit 1 on any mismatch. */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "win-names.h"
#include "winfsp-shim.h"

/* ---- the Win32 conversions WinFsp calls ---- */

ULONG GetLastError(void)
{
        return 1;
}

NTSTATUS FspNtStatusFromWin32(ULONG error)
{
        return (NTSTATUS) 0xC0000001 | (NTSTATUS) error;
}

int WideCharToMultiByte(unsigned code_page, ULONG flags, const WCHAR *w, int wlen, char *out,
                        int size, const char *default_char, int *used_default)
{
        size_t n = 0, len = wlen < 0 ? 0 : (size_t) wlen;
        char buf[4];

        (void) code_page, (void) flags, (void) default_char, (void) used_default;
        if (wlen < 0)
                while (w[len++])
                        ;
        for (size_t i = 0; i < len; i++) {
                uint32_t cp = w[i];
                size_t k;

                if (cp >= 0xd800 && cp < 0xdc00 && i + 1 < len && w[i + 1] >= 0xdc00 && w[i + 1] < 0xe000)
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (w[++i] - 0xdc00u);
                else if (cp >= 0xd800 && cp < 0xe000)
                        return 0;
                if (cp < 0x80)
                        buf[0] = (char) cp, k = 1;
                else if (cp < 0x800)
                        buf[0] = (char) (0xc0 | cp >> 6), buf[1] = (char) (0x80 | (cp & 0x3f)), k = 2;
                else if (cp < 0x10000)
                        buf[0] = (char) (0xe0 | cp >> 12), buf[1] = (char) (0x80 | ((cp >> 6) & 0x3f)),
                        buf[2] = (char) (0x80 | (cp & 0x3f)), k = 3;
                else
                        buf[0] = (char) (0xf0 | cp >> 18), buf[1] = (char) (0x80 | ((cp >> 12) & 0x3f)),
                        buf[2] = (char) (0x80 | ((cp >> 6) & 0x3f)), buf[3] = (char) (0x80 | (cp & 0x3f)),
                        k = 4;
                if (out && size) {
                        if (n + k > (size_t) size)
                                return 0;
                        memcpy(out + n, buf, k);
                }
                n += k;
        }
        return (int) n;
}

int MultiByteToWideChar(unsigned code_page, ULONG flags, const char *s, int len, WCHAR *out,
                        int size)
{
        const unsigned char *p = (const unsigned char *) s;
        size_t n = 0, end = len < 0 ? strlen(s) + 1 : (size_t) len;

        (void) code_page, (void) flags;
        for (size_t i = 0; i < end;) {
                uint32_t cp;
                size_t k;

                if (p[i] < 0x80)
                        cp = p[i], k = 1;
                else if ((p[i] & 0xe0) == 0xc0)
                        cp = p[i] & 0x1fu, k = 2;
                else if ((p[i] & 0xf0) == 0xe0)
                        cp = p[i] & 0x0fu, k = 3;
                else if ((p[i] & 0xf8) == 0xf0)
                        cp = p[i] & 0x07u, k = 4;
                else
                        return 0;
                if (i + k > end)
                        return 0;
                for (size_t j = 1; j < k; j++)
                        cp = cp << 6 | (p[i + j] & 0x3fu);
                i += k;
                if (cp >= 0x10000) {
                        if (out && size) {
                                if (n + 2 > (size_t) size)
                                        return 0;
                                out[n] = (WCHAR) (0xd800 + ((cp - 0x10000) >> 10));
                                out[n + 1] = (WCHAR) (0xdc00 + ((cp - 0x10000) & 0x3ff));
                        }
                        n += 2;
                } else {
                        if (out && size) {
                                if (n + 1 > (size_t) size)
                                        return 0;
                                out[n] = (WCHAR) cp;
                        }
                        n++;
                }
        }
        return (int) n;
}

/* ---- WinFsp's mapping on UTF-8 names ---- */

static char *winfsp_to_windows(const char *name)
{
        PWSTR w = NULL;
        char *out;
        int n;

        if (!NT_SUCCESS(FspPosixMapPosixToWindowsPathEx(name, &w, 1)))
                return NULL;
        n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
        out = malloc((size_t) n);
        WideCharToMultiByte(CP_UTF8, 0, w, -1, out, n, NULL, NULL);
        free(w);
        return out;
}

static char *winfsp_to_posix(const char *name)
{
        int n = MultiByteToWideChar(CP_UTF8, 0, name, -1, NULL, 0);
        WCHAR *w = malloc((size_t) n * sizeof(WCHAR));
        char *out = NULL;

        MultiByteToWideChar(CP_UTF8, 0, name, -1, w, n);
        if (!NT_SUCCESS(FspPosixMapWindowsToPosixPathEx(w, &out, 1)))
                out = NULL;
        free(w);
        return out;
}

/* ---- the names ---- */

static unsigned names, same, extended, through, winfsp_alone_ok, failures;

/* Whether one of Sluice's additions to WinFsp's mapping applies to `h`. */
static bool sluice_extension(const char *h)
{
        size_t len = strlen(h), stem = strcspn(h, ".");
        static const char *const dev[] = { "CON", "PRN", "AUX", "NUL" };

        if (h[len - 1] == '.' || h[len - 1] == ' ')
                return true;
        for (size_t i = 0; i < 4; i++)
                if (stem == 3 && strncasecmp(h, dev[i], 3) == 0)
                        return true;
        if (stem == 4 && (strncasecmp(h, "COM", 3) == 0 || strncasecmp(h, "LPT", 3) == 0) &&
            h[3] >= '1' && h[3] <= '9')
                return true;
        for (size_t i = 0; i + 2 < len; i++)
                if ((unsigned char) h[i] == 0xef && ((unsigned char) h[i + 1] & 0xfe) == 0x80)
                        return true;
        return false;
}

static bool valid_utf8(const char *s)
{
        return MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0) > 0 &&
               /* no surrogates or overlong forms either: strict, as win-names.c */
               !strstr(s, "\xed\xa0") && !strstr(s, "\xc0") && !strstr(s, "\xc1");
}

static void fail(const char *what, const char *h, const char *got, const char *want)
{
        if (failures++ < 20)
                fprintf(stderr, "FAIL %s: host name \"%s\": got \"%s\", expected \"%s\"\n", what, h,
                        got ? got : "(error)", want);
}

static void check(const char *h)
{
        size_t len = strlen(h);
        char guest[3 * NAME_MAX + 1], back[NAME_MAX + 1];
        char *ref, *sent;
        ssize_t n;

        if (len == 0 || len > NAME_MAX || strchr(h, '/') || !strcmp(h, ".") || !strcmp(h, "..") ||
            !valid_utf8(h))
                return;
        names++;
        winname_to_guest(h, len, guest);
        if (!sluice_extension(h)) {
                ref = winfsp_to_windows(h);
                if (ref && strcmp(ref, guest) == 0)
                        same++;
                else
                        fail("same as WinFsp's Posix->Windows", h, guest, ref ? ref : "?");
                free(ref);
        } else {
                extended++;
        }
        sent = winfsp_to_posix(guest);
        n = sent ? winname_to_host(sent, strlen(sent), back, sizeof(back)) : -EINVAL;
        if (n >= 0 && strcmp(back, h) == 0)
                through++;
        else
                fail("back through WinFsp's Windows->Posix", h, n >= 0 ? back : NULL, h);
        if (!sluice_extension(h)) {
                if (sent && strcmp(sent, h) == 0)
                        winfsp_alone_ok++;
                else
                        fail("virtiofs.exe sends the host name", h, sent, h);
        }
        free(sent);
}

static int walk(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        const char *base = path + ftw->base;
        char odd[NAME_MAX + 1];

        (void) st;
        if (strcmp(base, ".git") == 0 || strncmp(base, "build", 5) == 0)
                return flag == FTW_D ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
        check(base);
        snprintf(odd, sizeof(odd), "%.240s:?|*", base);
        check(odd);
        return FTW_CONTINUE;
}

static const char *const awkward[] = {
        "Meeting 10:30.txt", "what?.md", "a<b>.c", "x|y", "\"quoted\"", "end.", "end ", "CON",
        "aux.txt", "com1.log", "lpt9", "conference.txt", "back\\slash", "star*", "tab\there",
        "\x1f", "\x7f", "Ünïcödé ≠ ascii", "日本語のファイル.txt", "emoji 😀.png", "Ω:Ω",
        "a\xef\x80\xba\x62", "\xef\x80\x80", "\xef\x81\xbf", "x\xef\x80\xae", "CO\xef\x81\x8e", "...",
        ". .", "file..", "NUL.", "prn.PRN", "CoM5.tar", "::::", "?*?*", "<>",
};

int main(int argc, char **argv)
{
        static const char *const parts[] = {
                "a", "Z", ".", " ", ":", "?", "\\", "\x01", "\x1f", "\"", "<", ">", "|", "*",
                "\xef\x80\xba", "\xef\x80\x80", "\xef\x80\xae", "\xef\x81\x8e", "\xef\x82\x80",
                "CON", "aux", "com", "1", "lpt", "é", "😀",
        };
        const char *root = argc > 1 ? argv[1] : ".";
        unsigned seed = 32;

        for (unsigned b = 1; b < 128; b++) {
                char one[2] = { (char) b, 0 }, mid[4] = { 'a', (char) b, 'b', 0 };

                check(one);
                check(mid);
        }
        for (size_t i = 0; i < sizeof(awkward) / sizeof(awkward[0]); i++)
                check(awkward[i]);
        if (nftw(root, walk, 16, FTW_PHYS | FTW_ACTIONRETVAL) != 0) {
                perror(root);
                return 1;
        }
        for (unsigned n = 0; n < 200000; n++) {
                char name[NAME_MAX + 1] = "";
                unsigned k = 1 + (unsigned) rand_r(&seed) % 7;

                for (unsigned i = 0; i < k; i++)
                        strcat(name, parts[(unsigned) rand_r(&seed) % (sizeof(parts) / sizeof(parts[0]))]);
                check(name);
        }
        printf("%u names (valid UTF-8)\n", names);
        printf("  %u of %u outside Sluice's additions: the same as WinFsp's Posix->Windows form\n",
               same, names - extended);
        printf("  %u of %u outside Sluice's additions: virtiofs.exe sends the host name itself\n",
               winfsp_alone_ok, names - extended);
        printf("  %u with a trailing dot or space, a device name or a U+F0xx of their own\n",
               extended);
        printf("  %u of %u: back through WinFsp's Windows->Posix to the host name\n", through, names);
        printf("%u mismatches\n", failures);
        return failures ? 1 : 0;
}
