/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-fd-store.c — the keeper of a worker's fd store (worker-fd-store.h):
 * the notify socket, the checks of every datagram, the held fds and their
 * hang-up watches. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>

#include "worker-fd-store.h"

/* The kernel passes at most SCM_MAX_FD (253) fds in one message. */
#define FDS_PER_MESSAGE 253
/* A notify datagram is a few short lines; anything longer is refused. */
#define MESSAGE_MAX 4096

typedef struct {
        char *name;
        int fd;
        guint watch;    /* POLLHUP/POLLERR on it drops it */
} StoredFd;

struct _SluiceWorkerFdStore {
        char *tag;
        int socket_fd;          /* -1 until listen */
        guint socket_watch;
        char *notify_socket;    /* "@" + the autobound abstract name */
        pid_t sender;           /* the one pid whose datagrams count; 0: none */
        GPtrArray *fds;         /* StoredFd, in the order stored */
};

static void stored_fd_free(gpointer data)
{
        StoredFd *s = data;

        if (s->watch != 0)
                g_source_remove(s->watch);
        if (s->fd >= 0)
                (void)close(s->fd);
        g_free(s->name);
        g_free(s);
}

/* A decimal index as the worker writes it: no sign, no leading zero. */
static gboolean is_index(const char *s)
{
        size_t len = strlen(s);

        if (len == 0 || len > 10 || (s[0] == '0' && len > 1))
                return FALSE;
        for (size_t i = 0; i < len; i++)
                if (!g_ascii_isdigit(s[i]))
                        return FALSE;
        return TRUE;
}

gboolean sluice_worker_fd_store_name_is_valid(const char *name)
{
        static const char *const fixed[] = { "listen", "conn", "state", "tables" };
        static const char *const indexed[] = { "mem-", "kick-", "call-", "err-" };

        if (name == NULL || strlen(name) > SLUICE_WORKER_FD_NAME_MAX)
                return FALSE;
        for (gsize i = 0; i < G_N_ELEMENTS(fixed); i++)
                if (strcmp(name, fixed[i]) == 0)
                        return TRUE;
        for (gsize i = 0; i < G_N_ELEMENTS(indexed); i++)
                if (g_str_has_prefix(name, indexed[i]) && is_index(name + strlen(indexed[i])))
                        return TRUE;
        return FALSE;
}

SluiceWorkerFdStore *sluice_worker_fd_store_new(const char *tag)
{
        SluiceWorkerFdStore *store = g_new0(SluiceWorkerFdStore, 1);

        store->tag = g_strdup(tag != NULL ? tag : "");
        store->socket_fd = -1;
        store->fds = g_ptr_array_new_with_free_func(stored_fd_free);
        return store;
}

void sluice_worker_fd_store_free(SluiceWorkerFdStore *store)
{
        if (store == NULL)
                return;
        g_ptr_array_unref(store->fds);
        if (store->socket_watch != 0)
                g_source_remove(store->socket_watch);
        if (store->socket_fd >= 0)
                (void)close(store->socket_fd);
        g_free(store->notify_socket);
        g_free(store->tag);
        g_free(store);
}

/* Whether fd is the same open file description as one already held.  kcmp
 * says exactly that; where the kernel lacks it, the same inode is the
 * closest answer (a memfd or socket is its own inode). */
static gboolean same_file(int a, int b)
{
        pid_t self = getpid();
        long r = syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);
        struct stat sa, sb;

        if (r >= 0)
                return r == 0;
        if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
                return FALSE;
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static StoredFd *find_same_file(SluiceWorkerFdStore *store, int fd)
{
        for (guint i = 0; i < store->fds->len; i++) {
                StoredFd *s = g_ptr_array_index(store->fds, i);

                if (same_file(s->fd, fd))
                        return s;
        }
        return NULL;
}

static gboolean on_stored_fd_hangup(gint fd, GIOCondition condition, gpointer user_data)
{
        SluiceWorkerFdStore *store = user_data;

        for (guint i = 0; i < store->fds->len; i++) {
                StoredFd *s = g_ptr_array_index(store->fds, i);

                if (s->fd != fd)
                        continue;
                g_message("Share %s: dropped the stored fd \"%s\": its other end went away",
                          store->tag, s->name);
                s->watch = 0;   /* this source ends by returning REMOVE */
                g_ptr_array_remove_index(store->fds, i);
                break;
        }
        return G_SOURCE_REMOVE;
}

