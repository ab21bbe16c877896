/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-guest-place: what a share row says about the share inside its VM's
 * guest — where Sluice mounted it, that it is mounting it, today's hint of
 * what to do by hand, or what the VM's guest agent lacks — decided from the
 * Share and Vm properties alone, so that it is the same wherever it shows. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The properties it is decided from ("" for unknown; never NULL). */
typedef struct {
  const char *share_state;    /* Share.State */
  const char *guest_path;     /* Share.GuestPath: "/mnt/src", "Z:" or "" */
  const char *guest_state;    /* Share.GuestState */
  const char *guest_hint;     /* Share.GuestHint */
  gboolean vm_known;          /* the service lists the share's VM */
  gboolean vm_running;        /* Vm.State is "running" */
  const char *agent;          /* Vm.GuestAgent */
  const char *agent_message;  /* Vm.GuestAgentMessage */
} SaGuestFacts;

typedef struct {
  char *place;           /* "In the VM at /mnt/src" (translated), or NULL */
  gboolean mounting;     /* say "Mounting in the VM…" */
  gboolean show_hint;    /* show GuestHint, the command to run by hand, as before */
  gboolean offer_agent;  /* offer Vm.EnableGuestAgent: the VM has no agent channel */
  const char *agent_note;/* GuestAgentMessage to show as a hint line, or NULL */
} SaGuestView;

/* Fills @view (free its place with sa_guest_view_clear). */
void sa_guest_view_decide(const SaGuestFacts *facts, SaGuestView *view);
void sa_guest_view_clear(SaGuestView *view);

G_END_DECLS
