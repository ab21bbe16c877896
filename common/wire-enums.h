/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wire-enums.h — the words of org.sluice.Sluice1's state properties
 * (Share.State, Share.GuestState, Vm.State, Vm.GuestAgent, Vm.GuestOsType),
 * of Share.Names and Share.Case, and of Share.Event's kind, as enums.
 *
 * The API carries these states as fixed English words; this is the one place
 * that turns them into enums and back.  The service publishes with _name(),
 * clients read with _parse(), and everyone else compares enums: a word
 * written out anywhere but here is a second spelling waiting to drift.
 * _parse() returns FALSE, with *ret untouched, for a word this build does
 * not know (a newer service): the caller shows the word as it is. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Share.State. */
typedef enum {
        SLUICE_WIRE_SHARE_STOPPED,   /* "stopped": no worker */
        SLUICE_WIRE_SHARE_STARTING,  /* "starting": worker launched, not ready yet */
        SLUICE_WIRE_SHARE_RUNNING,   /* "running": listening, not plugged into a VM */
        SLUICE_WIRE_SHARE_ATTACHED,  /* "attached": plugged into the running VM */
        SLUICE_WIRE_SHARE_FAILED,    /* "failed": Share.Error says why */
} SluiceWireShareState;

/* Share.GuestState: what Sluice does in the guest. */
typedef enum {
        SLUICE_WIRE_GUEST_IDLE,       /* "": nothing (no agent, AutoMount off, not attached) */
        SLUICE_WIRE_GUEST_MOUNTING,   /* "mounting" */
        SLUICE_WIRE_GUEST_MOUNTED,    /* "mounted": Share.GuestPath says where */
        SLUICE_WIRE_GUEST_UNMOUNTING, /* "unmounting" */
        SLUICE_WIRE_GUEST_FAILED,     /* "failed": mounting failed, Share.Error says why */
} SluiceWireGuestState;

/* Vm.GuestAgent. */
typedef enum {
        SLUICE_WIRE_AGENT_NONE,         /* "none": no agent channel in the definition */
        SLUICE_WIRE_AGENT_DISCONNECTED, /* "disconnected": a channel, but no agent answers */
        SLUICE_WIRE_AGENT_READY,        /* "ready" */
        SLUICE_WIRE_AGENT_RESTRICTED,   /* "restricted": answers, but blocks what mounting needs */
} SluiceWireGuestAgent;

/* Vm.State. */
typedef enum {
        SLUICE_WIRE_VM_RUNNING,  /* "running" */
        SLUICE_WIRE_VM_PAUSED,   /* "paused" */
        SLUICE_WIRE_VM_SHUTOFF,  /* "shutoff" */
        SLUICE_WIRE_VM_CRASHED,  /* "crashed" */
        SLUICE_WIRE_VM_OTHER,    /* "other": any state libvirt has that Sluice does not tell apart */
} SluiceWireVmState;

/* Vm.GuestOsType: the guest's OS as its agent says. */
typedef enum {
        SLUICE_WIRE_GUEST_OS_UNKNOWN, /* "": no agent answered yet */
        SLUICE_WIRE_GUEST_OS_LINUX,   /* "linux" */
        SLUICE_WIRE_GUEST_OS_WINDOWS, /* "windows" */
} SluiceWireGuestOs;

/* Share.Event's kind: what a user should hear about. */
typedef enum {
        SLUICE_WIRE_EVENT_ATTACHED,  /* "attached": plugged in (and mounted, where Sluice mounts) */
        SLUICE_WIRE_EVENT_DETACHED,  /* "detached" */
        SLUICE_WIRE_EVENT_CRASHED,   /* "crashed": the worker died */
        SLUICE_WIRE_EVENT_RECOVERED, /* "recovered": served again after a crash */
        SLUICE_WIRE_EVENT_FAILED,    /* "failed" */
        SLUICE_WIRE_EVENT_RESUMED,   /* "resumed": a crash the guest did not notice (nothing failed) */
        SLUICE_WIRE_EVENT_LETTER_CHANGED, /* "letter-changed": the share's drive letter was taken: another one */
} SluiceWireEvent;

/* Share.Names and ServedNames: how names a Windows guest cannot use are shown. */
typedef enum {
        SLUICE_WIRE_NAMES_DEFAULT, /* "": follow the VM's OS (Names only, never served) */
        SLUICE_WIRE_NAMES_POSIX,   /* "posix": as they are on the host */
        SLUICE_WIRE_NAMES_WINDOWS, /* "windows": WinFsp's mapping */
} SluiceWireNames;

/* Share.Case and ServedCase. */
typedef enum {
        SLUICE_WIRE_CASE_DEFAULT,     /* "": follow the VM's OS (Case only, never served) */
        SLUICE_WIRE_CASE_SENSITIVE,   /* "sensitive" */
        SLUICE_WIRE_CASE_INSENSITIVE, /* "insensitive" */
} SluiceWireCase;

const char *sluice_wire_share_state_name(SluiceWireShareState state);
gboolean sluice_wire_share_state_parse(const char *word, SluiceWireShareState *ret);

const char *sluice_wire_guest_state_name(SluiceWireGuestState state);
gboolean sluice_wire_guest_state_parse(const char *word, SluiceWireGuestState *ret);

const char *sluice_wire_guest_agent_name(SluiceWireGuestAgent agent);
gboolean sluice_wire_guest_agent_parse(const char *word, SluiceWireGuestAgent *ret);

const char *sluice_wire_vm_state_name(SluiceWireVmState state);
gboolean sluice_wire_vm_state_parse(const char *word, SluiceWireVmState *ret);

const char *sluice_wire_guest_os_name(SluiceWireGuestOs os);
gboolean sluice_wire_guest_os_parse(const char *word, SluiceWireGuestOs *ret);

const char *sluice_wire_event_name(SluiceWireEvent event);
gboolean sluice_wire_event_parse(const char *word, SluiceWireEvent *ret);

const char *sluice_wire_names_name(SluiceWireNames names);
gboolean sluice_wire_names_parse(const char *word, SluiceWireNames *ret);

const char *sluice_wire_case_name(SluiceWireCase case_);
gboolean sluice_wire_case_parse(const char *word, SluiceWireCase *ret);

/* Shorthands for the questions clients ask most: a NULL or unknown word is
 * not the state asked about. */
gboolean sluice_wire_share_state_is(const char *word, SluiceWireShareState state);
gboolean sluice_wire_guest_state_is(const char *word, SluiceWireGuestState state);
gboolean sluice_wire_guest_agent_is(const char *word, SluiceWireGuestAgent agent);
gboolean sluice_wire_vm_state_is(const char *word, SluiceWireVmState state);
gboolean sluice_wire_guest_os_is(const char *word, SluiceWireGuestOs os);
gboolean sluice_wire_event_is(const char *word, SluiceWireEvent event);
gboolean sluice_wire_names_is(const char *word, SluiceWireNames names);
gboolean sluice_wire_case_is(const char *word, SluiceWireCase case_);

G_END_DECLS
