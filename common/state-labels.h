/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-labels.h — the words a person sees for Share.State, Vm.State,
 * Share.GuestState and Vm.GuestAgent.
 *
 * The API's states are fixed English tokens ("running", "shutoff", …); the
 * applet and sluicectl show them in the user's language through these
 * functions, so both speak alike.  A state this build does not know (a newer
 * service) is returned as it is. */
#pragma once

/* "stopped" → "Stopped", "running" → "Ready", … (msgctxt "share state"). */
const char *sluice_share_state_label(const char *state);
/* "running" → "Running", "shutoff" → "Shut off", … (msgctxt "vm state"). */
const char *sluice_vm_state_label(const char *state);
/* "none" → "none", "disconnected" → "not answering", … (msgctxt "guest agent"). */
const char *sluice_guest_agent_label(const char *agent);
/* What Sluice does in the guest, short: "mounting" → "mounting…",
 * "unmounting" → "unmounting…", "failed" → "not mounted"; "mounted" and ""
 * → "" (the place itself, or nothing, is what to show then). */
const char *sluice_guest_state_label(const char *guest_state);
