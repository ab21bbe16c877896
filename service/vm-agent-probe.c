/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-agent-probe.c — the agent probe's table; see vm-agent-probe.h. */
#include "vm-agent-probe.h"

#define A(name) SLUICE_AGENT_PROBE_ACTION_##name
#define E(name) [SLUICE_AGENT_PROBE_EVENT_##name]
#define S(name) [SLUICE_AGENT_PROBE_##name]
#define GO(state) .moves = TRUE, .next = SLUICE_AGENT_PROBE_##state
#define DO(set) .actions = (set)

typedef struct {
        gboolean moves; /* FALSE: the state stays */
        SluiceAgentProbeState next;
        SluiceAgentProbeActions actions;
} Row;

/* An event a state does not list changes nothing and does nothing. */
static const Row table[SLUICE_AGENT_PROBE_N_STATES][SLUICE_AGENT_PROBE_N_EVENTS] = {
        S(IDLE) = {
                E(READ_NONE) = { GO(IDLE), DO(A(PUBLISH_NONE)) },
                E(READ_DOWN) = { GO(IDLE), DO(A(PUBLISH_DISCONNECTED)) },
                /* the channel is there: until the agent answers, nobody does */
                E(READ_PAUSED) = { GO(UNASKED), DO(A(PUBLISH_DISCONNECTED)) },
                E(READ_UP) = { GO(PROBING), DO(A(PUBLISH_DISCONNECTED) | A(START_PROBE)) },
                E(AGENT_EVENT) = { DO(A(REFRESH)) },
                E(RECHECK) = { DO(A(REFRESH)) },
                E(REMOVED) = { GO(GONE) },
        },
        S(UNASKED) = {
                E(READ_NONE) = { GO(IDLE), DO(A(PUBLISH_NONE)) },
                E(READ_DOWN) = { GO(IDLE), DO(A(PUBLISH_DISCONNECTED)) },
                /* a paused guest cannot answer before it resumes */
                E(READ_PAUSED) = { DO(A(PUBLISH_CHANNEL)) },
                E(READ_UP) = { GO(PROBING), DO(A(PUBLISH_CHANNEL) | A(START_PROBE)) },
                E(AGENT_EVENT) = { DO(A(REFRESH)) },
                E(RECHECK) = { DO(A(REFRESH)) },
                E(REMOVED) = { GO(GONE) },
        },
        S(PROBING) = {
                E(READ_NONE) = { GO(PROBING_STALE), DO(A(PUBLISH_NONE)) },
                E(READ_DOWN) = { GO(PROBING_STALE), DO(A(PUBLISH_DISCONNECTED)) },
                /* a probe across a pause may have timed out in it */
                E(RESUMED) = { GO(PROBING_STALE) },
                E(AGENT_EVENT) = { GO(PROBING_STALE), DO(A(REFRESH)) },
                E(LIBVIRT_LOST) = { GO(PROBING_STALE) },
                E(PROBE_READY) = { GO(READY), DO(A(PUBLISH_READY)) },
                E(PROBE_RESTRICTED) = { GO(RESTRICTED), DO(A(PUBLISH_RESTRICTED)) },
                E(PROBE_NO_ANSWER) = { GO(RETRY_WAIT), DO(A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY)) },
                E(PROBE_FAILED) = { GO(SILENT), DO(A(PUBLISH_NO_ANSWER)) },
                /* the next read asks */
                E(PROBE_NOT_STARTED) = { GO(UNASKED) },
                E(REMOVED) = { GO(GONE) },
        },
        S(PROBING_STALE) = {
                E(READ_NONE) = { DO(A(PUBLISH_NONE)) },
                E(READ_DOWN) = { DO(A(PUBLISH_DISCONNECTED)) },
                /* one probe at a time: the answer asks again */
                E(READ_PAUSED) = { DO(A(PUBLISH_CHANNEL)) },
                E(READ_UP) = { DO(A(PUBLISH_CHANNEL)) },
                E(AGENT_EVENT) = { DO(A(REFRESH)) },
                /* the answer is for a connection that has gone: ask the one there is now */
                E(PROBE_READY) = { GO(UNASKED), DO(A(RECONSIDER)) },
                E(PROBE_RESTRICTED) = { GO(UNASKED), DO(A(RECONSIDER)) },
                E(PROBE_NO_ANSWER) = { GO(UNASKED), DO(A(RECONSIDER)) },
                E(PROBE_FAILED) = { GO(UNASKED), DO(A(RECONSIDER)) },
                E(PROBE_NOT_STARTED) = { GO(UNASKED), DO(A(RECONSIDER)) },
                E(REMOVED) = { GO(GONE) },
        },
        S(RETRY_WAIT) = {
                E(READ_NONE) = { GO(IDLE), DO(A(CANCEL_RETRY) | A(PUBLISH_NONE)) },
                E(READ_DOWN) = { GO(IDLE), DO(A(CANCEL_RETRY) | A(PUBLISH_DISCONNECTED)) },
                /* asked again once it resumes, not while it cannot answer */
                E(READ_PAUSED) = { GO(UNASKED), DO(A(CANCEL_RETRY)) },
                E(RESUMED) = { GO(UNASKED), DO(A(CANCEL_RETRY)) },
                E(AGENT_EVENT) = { GO(UNASKED), DO(A(CANCEL_RETRY) | A(REFRESH)) },
                E(LIBVIRT_LOST) = { GO(UNASKED), DO(A(CANCEL_RETRY)) },
                E(RETRY_DUE) = { GO(PROBING), DO(A(START_PROBE)) },
                E(REMOVED) = { GO(GONE), DO(A(CANCEL_RETRY)) },
        },
        S(READY) = {
                E(READ_NONE) = { GO(IDLE), DO(A(PUBLISH_NONE)) },
                E(READ_DOWN) = { GO(IDLE), DO(A(PUBLISH_DISCONNECTED)) },
                /* a ready agent is still the same one after a pause */
                E(AGENT_EVENT) = { GO(UNASKED), DO(A(REFRESH)) },
                E(RECHECK) = { GO(UNASKED), DO(A(REFRESH)) },
                E(LIBVIRT_LOST) = { GO(UNASKED) },
                E(REMOVED) = { GO(GONE) },
        },
        S(RESTRICTED) = {
                E(READ_NONE) = { GO(IDLE), DO(A(PUBLISH_NONE)) },
                E(READ_DOWN) = { GO(IDLE), DO(A(PUBLISH_DISCONNECTED)) },
                /* its policy may have been changed while it was paused */
                E(RESUMED) = { GO(UNASKED) },
                E(AGENT_EVENT) = { GO(UNASKED), DO(A(REFRESH)) },
                E(RECHECK) = { GO(UNASKED), DO(A(REFRESH)) },
                E(LIBVIRT_LOST) = { GO(UNASKED) },
                E(REMOVED) = { GO(GONE) },
        },
        S(SILENT) = {
                E(READ_NONE) = { GO(IDLE), DO(A(PUBLISH_NONE)) },
                E(READ_DOWN) = { GO(IDLE), DO(A(PUBLISH_DISCONNECTED)) },
                E(RESUMED) = { GO(UNASKED) },
                E(AGENT_EVENT) = { GO(UNASKED), DO(A(REFRESH)) },
                E(RECHECK) = { GO(UNASKED), DO(A(REFRESH)) },
                E(LIBVIRT_LOST) = { GO(UNASKED) },
                E(REMOVED) = { GO(GONE) },
        },
        /* S(GONE): nothing */
};

