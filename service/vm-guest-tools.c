/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-guest-tools.c — see vm-guest-tools.h.  The Vm skeleton is
 * vm-domain.c's; this file only sets GuestToolsMissing and
 * GuestToolsInstall on it and answers InstallGuestTools. */
#include "config.h"

#include <glib/gi18n.h>
#include <libvirt/virterror.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-tools.h"
#include "guest-windows.h"
#include "printable.h"
#include "vm-guest-tools.h"

/* msiexec of virtio-win may take minutes in a slow VM */
#define MSIEXEC_TIMEOUT_S (15 * 60)
/* the whole install, its copies and both packages together */
#define INSTALL_TIMEOUT_S (40 * 60)
/* GuestToolsInstall changes at most this often while copying */
#define PROGRESS_INTERVAL_US (250 * 1000)

char *sluice_vm_guest_tools_offer(const char *vm_name)
{
        g_autofree char *word = sluice_shell_word(vm_name);

        /* TRANSLATORS: the first %s is a button of Sluice's window, the second a command */
        return g_strdup_printf(_("Or let Sluice install it: “%s” in Sluice's window, or “sluicectl vm %s install-guest-tools”."),
                               _("Install in the VM…"), word);
}

/* ---- per-VM state, kept on its skeleton ---- */

typedef struct {
        gboolean installing;
} ToolsState;

static ToolsState *tools_state(SluiceVmDomain *vm)
{
        static GQuark quark;
        ToolsState *state;

        if (!quark)
                quark = g_quark_from_static_string("sluice-vm-guest-tools");
        state = g_object_get_qdata(G_OBJECT(vm->iface), quark);
        if (!state) {
                state = g_new0(ToolsState, 1);
                g_object_set_qdata_full(G_OBJECT(vm->iface), quark, state, g_free);
        }
        return state;
}

void sluice_vm_guest_tools_set_missing(SluiceVmDomain *vm, const char *const *missing)
{
        static const char *const none[] = { NULL };

        if (vm->removed)
                return;
        sluice_vm_set_guest_tools_missing(vm->iface, missing != NULL ? missing : none);
}

static void publish(SluiceVmDomain *vm, const char *state, const char *what, double fraction, const char *message)
{
        GVariantBuilder b;

        if (vm->removed)
                return;
        g_variant_builder_init(&b, G_VARIANT_TYPE_VARDICT);
        g_variant_builder_add(&b, "{sv}", "state", g_variant_new_string(state));
        g_variant_builder_add(&b, "{sv}", "what", g_variant_new_string(what));
        g_variant_builder_add(&b, "{sv}", "fraction", g_variant_new_double(fraction));
        g_variant_builder_add(&b, "{sv}", "message", g_variant_new_string(message));
        sluice_vm_set_guest_tools_install(vm->iface, g_variant_builder_end(&b));
}

/* ---- one install ---- */

typedef struct {
        SluiceVmDomain *vm;
        virDomainPtr domain;
        char *vm_name;
        char *given[SLUICE_GUEST_TOOL_COUNT];   /* a host path the caller gave, or NULL */
        gboolean want[SLUICE_GUEST_TOOL_COUNT];
        gboolean what_given;
        GDBusMethodInvocation *invocation;
        /* the thread's */
        gint64 last_progress;
        SluiceGuestTool current;
        char **missing;           /* after it, or NULL when not known */
} InstallCall;

static void install_call_free(gpointer data)
{
        InstallCall *c = data;

        sluice_vm_domain_unref(c->vm);
        g_clear_pointer(&c->domain, virDomainFree);
        g_free(c->vm_name);
        for (int t = 0; t < SLUICE_GUEST_TOOL_COUNT; t++)
                g_free(c->given[t]);
        g_clear_object(&c->invocation);
        g_strfreev(c->missing);
        g_free(c);
}

/* A progress report from the thread, applied in the main thread. */
typedef struct {
        SluiceVmDomain *vm;
        char *state;
        char *what;
        double fraction;
        char *message;
} Progress;

static gboolean apply_progress(gpointer data)
{
        Progress *p = data;

        publish(p->vm, p->state, p->what, p->fraction, p->message);
        sluice_vm_domain_unref(p->vm);
        g_free(p->state);
        g_free(p->what);
        g_free(p->message);
        g_free(p);
        return G_SOURCE_REMOVE;
}

