/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-worker-handover.c — sluice_worker_restart_async() (worker.h): a
 * restart hands the worker's fd store over to the next process, which
 * serves the very connection its predecessor accepted; the restart
 * completes once the new worker is ready and says it resumed.  A stop
 * closes the store: the frontend sees its connection end.
 *
 * The worker is tests/service/fake-resume-worker.py (the control channel
 * and the store protocol, no FUSE: see there), run as $SLUICE_FS.  Skips
 * (77) when the system python3 has no gi. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "worker.h"

#define DEADLINE_S 30

typedef struct {
        GMainLoop *loop;
        gboolean ready;
        gboolean done;
        gboolean ok;
        char *error;
} Wait;

static gboolean on_deadline(gpointer data)
{
        g_error("nothing happened within %d s", DEADLINE_S);
        return G_SOURCE_REMOVE;
}

/* Runs the main loop until *flag, with a bound. */
static void run_until(gboolean *flag)
{
        guint deadline = g_timeout_add_seconds(DEADLINE_S, on_deadline, NULL);

        while (!*flag)
                g_main_context_iteration(NULL, TRUE);
        g_source_remove(deadline);
}

static void on_ready(SluiceWorker *worker, gboolean restarted, gpointer data)
{
        ((Wait *)data)->ready = TRUE;
}

static void on_restarted(GObject *source, GAsyncResult *result, gpointer data)
{
        Wait *w = data;
        g_autoptr(GError) error = NULL;

        w->ok = sluice_worker_restart_finish(SLUICE_WORKER(source), result, &error);
        w->error = error != NULL ? g_strdup(error->message) : NULL;
        w->done = TRUE;
}

static void on_stopped(GObject *source, GAsyncResult *result, gpointer data)
{
        sluice_worker_stop_finish(SLUICE_WORKER(source), result);
        ((Wait *)data)->done = TRUE;
}

/* A line from the frontend's connection (blocking, bounded); NULL at EOF. */
static char *read_line(int fd)
{
        GString *line = g_string_new(NULL);
        char c;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                g_assert_cmpint(poll(&p, 1, DEADLINE_S * 1000), ==, 1);
                n = read(fd, &c, 1);
                if (n == 0) {
                        g_string_free(line, TRUE);
                        return NULL;
                }
                g_assert_cmpint(n, ==, 1);
                if (c == '\n')
                        return g_string_free(line, FALSE);
                g_string_append_c(line, c);
        }
}

static void test_handover(void)
{
        g_autofree char *tmp = g_dir_make_tmp("sluice-handover-XXXXXX", NULL);
        g_autofree char *folder = g_build_filename(tmp, "share", NULL);
        g_autofree char *sock = g_build_filename(tmp, "1.sock", NULL);
        g_autofree char *resolved = NULL;
        g_autofree char *line = NULL;
        g_autofree char *expected = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(SluiceWorker) worker = NULL;
        SluiceFolderId id;
        SluiceWorkerConfig config = { .tag = "docs", .socket_path = sock, .cache = "auto", .queues = 1 };
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        Wait w = { 0 };
        GPid first, second;
        int frontend;

        g_assert_cmpint(g_mkdir(folder, 0755), ==, 0);
        g_assert_true(sluice_share_path_resolve(folder, &resolved, &id, &error));
        config.shared_dir = resolved;
        worker = sluice_worker_new(&config);
        g_signal_connect(worker, "ready", G_CALLBACK(on_ready), &w);
        sluice_worker_start(worker, &id);
        run_until(&w.ready);
        first = sluice_worker_get_pid(worker);

        frontend = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        g_strlcpy(addr.sun_path, sock, sizeof(addr.sun_path));
        g_assert_cmpint(connect(frontend, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
        line = read_line(frontend);
        expected = g_strdup_printf("hello %d", (int)first);
        g_assert_cmpstr(line, ==, expected);
        /* the worker stored its connection: the store holds it too */
        while (!sluice_worker_fd_store_has(sluice_worker_get_fd_store(worker), "conn"))
                g_main_context_iteration(NULL, TRUE);

        w.ready = FALSE;
        sluice_worker_restart_async(worker, on_restarted, &w);
        run_until(&w.done);
        g_assert_cmpstr(w.error, ==, NULL);
        g_assert_true(w.ok);
        second = sluice_worker_get_pid(worker);
        g_assert_cmpint(second, !=, first);
        g_clear_pointer(&line, g_free);
        g_clear_pointer(&expected, g_free);
        /* the same connection, served by the new process */
        line = read_line(frontend);
        expected = g_strdup_printf("resumed %d", (int)second);
        g_assert_cmpstr(line, ==, expected);
        g_assert_nonnull(sluice_worker_get_resume(worker));

        /* a stop closes the store: the frontend's connection ends */
        w.done = FALSE;
        sluice_worker_stop_async(worker, on_stopped, &w);
        run_until(&w.done);
        g_assert_cmpuint(sluice_worker_fd_store_count(sluice_worker_get_fd_store(worker)), ==, 0);
        g_assert_null(read_line(frontend));
        close(frontend);

        /* nothing runs: a restart says so */
        w.done = FALSE;
        g_clear_pointer(&w.error, g_free);
        sluice_worker_restart_async(worker, on_restarted, &w);
        run_until(&w.done);
        g_assert_false(w.ok);
        g_assert_nonnull(w.error);
        g_free(w.error);
        (void)g_rmdir(folder);
        (void)g_unlink(sock);
        (void)g_rmdir(tmp);
}

int main(int argc, char **argv)
{
        const char *source = g_getenv("SLUICE_SOURCE_ROOT");
        g_autofree char *fake = NULL;

        g_test_init(&argc, &argv, NULL);
        g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR);
        if (source == NULL || system("/usr/bin/python3 -c 'import gi' 2>/dev/null") != 0) {
                g_print("SKIP: no SLUICE_SOURCE_ROOT, or the system python3 has no gi\n");
                return 77;
        }
        fake = g_build_filename(source, "tests", "service", "fake-resume-worker.py", NULL);
        g_setenv("SLUICE_FS", fake, TRUE);
        g_test_add_func("/worker/handover", test_handover);
        return g_test_run();
}
