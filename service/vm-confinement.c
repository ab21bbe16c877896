/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-confinement.c — see vm-confinement.h.  The host's policy files are
 * treated as untrusted-ish input: bounded reads, regular files only, and a
 * line has to match exactly to count. */
#include "config.h"

#include "vm-confinement.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define APPARMOR_ENABLED "/sys/module/apparmor/parameters/enabled"
#define APPARMOR_ABSTRACTION "/etc/apparmor.d/abstractions/libvirt-qemu"
#define APPARMOR_LOCAL_ABSTRACTION "/etc/apparmor.d/local/abstractions/libvirt-qemu"
#define APPARMOR_PROFILES "/etc/apparmor.d/libvirt"
/* what the abstraction of libvirt >= 9.6 includes, and Sluice's line for older ones */
#define INCLUDE_DIRECTORY "abstractions/libvirt-qemu.d"
#define INCLUDE_SNIPPET "abstractions/libvirt-qemu.d/sluice"
#define INCLUDE_LOCAL "local/abstractions/libvirt-qemu"
#define SOCKET_PATTERN "/tmp/sluice-[0-9]*-*/[0-9]*.sock"
#define SELINUX_ENFORCE "/sys/fs/selinux/enforce"
#define PROFILE_PREFIX "libvirt-"

/* ---- reading the host's files ------------------------------------------------------ */

/* Where the host's files are: "/" on a real host.  Test builds let a test
 * plant them in a scratch folder instead. */
static char *host_path(const char *path)
{
#if SLUICE_TEST_HOOKS
        const char *root = g_getenv("SLUICE_TEST_CONFINEMENT_ROOT");

        if (root && *root)
                return g_build_filename(root, path, NULL);
#endif
        return g_strdup(path);
}

static char *close_failed(int fd, int err)
{
        close(fd);
        errno = err;
        return NULL;
}

/* A host file's text (NULs and all, NUL-terminated), or NULL with errno:
 * ENOENT when it is not there, EFBIG past the bound, EINVAL when it is not a
 * regular file (O_NONBLOCK: a FIFO planted there cannot hang the open). */
static char *read_host_file(const char *path)
{
        g_autofree char *full = host_path(path);
        g_autofree char *buf = NULL;
        struct stat st;
        gsize len = 0;
        int fd;

        fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return NULL;
        if (fstat(fd, &st) < 0)
                return close_failed(fd, errno);
        if (!S_ISREG(st.st_mode))
                return close_failed(fd, EINVAL);
        /* sysfs files say 4096 whatever they hold: read, do not trust st_size */
        buf = g_malloc(SLUICE_CONFINEMENT_FILE_MAX_BYTES + 1);
        for (;;) {
                ssize_t n = read(fd, buf + len, SLUICE_CONFINEMENT_FILE_MAX_BYTES + 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return close_failed(fd, errno);
                if (n == 0)
                        break;
                len += (gsize)n;
                if (len > SLUICE_CONFINEMENT_FILE_MAX_BYTES)
                        return close_failed(fd, EFBIG);
        }
        close(fd);
        buf[len] = '\0';
        return g_realloc(g_steal_pointer(&buf), len + 1);
}

/* The file's first line without its blanks ("Y\n" → "Y"); NULL with errno. */
static char *read_word(const char *path)
{
        g_autofree char *text = read_host_file(path);

        if (!text)
                return NULL;
        return g_strstrip(g_strndup(text, strcspn(text, "\n")));
}

static gboolean read_word_equals(const char *path, const char *word)
{
        g_autofree char *text = read_word(path);

        return text && g_str_equal(text, word);
}

/* ---- AppArmor's files -------------------------------------------------------------- */

/* Whether a line of an AppArmor file is an include of <TARGET> (or of its
 * absolute path in quotes): "include <x>", "include if exists <x>", and the
 * older "#include <x>"; anything else starting with '#' is a comment. */
static gboolean line_includes(const char *line, const char *target)
{
        g_autofree char *angled = g_strdup_printf("<%s>", target);
        g_autofree char *quoted = g_strdup_printf("\"/etc/apparmor.d/%s\"", target);
        g_autofree char *rest = NULL;
        const char *p = line;

        while (g_ascii_isspace(*p))
                p++;
        if (*p == '#')
                p++;
        if (!g_str_has_prefix(p, "include") || !g_ascii_isspace(p[strlen("include")]))
                return FALSE;
        p += strlen("include");
        while (g_ascii_isspace(*p))
                p++;
        if (g_str_has_prefix(p, "if") && g_ascii_isspace(p[2])) {
                p += 2;
                while (g_ascii_isspace(*p))
                        p++;
                if (!g_str_has_prefix(p, "exists") || !g_ascii_isspace(p[strlen("exists")]))
                        return FALSE;
                p += strlen("exists");
        }
        rest = g_strstrip(g_strdup(p));
        return g_str_equal(rest, angled) || g_str_equal(rest, quoted);
}

static gboolean text_includes(const char *text, const char *target)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

        for (char **l = lines; *l; l++)
                if (line_includes(*l, target))
                        return TRUE;
        return FALSE;
}

