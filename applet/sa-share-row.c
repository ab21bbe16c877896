/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-share-row: folder, VM, tag, state, read-only switch, names and case,
 * start/stop, remove, what the guest lacks (and its install), live graph and
 * sync-queue stats of one share. */
#include "config.h"

#include <glib/gi18n.h>

#include "state-labels.h"
#include "wire-enums.h"
#include "sa-vm.h"
#include "sa-format.h"
#include "sa-graph.h"
#include "sa-guest-place.h"
#include "sa-guest-tools-dialog.h"
#include "sa-share-row.h"
#include "sa-share-row-private.h"
#include "wire-enums.h"

/* Columns of the sync-queue table. */
enum { COL_QUEUE, COL_REQUESTS, COL_KICKS, COL_POLLED, COL_BATCHES, N_COLS };

struct _SaShareRow {
  GtkListBoxRow parent_instance;
  SaShare *share;
  GBinding *read_only_binding;
  gboolean holding_stats;      /* sa_share_hold_stats while mapped */

  GtkLabel *title_label, *subtitle_label, *state_label, *details_label;
  GtkLabel *error_label, *hint_label;
  GtkWidget *place_box, *agent_offer_box;
  GtkLabel *place_label, *mounting_label, *agent_offer_label, *agent_note_label;
  GtkButton *copy_place_button, *agent_offer_button;
  /* the offer of spare PCIe root ports when the VM has no place left */
  GtkWidget *slots_offer_box;
  GtkLabel *slots_offer_label;
  GtkButton *slots_offer_button;
  gboolean slots_added;  /* added for the VM's next start: not offered again until it has them */
  /* what a Windows guest lacks: the install offer, its progress and outcome */
  GtkWidget *tools_box, *tools_offer_box;
  GtkLabel *tools_label, *tools_result_label;
  GtkButton *tools_button;
  GtkProgressBar *tools_progress;
  guint pulse_id;          /* pulses the bar while the install has no fraction */
  char *install_result;    /* the last InstallGuestTools answer, until the next click */
  gboolean install_failed;
  gboolean install_calling; /* our InstallGuestTools has not answered: not offered twice */
  /* Share.Names / Share.Case and what is served */
  GtkDropDown *names_dropdown, *case_dropdown;
  GtkLabel *served_label;
  gboolean syncing_naming; /* set while the drop-downs follow the service: no write back */
  GtkLabel *read_label, *write_label, *ops_label, *latency_label;
  GtkButton *start_stop_button, *remove_button;
  GtkBox *busy_box;
  GtkLabel *busy_label;
  GtkButton *stop_anyway_button;
  GtkMenuButton *menu_button;
  GListModel *vms;
  GSimpleActionGroup *actions;
  GtkSwitch *read_only_switch;
  SaGraph *graph;
  GtkExpander *queues_expander;
  GtkGrid *queues_grid;
  guint queue_rows;      /* data rows currently in queues_grid */
};

G_DEFINE_TYPE(SaShareRow, sa_share_row, GTK_TYPE_LIST_BOX_ROW)

