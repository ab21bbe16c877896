/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-upgrade.c — restarting the workers one by one (worker-upgrade.h). */
#include "config.h"

#include "share.h"
#include "worker-upgrade.h"

struct _SluiceWorkerUpgrade {
        SluiceWorkerUpgradeShares shares;
        gpointer user_data;
        GPtrArray *round;       /* the shares still to restart (references) */
        gboolean again;         /* a change came during the round */
        GCancellable *cancellable;  /* cancelled when the upgrade is freed */
};

static void next_share(SluiceWorkerUpgrade *upgrade);

static void on_restarted(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GCancellable) cancellable = user_data;
        g_autoptr(GError) error = NULL;
        SluiceWorkerUpgrade *upgrade;

        /* the service went away meanwhile: nothing is left to go on with */
        if (g_cancellable_is_cancelled(cancellable))
                return;
        upgrade = g_object_get_data(G_OBJECT(cancellable), "upgrade");
        if (!sluice_worker_restart_finish(SLUICE_WORKER(source), result, &error)) {
                /* a binary that fails one share would fail the next too:
                 * the others keep the workers they have, and the next
                 * change on disk (a fixed package) starts a new round */
                g_warning("Restarting a worker into the new sluice-fs failed (%s): stopped restarting the "
                          "others; once sluice-fs works, restart them with “sluicectl restart”", error->message);
                g_clear_pointer(&upgrade->round, g_ptr_array_unref);
        }
        next_share(upgrade);
}

static void next_share(SluiceWorkerUpgrade *upgrade)
{
        while (upgrade->round != NULL && upgrade->round->len > 0) {
                g_autoptr(SluiceSharedFolder) share = g_ptr_array_steal_index(upgrade->round, 0);
                SluiceWorker *worker = sluice_shared_folder_get_worker(share);

                /* a share that is stopped starts the new binary anyway */
                if (worker == NULL || sluice_worker_get_control(worker) == NULL)
                        continue;
                g_message("%s: restarting its worker into the new sluice-fs", sluice_shared_folder_get_config(share)->tag);
                sluice_worker_restart_async(worker, on_restarted, g_object_ref(upgrade->cancellable));
                return;
        }
        g_clear_pointer(&upgrade->round, g_ptr_array_unref);
        if (upgrade->again) {
                upgrade->again = FALSE;
                sluice_worker_upgrade_run(upgrade);
        }
}

SluiceWorkerUpgrade *sluice_worker_upgrade_new(SluiceWorkerUpgradeShares shares, gpointer user_data)
{
        SluiceWorkerUpgrade *upgrade = g_new0(SluiceWorkerUpgrade, 1);

        upgrade->shares = shares;
        upgrade->user_data = user_data;
        upgrade->cancellable = g_cancellable_new();
        g_object_set_data(G_OBJECT(upgrade->cancellable), "upgrade", upgrade);
        return upgrade;
}

void sluice_worker_upgrade_run(SluiceWorkerUpgrade *upgrade)
{
        g_autoptr(GPtrArray) shares = NULL;

        if (upgrade->round != NULL) {
                upgrade->again = TRUE;
                return;
        }
        shares = upgrade->shares(upgrade->user_data);
        upgrade->round = g_ptr_array_new_with_free_func(g_object_unref);
        for (guint i = 0; i < shares->len; i++)
                g_ptr_array_add(upgrade->round, g_object_ref(shares->pdata[i]));
        next_share(upgrade);
}

void sluice_worker_upgrade_free(SluiceWorkerUpgrade *upgrade)
{
        if (upgrade == NULL)
                return;
        g_cancellable_cancel(upgrade->cancellable);
        g_object_set_data(G_OBJECT(upgrade->cancellable), "upgrade", NULL);
        g_object_unref(upgrade->cancellable);
        g_clear_pointer(&upgrade->round, g_ptr_array_unref);
        g_free(upgrade);
}
