/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluice-applet: the Sluice window and tray icon. */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "sa-application.h"

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
  textdomain(GETTEXT_PACKAGE);
  g_set_application_name(_("Sluice"));

  g_autoptr(SaApplication) app = sa_application_new();
  return g_application_run(G_APPLICATION(app), argc, argv);
}
