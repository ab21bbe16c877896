/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-doctor.c — the doctor's questions and its report; see guest-doctor.h. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-doctor.h"
#include "guest-tools.h"
#include "guest-windows.h"
#include "printable.h"

/* the most of one value the report shows */
#define VALUE_MAX_CHARS 200
/* the most lines of one listing (registry values, drives, mounts) */
#define LINES_MAX 64
/* each question; PowerShell's first start in a fresh VM takes seconds */
#define ASK_TIMEOUT_S 30

#define CURRENT_VERSION_KEY "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion"
#define WINFSP_KEY "HKLM\\SOFTWARE\\WOW6432Node\\WinFsp"
/* where virtiofs.exe reads its own settings (CaseInsensitive …) */
#define VIRTIOFS_SETTINGS_KEY "HKLM\\SOFTWARE\\virtiofs"
/* The VirtIO-FS driver's version as Windows' driver store has it. */
#define DRIVER_VERSION \
        "Get-CimInstance Win32_PnPSignedDriver | Where-Object { $_.DeviceName -like '*VirtIO FS*' } | " \
        "ForEach-Object { $_.DriverVersion }"
/* WinFsp's version from its uninstall entry. */
#define WINFSP_VERSION \
        "Get-ItemProperty 'HKLM:\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\*' | " \
        "Where-Object { $_.DisplayName -like 'WinFsp*' } | ForEach-Object { $_.DisplayVersion }"

/* GLib 2.74 has no g_strv_builder_take */
static void builder_take(GStrvBuilder *b, char *s)
{
        g_strv_builder_add(b, s);
        g_free(s);
}

/* ---- reading what Windows prints ---- */

/* A line as guest-windows.c reads them, without the spaces around it. */
static gboolean next_line(const char *out, gsize len, gsize *pos, const char **line, gsize *n)
{
        if (!sluice_guest_windows_next_line(out, len, pos, line, n))
                return FALSE;
        while (*n > 0 && (*line)[*n - 1] == ' ')
                (*n)--;
        while (*n > 0 && **line == ' ') {
                (*line)++;
                (*n)--;
        }
        return TRUE;
}

/* "NAME    REG_TYPE    DATA" into its parts; FALSE for any other line. */
static gboolean reg_line(const char *line, gsize n, gsize *name_n, const char **data, gsize *data_n)
{
        const char *type = g_strstr_len(line, (gssize)n, "    REG_");
        const char *after;

        if (type == NULL)
                return FALSE;
        *name_n = (gsize)(type - line);
        type += 4;
        after = g_strstr_len(type, (gssize)(line + n - type), "    ");
        if (after == NULL) {    /* an empty value: "NAME    REG_SZ" */
                *data = line + n;
                *data_n = 0;
                return TRUE;
        }
        while (after < line + n && *after == ' ')
                after++;
        *data = after;
        *data_n = (gsize)(line + n - after);
        return TRUE;
}

char *sluice_guest_doctor_reg_value(const char *out, gsize len, const char *name)
{
        const char *line, *data;
        gsize n, pos = 0, name_n, data_n;

        while (next_line(out, len, &pos, &line, &n))
                if (reg_line(line, n, &name_n, &data, &data_n) && name_n == strlen(name) &&
                    g_ascii_strncasecmp(line, name, name_n) == 0)
                        return sluice_guest_agent_printable(data, data_n, VALUE_MAX_CHARS);
        return NULL;
}

char **sluice_guest_doctor_reg_values(const char *out, gsize len)
{
        g_autoptr(GStrvBuilder) b = g_strv_builder_new();
        const char *line, *data;
        gsize n, pos = 0, name_n, data_n;
        int count = 0;

        while (count < LINES_MAX && next_line(out, len, &pos, &line, &n)) {
                g_autofree char *name = NULL;
                g_autofree char *value = NULL;

                if (!reg_line(line, n, &name_n, &data, &data_n))
                        continue;
                name = sluice_guest_agent_printable(line, name_n, VALUE_MAX_CHARS);
                value = sluice_guest_agent_printable(data, data_n, VALUE_MAX_CHARS);
                builder_take(b, g_strdup_printf("%s = %s", name, value));
                count++;
        }
        return g_strv_builder_end(b);
}

