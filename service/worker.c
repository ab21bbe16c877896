/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker.c — spawning, readiness, restart with backoff and stopping of one
 * sluice-fs process (worker.h).  Which program runs is worker-binary.c's
 * answer; the workers a killed service left on the share's socket are
 * worker-orphans.c's (worker-orphans.h: why a worker may outlive a service). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "errors.h"
#include "share-folder-check.h"
#include "worker-binary.h"
#include "worker-control.h"
#include "worker-orphans.h"
#include "worker.h"

/* The stored fds come first, at 3 … 3 + n - 1 (LISTEN_FDS, as systemd
 * passes them); the control channel and the folder (--shared-dir-fd: the
 * one the service opened and checked) follow. */
#define WORKER_FIRST_STORED_FD 3
#define WORKER_STOP_TIMEOUT_S 5
/* Generous: a worker under AddressSanitizer on a busy machine is slow to start. */
#define WORKER_READY_TIMEOUT_S 30
#define WORKER_FAILURE_WINDOW_US (60 * G_USEC_PER_SEC)
#define WORKER_MAX_FAILURES 5
#define WORKER_MAX_BACKOFF_S 30
/* A resumed worker that dies of a fault or an abort before it is ready
 * died taking up what its predecessor left, most likely running again the
 * request that killed it (a poisoned request): the 1st such crash relaunches with --replay=no
 * (what was in flight is answered EIO), the 2nd within the window drops
 * the stored state (the frontend sees the connection end and the share
 * replugs), and WORKER_MAX_FAILURES, which counts them too, gives up in the
 * end.  A resumed worker that was ready and serving when it died is not in
 * a loop: it is resumed again, every time, and counted only in the share's
 * stats (worker-crashes) — the guest never notices, which is the point. */
#define WORKER_QUICK_CRASH_WINDOW_US (30 * G_USEC_PER_SEC)
#define WORKER_QUICK_CRASHES_NO_REPLAY 1
#define WORKER_QUICK_CRASHES_DROP_STATE 2

typedef enum {
        PHASE_IDLE,      /* no process, nothing scheduled */
        PHASE_OPENING,   /* the folder is being opened and checked, in a thread */
        PHASE_STARTING,  /* launched, control channel not answered yet */
        PHASE_READY,
        PHASE_STOPPING,  /* asked to stop, waiting for the exit */
        PHASE_BACKOFF,   /* crashed, restart scheduled */
        PHASE_FAILED,    /* given up */
} WorkerPhase;

struct _SluiceWorker {
        GObject parent_instance;

        SluiceWorkerConfig config;
        SluiceFolderId folder;              /* what every launch must serve (sluice_worker_start) */
        GCancellable *folder_opening;       /* the pending open before a launch, NULL: none */
        WorkerPhase phase;
        GSubprocess *process;
        GCancellable *launch_cancellable;  /* cancels the connect and stderr reads */
        SluiceWorker1 *control;
        gboolean launched_readonly;
        SluiceWireNames names;              /* served: POSIX (until told) or WINDOWS */
        SluiceWireCase case_;               /* served: SENSITIVE (until told) or INSENSITIVE */
        SluiceWireNames worker_names;       /* what the process was launched with or asked to take */
        SluiceWireCase worker_case;
        gboolean ever_ready;                /* since the last sluice_worker_start() */
        gboolean restarting;                /* the current launch follows a crash */
        guint pending_exit_events;          /* process exit + stderr EOF */
        char *launch_error;                 /* why the launch was aborted, if it was */
        char *last_stderr_line;
        GArray *failures;                   /* gint64 monotonic times of crashes */
        guint backoff_source;
        guint kill_source;
        guint ready_timeout_source;
        GList *stop_tasks;
        SluiceWorkerOrphans *orphans;       /* a previous service's workers on our socket */
        gint64 peer_uid;                    /* --allow-peer-uid at the next launch; -1: none */
        SluiceWorkerFdStore *store;         /* kept across launches (worker-fd-store.h) */
        GArray *quick_crashes;              /* gint64 monotonic times, the last 30 s */
        gboolean no_replay;                 /* --replay=no at the next launch */
        gboolean resume_expected;           /* the pending relaunch has a stored state */
        gboolean launched_resuming;         /* the current launch took a stored device up */
        gboolean handing_over;              /* the SIGTERM is a restart's, not a stop's */
        gboolean keeping_store;             /* the SIGTERM is the service's own restart's */
        gint64 died_at;                     /* monotonic time the last process was seen gone */
        gint64 pause_us;                    /* from that to the next ready */
        GList *restart_tasks;
};

G_DEFINE_TYPE(SluiceWorker, sluice_worker, G_TYPE_OBJECT)

enum { SIGNAL_READY, SIGNAL_CRASHED, SIGNAL_FAILED, SIGNAL_PEER_REFUSED, N_SIGNALS };
static guint worker_signals[N_SIGNALS];

static void worker_launch(SluiceWorker *self);
static void complete_restart_tasks(SluiceWorker *self, const char *failure);

static void clear_source(guint *source)
{
        if (*source != 0) {
                g_source_remove(*source);
                *source = 0;
        }
}

static void worker_drop_control(SluiceWorker *self)
{
        if (self->control != NULL) {
                sluice_worker_control_close(self->control);
                g_clear_object(&self->control);
        }
}

static void remove_socket(SluiceWorker *self)
{
        if (g_unlink(self->config.socket_path) < 0 && errno != ENOENT)
                g_warning("Could not remove %s: %s", self->config.socket_path, g_strerror(errno));
}

static char *describe_exit(SluiceWorker *self, GSubprocess *process)
{
        g_autofree char *what = NULL;

        if (self->launch_error != NULL)
                what = g_strdup(self->launch_error);
        else if (g_subprocess_get_if_signaled(process))
                what = g_strdup_printf(_("sluice-fs was killed by signal %d (%s)"),
                                       g_subprocess_get_term_sig(process),
                                       g_strsignal(g_subprocess_get_term_sig(process)));
        else
                what = g_strdup_printf(_("sluice-fs exited with status %d"),
                                       g_subprocess_get_exit_status(process));
        if (self->last_stderr_line != NULL && self->launch_error == NULL)
                return g_strdup_printf("%s: %s", what, self->last_stderr_line);
        return g_steal_pointer(&what);
}

