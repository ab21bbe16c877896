/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-connection.c — see vm-connection.h.
 *
 * The connection is reference-counted: libvirt holds references for the
 * device-event callbacks and drops them in whatever thread deregisters them,
 * and opens and teardowns in threads hold one until they are done (the close
 * callback is unregistered under one); the owner's reference ends with
 * _free(), after which nothing is reported (dead).  Every field but the refcount and the uri is
 * used in the main thread only. */
#include "config.h"

#include "vm-connection.h"

#include <libvirt/libvirt.h>

#define RECONNECT_MIN_S 1
#define RECONNECT_MAX_S 10

/* What an open connection consists of. */
typedef struct {
        GVirConnection *conn;
        virConnectPtr raw;        /* our reference, for the raw callbacks */
        int device_removed_id;
        int device_added_id;
        int agent_id;
        gboolean close_registered;
} Handles;

struct _SluiceVmConnection {
        char *uri;
        SluiceVmConnectionEvents events;
        gpointer user_data;
        gboolean dead;            /* _free() was called */
        GCancellable *cancellable; /* pending opens and fetches */
        Handles h;                /* h.conn NULL while disconnected */
        gulong added_id, removed_id;
        guint retry_source;
        guint lost_source;
        guint retry_delay_s;
        gboolean started;
        gboolean connecting;
        gboolean ever_connected;
        gboolean warned;          /* an unreachable URI is logged once */
};

/* What an open (or a teardown) works on, outside the connection. */
typedef struct {
        SluiceVmConnection *owner; /* a reference */
        Handles h;
} RawLink;

static void handles_reset(Handles *h)
{
        *h = (Handles){ .device_removed_id = -1, .device_added_id = -1, .agent_id = -1 };
}

/* Hands what from holds over to to (which held nothing). */
static void handles_move(Handles *to, Handles *from)
{
        *to = *from;
        handles_reset(from);
}

static void schedule_reconnect(SluiceVmConnection *self);
static void connection_connect(SluiceVmConnection *self);

static SluiceVmConnection *connection_ref(SluiceVmConnection *self)
{
        return g_atomic_rc_box_acquire(self);
}

static void connection_clear(gpointer data)
{
        SluiceVmConnection *self = data;

        g_free(self->uri);
        g_clear_object(&self->cancellable);
}

static void connection_unref(gpointer data)
{
        g_atomic_rc_box_release_full(data, connection_clear);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceVmConnection, connection_unref)

/* ---- raw callbacks (dispatched by libvirt's event loop: the main thread) ---- */

static void on_connection_closed(virConnectPtr conn, int reason, void *opaque);

static gboolean is_current(SluiceVmConnection *self, virConnectPtr conn)
{
        return !self->dead && self->h.raw && conn == self->h.raw;
}

static void on_device_event(SluiceVmConnection *self, virConnectPtr conn, virDomainPtr domain,
                            const char *alias, gboolean added)
{
        char uuid[VIR_UUID_STRING_BUFLEN];

        /* a callback of a connection already replaced says nothing about this one */
        if (!is_current(self, conn) || virDomainGetUUIDString(domain, uuid) < 0)
                return;
        if (added && self->events.device_added)
                self->events.device_added(self, uuid, alias, self->user_data);
        else if (!added && self->events.device_removed)
                self->events.device_removed(self, uuid, alias, self->user_data);
}

static void on_device_removed(virConnectPtr conn, virDomainPtr domain, const char *alias, void *opaque)
{
        on_device_event(opaque, conn, domain, alias, FALSE);
}

static void on_device_added(virConnectPtr conn, virDomainPtr domain, const char *alias, void *opaque)
{
        on_device_event(opaque, conn, domain, alias, TRUE);
}

static void on_agent_lifecycle(virConnectPtr conn, virDomainPtr domain, int state, int reason, void *opaque)
{
        SluiceVmConnection *self = opaque;
        char uuid[VIR_UUID_STRING_BUFLEN];

        if (!is_current(self, conn) || !self->events.agent_changed || virDomainGetUUIDString(domain, uuid) < 0)
                return;
        if (state == VIR_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_CONNECTED ||
            state == VIR_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_DISCONNECTED)
                self->events.agent_changed(self, uuid,
                                           state == VIR_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_CONNECTED,
                                           self->user_data);
}

/* ---- opening and closing (worker threads) ---------------------------------------- */

static void raw_link_teardown(RawLink *l)
{
        if (l->h.raw) {
                if (l->h.device_removed_id >= 0)
                        (void)virConnectDomainEventDeregisterAny(l->h.raw, l->h.device_removed_id);
                if (l->h.device_added_id >= 0)
                        (void)virConnectDomainEventDeregisterAny(l->h.raw, l->h.device_added_id);
                if (l->h.agent_id >= 0)
                        (void)virConnectDomainEventDeregisterAny(l->h.raw, l->h.agent_id);
                if (l->h.close_registered)
                        (void)virConnectUnregisterCloseCallback(l->h.raw, on_connection_closed);
                virConnectClose(l->h.raw);
        }
        g_clear_object(&l->h.conn); /* libvirt-glib deregisters and closes its own */
        handles_reset(&l->h);
}

