/* sa-test-hook: with SLUICE_APPLET_TEST_HOOK set, exposes what a headless
 * test cannot read off the screen (org.sluice.Applet.Test on the session bus). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _SaApplication SaApplication;

#define SA_TYPE_TEST_HOOK (sa_test_hook_get_type())
G_DECLARE_FINAL_TYPE(SaTestHook, sa_test_hook, SA, TEST_HOOK, GObject)

SaTestHook *sa_test_hook_new(SaApplication *app);

G_END_DECLS