static void complete_stop_tasks(SluiceWorker *self)
{
        GList *tasks = g_steal_pointer(&self->stop_tasks);

        for (GList *l = tasks; l != NULL; l = l->next) {
                g_task_return_boolean(l->data, TRUE);
                g_object_unref(l->data);
        }
        g_list_free(tasks);
}

/* A stop is done once our process is reaped and every orphan is gone. */
static void worker_maybe_complete_stop(SluiceWorker *self)
{
        if (self->phase != PHASE_STOPPING && sluice_worker_orphans_count(self->orphans) == 0)
                complete_stop_tasks(self);
}

static void on_orphan_gone(gpointer user_data)
{
        worker_maybe_complete_stop(user_data);
}

static gboolean on_backoff_elapsed(gpointer user_data)
{
        SluiceWorker *self = user_data;

        self->backoff_source = 0;
        self->restarting = TRUE;
        worker_launch(self);
        return G_SOURCE_REMOVE;
}

/* Everything stored goes: the frontend sees its connection end. */
static void worker_drop_store(SluiceWorker *self)
{
        sluice_worker_fd_store_clear(self->store);
        self->resume_expected = FALSE;
}

/* The stored state, the device and its rings go; the listening socket
 * stays (protocol.md: what a worker does when it cannot trust its state). */
static void worker_drop_stored_state(SluiceWorker *self)
{
        sluice_worker_fd_store_remove_all_but(self->store, "listen");
        self->resume_expected = FALSE;
}

static void worker_give_up(SluiceWorker *self, const char *message)
{
        self->phase = PHASE_FAILED;
        worker_drop_store(self);
        complete_restart_tasks(self, message);
        remove_socket(self);
        g_signal_emit(self, worker_signals[SIGNAL_FAILED], 0, message);
}

/* Whether the store holds a device a relaunch can resume: a state and the
 * connection (without one no frontend was served, nothing waits). */
static gboolean worker_store_resumable(SluiceWorker *self)
{
        return sluice_worker_fd_store_has(self->store, "state") &&
               sluice_worker_fd_store_has(self->store, "conn");
}

/* The crash-loop policy (WORKER_QUICK_CRASH_*), for the relaunch after a
 * crash at NOW (`at_once`: a resumed worker died before it was ready); sets
 * resume_expected. */
static void worker_count_quick_crash(SluiceWorker *self, gint64 now, gboolean at_once)
{
        while (self->quick_crashes->len > 0 &&
               g_array_index(self->quick_crashes, gint64, 0) < now - WORKER_QUICK_CRASH_WINDOW_US)
                g_array_remove_index(self->quick_crashes, 0);
        self->no_replay = FALSE;
        /* a state without a connection: no frontend was served, nothing
         * waits, and a relaunch starts as it would have anyway */
        if (!worker_store_resumable(self)) {
                self->resume_expected = FALSE;
                return;
        }
        self->resume_expected = TRUE;
        /* died serving: resumed as the first time, whatever came before */
        if (!at_once)
                return;
        g_array_append_val(self->quick_crashes, now);
        if (self->quick_crashes->len >= WORKER_QUICK_CRASHES_DROP_STATE) {
                g_message("sluice-fs for %s died %u times within %d s while resuming: its "
                          "stored state is dropped, the share is plugged in again", self->config.tag,
                          self->quick_crashes->len, (int)(WORKER_QUICK_CRASH_WINDOW_US / G_USEC_PER_SEC));
                worker_drop_stored_state(self);
                g_array_set_size(self->quick_crashes, 0);
                return;
        }
        if (self->quick_crashes->len >= WORKER_QUICK_CRASHES_NO_REPLAY) {
                g_message("sluice-fs for %s died while resuming: the requests that were in "
                          "flight are answered EIO instead of run again", self->config.tag);
                self->no_replay = TRUE;
        }
}

/* Both the exit status and the end of stderr are in: decide what comes next. */
static void worker_exited(SluiceWorker *self)
{
        g_autoptr(GSubprocess) process = g_steal_pointer(&self->process);
        g_autofree char *message = describe_exit(self, process);
        WorkerPhase phase = self->phase;
        gint64 now = g_get_monotonic_time();
        gboolean at_once;
        guint delay;

        clear_source(&self->kill_source);
        clear_source(&self->ready_timeout_source);
        worker_drop_control(self);
        g_clear_object(&self->launch_cancellable);
        g_clear_pointer(&self->launch_error, g_free);

        if (phase == PHASE_STOPPING && self->keeping_store) {
                /* the service restarts: it passes the store on, the socket
                 * file stays for the next service's worker */
                self->keeping_store = FALSE;
                self->phase = PHASE_IDLE;
                worker_maybe_complete_stop(self);
                return;
        }
        if (phase == PHASE_STOPPING && self->handing_over) {
                /* a restart: the next worker takes the store over at once */
                self->handing_over = FALSE;
                self->resume_expected = sluice_worker_fd_store_has(self->store, "state");
                self->restarting = TRUE;
                worker_launch(self);
                return;
        }
        if (phase == PHASE_STOPPING) {
                /* a stop closes the store: QEMU sees the connection end, as before */
                self->phase = PHASE_IDLE;
                worker_drop_store(self);
                remove_socket(self);
                worker_maybe_complete_stop(self);
                return;
        }

        g_message("%s (share %s)", message, self->config.tag);
        if (!self->ever_ready) {
                /* It never came up since Start: a restart would fail the same way. */
                g_autofree char *failed = g_strdup_printf(
                        _("%s before it was ready: check the folder and the service's log, then start the share again"),
                        message);
                worker_give_up(self, failed);
                return;
        }

        /* A resumed worker is ready once it has answered what was in flight.
         * A SIGKILL comes from outside (a person, the OOM killer, a test's
         * random kills, which may land in the few milliseconds of a
         * resume); what a request does to a worker is a fault or an abort. */
        at_once = self->launched_resuming && phase == PHASE_STARTING &&
                  !(g_subprocess_get_if_signaled(process) &&
                    g_subprocess_get_term_sig(process) == SIGKILL);
        /* A ready worker resumed after it died is no failure the share sees
         * (WORKER_QUICK_CRASH_*): only the others count towards giving up. */
        if (at_once || !worker_store_resumable(self)) {
                g_array_append_val(self->failures, now);
                while (self->failures->len > 0 &&
                       g_array_index(self->failures, gint64, 0) < now - WORKER_FAILURE_WINDOW_US)
                        g_array_remove_index(self->failures, 0);
        }
        if (self->failures->len >= WORKER_MAX_FAILURES) {
                g_autofree char *failed = g_strdup_printf(
                        _("sluice-fs failed %u times within a minute (last: %s): fix the cause, then start the share again"),
                        self->failures->len, message);
                worker_give_up(self, failed);
                return;
        }

        worker_count_quick_crash(self, now, at_once);
        self->phase = PHASE_BACKOFF;
        if (self->resume_expected) {
                /* the frontend waits on the stored connection: no backoff */
                self->backoff_source = g_idle_add(on_backoff_elapsed, self);
        } else {
                delay = MIN(1u << (MAX(self->failures->len, 1u) - 1), WORKER_MAX_BACKOFF_S);
                self->backoff_source = g_timeout_add_seconds(delay, on_backoff_elapsed, self);
        }
        g_signal_emit(self, worker_signals[SIGNAL_CRASHED], 0, message);
}

