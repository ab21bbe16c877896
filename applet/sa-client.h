/* sa-client: the applet's view of org.sluice.Sluice1 — follows the service
 * coming and going (name watching) and keeps live lists of shares and VMs. */
#pragma once

#include <gio/gio.h>
#include "sa-share.h"

G_BEGIN_DECLS

#define SA_BUS_NAME "org.sluice.Sluice1"
#define SA_MANAGER_PATH "/org/sluice/Sluice1"
#define SA_MANAGER_IFACE "org.sluice.Sluice1.Manager"
#define SA_SHARE_IFACE "org.sluice.Sluice1.Share"
#define SA_VM_IFACE "org.sluice.Sluice1.Vm"

#define SA_TYPE_CLIENT (sa_client_get_type())
G_DECLARE_FINAL_TYPE(SaClient, sa_client, SA, CLIENT, GObject)

SaClient *sa_client_new(void);

/* TRUE while the service owns its bus name and its objects are loaded. */
gboolean sa_client_is_connected(SaClient *self);

/* GListModel of SaShare, in the order the service reported them. */
GListModel *sa_client_get_shares(SaClient *self);

/* GListModel of GDBusProxy (org.sluice.Sluice1.Vm): running VMs first, then by name. */
GListModel *sa_client_get_vms(SaClient *self);

SaShare *sa_client_find_share_by_path(SaClient *self, const char *path, const char *vm);
GDBusProxy *sa_client_find_vm(SaClient *self, const char *name);

void sa_client_add_share(SaClient *self, const char *path, const char *vm,
                         GVariant *options, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data);
/* Returns the new share's object path. */
char *sa_client_add_share_finish(SaClient *self, GAsyncResult *result, GError **error);

void sa_client_remove_share(SaClient *self, const char *object_path,
                            GAsyncReadyCallback callback, gpointer user_data);
gboolean sa_client_remove_share_finish(SaClient *self, GAsyncResult *result, GError **error);

/* Vm helpers over a generic proxy. */
char *sa_vm_dup_string(GDBusProxy *vm, const char *property);
gboolean sa_vm_get_shared_memory(GDBusProxy *vm);
gboolean sa_vm_is_running(GDBusProxy *vm);

/* A person-readable message from a D-Bus error: the service's named errors
 * carry a sentence meant for the user, so strip the remote-error prefix. */
char *sa_error_message(const GError *error);

G_END_DECLS
