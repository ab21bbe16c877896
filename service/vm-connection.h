/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-connection.h — one libvirt connection (URI) of the VM manager: opening
 * it, the raw callbacks libvirt-glib lacks (close, device added/removed,
 * guest agent (dis)connected),
 * and reconnecting with backoff when libvirtd goes away or stops answering.
 *
 * Opening, registering callbacks and closing wait on libvirtd: they run in
 * GTask worker threads, never in the main thread.  Client keepalive is on, so
 * a libvirtd that stalls (stopped, hung) closes the connection after
 * SLUICE_VM_KEEPALIVE_S-ish seconds: every call waiting on it then fails
 * instead of hanging, and the connection is opened anew.  The owner hears
 * about everything through SluiceVmConnectionEvents, in the main thread. */
#pragma once

#include <libvirt-gobject/libvirt-gobject.h>

G_BEGIN_DECLS

/* keepalive: a probe every INTERVAL s, the connection is dead after COUNT
 * unanswered ones: a stalled libvirtd is noticed within about 20 s */
#define SLUICE_VM_KEEPALIVE_INTERVAL_S 5
#define SLUICE_VM_KEEPALIVE_COUNT 3

typedef struct _SluiceVmConnection SluiceVmConnection;

typedef struct {
        /* a domain appeared (also every domain listed after connecting) */
        void (*domain_added)(SluiceVmConnection *connection, GVirDomain *domain, gpointer user_data);
        void (*domain_removed)(SluiceVmConnection *connection, GVirDomain *domain, gpointer user_data);
        /* the list after (re)connecting is complete: domains not passed to
         * domain_added since the connection was lost are gone */
        void (*domains_listed)(SluiceVmConnection *connection, gpointer user_data);
        /* the connection is down: the GVirDomains it gave are stale */
        void (*lost)(SluiceVmConnection *connection, gpointer user_data);
        void (*device_added)(SluiceVmConnection *connection, const char *uuid, const char *alias,
                             gpointer user_data);
        void (*device_removed)(SluiceVmConnection *connection, const char *uuid, const char *alias,
                               gpointer user_data);
        /* the guest agent of a running domain opened (connected TRUE) or
         * closed its end of the channel */
        void (*agent_changed)(SluiceVmConnection *connection, const char *uuid, gboolean connected,
                              gpointer user_data);
} SluiceVmConnectionEvents;

SluiceVmConnection *sluice_vm_connection_new(const char *uri, const SluiceVmConnectionEvents *events,
                                             gpointer user_data);
/* Connects (asynchronously; a libvirtd that is not running is retried). */
void sluice_vm_connection_start(SluiceVmConnection *connection);
const char *sluice_vm_connection_get_uri(SluiceVmConnection *connection);
/* Whether the connection is up. */
gboolean sluice_vm_connection_is_up(SluiceVmConnection *connection);
/* A new reference to the raw connection (virConnectClose it; usable in any
 * thread), or NULL while it is down. */
virConnectPtr sluice_vm_connection_ref_raw(SluiceVmConnection *connection);
/* Stops and frees; nothing is reported afterwards. */
void sluice_vm_connection_free(SluiceVmConnection *connection);

G_END_DECLS
