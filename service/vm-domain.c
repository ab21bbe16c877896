/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-domain.c — see vm-domain.h.  Every call that waits on libvirtd or on
 * the guest (state and XML, the agent's probe, EnableSharedMemory,
 * EnableGuestAgent) runs in a GTask worker thread on its own reference to
 * the raw virDomain (thread-safe), and its result is applied back in the
 * main thread. */
#include "config.h"

#include "vm-domain.h"
#include "domain-xml.h"
#include "errors.h"
#include "printable.h"
#include "guest-os.h"
#include "hotplug.h"
#include "sluice-names.h"
#include "vm-confinement.h"
#include "vm-socket-access.h"

#include <glib/gi18n.h>
#include <libvirt/virterror.h>
#include <unistd.h>

static gboolean on_enable_shared_memory(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                        gpointer user_data);
static gboolean on_enable_guest_agent(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                      gpointer user_data);
static void agent_publish(SluiceVmDomain *vm);
typedef struct ProbeData ProbeData;
static SluiceAgentProbeEvent agent_read_event(const SluiceVmDomain *vm);
static gboolean agent_step(SluiceVmDomain *vm, SluiceAgentProbeEvent event, const ProbeData *probe);
static void agent_report(SluiceVmDomain *vm, gboolean changed);

/* ---- the entry ------------------------------------------------------------------ */

static char *object_path_for(const char *uuid)
{
        g_autoptr(GString) path = g_string_new(SLUICE_VM_PATH_PREFIX);

        for (const char *c = uuid; *c; c++)
                if (g_ascii_isxdigit(*c))
                        g_string_append_c(path, g_ascii_tolower(*c));
        return g_string_free(g_steal_pointer(&path), FALSE);
}

/* libvirt's state as Vm.State tells it apart. */
static SluiceWireVmState wire_state(int state)
{
        switch (state) {
        case VIR_DOMAIN_RUNNING:
        case VIR_DOMAIN_BLOCKED:
        case VIR_DOMAIN_SHUTDOWN: /* still running while it shuts down */
                return SLUICE_WIRE_VM_RUNNING;
        case VIR_DOMAIN_PAUSED:
        case VIR_DOMAIN_PMSUSPENDED:
                return SLUICE_WIRE_VM_PAUSED;
        case VIR_DOMAIN_SHUTOFF:
                return SLUICE_WIRE_VM_SHUTOFF;
        case VIR_DOMAIN_CRASHED:
                return SLUICE_WIRE_VM_CRASHED;
        default:
                return SLUICE_WIRE_VM_OTHER;
        }
}

static void on_domain_event(GVirDomain *domain, gpointer user_data)
{
        sluice_vm_domain_refresh(user_data);
}

void sluice_vm_domain_set_domain(SluiceVmDomain *vm, GVirDomain *domain)
{
        /* every lifecycle signal means "re-read the state" */
        static const char *const lifecycle[] = { "started", "stopped", "suspended", "resumed",
                                                 "updated", "pmsuspended" };

        if (vm->domain) {
                g_signal_handlers_disconnect_by_data(vm->domain, vm);
                g_clear_object(&vm->domain);
                /* libvirtd went away: its agent may be another one when it is back */
                (void)agent_step(vm, SLUICE_AGENT_PROBE_EVENT_LIBVIRT_LOST, NULL);
        }
        if (!domain || vm->removed)
                return;
        vm->domain = g_object_ref(domain);
        for (gsize i = 0; i < G_N_ELEMENTS(lifecycle); i++)
                g_signal_connect(domain, lifecycle[i], G_CALLBACK(on_domain_event), vm);
}

SluiceVmDomain *sluice_vm_domain_new(SluiceVmConnection *connection, GVirDomain *domain,
                                     GDBusObjectManagerServer *server,
                                     SluiceVmDomainChanged changed,
                                     SluiceVmDomainGuestChanged guest_changed, gpointer changed_data)
{
        SluiceVmDomain *vm = g_atomic_rc_box_new0(SluiceVmDomain);
        g_autofree char *path = NULL;

        vm->connection = connection;
        vm->uuid = g_strdup(gvir_domain_get_uuid(domain));
        vm->name = g_strdup(gvir_domain_get_name(domain));
        vm->os = g_strdup("");
        vm->qemu_uid = -1;
        sluice_agent_probe_init(&vm->probe);
        vm->alias_to_tag = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        vm->tags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        vm->guest_mounts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        vm->guest_calls = g_queue_new();
        vm->guest_os_name = g_strdup("");
        vm->server = server ? g_object_ref(server) : NULL;
        vm->changed = changed;
        vm->guest_changed = guest_changed;
        vm->changed_data = changed_data;

        path = object_path_for(vm->uuid);
        vm->object = sluice_object_skeleton_new(path);
        vm->iface = sluice_vm_skeleton_new();
        sluice_vm_set_name(vm->iface, vm->name);
        sluice_vm_set_uuid(vm->iface, vm->uuid);
        sluice_vm_set_uri(vm->iface, sluice_vm_connection_get_uri(connection));
        sluice_vm_set_state(vm->iface, sluice_wire_vm_state_name(SLUICE_WIRE_VM_OTHER));
        sluice_vm_set_shared_memory(vm->iface, FALSE);
        sluice_vm_set_os(vm->iface, "");
        sluice_vm_set_confinement(vm->iface, sluice_confinement_model_to_wire(SLUICE_CONFINEMENT_MODEL_NONE));
        sluice_vm_set_confinement_problem(vm->iface, "");
        g_signal_connect(vm->iface, "handle-enable-shared-memory",
                         G_CALLBACK(on_enable_shared_memory), vm);
        g_signal_connect(vm->iface, "handle-enable-guest-agent",
                         G_CALLBACK(on_enable_guest_agent), vm);
        agent_publish(vm);
        sluice_object_skeleton_set_vm(vm->object, vm->iface);

        sluice_vm_domain_set_domain(vm, domain);
        /* exported once its state is known (on_refreshed) */
        sluice_vm_domain_refresh(vm);
        return vm;
}

