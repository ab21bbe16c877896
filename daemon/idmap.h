/* SPDX-License-Identifier: GPL-2.0-or-later */
/* idmap.h — how host owners are presented to the guest (--translate-uid/gid).
 *
 * sluice-fs runs as the desktop user and every file it creates belongs to that
 * user.  A guest whose ordinary user has another uid would then see its own
 * files as someone else's; one mapping pair per kind fixes that: files owned
 * by HOST appear owned by GUEST in every attribute reply, and a chown to GUEST
 * becomes a chown to HOST.  Ids without a mapping pass through unchanged. */
#pragma once

#include <stdint.h>

struct fs_options;

struct idmap {
        uint32_t guest_uid, host_uid;  /* FS_ID_UNMAPPED when no uid mapping */
        uint32_t guest_gid, host_gid;  /* FS_ID_UNMAPPED when no gid mapping */
};

void idmap_init(struct idmap *m, const struct fs_options *opts);
uint32_t idmap_uid_to_guest(const struct idmap *m, uint32_t host_uid);
uint32_t idmap_gid_to_guest(const struct idmap *m, uint32_t host_gid);
uint32_t idmap_uid_to_host(const struct idmap *m, uint32_t guest_uid);
uint32_t idmap_gid_to_host(const struct idmap *m, uint32_t guest_gid);
