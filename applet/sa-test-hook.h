/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-test-hook: with SLUICE_APPLET_TEST_HOOK set, exposes what a headless
 * test cannot read off the screen (org.sluice.Applet.Test on the session bus).
 * Built with -Dtest_hooks=true only (make check's builds), never in a release. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* From the application's startup: when SLUICE_APPLET_TEST_HOOK is set,
 * exports the interface on @app's bus connection until @app shuts down. */
void sa_test_hook_install(GtkApplication *app);

G_END_DECLS
