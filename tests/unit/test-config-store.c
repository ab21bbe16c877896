/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-config-store.c — shares.ini: what is saved loads back the same, a
 * save replaces the file whole, and a damaged file loses only its bad
 * entries (each one logged, the original kept aside). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "config-store.h"
#include "errors.h"

static GPtrArray *warnings;   /* the messages of the warnings logged, for the test to read */

static GLogWriterOutput collect(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                                gpointer user_data)
{
        if ((level & G_LOG_LEVEL_WARNING) != 0) {
                for (gsize i = 0; i < n_fields; i++)
                        if (strcmp(fields[i].key, "MESSAGE") == 0)
                                g_ptr_array_add(warnings, g_strdup(fields[i].value));
                return G_LOG_WRITER_HANDLED;
        }
        return g_log_writer_default(level, fields, n_fields, user_data);
}

static void reset_warnings(void)
{
        g_ptr_array_set_size(warnings, 0);
}

static gboolean warned(const char *part)
{
        for (guint i = 0; i < warnings->len; i++)
                if (strstr(warnings->pdata[i], part) != NULL)
                        return TRUE;
        return FALSE;
}

static char *scratch(void)
{
        g_autoptr(GError) error = NULL;
        char *dir = g_dir_make_tmp("sluice-config-store-XXXXXX", &error);

        g_assert_no_error(error);
        return dir;
}

static void remove_tree(const char *dir)
{
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name;

        while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
                g_autofree char *path = g_build_filename(dir, name, NULL);

                if (g_file_test(path, G_FILE_TEST_IS_DIR))
                        remove_tree(path);
                else
                        g_unlink(path);
        }
        g_rmdir(dir);
}

static guint count_prefixed(const char *dir, const char *prefix)
{
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name;
        guint n = 0;

        while (d != NULL && (name = g_dir_read_name(d)) != NULL)
                n += g_str_has_prefix(name, prefix);
        return n;
}

static SluiceShareConfig *share(guint id, const char *path, const char *tag)
{
        SluiceShareConfig *c = sluice_share_config_new();

        c->id = id;
        g_free(c->path);
        c->path = g_strdup(path);
        g_free(c->tag);
        c->tag = g_strdup(tag);
        return c;
}

/* Every field saved comes back, in id order; the folder is made if missing
 * and the file is the user's alone. */
