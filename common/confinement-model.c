/* SPDX-License-Identifier: GPL-2.0-or-later */
/* confinement-model.c — see confinement-model.h. */
#include "config.h"

#include <glib/gi18n.h>

#include "confinement-model.h"

static const char *const wire_words[] = {
        [SLUICE_CONFINEMENT_MODEL_NONE] = "none",
        [SLUICE_CONFINEMENT_MODEL_APPARMOR] = "apparmor",
        [SLUICE_CONFINEMENT_MODEL_SELINUX] = "selinux",
};

const char *sluice_confinement_model_to_wire(SluiceConfinementModel model)
{
        if ((guint)model >= G_N_ELEMENTS(wire_words))
                return wire_words[SLUICE_CONFINEMENT_MODEL_NONE];
        return wire_words[model];
}

gboolean sluice_confinement_model_from_wire(const char *wire, SluiceConfinementModel *ret_model)
{
        for (guint i = 0; i < G_N_ELEMENTS(wire_words); i++)
                if (g_strcmp0(wire, wire_words[i]) == 0) {
                        *ret_model = (SluiceConfinementModel)i;
                        return TRUE;
                }
        return FALSE;
}

const char *sluice_confinement_model_label(SluiceConfinementModel model)
{
        switch (model) {
        case SLUICE_CONFINEMENT_MODEL_APPARMOR:
                return "AppArmor";
        case SLUICE_CONFINEMENT_MODEL_SELINUX:
                return "SELinux";
        case SLUICE_CONFINEMENT_MODEL_NONE:
        default:
                return C_("confinement", "none");
        }
}
