/* SPDX-License-Identifier: GPL-2.0-or-later */
/* win-names.c — see win-names.h.
 *
 * The guest form of a host name (README.md "Windows names"):
 *   - each byte Windows forbids in a name — 1–31, " * : < > ? \ | — is the
 *     private-use character U+F000 + byte, as WinFsp's
 *     FspPosixMapPosixToWindowsPathEx makes it (its table: the same set);
 *   - beyond WinFsp: a last character '.' or ' ' (Win32 strips them, so the
 *     file could not be opened) and the last character of a device name
 *     (CON PRN AUX NUL COM1–9 LPT1–9 in any case, alone or before the first
 *     dot: `aux.txt`; Win32 opens the device instead) are mapped the same way;
 *   - a host name's own U+F000–U+F07F characters get U+F000 in front, so
 *     that no guest name stands for two host names (WinFsp would open `a:b`
 *     for a file literally named `a` U+F03A `b`).
 * Back, every form the guest may send: U+F000 + c → c for the forbidden
 * bytes anywhere (virtiofs.exe decodes those itself with WinFsp's
 * FspPosixMapWindowsToPosixPathEx, so they also arrive as the bytes), for
 * '.' and ' ' at the end and for a device name's last character where
 * mapping made them; U+F000 before U+F000–U+F07F (or before a forbidden byte,
 * as virtiofs.exe leaves it) → that character itself; anything else as sent.
 * A name that is not valid UTF-8 passes unchanged both ways: Windows could
 * not show it anyway, and changing it would lose the way back. */
#include "win-names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* The private-use characters this file deals in, U+F000 … U+F07F, are
 * EF 80 80 … EF 81 BF in UTF-8. */
#define PUA_LEN 3

static bool forbidden(unsigned char c)
{
        return (c >= 1 && c <= 31) || c == '"' || c == '*' || c == ':' || c == '<' ||
               c == '>' || c == '?' || c == '\\' || c == '|';
}

/* The ASCII character U+F000 + c stands for at s (len bytes left), or -1. */
static int pua_at(const unsigned char *s, size_t len)
{
        if (len < PUA_LEN || s[0] != 0xef || (s[1] != 0x80 && s[1] != 0x81) || (s[2] & 0xc0) != 0x80)
                return -1;
        return ((s[1] & 0x3) << 6) | (s[2] & 0x3f);
}

static void put_pua(unsigned char *out, unsigned char c)
{
        out[0] = 0xef;
        out[1] = (unsigned char)(0x80 | (c >> 6));
        out[2] = (unsigned char)(0x80 | (c & 0x3f));
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF. */
static bool valid_utf8(const unsigned char *s, size_t len)
{
        size_t i = 0;

        while (i < len) {
                unsigned char c = s[i];
                size_t n;
                uint32_t cp;

                if (c < 0x80) {
                        i++;
                        continue;
                }
                if (c >= 0xc2 && c <= 0xdf)
                        n = 1, cp = c & 0x1f;
                else if (c >= 0xe0 && c <= 0xef)
                        n = 2, cp = c & 0x0f;
                else if (c >= 0xf0 && c <= 0xf4)
                        n = 3, cp = c & 0x07;
                else
                        return false;
                if (len - i <= n)
                        return false;
                for (size_t k = 1; k <= n; k++) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (s[i + k] & 0x3f);
                }
                if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
                    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
                        return false;
                i += n + 1;
        }
        return true;
}

/* Whether `stem` (len bytes, ASCII) is a name Win32 opens as a device. */
static bool device_name(const char *stem, size_t len)
{
        static const char *const devices[] = { "CON", "PRN", "AUX", "NUL" };

        if (len == 3) {
                for (size_t k = 0; k < sizeof(devices) / sizeof(devices[0]); k++)
                        if (strncasecmp(stem, devices[k], 3) == 0)
                                return true;
                return false;
        }
        return len == 4 && (strncasecmp(stem, "COM", 3) == 0 || strncasecmp(stem, "LPT", 3) == 0) &&
               stem[3] >= '1' && stem[3] <= '9';
}

