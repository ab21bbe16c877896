/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-path-settle.c — common/guest-path-settle.c against a Share
 * skeleton on a private bus (GTestDBus): the place in the guest is the
 * service's, read once GuestState has settled; a path left from before (a
 * stale cache, a failed mount) is never shown; the wait is bounded. */
#include "config.h"

#include <gio/gio.h>

#include "guest-path-settle.h"
#include "sluice-dbus.h"
#include "sluice-names.h"

#define SHARE_PATH SLUICE_SHARE_PATH_PREFIX "1"

typedef struct {
        GTestDBus *bus;
        GDBusConnection *service;
        GDBusConnection *client;
        SluiceShare *skeleton;
        SluiceShare *proxy;
        guint filter;
        gint watching;          /* atomic: count GetAll calls from now on */
        gint get_all_calls;     /* atomic */
        guint32 get_all_serial; /* the first GetAll counted; written by the filter */
        gboolean change_on_reply; /* the first GetAll's answer moves the guest on */
        char *result;
        SluiceWireGuestState state;
        gboolean done;
} Fixture;

static GDBusConnection *connect_to(GTestDBus *bus)
{
        g_autoptr(GError) error = NULL;
        GDBusConnection *c = g_dbus_connection_new_for_address_sync(
                g_test_dbus_get_bus_address(bus),
                G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                NULL, NULL, &error);

        g_assert_no_error(error);
        return c;
}

static gboolean mounted_now(gpointer user_data)
{
        Fixture *f = user_data;

        /* as the service does: the path first, then the state that vouches for it */
        sluice_share_set_guest_path(f->skeleton, "/mnt/docs");
        sluice_share_set_guest_state(f->skeleton, "mounted");
        return G_SOURCE_REMOVE;
}

/* Runs in GDBus's worker thread: counts the client's GetAll calls, and
 * after the first one is answered has the guest finish its mount. */
static GDBusMessage *client_filter(GDBusConnection *connection, GDBusMessage *message, gboolean incoming,
                                   gpointer user_data)
{
        Fixture *f = user_data;

        if (!g_atomic_int_get(&f->watching))
                return message;
        if (!incoming && g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_METHOD_CALL &&
            g_strcmp0(g_dbus_message_get_member(message), "GetAll") == 0) {
                if (g_atomic_int_add(&f->get_all_calls, 1) == 0)
                        f->get_all_serial = g_dbus_message_get_serial(message);
        } else if (incoming && f->change_on_reply &&
                   g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_METHOD_RETURN &&
                   f->get_all_serial != 0 && g_dbus_message_get_reply_serial(message) == f->get_all_serial) {
                f->change_on_reply = FALSE;
                g_main_context_invoke(NULL, mounted_now, f);
        }
        return message;
}

static void setup(Fixture *f, gconstpointer data)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) reply = NULL;

        f->bus = g_test_dbus_new(G_TEST_DBUS_NONE);
        g_test_dbus_up(f->bus);
        f->service = connect_to(f->bus);
        f->client = connect_to(f->bus);
        f->skeleton = sluice_share_skeleton_new();
        sluice_share_set_tag(f->skeleton, "docs");
        sluice_share_set_guest_state(f->skeleton, "");
        sluice_share_set_guest_path(f->skeleton, "");
        g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(f->skeleton), f->service, SHARE_PATH, &error);
        g_assert_no_error(error);
        reply = g_dbus_connection_call_sync(f->service, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                            "org.freedesktop.DBus", "RequestName",
                                            g_variant_new("(su)", SLUICE_BUS_NAME, 0u), G_VARIANT_TYPE("(u)"),
                                            G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
        g_assert_no_error(error);
        f->filter = g_dbus_connection_add_filter(f->client, client_filter, f, NULL);
}

static void on_proxy(GObject *source, GAsyncResult *result, gpointer user_data)
{
        Fixture *f = user_data;
        g_autoptr(GError) error = NULL;

        f->proxy = sluice_share_proxy_new_finish(result, &error);
        g_assert_no_error(error);
}

/* Asynchronously: the skeleton answers the proxy's GetAll in this thread's
 * main context, which a sync call would not run. */
static void make_proxy(Fixture *f)
{
        sluice_share_proxy_new(f->client, G_DBUS_PROXY_FLAGS_NONE, SLUICE_BUS_NAME, SHARE_PATH, NULL, on_proxy,
                               f);
        while (f->proxy == NULL)
                g_main_context_iteration(NULL, TRUE);
        g_atomic_int_set(&f->watching, TRUE);
}

