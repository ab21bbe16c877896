/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest agent's probe table alone (vm-agent-probe.h), without libvirt,
 * a guest or a main loop: every event in every state gives the documented
 * next state and actions; and the sequences a VM lives through (a guest
 * that boots slowly, an agent that never answers, one that reconnects while
 * it is asked) end where Vm.GuestAgent says they do. */
#include <glib.h>

#include "vm-agent-probe.h"

#define A(name) SLUICE_AGENT_PROBE_ACTION_##name
#define S(name) SLUICE_AGENT_PROBE_##name
#define E(name) SLUICE_AGENT_PROBE_EVENT_##name

typedef struct {
        SluiceAgentProbeState state;
        SluiceAgentProbeEvent event;
        SluiceAgentProbeState next;
        SluiceAgentProbeActions actions;
} Expected;

/* Written from the header; anything not listed stays and does nothing
 * (GONE: everything).  A first failed probe (attempts 0). */
static const Expected expected[] = {
        { S(IDLE), E(READ_NONE), S(IDLE), A(PUBLISH_NONE) },
        { S(IDLE), E(READ_DOWN), S(IDLE), A(PUBLISH_DISCONNECTED) },
        { S(IDLE), E(READ_PAUSED), S(UNASKED), A(PUBLISH_DISCONNECTED) },
        { S(IDLE), E(READ_UP), S(PROBING), A(PUBLISH_DISCONNECTED) | A(START_PROBE) },
        { S(IDLE), E(AGENT_EVENT), S(IDLE), A(REFRESH) },
        { S(IDLE), E(RECHECK), S(IDLE), A(REFRESH) },
        { S(IDLE), E(REMOVED), S(GONE), 0 },

        { S(UNASKED), E(READ_NONE), S(IDLE), A(PUBLISH_NONE) },
        { S(UNASKED), E(READ_DOWN), S(IDLE), A(PUBLISH_DISCONNECTED) },
        { S(UNASKED), E(READ_PAUSED), S(UNASKED), A(PUBLISH_CHANNEL) },
        { S(UNASKED), E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE) },
        { S(UNASKED), E(AGENT_EVENT), S(UNASKED), A(REFRESH) },
        { S(UNASKED), E(RECHECK), S(UNASKED), A(REFRESH) },
        { S(UNASKED), E(REMOVED), S(GONE), 0 },

        { S(PROBING), E(READ_NONE), S(PROBING_STALE), A(PUBLISH_NONE) },
        { S(PROBING), E(READ_DOWN), S(PROBING_STALE), A(PUBLISH_DISCONNECTED) },
        { S(PROBING), E(RESUMED), S(PROBING_STALE), 0 },
        { S(PROBING), E(AGENT_EVENT), S(PROBING_STALE), A(REFRESH) },
        { S(PROBING), E(LIBVIRT_LOST), S(PROBING_STALE), 0 },
        { S(PROBING), E(PROBE_READY), S(READY), A(PUBLISH_READY) },
        { S(PROBING), E(PROBE_RESTRICTED), S(RESTRICTED), A(PUBLISH_RESTRICTED) },
        { S(PROBING), E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY) },
        { S(PROBING), E(PROBE_FAILED), S(SILENT), A(PUBLISH_NO_ANSWER) },
        { S(PROBING), E(PROBE_NOT_STARTED), S(UNASKED), 0 },
        { S(PROBING), E(REMOVED), S(GONE), 0 },

        { S(PROBING_STALE), E(READ_NONE), S(PROBING_STALE), A(PUBLISH_NONE) },
        { S(PROBING_STALE), E(READ_DOWN), S(PROBING_STALE), A(PUBLISH_DISCONNECTED) },
        { S(PROBING_STALE), E(READ_PAUSED), S(PROBING_STALE), A(PUBLISH_CHANNEL) },
        { S(PROBING_STALE), E(READ_UP), S(PROBING_STALE), A(PUBLISH_CHANNEL) },
        { S(PROBING_STALE), E(AGENT_EVENT), S(PROBING_STALE), A(REFRESH) },
        { S(PROBING_STALE), E(PROBE_READY), S(UNASKED), A(RECONSIDER) },
        { S(PROBING_STALE), E(PROBE_RESTRICTED), S(UNASKED), A(RECONSIDER) },
        { S(PROBING_STALE), E(PROBE_NO_ANSWER), S(UNASKED), A(RECONSIDER) },
        { S(PROBING_STALE), E(PROBE_FAILED), S(UNASKED), A(RECONSIDER) },
        { S(PROBING_STALE), E(PROBE_NOT_STARTED), S(UNASKED), A(RECONSIDER) },
        { S(PROBING_STALE), E(REMOVED), S(GONE), 0 },

        { S(RETRY_WAIT), E(READ_NONE), S(IDLE), A(CANCEL_RETRY) | A(PUBLISH_NONE) },
        { S(RETRY_WAIT), E(READ_DOWN), S(IDLE), A(CANCEL_RETRY) | A(PUBLISH_DISCONNECTED) },
        { S(RETRY_WAIT), E(READ_PAUSED), S(UNASKED), A(CANCEL_RETRY) },
        { S(RETRY_WAIT), E(RESUMED), S(UNASKED), A(CANCEL_RETRY) },
        { S(RETRY_WAIT), E(AGENT_EVENT), S(UNASKED), A(CANCEL_RETRY) | A(REFRESH) },
        { S(RETRY_WAIT), E(LIBVIRT_LOST), S(UNASKED), A(CANCEL_RETRY) },
        { S(RETRY_WAIT), E(RETRY_DUE), S(PROBING), A(START_PROBE) },
        { S(RETRY_WAIT), E(REMOVED), S(GONE), A(CANCEL_RETRY) },

        { S(READY), E(READ_NONE), S(IDLE), A(PUBLISH_NONE) },
        { S(READY), E(READ_DOWN), S(IDLE), A(PUBLISH_DISCONNECTED) },
        { S(READY), E(AGENT_EVENT), S(UNASKED), A(REFRESH) },
        { S(READY), E(RECHECK), S(UNASKED), A(REFRESH) },
        { S(READY), E(LIBVIRT_LOST), S(UNASKED), 0 },
        { S(READY), E(REMOVED), S(GONE), 0 },

        { S(RESTRICTED), E(READ_NONE), S(IDLE), A(PUBLISH_NONE) },
        { S(RESTRICTED), E(READ_DOWN), S(IDLE), A(PUBLISH_DISCONNECTED) },
        { S(RESTRICTED), E(RESUMED), S(UNASKED), 0 },
        { S(RESTRICTED), E(AGENT_EVENT), S(UNASKED), A(REFRESH) },
        { S(RESTRICTED), E(RECHECK), S(UNASKED), A(REFRESH) },
        { S(RESTRICTED), E(LIBVIRT_LOST), S(UNASKED), 0 },
        { S(RESTRICTED), E(REMOVED), S(GONE), 0 },

        { S(SILENT), E(READ_NONE), S(IDLE), A(PUBLISH_NONE) },
        { S(SILENT), E(READ_DOWN), S(IDLE), A(PUBLISH_DISCONNECTED) },
        { S(SILENT), E(RESUMED), S(UNASKED), 0 },
        { S(SILENT), E(AGENT_EVENT), S(UNASKED), A(REFRESH) },
        { S(SILENT), E(RECHECK), S(UNASKED), A(REFRESH) },
        { S(SILENT), E(LIBVIRT_LOST), S(UNASKED), 0 },
        { S(SILENT), E(REMOVED), S(GONE), 0 },
};

