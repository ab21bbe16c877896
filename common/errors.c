/* errors.c — the SLUICE_ERROR domain and its named D-Bus errors. */
#include "config.h"

#include "errors.h"
#include "sluice-names.h"

/* One entry per SluiceError code, in enum order: the D-Bus names listed in
 * data/org.sluice.Sluice1.xml. */
static const GDBusErrorEntry sluice_error_entries[] = {
        { SLUICE_ERROR_INVALID_ARGUMENT, SLUICE_ERROR_NAME_PREFIX "InvalidArgument" },
        { SLUICE_ERROR_NOT_FOUND, SLUICE_ERROR_NAME_PREFIX "NotFound" },
        { SLUICE_ERROR_NOT_A_DIRECTORY, SLUICE_ERROR_NAME_PREFIX "NotADirectory" },
        { SLUICE_ERROR_PERMISSION_DENIED, SLUICE_ERROR_NAME_PREFIX "PermissionDenied" },
        { SLUICE_ERROR_ALREADY_SHARED, SLUICE_ERROR_NAME_PREFIX "AlreadyShared" },
        { SLUICE_ERROR_TAG_IN_USE, SLUICE_ERROR_NAME_PREFIX "TagInUse" },
        { SLUICE_ERROR_NO_VM, SLUICE_ERROR_NAME_PREFIX "NoVm" },
        { SLUICE_ERROR_VM_NOT_RUNNING, SLUICE_ERROR_NAME_PREFIX "VmNotRunning" },
        { SLUICE_ERROR_NO_SHARED_MEMORY, SLUICE_ERROR_NAME_PREFIX "NoSharedMemory" },
        { SLUICE_ERROR_UNSUPPORTED, SLUICE_ERROR_NAME_PREFIX "Unsupported" },
        { SLUICE_ERROR_WORKER_FAILED, SLUICE_ERROR_NAME_PREFIX "WorkerFailed" },
        { SLUICE_ERROR_LIBVIRT, SLUICE_ERROR_NAME_PREFIX "Libvirt" },
        { SLUICE_ERROR_NOT_SHAREABLE, SLUICE_ERROR_NAME_PREFIX "NotShareable" },
        { SLUICE_ERROR_UNKNOWN_VM, SLUICE_ERROR_NAME_PREFIX "UnknownVm" },
        { SLUICE_ERROR_FAILED, SLUICE_ERROR_NAME_PREFIX "Failed" },
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
