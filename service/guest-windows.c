/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-windows.c — a share in a Windows guest; see guest-windows.h. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-ops.h"
#include "guest-place.h"
#include "guest-tools.h"
#include "guest-windows.h"
#include "printable.h"
#include "share-tag.h"

/* A person types "z:" as often as "Z:"; anything longer ("Z:\", "Z:foo")
 * would reach a command line in the guest, so it is refused, not trimmed. */
gboolean sluice_guest_windows_check_drive(const char *drive, GError **error)
{
        g_autofree char *shown = NULL;
        char letter;

        if (drive == NULL || *drive == '\0')
                return TRUE;
        letter = g_ascii_toupper(drive[0]);
        if (sluice_guest_place_is_drive(drive) && letter >= 'A' && letter <= 'C') {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            letter == 'C'
                                    ? _("Drive C: is where Windows itself lives: choose a letter from D: to Z:, or leave it empty for the first free one from Z: down")
                                    : _("Drives A: and B: are kept for floppy disks in Windows: choose a letter from D: to Z:, or leave it empty for the first free one from Z: down"));
                return FALSE;
        }
        if (sluice_guest_place_is_drive(drive))
                return TRUE;
        shown = sluice_printable_escaped(drive);
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                    _("“%s” is not a drive letter: give one like “Z:” (D: to Z:), or leave it empty for the first free one from Z: down"),
                    shown);
        return FALSE;
}

/* A guest-exec result cleared on scope exit (a name of this file's own). */
typedef SluiceGuestExec WinExec;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(WinExec, sluice_guest_exec_clear)

/* The programs run in the guest: full paths, since guest-exec on Windows
 * runs a program without a shell and without looking it up in PATH.  These
 * are where Windows, virtio-win's guest tools and WinFsp's installer put
 * them by default. */
#define SC_EXE SLUICE_WIN_SC_EXE
#define REG_EXE SLUICE_WIN_REG_EXE
#define POWERSHELL_EXE SLUICE_WIN_POWERSHELL_EXE
#define LAUNCHCTL_EXE "C:\\Program Files (x86)\\WinFsp\\bin\\launchctl-x64.exe"
#define VIRTIOFS_EXE "C:\\Program Files\\Virtio-Win\\VioFS\\virtiofs.exe"

#define VIOFS_SERVICE SLUICE_WIN_VIOFS_SERVICE
#define WINFSP_SERVICE SLUICE_WIN_WINFSP_SERVICE
/* virtiofs.exe (virtio-win's viofs/svc/virtiofs.cpp, FS_SERVICE_REGKEY)
 * reads its settings under HKLM\\Software\\VirtIO-FS — MountPoint ("*": the
 * first free letter from Z: down) and CaseInsensitive (a DWORD) among
 * them — but only when the service starts without arguments, as it does
 * at boot; started with arguments it takes -m, -t and -i instead.  (Not
 * HKLM\\Software\\virtiofs: nothing reads that key.) */
#define VIOFS_REGKEY SLUICE_WIN_VIOFS_REGKEY
/* WinFsp's launcher starts the file systems registered under this key, one
 * instance per `launchctl start`; virtiofs.exe takes -t TAG and -m DRIVE
 * (virtio-win builds from 2023 on; 0.1.225 still lacked -t).  A class's
 * command line is fixed, so a case-insensitive share (virtiofs.exe -i) has
 * a class of Sluice's own beside the usual "virtiofs"
 * (SLUICE_WIN_LAUNCHER_REGKEY's). */
#define LAUNCHER_SERVICES "HKLM\\SOFTWARE\\WOW6432Node\\WinFsp\\Services\\"
#define LAUNCHER_CLASS "virtiofs"
#define LAUNCHER_CLASS_NOCASE "sluice-virtiofs-i"
/* The file system name virtiofs.exe gives its volumes; their label is the tag. */
#define VIOFS_FORMAT "VirtIO-FS"

/* Every volume with a letter as "Z:\|FORMAT|LABEL"; a drive that is not
 * ready (an empty DVD drive) throws and is skipped.  Fixed text: nothing
 * of a person's goes into it. */
#define LIST_VOLUMES \
        "[System.IO.DriveInfo]::GetDrives() | ForEach-Object { try { $_.Name + '|' + $_.DriveFormat + '|' + $_.VolumeLabel } catch { } }"

