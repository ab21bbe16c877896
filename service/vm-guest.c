/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-guest.c — a share's folder in its VM's guest; see vm-guest.h.
 *
 * Each call becomes one GuestCall, queued per VM and run one at a time in a
 * GTask worker thread on its own reference to the raw domain: two shares
 * mounting at once must not both edit /etc/fstab, and a Windows guest's
 * second share needs to know that the first is mounted (WinFsp's launcher
 * instead of the VirtIO-FS service).  What a call needs from the VM is
 * checked when it is queued (a stopped VM or a missing agent is said at
 * once) and again when it starts (the state may have changed behind the
 * call before it).
 *
 * When it starts, a call takes its VM's table of guest-ops.h (guest-os.h
 * says which) and the thread calls through it: nothing here asks which OS
 * the guest runs.  This file keeps, per VM, what Sluice mounted there
 * (SluiceVmDomain.guest_mounts, tag → place) and words every agent error
 * once, an agent that went away making the VM ask its agent anew. */
#include "config.h"

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-os.h"
#include "guest-tools.h"
#include "printable.h"
#include "share-tag.h"
#include "vm-connection.h"
#include "vm-domain.h"
#include "vm-guest.h"
#include "vm-guest-tools.h"

static gboolean domain_guest_ready(const SluiceVmDomain *vm)
{
        return vm->active && vm->guest_agent == SLUICE_WIRE_AGENT_READY &&
               sluice_guest_os_ops(vm->os, vm->guest_os_type) != NULL;
}

gboolean sluice_vm_manager_guest_ready(SluiceVmManager *self, const char *vm_id)
{
        SluiceVmDomain *vm = sluice_vm_manager_find_domain(self, vm_id, NULL);

        return vm != NULL && domain_guest_ready(vm);
}

gboolean sluice_vm_manager_guest_is_windows(SluiceVmManager *self, const char *vm_id)
{
        SluiceVmDomain *vm = sluice_vm_manager_find_domain(self, vm_id, NULL);

        return vm != NULL && sluice_guest_os_ops(vm->os, vm->guest_os_type) == &sluice_guest_windows_ops;
}

char *sluice_vm_manager_guest_agent_message(SluiceVmManager *self, const char *vm_id)
{
        SluiceVmDomain *vm = sluice_vm_manager_find_domain(self, vm_id, NULL);

        return vm != NULL ? g_strdup(sluice_vm_domain_agent_message(vm)) : NULL;
}

SluiceWireGuestAgent sluice_vm_manager_guest_agent(SluiceVmManager *self, const char *vm_id)
{
        SluiceVmDomain *vm = sluice_vm_manager_find_domain(self, vm_id, NULL);

        return vm != NULL ? vm->guest_agent : SLUICE_WIRE_AGENT_NONE;
}

/* ---- one call ------------------------------------------------------------------------ */

typedef enum {
        GUEST_MOUNT,
        GUEST_UNMOUNT,
        GUEST_RELEASE,
        GUEST_FORGET,
} GuestOp;

typedef struct {
        GuestOp op;
        SluiceVmDomain *vm;       /* a reference */
        char *vm_id;
        char *tag;
        char *place;              /* mount: what spec asked ("" = default); others: where it is */
        gboolean at_boot;
        gboolean case_insensitive;
        /* filled when it starts, in the main thread */
        virDomainPtr domain;
        char *vm_name;
        const SluiceGuestOps *ops; /* the guest OS's */
        guint others;             /* other tags Sluice has mounted in this guest */
        char *blocked;            /* what the agent's policy blocks, for a DISABLED error */
        /* set by the thread */
        gboolean agent_gone;      /* the transport said the agent is not there (any more) */
        char **tools_missing;     /* what the guest lacks, when the call learned it (guest-tools.h) */
} GuestCall;

static void guest_call_free(gpointer data)
{
        GuestCall *c = data;

        g_clear_pointer(&c->vm, sluice_vm_domain_unref);
        g_clear_pointer(&c->domain, virDomainFree);
        g_free(c->vm_id);
        g_free(c->tag);
        g_free(c->place);
        g_free(c->vm_name);
        g_free(c->blocked);
        g_strfreev(c->tools_missing);
        g_free(c);
}