/* Whether the snippet holds the rule on a line of its own. */
static gboolean text_has_rule(const char *text)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

        for (char **l = lines; *l; l++)
                if (g_str_equal(g_strstrip(*l), SLUICE_CONFINEMENT_APPARMOR_RULE))
                        return TRUE;
        return FALSE;
}

/* "libvirt-<uuid>", the profile libvirt made for the VM: from its label
 * when that is one (it names a file: nothing else gets through), else from
 * its UUID; NULL when neither is. */
static char *profile_name(const SluiceConfinementVm *vm)
{
        if (vm->label && g_str_has_prefix(vm->label, PROFILE_PREFIX) &&
            g_uuid_string_is_valid(vm->label + strlen(PROFILE_PREFIX)))
                return g_strdup(vm->label);
        if (vm->uuid && g_uuid_string_is_valid(vm->uuid))
                return g_strconcat(PROFILE_PREFIX, vm->uuid, NULL);
        return NULL;
}

/* ---- the words ---------------------------------------------------------------------- */

static SluiceConfinementReport *report_new(SluiceConfinementStatus status, SluiceConfinementGap gap,
                                           char *message)
{
        SluiceConfinementReport *report = g_new0(SluiceConfinementReport, 1);

        report->status = status;
        report->gap = gap;
        report->message = message ? message : g_strdup("");
        return report;
}

void sluice_confinement_report_free(SluiceConfinementReport *report)
{
        if (!report)
                return;
        g_free(report->message);
        g_free(report);
}

/* Where the rule goes, for libvirt >= 9.6 and for older. */
static char *apparmor_install_advice(void)
{
        g_autofree char *older = g_strdup_printf("include <%s>", INCLUDE_SNIPPET);

        return g_strdup_printf(_("Sluice's AppArmor rule “%s” belongs in %s (the sluice package installs it). "
                                 "libvirt 9.6 and later read that folder; for older libvirt, also add the line "
                                 "“%s” to %s."),
                               SLUICE_CONFINEMENT_APPARMOR_RULE, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, older,
                               APPARMOR_LOCAL_ABSTRACTION);
}

/* How to give the running VM the rule, and where a refusal shows. */
static char *apparmor_reload_advice(const char *profile)
{
        g_autofree char *path = g_build_filename(APPARMOR_PROFILES, profile ? profile : "libvirt-UUID", NULL);
        g_autofree char *command = g_strdup_printf("sudo apparmor_parser -r %s", path);

        return g_strdup_printf(_("Then reload the VM's profile with “%s”, or shut the VM down and start it "
                                 "again. A refusal shows in “%s”."),
                               command, "journalctl -k | grep apparmor");
}

static SluiceConfinementReport *apparmor_report(SluiceConfinementStatus status, SluiceConfinementGap gap,
                                                const char *profile, gboolean install, const char *problem)
{
        g_autofree char *installing = install ? apparmor_install_advice() : NULL;
        g_autofree char *reload = apparmor_reload_advice(profile);

        return report_new(status, gap,
                          g_strjoin(" ", problem, installing ? installing : reload, installing ? reload : NULL,
                                    NULL));
}

/* A file that decides the answer could not be read: say which, and what to check. */
static SluiceConfinementReport *apparmor_unknown(const SluiceConfinementVm *vm, const char *profile,
                                                 const char *path, int err)
{
        g_autofree char *problem = g_strdup_printf(
                _("Sluice cannot tell whether AppArmor lets QEMU of the VM “%s” reach its sockets: "
                  "%s cannot be read (%s)."),
                vm->name, path, g_strerror(err));

        return apparmor_report(SLUICE_CONFINEMENT_UNKNOWN, SLUICE_CONFINEMENT_GAP_NONE, profile, TRUE, problem);
}

