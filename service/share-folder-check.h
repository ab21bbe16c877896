/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-folder-check.h — before each start, whether the share's folder is
 * still the folder that was shared.  The folder was resolved when the share
 * was added: if a link took its place since, the worker would serve
 * wherever it points now.  Runs in a thread: realpath and statfs of a
 * network folder can hang. */
#pragma once

#include <gio/gio.h>

#include "share-path.h"

G_BEGIN_DECLS

/* PATH: the share's real path; EXPECTED: the folder recorded for it (not
 * known at the first start after loading shares.ini).  Cancelling drops
 * the answer (G_IO_ERROR_CANCELLED). */
void sluice_share_folder_check_async(const char *path, const SluiceFolderId *expected,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data);
/* On success ret_found is the folder that was opened, the way each launch
 * of the worker opens it. */
gboolean sluice_share_folder_check_finish(GAsyncResult *result, SluiceFolderId *ret_found,
                                          GError **error);

G_END_DECLS