/* "Mounting “docs” in “vm1” failed", a whole sentence per operation. */
static char *op_failed(const GuestCall *c)
{
        switch (c->op) {
        case GUEST_MOUNT:
                /* TRANSLATORS: the share's tag, then the VM's name */
                return g_strdup_printf(_("Mounting “%s” in “%s” failed"), c->tag, c->vm_name);
        case GUEST_UNMOUNT:
                /* TRANSLATORS: the share's tag, then the VM's name */
                return g_strdup_printf(_("Unmounting “%s” in “%s” failed"), c->tag, c->vm_name);
        case GUEST_RELEASE:
                /* TRANSLATORS: the share's tag, then the VM's name */
                return g_strdup_printf(_("Releasing the old mount of “%s” in “%s” failed"), c->tag, c->vm_name);
        case GUEST_FORGET:
        default:
                /* TRANSLATORS: the share's tag, then the VM's name */
                return g_strdup_printf(_("Removing the boot-time mount of “%s” in “%s” failed"), c->tag,
                                       c->vm_name);
        }
}

/* Whether a call can run in VM now; what to tell the user when not.  A
 * stopped VM has nothing mounted: unmounting and releasing there succeed
 * (*nothing_to_do). */
static gboolean guest_call_possible(SluiceVmDomain *vm, const GuestCall *c, gboolean *nothing_to_do,
                                    GError **error)
{
        *nothing_to_do = FALSE;
        if (vm->removed) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("The VM “%s” is gone; nothing can be done in its guest."), vm->name);
                return FALSE;
        }
        if (!vm->active) {
                if (c->op == GUEST_UNMOUNT || c->op == GUEST_RELEASE) {
                        *nothing_to_do = TRUE;
                        return TRUE;
                }
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("The VM “%s” is not running; Sluice acts in its guest once it runs and its guest "
                              "agent answers."), vm->name);
                return FALSE;
        }
        if (vm->guest_agent != SLUICE_WIRE_AGENT_READY) {
                const char *why = sluice_vm_domain_agent_message(vm);

                switch (c->op) {
                case GUEST_MOUNT:
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    /* TRANSLATORS: the share's tag, the VM's name, then why not */
                                    _("Mounting “%s” in “%s” is not possible: %s"), c->tag, vm->name, why);
                        break;
                case GUEST_UNMOUNT:
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    /* TRANSLATORS: the share's tag, the VM's name, then why not */
                                    _("Unmounting “%s” in “%s” is not possible: %s"), c->tag, vm->name, why);
                        break;
                case GUEST_RELEASE:
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    /* TRANSLATORS: the share's tag, the VM's name, then why not */
                                    _("Releasing the old mount of “%s” in “%s” is not possible: %s"), c->tag,
                                    vm->name, why);
                        break;
                case GUEST_FORGET:
                default:
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    /* TRANSLATORS: the share's tag, the VM's name, then why not */
                                    _("Removing the boot-time mount of “%s” in “%s” is not possible: %s"), c->tag,
                                    vm->name, why);
                        break;
                }
                return FALSE;
        }
        if (sluice_guest_os_ops(vm->os, vm->guest_os_type) == NULL) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("The guest agent of “%s” does not say which OS the guest runs (it may be older "
                              "than 2.10); Sluice mounts shares only in Linux and Windows guests it recognises. "
                              "Mount it in the guest yourself, or update qemu-guest-agent."),
                            vm->name);
                return FALSE;
        }
        if (vm->domain == NULL) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("The connection to libvirt (%s) is down; Sluice is reconnecting."),
                            sluice_vm_connection_get_uri(vm->connection));
                return FALSE;
        }
        return TRUE;
}

/* A transport error (guest-agent.h) as a sentence for a person: what
 * failed, what libvirt or the guest said, what to do. */
static void wrap_agent_error(const GuestCall *c, GError **error)
{
        g_autofree char *what = op_failed(c);
        /* a policy that blocks the command: the VM's own advice, naming what it blocks */
        g_autofree char *restricted =
                g_error_matches(*error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_DISABLED)
                        ? sluice_vm_domain_restricted_message(c->blocked)
                        : NULL;
        char *message = sluice_guest_agent_error_sentence(*error, what, restricted);

        g_clear_error(error);
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, message);
        g_free(message);
}

