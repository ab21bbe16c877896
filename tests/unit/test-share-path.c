/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-share-path.c — which folders may be shared, under which path, and that
 * the folder a worker is handed is the folder that was checked. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "share-path.h"

static char *scratch(void)
{
        g_autoptr(GError) error = NULL;
        char *dir = g_dir_make_tmp("sluice-share-path-XXXXXX", &error);
        g_autofree char *real = NULL;

        g_assert_no_error(error);
        /* the checks speak of real paths: $TMPDIR may be a link */
        real = realpath(dir, NULL);
        g_free(dir);
        return g_steal_pointer(&real);
}

static void assert_code(gboolean ok, GError *error, int code)
{
        g_assert_false(ok);
        g_assert_error(error, SLUICE_ERROR, code);
}

/* The root, the system trees and pseudo file systems are refused by name,
 * except the places below /run where people keep files. */
static void test_places(void)
{
        static const char *const refused[] = {
                "/", "/proc", "/proc/self", "/sys/class", "/dev", "/dev/shm", "/run", "/run/lock",
                "/run/user/1000", "/run/user/1000/gvfs", "/run/media",
        };
        static const char *const allowed[] = {
                "/home/someone/Photos", "/tmp/x", "/run/media/someone/USB",
                "/run/user/1000/gvfs/smb-share:server=nas,share=photos", "/process", "/devices",
        };

        for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
                g_autoptr(GError) error = NULL;

                if (sluice_share_path_check_name(refused[i], &error))
                        g_error("“%s” may be shared", refused[i]);
                g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE);
        }
        for (gsize i = 0; i < G_N_ELEMENTS(allowed); i++) {
                g_autoptr(GError) error = NULL;

                if (!sluice_share_path_check_name(allowed[i], &error))
                        g_error("“%s” refused: %s", allowed[i], error->message);
        }
}

/* By what is there: a file system the kernel makes up is refused wherever it
 * is mounted; a folder that does not exist (a drive not plugged in) passes. */
static void test_location_looks(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *dir = scratch();
        g_autofree char *absent = g_build_filename(dir, "not-plugged-in", NULL);

        g_assert_false(sluice_share_path_check_location("/proc/self/fd", &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE);
        g_assert_true(sluice_share_path_check_location(dir, NULL));
        g_assert_true(sluice_share_path_check_location(absent, NULL));
        g_rmdir(dir);
}

/* A share is stored under the folder's real path: links and ".." resolved. */
static void test_resolve(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *dir = scratch();
        g_autofree char *photos = g_build_filename(dir, "photos", NULL);
        g_autofree char *link = g_build_filename(dir, "link", NULL);
        g_autofree char *dotdot = g_build_filename(dir, "photos", "..", "photos", NULL);
        g_autofree char *file = g_build_filename(dir, "file.txt", NULL);
        g_autofree char *missing = g_build_filename(dir, "missing", NULL);
        g_autofree char *resolved = NULL;
        g_autofree char *again = NULL;
        SluiceFolderId id = { 0 }, id2 = { 0 };
        gboolean ok;

        g_assert_cmpint(g_mkdir(photos, 0755), ==, 0);
        g_assert_cmpint(symlink(photos, link), ==, 0);
        g_assert_true(g_file_set_contents(file, "x", 1, NULL));

        g_assert_true(sluice_share_path_resolve(link, &resolved, &id, &error));
        g_assert_no_error(error);
        g_assert_cmpstr(resolved, ==, photos);
        g_assert_true(id.known);
        g_assert_true(sluice_share_path_resolve(dotdot, &again, &id2, &error));
        g_assert_cmpstr(again, ==, photos);
        g_assert_true(id2.dev == id.dev && id2.ino == id.ino);

        g_clear_pointer(&resolved, g_free);
        ok = sluice_share_path_resolve("photos", &resolved, &id, &error);
        assert_code(ok, error, SLUICE_ERROR_INVALID_ARGUMENT);
        g_clear_error(&error);
        ok = sluice_share_path_resolve(file, &resolved, &id, &error);
        assert_code(ok, error, SLUICE_ERROR_NOT_A_DIRECTORY);
        g_clear_error(&error);
        ok = sluice_share_path_resolve(missing, &resolved, &id, &error);
        assert_code(ok, error, SLUICE_ERROR_NOT_FOUND);
        g_clear_error(&error);
        ok = sluice_share_path_resolve("/proc", &resolved, &id, &error);
        assert_code(ok, error, SLUICE_ERROR_NOT_SHAREABLE);
        g_assert_null(resolved);

        g_unlink(file);
        g_unlink(link);
        g_rmdir(photos);
        g_rmdir(dir);
}

/* Opening follows no link and checks the folder is the one checked: a link
 * or another folder in its place since is refused. */
static void test_open(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *dir = scratch();
        g_autofree char *inner = g_build_filename(dir, "inner", NULL);
        g_autofree char *share = g_build_filename(dir, "inner", "share", NULL);
        g_autofree char *moved = g_build_filename(dir, "moved", NULL);
        g_autofree char *other = g_build_filename(dir, "other", NULL);
        g_autofree char *moved_share = g_build_filename(moved, "share", NULL);
        SluiceFolderId checked = { 0 }, found = { 0 };
        int fd;

        g_assert_cmpint(g_mkdir_with_parents(share, 0755), ==, 0);
        g_assert_cmpint(g_mkdir(other, 0755), ==, 0);
        fd = sluice_share_path_open(share, NULL, &checked, &error);
        g_assert_no_error(error);
        g_assert_cmpint(fd, >=, 0);
        g_assert_true(checked.known);
        close(fd);
        fd = sluice_share_path_open(share, &checked, &found, &error);
        g_assert_cmpint(fd, >=, 0);
        g_assert_true(found.dev == checked.dev && found.ino == checked.ino);
        close(fd);

        /* a folder on the path swapped for a link to elsewhere */
        g_assert_cmpint(g_rename(inner, moved), ==, 0);
        g_assert_cmpint(symlink(moved, inner), ==, 0);
        fd = sluice_share_path_open(share, &checked, NULL, &error);
        g_assert_cmpint(fd, ==, -1);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE);
        g_clear_error(&error);
        g_unlink(inner);

        /* another folder at the checked path */
        g_assert_cmpint(g_mkdir(inner, 0755), ==, 0);
        g_assert_cmpint(g_mkdir(share, 0755), ==, 0);
        fd = sluice_share_path_open(share, &checked, NULL, &error);
        g_assert_cmpint(fd, ==, -1);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE);
        g_clear_error(&error);

        /* nothing there any more */
        g_rmdir(share);
        fd = sluice_share_path_open(share, &checked, NULL, &error);
        g_assert_cmpint(fd, ==, -1);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND);

        g_rmdir(inner);
        g_rmdir(moved_share);
        g_rmdir(moved);
        g_rmdir(other);
        g_rmdir(dir);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/share-path/places", test_places);
        g_test_add_func("/share-path/location-looks", test_location_looks);
        g_test_add_func("/share-path/resolve", test_resolve);
        g_test_add_func("/share-path/open", test_open);
        return g_test_run();
}
