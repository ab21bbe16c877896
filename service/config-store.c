/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config-store.c — loading and saving shares.ini. */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "config-store.h"
#include "errors.h"
#include "guest-os.h"
#include "guest-place.h"
#include "printable.h"
#include "share-path.h"
#include "share-tag.h"
#include "wire-enums.h"

#define GROUP_PREFIX "share "
/* Hand-edited files are small; anything bigger is not a shares.ini. */
#define CONFIG_MAX_BYTES (4 * 1024 * 1024)

static const char *const known_keys[] = {
        "path", "tag", "vm", "read-only", "autostart", "cache", "queues",
        "auto-mount", "mount-point", "mount-at-boot", "names", "case", "guest-letter", NULL,
};

SluiceShareConfig *sluice_share_config_new(void)
{
        SluiceShareConfig *config = g_new0(SluiceShareConfig, 1);

        config->path = g_strdup("");
        config->tag = g_strdup("");
        config->vm = g_strdup("");
        config->cache = g_strdup("auto");
        config->autostart = TRUE;
        config->queues = 1;
        config->auto_mount = TRUE;
        config->mount_point = g_strdup("");
        config->names = g_strdup("");
        config->case_ = g_strdup("");
        config->guest_letter = g_strdup("");
        return config;
}

SluiceShareConfig *sluice_share_config_copy(const SluiceShareConfig *config)
{
        SluiceShareConfig *copy = g_memdup2(config, sizeof(*config));

        copy->path = g_strdup(config->path);
        copy->tag = g_strdup(config->tag);
        copy->vm = g_strdup(config->vm);
        copy->cache = g_strdup(config->cache);
        copy->mount_point = g_strdup(config->mount_point);
        copy->names = g_strdup(config->names);
        copy->case_ = g_strdup(config->case_);
        copy->guest_letter = g_strdup(config->guest_letter);
        return copy;
}

void sluice_share_config_free(SluiceShareConfig *config)
{
        if (config == NULL)
                return;
        g_free(config->path);
        g_free(config->tag);
        g_free(config->vm);
        g_free(config->cache);
        g_free(config->mount_point);
        g_free(config->names);
        g_free(config->case_);
        g_free(config->guest_letter);
        g_free(config);
}

static gboolean has_control_characters(const char *s)
{
        for (const char *p = s; *p != '\0'; p = g_utf8_next_char(p))
                if (g_unichar_iscntrl(g_utf8_get_char(p)))
                        return TRUE;
        return FALSE;
}

gboolean sluice_config_check_vm(const char *vm, GError **error)
{
        /* libvirt names are short; this only keeps garbage out of logs and files. */
        if (!g_utf8_validate(vm, -1, NULL) || has_control_characters(vm) || strlen(vm) > 256) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("The VM name is not valid: use the name or UUID shown by “sluicectl vms”"));
                return FALSE;
        }
        return TRUE;
}

gboolean sluice_config_check_cache(const char *cache, GError **error)
{
        if (g_strcmp0(cache, "auto") == 0 || g_strcmp0(cache, "always") == 0 ||
            g_strcmp0(cache, "never") == 0)
                return TRUE;
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("Unknown cache mode “%s”: use auto, always or never"), cache);
        return FALSE;
}

gboolean sluice_config_check_queues(guint64 queues, GError **error)
{
        if (queues >= 1 && queues <= SLUICE_QUEUES_MAX)
                return TRUE;
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("%" PRIu64 " request queues is out of range: use 1 to %d"),
                    queues, SLUICE_QUEUES_MAX);
        return FALSE;
}

gboolean sluice_config_check_mount_point(const char *mount_point, GError **error)
{
        return sluice_guest_os_check_place(mount_point, error);
}

gboolean sluice_config_check_names(const char *names, GError **error)
{
        SluiceWireNames parsed;
        g_autofree char *shown = NULL;

        if (sluice_wire_names_parse(names, &parsed))
                return TRUE;
        shown = sluice_printable_escaped(names != NULL ? names : "");
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("“%s” is not a way of showing names: use “windows” (names Windows cannot use are shown as WinFsp does), “posix” (as they are), or nothing to follow the VM's OS"),
                    shown);
        return FALSE;
}

gboolean sluice_config_check_case(const char *case_, GError **error)
{
        SluiceWireCase parsed;
        g_autofree char *shown = NULL;

        if (sluice_wire_case_parse(case_, &parsed))
                return TRUE;
        shown = sluice_printable_escaped(case_ != NULL ? case_ : "");
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("“%s” is not a case setting: use “insensitive” (README.TXT finds readme.txt), “sensitive”, or nothing to follow the VM's OS"),
                    shown);
        return FALSE;
}

