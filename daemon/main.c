/* SPDX-License-Identifier: GPL-2.0-or-later */
/* main.c — sluice-fs: options, checks, the sd-event main loop.
 *
 * The main thread owns the vhost-user socket (one frontend at a time), the
 * control connection and signals; queue threads (queue-thread.c) serve the
 * rings.  Disconnect behaviour:
 *   --socket-path: the session is reset (every guest inode and handle
 *     forgotten, fs_session_reset) and the worker waits for the next frontend
 *     on the same socket (a VM reboot, or the service detaching and
 *     re-attaching the share);
 *   --fd: libvirt started this worker for one VM; it exits with status 0.
 * The control channel closing (the service died): exit 0 when idle; with a
 * frontend connected, stop listening, remove the socket, serve that frontend
 * and exit 0 when it leaves (on_control_lost()).
 * SIGTERM/SIGINT: stop the queue threads, exit 0.  SIGUSR1: counters on stderr.
 *
 * Process-wide policy lives here and nowhere else: the umask (0, because the
 * guest's own umask comes with each create), the open-file limit (raised to
 * the hard limit: every inode the guest knows holds an O_PATH fd), blocked
 * signals, and the sandbox (sandbox.c), installed once everything is set up
 * and before the first queue thread exists, so every thread inherits it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "capabilities.h"
#include "control.h"
#include "cpu-spare.h"
#include "crash-point.h"
#include "credentials.h"
#include "fd-store.h"
#include "fs-session.h"
#include "log.h"
#include "metadata-helper.h"
#include "mount-namespace.h"
#include "notify.h"
#include "options.h"
#include "peer.h"
#include "resume-state.h"
#include "sandbox.h"
#include "socket-remover.h"
#include "stats.h"
#include "util.h"
#include "vhost-user.h"

/* Exit statuses: EXIT_SUCCESS, EXIT_FAILURE (the worker could not set up or
 * serve), EXIT_USAGE (the command line is wrong or names something that cannot
 * be served: no such folder, a socket path in use, a descriptor that is not a
 * listening socket).  Every function here returns 0 or -errno; main() alone
 * turns a failure into a status, by the step that failed. */
#define EXIT_USAGE 2

struct app {
        struct fs_options opts;
        sd_event *event;
        int listen_fd;
        int root_fd;               /* the shared folder, O_PATH; owned by the session */
        bool created_socket;       /* we made opts.socket_path: remove it on exit */
        int socket_dir_fd;         /* O_PATH of its folder: the exit unlinks the socket there */
        int socket_remover_fd;     /* or a sealed worker's helper does (socket-remover.h) */
        const char *socket_name;   /* its last component, inside opts.socket_path */
        dev_t socket_dev;          /* the socket file we bound: never unlink another's */
        ino_t socket_ino;
        sd_event_source *conn_source;
        sd_event_source *accept_source;   /* the listening socket */
        sd_event_source *accept_resume;   /* re-enables it after EMFILE (see on_accept()) */
        bool accept_starved;              /* said so once; until the next accept() works */
        struct vu_dev *dev;
        struct fs_session *session;
        struct control *control;
        struct peer_policy peers;          /* who may be the frontend (peer.h) */
        /* --resume: the transport's stored state (resume-state.h), what the
         * start took over (Worker1.Resume), and a SIGTERM hand-over. */
        struct rstate *rs;
        struct control_resume resume;
        unsigned resume_in_flight;
        bool handed_over;
};


/* Says on stderr why what the command line names cannot be used (before the
 * log is of any use: nothing is served yet); returns -error. */