void sluice_worker_fd_store_add(SluiceWorkerFdStore *store, const char *name, int fd)
{
        StoredFd *s;

        g_return_if_fail(store != NULL);
        if (fd < 0)
                return;
        if (!sluice_worker_fd_store_name_is_valid(name)) {
                g_autofree char *shown = g_strescape(name != NULL ? name : "(none)", NULL);

                g_warning("Share %s: refused to store an fd named \"%.64s\": not a valid name",
                          store->tag, shown);
                (void)close(fd);
                return;
        }
        if (fcntl(fd, F_GETFD) < 0) {
                g_warning("Share %s: refused to store \"%s\": not an open fd", store->tag, name);
                return;
        }
        if (find_same_file(store, fd) != NULL) {
                /* a resumed worker storing what it was given: held already */
                (void)close(fd);
                return;
        }
        if (store->fds->len >= SLUICE_WORKER_FD_STORE_MAX) {
                g_warning("Share %s: refused to store \"%s\": the store holds %u fds already",
                          store->tag, name, store->fds->len);
                (void)close(fd);
                return;
        }
        /* the service's copy must not leak into processes it runs later
         * except where worker.c places it on purpose */
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        s = g_new0(StoredFd, 1);
        s->name = g_strdup(name);
        s->fd = fd;
        /* no G_IO_IN: only the end of the other side matters, not its data */
        s->watch = g_unix_fd_add(fd, G_IO_HUP | G_IO_ERR, on_stored_fd_hangup, store);
        g_ptr_array_add(store->fds, s);
}

void sluice_worker_fd_store_remove(SluiceWorkerFdStore *store, const char *name)
{
        g_return_if_fail(store != NULL);
        for (guint i = store->fds->len; i > 0; i--) {
                StoredFd *s = g_ptr_array_index(store->fds, i - 1);

                if (g_strcmp0(s->name, name) == 0)
                        g_ptr_array_remove_index(store->fds, i - 1);
        }
}

void sluice_worker_fd_store_remove_all_but(SluiceWorkerFdStore *store, const char *keep)
{
        g_return_if_fail(store != NULL);
        for (guint i = store->fds->len; i > 0; i--) {
                StoredFd *s = g_ptr_array_index(store->fds, i - 1);

                if (g_strcmp0(s->name, keep) != 0)
                        g_ptr_array_remove_index(store->fds, i - 1);
        }
}

void sluice_worker_fd_store_clear(SluiceWorkerFdStore *store)
{
        g_return_if_fail(store != NULL);
        g_ptr_array_set_size(store->fds, 0);
}

guint sluice_worker_fd_store_count(SluiceWorkerFdStore *store)
{
        g_return_val_if_fail(store != NULL, 0);
        return store->fds->len;
}

gboolean sluice_worker_fd_store_has(SluiceWorkerFdStore *store, const char *name)
{
        g_return_val_if_fail(store != NULL, FALSE);
        for (guint i = 0; i < store->fds->len; i++)
                if (g_strcmp0(((StoredFd *)g_ptr_array_index(store->fds, i))->name, name) == 0)
                        return TRUE;
        return FALSE;
}

void sluice_worker_fd_store_foreach(SluiceWorkerFdStore *store,
                                    void (*fn)(const char *name, int fd, gpointer data),
                                    gpointer data)
{
        g_return_if_fail(store != NULL);
        for (guint i = 0; i < store->fds->len; i++) {
                StoredFd *s = g_ptr_array_index(store->fds, i);

                fn(s->name, s->fd, data);
        }
}

void sluice_worker_fd_store_set_sender(SluiceWorkerFdStore *store, pid_t pid)
{
        g_return_if_fail(store != NULL);
        store->sender = pid;
}

const char *sluice_worker_fd_store_get_notify_socket(SluiceWorkerFdStore *store)
{
        g_return_val_if_fail(store != NULL, NULL);
        return store->notify_socket;
}

static void close_fds(const int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                (void)close(fds[i]);
}

/* The text of one datagram, with the fds that came with it (consumed). */
static void handle_message(SluiceWorkerFdStore *store, const char *text, size_t len,
                           const int *fds, size_t n_fds)
{
        g_auto(GStrv) lines = NULL;
        g_autofree char *copy = NULL;
        gboolean store_it = FALSE, remove_it = FALSE;
        const char *name = NULL;

        if (memchr(text, '\0', len) != NULL || !g_utf8_validate(text, (gssize)len, NULL)) {
                g_warning("Share %s: refused a notify message that is not text", store->tag);
                close_fds(fds, n_fds);
                return;
        }
        copy = g_strndup(text, len);
        lines = g_strsplit(copy, "\n", -1);
        for (char **l = lines; *l != NULL; l++) {
                if (strcmp(*l, "FDSTORE=1") == 0)
                        store_it = TRUE;
                else if (strcmp(*l, "FDSTOREREMOVE=1") == 0)
                        remove_it = TRUE;
                else if (g_str_has_prefix(*l, "FDNAME="))
                        name = *l + strlen("FDNAME=");
                /* READY=1, STATUS=, STOPPING=1, WATCHDOG=1 …: not ours to use */
        }
        if (store_it && remove_it) {
                g_warning("Share %s: refused a notify message that both stores and removes",
                          store->tag);
                close_fds(fds, n_fds);
                return;
        }
        if (remove_it) {
                if (!sluice_worker_fd_store_name_is_valid(name))
                        g_warning("Share %s: refused to remove stored fds: no valid FDNAME", store->tag);
                else
                        sluice_worker_fd_store_remove(store, name);
                close_fds(fds, n_fds);
                return;
        }
        if (!store_it) {
                if (n_fds > 0)
                        g_warning("Share %s: closed %zu fds sent without FDSTORE=1", store->tag, n_fds);
                close_fds(fds, n_fds);
                return;
        }
        if (n_fds == 0)
                g_warning("Share %s: FDSTORE=1 without an fd", store->tag);
        for (size_t i = 0; i < n_fds; i++)
                sluice_worker_fd_store_add(store, name, fds[i]);
}

