/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hotplug.c — see hotplug.h. */
#include "config.h"

#include "hotplug.h"
#include "hotplug-private.h"
#include "hotplug-slots.h"
#include "domain-xml.h"
#include "errors.h"
#include "vm-confinement.h"
#include "vm-socket-access.h"

#include <glib/gi18n.h>
#include <libvirt/virterror.h>
#include <unistd.h>

#define DETACH_WAIT_US (10 * G_USEC_PER_SEC)
#define DETACH_POLL_US (50 * 1000)

static GMutex hotplug_lock;

/* A Linux guest can miss a device plugged into a slot it has just powered
 * off: pciehp's remove_board() sleeps 1 s after the power off and then
 * drops the slot's pending presence and link events as its own doing, and
 * while it finishes the removal a new presence event can be taken for the
 * old one.  Seen as a worker's recovery (a re-plug ~0.1 s after the old
 * device went) that left the share "attached" to a guest that never saw
 * the device, about once in five runs.  A plug into a VM follows its last
 * unplug by at least this much: the guest's second, and margin for a TCG
 * guest's late timer. */
#define SLOT_SETTLE_US (2 * G_USEC_PER_SEC)

/* VM UUID → when Sluice last saw one of its devices go (monotonic µs);
 * apart from hotplug_lock, so that a plug waits without holding up others. */
static GMutex unplugged_lock;
static GHashTable *unplugged_at;

static void note_unplugged(virDomainPtr domain)
{
        char uuid[VIR_UUID_STRING_BUFLEN];

        if (virDomainGetUUIDString(domain, uuid) < 0)
                return;
        g_mutex_lock(&unplugged_lock);
        if (!unplugged_at)
                unplugged_at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_hash_table_insert(unplugged_at, g_strdup(uuid), g_memdup2(&(gint64){ g_get_monotonic_time() },
                                                                      sizeof(gint64)));
        g_mutex_unlock(&unplugged_lock);
}

/* Waits until DOMAIN's slots have settled after Sluice's last unplug (the
 * caller is a worker thread: sleeping holds up no main loop). */
static void wait_slot_settled(virDomainPtr domain)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        gint64 wait = 0;

        if (virDomainGetUUIDString(domain, uuid) < 0)
                return;
        g_mutex_lock(&unplugged_lock);
        if (unplugged_at) {
                const gint64 *at = g_hash_table_lookup(unplugged_at, uuid);

                if (at)
                        wait = *at + SLOT_SETTLE_US - g_get_monotonic_time();
        }
        g_mutex_unlock(&unplugged_lock);
        if (wait > 0) {
                g_debug("%s: plugging %.1f s after the last unplug, once the guest's slot has settled",
                        virDomainGetName(domain), (double)wait / G_USEC_PER_SEC);
                g_usleep((gulong)MIN(wait, SLOT_SETTLE_US));
        }
}

void sluice_hotplug_set_libvirt_error(GError **error, const char *doing)
{
        virErrorPtr err = virGetLastError();
        const char *what = err && err->message ? err->message : _("unknown libvirt error");

        /* the connection broke (libvirtd stopped, hung or restarted): say what to do */
        if (err && err->domain == VIR_FROM_RPC)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                            _("%s: libvirtd stopped answering (%s). Sluice reconnects by itself: "
                              "try again in a moment."),
                            doing, what);
        else
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT, "%s: %s", doing, what);
}

/* The live XML parsed; its text in *RET_XML when not NULL. */
static SluiceDomainXml *live_xml(virDomainPtr domain, char **ret_xml, GError **error)
{
        g_autofree char *xml = virDomainGetXMLDesc(domain, 0);
        g_autoptr(GError) parse_error = NULL;
        SluiceDomainXml *info;

        if (!xml) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM's definition"));
                return NULL;
        }
        info = sluice_domain_xml_parse(xml, &parse_error);
        if (!info)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT, "%s", parse_error->message);
        else if (ret_xml)
                *ret_xml = g_steal_pointer(&xml);
        return info;
}

/* No place left for another device, counted before libvirt is asked: TRUE
 * with ERROR set.  Only a count that proves it (no PCI bridge libvirt might
 * use instead) refuses; libvirt's own refusal is recognised after the call. */