char *sluice_config_default_path(void)
{
        return g_build_filename(g_get_user_config_dir(), "sluice", "shares.ini", NULL);
}

/* Keeps only lines GKeyFile can parse, so that one mangled line does not
 * cost every share; logs each line it drops. */
static char *sanitize_lines(const char *file, const char *contents, gboolean *bad)
{
        g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
        g_autoptr(GString) out = g_string_new(NULL);
        gboolean in_group = FALSE;

        for (guint i = 0; lines[i] != NULL; i++) {
                const char *line = lines[i];
                const char *p = line;
                gsize len;

                while (*p == ' ' || *p == '\t')
                        p++;
                len = strlen(p);
                if (len > 0 && p[len - 1] == '\r')
                        len--;
                if (!g_utf8_validate(line, -1, NULL)) {
                        g_warning(_("%s, line %u: not UTF-8 text, ignored"), file, i + 1);
                        *bad = TRUE;
                        continue;
                }
                if (len == 0 || *p == '#' || *p == ';') {
                        g_string_append_printf(out, "%s\n", line);
                } else if (*p == '[' && p[len - 1] == ']') {
                        in_group = TRUE;
                        g_string_append_printf(out, "%.*s\n", (int)len, p);
                } else if (strchr(p, '=') != NULL && in_group) {
                        g_string_append_printf(out, "%s\n", line);
                } else {
                        g_warning(_("%s, line %u: “%s” is neither a [share N] header nor key=value inside one, ignored"),
                                  file, i + 1, line);
                        *bad = TRUE;
                }
        }
        return g_string_free(g_steal_pointer(&out), FALSE);
}

static gboolean parse_share_id(const char *group, guint *id)
{
        guint64 value;

        if (!g_str_has_prefix(group, GROUP_PREFIX))
                return FALSE;
        if (!g_ascii_string_to_unsigned(group + strlen(GROUP_PREFIX), 10, 1, G_MAXUINT32,
                                        &value, NULL))
                return FALSE;
        *id = (guint)value;
        return TRUE;
}

/* A guest setting of GROUP that is there but bad: logged, the default kept. */
static void drop_guest_setting(const char *file, const char *group, const char *key,
                               const char *why, gboolean *bad)
{
        g_warning(_("%s: [%s] %s ignored (%s): the share keeps the default"), file, group, key, why);
        *bad = TRUE;
}

static void read_guest_boolean(GKeyFile *keyfile, const char *group, const char *key,
                               gboolean *field, const char *file, gboolean *bad)
{
        g_autoptr(GError) error = NULL;
        gboolean value = g_key_file_get_boolean(keyfile, group, key, &error);

        if (error == NULL)
                *field = value;
        else if (!g_error_matches(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND))
                drop_guest_setting(file, group, key, _("not true or false"), bad);
}

typedef gboolean (*CheckString)(const char *value, GError **error);

/* A string setting: missing leaves the default, a bad one is dropped with a log line. */
static void read_guest_string(GKeyFile *keyfile, const char *group, const char *key, CheckString check,
                              char **field, const char *file, gboolean *bad)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *value = g_key_file_get_string(keyfile, group, key, &error);

        if (value == NULL) {
                if (!g_error_matches(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND))
                        drop_guest_setting(file, group, key, error->message, bad);
                return;
        }
        if (!check(value, &error)) {
                drop_guest_setting(file, group, key, error->message, bad);
                return;
        }
        g_free(*field);
        *field = g_steal_pointer(&value);
}

static gboolean check_guest_letter(const char *letter, GError **error)
{
        if (*letter == '\0' || sluice_guest_place_is_drive(letter))
                return sluice_guest_os_check_place(letter, error);
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT, _("not a drive letter"));
        return FALSE;
}