enum { SIGNAL_REMOVE_REQUESTED, SIGNAL_MESSAGE, SIGNAL_TOAST, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The share's VM as the service lists it, or NULL. (transfer none) */
static SluiceVm *find_vm(SaShareRow *self)
{
  const char *name = sa_share_get_vm(self->share);
  guint n = self->vms != NULL && *name ? g_list_model_get_n_items(self->vms) : 0;
  for (guint i = 0; i < n; i++) {
    g_autoptr(SluiceVm) vm = g_list_model_get_item(self->vms, i);
    if (g_str_equal(sa_vm_get_name(vm), name))
      return vm;  /* the list keeps it */
  }
  return NULL;
}

/* Where the share is in the guest, or what to do there: the hint line,
 * "In the VM at …", "Mounting…", or what the VM's guest agent lacks. */
static void update_guest(SaShareRow *self)
{
  SluiceVm *vm = find_vm(self);
  SaGuestFacts facts = {
    .share_state = sa_share_get_state(self->share),
    .guest_path = sa_share_get_guest_path(self->share),
    .guest_state = sa_share_get_guest_state(self->share),
    .guest_hint = sa_share_get_guest_hint(self->share),
    .vm_known = vm != NULL,
    .vm_running = vm != NULL && sa_vm_is_running(vm),
    .agent = vm != NULL ? sa_vm_get_guest_agent(vm) : "",
    .agent_message = vm != NULL ? sa_vm_get_guest_agent_message(vm) : "",
  };
  SaGuestView view;
  sa_guest_view_decide(&facts, &view);

  gtk_label_set_label(self->hint_label, facts.guest_hint);
  gtk_widget_set_visible(GTK_WIDGET(self->hint_label), view.show_hint);
  gtk_label_set_label(self->place_label, view.place != NULL ? view.place : "");
  gtk_widget_set_visible(self->place_box, view.place != NULL);
  gtk_widget_set_visible(GTK_WIDGET(self->mounting_label), view.mounting);
  if (view.offer_agent) {
    g_autofree char *text =
      /* Translators: %s is a VM's name */
      g_strdup_printf(_("“%s” has no guest agent, so the folder must be mounted in it by hand."),
                      sa_vm_get_name(vm));
    gtk_label_set_label(self->agent_offer_label, text);
  }
  gtk_widget_set_visible(self->agent_offer_box, view.offer_agent);
  gtk_label_set_label(self->agent_note_label, view.agent_note != NULL ? view.agent_note : "");
  gtk_widget_set_visible(GTK_WIDGET(self->agent_note_label), view.agent_note != NULL);
  sa_guest_view_clear(&view);
}

/* A share that could not be plugged in because its VM has no place left:
 * offer the spare root ports (Vm.AddHotplugSlots), or say to restart it once added. */
static void update_slots(SaShareRow *self)
{
  SluiceVm *vm = find_vm(self);
  gboolean lacks = vm != NULL && sa_vm_lacks_hotplug_slot(vm);
  gboolean failed = *sa_share_get_error(self->share) != '\0' &&
                    !sluice_wire_share_state_is(sa_share_get_state(self->share), SLUICE_WIRE_SHARE_ATTACHED);

  if (!lacks)
    self->slots_added = FALSE;  /* restarted with them (or another VM) */
  if (lacks && failed) {
    g_autofree char *text = self->slots_added
      /* Translators: %s is a VM's name */
      ? g_strdup_printf(_("Spare PCIe slots were added to “%s”: shut it down and start it again to use them."),
                        sa_vm_get_name(vm))
      /* Translators: %s is a VM's name */
      : g_strdup_printf(_("“%s” has no free PCIe slot for the folder. Sluice can add spare ones; they work "
                          "from the VM's next start."),
                        sa_vm_get_name(vm));
    gtk_label_set_label(self->slots_offer_label, text);
  }
  gtk_widget_set_visible(GTK_WIDGET(self->slots_offer_button), !self->slots_added);
  gtk_widget_set_visible(self->slots_offer_box, lacks && failed);
}

/* The drop-downs' items, in the order of the .ui's string lists. */
static const SluiceWireNames names_items[] = { SLUICE_WIRE_NAMES_DEFAULT, SLUICE_WIRE_NAMES_WINDOWS,
                                               SLUICE_WIRE_NAMES_POSIX };
static const SluiceWireCase case_items[] = { SLUICE_WIRE_CASE_DEFAULT, SLUICE_WIRE_CASE_INSENSITIVE,
                                             SLUICE_WIRE_CASE_SENSITIVE };

/* A word this applet does not know is shown as the default (item 0). */
static guint names_index(const char *word)
{
  SluiceWireNames names;

  if (sluice_wire_names_parse(word, &names))
    for (guint i = 0; i < G_N_ELEMENTS(names_items); i++)
      if (names_items[i] == names)
        return i;
  return 0;
}

static guint case_index(const char *word)
{
  SluiceWireCase case_;

  if (sluice_wire_case_parse(word, &case_))
    for (guint i = 0; i < G_N_ELEMENTS(case_items); i++)
      if (case_items[i] == case_)
        return i;
  return 0;
}

/* Names / Case as set, and what the worker serves now. */
static void update_naming(SaShareRow *self)
{
  const char *served_names = sa_share_get_served_names(self->share);
  const char *served_case = sa_share_get_served_case(self->share);
  gboolean windows = sluice_wire_names_is(served_names, SLUICE_WIRE_NAMES_WINDOWS);
  gboolean insensitive = sluice_wire_case_is(served_case, SLUICE_WIRE_CASE_INSENSITIVE);
  const char *served = NULL;

  self->syncing_naming = TRUE;
  gtk_drop_down_set_selected(self->names_dropdown,
                             names_index(sa_share_get_names(self->share)));
  gtk_drop_down_set_selected(self->case_dropdown,
                             case_index(sa_share_get_case(self->share)));
  self->syncing_naming = FALSE;
  if (*served_names != '\0' && *served_case != '\0') {
    if (windows)
      served = insensitive ? _("Windows names, case-insensitive") : _("Windows names, case-sensitive");
    else
      served = insensitive ? _("Names as on the host, case-insensitive") : _("Names as on the host, case-sensitive");
  }
  gtk_label_set_label(self->served_label, served != NULL ? served : "");
  gtk_widget_set_visible(GTK_WIDGET(self->served_label), served != NULL);
}

static void on_names_selected(GObject *dropdown, GParamSpec *pspec, gpointer user_data)
{
  SaShareRow *self = user_data;
  guint i = gtk_drop_down_get_selected(self->names_dropdown);
  if (!self->syncing_naming && i < G_N_ELEMENTS(names_items))
    sa_share_set_names(self->share, sluice_wire_names_name(names_items[i]));
}

static void on_case_selected(GObject *dropdown, GParamSpec *pspec, gpointer user_data)
{
  SaShareRow *self = user_data;
  guint i = gtk_drop_down_get_selected(self->case_dropdown);
  if (!self->syncing_naming && i < G_N_ELEMENTS(case_items))
    sa_share_set_case(self->share, sluice_wire_case_name(case_items[i]));
}

static gboolean pulse_tools(gpointer user_data)
{
  SaShareRow *self = user_data;
  gtk_progress_bar_pulse(self->tools_progress);
  return G_SOURCE_CONTINUE;
}

static void set_pulsing(SaShareRow *self, gboolean pulsing)
{
  if (pulsing && self->pulse_id == 0)
    self->pulse_id = g_timeout_add(150, pulse_tools, self);
  else if (!pulsing)
    g_clear_handle_id(&self->pulse_id, g_source_remove);
}

/* A Windows guest that lacks WinFsp or the VirtIO-FS driver, where the
 * folder's mount failed for it: "Install in the VM…", then the install's
 * progress (Vm.GuestToolsInstall) and how it ended. */
static void update_tools(SaShareRow *self)
{
  SluiceVm *vm = find_vm(self);
  SaVmInstallProgress progress = { 0 };
  gboolean missing = vm != NULL && sa_vm_get_guest_tools_missing(vm)[0] != NULL;
  gboolean failed = sluice_wire_guest_state_is(sa_share_get_guest_state(self->share), SLUICE_WIRE_GUEST_FAILED) ||
                    *sa_share_get_error(self->share) != '\0';
  if (vm != NULL)
    sa_vm_get_guest_tools_install(vm, &progress);
  gboolean running = progress.state == SA_VM_INSTALL_FINDING || progress.state == SA_VM_INSTALL_COPYING ||
                     progress.state == SA_VM_INSTALL_INSTALLING;
  gboolean busy = running || self->install_calling;
  const char *tool = sa_vm_guest_tool_label(progress.what);
  g_autofree char *text = NULL;

  if (missing) {
    g_autofree char *what = sa_vm_dup_guest_tools_missing_text(vm);
    /* Translators: "“win11” lacks WinFsp and the VirtIO-FS driver, which Windows needs to show the folder." */
    text = g_strdup_printf(_("“%s” lacks %s, which Windows needs to show the folder."), sa_vm_get_name(vm), what);
    gtk_label_set_label(self->tools_label, text);
    g_clear_pointer(&text, g_free);
  }
  gtk_widget_set_visible(self->tools_offer_box, missing && failed && !busy);

  switch (progress.state) {
  case SA_VM_INSTALL_FINDING:
    text = g_strdup(_("Looking for the installers…"));
    break;
  case SA_VM_INSTALL_COPYING:
    text = tool != NULL
      /* Translators: "Copying WinFsp into the VM… 40 %" */
      ? g_strdup_printf(_("Copying %s into the VM… %.0f %%"), tool, progress.fraction * 100)
      /* Translators: "Copying into the VM… 40 %" */
      : g_strdup_printf(_("Copying into the VM… %.0f %%"), progress.fraction * 100);
    gtk_progress_bar_set_fraction(self->tools_progress, progress.fraction);
    break;
  case SA_VM_INSTALL_INSTALLING:
    /* Translators: %s is WinFsp or the VirtIO-FS driver */
    text = tool != NULL ? g_strdup_printf(_("Installing %s in the VM…"), tool) : g_strdup(_("Installing in the VM…"));
    break;
  default:
    break;
  }
  gtk_progress_bar_set_text(self->tools_progress, text);
  gtk_widget_set_visible(GTK_WIDGET(self->tools_progress), running);
  set_pulsing(self, progress.state == SA_VM_INSTALL_FINDING || progress.state == SA_VM_INSTALL_INSTALLING);

  /* how it ended: our call's answer, or the property's for an install another
   * client (sluicectl) started; nothing while one runs */
  const char *result = busy ? NULL : self->install_result;
  gboolean result_failed = self->install_failed;
  if (!busy && result == NULL && (progress.state == SA_VM_INSTALL_DONE || progress.state == SA_VM_INSTALL_FAILED) &&
      *progress.message != '\0') {
    result = progress.message;
    result_failed = progress.state == SA_VM_INSTALL_FAILED;
  }
  gtk_label_set_label(self->tools_result_label, result != NULL ? result : "");
  if (result_failed)
    gtk_widget_add_css_class(GTK_WIDGET(self->tools_result_label), "error");
  else
    gtk_widget_remove_css_class(GTK_WIDGET(self->tools_result_label), "error");
  gtk_widget_set_visible(GTK_WIDGET(self->tools_result_label), result != NULL);
  gtk_widget_set_visible(self->tools_box, (missing && failed) || busy || (result != NULL && vm != NULL));
  sa_vm_install_progress_clear(&progress);
}

static void report_install(const char *message, gboolean is_error, gpointer user_data)
{
  g_autoptr(SaShareRow) self = user_data;
  g_free(self->install_result);
  self->install_result = g_strdup(message);
  self->install_failed = is_error;
  self->install_calling = FALSE;
  if (self->share != NULL)
    update_tools(self);
  g_signal_emit(self, signals[SIGNAL_MESSAGE], 0, message, is_error);
}

static void on_install_confirmed(GObject *owner, SluiceVm *vm, const char *installer)
{
  SaShareRow *self = SA_SHARE_ROW(owner);
  if (self->share == NULL)
    return;  /* the share was removed while the dialog asked */
  g_clear_pointer(&self->install_result, g_free);
  self->install_calling = TRUE;
  sa_vm_install_guest_tools(vm, installer, G_CALLBACK(report_install), g_object_ref(self));
  update_tools(self);
}

static void on_tools_clicked(GtkButton *button, SaShareRow *self)
{
  SluiceVm *vm = find_vm(self);
  GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
  if (vm != NULL && GTK_IS_WINDOW(root))
    sa_guest_tools_dialog_ask(GTK_WINDOW(root), vm, NULL, on_install_confirmed, G_OBJECT(self));
}

static void update_properties(SaShareRow *self)
{
  const char *path = sa_share_get_path(self->share);
  const char *vm = sa_share_get_vm(self->share);
  const char *tag = sa_share_get_tag(self->share);
  const char *state = sa_share_get_state(self->share);
  const char *error = sa_share_get_error(self->share);
  g_autofree char *name = sa_format_folder_name(path);
  g_autofree char *details = NULL;

  gtk_label_set_label(self->title_label, name);
  gtk_label_set_label(self->subtitle_label, path);
  if (*vm)
    /* Translators: "VM: win11 · Tag: Projects" */
    details = g_strdup_printf(_("VM: %s · Tag: %s"), vm, tag);
  else
    details = g_strdup_printf(_("No VM chosen · Tag: %s"), tag);
  gtk_label_set_label(self->details_label, details);

  gtk_label_set_label(self->state_label, sluice_share_state_label(state));
  /* style.css styles each state by its word */
  for (guint s = SLUICE_WIRE_SHARE_STOPPED; s <= SLUICE_WIRE_SHARE_FAILED; s++)
    gtk_widget_remove_css_class(GTK_WIDGET(self->state_label), sluice_wire_share_state_name(s));
  SluiceWireShareState known;
  if (sluice_wire_share_state_parse(state, &known))
    gtk_widget_add_css_class(GTK_WIDGET(self->state_label), sluice_wire_share_state_name(known));

  gboolean active = sa_share_is_active(self->share);
  gtk_button_set_icon_name(self->start_stop_button,
                           active ? "media-playback-stop-symbolic" : "media-playback-start-symbolic");
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->start_stop_button),
                              active ? _("Stop sharing for now") : _("Start sharing"));

  gtk_label_set_label(self->error_label, error);
  gtk_widget_set_visible(GTK_WIDGET(self->error_label), *error != '\0');
  const char *busy = sa_share_get_busy(self->share);
  gtk_label_set_label(self->busy_label, busy != NULL ? busy : "");
  gtk_widget_set_visible(GTK_WIDGET(self->busy_box), busy != NULL);
  update_guest(self);
  update_slots(self);
  update_tools(self);
  update_naming(self);
}