/* Every error that leaves here is GUEST_AGENT, BUSY or INVALID_ARGUMENT
 * (a mount point or drive letter that is not acceptable), and its message
 * printable: it becomes a share's Error, a D-Bus string, and a quote of the
 * guest that a procedure forgot to filter must not reach it raw. */
static void normalise_error(const GuestCall *c, GError **error)
{
        GError *e = *error;
        char *message;

        if (e->domain == SLUICE_GUEST_AGENT_ERROR) {
                wrap_agent_error(c, error);
                return;
        }
        if (!(e->domain == SLUICE_ERROR && (e->code == SLUICE_ERROR_GUEST_AGENT || e->code == SLUICE_ERROR_BUSY ||
                                            e->code == SLUICE_ERROR_INVALID_ARGUMENT))) {
                e->domain = SLUICE_ERROR;
                e->code = SLUICE_ERROR_GUEST_AGENT;
        }
        message = sluice_printable(e->message, -1, SLUICE_GUEST_AGENT_MESSAGE_MAX_CHARS);
        g_free(e->message);
        e->message = message;
}

/* ---- the worker thread ---------------------------------------------------------------- */

/* Mounts C's tag where it asked, or at the OS's default place; the
 * boot-time record first, so that a failure to keep what the user asked
 * for is said before anything is mounted. */
static char *guest_mount(GuestCall *c, GError **error)
{
        const SluiceGuestOps *ops = c->ops;
        g_autoptr(GError) boot_error = NULL;

        if (!ops->check_place(c->place, error))
                return NULL;
        if (*c->place == '\0') {
                g_free(c->place);
                c->place = ops->default_place(c->tag);
        }
        if (ops->set_at_boot != NULL && !ops->set_at_boot(c->domain, c->tag, c->place, c->at_boot, &boot_error)) {
                if (c->at_boot || sluice_guest_agent_error_is_gone(boot_error)) {
                        g_propagate_error(error, g_steal_pointer(&boot_error));
                        return NULL;
                }
                /* a stale line of Sluice's mounts nothing that is not there: mounting now matters more */
                g_warning("%s: cannot forget the boot-time mount of %s: %s", c->vm_name, c->tag,
                          boot_error->message);
        }
        return ops->mount(c->domain, c->tag, c->place, c->others, c->case_insensitive, error);
}

static char *guest_call_run(GuestCall *c, GError **error)
{
        const SluiceGuestOps *ops = c->ops;

        if (!sluice_share_tag_check(c->tag, error))
                return NULL;
        if (c->op == GUEST_MOUNT)
                return guest_mount(c, error);
        /* a caller that does not know the place (any more) means the default one */
        if (*c->place == '\0') {
                g_free(c->place);
                c->place = ops->default_place(c->tag);
        }
        switch (c->op) {
        case GUEST_UNMOUNT:
                return ops->unmount(c->domain, c->tag, c->place, error) ? g_strdup(c->place) : NULL;
        case GUEST_RELEASE:
                return ops->release(c->domain, c->tag, c->place, error) ? g_strdup(c->place) : NULL;
        case GUEST_FORGET:
        default:
                if (ops->set_at_boot != NULL && !ops->set_at_boot(c->domain, c->tag, c->place, FALSE, error))
                        return NULL;
                return g_strdup("");
        }
}

/* The whole of one call, all its agent commands together: an unmount, a
 * release or an fstab edit within SLUICE_GUEST_OPERATION_TIMEOUT_S (the
 * share's Stop waits for it); a mount, which may wait for a hot-plugged
 * device to show up and runs a slow first mount, longer. */
#define GUEST_MOUNT_TIMEOUT_S 30

static void guest_call_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        GuestCall *c = task_data;
        GError *error = NULL;
        char *place;

        sluice_guest_agent_set_deadline(c->op == GUEST_MOUNT ? GUEST_MOUNT_TIMEOUT_S
                                                             : SLUICE_GUEST_OPERATION_TIMEOUT_S);
        place = guest_call_run(c, &error);
        /* the pool's thread runs other tasks after this one */
        sluice_guest_agent_set_deadline(0);
        c->tools_missing = sluice_guest_tools_take_noted();

        if (place != NULL) {
                g_task_return_pointer(task, place, g_free);
                return;
        }
        if (error == NULL) { /* a contract broken below: still an answer */
                g_autofree char *what = op_failed(c);

                g_set_error_literal(&error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, what);
        }
        /* the agent went away or hangs: what the VM says of it is asked anew */
        c->agent_gone = sluice_guest_agent_error_is_gone(error);
        normalise_error(c, &error);
        /* something is missing: the Error offers to install it */
        if (c->tools_missing != NULL && c->tools_missing[0] != NULL) {
                g_autofree char *offer = sluice_vm_guest_tools_offer(c->vm_name);
                char *message = g_strconcat(error->message, " ", offer, NULL);

                g_free(error->message);
                error->message = message;
        }
        g_task_return_error(task, error);
}