static void test_round_trip(void)
{
        g_autofree char *dir = scratch();
        g_autofree char *file = g_build_filename(dir, "sluice", "deeper", "shares.ini", NULL);
        g_autoptr(GPtrArray) saved = g_ptr_array_new_with_free_func((GDestroyNotify)sluice_share_config_free);
        g_autoptr(GPtrArray) loaded = NULL;
        g_autoptr(GError) error = NULL;
        SluiceShareConfig *b = share(7, "/home/someone/Été photos", "photos");
        SluiceShareConfig *a = share(2, "/srv/data", "data");
        struct stat st;

        reset_warnings();
        g_free(b->vm);
        b->vm = g_strdup("win11 “desktop”");
        g_free(b->cache);
        b->cache = g_strdup("never");
        b->readonly = TRUE;
        b->autostart = FALSE;
        b->queues = 4;
        b->auto_mount = FALSE;
        g_free(b->mount_point);
        b->mount_point = g_strdup("/home/user/Été photos");
        b->mount_at_boot = TRUE;
        g_free(b->names);
        b->names = g_strdup("windows");
        g_free(b->case_);
        b->case_ = g_strdup("insensitive");
        g_free(b->guest_letter);
        b->guest_letter = g_strdup("Y:");
        g_ptr_array_add(saved, b);
        g_ptr_array_add(saved, a);
        g_assert_true(sluice_config_save(file, saved, &error));
        g_assert_no_error(error);
        g_assert_cmpint(g_stat(file, &st), ==, 0);
        g_assert_cmpint(st.st_mode & 0777, ==, 0600);

        loaded = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(loaded->len, ==, 2);
        for (guint i = 0; i < 2; i++) {
                const SluiceShareConfig *want = i == 0 ? a : b;
                const SluiceShareConfig *got = loaded->pdata[i];

                g_assert_cmpuint(got->id, ==, want->id);
                g_assert_cmpstr(got->path, ==, want->path);
                g_assert_cmpstr(got->tag, ==, want->tag);
                g_assert_cmpstr(got->vm, ==, want->vm);
                g_assert_cmpstr(got->cache, ==, want->cache);
                g_assert_cmpint(got->readonly, ==, want->readonly);
                g_assert_cmpint(got->autostart, ==, want->autostart);
                g_assert_cmpuint(got->queues, ==, want->queues);
                g_assert_cmpint(got->auto_mount, ==, want->auto_mount);
                g_assert_cmpstr(got->mount_point, ==, want->mount_point);
                g_assert_cmpint(got->mount_at_boot, ==, want->mount_at_boot);
                g_assert_cmpstr(got->names, ==, want->names);
                g_assert_cmpstr(got->case_, ==, want->case_);
                g_assert_cmpstr(got->guest_letter, ==, want->guest_letter);
        }
        /* a's are the defaults: mounted automatically, at the OS's place, not at boot */
        g_assert_true(a->auto_mount);
        g_assert_cmpstr(a->mount_point, ==, "");
        g_assert_false(a->mount_at_boot);
        /* … names and case follow the VM's OS, no letter known yet */
        g_assert_cmpstr(a->names, ==, "");
        g_assert_cmpstr(a->case_, ==, "");
        g_assert_cmpstr(a->guest_letter, ==, "");
        g_assert_cmpuint(warnings->len, ==, 0);
        remove_tree(dir);
}

/* A save replaces the whole file and leaves nothing beside it; a temporary
 * file an interrupted save left is cleared at the next load. */