/* Reads one datagram; FALSE when none is queued. */
static gboolean receive_one(SluiceWorkerFdStore *store)
{
        char text[MESSAGE_MAX];
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * FDS_PER_MESSAGE)];
        } control;
        struct iovec iov = { .iov_base = text, .iov_len = sizeof(text) };
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        int fds[FDS_PER_MESSAGE];
        size_t n_fds = 0;
        const struct ucred *cred = NULL;
        ssize_t n;

        n = recvmsg(store->socket_fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                        g_warning("Share %s: reading the notify socket: %s", store->tag,
                                  g_strerror(errno));
                return errno == EINTR;
        }
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET)
                        continue;
                if (c->cmsg_type == SCM_RIGHTS) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

                        for (size_t i = 0; i < k && n_fds < FDS_PER_MESSAGE; i++)
                                memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                } else if (c->cmsg_type == SCM_CREDENTIALS &&
                           c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
                        cred = (const struct ucred *)(const void *)CMSG_DATA(c);
                }
        }
        if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
                g_warning("Share %s: refused a notify message too long for the store", store->tag);
                close_fds(fds, n_fds);
                return TRUE;
        }
        if (cred == NULL || store->sender == 0 || cred->pid != store->sender) {
                g_warning("Share %s: refused a notify message from pid %ld: not the share's worker",
                          store->tag, cred != NULL ? (long)cred->pid : -1L);
                close_fds(fds, n_fds);
                return TRUE;
        }
        handle_message(store, text, (size_t)n, fds, n_fds);
        return TRUE;
}

void sluice_worker_fd_store_drain(SluiceWorkerFdStore *store)
{
        g_return_if_fail(store != NULL);
        if (store->socket_fd < 0)
                return;
        /* bounded: a sender cannot keep the service here forever */
        for (guint i = 0; i < 4 * SLUICE_WORKER_FD_STORE_MAX && receive_one(store); i++)
                ;
}

static gboolean on_notify_readable(gint fd, GIOCondition condition, gpointer user_data)
{
        SluiceWorkerFdStore *store = user_data;

        /* a few per wake-up, so that one flooding sender cannot starve the loop */
        for (guint i = 0; i < 64 && receive_one(store); i++)
                ;
        return G_SOURCE_CONTINUE;
}

/* Every store may hold up to SLUICE_WORKER_FD_STORE_MAX fds, and a service
 * runs many workers: the soft limit on open files (often 1024) is raised to
 * the hard one, once, as systemd does for its own fd stores.  Failing that
 * (a hard limit as low), a store is refused fds by the kernel, not the
 * service: the worker then resumes nothing. */
static void raise_fd_limit(void)
{
        static gsize done;
        struct rlimit rl;

        if (!g_once_init_enter(&done))
                return;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        g_message("Could not raise the limit on open files: %s", g_strerror(errno));
        }
        g_once_init_leave(&done, 1);
}

gboolean sluice_worker_fd_store_listen(SluiceWorkerFdStore *store, GError **error)
{
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        socklen_t len = sizeof(sa_family_t);
        int one = 1;
        int fd;

        g_return_val_if_fail(store != NULL, FALSE);
        if (store->socket_fd >= 0)
                return TRUE;
        raise_fd_limit();
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                            "socket(AF_UNIX, SOCK_DGRAM): %s", g_strerror(errno));
                return FALSE;
        }
        /* SO_PASSCRED before the bind: every datagram carries its sender */
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *)&addr, len) < 0) {
                int saved = errno;

                (void)close(fd);
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                            "The worker's notify socket: %s", g_strerror(saved));
                return FALSE;
        }
        /* the name the kernel picked (autobind: "\0" + five hex digits) */
        len = sizeof(addr);
        if (getsockname(fd, (struct sockaddr *)&addr, &len) < 0 ||
            len <= offsetof(struct sockaddr_un, sun_path) + 1 || addr.sun_path[0] != '\0') {
                int saved = errno;

                (void)close(fd);
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                            "The worker's notify socket has no abstract name (%s)", g_strerror(saved));
                return FALSE;
        }
        store->notify_socket = g_strdup_printf("@%.*s",
                (int)(len - offsetof(struct sockaddr_un, sun_path) - 1), addr.sun_path + 1);
        store->socket_fd = fd;
        store->socket_watch = g_unix_fd_add(fd, G_IO_IN, on_notify_readable, store);
        return TRUE;
}
