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
 * (share.h), so that a refused MountPoint is the caller's D-Bus error.
 * This file calls the share; the share calls nothing here (it sets its
 * properties through the generated setters). */
#pragma once

#include "share.h"
#include "sluice-dbus.h"

G_BEGIN_DECLS

#define SLUICE_TYPE_SHARE_SERVICE (sluice_share_service_get_type())
G_DECLARE_FINAL_TYPE(SluiceShareService, sluice_share_service, SLUICE, SHARE_SERVICE, SluiceShareSkeleton)

/* The share of CONFIG (share.h's arguments) with its Share object, which
 * it owns: once the share is gone, calls and property writes still made on
 * the object are refused (the share is being removed). */
SluiceSharedFolder *sluice_share_service_new_folder(const SluiceShareConfig *config, SluiceVmManager *vms,
                                                    const char *socket_dir, guint stats_interval_ms);

G_END_DECLS
