/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-folder-check.c — see share-folder-check.h. */
#include "config.h"

#include <unistd.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "share-folder-check.h"

typedef struct {
        char *path;
        SluiceFolderId expected;  /* unknown at the first start after loading */
        SluiceFolderId found;     /* written by the thread, read once it is done */
        int fd;                   /* the open folder until _finish takes it; -1: none */
} FolderCheck;

/* Runs when the task goes: a folder nobody took (the check was cancelled,
 * or its caller went away) is closed here, not leaked. */
static void folder_check_free(gpointer data)
{
        FolderCheck *check = data;

        if (check->fd >= 0)
                (void)close(check->fd);
        g_free(check->path);
        g_free(check);
}

static void folder_check_thread(GTask *task, gpointer source, gpointer task_data,
                                GCancellable *cancellable)
{
        FolderCheck *check = task_data;
        GError *error = NULL;

        /* One folder at a time, following no link: a link or another folder
         * on the path is refused here, saying which. */
        check->fd = sluice_share_path_open(check->path, &check->expected, &check->found, &error);
        if (check->fd < 0) {
                g_task_return_error(task, error);
                return;
        }
        /* The path, opened without a link, is a real path: still a place
         * that may be shared (a folder mounted over it can make it a system
         * one)?  A refused folder is closed with the task. */
        if (!sluice_share_path_check_location(check->path, &error)) {
                g_task_return_error(task, error);
                return;
        }
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
        check->fd = -1;
        g_task_set_source_tag(task, sluice_share_folder_check_async);
        g_task_set_task_data(task, check, folder_check_free);
        g_task_run_in_thread(task, folder_check_thread);
}

int sluice_share_folder_check_finish(GAsyncResult *result, SluiceFolderId *ret_found,
                                     GError **error)
{
        FolderCheck *check = g_task_get_task_data(G_TASK(result));
        int fd;

        g_return_val_if_fail(g_task_is_valid(result, NULL), -1);
        if (!g_task_propagate_boolean(G_TASK(result), error))
                return -1;
        if (ret_found != NULL)
                *ret_found = check->found;
        fd = check->fd;
        check->fd = -1;
        return fd;
}
