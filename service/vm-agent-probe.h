/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-agent-probe.h — asking a VM's guest agent what it is, as one state
 * machine: read this first.  vm-domain.c holds one SluiceAgentProbe per VM,
 * turns what happens (a read of the domain, a probe's answer, a timer,
 * libvirt's agent events) into events, and carries out the actions.
 *
 *                READ_UP                      PROBE_READY
 *   IDLE ------------------------> PROBING ------------------> READY
 *    |  ^                          |  |  |   PROBE_RESTRICTED
 *    |  | READ_NONE, READ_DOWN     |  |  +---------------------> RESTRICTED
 *    |  | (from any state but      |  |      PROBE_FAILED (or the
 *    |  |  GONE; a probe in        |  |      last PROBE_NO_ANSWER)
 *    |  |  flight: PROBING_STALE)  |  +------------------------> SILENT
 *    |  |                          |
 *    |  |           PROBE_NO_ANSWER|  ^ RETRY_DUE
 *    |  |                          v  |
 *    |  +----------------------- RETRY_WAIT
 *    | READ_PAUSED
 *    v                    READ_UP
 *   UNASKED -----------------------------------------> PROBING
 *      ^
 *      | from READY, RESTRICTED, SILENT: AGENT_EVENT, RECHECK,
 *      | LIBVIRT_LOST (the agent's connection may be another one now),
 *      | RESUMED (READY stays: the same agent after a pause);
 *      | from RETRY_WAIT (the retry cancelled): the same but RECHECK, and
 *      | READ_PAUSED; from PROBING: to PROBING_STALE instead, on the same
 *      | events but RECHECK and READ_PAUSED
 *
 *   PROBING_STALE --PROBE_*--> UNASKED, and the last read is considered
 *   again (RECONSIDER): what the agent said is dropped, since it answered
 *   for a connection that has gone.
 *   Any state --REMOVED--> GONE, where nothing happens any more.
 *
 *   IDLE           nothing to ask: no channel, the VM is not running, or
 *                  nobody is on the channel's guest side
 *   UNASKED        an agent may be there and has not been asked (the VM is
 *                  paused, or what it said is stale); GuestAgent shows the
 *                  last answer until the next one
 *   PROBING        a probe runs (at most one per VM)
 *   PROBING_STALE  a probe runs whose answer will be dropped
 *   RETRY_WAIT     the agent opened its channel but did not answer (it
 *                  starts while the guest boots): asked again after a while,
 *                  SLUICE_AGENT_PROBE_ATTEMPTS probes in all
 *   READY, RESTRICTED  it answered (RESTRICTED: its policy blocks what
 *                  mounting needs); not asked again until something says
 *                  its connection changed
 *   SILENT         it never answered: not asked again until then either
 *   GONE           the VM was removed
 *
 * The published Vm.GuestAgent changes only by the PUBLISH_* actions:
 * PUBLISH_NONE "none", PUBLISH_DISCONNECTED "disconnected" (nothing to
 * quote), PUBLISH_NO_ANSWER "disconnected" quoting the probe's error,
 * PUBLISH_READY "ready", PUBLISH_RESTRICTED "restricted" (with what the
 * probe said of the guest's OS); PUBLISH_CHANNEL turns "none" into
 * "disconnected" (the channel is there, nobody answers yet) and leaves any
 * other value until the answer.
 *
 * The RECHECK event is sluice_vm_domain_agent_recheck(): an agent command
 * failed as if the agent were gone; it is dropped while a probe is asked
 * for anyway (PROBING, PROBING_STALE, RETRY_WAIT).  AGENT_EVENT and RECHECK
 * re-read the domain (REFRESH) wherever they are not dropped: its READ_*
 * then says whether there is an agent to ask.
 *
 * Pure: no GLib main loop, no libvirt, no D-Bus; the caller owns the struct. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Probes per connection of the agent, the first one included, before it is
 * taken as SILENT. */
#define SLUICE_AGENT_PROBE_ATTEMPTS 6

typedef enum {
        SLUICE_AGENT_PROBE_IDLE,
        SLUICE_AGENT_PROBE_UNASKED,
        SLUICE_AGENT_PROBE_PROBING,
        SLUICE_AGENT_PROBE_PROBING_STALE,
        SLUICE_AGENT_PROBE_RETRY_WAIT,
        SLUICE_AGENT_PROBE_READY,
        SLUICE_AGENT_PROBE_RESTRICTED,
        SLUICE_AGENT_PROBE_SILENT,
        SLUICE_AGENT_PROBE_GONE,
        SLUICE_AGENT_PROBE_N_STATES,
} SluiceAgentProbeState;

typedef enum {
        /* a read of the domain found (in this order of precedence): */
        SLUICE_AGENT_PROBE_EVENT_READ_NONE,   /* no agent channel in the definition */
        SLUICE_AGENT_PROBE_EVENT_READ_DOWN,   /* the VM not running, or the channel without an agent */
        SLUICE_AGENT_PROBE_EVENT_READ_PAUSED, /* the VM paused, an agent maybe on the channel */
        SLUICE_AGENT_PROBE_EVENT_READ_UP,     /* the VM running, an agent maybe on the channel */
        SLUICE_AGENT_PROBE_EVENT_RESUMED,     /* the VM ran on after a pause (before that read's READ_*) */
        /* the agent's connection may be another one now */
        SLUICE_AGENT_PROBE_EVENT_AGENT_EVENT, /* libvirt says the agent (dis)connected */
        SLUICE_AGENT_PROBE_EVENT_RECHECK,     /* an agent command failed as if it were gone */
        SLUICE_AGENT_PROBE_EVENT_LIBVIRT_LOST, /* the connection to libvirtd went away */
        /* what START_PROBE's probe found */
        SLUICE_AGENT_PROBE_EVENT_PROBE_READY,
        SLUICE_AGENT_PROBE_EVENT_PROBE_RESTRICTED,
        SLUICE_AGENT_PROBE_EVENT_PROBE_NO_ANSWER, /* the channel is open, no answer: it may still start */
        SLUICE_AGENT_PROBE_EVENT_PROBE_FAILED,    /* any other failure: not asked again */
        SLUICE_AGENT_PROBE_EVENT_PROBE_NOT_STARTED, /* START_PROBE could not start one */
        SLUICE_AGENT_PROBE_EVENT_RETRY_DUE,   /* SCHEDULE_RETRY's timer */
        SLUICE_AGENT_PROBE_EVENT_REMOVED,     /* the VM is gone */
        SLUICE_AGENT_PROBE_N_EVENTS,
} SluiceAgentProbeEvent;

typedef enum {
        SLUICE_AGENT_PROBE_ACTION_CANCEL_RETRY = 1 << 0,
        SLUICE_AGENT_PROBE_ACTION_PUBLISH_NONE = 1 << 1,
        SLUICE_AGENT_PROBE_ACTION_PUBLISH_DISCONNECTED = 1 << 2,
        SLUICE_AGENT_PROBE_ACTION_PUBLISH_NO_ANSWER = 1 << 3,
        SLUICE_AGENT_PROBE_ACTION_PUBLISH_READY = 1 << 4,
        SLUICE_AGENT_PROBE_ACTION_PUBLISH_RESTRICTED = 1 << 5,
        SLUICE_AGENT_PROBE_ACTION_PUBLISH_CHANNEL = 1 << 6,
        SLUICE_AGENT_PROBE_ACTION_START_PROBE = 1 << 7,
        SLUICE_AGENT_PROBE_ACTION_SCHEDULE_RETRY = 1 << 8,
        SLUICE_AGENT_PROBE_ACTION_REFRESH = 1 << 9,     /* re-read the domain */
        SLUICE_AGENT_PROBE_ACTION_RECONSIDER = 1 << 10, /* step again with the last read's READ_* */
} SluiceAgentProbeActions;

typedef struct {
        SluiceAgentProbeState state;
        guint attempts; /* failed probes of this connection of the agent */
} SluiceAgentProbe;

typedef struct {
        SluiceAgentProbeState next;
        SluiceAgentProbeActions actions; /* to carry out in the order of the flags' values */
} SluiceAgentProbeResult;

void sluice_agent_probe_init(SluiceAgentProbe *self);
/* Moves SELF by EVENT.  An unknown state or event changes nothing. */
SluiceAgentProbeResult sluice_agent_probe_step(SluiceAgentProbe *self, SluiceAgentProbeEvent event);

const char *sluice_agent_probe_state_name(SluiceAgentProbeState state);
const char *sluice_agent_probe_event_name(SluiceAgentProbeEvent event);

G_END_DECLS
