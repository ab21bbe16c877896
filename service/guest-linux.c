/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-linux.c — a share in a Linux guest; see guest-linux.h. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include <glib/gi18n.h>

#include "errors.h"
#include "guest-agent.h"
#include "guest-linux.h"
#include "guest-ops.h"
#include "printable.h"

#define MOUNT_POINT_MAX_BYTES 255

/* Folders that hold the system: mounting over one hides what the guest runs on. */
static const char *const system_folders[] = {
        "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
        "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
};
/* …and those whose insides belong to the kernel, the boot or the packages. */
static const char *const system_trees[] = {
        "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
        "/sys", "/usr",
};

/* Sets ERROR to FORMAT, a whole sentence whose one %s is the mount point as
 * shown (printable, bounded), and answers FALSE. */
#define refuse(error, path, format)                                                                               \
        ({                                                                                                         \
                g_autofree char *shown_ = sluice_printable((path), -1, 80);                                         \
                g_set_error((error), SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT, (format), shown_);               \
                FALSE;                                                                                             \
        })

static gboolean path_is_or_under(const char *path, const char *folder)
{
        gsize n = strlen(folder);

        return strncmp(path, folder, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

gboolean sluice_guest_linux_check_mount_point(const char *path, GError **error)
{
        if (path == NULL || *path == '\0') {
                g_set_error_literal(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                                    _("The guest mount point is empty: give a folder such as /mnt/docs"));
                return FALSE;
        }
        if (strlen(path) > MOUNT_POINT_MAX_BYTES)
                return refuse(error, path, _("The guest mount point “%s” is longer than 255 bytes: choose a shorter folder"));
        if (!g_utf8_validate(path, -1, NULL))
                return refuse(error, path, _("The guest mount point “%s” is not valid UTF-8: choose a folder name made of readable characters"));
        for (const char *p = path; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                if (!sluice_printable_char(c))
                        return refuse(error, path,
                                      _("The guest mount point “%s” holds a control or invisible character: choose a folder name made of readable characters"));
        }
        if (path[0] != '/')
                return refuse(error, path, _("The guest mount point “%s” is not an absolute path: start it with “/”, as in /mnt/docs"));
        if (strcmp(path, "/") == 0)
                return refuse(error, path, _("The guest mount point “%s” is the guest's root folder: choose a folder such as /mnt/docs"));
        if (strstr(path, "//") != NULL)
                return refuse(error, path, _("The guest mount point “%s” holds “//”: write each “/” once"));
        if (g_str_has_suffix(path, "/"))
                return refuse(error, path, _("The guest mount point “%s” ends with “/”: leave the last “/” out"));
        {
                g_auto(GStrv) parts = g_strsplit(path + 1, "/", -1);

                for (guint i = 0; parts[i] != NULL; i++)
                        if (strcmp(parts[i], ".") == 0 || strcmp(parts[i], "..") == 0)
                                return refuse(error, path,
                                              _("The guest mount point “%s” holds a “.” or “..” folder: write the folder's full path without them"));
        }
        for (gsize i = 0; i < G_N_ELEMENTS(system_folders); i++)
                if (strcmp(path, system_folders[i]) == 0)
                        return refuse(error, path,
                                      _("The guest mount point “%s” is a system folder of the guest: choose a folder inside one, such as /mnt/docs"));
        for (gsize i = 0; i < G_N_ELEMENTS(system_trees); i++)
                if (path_is_or_under(path, system_trees[i]))
                        return refuse(error, path,
                                      _("The guest mount point “%s” is inside a system folder of the guest: choose a folder such as /mnt/docs or one in a home folder"));
        return TRUE;
}

char *sluice_guest_linux_default_mount_point(const char *tag)
{
        return g_strconcat("/mnt/", tag, NULL);
}

/* A field of /proc/mounts or /etc/fstab with its octal escapes (\040 for a
 * space) decoded; FALSE when there is no field left. */
static char *next_field(const char **cursor, const char *end)
{
        const char *p = *cursor;
        GString *out;

        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        if (p >= end) {
                *cursor = p;
                return NULL;
        }
        out = g_string_new(NULL);
        while (p < end && *p != ' ' && *p != '\t') {
                if (*p == '\\' && end - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
                    p[3] >= '0' && p[3] <= '7') {
                        g_string_append_c(out, (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0')));
                        p += 4;
                } else {
                        g_string_append_c(out, *p++);
                }
        }
        *cursor = p;
        return g_string_free(out, FALSE);
}

gboolean sluice_guest_linux_is_mounted(const char *proc_mounts, const char *tag, const char *mount_point)
{
        const char *line = proc_mounts;

        if (proc_mounts == NULL || tag == NULL || mount_point == NULL)
                return FALSE;
        while (*line != '\0') {
                const char *end = strchr(line, '\n');
                const char *cursor = line;
                g_autofree char *source = NULL;
                g_autofree char *target = NULL;
                g_autofree char *type = NULL;

                if (end == NULL)
                        end = line + strlen(line);
                source = next_field(&cursor, end);
                target = source != NULL ? next_field(&cursor, end) : NULL;
                type = target != NULL ? next_field(&cursor, end) : NULL;
                if (type != NULL && strcmp(type, "virtiofs") == 0 && strcmp(source, tag) == 0 &&
                    strcmp(target, mount_point) == 0)
                        return TRUE;
                line = *end == '\n' ? end + 1 : end;
        }
        return FALSE;
}

/* PATH as one fstab field: what would split or end it escaped in octal. */
static void append_fstab_field(GString *out, const char *path)
{
        for (const char *p = path; *p != '\0'; p++) {
                if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\\' || (p == path && *p == '#'))
                        g_string_append_printf(out, "\\%03o", (unsigned char)*p);
                else
                        g_string_append_c(out, *p);
        }
}

/* The options and dump/pass fields of every line Sluice writes. */
#define FSTAB_OPTIONS "defaults,nofail"

/* Whether LINE (without its line end) is Sluice's mark for TAG. */
static gboolean is_mark(const char *line, gsize len, const char *tag)
{
        g_autofree char *copy = g_strndup(line, len);
        g_autofree char *expected = g_strdup_printf(SLUICE_GUEST_FSTAB_MARK ": %s", tag);

        return strcmp(g_strstrip(copy), expected) == 0;
}

/* Whether LINE (without its line end) is exactly an entry Sluice writes
 * for TAG: "TAG MOUNT_POINT virtiofs defaults,nofail 0 0", any blanks
 * between the fields, a mount point Sluice accepts.  Anything else under a
 * mark (an administrator's own line that happens to start with TAG, such
 * as "tmpfs /tmp tmpfs …" under a stale "# sluice: tmpfs") is not Sluice's. */
static gboolean is_entry_for(const char *line, gsize len, const char *tag)
{
        const char *cursor = line, *end = line + len;
        char *fields[7] = { NULL };
        gsize n = 0;
        gboolean ours;

        while (n < G_N_ELEMENTS(fields) && (fields[n] = next_field(&cursor, end)) != NULL)
                n++;
        ours = n == 6 && strcmp(fields[0], tag) == 0 && sluice_guest_linux_check_mount_point(fields[1], NULL) &&
               strcmp(fields[2], "virtiofs") == 0 && strcmp(fields[3], FSTAB_OPTIONS) == 0 &&
               strcmp(fields[4], "0") == 0 && strcmp(fields[5], "0") == 0;
        for (gsize i = 0; i < n; i++)
                g_free(fields[i]);
        return ours;
}

/* The line at *CURSOR: LINE and LEN without its line end (LF, or CR LF),
 * *CURSOR moved past it.  FALSE at the end of the text. */
static gboolean fstab_next_line(const char **cursor, const char **line, gsize *len)
{
        const char *p = *cursor;
        const char *end;

        if (*p == '\0')
                return FALSE;
        end = strchr(p, '\n');
        if (end == NULL)
                end = p + strlen(p);
        *line = p;
        *len = (gsize)(end - p);
        if (*len > 0 && p[*len - 1] == '\r')
                (*len)--;
        *cursor = *end == '\n' ? end + 1 : end;
        return TRUE;
}

static void append_entry(GString *out, const char *tag, const char *mount_point)
{
        g_string_append_printf(out, SLUICE_GUEST_FSTAB_MARK ": %s\n", tag);
        append_fstab_field(out, tag);
        g_string_append_c(out, ' ');
        append_fstab_field(out, mount_point);
        g_string_append(out, " virtiofs " FSTAB_OPTIONS " 0 0\n");
}

char *sluice_guest_linux_fstab_edit(const char *fstab, const char *tag, const char *mount_point,
                                    gboolean present)
{
        GString *out = g_string_new(NULL);
        const char *cursor = fstab != NULL ? fstab : "";
        const char *line;
        gsize len;
        gboolean written = FALSE;

        /* Sluice's entry is a comment line with the mark followed by the
         * entry itself: a comment of its own line is skipped by every fstab
         * reader (libmount, busybox, systemd's generator), where a comment
         * after the fields is not.  Only that pair is Sluice's: a mark
         * whose entry is gone (deleted by hand) goes alone, and every
         * other line stays byte for byte, line end included. */
        while (fstab_next_line(&cursor, &line, &len)) {
                const char *after = cursor;
                const char *entry;
                gsize entry_len;

                if (!is_mark(line, len, tag)) {
                        g_string_append_len(out, line, cursor - line);
                        continue;
                }
                if (fstab_next_line(&after, &entry, &entry_len) && is_entry_for(entry, entry_len, tag)) {
                        cursor = after;
                        /* replaced where it stood: an unchanged line is no write */
                        if (present && !written) {
                                if (out->len > 0 && out->str[out->len - 1] != '\n')
                                        g_string_append_c(out, '\n');
                                append_entry(out, tag, mount_point);
                                written = TRUE;
                        }
                }
        }
        if (present && !written) {
                if (out->len > 0 && out->str[out->len - 1] != '\n')
                        g_string_append_c(out, '\n');
                append_entry(out, tag, mount_point);
        }
        return g_string_free(out, FALSE);
}

/* ---- the procedures in the guest ---- */

/* How long a mount waits for the device to show up after a hot-plug. */
#define DEVICE_WAIT_US (10 * G_USEC_PER_SEC)
#define DEVICE_RETRY_US (300 * 1000)
/* One program in the guest may take this long (a mount of a slow device). */
#define PROGRAM_TIMEOUT_S 20
/* What the guest said, as quoted in a message. */
#define SAID_MAX_CHARS 200
/* Processes named in a "busy" message. */
#define BUSY_NAMES_MAX 5

/* A program's result, cleared at the end of its scope. */
typedef SluiceGuestExec GuestRun;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GuestRun, sluice_guest_exec_clear)

/* What a procedure in the guest was doing, for its messages. */
typedef enum {
        DOING_MOUNT,
        DOING_UNMOUNT,
        DOING_RELEASE,
        DOING_FSTAB_ADD,
        DOING_FSTAB_REMOVE,
        DOING_LIST_USERS,
} DoingKind;

typedef struct {
        DoingKind kind;
        const char *tag;
        const char *mount_point;
} Doing;

/* What could not be done, as a whole sentence ("Could not unmount /mnt/docs
 * in the guest"), which the messages below go on from. */
static char *could_not(const Doing *d)
{
        switch (d->kind) {
        case DOING_MOUNT:
                return g_strdup_printf(_("Could not mount “%s” at %s in the guest"), d->tag, d->mount_point);
        case DOING_UNMOUNT:
                return g_strdup_printf(_("Could not unmount %s in the guest"), d->mount_point);
        case DOING_RELEASE:
                return g_strdup_printf(_("Could not let go of the old mount at %s in the guest"), d->mount_point);
        case DOING_FSTAB_ADD:
                return g_strdup(_("Could not add the share to the guest's /etc/fstab"));
        case DOING_FSTAB_REMOVE:
                return g_strdup(_("Could not remove the share from the guest's /etc/fstab"));
        case DOING_LIST_USERS:
        default:
                return g_strdup_printf(_("Could not list what uses %s in the guest"), d->mount_point);
        }
}

/* CAUSE after what could not be done.  An agent's own failure keeps its
 * domain and code (guest-ops.h): vm-guest.c tells an agent that went away
 * from one that said no, and words it (sluice_guest_agent_error_sentence). */
static void set_agent_error(GError **error, GError *cause, const Doing *doing)
{
        g_autofree char *what = NULL;
        gboolean agent = cause->domain == SLUICE_GUEST_AGENT_ERROR;

        if (error == NULL)
                return;
        what = could_not(doing);
        sluice_guest_agent_set_error(error, agent ? SLUICE_GUEST_AGENT_ERROR : SLUICE_ERROR,
                                     agent ? cause->code : SLUICE_ERROR_GUEST_AGENT,
                                     /* TRANSLATORS: what could not be done ("Could not unmount /mnt/docs in the
                                      * guest"), then what libvirt or the guest said */
                                     _("%s: %s"), what, cause->message);
}

/* Whether the agent failed because a path (a program, a file) is not there. */
static gboolean is_no_such_file(const GError *e)
{
        return e->domain == SLUICE_GUEST_AGENT_ERROR && e->code == SLUICE_GUEST_AGENT_ERROR_FAILED &&
               (strstr(e->message, "No such file or directory") != NULL || strstr(e->message, "ENOENT") != NULL);
}

/* Runs NAME with ARGS in the guest, found at /bin, /usr/bin, /usr/sbin or
 * /sbin (merged /usr, busybox and older layouts differ).  FALSE with
 * ERROR set when it could not run at all. */
static gboolean run(virDomainPtr domain, const char *name, const char *const *args, SluiceGuestExec *result,
                    const Doing *doing, GError **error)
{
        static const char *const dirs[] = { "/bin/", "/usr/bin/", "/usr/sbin/", "/sbin/" };
        g_autoptr(GError) last = NULL;

        for (gsize d = 0; d < G_N_ELEMENTS(dirs); d++) {
                g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);

                g_ptr_array_add(argv, g_strconcat(dirs[d], name, NULL));
                for (guint i = 0; args[i] != NULL; i++)
                        g_ptr_array_add(argv, g_strdup(args[i]));
                g_ptr_array_add(argv, NULL);
                g_clear_error(&last);
                if (sluice_guest_agent_exec(domain, (const char *const *)argv->pdata, PROGRAM_TIMEOUT_S, result, &last))
                        return TRUE;
                if (!is_no_such_file(last))
                        break;
        }
        if (is_no_such_file(last) && error != NULL) {
                g_autofree char *what = could_not(doing);

                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: the first %s is what could not be done ("Could not unmount /mnt/docs in the
                             * guest"), the second a program's name */
                            _("%s: the guest has no “%s” program in /bin, /usr/bin, /usr/sbin or /sbin"), what,
                            name);
        } else
                set_agent_error(error, last, doing);
        return FALSE;
}

/* The program's standard error (else its output), printable and bounded. */
static char *said_by(const SluiceGuestExec *r)
{
        if (r->err_len > 0)
                return sluice_guest_agent_printable(r->err, r->err_len, SAID_MAX_CHARS);
        if (r->out_len > 0)
                return sluice_guest_agent_printable(r->out, r->out_len, SAID_MAX_CHARS);
        if (r->signal != 0)
                return g_strdup_printf(_("ended by signal %d"), r->signal);
        return g_strdup_printf(_("exit status %d"), r->exit_code);
}

static gboolean said_contains(const SluiceGuestExec *r, const char *text)
{
        return (r->err != NULL && g_strstr_len(r->err, r->err_len, text) != NULL) ||
               (r->out != NULL && g_strstr_len(r->out, r->out_len, text) != NULL);
}

/* A guest file as text (NUL bytes end it: nothing read here holds one). */
static char *read_text(virDomainPtr domain, const char *path, gsize max, const Doing *doing, GError **error)
{
        g_autoptr(GError) e = NULL;
        g_autoptr(GBytes) bytes = sluice_guest_agent_read_file(domain, path, max, &e);
        gsize len = 0;
        const char *data;

        if (bytes == NULL) {
                set_agent_error(error, e, doing);
                return NULL;
        }
        data = g_bytes_get_data(bytes, &len);
        return g_strndup(data != NULL ? data : "", len);
}

static char *read_mounts(virDomainPtr domain, const Doing *doing, GError **error)
{
        return read_text(domain, "/proc/mounts", SLUICE_GUEST_AGENT_FILE_MAX, doing, error);
}

/* Whether TAG shows at MOUNT_POINT in the guest; -1 with ERROR set when
 * the mount table cannot be read. */
static int mounted_now(virDomainPtr domain, const char *tag, const char *mount_point, const Doing *doing,
                       GError **error)
{
        g_autofree char *mounts = read_mounts(domain, doing, error);

        if (mounts == NULL)
                return -1;
        return sluice_guest_linux_is_mounted(mounts, tag, mount_point) ? 1 : 0;
}

/* Whether mount's message says the device (the tag) is not there (yet). */
static gboolean says_no_device(const SluiceGuestExec *r)
{
        /* util-linux: "special device TAG does not exist"; busybox and the
         * new mount API: "No such file or directory", "tag <TAG> not found" */
        return said_contains(r, "does not exist") || said_contains(r, "No such file or directory") ||
               said_contains(r, "not found") ||
               /* Linux 6.1's virtio-fs answers EINVAL for a tag it does not have */
               said_contains(r, "Invalid argument");
}

static gboolean says_no_virtiofs(const SluiceGuestExec *r)
{
        return said_contains(r, "unknown filesystem type") || said_contains(r, "No such device") ||
               said_contains(r, "Unknown filesystem");
}

gboolean sluice_guest_linux_mount(virDomainPtr domain, const char *tag, const char *mount_point, GError **error)
{
        const Doing doing_ = { DOING_MOUNT, tag, mount_point }, *doing = &doing_;
        const char *const mkdir_args[] = { "-p", mount_point, NULL };
        const char *const mount_args[] = { "-t", "virtiofs", tag, mount_point, NULL };
        gint64 give_up = g_get_monotonic_time() + DEVICE_WAIT_US;
        int state;

        if (!sluice_guest_linux_check_mount_point(mount_point, error))
                return FALSE;
        state = mounted_now(domain, tag, mount_point, doing, error);
        if (state != 0)
                return state > 0;
        {
                g_auto(GuestRun) r = { 0 };

                if (!run(domain, "mkdir", mkdir_args, &r, doing, error))
                        return FALSE;
                if (r.exit_code != 0) {
                        g_autofree char *said = said_by(&r);

                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Could not make the folder %s in the guest (it said: %s): choose another mount "
                                      "point or make the folder there"),
                                    mount_point, said);
                        return FALSE;
                }
        }
        for (;;) {
                g_auto(GuestRun) r = { 0 };
                g_autofree char *said = NULL;

                if (!run(domain, "mount", mount_args, &r, doing, error))
                        return FALSE;
                if (r.exit_code == 0)
                        break;
                /* another mount of the same share got there first */
                if ((state = mounted_now(domain, tag, mount_point, doing, error)) != 0)
                        return state > 0;
                said = said_by(&r);
                if (says_no_device(&r) && g_get_monotonic_time() < give_up) {
                        /* a hot-plugged device takes a moment to reach the driver */
                        g_usleep(DEVICE_RETRY_US);
                        continue;
                }
                if (says_no_device(&r))
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Could not mount “%s” at %s: the guest does not see the device (it said: %s). "
                                      "Check that the guest's kernel has virtio-fs (CONFIG_VIRTIO_FS) and try again"),
                                    tag, mount_point, said);
                else if (says_no_virtiofs(&r))
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Could not mount “%s” at %s: the guest's kernel has no virtiofs file system "
                                      "(it said: %s). Install a kernel with virtio-fs (Linux 5.4 or later) or load "
                                      "its virtiofs module"),
                                    tag, mount_point, said);
                else if (said_contains(&r, "busy") || said_contains(&r, "Not a directory") ||
                         said_contains(&r, "not a directory"))
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Could not mount “%s” at %s: the mount point is busy or not a folder (it said: "
                                      "%s). Choose another mount point"),
                                    tag, mount_point, said);
                else
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Could not mount “%s” at %s in the guest (it said: %s)"), tag, mount_point,
                                    said);
                return FALSE;
        }
        if ((state = mounted_now(domain, tag, mount_point, doing, error)) < 0)
                return FALSE;
        if (state == 0) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("Mounting “%s” at %s in the guest reported success, but the guest's mount table does "
                              "not show it: mount it there by hand (mount -t virtiofs %s %s)"),
                            tag, mount_point, tag, mount_point);
                return FALSE;
        }
        return TRUE;
}

