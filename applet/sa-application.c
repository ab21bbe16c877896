/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-application: lifetime and the app.* actions the window, the tray menu
 * and notifications share.
 *
 * While a tray host shows the icon the application holds itself, so closing
 * the window only hides it; without a tray, closing the window quits. */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-application.h"
#include "sa-notify.h"
#include "sa-tray.h"
#include "sa-window.h"
#if SLUICE_TEST_HOOKS
#include "sa-test-hook.h"
#endif

struct _SaApplication {
  AdwApplication parent_instance;
  SaClient *client;
  SaTray *tray;
  SaNotify *notify;
  SaWindow *window;
  gboolean held;
  gboolean no_host;          /* say it in the window when it opens */
  gboolean background;      /* --background: waiting to learn whether a tray shows us */
  gboolean had_command_line;  /* the primary's own command line has been handled */
  GPtrArray *paused;   /* object paths of shares "Pause All" stopped */
};

G_DEFINE_TYPE(SaApplication, sa_application, ADW_TYPE_APPLICATION)

SaClient *sa_application_get_client(SaApplication *self)
{
  return self->client;
}

static void on_window_destroyed(GtkWidget *window, gpointer user_data)
{
  SaApplication *self = user_data;
  if (self->window == SA_WINDOW(window))
    self->window = NULL;
}

static const char *no_host_text(void)
{
  return _("No system tray was found, so Sluice has no icon. It keeps sharing while this window is open.");
}

static SaWindow *ensure_window(SaApplication *self)
{
  if (self->window == NULL) {
    self->window = sa_window_new(GTK_APPLICATION(self), self->client);
    g_signal_connect(self->window, "destroy", G_CALLBACK(on_window_destroyed), self);
    if (self->no_host) {
      self->no_host = FALSE;
      sa_window_show_message(self->window, no_host_text(), FALSE);
    }
  }
  gtk_window_set_hide_on_close(GTK_WINDOW(self->window),
                               self->tray != NULL && sa_tray_has_host(self->tray));
  return self->window;
}

static void show_activated(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaApplication *self = user_data;
  gtk_window_present(GTK_WINDOW(ensure_window(self)));
}

static void update_pause_actions(SaApplication *self)
{
  gboolean any_active = FALSE;
  GListModel *shares = sa_client_get_shares(self->client);
  guint n = g_list_model_get_n_items(shares);
  for (guint i = 0; i < n && !any_active; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    any_active = sa_share_is_active(share);
  }
  GAction *pause = g_action_map_lookup_action(G_ACTION_MAP(self), "pause-all");
  GAction *resume = g_action_map_lookup_action(G_ACTION_MAP(self), "resume-all");
  g_simple_action_set_enabled(G_SIMPLE_ACTION(pause), any_active);
  g_simple_action_set_enabled(G_SIMPLE_ACTION(resume), self->paused->len > 0);
}

static void pause_all_activated(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaApplication *self = user_data;
  GListModel *shares = sa_client_get_shares(self->client);
  guint n = g_list_model_get_n_items(shares);
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    if (!sa_share_is_active(share))
      continue;
    g_ptr_array_add(self->paused, g_strdup(sa_share_get_object_path(share)));
    sa_share_stop(share);
  }
  update_pause_actions(self);
}

static void resume_all_activated(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaApplication *self = user_data;
  GListModel *shares = sa_client_get_shares(self->client);
  guint n = g_list_model_get_n_items(shares);
  for (guint i = 0; i < n; i++) {
    g_autoptr(SaShare) share = g_list_model_get_item(shares, i);
    for (guint j = 0; j < self->paused->len; j++)
      if (g_str_equal(self->paused->pdata[j], sa_share_get_object_path(share)))
        sa_share_start(share);
  }
  g_ptr_array_set_size(self->paused, 0);
  update_pause_actions(self);
}

static void quit_activated(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaApplication *self = user_data;
  if (self->window != NULL)
    gtk_window_destroy(GTK_WINDOW(self->window));
  g_application_quit(G_APPLICATION(self));
}

