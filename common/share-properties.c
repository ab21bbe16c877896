/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-properties.c — see share-properties.h.  The only place a client
 * spells a Share property's D-Bus name. */
#include "config.h"

#include "share-properties.h"
#include "sluice-names.h"

#define PROPERTIES_SET "org.freedesktop.DBus.Properties.Set"
#define PROPERTIES_GET "org.freedesktop.DBus.Properties.Get"
#define PROPERTIES_GET_ALL "org.freedesktop.DBus.Properties.GetAll"

static GVariant *set_args(const char *property, gboolean value)
{
        return g_variant_new("(ssv)", SLUICE_SHARE_INTERFACE, property, g_variant_new_boolean(value));
}

static void set_bool(SluiceShare *share, const char *property, gboolean value,
                     GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
        g_dbus_proxy_call(G_DBUS_PROXY(share), PROPERTIES_SET, set_args(property, value),
                          G_DBUS_CALL_FLAGS_NONE, -1, cancellable, callback, user_data);
}

void sluice_client_share_set_read_only(SluiceShare *share, gboolean read_only,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
        set_bool(share, "ReadOnly", read_only, cancellable, callback, user_data);
}

void sluice_client_share_set_autostart(SluiceShare *share, gboolean autostart,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data)
{
        set_bool(share, "Autostart", autostart, cancellable, callback, user_data);
}

gboolean sluice_client_share_set_finish(SluiceShare *share, GAsyncResult *result, GError **error)
{
        g_autoptr(GVariant) reply = g_dbus_proxy_call_finish(G_DBUS_PROXY(share), result, error);

        return reply != NULL;
}

static gboolean set_bool_sync(SluiceShare *share, const char *property, gboolean value,
                              GCancellable *cancellable, GError **error)
{
        g_autoptr(GVariant) reply = g_dbus_proxy_call_sync(G_DBUS_PROXY(share), PROPERTIES_SET,
                                                           set_args(property, value),
                                                           G_DBUS_CALL_FLAGS_NONE, -1,
                                                           cancellable, error);

        return reply != NULL;
}

gboolean sluice_client_share_set_read_only_sync(SluiceShare *share, gboolean read_only,
                                                GCancellable *cancellable, GError **error)
{
        return set_bool_sync(share, "ReadOnly", read_only, cancellable, error);
}

gboolean sluice_client_share_set_autostart_sync(SluiceShare *share, gboolean autostart,
                                                GCancellable *cancellable, GError **error)
{
        return set_bool_sync(share, "Autostart", autostart, cancellable, error);
}

static void set_value(SluiceShare *share, const char *property, GVariant *value,
                      GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
        g_dbus_proxy_call(G_DBUS_PROXY(share), PROPERTIES_SET,
                          g_variant_new("(ssv)", SLUICE_SHARE_INTERFACE, property, value),
                          G_DBUS_CALL_FLAGS_NONE, -1, cancellable, callback, user_data);
}

static gboolean set_value_sync(SluiceShare *share, const char *property, GVariant *value,
                               GCancellable *cancellable, GError **error)
{
        g_autoptr(GVariant) reply = g_dbus_proxy_call_sync(G_DBUS_PROXY(share), PROPERTIES_SET,
                g_variant_new("(ssv)", SLUICE_SHARE_INTERFACE, property, value),
                G_DBUS_CALL_FLAGS_NONE, -1, cancellable, error);

        return reply != NULL;
}

void sluice_client_share_set_auto_mount(SluiceShare *share, gboolean auto_mount,
                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data)
{
        set_value(share, "AutoMount", g_variant_new_boolean(auto_mount), cancellable, callback,
                  user_data);
}

void sluice_client_share_set_mount_point(SluiceShare *share, const char *mount_point,
                                         GCancellable *cancellable, GAsyncReadyCallback callback,
                                         gpointer user_data)
{
        set_value(share, "MountPoint", g_variant_new_string(mount_point), cancellable, callback,
                  user_data);
}

void sluice_client_share_set_mount_at_boot(SluiceShare *share, gboolean mount_at_boot,
                                           GCancellable *cancellable, GAsyncReadyCallback callback,
                                           gpointer user_data)
{
        set_value(share, "MountAtBoot", g_variant_new_boolean(mount_at_boot), cancellable, callback,
                  user_data);
}

void sluice_client_share_set_names(SluiceShare *share, const char *names, GCancellable *cancellable,
                                   GAsyncReadyCallback callback, gpointer user_data)
{
        set_value(share, "Names", g_variant_new_string(names), cancellable, callback, user_data);
}

