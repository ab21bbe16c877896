/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-path.c — resolving and checking the folder of a share (share-path.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>


#include <glib/gi18n.h>

#include "daemon/pseudo-fs.h"
#include "errors.h"
#include "share-path.h"
#include "share-tag.h"

/* PATH is TREE or below it. */
static gboolean is_in(const char *path, const char *tree)
{
        size_t len = strlen(tree);

        return strncmp(path, tree, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/* Below /run, where people do keep files: drives udisks2 mounts for them
 * (/run/media/USER/LABEL on Fedora, Arch, openSUSE) and the network folders
 * of GNOME's file manager (/run/user/UID/gvfs/smb-share:…). */
static gboolean is_user_place_in_run(const char *path)
{
        const char *rest;

        if (is_in(path, "/run/media") && strcmp(path, "/run/media") != 0)
                return TRUE;
        if (!g_str_has_prefix(path, "/run/user/"))
                return FALSE;
        rest = strchr(path + strlen("/run/user/"), '/');
        return rest != NULL && g_str_has_prefix(rest, "/gvfs/") && rest[strlen("/gvfs/")] != '\0';
}

/* SHOWN: the folder as the messages name it, in quotes. */
static gboolean check_file_system(const struct statfs *sfs, const char *shown, GError **error)
{
        const char *fs = pseudo_fs_name((unsigned long)sfs->f_type);

        if (fs == NULL)
                return TRUE;
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE,
                    _("%s is on a %s file system, which the kernel makes up as it is read: it has no files to share; share a folder on a disk"),
                    shown, fs);
        return FALSE;
}

/* SHOWN: PATH as the messages name it, in quotes.  LOOK: also ask the
 * file system what it is (statfs), not only the name. */
static gboolean check_location(const char *path, const char *shown, gboolean look, GError **error)
{
        static const struct {
                const char *tree;
                const char *what;
        } system_trees[] = {
                { "/proc", N_("the kernel's view of processes") },
                { "/sys", N_("the kernel's devices and settings") },
                { "/dev", N_("device files and the system's shared memory") },
                { "/run", N_("the running system's sockets, locks and state") },
        };
        struct statfs sfs;

        if (strcmp(path, "/") == 0) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE,
                            _("“/” is the whole file system, with the system's own files: share a folder in it, such as your home folder"));
                return FALSE;
        }
        for (gsize i = 0; i < G_N_ELEMENTS(system_trees); i++) {
                if (!is_in(path, system_trees[i].tree) || is_user_place_in_run(path))
                        continue;
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE,
                            _("%s is in %s, which holds %s rather than files: share a folder of your own, such as one in your home folder"),
                            shown, system_trees[i].tree, _(system_trees[i].what));
                return FALSE;
        }
        if (!look || statfs(path, &sfs) < 0)
                return TRUE; /* not there (yet): its name was all there is to check */
        return check_file_system(&sfs, shown, error);
}

static gboolean check_named(const char *path, gboolean look, GError **error)
{
        g_autofree char *name = sluice_share_tag_printable(path);
        g_autofree char *shown = g_strdup_printf(_("“%s”"), name);

        return check_location(path, shown, look, error);
}

gboolean sluice_share_path_check_location(const char *path, GError **error)
{
        return check_named(path, TRUE, error);
}

gboolean sluice_share_path_check_name(const char *path, GError **error)
{
        return check_named(path, FALSE, error);
}

/* The error of realpath(PATH) failing with ERR. */
static void set_resolve_error(const char *path, int err, GError **error)
{
        g_autofree char *shown = sluice_share_tag_printable(path);
        struct stat st;

        switch (err) {
        case ENOENT:
        case ENOTDIR:
                if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                                    _("“%s” is a symbolic link to a folder that does not exist: share the folder itself"),
                                    shown);
                else
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                                    _("The folder “%s” does not exist: check the path"), shown);
                break;
        case EACCES:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                            _("You cannot reach the folder “%s” (a folder above it is closed to you): fix the permissions or share another folder"),
                            shown);
                break;
        case ELOOP:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("“%s” leads into a loop of symbolic links: share the folder itself"), shown);
                break;
        case ENAMETOOLONG:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("The path “%s” is too long: share a folder with a shorter path"), shown);
                break;
        default:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Cannot look at “%s”: %s"), shown, g_strerror(err));
                break;
        }
}

