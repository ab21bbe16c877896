/* SPDX-License-Identifier: GPL-2.0-or-later */
/* printable.h — what of a text from outside (a guest, a config file, a
 * person) may be shown as it is, in one rule: no control character (ESC,
 * C1's CSI), nothing that reorders or hides text (U+202E, U+2028 …), no
 * unassigned code point.  The service, sluicectl and the applet show
 * untrusted text only through these, so that a message stays one readable
 * line and a D-Bus string stays valid UTF-8. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether C may be shown as it is. */
gboolean sluice_printable_char(gunichar c);

/* A printable, single-line, bounded copy of TEXT[0..LEN) (LEN -1: up to
 * its NUL): invalid UTF-8 replaced, every character the rule refuses a
 * space, runs of spaces one, at most MAX_CHARS characters ("…" when cut).
 * For quoting what a guest or a program said. */
char *sluice_printable(const char *text, gssize len, gsize max_chars);

/* TEXT with what the rule refuses written as an escape (\n, \t, \x1b,
 * \u202e) and invalid UTF-8 bytes as \xHH: for showing a name that is
 * refused, so that a person sees what is wrong with it. */
char *sluice_printable_escaped(const char *text);

/* WORD as a shell needs it in a command line shown to a person ("sluicectl
 * vm NAME …"): as it is when it is only letters, digits and ._-+:@, quoted
 * otherwise. */
char *sluice_shell_word(const char *word);

G_END_DECLS