/* The name of guest process PID from /proc/PID/comm, printable, or NULL. */
static char *process_name(virDomainPtr domain, guint64 pid)
{
        g_autofree char *path = g_strdup_printf("/proc/%" G_GUINT64_FORMAT "/comm", pid);
        g_autoptr(GBytes) bytes = sluice_guest_agent_read_file(domain, path, 256, NULL);
        gsize len = 0;
        const char *data;

        if (bytes == NULL)
                return NULL;
        data = g_bytes_get_data(bytes, &len);
        return sluice_guest_agent_printable(data, len, 32);
}

/* Adds PID to PIDS once (at most a screenful are kept). */
static void add_pid(GArray *pids, guint64 pid)
{
        if (pid == 0 || pid > G_MAXINT32 || pids->len >= 64)
                return;
        for (guint i = 0; i < pids->len; i++)
                if (g_array_index(pids, guint64, i) == pid)
                        return;
        g_array_append_val(pids, pid);
}

/* The processes using MOUNT_POINT by fuser -m (psmisc, or a busybox that
 * has it): both print the process ids on standard output, psmisc with the
 * kind of use appended ("123c").  FALSE when there is no fuser. */
static gboolean users_by_fuser(virDomainPtr domain, const char *mount_point, GArray *pids)
{
        const Doing doing = { DOING_LIST_USERS, NULL, mount_point };
        const char *const args[] = { "-m", mount_point, NULL };
        g_auto(GuestRun) r = { 0 };
        g_auto(GStrv) words = NULL;

        if (!run(domain, "fuser", args, &r, &doing, NULL) || r.out == NULL)
                return FALSE;
        words = g_strsplit_set(r.out, " \t\n", -1);
        for (guint i = 0; words[i] != NULL; i++) {
                char *end = NULL;
                guint64 pid;

                if (!g_ascii_isdigit(words[i][0]))
                        continue;
                pid = g_ascii_strtoull(words[i], &end, 10);
                if (*end == '\0' || g_ascii_isalpha(*end))
                        add_pid(pids, pid);
        }
        return TRUE;
}