void sluice_client_share_set_case(SluiceShare *share, const char *case_mode, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data)
{
        set_value(share, "Case", g_variant_new_string(case_mode), cancellable, callback, user_data);
}

gboolean sluice_client_share_set_auto_mount_sync(SluiceShare *share, gboolean auto_mount,
                                                 GCancellable *cancellable, GError **error)
{
        return set_value_sync(share, "AutoMount", g_variant_new_boolean(auto_mount), cancellable,
                              error);
}

gboolean sluice_client_share_set_names_sync(SluiceShare *share, const char *names, GCancellable *cancellable,
                                            GError **error)
{
        return set_value_sync(share, "Names", g_variant_new_string(names), cancellable, error);
}

gboolean sluice_client_share_set_case_sync(SluiceShare *share, const char *case_, GCancellable *cancellable,
                                           GError **error)
{
        return set_value_sync(share, "Case", g_variant_new_string(case_), cancellable, error);
}

gboolean sluice_client_share_set_mount_point_sync(SluiceShare *share, const char *mount_point,
                                                  GCancellable *cancellable, GError **error)
{
        return set_value_sync(share, "MountPoint", g_variant_new_string(mount_point), cancellable,
                              error);
}

gboolean sluice_client_share_set_mount_at_boot_sync(SluiceShare *share, gboolean mount_at_boot,
                                                    GCancellable *cancellable, GError **error)
{
        return set_value_sync(share, "MountAtBoot", g_variant_new_boolean(mount_at_boot),
                              cancellable, error);
}

static char *string_from_reply(GVariant *reply, GError **error)
{
        g_autoptr(GVariant) value = NULL;

        if (reply == NULL)
                return NULL;
        g_variant_get(reply, "(v)", &value);
        if (!g_variant_is_of_type(value, G_VARIANT_TYPE_STRING)) {
                g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                                    "The service sent a property of the wrong type");
                return NULL;
        }
        return g_variant_dup_string(value, NULL);
}

char *sluice_client_share_fetch_state_sync(SluiceShare *share, GCancellable *cancellable,
                                           GError **error)
{
        g_autoptr(GVariant) reply = NULL;

        reply = g_dbus_proxy_call_sync(G_DBUS_PROXY(share), PROPERTIES_GET,
                                       g_variant_new("(ss)", SLUICE_SHARE_INTERFACE, "State"),
                                       G_DBUS_CALL_FLAGS_NONE, -1, cancellable, error);
        return string_from_reply(reply, error);
}

void sluice_client_share_fetch_guest_hint(SluiceShare *share, GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data)
{
        g_dbus_proxy_call(G_DBUS_PROXY(share), PROPERTIES_GET,
                          g_variant_new("(ss)", SLUICE_SHARE_INTERFACE, "GuestHint"),
                          G_DBUS_CALL_FLAGS_NONE, -1, cancellable, callback, user_data);
}

char *sluice_client_share_fetch_finish(SluiceShare *share, GAsyncResult *result, GError **error)
{
        g_autoptr(GVariant) reply = g_dbus_proxy_call_finish(G_DBUS_PROXY(share), result, error);

        return string_from_reply(reply, error);
}

void sluice_client_share_fetch_guest_place(SluiceShare *share, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data)
{
        g_dbus_proxy_call(G_DBUS_PROXY(share), PROPERTIES_GET_ALL,
                          g_variant_new("(s)", SLUICE_SHARE_INTERFACE), G_DBUS_CALL_FLAGS_NONE, -1,
                          cancellable, callback, user_data);
}

gboolean sluice_client_share_fetch_guest_place_finish(SluiceShare *share, GAsyncResult *result,
                                                      char **guest_state, char **guest_path,
                                                      GError **error)
{
        g_autoptr(GVariant) reply = g_dbus_proxy_call_finish(G_DBUS_PROXY(share), result, error);
        g_autoptr(GVariant) all = NULL;
        const char *state = NULL, *path = NULL;

        if (reply == NULL)
                return FALSE;
        all = g_variant_get_child_value(reply, 0);
        if (!g_variant_is_of_type(all, G_VARIANT_TYPE_VARDICT) ||
            !g_variant_lookup(all, "GuestState", "&s", &state) ||
            !g_variant_lookup(all, "GuestPath", "&s", &path)) {
                g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                                    "The service sent no GuestState or GuestPath of the right type");
                return FALSE;
        }
        *guest_state = g_strdup(state);
        *guest_path = g_strdup(path);
        return TRUE;
}
