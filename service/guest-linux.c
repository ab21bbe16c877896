/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-linux.c — a share in a Linux guest; see guest-linux.h. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-linux.h"

#define MOUNT_POINT_MAX_BYTES 255

/* Folders that hold the system: mounting over one hides what the guest runs on. */
static const char *const system_folders[] = {
        "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
        "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
};
/* …and those whose insides belong to the kernel, the boot or the packages. */
static const char *const system_trees[] = {
        "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
        "/sys", "/usr",
};

static gboolean refuse(GError **error, const char *path, const char *what)
{
        g_autofree char *shown = sluice_guest_agent_printable(path, path != NULL ? strlen(path) : 0, 80);

        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("The guest mount point “%s” %s"), shown, what);
        return FALSE;
}

static gboolean path_is_or_under(const char *path, const char *folder)
{
        gsize n = strlen(folder);

        return strncmp(path, folder, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

gboolean sluice_guest_linux_check_mount_point(const char *path, GError **error)
{
        if (path == NULL || *path == '\0') {
                g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("The guest mount point is empty: give a folder such as /mnt/docs"));
                return FALSE;
        }
        if (strlen(path) > MOUNT_POINT_MAX_BYTES)
                return refuse(error, path, _("is longer than 255 bytes: choose a shorter folder"));
        if (!g_utf8_validate(path, -1, NULL))
                return refuse(error, path, _("is not valid UTF-8: choose a folder name made of readable characters"));
        for (const char *p = path; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                if (g_unichar_iscntrl(c) || !g_unichar_isprint(c) || c == 0x2028 || c == 0x2029)
                        return refuse(error, path,
                                      _("holds a control or invisible character: choose a folder name made of readable characters"));
        }
        if (path[0] != '/')
                return refuse(error, path, _("is not an absolute path: start it with “/”, as in /mnt/docs"));
        if (strcmp(path, "/") == 0)
                return refuse(error, path, _("is the guest's root folder: choose a folder such as /mnt/docs"));
        if (strstr(path, "//") != NULL)
                return refuse(error, path, _("holds “//”: write each “/” once"));
        if (g_str_has_suffix(path, "/"))
                return refuse(error, path, _("ends with “/”: leave the last “/” out"));
        {
                g_auto(GStrv) parts = g_strsplit(path + 1, "/", -1);

                for (guint i = 0; parts[i] != NULL; i++)
                        if (strcmp(parts[i], ".") == 0 || strcmp(parts[i], "..") == 0)
                                return refuse(error, path,
                                              _("holds a “.” or “..” folder: write the folder's full path without them"));
        }
        for (gsize i = 0; i < G_N_ELEMENTS(system_folders); i++)
                if (strcmp(path, system_folders[i]) == 0)
                        return refuse(error, path,
                                      _("is a system folder of the guest: choose a folder inside one, such as /mnt/docs"));
        for (gsize i = 0; i < G_N_ELEMENTS(system_trees); i++)
                if (path_is_or_under(path, system_trees[i]))
                        return refuse(error, path,
                                      _("is inside a system folder of the guest: choose a folder such as /mnt/docs or one in a home folder"));
        return TRUE;
}

char *sluice_guest_linux_default_mount_point(const char *tag)
{
        return g_strconcat("/mnt/", tag, NULL);
}

/* A field of /proc/mounts or /etc/fstab with its octal escapes (\040 for a
 * space) decoded; FALSE when there is no field left. */
static char *next_field(const char **cursor, const char *end)
{
        const char *p = *cursor;
        GString *out;

        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        if (p >= end) {
                *cursor = p;
                return NULL;
        }
        out = g_string_new(NULL);
        while (p < end && *p != ' ' && *p != '\t') {
                if (*p == '\\' && end - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
                    p[3] >= '0' && p[3] <= '7') {
                        g_string_append_c(out, (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0')));
                        p += 4;
                } else {
                        g_string_append_c(out, *p++);
                }
        }
        *cursor = p;
        return g_string_free(out, FALSE);
}

gboolean sluice_guest_linux_is_mounted(const char *proc_mounts, const char *tag, const char *mount_point)
{
        const char *line = proc_mounts;

        if (proc_mounts == NULL || tag == NULL || mount_point == NULL)
                return FALSE;
        while (*line != '\0') {
                const char *end = strchr(line, '\n');
                const char *cursor = line;
                g_autofree char *source = NULL;
                g_autofree char *target = NULL;
                g_autofree char *type = NULL;

                if (end == NULL)
                        end = line + strlen(line);
                source = next_field(&cursor, end);
                target = source != NULL ? next_field(&cursor, end) : NULL;
                type = target != NULL ? next_field(&cursor, end) : NULL;
                if (type != NULL && strcmp(type, "virtiofs") == 0 && strcmp(source, tag) == 0 &&
                    strcmp(target, mount_point) == 0)
                        return TRUE;
                line = *end == '\n' ? end + 1 : end;
        }
        return FALSE;
}

/* PATH as one fstab field: what would split or end it escaped in octal. */
static void append_fstab_field(GString *out, const char *path)
{
        for (const char *p = path; *p != '\0'; p++) {
                if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\\' || (p == path && *p == '#'))
                        g_string_append_printf(out, "\\%03o", (unsigned char)*p);
                else
                        g_string_append_c(out, *p);
        }
}

/* Whether LINE (without its newline) is Sluice's mark for TAG. */
static gboolean is_mark(const char *line, gsize len, const char *tag)
{
        g_autofree char *copy = g_strndup(line, len);
        g_autofree char *expected = g_strdup_printf(SLUICE_GUEST_FSTAB_MARK ": %s", tag);

        return strcmp(g_strstrip(copy), expected) == 0;
}

/* Whether LINE is an fstab entry for TAG (its first field). */
static gboolean is_entry_for(const char *line, gsize len, const char *tag)
{
        const char *cursor = line;
        g_autofree char *source = next_field(&cursor, line + len);

        return source != NULL && strcmp(source, tag) == 0;
}

char *sluice_guest_linux_fstab_edit(const char *fstab, const char *tag, const char *mount_point,
                                    gboolean present)
{
        GString *out = g_string_new(NULL);
        const char *line = fstab != NULL ? fstab : "";

        /* Sluice's entry is a comment line with the mark followed by the
         * entry itself: a comment of its own line is skipped by every fstab
         * reader (libmount, busybox, systemd's generator), where a comment
         * after the fields is not. */
        while (*line != '\0') {
                const char *end = strchr(line, '\n');
                const char *next;

                if (end == NULL)
                        end = line + strlen(line);
                next = *end == '\n' ? end + 1 : end;
                if (is_mark(line, (gsize)(end - line), tag)) {
                        /* the entry that follows it goes too, when it is still TAG's */
                        const char *after_end = strchr(next, '\n');

                        if (after_end == NULL)
                                after_end = next + strlen(next);
                        if (*next != '\0' && is_entry_for(next, (gsize)(after_end - next), tag))
                                next = *after_end == '\n' ? after_end + 1 : after_end;
                        line = next;
                        continue;
                }
                g_string_append_len(out, line, next - line);
                line = next;
        }
        if (present) {
                if (out->len > 0 && out->str[out->len - 1] != '\n')
                        g_string_append_c(out, '\n');
                g_string_append_printf(out, SLUICE_GUEST_FSTAB_MARK ": %s\n", tag);
                append_fstab_field(out, tag);
                g_string_append_c(out, ' ');
                append_fstab_field(out, mount_point);
                g_string_append(out, " virtiofs defaults,nofail 0 0\n");
        }
        return g_string_free(out, FALSE);
}

static gboolean not_yet(GError **error)
{
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED, "not implemented yet");
        return FALSE;
}

gboolean sluice_guest_linux_mount(virDomainPtr domain, const char *tag, const char *mount_point, GError **error) { return not_yet(error); }
gboolean sluice_guest_linux_unmount(virDomainPtr domain, const char *tag, const char *mount_point, GError **error) { return not_yet(error); }
gboolean sluice_guest_linux_release(virDomainPtr domain, const char *tag, const char *mount_point, GError **error) { return not_yet(error); }
gboolean sluice_guest_linux_set_fstab(virDomainPtr domain, const char *tag, const char *mount_point, gboolean present, GError **error) { return not_yet(error); }