/* sc.exe's exit status when the service does not exist (ERROR_SERVICE_DOES_NOT_EXIST). */
#define SC_NO_SERVICE 1060
/* … when it runs already (ERROR_SERVICE_ALREADY_RUNNING) or is not running (ERROR_SERVICE_NOT_ACTIVE). */
#define SC_ALREADY_RUNNING 1056
#define SC_NOT_ACTIVE 1062
#define SC_RUNNING 4
#define SC_STOPPED 1

/* PowerShell's first start in a fresh VM takes seconds. */
#define EXEC_TIMEOUT_S 30
/* How long a mount or an unmount may take to show in the volume list. */
#define SETTLE_TRIES 30
#define SETTLE_POLL_US (500 * 1000)
/* What of a program's output an Error shows. */
#define SAID_MAX_CHARS 200

gboolean sluice_guest_windows_next_line(const char *out, gsize len, gsize *pos, const char **line, gsize *line_len)
{
        gsize start = *pos, end;

        if (out == NULL || start >= len)
                return FALSE;
        end = start;
        while (end < len && out[end] != '\n')
                end++;
        *pos = end < len ? end + 1 : end;
        *line = out + start;
        *line_len = end - start;
        while (*line_len > 0 && ((*line)[*line_len - 1] == '\r' || (*line)[*line_len - 1] == '\0'))
                (*line_len)--;
        return TRUE;
}

static void trim(const char **s, gsize *n)
{
        while (*n > 0 && g_ascii_isspace(**s)) {
                (*s)++;
                (*n)--;
        }
        while (*n > 0 && g_ascii_isspace((*s)[*n - 1]))
                (*n)--;
}

/* The number at the start of VALUE (after the colon), 0 when none in 1..7. */
static int state_number(const char *value, gsize value_n)
{
        int state = 0;

        trim(&value, &value_n);
        for (gsize i = 0; i < value_n && i < 3 && g_ascii_isdigit(value[i]); i++)
                state = state * 10 + (value[i] - '0');
        return state >= 1 && state <= 7 ? state : 0;
}

/* "        STATE              : 4  RUNNING": the number is sc.exe's own in
 * every language; the key is English in the Windows versions seen, and
 * where it might be translated the state is the third "key : value" line
 * (SERVICE_NAME, TYPE, STATE). */
int sluice_guest_windows_sc_state(const char *out, gsize len)
{
        const char *line;
        gsize n, pos = 0;
        int third = 0, colon_lines = 0;

        while (sluice_guest_windows_next_line(out, len, &pos, &line, &n)) {
                const char *colon = memchr(line, ':', n);
                const char *key = line;
                gsize key_n;
                int state;

                if (colon == NULL)
                        continue;
                colon_lines++;
                key_n = (gsize)(colon - line);
                trim(&key, &key_n);
                state = state_number(colon + 1, (gsize)(line + n - colon - 1));
                if (key_n == 5 && g_ascii_strncasecmp(key, "STATE", 5) == 0)
                        return state;
                if (colon_lines == 3)
                        third = state;
        }
        return third;
}

gboolean sluice_guest_windows_launchctl_ok(const char *out, gsize len, char **message)
{
        const char *line;
        gsize n, pos = 0;

        if (message != NULL)
                *message = NULL;
        if (sluice_guest_windows_next_line(out, len, &pos, &line, &n)) {
                trim(&line, &n);
                if (n == 2 && memcmp(line, "OK", 2) == 0)
                        return TRUE;
        }
        if (message != NULL)
                *message = sluice_guest_agent_printable(out != NULL ? out : "", out != NULL ? len : 0,
                                                        SAID_MAX_CHARS);
        return FALSE;
}

/* Every "Z:\\|FORMAT|LABEL" line: TAG's drive (NULL when none), every
 * letter listed (IN_USE) and those of VirtIO-FS (VIOFS), as bit masks. */
