/* SPDX-License-Identifier: GPL-2.0-or-later */
/* control.c — see control.h.  The vtable below must match
 * data/org.sluice.Worker1.xml (the one source of this interface). */
#include "control.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>
#include <unistd.h>

#include "log.h"

#define WORKER_PATH      "/org/sluice/Worker1"
#define WORKER_INTERFACE "org.sluice.Worker1"

struct control {
        sd_bus *bus;
        sd_event_source *post_source; /* see on_post() */
        struct fs_session *session;
        struct stats *stats;
        struct peer_policy *peers;
        bool connected;
        bool lost;
        struct control_resume resume;
        void (*on_lost)(void *userdata);
        void *userdata;
};

struct stats_append {
        sd_bus_message *m;
        int r;
};

static void append_stat(const char *key, uint64_t value, void *userdata)
{
        struct stats_append *a = userdata;

        if (a->r >= 0)
                a->r = sd_bus_message_append(a->m, "{sv}", key, "t", value);
}

static int method_get_stats(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        struct control *c = userdata;
        sd_bus_message *reply = NULL;
        struct stats_append a = { .r = 0 };
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        a.m = reply;
        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r >= 0) {
                stats_foreach(c->stats, append_stat, &a);
                r = a.r;
        }
        if (r >= 0)
                r = sd_bus_message_append(reply, "{sv}", "queues", "u", (uint32_t)c->stats->n_queues);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static int method_set_read_only(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        struct control *c = userdata;
        int readonly, r;

        r = sd_bus_message_read(m, "b", &readonly);
        if (r < 0)
                return r;
        if (fs_session_get_readonly(c->session) != !!readonly) {
                fs_session_set_readonly(c->session, readonly);
                log_info("control: share is now %s", readonly ? "read-only" : "read-write");
                (void)sd_bus_emit_properties_changed(c->bus, WORKER_PATH, WORKER_INTERFACE,
                                                     "ReadOnly", NULL);
        }
        return sd_bus_reply_method_return(m, NULL);
}

static int method_set_names(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        struct control *c = userdata;
        const char *names_s, *case_s;
        enum fs_names_mode names, old_names;
        enum fs_case_mode case_mode, old_case;
        int r;

        r = sd_bus_message_read(m, "ss", &names_s, &case_s);
        if (r < 0)
                return r;
        if (options_names_parse(names_s, &names) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "unknown names mode '%s' (posix or windows)", names_s);
        if (options_case_parse(case_s, &case_mode) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "unknown case mode '%s' (sensitive or insensitive)", case_s);
        fs_session_get_names(c->session, &old_names, &old_case);
        if (names != old_names || case_mode != old_case) {
                fs_session_set_names(c->session, names, case_mode);
                log_info("control: names are now %s, case %s", options_names_name(names),
                         options_case_name(case_mode));
                (void)sd_bus_emit_properties_changed(c->bus, WORKER_PATH, WORKER_INTERFACE,
                                                     "Names", "Case", NULL);
        }
        return sd_bus_reply_method_return(m, NULL);
}

static int method_set_peer_pid(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        struct control *c = userdata;
        uint32_t pid;
        int r;

        r = sd_bus_message_read(m, "u", &pid);
        if (r < 0)
                return r;
        if (pid > INT32_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "%u is no process id", pid);
        r = peer_policy_set_pid(c->peers, (pid_t)pid);
        if (r == -ESRCH)
                return sd_bus_error_setf(error, SD_BUS_ERROR_UNIX_PROCESS_ID_UNKNOWN,
                                         "no process %u", pid);
        if (r < 0)
                return r;
        if (pid)
                log_info("control: accepting a frontend from process %u only", pid);
        else
                log_info("control: accepting a frontend from any process of an allowed user");
        return sd_bus_reply_method_return(m, NULL);
}

static int property_get(sd_bus *bus, const char *path, const char *interface,
                        const char *property, sd_bus_message *reply, void *userdata,
                        sd_bus_error *error)
{
        struct control *c = userdata;
        int v;

        if (strcmp(property, "ReadOnly") == 0)
                v = fs_session_get_readonly(c->session);
        else
                v = c->connected;
        return sd_bus_message_append(reply, "b", v);
}

static int names_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                     sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        struct control *c = userdata;
        enum fs_names_mode names;
        enum fs_case_mode case_mode;

        fs_session_get_names(c->session, &names, &case_mode);
        return sd_bus_message_append(reply, "s", strcmp(property, "Names") == 0
                                                 ? options_names_name(names)
                                                 : options_case_name(case_mode));
}

/* Worker1.Resume: an empty dict when the worker started fresh with no
 * stored state; else the keys the interface XML documents. */
