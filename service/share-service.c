/* share-service.c — see share-service.h.  GDBus sends a property write to the
 * vtable's method_call when its set_property is NULL (documented for
 * g_dbus_connection_register_object): that is the hook. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "share-service.h"

#define PROPERTIES_INTERFACE "org.freedesktop.DBus.Properties"

struct _SluiceShareService {
        SluiceShareSkeleton parent_instance;
        SluiceShareServiceSetReadOnly set_read_only;
        gpointer user_data;
};

G_DEFINE_TYPE(SluiceShareService, sluice_share_service, SLUICE_TYPE_SHARE_SKELETON)

static GDBusInterfaceVTable *parent_vtable;

static void share_service_method_call(GDBusConnection *connection, const char *sender,
                                    const char *object_path, const char *interface_name,
                                    const char *method_name, GVariant *parameters,
                                    GDBusMethodInvocation *invocation, gpointer user_data)
{
        SluiceShareService *self = user_data;
        const char *iface = NULL;
        const char *name = NULL;
        g_autoptr(GVariant) value = NULL;
        GError *error = NULL;

        if (g_strcmp0(interface_name, PROPERTIES_INTERFACE) != 0) {
                parent_vtable->method_call(connection, sender, object_path, interface_name, method_name,
                                           parameters, invocation, user_data);
                return;
        }
        /* only Set comes here (Get and GetAll use get_property); GDBus has
         * checked that the property exists, is writable and has its type */
        g_variant_get(parameters, "(&s&sv)", &iface, &name, &value);
        if (g_str_equal(name, "ReadOnly")) {
                if (self->set_read_only == NULL) {
                        g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                                                              _("The share is being removed."));
                        return;
                }
                self->set_read_only(g_variant_get_boolean(value), invocation, self->user_data);
                return;
        }
        if (parent_vtable->set_property(connection, sender, object_path, iface, name, value, &error,
                                        user_data))
                g_dbus_method_invocation_return_value(invocation, NULL);
        else
                g_dbus_method_invocation_take_error(invocation, error);
}

static GDBusInterfaceVTable *share_service_get_vtable(GDBusInterfaceSkeleton *skeleton)
{
        static GDBusInterfaceVTable vtable;
        static gsize done;

        if (g_once_init_enter(&done)) {
                GDBusInterfaceSkeletonClass *parent =
                        G_DBUS_INTERFACE_SKELETON_CLASS(sluice_share_service_parent_class);

                parent_vtable = parent->get_vtable(skeleton);
                vtable = *parent_vtable;
                vtable.method_call = share_service_method_call;
                vtable.set_property = NULL;
                g_once_init_leave(&done, 1);
        }
        return &vtable;
}

static void sluice_share_service_class_init(SluiceShareServiceClass *klass)
{
        G_DBUS_INTERFACE_SKELETON_CLASS(klass)->get_vtable = share_service_get_vtable;
}

static void sluice_share_service_init(SluiceShareService *self)
{
}

SluiceShare *sluice_share_service_new(SluiceShareServiceSetReadOnly set_read_only, gpointer user_data)
{
        SluiceShareService *self = g_object_new(SLUICE_TYPE_SHARE_SERVICE, NULL);

        self->set_read_only = set_read_only;
        self->user_data = user_data;
        return SLUICE_SHARE(self);
}

void sluice_share_service_clear_handler(SluiceShareService *self)
{
        self->set_read_only = NULL;
        self->user_data = NULL;
}