static GtkWidget *grid_label(const char *text, gboolean header)
{
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), header ? 0 : 1);
  gtk_widget_add_css_class(label, "caption");
  gtk_widget_add_css_class(label, header ? "dim-label" : "numeric");
  return label;
}

static void set_cell(SaShareRow *self, int col, int row, const char *text)
{
  GtkWidget *cell = gtk_grid_get_child_at(self->queues_grid, col, row);
  if (cell == NULL) {
    cell = grid_label(text, col == COL_QUEUE);
    gtk_grid_attach(self->queues_grid, cell, col, row, 1, 1);
  } else {
    gtk_label_set_label(GTK_LABEL(cell), text);
  }
}

static void update_queues(SaShareRow *self)
{
  GVariant *stats = sa_share_get_stats(self->share);
  g_autoptr(GVariant) queues = stats != NULL ?
    g_variant_lookup_value(stats, "queues", G_VARIANT_TYPE("aa{sv}")) : NULL;
  guint n = queues != NULL ? (guint)g_variant_n_children(queues) : 0;

  if (gtk_grid_get_child_at(self->queues_grid, 0, 0) == NULL) {
    const char *headers[N_COLS] = {
      C_("queue stats", "Queue"), C_("queue stats", "Requests"), C_("queue stats", "Kicked"),
      C_("queue stats", "Polled"), C_("queue stats", "Batches"),
    };
    for (int c = 0; c < N_COLS; c++) {
      GtkWidget *h = grid_label(headers[c], TRUE);
      gtk_label_set_xalign(GTK_LABEL(h), c == COL_QUEUE ? 0 : 1);
      gtk_grid_attach(self->queues_grid, h, c, 0, 1, 1);
    }
  }
  while (self->queue_rows > n) {
    gtk_grid_remove_row(self->queues_grid, (int)self->queue_rows);
    self->queue_rows--;
  }
  for (guint i = 0; i < n; i++) {
    g_autoptr(GVariant) q = g_variant_get_child_value(queues, i);
    guint32 index = i;
    guint64 requests = 0, kicks = 0, polled = 0, batches = 0;
    (void)g_variant_lookup(q, "index", "u", &index);
    (void)g_variant_lookup(q, "requests", "t", &requests);
    (void)g_variant_lookup(q, "kicks", "t", &kicks);
    (void)g_variant_lookup(q, "polled", "t", &polled);
    (void)g_variant_lookup(q, "batches", "t", &batches);
    g_autofree char *qname = index == 0 ? g_strdup(_("High priority"))
                                        : g_strdup_printf(_("Request %u"), index);
    g_autofree char *s_req = g_strdup_printf("%" G_GUINT64_FORMAT, requests);
    g_autofree char *s_kick = g_strdup_printf("%" G_GUINT64_FORMAT, kicks);
    g_autofree char *s_poll = g_strdup_printf("%" G_GUINT64_FORMAT, polled);
    g_autofree char *s_batch = g_strdup_printf("%" G_GUINT64_FORMAT, batches);
    int row = (int)i + 1;
    set_cell(self, COL_QUEUE, row, qname);
    set_cell(self, COL_REQUESTS, row, s_req);
    set_cell(self, COL_KICKS, row, s_kick);
    set_cell(self, COL_POLLED, row, s_poll);
    set_cell(self, COL_BATCHES, row, s_batch);
  }
  self->queue_rows = n;
}

