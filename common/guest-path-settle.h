/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-path-settle.h — where a share is in its guest, once Sluice is done
 * there: the one way the applet and sluicectl read Share.GuestPath.
 *
 * GuestPath is trusted only together with the GuestState it came with, and
 * only once that state has settled (neither "mounting" nor "unmounting"):
 * while the guest is busy the path is the one before, and a proxy's cache
 * can be behind an Event or a method's reply (GDBus sends PropertiesChanged
 * from an idle, after both).  So both are read fresh from the service, in one
 * answer, and read again after every PropertiesChanged of the share while
 * the guest is busy, for at most the caller's bound. */
#pragma once

#include <gio/gio.h>

#include "sluice-dbus.h"
#include "wire-enums.h"

G_BEGIN_DECLS

/* Settles SHARE's guest side within @timeout_ms.  Callbacks, and the share's
 * signals it waits for, run in the thread-default main context of the call. */
void sluice_client_share_settle_guest_path(SluiceShare *share, guint timeout_ms,
                                           GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);
/* Returns the place to show: GuestPath when GuestState is "mounted", else ""
 * (never NULL on success).  @state (may be NULL): the last GuestState read,
 * still MOUNTING or UNMOUNTING when the bound passed first (MOUNTING when
 * nothing was read by then); a word this build does not know is IDLE.  Errors: the Properties call's. */
char *sluice_client_share_settle_guest_path_finish(SluiceShare *share, GAsyncResult *result,
                                                   SluiceWireGuestState *state, GError **error);
/* The same, waiting in a main context of its own. */
char *sluice_client_share_settle_guest_path_sync(SluiceShare *share, guint timeout_ms,
                                                 GCancellable *cancellable,
                                                 SluiceWireGuestState *state, GError **error);

G_END_DECLS