SluiceVmDomain *sluice_vm_domain_ref(SluiceVmDomain *vm)
{
        return g_atomic_rc_box_acquire(vm);
}

static void vm_domain_clear(gpointer data)
{
        SluiceVmDomain *vm = data;

        /* removed first (main thread): nothing is exported or connected any more */
        g_clear_object(&vm->iface);
        g_clear_object(&vm->object);
        g_clear_object(&vm->server);
        g_hash_table_unref(vm->alias_to_tag);
        g_hash_table_unref(vm->tags);
        g_hash_table_unref(vm->guest_mounts);
        /* a queued call holds a reference: the queue is empty by now */
        g_queue_free(vm->guest_calls);
        g_free(vm->guest_os_name);
        g_free(vm->guest_agent_blocked);
        g_free(vm->agent_error);
        g_free(vm->uuid);
        g_free(vm->name);
        g_free(vm->os);
        g_free(vm->confinement_blocked);
        g_free(vm->confinement_refused);
}

void sluice_vm_domain_unref(SluiceVmDomain *vm)
{
        g_atomic_rc_box_release_full(vm, vm_domain_clear);
}

void sluice_vm_domain_remove(SluiceVmDomain *vm)
{
        if (vm->removed)
                return;
        sluice_vm_domain_set_domain(vm, NULL);
        vm->removed = TRUE;
        (void)agent_step(vm, SLUICE_AGENT_PROBE_EVENT_REMOVED, NULL);
        g_signal_handlers_disconnect_by_data(vm->iface, vm);
        if (vm->ready && vm->server) {
                g_autofree char *path = object_path_for(vm->uuid);
                (void)g_dbus_object_manager_server_unexport(vm->server, path);
        }
}

virDomainPtr sluice_vm_domain_get_raw(SluiceVmDomain *vm)
{
        virDomainPtr raw = NULL;

        if (vm->domain)
                g_object_get(vm->domain, "handle", &raw, NULL); /* a new reference */
        return raw;
}

void sluice_vm_domain_set_tag(SluiceVmDomain *vm, const char *tag, gboolean plugged)
{
        if (plugged)
                g_hash_table_add(vm->tags, g_strdup(tag));
        else
                g_hash_table_remove(vm->tags, tag);
        vm->tags_epoch++;
}

void sluice_vm_domain_forget_devices(SluiceVmDomain *vm)
{
        g_hash_table_remove_all(vm->tags);
        g_hash_table_remove_all(vm->guest_mounts);
        vm->tags_epoch++;
        sluice_socket_access_revoke(vm->uuid, NULL);
}

/* ---- reading the state ---------------------------------------------------------- */

/* What a thread works on: the entry and the raw domain, both references. */
typedef struct {
        SluiceVmDomain *vm;
        virDomainPtr domain;
} DomainRef;

static void domain_ref_clear(DomainRef *r)
{
        g_clear_pointer(&r->vm, sluice_vm_domain_unref);
        g_clear_pointer(&r->domain, virDomainFree);
}

/* What a refresh read from libvirtd, in a worker thread. */
typedef struct {
        DomainRef ref;
        char *name;              /* the VM's, for the confinement's words */
        guint64 tags_epoch;
        int state;
        SluiceDomainXml *parsed; /* NULL when the XML could not be read */
        gboolean agent_next_boot;
        SluiceConfinementReport *confinement; /* NULL when QEMU is not confined */
} RefreshData;

static void refresh_data_free(gpointer data)
{
        RefreshData *d = data;

        domain_ref_clear(&d->ref);
        g_free(d->name);
        g_clear_pointer(&d->parsed, sluice_domain_xml_free);
        g_clear_pointer(&d->confinement, sluice_confinement_report_free);
        g_free(d);
}

