/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-window: the Sluice window — drop zone, VM chooser, one row per share. */
#pragma once

#include <adwaita.h>
#include "sa-client.h"

G_BEGIN_DECLS

#define SA_TYPE_WINDOW (sa_window_get_type())
G_DECLARE_FINAL_TYPE(SaWindow, sa_window, SA, WINDOW, AdwApplicationWindow)

SaWindow *sa_window_new(GtkApplication *app, SaClient *client);

/* Shares every folder in @files (GListModel of GFile) with the chosen VM;
 * what cannot be shared is explained in the inline message. */
void sa_window_share_files(SaWindow *self, GListModel *files);

/* Folders named from outside (a file manager's "Share with a VM",
 * `sluice-applet --add`): each folder waits in the "Ready to Share" card for
 * the user to pick the VM (the chooser takes the focus) and press Share; what
 * is not a folder is explained in the inline message. */
void sa_window_add_folders(SaWindow *self, GListModel *files);

/* The inline message above the drop zone (errors stay until dismissed). */
void sa_window_show_message(SaWindow *self, const char *text, gboolean is_error);

void sa_window_toast(SaWindow *self, const char *text);

G_END_DECLS