size_t winname_to_guest(const char *host, size_t len, char *out)
{
        const unsigned char *h = (const unsigned char *)host;
        unsigned char *o = (unsigned char *)out;
        const char *dot;
        size_t stem, i = 0, n = 0;
        size_t device_last = SIZE_MAX;

        if ((len == 1 && h[0] == '.') || (len == 2 && h[0] == '.' && h[1] == '.') ||
            !valid_utf8(h, len)) {
                memcpy(out, host, len);
                out[len] = '\0';
                return len;
        }
        dot = memchr(host, '.', len);
        stem = dot ? (size_t)(dot - host) : len;
        if (device_name(host, stem))
                device_last = stem - 1;
        while (i < len) {
                unsigned char c = h[i];

                if (pua_at(h + i, len - i) >= 0) {
                        put_pua(o + n, 0);                /* this one is the host's own */
                        memcpy(o + n + PUA_LEN, h + i, PUA_LEN);
                        n += 2 * PUA_LEN;
                        i += PUA_LEN;
                        continue;
                }
                if (forbidden(c) || i == device_last || (i == len - 1 && (c == '.' || c == ' '))) {
                        put_pua(o + n, c);
                        n += PUA_LEN;
                } else {
                        o[n++] = c;
                }
                i++;
        }
        o[n] = '\0';
        return n;
}

/* Whether the mapped character c at g[i] (PUA_LEN bytes) ends a device name:
 * what is decoded before it (out, n bytes) and c make one, and the name ends
 * there or goes on with a dot (itself mapped when it is the last character). */
static bool ends_device(const unsigned char *g, size_t len, size_t i, const char *out, size_t n,
                        int c)
{
        char stem[4];
        size_t next = i + PUA_LEN;

        if (n > 3)
                return false;
        if (next != len && g[next] != '.' &&
            !(pua_at(g + next, len - next) == '.' && next + PUA_LEN == len))
                return false;
        memcpy(stem, out, n);
        stem[n] = (char)c;
        return device_name(stem, n + 1);
}

ssize_t winname_to_host(const char *guest, size_t len, char *out, size_t size)
{
        const unsigned char *g = (const unsigned char *)guest;
        size_t i = 0, n = 0;

        if (!valid_utf8(g, len)) {
                if (len + 1 > size)
                        return -ENAMETOOLONG;
                memcpy(out, guest, len);
                out[len] = '\0';
                return (ssize_t)len;
        }
        while (i < len) {
                int c = pua_at(g + i, len - i);
                size_t take = 1;
                const unsigned char *from = g + i;
                unsigned char one;

                if (c == 0 && pua_at(g + i + PUA_LEN, len - i - PUA_LEN) >= 0) {
                        from = g + i + PUA_LEN;            /* the host's own U+F0xx */
                        take = PUA_LEN;
                        i += 2 * PUA_LEN;
                } else if (c == 0 && i + PUA_LEN < len && forbidden(g[i + PUA_LEN])) {
                        /* The same, after virtiofs.exe decoded the second one. */
                        unsigned char pua[PUA_LEN];

                        if (n + PUA_LEN + 1 > size)
                                return -ENAMETOOLONG;
                        put_pua(pua, g[i + PUA_LEN]);
                        memcpy(out + n, pua, PUA_LEN);
                        n += PUA_LEN;
                        i += PUA_LEN + 1;
                        continue;
                } else if (c > 0 && (forbidden((unsigned char)c) ||
                                     ((c == '.' || c == ' ') && i + PUA_LEN == len) ||
                                     ends_device(g, len, i, out, n, c))) {
                        one = (unsigned char)c;
                        from = &one;
                        i += PUA_LEN;
                } else if (c >= 0) {
                        take = PUA_LEN;                    /* as sent */
                        i += PUA_LEN;
                } else {
                        i++;
                }
                if (n + take + 1 > size)
                        return -ENAMETOOLONG;
                memcpy(out + n, from, take);
                n += take;
        }
        out[n] = '\0';
        return (ssize_t)n;
}