static void exit_event_done(SluiceWorker *self)
{
        g_assert(self->pending_exit_events > 0);
        if (--self->pending_exit_events == 0)
                worker_exited(self);
}

static void on_process_exited(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceWorker) self = user_data;

        (void)g_subprocess_wait_finish(G_SUBPROCESS(source), result, NULL);
        self->died_at = g_get_monotonic_time();
        /* what it stored before it died counts; nothing after it does */
        sluice_worker_fd_store_drain(self->store);
        sluice_worker_fd_store_set_sender(self->store, 0);
        /* Anything still in flight for this launch is moot now. */
        if (self->launch_cancellable != NULL)
                g_cancellable_cancel(self->launch_cancellable);
        exit_event_done(self);
}

static void on_stderr_line(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceWorker) self = user_data;
        GDataInputStream *input = G_DATA_INPUT_STREAM(source);
        g_autofree char *line = g_data_input_stream_read_line_finish_utf8(input, result, NULL, NULL);

        if (line == NULL) {
                /* EOF, an error or a line that is not UTF-8: stop forwarding. */
                exit_event_done(self);
                return;
        }
        g_printerr("sluice-fs[%s]: %s\n", self->config.tag, line);
        /* Keep the last complaint for the share's Error; progress lines say nothing
         * about why a worker died. */
        if (*line != '\0' && strstr(line, " info: ") == NULL && strstr(line, " debug: ") == NULL) {
                g_free(self->last_stderr_line);
                self->last_stderr_line = g_steal_pointer(&line);
        }
        /* Not cancellable: reading to EOF is how the exit is detected in order. */
        g_data_input_stream_read_line_async(input, G_PRIORITY_DEFAULT, NULL, on_stderr_line,
                                            g_steal_pointer(&self));
}

static void worker_abort_launch(SluiceWorker *self, const char *why)
{
        if (self->launch_error == NULL)
                self->launch_error = g_strdup(why);
        if (self->process != NULL)
                g_subprocess_force_exit(self->process);
}

static gboolean on_ready_timeout(gpointer user_data)
{
        SluiceWorker *self = user_data;
        g_autofree char *why = g_strdup_printf(
                _("sluice-fs did not become ready within %d seconds"), WORKER_READY_TIMEOUT_S);

        self->ready_timeout_source = 0;
        worker_abort_launch(self, why);
        return G_SOURCE_REMOVE;
}

typedef struct {
        SluiceWorker *worker;
        SluiceWireNames names;
        SluiceWireCase case_;
} NamesRequest;

static void on_names_set(GObject *source, GAsyncResult *result, gpointer user_data)
{
        NamesRequest *r = user_data;
        g_autoptr(GError) error = NULL;

        /* not asked again: the next launch has them on its command line */
        if (!sluice_worker_control_set_names_finish(SLUICE_WORKER1(source), result, &error))
                g_warning("%s: names %s, case %s: %s", r->worker->config.tag, sluice_wire_names_name(r->names),
                          sluice_wire_case_name(r->case_), error->message);
        g_object_unref(r->worker);
        g_free(r);
}

/* Tells a ready worker the served names and case when it has others. */
static void send_names(SluiceWorker *self)
{
        NamesRequest *r;

        if (self->phase != PHASE_READY || self->control == NULL)
                return;
        if (self->worker_names == self->names && self->worker_case == self->case_)
                return;
        /* counted as the worker's from the asking on: one call per change */
        self->worker_names = self->names;
        self->worker_case = self->case_;
        r = g_new0(NamesRequest, 1);
        r->worker = g_object_ref(self);
        r->names = self->names;
        r->case_ = self->case_;
        sluice_worker_control_set_names_async(self->control, sluice_wire_names_name(self->names),
                                              sluice_wire_case_name(self->case_), on_names_set, r);
}

void sluice_worker_set_names(SluiceWorker *self, SluiceWireNames names, SluiceWireCase case_)
{
        g_return_if_fail(SLUICE_IS_WORKER(self));
        /* DEFAULT is a setting's word, never a served one: the host's way */
        self->names = names == SLUICE_WIRE_NAMES_WINDOWS ? names : SLUICE_WIRE_NAMES_POSIX;
        self->case_ = case_ == SLUICE_WIRE_CASE_INSENSITIVE ? case_ : SLUICE_WIRE_CASE_SENSITIVE;
        send_names(self);
}

