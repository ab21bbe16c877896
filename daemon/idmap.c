/* SPDX-License-Identifier: GPL-2.0-or-later */
/* idmap.c — guest <-> host uid/gid presentation (see idmap.h). */
#include "idmap.h"

#include "options.h"

void idmap_init(struct idmap *m, const struct fs_options *opts)
{
        m->guest_uid = opts->guest_uid;
        m->host_uid = opts->host_uid;
        m->guest_gid = opts->guest_gid;
        m->host_gid = opts->host_gid;
        /* A half-given pair maps nothing rather than something surprising. */
        if (m->guest_uid == FS_ID_UNMAPPED || m->host_uid == FS_ID_UNMAPPED)
                m->guest_uid = m->host_uid = FS_ID_UNMAPPED;
        if (m->guest_gid == FS_ID_UNMAPPED || m->host_gid == FS_ID_UNMAPPED)
                m->guest_gid = m->host_gid = FS_ID_UNMAPPED;
}

static uint32_t map_one(uint32_t from, uint32_t to, uint32_t id)
{
        return (from != FS_ID_UNMAPPED && id == from) ? to : id;
}

uint32_t idmap_uid_to_guest(const struct idmap *m, uint32_t host_uid)
{
        return map_one(m->host_uid, m->guest_uid, host_uid);
}

uint32_t idmap_gid_to_guest(const struct idmap *m, uint32_t host_gid)
{
        return map_one(m->host_gid, m->guest_gid, host_gid);
}

uint32_t idmap_uid_to_host(const struct idmap *m, uint32_t guest_uid)
{
        return map_one(m->guest_uid, m->host_uid, guest_uid);
}

uint32_t idmap_gid_to_host(const struct idmap *m, uint32_t guest_gid)
{
        return map_one(m->guest_gid, m->host_gid, guest_gid);
}
