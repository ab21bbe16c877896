/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-folder-check.h — whether the share's folder is still the folder
 * that was shared, and the folder itself, opened.  The folder was resolved
 * when the share was added: if a link or another folder took its place since,
 * a worker would serve wherever it leads now.  The share checks before it
 * starts (and says what is wrong); the worker checks again before every
 * launch, restarts too, and serves the folder this opened (--shared-dir-fd),
 * so nothing resolves the path between the check and serving.  Runs in a
 * thread: realpath and statfs of a network folder can hang. */
#pragma once

#include <gio/gio.h>

#include "share-path.h"

G_BEGIN_DECLS

/* PATH: the share's real path; EXPECTED: the folder recorded for it (not
 * known at the first start after loading shares.ini).  Cancelling drops
 * the answer (G_IO_ERROR_CANCELLED) and closes what was opened. */
void sluice_share_folder_check_async(const char *path, const SluiceFolderId *expected,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data);
/* The folder, open (O_PATH|O_DIRECTORY; the caller closes it), or -1 with
 * ERROR saying what is wrong.  ret_found (may be NULL): the folder's id. */
int sluice_share_folder_check_finish(GAsyncResult *result, SluiceFolderId *ret_found,
                                     GError **error);

G_END_DECLS
