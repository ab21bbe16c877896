/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-domain.h — one libvirt domain the VM manager knows: its exported
 * org.sluice.Sluice1.Vm object, the state read from libvirtd (in worker
 * threads, applied in the main thread), the devices plugged into it, what
 * its guest agent is (asked in a worker thread whenever the agent connects:
 * vm-agent-probe.h's table), whether the host's confinement keeps its QEMU
 * from Sluice's sockets
 * (vm-confinement.h, checked with each read) and its Vm.EnableSharedMemory
 * and Vm.EnableGuestAgent methods.
 *
 * Reference-counted (threads reading for it hold a reference); everything
 * else is main-thread only.  The fields are read by vm-manager.c; only this
 * file writes them, except the tag sets (sluice_vm_domain_set_tag). */
#pragma once

#include <gio/gio.h>
#include <libvirt-gobject/libvirt-gobject.h>

#include "domain-xml.h"
#include "guest-agent.h"
#include "sluice-dbus.h"
#include "vm-agent-probe.h"
#include "vm-connection.h"
#include "wire-enums.h"

G_BEGIN_DECLS

/* How long a D-Bus caller of a method that waits on libvirtd waits at most
 * for its answer: less than the 25 s D-Bus callers wait by default, so they
 * hear what happened instead of a bare timeout. */
#define SLUICE_VM_ANSWER_TIMEOUT_S 20

typedef struct _SluiceVmDomain SluiceVmDomain;

/* transition: +1 the domain started, -1 it stopped, 0 anything else changed */
typedef void (*SluiceVmDomainChanged)(SluiceVmDomain *vm, int transition, gpointer user_data);
/* what its guest agent is or its OS changed (after the "changed" of the same read) */
typedef void (*SluiceVmDomainGuestChanged)(SluiceVmDomain *vm, gpointer user_data);

struct _SluiceVmDomain {
        SluiceVmConnection *connection;
        char *uuid;
        char *name;
        char *os;                 /* libosinfo short id or "" */
        gboolean active;
        gboolean paused;          /* active, but its CPUs stopped (or suspended) */
        gboolean shared_memory;
        gint64 qemu_uid;          /* -1: the service's own user */
        SluiceConfinementModel confinement; /* AppArmor, SELinux or none, as last read */
        gboolean ready;           /* first state read: exported and visible to lookups */
        GHashTable *alias_to_tag; /* live devices, to name a removed one */
        GHashTable *tags;         /* tags plugged in (running VM) */

        /* the guest agent, as Vm.GuestAgent* show it */
        SluiceWireGuestAgent guest_agent;
        SluiceWireGuestOs guest_os_type; /* the last an agent said; kept while it is away */
        char *guest_os_name;
        char *guest_agent_blocked; /* RESTRICTED: the commands its policy blocks */
        /* vm-guest.c's: the tags Sluice mounted in the guest (tag → place),
         * and its guest operations, one at a time per VM */
        GHashTable *guest_mounts;
        GQueue *guest_calls;      /* GTask * waiting */
        gboolean guest_busy;      /* one runs */

        /* private to vm-domain.c */
        GVirDomain *domain;       /* NULL while the connection is down */
        GDBusObjectManagerServer *server;
        SluiceObjectSkeleton *object;
        SluiceVm *iface;
        SluiceVmDomainChanged changed;
        SluiceVmDomainGuestChanged guest_changed;
        gpointer changed_data;
        SluiceDomainAgentChannel agent_channel; /* in the XML last read */
        gboolean agent_next_boot; /* running without it, but the saved definition has it */
        SluiceAgentProbe probe;   /* asking the agent what it is (vm-agent-probe.h) */
        guint probe_retry;        /* source: SCHEDULE_RETRY's timer, or 0 */
        char *agent_error;        /* why the last probe failed (printable), or NULL */
        guint64 tags_epoch;       /* bumped when Sluice changes tags: older reads lose */
        char *confinement_blocked; /* what the last read found keeping QEMU out, or NULL */
        char *confinement_refused; /* why the last attach was refused, or NULL */
        gboolean removed;
        gboolean refreshing;      /* a read is in flight */
        gboolean refresh_again;   /* something changed meanwhile: read again after it */
};

/* A new entry for domain (not exported before its state is read). */
SluiceVmDomain *sluice_vm_domain_new(SluiceVmConnection *connection, GVirDomain *domain,
                                     GDBusObjectManagerServer *server,
                                     SluiceVmDomainChanged changed,
                                     SluiceVmDomainGuestChanged guest_changed, gpointer changed_data);
SluiceVmDomain *sluice_vm_domain_ref(SluiceVmDomain *vm);
void sluice_vm_domain_unref(SluiceVmDomain *vm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceVmDomain, sluice_vm_domain_unref)
/* Unexports it and stops reporting; the caller drops its reference after. */
void sluice_vm_domain_remove(SluiceVmDomain *vm);

/* The libvirt-glib object after a reconnect, or NULL (connection down). */
void sluice_vm_domain_set_domain(SluiceVmDomain *vm, GVirDomain *domain);
/* A new reference to the raw domain, or NULL while the connection is down. */
virDomainPtr sluice_vm_domain_get_raw(SluiceVmDomain *vm);

/* Re-reads state and XML in a worker thread (coalesced: one read at a time). */
void sluice_vm_domain_refresh(SluiceVmDomain *vm);
/* Records a device Sluice (un)plugged: newer than any read in flight. */
void sluice_vm_domain_set_tag(SluiceVmDomain *vm, const char *tag, gboolean plugged);
/* The VM stopped: nothing is plugged in any more; QEMU's user loses its access. */
void sluice_vm_domain_forget_devices(SluiceVmDomain *vm);

/* libvirt says the guest agent (dis)connected: re-read, and ask it anew
 * (the probe's AGENT_EVENT). */
void sluice_vm_domain_agent_event(SluiceVmDomain *vm, gboolean connected);
/* An agent command failed as if the agent were gone: ask it anew, unless it
 * is being asked already (the probe's RECHECK). */
void sluice_vm_domain_agent_recheck(SluiceVmDomain *vm);
/* What Vm.GuestAgentMessage says now ("" when the agent is ready). */
const char *sluice_vm_domain_agent_message(SluiceVmDomain *vm);
/* What to do in the guest so that its agent runs what mounting needs. */
char *sluice_vm_domain_restricted_message(const char *blocked);

/* An attach was refused by the host's confinement (PROBLEM, in words) or
 * succeeded (NULL): Vm.ConfinementProblem follows until the VM stops. */
void sluice_vm_domain_set_confinement_refused(SluiceVmDomain *vm, const char *problem);

/* What the guest needs to do to use the device with TAG, for the VM's OS. */
char *sluice_vm_domain_guest_hint(const SluiceVmDomain *vm, const char *tag);

G_END_DECLS
