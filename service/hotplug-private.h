/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hotplug-private.h — what only hotplug.c and its tests use. */
#pragma once

#include <glib.h>

#include "domain-xml.h"

G_BEGIN_DECLS

/* libvirt refused the attach with LIBVIRT_MESSAGE.  When that is QEMU
 * refused the socket ("Failed to connect to '…': Permission denied") and the
 * VM (INFO: its live XML; NAME, UUID) is confined by AppArmor or SELinux in a
 * way that blocks QEMU or may (vm-confinement.h), sets ERROR to
 * SLUICE_ERROR_PERMISSION_DENIED saying so, which rule is missing and how to
 * add it, sets *RET_PROBLEM (when not NULL) to the problem in words, and
 * returns TRUE.  Otherwise FALSE, nothing set.  Reads host files: a worker
 * thread's call. */
gboolean sluice_hotplug_confinement_refusal(const char *libvirt_message, const SluiceDomainXml *info,
                                            const char *name, const char *uuid, const char *socket_path,
                                            char **ret_problem, GError **error);

G_END_DECLS
