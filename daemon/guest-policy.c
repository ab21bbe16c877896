/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-policy.c — refusals and stripped bits (see guest-policy.h). */
#include "guest-policy.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "log.h"
#include "options.h"
#include "pseudo-fs.h"

void policy_init(struct policy *p, const struct fs_options *opts)
{
        p->allow_devices = opts->allow_devices;
        p->allow_setuid = opts->allow_setuid;
        p->xattr_namespaces = opts->xattr_namespaces;
}

int policy_check_mknod(const struct policy *p, mode_t mode, const char *name, uint32_t uid)
{
        static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
        mode_t type = mode & S_IFMT;

        if ((type != S_IFCHR && type != S_IFBLK) || p->allow_devices)
                return 0;
        log_ratelimited(&rl, LOG_LEVEL_WARNING,
                        "refused: guest uid %u tried to create %s device '%s' (EPERM; --allow-devices permits it)",
                        uid, type == S_IFCHR ? "a character" : "a block", name);
        return -EPERM;
}

mode_t policy_mode(const struct policy *p, mode_t type, mode_t mode, const char *what, uint32_t uid)
{
        static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
        mode_t drop = S_ISUID | S_ISGID;

        mode &= 07777;
        if (p->allow_setuid)
                return mode;
        if (type == S_IFDIR)
                drop = S_ISUID;  /* set-group-ID directories only pass their group on */
        if (mode & drop)
                log_ratelimited(&rl, LOG_LEVEL_WARNING,
                                "stripped: guest uid %u asked for mode %04o on %s; it gets %04o "
                                "(--allow-setuid keeps set-user/group-ID bits)",
                                uid, (unsigned)mode, what, (unsigned)(mode & ~drop));
        return mode & ~drop;
}

int policy_check_mount(int fd, const char *name)
{
        static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
        struct statfs sfs;
        const char *fs;

        if (fstatfs(fd, &sfs) < 0)
                return -errno;
        fs = pseudo_fs_name((unsigned long)sfs.f_type);
        if (fs == NULL)
                return 0;
        log_ratelimited(&rl, LOG_LEVEL_WARNING,
                        "refused: the guest looked up '%.64s', a mount of %s inside the shared "
                        "folder (EACCES: pseudo file systems are not shared)", name, fs);
        return -EACCES;
}

struct xattr_namespace {
        const char *prefix;
        unsigned bit;
        int refusal;
};

static const struct xattr_namespace namespaces[] = {
        { "trusted.", FS_XATTR_NS_TRUSTED, -EPERM },
        { "security.", FS_XATTR_NS_SECURITY, -EPERM },
        { "system.", FS_XATTR_NS_SYSTEM, -EOPNOTSUPP },
};

int policy_check_xattr_write(const struct policy *p, const char *name, uint32_t uid)
{
        static struct log_ratelimit rl = LOG_RATELIMIT_INIT;

        /* user.* and names in no namespace (which the host refuses itself) pass. */
        for (size_t i = 0; i < sizeof(namespaces) / sizeof(namespaces[0]); i++) {
                const struct xattr_namespace *ns = &namespaces[i];

                if (strncmp(name, ns->prefix, strlen(ns->prefix)) != 0)
                        continue;
                if (p->xattr_namespaces & ns->bit)
                        return 0;
                log_ratelimited(&rl, LOG_LEVEL_WARNING,
                                "refused: guest uid %u tried to write xattr '%.64s' (%s; "
                                "--xattr-namespaces=%.*s permits it)",
                                uid, name, ns->refusal == -EPERM ? "EPERM" : "EOPNOTSUPP",
                                (int)strlen(ns->prefix) - 1, ns->prefix);
                return ns->refusal;
        }
        return 0;
}

int policy_check_lock(bool readonly, int lock_type, bool is_flock, uint32_t pid)
{
        static struct log_ratelimit rl = LOG_RATELIMIT_INIT;

        if (!readonly || lock_type != F_WRLCK)
                return 0;
        log_ratelimited(&rl, LOG_LEVEL_WARNING,
                        "refused: guest pid %u asked for %s on a read-only share (EBADF: it could block host writers)",
                        pid, is_flock ? "an exclusive flock()" : "a POSIX write lock");
        return -EBADF;
}