static void teardown(Fixture *f, gconstpointer data)
{
        g_dbus_connection_remove_filter(f->client, f->filter);
        g_clear_object(&f->proxy);
        g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(f->skeleton));
        g_clear_object(&f->skeleton);
        g_dbus_connection_close_sync(f->client, NULL, NULL);
        g_dbus_connection_close_sync(f->service, NULL, NULL);
        g_clear_object(&f->client);
        g_clear_object(&f->service);
        g_test_dbus_down(f->bus);
        g_clear_object(&f->bus);
        g_free(f->result);
}

static void on_settled(GObject *source, GAsyncResult *result, gpointer user_data)
{
        Fixture *f = user_data;
        g_autoptr(GError) error = NULL;

        f->result = sluice_client_share_settle_guest_path_finish(SLUICE_SHARE(source), result, &f->state, &error);
        g_assert_no_error(error);
        f->done = TRUE;
}

static void settle(Fixture *f, guint timeout_ms)
{
        sluice_client_share_settle_guest_path(f->proxy, timeout_ms, NULL, on_settled, f);
        while (!f->done)
                g_main_context_iteration(NULL, TRUE);
}

/* Mounted: the service's path. */
static void test_mounted(Fixture *f, gconstpointer data)
{
        sluice_share_set_guest_path(f->skeleton, "/mnt/docs");
        sluice_share_set_guest_state(f->skeleton, "mounted");
        make_proxy(f);
        settle(f, 30 * 1000);
        g_assert_cmpstr(f->result, ==, "/mnt/docs");
        g_assert_cmpint(f->state, ==, SLUICE_WIRE_GUEST_MOUNTED);
}

/* Mounting when first read: it waits for the mount and reads again. */
static void test_waits_while_mounting(Fixture *f, gconstpointer data)
{
        sluice_share_set_guest_state(f->skeleton, "mounting");
        make_proxy(f);
        f->change_on_reply = TRUE;
        settle(f, 30 * 1000);
        g_assert_cmpstr(f->result, ==, "/mnt/docs");
        g_assert_cmpint(f->state, ==, SLUICE_WIRE_GUEST_MOUNTED);
        g_assert_cmpint(g_atomic_int_get(&f->get_all_calls), >=, 2);
}

/* A path the proxy's cache still has from an earlier mount is not the
 * service's now; a failed mount's path is no place either. */
static void test_stale_path(Fixture *f, gconstpointer data)
{
        sluice_share_set_guest_path(f->skeleton, "/mnt/old");
        sluice_share_set_guest_state(f->skeleton, "mounted");
        make_proxy(f);
        g_assert_cmpstr(sluice_share_get_guest_path(f->proxy), ==, "/mnt/old");
        sluice_share_set_guest_state(f->skeleton, "failed");
        settle(f, 30 * 1000);
        g_assert_cmpstr(f->result, ==, "");
        g_assert_cmpint(f->state, ==, SLUICE_WIRE_GUEST_FAILED);
}

/* A guest that stays busy: the answer comes at the bound, with no place. */
static void test_bounded(Fixture *f, gconstpointer data)
{
        sluice_share_set_guest_path(f->skeleton, "/mnt/docs");
        sluice_share_set_guest_state(f->skeleton, "unmounting");
        make_proxy(f);
        settle(f, 50);
        g_assert_cmpstr(f->result, ==, "");
        g_assert_true(f->state == SLUICE_WIRE_GUEST_UNMOUNTING || f->state == SLUICE_WIRE_GUEST_MOUNTING);
}

/* A word of a newer service: not waited for, no place. */
static void test_unknown_word(Fixture *f, gconstpointer data)
{
        sluice_share_set_guest_path(f->skeleton, "/mnt/docs");
        sluice_share_set_guest_state(f->skeleton, "teleporting");
        make_proxy(f);
        settle(f, 30 * 1000);
        g_assert_cmpstr(f->result, ==, "");
        g_assert_cmpint(f->state, ==, SLUICE_WIRE_GUEST_IDLE);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
#define ADD(name, fn) g_test_add(name, Fixture, NULL, setup, fn, teardown)
        ADD("/guest-path-settle/mounted", test_mounted);
        ADD("/guest-path-settle/waits-while-mounting", test_waits_while_mounting);
        ADD("/guest-path-settle/stale-path", test_stale_path);
        ADD("/guest-path-settle/bounded", test_bounded);
        ADD("/guest-path-settle/unknown-word", test_unknown_word);
#undef ADD
        return g_test_run();
}