static char *parse_volumes(const char *out, gsize len, const char *tag, guint32 *in_use, guint32 *viofs)
{
        g_autofree char *found = NULL;
        const char *line;
        gsize n, pos = 0;

        *in_use = 0;
        *viofs = 0;
        while (sluice_guest_windows_next_line(out, len, &pos, &line, &n)) {
                const char *bar1, *bar2, *format, *label;
                gsize name_n, format_n, label_n;
                char letter;
                gboolean is_viofs;

                trim(&line, &n);
                bar1 = memchr(line, '|', n);
                if (bar1 == NULL)
                        continue;
                bar2 = memchr(bar1 + 1, '|', (gsize)(line + n - bar1 - 1));
                if (bar2 == NULL)
                        continue;
                name_n = (gsize)(bar1 - line);
                letter = name_n > 0 ? g_ascii_toupper(line[0]) : '\0';
                if (!(letter >= 'A' && letter <= 'Z') || name_n < 2 || line[1] != ':' ||
                    !(name_n == 2 || (name_n == 3 && line[2] == '\\')))
                        continue;
                *in_use |= 1u << (letter - 'A');
                format = bar1 + 1;
                format_n = (gsize)(bar2 - format);
                label = bar2 + 1;
                label_n = (gsize)(line + n - label);
                trim(&format, &format_n);
                trim(&label, &label_n);
                is_viofs = format_n == strlen(VIOFS_FORMAT) &&
                           g_ascii_strncasecmp(format, VIOFS_FORMAT, format_n) == 0;
                if (is_viofs)
                        *viofs |= 1u << (letter - 'A');
                if (found == NULL && tag != NULL && is_viofs && label_n == strlen(tag) &&
                    g_ascii_strncasecmp(label, tag, label_n) == 0)
                        found = g_strdup_printf("%c:", letter);
        }
        return g_steal_pointer(&found);
}

char *sluice_guest_windows_drive_of(const char *out, gsize len, const char *tag, guint32 *in_use)
{
        guint32 used, viofs;
        char *found = parse_volumes(out, len, tag, &used, &viofs);

        if (in_use != NULL)
                *in_use = used;
        return found;
}

char *sluice_guest_windows_pick_drive(const char *wanted, guint32 in_use)
{
        char letter = wanted != NULL && sluice_guest_place_is_drive(wanted) ? g_ascii_toupper(wanted[0]) : '*';

        if (letter >= 'D' && letter <= 'Z' && (in_use & (1u << (letter - 'A'))) == 0)
                return g_strdup_printf("%c:", letter);
        /* as WinFsp's "*" does: the first free one from Z: down */
        for (char l = 'Z'; l >= 'D'; l--)
                if ((in_use & (1u << (l - 'A'))) == 0)
                        return g_strdup_printf("%c:", l);
        return NULL;
}

/* Runs ARGV in the guest; an agent failure says what was being done and
 * keeps its domain and code (guest-ops.h). */
static gboolean run(virDomainPtr domain, const char *const *argv, SluiceGuestExec *result, GError **error)
{
        g_autoptr(GError) local = NULL;

        if (sluice_guest_agent_exec(domain, argv, EXEC_TIMEOUT_S, result, &local))
                return TRUE;
        /* the agent's message quotes what Windows' agent said */
        sluice_guest_agent_set_error(error, local->domain, local->code, _("Running %s in the VM failed: %s"), argv[0],
                                     local->message);
        return FALSE;
}

/* What a program printed, for an Error: its output, else its error output. */
static char *said(const SluiceGuestExec *r)
{
        if (r->out_len > 0)
                return sluice_guest_agent_printable(r->out, r->out_len, SAID_MAX_CHARS);
        if (r->err_len > 0)
                return sluice_guest_agent_printable(r->err, r->err_len, SAID_MAX_CHARS);
        return g_strdup_printf(_("exit status %d"), r->exit_code);
}

/* The state of service NAME (SC_RUNNING …), 0 when it is not installed, -1 on an error. */
static int service_state(virDomainPtr domain, const char *name, GError **error)
{
        const char *const argv[] = { SC_EXE, "query", name, NULL };
        g_auto(WinExec) r = { 0 };
        int state;

        if (!run(domain, argv, &r, error))
                return -1;
        if (r.exit_code == SC_NO_SERVICE)
                return 0;
        state = sluice_guest_windows_sc_state(r.out, r.out_len);
        if (r.exit_code != 0 || state == 0) {
                g_autofree char *text = said(&r);

                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("Windows did not say whether the service %s runs: %s"), name, text);
                return -1;
        }
        return state;
}