/* ---- the checks --------------------------------------------------------------------- */

/* Whether the snippet is reached from libvirt's abstraction: 1, 0, or
 * -errno with *ret_unreadable naming the file that could not be read. */
static int apparmor_included(const char **ret_unreadable)
{
        g_autofree char *abstraction = read_host_file(APPARMOR_ABSTRACTION);
        g_autofree char *local = NULL;

        if (!abstraction) {
                *ret_unreadable = APPARMOR_ABSTRACTION;
                return -errno;
        }
        if (text_includes(abstraction, INCLUDE_DIRECTORY))
                return 1;
        /* older libvirt: only through the local file, which the abstraction must include */
        if (!text_includes(abstraction, INCLUDE_LOCAL))
                return 0;
        local = read_host_file(APPARMOR_LOCAL_ABSTRACTION);
        if (!local) {
                if (errno == ENOENT)
                        return 0;
                *ret_unreadable = APPARMOR_LOCAL_ABSTRACTION;
                return -errno;
        }
        return text_includes(local, INCLUDE_SNIPPET) ? 1 : 0;
}

static SluiceConfinementReport *check_apparmor(const SluiceConfinementVm *vm, const char *socket_path)
{
        g_autofree char *enabled = read_word(APPARMOR_ENABLED);
        int enabled_errno = errno;
        g_autofree char *snippet = NULL;
        g_autofree char *profile = profile_name(vm);
        g_autofree char *problem = NULL;
        const char *unreadable = NULL;
        int included;

        if (!enabled) {
                /* no AppArmor in this kernel: nothing confines QEMU */
                if (enabled_errno == ENOENT)
                        return report_new(SLUICE_CONFINEMENT_OK, SLUICE_CONFINEMENT_GAP_NONE, NULL);
                return apparmor_unknown(vm, profile, APPARMOR_ENABLED, enabled_errno);
        }
        if (!g_str_equal(enabled, "Y"))
                return report_new(SLUICE_CONFINEMENT_OK, SLUICE_CONFINEMENT_GAP_NONE, NULL);

        if (socket_path && fnmatch(SOCKET_PATTERN, socket_path, FNM_PATHNAME) != 0) {
                problem = g_strdup_printf(_("The socket %s is not one Sluice's AppArmor rule “%s” covers."),
                                          socket_path, SLUICE_CONFINEMENT_APPARMOR_RULE);
                return report_new(SLUICE_CONFINEMENT_BLOCKED, SLUICE_CONFINEMENT_GAP_SOCKET_OUTSIDE_RULE,
                                  g_steal_pointer(&problem));
        }

        snippet = read_host_file(SLUICE_CONFINEMENT_APPARMOR_SNIPPET);
        if (!snippet && errno != ENOENT)
                return apparmor_unknown(vm, profile, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, errno);
        if (!snippet || !text_has_rule(snippet)) {
                problem = g_strdup_printf(_("Sluice's AppArmor rule is not installed: %s is missing or does not hold it, "
                                            "so QEMU of the VM “%s” may not connect to Sluice's sockets."),
                                          SLUICE_CONFINEMENT_APPARMOR_SNIPPET, vm->name);
                return apparmor_report(SLUICE_CONFINEMENT_BLOCKED, SLUICE_CONFINEMENT_GAP_RULE_NOT_INSTALLED,
                                       profile, TRUE, problem);
        }

        included = apparmor_included(&unreadable);
        if (included < 0)
                return apparmor_unknown(vm, profile, unreadable, -included);
        if (included == 0) {
                g_autofree char *line = g_strdup_printf("include <%s>", INCLUDE_SNIPPET);

                problem = g_strdup_printf(_("Sluice's AppArmor rule is installed but not included by libvirt's "
                                            "abstraction: this libvirt (older than 9.6) does not read %s.d, and %s "
                                            "lacks the line “%s”."),
                                          APPARMOR_ABSTRACTION, APPARMOR_LOCAL_ABSTRACTION, line);
                return apparmor_report(SLUICE_CONFINEMENT_BLOCKED, SLUICE_CONFINEMENT_GAP_RULE_NOT_INCLUDED,
                                       profile, TRUE, problem);
        }

        /* Installed and included.  Whether the running QEMU's profile was
         * loaded with the rule cannot be read from the files: the package
         * reloads running VMs' profiles without touching them, and dpkg gives
         * the snippet the package's time.  A refusal tells (explain_refusal). */
        return report_new(SLUICE_CONFINEMENT_OK, SLUICE_CONFINEMENT_GAP_NONE, NULL);
}