int sluice_guest_doctor_sc_start_type(const char *out, gsize len)
{
        const char *line;
        gsize n, pos = 0;

        while (next_line(out, len, &pos, &line, &n)) {
                const char *colon = memchr(line, ':', n);
                int type = 0;

                if (colon == NULL || n < 10 || g_ascii_strncasecmp(line, "START_TYPE", 10) != 0)
                        continue;
                for (colon++; colon < line + n && *colon == ' '; colon++)
                        ;
                for (int i = 0; i < 2 && colon < line + n && g_ascii_isdigit(*colon); i++, colon++)
                        type = type * 10 + (*colon - '0');
                return type;
        }
        return 0;
}

/* ---- asking ---- */

typedef struct {
        virDomainPtr domain;
        GString *report;
        GVariantBuilder facts;
        GError *gone;           /* the agent went away: the whole doctor ends */
} Doctor;

static void fact_string(Doctor *d, const char *key, const char *value)
{
        g_variant_builder_add(&d->facts, "{sv}", key, g_variant_new_string(value != NULL ? value : ""));
}

static void fact_strv(Doctor *d, const char *key, const char *const *value)
{
        g_variant_builder_add(&d->facts, "{sv}", key, g_variant_new_strv(value, -1));
}

/* Runs ARGV; TRUE with R filled when it ran.  When not, *WHY says so (printable). */
static gboolean ask(Doctor *d, const char *const *argv, SluiceGuestExec *r, char **why)
{
        g_autoptr(GError) error = NULL;

        g_clear_pointer(why, g_free);
        if (d->gone != NULL) {
                *why = g_strdup(d->gone->message);
                return FALSE;
        }
        if (sluice_guest_agent_exec(d->domain, argv, ASK_TIMEOUT_S, r, &error))
                return TRUE;
        *why = sluice_printable(error->message, -1, VALUE_MAX_CHARS);
        if (sluice_guest_agent_error_is_gone(error))
                d->gone = g_steal_pointer(&error);
        return FALSE;
}

/* The first line a program printed, printable; NULL when it printed nothing or failed. */
static char *first_line(Doctor *d, const char *const *argv, char **why)
{
        SluiceGuestExec r = { 0 };
        const char *line;
        gsize n, pos = 0;
        char *value = NULL;

        if (!ask(d, argv, &r, why))
                return NULL;
        if (r.exit_code == 0)
                while (value == NULL && next_line(r.out, r.out_len, &pos, &line, &n))
                        if (n > 0)
                                value = sluice_guest_agent_printable(line, n, VALUE_MAX_CHARS);
        sluice_guest_exec_clear(&r);
        return value;
}

static char *reg_query(Doctor *d, const char *key, const char *name, char **why)
{
        const char *const argv[] = { SLUICE_WIN_REG_EXE, "query", key, "/v", name, NULL };
        SluiceGuestExec r = { 0 };
        char *value = NULL;

        if (!ask(d, argv, &r, why))
                return NULL;
        if (r.exit_code == 0)
                value = sluice_guest_doctor_reg_value(r.out, r.out_len, name);
        sluice_guest_exec_clear(&r);
        return value;
}

static char **reg_query_key(Doctor *d, const char *key)
{
        const char *const argv[] = { SLUICE_WIN_REG_EXE, "query", key, NULL };
        SluiceGuestExec r = { 0 };
        g_autofree char *why = NULL;
        char **values;

        if (!ask(d, argv, &r, &why) || r.exit_code != 0) {
                sluice_guest_exec_clear(&r);
                return g_new0(char *, 1);
        }
        values = sluice_guest_doctor_reg_values(r.out, r.out_len);
        sluice_guest_exec_clear(&r);
        return values;
}