/* ---- the queue (main thread) --------------------------------------------------------- */

static void guest_queue_next(SluiceVmDomain *vm);

static void guest_call_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(GTask) outer = user_data;
        GuestCall *c = g_task_get_task_data(G_TASK(result));
        g_autoptr(SluiceVmDomain) vm = sluice_vm_domain_ref(c->vm);
        g_autoptr(GError) error = NULL;
        g_autofree char *place = g_task_propagate_pointer(G_TASK(result), &error);

        vm->guest_busy = FALSE;
        if (place != NULL) {
                if (c->op == GUEST_MOUNT)
                        g_hash_table_insert(vm->guest_mounts, g_strdup(c->tag), g_strdup(place));
                else if (c->op == GUEST_UNMOUNT || c->op == GUEST_RELEASE)
                        g_hash_table_remove(vm->guest_mounts, c->tag);
        }
        if (c->agent_gone && !vm->removed)
                sluice_vm_domain_agent_recheck(vm);
        if (c->tools_missing != NULL)
                sluice_vm_guest_tools_set_missing(vm, (const char *const *)c->tools_missing);
        if (place != NULL)
                g_task_return_pointer(outer, g_steal_pointer(&place), g_free);
        else
                g_task_return_error(outer, g_steal_pointer(&error));
        guest_queue_next(vm);
}

/* Starts OUTER's call, or answers it when it cannot run (any more). */
static void guest_call_start(SluiceVmDomain *vm, GTask *outer)
{
        GuestCall *c = g_task_get_task_data(outer);
        g_autoptr(GTask) inner = NULL;
        g_autoptr(GError) error = NULL;
        gboolean nothing_to_do;

        if (!guest_call_possible(vm, c, &nothing_to_do, &error)) {
                g_task_return_error(outer, g_steal_pointer(&error));
                return;
        }
        if (nothing_to_do) {
                g_task_return_pointer(outer, g_strdup(c->place), g_free);
                return;
        }
        c->domain = sluice_vm_domain_get_raw(vm);
        c->vm_name = g_strdup(vm->name);
        /* the VM's OS, once per call: every step of it goes through one table */
        c->ops = sluice_guest_os_ops(vm->os, vm->guest_os_type);
        c->blocked = g_strdup(vm->guest_agent_blocked);
        c->others = g_hash_table_size(vm->guest_mounts) -
                    (g_hash_table_contains(vm->guest_mounts, c->tag) ? 1u : 0u);
        vm->guest_busy = TRUE;
        /* the inner task owns nothing but the call's data; outer keeps the caller's */
        inner = g_task_new(NULL, NULL, guest_call_done, g_object_ref(outer));
        g_task_set_task_data(inner, c, NULL);
        g_task_run_in_thread(inner, guest_call_thread);
}

static void guest_queue_next(SluiceVmDomain *vm)
{
        while (!vm->guest_busy && !g_queue_is_empty(vm->guest_calls)) {
                g_autoptr(GTask) outer = g_queue_pop_head(vm->guest_calls);

                guest_call_start(vm, outer);
        }
}