/* The steps run_ok() takes, each with its own message. */
typedef enum {
        STEP_SET_LETTER,
        STEP_SET_CASE,
        STEP_AUTOSTART,
        STEP_STOP,
        STEP_START,
        STEP_REGISTER,
} WinStep;

/* Runs ARGV and wants exit status 0 (or OK_TOO). */
static gboolean run_ok(virDomainPtr domain, const char *const *argv, int ok_too, WinStep step, GError **error)
{
        g_auto(WinExec) r = { 0 };
        g_autofree char *text = NULL;

        if (!run(domain, argv, &r, error))
                return FALSE;
        if (r.exit_code == 0 || (ok_too != 0 && r.exit_code == ok_too))
                return TRUE;
        text = said(&r);
        switch (step) {
        case STEP_SET_LETTER:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: %s is what Windows said */
                            _("Setting VirtIO-FS's drive letter failed in the VM: %s"), text);
                break;
        case STEP_SET_CASE:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: %s is what Windows said */
                            _("Setting VirtIO-FS's case-insensitive mode failed in the VM: %s"), text);
                break;
        case STEP_AUTOSTART:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: %s is what Windows said */
                            _("Setting the VirtIO-FS service to start automatically failed in the VM: %s"), text);
                break;
        case STEP_STOP:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: %s is what Windows said */
                            _("Stopping the VirtIO-FS service failed in the VM: %s"), text);
                break;
        case STEP_START:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: %s is what Windows said */
                            _("Starting the VirtIO-FS service failed in the VM: %s"), text);
                break;
        case STEP_REGISTER:
        default:
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: %s is what Windows said */
                            _("Registering VirtIO-FS with WinFsp's launcher failed in the VM: %s"), text);
                break;
        }
        return FALSE;
}

/* The drive showing TAG (NULL when none); IN_USE as for drive_of. */
static gboolean read_back(virDomainPtr domain, const char *tag, char **drive, guint32 *in_use,
                          guint32 *viofs, GError **error)
{
        guint32 used, served;
        const char *const argv[] = { POWERSHELL_EXE, "-NoLogo", "-NoProfile", "-NonInteractive",
                                     "-Command", LIST_VOLUMES, NULL };
        g_auto(WinExec) r = { 0 };

        if (!run(domain, argv, &r, error))
                return FALSE;
        if (r.exit_code != 0) {
                g_autofree char *text = said(&r);

                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("Listing the drives in the VM failed: %s"), text);
                return FALSE;
        }
        *drive = parse_volumes(r.out, r.out_len, tag, &used, &served);
        if (in_use != NULL)
                *in_use = used;
        if (viofs != NULL)
                *viofs = served;
        return TRUE;
}

/* Waits until TAG shows as a drive (WANT_MOUNTED) or no longer does. */
static gboolean settle(virDomainPtr domain, const char *tag, gboolean want_mounted, char **drive,
                       GError **error)
{
        for (int i = 0; i < SETTLE_TRIES; i++) {
                g_autofree char *found = NULL;

                if (i > 0)
                        g_usleep(SETTLE_POLL_US);
                if (!read_back(domain, tag, &found, NULL, NULL, error))
                        return FALSE;
                if ((found != NULL) == want_mounted) {
                        if (drive != NULL)
                                *drive = g_steal_pointer(&found);
                        return TRUE;
                }
        }
        return FALSE;
}

int sluice_guest_windows_service_state(virDomainPtr domain, const char *name, GError **error)
{
        return service_state(domain, name, error);
}

char **sluice_guest_windows_missing(virDomainPtr domain, int *viofs_state, GError **error)
{
        g_autoptr(GStrvBuilder) missing = g_strv_builder_new();
        char **result;
        int viofs, winfsp;

        viofs = service_state(domain, VIOFS_SERVICE, error);
        if (viofs < 0)
                return NULL;
        winfsp = service_state(domain, WINFSP_SERVICE, error);
        if (winfsp < 0)
                return NULL;
        if (viofs == 0)
                g_strv_builder_add(missing, "virtio-fs");
        if (winfsp == 0)
                g_strv_builder_add(missing, "winfsp");
        if (viofs_state != NULL)
                *viofs_state = viofs;
        result = g_strv_builder_end(missing);
        sluice_guest_tools_note_missing((const char *const *)result);
        return result;
}