static void refresh_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        RefreshData *d = task_data;
        g_autofree char *xml = NULL;
        GError *error = NULL;
        int reason;

        if (virDomainGetState(d->ref.domain, &d->state, &reason, 0) < 0) {
                sluice_hotplug_set_libvirt_error(&error, "cannot read the state");
                g_task_return_error(task, error);
                return;
        }
        xml = virDomainGetXMLDesc(d->ref.domain, 0);
        if (xml)
                d->parsed = sluice_domain_xml_parse(xml, NULL);
        /* running without the agent's channel: added for the next boot? */
        if (d->parsed && d->parsed->agent_channel == SLUICE_DOMAIN_AGENT_CHANNEL_NONE &&
            d->state != VIR_DOMAIN_SHUTOFF && virDomainIsPersistent(d->ref.domain) == 1) {
                g_autofree char *inactive = virDomainGetXMLDesc(d->ref.domain, VIR_DOMAIN_XML_INACTIVE);
                g_autoptr(SluiceDomainXml) saved = inactive ? sluice_domain_xml_parse(inactive, NULL) : NULL;

                d->agent_next_boot = saved && saved->agent_channel != SLUICE_DOMAIN_AGENT_CHANNEL_NONE;
        }
        if (d->parsed && d->parsed->confinement != SLUICE_CONFINEMENT_MODEL_NONE) {
                SluiceConfinementVm confined = {
                        .model = d->parsed->confinement,
                        .label = d->parsed->confinement_label,
                        .name = d->name,
                        .uuid = d->ref.vm->uuid,
                };

                d->confinement = sluice_confinement_check(&confined, NULL);
        }
        g_task_return_boolean(task, TRUE);
}

/* What the host's confinement does to QEMU, as far as is known. */
static void confinement_publish(SluiceVmDomain *vm)
{
        const char *problem = vm->confinement_blocked ? vm->confinement_blocked
                              : vm->confinement_refused ? vm->confinement_refused : "";

        sluice_vm_set_confinement(vm->iface, sluice_confinement_model_to_wire(vm->confinement));
        sluice_vm_set_confinement_problem(vm->iface, problem);
}

void sluice_vm_domain_set_confinement_refused(SluiceVmDomain *vm, const char *problem)
{
        g_free(vm->confinement_refused);
        vm->confinement_refused = g_strdup(problem);
        confinement_publish(vm);
}

/* Applies a refresh; returns whether the VM started (1) or stopped (-1).
 * *GUEST_CHANGED: set when what the share side sees of the agent changed. */
static int vm_apply(SluiceVmDomain *vm, RefreshData *d, gboolean *guest_changed)
{
        gboolean was_active = vm->active;
        gboolean was_paused = vm->paused;
        SluiceDomainXml *parsed = d->parsed;

        vm->active = d->state != VIR_DOMAIN_SHUTOFF && d->state != VIR_DOMAIN_CRASHED &&
                     d->state != VIR_DOMAIN_NOSTATE;
        vm->paused = d->state == VIR_DOMAIN_PAUSED || d->state == VIR_DOMAIN_PMSUSPENDED;
        /* what a paused guest's agent said (or could not say) may be asked again */
        if (was_paused && !vm->paused)
                *guest_changed |= agent_step(vm, SLUICE_AGENT_PROBE_EVENT_RESUMED, NULL);
        if (parsed) {
                GHashTableIter iter;
                gpointer value;
                /* a hot-plug finished after this read started: its result is newer */
                gboolean tags_current = d->tags_epoch == vm->tags_epoch;

                vm->shared_memory = parsed->shared_memory;
                vm->agent_channel = parsed->agent_channel;
                vm->agent_next_boot = d->agent_next_boot;
                g_free(vm->os);
                vm->os = sluice_domain_xml_os_short_id(parsed->os_id);
                vm->confinement = parsed->confinement;
                g_clear_pointer(&vm->confinement_blocked, g_free);
                if (d->confinement && d->confinement->status == SLUICE_CONFINEMENT_BLOCKED)
                        vm->confinement_blocked = g_strdup(d->confinement->message);
                vm->qemu_uid = vm->active && parsed->dac_uid != (gint64)geteuid() ? parsed->dac_uid : -1;
                g_hash_table_remove_all(vm->alias_to_tag);
                if (tags_current)
                        g_hash_table_remove_all(vm->tags);
                g_hash_table_iter_init(&iter, parsed->filesystems);
                while (g_hash_table_iter_next(&iter, NULL, &value)) {
                        SluiceDomainFilesystem *fs = value;
                        if (fs->alias)
                                g_hash_table_insert(vm->alias_to_tag, g_strdup(fs->alias),
                                                    g_strdup(fs->tag));
                        if (tags_current && vm->active)
                                g_hash_table_add(vm->tags, g_strdup(fs->tag));
                }
        }
        if (vm->domain && !g_str_equal(vm->name, gvir_domain_get_name(vm->domain))) {
                g_free(vm->name);
                vm->name = g_strdup(gvir_domain_get_name(vm->domain));
        }

        /* a refusal is the running QEMU's: a new one gets asked anew */
        if (!vm->active)
                g_clear_pointer(&vm->confinement_refused, g_free);

        g_object_freeze_notify(G_OBJECT(vm->iface));
        sluice_vm_set_name(vm->iface, vm->name);
        sluice_vm_set_state(vm->iface, sluice_wire_vm_state_name(wire_state(d->state)));
        sluice_vm_set_shared_memory(vm->iface, vm->shared_memory);
        sluice_vm_set_os(vm->iface, vm->os);
        confinement_publish(vm);
        g_object_thaw_notify(G_OBJECT(vm->iface));

        if (vm->active != was_active && !vm->active)
                sluice_vm_domain_forget_devices(vm);
        *guest_changed |= agent_step(vm, agent_read_event(vm), NULL);
        if (vm->active == was_active)
                return 0;
        return vm->active ? 1 : -1;
}

