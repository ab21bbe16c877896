/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-share-row: a row of the window's share list for one SaShare. */
#pragma once

#include <gtk/gtk.h>
#include "sa-share.h"

G_BEGIN_DECLS

#define SA_TYPE_SHARE_ROW (sa_share_row_get_type())
G_DECLARE_FINAL_TYPE(SaShareRow, sa_share_row, SA, SHARE_ROW, GtkListBoxRow)

/* Emits "remove-requested" when the user clicks the trash button; the window
 * removes the share and offers undo.  @vms (GDBusProxy, Vm interface) fills
 * the row's menu: attach / detach and which VM the folder goes to. */
GtkWidget *sa_share_row_new(SaShare *share, GListModel *vms);
SaShare *sa_share_row_get_share(SaShareRow *self);

G_END_DECLS