char *sluice_guest_windows_list_volumes(virDomainPtr domain, gsize *len, GError **error)
{
        const char *const argv[] = { POWERSHELL_EXE, "-NoLogo", "-NoProfile", "-NonInteractive",
                                     "-Command", LIST_VOLUMES, NULL };
        g_auto(WinExec) r = { 0 };

        if (!run(domain, argv, &r, error))
                return NULL;
        if (r.exit_code != 0) {
                g_autofree char *text = said(&r);

                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("Listing the drives in the VM failed: %s"), text);
                return NULL;
        }
        *len = r.out_len;
        r.out_len = 0;
        return g_steal_pointer(&r.out);
}

/* Both the driver's service and WinFsp are there, or an Error naming what to install. */
static gboolean check_installed(virDomainPtr domain, int *viofs_state, GError **error)
{
        g_auto(GStrv) lacks = sluice_guest_windows_missing(domain, viofs_state, error);
        g_autoptr(GString) missing = g_string_new(NULL);

        if (lacks == NULL)
                return FALSE;
        if (g_strv_contains((const char *const *)lacks, "virtio-fs"))
                g_string_append(missing, _("Install virtio-win's guest tools (virtio-win-guest-tools.exe) in the VM: it brings the VirtIO-FS driver and service."));
        if (g_strv_contains((const char *const *)lacks, "winfsp")) {
                if (missing->len > 0)
                        g_string_append_c(missing, ' ');
                g_string_append(missing, _("Install WinFsp (winfsp.dev) in the VM."));
        }
        if (missing->len == 0)
                return TRUE;
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                    _("Windows in this VM cannot show a shared folder yet. %s Then Sluice makes it a drive by itself."),
                    missing->str);
        return FALSE;
}

/* The VM's first share: virtio-win's own service, started at every boot.
 * At a boot it serves the first VirtIO-FS device at the registry's mount
 * point; started now, it is given the tag and the drive as start arguments
 * (virtiofs.exe reads -t and -m from them), so it serves this share even
 * where the VM has several. */
static gboolean start_service(virDomainPtr domain, const char *tag, const char *mount_point, int state,
                              gboolean case_insensitive, GError **error)
{
        const char *const set_point[] = { REG_EXE, "add", VIOFS_REGKEY, "/v", "MountPoint", "/t", "REG_SZ",
                                          "/d", mount_point, "/f", NULL };
        /* what the boot-time start reads; 0 rather than deleted: one command, the same every time */
        const char *const set_case[] = { REG_EXE, "add", VIOFS_REGKEY, "/v", "CaseInsensitive", "/t", "REG_DWORD",
                                         "/d", case_insensitive ? "1" : "0", "/f", NULL };
        const char *const automatic[] = { SC_EXE, "config", VIOFS_SERVICE, "start=", "auto", NULL };
        const char *const stop[] = { SC_EXE, "stop", VIOFS_SERVICE, NULL };
        const char *const start[] = { SC_EXE, "start", VIOFS_SERVICE, "-t", tag, "-m", mount_point, NULL };
        const char *const start_nocase[] = { SC_EXE, "start", VIOFS_SERVICE, "-i", "-t", tag, "-m", mount_point,
                                             NULL };

        if (!run_ok(domain, set_point, 0, STEP_SET_LETTER, error) ||
            !run_ok(domain, set_case, 0, STEP_SET_CASE, error) ||
            !run_ok(domain, automatic, 0, STEP_AUTOSTART, error))
                return FALSE;
        if (state != SC_STOPPED) {
                /* Running without our share (waiting for a device, or holding a
                 * drive letter it took before): a restart reads the letter anew. */
                if (!run_ok(domain, stop, SC_NOT_ACTIVE, STEP_STOP, error))
                        return FALSE;
                for (int i = 0; i < SETTLE_TRIES; i++) {
                        int now = service_state(domain, VIOFS_SERVICE, error);

                        if (now < 0)
                                return FALSE;
                        if (now == SC_STOPPED)
                                break;
                        g_usleep(SETTLE_POLL_US);
                }
        }
        return run_ok(domain, case_insensitive ? start_nocase : start, SC_ALREADY_RUNNING, STEP_START, error);
}

/* A virtio-win from before 2023 knows no -t: its service stops at once
 * with the arguments above.  Started without, it serves the VM's first
 * VirtIO-FS device at the registry's mount point. */
