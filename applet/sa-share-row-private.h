/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-share-row-private: what the test hook reaches in a share row (through
 * sa-window-private.h); nothing else in the applet needs it. */
#pragma once

#include "sa-share-row.h"

G_BEGIN_DECLS

/* A part a test may need to click (see sa-test-hook.c): "read-only",
 * "remove", "start-stop", "queues", "guest-copy" (the copy button of "In the
 * VM at …"), "guest-agent" (the offer of a guest agent), "hotplug-slots"
 * (the offer of spare PCIe root ports), "install" ("Install in the VM…"),
 * "install-progress" (its progress bar), "names" or "case" (the drop-downs);
 * NULL for anything else. */
GtkWidget *sa_share_row_get_part(SaShareRow *self, const char *part);

G_END_DECLS