static void on_refreshed(GObject *source, GAsyncResult *result, gpointer user_data)
{
        GTask *task = G_TASK(result);
        RefreshData *d = g_task_get_task_data(task);
        g_autoptr(SluiceVmDomain) vm = sluice_vm_domain_ref(d->ref.vm);
        g_autoptr(GError) error = NULL;
        int change = 0;
        gboolean guest_changed = FALSE;

        if (vm->removed)
                return;
        vm->refreshing = FALSE;
        if (!g_task_propagate_boolean(task, &error))
                g_debug("%s: %s: %s", sluice_vm_connection_get_uri(vm->connection), vm->name,
                        error->message);
        else
                change = vm_apply(vm, d, &guest_changed);
        if (!vm->ready) {
                vm->ready = TRUE;
                if (vm->server)
                        g_dbus_object_manager_server_export(vm->server, G_DBUS_OBJECT_SKELETON(vm->object));
        }
        if (vm->refresh_again) {
                vm->refresh_again = FALSE;
                sluice_vm_domain_refresh(vm);
        }
        /* last: a handler may remove this VM (our reference keeps it alive) */
        if (vm->changed)
                vm->changed(vm, change, vm->changed_data);
        if (guest_changed)
                agent_report(vm, TRUE);
}

void sluice_vm_domain_refresh(SluiceVmDomain *vm)
{
        g_autoptr(GTask) task = NULL;
        RefreshData *d;

        if (!vm->domain || vm->removed)
                return;
        if (vm->refreshing) {
                vm->refresh_again = TRUE;
                return;
        }
        d = g_new0(RefreshData, 1);
        d->ref.vm = sluice_vm_domain_ref(vm);
        d->ref.domain = sluice_vm_domain_get_raw(vm);
        if (!d->ref.domain) {
                refresh_data_free(d);
                return;
        }
        d->name = g_strdup(vm->name);
        d->tags_epoch = vm->tags_epoch;
        vm->refreshing = TRUE;
        task = g_task_new(NULL, NULL, on_refreshed, NULL);
        g_task_set_task_data(task, d, refresh_data_free);
        g_task_run_in_thread(task, refresh_thread);
}

/* ---- the guest agent -------------------------------------------------------------- */

/* How long after a probe the agent is asked again when it has opened its
 * channel but does not answer yet (it starts while the guest boots); how
 * often: SLUICE_AGENT_PROBE_ATTEMPTS. */
#define PROBE_RETRY_S 5
/* the most of a libvirt error quoted in GuestAgentMessage */
#define AGENT_ERROR_MAX_CHARS 200

/* What the agent's words depend on besides its state. */
typedef struct {
        const char *vm_name;
        gboolean active;
        gboolean agent_next_boot; /* NONE: the saved definition has the channel */
        const char *agent_error;  /* DISCONNECTED: why the last probe failed, or NULL */
        const char *blocked;      /* RESTRICTED: what its policy blocks, or NULL */
} AgentFacts;

/* Why the agent is not ready, and what to do; "" when it is.  The one
 * place vm-domain.c words the agent's state (Vm.GuestAgentMessage, and the
 * policy advice vm-guest.c quotes). */
static char *agent_words(SluiceWireGuestAgent state, const AgentFacts *f)
{
        static const char *const install =
                N_("Install and start qemu-guest-agent in the guest (Windows: the guest tools of virtio-win).");

        switch (state) {
        case SLUICE_WIRE_AGENT_READY:
                return g_strdup("");
        case SLUICE_WIRE_AGENT_RESTRICTED:
                return g_strdup_printf(
                        _("The guest agent answers, but its policy blocks %s, which Sluice needs to mount shares. "
                          "In the guest, allow them and restart qemu-guest-agent: on Fedora, RHEL and their "
                          "relatives in /etc/sysconfig/qemu-ga (add them to the --allow-rpcs list of "
                          "FILTER_RPC_ARGS, or take them out of its --block-rpcs list or of BLACKLIST_RPC); "
                          "elsewhere with qemu-ga's allow-rpcs or block-rpcs setting (/etc/qemu/qemu-ga.conf "
                          "or its command line)."),
                        f->blocked != NULL && *f->blocked != '\0' ? f->blocked : "guest-exec, guest-file-*");
        case SLUICE_WIRE_AGENT_NONE: {
                g_autofree char *name = sluice_shell_word(f->vm_name != NULL ? f->vm_name : "");

                if (f->agent_next_boot)
                        return g_strdup_printf(
                                _("The channel for the QEMU guest agent is in the VM's definition and takes "
                                  "effect at the next boot. %s"), _(install));
                return g_strdup_printf(
                        _("The VM has no channel for the QEMU guest agent, so Sluice cannot mount shares "
                          "in the guest. Add it: sluicectl vm %s enable-agent (or Vm.EnableGuestAgent), "
                          "then install qemu-guest-agent in the guest."),
                        name);
        }
        case SLUICE_WIRE_AGENT_DISCONNECTED:
        default:
                if (!f->active)
                        return g_strdup(_("The VM is not running; Sluice asks its guest agent when it runs."));
                if (f->agent_error != NULL)
                        return g_strdup_printf(_("The guest agent does not answer (%s). %s"), f->agent_error,
                                               _(install));
                return g_strdup_printf(_("No guest agent answers in the VM (while it boots, that is normal). %s"),
                                       _(install));
        }
}