static void raw_link_free(gpointer data)
{
        RawLink *l = data;

        raw_link_teardown(l);
        connection_unref(l->owner);
        g_free(l);
}

static RawLink *raw_link_new(SluiceVmConnection *owner)
{
        RawLink *l = g_new0(RawLink, 1);

        l->owner = connection_ref(owner);
        handles_reset(&l->h);
        return l;
}

/* The callback holds a reference to the connection until it is deregistered. */
static int register_domain_event(RawLink *l, int event, virConnectDomainEventGenericCallback callback)
{
        int id = virConnectDomainEventRegisterAny(l->h.raw, NULL, event, callback, connection_ref(l->owner),
                                                  connection_unref);

        if (id < 0)
                connection_unref(l->owner);
        return id;
}

static void open_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        RawLink *l = task_data;
        GError *error = NULL;

        l->h.conn = gvir_connection_new(l->owner->uri);
        if (!gvir_connection_open(l->h.conn, cancellable, &error)) {
                g_task_return_error(task, error);
                return;
        }
        g_object_get(l->h.conn, "handle", &l->h.raw, NULL); /* a new reference */
        if (l->h.raw) {
                /* without it a stalled libvirtd keeps every call waiting forever;
                 * drivers without keepalive (test:///) refuse, harmlessly */
                (void)virConnectSetKeepAlive(l->h.raw, SLUICE_VM_KEEPALIVE_INTERVAL_S,
                                             SLUICE_VM_KEEPALIVE_COUNT);
                /* no reference for this one: drivers without close callbacks
                 * (test:///) accept it without ever freeing it; every teardown
                 * holds a reference until it has unregistered it */
                l->h.close_registered =
                        virConnectRegisterCloseCallback(l->h.raw, on_connection_closed, l->owner, NULL) == 0;
                l->h.device_removed_id = register_domain_event(l, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
                                                               VIR_DOMAIN_EVENT_CALLBACK(on_device_removed));
                l->h.device_added_id = register_domain_event(l, VIR_DOMAIN_EVENT_ID_DEVICE_ADDED,
                                                             VIR_DOMAIN_EVENT_CALLBACK(on_device_added));
                /* libvirt-glib has no signal for the agent's coming and going either */
                l->h.agent_id = register_domain_event(l, VIR_DOMAIN_EVENT_ID_AGENT_LIFECYCLE,
                                                      VIR_DOMAIN_EVENT_CALLBACK(on_agent_lifecycle));
        }
        g_task_return_boolean(task, TRUE);
}

static void teardown_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        raw_link_teardown(task_data);
        g_task_return_boolean(task, TRUE);
}

/* Gives the connection up; the closing calls run in a thread (a stalled
 * libvirtd must not hold the main loop), or here when the owner is gone. */
static void connection_drop(SluiceVmConnection *self, gboolean in_thread)
{
        RawLink *l;

        if (self->h.conn) {
                g_clear_signal_handler(&self->added_id, self->h.conn);
                g_clear_signal_handler(&self->removed_id, self->h.conn);
        }
        if (!self->h.conn && !self->h.raw)
                return;
        l = raw_link_new(self);
        handles_move(&l->h, &self->h);
        if (in_thread) {
                g_autoptr(GTask) task = g_task_new(NULL, NULL, NULL, NULL);
                g_task_set_task_data(task, l, raw_link_free);
                g_task_run_in_thread(task, teardown_thread);
        } else {
                raw_link_free(l);
        }
        if (self->events.lost)
                self->events.lost(self, self->user_data);
}

/* ---- main thread ------------------------------------------------------------------- */

static gboolean on_lost_idle(gpointer data)
{
        SluiceVmConnection *self = data;

        self->lost_source = 0;
        g_message("libvirt connection %s closed; reconnecting", self->uri);
        connection_drop(self, TRUE);
        self->retry_delay_s = RECONNECT_MIN_S;
        schedule_reconnect(self);
        return G_SOURCE_REMOVE;
}

static void on_connection_closed(virConnectPtr conn, int reason, void *opaque)
{
        SluiceVmConnection *self = opaque;

        /* never tear a connection down inside its own callback */
        if (is_current(self, conn) && !self->lost_source)
                self->lost_source = g_idle_add(on_lost_idle, self);
}

static void on_domain_added(GVirConnection *conn, GVirDomain *domain, gpointer user_data)
{
        SluiceVmConnection *self = user_data;

        if (self->events.domain_added)
                self->events.domain_added(self, domain, self->user_data);
}

static void on_domain_removed(GVirConnection *conn, GVirDomain *domain, gpointer user_data)
{
        SluiceVmConnection *self = user_data;

        if (self->events.domain_removed)
                self->events.domain_removed(self, domain, self->user_data);
}