static gboolean no_free_slot(const char *xml, const char *name, GError **error)
{
        SluiceHotplugSlots slots;

        if (!sluice_hotplug_slots_count(xml, &slots, NULL) || slots.bus != SLUICE_HOTPLUG_BUS_PCIE ||
            slots.free > 0 || slots.bridges)
                return FALSE;
        sluice_hotplug_slots_set_exhausted(error, name, slots.bus);
        return TRUE;
}

/* Whether the VM plugs into PCIe root ports (q35) or its PCI bus (i440fx). */
static SluiceHotplugBus machine_bus(const char *xml)
{
        SluiceHotplugSlots slots;

        return sluice_hotplug_slots_count(xml, &slots, NULL) ? slots.bus : SLUICE_HOTPLUG_BUS_NONE;
}

/* libvirt's words (qemu_domain_address.c) when it found no place for the device */
static gboolean is_no_slot_error(virErrorPtr err)
{
        return err && err->code == VIR_ERR_INTERNAL_ERROR && err->message &&
               strstr(err->message, "No more available PCI slots");
}

static void set_no_shared_memory(GError **error, const char *name)
{
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NO_SHARED_MEMORY,
                    _("The VM “%s” has no shared memory, which virtiofs needs. Enable it with "
                      "the “Enable shared memory” button (Vm.EnableSharedMemory), then shut the "
                      "VM down and start it again."),
                    name);
}

gboolean sluice_hotplug_confinement_refusal(const char *libvirt_message, const SluiceDomainXml *info,
                                            const char *name, const char *uuid, const char *socket_path,
                                            char **ret_problem, GError **error)
{
        SluiceConfinementVm vm = {
                .model = info->confinement,
                .label = info->confinement_label,
                .name = name,
                .uuid = uuid,
        };
        g_autoptr(SluiceConfinementReport) report = NULL;
        const char *model = sluice_confinement_model_label(info->confinement);

        /* QEMU's words when it may not connect to the socket */
        if (!libvirt_message || !strstr(libvirt_message, "Permission denied") ||
            info->confinement == SLUICE_CONFINEMENT_MODEL_NONE)
                return FALSE;
        report = sluice_confinement_explain_refusal(&vm, socket_path);
        if (report->status == SLUICE_CONFINEMENT_BLOCKED)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                            _("The host's %s confinement of the VM “%s” kept QEMU from connecting to "
                              "the shared folder's socket. %s"),
                            model, name, report->message);
        else if (report->status == SLUICE_CONFINEMENT_UNKNOWN)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                            _("QEMU of the VM “%s” was refused the shared folder's socket, most likely "
                              "by the host's %s confinement. %s"),
                            name, model, report->message);
        if (report->status == SLUICE_CONFINEMENT_OK)
                return FALSE;
        if (ret_problem)
                *ret_problem = g_steal_pointer(&report->message);
        return TRUE;
}

