/* SPDX-License-Identifier: GPL-2.0-or-later */
/* options.c — see options.h.
 *
 * Two spellings are accepted for what virtiofsd also has: its newer separate
 * options (--shared-dir, --cache, --xattr, --sandbox, --log-level; what libvirt
 * uses when a backend reports the "separate-options" capability) and the
 * legacy C virtiofsd's -o lists (what libvirt 9.0 passes: -o source=DIR,
 * cache=…,xattr, with ",," for a comma inside a value). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util.h"

#define PROGRAM "sluice-fs"

enum {
        OPT_SOCKET_PATH = 0x100,
        OPT_FD,
        OPT_SHARED_DIR,
        OPT_TAG,
        OPT_READONLY,
        OPT_CACHE,
        OPT_XATTR,
        OPT_NO_XATTR,
        OPT_SANDBOX,
        OPT_PRINT_CAPABILITIES,
        OPT_QUEUES,
        OPT_POLL_US,
        OPT_MAX_INODE_FDS,
        OPT_CONTROL_FD,
        OPT_TRANSLATE_UID,
        OPT_TRANSLATE_GID,
        OPT_LOG_LEVEL,
        OPT_THREAD_POOL_SIZE,
        OPT_RLIMIT_NOFILE,
        OPT_SYSLOG,
        OPT_ALLOW_DEVICES,
        OPT_ALLOW_SETUID,
        OPT_XATTR_NAMESPACES,
        OPT_SHARED_DIR_FD,
        OPT_ALLOW_PEER_UID,
        OPT_ALLOW_PEER_PID,
        OPT_RESUME,
        OPT_REPLAY,
        OPT_NAMES,
        OPT_CASE,
};

static const struct option long_options[] = {
        { "socket-path", required_argument, NULL, OPT_SOCKET_PATH },
        { "fd", required_argument, NULL, OPT_FD },
        { "shared-dir", required_argument, NULL, OPT_SHARED_DIR },
        { "tag", required_argument, NULL, OPT_TAG },
        { "readonly", no_argument, NULL, OPT_READONLY },
        { "cache", required_argument, NULL, OPT_CACHE },
        { "xattr", no_argument, NULL, OPT_XATTR },
        { "no-xattr", no_argument, NULL, OPT_NO_XATTR },
        { "sandbox", required_argument, NULL, OPT_SANDBOX },
        { "print-capabilities", no_argument, NULL, OPT_PRINT_CAPABILITIES },
        { "queues", required_argument, NULL, OPT_QUEUES },
        { "poll-us", required_argument, NULL, OPT_POLL_US },
        { "max-inode-fds", required_argument, NULL, OPT_MAX_INODE_FDS },
        { "control-fd", required_argument, NULL, OPT_CONTROL_FD },
        { "translate-uid", required_argument, NULL, OPT_TRANSLATE_UID },
        { "translate-gid", required_argument, NULL, OPT_TRANSLATE_GID },
        { "log-level", required_argument, NULL, OPT_LOG_LEVEL },
        { "debug", no_argument, NULL, 'd' },
        { "thread-pool-size", required_argument, NULL, OPT_THREAD_POOL_SIZE },
        { "rlimit-nofile", required_argument, NULL, OPT_RLIMIT_NOFILE },
        { "syslog", no_argument, NULL, OPT_SYSLOG },
        { "allow-devices", no_argument, NULL, OPT_ALLOW_DEVICES },
        { "allow-setuid", no_argument, NULL, OPT_ALLOW_SETUID },
        { "xattr-namespaces", required_argument, NULL, OPT_XATTR_NAMESPACES },
        { "shared-dir-fd", required_argument, NULL, OPT_SHARED_DIR_FD },
        { "allow-peer-uid", required_argument, NULL, OPT_ALLOW_PEER_UID },
        { "allow-peer-pid", required_argument, NULL, OPT_ALLOW_PEER_PID },
        { "resume", no_argument, NULL, OPT_RESUME },
        { "replay", required_argument, NULL, OPT_REPLAY },
        { "names", required_argument, NULL, OPT_NAMES },
        { "case", required_argument, NULL, OPT_CASE },
        { "foreground", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
};

static const char help_text[] =
        "Usage: " PROGRAM " --shared-dir=DIR (--socket-path=PATH | --fd=N) [OPTION...]\n"
        "\n"
        "Serves one host folder to one virtual machine as a virtio-fs device\n"
        "(vhost-user backend for QEMU's vhost-user-fs-pci).  Runs as an ordinary user.\n"
        "\n"
        "Where the frontend connects:\n"
        "      --socket-path=PATH     create a Unix socket at PATH (owner-only access) and\n"
        "                             serve one frontend at a time on it\n"
        "      --fd=N                 serve on the listening socket N (as libvirt passes it)\n"
        "\n"
        "What is shared:\n"
        "      --shared-dir=DIR       the host folder to share (also: -o source=DIR); a\n"
        "                             symbolic link is followed once, at the start\n"
        "      --shared-dir-fd=N      share the folder open as descriptor N (3 or more),\n"
        "                             as sluice-service passes it: no path is resolved\n"
        "      --tag=TAG              mount tag offered in the device's config space (at\n"
        "                             most 36 bytes); without it the frontend's own tag\n"
        "                             is used (QEMU's tag=, libvirt's <target dir>)\n"
        "      --readonly             every change fails with EROFS (also: -o readonly)\n"
        "      --cache=MODE           auto (default): 1 s attribute cache, page cache kept\n"
        "                             while a file is unchanged; always: long caching, the\n"
        "                             host does not change the folder; never (or none):\n"
        "                             no caching, direct I/O (also: -o cache=MODE)\n"
        "      --xattr                pass extended attributes through (also: -o xattr)\n"
        "      --names=MODE           posix (default): names as they are on the host;\n"
        "                             windows: names Windows can open (characters it\n"
        "                             forbids shown as U+F0xx, as WinFsp does; a trailing\n"
        "                             dot or space and device names such as CON mapped)\n"
        "      --case=MODE            sensitive (default): names match as the host's do;\n"
        "                             insensitive: a name matches whatever its case\n"
        "      --translate-uid=GUEST:HOST  files owned by host uid HOST appear owned by\n"
        "                             GUEST in the guest; files GUEST creates belong to the\n"
        "                             worker's user on the host (to HOST when run by root)\n"
        "      --translate-gid=GUEST:HOST  the same for group ids\n"
        "\n"
        "What the guest may make on the host (refusals are logged):\n"
        "      --allow-devices        let the guest create block and character devices\n"
        "                             (refused with EPERM by default)\n"
        "      --allow-setuid         keep the set-user-ID and set-group-ID bits the\n"
        "                             guest sets (stripped by default; set-group-ID\n"
        "                             directories are always kept), and those a guest\n"
        "                             write would clear (a worker run by root keeps\n"
        "                             CAP_FSETID)\n"
        "      --xattr-namespaces=LIST  extended attributes the guest may write besides\n"
        "                             user.*: a comma-separated list of trusted,\n"
        "                             security (file capabilities, LSM labels) and\n"
        "                             system (POSIX ACLs); default none\n"
        "\n"
        "Confinement and performance:\n"
        "      --sandbox=MODE         seccomp (default): once set up, the worker confines\n"
        "                             itself with no_new_privs, Landlock (file access only\n"
        "                             inside the shared folder) and a system-call allow-list;\n"
        "                             a call outside it stops the worker with a log line.\n"
        "                             none: no sandbox (openat2/O_NOFOLLOW confinement only).\n"
        "                             virtiofsd's namespace and chroot (also -o sandbox=)\n"
        "                             mean seccomp: the same confinement, unprivileged\n"
        "      --queues=N             request queues (1-64, default 1; QEMU's\n"
        "                             num-request-queues); one thread serves each queue\n"
        "      --poll-us=N            after each batch, poll the queue for up to N\n"
        "                             microseconds before sleeping (0-1000000, default 50);\n"
        "                             the window adapts to the guest's pauses, and no queue\n"
        "                             spins while the host has no CPU to spare\n"
        "      --max-inode-fds=N      keep a descriptor open for at most N files and\n"
        "                             folders the guest knows (at least 2; default: half\n"
        "                             the open-file limit, less 64); the others are\n"
        "                             reopened by name when the guest uses them again\n"
        "\n"
        "Supervision and diagnostics:\n"
        "      --allow-peer-uid=UID   accept a frontend only from user UID (repeatable),\n"
        "                             the worker's own user or root; others are refused\n"
        "                             with a log line (default: any the socket lets in)\n"
        "      --allow-peer-pid=PID   accept a frontend only from process PID (the VM's\n"
        "                             QEMU), and while it lives; others are refused with\n"
        "                             a log line (the service sets it over --control-fd)\n"
        "      --control-fd=N         serve org.sluice.Worker1 on the D-Bus peer socket N\n"
        "                             (sluice-service); the worker exits when it closes\n"
        "      --resume               keep the connection, guest memory, rings and tables\n"
        "                             in the supervisor's fd store ($NOTIFY_SOCKET) and\n"
        "                             take them up again when started with them\n"
        "                             ($LISTEN_FDS): a crash or restart the guest does\n"
        "                             not notice (see RESUMING in sluice-fs(1))\n"
        "      --replay=yes|no        on resuming, run again the requests that were in\n"
        "                             flight and are safe to run twice (yes, default),\n"
        "                             or answer them all EIO (no)\n"
        "      --log-level=LEVEL      error, warning, info (default) or debug (a line per\n"
        "                             request)\n"
        "  -d, --debug                the same as --log-level=debug (also: -o debug)\n"
        "      --print-capabilities   print the vhost-user capabilities (JSON) for libvirt\n"
        "  -h, --help                 show this help\n"
        "  -V, --version              show the version\n"
        "\n"
        "Accepted for virtiofsd compatibility and ignored: -f/--foreground,\n"
        "--thread-pool-size=N (one thread per queue instead), --rlimit-nofile=N (the\n"
        "open-file limit is raised to its hard limit), --syslog, and in -o lists:\n"
        "flock, no_flock, posix_lock, no_posix_lock, no_xattr, writeback, no_writeback,\n"
        "readdirplus, no_readdirplus, announce_submounts.\n"
        "\n"
        "When the frontend disconnects: with --socket-path, the worker forgets the\n"
        "guest's open files and inodes and waits for the next frontend on the same\n"
        "socket (a VM reboot, or a detach and re-attach); with --fd (libvirt started it\n"
        "for one VM) it exits with status 0.  SIGTERM and SIGINT stop it (status 0);\n"
        "SIGUSR1 prints its counters on stderr.\n"
        "\n"
        "Exit status: 0 on success, 1 on a run-time failure, 2 on a usage error or a\n"
        "shared folder or socket that cannot be used.\n";

/* libvirt's vhost-user capabilities: "separate-options" says that the
 * --shared-dir/--cache/--xattr/--sandbox spellings work. */