static void test_atomic_save(void)
{
        g_autofree char *dir = scratch();
        g_autofree char *file = g_build_filename(dir, "shares.ini", NULL);
        g_autofree char *leftover = g_build_filename(dir, "shares.ini.Ab3xY9", NULL);
        g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func((GDestroyNotify)sluice_share_config_free);
        g_autoptr(GPtrArray) loaded = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *text = NULL;

        reset_warnings();
        g_ptr_array_add(entries, share(1, "/srv/one", "one"));
        g_ptr_array_add(entries, share(2, "/srv/two", "two"));
        g_assert_true(sluice_config_save(file, entries, &error));
        g_ptr_array_remove_index(entries, 0);
        g_assert_true(sluice_config_save(file, entries, &error));
        g_assert_true(g_file_get_contents(file, &text, NULL, NULL));
        g_assert_null(strstr(text, "/srv/one"));
        g_assert_nonnull(strstr(text, "/srv/two"));
        g_assert_cmpuint(count_prefixed(dir, "shares.ini"), ==, 1);

        g_assert_true(g_file_set_contents(leftover, "[share 9]\npath=/x\n", -1, NULL));
        loaded = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(loaded->len, ==, 1);
        g_assert_false(g_file_test(leftover, G_FILE_TEST_EXISTS));
        g_assert_cmpuint(count_prefixed(dir, "shares.ini"), ==, 1);

        /* a folder where the file should be cannot be written to */
        g_clear_pointer(&file, g_free);
        file = g_build_filename(dir, "blocked", NULL);
        g_assert_cmpint(g_mkdir(file, 0700), ==, 0);
        g_assert_false(sluice_config_save(file, entries, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED);
        remove_tree(dir);
}

static const char damaged[] =
        "# hand-edited\n"
        "[share 1]\n"
        "path=/srv/good\n"
        "tag=good\n"
        "colour=blue\n"
        "this line is not a key\n"
        "[share x]\n"
        "path=/srv/bad-name\n"
        "tag=badname\n"
        "[share 3]\n"
        "path=relative/folder\n"
        "tag=relative\n"
        "[share 4]\n"
        "path=/srv/flag\n"
        "tag=flag\n"
        "read-only=perhaps\n"
        "[share 5]\n"
        "path=/srv/queues\n"
        "tag=queues\n"
        "queues=0\n"
        "[share 6]\n"
        "path=/srv/again\n"
        "tag=good\n"
        "[share 7]\n"
        "path=/srv/holiday\n"
        "tag=my holiday\n"
        "[share 8]\n"
        "path=/proc/self\n"
        "tag=proc\n"
        "[share 9]\n"
        "tag=nopath\n";

/* Each bad entry is skipped with a line naming it, the good ones load, a tag
 * a guest cannot use is mended, and the original is kept aside. */
static void test_forgiving_load(void)
{
        g_autofree char *dir = scratch();
        g_autofree char *file = g_build_filename(dir, "shares.ini", NULL);
        g_autoptr(GPtrArray) loaded = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *kept = NULL;
        g_autoptr(GDir) d = NULL;
        const char *name;
        const SluiceShareConfig *good, *mended;

        reset_warnings();
        g_assert_true(g_file_set_contents(file, damaged, -1, NULL));
        loaded = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(loaded->len, ==, 2);
        good = loaded->pdata[0];
        mended = loaded->pdata[1];
        g_assert_cmpuint(good->id, ==, 1);
        g_assert_cmpstr(good->path, ==, "/srv/good");
        g_assert_cmpstr(good->tag, ==, "good");
        g_assert_cmpuint(mended->id, ==, 7);
        g_assert_cmpstr(mended->tag, ==, "my_holiday");

        g_assert_true(warned("unknown key “colour”"));
        g_assert_true(warned("[share x] skipped"));
        g_assert_true(warned("[share 3] skipped"));
        g_assert_true(warned("[share 4] skipped"));
        g_assert_true(warned("[share 5] skipped"));
        g_assert_true(warned("[share 6] skipped: another share already uses the tag “good”"));
        g_assert_true(warned("it is now “my_holiday”"));
        g_assert_true(warned("[share 8] skipped"));
        g_assert_true(warned("[share 9] skipped"));

        /* the original, bad entries and all, beside the file */
        d = g_dir_open(dir, 0, NULL);
        while ((name = g_dir_read_name(d)) != NULL)
                if (g_str_has_prefix(name, "shares.ini.bad-"))
                        kept = g_build_filename(dir, name, NULL);
        g_assert_nonnull(kept);
        {
                g_autofree char *text = NULL;

                g_assert_true(g_file_get_contents(kept, &text, NULL, NULL));
                g_assert_cmpstr(text, ==, damaged);
        }
        remove_tree(dir);
}

/* A file from before the guest settings loads as it was, every share with
 * the defaults, and is no "bad" file; a Windows drive is kept as given. */
static void test_guest_settings_defaults(void)
{
        g_autofree char *dir = scratch();
        g_autofree char *file = g_build_filename(dir, "shares.ini", NULL);
        g_autoptr(GPtrArray) loaded = NULL;
        g_autoptr(GError) error = NULL;
        const SluiceShareConfig *old, *win;
        static const char text[] =
                "[share 1]\npath=/srv/old\ntag=old\nvm=debian\nread-only=false\n"
                "autostart=true\ncache=auto\nqueues=1\n"
                "[share 2]\npath=/srv/win\ntag=win\nvm=win11\nmount-point=Z:\n";

        reset_warnings();
        g_assert_true(g_file_set_contents(file, text, -1, NULL));
        loaded = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(loaded->len, ==, 2);
        old = loaded->pdata[0];
        win = loaded->pdata[1];
        g_assert_true(old->auto_mount);
        g_assert_cmpstr(old->mount_point, ==, "");
        g_assert_false(old->mount_at_boot);
        g_assert_cmpstr(win->mount_point, ==, "Z:");
        g_assert_true(win->auto_mount);
        g_assert_cmpuint(warnings->len, ==, 0);
        g_assert_cmpuint(count_prefixed(dir, "shares.ini.bad-"), ==, 0);
        remove_tree(dir);
}

/* A bad guest setting costs the share nothing but that setting: it keeps
 * the default, the value is named in a warning, and the file is kept aside. */
static void test_guest_settings_bad(void)
{
        g_autofree char *dir = scratch();
        g_autofree char *file = g_build_filename(dir, "shares.ini", NULL);
        g_autoptr(GPtrArray) loaded = NULL;
        g_autoptr(GError) error = NULL;
        static const char text[] =
                "[share 1]\npath=/srv/one\ntag=one\nauto-mount=perhaps\nmount-at-boot=2\n"
                "mount-point=relative/place\n"
                "[share 2]\npath=/srv/two\ntag=two\nmount-point=/proc\nauto-mount=false\n"
                "[share 3]\npath=/srv/three\ntag=three\nmount-point=C:\nmount-at-boot=true\n"
                "[share 4]\npath=/srv/four\ntag=four\nmount-point=/mnt/a/../b\n"
                "[share 5]\npath=/srv/five\ntag=five\nmount-point=/mnt/a\\tb\n";

        reset_warnings();
        g_assert_true(g_file_set_contents(file, text, -1, NULL));
        loaded = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(loaded->len, ==, 5);
        for (guint i = 0; i < loaded->len; i++) {
                const SluiceShareConfig *c = loaded->pdata[i];

                g_assert_cmpstr(c->mount_point, ==, "");
                g_assert_cmpint(c->auto_mount, ==, c->id != 2);  /* [share 2]'s false is good */
                g_assert_cmpint(c->mount_at_boot, ==, c->id == 3);
        }
        g_assert_true(warned("[share 1] auto-mount ignored"));
        g_assert_true(warned("[share 1] mount-at-boot ignored"));
        g_assert_true(warned("[share 1] mount-point ignored"));
        g_assert_true(warned("relative/place"));
        g_assert_true(warned("[share 2] mount-point ignored"));
        g_assert_true(warned("[share 3] mount-point ignored"));
        g_assert_true(warned("[share 4] mount-point ignored"));
        g_assert_true(warned("[share 5] mount-point ignored"));
        g_assert_cmpuint(count_prefixed(dir, "shares.ini.bad-"), ==, 1);
        remove_tree(dir);
}

/* Names, Case and the kept letter from a hand-edited file: a word the
 * service does not take, or a letter that is not a drive D: to Z:, is
 * dropped with a warning; the share keeps "" (the VM's OS decides, no
 * letter known). */
static void test_names_case_letter_bad(void)
{
        g_autofree char *dir = scratch();
        g_autofree char *file = g_build_filename(dir, "shares.ini", NULL);
        g_autoptr(GPtrArray) loaded = NULL;
        g_autoptr(GError) error = NULL;
        static const char text[] =
                "[share 1]\npath=/srv/one\ntag=one\nnames=Windows\ncase=yes\nguest-letter=/mnt/one\n"
                "[share 2]\npath=/srv/two\ntag=two\nnames=posix\ncase=sensitive\nguest-letter=C:\n"
                "[share 3]\npath=/srv/three\ntag=three\nnames=windows\ncase=insensitive\nguest-letter=Z:\n";
        const SluiceShareConfig *c;

        reset_warnings();
        g_assert_true(g_file_set_contents(file, text, -1, NULL));
        loaded = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(loaded->len, ==, 3);
        c = loaded->pdata[0];
        g_assert_cmpstr(c->names, ==, "");
        g_assert_cmpstr(c->case_, ==, "");
        g_assert_cmpstr(c->guest_letter, ==, "");
        c = loaded->pdata[1];
        g_assert_cmpstr(c->names, ==, "posix");
        g_assert_cmpstr(c->case_, ==, "sensitive");
        g_assert_cmpstr(c->guest_letter, ==, "");
        c = loaded->pdata[2];
        g_assert_cmpstr(c->names, ==, "windows");
        g_assert_cmpstr(c->case_, ==, "insensitive");
        g_assert_cmpstr(c->guest_letter, ==, "Z:");
        g_assert_true(warned("[share 1] names ignored"));
        g_assert_true(warned("[share 1] case ignored"));
        g_assert_true(warned("[share 1] guest-letter ignored"));
        g_assert_true(warned("[share 2] guest-letter ignored"));
        g_assert_false(warned("[share 3]"));
        remove_tree(dir);
}

/* What AddShare, MountPoint writes and the file take: "", a Linux path, a
 * drive; anything else is InvalidArgument saying what to give. */
static void test_check_mount_point(void)
{
        static const char *const good[] = { "", "/mnt/docs", "/home/user/My Docs", "Z:", "d:" };
        static const char *const bad[] = { "docs", "/", "/mnt/", "/proc", "/mnt/../etc", "C:",
                                           "Z:\\", "ZZ:", "/mnt/a\nb" };
        g_autoptr(GError) error = NULL;

        for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
                g_assert_true(sluice_config_check_mount_point(good[i], &error));
                g_assert_no_error(error);
        }
        for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_assert_false(sluice_config_check_mount_point(bad[i], &error));
                g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
                g_assert_null(strchr(error->message, '\n'));
                g_clear_error(&error);
        }
        g_assert_false(sluice_config_check_mount_point("docs", &error));
        g_assert_nonnull(strstr(error->message, "/mnt/docs"));
        g_assert_nonnull(strstr(error->message, "Z:"));
}

