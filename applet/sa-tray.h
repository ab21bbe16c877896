/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-tray: the tray icon — an org.kde.StatusNotifierItem served with GDBus,
 * registered with org.kde.StatusNotifierWatcher (again whenever a watcher
 * appears), with a com.canonical.dbusmenu menu (sa-tray-menu.c). */
#pragma once

#include <gio/gio.h>
#include "sa-client.h"

G_BEGIN_DECLS

#define SA_TRAY_ITEM_PATH "/StatusNotifierItem"
#define SA_TRAY_MENU_PATH "/MenuBar"

#define SA_TYPE_TRAY (sa_tray_get_type())
G_DECLARE_FINAL_TYPE(SaTray, sa_tray, SA, TRAY, GObject)

/* Menu entries and Activate go to @app's actions: "show", "pause-all",
 * "resume-all", "quit".  Signals:
 *   "host-changed": a tray host accepted the item or went away (see sa_tray_has_host);
 *   "no-host": emitted once, when it is clear nothing shows the icon. */
SaTray *sa_tray_new(GApplication *app, SaClient *client, GError **error);
gboolean sa_tray_has_host(SaTray *self);

/* "idle", "active" or "error": what the icon shows now. */
const char *sa_tray_get_mood(SaTray *self);
/* The tooltip's description line. */
const char *sa_tray_get_description(SaTray *self);

G_END_DECLS