static void update_stats(SaShareRow *self)
{
  g_autofree char *r = sa_format_rate(sa_share_get_stat_double(self->share, "read-bytes-per-sec"));
  g_autofree char *w = sa_format_rate(sa_share_get_stat_double(self->share, "write-bytes-per-sec"));
  g_autofree char *ops = sa_format_ops(sa_share_get_stat_double(self->share, "ops-per-sec"));
  g_autofree char *p50 = sa_format_latency(sa_share_get_stat_uint64(self->share, "latency-p50-us"));
  g_autofree char *p99 = sa_format_latency(sa_share_get_stat_uint64(self->share, "latency-p99-us"));
  /* Translators: legend of the graph's blue line */
  g_autofree char *rl = g_strdup_printf(_("Read %s"), r);
  /* Translators: legend of the graph's orange line */
  g_autofree char *wl = g_strdup_printf(_("Write %s"), w);
  /* Translators: median and 99th-percentile request latency */
  g_autofree char *lat = sa_share_get_stat_uint64(self->share, "requests") > 0
                           ? g_strdup_printf(_("Latency %s (p99 %s)"), p50, p99)
                           /* Translators: no request measured yet */
                           : g_strdup(_("Latency —"));
  gtk_label_set_label(self->read_label, rl);
  gtk_label_set_label(self->write_label, wl);
  gtk_label_set_label(self->ops_label, ops);
  gtk_label_set_label(self->latency_label, lat);
  /* Only a visible table is worth updating; expanding catches up. */
  if (gtk_expander_get_expanded(self->queues_expander))
    update_queues(self);
}