static void report(InstallCall *c, const char *state, double fraction, const char *message)
{
        Progress *p = g_new0(Progress, 1);

        p->vm = sluice_vm_domain_ref(c->vm);
        p->state = g_strdup(state);
        p->what = g_strdup(sluice_guest_tool_name(c->current));
        p->fraction = fraction;
        p->message = g_strdup(message);
        g_idle_add(apply_progress, p);
}

static const char *tool_title(SluiceGuestTool tool)
{
        return tool == SLUICE_GUEST_TOOL_WINFSP ? _("WinFsp") : _("the VirtIO-FS driver");
}

static void on_copied(gsize done, gsize total, gpointer user_data)
{
        InstallCall *c = user_data;
        gint64 now = g_get_monotonic_time();
        g_autofree char *message = NULL;

        if (done < total && now - c->last_progress < PROGRESS_INTERVAL_US)
                return;
        c->last_progress = now;
        /* TRANSLATORS: what is copied, then megabytes done and in all */
        message = g_strdup_printf(_("Copying %s into the VM: %.1f of %.1f MB"), tool_title(c->current),
                                  done / 1e6, total / 1e6);
        report(c, "copying", total > 0 ? (double)done / (double)total : 1.0, message);
}

/* An error of the agent itself as a sentence: what failed, what it said, what to do. */
static void wrap_agent_error(const InstallCall *c, GError **error)
{
        g_autofree char *what = NULL;
        char *message;

        if (*error == NULL || (*error)->domain != SLUICE_GUEST_AGENT_ERROR)
                return;
        /* TRANSLATORS: the package, then the VM's name */
        what = g_strdup_printf(_("Installing %s in “%s” failed"), tool_title(c->current), c->vm_name);
        message = sluice_guest_agent_error_sentence(*error, what, NULL);
        g_clear_error(error);
        g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, message);
        g_free(message);
}

/* Copies the MSI INSTALLER into the guest as GUEST_PATH, with progress. */
static gboolean copy_msi(InstallCall *c, SluiceInstaller *installer, const char *guest_path, GError **error)
{
        g_message("%s: copying %s (%zu bytes) into the guest as %s", c->vm_name, installer->path, installer->size,
                  guest_path);
        c->last_progress = 0;
        on_copied(0, installer->size, c);
        if (!sluice_guest_agent_write_from_fd(c->domain, guest_path, installer->fd, installer->size, on_copied, c,
                                              error)) {
                wrap_agent_error(c, error);
                return FALSE;
        }
        return TRUE;
}

/* How long an inserted CD may take to show in Windows' volume list */
#define CD_SETTLE_TRIES 30
#define CD_SETTLE_POLL_US (G_USEC_PER_SEC)

/* The drive showing virtio-win's CD, or NULL (ERROR set only on a failure to ask). */
static char *virtio_win_drive(InstallCall *c, GError **error)
{
        gsize len = 0;
        g_autofree char *volumes = sluice_guest_windows_list_volumes(c->domain, &len, error);

        if (volumes == NULL) {
                wrap_agent_error(c, error);
                return NULL;
        }
        return sluice_guest_tools_virtio_win_drive(volumes, len);
}

/* virtio-win's ISO as the VM's CD (unless Windows shows it already): the
 * guest path of the MSI on it, or NULL with ERROR set. */