/* The guest settings cost no share: a missing or bad value leaves the default. */
static void read_guest_settings(GKeyFile *keyfile, const char *group, SluiceShareConfig *config,
                                const char *file, gboolean *bad)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *mount_point = NULL;

        read_guest_boolean(keyfile, group, "auto-mount", &config->auto_mount, file, bad);
        read_guest_boolean(keyfile, group, "mount-at-boot", &config->mount_at_boot, file, bad);
        mount_point = g_key_file_get_string(keyfile, group, "mount-point", &error);
        if (mount_point == NULL) {
                if (!g_error_matches(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND))
                        drop_guest_setting(file, group, "mount-point", error->message, bad);
        } else if (!sluice_config_check_mount_point(mount_point, &error)) {
                drop_guest_setting(file, group, "mount-point", error->message, bad);
        } else {
                g_free(config->mount_point);
                config->mount_point = g_steal_pointer(&mount_point);
        }
        read_guest_string(keyfile, group, "names", sluice_config_check_names, &config->names, file, bad);
        read_guest_string(keyfile, group, "case", sluice_config_check_case, &config->case_, file, bad);
        /* only a drive Windows gave is kept: a path here would be someone's edit */
        read_guest_string(keyfile, group, "guest-letter", check_guest_letter, &config->guest_letter, file, bad);
}

/* Reads one group; NULL with a message for the log when it is unusable. */
static SluiceShareConfig *parse_group(GKeyFile *keyfile, const char *group, gboolean *unknown_keys,
                                      const char *file, char **why)
{
        g_autoptr(SluiceShareConfig) config = sluice_share_config_new();
        g_auto(GStrv) keys = g_key_file_get_keys(keyfile, group, NULL, NULL);
        g_autoptr(GError) error = NULL;

        if (!parse_share_id(group, &config->id)) {
                *why = g_strdup_printf(_("the group name is not “share N” with a number N"));
                return NULL;
        }
        for (guint i = 0; keys != NULL && keys[i] != NULL; i++) {
                if (!g_strv_contains(known_keys, keys[i])) {
                        g_warning(_("%s: [%s] has an unknown key “%s”, ignored"), file, group, keys[i]);
                        *unknown_keys = TRUE;
                }
        }

#define READ_STRING(key, field, required)                                               \
        do {                                                                            \
                g_autofree char *value_ = g_key_file_get_string(keyfile, group, key, &error); \
                if (value_ != NULL) {                                                   \
                        g_free(config->field);                                          \
                        config->field = g_steal_pointer(&value_);                       \
                } else if ((required) ||                                                \
                           !g_error_matches(error, G_KEY_FILE_ERROR,                    \
                                            G_KEY_FILE_ERROR_KEY_NOT_FOUND)) {          \
                        *why = g_strdup_printf("%s: %s", key, error->message);         \
                        return NULL;                                                    \
                }                                                                       \
                g_clear_error(&error);                                                  \
        } while (0)
#define READ_BOOLEAN(key, field)                                                        \
        do {                                                                            \
                gboolean value_ = g_key_file_get_boolean(keyfile, group, key, &error); \
                if (error == NULL) {                                                    \
                        config->field = value_;                                         \
                } else if (!g_error_matches(error, G_KEY_FILE_ERROR,                    \
                                            G_KEY_FILE_ERROR_KEY_NOT_FOUND)) {          \
                        *why = g_strdup_printf(_("%s is not true or false"), key);      \
                        return NULL;                                                    \
                }                                                                       \
                g_clear_error(&error);                                                  \
        } while (0)

        READ_STRING("path", path, TRUE);
        READ_STRING("tag", tag, TRUE);
        READ_STRING("vm", vm, FALSE);
        READ_STRING("cache", cache, FALSE);
        READ_BOOLEAN("read-only", readonly);
        READ_BOOLEAN("autostart", autostart);
#undef READ_STRING
#undef READ_BOOLEAN

        if (g_key_file_has_key(keyfile, group, "queues", NULL)) {
                g_autofree char *queues = g_key_file_get_string(keyfile, group, "queues", NULL);
                guint64 value = 0;

                if (queues == NULL ||
                    !g_ascii_string_to_unsigned(queues, 10, 1, SLUICE_QUEUES_MAX, &value, NULL)) {
                        *why = g_strdup_printf(_("queues is not a number from 1 to %d"),
                                               SLUICE_QUEUES_MAX);
                        return NULL;
                }
                config->queues = (guint)value;
        }

        if (!g_path_is_absolute(config->path)) {
                *why = g_strdup_printf(_("path “%s” is not an absolute path"), config->path);
                return NULL;
        }
        /* the tag is checked (and mended) once every entry's tag is known */
        if (!sluice_share_path_check_name(config->path, &error) ||
            !sluice_config_check_vm(config->vm, &error) ||
            !sluice_config_check_cache(config->cache, &error)) {
                *why = g_strdup(error->message);
                return NULL;
        }
        /* last: a share that is skipped anyway gets one log line, not more */
        read_guest_settings(keyfile, group, config, file, unknown_keys);
        return g_steal_pointer(&config);
}