static gboolean start_service_plain(virDomainPtr domain, const char *tag, char **found, GError **error)
{
        const char *const start[] = { SC_EXE, "start", VIOFS_SERVICE, NULL };
        int state;

        if (error != NULL && *error != NULL)
                return FALSE;
        state = service_state(domain, VIOFS_SERVICE, error);
        if (state != SC_STOPPED)
                return state >= 0;
        if (!run_ok(domain, start, SC_ALREADY_RUNNING, STEP_START, error))
                return FALSE;
        return settle(domain, tag, TRUE, found, error) || (error == NULL || *error == NULL);
}

/* Another share: an instance of WinFsp's launcher serving TAG alone. */
static gboolean start_instance(virDomainPtr domain, const char *tag, const char *mount_point,
                               gboolean case_insensitive, GError **error)
{
        const char *class = case_insensitive ? LAUNCHER_CLASS_NOCASE : LAUNCHER_CLASS;
        g_autofree char *key = g_strconcat(LAUNCHER_SERVICES, class, NULL);
        const char *const registered[] = { REG_EXE, "query", key, "/v", "CommandLine", NULL };
        const char *const reg_exe[] = { REG_EXE, "add", key, "/v", "Executable", "/t", "REG_SZ",
                                        "/d", VIRTIOFS_EXE, "/f", NULL };
        const char *const reg_cmd[] = { REG_EXE, "add", key, "/v", "CommandLine", "/t", "REG_SZ",
                                        "/d", case_insensitive ? "-i -t %1 -m %2" : "-t %1 -m %2", "/f", NULL };
        const char *const reg_sec[] = { REG_EXE, "add", key, "/v", "Security", "/t", "REG_SZ",
                                        "/d", "D:P(A;;RPWPLC;;;WD)", "/f", NULL };
        const char *const reg_job[] = { REG_EXE, "add", key, "/v", "JobControl", "/t", "REG_DWORD",
                                        "/d", "1", "/f", NULL };
        g_autofree char *instance = g_strconcat("sluice-", tag, NULL);
        const char *const start[] = { LAUNCHCTL_EXE, "start", class, instance, tag, mount_point, NULL };
        g_auto(WinExec) q = { 0 };
        g_auto(WinExec) r = { 0 };
        g_autofree char *message = NULL;

        if (!run(domain, registered, &q, error))
                return FALSE;
        /* Registered as WinFsp's fsreg.bat and virtio-win's guide do, once. */
        if (q.exit_code != 0 &&
            (!run_ok(domain, reg_exe, 0, STEP_REGISTER, error) ||
             !run_ok(domain, reg_cmd, 0, STEP_REGISTER, error) ||
             !run_ok(domain, reg_sec, 0, STEP_REGISTER, error) ||
             !run_ok(domain, reg_job, 0, STEP_REGISTER, error)))
                return FALSE;
        if (!run(domain, start, &r, error))
                return FALSE;
        if (r.exit_code == 0 && sluice_guest_windows_launchctl_ok(r.out, r.out_len, &message))
                return TRUE;
        g_free(message);
        message = said(&r);
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                    _("WinFsp's launcher did not start VirtIO-FS for “%s”: %s"), tag, message);
        return FALSE;
}

char *sluice_guest_windows_mount(virDomainPtr domain, const char *tag, const char *drive,
                                 gboolean others_mounted, gboolean case_insensitive, GError **error)
{
        g_autofree char *mount_point = NULL;
        g_autofree char *found = NULL;
        guint32 in_use = 0, viofs = 0;
        gboolean instance;
        int state;

        if (!sluice_share_tag_check(tag, error) || !sluice_guest_windows_check_drive(drive, error))
                return NULL;
        if (!check_installed(domain, &state, error))
                return NULL;
        if (!read_back(domain, tag, &found, &in_use, &viofs, error))
                return NULL;
        if (found != NULL)      /* there already: the service found it at boot */
                return g_steal_pointer(&found);
        /* a letter taken by another drive (a USB stick, another share):
         * the next free one, which the caller sees in the answer; none
         * chosen: the first free one from Z: down, named, so that the
         * registry's MountPoint names it for the next boot */
        mount_point = sluice_guest_windows_pick_drive(drive, in_use);
        if (mount_point == NULL) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("Every drive letter from D: to Z: is in use in the VM: free one, then attach again"));
                return NULL;
        }
        /* After a reboot the service serves another share already (the
         * first device, at the registry's letter): it is left alone. */
        instance = others_mounted || (state == SC_RUNNING && viofs != 0);
        if (!instance ? !start_service(domain, tag, mount_point, state, case_insensitive, error)
                      : !start_instance(domain, tag, mount_point, case_insensitive, error))
                return NULL;
        if (!settle(domain, tag, TRUE, &found, error) && !instance &&
            !start_service_plain(domain, tag, &found, error))
                return NULL;
        if (found == NULL) {
                if (error != NULL && *error == NULL)
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("VirtIO-FS started in the VM, but no drive shows “%s” (Windows' event log says why)"),
                                    tag);
                return NULL;
        }
        return g_steal_pointer(&found);
}