static char *insert_iso(InstallCall *c, const char *iso_path, GError **error)
{
        g_autofree char *drive = NULL;
        g_autofree char *xml = NULL;
        g_autofree char *target = NULL;
        g_autofree char *bus = NULL;
        g_autofree char *disk = NULL;

        drive = virtio_win_drive(c, error);
        if (drive == NULL && error != NULL && *error != NULL)
                return NULL;
        if (drive != NULL)
                return sluice_guest_tools_msi_on_drive(drive);
        xml = virDomainGetXMLDesc(c->domain, 0);
        target = xml != NULL ? sluice_guest_tools_empty_cdrom(xml, &bus) : NULL;
        if (target == NULL) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("“%s” has no empty CD-ROM drive to put virtio-win's ISO in. Give Sluice the "
                              "virtio-win-gt-x64.msi it holds instead (open the ISO on this computer and copy that file "
                              "out, e.g. to your Downloads folder), or add a CD-ROM drive to the VM (virt-manager: Add "
                              "Hardware, Storage, CDROM device) and try again."),
                            c->vm_name);
                return NULL;
        }
        disk = sluice_guest_tools_cdrom_xml(target, bus, iso_path);
        report(c, "copying", 1.0, _("Inserting virtio-win's ISO as the VM's CD-ROM"));
        if (virDomainUpdateDeviceFlags(c->domain, disk, VIR_DOMAIN_AFFECT_LIVE) < 0) {
                const char *said = virGetLastErrorMessage();

                sluice_guest_agent_set_error(error, SLUICE_ERROR, SLUICE_ERROR_LIBVIRT,
                                             _("libvirt did not insert virtio-win's ISO into “%s”'s CD-ROM drive %s: %s"),
                                             c->vm_name, target, said != NULL ? said : "");
                return NULL;
        }
        g_message("%s: %s inserted as CD-ROM %s", c->vm_name, iso_path, target);
        for (int i = 0; i < CD_SETTLE_TRIES; i++) {
                if (i > 0)
                        g_usleep(CD_SETTLE_POLL_US);
                drive = virtio_win_drive(c, error);
                if (drive != NULL)
                        return sluice_guest_tools_msi_on_drive(drive);
                if (error != NULL && *error != NULL)
                        return NULL;
        }
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                    _("virtio-win's ISO was inserted into “%s”, but Windows shows no drive labelled virtio-win after %d s."),
                    c->vm_name, CD_SETTLE_TRIES);
        return NULL;
}

/* Copies and runs the installer of C->current; REBOOT set when Windows wants one. */
static gboolean install_one(InstallCall *c, gboolean *reboot, GError **error)
{
        SluiceGuestTool tool = c->current;
        g_auto(SluiceInstaller) installer = { .fd = -1 };
        g_autofree char *path = NULL;
        g_auto(GStrv) argv = NULL;
        g_autofree char *failure = NULL;
        g_autofree char *message = NULL;
        SluiceGuestExec r = { 0 };
        const char *guest_path = sluice_guest_tools_guest_path(tool);
        g_autofree char *on_drive = NULL;

        /* TRANSLATORS: the package */
        message = g_strdup_printf(_("Looking for %s's installer on this computer"), tool_title(tool));
        report(c, "finding", 0.0, message);
        if (c->given[tool] != NULL) {
                path = g_strdup(c->given[tool]);
        } else {
                g_auto(GStrv) dirs = sluice_guest_tools_search_dirs(tool);

                path = sluice_guest_tools_find_installer(tool, (const char *const *)dirs, error);
                if (path == NULL)
                        return FALSE;
        }
        if (!sluice_guest_tools_open_installer(path, tool, &installer, error))
                return FALSE;
        if (installer.kind == SLUICE_INSTALLER_ISO) {
                /* a CD image is not copied (700 MB through the agent): it is inserted */
                on_drive = insert_iso(c, installer.path, error);
                if (on_drive == NULL)
                        return FALSE;
                guest_path = on_drive;
        } else if (!copy_msi(c, &installer, guest_path, error)) {
                return FALSE;
        }
        g_free(message);
        /* TRANSLATORS: the package */
        message = g_strdup_printf(_("Installing %s in the VM (msiexec)"), tool_title(tool));
        report(c, "installing", 1.0, message);
        argv = sluice_guest_tools_msiexec_argv(tool, guest_path);
        if (!sluice_guest_agent_exec(c->domain, (const char *const *)argv, MSIEXEC_TIMEOUT_S, &r, error)) {
                wrap_agent_error(c, error);
                return FALSE;
        }
        failure = sluice_guest_tools_msiexec_result(r.exit_code, reboot);
        g_message("%s: msiexec for %s ended with code %d", c->vm_name, sluice_guest_tool_name(tool), r.exit_code);
        sluice_guest_exec_clear(&r);
        if (failure != NULL) {
                /* TRANSLATORS: the package, the VM's name, then msiexec's code in words */
                sluice_guest_agent_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                             _("Installing %s in “%s” failed: %s."), tool_title(tool), c->vm_name,
                                             failure);
                return FALSE;
        }
        return TRUE;
}

