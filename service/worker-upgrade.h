/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-upgrade.h — after the sluice-fs on disk changed (worker-binary.h's
 * watch), the running shares' workers are restarted into it one at a time,
 * the next once the previous is ready again, so a package upgrade reaches
 * every share without taking one from its guest (the hand-over of
 * sluice_worker_restart_async).  One at a time: a new binary that cannot
 * start (or cannot take a worker's state over) fails the first share only;
 * the round stops there and the others keep the workers they have. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _SluiceWorkerUpgrade SluiceWorkerUpgrade;
/* The shares (SluiceSharedFolder) to restart now; a new array. */
typedef GPtrArray *(*SluiceWorkerUpgradeShares)(gpointer user_data);

SluiceWorkerUpgrade *sluice_worker_upgrade_new(SluiceWorkerUpgradeShares shares, gpointer user_data);
/* The binary changed: a round over the shares; one asked for during a
 * round runs after it (the workers restarted early may have missed the
 * latest file). */
void sluice_worker_upgrade_run(SluiceWorkerUpgrade *upgrade);
void sluice_worker_upgrade_free(SluiceWorkerUpgrade *upgrade);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceWorkerUpgrade, sluice_worker_upgrade_free)

G_END_DECLS
