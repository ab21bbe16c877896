/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-confinement.h — whether the host's confinement of a VM's QEMU (the
 * AppArmor profile or SELinux label libvirt gives a qemu:///system VM) lets
 * that QEMU connect to Sluice's worker sockets, and what a person does when
 * it does not.
 *
 * AppArmor: the check reads what decides it — AppArmor on
 * (/sys/module/apparmor/parameters/enabled), Sluice's rule installed
 * (SLUICE_CONFINEMENT_APPARMOR_SNIPPET holds SLUICE_CONFINEMENT_APPARMOR_RULE),
 * included by libvirt's abstraction (libvirt >= 9.6 includes the
 * libvirt-qemu.d folder; older libvirt through a line in the local
 * abstraction).  Whether a running VM's profile was loaded with the rule
 * cannot be read from files (the package reloads running VMs' profiles
 * without rewriting them): only a refusal tells that, and
 * sluice_confinement_explain_refusal() words it.  SELinux: whether Sluice's module is
 * loaded cannot be told without privileges, so a confined, enforcing VM is
 * UNKNOWN with what to check (an advisory, no libselinux).
 *
 * Reads a few small host files (each bounded by
 * SLUICE_CONFINEMENT_FILE_MAX_BYTES; garbage, FIFOs and unreadable files
 * give UNKNOWN or BLOCKED, never a crash), runs nothing, needs no privilege.
 * It blocks on the file system: call it from a worker thread.  No state:
 * thread-safe.
 *
 * Test builds (-Dtest_hooks=true) only: every path is read under
 * $SLUICE_TEST_CONFINEMENT_ROOT when it is set, so that tests plant a host's
 * files in a scratch folder; the messages still name the real paths. */
#pragma once

#include <glib.h>

#include "confinement-model.h"

G_BEGIN_DECLS

/* The rule and where the sluice package puts it (one line of its own). */
#define SLUICE_CONFINEMENT_APPARMOR_RULE "/tmp/sluice-[0-9]*-*/[0-9]*.sock rw,"
#define SLUICE_CONFINEMENT_APPARMOR_SNIPPET "/etc/apparmor.d/abstractions/libvirt-qemu.d/sluice"
/* The most of a host file the check reads. */
#define SLUICE_CONFINEMENT_FILE_MAX_BYTES (1024 * 1024)

typedef enum {
        SLUICE_CONFINEMENT_OK,      /* nothing known keeps QEMU from the sockets */
        SLUICE_CONFINEMENT_BLOCKED, /* the host's policy keeps it out: gap says what is missing */
        SLUICE_CONFINEMENT_UNKNOWN, /* confined, and this user cannot tell */
} SluiceConfinementStatus;

typedef enum {
        SLUICE_CONFINEMENT_GAP_NONE,
        SLUICE_CONFINEMENT_GAP_RULE_NOT_INSTALLED,  /* no snippet, or one without the rule */
        SLUICE_CONFINEMENT_GAP_RULE_NOT_INCLUDED,   /* installed, libvirt's abstraction skips it */
        SLUICE_CONFINEMENT_GAP_PROFILE_PREDATES,    /* refused although installed and included:
                                                     * the profile was loaded before the rule */
        SLUICE_CONFINEMENT_GAP_SOCKET_OUTSIDE_RULE, /* the socket's path is not one the rule covers */
} SluiceConfinementGap;

/* The VM as its live XML describes it (domain-xml.h); borrowed strings. */
typedef struct {
        SluiceConfinementModel model;
        const char *label; /* the seclabel's <label>, or NULL */
        const char *name;  /* for the messages */
        const char *uuid;  /* names the AppArmor profile when the label does not */
} SluiceConfinementVm;

typedef struct {
        SluiceConfinementStatus status;
        SluiceConfinementGap gap; /* BLOCKED only */
        /* for a person, translated: what blocks (BLOCKED) or might (UNKNOWN)
         * and what to do — the rule, its file for libvirt >= 9.6 and older,
         * the reload command, where a denial shows; "" when OK */
        char *message;
} SluiceConfinementReport;

void sluice_confinement_report_free(SluiceConfinementReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceConfinementReport, sluice_confinement_report_free)

/* Whether the VM's QEMU can reach SOCKET_PATH (a worker's socket, or NULL
 * when no share is in question: the path check is then left out).  Never
 * NULL. */
SluiceConfinementReport *sluice_confinement_check(const SluiceConfinementVm *vm,
                                                  const char *socket_path);

/* The same, once QEMU has been refused SOCKET_PATH: where the files say
 * nothing blocks an AppArmor-confined VM (on a host with AppArmor on), the
 * running profile must predate the rule: BLOCKED with
 * SLUICE_CONFINEMENT_GAP_PROFILE_PREDATES and the reload command.  Never
 * NULL. */
SluiceConfinementReport *sluice_confinement_explain_refusal(const SluiceConfinementVm *vm,
                                                            const char *socket_path);

G_END_DECLS