/* Without fuser (Debian's busybox has none): the processes whose current
 * folder or an open file is inside MOUNT_POINT, from `ls -l` of their
 * /proc/PID/cwd and /proc/PID/fd/N links, listed by find. */
static void users_by_proc(virDomainPtr domain, const char *mount_point, GArray *pids)
{
        const Doing doing = { DOING_LIST_USERS, NULL, mount_point };
        const char *const args[] = { "/proc", "-maxdepth", "3", "(", "-path", "/proc/[0-9]*/cwd", "-o", "-path",
                                     "/proc/[0-9]*/fd/*", ")", "-exec", "/bin/ls", "-l", "{}", "+", NULL };
        g_auto(GuestRun) r = { 0 };
        g_auto(GStrv) lines = NULL;
        gsize n = strlen(mount_point);

        if (!run(domain, "find", args, &r, &doing, NULL) || r.out == NULL)
                return;
        lines = g_strsplit(r.out, "\n", -1);
        for (guint i = 0; lines[i] != NULL; i++) {
                const char *arrow = strstr(lines[i], " -> ");
                const char *proc = strstr(lines[i], " /proc/");
                const char *target;

                if (arrow == NULL || proc == NULL || proc > arrow)
                        continue;
                target = arrow + 4;
                if (strncmp(target, mount_point, n) == 0 && (target[n] == '\0' || target[n] == '/' || target[n] == ' '))
                        add_pid(pids, g_ascii_strtoull(proc + 7, NULL, 10));
        }
}

