/* SPDX-License-Identifier: GPL-2.0-or-later */
/* errors.c — the SLUICE_ERROR domain and its named D-Bus errors. */
#include "config.h"

#include "errors.h"

/* One entry per SluiceError code, in enum order: the D-Bus names listed in
 * data/org.sluice.Sluice1.xml, spelled out so a search for a name finds it. */
static const GDBusErrorEntry sluice_error_entries[] = {
        { SLUICE_ERROR_INVALID_ARGUMENT, "org.sluice.Sluice1.Error.InvalidArgument" },
        { SLUICE_ERROR_NOT_FOUND, "org.sluice.Sluice1.Error.NotFound" },
        { SLUICE_ERROR_NOT_A_DIRECTORY, "org.sluice.Sluice1.Error.NotADirectory" },
        { SLUICE_ERROR_PERMISSION_DENIED, "org.sluice.Sluice1.Error.PermissionDenied" },
        { SLUICE_ERROR_ALREADY_SHARED, "org.sluice.Sluice1.Error.AlreadyShared" },
        { SLUICE_ERROR_TAG_IN_USE, "org.sluice.Sluice1.Error.TagInUse" },
        { SLUICE_ERROR_NO_VM, "org.sluice.Sluice1.Error.NoVm" },
        { SLUICE_ERROR_VM_NOT_RUNNING, "org.sluice.Sluice1.Error.VmNotRunning" },
        { SLUICE_ERROR_NO_SHARED_MEMORY, "org.sluice.Sluice1.Error.NoSharedMemory" },
        { SLUICE_ERROR_UNSUPPORTED, "org.sluice.Sluice1.Error.Unsupported" },
        { SLUICE_ERROR_WORKER_FAILED, "org.sluice.Sluice1.Error.WorkerFailed" },
        { SLUICE_ERROR_LIBVIRT, "org.sluice.Sluice1.Error.Libvirt" },
        { SLUICE_ERROR_NOT_SHAREABLE, "org.sluice.Sluice1.Error.NotShareable" },
        { SLUICE_ERROR_UNKNOWN_VM, "org.sluice.Sluice1.Error.UnknownVm" },
        { SLUICE_ERROR_GUEST_AGENT, "org.sluice.Sluice1.Error.GuestAgent" },
        { SLUICE_ERROR_BUSY, "org.sluice.Sluice1.Error.Busy" },
        { SLUICE_ERROR_NO_HOTPLUG_SLOT, "org.sluice.Sluice1.Error.NoHotplugSlot" },
        { SLUICE_ERROR_FAILED, "org.sluice.Sluice1.Error.Failed" },
};

G_STATIC_ASSERT(G_N_ELEMENTS(sluice_error_entries) == SLUICE_ERROR_FAILED + 1);

GQuark sluice_error_quark(void)
{
        static gsize quark = 0;

        g_dbus_error_register_error_domain("sluice-error-quark", &quark,
                                           sluice_error_entries,
                                           G_N_ELEMENTS(sluice_error_entries));
        return (GQuark)quark;
}

char *sluice_error_dup_user_message(const GError *error)
{
        g_autoptr(GError) copy = g_error_copy(error);

        if (g_dbus_error_is_remote_error(copy))
                g_dbus_error_strip_remote_error(copy);
        return g_strdup(copy->message);
}