static const char *state_word(int state)
{
        switch (state) {
        case 0: return _("not installed");
        case 1: return _("stopped");
        case 2: return _("starting");
        case 3: return _("stopping");
        case 4: return _("running");
        default: return _("in another state");
        }
}

static const char *start_word(int type)
{
        switch (type) {
        case 0: return _("boot");
        case 1: return _("system");
        case 2: return _("automatic");
        case 3: return _("manual (on demand)");
        case 4: return _("disabled");
        default: return _("unknown");
        }
}

/* VALUE, or what to show instead: "(not found)" or why it could not be asked. */
static const char *or_unknown(const char *value, const char *why)
{
        if (value != NULL && *value != '\0')
                return value;
        return why != NULL ? why : _("(not found)");
}

static int service(Doctor *d, const char *name, char **why)
{
        g_autoptr(GError) error = NULL;
        int state;

        g_clear_pointer(why, g_free);
        if (d->gone != NULL)
                return -1;
        state = sluice_guest_windows_service_state(d->domain, name, &error);
        if (state < 0) {
                *why = sluice_printable(error->message, -1, VALUE_MAX_CHARS);
                if (error->domain == SLUICE_GUEST_AGENT_ERROR && sluice_guest_agent_error_is_gone(error))
                        d->gone = g_steal_pointer(&error);
        }
        return state;
}

