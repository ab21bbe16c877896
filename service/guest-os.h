/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-os.h — which guest OS, and so which table of guest-ops.h, a VM or
 * a place has: decided here and nowhere else.
 *
 * A VM's OS is what its running guest's agent said (guest-get-osinfo),
 * else what the VM's creator recorded (libosinfo's short id in the
 * definition: "win11", "debian12").  A place's OS is its form: an absolute
 * path is a Linux guest's mount point, "Z:" a Windows guest's drive. */
#pragma once

#include <glib.h>

#include "guest-agent.h"
#include "guest-ops.h"

G_BEGIN_DECLS

/* The table for a VM whose agent said AGENT_OS and whose definition names
 * OSINFO_ID ("" or NULL: none); NULL when neither says an OS Sluice mounts
 * shares in. */
const SluiceGuestOps *sluice_guest_os_ops(const char *osinfo_id, SluiceWireGuestOs agent_os);

/* The table whose form PLACE has; NULL for "" and for anything else. */
const SluiceGuestOps *sluice_guest_os_ops_for_place(const char *place);

/* Share.MountPoint's rule, for whatever sets or reads a place: "" (the
 * guest OS's default), a Linux guest's mount point or a Windows guest's
 * drive, each by its OS's check_place.  SLUICE_ERROR_INVALID_ARGUMENT
 * saying what is wrong. */
gboolean sluice_guest_os_check_place(const char *place, GError **error);

/* Share.GuestHint for TAG in that VM: its OS's hint, a Linux guest's
 * mount command when the OS is not known. */
char *sluice_guest_os_hint(const char *osinfo_id, SluiceWireGuestOs agent_os, const char *tag);

G_END_DECLS