char *sluice_vm_domain_restricted_message(const char *blocked)
{
        const AgentFacts facts = { .blocked = blocked };

        return agent_words(SLUICE_WIRE_AGENT_RESTRICTED, &facts);
}

static char *agent_message(SluiceVmDomain *vm)
{
        const AgentFacts facts = {
                .vm_name = vm->name,
                .active = vm->active,
                .agent_next_boot = vm->agent_next_boot,
                .agent_error = vm->agent_error,
                .blocked = vm->guest_agent_blocked,
        };

        return agent_words(vm->guest_agent, &facts);
}

const char *sluice_vm_domain_agent_message(SluiceVmDomain *vm)
{
        return sluice_vm_get_guest_agent_message(vm->iface);
}

static void agent_publish(SluiceVmDomain *vm)
{
        g_autofree char *message = agent_message(vm);

        g_object_freeze_notify(G_OBJECT(vm->iface));
        sluice_vm_set_guest_agent(vm->iface, sluice_wire_guest_agent_name(vm->guest_agent));
        sluice_vm_set_guest_agent_message(vm->iface, message);
        sluice_vm_set_guest_os_type(vm->iface, sluice_wire_guest_os_name(vm->guest_os_type));
        sluice_vm_set_guest_os_name(vm->iface, vm->guest_os_name);
        g_object_thaw_notify(G_OBJECT(vm->iface));
}

/* Sets the state; TRUE when what the share side sees changed. */
static gboolean agent_set(SluiceVmDomain *vm, SluiceWireGuestAgent state)
{
        g_autofree char *before = g_strdup(sluice_vm_get_guest_agent_message(vm->iface));
        SluiceWireGuestAgent old = vm->guest_agent;
        SluiceWireGuestOs old_os = vm->guest_os_type;

        vm->guest_agent = state;
        /* an agent that went away may have taken a reboot with it: what
         * Sluice mounted there is asked anew when it is back (vm-guest.c) */
        if (old == SLUICE_WIRE_AGENT_READY && state != SLUICE_WIRE_AGENT_READY)
                g_hash_table_remove_all(vm->guest_mounts);
        agent_publish(vm);
        return old != state || g_strcmp0(before, sluice_vm_get_guest_agent_message(vm->iface)) != 0 ||
               old_os != vm->guest_os_type;
}

/* What a probe found, in the main thread. */
struct ProbeData {
        DomainRef ref;
        SluiceGuestAgentInfo info;
        GError *error;
};

static void probe_data_free(gpointer data)
{
        ProbeData *d = data;

        domain_ref_clear(&d->ref);
        sluice_guest_agent_info_clear(&d->info);
        g_clear_error(&d->error);
        g_free(d);
}

/* What the last read says of the agent, as the probe's event. */
static SluiceAgentProbeEvent agent_read_event(const SluiceVmDomain *vm)
{
        if (vm->agent_channel == SLUICE_DOMAIN_AGENT_CHANNEL_NONE)
                return SLUICE_AGENT_PROBE_EVENT_READ_NONE;
        if (!vm->active || vm->agent_channel == SLUICE_DOMAIN_AGENT_CHANNEL_DISCONNECTED)
                return SLUICE_AGENT_PROBE_EVENT_READ_DOWN;
        /* connected, or a channel whose state libvirt does not tell */
        return vm->paused ? SLUICE_AGENT_PROBE_EVENT_READ_PAUSED : SLUICE_AGENT_PROBE_EVENT_READ_UP;
}

/* What a finished probe found, as the probe's event. */
static SluiceAgentProbeEvent agent_probe_event(const SluiceVmDomain *vm, const ProbeData *d)
{
        if (d->error == NULL)
                return d->info.can_exec && d->info.can_file ? SLUICE_AGENT_PROBE_EVENT_PROBE_READY
                                                            : SLUICE_AGENT_PROBE_EVENT_PROBE_RESTRICTED;
        /* it opened the channel but did not answer (yet): it may still be starting */
        return vm->agent_channel == SLUICE_DOMAIN_AGENT_CHANNEL_CONNECTED ? SLUICE_AGENT_PROBE_EVENT_PROBE_NO_ANSWER
                                                                         : SLUICE_AGENT_PROBE_EVENT_PROBE_FAILED;
}