/* Queues a call on VM_ID's guest; answers at once when it cannot be done. */
static void guest_call_queue(SluiceVmManager *self, GuestOp op, const char *vm_id, const char *tag,
                             const char *place, gboolean at_boot, gboolean case_insensitive,
                             gpointer source_tag, GAsyncReadyCallback callback, gpointer user_data)
{
        g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);
        g_autoptr(GError) error = NULL;
        SluiceVmDomain *vm = sluice_vm_manager_find_domain(self, vm_id, &error);
        GuestCall *c;
        gboolean nothing_to_do;

        g_task_set_source_tag(task, source_tag);
        c = g_new0(GuestCall, 1);
        c->op = op;
        c->vm_id = g_strdup(vm_id);
        c->tag = g_strdup(tag != NULL ? tag : "");
        c->place = g_strdup(place != NULL ? place : "");
        c->at_boot = at_boot;
        c->case_insensitive = case_insensitive;
        g_task_set_task_data(task, c, guest_call_free);
        if (vm == NULL) {
                /* a VM that is gone has nothing mounted any more */
                if ((op == GUEST_UNMOUNT || op == GUEST_RELEASE) &&
                    (g_error_matches(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND) ||
                     g_error_matches(error, SLUICE_ERROR, SLUICE_ERROR_NO_VM))) {
                        g_task_return_pointer(task, g_strdup(c->place), g_free);
                        return;
                }
                g_task_return_new_error(task, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, "%s", error->message);
                return;
        }
        c->vm = sluice_vm_domain_ref(vm);
        /* said at once, not after the calls queued before it */
        if (!guest_call_possible(vm, c, &nothing_to_do, &error)) {
                g_task_return_error(task, g_steal_pointer(&error));
                return;
        }
        g_queue_push_tail(vm->guest_calls, g_steal_pointer(&task));
        guest_queue_next(vm);
}

/* ---- the API ------------------------------------------------------------------------- */

void sluice_vm_manager_guest_mount_async(SluiceVmManager *self, const char *vm, const SluiceGuestMountSpec *spec,
                                         GAsyncReadyCallback callback, gpointer user_data)
{
        g_return_if_fail(SLUICE_IS_VM_MANAGER(self));
        g_return_if_fail(spec != NULL);
        guest_call_queue(self, GUEST_MOUNT, vm, spec->tag, spec->mount_point, spec->at_boot,
                         spec->case_insensitive, sluice_vm_manager_guest_mount_async, callback, user_data);
}

char *sluice_vm_manager_guest_mount_finish(SluiceVmManager *self, GAsyncResult *result, GError **error)
{
        g_return_val_if_fail(g_task_is_valid(result, self), NULL);
        return g_task_propagate_pointer(G_TASK(result), error);
}

void sluice_vm_manager_guest_unmount_async(SluiceVmManager *self, const char *vm, const char *tag, const char *place,
                                           GAsyncReadyCallback callback, gpointer user_data)
{
        g_return_if_fail(SLUICE_IS_VM_MANAGER(self));
        guest_call_queue(self, GUEST_UNMOUNT, vm, tag, place, FALSE, FALSE, sluice_vm_manager_guest_unmount_async,
                         callback, user_data);
}

static gboolean propagate_done(SluiceVmManager *self, GAsyncResult *result, GError **error)
{
        g_autofree char *place = NULL;

        g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
        place = g_task_propagate_pointer(G_TASK(result), error);
        return place != NULL;
}

gboolean sluice_vm_manager_guest_unmount_finish(SluiceVmManager *self, GAsyncResult *result, GError **error)
{
        return propagate_done(self, result, error);
}

void sluice_vm_manager_guest_release_async(SluiceVmManager *self, const char *vm, const char *tag, const char *place,
                                           GAsyncReadyCallback callback, gpointer user_data)
{
        g_return_if_fail(SLUICE_IS_VM_MANAGER(self));
        guest_call_queue(self, GUEST_RELEASE, vm, tag, place, FALSE, FALSE, sluice_vm_manager_guest_release_async,
                         callback, user_data);
}

gboolean sluice_vm_manager_guest_release_finish(SluiceVmManager *self, GAsyncResult *result, GError **error)
{
        return propagate_done(self, result, error);
}

void sluice_vm_manager_guest_forget_async(SluiceVmManager *self, const char *vm, const char *tag,
                                          GAsyncReadyCallback callback, gpointer user_data)
{
        g_return_if_fail(SLUICE_IS_VM_MANAGER(self));
        guest_call_queue(self, GUEST_FORGET, vm, tag, "", FALSE, FALSE, sluice_vm_manager_guest_forget_async, callback,
                         user_data);
}

gboolean sluice_vm_manager_guest_forget_finish(SluiceVmManager *self, GAsyncResult *result, GError **error)
{
        return propagate_done(self, result, error);
}
