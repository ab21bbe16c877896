/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-drop-zone: where folders are dropped.  Accepts a GdkFileList (GTK file
 * managers) and text/uri-list (GTK reads it into the same type), checks each
 * item and hands the folders on; what cannot be shared gets a sentence. */
#pragma once

#include <gtk/gtk.h>
#include "sa-client.h"

G_BEGIN_DECLS

#define SA_TYPE_DROP_ZONE (sa_drop_zone_get_type())
G_DECLARE_FINAL_TYPE(SaDropZone, sa_drop_zone, SA, DROP_ZONE, GtkBox)

/* Signals:
 *   "files-dropped" (GListModel *files of GFile): a drop landed on @target. */
GtkWidget *sa_drop_zone_new(void);

/* Lets the whole of @target (e.g. the window's content) take drops, with the
 * zone showing the hover feedback. */
void sa_drop_zone_attach(SaDropZone *self, GtkWidget *target);

/* Checks that @file is a local directory the user can list; otherwise returns
 * FALSE with a sentence for the user in @message (worded for a drop when
 * @dropped, for a folder named on the command line otherwise). */
gboolean sa_drop_zone_check_is_folder(GFile *file, gboolean dropped, char **message);

/* Checks that @file is a folder Sluice can share with @vm: a directory, that
 * the user can list, and not yet shared with that VM.  Otherwise returns FALSE
 * with a sentence for the user in @message. */
gboolean sa_drop_zone_check_folder(GFile *file, SaClient *client, const char *vm, char **message);

G_END_DECLS