static int fail_usage(int error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_usage(int error, const char *fmt, ...)
{
        va_list ap;

        fputs("sluice-fs: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -error;
}

/* Opens the shared folder O_PATH; checks it is a folder we can list. */
static int open_shared_dir(const char *dir, int *ret)
{
        int fd, probe;

        probe = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (probe < 0) {
                int e = errno;

                if (e == ENOENT)
                        return fail_usage(e, "shared folder '%s' does not exist", dir);
                if (e == ENOTDIR)
                        return fail_usage(e, "shared folder '%s' is not a folder", dir);
                return fail_usage(e, "cannot open shared folder '%s': %s", dir, strerror(e));
        }
        close(probe);
        fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return fail_usage(errno, "cannot open shared folder '%s': %s", dir, strerror(errno));
        *ret = fd;
        return 0;
}

/* --shared-dir-fd=N: the folder its caller opened and checked (sluice-service
 * opens it without following links, service/share-path.c).  Served as it is:
 * no path is resolved here, so a link put on the folder's path since the
 * check changes nothing.  N is replaced by an O_PATH copy and closed. */
static int adopt_shared_dir_fd(struct fs_options *opts, int *ret)
{
        int n = opts->shared_dir_fd, fd, probe;
        char link[32], name[PATH_MAX];
        struct stat st;
        ssize_t len;

        if (fcntl(n, F_GETFD) < 0)
                return fail_usage(EBADF, "--shared-dir-fd=%d is not an open file descriptor", n);
        /* an O_PATH descriptor of a link or a file is as wrong as a socket */
        if (fstat(n, &st) < 0)
                return fail_usage(errno, "cannot look at --shared-dir-fd=%d: %s", n, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return fail_usage(ENOTDIR, "--shared-dir-fd=%d is not a folder", n);
        probe = openat(n, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (probe < 0)
                return fail_usage(errno, "cannot open the shared folder of --shared-dir-fd=%d: %s", n,
                                  strerror(errno));
        close(probe);
        fd = openat(n, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return fail_usage(errno, "cannot open the shared folder of --shared-dir-fd=%d: %s", n,
                                  strerror(errno));
        close(n);
        /* Its name where it is now, for messages only. */
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        len = readlink(link, name, sizeof(name) - 1);
        if (len <= 0)
                len = snprintf(name, sizeof(name), "(descriptor %d)", n);
        name[len] = '\0';
        free(opts->shared_dir);
        opts->shared_dir = strdup(name);
        if (!opts->shared_dir) {
                close(fd);
                return -ENOMEM;
        }
        *ret = fd;
        return 0;
}

/* An existing socket file nobody listens on is left over from a dead worker:
 * remove it.  Anything else at the path is not ours to remove. */
static int remove_stale_socket(const char *path, const struct sockaddr_un *sa)
{
        struct stat st;
        int fd, r;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : fail_usage(errno, "cannot use socket path '%s': %s",
                                                        path, strerror(errno));
        if (!S_ISSOCK(st.st_mode))
                return fail_usage(EEXIST, "socket path '%s' exists and is not a socket; not removing it",
                                  path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return fail_usage(errno, "cannot create a socket: %s", strerror(errno));
        r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
        close(fd);
        if (r == 0)
                return fail_usage(EADDRINUSE, "socket path '%s' is in use by another process", path);
        if (errno != ECONNREFUSED)
                return fail_usage(errno, "cannot use socket path '%s': %s", path, strerror(errno));
        if (unlink(path) < 0)
                return fail_usage(errno, "cannot remove stale socket '%s': %s", path, strerror(errno));
        return 0;
}

/* The socket's folder, held open so that the exit can remove the socket
 * with unlinkat() below the sandbox (which allows only that outside the share). */
static int open_socket_dir(const char *path, int *ret_fd, const char **ret_name)
{
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir = NULL;
        int fd;

        if (!slash) {
                fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
                *ret_name = path;
        } else {
                dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
                if (!dir)
                        return -ENOMEM;
                fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                *ret_name = slash + 1;
        }
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

static int listen_on_path(struct app *app)
{
        const char *path = app->opts.socket_path;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        mode_t old_umask;
        int fd, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return fail_usage(ENAMETOOLONG, "socket path '%s' is longer than %zu bytes", path,
                                  sizeof(sa.sun_path) - 1);
        strcpy(sa.sun_path, path);
        r = remove_stale_socket(path, &sa);
        if (r < 0)
                return r;
        r = open_socket_dir(path, &app->socket_dir_fd, &app->socket_name);
        if (r < 0)
                return fail_usage(-r, "cannot open the folder of socket '%s': %s", path,
                                  strerror(-r));
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return fail_usage(errno, "cannot create a socket: %s", strerror(errno));
        /* Owner-only from the first moment: the umask applies to bind(). */
        old_umask = umask(0077);
        r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old_umask);
        if (r < 0) {
                r = errno;
                close(fd);
                return fail_usage(r, "cannot bind socket '%s': %s", path, strerror(r));
        }
        app->created_socket = true;
        if (fstatat(app->socket_dir_fd, app->socket_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                app->socket_dev = st.st_dev;
                app->socket_ino = st.st_ino;
        }
        if (listen(fd, 1) < 0) {
                r = errno;
                close(fd);
                return fail_usage(r, "cannot listen on socket '%s': %s", path, strerror(r));
        }
        app->listen_fd = fd;
        return 0;
}

/* The socket file a previous worker bound, taken over with its listening
 * socket from the store: remembered as listen_on_path() remembers its own,
 * so that the exit removes it (unless it hands over). */
static int adopt_socket_file(struct app *app)
{
        const char *path = app->opts.socket_path;
        struct stat st;
        int r;

        r = open_socket_dir(path, &app->socket_dir_fd, &app->socket_name);
        if (r < 0)
                return fail_usage(-r, "cannot open the folder of socket '%s': %s", path,
                                  strerror(-r));
        if (fstatat(app->socket_dir_fd, app->socket_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISSOCK(st.st_mode)) {
                app->created_socket = true;
                app->socket_dev = st.st_dev;
                app->socket_ino = st.st_ino;
        }
        return 0;
}

static int check_listen_fd(int fd)
{
        int accepting = 0, type = 0;
        socklen_t len = sizeof(int);

        if (fcntl(fd, F_GETFD) < 0)
                return fail_usage(EBADF, "--fd=%d is not an open file descriptor", fd);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
                return fail_usage(ENOTSOCK, "--fd=%d is not a stream socket", fd);
        len = sizeof(int);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) < 0 || !accepting)
                return fail_usage(EINVAL, "--fd=%d is not a listening socket", fd);
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        return 0;
}

/* Every guest inode holds an O_PATH fd: a tree of a few thousand files needs
 * more than the usual soft limit of 1024, so take the hard limit (as virtiofsd
 * does), capped where the hard limit is "unlimited". */
static void raise_nofile_limit(void)
{
        struct rlimit rl;
        rlim_t want;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 1048576 ? 1048576 : rl.rlim_max;
        if (rl.rlim_cur >= want)
                return;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_warning("cannot raise the open file limit to %llu: %s (large folders may fail with EMFILE)",
                            (unsigned long long)want, strerror(errno));
        else
                log_debug("open file limit raised to %llu", (unsigned long long)want);
}

static void disconnect(struct app *app)
{
        app->conn_source = sd_event_source_unref(app->conn_source);
        vu_dev_free(app->dev);
        app->dev = NULL;
        control_set_connected(app->control, false);
        if (app->opts.exit_on_disconnect) {
                log_info("frontend disconnected; exiting (%s)",
                         app->opts.socket_path ? "the supervisor is gone" : "--fd serves one frontend");
                sd_event_exit(app->event, 0);
        } else {
                log_info("frontend disconnected; session reset, waiting for the next one");
                notify_status("Waiting for a frontend");
        }
}

static int on_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct app *app = userdata;
        int r;

        if (!(revents & EPOLLIN)) {
                disconnect(app);
                return 0;
        }
        r = vu_dev_dispatch(app->dev);
        if (r < 0) {
                if (r != -ECONNRESET)
                        log_error("dropping the frontend connection after a protocol error");
                disconnect(app);
        }
        return 0;
}

#define ACCEPT_PAUSE_USEC 1000000

/* The listening socket is served after the frontend connection, whenever both
 * have something ready.  A frontend that reconnects closes its old socket
 * before it connects the new one, and the kernel marks the old one hung up
 * inside close(); so by the time the new connection can be accepted, the old
 * one is ready (with its last messages, then end-of-file) in every turn of the
 * loop that sees the new one.  sd-event dispatches one source per turn, the
 * highest priority first and only then the longest waiting: the connection
 * keeps being picked until its hang-up is handled, and only then is the next
 * frontend accepted.  With equal priorities the listening socket, pending
 * since an earlier turn, would win over a connection that still had a message
 * to read, and the reconnect was refused as a second frontend.  (Checking the
 * old socket with poll() in on_accept() would see the hang-up just as well,
 * but would drop messages sent before it; this keeps them in order.) */
#define ACCEPT_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 1)

static int on_accept_resume(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct app *app = userdata;

        (void)sd_event_source_set_enabled(app->accept_source, SD_EVENT_ON);
        return 0;
}

/* Out of descriptors (ENFILE: the whole system's; EMFILE: the reserve the
 * guest's files leave us, fuse-dispatch.c, is used up too): the connection
 * waits in the backlog and accept() would fail at once again and again — the
 * listening socket stays readable — so stop watching it for a second.  The
 * timer exists from the set-up on: making one now would need an fd. */
static void pause_accepting(struct app *app, int error)
{
        if (sd_event_source_set_time_relative(app->accept_resume, ACCEPT_PAUSE_USEC) < 0 ||
            sd_event_source_set_enabled(app->accept_resume, SD_EVENT_ONESHOT) < 0)
                return;   /* better a busy loop than a socket nobody accepts on */
        (void)sd_event_source_set_enabled(app->accept_source, SD_EVENT_OFF);
        if (!app->accept_starved)
                log_warning("cannot accept a frontend: %s; trying again every second", strerror(error));
        app->accept_starved = true;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct app *app = userdata;
        struct timeval timeout = { .tv_sec = 10 };
        struct ucred cred;
        const char *reason;
        int conn, r;

        conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                        pause_accepting(app, errno);
                else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_error("accept failed: %s", strerror(errno));
                return 0;
        }
        app->accept_starved = false;
        if (!peer_policy_check(&app->peers, conn, &cred, &reason)) {
                log_warning("refusing a frontend of user %d (pid %d): %s", (int)cred.uid,
                            (int)cred.pid, reason);
                control_peer_refused(app->control, cred.pid, cred.uid, reason);
                close(conn);
                return 0;
        }
        /* Not one that hung up: its hang-up is handled first (ACCEPT_PRIORITY). */
        if (app->dev) {
                log_warning("refusing a second frontend: one is already connected");
                close(conn);
                return 0;
        }
        /* A frontend that stops half-way through a message must not hang the main loop. */
        (void)setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
        (void)setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
        r = vu_dev_new(conn, &app->opts, app->session, &stats_global, &app->dev);
        if (r < 0) {
                log_error("cannot serve the frontend: %s", strerror(-r));
                return 0;
        }
        if (app->rs) {
                /* Stored before the state says a device is served. */
                (void)fdstore_store("conn", conn);
                vu_dev_set_state(app->dev, app->rs);
        }
        r = sd_event_add_io(app->event, &app->conn_source, conn, EPOLLIN, on_connection, app);
        if (r < 0) {
                log_error("cannot watch the frontend connection: %s", strerror(-r));
                vu_dev_free(app->dev);
                app->dev = NULL;
                return 0;
        }
        log_info("frontend connected");
        notify_status("Serving a frontend");
        control_set_connected(app->control, true);
        return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct app *app = userdata;

        if (si->ssi_signo == SIGUSR1) {
                stats_dump(&stats_global, stderr);
                return 0;
        }
        if (si->ssi_signo == SIGTERM && app->rs) {
                log_info("%s: handing over to a successor (--resume)", strsignal((int)si->ssi_signo));
                vu_dev_hand_over(app->dev);
                rstate_set_handed_over(app->rs, true);
                app->handed_over = true;
        } else {
                log_info("%s: stopping", strsignal((int)si->ssi_signo));
        }
        sd_event_exit(app->event, 0);
        return 0;
}

/* Removes the socket we bound, unless it has been replaced meanwhile (a new
 * supervisor's worker may own the path by now). */
static void remove_own_socket(struct app *app)
{
        struct stat st;

        if (app->socket_remover_fd >= 0) {
                sockrm_remove(app->socket_remover_fd);
                app->socket_remover_fd = -1;
        }
        /* A hand-over keeps the socket for the successor the keeper starts. */
        if (!app->created_socket || app->socket_dir_fd < 0 || app->handed_over)
                return;
        app->created_socket = false;
        if (fstatat(app->socket_dir_fd, app->socket_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            st.st_dev == app->socket_dev && st.st_ino == app->socket_ino)
                (void)unlinkat(app->socket_dir_fd, app->socket_name, 0);
}

/* The service died (or closed the channel).  An idle worker goes with it.  One
 * serving a frontend keeps serving it, because QEMU cannot reconnect a
 * vhost-user-fs device: a running guest's mount would be lost for good.  It
 * stops listening at once and removes its socket, so that a restarted service
 * can start the share's next worker there (never two on one socket), and
 * exits when that frontend leaves (service/worker-orphans.h has the whole design). */
static void on_control_lost(void *userdata)
{
        struct app *app = userdata;

        if (!app->dev) {
                log_info("supervisor gone; exiting");
                sd_event_exit(app->event, 0);
                return;
        }
        log_info("supervisor gone; serving the connected frontend until it leaves, then exiting");
        app->opts.exit_on_disconnect = true;
        app->accept_source = sd_event_source_disable_unref(app->accept_source);
        (void)sd_event_source_set_enabled(app->accept_resume, SD_EVENT_OFF);
        if (app->listen_fd >= 0 && app->opts.socket_path) {
                /* with --fd the listening socket is libvirt's: leave it be */
                close(app->listen_fd);
                app->listen_fd = -1;
        }
        remove_own_socket(app);
}

/* Process-wide settings that must come before the socket exists and before
 * any thread starts. */
static void setup_process(void)
{
        sigset_t mask;

        /* Blocked before the socket exists (its existence tells QEMU, libvirt and
         * the service that we are up, so a SIGTERM may follow at once) and before
         * any thread starts, so that only the signalfd ever sees them. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGUSR1);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        /* Our helpers (metadata-helper.h, socket-remover.h) are reaped by the
         * kernel as they exit: the sandbox has no wait4, and none of them may
         * linger as a zombie. */
        signal(SIGCHLD, SIG_IGN);
        /* Before the socket exists too: whoever sees it may count on the limit. */
        raise_nofile_limit();
}

/* What the command line names: the shared folder (*ret_root_fd), the listening
 * socket and the control descriptor.  Each failure is said on stderr; any but
 * -ENOMEM is the caller's mistake (EXIT_USAGE). */
static int open_named(struct app *app, int *ret_root_fd)
{
        int root_fd = -1, r;

        if (app->opts.shared_dir_fd >= 0)
                r = adopt_shared_dir_fd(&app->opts, &root_fd);
        else
                r = open_shared_dir(app->opts.shared_dir, &root_fd);
        if (r < 0)
                return r;
        if (app->opts.socket_path && fdstore_has("listen")) {
                /* The socket a previous worker listened on: its file stays as
                 * it is, and is ours to remove at a real exit, as if we had
                 * bound it (no one else can have: the store kept it bound). */
                app->listen_fd = fdstore_take("listen");
                r = check_listen_fd(app->listen_fd);
                if (r < 0) {
                        close(app->listen_fd);
                        app->listen_fd = -1;
                } else {
                        r = adopt_socket_file(app);
                }
        } else if (app->opts.socket_path) {
                r = listen_on_path(app);
                if (r >= 0 && fdstore_enabled())
                        (void)fdstore_store("listen", app->listen_fd);
        } else {
                r = check_listen_fd(app->opts.fd);
                app->listen_fd = app->opts.fd;
        }
        if (r >= 0 && app->opts.control_fd >= 0 && fcntl(app->opts.control_fd, F_GETFD) < 0)
                r = fail_usage(EBADF, "--control-fd=%d is not an open file descriptor",
                               app->opts.control_fd);
        if (r < 0) {
                close(root_fd);
                return r;
        }
        *ret_root_fd = root_fd;
        return 0;
}

/* The session on root_fd (its owner from here on, failure or not) and the
 * event loop; logs what fails. */
static int setup_serving(struct app *app, int root_fd)
{
        int r;

        /* The guest's umask comes with each create (DONT_MASK); ours must not add to it.
         * After listen_on_path(), which binds the socket under umask 0077. */
        umask(0);
        /* Before any thread: it decides, and drops root's supplementary groups, process-wide. */
        r = creds_init();
        if (r < 0) {
                close(root_fd);
                return r;
        }
        stats_init(&stats_global, 1 + app->opts.queues);
        cpu_spare_init();   /* before the sandbox: it opens /proc files */

        app->root_fd = root_fd;   /* borrowed from here on: the session closes it */
        r = fs_session_new(&app->opts, root_fd, &stats_global, &app->session);
        if (r < 0) {
                log_error("cannot set up the shared folder '%s': %s", app->opts.shared_dir,
                          strerror(-r));
                return r;
        }

        r = sd_event_default(&app->event);
        if (r < 0) {
                log_error("cannot create the event loop: %s", strerror(-r));
                return r;
        }
        if ((r = sd_event_add_signal(app->event, NULL, SIGTERM, on_signal, app)) < 0 ||
            (r = sd_event_add_signal(app->event, NULL, SIGINT, on_signal, app)) < 0 ||
            (r = sd_event_add_signal(app->event, NULL, SIGUSR1, on_signal, app)) < 0 ||
            (r = sd_event_add_io(app->event, &app->accept_source, app->listen_fd, EPOLLIN,
                                 on_accept, app)) < 0 ||
            (r = sd_event_source_set_priority(app->accept_source, ACCEPT_PRIORITY)) < 0 ||
            (r = sd_event_add_time_relative(app->event, &app->accept_resume, CLOCK_MONOTONIC,
                                            ACCEPT_PAUSE_USEC, 0, on_accept_resume, app)) < 0 ||
            (r = sd_event_source_set_enabled(app->accept_resume, SD_EVENT_OFF)) < 0) {
                log_error("cannot set up the event loop: %s", strerror(-r));
                return r;
        }
        r = notify_watchdog_setup(app->event);
        if (r < 0) {
                log_error("cannot set up the watchdog (WatchdogSec=): %s", strerror(-r));
                return r;
        }
        return 0;
}

/* A sealed worker keeps no fd of the socket's folder (mount-namespace.h):
 * the removal at exit goes to a helper (socket-remover.h).  Without one the
 * socket stays at exit, as after a crash (the next start replaces it). */
static void hand_over_socket(struct app *app)
{
        if (app->socket_dir_fd < 0)
                return;
        /* With --resume a crash must leave the socket to the successor the
         * keeper starts, and the helper would remove it at the crash. */
        if (app->created_socket && !app->opts.resume)
                app->socket_remover_fd = sockrm_start(app->socket_dir_fd, app->socket_name,
                                                      app->socket_dev, app->socket_ino);
        close(app->socket_dir_fd);
        app->socket_dir_fd = -1;
}

/* The last steps of the set-up, each needing what the next takes away: the
 * file-system view (CAP_SYS_ADMIN, /proc by path), the capabilities
 * (CAP_SETPCAP), the sandbox.  No queue thread exists yet (they start when a
 * frontend sends its rings), so every thread inherits all three.  The steps
 * log their own failures. */
static int confine(struct app *app)
{
        int r;

        if (creds_root_mode() && app->opts.sandbox == FS_SANDBOX_SECCOMP) {
                r = mountns_enter(app->root_fd, fs_session_proc_fd(app->session));
                if (r < 0)
                        return r;
                if (mountns_sealed())
                        hand_over_socket(app);
        } else if (app->opts.sandbox == FS_SANDBOX_SECCOMP) {
                /* A desktop user's worker: what the sandbox refuses by path
                 * goes to a helper alone with the shared folder.  Without
                 * it (logged) those changes stay unsupported. */
                (void)mdhelper_start(app->root_fd);
        }
        r = caps_drop(&app->opts, creds_root_mode());
        if (r < 0)
                return r;
        if (app->opts.sandbox != FS_SANDBOX_SECCOMP) {
                log_warning("--sandbox=none: no Landlock or seccomp confinement");
                return 0;
        }
        r = sandbox_apply(app->root_fd, app->socket_dir_fd);
        if (r < 0)
                log_error("cannot set up the sandbox (--sandbox=none turns it off): %s", strerror(-r));
        return r;
}

#if SLUICE_TEST_HOOKS
/* Logs what one planted call did; true when it changed something. */
static bool planted_result(const char *what, int r)
{
        log_info("sandbox test: planted %s: %s", what, r == 0 ? "changed" : strerror(errno));
        return r == 0;
}

/* The metadata calls a sealed root worker may make by path (sandbox.c),
 * aimed as a code-execution bug would at the host file `victim` (absolute)
 * and `from_share` (the same, relative to the shared folder), and at our
 * executable through /proc.  Returns 0 when every one failed, 3 otherwise. */
static int plant_metadata_calls(const struct app *app, const char *victim, const char *from_share)
{
        static const struct timespec ts[2] = { { .tv_sec = 1 }, { .tv_sec = 1 } };
        _cleanup_close_ int outside = open(victim, O_PATH | O_CLOEXEC);
        char via_root[PATH_MAX];
        bool changed = false;

        snprintf(via_root, sizeof(via_root), "%d/%s", app->root_fd, from_share);
        changed |= planted_result("fchmodat by absolute path", fchmodat(AT_FDCWD, victim, 0777, 0));
        changed |= planted_result("fchmodat from the shared folder",
                                  fchmodat(app->root_fd, from_share, 0777, 0));
        changed |= planted_result("fchmodat through /proc/self/fd", fchmodat(AT_FDCWD, via_root, 0777, 0));
        changed |= planted_result("fchmodat of /proc/self/exe", fchmodat(AT_FDCWD, "../exe", 0777, 0));
        changed |= planted_result("fchownat from the shared folder",
                                  fchownat(app->root_fd, from_share, 4242, 4242, AT_EMPTY_PATH));
        changed |= planted_result("utimensat from the shared folder",
                                  utimensat(app->root_fd, from_share, ts, 0));
        changed |= planted_result("fchownat of an O_PATH fd",
                                  outside < 0 ? -1 : fchownat(outside, "", 4242, 4242, AT_EMPTY_PATH));
        changed |= planted_result("utimensat of an O_PATH fd",
                                  outside < 0 ? -1 : utimensat(outside, "", ts, AT_EMPTY_PATH));
        return changed ? 3 : 0;
}

/* -Dtest_hooks=true builds only (make check's), for tests of the sandbox
 * from outside.  SLUICE_FS_TEST_SANDBOX=syscall makes one call the filter
 * denies (the worker dies with the report line); =landlock opens the shared
 * folder's parent, logs the result and asks the worker to exit (*ret_status):
 * 0 when refused (or, in a sealed namespace, when ".." is the folder itself),
 * 3 when it opened; =metadata runs plant_metadata_calls() on
 * $SLUICE_FS_TEST_VICTIM and $SLUICE_FS_TEST_VICTIM_FROM_SHARE.  Returns
 * whether it asks the worker to exit. */
static bool sandbox_test_hook(const struct app *app, int *ret_status)
{
        const char *what = getenv("SLUICE_FS_TEST_SANDBOX");
        const char *victim = getenv("SLUICE_FS_TEST_VICTIM");
        const char *from_share = getenv("SLUICE_FS_TEST_VICTIM_FROM_SHARE");
        _cleanup_close_ int fd = -1;
        struct stat st, root;

        if (!what)
                return false;
        if (strcmp(what, "syscall") == 0) {
                (void)syscall(SYS_getpgid, 0);
        } else if (strcmp(what, "landlock") == 0) {
                fd = openat(app->root_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0 && fstat(fd, &st) == 0 && fstat(app->root_fd, &root) == 0 &&
                    st.st_dev == root.st_dev && st.st_ino == root.st_ino) {
                        log_info("sandbox test: opening the shared folder's parent: the shared "
                                 "folder itself (sealed mount namespace)");
                        *ret_status = 0;
                        return true;
                }
                log_info("sandbox test: opening the shared folder's parent: %s",
                         fd >= 0 ? "opened" : strerror(errno));
                *ret_status = fd >= 0 ? 3 : 0;
                return true;
        } else if (strcmp(what, "metadata") == 0 && victim && from_share) {
                *ret_status = plant_metadata_calls(app, victim, from_share);
                return true;
        }
        return false;
}
#endif

/* The session's tables: taken up when stored (and the FUSE layer can),
 * else kept in a new memfd and stored.  -EBADMSG with why when the stored
 * tables cannot be trusted. */
static int take_up_tables(struct app *app, bool want_stored, char *why, size_t why_size)
{
        int fd = fdstore_take("tables"), r;

        if (fd >= 0 && want_stored) {
                r = fs_session_state_restore(app->session, fd, why, why_size);
                return r < 0 ? -EBADMSG : 0;
        }
        if (fd >= 0)
                close(fd);
        if (want_stored) {
                snprintf(why, why_size, "the stored state names a device but the store has no tables");
                return -EBADMSG;
        }
        r = fs_session_state_create(app->session, &fd);
        if (r < 0) {
                log_warning("cannot keep the FUSE tables for a successor: %s", strerror(-r));
                return 0;
        }
        (void)fdstore_replace("tables", fd);
        close(fd);
        return 0;
}

/* The device a previous worker served, from the stored state: -EBADMSG with
 * why when it cannot be trusted or used.  On success app->dev is set and
 * nothing runs yet (resume_start() after the sandbox). */
static int resume_device(struct app *app, char *why, size_t why_size)
{
        struct ucred cred;
        const char *reason;
        int conn, r;

        conn = fdstore_take("conn");
        if (conn < 0) {
                snprintf(why, why_size, "the stored state names a device but the store has no connection");
                return -EBADMSG;
        }
        /* Adopted, not accepted: the same checks as an accept. */
        if (!peer_policy_check(&app->peers, conn, &cred, &reason)) {
                snprintf(why, why_size, "the stored connection's peer (user %d, pid %d) is refused: %s",
                         (int)cred.uid, (int)cred.pid, reason);
                close(conn);
                return -EBADMSG;
        }
        r = take_up_tables(app, true, why, why_size);
        if (r < 0) {
                close(conn);
                return r;
        }
        r = vu_dev_new(conn, &app->opts, app->session, &stats_global, &app->dev);
        if (r < 0) {
                snprintf(why, why_size, "cannot set the device up: %s", strerror(-r));
                return -EBADMSG;
        }
        r = vu_dev_resume(app->dev, app->rs, why, why_size, &app->resume_in_flight);
        if (r < 0) {
                if (r != -EBADMSG)
                        snprintf(why, why_size, "cannot resume the device: %s", strerror(-r));
                return -EBADMSG;
        }
        return 0;
}

/* --resume at start: take up the stored state and device, or start fresh
 * saying why (protocol: every stored fd but the listening socket is dropped,
 * so that the frontend sees the connection end). */
static int resume_or_fresh(struct app *app)
{
        char why[256] = "";
        int fd, r = 0;

        fd = fdstore_take("state");
        if (fd >= 0) {
                app->resume.had_state = true;
                r = rstate_open(fd, &app->rs, why, sizeof(why));
                if (r >= 0) {
                        app->resume.handed_over = rstate_handed_over(app->rs);
                        rstate_set_handed_over(app->rs, false);
                        if (app->rs->work.device)
                                r = resume_device(app, why, sizeof(why));
                        else
                                r = take_up_tables(app, false, why, sizeof(why));
                }
                if (r >= 0 && app->dev) {
                        app->resume.resumed = true;
                        log_info("resuming the device a previous worker served (%u request%s in flight%s)",
                                 app->resume_in_flight, app->resume_in_flight == 1 ? "" : "s",
                                 app->resume.handed_over ? ", handed over" : "");
                } else if (r < 0) {
                        log_warning("cannot resume the previous worker's device: %s; starting fresh",
                                    why);
                        snprintf(app->resume.why_not, sizeof(app->resume.why_not), "%s", why);
                        app->resume.handed_over = false;
                        vu_dev_free(app->dev);   /* says "no device" in the state, unstores */
                        app->dev = NULL;
                        rstate_free(app->rs);
                        app->rs = NULL;
                        /* the tables may have been taken up: they belong to that device */
                        fs_session_state_forget(app->session);
                        fdstore_drop_all_but("listen");
                }
        }
        if (!app->rs) {
                r = rstate_create(&app->rs);
                if (r < 0) {
                        log_error("cannot create the state for a successor: %s", strerror(-r));
                        return r;
                }
                (void)fdstore_replace("state", rstate_fd(app->rs));
                (void)take_up_tables(app, false, why, sizeof(why));
        }
        fdstore_close_untaken();
        return 0;
}

/* After the sandbox, before the loop: the resumed device answers its
 * in-flight requests and serves. */
static int resume_start(struct app *app)
{
        unsigned replayed = 0, failed = 0;
        int r;

        if (app->dev) {
                vu_dev_start_resumed(app->dev, app->opts.replay, &replayed, &failed);
                r = sd_event_add_io(app->event, &app->conn_source, vu_dev_fd(app->dev), EPOLLIN,
                                    on_connection, app);
                if (r < 0) {
                        log_error("cannot watch the frontend connection: %s", strerror(-r));
                        return r;
                }
                if (replayed || failed)
                        log_info("in-flight requests of the previous worker: %u run again, %u answered EIO",
                                 replayed, failed);
                control_set_connected(app->control, true);
        }
        app->resume.replayed = replayed;
        app->resume.failed = failed;
        control_set_resume(app->control, &app->resume);
        return 0;
}

static void log_serving(const struct fs_options *opts)
{
        log_info("serving '%s' (%s%s%s%scache %s, %u request queue%s, poll %u µs) on %s%s",
                 opts->shared_dir, opts->tag_given ? "tag " : "",
                 opts->tag_given ? opts->tag : "",
                 opts->tag_given ? ", " : "",
                 opts->readonly ? "read-only, " : "",
                 opts->cache == FS_CACHE_AUTO ? "auto"
                 : opts->cache == FS_CACHE_ALWAYS ? "always" : "never",
                 opts->queues, opts->queues == 1 ? "" : "s", opts->poll_us,
                 opts->socket_path ? opts->socket_path : "fd ",
                 opts->socket_path ? "" : "(--fd)");
}

static void app_free(struct app *app)
{
        app->conn_source = sd_event_source_unref(app->conn_source);
        app->accept_source = sd_event_source_unref(app->accept_source);
        app->accept_resume = sd_event_source_unref(app->accept_resume);
        vu_dev_free(app->dev);
        control_free(app->control);
        mdhelper_stop();
        peer_policy_clear(&app->peers);
        if (app->session)
                fs_session_free(app->session);
        rstate_free(app->rs);
        if (app->listen_fd >= 0)
                close(app->listen_fd);
        remove_own_socket(app);
        if (app->socket_dir_fd >= 0)
                close(app->socket_dir_fd);
        sd_event_unref(app->event);
        options_free(&app->opts);
}

int main(int argc, char **argv)
{
        struct app app = { .listen_fd = -1, .root_fd = -1, .socket_dir_fd = -1,
                           .socket_remover_fd = -1, .peers.pidfd = -1 };
        int root_fd = -1, r;

        r = options_parse(argc, argv, &app.opts);
        if (r != 0) {   /* > 0: --help or --version was printed */
                options_free(&app.opts);
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;
        }
        log_set_level(app.opts.log_level);
        crash_point_init();
        setup_process();
        /* Before open_named(): the listening socket may be a stored one. */
        if (fdstore_init(app.opts.resume) < 0) {
                app_free(&app);
                return EXIT_FAILURE;
        }
        peer_policy_init(&app.peers, app.opts.allow_peer_uids, app.opts.n_allow_peer_uids);
        if (app.opts.allow_peer_pid > 0) {
                r = peer_policy_set_pid(&app.peers, app.opts.allow_peer_pid);
                if (r < 0) {
                        (void)fail_usage(-r, "--allow-peer-pid=%d: %s", (int)app.opts.allow_peer_pid,
                                         r == -ESRCH ? "no such process" : strerror(-r));
                        app_free(&app);
                        return EXIT_USAGE;
                }
        }

        /* A failure becomes an exit status here only: EXIT_USAGE for what the
         * command line names (unless memory ran out), EXIT_FAILURE after. */
        r = open_named(&app, &root_fd);
        if (r < 0) {
                app_free(&app);
                return r == -ENOMEM ? EXIT_FAILURE : EXIT_USAGE;
        }
        r = setup_serving(&app, root_fd);
        if (r < 0)
                goto out;
        if (app.opts.resume) {
                r = resume_or_fresh(&app);
                if (r < 0)
                        goto out;
        }
        log_serving(&app.opts);
        /* The control connection comes second: a reply on it means "listening". */
        if (app.opts.control_fd >= 0) {
                r = control_start(app.event, app.opts.control_fd, app.session, &stats_global,
                                  &app.peers, on_control_lost, &app, &app.control);
                if (r < 0)
                        goto out;
        }
        r = confine(&app);
        if (r < 0)
                goto out;
#if SLUICE_TEST_HOOKS
        int status;

        if (sandbox_test_hook(&app, &status)) {
                app_free(&app);
                return status;
        }
#endif
        r = resume_start(&app);
        if (r < 0)
                goto out;
        /* The socket listens (open_named()) and the sandbox is on: ready. */
        notify_ready("Serving '%s', waiting for a frontend", app.opts.shared_dir);

        r = sd_event_loop(app.event);   /* sd_event_exit()'s code: always 0 here */
        notify_stopping();
        if (r < 0)
                log_error("event loop failed: %s", strerror(-r));
out:
        app_free(&app);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
