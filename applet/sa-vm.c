/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-vm: the applet's helpers over a SluiceVm proxy. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "printable.h"
#include "sa-vm.h"
#include "wire-enums.h"

const char *sa_vm_get_name(SluiceVm *vm)
{
  const char *name = sluice_vm_get_name(vm);
  return name != NULL ? name : "";
}

const char *sa_vm_get_state(SluiceVm *vm)
{
  const char *state = sluice_vm_get_state(vm);
  return state != NULL ? state : "";
}

gboolean sa_vm_is_running(SluiceVm *vm)
{
  return sluice_wire_vm_state_is(sa_vm_get_state(vm), SLUICE_WIRE_VM_RUNNING);
}

const char *sa_vm_get_guest_agent(SluiceVm *vm)
{
  const char *agent = sluice_vm_get_guest_agent(vm);
  return agent != NULL ? agent : "";
}

const char *sa_vm_get_guest_agent_message(SluiceVm *vm)
{
  const char *message = sluice_vm_get_guest_agent_message(vm);
  return message != NULL ? message : "";
}

typedef struct {
  GCallback report;
  gpointer user_data;
} FixData;

static void on_enable_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree FixData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  void (*report)(const char *, gboolean, gpointer) = (void *)data->report;
  if (!sluice_vm_call_enable_shared_memory_finish(SLUICE_VM(source), &message, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(msg, TRUE, data->user_data);
    return;
  }
  report(*message ? message : _("Shared memory enabled."), FALSE, data->user_data);
}

void sa_vm_enable_shared_memory(SluiceVm *vm, GCallback report, gpointer user_data)
{
  FixData *data = g_new0(FixData, 1);
  data->report = report;
  data->user_data = user_data;
  sluice_vm_call_enable_shared_memory(vm, NULL, on_enable_done, data);
}

static void on_enable_agent_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree FixData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  void (*report)(const char *, gboolean, gpointer) = (void *)data->report;
  if (!sluice_vm_call_enable_guest_agent_finish(SLUICE_VM(source), &message, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(msg, TRUE, data->user_data);
    return;
  }
  report(*message ? message : _("The guest agent's channel was added."), FALSE, data->user_data);
}

void sa_vm_enable_guest_agent(SluiceVm *vm, GCallback report, gpointer user_data)
{
  FixData *data = g_new0(FixData, 1);
  data->report = report;
  data->user_data = user_data;
  sluice_vm_call_enable_guest_agent(vm, NULL, on_enable_agent_done, data);
}

gboolean sa_vm_lacks_hotplug_slot(SluiceVm *vm)
{
  /* absent from the cache: a service that does not count them */
  g_autoptr(GVariant) slots = g_dbus_proxy_get_cached_property(G_DBUS_PROXY(vm), "HotplugSlots");
  return slots != NULL && g_variant_is_of_type(slots, G_VARIANT_TYPE_UINT32) && g_variant_get_uint32(slots) == 0;
}

typedef struct {
  FixData fix;
  char *name;
} SlotsData;

static void on_add_slots_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  SlotsData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *name = data->name;
  guint added = 0;
  void (*report)(const char *, gboolean, gpointer) = (void *)data->fix.report;
  gpointer report_data = data->fix.user_data;

  g_free(data);
  if (!sluice_vm_call_add_hotplug_slots_finish(SLUICE_VM(source), &added, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(msg, TRUE, report_data);
    return;
  }
  g_autofree char *msg =
    /* Translators: %u spare ports, %s the VM's name */
    g_strdup_printf(g_dngettext(GETTEXT_PACKAGE,
                                "%u spare PCIe root port was added to “%s”. It takes effect at the VM's next "
                                "start: shut it down and start it again.",
                                "%u spare PCIe root ports were added to “%s”. They take effect at the VM's next "
                                "start: shut it down and start it again.",
                                added),
                    added, name);
  report(msg, FALSE, report_data);
}

void sa_vm_add_hotplug_slots(SluiceVm *vm, GCallback report, gpointer user_data)
{
  SlotsData *data = g_new0(SlotsData, 1);
  data->fix.report = report;
  data->fix.user_data = user_data;
  data->name = g_strdup(sa_vm_get_name(vm));
  /* 0: the service's default */
  sluice_vm_call_add_hotplug_slots(vm, 0, NULL, on_add_slots_done, data);
}

const char *const *sa_vm_get_guest_tools_missing(SluiceVm *vm)
{
  static const char *const none[] = { NULL };
  const char *const *missing = sluice_vm_get_guest_tools_missing(vm);
  return missing != NULL ? missing : none;
}

const char *sa_vm_guest_tool_label(const char *what)
{
  if (g_strcmp0(what, "winfsp") == 0)
    return _("WinFsp");
  if (g_strcmp0(what, "virtio-fs") == 0)
    return _("the VirtIO-FS driver");
  return NULL;
}