gboolean sluice_share_path_resolve(const char *path, char **ret_resolved, SluiceFolderId *ret_id,
                                   GError **error)
{
        g_autofree char *shown = NULL;
        g_autofree char *real = NULL;
        g_autofree char *name = NULL;
        struct stat st;
        int fd;

        if (path == NULL || *path == '\0' || !g_path_is_absolute(path)) {
                g_autofree char *relative = sluice_share_tag_printable(path != NULL ? path : "");

                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("“%s” is not an absolute path: give the folder's full path, starting with /"),
                            relative);
                return FALSE;
        }
        real = realpath(path, NULL);
        if (real == NULL) {
                set_resolve_error(path, errno, error);
                return FALSE;
        }
        /* The messages name what the user gave, and where it led when that differs. */
        name = sluice_share_tag_printable(path);
        if (strcmp(path, real) == 0) {
                shown = g_strdup_printf(_("“%s”"), name);
        } else {
                g_autofree char *target = sluice_share_tag_printable(real);

                shown = g_strdup_printf(_("“%s” (that is, “%s”)"), name, target);
        }
        if (!check_location(real, shown, TRUE, error))
                return FALSE;
        if (stat(real, &st) < 0) {
                set_resolve_error(real, errno, error);
                return FALSE;
        }
        if (!S_ISDIR(st.st_mode)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_A_DIRECTORY,
                            _("%s is a file, not a folder: share the folder that contains it"), shown);
                return FALSE;
        }
        if (access(real, R_OK | X_OK) < 0) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                            _("You cannot read the folder %s: make it readable for yourself (chmod u+rx) or share another folder"),
                            shown);
                return FALSE;
        }
        /* The identity of what the checks above saw, opened the way every
         * launch opens it: a link that appeared on the path meanwhile fails. */
        fd = sluice_share_path_open(real, NULL, ret_id, error);
        if (fd < 0)
                return FALSE;
        (void)close(fd);
        *ret_resolved = g_steal_pointer(&real);
        return TRUE;
}

/* The error of opening COMPONENT (the part of PATH that ends at END) in
 * PARENT with O_PATH|O_DIRECTORY|O_NOFOLLOW failing with ERR. */
static void set_open_error(const char *path, const char *end, int parent, const char *component,
                           int err, GError **error)
{
        g_autofree char *shown = sluice_share_tag_printable(path);
        g_autofree char *prefix = g_strndup(path, (gsize)(end - path));
        g_autofree char *link = sluice_share_tag_printable(prefix);
        struct stat st;

        if ((err == ENOTDIR || err == ELOOP) &&
            fstatat(parent, component, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
                g_autofree char *real = realpath(path, NULL);
                g_autofree char *target = sluice_share_tag_printable(real != NULL ? real : "?");

                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE,
                            _("“%s” is no longer the folder that was shared: “%s” on its path is now a symbolic link (it leads to “%s”). Sluice does not follow links on a shared folder's path and stopped sharing it; remove the share and add the folder you mean"),
                            shown, link, target);
                return;
        }
        switch (err) {
        case ENOENT:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                            _("The folder “%s” does not exist (any more): plug in its drive, or remove the share"),
                            shown);
                break;
        case ENOTDIR:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_A_DIRECTORY,
                            _("“%s” is no longer a folder (“%s” is a file): remove the share and add the folder you mean"),
                            shown, link);
                break;
        case EACCES:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                            _("You cannot reach the folder “%s” (a folder above it is closed to you): fix the permissions or share another folder"),
                            shown);
                break;
        default:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Cannot open the folder “%s”: %s"), shown, g_strerror(err));
                break;
        }
}

int sluice_share_path_open(const char *path, const SluiceFolderId *expected, SluiceFolderId *ret_id,
                           GError **error)
{
        g_autofree char *copy = g_strdup(path);
        g_autofree char *name = sluice_share_tag_printable(path);
        g_autofree char *shown = g_strdup_printf(_("“%s”"), name);
        char *component, *save = NULL;
        struct statfs sfs;
        struct stat st;
        int fd;

        if (!g_path_is_absolute(path)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("%s is not an absolute path: remove the share and add the folder again"),
                            shown);
                return -1;
        }
        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                set_open_error(path, path + 1, AT_FDCWD, "/", errno, error);
                return -1;
        }
        /* One component at a time: O_NOFOLLOW refuses a link at each step,
         * as openat2(RESOLVE_NO_SYMLINKS) would, and works on every kernel. */
        for (component = strtok_r(copy, "/", &save); component != NULL;
             component = strtok_r(NULL, "/", &save)) {
                const char *end = path + (component - copy) + strlen(component);
                int next;

                if (strcmp(component, ".") == 0 || strcmp(component, "..") == 0) {
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("%s is not a real path (it holds “.” or “..”): remove the share and add the folder again"),
                                    shown);
                        (void)close(fd);
                        return -1;
                }
                next = openat(fd, component, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0) {
                        set_open_error(path, end, fd, component, errno, error);
                        (void)close(fd);
                        return -1;
                }
                (void)close(fd);
                fd = next;
        }
        if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0) {
                set_open_error(path, path + strlen(path), fd, ".", errno, error);
                (void)close(fd);
                return -1;
        }
        if (!check_file_system(&sfs, shown, error)) {
                (void)close(fd);
                return -1;
        }
        if (expected != NULL && expected->known &&
            (st.st_dev != expected->dev || st.st_ino != expected->ino)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE,
                            _("%s is no longer the folder that was shared: another folder was put in its place (it was moved or replaced after Sluice checked it). Sluice stopped sharing it; remove the share and add the folder again if this is intended"),
                            shown);
                (void)close(fd);
                return -1;
        }
        if (ret_id != NULL)
                *ret_id = (SluiceFolderId){ .known = TRUE, .dev = st.st_dev, .ino = st.st_ino };
        return fd;
}
