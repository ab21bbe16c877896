/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-qemu-pid.c — see vm-qemu-pid.h. */
#include "config.h"

#include "vm-qemu-pid.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

/* Where libvirt's system QEMU driver keeps its run-time state (LOCALSTATEDIR/run). */
#define SYSTEM_STATE_DIR "/run/libvirt/qemu"

/* Whether the daemon behind uri is the system one (qemu:///session of root is). */
static gboolean uri_is_system(GUri *uri)
{
        const char *path = g_uri_get_path(uri);

        return g_str_equal(path, "/system") || (g_str_equal(path, "/session") && geteuid() == 0);
}

char *sluice_vm_qemu_pid_path(const char *uri_text, const char *name, GError **error)
{
        g_autoptr(GUri) uri = uri_text ? g_uri_parse(uri_text, G_URI_FLAGS_NONE, NULL) : NULL;
        g_autofree char *file = NULL;
        const char *scheme, *host, *path;

        if (name == NULL || *name == '\0' || strchr(name, '/') || g_str_equal(name, ".") ||
            g_str_equal(name, "..")) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("“%s” cannot be the name of a pid file"), name ? name : "");
                return NULL;
        }
        scheme = uri ? g_uri_get_scheme(uri) : "";
        host = uri ? g_uri_get_host(uri) : NULL;
        path = uri ? g_uri_get_path(uri) : "";
        /* qemu:// or qemu+unix:// on this host; qemu+ssh and the like are elsewhere */
        if (!(g_str_equal(scheme, "qemu") || g_str_equal(scheme, "qemu+unix")) ||
            (host != NULL && *host != '\0') ||
            !(g_str_equal(path, "/system") || g_str_equal(path, "/session"))) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("libvirt does not say where the QEMU of a VM on %s runs"),
                            uri_text ? uri_text : "");
                return NULL;
        }
        file = g_strconcat(name, ".pid", NULL);
        if (uri_is_system(uri))
                return g_build_filename(SYSTEM_STATE_DIR, file, NULL);
        if (g_getenv("XDG_RUNTIME_DIR") && *g_getenv("XDG_RUNTIME_DIR") == '/')
                return g_build_filename(g_getenv("XDG_RUNTIME_DIR"), "libvirt", "qemu", "run", file, NULL);
        return g_build_filename(g_get_home_dir(), ".cache", "libvirt", "qemu", "run", file, NULL);
}

gint64 sluice_vm_qemu_pid_read(const char *path, gint64 qemu_uid, GError **error)
{
        /* root writes the system daemon's files; a session daemon runs as us */
        uid_t owner = g_str_has_prefix(path, SYSTEM_STATE_DIR "/") ? 0 : geteuid();
        uid_t want = qemu_uid >= 0 ? (uid_t)qemu_uid : geteuid();
        g_autofree char *proc = NULL;
        char text[32];
        guint64 pid;
        struct stat st;
        ssize_t n;
        int fd;

        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Cannot read which process is the VM’s QEMU (%s: %s)"), path, g_strerror(e));
                return -1;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != owner) {
                (void)close(fd);
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("%s is not libvirt’s pid file (not a file of user %u)"), path, (unsigned)owner);
                return -1;
        }
        n = read(fd, text, sizeof(text) - 1);
        (void)close(fd);
        text[n > 0 ? n : 0] = '\0';
        g_strstrip(text);
        if (!g_ascii_string_to_unsigned(text, 10, 1, G_MAXINT32, &pid, NULL)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("%s does not hold a process id"), path);
                return -1;
        }
        /* /proc/PID belongs to the process's user */
        proc = g_strdup_printf("/proc/%" G_GUINT64_FORMAT, pid);
        if (stat(proc, &st) < 0 || st.st_uid != want) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Process %u named by %s is gone or does not run as QEMU’s user (%u)"),
                            (unsigned)pid, path, (unsigned)want);
                return -1;
        }
        return (gint64)pid;
}
