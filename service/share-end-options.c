/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-end-options.c — see share-end-options.h. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "share-end-options.h"

gboolean sluice_share_end_options_parse(GVariant *options, SluiceShareEndOptions *out, GError **error)
{
        GVariantIter iter;
        const char *key;
        GVariant *value;

        *out = (SluiceShareEndOptions){ 0 };
        if (options == NULL)
                return TRUE;
        g_return_val_if_fail(g_variant_is_of_type(options, G_VARIANT_TYPE_VARDICT), FALSE);
        g_variant_iter_init(&iter, options);
        while (g_variant_iter_next(&iter, "{&sv}", &key, &value)) {
                g_autoptr(GVariant) owned = value;

                if (strcmp(key, "force") != 0) {
                        g_autofree char *shown = g_utf8_make_valid(key, -1);

                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("Unknown option “%s”: the only option is force (a boolean)"), shown);
                        return FALSE;
                }
                if (!g_variant_is_of_type(owned, G_VARIANT_TYPE_BOOLEAN)) {
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("The option “%s” must be of type “%s”, not “%s”"), key, "b",
                                    g_variant_get_type_string(owned));
                        return FALSE;
                }
                out->force = g_variant_get_boolean(owned);
        }
        return TRUE;
}