void sluice_agent_probe_init(SluiceAgentProbe *self)
{
        self->state = SLUICE_AGENT_PROBE_IDLE;
        self->attempts = 0;
}

SluiceAgentProbeResult sluice_agent_probe_step(SluiceAgentProbe *self, SluiceAgentProbeEvent event)
{
        SluiceAgentProbeResult result = { .next = self->state, .actions = 0 };
        const Row *row;

        if ((guint)self->state >= SLUICE_AGENT_PROBE_N_STATES || (guint)event >= SLUICE_AGENT_PROBE_N_EVENTS)
                return result;
        /* the last attempt's silence is final */
        if (self->state == SLUICE_AGENT_PROBE_PROBING && event == SLUICE_AGENT_PROBE_EVENT_PROBE_NO_ANSWER &&
            ++self->attempts >= SLUICE_AGENT_PROBE_ATTEMPTS)
                event = SLUICE_AGENT_PROBE_EVENT_PROBE_FAILED;
        row = &table[self->state][event];
        if (row->moves)
                self->state = row->next;
        /* the count belongs to one round of asking the same connection */
        if (self->state != SLUICE_AGENT_PROBE_PROBING && self->state != SLUICE_AGENT_PROBE_RETRY_WAIT)
                self->attempts = 0;
        result.next = self->state;
        result.actions = row->actions;
        return result;
}

const char *sluice_agent_probe_state_name(SluiceAgentProbeState state)
{
        static const char *const names[SLUICE_AGENT_PROBE_N_STATES] = {
                S(IDLE) = "idle",
                S(UNASKED) = "unasked",
                S(PROBING) = "probing",
                S(PROBING_STALE) = "probing-stale",
                S(RETRY_WAIT) = "retry-wait",
                S(READY) = "ready",
                S(RESTRICTED) = "restricted",
                S(SILENT) = "silent",
                S(GONE) = "gone",
        };

        return (guint)state < G_N_ELEMENTS(names) ? names[state] : "?";
}

const char *sluice_agent_probe_event_name(SluiceAgentProbeEvent event)
{
        static const char *const names[SLUICE_AGENT_PROBE_N_EVENTS] = {
                E(READ_NONE) = "read-none",
                E(READ_DOWN) = "read-down",
                E(READ_PAUSED) = "read-paused",
                E(READ_UP) = "read-up",
                E(RESUMED) = "resumed",
                E(AGENT_EVENT) = "agent-event",
                E(RECHECK) = "recheck",
                E(LIBVIRT_LOST) = "libvirt-lost",
                E(PROBE_READY) = "probe-ready",
                E(PROBE_RESTRICTED) = "probe-restricted",
                E(PROBE_NO_ANSWER) = "probe-no-answer",
                E(PROBE_FAILED) = "probe-failed",
                E(PROBE_NOT_STARTED) = "probe-not-started",
                E(RETRY_DUE) = "retry-due",
                E(REMOVED) = "removed",
        };

        return (guint)event < G_N_ELEMENTS(names) ? names[event] : "?";
}