static SluiceAgentProbe machine_in(SluiceAgentProbeState state)
{
        SluiceAgentProbe m;

        sluice_agent_probe_init(&m);
        m.state = state;
        return m;
}

/* One step, checked: where it goes and what it does. */
static void step(SluiceAgentProbe *m, SluiceAgentProbeEvent event, SluiceAgentProbeState next,
                 SluiceAgentProbeActions actions)
{
        SluiceAgentProbeState from = m->state;
        SluiceAgentProbeResult r = sluice_agent_probe_step(m, event);

        g_test_message("%s + %s -> %s", sluice_agent_probe_state_name(from), sluice_agent_probe_event_name(event),
                       sluice_agent_probe_state_name(r.next));
        g_assert_cmpstr(sluice_agent_probe_state_name(r.next), ==, sluice_agent_probe_state_name(next));
        g_assert_cmpint(m->state, ==, next);
        g_assert_cmphex(r.actions, ==, actions);
}

static void test_every_event_in_every_state(void)
{
        guint listed = 0;

        for (guint state = 0; state < SLUICE_AGENT_PROBE_N_STATES; state++) {
                for (guint event = 0; event < SLUICE_AGENT_PROBE_N_EVENTS; event++) {
                        SluiceAgentProbe m = machine_in(state);
                        SluiceAgentProbeState next = state;
                        SluiceAgentProbeActions actions = 0;

                        for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
                                if (expected[i].state == state && expected[i].event == event) {
                                        next = expected[i].next;
                                        actions = expected[i].actions;
                                        listed++;
                                }
                        }
                        step(&m, event, next, actions);
                }
        }
        /* no row of the list is a duplicate or names a state or event that does not exist */
        g_assert_cmpuint(listed, ==, G_N_ELEMENTS(expected));
}

/* A guest that boots slowly: its agent opens the channel, does not answer
 * for a while (GuestAgent "disconnected", the error quoted), then answers. */