static void on_late_readonly_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GError) error = NULL;

        if (!sluice_worker_set_readonly_finish(SLUICE_WORKER(source), result, &error))
                g_warning("%s", error->message);
}

static void on_peer_refused(SluiceWorker1 *control, guint pid, guint uid, const char *reason,
                            gpointer user_data)
{
        g_signal_emit(user_data, worker_signals[SIGNAL_PEER_REFUSED], 0, pid, uid, reason);
}

static gboolean resume_flag(GVariant *resume, const char *key)
{
        gboolean value = FALSE;

        return resume != NULL && g_variant_lookup(resume, key, "b", &value) && value;
}

static void worker_log_resume(SluiceWorker *self)
{
        GVariant *resume = sluice_worker1_get_resume(self->control);
        const char *why = NULL;
        guint32 replayed = 0, failed = 0;

        if (resume == NULL || g_variant_n_children(resume) == 0)
                return;
        (void)g_variant_lookup(resume, "why-not", "&s", &why);
        (void)g_variant_lookup(resume, "replayed", "u", &replayed);
        (void)g_variant_lookup(resume, "failed", "u", &failed);
        if (resume_flag(resume, "resumed") && self->pause_us > 0)
                g_message("sluice-fs for %s resumed in %" G_GINT64_FORMAT " ms: %u requests run again, "
                          "%u answered EIO", self->config.tag, self->pause_us / 1000, replayed, failed);
        else if (resume_flag(resume, "resumed"))
                /* its predecessor ran under the previous service: no death seen here to time from */
                g_message("sluice-fs for %s resumed what the previous service's worker served: "
                          "%u requests run again, %u answered EIO", self->config.tag, replayed, failed);
        else
                g_message("sluice-fs for %s did not resume: %s", self->config.tag,
                          why != NULL ? why : "no reason given");
}

static void on_control_connected(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceWorker) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autoptr(SluiceWorker1) control = sluice_worker_control_connect_finish(result, &error);
        gboolean restarted;

        if (control == NULL) {
                if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                        return;
                g_autofree char *why = g_strdup_printf(
                        _("sluice-fs did not answer on its control channel (%s)"), error->message);
                worker_abort_launch(self, why);
                return;
        }
        if (self->phase != PHASE_STARTING) {
                sluice_worker_control_close(control);
                return;
        }
        clear_source(&self->ready_timeout_source);
        g_signal_connect_object(control, "peer-refused", G_CALLBACK(on_peer_refused), self, 0);
        self->control = g_steal_pointer(&control);
        self->phase = PHASE_READY;
        restarted = self->restarting;
        self->pause_us = restarted && self->died_at > 0 ? g_get_monotonic_time() - self->died_at : 0;
        worker_log_resume(self);
        self->ever_ready = TRUE;
        self->restarting = FALSE;

        /* Read-only was toggled while the worker was starting. */
        if (self->launched_readonly != self->config.readonly)
                sluice_worker_set_readonly_async(self, self->config.readonly, on_late_readonly_done, NULL);
        /* … and the names likewise (the guest's OS became known meanwhile) */
        send_names(self);
        g_signal_emit(self, worker_signals[SIGNAL_READY], 0, restarted);
        self->resume_expected = FALSE;
        complete_restart_tasks(self, NULL);
}

/* What the child needs to exec with its own pid in LISTEN_PID. */
typedef struct {
        char *path;             /* the program, absolute */
        char **argv;
        char **envp;            /* owns the "LISTEN_PID=…" entry below */
        char *listen_pid;       /* points into envp: room for the digits */
} ChildExec;

#define LISTEN_PID_DIGITS 20

static void child_exec_free(ChildExec *c)
{
        g_free(c->path);
        g_strfreev(c->argv);
        g_strfreev(c->envp);
        g_free(c);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ChildExec, child_exec_free)

/* Runs in the child between fork and exec, after GLib has put the fds in
 * place: LISTEN_PID must be the worker's own pid, which exists only after
 * the fork, and GSubprocessLauncher hands the exec an environment it built
 * before it.  So the environment is prepared in the parent with room for
 * the digits, filled in here (plain stores: nothing here may allocate or
 * take a lock after a fork), and the child execs itself; on failure it says
 * so on stderr (the service forwards it) and exits 127. */
static void child_exec_with_pid(gpointer user_data)
{
        ChildExec *c = user_data;
        char digits[LISTEN_PID_DIGITS];
        unsigned long pid = (unsigned long)getpid();
        size_t n = 0;
        static const char failed[] = "sluice-fs: could not be executed by the service\n";

        do {
                digits[n++] = (char)('0' + pid % 10);
                pid /= 10;
        } while (pid > 0 && n < sizeof(digits));
        for (size_t i = 0; i < n; i++)
                c->listen_pid[i] = digits[n - 1 - i];
        c->listen_pid[n] = '\0';
        execve(c->path, c->argv, c->envp);
        (void)!write(STDERR_FILENO, failed, sizeof(failed) - 1);
        _exit(127);
}

typedef struct {
        GSubprocessLauncher *launcher;
        GString *names;
        int next_fd;
} PlaceStored;

static void place_stored_fd(const char *name, int fd, gpointer data)
{
        PlaceStored *p = data;
        /* GLib takes the copy; the store keeps its own */
        int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);

        if (copy < 0) {
                /* keeps the numbering (LISTEN_FDNAMES must match): /dev/null stands in */
                copy = open("/dev/null", O_RDONLY | O_CLOEXEC);
                g_warning("Could not pass the stored fd \"%s\" on: %s", name, g_strerror(errno));
        }
        g_subprocess_launcher_take_fd(p->launcher, copy, p->next_fd++);
        if (p->names->len > 0)
                g_string_append_c(p->names, ':');
        g_string_append(p->names, name);
}

