/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-pending: folders handed to the applet from outside ("Share with a VM"
 * in a file manager, `sluice-applet --add FOLDER…`) wait here, named, until
 * the user has picked the VM and presses Share (or Cancel).  Hidden while
 * nothing waits. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SA_TYPE_PENDING (sa_pending_get_type())
G_DECLARE_FINAL_TYPE(SaPending, sa_pending, SA, PENDING, GtkBox)

/* Signals:
 *   "share-requested" (GListModel *files of GFile): Share was pressed; the
 *     list is emptied afterwards.
 * Cancel empties the list. */
GtkWidget *sa_pending_new(void);

/* Adds @file unless a folder with the same path already waits. */
void sa_pending_add(SaPending *self, GFile *file);
guint sa_pending_get_n_folders(SaPending *self);
/* The waiting folders' paths (for the test hook), NULL-terminated. */
char **sa_pending_dup_paths(SaPending *self);
/* The Share button: focused when there is no VM to choose. */
GtkWidget *sa_pending_get_share_button(SaPending *self);

G_END_DECLS
