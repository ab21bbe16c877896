/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-test-windows-service: a test double of sluice-service for the applet's
 * Windows-guest tests (test-guest-tools.sh).  The real service shows a VM
 * that lacks WinFsp only where a Windows guest's agent says so, which takes
 * a libvirt guest (suite libvirt) the applet's Xvfb tests cannot have; so
 * this double publishes, with the generated skeletons of the real API, one
 * running Windows VM "win11" whose agent is ready and which lacks what
 * --missing says, and one share attached to it whose guest mount failed
 * (served with Windows names, case-insensitive).
 *
 *   sa-test-windows-service --folder PATH [--missing winfsp,virtio-fs]
 *
 * Every call it gets is printed to stdout ("CALL InstallGuestTools {…}",
 * "CALL Doctor"), so that a test asserts what the applet asked.  Doctor
 * answers a fixed report (REPORT below), with a drive label as a hostile
 * guest may name it: a terminal escape and a bidi override.  InstallGuestTools stays pending
 * until the test says, one command per line on stdin:
 *   progress STATE FRACTION WHAT MESSAGE…   sets Vm.GuestToolsInstall
 *   finish MESSAGE…       answers the call; nothing is missing any more
 *   fail MESSAGE…         answers .GuestAgent with MESSAGE
 *   doctor-fails MESSAGE… the next Doctor answers .GuestAgent with MESSAGE */
#include "config.h"

#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice-dbus.h"
#include "sluice-names.h"

#define REPORT \
  "Windows: Windows 11 Pro 23H2 (build 22631)\n" \
  "VirtIO-FS driver: not installed\n" \
  "VirtioFsSvc: not installed\n" \
  "WinFsp: not installed\n" \
  "HKLM\\Software\\virtiofs: (absent)\n" \
  "Drives: C: \"Windows\", D: \"\x1b[2J\xe2\x80\xae" "evil.exe\"\n" \
  "Next: install WinFsp and the VirtIO-FS driver (sluicectl vm win11 install-guest-tools)\n"

static SluiceVm *vm;
static SluiceShare *share;
static GDBusMethodInvocation *pending_install;
static GMainLoop *loop;
static char *doctor_error;  /* the next Doctor fails with this */

static GVariant *progress(const char *state, double fraction, const char *what, const char *message)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add(&b, "{sv}", "state", g_variant_new_string(state));
  g_variant_builder_add(&b, "{sv}", "fraction", g_variant_new_double(fraction));
  g_variant_builder_add(&b, "{sv}", "what", g_variant_new_string(what));
  g_variant_builder_add(&b, "{sv}", "message", g_variant_new_string(message));
  return g_variant_builder_end(&b);
}

static gboolean on_install(SluiceVm *object, GDBusMethodInvocation *invocation, GVariant *options, gpointer data)
{
  g_autofree char *text = g_variant_print(options, TRUE);
  printf("CALL InstallGuestTools %s\n", text);
  fflush(stdout);
  if (pending_install != NULL) {
    g_dbus_method_invocation_return_dbus_error(invocation, "org.sluice.Sluice1.Error.Busy",
                                               "An install runs already in “win11”.");
    return TRUE;
  }
  pending_install = g_object_ref(invocation);
  sluice_vm_set_guest_tools_install(vm, progress("finding", 0, "", "Looking for the installers"));
  return TRUE;
}

static gboolean on_doctor(SluiceVm *object, GDBusMethodInvocation *invocation, gpointer data)
{
  printf("CALL Doctor\n");
  fflush(stdout);
  if (doctor_error != NULL) {
    g_dbus_method_invocation_return_dbus_error(invocation, "org.sluice.Sluice1.Error.GuestAgent", doctor_error);
    g_clear_pointer(&doctor_error, g_free);
    return TRUE;
  }
  g_auto(GVariantBuilder) facts = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add(&facts, "{sv}", "winfsp", g_variant_new_string(""));
  sluice_vm_complete_doctor(object, invocation, REPORT, g_variant_builder_end(&facts));
  return TRUE;
}

static gboolean on_watch(SluiceShare *object, GDBusMethodInvocation *invocation, gpointer data)
{
  g_dbus_method_invocation_return_value(invocation, NULL);
  return TRUE;
}

static void command(const char *line)
{
  g_auto(GStrv) words = g_strsplit(line, " ", 5);
  guint n = g_strv_length(words);
  if (n >= 2 && g_str_equal(words[0], "doctor-fails")) {
    g_free(doctor_error);
    doctor_error = g_strdup(strchr(line, ' ') + 1);
  } else if (n >= 4 && g_str_equal(words[0], "progress")) {
    sluice_vm_set_guest_tools_install(vm, progress(words[1], g_ascii_strtod(words[2], NULL), words[3],
                                                   n > 4 ? words[4] : ""));
  } else if (n >= 1 && (g_str_equal(words[0], "finish") || g_str_equal(words[0], "fail")) && pending_install != NULL) {
    const char *message = strchr(line, ' ') != NULL ? strchr(line, ' ') + 1 : "";
    gboolean ok = g_str_equal(words[0], "finish");
    sluice_vm_set_guest_tools_install(vm, progress(ok ? "done" : "failed", 1, "winfsp", message));
    if (ok) {
      static const char *const none[] = { NULL };
      sluice_vm_set_guest_tools_missing(vm, none);
      sluice_share_set_guest_state(share, "mounted");
      sluice_share_set_guest_path(share, "Z:");
      sluice_share_set_error(share, "");
      sluice_vm_complete_install_guest_tools(vm, pending_install, message);
    } else {
      g_dbus_method_invocation_return_dbus_error(pending_install, "org.sluice.Sluice1.Error.GuestAgent", message);
    }
    g_clear_object(&pending_install);
  } else {
    fprintf(stderr, "sa-test-windows-service: unknown or untimely command: %s\n", line);
  }
}