static char **worker_environment(SluiceWorker *self, guint n_stored, const char *names)
{
        char **envp = g_get_environ();

        /* the service's own (from systemd) are not the worker's */
        envp = g_environ_unsetenv(envp, "LISTEN_FDS");
        envp = g_environ_unsetenv(envp, "LISTEN_FDNAMES");
        envp = g_environ_unsetenv(envp, "LISTEN_PID");
        envp = g_environ_unsetenv(envp, "NOTIFY_SOCKET");
        if (sluice_worker_fd_store_get_notify_socket(self->store) != NULL)
                envp = g_environ_setenv(envp, "NOTIFY_SOCKET",
                                        sluice_worker_fd_store_get_notify_socket(self->store), TRUE);
        if (n_stored > 0) {
                g_autofree char *count = g_strdup_printf("%u", n_stored);

                envp = g_environ_setenv(envp, "LISTEN_FDS", count, TRUE);
                envp = g_environ_setenv(envp, "LISTEN_FDNAMES", names, TRUE);
        }
        return envp;
}

static void worker_spawn(SluiceWorker *self, int folder_fd)
{
        g_autoptr(GSubprocessLauncher) launcher = NULL;
        g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GDataInputStream) err_stream = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *missing = NULL;
        int fds[2];

        g_autoptr(GError) store_error = NULL;
        g_autoptr(ChildExec) child = NULL;
        g_autoptr(GString) names = g_string_new(NULL);
        g_auto(GStrv) envp = NULL;
        guint n_stored;
        int control_fd, folder_target;

        g_assert(self->process == NULL);
        self->launched_resuming = self->resume_expected && worker_store_resumable(self);
        /* a stale socket from a crashed worker; a stored listening socket is
         * served as it is, its file stays */
        if (!sluice_worker_fd_store_has(self->store, "listen"))
                remove_socket(self);
        if (!sluice_worker_fd_store_listen(self->store, &store_error))
                g_warning("sluice-fs for %s runs without a store: it cannot resume after a crash (%s)",
                          self->config.tag, store_error->message);
        n_stored = sluice_worker_fd_store_count(self->store);
        control_fd = WORKER_FIRST_STORED_FD + (int)n_stored;
        folder_target = control_fd + 1;
        g_clear_pointer(&self->last_stderr_line, g_free);
        g_clear_pointer(&self->launch_error, g_free);

        /* A missing binary would fail every launch the same way: give up at
         * once (no restarts), saying where it looked and what to do. */
        missing = sluice_worker_binary_problem();
        if (missing != NULL) {
                (void)close(folder_fd);
                worker_give_up(self, missing);
                return;
        }

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) {
                g_autofree char *message = g_strdup_printf(
                        _("Could not create the control channel for sluice-fs: %s"),
                        g_strerror(errno));
                (void)close(folder_fd);
                worker_give_up(self, message);
                return;
        }

        g_ptr_array_add(argv, g_strdup(sluice_worker_binary()));
        g_ptr_array_add(argv, g_strdup_printf("--socket-path=%s", self->config.socket_path));
        /* The folder opened and checked (worker_launch), never its path: the
         * path may lead elsewhere by now (share-path.h). */
        g_ptr_array_add(argv, g_strdup_printf("--shared-dir-fd=%d", folder_target));
        /* No --tag: the guest sees the tag of the hot-plugged device (libvirt's
         * <target dir>), and a worker offering its own config space makes
         * QEMU's vhost-user-fs-pci warn on every start. */
        if (self->config.readonly)
                g_ptr_array_add(argv, g_strdup("--readonly"));
        g_ptr_array_add(argv, g_strdup_printf("--cache=%s", self->config.cache));
        g_ptr_array_add(argv, g_strdup_printf("--queues=%u", self->config.queues));
        /* the defaults are not written out: a sluice-fs without these
         * options still serves a Linux guest */
        if (self->names != SLUICE_WIRE_NAMES_POSIX)
                g_ptr_array_add(argv, g_strdup_printf("--names=%s", sluice_wire_names_name(self->names)));
        if (self->case_ != SLUICE_WIRE_CASE_SENSITIVE)
                g_ptr_array_add(argv, g_strdup_printf("--case=%s", sluice_wire_case_name(self->case_)));
        g_ptr_array_add(argv, g_strdup_printf("--control-fd=%d", control_fd));
        /* keeps its fds in our store (worker-fd-store.h) and takes them up */
        g_ptr_array_add(argv, g_strdup("--resume"));
        if (self->no_replay)
                g_ptr_array_add(argv, g_strdup("--replay=no"));
        if (self->peer_uid >= 0)
                g_ptr_array_add(argv, g_strdup_printf("--allow-peer-uid=%" G_GINT64_FORMAT, self->peer_uid));
        g_ptr_array_add(argv, NULL);

        /* GLib closes every other descriptor in the child; only the control
         * end is passed on (as fd 3). */
        launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
        /* No PR_SET_PDEATHSIG: a worker serving a guest outlives a killed
         * service (worker-orphans.h); the closed control channel ends an idle one. */
        {
                PlaceStored place = { .launcher = launcher, .names = names,
                                      .next_fd = WORKER_FIRST_STORED_FD };

                sluice_worker_fd_store_foreach(self->store, place_stored_fd, &place);
        }
        g_subprocess_launcher_take_fd(launcher, fds[1], control_fd);
        g_subprocess_launcher_take_fd(launcher, folder_fd, folder_target);
        envp = worker_environment(self, n_stored, names->str);
        if (n_stored > 0) {
                g_autofree char *entry = g_strnfill(strlen("LISTEN_PID=") + LISTEN_PID_DIGITS, '0');
                guint len = g_strv_length(envp);

                memcpy(entry, "LISTEN_PID=", strlen("LISTEN_PID="));
                child = g_new0(ChildExec, 1);
                child->path = g_path_is_absolute(sluice_worker_binary())
                        ? g_strdup(sluice_worker_binary())
                        : g_find_program_in_path(sluice_worker_binary());
                if (child->path == NULL)
                        child->path = g_strdup(sluice_worker_binary());
                child->argv = g_strdupv((char **)argv->pdata);
                envp = g_renew(char *, envp, len + 2);
                envp[len] = g_steal_pointer(&entry);
                envp[len + 1] = NULL;
                child->listen_pid = envp[len] + strlen("LISTEN_PID=");
                child->envp = g_steal_pointer(&envp);
                g_subprocess_launcher_set_child_setup(launcher, child_exec_with_pid, child, NULL);
        } else {
                g_subprocess_launcher_set_environ(launcher, envp);
        }
        self->process = g_subprocess_launcher_spawnv(launcher,
                                                     (const char *const *)argv->pdata, &error);
        if (self->process == NULL) {
                g_autofree char *message = g_strdup_printf(_("Could not run %s: %s"),
                                                           sluice_worker_binary(), error->message);
                (void)close(fds[0]);
                worker_give_up(self, message);
                return;
        }
        g_debug("Started sluice-fs for %s (pid %s, %u stored fds)", self->config.tag,
                g_subprocess_get_identifier(self->process), n_stored);
        sluice_worker_fd_store_set_sender(self->store, sluice_worker_get_pid(self));

        self->phase = PHASE_STARTING;
        self->launched_readonly = self->config.readonly;
        self->worker_names = self->names;
        self->worker_case = self->case_;
        self->launch_cancellable = g_cancellable_new();
        self->pending_exit_events = 2;
        g_subprocess_wait_async(self->process, NULL, on_process_exited, g_object_ref(self));
        err_stream = g_data_input_stream_new(g_subprocess_get_stderr_pipe(self->process));
        g_data_input_stream_read_line_async(err_stream, G_PRIORITY_DEFAULT, NULL, on_stderr_line,
                                            g_object_ref(self));
        sluice_worker_control_connect_async(fds[0], self->launch_cancellable, on_control_connected,
                                            g_object_ref(self));
        self->ready_timeout_source = g_timeout_add_seconds(WORKER_READY_TIMEOUT_S,
                                                           on_ready_timeout, self);
}