gboolean sluice_guest_windows_unmount(virDomainPtr domain, const char *tag, const char *drive, GError **error)
{
        g_autofree char *instance = NULL;
        g_autofree char *found = NULL;
        g_autofree char *message = NULL;
        g_auto(WinExec) r = { 0 };
        const char *const stop_service[] = { SC_EXE, "stop", VIOFS_SERVICE, NULL };

        (void)drive;    /* the drive Windows gave is read back: it is what counts */
        if (!sluice_share_tag_check(tag, error))
                return FALSE;
        if (!read_back(domain, tag, &found, NULL, NULL, error))
                return FALSE;
        if (found == NULL)
                return TRUE;
        instance = g_strconcat("sluice-", tag, NULL);
        {
                const char *const stop_instance[] = { LAUNCHCTL_EXE, "stop", LAUNCHER_CLASS, instance, NULL };
                const char *const stop_nocase[] = { LAUNCHCTL_EXE, "stop", LAUNCHER_CLASS_NOCASE, instance, NULL };
                g_auto(WinExec) r2 = { 0 };

                /* A share of its own instance (of either class), or else the service's. */
                if (!run(domain, stop_instance, &r, error))
                        return FALSE;
                if (!(r.exit_code == 0 && sluice_guest_windows_launchctl_ok(r.out, r.out_len, &message))) {
                        g_clear_pointer(&message, g_free);
                        if (!run(domain, stop_nocase, &r2, error))
                                return FALSE;
                        if (!(r2.exit_code == 0 && sluice_guest_windows_launchctl_ok(r2.out, r2.out_len, &message)) &&
                            !run_ok(domain, stop_service, SC_NOT_ACTIVE, STEP_STOP, error))
                                return FALSE;
                }
        }
        if (!settle(domain, tag, FALSE, NULL, error)) {
                if (error != NULL && *error == NULL)
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Drive %s still shows “%s” in the VM after VirtIO-FS was stopped"), found, tag);
                return FALSE;
        }
        return TRUE;
}

/* ---- the table (guest-ops.h) ---- */

/* Share.GuestHint: what a Windows guest needs to show the share by itself. */
static char *windows_hint(const char *tag)
{
        return g_strdup_printf(_("Windows guest: install the VirtIO-FS driver from virtio-win and WinFsp, and "
                                 "set the “VirtIO-FS Service” to start Automatically; the shared folder “%s” "
                                 "then appears as a drive letter (Z: unless it is taken)."),
                               tag);
}

/* No letter chosen: Windows takes the first free one from Z: down. */
static char *windows_default_place(const char *tag)
{
        (void)tag;
        return g_strdup("");
}

static char *windows_mount(virDomainPtr domain, const char *tag, const char *place, guint others,
                           gboolean case_insensitive, GError **error)
{
        return sluice_guest_windows_mount(domain, tag, place, others > 0, case_insensitive, error);
}

const SluiceGuestOps sluice_guest_windows_ops = {
        .name = "windows",
        .check_place = sluice_guest_windows_check_drive,
        .default_place = windows_default_place,
        .hint = windows_hint,
        .mount = windows_mount,
        .unmount = sluice_guest_windows_unmount,
        /* no dead mount to detach: its instance is stopped, and started again by the next mount */
        .release = sluice_guest_windows_unmount,
        /* Windows' agent has no way Sluice uses to ask what holds a drive */
        .find_users = NULL,
        /* nothing of a share is kept across boots: the VirtIO-FS service's start type serves every share */
        .set_at_boot = NULL,
};