static char *install_all(InstallCall *c, GError **error)
{
        /* WinFsp first: the VirtIO-FS service is built on it */
        static const SluiceGuestTool order[] = { SLUICE_GUEST_TOOL_WINFSP, SLUICE_GUEST_TOOL_VIRTIO_FS };
        g_autoptr(GString) done = g_string_new(NULL);
        gboolean reboot = FALSE, any = FALSE;
        g_autoptr(GError) recheck = NULL;

        if (!c->what_given) {
                g_auto(GStrv) missing = sluice_guest_windows_missing(c->domain, NULL, error);

                if (missing == NULL) {
                        wrap_agent_error(c, error);
                        return NULL;
                }
                for (int t = 0; t < SLUICE_GUEST_TOOL_COUNT; t++)
                        if (g_strv_contains((const char *const *)missing, sluice_guest_tool_name(t)))
                                c->want[t] = TRUE;
                c->missing = g_steal_pointer(&missing);
        }
        for (gsize i = 0; i < G_N_ELEMENTS(order); i++) {
                gboolean one_reboot = FALSE;

                if (!c->want[order[i]])
                        continue;
                c->current = order[i];
                if (!install_one(c, &one_reboot, error))
                        return NULL;
                reboot |= one_reboot;
                if (any)
                        g_string_append(done, _(" and "));
                g_string_append(done, tool_title(order[i]));
                any = TRUE;
        }
        g_strfreev(c->missing);
        c->missing = sluice_guest_windows_missing(c->domain, NULL, &recheck);
        if (!any)
                /* TRANSLATORS: the VM's name */
                return g_strdup_printf(_("Nothing to install: “%s” has WinFsp and the VirtIO-FS driver."), c->vm_name);
        if (reboot)
                /* TRANSLATORS: what was installed, then the VM's name */
                return g_strdup_printf(_("Installed %s in “%s”. Windows wants a restart to finish (msiexec said 3010): restart the VM when it suits you."),
                                       done->str, c->vm_name);
        /* TRANSLATORS: what was installed, then the VM's name */
        return g_strdup_printf(_("Installed %s in “%s”."), done->str, c->vm_name);
}

static void install_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
        InstallCall *c = task_data;
        GError *error = NULL;
        char *message;

        sluice_guest_agent_set_deadline(INSTALL_TIMEOUT_S);
        message = install_all(c, &error);
        sluice_guest_agent_set_deadline(0);
        /* the pool's thread goes on to other tasks: nothing of this one is kept */
        g_strfreev(sluice_guest_tools_take_noted());
        g_clear_pointer(&c->domain, virDomainFree);
        if (message == NULL) {
                if (error == NULL)
                        g_set_error(&error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, _("Installing in “%s” failed"),
                                    c->vm_name);
                g_task_return_error(task, error);
                return;
        }
        g_task_return_pointer(task, message, g_free);
}

static void on_installed(GObject *source, GAsyncResult *result, gpointer user_data)
{
        InstallCall *c = g_task_get_task_data(G_TASK(result));
        g_autoptr(SluiceVmDomain) vm = sluice_vm_domain_ref(c->vm);
        g_autoptr(GDBusMethodInvocation) invocation = g_steal_pointer(&c->invocation);
        g_autoptr(GError) error = NULL;
        g_autofree char *message = g_task_propagate_pointer(G_TASK(result), &error);

        if (vm->removed) {
                if (error != NULL)
                        g_dbus_method_invocation_return_gerror(invocation, error);
                else
                        sluice_vm_complete_install_guest_tools(vm->iface, invocation, message);
                return;
        }
        tools_state(vm)->installing = FALSE;
        if (c->missing != NULL)
                sluice_vm_guest_tools_set_missing(vm, (const char *const *)c->missing);
        if (error != NULL) {
                g_message("%s: installing guest tools: %s", vm->name, error->message);
                publish(vm, "failed", sluice_guest_tool_name(c->current), 0.0, error->message);
                g_dbus_method_invocation_return_gerror(invocation, error);
                return;
        }
        g_message("%s: %s", vm->name, message);
        publish(vm, "done", sluice_guest_tool_name(c->current), 1.0, message);
        sluice_vm_complete_install_guest_tools(vm->iface, invocation, message);
        /* what kept the shares from showing is there now: they are mounted again */
        if (c->missing != NULL && c->missing[0] == NULL && vm->guest_changed != NULL)
                vm->guest_changed(vm, vm->changed_data);
}

