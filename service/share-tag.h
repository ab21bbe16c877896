/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-tag.h — what a mount tag may be, and a tag made from a folder's name.
 *
 * A tag is 1 to SLUICE_TAG_MAX_BYTES of A–Z a–z 0–9 _ . -, starting with a
 * letter or a digit.  That is what a Linux fstab line and a Windows command
 * line (the VirtIO-FS service's -t) take without quoting or escaping, and
 * what mount(8) cannot mistake for an option.  The virtio-fs device config
 * holds the tag in 36 bytes (virtio spec, struct virtio_fs_config). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SLUICE_TAG_MAX_BYTES 36

/* SLUICE_ERROR_INVALID_ARGUMENT with a message naming the allowed set. */
gboolean sluice_share_tag_check(const char *tag, GError **error);

/* Whether TAG is taken (by another share). */
typedef gboolean (*SluiceShareTagTaken)(const char *tag, gpointer user_data);

/* A valid tag made from the first of NAMES (NULL-terminated: a folder's
 * name, or a tag that is not valid and then the folder's name) that leaves
 * something: accents dropped (é → e), anything else outside the set "_",
 * cut to fit, "-2", "-3" … appended while TAKEN says it is in use; "share"
 * when no name leaves anything (a name in Korean, say). */
char *sluice_share_tag_derive(const char *const *names, SluiceShareTagTaken taken,
                              gpointer user_data);

/* TEXT for a message: control characters (a newline in a name) shown as
 * \n, \t or \xHH, so that a message stays one readable line. */
char *sluice_share_tag_printable(const char *text);

G_END_DECLS