/* "sleep (pid 123), bash (pid 99)", or NULL when the guest cannot tell;
 * MORE is how many more processes there are than are named. */
static char *find_users(virDomainPtr domain, const char *mount_point, guint *more)
{
        g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(guint64));
        g_autoptr(GString) names = g_string_new(NULL);

        if (!users_by_fuser(domain, mount_point, pids))
                users_by_proc(domain, mount_point, pids);
        for (guint i = 0; i < MIN(pids->len, BUSY_NAMES_MAX); i++) {
                guint64 pid = g_array_index(pids, guint64, i);
                g_autofree char *name = process_name(domain, pid);

                if (names->len > 0)
                        g_string_append(names, ", ");
                g_string_append_printf(names, _("%s (pid %" PRIu64 ")"),
                                       name != NULL && *name != '\0' ? name : "?", pid);
        }
        *more = pids->len > BUSY_NAMES_MAX ? pids->len - BUSY_NAMES_MAX : 0;
        return names->len > 0 ? g_string_free(g_steal_pointer(&names), FALSE) : NULL;
}

gboolean sluice_guest_linux_unmount(virDomainPtr domain, const char *tag, const char *mount_point, GError **error)
{
        const Doing doing_ = { DOING_UNMOUNT, tag, mount_point }, *doing = &doing_;
        const char *const args[] = { mount_point, NULL };
        int state;

        if (!sluice_guest_linux_check_mount_point(mount_point, error))
                return FALSE;
        /* a share mounted twice at the same place comes off one layer at a time */
        for (int layer = 0; layer < 4; layer++) {
                g_auto(GuestRun) r = { 0 };

                if ((state = mounted_now(domain, tag, mount_point, doing, error)) <= 0)
                        return state == 0;
                if (!run(domain, "umount", args, &r, doing, error))
                        return FALSE;
                if (r.exit_code == 0)
                        continue;
                if ((state = mounted_now(domain, tag, mount_point, doing, error)) <= 0)
                        return state == 0;
                if (said_contains(&r, "busy")) {
                        guint more = 0;
                        g_autofree char *users = find_users(domain, mount_point, &more);

                        if (users != NULL && more > 0)
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_BUSY,
                                            /* TRANSLATORS: the first %s is the mount point, the second a list of processes
                                             * ("sleep (pid 123), bash (pid 99)"), %u how many more there are */
                                            ngettext("%s is in use in the guest by %s and %u other process: close "
                                                     "them there and try again",
                                                     "%s is in use in the guest by %s and %u other processes: "
                                                     "close them there and try again",
                                                     more),
                                            mount_point, users, more);
                        else if (users != NULL)
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_BUSY,
                                            /* TRANSLATORS: the first %s is the mount point, the second a list of processes
                                             * ("sleep (pid 123), bash (pid 99)") */
                                            _("%s is in use in the guest by %s: close it there and try again"),
                                            mount_point, users);
                        else
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_BUSY,
                                            _("%s is in use in the guest: close what uses it there (a program, a "
                                              "terminal in that folder) and try again"),
                                            mount_point);
                } else {
                        g_autofree char *said = said_by(&r);

                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Could not unmount %s in the guest (it said: %s)"), mount_point, said);
                }
                return FALSE;
        }
        if ((state = mounted_now(domain, tag, mount_point, doing, error)) < 0)
                return FALSE;
        if (state > 0) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("%s is still mounted in the guest after unmounting it: unmount it there by hand"),
                            mount_point);
                return FALSE;
        }
        return TRUE;
}