gboolean sluice_hotplug_attach(virDomainPtr domain, const char *socket_path, const char *tag,
                               char **ret_confinement_problem, GError **error)
{
        /* never read: it holds the lock until the scope ends (clang warns
         * about an unread cleanup variable, gcc does not) */
        G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = NULL;
        g_autoptr(SluiceDomainXml) info = NULL;
        g_autofree char *xml = NULL;
        g_autofree char *device = NULL;
        const char *name = virDomainGetName(domain);
        char uuid[VIR_UUID_STRING_BUFLEN];
        SluiceDomainFilesystem *existing;

        if (!sluice_domain_xml_check_tag(tag, error) ||
            !sluice_domain_xml_check_socket(socket_path, error))
                return FALSE;
        if (virDomainIsActive(domain) != 1) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_VM_NOT_RUNNING,
                            _("The VM “%s” is not running; the share is attached when it starts."), name);
                return FALSE;
        }
        wait_slot_settled(domain);
        locker = g_mutex_locker_new(&hotplug_lock);
        info = live_xml(domain, &xml, error);
        if (!info)
                return FALSE;
        existing = g_hash_table_lookup(info->filesystems, tag);
        if (existing) {
                if (existing->socket && g_str_equal(existing->socket, socket_path))
                        return TRUE;
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_TAG_IN_USE,
                            _("The VM “%s” already has a shared folder with the tag “%s”; choose another tag."),
                            name, tag);
                return FALSE;
        }
        if (!info->shared_memory) {
                set_no_shared_memory(error, name);
                return FALSE;
        }
        if (no_free_slot(xml, name, error))
                return FALSE;
        if (virDomainGetUUIDString(domain, uuid) < 0) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM's UUID"));
                return FALSE;
        }
        if (info->dac_uid >= 0 &&
            !sluice_socket_access_grant(uuid, tag, socket_path, (uid_t)info->dac_uid, error))
                return FALSE;

        device = sluice_domain_xml_filesystem(socket_path, tag);
        if (virDomainAttachDeviceFlags(domain, device, VIR_DOMAIN_AFFECT_LIVE) < 0) {
                virErrorPtr err = virGetLastError();

                /* the live definition can change between our check and libvirt's */
                if (err && err->code == VIR_ERR_CONFIG_UNSUPPORTED && err->message &&
                    strstr(err->message, "shared memory"))
                        set_no_shared_memory(error, name);
                else if (is_no_slot_error(err))
                        sluice_hotplug_slots_set_exhausted(error, name, machine_bus(xml));
                else if (!sluice_hotplug_confinement_refusal(err ? err->message : NULL, info, name, uuid,
                                                             socket_path, ret_confinement_problem, error))
                        sluice_hotplug_set_libvirt_error(error, _("libvirt could not plug the shared folder into the VM"));
                sluice_socket_access_revoke(uuid, tag); /* after reading libvirt's error */
                return FALSE;
        }
        return TRUE;
}

static gboolean find_tag(virDomainPtr domain, const char *tag, char **ret_alias, GError **error)
{
        g_autoptr(SluiceDomainXml) info = live_xml(domain, NULL, error);
        SluiceDomainFilesystem *fs;

        if (!info)
                return FALSE;
        fs = g_hash_table_lookup(info->filesystems, tag);
        if (fs && ret_alias)
                *ret_alias = g_strdup(fs->alias);
        return fs != NULL;
}

static gboolean detach_locked(virDomainPtr domain, const char *tag, GError **error)
{
        g_autofree char *alias = NULL;
        GError *local = NULL;
        gint64 deadline;

        if (virDomainIsActive(domain) != 1)
                return TRUE;
        if (!find_tag(domain, tag, &alias, &local)) {
                if (!local)
                        return TRUE;
                g_propagate_error(error, local);
                return FALSE;
        }
        if (!alias) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                            _("The device with the tag “%s” has no alias in the live definition; cannot unplug it."),
                            tag);
                return FALSE;
        }
        if (virDomainDetachDeviceAlias(domain, alias, VIR_DOMAIN_AFFECT_LIVE) < 0) {
                sluice_hotplug_set_libvirt_error(error, _("libvirt could not unplug the shared folder"));
                return FALSE;
        }
        /* libvirt only asks the guest: the device is gone when the guest acks */
        deadline = g_get_monotonic_time() + DETACH_WAIT_US;
        while (g_get_monotonic_time() < deadline) {
                if (virDomainIsActive(domain) != 1)
                        return TRUE;
                if (!find_tag(domain, tag, NULL, &local)) {
                        if (!local) {
                                note_unplugged(domain);
                                return TRUE;
                        }
                        g_propagate_error(error, local);
                        return FALSE;
                }
                g_usleep(DETACH_POLL_US);
        }
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                    _("The VM “%s” did not release the shared folder “%s”: the guest must support "
                      "PCI hot-unplug (ACPI). Unmount it in the guest and try again."),
                    virDomainGetName(domain), tag);
        return FALSE;
}

gboolean sluice_hotplug_detach(virDomainPtr domain, const char *tag, GError **error)
{
        /* never read: it holds the lock until the scope ends (clang warns
         * about an unread cleanup variable, gcc does not) */
        G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&hotplug_lock);
        char uuid[VIR_UUID_STRING_BUFLEN];

        if (!detach_locked(domain, tag, error))
                return FALSE;
        /* the device is gone (or QEMU is): QEMU's user needs no access any more */
        if (virDomainGetUUIDString(domain, uuid) == 0)
                sluice_socket_access_revoke(uuid, tag);
        return TRUE;
}