char *sa_vm_dup_guest_tools_missing_text(SluiceVm *vm)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (const char *const *w = sa_vm_get_guest_tools_missing(vm); *w != NULL; w++) {
    const char *label = sa_vm_guest_tool_label(*w);
    if (label != NULL)
      g_ptr_array_add(names, (gpointer)label);
  }
  if (names->len == 0)
    return g_strdup(_("the pieces for shared folders"));
  if (names->len == 1)
    return g_strdup(names->pdata[0]);
  /* Translators: "WinFsp and the VirtIO-FS driver" */
  return g_strdup_printf(_("%s and %s"), (char *)names->pdata[0], (char *)names->pdata[1]);
}

void sa_vm_get_guest_tools_install(SluiceVm *vm, SaVmInstallProgress *progress)
{
  static const struct { const char *word; SaVmInstallState state; } states[] = {
    { "finding", SA_VM_INSTALL_FINDING }, { "copying", SA_VM_INSTALL_COPYING },
    { "installing", SA_VM_INSTALL_INSTALLING }, { "done", SA_VM_INSTALL_DONE },
    { "failed", SA_VM_INSTALL_FAILED },
  };
  GVariant *dict = sluice_vm_get_guest_tools_install(vm);
  const char *state = "", *what = "", *message = "";
  double fraction = 0;

  if (dict != NULL && g_variant_is_of_type(dict, G_VARIANT_TYPE_VARDICT)) {
    (void)g_variant_lookup(dict, "state", "&s", &state);
    (void)g_variant_lookup(dict, "what", "&s", &what);
    (void)g_variant_lookup(dict, "message", "&s", &message);
    (void)g_variant_lookup(dict, "fraction", "d", &fraction);
  }
  progress->state = SA_VM_INSTALL_NONE;
  for (guint i = 0; i < G_N_ELEMENTS(states); i++)
    if (g_str_equal(state, states[i].word))
      progress->state = states[i].state;
  /* NaN fails both comparisons: 0 */
  progress->fraction = fraction >= 0 ? MIN(fraction, 1.0) : 0;
  progress->what = what;
  progress->message = sluice_printable(message, -1, 400);
}

void sa_vm_install_progress_clear(SaVmInstallProgress *progress)
{
  g_clear_pointer(&progress->message, g_free);
}

static void on_install_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree FixData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  void (*report)(const char *, gboolean, gpointer) = (void *)data->report;
  if (!sluice_vm_call_install_guest_tools_finish(SLUICE_VM(source), &message, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(msg, TRUE, data->user_data);
    return;
  }
  g_autofree char *shown = sluice_printable(message, -1, 400);
  report(*shown ? shown : _("The guest pieces were installed."), FALSE, data->user_data);
}

void sa_vm_install_guest_tools(SluiceVm *vm, const char *installer, GCallback report, gpointer user_data)
{
  FixData *data = g_new0(FixData, 1);
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE_VARDICT);
  data->report = report;
  data->user_data = user_data;
  if (installer != NULL) {
    /* WinFsp ships as winfsp-VERSION.msi; anything else is virtio-win's */
    g_autofree char *base = g_path_get_basename(installer);
    g_autofree char *lower = g_utf8_strdown(base, -1);
    gboolean winfsp = g_str_has_prefix(lower, "winfsp");
    g_variant_builder_add(&options, "{sv}", winfsp ? "winfsp" : "virtio-win", g_variant_new_string(installer));
  }
  /* The generated call takes the proxy's default timeout, read when the call
   * is made: no limit for this one call, the usual one for the others. */
  int timeout = g_dbus_proxy_get_default_timeout(G_DBUS_PROXY(vm));
  g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(vm), G_MAXINT);
  sluice_vm_call_install_guest_tools(vm, g_variant_builder_end(&options), NULL, on_install_done, data);
  g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(vm), timeout);
}

/* A report from the guest, shown as it is but for what the printable rule
 * refuses, line by line, and bounded. */
static char *printable_report(const char *report)
{
  g_auto(GStrv) lines = g_strsplit(report, "\n", 2000);
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint i = 0; lines[i] != NULL; i++) {
    g_autofree char *line = sluice_printable(lines[i], -1, 1000);
    g_string_append(out, line);
    if (lines[i + 1] != NULL)
      g_string_append_c(out, '\n');
  }
  return g_string_free(g_steal_pointer(&out), FALSE);
}

static void on_doctor_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree FixData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GVariant) facts = NULL;
  void (*report)(const char *, const char *, gpointer) = (void *)data->report;
  if (!sluice_vm_call_doctor_finish(SLUICE_VM(source), &text, &facts, result, &error)) {
    g_autofree char *msg = sluice_error_dup_user_message(error);
    report(NULL, msg, data->user_data);
    return;
  }
  g_autofree char *shown = printable_report(text);
  report(shown, NULL, data->user_data);
}

void sa_vm_doctor(SluiceVm *vm, GCallback report, gpointer user_data)
{
  FixData *data = g_new0(FixData, 1);
  data->report = report;
  data->user_data = user_data;
  /* the service asks the guest several questions, each bounded by it */
  int timeout = g_dbus_proxy_get_default_timeout(G_DBUS_PROXY(vm));
  g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(vm), G_MAXINT);
  sluice_vm_call_doctor(vm, NULL, on_doctor_done, data);
  g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(vm), timeout);
}