gboolean sluice_guest_linux_release(virDomainPtr domain, const char *tag, const char *mount_point, GError **error)
{
        const Doing doing_ = { DOING_RELEASE, tag, mount_point }, *doing = &doing_;
        int state;

        if (!sluice_guest_linux_check_mount_point(mount_point, error))
                return FALSE;
        /* Only a lazy unmount, and only once the old device is unplugged:
         * virtio-fs connections are not in fusectl (the kernel sets
         * no_control for them), so nothing can abort a request waiting on
         * a dead worker; while the device is there, anything that touches
         * the mount (busybox umount looks the path up) waits forever, and
         * such a request still waiting at the unplug blocks the guest's
         * virtio-fs driver until the VM restarts.  Once the device is gone
         * every request fails at once (ENOTCONN) and this takes < 1 s. */
        for (int layer = 0; layer < 4; layer++) {
                const char *const args[] = { "-l", mount_point, NULL };
                g_auto(GuestRun) r = { 0 };

                if ((state = mounted_now(domain, tag, mount_point, doing, error)) <= 0)
                        return state == 0;
                if (!run(domain, "umount", args, &r, doing, error))
                        return FALSE;
                if (r.exit_code != 0) {
                        g_autofree char *said = said_by(&r);

                        if ((state = mounted_now(domain, tag, mount_point, doing, error)) <= 0)
                                return state == 0;
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                                    _("Could not detach the old mount at %s in the guest (it said: %s): restart the "
                                      "VM to let it go"),
                                    mount_point, said);
                        return FALSE;
                }
        }
        if ((state = mounted_now(domain, tag, mount_point, doing, error)) < 0)
                return FALSE;
        if (state > 0) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            _("The old mount at %s is still there in the guest: restart the VM to let it go"),
                            mount_point);
                return FALSE;
        }
        return TRUE;
}