/* The probe answered: what the guest said of itself, kept while its agent is away. */
static void agent_take_answer(SluiceVmDomain *vm, const ProbeData *d)
{
        g_clear_pointer(&vm->agent_error, g_free);
        if (d == NULL)
                return;
        /* already bounded and printable (guest-agent.c): the guest's words */
        g_free(vm->guest_os_name);
        vm->guest_os_name = g_strdup(d->info.os_name != NULL ? d->info.os_name : "");
        vm->guest_os_type = d->info.os_type;
        g_free(vm->guest_agent_blocked);
        vm->guest_agent_blocked = g_strdup(d->info.blocked);
}

/* An answer is worth a line in the log: which agent, and what it allows. */
static void agent_log_answer(const SluiceVmDomain *vm, const ProbeData *d)
{
        if (d == NULL)
                return;
        g_message("%s: guest agent %s (%s), %s%s%s", vm->name, d->info.version ? d->info.version : "?",
                  vm->guest_os_name, sluice_wire_guest_agent_name(vm->guest_agent),
                  d->info.blocked ? ": blocks " : "", d->info.blocked ? d->info.blocked : "");
}

/* Tells the share side, when what it sees of the agent changed. */
static void agent_report(SluiceVmDomain *vm, gboolean changed)
{
        if (changed && !vm->removed && vm->guest_changed)
                vm->guest_changed(vm, vm->changed_data);
}

static gboolean on_probe_retry(gpointer data)
{
        SluiceVmDomain *vm = data;

        vm->probe_retry = 0;
        agent_report(vm, agent_step(vm, SLUICE_AGENT_PROBE_EVENT_RETRY_DUE, NULL));
        return G_SOURCE_REMOVE;
}

static void probe_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        ProbeData *d = task_data;

        (void)sluice_guest_agent_probe(d->ref.domain, &d->info, &d->error);
        g_task_return_boolean(task, TRUE);
}

static void on_probed(GObject *source, GAsyncResult *result, gpointer user_data)
{
        ProbeData *d = g_task_get_task_data(G_TASK(result));
        g_autoptr(SluiceVmDomain) vm = sluice_vm_domain_ref(d->ref.vm);

        if (d->error != NULL)
                g_debug("%s: guest agent: %s", vm->name, d->error->message);
        agent_report(vm, agent_step(vm, agent_probe_event(vm, d), d));
}

/* Starts a probe in a worker thread; FALSE when there is no domain to ask. */
static gboolean agent_probe(SluiceVmDomain *vm)
{
        g_autoptr(GTask) task = NULL;
        ProbeData *d;
        virDomainPtr raw = sluice_vm_domain_get_raw(vm);

        if (raw == NULL)
                return FALSE;
        d = g_new0(ProbeData, 1);
        d->ref.vm = sluice_vm_domain_ref(vm);
        d->ref.domain = raw;
        task = g_task_new(NULL, NULL, on_probed, NULL);
        g_task_set_task_data(task, d, probe_data_free);
        g_task_run_in_thread(task, probe_thread);
        return TRUE;
}

/* Moves the probe by EVENT and carries out its actions (PROBE: what the
 * probe that ended found, for the PUBLISH_* of its answer).  TRUE when what
 * the share side sees changed: the caller reports it when it is due. */
static gboolean agent_step(SluiceVmDomain *vm, SluiceAgentProbeEvent event, const ProbeData *probe)
{
        SluiceAgentProbeResult r = sluice_agent_probe_step(&vm->probe, event);
        gboolean changed = FALSE;

        if (r.actions & SLUICE_AGENT_PROBE_ACTION_CANCEL_RETRY)
                g_clear_handle_id(&vm->probe_retry, g_source_remove);
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_PUBLISH_NONE) {
                g_clear_pointer(&vm->agent_error, g_free);
                changed |= agent_set(vm, SLUICE_WIRE_AGENT_NONE);
        }
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_PUBLISH_DISCONNECTED) {
                g_clear_pointer(&vm->agent_error, g_free);
                changed |= agent_set(vm, SLUICE_WIRE_AGENT_DISCONNECTED);
        }
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_PUBLISH_NO_ANSWER) {
                g_free(vm->agent_error);
                vm->agent_error = probe != NULL && probe->error != NULL
                                          ? sluice_guest_agent_printable(probe->error->message,
                                                                         strlen(probe->error->message),
                                                                         AGENT_ERROR_MAX_CHARS)
                                          : NULL;
                changed |= agent_set(vm, SLUICE_WIRE_AGENT_DISCONNECTED);
        }
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_PUBLISH_READY) {
                agent_take_answer(vm, probe);
                changed |= agent_set(vm, SLUICE_WIRE_AGENT_READY);
                agent_log_answer(vm, probe);
        }
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_PUBLISH_RESTRICTED) {
                agent_take_answer(vm, probe);
                changed |= agent_set(vm, SLUICE_WIRE_AGENT_RESTRICTED);
                agent_log_answer(vm, probe);
        }
        if ((r.actions & SLUICE_AGENT_PROBE_ACTION_PUBLISH_CHANNEL) && vm->guest_agent == SLUICE_WIRE_AGENT_NONE)
                changed |= agent_set(vm, SLUICE_WIRE_AGENT_DISCONNECTED);
        if ((r.actions & SLUICE_AGENT_PROBE_ACTION_START_PROBE) && !agent_probe(vm))
                changed |= agent_step(vm, SLUICE_AGENT_PROBE_EVENT_PROBE_NOT_STARTED, NULL);
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_SCHEDULE_RETRY) {
                g_clear_handle_id(&vm->probe_retry, g_source_remove);
                vm->probe_retry = g_timeout_add_seconds(PROBE_RETRY_S, on_probe_retry, vm);
        }
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_REFRESH)
                sluice_vm_domain_refresh(vm);
        if (r.actions & SLUICE_AGENT_PROBE_ACTION_RECONSIDER)
                changed |= agent_step(vm, agent_read_event(vm), NULL);
        return changed;
}

