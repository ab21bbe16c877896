/* SPDX-License-Identifier: GPL-2.0-or-later */
/* printable.c — what of an untrusted text may be shown; see printable.h. */
#include "config.h"

#include <string.h>

#include "printable.h"

gboolean sluice_printable_char(gunichar c)
{
        /* escapes (ESC, C1's CSI) and what reorders or hides text (U+202E …) */
        return !g_unichar_iscntrl(c) && g_unichar_isprint(c) && c != 0x2028 && c != 0x2029;
}

char *sluice_printable(const char *text, gssize len, gsize max_chars)
{
        g_autofree char *valid = g_utf8_make_valid(text != NULL ? text : "", text != NULL ? len : 0);
        GString *out = g_string_new(NULL);
        gsize n = 0;

        for (const char *p = valid; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                if (n == max_chars) {
                        g_string_append(out, "…");
                        break;
                }
                if (!sluice_printable_char(c))
                        c = ' ';
                /* runs of blanks (a command's line breaks) become one */
                if (c == ' ' && (out->len == 0 || out->str[out->len - 1] == ' '))
                        continue;
                g_string_append_unichar(out, c);
                n++;
        }
        while (out->len > 0 && out->str[out->len - 1] == ' ')
                g_string_truncate(out, out->len - 1);
        return g_string_free(out, FALSE);
}

char *sluice_printable_escaped(const char *text)
{
        GString *out = g_string_new(NULL);
        const char *p = text != NULL ? text : "";
        const char *end = p + strlen(p);

        while (p < end) {
                gunichar c = g_utf8_get_char_validated(p, end - p);

                if (c == (gunichar)-1 || c == (gunichar)-2) {
                        g_string_append_printf(out, "\\x%02x", (guchar)*p);
                        p++;
                        continue;
                }
                if (c == '\n')
                        g_string_append(out, "\\n");
                else if (c == '\t')
                        g_string_append(out, "\\t");
                else if (c < 0x20 || c == 0x7f)
                        g_string_append_printf(out, "\\x%02x", c);
                else if (!sluice_printable_char(c))
                        g_string_append_printf(out, "\\u%04x", c);
                else
                        g_string_append_unichar(out, c);
                p = g_utf8_next_char(p);
        }
        return g_string_free(out, FALSE);
}

char *sluice_shell_word(const char *word)
{
        for (const char *c = word; *c; c++)
                if (!g_ascii_isalnum(*c) && !strchr("._-+:@", *c))
                        return g_shell_quote(word);
        return g_strdup(word);
}
