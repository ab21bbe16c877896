/* share-service.h — the exported org.sluice.Sluice1.Share interface: the
 * generated skeleton, except that a ReadOnly write is answered when it is
 * done.  The generated code answers a property write as soon as the value
 * is stored; a ReadOnly write must wait for the worker (which may refuse),
 * without blocking the main loop, so it goes to a handler that answers the
 * invocation itself (and sets the property once the worker has switched). */
#pragma once

#include "sluice-dbus.h"

G_BEGIN_DECLS

/* Must answer invocation: an empty reply (g_dbus_method_invocation_return_value
 * with NULL) or an error; and set the ReadOnly property on success. */
typedef void (*SluiceShareServiceSetReadOnly)(gboolean read_only, GDBusMethodInvocation *invocation,
                                            gpointer user_data);

#define SLUICE_TYPE_SHARE_SERVICE (sluice_share_service_get_type())
G_DECLARE_FINAL_TYPE(SluiceShareService, sluice_share_service, SLUICE, SHARE_SERVICE, SluiceShareSkeleton)

SluiceShare *sluice_share_service_new(SluiceShareServiceSetReadOnly set_read_only, gpointer user_data);
/* Drops the handler (its user data goes away); ReadOnly writes are refused then. */
void sluice_share_service_clear_handler(SluiceShareService *self);

G_END_DECLS