#define FSTAB_PATH "/etc/fstab"
/* Sluice's name for the new fstab while it is written, next to the file it
 * replaces: a rename within one folder is atomic. */
#define FSTAB_TEMP_NAME ".fstab.sluice"
/* The longest path the guest may name as the file /etc/fstab is. */
#define FSTAB_TARGET_MAX_BYTES 1024

/* The file /etc/fstab is: where a link points (readlink -f), since a rename
 * over the link would replace it with a file; /etc/fstab itself when the
 * guest cannot say or names something that is not a plain absolute path. */
static char *fstab_target(virDomainPtr domain, const Doing *doing)
{
        const char *const args[] = { "-f", FSTAB_PATH, NULL };
        g_auto(GuestRun) r = { 0 };
        g_autofree char *path = NULL;

        if (!run(domain, "readlink", args, &r, doing, NULL) || r.exit_code != 0 || r.out == NULL)
                return g_strdup(FSTAB_PATH);
        path = g_strndup(r.out, r.out_len);
        g_strchomp(path);
        if (path[0] != '/' || strlen(path) > FSTAB_TARGET_MAX_BYTES || g_str_has_suffix(path, "/") ||
            !g_utf8_validate(path, -1, NULL))
                return g_strdup(FSTAB_PATH);
        for (const char *p = path; *p != '\0'; p = g_utf8_next_char(p))
                if (g_unichar_iscntrl(g_utf8_get_char(p)))
                        return g_strdup(FSTAB_PATH);
        return g_steal_pointer(&path);
}

