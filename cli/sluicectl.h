/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl.h — what sluicectl's files share.  Each file calls only the
 * files listed above it (cli/meson.build has the same map):
 *
 *   sluicectl-find.c    finding a share or a VM by the name a person gives
 *   sluicectl-exit.c    the exit status: usage errors, failures, and whether
 *                       an action asked for happened (the share's Error)
 *   sluicectl-output.c  --json documents and the tables people read
 *   sluicectl-guest.c   where a share is in its VM's guest
 *   sluicectl-wait.c    start --wait: the share for as long as the command runs (systemd)
 *   sluicectl-shares.c  list, add, remove, start, stop, attach, detach, set
 *   sluicectl-stats.c   stats [--watch]
 *   sluicectl-guest-tools.c  vm NAME install-guest-tools | doctor
 *   sluicectl-vms.c     vms; vm NAME enable-agent | enable-shared-memory | add-slots
 *   sluicectl.c         main: global options, the command table, connecting
 *
 * Exit status: 0 done, 1 the service refused or failed, or the action asked
 * for did not happen (the service's message or the share's Error is
 * printed), 2 usage error.  --json prints one JSON document per command
 * (stats --watch: one per line). */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "errors.h"
#include "sluice-dbus.h"
#include "sluice-names.h"

/* Start and Attach wait for a worker and for libvirt. */
#define CTL_CALL_TIMEOUT_MS (120 * 1000)

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct {
        gboolean json;
        GDBusObjectManager *objects;
        SluiceManager *manager;
} Ctl;

/* ---- sluicectl-find.c ---- */
/* Share objects (GDBusObject) in id order; VMs after them by path. */
gint ctl_compare_objects(gconstpointer a, gconstpointer b);
/* The share objects, in id order (free with g_list_free_full(…, g_object_unref)). */
GList *ctl_shares(Ctl *ctl);
/* A share's id: its object path's last part. */
const char *ctl_share_id(SluiceShare *share);
/* SHARE as a person gives it: an object path, an id or a tag. */
SluiceShare *ctl_find_share(Ctl *ctl, const char *name, GError **error);
/* The VM named NAME (or with that UUID or object path). */
SluiceVm *ctl_find_vm(Ctl *ctl, const char *name, GError **error);
gboolean ctl_parse_uint(const char *text, guint64 min, guint64 max, guint64 *out);
/* A new proxy of SHARE: the values the service has now (a proxy's copy is
 * behind a method's reply until PropertiesChanged is dispatched). */
SluiceShare *ctl_fresh_share(SluiceShare *share, GError **error);

/* ---- sluicectl-exit.c ---- */
/* Prints the problem and the hint to --help; returns EXIT_USAGE. */
int ctl_usage_error(const char *format, ...) G_GNUC_PRINTF(1, 2);
/* Prints @error for a person; returns EXIT_FAILED. */
int ctl_fail(GError *error);
/* What a call that succeeded asked of a share, checked against the share's
 * values after it (@fresh: ctl_fresh_share's). */
typedef enum {
        CTL_EXPECT_STARTED,   /* start: running, and attached when its VM runs */
        CTL_EXPECT_ATTACHED,  /* add --attach: as start */
        CTL_EXPECT_DETACHED,  /* detach: not attached */
        CTL_EXPECT_STOPPED,   /* stop: stopped */
} CtlExpect;
/* TRUE when it happened; else FALSE with the share's Error (or what is
 * missing) in @error. */
gboolean ctl_check_outcome(Ctl *ctl, SluiceShare *fresh, CtlExpect expect, GError **error);

/* ---- sluicectl-output.c ---- */
/* TEXT as it may reach a terminal: valid UTF-8 with control characters
 * (a newline or an escape in a folder name) shown as U+FFFD. */
char *ctl_printable(const char *text);
/* One JSON document on a line of its own. */
void ctl_print_json(JsonNode *node);
JsonNode *ctl_share_to_json(SluiceShare *share);
void ctl_print_share_json(SluiceShare *share);
/* A command on a share succeeded: {"object_path", "tag", "guest_hint"?,
 * "guest_path"? (with the hint), "ok"} with --json, else only @hint (when
 * not NULL).  Returns EXIT_OK. */
int ctl_print_done(Ctl *ctl, SluiceShare *share, const char *hint);

/* Columns as wide as their widest cell (in terminal columns); the last one
 * is not padded.  Cells are made safe for a terminal. */
typedef struct _CtlTable CtlTable;
/* A table with its header: one string per column. */
CtlTable *ctl_table_new(guint columns, ...);
/* A row: @note (a line of its own under the row, or NULL), then one string per column. */
void ctl_table_add(CtlTable *table, const char *note, ...);
/* One more line under the last row added (nothing for NULL or ""). */
void ctl_table_add_note(CtlTable *table, const char *note);
void ctl_table_print(CtlTable *table);
void ctl_table_free(CtlTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CtlTable, ctl_table_free)

/* ---- sluicectl-guest.c ---- */
/* The list's IN GUEST cell: the path or drive when Sluice mounted the share
 * in the guest, what it is doing there, or "-". */
const char *ctl_guest_place(SluiceShare *share);
/* "“docs” is at /mnt/docs in debian" / "“docs” is drive Z: in win11" when
 * mounted there, else NULL. */
char *ctl_guest_sentence(SluiceShare *share);
/* A new proxy of SHARE with the service's values after a call, once the
 * guest side is neither mounting nor unmounting (bounded by CTL_CALL_TIMEOUT_MS). */
SluiceShare *ctl_guest_settled_share(SluiceShare *share, GError **error);

/* ---- sluicectl-wait.c ---- */
/* start --wait SHARE: returns the exit status systemd should see. */
int ctl_start_and_wait(Ctl *ctl, SluiceShare *share);

/* ---- sluicectl-shares.c ---- */
int ctl_cmd_list(Ctl *ctl, int argc, char **argv);
int ctl_cmd_add(Ctl *ctl, int argc, char **argv);
/* remove, stop, attach, detach */
int ctl_cmd_share_action(Ctl *ctl, int argc, char **argv);
int ctl_cmd_start(Ctl *ctl, int argc, char **argv);
/* restart SHARE: into the sluice-fs on disk, the guest kept */
int ctl_cmd_restart(Ctl *ctl, int argc, char **argv);
int ctl_cmd_set(Ctl *ctl, int argc, char **argv);

/* ---- sluicectl-guest-tools.c ---- */
/* vm NAME install-guest-tools [--winfsp MSI] [--virtio-win ISO|MSI] | vm NAME doctor */
int ctl_cmd_vm_guest_tools(Ctl *ctl, SluiceVm *vm, int argc, char **argv);

/* ---- sluicectl-stats.c, sluicectl-vms.c ---- */
int ctl_cmd_stats(Ctl *ctl, int argc, char **argv);
int ctl_cmd_vms(Ctl *ctl, int argc, char **argv);
int ctl_cmd_vm(Ctl *ctl, int argc, char **argv);
