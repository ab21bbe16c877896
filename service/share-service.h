/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-service.h — the exported org.sluice.Sluice1.Share interface: the
 * generated skeleton, translating its methods and writable properties into
 * the share's calls (share.h), and nothing more.
 *
 * A ReadOnly write is answered when it is done.  The generated code answers
 * a property write as soon as the value is stored; a ReadOnly write must
 * wait for the worker (which may refuse), without blocking the main loop,
 * so it goes to a handler that answers the invocation itself (and the
 * share sets the property once the worker has switched).  AutoMount,
 * MountPoint and MountAtBoot writes go the same way, to the share's setters
 * (share.h), so that a refused MountPoint is the caller's D-Bus error.  The
 * three start from the share's config. */
#pragma once

#include "share.h"
#include "sluice-dbus.h"

G_BEGIN_DECLS

#define SLUICE_TYPE_SHARE_SERVICE (sluice_share_service_get_type())
G_DECLARE_FINAL_TYPE(SluiceShareService, sluice_share_service, SLUICE, SHARE_SERVICE, SluiceShareSkeleton)

/* FOLDER: not a reference (it owns the service); it calls
 * sluice_share_service_forget_folder() before it goes. */
SluiceShare *sluice_share_service_new(SluiceSharedFolder *folder);
/* Calls and ReadOnly writes are refused from now on (the share is being removed). */
void sluice_share_service_forget_folder(SluiceShareService *self);

G_END_DECLS