/* The row menu: attach / detach, then the VMs the folder can go to (a radio
 * group over the share's Vm).  Rebuilt when it opens: VMs come and go. */
static void rebuild_menu(SaShareRow *self)
{
  g_autoptr(GMenu) menu = g_menu_new();
  g_autoptr(GMenu) state_section = g_menu_new();
  g_autoptr(GMenu) vm_section = g_menu_new();
  const char *state = sa_share_get_state(self->share);
  const char *vm = sa_share_get_vm(self->share);

  if (sluice_wire_share_state_is(state, SLUICE_WIRE_SHARE_ATTACHED))
    g_menu_append(state_section, _("_Detach from VM"), "row.detach");
  else
    g_menu_append(state_section, _("_Attach to VM"), "row.attach");
  g_menu_append(state_section, _("_Mount in the VM Automatically"), "row.auto-mount");
  g_menu_append_section(menu, NULL, G_MENU_MODEL(state_section));

  guint n = self->vms != NULL ? g_list_model_get_n_items(self->vms) : 0;
  for (guint i = 0; i < n; i++) {
    g_autoptr(SluiceVm) vm_item = g_list_model_get_item(self->vms, i);
    const char *name = sa_vm_get_name(vm_item);
    g_autoptr(GMenuItem) item = g_menu_item_new(name, NULL);
    g_menu_item_set_action_and_target_value(item, "row.set-vm", g_variant_new_string(name));
    g_menu_append_item(vm_section, item);
  }
  g_autoptr(GMenuItem) none = g_menu_item_new(_("No VM"), NULL);
  g_menu_item_set_action_and_target_value(none, "row.set-vm", g_variant_new_string(""));
  g_menu_append_item(vm_section, none);
  g_menu_append_section(menu, _("Share With"), G_MENU_MODEL(vm_section));

  GAction *auto_mount = g_action_map_lookup_action(G_ACTION_MAP(self->actions), "auto-mount");
  g_simple_action_set_state(G_SIMPLE_ACTION(auto_mount),
                            g_variant_new_boolean(sa_share_get_auto_mount(self->share)));
  GAction *set_vm = g_action_map_lookup_action(G_ACTION_MAP(self->actions), "set-vm");
  g_simple_action_set_state(G_SIMPLE_ACTION(set_vm), g_variant_new_string(vm));
  g_simple_action_set_enabled(G_SIMPLE_ACTION(g_action_map_lookup_action(G_ACTION_MAP(self->actions), "attach")),
                              *vm != '\0');
  gtk_menu_button_set_menu_model(self->menu_button, G_MENU_MODEL(menu));
}

