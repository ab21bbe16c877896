/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-guest-place: see sa-guest-place.h. */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-guest-place.h"
#include "wire-enums.h"

void sa_guest_view_decide(const SaGuestFacts *facts, SaGuestView *view)
{
  gboolean failed = sluice_wire_guest_state_is(facts->guest_state, SLUICE_WIRE_GUEST_FAILED);
  gboolean placed = *facts->guest_path != '\0' && !failed;
  /* A share the user stopped waits for nothing: no offers there. */
  gboolean in_use = !sluice_wire_share_state_is(facts->share_state, SLUICE_WIRE_SHARE_STOPPED);

  *view = (SaGuestView){ 0 };
  if (placed) {
    /* The path comes from the guest: it is shown as plain text only. */
    /* Translators: where a shared folder is inside the VM: "In the VM at Z:", "In the VM at /mnt/docs" */
    view->place = g_strdup_printf(_("In the VM at %s"), facts->guest_path);
    return;
  }
  if (sluice_wire_guest_state_is(facts->guest_state, SLUICE_WIRE_GUEST_MOUNTING)) {
    view->mounting = TRUE;
    return;
  }
  /* Not handled in the guest (no agent, AutoMount off, or mounting failed):
   * the command to run by hand, exactly as without an agent. */
  view->show_hint = *facts->guest_hint != '\0';
  if (!in_use || !facts->vm_known)
    return;
  if (sluice_wire_guest_agent_is(facts->agent, SLUICE_WIRE_AGENT_NONE))
    view->offer_agent = TRUE;
  else if (facts->vm_running &&
           (sluice_wire_guest_agent_is(facts->agent, SLUICE_WIRE_AGENT_DISCONNECTED) ||
            sluice_wire_guest_agent_is(facts->agent, SLUICE_WIRE_AGENT_RESTRICTED)) &&
           *facts->agent_message != '\0')
    view->agent_note = facts->agent_message;
}

void sa_guest_view_clear(SaGuestView *view)
{
  g_clear_pointer(&view->place, g_free);
}
