/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-guest-tools-dialog: the confirmation before InstallGuestTools, and the
 * file chooser for another installer. */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "sa-guest-tools-dialog.h"
#include "sa-vm.h"

typedef struct {
  GtkWindow *parent;
  SluiceVm *vm;
  char *installer;
  SaGuestToolsConfirmed confirmed;
  GObject *owner;
} Ask;

static void ask_free(Ask *ask)
{
  g_clear_object(&ask->parent);
  g_clear_object(&ask->vm);
  g_clear_object(&ask->owner);
  g_free(ask->installer);
  g_free(ask);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Ask, ask_free)

static void ask_again(Ask *ask);

static void on_file_chosen(GtkNativeDialog *chooser, int response, gpointer user_data)
{
  g_autoptr(Ask) ask = user_data;
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(chooser));
    g_autofree char *path = file != NULL ? g_file_get_path(file) : NULL;
    if (path != NULL) {
      g_free(ask->installer);
      ask->installer = g_steal_pointer(&path);
    }
  }
  gtk_native_dialog_destroy(chooser);
  g_object_unref(chooser);
  /* picked or not, back to the question: the user may still install or cancel */
  ask_again(g_steal_pointer(&ask));
}

static void choose_file(Ask *ask)
{
  GtkFileChooserNative *chooser =
    gtk_file_chooser_native_new(_("Choose an Installer"), ask->parent, GTK_FILE_CHOOSER_ACTION_OPEN,
                                _("_Choose"), _("_Cancel"));
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
  /* Translators: a file filter's name */
  gtk_file_filter_set_name(filter, _("WinFsp or virtio-win installers (.msi, .iso)"));
  gtk_file_filter_add_pattern(filter, "*.msi");
  gtk_file_filter_add_pattern(filter, "*.iso");
  gtk_file_filter_add_pattern(filter, "*.MSI");
  gtk_file_filter_add_pattern(filter, "*.ISO");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
  g_signal_connect(chooser, "response", G_CALLBACK(on_file_chosen), ask);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void on_response(AdwMessageDialog *dialog, const char *response, gpointer user_data)
{
  g_autoptr(Ask) ask = user_data;
  if (g_str_equal(response, "install")) {
    ask->confirmed(ask->owner, ask->vm, ask->installer);
  } else if (g_str_equal(response, "choose")) {
    choose_file(g_steal_pointer(&ask));
  }
}

static void ask_again(Ask *ask)
{
  g_autofree char *what = sa_vm_dup_guest_tools_missing_text(ask->vm);
  const char *name = sa_vm_get_name(ask->vm);
  g_autofree char *body = NULL;
  if (ask->installer != NULL) {
    g_autofree char *shown = g_filename_display_name(ask->installer);
    /* Translators: "Sluice will install WinFsp and the VirtIO-FS driver in “win11” from
     * /home/me/Downloads/winfsp-2.0.msi." */
    body = g_strdup_printf(_("Sluice will install %s in “%s” from %s."), what, name, shown);
  } else {
    /* Translators: the first %s is what is missing, the second a VM's name */
    body = g_strdup_printf(_("Sluice will install %s in “%s” from the installers it finds on this computer "
                             "(in /usr/share/virtio-win or your Downloads folder: winfsp-*.msi, virtio-win*.iso). "
                             "Nothing is downloaded."),
                           what, name);
  }
  GtkWidget *dialog = adw_message_dialog_new(ask->parent, _("Install in the VM?"), body);
  AdwMessageDialog *message = ADW_MESSAGE_DIALOG(dialog);
  adw_message_dialog_add_responses(message, "cancel", _("_Cancel"), "choose", _("Choose _Another File…"),
                                   "install", _("_Install"), NULL);
  adw_message_dialog_set_response_appearance(message, "install", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(message, "install");
  adw_message_dialog_set_close_response(message, "cancel");
  gtk_window_set_application(GTK_WINDOW(dialog), gtk_window_get_application(ask->parent));
  g_signal_connect(dialog, "response", G_CALLBACK(on_response), ask);
  gtk_window_present(GTK_WINDOW(dialog));
}

void sa_guest_tools_dialog_ask(GtkWindow *parent, SluiceVm *vm, const char *installer,
                               SaGuestToolsConfirmed confirmed, GObject *owner)
{
  Ask *ask = g_new0(Ask, 1);
  ask->parent = g_object_ref(parent);
  ask->vm = g_object_ref(vm);
  ask->installer = g_strdup(installer);
  ask->confirmed = confirmed;
  ask->owner = g_object_ref(owner);
  ask_again(ask);
}