static void on_folder_opened(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceWorker) self = user_data;
        g_autoptr(GError) error = NULL;
        int fd = sluice_share_folder_check_finish(result, NULL, &error);

        /* cancelled: stopped (and maybe started again) meanwhile, not this launch's folder */
        if (fd < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return;
        g_clear_object(&self->folder_opening);
        if (fd < 0) {
                /* a link or another folder at its path: a restart cannot mend that */
                worker_give_up(self, error->message);
                return;
        }
        worker_spawn(self, fd);
}

/* Every launch, a restart too, opens the folder again and checks it is the
 * one the share checked: nothing resolves the path between that and serving. */
static void worker_launch(SluiceWorker *self)
{
        self->phase = PHASE_OPENING;
        g_clear_object(&self->folder_opening);
        self->folder_opening = g_cancellable_new();
        sluice_share_folder_check_async(self->config.shared_dir, &self->folder, self->folder_opening,
                                        on_folder_opened, g_object_ref(self));
}

void sluice_worker_start(SluiceWorker *self, const SluiceFolderId *folder)
{
        g_return_if_fail(SLUICE_IS_WORKER(self));

        self->folder = *folder;
        switch (self->phase) {
        case PHASE_OPENING:
        case PHASE_STARTING:
        case PHASE_READY:
                return;
        case PHASE_STOPPING:
                /* Not reachable through the share's state machine: it waits for stops. */
                g_warning("sluice-fs for %s is still stopping", self->config.tag);
                return;
        case PHASE_BACKOFF:
                clear_source(&self->backoff_source);
                break;
        case PHASE_IDLE:
        case PHASE_FAILED:
                break;
        }
        self->ever_ready = FALSE;
        self->restarting = FALSE;
        g_array_set_size(self->failures, 0);
        g_array_set_size(self->quick_crashes, 0);
        self->no_replay = FALSE;
        worker_launch(self);
}

static gboolean on_stop_timeout(gpointer user_data)
{
        SluiceWorker *self = user_data;

        self->kill_source = 0;
        if (self->process != NULL) {
                g_message("sluice-fs for %s ignored SIGTERM for %d s: killing it",
                          self->config.tag, WORKER_STOP_TIMEOUT_S);
                g_subprocess_force_exit(self->process);
        }
        return G_SOURCE_REMOVE;
}

void sluice_worker_stop_async(SluiceWorker *self, GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);

        g_task_set_source_tag(task, sluice_worker_stop_async);
        sluice_worker_orphans_end(self->orphans, "the share is stopping");
        switch (self->phase) {
        case PHASE_OPENING:
                /* nothing runs yet: the pending open's answer is dropped */
                g_cancellable_cancel(self->folder_opening);
                g_clear_object(&self->folder_opening);
                G_GNUC_FALLTHROUGH;
        case PHASE_BACKOFF:
                clear_source(&self->backoff_source);
                self->phase = PHASE_IDLE;
                remove_socket(self);
                G_GNUC_FALLTHROUGH;
        case PHASE_IDLE:
        case PHASE_FAILED:
                /* a stop closes the store: the frontend sees the connection end */
                worker_drop_store(self);
                complete_restart_tasks(self, _("the share was stopped"));
                if (sluice_worker_orphans_count(self->orphans) == 0) {
                        g_task_return_boolean(task, TRUE);
                        return;
                }
                self->stop_tasks = g_list_append(self->stop_tasks, g_steal_pointer(&task));
                return;
        case PHASE_STARTING:
        case PHASE_READY:
                self->phase = PHASE_STOPPING;
                self->handing_over = FALSE;
                self->keeping_store = FALSE;
                clear_source(&self->ready_timeout_source);
                g_cancellable_cancel(self->launch_cancellable);
                /* Closing the channel alone makes a healthy worker exit; SIGTERM
                 * covers one that is busy, SIGKILL one that hangs. */
                worker_drop_control(self);
                g_subprocess_send_signal(self->process, SIGTERM);
                self->kill_source = g_timeout_add_seconds(WORKER_STOP_TIMEOUT_S,
                                                          on_stop_timeout, self);
                G_GNUC_FALLTHROUGH;
        case PHASE_STOPPING:
                /* a hand-over turns into a stop: nothing is relaunched, the
                 * store is closed */
                self->keeping_store = FALSE;
                if (self->handing_over) {
                        self->handing_over = FALSE;
                        complete_restart_tasks(self, _("the share was stopped"));
                }
                self->stop_tasks = g_list_append(self->stop_tasks, g_steal_pointer(&task));
                return;
        }
}

