/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pseudo-fs.h — the file systems that hold the kernel's live state, not
 * data (proc, sysfs, cgroup, debugfs, …): one list for both sides that
 * refuse them.  The service refuses such a folder as a share (AddShare,
 * service/share-path.c); the worker refuses a guest's LOOKUP into one
 * mounted below the shared folder (policy_check_mount(), guest-policy.h).
 * Header only, no dependencies beyond <linux/magic.h>: the service links
 * nothing of the daemon. */
#pragma once

#include <stddef.h>
#include <linux/magic.h>

/* Not in Debian 12's linux/magic.h (values from the kernel's sources). */
#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif
#ifndef FUSECTL_SUPER_MAGIC
#define FUSECTL_SUPER_MAGIC 0x65735543
#endif
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif

/* The name of the pseudo file system with statfs() f_type `magic`, or NULL
 * when it is none of them. */
static inline const char *pseudo_fs_name(unsigned long magic)
{
        static const struct {
                unsigned long magic;
                const char *name;
        } table[] = {
                { PROC_SUPER_MAGIC, "proc" },
                { SYSFS_MAGIC, "sysfs" },
                { CGROUP_SUPER_MAGIC, "cgroup" },
                { CGROUP2_SUPER_MAGIC, "cgroup2" },
                { DEBUGFS_MAGIC, "debugfs" },
                { SECURITYFS_MAGIC, "securityfs" },
                { TRACEFS_MAGIC, "tracefs" },
                { BPF_FS_MAGIC, "bpf" },
                { PSTOREFS_MAGIC, "pstore" },
                { EFIVARFS_MAGIC, "efivarfs" },
                { SELINUX_MAGIC, "selinuxfs" },
                { SMACK_MAGIC, "smackfs" },
                { DEVPTS_SUPER_MAGIC, "devpts" },
                { NSFS_MAGIC, "nsfs" },
                { BINFMTFS_MAGIC, "binfmt_misc" },
                { CONFIGFS_MAGIC, "configfs" },
                { FUSECTL_SUPER_MAGIC, "fusectl" },
                { MQUEUE_MAGIC, "mqueue" },
                /* its files must be mapped in huge pages: read and write fail */
                { HUGETLBFS_MAGIC, "hugetlbfs" },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (table[i].magic == magic)
                        return table[i].name;
        return NULL;
}
