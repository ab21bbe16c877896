/* SPDX-License-Identifier: GPL-2.0-or-later */
/* confinement-model.h — how the host confines a VM's QEMU (Vm.Confinement):
 * the wire words and the one place that turns them into the enum and back.
 * Clients and the service compare the enum, never the words. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
        SLUICE_CONFINEMENT_MODEL_NONE,     /* "none": unconfined, or nothing known */
        SLUICE_CONFINEMENT_MODEL_APPARMOR, /* "apparmor": libvirt's libvirt-<uuid> profile */
        SLUICE_CONFINEMENT_MODEL_SELINUX,  /* "selinux": svirt_t / svirt_tcg_t */
} SluiceConfinementModel;

/* The wire word: "none", "apparmor" or "selinux". */
const char *sluice_confinement_model_to_wire(SluiceConfinementModel model);
/* The enum for a wire word; FALSE (and *ret_model untouched) for a word this
 * build does not know (a newer service). */
gboolean sluice_confinement_model_from_wire(const char *wire, SluiceConfinementModel *ret_model);
/* What a person reads: "AppArmor", "SELinux", or "none" (translated). */
const char *sluice_confinement_model_label(SluiceConfinementModel model);

G_END_DECLS
