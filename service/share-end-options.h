/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-end-options.h — the a{sv} options of StopWithOptions,
 * DetachWithOptions and RemoveShareWithOptions: the calls that end a
 * share's presence in its VM.  One option, "force" (b).  Options come from
 * any D-Bus client: an unknown name or a wrong type is the caller's error,
 * never ignored (a typo in "force" must not silently ask the guest). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
        gboolean force;  /* unplug without asking the guest to unmount */
} SluiceShareEndOptions;

/* Fills OUT from OPTIONS (type a{sv}); SLUICE_ERROR_INVALID_ARGUMENT
 * naming the option and what is wrong with it. */
gboolean sluice_share_end_options_parse(GVariant *options, SluiceShareEndOptions *out, GError **error);

G_END_DECLS
