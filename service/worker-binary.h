/* SPDX-License-Identifier: GPL-2.0-or-later */
/* worker-binary.h — which sluice-fs program a share's worker runs.
 *
 * In order: $SLUICE_FS when set; the build tree's sluice-fs when this
 * process is the very sluice-service of that build tree (same file, and a
 * worker there only its owner may write), never for an installed copy; else
 * the installed one in LIBEXECDIR.  Apart from $SLUICE_FS, the answer is
 * decided once per process. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The path of the sluice-fs to run (never NULL; it may not exist). */
const char *sluice_worker_binary(void);
/* Why that sluice-fs cannot be run, for a person, with the fix for where it
 * was looked for; NULL when it can be run.  Free with g_free(). */
char *sluice_worker_binary_problem(void);

G_END_DECLS