void sluice_worker_stop_finish(SluiceWorker *self, GAsyncResult *result)
{
        (void)g_task_propagate_boolean(G_TASK(result), NULL);
}

void sluice_worker_hand_over_async(SluiceWorker *self, GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = NULL;

        if (self->phase != PHASE_READY) {
                sluice_worker_stop_async(self, callback, user_data);
                return;
        }
        task = g_task_new(self, NULL, callback, user_data);
        sluice_worker_orphans_end(self->orphans, "the service is restarting");
        /* SIGTERM with --resume is a hand-over (protocol "Stopping"); no
         * relaunch follows, worker_exited() keeps the store */
        self->phase = PHASE_STOPPING;
        self->keeping_store = TRUE;
        clear_source(&self->ready_timeout_source);
        g_cancellable_cancel(self->launch_cancellable);
        worker_drop_control(self);
        g_subprocess_send_signal(self->process, SIGTERM);
        self->kill_source = g_timeout_add_seconds(WORKER_STOP_TIMEOUT_S, on_stop_timeout, self);
        self->stop_tasks = g_list_append(self->stop_tasks, g_steal_pointer(&task));
}

gboolean sluice_worker_is_ready(SluiceWorker *self)
{
        return self->phase == PHASE_READY;
}

SluiceWorker1 *sluice_worker_get_control(SluiceWorker *self)
{
        return self->phase == PHASE_READY ? self->control : NULL;
}

GPid sluice_worker_get_pid(SluiceWorker *self)
{
        const char *id = self->process != NULL ? g_subprocess_get_identifier(self->process) : NULL;

        return id != NULL ? (GPid)g_ascii_strtoll(id, NULL, 10) : 0;
}

typedef struct {
        SluiceWorker1 *control; /* the channel the request went on */
        gboolean readonly;
        gboolean resync;        /* it repeats the mode after a failed switch */
} ReadonlyRequest;

static void send_readonly(SluiceWorker *self, gboolean readonly, gboolean resync,
                          GAsyncReadyCallback callback, gpointer user_data);

static void readonly_request_free(gpointer data)
{
        ReadonlyRequest *r = data;

        g_clear_object(&r->control);
        g_free(r);
}

static void on_readonly_switched(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) task = user_data;
        SluiceWorker *self = g_task_get_source_object(task);
        ReadonlyRequest *r = g_task_get_task_data(task);
        GError *error = NULL;

        if (!sluice_worker_control_set_readonly_finish(SLUICE_WORKER1(source), result, &error)) {
                /* refused: later launches keep the mode the worker has */
                if (self->config.readonly == r->readonly)
                        self->config.readonly = self->launched_readonly;
                /* a request that timed out may still be carried out when the
                 * worker wakes up: the mode the service reports follows it */
                if (!r->resync && self->phase == PHASE_READY && self->control == r->control)
                        send_readonly(self, self->config.readonly, TRUE, on_late_readonly_done, NULL);
                g_task_return_error(task, error);
                return;
        }
        /* still the same process: that is the mode it runs in now */
        if (self->control == r->control)
                self->launched_readonly = r->readonly;
        g_task_return_boolean(task, TRUE);
}

static void send_readonly(SluiceWorker *self, gboolean readonly, gboolean resync,
                          GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);
        ReadonlyRequest *r;

        g_task_set_source_tag(task, sluice_worker_set_readonly_async);
        if (readonly)
                sluice_worker_orphans_end(self->orphans, "the share was made read-only, which it cannot switch to");
        self->config.readonly = readonly;
        if (self->phase != PHASE_READY) {
                g_task_return_boolean(task, TRUE); /* applied when it is ready or at the next launch */
                return;
        }
        r = g_new0(ReadonlyRequest, 1);
        r->control = g_object_ref(self->control);
        r->readonly = readonly;
        r->resync = resync;
        g_task_set_task_data(task, r, readonly_request_free);
        sluice_worker_control_set_readonly_async(self->control, readonly, on_readonly_switched,
                                                 g_steal_pointer(&task));
}

void sluice_worker_set_readonly_async(SluiceWorker *self, gboolean readonly,
                                      GAsyncReadyCallback callback, gpointer user_data)
{
        send_readonly(self, readonly, FALSE, callback, user_data);
}

gboolean sluice_worker_set_readonly_finish(SluiceWorker *self, GAsyncResult *result, GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
        return g_task_propagate_boolean(G_TASK(result), error);
}

void sluice_worker_set_peer_uid(SluiceWorker *self, gint64 uid)
{
        self->peer_uid = uid;
}

SluiceWorker *sluice_worker_new(const SluiceWorkerConfig *config)
{
        SluiceWorker *self = g_object_new(SLUICE_TYPE_WORKER, NULL);

        self->config.shared_dir = g_strdup(config->shared_dir);
        self->config.tag = g_strdup(config->tag);
        self->config.socket_path = g_strdup(config->socket_path);
        self->config.cache = g_strdup(config->cache != NULL ? config->cache : "auto");
        self->config.readonly = config->readonly;
        self->config.queues = config->queues > 0 ? config->queues : 1;
        self->names = SLUICE_WIRE_NAMES_POSIX;
        self->case_ = SLUICE_WIRE_CASE_SENSITIVE;
        self->peer_uid = -1;
        self->store = sluice_worker_fd_store_new(self->config.tag);
        self->orphans = sluice_worker_orphans_find(self->config.socket_path, self->config.tag,
                                                   on_orphan_gone, self);
        return self;
}