static void test_slow_boot_then_ready(void)
{
        SluiceAgentProbe m;

        sluice_agent_probe_init(&m);
        step(&m, E(READ_NONE), S(IDLE), A(PUBLISH_NONE));
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_DISCONNECTED) | A(START_PROBE));
        for (guint i = 1; i < SLUICE_AGENT_PROBE_ATTEMPTS; i++) {
                step(&m, E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY));
                /* a read meanwhile neither asks again nor cancels the retry */
                step(&m, E(READ_UP), S(RETRY_WAIT), 0);
                step(&m, E(RETRY_DUE), S(PROBING), A(START_PROBE));
        }
        step(&m, E(PROBE_READY), S(READY), A(PUBLISH_READY));
        /* asked once: later reads leave it be */
        step(&m, E(READ_UP), S(READY), 0);
}

/* An agent that never answers is asked SLUICE_AGENT_PROBE_ATTEMPTS times in
 * all, then left alone until something says its connection changed. */
static void test_silent_agent_gives_up(void)
{
        SluiceAgentProbe m = machine_in(S(UNASKED));
        guint probes = 0;

        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        probes++;
        for (guint i = 1; i < SLUICE_AGENT_PROBE_ATTEMPTS; i++) {
                step(&m, E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY));
                step(&m, E(RETRY_DUE), S(PROBING), A(START_PROBE));
                probes++;
        }
        g_assert_cmpuint(probes, ==, SLUICE_AGENT_PROBE_ATTEMPTS);
        step(&m, E(PROBE_NO_ANSWER), S(SILENT), A(PUBLISH_NO_ANSWER));
        step(&m, E(READ_UP), S(SILENT), 0);
        step(&m, E(RETRY_DUE), S(SILENT), 0);
        /* the agent reconnects: a full round of attempts again */
        step(&m, E(AGENT_EVENT), S(UNASKED), A(REFRESH));
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        for (guint i = 1; i < SLUICE_AGENT_PROBE_ATTEMPTS; i++) {
                step(&m, E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY));
                step(&m, E(RETRY_DUE), S(PROBING), A(START_PROBE));
        }
        step(&m, E(PROBE_NO_ANSWER), S(SILENT), A(PUBLISH_NO_ANSWER));
}

/* A round cut short by a reconnect starts over with all its attempts. */
static void test_attempts_count_per_connection(void)
{
        SluiceAgentProbe m = machine_in(S(UNASKED));

        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        for (guint i = 0; i < 3; i++) {
                step(&m, E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY));
                step(&m, E(RETRY_DUE), S(PROBING), A(START_PROBE));
        }
        step(&m, E(AGENT_EVENT), S(PROBING_STALE), A(REFRESH));
        step(&m, E(PROBE_NO_ANSWER), S(UNASKED), A(RECONSIDER));
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        for (guint i = 1; i < SLUICE_AGENT_PROBE_ATTEMPTS; i++) {
                step(&m, E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY));
                step(&m, E(RETRY_DUE), S(PROBING), A(START_PROBE));
        }
        step(&m, E(PROBE_NO_ANSWER), S(SILENT), A(PUBLISH_NO_ANSWER));
}

/* The agent reconnects while it is asked: the old connection's answer is
 * not published; the new one is asked. */
static void test_stale_answer_is_dropped(void)
{
        SluiceAgentProbe m = machine_in(S(UNASKED));

        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        step(&m, E(AGENT_EVENT), S(PROBING_STALE), A(REFRESH));
        /* the re-read comes first: no second probe while one runs */
        step(&m, E(READ_UP), S(PROBING_STALE), A(PUBLISH_CHANNEL));
        step(&m, E(PROBE_READY), S(UNASKED), A(RECONSIDER));
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        step(&m, E(PROBE_RESTRICTED), S(RESTRICTED), A(PUBLISH_RESTRICTED));
}

/* A guest command that found the agent gone: dropped while it is being
 * asked anyway; a ready agent is asked again, and GuestAgent stays "ready"
 * until it answers otherwise. */
static void test_recheck(void)
{
        SluiceAgentProbe m = machine_in(S(PROBING));

        step(&m, E(RECHECK), S(PROBING), 0);
        step(&m, E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY));
        step(&m, E(RECHECK), S(RETRY_WAIT), 0);
        step(&m, E(RETRY_DUE), S(PROBING), A(START_PROBE));
        step(&m, E(PROBE_READY), S(READY), A(PUBLISH_READY));
        step(&m, E(RECHECK), S(UNASKED), A(REFRESH));
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        step(&m, E(PROBE_FAILED), S(SILENT), A(PUBLISH_NO_ANSWER));
}

/* A paused guest is not asked; it is once it resumes.  A ready agent is
 * the same one after a pause. */