/* Copies the file next to itself as FILE.bad-<timestamp> (never over an existing copy). */
static void keep_aside(const char *file)
{
        g_autoptr(GDateTime) now = g_date_time_new_now_local();
        g_autofree char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%S");
        g_autoptr(GFile) source = g_file_new_for_path(file);
        g_autoptr(GError) error = NULL;

        for (guint n = 0; n < 100; n++) {
                g_autofree char *aside = n == 0 ? g_strdup_printf("%s.bad-%s", file, stamp)
                                                : g_strdup_printf("%s.bad-%s-%u", file, stamp, n);
                g_autoptr(GFile) target = g_file_new_for_path(aside);

                g_clear_error(&error);
                if (g_file_copy(source, target, G_FILE_COPY_NONE, NULL, NULL, NULL, &error)) {
                        g_warning(_("Kept a copy of the original %s as %s: the good entries were loaded, the bad ones are only in the copy"),
                                  file, aside);
                        return;
                }
                if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_EXISTS))
                        break;
        }
        g_warning(_("Could not keep a copy of %s (%s): back it up before changing shares"),
                  file, error != NULL ? error->message : "");
}

static gboolean tag_taken(const char *tag, gpointer tags)
{
        return g_hash_table_contains(tags, tag);
}

static gint compare_by_id(gconstpointer a, gconstpointer b)
{
        const SluiceShareConfig *x = *(SluiceShareConfig *const *)a;
        const SluiceShareConfig *y = *(SluiceShareConfig *const *)b;

        return x->id < y->id ? -1 : x->id > y->id;
}

/* A save killed between writing its temporary file (FILE.XXXXXX beside FILE,
 * g_file_set_contents_full) and the rename leaves that file behind.  One
 * service runs per user and it saves synchronously, so when it loads, any such
 * file is a leftover: without this they would pile up, one per unlucky kill. */
static void remove_stale_temporaries(const char *file)
{
        g_autofree char *dir = g_path_get_dirname(file);
        g_autofree char *base = g_path_get_basename(file);
        g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
        size_t len = strlen(base);
        const char *name;

        while (listing != NULL && (name = g_dir_read_name(listing)) != NULL) {
                g_autofree char *path = NULL;
                struct stat st;
                gboolean temporary = strncmp(name, base, len) == 0 && name[len] == '.' &&
                                     strlen(name + len + 1) == 6;

                for (const char *p = name + len + 1; temporary && *p != '\0'; p++)
                        temporary = g_ascii_isalnum(*p);
                if (!temporary)
                        continue;
                path = g_build_filename(dir, name, NULL);
                if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
                    g_unlink(path) == 0)
                        g_debug("Removed %s, left by a save that was interrupted", path);
        }
}