static void on_domains_fetched(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceVmConnection) self = user_data;
        GVirConnection *conn = GVIR_CONNECTION(source);
        g_autoptr(GError) error = NULL;
        GList *domains;

        if (!gvir_connection_fetch_domains_finish(conn, result, &error)) {
                /* cancelled: the connection was freed */
                if (self->dead || self->h.conn != conn)
                        return;
                g_warning("libvirt %s: cannot list domains: %s", self->uri, error->message);
                connection_drop(self, TRUE);
                schedule_reconnect(self);
                return;
        }
        if (self->dead || self->h.conn != conn)
                return;
        domains = gvir_connection_get_domains(conn);
        for (GList *l = domains; l; l = l->next)
                on_domain_added(conn, l->data, self);
        g_list_free_full(domains, g_object_unref);
        if (self->events.domains_listed)
                self->events.domains_listed(self, self->user_data);
}

static void on_opened(GObject *source, GAsyncResult *result, gpointer user_data)
{
        SluiceVmConnection *self = user_data;
        GTask *task = G_TASK(result);
        RawLink *l = g_task_get_task_data(task);
        g_autoptr(GError) error = NULL;

        if (!g_task_propagate_boolean(task, &error) &&
            g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return; /* freed meanwhile: the task data closes what was opened */
        self->connecting = FALSE;
        if (error) {
                if (!self->warned)
                        g_message("libvirt %s not reachable (%s); retrying", self->uri, error->message);
                self->warned = TRUE;
                schedule_reconnect(self);
                return;
        }
        if (!self->started)
                return;

        handles_move(&self->h, &l->h);
        self->warned = FALSE;
        self->retry_delay_s = RECONNECT_MIN_S;
        self->added_id = g_signal_connect(self->h.conn, "domain-added", G_CALLBACK(on_domain_added), self);
        self->removed_id = g_signal_connect(self->h.conn, "domain-removed", G_CALLBACK(on_domain_removed), self);
        if (self->ever_connected)
                g_message("libvirt %s connected again", self->uri);
        else
                g_debug("libvirt %s connected", self->uri);
        self->ever_connected = TRUE;
        gvir_connection_fetch_domains_async(self->h.conn, self->cancellable, on_domains_fetched,
                                            connection_ref(self));
}

static void connection_connect(SluiceVmConnection *self)
{
        g_autoptr(GTask) task = NULL;

        if (self->connecting || self->h.conn || !self->started)
                return;
        self->connecting = TRUE;
        task = g_task_new(NULL, self->cancellable, on_opened, self);
        g_task_set_task_data(task, raw_link_new(self), raw_link_free);
        g_task_run_in_thread(task, open_thread);
}

static gboolean on_retry(gpointer data)
{
        SluiceVmConnection *self = data;

        self->retry_source = 0;
        connection_connect(self);
        return G_SOURCE_REMOVE;
}

static void schedule_reconnect(SluiceVmConnection *self)
{
        if (self->retry_source || !self->started)
                return;
        self->retry_source = g_timeout_add_seconds(self->retry_delay_s, on_retry, self);
        self->retry_delay_s = MIN(self->retry_delay_s * 2, RECONNECT_MAX_S);
}

/* ---- public -------------------------------------------------------------------------- */

SluiceVmConnection *sluice_vm_connection_new(const char *uri, const SluiceVmConnectionEvents *events,
                                             gpointer user_data)
{
        SluiceVmConnection *self = g_atomic_rc_box_new0(SluiceVmConnection);

        self->uri = g_strdup(uri);
        self->events = *events;
        self->user_data = user_data;
        self->cancellable = g_cancellable_new();
        handles_reset(&self->h);
        self->retry_delay_s = RECONNECT_MIN_S;
        return self;
}

void sluice_vm_connection_start(SluiceVmConnection *self)
{
        if (self->started)
                return;
        self->started = TRUE;
        connection_connect(self);
}

const char *sluice_vm_connection_get_uri(SluiceVmConnection *self)
{
        return self->uri;
}

gboolean sluice_vm_connection_is_up(SluiceVmConnection *self)
{
        return self->h.conn != NULL;
}

virConnectPtr sluice_vm_connection_ref_raw(SluiceVmConnection *self)
{
        if (self->h.conn == NULL || self->h.raw == NULL || virConnectRef(self->h.raw) < 0)
                return NULL;
        return self->h.raw;
}

void sluice_vm_connection_free(SluiceVmConnection *self)
{
        if (!self)
                return;
        self->started = FALSE;
        g_cancellable_cancel(self->cancellable);
        g_clear_handle_id(&self->retry_source, g_source_remove);
        g_clear_handle_id(&self->lost_source, g_source_remove);
        /* the service stops: closing here is fine, and nothing is reported */
        self->events.lost = NULL;
        connection_drop(self, FALSE);
        self->dead = TRUE;
        connection_unref(self);
}