static const char capabilities_json[] =
        "{\n"
        "  \"type\": \"fs\",\n"
        "  \"features\": [\n"
        "    \"separate-options\"\n"
        "  ]\n"
        "}\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
        char what[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        fprintf(stderr, PROGRAM ": %s. Try '" PROGRAM " --help'.\n", what);
        return -EINVAL;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *ret)
{
        unsigned long long v;
        char *end;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_fd(const char *opt, const char *s, int *ret)
{
        unsigned long long v;

        if (parse_uint(s, INT_MAX, &v) < 0)
                return usage_error("%s needs a file descriptor number, not '%s'", opt, s);
        *ret = (int)v;
        return 0;
}

static int parse_cache(const char *s, struct fs_options *o)
{
        if (strcmp(s, "auto") == 0)
                o->cache = FS_CACHE_AUTO;
        else if (strcmp(s, "always") == 0)
                o->cache = FS_CACHE_ALWAYS;
        else if (strcmp(s, "never") == 0 || strcmp(s, "none") == 0)
                o->cache = FS_CACHE_NEVER;
        else
                return usage_error("unknown cache mode '%s' (auto, always or never)", s);
        return 0;
}

static const char *const names_names[] = {
        [FS_NAMES_POSIX] = "posix",
        [FS_NAMES_WINDOWS] = "windows",
};

static const char *const case_names[] = {
        [FS_CASE_SENSITIVE] = "sensitive",
        [FS_CASE_INSENSITIVE] = "insensitive",
};

const char *options_names_name(enum fs_names_mode mode)
{
        return (unsigned)mode < ELEMENTSOF(names_names) ? names_names[mode] : "?";
}

int options_names_parse(const char *s, enum fs_names_mode *ret)
{
        for (unsigned m = 0; m < ELEMENTSOF(names_names); m++)
                if (strcmp(s, names_names[m]) == 0) {
                        *ret = (enum fs_names_mode)m;
                        return 0;
                }
        return -EINVAL;
}

const char *options_case_name(enum fs_case_mode mode)
{
        return (unsigned)mode < ELEMENTSOF(case_names) ? case_names[mode] : "?";
}

int options_case_parse(const char *s, enum fs_case_mode *ret)
{
        for (unsigned m = 0; m < ELEMENTSOF(case_names); m++)
                if (strcmp(s, case_names[m]) == 0) {
                        *ret = (enum fs_case_mode)m;
                        return 0;
                }
        return -EINVAL;
}

static int parse_sandbox(const char *s, struct fs_options *o)
{
        if (strcmp(s, "none") == 0) {
                o->sandbox = FS_SANDBOX_NONE;
        } else if (strcmp(s, "seccomp") == 0) {
                o->sandbox = FS_SANDBOX_SECCOMP;
        } else if (strcmp(s, "namespace") == 0 || strcmp(s, "chroot") == 0) {
                /* virtiofsd's modes (what libvirt passes) need root to build a mount
                 * namespace or chroot.  Landlock on the folder gives the same "nothing
                 * outside the share" without privilege, and works for a desktop-user
                 * worker too, so both mean the default sandbox. */
                o->sandbox = FS_SANDBOX_SECCOMP;
        } else {
                return usage_error("unknown sandbox mode '%s' (seccomp or none)", s);
        }
        return 0;
}

static int parse_log_level(const char *s, struct fs_options *o)
{
        /* virtiofsd's spellings too: err, warn (C); trace, off (Rust). */
        if (strcmp(s, "err") == 0 || strcmp(s, "off") == 0)
                s = "error";
        else if (strcmp(s, "warn") == 0)
                s = "warning";
        else if (strcmp(s, "trace") == 0)
                s = "debug";
        if (log_parse_level(s, &o->log_level) < 0)
                return usage_error("unknown log level '%s' (error, warning, info or debug)", s);
        return 0;
}

static int set_string(char **dst, const char *s)
{
        char *copy = strdup(s);

        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

static int parse_translate(const char *opt, const char *s, uint32_t *guest, uint32_t *host)
{
        unsigned long long g, h;
        const char *colon = strchr(s, ':');
        char first[32];

        if (!colon || (size_t)(colon - s) >= sizeof(first))
                return usage_error("%s needs GUEST:HOST ids, not '%s'", opt, s);
        memcpy(first, s, (size_t)(colon - s));
        first[colon - s] = '\0';
        /* (uint32_t)-1 means "no id" to the kernel: not a usable id. */
        if (parse_uint(first, UINT32_MAX - 1, &g) < 0 || parse_uint(colon + 1, UINT32_MAX - 1, &h) < 0)
                return usage_error("%s needs GUEST:HOST ids, not '%s'", opt, s);
        *guest = (uint32_t)g;
        *host = (uint32_t)h;
        return 0;
}

static int parse_xattr_namespaces(const char *list, struct fs_options *o)
{
        static const struct { const char *name; unsigned bit; } names[] = {
                { "user", 0 },   /* always writable: accepted so that a full list reads naturally */
                { "trusted", FS_XATTR_NS_TRUSTED },
                { "security", FS_XATTR_NS_SECURITY },
                { "system", FS_XATTR_NS_SYSTEM },
        };
        unsigned ns = 0;

        for (const char *p = list; *p; ) {
                size_t len = strcspn(p, ",");
                bool known = false;

                for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                        if (len == strlen(names[i].name) && strncmp(p, names[i].name, len) == 0) {
                                ns |= names[i].bit;
                                known = true;
                        }
                if (!known)
                        return usage_error("unknown xattr namespace '%.*s' in --xattr-namespaces "
                                           "(user, trusted, security or system)", (int)len, p);
                p += len;
                if (*p == ',')
                        p++;
        }
        o->xattr_namespaces = ns;
        return 0;
}

static bool ignored_o_option(const char *key)
{
        static const char *const ignored[] = {
                "flock", "no_flock", "posix_lock", "no_posix_lock", "no_xattr",
                "writeback", "no_writeback", "readdirplus", "no_readdirplus",
                "announce_submounts",
        };

        for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
                if (strcmp(key, ignored[i]) == 0)
                        return true;
        return false;
}

static int parse_o_item(char *item, struct fs_options *o)
{
        char *value = strchr(item, '=');

        if (value)
                *value++ = '\0';
        if (strcmp(item, "source") == 0 && value)
                return set_string(&o->shared_dir, value);
        if (strcmp(item, "cache") == 0 && value)
                return parse_cache(value, o);
        if (strcmp(item, "sandbox") == 0 && value)
                return parse_sandbox(value, o);
        if (strcmp(item, "log_level") == 0 && value)
                return parse_log_level(value, o);
        if (value)
                return usage_error("unknown -o option '%s=%s'", item, value);
        if (strcmp(item, "xattr") == 0)
                o->xattr = true;
        else if (strcmp(item, "readonly") == 0)
                o->readonly = true;
        else if (strcmp(item, "debug") == 0)
                o->log_level = LOG_LEVEL_DEBUG;
        else if (!ignored_o_option(item))
                return usage_error("unknown -o option '%s'", item);
        return 0;
}

/* A comma-separated list; ",," is a literal comma (libvirt escapes paths so). */
static int parse_o_list(const char *list, struct fs_options *o)
{
        size_t len = strlen(list);
        char *item = malloc(len + 1);
        size_t n = 0;
        int r = 0;

        if (!item)
                return -ENOMEM;
        for (size_t i = 0; i <= len && r >= 0; i++) {
                if (list[i] == ',' && list[i + 1] == ',') {
                        item[n++] = ',';
                        i++;
                        continue;
                }
                if (list[i] != ',' && list[i] != '\0') {
                        item[n++] = list[i];
                        continue;
                }
                item[n] = '\0';
                if (n > 0)
                        r = parse_o_item(item, o);
                n = 0;
        }
        free(item);
        return r;
}

static void default_tag(struct fs_options *o)
{
        /* --shared-dir-fd alone: no name yet (main.c finds it), the fallback tag */
        const char *base, *dir = o->shared_dir ? o->shared_dir : "";
        size_t len;

        /* The folder's last component, without trailing slashes. */
        len = strlen(dir);
        while (len > 1 && dir[len - 1] == '/')
                len--;
        base = dir + len;
        while (base > dir && base[-1] != '/')
                base--;
        len = (size_t)(dir + len - base);
        if (len == 0 || (len == 1 && *base == '/')) {
                base = "sluice";
                len = strlen(base);
        }
        if (len > FS_TAG_MAX)
                len = FS_TAG_MAX;
        memcpy(o->tag, base, len);
        o->tag[len] = '\0';
}

static void options_init(struct fs_options *o)
{
        memset(o, 0, sizeof(*o));
        o->fd = -1;
        o->control_fd = -1;
        o->shared_dir_fd = -1;
        o->cache = FS_CACHE_AUTO;
        o->sandbox = FS_SANDBOX_SECCOMP;
        o->queues = 1;
        o->poll_us = 50;
        o->replay = true;
        o->guest_uid = o->host_uid = FS_ID_UNMAPPED;
        o->guest_gid = o->host_gid = FS_ID_UNMAPPED;
        o->log_level = LOG_LEVEL_INFO;
}

static int parse_one(int c, const char *arg, struct fs_options *o,
                     bool *tag_set)
{
        unsigned long long v;

        switch (c) {
        case OPT_SOCKET_PATH:
                if (!*arg)
                        return usage_error("--socket-path needs a path");
                return set_string(&o->socket_path, arg);
        case OPT_FD:
                return parse_fd("--fd", arg, &o->fd);
        case OPT_SHARED_DIR:
                if (!*arg)
                        return usage_error("--shared-dir needs a folder");
                return set_string(&o->shared_dir, arg);
        case OPT_TAG:
                if (!*arg || strlen(arg) > FS_TAG_MAX)
                        return usage_error("--tag must be 1 to %d bytes long", FS_TAG_MAX);
                strcpy(o->tag, arg);
                *tag_set = true;
                return 0;
        case OPT_READONLY:
                o->readonly = true;
                return 0;
        case OPT_CACHE:
                return parse_cache(arg, o);
        case OPT_NAMES:
                if (options_names_parse(arg, &o->names) < 0)
                        return usage_error("unknown names mode '%s' (posix or windows)", arg);
                return 0;
        case OPT_CASE:
                if (options_case_parse(arg, &o->case_mode) < 0)
                        return usage_error("unknown case mode '%s' (sensitive or insensitive)", arg);
                return 0;
        case OPT_XATTR:
                o->xattr = true;
                return 0;
        case OPT_NO_XATTR:
                o->xattr = false;
                return 0;
        case OPT_SANDBOX:
                return parse_sandbox(arg, o);
        case OPT_PRINT_CAPABILITIES:
                o->print_capabilities = true;
                return 0;
        case OPT_QUEUES:
                if (parse_uint(arg, FS_MAX_QUEUES, &v) < 0 || v == 0)
                        return usage_error("--queues must be a number from 1 to %d, not '%s'",
                                           FS_MAX_QUEUES, arg);
                o->queues = (unsigned)v;
                return 0;
        case OPT_POLL_US:
                if (parse_uint(arg, 1000000, &v) < 0)
                        return usage_error("--poll-us must be a number from 0 to 1000000, not '%s'",
                                           arg);
                o->poll_us = (unsigned)v;
                return 0;
        case OPT_MAX_INODE_FDS:
                if (parse_uint(arg, 1u << 30, &v) < 0 || v < 2)
                        return usage_error("--max-inode-fds must be a number from 2 to %u, not '%s'",
                                           1u << 30, arg);
                o->max_inode_fds = (unsigned)v;
                return 0;
        case OPT_CONTROL_FD:
                return parse_fd("--control-fd", arg, &o->control_fd);
        case OPT_TRANSLATE_UID:
                return parse_translate("--translate-uid", arg, &o->guest_uid, &o->host_uid);
        case OPT_TRANSLATE_GID:
                return parse_translate("--translate-gid", arg, &o->guest_gid, &o->host_gid);
        case OPT_LOG_LEVEL:
                return parse_log_level(arg, o);
        case 'd':
                o->log_level = LOG_LEVEL_DEBUG;
                return 0;
        case 'o':
                return parse_o_list(arg, o);
        case OPT_THREAD_POOL_SIZE:
        case OPT_RLIMIT_NOFILE:
                if (parse_uint(arg, UINT32_MAX, &v) < 0)
                        return usage_error("%s needs a number, not '%s'",
                                           c == OPT_THREAD_POOL_SIZE ? "--thread-pool-size"
                                                                     : "--rlimit-nofile", arg);
                return 0;
        case OPT_ALLOW_DEVICES:
                o->allow_devices = true;
                return 0;
        case OPT_ALLOW_SETUID:
                o->allow_setuid = true;
                return 0;
        case OPT_XATTR_NAMESPACES:
                return parse_xattr_namespaces(arg, o);
        case OPT_SHARED_DIR_FD:
                if (parse_fd("--shared-dir-fd", arg, &o->shared_dir_fd) < 0)
                        return -EINVAL;
                if (o->shared_dir_fd <= 2)
                        return usage_error("--shared-dir-fd must be 3 or more (0, 1 and 2 are the "
                                           "standard streams), not %d", o->shared_dir_fd);
                return 0;
        case OPT_ALLOW_PEER_UID:
                if (parse_uint(arg, UINT32_MAX - 1, &v) < 0)
                        return usage_error("--allow-peer-uid needs a user id, not '%s'", arg);
                if (o->n_allow_peer_uids == FS_MAX_PEER_UIDS)
                        return usage_error("--allow-peer-uid may be given at most %d times",
                                           FS_MAX_PEER_UIDS);
                o->allow_peer_uids[o->n_allow_peer_uids++] = (uint32_t)v;
                return 0;
        case OPT_ALLOW_PEER_PID:
                if (parse_uint(arg, INT32_MAX, &v) < 0 || v == 0)
                        return usage_error("--allow-peer-pid needs a process id, not '%s'", arg);
                o->allow_peer_pid = (int32_t)v;
                return 0;
        case OPT_RESUME:
                o->resume = true;
                return 0;
        case OPT_REPLAY:
                if (strcmp(arg, "yes") == 0)
                        o->replay = true;
                else if (strcmp(arg, "no") == 0)
                        o->replay = false;
                else
                        return usage_error("--replay must be yes or no, not '%s'", arg);
                return 0;
        case 'f':
        case OPT_SYSLOG:
                return 0;
        default:
                return usage_error("internal error: option %d", c);
        }
}

int options_parse(int argc, char **argv, struct fs_options *o)
{
        bool tag_set = false;
        int c, r;

        options_init(o);
        opterr = 0;
        optind = 0;   /* 0: full re-initialisation of getopt (tests parse many times) */
        while ((c = getopt_long(argc, argv, ":o:dfhV", long_options, NULL)) != -1) {
                const char *opt = argv[optind - 1];

                switch (c) {
                case 'h':
                        fputs(help_text, stdout);
                        return 1;
                case 'V':
                        printf(PROGRAM " " PACKAGE_VERSION "\n");
                        return 1;
                case '?':
                        if (optopt)
                                return usage_error("unknown option '-%c'", optopt);
                        return usage_error("unknown option '%s'", opt);
                case ':':
                        return usage_error("option '%s' needs a value", opt);
                default:
                        r = parse_one(c, optarg, o, &tag_set);
                        if (r < 0)
                                return r == -ENOMEM ? usage_error("out of memory") : r;
                }
        }
        if (optind < argc)
                return usage_error("unexpected argument '%s'", argv[optind]);
        if (o->print_capabilities) {
                fputs(capabilities_json, stdout);
                return 1;
        }
        if (!o->shared_dir && o->shared_dir_fd < 0)
                return usage_error("no folder to share: give --shared-dir=DIR");
        if (o->shared_dir && o->shared_dir_fd >= 0)
                return usage_error("--shared-dir (or -o source=) and --shared-dir-fd cannot be used together");
        if (o->shared_dir_fd >= 0 && (o->shared_dir_fd == o->fd || o->shared_dir_fd == o->control_fd))
                return usage_error("--shared-dir-fd must be a descriptor of its own, not that of --fd or --control-fd");
        if (!o->socket_path && o->fd < 0)
                return usage_error("no socket: give --socket-path=PATH or --fd=N");
        if (o->socket_path && o->fd >= 0)
                return usage_error("--socket-path and --fd cannot be used together");
        if (o->control_fd >= 0 && o->control_fd == o->fd)
                return usage_error("--control-fd and --fd must be different descriptors");
        o->tag_given = tag_set;
        if (!tag_set)
                default_tag(o);
        o->exit_on_disconnect = o->fd >= 0;
        return 0;
}

void options_free(struct fs_options *o)
{
        free(o->socket_path);
        free(o->shared_dir);
        o->socket_path = NULL;
        o->shared_dir = NULL;
}