static void on_share_changed(SaShare *share, gpointer user_data)
{
  update_properties(user_data);
  rebuild_menu(user_data);
}

static void on_vms_changed(GListModel *vms, guint pos, guint removed, guint added, gpointer user_data)
{
  /* also a VM's properties: the list re-sorts (items-changed) on each change */
  update_guest(user_data);
  update_slots(user_data);
  update_tools(user_data);
  rebuild_menu(user_data);
}

static void on_attach(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaShareRow *self = user_data;
  sa_share_attach(self->share);
}

static void on_detach(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaShareRow *self = user_data;
  sa_share_detach(self->share);
}

static void on_auto_mount(GSimpleAction *action, GVariant *state, gpointer user_data)
{
  SaShareRow *self = user_data;
  /* the menu shows the service's value once it has taken it */
  sa_share_set_auto_mount(self->share, g_variant_get_boolean(state));
}

static void on_copy_place_clicked(GtkButton *button, SaShareRow *self)
{
  const char *place = sa_share_get_guest_path(self->share);
  if (*place == '\0')
    return;
  gdk_clipboard_set_text(gtk_widget_get_clipboard(GTK_WIDGET(button)), place);
  /* Translators: %s is where the folder is in the VM, "Z:" or "/mnt/docs" */
  g_autofree char *text = g_strdup_printf(_("Copied “%s”"), place);
  g_signal_emit(self, signals[SIGNAL_TOAST], 0, text);
}

static void report_agent(const char *message, gboolean is_error, gpointer user_data)
{
  g_autoptr(SaShareRow) self = user_data;
  g_signal_emit(self, signals[SIGNAL_MESSAGE], 0, message, is_error);
}