static int resume_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                      sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        const struct control_resume *r = &((struct control *)userdata)->resume;
        int k;

        k = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (k >= 0 && r->had_state) {
                k = sd_bus_message_append(reply, "{sv}", "resumed", "b", (int)r->resumed);
                if (k >= 0 && r->why_not[0])
                        k = sd_bus_message_append(reply, "{sv}", "why-not", "s", r->why_not);
                if (k >= 0)
                        k = sd_bus_message_append(reply, "{sv}", "replayed", "u", r->replayed);
                if (k >= 0)
                        k = sd_bus_message_append(reply, "{sv}", "failed", "u", r->failed);
                if (k >= 0)
                        k = sd_bus_message_append(reply, "{sv}", "handed-over", "b",
                                                  (int)r->handed_over);
        }
        if (k >= 0)
                k = sd_bus_message_close_container(reply);
        return k;
}

static const sd_bus_vtable worker_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("GetStats", "", "a{sv}", method_get_stats, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("SetReadOnly", "b", "", method_set_read_only, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("SetNames", "ss", "", method_set_names, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("SetPeerPid", "u", "", method_set_peer_pid, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL("PeerRefused", "uus", 0),
        SD_BUS_PROPERTY("ReadOnly", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Names", "s", names_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Case", "s", names_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Connected", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Resume", "a{sv}", resume_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END,
};

/* sd-bus synthesises org.freedesktop.DBus.Local.Disconnected when the peer hangs up. */
static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        struct control *c = userdata;

        if (c->lost)
                return 0;
        c->lost = true;
        log_info("control: the supervisor closed the control connection");
        if (c->on_lost)
                c->on_lost(c->userdata);
        return 0;
}

/* sd-bus 252 reads the peer's first method call together with the end of the
 * authentication and then waits for more input before it parses it: the call
 * stalls until the peer sends something else.  A post source (it runs after
 * every dispatch of another source, the bus's own I/O included) drains what is
 * already buffered, so the first call is answered at once. */
static int on_post(sd_event_source *s, void *userdata)
{
        struct control *c = userdata;

        while (!c->lost && sd_bus_process(c->bus, NULL) > 0)
                ;
        return 0;
}

int control_start(sd_event *event, int fd, struct fs_session *session, struct stats *stats,
                  struct peer_policy *peers, void (*on_lost)(void *userdata), void *userdata,
                  struct control **ret)
{
        struct control *c;
        sd_id128_t id;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        c->session = session;
        c->stats = stats;
        c->peers = peers;
        c->on_lost = on_lost;
        c->userdata = userdata;

        r = sd_bus_new(&c->bus);
        if (r < 0) {
                close(fd);
                free(c);
                return r;
        }
        /* From here the bus owns fd. */
        r = sd_bus_set_fd(c->bus, fd, fd);
        if (r < 0)
                close(fd);
        if (r >= 0)
                r = sd_id128_randomize(&id);
        if (r >= 0)
                r = sd_bus_set_server(c->bus, 1, id);
        if (r >= 0)
                r = sd_bus_set_anonymous(c->bus, 1);
        if (r >= 0)
                r = sd_bus_add_object_vtable(c->bus, NULL, WORKER_PATH, WORKER_INTERFACE,
                                             worker_vtable, c);
        if (r >= 0)
                r = sd_bus_match_signal(c->bus, NULL, NULL, "/org/freedesktop/DBus/Local",
                                        "org.freedesktop.DBus.Local", "Disconnected",
                                        on_disconnected, c);
        if (r >= 0)
                r = sd_bus_start(c->bus);
        if (r >= 0)
                r = sd_bus_attach_event(c->bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_event_add_post(event, &c->post_source, on_post, c);
        if (r < 0) {
                log_error("control: cannot serve the control connection: %s", strerror(-r));
                sd_bus_unref(c->bus);
                free(c);
                return r;
        }
        *ret = c;
        return 0;
}

void control_peer_refused(struct control *c, pid_t pid, uid_t uid, const char *reason)
{
        if (c && !c->lost)
                (void)sd_bus_emit_signal(c->bus, WORKER_PATH, WORKER_INTERFACE, "PeerRefused", "uus",
                                         (uint32_t)pid, (uint32_t)uid, reason);
}

void control_set_connected(struct control *c, bool connected)
{
        if (!c || c->connected == connected)
                return;
        c->connected = connected;
        if (!c->lost)
                (void)sd_bus_emit_properties_changed(c->bus, WORKER_PATH, WORKER_INTERFACE,
                                                     "Connected", NULL);
}

void control_set_resume(struct control *c, const struct control_resume *r)
{
        if (c)
                c->resume = *r;
}

void control_free(struct control *c)
{
        if (!c)
                return;
        sd_event_source_disable_unref(c->post_source);
        sd_bus_detach_event(c->bus);
        sd_bus_flush_close_unref(c->bus);
        free(c);
}
