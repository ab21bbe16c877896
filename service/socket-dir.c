/* SPDX-License-Identifier: GPL-2.0-or-later */
/* socket-dir.c — see socket-dir.h. */
#include "config.h"

#include "socket-dir.h"
#include "errors.h"

#include <acl/libacl.h>
#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Room for "/<id>.sock" in a socket address. */
#define SOCKET_NAME_ROOM 16

/* A private folder of ours: $dir exists, is a folder (not a link), belongs to
 * us, and is (made) 0700. */
static gboolean private_folder(const char *dir, GError **error)
{
        struct stat st;

        if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("%s is not a folder of yours: remove it and start sluice-service again"),
                            dir);
                return FALSE;
        }
        if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700) < 0) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Cannot make %s private (chmod 0700): %s"), dir, g_strerror(errno));
                return FALSE;
        }
        return TRUE;
}

static gboolean folder_acl_minimal(const char *dir, GError **error)
{
        acl_t acl = acl_from_mode(0700);
        gboolean ok;
        int err;

        ok = acl && acl_set_file(dir, ACL_TYPE_ACCESS, acl) == 0 && acl_delete_def_file(dir) == 0;
        err = errno;
        if (acl)
                acl_free(acl);
        if (!ok && err != ENOTSUP) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Cannot make %s private (its ACL): %s"), dir, g_strerror(err));
                return FALSE;
        }
        return TRUE;
}

/* The folder the link names, if it is still one of ours in /tmp. */
static char *folder_from_link(const char *link)
{
        g_autofree char *prefix = g_strdup_printf("/tmp/sluice-%u-", (unsigned)geteuid());
        g_autofree char *target = g_file_read_link(link, NULL);
        struct stat st;

        if (!target || !g_str_has_prefix(target, prefix) || strchr(target + strlen(prefix), '/') ||
            lstat(target, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                return NULL;
        return g_steal_pointer(&target);
}

/* systemd-tmpfiles ages /tmp (10 days on Fedora) but leaves alone a folder
 * someone holds a BSD lock on: the service holds one while it runs, so a
 * long session's sockets are not cleaned away under its workers.  A
 * (shared) lock is enough: tmpfiles asks for an exclusive one and skips. */
static void hold_against_cleaning(const char *dir)
{
        static int held = -1;
        int fd;

        if (held >= 0)
                return;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return;
        if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
                (void)close(fd);
                return;
        }
        held = fd;
}

char *sluice_socket_dir_prepare(const char *runtime, GError **error)
{
        g_autofree char *own = g_build_filename(runtime, "sluice", NULL);
        g_autofree char *link = g_build_filename(own, "sockets", NULL);
        g_autofree char *link_tmp = NULL;
        g_autofree char *dir = NULL;

        if (g_mkdir(own, 0700) < 0 && errno != EEXIST) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED, _("Cannot create %s: %s"), own,
                            g_strerror(errno));
                return NULL;
        }
        if (!private_folder(own, error))
                return NULL;
        dir = folder_from_link(link);
        if (dir) {
                if (!private_folder(dir, error))
                        return NULL;
                hold_against_cleaning(dir);
                return g_steal_pointer(&dir);
        }

        dir = g_strdup_printf("/tmp/sluice-%u-XXXXXX", (unsigned)geteuid());
        if (!g_mkdtemp_full(dir, 0700)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Cannot create a folder for the shares' sockets in /tmp: %s"),
                            g_strerror(errno));
                return NULL;
        }
        /* Nothing inherited from a default ACL on /tmp: the folder is ours alone
         * until Sluice grants QEMU's user its entry. */
        if (!folder_acl_minimal(dir, error)) {
                (void)g_rmdir(dir);
                return NULL;
        }
        G_STATIC_ASSERT(sizeof("/tmp/sluice-4294967295-XXXXXX") + SOCKET_NAME_ROOM <
                        sizeof(((struct sockaddr_un *)NULL)->sun_path));
        /* the new link replaces the old one in one step */
        link_tmp = g_strdup_printf("%s.new", link);
        (void)g_unlink(link_tmp);
        if (symlink(dir, link_tmp) < 0 || rename(link_tmp, link) < 0) {
                int err = errno;

                (void)g_unlink(link_tmp);
                (void)g_rmdir(dir);
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED, _("Cannot create %s: %s"), link,
                            g_strerror(err));
                return NULL;
        }
        hold_against_cleaning(dir);
        return g_steal_pointer(&dir);
}