static void sluice_worker_dispose(GObject *object)
{
        SluiceWorker *self = SLUICE_WORKER(object);

        /* Callbacks hold references while a process runs, so this only runs
         * once it is reaped; the sources may still be pending. */
        clear_source(&self->backoff_source);
        clear_source(&self->kill_source);
        clear_source(&self->ready_timeout_source);
        /* the share is gone: nothing may serve it any more (SIGTERM; no one is
         * left to follow up with SIGKILL) */
        sluice_worker_orphans_end(self->orphans, "the share was removed");
        g_clear_pointer(&self->orphans, sluice_worker_orphans_free);
        worker_drop_control(self);
        g_clear_object(&self->folder_opening);
        complete_restart_tasks(self, _("the share was removed"));
        /* closes every stored fd: nothing serves the frontend any more */
        g_clear_pointer(&self->store, sluice_worker_fd_store_free);
        G_OBJECT_CLASS(sluice_worker_parent_class)->dispose(object);
}

static void sluice_worker_finalize(GObject *object)
{
        SluiceWorker *self = SLUICE_WORKER(object);

        g_free(self->config.shared_dir);
        g_free(self->config.tag);
        g_free(self->config.socket_path);
        g_free(self->config.cache);
        g_free(self->launch_error);
        g_free(self->last_stderr_line);
        g_array_unref(self->failures);
        g_array_unref(self->quick_crashes);
        g_clear_object(&self->launch_cancellable);
        G_OBJECT_CLASS(sluice_worker_parent_class)->finalize(object);
}

static void sluice_worker_class_init(SluiceWorkerClass *klass)
{
        GObjectClass *object_class = G_OBJECT_CLASS(klass);

        object_class->dispose = sluice_worker_dispose;
        object_class->finalize = sluice_worker_finalize;

        worker_signals[SIGNAL_READY] = g_signal_new("ready", G_TYPE_FROM_CLASS(klass),
                G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
        worker_signals[SIGNAL_CRASHED] = g_signal_new("crashed", G_TYPE_FROM_CLASS(klass),
                G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
        worker_signals[SIGNAL_FAILED] = g_signal_new("failed", G_TYPE_FROM_CLASS(klass),
                G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
        worker_signals[SIGNAL_PEER_REFUSED] = g_signal_new("peer-refused", G_TYPE_FROM_CLASS(klass),
                G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_UINT, G_TYPE_UINT,
                G_TYPE_STRING);
}

static void sluice_worker_init(SluiceWorker *self)
{
        self->phase = PHASE_IDLE;
        self->failures = g_array_new(FALSE, FALSE, sizeof(gint64));
        self->quick_crashes = g_array_new(FALSE, FALSE, sizeof(gint64));
}

static void complete_restart_tasks(SluiceWorker *self, const char *failure)
{
        GList *tasks = g_steal_pointer(&self->restart_tasks);
        GVariant *resume = self->phase == PHASE_READY && self->control != NULL
                ? sluice_worker1_get_resume(self->control) : NULL;
        const char *why = NULL;

        if (failure == NULL && !resume_flag(resume, "resumed")) {
                if (resume == NULL || !g_variant_lookup(resume, "why-not", "&s", &why))
                        why = _("it kept no state to resume");
        }
        for (GList *l = tasks; l != NULL; l = l->next) {
                if (failure != NULL)
                        g_task_return_new_error(l->data, SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                                _("sluice-fs for “%s” did not restart: %s"),
                                                self->config.tag, failure);
                else if (why != NULL)
                        g_task_return_new_error(l->data, SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                                _("sluice-fs for “%s” restarted but did not resume: %s"),
                                                self->config.tag, why);
                else
                        g_task_return_boolean(l->data, TRUE);
                g_object_unref(l->data);
        }
        g_list_free(tasks);
}

void sluice_worker_restart_async(SluiceWorker *self, GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);

        g_task_set_source_tag(task, sluice_worker_restart_async);
        switch (self->phase) {
        case PHASE_READY:
                /* SIGTERM with --resume is a hand-over (protocol "Stopping"):
                 * the worker keeps its store and exits 0; worker_exited()
                 * relaunches at once with it */
                self->phase = PHASE_STOPPING;
                self->handing_over = TRUE;
                g_cancellable_cancel(self->launch_cancellable);
                worker_drop_control(self);
                g_subprocess_send_signal(self->process, SIGTERM);
                self->kill_source = g_timeout_add_seconds(WORKER_STOP_TIMEOUT_S, on_stop_timeout, self);
                G_GNUC_FALLTHROUGH;
        case PHASE_OPENING:
        case PHASE_STARTING:
        case PHASE_BACKOFF:
                /* a launch is under way: its readiness answers */
                self->restart_tasks = g_list_append(self->restart_tasks, g_steal_pointer(&task));
                return;
        case PHASE_STOPPING:
                if (self->handing_over) {
                        self->restart_tasks = g_list_append(self->restart_tasks, g_steal_pointer(&task));
                        return;
                }
                G_GNUC_FALLTHROUGH;
        case PHASE_IDLE:
        case PHASE_FAILED:
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_WORKER_FAILED,
                                        _("sluice-fs for “%s” is not running"), self->config.tag);
                return;
        }
}

gboolean sluice_worker_restart_finish(SluiceWorker *self, GAsyncResult *result, GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
        return g_task_propagate_boolean(G_TASK(result), error);
}

SluiceWorkerFdStore *sluice_worker_get_fd_store(SluiceWorker *self)
{
        g_return_val_if_fail(SLUICE_IS_WORKER(self), NULL);
        return self->store;
}

GVariant *sluice_worker_get_resume(SluiceWorker *self)
{
        g_return_val_if_fail(SLUICE_IS_WORKER(self), NULL);
        return self->phase == PHASE_READY && self->control != NULL
                ? sluice_worker1_get_resume(self->control) : NULL;
}

gint64 sluice_worker_get_resume_pause_us(SluiceWorker *self)
{
        g_return_val_if_fail(SLUICE_IS_WORKER(self), 0);
        return self->pause_us;
}

gboolean sluice_worker_resume_expected(SluiceWorker *self)
{
        g_return_val_if_fail(SLUICE_IS_WORKER(self), FALSE);
        return self->resume_expected;
}