GPtrArray *sluice_config_load(const char *file, GError **error)
{
        g_autoptr(GPtrArray) entries =
                g_ptr_array_new_with_free_func((GDestroyNotify)sluice_share_config_free);
        g_autoptr(GHashTable) tags = g_hash_table_new(g_str_hash, g_str_equal);
        /* entries whose tag is not valid (all end up in entries), and their groups */
        g_autoptr(GPtrArray) mend = g_ptr_array_new();
        g_autoptr(GPtrArray) mend_groups = g_ptr_array_new();
        g_autoptr(GKeyFile) keyfile = g_key_file_new();
        g_autoptr(GError) local_error = NULL;
        g_autofree char *contents = NULL;
        g_autofree char *sanitized = NULL;
        g_auto(GStrv) groups = NULL;
        gboolean bad = FALSE;
        gsize length = 0;

        remove_stale_temporaries(file);
        if (!g_file_get_contents(file, &contents, &length, &local_error)) {
                if (g_error_matches(local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                        return g_steal_pointer(&entries);
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Could not read %s (%s): fix its permissions and restart the service"),
                            file, local_error->message);
                return NULL;
        }
        if (length > CONFIG_MAX_BYTES || memchr(contents, '\0', length) != NULL) {
                g_warning(_("%s is not a text file of shares: no share was loaded from it"), file);
                keep_aside(file);
                return g_steal_pointer(&entries);
        }

        sanitized = sanitize_lines(file, contents, &bad);
        if (!g_key_file_load_from_data(keyfile, sanitized, (gsize)-1, G_KEY_FILE_NONE,
                                       &local_error)) {
                g_warning(_("%s cannot be read as a list of shares (%s): no share was loaded from it"),
                          file, local_error->message);
                keep_aside(file);
                return g_steal_pointer(&entries);
        }

        groups = g_key_file_get_groups(keyfile, NULL);
        for (guint i = 0; groups[i] != NULL; i++) {
                g_autofree char *why = NULL;
                SluiceShareConfig *config = parse_group(keyfile, groups[i], &bad, file, &why);

                if (config == NULL) {
                        g_warning(_("%s: [%s] skipped: %s"), file, groups[i], why);
                        bad = TRUE;
                        continue;
                }
                if (!sluice_share_tag_check(config->tag, NULL)) {
                        g_ptr_array_add(mend, config);
                        g_ptr_array_add(mend_groups, groups[i]);
                        continue;
                }
                if (g_hash_table_contains(tags, config->tag)) {
                        g_warning(_("%s: [%s] skipped: another share already uses the tag “%s”"),
                                  file, groups[i], config->tag);
                        sluice_share_config_free(config);
                        bad = TRUE;
                        continue;
                }
                g_ptr_array_add(entries, config);
                g_hash_table_add(tags, config->tag);
        }
        /* After the good tags: a mended tag never takes one a guest already uses. */
        for (guint i = 0; i < mend->len; i++) {
                SluiceShareConfig *config = mend->pdata[i];
                g_autofree char *folder = g_path_get_basename(config->path);
                const char *names[] = { config->tag, folder, NULL };
                g_autofree char *tag = sluice_share_tag_derive(names, tag_taken, tags);
                g_autofree char *old = sluice_share_tag_printable(config->tag);

                g_warning(_("%s: [%s] the tag “%s” cannot be used in a guest: it is now “%s” (use that tag in the guest)"),
                          file, (const char *)mend_groups->pdata[i], old, tag);
                g_free(config->tag);
                config->tag = g_steal_pointer(&tag);
                g_ptr_array_add(entries, config);
                g_hash_table_add(tags, config->tag);
                bad = TRUE;
        }
        if (bad)
                keep_aside(file);
        g_ptr_array_sort(entries, compare_by_id);
        return g_steal_pointer(&entries);
}

gboolean sluice_config_save(const char *file, GPtrArray *entries, GError **error)
{
        g_autoptr(GKeyFile) keyfile = g_key_file_new();
        g_autofree char *dir = g_path_get_dirname(file);
        g_autofree char *data = NULL;
        g_autoptr(GError) local_error = NULL;

        if (g_mkdir_with_parents(dir, 0700) < 0) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Could not create %s (%s): check that your configuration folder is writable"),
                            dir, g_strerror(errno));
                return FALSE;
        }
        (void)g_key_file_set_comment(keyfile, NULL, NULL,
                " Shares of sluice-service (written by it; edit while it is not running)", NULL);
        for (guint i = 0; i < entries->len; i++) {
                const SluiceShareConfig *config = g_ptr_array_index(entries, i);
                g_autofree char *group = g_strdup_printf(GROUP_PREFIX "%u", config->id);

                g_key_file_set_string(keyfile, group, "path", config->path);
                g_key_file_set_string(keyfile, group, "tag", config->tag);
                g_key_file_set_string(keyfile, group, "vm", config->vm);
                g_key_file_set_boolean(keyfile, group, "read-only", config->readonly);
                g_key_file_set_boolean(keyfile, group, "autostart", config->autostart);
                g_key_file_set_string(keyfile, group, "cache", config->cache);
                g_key_file_set_uint64(keyfile, group, "queues", config->queues);
                g_key_file_set_boolean(keyfile, group, "auto-mount", config->auto_mount);
                g_key_file_set_string(keyfile, group, "mount-point", config->mount_point);
                g_key_file_set_boolean(keyfile, group, "mount-at-boot", config->mount_at_boot);
                g_key_file_set_string(keyfile, group, "names", config->names);
                g_key_file_set_string(keyfile, group, "case", config->case_);
                g_key_file_set_string(keyfile, group, "guest-letter", config->guest_letter);
        }
        data = g_key_file_to_data(keyfile, NULL, NULL);
        if (!g_file_set_contents_full(file, data, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600,
                                      &local_error)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Could not save the shares to %s (%s): check that the folder is writable"),
                            file, local_error->message);
                return FALSE;
        }
        return TRUE;
}
