/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-notify: desktop notifications (libnotify) for what happens while the
 * window is closed — share attached (with the guest-side hint), worker
 * crashed and recovered, a VM without shared memory (with the fix as an
 * action), the service going away. */
#pragma once

#include <gio/gio.h>
#include "sa-client.h"

G_BEGIN_DECLS

#define SA_TYPE_NOTIFY (sa_notify_get_type())
G_DECLARE_FINAL_TYPE(SaNotify, sa_notify, SA, NOTIFY, GObject)

SaNotify *sa_notify_new(GApplication *app, SaClient *client);

G_END_DECLS
