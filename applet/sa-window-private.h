/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-window-private: what the test hook (sa-test-hook.c, -Dtest_hooks=true)
 * reads off the window; nothing else in the applet needs it. */
#pragma once

#include "sa-window.h"

G_BEGIN_DECLS

/* The folders waiting in the "Ready to Share" card, NULL-terminated. */
char **sa_window_dup_pending_paths(SaWindow *self);
GtkWidget *sa_window_get_vm_chooser(SaWindow *self);
/* The inline message above the drop zone ("" when none). */
const char *sa_window_get_last_message(SaWindow *self);
GtkWidget *sa_window_get_drop_zone(SaWindow *self);
/* A part (see sa_share_row_get_part) of the row of the share of @path, or NULL. */
GtkWidget *sa_window_find_row_part(SaWindow *self, const char *path, const char *part);

G_END_DECLS