static void on_agent_offer_clicked(GtkButton *button, SaShareRow *self)
{
  SluiceVm *vm = find_vm(self);
  if (vm != NULL)
    sa_vm_enable_guest_agent(vm, G_CALLBACK(report_agent), g_object_ref(self));
}

static void report_slots(const char *message, gboolean is_error, gpointer user_data)
{
  g_autoptr(SaShareRow) self = user_data;
  if (!is_error) {
    self->slots_added = TRUE;
    update_slots(self);
  }
  g_signal_emit(self, signals[SIGNAL_MESSAGE], 0, message, is_error);
}

static void on_slots_offer_clicked(GtkButton *button, SaShareRow *self)
{
  SluiceVm *vm = find_vm(self);
  if (vm != NULL)
    sa_vm_add_hotplug_slots(vm, G_CALLBACK(report_slots), g_object_ref(self));
}

static void on_set_vm(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaShareRow *self = user_data;
  sa_share_set_vm(self->share, g_variant_get_string(param, NULL));
}

static void on_share_stats(SaShare *share, gpointer user_data)
{
  update_stats(user_data);
}

static void on_expanded(GObject *expander, GParamSpec *pspec, gpointer user_data)
{
  SaShareRow *self = user_data;
  if (gtk_expander_get_expanded(self->queues_expander))
    update_queues(self);
}

static void on_start_stop_clicked(GtkButton *button, SaShareRow *self)
{
  if (sa_share_is_active(self->share))
    sa_share_stop(self->share);
  else
    sa_share_start(self->share);
}

static void on_stop_anyway_clicked(GtkButton *button, SaShareRow *self)
{
  sa_share_stop_anyway(self->share);
}

static void on_remove_clicked(GtkButton *button, SaShareRow *self)
{
  g_signal_emit(self, signals[SIGNAL_REMOVE_REQUESTED], 0);
}

SaShare *sa_share_row_get_share(SaShareRow *self)
{
  return self->share;
}

GtkWidget *sa_share_row_get_part(SaShareRow *self, const char *part)
{
  if (g_str_equal(part, "read-only"))
    return GTK_WIDGET(self->read_only_switch);
  if (g_str_equal(part, "remove"))
    return GTK_WIDGET(self->remove_button);
  if (g_str_equal(part, "menu"))
    return GTK_WIDGET(self->menu_button);
  if (g_str_equal(part, "start-stop"))
    return GTK_WIDGET(self->start_stop_button);
  if (g_str_equal(part, "stop-anyway"))
    return GTK_WIDGET(self->stop_anyway_button);
  if (g_str_equal(part, "busy"))
    return GTK_WIDGET(self->busy_label);
  if (g_str_equal(part, "guest-copy"))
    return GTK_WIDGET(self->copy_place_button);
  if (g_str_equal(part, "guest-agent"))
    return GTK_WIDGET(self->agent_offer_button);
  if (g_str_equal(part, "hotplug-slots"))
    return GTK_WIDGET(self->slots_offer_button);
  if (g_str_equal(part, "install"))
    return GTK_WIDGET(self->tools_button);
  if (g_str_equal(part, "install-progress"))
    return GTK_WIDGET(self->tools_progress);
  if (g_str_equal(part, "names"))
    return GTK_WIDGET(self->names_dropdown);
  if (g_str_equal(part, "case"))
    return GTK_WIDGET(self->case_dropdown);
  if (g_str_equal(part, "queues"))
    /* the expander's title row, not the (maybe hidden) table */
    return gtk_widget_get_first_child(GTK_WIDGET(self->queues_expander));
  return NULL;
}

/* On screen, the row's numbers and graph need the share's stats kept
 * current; off screen (the window hidden in the tray) nothing need wake. */
static void sa_share_row_map(GtkWidget *widget)
{
  SaShareRow *self = SA_SHARE_ROW(widget);
  GTK_WIDGET_CLASS(sa_share_row_parent_class)->map(widget);
  if (self->share != NULL && !self->holding_stats) {
    self->holding_stats = TRUE;
    sa_share_hold_stats(self->share);
  }
}

static void release_stats(SaShareRow *self)
{
  if (self->share != NULL && self->holding_stats) {
    self->holding_stats = FALSE;
    sa_share_release_stats(self->share);
  }
}

static void sa_share_row_unmap(GtkWidget *widget)
{
  release_stats(SA_SHARE_ROW(widget));
  GTK_WIDGET_CLASS(sa_share_row_parent_class)->unmap(widget);
}

