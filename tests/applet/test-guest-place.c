/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a share row says about the share in the guest (sa-guest-place.c), for
 * each combination of Share.GuestPath/GuestState/GuestHint and the VM's
 * guest agent that the service publishes. */
#include "config.h"

#include <glib.h>

#include "sa-guest-place.h"

#define HINT "In the guest: mkdir -p /mnt/docs && mount -t virtiofs docs /mnt/docs"

static SaGuestFacts facts(void)
{
  return (SaGuestFacts){
    .share_state = "attached", .guest_path = "", .guest_state = "", .guest_hint = HINT,
    .vm_known = TRUE, .vm_running = TRUE, .agent = "ready", .agent_message = "",
  };
}

static void test_mounted_linux(void)
{
  SaGuestFacts f = facts();
  SaGuestView v;
  f.guest_path = "/mnt/x";
  f.guest_state = "mounted";
  sa_guest_view_decide(&f, &v);
  g_assert_cmpstr(v.place, ==, "In the VM at /mnt/x");
  g_assert_false(v.show_hint);   /* instead of the command */
  g_assert_false(v.mounting);
  g_assert_false(v.offer_agent);
  g_assert_null(v.agent_note);
  sa_guest_view_clear(&v);
  g_assert_null(v.place);
}

static void test_mounted_windows(void)
{
  SaGuestFacts f = facts();
  SaGuestView v;
  f.guest_path = "Z:";
  f.guest_state = "mounted";
  sa_guest_view_decide(&f, &v);
  g_assert_cmpstr(v.place, ==, "In the VM at Z:");
  g_assert_false(v.show_hint);
  sa_guest_view_clear(&v);
}

/* No agent, AutoMount off: the hint as before, and no place. */
static void test_not_handled(void)
{
  SaGuestFacts f = facts();
  SaGuestView v;
  sa_guest_view_decide(&f, &v);
  g_assert_null(v.place);
  g_assert_true(v.show_hint);
  g_assert_false(v.mounting);
  g_assert_false(v.offer_agent);
  g_assert_null(v.agent_note);
  /* not attached: no hint either, as before */
  f.guest_hint = "";
  f.share_state = "running";
  sa_guest_view_decide(&f, &v);
  g_assert_false(v.show_hint);
  g_assert_null(v.place);
}

static void test_mounting(void)
{
  SaGuestFacts f = facts();
  SaGuestView v;
  f.guest_state = "mounting";
  sa_guest_view_decide(&f, &v);
  g_assert_true(v.mounting);
  g_assert_false(v.show_hint);
  g_assert_null(v.place);
}

/* Mounting failed: the Error shows (elsewhere) and the hint with it. */
static void test_failed(void)
{
  SaGuestFacts f = facts();
  SaGuestView v;
  f.guest_state = "failed";
  sa_guest_view_decide(&f, &v);
  g_assert_true(v.show_hint);
  g_assert_null(v.place);
  g_assert_false(v.mounting);
  /* a stale path is not presented as where the share is */
  f.guest_path = "/mnt/x";
  sa_guest_view_decide(&f, &v);
  g_assert_null(v.place);
  g_assert_true(v.show_hint);
}

static void test_offer(void)
{
  SaGuestFacts f = facts();
  SaGuestView v;
  f.agent = "none";
  sa_guest_view_decide(&f, &v);
  g_assert_true(v.offer_agent);
  g_assert_true(v.show_hint);   /* what to do meanwhile */
  /* waiting for a VM that is off: offered too */
  f.share_state = "running";
  f.vm_running = FALSE;
  f.guest_hint = "";
  sa_guest_view_decide(&f, &v);
  g_assert_true(v.offer_agent);
  /* a share the user stopped, or whose VM nobody lists: not offered */
  f.share_state = "stopped";
  sa_guest_view_decide(&f, &v);
  g_assert_false(v.offer_agent);
  f.share_state = "running";
  f.vm_known = FALSE;
  sa_guest_view_decide(&f, &v);
  g_assert_false(v.offer_agent);
  /* a service that does not publish GuestAgent: nothing new */
  f = facts();
  f.agent = "";
  sa_guest_view_decide(&f, &v);
  g_assert_false(v.offer_agent);
  g_assert_null(v.agent_note);
  g_assert_true(v.show_hint);
}

static void test_agent_note(void)
{
  SaGuestFacts f = facts();
  SaGuestView v;
  f.agent = "restricted";
  f.agent_message = "The guest agent blocks guest-exec: allow it in /etc/sysconfig/qemu-ga";
  sa_guest_view_decide(&f, &v);
  g_assert_cmpstr(v.agent_note, ==, f.agent_message);
  g_assert_false(v.offer_agent);
  g_assert_true(v.show_hint);
  f.agent = "disconnected";
  f.agent_message = "No guest agent answers in the VM";
  sa_guest_view_decide(&f, &v);
  g_assert_cmpstr(v.agent_note, ==, f.agent_message);
  /* off or booting: not worth a line */
  f.vm_running = FALSE;
  sa_guest_view_decide(&f, &v);
  g_assert_null(v.agent_note);
  /* ready: nothing to say */
  f = facts();
  f.agent_message = "ignored";
  sa_guest_view_decide(&f, &v);
  g_assert_null(v.agent_note);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/guest-place/mounted-linux", test_mounted_linux);
  g_test_add_func("/guest-place/mounted-windows", test_mounted_windows);
  g_test_add_func("/guest-place/not-handled", test_not_handled);
  g_test_add_func("/guest-place/mounting", test_mounting);
  g_test_add_func("/guest-place/failed", test_failed);
  g_test_add_func("/guest-place/offer", test_offer);
  g_test_add_func("/guest-place/agent-note", test_agent_note);
  return g_test_run();
}
