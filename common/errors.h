/* SPDX-License-Identifier: GPL-2.0-or-later */
/* errors.h — Sluice's GError domain, mapped one-to-one to the named D-Bus
 * errors org.sluice.Sluice1.Error.* (see data/org.sluice.Sluice1.xml).
 * Every message is for a person: what went wrong and what to do. */
#pragma once

#include <gio/gio.h>

typedef enum {
        SLUICE_ERROR_INVALID_ARGUMENT,
        SLUICE_ERROR_NOT_FOUND,
        SLUICE_ERROR_NOT_A_DIRECTORY,
        SLUICE_ERROR_PERMISSION_DENIED,
        SLUICE_ERROR_ALREADY_SHARED,
        SLUICE_ERROR_TAG_IN_USE,
        SLUICE_ERROR_NO_VM,
        SLUICE_ERROR_VM_NOT_RUNNING,
        SLUICE_ERROR_NO_SHARED_MEMORY,
        SLUICE_ERROR_UNSUPPORTED,
        SLUICE_ERROR_WORKER_FAILED,
        SLUICE_ERROR_LIBVIRT,
        SLUICE_ERROR_NOT_SHAREABLE,
        SLUICE_ERROR_UNKNOWN_VM,
        SLUICE_ERROR_GUEST_AGENT,
        SLUICE_ERROR_BUSY,
        SLUICE_ERROR_NO_HOTPLUG_SLOT,
        SLUICE_ERROR_FAILED,
} SluiceError;

#define SLUICE_ERROR (sluice_error_quark())
/* Registered with g_dbus_error_register_error_domain(), so a GError of this
 * domain crosses D-Bus as its named error and comes back as the same code. */
GQuark sluice_error_quark(void);

/* A message for a person from a failed call: the service's named errors carry
 * a sentence meant for the user, so the remote error's name is dropped. */
char *sluice_error_dup_user_message(const GError *error);