static void about_activated(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaApplication *self = user_data;
  const char *developers[] = { _("The Sluice developers"), NULL };
  GtkWidget *about = adw_about_window_new();
  g_object_set(about,
               "transient-for", ensure_window(self),
               "application-name", _("Sluice"),
               "application-icon", SA_APPLICATION_ID,
               "version", PACKAGE_VERSION,
               "comments", _("Share folders with your virtual machines over virtiofs"),
               "license-type", GTK_LICENSE_GPL_2_0,
               "developers", developers,
               NULL);
  gtk_window_present(GTK_WINDOW(about));
}

static const GActionEntry app_actions[] = {
  { "show", show_activated, NULL, NULL, NULL, { 0 } },
  { "pause-all", pause_all_activated, NULL, NULL, NULL, { 0 } },
  { "resume-all", resume_all_activated, NULL, NULL, NULL, { 0 } },
  { "quit", quit_activated, NULL, NULL, NULL, { 0 } },
  { "about", about_activated, NULL, NULL, NULL, { 0 } },
};

static void on_host_changed(SaTray *tray, gpointer user_data)
{
  SaApplication *self = user_data;
  gboolean host = sa_tray_has_host(tray);
  if (host && !self->held)
    g_application_hold(G_APPLICATION(self));
  else if (!host && self->held)
    g_application_release(G_APPLICATION(self));
  self->held = host;
  if (self->window != NULL)
    gtk_window_set_hide_on_close(GTK_WINDOW(self->window), host);
  if (host && self->background) {
    self->background = FALSE;
    g_application_release(G_APPLICATION(self));
  }
}

static void on_no_host(SaTray *tray, gpointer user_data)
{
  SaApplication *self = user_data;
  g_message("%s", no_host_text());
  if (self->window != NULL)
    sa_window_show_message(self->window, no_host_text(), FALSE);
  else
    self->no_host = TRUE;
  if (self->background) {
    self->background = FALSE;
    gtk_window_present(GTK_WINDOW(ensure_window(self)));
    g_application_release(G_APPLICATION(self));
  }
}

static void on_shares_changed(GListModel *model, guint pos, guint removed, guint added, gpointer user_data)
{
  update_pause_actions(user_data);
}

static void on_share_changed(SaClient *client, SaShare *share, gpointer user_data)
{
  update_pause_actions(user_data);
}

static void sa_application_startup(GApplication *app)
{
  SaApplication *self = SA_APPLICATION(app);
  G_APPLICATION_CLASS(sa_application_parent_class)->startup(app);

  g_action_map_add_action_entries(G_ACTION_MAP(self), app_actions, G_N_ELEMENTS(app_actions), self);
  const char *quit_accels[] = { "<Control>q", NULL };
  gtk_application_set_accels_for_action(GTK_APPLICATION(self), "app.quit", quit_accels);
  gtk_window_set_default_icon_name(SA_APPLICATION_ID);

  self->client = sa_client_new();
  g_signal_connect(sa_client_get_shares(self->client), "items-changed", G_CALLBACK(on_shares_changed), self);
  g_signal_connect(self->client, "share-changed", G_CALLBACK(on_share_changed), self);
  update_pause_actions(self);

  g_autoptr(GError) error = NULL;
  self->tray = sa_tray_new(app, self->client, &error);
  if (self->tray == NULL) {
    g_message("No tray icon: %s", error->message);
  } else {
    g_signal_connect(self->tray, "host-changed", G_CALLBACK(on_host_changed), self);
    g_signal_connect(self->tray, "no-host", G_CALLBACK(on_no_host), self);
  }
  self->notify = sa_notify_new(app, self->client);
#if SLUICE_TEST_HOOKS
  sa_test_hook_install(GTK_APPLICATION(self));
#endif
}

static void sa_application_activate(GApplication *app)
{
  SaApplication *self = SA_APPLICATION(app);
  /* --background (autostart): only the tray icon; the window appears if it
   * turns out no tray shows the icon (see on_no_host). */
  if (g_object_get_data(G_OBJECT(app), "sluice-background") != NULL && self->tray != NULL) {
    g_object_set_data(G_OBJECT(app), "sluice-background", NULL);
    if (!sa_tray_has_host(self->tray) && !self->background) {
      self->background = TRUE;
      g_application_hold(app);
    }
    return;
  }
  gtk_window_present(GTK_WINDOW(ensure_window(self)));
}