static gboolean on_stdin(GIOChannel *channel, GIOCondition condition, gpointer data)
{
  g_autofree char *line = NULL;
  gsize end = 0;
  GIOStatus status = g_io_channel_read_line(channel, &line, NULL, &end, NULL);
  if (status == G_IO_STATUS_EOF || status == G_IO_STATUS_ERROR) {
    g_main_loop_quit(loop);
    return G_SOURCE_REMOVE;
  }
  if (line != NULL) {
    line[end] = '\0';
    command(line);
  }
  return G_SOURCE_CONTINUE;
}

static void on_name_acquired(GDBusConnection *bus, const char *name, gpointer data)
{
  printf("READY\n");
  fflush(stdout);
}

static void on_name_lost(GDBusConnection *bus, const char *name, gpointer data)
{
  fprintf(stderr, "sa-test-windows-service: cannot own %s\n", name);
  exit(1);
}

int main(int argc, char **argv)
{
  g_autofree char *folder = NULL;
  g_autofree char *missing = g_strdup("winfsp,virtio-fs");
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "folder", 0, 0, G_OPTION_ARG_FILENAME, &folder, "the share's folder", "PATH" },
    { "missing", 0, 0, G_OPTION_ARG_STRING, &missing, "what the VM lacks", "WHAT,…" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_add_main_entries(context, entries, NULL);
  if (!g_option_context_parse(context, &argc, &argv, &error) || folder == NULL) {
    fprintf(stderr, "sa-test-windows-service: %s\n", error != NULL ? error->message : "--folder is needed");
    return 2;
  }
  g_autoptr(GDBusConnection) bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
  if (bus == NULL) {
    fprintf(stderr, "sa-test-windows-service: %s\n", error->message);
    return 1;
  }

  g_autoptr(GDBusObjectManagerServer) server = g_dbus_object_manager_server_new("/org/sluice/Sluice1");
  g_autoptr(SluiceManager) manager = sluice_manager_skeleton_new();
  if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(manager), bus, "/org/sluice/Sluice1", &error)) {
    fprintf(stderr, "sa-test-windows-service: %s\n", error->message);
    return 1;
  }

  g_autoptr(SluiceObjectSkeleton) vm_object = sluice_object_skeleton_new("/org/sluice/Sluice1/vm/double");
  vm = sluice_vm_skeleton_new();
  g_auto(GStrv) lacks = g_strsplit(missing, ",", 4);
  sluice_vm_set_name(vm, "win11");
  sluice_vm_set_uuid(vm, "00000000-0000-0000-0000-000000000011");
  sluice_vm_set_uri(vm, "qemu:///session");
  sluice_vm_set_state(vm, "running");
  sluice_vm_set_shared_memory(vm, TRUE);
  sluice_vm_set_os(vm, "windows");
  sluice_vm_set_guest_agent(vm, "ready");
  sluice_vm_set_guest_os_type(vm, "windows");
  sluice_vm_set_guest_tools_missing(vm, (const char *const *)lacks);
  sluice_vm_set_guest_tools_install(vm, progress("", 0, "", ""));
  g_signal_connect(vm, "handle-install-guest-tools", G_CALLBACK(on_install), NULL);
  g_signal_connect(vm, "handle-doctor", G_CALLBACK(on_doctor), NULL);
  sluice_object_skeleton_set_vm(vm_object, vm);

  g_autoptr(SluiceObjectSkeleton) share_object = sluice_object_skeleton_new("/org/sluice/Sluice1/share/double");
  share = sluice_share_skeleton_new();
  sluice_share_set_path(share, folder);
  sluice_share_set_vm(share, "win11");
  sluice_share_set_tag(share, "Docs");
  sluice_share_set_state(share, "attached");
  sluice_share_set_guest_state(share, "failed");
  sluice_share_set_served_names(share, "windows");
  sluice_share_set_served_case(share, "insensitive");
  sluice_share_set_error(share, "WinFsp is not installed in “win11”, so Windows cannot show the folder.");
  g_signal_connect(share, "handle-watch-stats", G_CALLBACK(on_watch), NULL);
  g_signal_connect(share, "handle-unwatch-stats", G_CALLBACK(on_watch), NULL);
  sluice_object_skeleton_set_share(share_object, share);

  g_dbus_object_manager_server_export(server, G_DBUS_OBJECT_SKELETON(vm_object));
  g_dbus_object_manager_server_export(server, G_DBUS_OBJECT_SKELETON(share_object));
  g_dbus_object_manager_server_set_connection(server, bus);

  g_autoptr(GIOChannel) in = g_io_channel_unix_new(0);
  g_io_add_watch(in, G_IO_IN | G_IO_HUP | G_IO_ERR, on_stdin, NULL);
  loop = g_main_loop_new(NULL, FALSE);
  guint owner = g_bus_own_name_on_connection(bus, "org.sluice.Sluice1", G_BUS_NAME_OWNER_FLAGS_NONE,
                                             on_name_acquired, on_name_lost, NULL, NULL);
  g_main_loop_run(loop);
  g_bus_unown_name(owner);
  g_clear_object(&vm);
  g_clear_object(&share);
  return 0;
}
