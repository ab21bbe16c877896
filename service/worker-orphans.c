/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-orphans.c — a killed service's workers on a share's socket
 * (worker-orphans.h has the design). */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>

#include "worker-binary.h"
#include "worker-orphans.h"

/* As long as an orphan may take over SIGTERM before it is killed: the time
 * a supervised worker gets too. */
#define ORPHAN_KILL_TIMEOUT_S 5

struct _SluiceWorkerOrphans {
        char *tag;
        GPtrArray *running;         /* Orphan */
        guint kill_source;
        SluiceWorkerOrphanGoneFunc gone;
        gpointer user_data;
};

/* One sluice-fs a killed service left serving a frontend on our socket. */
typedef struct {
        SluiceWorkerOrphans *set;   /* not a reference: the set removes the watch first */
        GPid pid;
        int pidfd;
        guint watch;
} Orphan;

static void clear_source(guint *source)
{
        if (*source != 0) {
                g_source_remove(*source);
                *source = 0;
        }
}

static void orphan_free(gpointer data)
{
        Orphan *o = data;

        clear_source(&o->watch);
        if (o->pidfd >= 0)
                (void)close(o->pidfd);
        g_free(o);
}

static gboolean same_file(const char *a, const char *b)
{
        struct stat sa, sb;

        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
}

/* Whether /proc/PID is our user's sluice-fs serving socket_path, not our child. */
static gboolean is_orphan(const char *pid, const char *socket_path)
{
        g_autofree char *dir = g_build_filename("/proc", pid, NULL);
        g_autofree char *exe = g_build_filename(dir, "exe", NULL);
        g_autofree char *stat_path = g_build_filename(dir, "stat", NULL);
        g_autofree char *cmdline_path = g_build_filename(dir, "cmdline", NULL);
        g_autofree char *stat_text = NULL;
        g_autofree char *cmdline = NULL;
        g_autofree char *want = g_strdup_printf("--socket-path=%s", socket_path);
        const char *after_comm;
        gsize len = 0;
        struct stat st;
        int ppid = 0;

        if (stat(dir, &st) < 0 || st.st_uid != getuid() ||
            !same_file(exe, sluice_worker_binary()) ||
            !g_file_get_contents(stat_path, &stat_text, NULL, NULL) ||
            !g_file_get_contents(cmdline_path, &cmdline, &len, NULL))
                return FALSE;
        /* "pid (comm) state ppid …": comm may hold anything, so from the last ')' */
        after_comm = strrchr(stat_text, ')');
        if (after_comm == NULL || sscanf(after_comm + 1, " %*c %d", &ppid) != 1 ||
            ppid == getpid())
                return FALSE;
        for (gsize off = 0; off < len; off += strlen(cmdline + off) + 1)
                if (strcmp(cmdline + off, want) == 0)
                        return TRUE;
        return FALSE;
}

static gboolean on_orphan_exited(gint fd, GIOCondition condition, gpointer user_data)
{
        Orphan *o = user_data;
        SluiceWorkerOrphans *set = o->set;

        g_message("sluice-fs (pid %d) of a previous service for %s has exited",
                  (int)o->pid, set->tag);
        o->watch = 0;   /* removed by returning G_SOURCE_REMOVE */
        g_ptr_array_remove(set->running, o);
        if (set->running->len == 0)
                clear_source(&set->kill_source);
        if (set->gone != NULL)
                set->gone(set->user_data);
        return G_SOURCE_REMOVE;
}

SluiceWorkerOrphans *sluice_worker_orphans_find(const char *socket_path, const char *tag,
                                                SluiceWorkerOrphanGoneFunc gone,
                                                gpointer user_data)
{
        SluiceWorkerOrphans *set = g_new0(SluiceWorkerOrphans, 1);
        g_autoptr(GDir) proc = g_dir_open("/proc", 0, NULL);
        const char *name;

        set->tag = g_strdup(tag);
        set->running = g_ptr_array_new_with_free_func(orphan_free);
        set->gone = gone;
        set->user_data = user_data;
        while (proc != NULL && (name = g_dir_read_name(proc)) != NULL) {
                guint64 pid;
                Orphan *o;
                int pidfd;

                if (!g_ascii_string_to_unsigned(name, 10, 1, G_MAXINT, &pid, NULL) ||
                    !is_orphan(name, socket_path))
                        continue;
                pidfd = pidfd_open((pid_t)pid, 0);
                if (pidfd < 0)
                        continue;
                /* the pid may have been reused between the check and the open */
                if (!is_orphan(name, socket_path)) {
                        (void)close(pidfd);
                        continue;
                }
                o = g_new0(Orphan, 1);
                o->set = set;
                o->pid = (GPid)pid;
                o->pidfd = pidfd;
                o->watch = g_unix_fd_add(pidfd, G_IO_IN, on_orphan_exited, o);
                g_ptr_array_add(set->running, o);
                g_message("sluice-fs (pid %d) of a previous service still serves a frontend of %s; "
                          "it keeps serving it until it disconnects, the share's new worker takes the next one",
                          (int)o->pid, set->tag);
        }
        return set;
}

guint sluice_worker_orphans_count(SluiceWorkerOrphans *set)
{
        return set != NULL ? set->running->len : 0;
}

static gboolean on_kill_timeout(gpointer user_data)
{
        SluiceWorkerOrphans *set = user_data;

        set->kill_source = 0;
        for (guint i = 0; i < set->running->len; i++) {
                Orphan *o = g_ptr_array_index(set->running, i);

                g_message("sluice-fs (pid %d) of a previous service ignored SIGTERM for %d s: killing it",
                          (int)o->pid, ORPHAN_KILL_TIMEOUT_S);
                (void)pidfd_send_signal(o->pidfd, SIGKILL, NULL, 0);
        }
        return G_SOURCE_REMOVE;
}

void sluice_worker_orphans_end(SluiceWorkerOrphans *set, const char *why)
{
        if (set == NULL || set->running->len == 0)
                return;
        for (guint i = 0; i < set->running->len; i++) {
                Orphan *o = g_ptr_array_index(set->running, i);

                g_message("Stopping sluice-fs (pid %d) of a previous service for %s: %s",
                          (int)o->pid, set->tag, why);
                (void)pidfd_send_signal(o->pidfd, SIGTERM, NULL, 0);
        }
        if (set->kill_source == 0)
                set->kill_source = g_timeout_add_seconds(ORPHAN_KILL_TIMEOUT_S, on_kill_timeout, set);
}

void sluice_worker_orphans_free(SluiceWorkerOrphans *set)
{
        if (set == NULL)
                return;
        clear_source(&set->kill_source);
        g_ptr_array_unref(set->running);
        g_free(set->tag);
        g_free(set);
}
