/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-idmap.c — --translate-uid/--translate-gid presentation. */
#include <glib.h>

#include "idmap.h"
#include "options.h"

static void test_mapping(void)
{
        struct fs_options o = {
                .guest_uid = 1000, .host_uid = 4001,
                .guest_gid = 100, .host_gid = 4002,
        };
        struct idmap m;

        idmap_init(&m, &o);
        g_assert_cmpuint(idmap_uid_to_guest(&m, 4001), ==, 1000);
        g_assert_cmpuint(idmap_gid_to_guest(&m, 4002), ==, 100);
        g_assert_cmpuint(idmap_uid_to_host(&m, 1000), ==, 4001);
        g_assert_cmpuint(idmap_gid_to_host(&m, 100), ==, 4002);
        /* Unmapped ids pass through. */
        g_assert_cmpuint(idmap_uid_to_guest(&m, 0), ==, 0);
        g_assert_cmpuint(idmap_uid_to_guest(&m, 1000), ==, 1000);
        g_assert_cmpuint(idmap_uid_to_host(&m, 4001), ==, 4001);
        g_assert_cmpuint(idmap_gid_to_host(&m, 5), ==, 5);
        /* uid and gid maps are independent */
        g_assert_cmpuint(idmap_gid_to_guest(&m, 4001), ==, 4001);
}

static void test_unmapped(void)
{
        struct fs_options o = {
                .guest_uid = FS_ID_UNMAPPED, .host_uid = FS_ID_UNMAPPED,
                .guest_gid = 7, .host_gid = FS_ID_UNMAPPED,   /* half a pair maps nothing */
        };
        struct idmap m;

        idmap_init(&m, &o);
        for (uint32_t id = 0; id < 10; id++) {
                g_assert_cmpuint(idmap_uid_to_guest(&m, id), ==, id);
                g_assert_cmpuint(idmap_gid_to_guest(&m, id), ==, id);
                g_assert_cmpuint(idmap_uid_to_host(&m, id), ==, id);
                g_assert_cmpuint(idmap_gid_to_host(&m, id), ==, id);
        }
        g_assert_cmpuint(idmap_gid_to_host(&m, FS_ID_UNMAPPED), ==, FS_ID_UNMAPPED);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/idmap/mapping", test_mapping);
        g_test_add_func("/idmap/unmapped", test_unmapped);
        return g_test_run();
}