static void windows(Doctor *d, const SluiceDoctorInput *in, char ***missing)
{
        const char *const driver_argv[] = { SLUICE_WIN_POWERSHELL_EXE, "-NoLogo", "-NoProfile", "-NonInteractive",
                                            "-Command", DRIVER_VERSION, NULL };
        const char *const winfsp_argv[] = { SLUICE_WIN_POWERSHELL_EXE, "-NoLogo", "-NoProfile", "-NonInteractive",
                                            "-Command", WINFSP_VERSION, NULL };
        const char *const qc_argv[] = { SLUICE_WIN_SC_EXE, "qc", SLUICE_WIN_VIOFS_SERVICE, NULL };
        g_autofree char *why = NULL, *why_svc = NULL, *why_fsp = NULL;
        g_autofree char *product = reg_query(d, CURRENT_VERSION_KEY, "ProductName", &why);
        g_autofree char *display = reg_query(d, CURRENT_VERSION_KEY, "DisplayVersion", &why);
        g_autofree char *build = reg_query(d, CURRENT_VERSION_KEY, "CurrentBuild", &why);
        g_autofree char *driver = first_line(d, driver_argv, &why);
        int svc = service(d, SLUICE_WIN_VIOFS_SERVICE, &why_svc);
        int launcher = service(d, SLUICE_WIN_WINFSP_SERVICE, &why_fsp);
        int start = 0;
        g_autofree char *winfsp_version = first_line(d, winfsp_argv, &why);
        g_autofree char *winfsp_dir = reg_query(d, WINFSP_KEY, "InstallDir", &why);
        g_autofree char *registered = reg_query(d, SLUICE_WIN_LAUNCHER_REGKEY, "CommandLine", &why);
        g_auto(GStrv) viofs_values = reg_query_key(d, SLUICE_WIN_VIOFS_REGKEY);
        g_auto(GStrv) settings_values = reg_query_key(d, VIRTIOFS_SETTINGS_KEY);
        g_autoptr(GStrvBuilder) drives = g_strv_builder_new();
        g_autoptr(GStrvBuilder) lacks = g_strv_builder_new();
        g_autoptr(GStrvBuilder) next = g_strv_builder_new();
        g_auto(GStrv) drive_lines = NULL, lack_list = NULL, next_list = NULL;
        g_autofree char *volumes = NULL;
        gsize volumes_len = 0;
        gboolean first_share = TRUE;

        if (svc > 0) {
                SluiceGuestExec r = { 0 };
                g_autofree char *qc_why = NULL;

                if (ask(d, qc_argv, &r, &qc_why))
                        start = sluice_guest_doctor_sc_start_type(r.out, r.out_len);
                sluice_guest_exec_clear(&r);
        }
        if (d->gone == NULL) {
                g_autoptr(GError) error = NULL;

                volumes = sluice_guest_windows_list_volumes(d->domain, &volumes_len, &error);
                if (volumes == NULL && error->domain == SLUICE_GUEST_AGENT_ERROR &&
                    sluice_guest_agent_error_is_gone(error))
                        d->gone = g_steal_pointer(&error);
        }
        {
                const char *line;
                gsize n, pos = 0;

                int count = 0;

                while (count < LINES_MAX && next_line(volumes, volumes_len, &pos, &line, &n))
                        if (n > 0) {
                                builder_take(drives, sluice_guest_agent_printable(line, n, VALUE_MAX_CHARS));
                                count++;
                        }
        }
        drive_lines = g_strv_builder_end(drives);

        g_string_append_printf(d->report, _("Windows: %s %s (build %s)\n"), or_unknown(product, why), display ? display : "",
                               build ? build : "?");
        g_string_append_printf(d->report, _("VirtIO-FS driver (virtio-win): %s\n"),
                               driver != NULL ? driver : _("not found in the driver store"));
        if (svc > 0)
                g_string_append_printf(d->report, _("VirtioFsSvc: %s, starts %s\n"), state_word(svc), start_word(start));
        else
                g_string_append_printf(d->report, _("VirtioFsSvc: %s\n"), svc == 0 ? state_word(0) : or_unknown(NULL, why_svc));
        g_string_append_printf(d->report, _("WinFsp: %s, in %s; launcher %s\n"),
                               or_unknown(winfsp_version, NULL), or_unknown(winfsp_dir, NULL),
                               launcher >= 0 ? state_word(launcher) : or_unknown(NULL, why_fsp));
        g_string_append_printf(d->report, _("VirtIO-FS in WinFsp's launcher: %s\n"),
                               registered != NULL ? registered : _("not registered (Sluice registers it for a second share)"));
        g_string_append_printf(d->report, "%s:%s\n", SLUICE_WIN_VIOFS_REGKEY, viofs_values[0] ? "" : _(" (no values)"));
        for (gsize i = 0; viofs_values[i] != NULL; i++)
                g_string_append_printf(d->report, "  %s\n", viofs_values[i]);
        g_string_append_printf(d->report, "%s:%s\n", VIRTIOFS_SETTINGS_KEY, settings_values[0] ? "" : _(" (no values)"));
        for (gsize i = 0; settings_values[i] != NULL; i++)
                g_string_append_printf(d->report, "  %s\n", settings_values[i]);
        g_string_append(d->report, _("Drives (letter|format|label):\n"));
        for (gsize i = 0; drive_lines[i] != NULL; i++)
                g_string_append_printf(d->report, "  %s\n", drive_lines[i]);

        if (svc == 0)
                g_strv_builder_add(lacks, "virtio-fs");
        if (launcher == 0)
                g_strv_builder_add(lacks, "winfsp");
        lack_list = g_strv_builder_end(lacks);
        if (lack_list[0] != NULL) {
                g_autofree char *word = sluice_shell_word(in->vm_name);

                builder_take(next, g_strdup_printf(_("Sluice would install %s (sluicectl vm %s install-guest-tools)"),
                                                          g_strv_length(lack_list) == 2 ? _("WinFsp and the VirtIO-FS driver")
                                                          : svc == 0 ? _("the VirtIO-FS driver") : _("WinFsp"),
                                                          word));
        }
        for (gsize i = 0; in->tags != NULL && in->tags[i] != NULL; i++) {
                g_autofree char *drive = sluice_guest_windows_drive_of(volumes, volumes_len, in->tags[i], NULL);
                const char *place = in->places[i] != NULL && *in->places[i] ? in->places[i] : _("the first free letter from Z: down");

                if (drive != NULL)
                        builder_take(next, g_strdup_printf(_("“%s” shows as %s: nothing to do"), in->tags[i], drive));
                else if (lack_list[0] != NULL)
                        builder_take(next, g_strdup_printf(_("then Sluice would mount “%s” at %s"), in->tags[i], place));
                else if (first_share)
                        builder_take(next, g_strdup_printf(_("Sluice would start VirtioFsSvc for “%s” at %s"), in->tags[i], place));
                else
                        builder_take(next, g_strdup_printf(_("Sluice would start a WinFsp launcher instance for “%s” at %s"),
                                                                  in->tags[i], place));
                first_share = FALSE;
        }
        next_list = g_strv_builder_end(next);
        g_string_append(d->report, _("Next:\n"));
        if (next_list[0] == NULL)
                g_string_append_printf(d->report, "  %s\n", _("nothing: no shared folder is attached to this VM"));
        for (gsize i = 0; next_list[i] != NULL; i++)
                g_string_append_printf(d->report, "  %s\n", next_list[i]);

        fact_string(d, "windows-product", product);
        fact_string(d, "windows-display-version", display);
        fact_string(d, "windows-build", build);
        fact_string(d, "viofs-driver-version", driver);
        fact_string(d, "viofs-service-state", svc >= 0 ? (svc == 0 ? "not-installed" : state_word(svc)) : "");
        fact_string(d, "viofs-service-start", svc > 0 ? start_word(start) : "");
        fact_string(d, "winfsp-version", winfsp_version);
        fact_string(d, "winfsp-install-dir", winfsp_dir);
        fact_string(d, "winfsp-launcher-state", launcher >= 0 ? (launcher == 0 ? "not-installed" : state_word(launcher)) : "");
        fact_string(d, "launcher-command-line", registered);
        fact_strv(d, "virtio-fs-registry", (const char *const *)viofs_values);
        fact_strv(d, "virtiofs-settings", (const char *const *)settings_values);
        fact_strv(d, "drives", (const char *const *)drive_lines);
        fact_strv(d, "missing", (const char *const *)lack_list);
        fact_strv(d, "next", (const char *const *)next_list);
        if (missing != NULL && svc >= 0 && launcher >= 0)
                *missing = g_strdupv(lack_list);
}