void sluice_vm_domain_agent_event(SluiceVmDomain *vm, gboolean connected)
{
        /* connected or not: the new read says which, and a new connection is asked anew */
        agent_report(vm, agent_step(vm, SLUICE_AGENT_PROBE_EVENT_AGENT_EVENT, NULL));
}

void sluice_vm_domain_agent_recheck(SluiceVmDomain *vm)
{
        agent_report(vm, agent_step(vm, SLUICE_AGENT_PROBE_EVENT_RECHECK, NULL));
}

/* ---- guest hint -------------------------------------------------------------------- */

char *sluice_vm_domain_guest_hint(const SluiceVmDomain *vm, const char *tag)
{
        return sluice_guest_os_hint(vm->os, vm->guest_os_type, tag);
}

/* ---- EnableSharedMemory, EnableGuestAgent -------------------------------------------- */

/* What the two methods change in the persistent definition. */
typedef enum {
        DEFINITION_SHARED_MEMORY,
        DEFINITION_GUEST_AGENT,
} DefinitionChange;

/* One call: what the thread needs, copied in the main thread. */
typedef struct {
        DomainRef ref;
        DefinitionChange change;
        char *name;
        char *uri;
        gboolean active;
        gboolean live_has_it;     /* the running VM has it already */
        GDBusMethodInvocation *invocation; /* answered once, in the main thread */
        guint answer_timeout;
} DefinitionCall;

static void definition_call_free(gpointer data)
{
        DefinitionCall *c = data;

        domain_ref_clear(&c->ref);
        g_free(c->name);
        g_free(c->uri);
        g_clear_object(&c->invocation);
        g_free(c);
}

/* What the caller hears once the definition is written (or was right already). */
static char *definition_message(const DefinitionCall *c, gboolean changed)
{
        if (c->change == DEFINITION_SHARED_MEMORY) {
                if (!changed && (!c->active || c->live_has_it))
                        return g_strdup_printf(_("The VM “%s” already has shared memory."), c->name);
                if (c->active)
                        return g_strdup_printf(_("Shared memory is enabled for “%s”. It takes effect at the next "
                                                 "boot: shut the VM down and start it again."), c->name);
                return g_strdup_printf(_("Shared memory is enabled for “%s”. It takes effect at the next boot."),
                                       c->name);
        }
        if (!changed && (!c->active || c->live_has_it))
                return g_strdup_printf(_("The VM “%s” already has the channel for the QEMU guest agent; the "
                                         "guest needs qemu-guest-agent installed and running."), c->name);
        if (!changed)
                return g_strdup_printf(_("The channel for the QEMU guest agent is in the definition of “%s” "
                                         "already. It takes effect at the next boot: shut the VM down and start "
                                         "it again. The guest needs qemu-guest-agent installed and running."),
                                       c->name);
        if (c->active)
                return g_strdup_printf(_("The channel for the QEMU guest agent is added to “%s”. It takes "
                                         "effect at the next boot: shut the VM down and start it again. The "
                                         "guest needs qemu-guest-agent installed and running."), c->name);
        return g_strdup_printf(_("The channel for the QEMU guest agent is added to “%s”. It takes effect at "
                                 "the next boot; the guest needs qemu-guest-agent installed and running."),
                               c->name);
}

