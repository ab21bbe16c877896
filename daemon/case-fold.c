/* SPDX-License-Identifier: GPL-2.0-or-later */
/* case-fold.c — Unicode simple case folding of names (see case-fold.h). */
#include "case-fold.h"

#include <errno.h>
#include <stdbool.h>

#include "case-fold-table.h"

uint32_t casefold_code_point(uint32_t c)
{
        if (c > 0xFFFF)
                return c;
        const uint16_t *page = casefold_pages[c >> 8];
        return page ? page[c & 0xFF] : c;
}

/* Decodes the UTF-8 sequence at s (n bytes left, n >= 1) into *ret_c and
 * returns its length, or 0 when it is not a valid, shortest-form sequence
 * of a scalar value (the caller then keeps one byte as it is). */
static size_t decode_utf8(const unsigned char *s, size_t n, uint32_t *ret_c)
{
        uint32_t c;
        size_t len;

        if (s[0] < 0x80) {
                *ret_c = s[0];
                return 1;
        } else if (s[0] >= 0xC2 && s[0] <= 0xDF) {
                c = s[0] & 0x1F;
                len = 2;
        } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
                c = s[0] & 0x0F;
                len = 3;
        } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
                c = s[0] & 0x07;
                len = 4;
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                c = (c << 6) | (s[i] & 0x3F);
        }
        /* overlong forms, UTF-16 surrogates and beyond U+10FFFF are not UTF-8 */
        if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
            (c >= 0xD800 && c <= 0xDFFF))
                return 0;
        *ret_c = c;
        return len;
}

static size_t encode_utf8(uint32_t c, char *out)
{
        if (c < 0x80) {
                out[0] = (char)c;
                return 1;
        }
        if (c < 0x800) {
                out[0] = (char)(0xC0 | (c >> 6));
                out[1] = (char)(0x80 | (c & 0x3F));
                return 2;
        }
        /* folded code points are in the BMP: never 4 bytes */
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
}

/* The next piece of a key: the folded form of the sequence at name[*pos],
 * written into piece (at most 4 bytes); advances *pos. */
static size_t next_piece(const char *name, size_t len, size_t *pos, char piece[4])
{
        const unsigned char *s = (const unsigned char *)name + *pos;
        uint32_t c;
        size_t n = decode_utf8(s, len - *pos, &c);

        if (n == 0 || c > 0xFFFF) {
                /* kept as is: one invalid byte, or a whole non-BMP sequence */
                size_t keep = n ? n : 1;
                for (size_t i = 0; i < keep; i++)
                        piece[i] = (char)s[i];
                *pos += keep;
                return keep;
        }
        *pos += n;
        return encode_utf8(casefold_code_point(c), piece);
}

int casefold_key(const char *name, size_t len, char *out, size_t out_size)
{
        size_t pos = 0, o = 0;

        while (pos < len) {
                unsigned char b = (unsigned char)name[pos];
                /* ASCII, most names' every byte: no table, no decoding */
                if (b < 0x80) {
                        if (o + 2 > out_size)
                                return -ENAMETOOLONG;
                        out[o++] = (char)(b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b);
                        pos++;
                        continue;
                }
                char piece[4];
                size_t n = next_piece(name, len, &pos, piece);
                if (o + n + 1 > out_size)
                        return -ENAMETOOLONG;
                for (size_t i = 0; i < n; i++)
                        out[o++] = piece[i];
        }
        if (o + 1 > out_size)
                return -ENAMETOOLONG;
        out[o] = '\0';
        return (int)o;
}

bool casefold_equal(const char *a, size_t a_len, const char *b, size_t b_len)
{
        size_t ia = 0, ib = 0, pa = 0, pb = 0, na = 0, nb = 0;
        char ca[4], cb[4];

        for (;;) {
                if (pa == na && ia < a_len) {
                        na = next_piece(a, a_len, &ia, ca);
                        pa = 0;
                }
                if (pb == nb && ib < b_len) {
                        nb = next_piece(b, b_len, &ib, cb);
                        pb = 0;
                }
                bool a_end = pa == na, b_end = pb == nb;
                if (a_end || b_end)
                        return a_end && b_end;
                if (ca[pa++] != cb[pb++])
                        return false;
        }
}
