/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-folder-check.c — see share-folder-check.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "share-folder-check.h"

typedef struct {
        char *path;
        SluiceFolderId expected;  /* unknown at the first start after loading */
        SluiceFolderId found;     /* written by the thread, read once it is done */
} FolderCheck;

static void folder_check_free(gpointer data)
{
        FolderCheck *check = data;

        g_free(check->path);
        g_free(check);
}

static void folder_check_thread(GTask *task, gpointer source, gpointer task_data,
                                GCancellable *cancellable)
{
        FolderCheck *check = task_data;
        const char *path = check->path;
        g_autofree char *real = realpath(path, NULL);
        GError *error = NULL;
        int fd;

        if (real != NULL && strcmp(real, path) != 0) {
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_NOT_SHAREABLE,
                        _("“%s” is no longer the folder that was shared: it now leads to “%s”. Sluice does not follow it there; remove the share and add the folder you mean"),
                        path, real);
                return;
        }
        if (real != NULL && !sluice_share_path_check_location(real, &error)) {
                g_task_return_error(task, error);
                return;
        }
        /* Opened the way each launch of the worker opens it (worker.c): a
         * share loaded from shares.ini has its folder recorded here. */
        fd = sluice_share_path_open(path, &check->expected, &check->found, &error);
        if (fd < 0) {
                g_task_return_error(task, error);
                return;
        }
        (void)close(fd);
        g_task_return_boolean(task, TRUE);
}

void sluice_share_folder_check_async(const char *path, const SluiceFolderId *expected,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, user_data);
        FolderCheck *check = g_new0(FolderCheck, 1);

        check->path = g_strdup(path);
        check->expected = *expected;
        g_task_set_task_data(task, check, folder_check_free);
        g_task_run_in_thread(task, folder_check_thread);
}

gboolean sluice_share_folder_check_finish(GAsyncResult *result, SluiceFolderId *ret_found,
                                          GError **error)
{
        FolderCheck *check = g_task_get_task_data(G_TASK(result));

        if (!g_task_propagate_boolean(G_TASK(result), error))
                return FALSE;
        *ret_found = check->found;
        return TRUE;
}