/* Worker thread: rewrites the persistent definition; returns the message. */
static char *definition_rewrite(const DefinitionCall *c, GError **error)
{
        g_autofree char *xml = NULL;
        g_autofree char *new_xml = NULL;
        gboolean changed = FALSE;
        virDomainPtr defined;
        int persistent = virDomainIsPersistent(c->ref.domain);

        if (persistent < 0) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM's definition"));
                return NULL;
        }
        if (!persistent) {
                if (c->change == DEFINITION_SHARED_MEMORY)
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                                    _("The VM “%s” is transient (it has no saved definition to change); "
                                      "add shared memory to the XML it is started from."), c->name);
                else
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                                    _("The VM “%s” is transient (it has no saved definition to change); "
                                      "add the guest agent's channel to the XML it is started from."), c->name);
                return NULL;
        }
        /* SECURE: keep passwords (VNC, SPICE) that the plain XML leaves out */
        xml = virDomainGetXMLDesc(c->ref.domain, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (!xml) {
                sluice_hotplug_set_libvirt_error(error, _("Cannot read the VM's definition"));
                return NULL;
        }
        if (c->change == DEFINITION_SHARED_MEMORY)
                new_xml = sluice_domain_xml_enable_shared_memory(xml, &changed, error);
        else
                new_xml = sluice_domain_xml_enable_guest_agent(xml, &changed, error);
        if (!new_xml)
                return NULL;
        if (changed) {
                defined = virDomainDefineXML(virDomainGetConnect(c->ref.domain), new_xml);
                if (!defined) {
                        sluice_hotplug_set_libvirt_error(error, _("libvirt refused the new definition"));
                        return NULL;
                }
                virDomainFree(defined);
        }
        return definition_message(c, changed);
}

static void definition_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        GError *error = NULL;
        char *message = definition_rewrite(task_data, &error);

        if (message)
                g_task_return_pointer(task, message, g_free);
        else
                g_task_return_error(task, error);
}

/* libvirtd is slow or stalled: the caller hears so before its own timeout; the
 * thread goes on (a stalled connection fails by keepalive) and a later call
 * tells whether the change was made. */
static gboolean on_definition_timeout(gpointer user_data)
{
        DefinitionCall *c = g_task_get_task_data(G_TASK(user_data));
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);

        c->answer_timeout = 0;
        if (c->change == DEFINITION_SHARED_MEMORY)
                g_dbus_method_invocation_return_error(
                        invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                        _("libvirt (%s) has not answered within %d seconds; the change may still be made. "
                          "Try again in a minute: Sluice then says whether “%s” has shared memory."),
                        c->uri, SLUICE_VM_ANSWER_TIMEOUT_S, c->name);
        else
                g_dbus_method_invocation_return_error(
                        invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                        _("libvirt (%s) has not answered within %d seconds; the change may still be made. "
                          "Try again in a minute: Sluice then says whether “%s” has the guest agent's channel."),
                        c->uri, SLUICE_VM_ANSWER_TIMEOUT_S, c->name);
        return G_SOURCE_REMOVE;
}

static void definition_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
        DefinitionCall *c = g_task_get_task_data(G_TASK(result));
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);
        g_autoptr(GError) error = NULL;
        g_autofree char *message = g_task_propagate_pointer(G_TASK(result), &error);

        g_clear_handle_id(&c->answer_timeout, g_source_remove);
        sluice_vm_domain_refresh(c->ref.vm);
        if (!invocation) /* answered at the timeout */
                return;
        if (!message)
                g_dbus_method_invocation_return_gerror(invocation, error);
        else
                g_dbus_method_invocation_return_value(invocation, g_variant_new("(s)", message));
}

static void definition_change(SluiceVmDomain *vm, GDBusMethodInvocation *invocation, DefinitionChange change)
{
        g_autoptr(GTask) task = NULL;
        DefinitionCall *c;
        virDomainPtr raw = sluice_vm_domain_get_raw(vm);

        if (!raw) {
                g_dbus_method_invocation_return_error(invocation, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                                                      _("The connection to libvirt (%s) is down; try again in a moment."),
                                                      sluice_vm_connection_get_uri(vm->connection));
                return;
        }
        /* it changes the VM's saved definition: worth a line in the log */
        g_message("Enabling %s in the definition of %s (%s)",
                  change == DEFINITION_SHARED_MEMORY ? "shared memory" : "the guest agent's channel", vm->name,
                  sluice_vm_connection_get_uri(vm->connection));
        c = g_new0(DefinitionCall, 1);
        c->ref.vm = sluice_vm_domain_ref(vm);
        c->ref.domain = raw;
        c->change = change;
        c->name = g_strdup(vm->name);
        c->uri = g_strdup(sluice_vm_connection_get_uri(vm->connection));
        c->active = vm->active;
        c->live_has_it = change == DEFINITION_SHARED_MEMORY
                                 ? vm->shared_memory
                                 : vm->agent_channel != SLUICE_DOMAIN_AGENT_CHANNEL_NONE;
        c->invocation = g_object_ref(invocation);
        task = g_task_new(NULL, NULL, definition_done, NULL);
        g_task_set_task_data(task, c, definition_call_free);
        c->answer_timeout = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, SLUICE_VM_ANSWER_TIMEOUT_S,
                                                       on_definition_timeout, g_object_ref(task), g_object_unref);
        g_task_run_in_thread(task, definition_thread);
}

static gboolean on_enable_shared_memory(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                        gpointer user_data)
{
        definition_change(user_data, invocation, DEFINITION_SHARED_MEMORY);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_enable_guest_agent(SluiceVm *iface, GDBusMethodInvocation *invocation,
                                      gpointer user_data)
{
        definition_change(user_data, invocation, DEFINITION_GUEST_AGENT);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}