static void test_pause(void)
{
        SluiceAgentProbe m;

        sluice_agent_probe_init(&m);
        step(&m, E(READ_PAUSED), S(UNASKED), A(PUBLISH_DISCONNECTED));
        step(&m, E(RESUMED), S(UNASKED), 0);
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        step(&m, E(PROBE_READY), S(READY), A(PUBLISH_READY));
        step(&m, E(READ_PAUSED), S(READY), 0);
        step(&m, E(RESUMED), S(READY), 0);
        step(&m, E(READ_UP), S(READY), 0);

        /* paused while waiting to ask again: no probe spent on a guest that
         * cannot answer, a full round once it resumes */
        m = machine_in(S(UNASKED));
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        step(&m, E(PROBE_NO_ANSWER), S(RETRY_WAIT), A(PUBLISH_NO_ANSWER) | A(SCHEDULE_RETRY));
        step(&m, E(READ_PAUSED), S(UNASKED), A(CANCEL_RETRY));
        step(&m, E(RETRY_DUE), S(UNASKED), 0);
        step(&m, E(RESUMED), S(UNASKED), 0);
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
        g_assert_cmpuint(m.attempts, ==, 0);
}

/* The VM stops while its agent is asked: GuestAgent says so at once; the
 * probe's late answer is dropped, and nothing is asked of a stopped VM. */
static void test_stop_while_probing(void)
{
        SluiceAgentProbe m = machine_in(S(PROBING));

        step(&m, E(READ_DOWN), S(PROBING_STALE), A(PUBLISH_DISCONNECTED));
        step(&m, E(PROBE_READY), S(UNASKED), A(RECONSIDER));
        step(&m, E(READ_DOWN), S(IDLE), A(PUBLISH_DISCONNECTED));
}

/* The channel goes and comes back while a probe runs: GuestAgent says
 * "none", then "disconnected" again at once, not after the old answer. */
static void test_channel_back_while_probing(void)
{
        SluiceAgentProbe m = machine_in(S(PROBING));

        step(&m, E(READ_NONE), S(PROBING_STALE), A(PUBLISH_NONE));
        step(&m, E(READ_UP), S(PROBING_STALE), A(PUBLISH_CHANNEL));
        step(&m, E(PROBE_FAILED), S(UNASKED), A(RECONSIDER));
        step(&m, E(READ_UP), S(PROBING), A(PUBLISH_CHANNEL) | A(START_PROBE));
}

/* A removed VM does nothing more, whatever arrives late. */
static void test_removed(void)
{
        SluiceAgentProbe m = machine_in(S(RETRY_WAIT));

        step(&m, E(REMOVED), S(GONE), A(CANCEL_RETRY));
        for (guint event = 0; event < SLUICE_AGENT_PROBE_N_EVENTS; event++)
                step(&m, event, S(GONE), 0);
}

/* Values from nowhere change nothing. */
static void test_unknown_values(void)
{
        SluiceAgentProbe m = machine_in(S(READY));

        step(&m, SLUICE_AGENT_PROBE_N_EVENTS, S(READY), 0);
        step(&m, (SluiceAgentProbeEvent)1000, S(READY), 0);
        m.state = SLUICE_AGENT_PROBE_N_STATES;
        g_assert_cmphex(sluice_agent_probe_step(&m, E(READ_UP)).actions, ==, 0);
        g_assert_cmpint(m.state, ==, SLUICE_AGENT_PROBE_N_STATES);
        g_assert_cmpstr(sluice_agent_probe_state_name(SLUICE_AGENT_PROBE_N_STATES), ==, "?");
        g_assert_cmpstr(sluice_agent_probe_event_name(SLUICE_AGENT_PROBE_N_EVENTS), ==, "?");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/vm-agent-probe/every-event-in-every-state", test_every_event_in_every_state);
        g_test_add_func("/vm-agent-probe/slow-boot-then-ready", test_slow_boot_then_ready);
        g_test_add_func("/vm-agent-probe/silent-agent-gives-up", test_silent_agent_gives_up);
        g_test_add_func("/vm-agent-probe/attempts-count-per-connection", test_attempts_count_per_connection);
        g_test_add_func("/vm-agent-probe/stale-answer-is-dropped", test_stale_answer_is_dropped);
        g_test_add_func("/vm-agent-probe/recheck", test_recheck);
        g_test_add_func("/vm-agent-probe/pause", test_pause);
        g_test_add_func("/vm-agent-probe/stop-while-probing", test_stop_while_probing);
        g_test_add_func("/vm-agent-probe/channel-back-while-probing", test_channel_back_while_probing);
        g_test_add_func("/vm-agent-probe/removed", test_removed);
        g_test_add_func("/vm-agent-probe/unknown-values", test_unknown_values);
        return g_test_run();
}
