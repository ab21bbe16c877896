/* SPDX-License-Identifier: GPL-2.0-or-later */
/* case-fold.h — the folded key of a name, for case-insensitive lookups.
 *
 * Two names are the same name to a Windows guest when their keys are equal.
 * The key is the name with Unicode's simple case folding (CaseFolding.txt,
 * statuses C and S) applied to every code point of the Basic Multilingual
 * Plane, as NTFS's upcase table compares names: one code point for one, no
 * locale, no special casing (German ß stays ß, Turkish dotless ı stays ı,
 * Greek final ς folds with σ and Σ).  Code points outside the BMP and bytes
 * that are not valid UTF-8 (overlong forms, surrogates, stray continuation
 * bytes) are kept as they are, byte for byte: any name has a key, and two
 * names whose bytes are not UTF-8 only match where those bytes are equal.
 *
 * The table is generated at build time from the unicode-data package
 * (daemon/gen-case-fold.py): deterministic and independent of the locales
 * of the machine sluice-fs runs on.  Pure: no allocation, no system call,
 * safe from any thread. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A key is at most half as long again as its name (a 2-byte UTF-8 letter can
 * fold to a 3-byte one, as U+023A to U+2C65); plus its NUL. */
#define CASEFOLD_KEY_SIZE(name_len) ((name_len) + (name_len) / 2 + 1)

/* The code point `c` folds to (itself where it has no simple folding or
 * lies outside the BMP). */
uint32_t casefold_code_point(uint32_t c);

/* Writes the key of `name` (`len` bytes; may hold any byte but NUL) into
 * `out` (`out_size` bytes) with a terminating NUL.  Returns the key's length
 * without the NUL, or -ENAMETOOLONG when out_size is below
 * CASEFOLD_KEY_SIZE(len) would need for this name. */
int casefold_key(const char *name, size_t len, char *out, size_t out_size);

/* Whether two names have the same key, without writing either. */
_Bool casefold_equal(const char *a, size_t a_len, const char *b, size_t b_len);