static char *read_text(Doctor *d, const char *path, char **why)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(GBytes) bytes = NULL;
        gsize n;
        const char *data;

        g_clear_pointer(why, g_free);
        if (d->gone != NULL)
                return NULL;
        bytes = sluice_guest_agent_read_file(d->domain, path, 256 * 1024, &error);
        if (bytes == NULL) {
                *why = sluice_printable(error->message, -1, VALUE_MAX_CHARS);
                if (sluice_guest_agent_error_is_gone(error))
                        d->gone = g_steal_pointer(&error);
                return NULL;
        }
        data = g_bytes_get_data(bytes, &n);
        return g_strndup(data != NULL ? data : "", n);
}

static void linux_guest(Doctor *d, const SluiceDoctorInput *in)
{
        g_autofree char *why = NULL, *why_fs = NULL, *why_mounts = NULL;
        g_autofree char *release = read_text(d, "/proc/sys/kernel/osrelease", &why);
        g_autofree char *kernel = release != NULL ? sluice_guest_agent_printable(release, strlen(release), VALUE_MAX_CHARS) : NULL;
        g_autofree char *filesystems = read_text(d, "/proc/filesystems", &why_fs);
        g_autofree char *mounts = read_text(d, "/proc/mounts", &why_mounts);
        gboolean virtiofs = FALSE;
        g_autoptr(GStrvBuilder) found = g_strv_builder_new();
        g_autoptr(GStrvBuilder) next = g_strv_builder_new();
        g_auto(GStrv) mount_lines = NULL, next_list = NULL;
        const char *line;
        gsize n, pos = 0;
        int count = 0;

        while (next_line(filesystems, filesystems ? strlen(filesystems) : 0, &pos, &line, &n))
                if (n >= 8 && memcmp(line + n - 8, "virtiofs", 8) == 0 && (n == 8 || g_ascii_isspace(line[n - 9])))
                        virtiofs = TRUE;
        pos = 0;
        while (count < LINES_MAX && next_line(mounts, mounts ? strlen(mounts) : 0, &pos, &line, &n)) {
                const char *space = memchr(line, ' ', n);
                const char *type = space != NULL ? memchr(space + 1, ' ', (gsize)(line + n - space - 1)) : NULL;

                if (type != NULL && (gsize)(line + n - type) > 9 && memcmp(type + 1, "virtiofs ", 9) == 0) {
                        builder_take(found, sluice_guest_agent_printable(line, n, VALUE_MAX_CHARS));
                        count++;
                }
        }
        mount_lines = g_strv_builder_end(found);
        for (gsize i = 0; in->tags != NULL && in->tags[i] != NULL; i++) {
                g_autofree char *prefix = g_strconcat(in->tags[i], " ", NULL);
                gboolean mounted = FALSE;

                for (gsize k = 0; mount_lines[k] != NULL; k++)
                        mounted |= g_str_has_prefix(mount_lines[k], prefix);
                if (mounted)
                        builder_take(next, g_strdup_printf(_("“%s” is mounted: nothing to do"), in->tags[i]));
                else
                        builder_take(next, g_strdup_printf(_("Sluice would mount “%s” at %s"), in->tags[i],
                                                                  in->places[i] != NULL && *in->places[i] ? in->places[i]
                                                                                                          : "/mnt/TAG"));
        }
        next_list = g_strv_builder_end(next);

        g_string_append_printf(d->report, _("Linux kernel: %s\n"), or_unknown(kernel, why));
        g_string_append_printf(d->report, _("virtiofs in the kernel: %s\n"),
                               filesystems == NULL ? or_unknown(NULL, why_fs)
                               : virtiofs          ? _("yes")
                                                   : _("not loaded (modprobe virtiofs)"));
        g_string_append(d->report, _("virtiofs mounts:\n"));
        for (gsize i = 0; mount_lines[i] != NULL; i++)
                g_string_append_printf(d->report, "  %s\n", mount_lines[i]);
        g_string_append(d->report, _("Next:\n"));
        if (next_list[0] == NULL)
                g_string_append_printf(d->report, "  %s\n", _("nothing: no shared folder is attached to this VM"));
        for (gsize i = 0; next_list[i] != NULL; i++)
                g_string_append_printf(d->report, "  %s\n", next_list[i]);
        fact_string(d, "kernel", kernel);
        g_variant_builder_add(&d->facts, "{sv}", "virtiofs-available", g_variant_new_boolean(virtiofs));
        fact_strv(d, "mounts", (const char *const *)mount_lines);
        fact_strv(d, "next", (const char *const *)next_list);
}

