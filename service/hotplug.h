/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hotplug.h — plugging a vhost-user-fs device into a running domain and out
 * again, with the raw libvirt API (libvirt-glib has no device attach).  These
 * calls block on libvirtd: run them in a worker thread.  One hot-plug runs at
 * a time, so a tag's uniqueness check and its attach cannot interleave. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>

G_BEGIN_DECLS

/* Checks the domain (running, shared memory, tag free — the same tag with the
 * same socket counts as already attached), makes the socket reachable for
 * QEMU's user when that is another user (vm-socket-access.h: granted to the
 * device (domain UUID, TAG)), and attaches the device live.  When QEMU is
 * refused the socket and the VM is confined by AppArmor or SELinux in a way
 * that blocks it (or may: vm-confinement.h), the error is
 * SLUICE_ERROR_PERMISSION_DENIED saying which rule is missing and how to add
 * it, and *ret_confinement_problem (when not NULL) is set to the problem in
 * words (Vm.ConfinementProblem).  When the VM has no free place for the
 * device (q35: no free PCIe root port; counted in its live XML before libvirt
 * is asked, or libvirt's "No more available PCI slots"), the error is
 * SLUICE_ERROR_NO_HOTPLUG_SLOT saying what to do (hotplug-slots.h).
 * Otherwise libvirt's message as SLUICE_ERROR_LIBVIRT. */
gboolean sluice_hotplug_attach(virDomainPtr domain, const char *socket_path, const char *tag,
                               char **ret_confinement_problem, GError **error);
/* Unplugs the device with TAG and waits (a few seconds at most) until the
 * guest has let it go, so that the tag can be plugged in again at once.
 * Not plugged in: success.  On success, the access granted to QEMU's user for
 * this device is given back. */
gboolean sluice_hotplug_detach(virDomainPtr domain, const char *tag, GError **error);

/* libvirt's last error (of this thread) as a SLUICE_ERROR_LIBVIRT GError,
 * prefixed with what was being done. */
void sluice_hotplug_set_libvirt_error(GError **error, const char *doing);

G_END_DECLS
