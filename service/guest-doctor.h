/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-doctor.h — what a guest has for showing shared folders, asked
 * through its agent and written for a person to read and send
 * (Vm.Doctor): for Windows its version, virtio-win's VirtIO-FS driver and
 * service, WinFsp and its launcher, the virtiofs registry values and the
 * drives; for Linux its kernel, virtiofs and Sluice's mounts; and what
 * Sluice would do next.
 *
 * It runs fixed argument vectors only (guest-windows.h's programs) and
 * reads fixed files; every value read is made printable and bounded before
 * it goes into the report or the facts.
 *
 * Blocking: call from a worker thread.  Errors: the agent's own failure in
 * SLUICE_GUEST_AGENT_ERROR (guest-agent.h) when it is gone or hangs;
 * anything else one question failing is said in the report, not an error. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>

#include "wire-enums.h"

G_BEGIN_DECLS

/* What the doctor is told of the VM besides what it asks the guest. */
typedef struct {
        const char *vm_name;
        SluiceWireGuestOs os;
        const char *const *tags;        /* the shares plugged into the VM */
        const char *const *places;      /* where Sluice mounted each ("" none) */
} SluiceDoctorInput;

/* The report (plain text, printable) and in FACTS an a{sv} of the same;
 * MISSING (may be NULL) gets what a Windows guest lacks ("winfsp",
 * "virtio-fs"), or NULL when not known (a Linux guest). */
char *sluice_guest_doctor_run(virDomainPtr domain, const SluiceDoctorInput *input, GVariant **facts,
                              char ***missing, GError **error);

/* Pure helpers, for the doctor and the unit tests. */

/* The data of value NAME in what `reg query KEY [/v NAME]` prints
 * ("    NAME    REG_SZ    DATA"), printable and bounded; NULL when not there. */
char *sluice_guest_doctor_reg_value(const char *out, gsize len, const char *name);
/* Every value of such an output as "NAME = DATA" lines, printable and bounded. */
char **sluice_guest_doctor_reg_values(const char *out, gsize len);
/* The START_TYPE number in `sc.exe qc NAME` (2 automatic, 3 manual,
 * 4 disabled …), 0 when none. */
int sluice_guest_doctor_sc_start_type(const char *out, gsize len);

G_END_DECLS