static int sa_application_handle_local_options(GApplication *app, GVariantDict *options)
{
  if (g_variant_dict_contains(options, "version")) {
    g_print("sluice-applet %s\n", PACKAGE_VERSION);
    return 0;
  }
  return -1;
}

/* Runs in the primary instance, for its own command line and for every later
 * `sluice-applet …` (a file manager's "Share with a VM" launches
 * `sluice-applet --add %F`): the running applet raises its window instead of
 * a second one starting. */
static int sa_application_command_line(GApplication *app, GApplicationCommandLine *cmdline)
{
  SaApplication *self = SA_APPLICATION(app);
  GVariantDict *options = g_application_command_line_get_options_dict(cmdline);
  g_autofree const char **args = NULL;
  gboolean add = g_variant_dict_contains(options, "add");

  (void)g_variant_dict_lookup(options, G_OPTION_REMAINING, "^a&ay", &args);
  if (args != NULL && args[0] != NULL && !add) {
    g_application_command_line_printerr(cmdline, "%s\n",
      _("To share folders, name them after --add, for example: sluice-applet --add ~/Projects"));
    return 1;
  }
  gboolean first = !self->had_command_line;
  self->had_command_line = TRUE;
  if (!add) {
    if (g_variant_dict_contains(options, "background")) {
      /* --background (autostart) for an applet that already runs does nothing:
       * a second login item must not pop the window up. */
      if (!first)
        return 0;
      g_object_set_data(G_OBJECT(app), "sluice-background", GINT_TO_POINTER(1));
    }
    g_application_activate(app);
    return 0;
  }

  g_autoptr(GListStore) files = g_list_store_new(G_TYPE_FILE);
  for (guint i = 0; args != NULL && args[i] != NULL; i++) {
    g_autoptr(GFile) file = g_application_command_line_create_file_for_arg(cmdline, args[i]);
    g_list_store_append(files, file);
  }
  SaWindow *window = ensure_window(self);
  sa_window_add_folders(window, G_LIST_MODEL(files));
  gtk_window_present(GTK_WINDOW(window));
  return 0;
}

static void sa_application_shutdown(GApplication *app)
{
  SaApplication *self = SA_APPLICATION(app);
  g_clear_object(&self->notify);
  g_clear_object(&self->tray);
  if (self->client != NULL) {
    g_signal_handlers_disconnect_by_data(sa_client_get_shares(self->client), self);
    g_signal_handlers_disconnect_by_data(self->client, self);
  }
  g_clear_object(&self->client);
  G_APPLICATION_CLASS(sa_application_parent_class)->shutdown(app);
}

static void sa_application_finalize(GObject *object)
{
  g_ptr_array_unref(SA_APPLICATION(object)->paused);
  G_OBJECT_CLASS(sa_application_parent_class)->finalize(object);
}

static void sa_application_class_init(SaApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS(klass);
  G_OBJECT_CLASS(klass)->finalize = sa_application_finalize;
  app_class->startup = sa_application_startup;
  app_class->activate = sa_application_activate;
  app_class->shutdown = sa_application_shutdown;
  app_class->handle_local_options = sa_application_handle_local_options;
  app_class->command_line = sa_application_command_line;
}

static void sa_application_init(SaApplication *self)
{
  self->paused = g_ptr_array_new_with_free_func(g_free);
  const GOptionEntry entries[] = {
    { "background", 'b', 0, G_OPTION_ARG_NONE, NULL,
      N_("Start with only the tray icon (for autostart)"), NULL },
    { "add", 'a', 0, G_OPTION_ARG_NONE, NULL,
      N_("Open the window with the folders named after it ready to share"), NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Print the version and exit"), NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, NULL, NULL, N_("[FOLDER…]") },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_application_add_main_option_entries(G_APPLICATION(self), entries);
}

SaApplication *sa_application_new(void)
{
  return g_object_new(SA_TYPE_APPLICATION,
                      "application-id", SA_APPLICATION_ID,
                      "flags", G_APPLICATION_HANDLES_COMMAND_LINE,
                      "resource-base-path", "/org/sluice/Applet",
                      NULL);
}
