/* SPDX-License-Identifier: GPL-2.0-or-later */
/* capabilities.c — dropping to the capabilities a passthrough needs
 * (capabilities.h).  Raw capget/capset and prctl: no libcap in the tree. */
#include "capabilities.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>

#include "log.h"
#include "options.h"
#include "util.h"

#define CAP_BIT(c) (UINT64_C(1) << (c))

static const struct {
        int cap;
        const char *name;
} cap_names[] = {
        { CAP_CHOWN, "CHOWN" },
        { CAP_DAC_OVERRIDE, "DAC_OVERRIDE" },
        { CAP_FOWNER, "FOWNER" },
        { CAP_FSETID, "FSETID" },
        { CAP_SETGID, "SETGID" },
        { CAP_SETUID, "SETUID" },
        { CAP_SYS_ADMIN, "SYS_ADMIN" },
        { CAP_MKNOD, "MKNOD" },
        { CAP_SETFCAP, "SETFCAP" },
};

uint64_t caps_wanted(const struct fs_options *opts, bool root_mode)
{
        uint64_t want;

        if (!root_mode)
                return 0;
        want = CAP_BIT(CAP_CHOWN) | CAP_BIT(CAP_DAC_OVERRIDE) | CAP_BIT(CAP_FOWNER) |
               CAP_BIT(CAP_SETGID) | CAP_BIT(CAP_SETUID);
        if (opts->allow_setuid)
                want |= CAP_BIT(CAP_FSETID);
        if (opts->allow_devices)
                want |= CAP_BIT(CAP_MKNOD);
        if (opts->xattr_namespaces & FS_XATTR_NS_SECURITY)
                want |= CAP_BIT(CAP_SETFCAP);
        if (opts->xattr_namespaces & (FS_XATTR_NS_TRUSTED | FS_XATTR_NS_SECURITY))
                want |= CAP_BIT(CAP_SYS_ADMIN);
        return want;
}

static int caps_get(uint64_t *ret_effective, uint64_t *ret_permitted, uint64_t *ret_inheritable)
{
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

        if (syscall(SYS_capget, &header, data) < 0)
                return -errno;
        *ret_effective = data[0].effective | (uint64_t)data[1].effective << 32;
        *ret_permitted = data[0].permitted | (uint64_t)data[1].permitted << 32;
        *ret_inheritable = data[0].inheritable | (uint64_t)data[1].inheritable << 32;
        return 0;
}

/* The calling thread's sets: effective = permitted = `caps`, inheritable empty. */
static int caps_set(uint64_t caps)
{
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {
                { .effective = (uint32_t)caps, .permitted = (uint32_t)caps },
                { .effective = (uint32_t)(caps >> 32), .permitted = (uint32_t)(caps >> 32) },
        };

        return syscall(SYS_capset, &header, data) < 0 ? -errno : 0;
}

/* Drops every capability the kernel knows but `keep` from the bounding set. */
static int bounding_drop(uint64_t keep)
{
        for (int cap = 0; cap < 64; cap++) {
                int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

                if (r < 0)
                        return errno == EINVAL ? 0 : -errno;   /* past the last one */
                if (r == 0 || (keep & CAP_BIT(cap)))
                        continue;
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                        return -errno;
        }
        return 0;
}

static void format_caps(uint64_t caps, char *buf, size_t size)
{
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(cap_names) && used < size; i++)
                if (caps & CAP_BIT(cap_names[i].cap))
                        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? " " : "",
                                                 cap_names[i].name);
        if (!buf[0])
                snprintf(buf, size, "none");
}

int caps_drop(const struct fs_options *opts, bool root_mode)
{
        uint64_t want = caps_wanted(opts, root_mode), effective = 0, permitted = 0, inheritable = 0;
        char names[160];
        int r;

        r = caps_get(&effective, &permitted, &inheritable);
        if (r < 0) {
                log_error("cannot read the worker's capabilities: %s", strerror(-r));
                return r;
        }
        /* An ordinary user's worker: nothing held (the ambient set is a subset
         * of permitted and inheritable), nothing to do. */
        if (!root_mode && (permitted | inheritable) == 0)
                return 0;
        want &= permitted;   /* what a root worker started with fewer can keep */

        /* Securebits and the bounding set need CAP_SETPCAP: first, while we have it. */
        if (root_mode &&
            prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0) < 0)
                log_debug("capabilities: cannot set the securebits NOROOT: %s", strerror(errno));
        r = bounding_drop(want);
        if (r < 0)
                log_warning("capabilities: cannot reduce the bounding set: %s (harmless: the "
                            "worker never executes a program)", strerror(-r));
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                log_warning("capabilities: cannot clear the ambient set: %s", strerror(errno));
        r = caps_set(want);
        if (r < 0) {
                log_error("cannot drop the worker's capabilities: %s", strerror(-r));
                return r;
        }
        format_caps(want, names, sizeof(names));
        if (root_mode)
                log_info("running as root with only the capabilities a passthrough needs: %s", names);
        else
                log_info("dropped the capabilities this worker was started with");
        return 0;
}
