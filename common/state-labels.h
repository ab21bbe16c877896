/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-labels.h — the words a person sees for Share.State and Vm.State.
 *
 * The API's states are fixed English tokens ("running", "shutoff", …); the
 * applet and sluicectl show them in the user's language through these two
 * functions, so both speak alike.  A state this build does not know (a newer
 * service) is returned as it is. */
#pragma once

/* "stopped" → "Stopped", "running" → "Ready", … (msgctxt "share state"). */
const char *sluice_share_state_label(const char *state);
/* "running" → "Running", "shutoff" → "Shut off", … (msgctxt "vm state"). */
const char *sluice_vm_state_label(const char *state);
