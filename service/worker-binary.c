/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-binary.c — finding the sluice-fs to run (worker-binary.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "worker-binary.h"

#ifndef BUILD_TREE_WORKER
/* -Dbuild_tree_worker=false: no build path compiled in, and
 * running_from_build_tree() is always FALSE. */
#define BUILD_TREE_WORKER LIBEXECDIR "/sluice-fs"
#endif

/* Whether this process is the sluice-service of the build tree it was
 * compiled in (BUILD_TREE_SERVICE, an absolute path), compared by device and
 * inode: an installed copy is another file, so it never takes the build tree's
 * worker, and neither does a service whose build tree was replaced since.  A
 * worker there must belong to the owner of the service binary and be writable
 * by nobody else, so no one else can plant one. */
static gboolean running_from_build_tree(void)
{
#ifdef BUILD_TREE_SERVICE
        struct stat self, built, worker;

        if (stat("/proc/self/exe", &self) < 0 || stat(BUILD_TREE_SERVICE, &built) < 0 ||
            self.st_dev != built.st_dev || self.st_ino != built.st_ino)
                return FALSE;
        /* not built (yet): the missing worker is reported as the build tree's */
        if (stat(BUILD_TREE_WORKER, &worker) < 0)
                return errno == ENOENT;
        return S_ISREG(worker.st_mode) && worker.st_uid == built.st_uid &&
               (worker.st_mode & (S_IWGRP | S_IWOTH)) == 0;
#else
        return FALSE;
#endif
}

typedef enum {
        WORKER_FROM_ENVIRONMENT,  /* $SLUICE_FS */
        WORKER_FROM_BUILD_TREE,
        WORKER_INSTALLED,
} WorkerSource;

static const char *worker_binary_source(WorkerSource *ret_source)
{
        static gsize resolved;
        static const char *path;
        static WorkerSource source;
        const char *env = g_getenv("SLUICE_FS");

        if (env != NULL && *env != '\0') {
                *ret_source = WORKER_FROM_ENVIRONMENT;
                return env;
        }
        /* Decided once: whether this is the build tree's binary does not change
         * while it runs (a rebuild replaces the file, not the process). */
        if (g_once_init_enter(&resolved)) {
                gboolean built = running_from_build_tree();

                path = built ? BUILD_TREE_WORKER : LIBEXECDIR "/sluice-fs";
                source = built ? WORKER_FROM_BUILD_TREE : WORKER_INSTALLED;
                g_once_init_leave(&resolved, 1);
        }
        *ret_source = source;
        return path;
}

const char *sluice_worker_binary(void)
{
        WorkerSource source;

        return worker_binary_source(&source);
}

/* Why the worker cannot be run, with the fix: NULL when it can. */
char *sluice_worker_binary_problem(void)
{
        WorkerSource source;
        const char *path = worker_binary_source(&source);

        if (g_access(path, X_OK) == 0)
                return NULL;
        if (source == WORKER_FROM_ENVIRONMENT)
                return g_strdup_printf(
                        _("sluice-fs is not at %s, where SLUICE_FS points (%s): set SLUICE_FS to the sluice-fs you built (BUILD/daemon/sluice-fs), or unset it to use the installed one"),
                        path, g_strerror(errno));
        if (source == WORKER_FROM_BUILD_TREE)
                return g_strdup_printf(
                        _("sluice-fs is not at %s, in this sluice-service's build tree (%s): build it with “meson compile -C BUILD”, or run with SLUICE_FS set to a sluice-fs"),
                        path, g_strerror(errno));
        return g_strdup_printf(
                _("sluice-fs is not installed at %s (%s): install Sluice (“meson install -C BUILD”), run the build tree's programs in “meson devenv -C BUILD”, or set SLUICE_FS to a sluice-fs"),
                path, g_strerror(errno));
}

/* ---- noticing a new sluice-fs on disk ---- */

struct _SluiceWorkerBinaryWatch {
        char *path;             /* resolved */
        GFileMonitor *monitor;
        struct stat seen;       /* the file the running workers were started from */
        gboolean have_seen;
        guint settle_source;
        SluiceWorkerBinaryChanged changed;
        gpointer user_data;
};

static gboolean same_file(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static gboolean on_settled(gpointer user_data)
{
        SluiceWorkerBinaryWatch *watch = user_data;
        struct stat now;

        watch->settle_source = 0;
        /* half way through an upgrade (removed, not yet executable): the
         * step that finishes it is another event */
        if (stat(watch->path, &now) < 0 || !S_ISREG(now.st_mode) || g_access(watch->path, X_OK) < 0)
                return G_SOURCE_REMOVE;
        if (watch->have_seen && same_file(&now, &watch->seen))
                return G_SOURCE_REMOVE;
        watch->seen = now;
        watch->have_seen = TRUE;
        g_message("sluice-fs changed on disk (%s)", watch->path);
        watch->changed(watch->path, watch->user_data);
        return G_SOURCE_REMOVE;
}

static void on_binary_event(GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event,
                            gpointer user_data)
{
        SluiceWorkerBinaryWatch *watch = user_data;

        /* whatever happened, it is judged once the file has been left alone */
        if (watch->settle_source != 0)
                g_source_remove(watch->settle_source);
        watch->settle_source = g_timeout_add(SLUICE_WORKER_BINARY_SETTLE_MS, on_settled, watch);
}

SluiceWorkerBinaryWatch *sluice_worker_binary_watch_new(SluiceWorkerBinaryChanged changed, gpointer user_data)
{
        g_autoptr(SluiceWorkerBinaryWatch) watch = g_new0(SluiceWorkerBinaryWatch, 1);
        g_autofree char *resolved = realpath(sluice_worker_binary(), NULL);
        g_autoptr(GFile) file = NULL;
        g_autoptr(GError) error = NULL;

        watch->changed = changed;
        watch->user_data = user_data;
        watch->path = g_steal_pointer(&resolved);
        if (watch->path == NULL)
                watch->path = g_strdup(sluice_worker_binary());
        watch->have_seen = stat(watch->path, &watch->seen) == 0;
        file = g_file_new_for_path(watch->path);
        /* WATCH_MOVES: an upgrade renames the new file over the old one */
        watch->monitor = g_file_monitor_file(file, G_FILE_MONITOR_WATCH_MOVES, NULL, &error);
        if (watch->monitor == NULL) {
                g_warning("Cannot watch %s for upgrades (%s): restart the shares by hand after one "
                          "(sluicectl restart)", watch->path, error->message);
                return NULL;
        }
        g_signal_connect(watch->monitor, "changed", G_CALLBACK(on_binary_event), watch);
        return g_steal_pointer(&watch);
}

void sluice_worker_binary_watch_free(SluiceWorkerBinaryWatch *watch)
{
        if (watch == NULL)
                return;
        if (watch->settle_source != 0)
                g_source_remove(watch->settle_source);
        if (watch->monitor != NULL) {
                g_signal_handlers_disconnect_by_data(watch->monitor, watch);
                g_file_monitor_cancel(watch->monitor);
                g_object_unref(watch->monitor);
        }
        g_free(watch->path);
        g_free(watch);
}
