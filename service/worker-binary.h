/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-binary.h — which sluice-fs program a share's worker runs.
 *
 * In order: $SLUICE_FS when set; the build tree's sluice-fs when this
 * process is the very sluice-service of that build tree (same file, and a
 * worker there only its owner may write), never for an installed copy; else
 * the installed one in LIBEXECDIR.  Apart from $SLUICE_FS, the answer is
 * decided once per process. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The path of the sluice-fs to run (never NULL; it may not exist). */
const char *sluice_worker_binary(void);
/* Why that sluice-fs cannot be run, for a person, with the fix for where it
 * was looked for; NULL when it can be run.  Free with g_free(). */
char *sluice_worker_binary_problem(void);

/* Noticing that the sluice-fs on disk changed (a package upgrade, a
 * rebuild): the path sluice_worker_binary() names now, symbolic links
 * resolved, is watched; CHANGED runs once the file is another one (device,
 * inode, size or time differ) and has stayed as it is for
 * SLUICE_WORKER_BINARY_SETTLE_MS, since an upgrade writes and renames in
 * steps.  A file that is not there or not executable at that moment is
 * waited for (the next change is looked at again). */
#define SLUICE_WORKER_BINARY_SETTLE_MS 1000
typedef struct _SluiceWorkerBinaryWatch SluiceWorkerBinaryWatch;
typedef void (*SluiceWorkerBinaryChanged)(const char *path, gpointer user_data);
/* NULL (logged) when the file cannot be watched. */
SluiceWorkerBinaryWatch *sluice_worker_binary_watch_new(SluiceWorkerBinaryChanged changed, gpointer user_data);
void sluice_worker_binary_watch_free(SluiceWorkerBinaryWatch *watch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceWorkerBinaryWatch, sluice_worker_binary_watch_free)

G_END_DECLS