/* Runs NAME ARGS in the guest and wants exit status 0; else CAUSE says what
 * the guest said, after WHAT ("copying /etc/fstab to /etc/.fstab.sluice"). */
static gboolean run_step(virDomainPtr domain, const char *name, const char *const *args, const char *what,
                         const Doing *doing, GError **cause)
{
        g_auto(GuestRun) r = { 0 };
        g_autofree char *said = NULL;

        if (!run(domain, name, args, &r, doing, cause))
                return FALSE;
        if (r.exit_code == 0)
                return TRUE;
        said = said_by(&r);
        /* TRANSLATORS: what was being done ("copying /etc/fstab to /etc/.fstab.sluice"), then what the guest said */
        g_set_error(cause, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, _("%s failed (it said: %s)"), what, said);
        return FALSE;
}

/* replace_file()'s steps: DATA into TEMP (a copy of TARGET first when it
 * EXISTED, cp -p: its mode and owner), read back, renamed over TARGET.
 * FALSE at the first that fails, with CAUSE set. */
static gboolean replace_steps(virDomainPtr domain, const char *target, const char *temp, GBytes *data,
                              gboolean existed, const Doing *doing, GError **cause)
{
        const char *const copy_args[] = { "-p", target, temp, NULL };
        const char *const chmod_args[] = { "644", temp, NULL };
        const char *const move_args[] = { "-f", temp, target, NULL };
        g_autoptr(GBytes) back = NULL;
        g_autofree char *copying = NULL;
        g_autofree char *chmodding = NULL;
        g_autofree char *renaming = NULL;

        /* TRANSLATORS: the file Sluice edits, then Sluice's copy of it */
        copying = g_strdup_printf(_("copying %s to %s"), target, temp);
        if (existed && !run_step(domain, "cp", copy_args, copying, doing, cause))
                return FALSE;
        if (!sluice_guest_agent_write_file(domain, temp, data, cause))
                return FALSE;
        /* what the guest's file system kept, not what the agent said it wrote */
        back = sluice_guest_agent_read_file(domain, temp, g_bytes_get_size(data) + 1, cause);
        if (back == NULL)
                return FALSE;
        if (!g_bytes_equal(back, data)) {
                g_set_error(cause, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            /* TRANSLATORS: %s is Sluice's new file in the guest */
                            _("%s does not read back as it was written"), temp);
                return FALSE;
        }
        /* a new file: readable by all, as an fstab is, whatever the agent created it with */
        /* TRANSLATORS: %s is Sluice's new file in the guest */
        chmodding = g_strdup_printf(_("making %s readable"), temp);
        if (!existed && !run_step(domain, "chmod", chmod_args, chmodding, doing, cause))
                return FALSE;
        /* TRANSLATORS: Sluice's new file, then the file it replaces */
        renaming = g_strdup_printf(_("renaming %s over %s"), temp, target);
        return run_step(domain, "mv", move_args, renaming, doing, cause);
}

/* Replaces TARGET with DATA with no moment where it is empty or half
 * written, whatever fails (the agent's timeout, a full or frozen file
 * system): see replace_steps.  On failure Sluice's file is removed, TARGET
 * is as it was, and ERROR says so.  EXISTED: whether TARGET is there. */
