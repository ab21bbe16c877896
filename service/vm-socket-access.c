/* vm-socket-access.c — see vm-socket-access.h.  setfacl (package "acl") does
 * the ACL work: libacl's headers are not a build dependency. */
#include "config.h"

#include "vm-socket-access.h"
#include "errors.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

static char *user_name(uid_t uid)
{
        struct passwd *pw = getpwuid(uid);

        return pw ? g_strdup(pw->pw_name) : g_strdup_printf("%u", (unsigned)uid);
}

/* Whether uid belongs to gid (primary or supplementary group). */
static gboolean user_in_group(uid_t uid, gid_t gid)
{
        struct passwd *pw = getpwuid(uid);
        gid_t groups[256];
        int n = G_N_ELEMENTS(groups);

        if (!pw)
                return FALSE;
        if (pw->pw_gid == gid)
                return TRUE;
        if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
                return FALSE;
        for (int i = 0; i < n; i++)
                if (groups[i] == gid)
                        return TRUE;
        return FALSE;
}

static gboolean can_search(const struct stat *st, uid_t uid)
{
        if (st->st_uid == uid)
                return (st->st_mode & S_IXUSR) != 0;
        if ((st->st_mode & S_IXGRP) && user_in_group(uid, st->st_gid))
                return TRUE;
        return (st->st_mode & S_IXOTH) != 0;
}

static gboolean setfacl(const char *path, uid_t uid, const char *perms, GError **error)
{
        g_autofree char *entry = g_strdup_printf("u:%u:%s", (unsigned)uid, perms);
        g_autofree char *err_out = NULL;
        g_autoptr(GError) spawn_error = NULL;
        const char *argv[] = { "setfacl", "-m", entry, "--", path, NULL };
        int status = 0;

        if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                          NULL, NULL, NULL, &err_out, &status, &spawn_error) ||
            !g_spawn_check_wait_status(status, NULL)) {
                g_autofree char *who = user_name(uid);
                if (!err_out)
                        err_out = g_strdup("");
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                            _("QEMU runs as user “%s” and cannot reach “%s”, and Sluice could not "
                              "grant access with an ACL (%s). Install the “acl” package, use a file "
                              "system with ACL support, or run the VM in qemu:///session."),
                            who, path,
                            spawn_error ? spawn_error->message : g_strstrip(err_out));
                return FALSE;
        }
        return TRUE;
}

gboolean sluice_socket_access_grant(const char *socket_path, uid_t uid, GError **error)
{
        g_autofree char *dir = NULL;
        struct stat st;

        if (uid == geteuid())
                return TRUE;
        if (!setfacl(socket_path, uid, "rw", error))
                return FALSE;

        /* every directory above the socket must be searchable by QEMU's user */
        dir = g_path_get_dirname(socket_path);
        for (;;) {
                g_autofree char *parent = NULL;

                if (stat(dir, &st) < 0) {
                        int err = errno;
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                                    _("Cannot check access to “%s”: %s"), dir, g_strerror(err));
                        return FALSE;
                }
                if (!can_search(&st, uid)) {
                        if (st.st_uid != geteuid()) {
                                g_autofree char *who = user_name(uid);
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                                            _("QEMU runs as user “%s”, which cannot enter “%s”, and that "
                                              "folder belongs to someone else. Give that user search access "
                                              "to it, or run the VM in qemu:///session."),
                                            who, dir);
                                return FALSE;
                        }
                        if (!setfacl(dir, uid, "x", error))
                                return FALSE;
                }
                if (g_str_equal(dir, "/"))
                        break;
                parent = g_path_get_dirname(dir);
                g_free(dir);
                dir = g_steal_pointer(&parent);
        }
        return TRUE;
}