/* The type of an SELinux context ("system_u:system_r:svirt_tcg_t:s0:c1,c2" →
 * "svirt_tcg_t"), or NULL. */
static char *selinux_type(const char *label)
{
        g_auto(GStrv) fields = label ? g_strsplit(label, ":", 4) : NULL;

        if (!fields || g_strv_length(fields) < 3 || !*fields[2])
                return NULL;
        for (const char *c = fields[2]; *c; c++)
                if (!g_ascii_isalnum(*c) && *c != '_')
                        return NULL;
        return g_strdup(fields[2]);
}

/* Whether the policy lets svirt_t reach the sockets needs libselinux and a
 * policy query; an advisory says what to check instead (see the header). */
static SluiceConfinementReport *check_selinux(const SluiceConfinementVm *vm)
{
        g_autofree char *enforce = read_word(SELINUX_ENFORCE);
        int enforce_errno = errno;
        g_autofree char *type = selinux_type(vm->label);
        g_autofree char *problem = NULL;
        g_autofree char *advice = NULL;
        g_autofree char *reading = NULL;

        if (!enforce && enforce_errno == ENOENT)
                return report_new(SLUICE_CONFINEMENT_OK, SLUICE_CONFINEMENT_GAP_NONE, NULL);
        /* permissive: a refusal is only logged */
        if (enforce && g_str_equal(enforce, "0"))
                return report_new(SLUICE_CONFINEMENT_OK, SLUICE_CONFINEMENT_GAP_NONE, NULL);
        if (type && g_str_equal(type, "unconfined_t"))
                return report_new(SLUICE_CONFINEMENT_OK, SLUICE_CONFINEMENT_GAP_NONE, NULL);

        if (!enforce)
                reading = g_strdup_printf(_("(%s cannot be read: %s.)"), SELINUX_ENFORCE, g_strerror(enforce_errno));
        problem = g_strdup_printf(_("QEMU of the VM “%s” runs confined by SELinux as %s; without privileges Sluice "
                                    "cannot tell whether the policy lets it connect to Sluice's sockets."),
                                  vm->name, type ? type : "?");
        advice = g_strdup_printf(_("Check that Sluice's SELinux module is loaded with “%s”; if it is not, "
                                   "build and install it from Sluice's source with “%s”. A refusal shows in “%s”."),
                                 "sudo semodule -l | grep sluice", "make selinux && sudo make selinux-install",
                                 "sudo ausearch -m avc -ts recent");
        return report_new(SLUICE_CONFINEMENT_UNKNOWN, SLUICE_CONFINEMENT_GAP_NONE,
                          g_strjoin(" ", problem, advice, reading, NULL));
}

SluiceConfinementReport *sluice_confinement_check(const SluiceConfinementVm *vm, const char *socket_path)
{
        switch (vm->model) {
        case SLUICE_CONFINEMENT_MODEL_APPARMOR:
                return check_apparmor(vm, socket_path);
        case SLUICE_CONFINEMENT_MODEL_SELINUX:
                return check_selinux(vm);
        case SLUICE_CONFINEMENT_MODEL_NONE:
        default:
                return report_new(SLUICE_CONFINEMENT_OK, SLUICE_CONFINEMENT_GAP_NONE, NULL);
        }
}

SluiceConfinementReport *sluice_confinement_explain_refusal(const SluiceConfinementVm *vm,
                                                            const char *socket_path)
{
        SluiceConfinementReport *report = sluice_confinement_check(vm, socket_path);
        g_autofree char *profile = NULL;
        g_autofree char *problem = NULL;

        if (report->status != SLUICE_CONFINEMENT_OK || vm->model != SLUICE_CONFINEMENT_MODEL_APPARMOR)
                return report;
        /* AppArmor is off here: the refusal came from somewhere else */
        if (!read_word_equals(APPARMOR_ENABLED, "Y"))
                return report;
        sluice_confinement_report_free(report);
        profile = profile_name(vm);
        problem = g_strdup_printf(_("Sluice's AppArmor rule is installed and included, yet QEMU of the VM “%s” "
                                    "was refused its socket: the VM's profile was most likely loaded before "
                                    "the rule was there."),
                                  vm->name);
        return apparmor_report(SLUICE_CONFINEMENT_BLOCKED, SLUICE_CONFINEMENT_GAP_PROFILE_PREDATES, profile,
                               FALSE, problem);
}