static gboolean replace_file(virDomainPtr domain, const char *target, GBytes *data, gboolean existed,
                             const Doing *doing, GError **error)
{
        g_autofree char *dir = g_path_get_dirname(target);
        g_autofree char *temp = g_build_filename(dir, FSTAB_TEMP_NAME, NULL);
        const char *const remove_args[] = { "-f", temp, NULL };
        g_autoptr(GError) cause = NULL;
        g_autofree char *what = NULL;

        if (replace_steps(domain, target, temp, data, existed, doing, &cause))
                return TRUE;
        {
                g_auto(GuestRun) r = { 0 };

                (void)run(domain, "rm", remove_args, &r, doing, NULL);
        }
        if (cause->domain == SLUICE_GUEST_AGENT_ERROR) {
                /* the agent in the way: said after what was being done, its code kept */
                g_autoptr(GError) wrapped = NULL;

                set_agent_error(&wrapped, cause, doing);
                g_clear_error(&cause);
                cause = g_steal_pointer(&wrapped);
        }
        what = could_not(doing);
        if (g_str_has_prefix(cause->message, what))
                sluice_guest_agent_set_error(error, cause->domain, cause->code,
                                             /* TRANSLATORS: why it could not be done (a sentence), then the file, untouched */
                                             _("%s. %s is unchanged"), cause->message, target);
        else
                sluice_guest_agent_set_error(error, cause->domain, cause->code,
                                             /* TRANSLATORS: what could not be done ("Could not add the share to
                                              * the guest's /etc/fstab"), why, then the file */
                                             _("%s: %s. %s is unchanged"), what, cause->message, target);
        return FALSE;
}

gboolean sluice_guest_linux_set_fstab(virDomainPtr domain, const char *tag, const char *mount_point,
                                      gboolean present, GError **error)
{
        const Doing doing_ = { present ? DOING_FSTAB_ADD : DOING_FSTAB_REMOVE, tag, mount_point }, *doing = &doing_;
        g_autoptr(GError) e = NULL;
        g_autoptr(GBytes) old = NULL;
        g_autoptr(GBytes) data = NULL;
        g_autofree char *text = NULL;
        g_autofree char *edited = NULL;
        g_autofree char *target = NULL;
        gboolean existed = TRUE;
        const char *bytes;
        gsize len = 0;

        if (!sluice_guest_linux_check_mount_point(mount_point, error))
                return FALSE;
        /* larger than the budget: refused whole (the agent layer says so), never cut */
        old = sluice_guest_agent_read_file(domain, FSTAB_PATH, SLUICE_GUEST_AGENT_FILE_MAX, &e);
        if (old == NULL) {
                /* no /etc/fstab yet: nothing to remove, a new one to write */
                if (!is_no_such_file(e)) {
                        set_agent_error(error, e, doing);
                        return FALSE;
                }
                if (!present)
                        return TRUE;
                old = g_bytes_new_static("", 0);
                existed = FALSE;
        }
        bytes = g_bytes_get_data(old, &len);
        if (len > 0 && memchr(bytes, '\0', len) != NULL) {
                /* writing it back as text would cut it short */
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT,
                            present ? _("Could not add the share to the guest's /etc/fstab: the file holds binary "
                                        "data; Sluice leaves it alone. Fix the file in the guest")
                                    : _("Could not remove the share from the guest's /etc/fstab: the file holds "
                                        "binary data; Sluice leaves it alone. Fix the file in the guest"));
                return FALSE;
        }
        text = g_strndup(bytes != NULL ? bytes : "", len);
        edited = sluice_guest_linux_fstab_edit(text, tag, mount_point, present);
        if (strcmp(edited, text) == 0)
                return TRUE;
        len = strlen(edited);
        data = g_bytes_new_take(g_steal_pointer(&edited), len);
        target = fstab_target(domain, doing);
        return replace_file(domain, target, data, existed, doing, error);
}

/* ---- the table (guest-ops.h) ---- */

/* Share.GuestHint: the commands that mount TAG at /mnt/TAG by hand. */
static char *linux_hint(const char *tag)
{
        gboolean plain = TRUE;
        g_autofree char *quoted = NULL;
        g_autofree char *dir = g_strdup(tag);

        for (const char *c = tag; *c != '\0'; c++)
                if (!g_ascii_isalnum(*c) && strchr("._-", *c) == NULL)
                        plain = FALSE;
        /* quoted for the shell only when the tag needs it */
        quoted = plain ? g_strdup(tag) : g_shell_quote(tag);
        /* a mount point named after the tag, without path separators */
        g_strdelimit(dir, "/ \t'\"\\", '_');
        return g_strdup_printf(_("In the guest: mkdir -p /mnt/%s && mount -t virtiofs %s /mnt/%s"), dir, quoted, dir);
}

static gboolean linux_check_place(const char *place, GError **error)
{
        return *place == '\0' || sluice_guest_linux_check_mount_point(place, error);
}

static char *linux_mount(virDomainPtr domain, const char *tag, const char *place, guint others,
                         gboolean case_insensitive, GError **error)
{
        (void)others;   /* every share is a mount of its own */
        (void)case_insensitive;   /* the worker answers lookups so; Linux needs no word of it */
        if (!sluice_guest_linux_mount(domain, tag, place, error))
                return NULL;
        return g_strdup(place);
}

const SluiceGuestOps sluice_guest_linux_ops = {
        .name = "linux",
        .check_place = linux_check_place,
        .default_place = sluice_guest_linux_default_mount_point,
        .hint = linux_hint,
        .mount = linux_mount,
        .unmount = sluice_guest_linux_unmount,
        .release = sluice_guest_linux_release,
        .find_users = find_users,
        .set_at_boot = sluice_guest_linux_set_fstab,
};
