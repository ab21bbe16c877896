/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-tag.c — the mount tag's character set, checks and derivation (share-tag.h). */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "printable.h"
#include "share-tag.h"

/* Tried before giving up on a suffix: more shares than anyone keeps. */
#define TAG_SUFFIX_MAX 10000

static gboolean tag_char_ok(char c)
{
        return g_ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
}

char *sluice_share_tag_printable(const char *text)
{
        return sluice_printable_escaped(text);
}

gboolean sluice_share_tag_check(const char *tag, GError **error)
{
        g_autofree char *shown = NULL;

        if (tag == NULL || *tag == '\0') {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("The tag is empty: give the share a name of 1 to %d letters A–Z or a–z, digits, “_”, “.” or “-”"),
                            SLUICE_TAG_MAX_BYTES);
                return FALSE;
        }
        shown = sluice_printable_escaped(tag);
        for (const char *p = tag; *p != '\0'; p++) {
                if (!tag_char_ok(*p)) {
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("The tag “%s” has characters a guest cannot use without quoting: use only the letters A–Z and a–z, digits, “_”, “.” and “-”"),
                                    shown);
                        return FALSE;
                }
        }
        if (!g_ascii_isalnum(*tag)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("The tag “%s” starts with “%c”: start it with a letter or a digit (mount would take “-…” for an option)"),
                            shown, *tag);
                return FALSE;
        }
        if (strlen(tag) > SLUICE_TAG_MAX_BYTES) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("The tag “%s” is %zu characters long: virtiofs allows at most %d bytes, choose a shorter one"),
                            shown, strlen(tag), SLUICE_TAG_MAX_BYTES);
                return FALSE;
        }
        return TRUE;
}

/* NAME in the tag's set: transliterated to ASCII (é → e), every other
 * character "_", runs of "_" merged, no separator at either end. */
static char *tag_base(const char *name)
{
        g_autofree char *valid = g_utf8_make_valid(name, -1);
        /* "C": a transliteration that does not depend on the service's locale */
        g_autofree char *ascii = g_str_to_ascii(valid, "C");
        g_autoptr(GString) out = g_string_new(NULL);

        for (const char *p = ascii; *p != '\0'; p++) {
                char c = tag_char_ok(*p) ? *p : '_';

                if (c == '_' && out->len > 0 && out->str[out->len - 1] == '_')
                        continue;
                if (!g_ascii_isalnum(c) && out->len == 0)
                        continue;
                g_string_append_c(out, c);
        }
        return g_string_free(g_steal_pointer(&out), FALSE);
}

/* The first ROOM bytes of BASE, without a separator at the end. */
static char *cut(const char *base, gsize room)
{
        gsize len = MIN(strlen(base), room);

        while (len > 0 && !g_ascii_isalnum(base[len - 1]))
                len--;
        return g_strndup(base, len);
}

char *sluice_share_tag_derive(const char *const *names, SluiceShareTagTaken taken,
                              gpointer user_data)
{
        g_autofree char *base = NULL;

        for (; base == NULL && names != NULL && *names != NULL; names++) {
                base = tag_base(*names);
                if (*base == '\0')
                        g_clear_pointer(&base, g_free);
        }
        if (base == NULL)
                base = g_strdup("share");
        for (guint n = 1; n < TAG_SUFFIX_MAX; n++) {
                g_autofree char *suffix = n == 1 ? g_strdup("") : g_strdup_printf("-%u", n);
                g_autofree char *head = cut(base, SLUICE_TAG_MAX_BYTES - strlen(suffix));
                g_autofree char *candidate = g_strconcat(*head != '\0' ? head : "share", suffix, NULL);

                if (taken == NULL || !taken(candidate, user_data))
                        return g_steal_pointer(&candidate);
        }
        /* TAG_SUFFIX_MAX shares of one name: a tag nobody chose */
        for (;;) {
                g_autofree char *candidate = g_strdup_printf("share-%08x", g_random_int());

                if (taken == NULL || !taken(candidate, user_data))
                        return g_steal_pointer(&candidate);
        }
}