char *sluice_guest_doctor_run(virDomainPtr domain, const SluiceDoctorInput *in, GVariant **facts, char ***missing,
                              GError **error)
{
        Doctor d = { .domain = domain, .report = g_string_new(NULL) };
        g_autoptr(GVariant) built = NULL;

        if (missing != NULL)
                *missing = NULL;
        g_variant_builder_init(&d.facts, G_VARIANT_TYPE_VARDICT);
        /* TRANSLATORS: the VM's name, then its OS */
        g_string_append_printf(d.report, _("Sluice's doctor for “%s” (%s)\n"), in->vm_name,
                               sluice_wire_guest_os_name(in->os));
        fact_string(&d, "vm", in->vm_name);
        fact_string(&d, "os", sluice_wire_guest_os_name(in->os));
        if (in->os == SLUICE_WIRE_GUEST_OS_WINDOWS)
                windows(&d, in, missing);
        else
                linux_guest(&d, in);
        /* what the service-state questions noted is this call's, not a mount's */
        g_strfreev(sluice_guest_tools_take_noted());
        built = g_variant_ref_sink(g_variant_builder_end(&d.facts));
        if (d.gone != NULL) {
                g_propagate_error(error, d.gone);
                g_string_free(d.report, TRUE);
                return NULL;
        }
        *facts = g_steal_pointer(&built);
        return g_string_free(d.report, FALSE);
}