/* The options of InstallGuestTools into C, or FALSE with ERROR set. */
static gboolean parse_options(InstallCall *c, GVariant *options, GError **error)
{
        GVariantIter iter;
        const char *key;
        GVariant *value;

        g_variant_iter_init(&iter, options);
        while (g_variant_iter_loop(&iter, "{&sv}", &key, &value)) {
                SluiceGuestTool tool;

                if (g_strcmp0(key, "winfsp") == 0 || g_strcmp0(key, "virtio-win") == 0) {
                        tool = key[0] == 'w' ? SLUICE_GUEST_TOOL_WINFSP : SLUICE_GUEST_TOOL_VIRTIO_FS;
                        if (!g_variant_is_of_type(value, G_VARIANT_TYPE_STRING)) {
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                            _("The option “%s” is a file's path (a string)."), key);
                                return FALSE;
                        }
                        g_free(c->given[tool]);
                        c->given[tool] = g_variant_dup_string(value, NULL);
                        if (*c->given[tool] == '\0')
                                g_clear_pointer(&c->given[tool], g_free);
                        else
                                c->want[tool] = TRUE;
                } else if (g_strcmp0(key, "what") == 0) {
                        g_autofree const char **words = NULL;

                        if (!g_variant_is_of_type(value, G_VARIANT_TYPE_STRING_ARRAY)) {
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                            _("The option “what” is a list of “winfsp”, “virtio-fs”."));
                                return FALSE;
                        }
                        words = g_variant_get_strv(value, NULL);
                        for (gsize i = 0; words[i] != NULL; i++) {
                                if (!sluice_guest_tool_parse(words[i], &tool)) {
                                        g_autofree char *shown = sluice_printable_escaped(words[i]);

                                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                                    _("“%s” is not something Sluice installs: say “winfsp” or “virtio-fs”."),
                                                    shown);
                                        return FALSE;
                                }
                                c->want[tool] = TRUE;
                        }
                        c->what_given = TRUE;
                } else {
                        g_autofree char *shown = sluice_printable_escaped(key);

                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("Unknown option “%s” (known: winfsp, virtio-win, what)."), shown);
                        return FALSE;
                }
        }
        return TRUE;
}

/* Whether VM can take an install now; the D-Bus error when not. */
static gboolean install_possible(SluiceVmDomain *vm, GError **error)
{
        if (vm->guest_os_type != SLUICE_WIRE_GUEST_OS_WINDOWS) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("“%s” does not run Windows (as its guest agent says): WinFsp and the VirtIO-FS driver are for Windows guests only."),
                            vm->name);
                return FALSE;
        }
        if (!vm->active || vm->guest_agent != SLUICE_WIRE_AGENT_READY || vm->domain == NULL) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, _("Sluice cannot install in “%s” now: %s"),
                            vm->name, !vm->active ? _("it is not running.") : sluice_vm_domain_agent_message(vm));
                return FALSE;
        }
        if (tools_state(vm)->installing) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_BUSY,
                            _("An installation in “%s” runs already: wait for it to end."), vm->name);
                return FALSE;
        }
        return TRUE;
}

static gboolean on_install_guest_tools(SluiceVm *iface, GDBusMethodInvocation *invocation, GVariant *options,
                                       gpointer user_data)
{
        SluiceVmDomain *vm = user_data;
        g_autoptr(GTask) task = NULL;
        g_autoptr(GError) error = NULL;
        InstallCall *c = g_new0(InstallCall, 1);

        c->vm = sluice_vm_domain_ref(vm);
        c->vm_name = g_strdup(vm->name);
        if (!parse_options(c, options, &error) || !install_possible(vm, &error)) {
                install_call_free(c);
                g_dbus_method_invocation_return_gerror(invocation, error);
                return G_DBUS_METHOD_INVOCATION_HANDLED;
        }
        c->domain = sluice_vm_domain_get_raw(vm);
        c->invocation = g_object_ref(invocation);
        tools_state(vm)->installing = TRUE;
        g_message("%s: installing guest tools", vm->name);
        publish(vm, "finding", "", 0.0, _("Looking for the installers on this computer"));
        task = g_task_new(NULL, NULL, on_installed, NULL);
        g_task_set_task_data(task, c, install_call_free);
        g_task_run_in_thread(task, install_thread);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
}

void sluice_vm_guest_tools_export(SluiceVmDomain *vm)
{
        sluice_vm_guest_tools_set_missing(vm, NULL);
        publish(vm, "", "", 0.0, "");
        g_signal_connect(vm->iface, "handle-install-guest-tools", G_CALLBACK(on_install_guest_tools), vm);
}