static void sa_share_row_dispose(GObject *object)
{
  SaShareRow *self = SA_SHARE_ROW(object);
  release_stats(self);
  set_pulsing(self, FALSE);
  g_clear_pointer(&self->install_result, g_free);
  if (self->vms != NULL)
    g_signal_handlers_disconnect_by_data(self->vms, self);
  g_clear_object(&self->vms);
  g_clear_object(&self->actions);
  if (self->share != NULL) {
    g_signal_handlers_disconnect_by_data(self->share, self);
    g_clear_pointer(&self->read_only_binding, g_binding_unbind);
    g_clear_object(&self->share);
  }
  gtk_widget_dispose_template(GTK_WIDGET(self), SA_TYPE_SHARE_ROW);
  G_OBJECT_CLASS(sa_share_row_parent_class)->dispose(object);
}

static void sa_share_row_class_init(SaShareRowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = sa_share_row_dispose;
  widget_class->map = sa_share_row_map;
  widget_class->unmap = sa_share_row_unmap;

  g_type_ensure(SA_TYPE_GRAPH);
  gtk_widget_class_set_template_from_resource(widget_class, "/org/sluice/Applet/sa-share-row.ui");
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, title_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, subtitle_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, state_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, details_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, error_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, hint_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, place_box);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, place_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, copy_place_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, mounting_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, agent_offer_box);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, agent_offer_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, agent_offer_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, agent_note_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, slots_offer_box);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, slots_offer_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, slots_offer_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, tools_box);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, tools_offer_box);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, tools_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, tools_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, tools_progress);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, tools_result_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, names_dropdown);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, case_dropdown);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, served_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, read_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, write_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, ops_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, latency_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, start_stop_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, busy_box);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, busy_label);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, stop_anyway_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, remove_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, menu_button);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, read_only_switch);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, graph);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, queues_expander);
  gtk_widget_class_bind_template_child(widget_class, SaShareRow, queues_grid);
  gtk_widget_class_bind_template_callback(widget_class, on_start_stop_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_stop_anyway_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_remove_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_copy_place_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_agent_offer_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_slots_offer_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_tools_clicked);

  signals[SIGNAL_REMOVE_REQUESTED] =
    g_signal_new("remove-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                 NULL, NULL, G_TYPE_NONE, 0);
  /* A call's outcome for the window's inline message: (text, is_error). */
  signals[SIGNAL_MESSAGE] =
    g_signal_new("message", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                 NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);
  /* A short confirmation for a toast. */
  signals[SIGNAL_TOAST] =
    g_signal_new("toast", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                 NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void sa_share_row_init(SaShareRow *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  g_signal_connect(self->queues_expander, "notify::expanded", G_CALLBACK(on_expanded), self);
  g_signal_connect(self->names_dropdown, "notify::selected", G_CALLBACK(on_names_selected), self);
  g_signal_connect(self->case_dropdown, "notify::selected", G_CALLBACK(on_case_selected), self);
}

GtkWidget *sa_share_row_new(SaShare *share, GListModel *vms)
{
  SaShareRow *self = g_object_new(SA_TYPE_SHARE_ROW, NULL);
  self->share = g_object_ref(share);
  self->vms = vms != NULL ? g_object_ref(vms) : NULL;
  const GActionEntry entries[] = {
    { "attach", on_attach, NULL, NULL, NULL, { 0 } },
    { "detach", on_detach, NULL, NULL, NULL, { 0 } },
    { "set-vm", NULL, "s", "''", on_set_vm, { 0 } },
    { "auto-mount", NULL, NULL, "true", on_auto_mount, { 0 } },
  };
  self->actions = g_simple_action_group_new();
  g_action_map_add_action_entries(G_ACTION_MAP(self->actions), entries, G_N_ELEMENTS(entries), self);
  gtk_widget_insert_action_group(GTK_WIDGET(self), "row", G_ACTION_GROUP(self->actions));
  if (self->vms != NULL)
    g_signal_connect(self->vms, "items-changed", G_CALLBACK(on_vms_changed), self);
  self->read_only_binding =
    g_object_bind_property(share, "read-only", self->read_only_switch, "active",
                           G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  sa_graph_set_share(self->graph, share);
  g_signal_connect(share, "changed", G_CALLBACK(on_share_changed), self);
  g_signal_connect(share, "stats", G_CALLBACK(on_share_stats), self);
  update_properties(self);
  update_stats(self);
  rebuild_menu(self);
  return GTK_WIDGET(self);
}
