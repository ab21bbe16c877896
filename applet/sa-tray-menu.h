/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-tray-menu: the tray icon's menu, served as com.canonical.dbusmenu by
 * libdbusmenu-glib at SA_TRAY_MENU_PATH. */
#pragma once

#include <gio/gio.h>
#include "sa-client.h"

G_BEGIN_DECLS

#define SA_TYPE_TRAY_MENU (sa_tray_menu_get_type())
G_DECLARE_FINAL_TYPE(SaTrayMenu, sa_tray_menu, SA, TRAY_MENU, GObject)

/* Entries: Open Sluice · one per share with its state · Pause all / Resume ·
 * Quit.  They activate @app's "show", "pause-all", "resume-all", "quit". */
SaTrayMenu *sa_tray_menu_new(GApplication *app, SaClient *client);

G_END_DECLS