/* No file is no share; a file that is not text loads nothing but is kept;
 * only a file that cannot be read is an error. */
static void test_missing_and_unreadable(void)
{
        g_autofree char *dir = scratch();
        g_autofree char *file = g_build_filename(dir, "shares.ini", NULL);
        g_autoptr(GPtrArray) none = NULL;
        g_autoptr(GPtrArray) binary = NULL;
        g_autoptr(GPtrArray) unreadable = NULL;
        g_autoptr(GError) error = NULL;
        static const char garbage[] = "[share 1]\npath=/srv\0tag=x\n";

        reset_warnings();
        none = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(none->len, ==, 0);

        g_assert_true(g_file_set_contents(file, garbage, sizeof(garbage), NULL));
        binary = sluice_config_load(file, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(binary->len, ==, 0);
        g_assert_true(warned("is not a text file of shares"));
        g_assert_cmpuint(count_prefixed(dir, "shares.ini.bad-"), ==, 1);

        g_unlink(file);
        g_assert_cmpint(g_mkdir(file, 0700), ==, 0);
        unreadable = sluice_config_load(file, &error);
        g_assert_null(unreadable);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED);
        remove_tree(dir);
}

int main(int argc, char **argv)
{
        int ret;

        g_test_init(&argc, &argv, NULL);
        /* the store's warnings are what it says to the user: read, not fatal */
        g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
        warnings = g_ptr_array_new_with_free_func(g_free);
        g_log_set_writer_func(collect, NULL, NULL);
        g_test_add_func("/config-store/round-trip", test_round_trip);
        g_test_add_func("/config-store/atomic-save", test_atomic_save);
        g_test_add_func("/config-store/forgiving-load", test_forgiving_load);
        g_test_add_func("/config-store/missing-and-unreadable", test_missing_and_unreadable);
        g_test_add_func("/config-store/guest-settings-defaults", test_guest_settings_defaults);
        g_test_add_func("/config-store/guest-settings-bad", test_guest_settings_bad);
        g_test_add_func("/config-store/check-mount-point", test_check_mount_point);
        g_test_add_func("/config-store/names-case-letter-bad", test_names_case_letter_bad);
        ret = g_test_run();
        g_ptr_array_unref(warnings);
        return ret;
}
