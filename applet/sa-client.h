/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-client: the applet's view of org.sluice.Sluice1 — follows the service
 * coming and going (name watching) and keeps live lists of shares and VMs,
 * through the generated proxies of common/. */
#pragma once

#include <gio/gio.h>

#include "errors.h"
#include "sa-share.h"
#include "sa-vm.h"

G_BEGIN_DECLS

#define SA_TYPE_CLIENT (sa_client_get_type())
G_DECLARE_FINAL_TYPE(SaClient, sa_client, SA, CLIENT, GObject)

SaClient *sa_client_new(void);

/* TRUE while the service owns its bus name and its objects are loaded. */
gboolean sa_client_is_connected(SaClient *self);

/* GListModel of SaShare, in the order the service reported them. */
GListModel *sa_client_get_shares(SaClient *self);

/* GListModel of SluiceVm: running VMs first, then by name. */
GListModel *sa_client_get_vms(SaClient *self);

SaShare *sa_client_find_share_by_path(SaClient *self, const char *path, const char *vm);
SluiceVm *sa_client_find_vm(SaClient *self, const char *name);

void sa_client_add_share(SaClient *self, const char *path, const char *vm,
                         GVariant *options, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data);
/* Returns the new share's object path. */
char *sa_client_add_share_finish(SaClient *self, GAsyncResult *result, GError **error);

void sa_client_remove_share(SaClient *self, const char *object_path,
                            GAsyncReadyCallback callback, gpointer user_data);
gboolean sa_client_remove_share_finish(SaClient *self, GAsyncResult *result, GError **error);

G_END_DECLS
