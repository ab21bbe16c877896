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
/* The folders waiting in that card, NULL-terminated (for the test hook). */
char **sa_window_dup_pending_paths(SaWindow *self);
GtkWidget *sa_window_get_vm_chooser(SaWindow *self);

/* The inline message above the drop zone (errors stay until dismissed). */
void sa_window_show_message(SaWindow *self, const char *text, gboolean is_error);
const char *sa_window_get_last_message(SaWindow *self);

void sa_window_toast(SaWindow *self, const char *text);

GtkWidget *sa_window_get_drop_zone(SaWindow *self);
/* A part (see sa_share_row_get_part) of the row of the share of @path, or NULL. */
GtkWidget *sa_window_find_row_part(SaWindow *self, const char *path, const char *part);

G_END_DECLS
