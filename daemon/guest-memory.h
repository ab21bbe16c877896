/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-memory.h — the guest's RAM as the frontend shares it (memfd regions).
 *
 * Regions arrive with SET_MEM_TABLE (replace all) or ADD_MEM_REG/REM_MEM_REG
 * (one at a time, CONFIGURE_MEM_SLOTS).  Each is mmap()ed MAP_SHARED from the
 * fd the frontend sends.  Addresses from the guest (descriptors: guest-physical)
 * and from the frontend (ring addresses: the frontend's own virtual addresses)
 * are turned into host pointers here, with every bound and overflow checked:
 * a range that is not wholly inside guest memory is refused, never clamped.
 *
 * Not thread-safe by itself: the transport changes the table only while no
 * queue thread runs (vhost-user.c stops and restarts them around a change).
 *
 * A frontend could shrink a region's file after handing it over; touching the
 * cut-off pages would then raise SIGBUS.  Two guards (gm_add_region()):
 *  - a memfd is sealed against shrinking (F_SEAL_SHRINK, added when the
 *    frontend left sealing open; QEMU's memory-backend-memfd seals it itself
 *    by default).  Only shrinking is sealed: the frontend may still grow the
 *    file, punch holes (virtio-mem) or write, so nothing it does legitimately
 *    with its guest RAM changes.  The size is checked after sealing.
 *  - a region that cannot be sealed (a tmpfs or hugetlbfs file, a memfd
 *    created without MFD_ALLOW_SEALING) is accepted, as QEMU's
 *    memory-backend-file needs.  Every mapping (sealed ones too: a page fault
 *    can also fail on a full tmpfs or without free huge pages) is under a
 *    SIGBUS handler: a fault inside a mapping replaces the whole region with
 *    zeroed anonymous memory (the access completes, reading zeros, writing
 *    nowhere the frontend sees) and sets gm_lost(); the virtqueue then marks
 *    itself broken and the transport drops the frontend.  A fault anywhere
 *    else keeps its default action.
 * Syscalls (for the sandbox's allow-list): fstat, fcntl (F_GET_SEALS,
 * F_ADD_SEALS), mmap/munmap, rt_sigaction (once), and mmap in the handler. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "vhost-user-proto.h"

/* Reported in GET_MAX_MEM_SLOTS.  QEMU's default machine uses one or two;
 * memory hot-plug adds one per DIMM. */
#define GM_MAX_REGIONS 32

struct gm_region {
        uint64_t gpa;        /* guest-physical start */
        uint64_t size;
        uint64_t uva;        /* frontend virtual start */
        uint64_t mmap_offset;
        void *map_base;      /* what mmap() returned (page aligned) */
        size_t map_size;
        uint8_t *host;       /* host address of gpa */
        unsigned slot;       /* the transport's stable number for it (its stored fd's name) */
};

struct gm {
        unsigned n_regions;
        struct gm_region regions[GM_MAX_REGIONS];
        atomic_bool lost;    /* a region's file shrank under us (see above) */
};

void gm_init(struct gm *m);
/* Unmaps every region. */
void gm_clear(struct gm *m);
/* Maps one region from fd (the caller keeps and closes fd).  -EINVAL for a
 * zero, wrapping or overlapping range or an fd that is not a regular file,
 * -ENXIO when the file is shorter than mmap_offset + memory_size, -ENOSPC
 * when the table is full, or fstat()'s/mmap()'s -errno. */
int gm_add_region(struct gm *m, const struct vu_memory_region *r, int fd);
/* Unmaps the region with this guest address and size; -ENOENT if none. */
int gm_remove_region(struct gm *m, const struct vu_memory_region *r);
/* true once an unsealed region's file shrank and an access to it faulted;
 * stays set until gm_clear().  Async-signal-safe to set, cheap to read. */
bool gm_lost(const struct gm *m);

/* Host pointer for [gpa, gpa+len) when it lies inside one region, else NULL. */
void *gm_gpa_to_host(const struct gm *m, uint64_t gpa, uint64_t len);
/* Same for a frontend virtual address (vring addresses). */
void *gm_uva_to_host(const struct gm *m, uint64_t uva, uint64_t len);

/* Maps [gpa, gpa+len) to iovecs appended at iov[*n] (at most max in total); a
 * range crossing from one region into the next adjacent one takes several.
 * Returns 0, -EFAULT when any byte is outside guest memory or the range
 * wraps, -ENOBUFS when more than max iovecs would be needed. */
int gm_map(const struct gm *m, uint64_t gpa, uint64_t len, struct iovec *iov, unsigned max,
           unsigned *n);
/* gm_map() of a range one region holds, without searching the table: *hint
 * is the region the caller's last translation hit (&m->regions[0] to start;
 * one hint per thread, the table is shared).  A hint is only a guess: the
 * range is checked against the region it names, whose fields are always
 * whole (a slot that was emptied has size 0), so a stale hint costs a search,
 * never a wrong answer.  Anything else — an empty range, one crossing into
 * the next region, a full iov — goes through gm_map(), which moves the hint. */
int gm_map_search(const struct gm *m, const struct gm_region **hint, uint64_t gpa, uint64_t len,
                  struct iovec *iov, unsigned max, unsigned *n);
static inline int gm_map_hinted(const struct gm *m, const struct gm_region **hint, uint64_t gpa,
                                uint64_t len, struct iovec *iov, unsigned max, unsigned *n)
{
        const struct gm_region *g = *hint;
        uint64_t off = gpa - g->gpa;

        /* len - 1 sends an empty range (which makes no iovec) to the slow path. */
        if (__builtin_expect(off < g->size && len - 1 < g->size - off && *n < max, 1)) {
                iov[*n].iov_base = g->host + off;
                iov[*n].iov_len = (size_t)len;
                (*n)++;
                return 0;
        }
        return gm_map_search(m, hint, gpa, len, iov, max, n);
}
/* Host pointer for [gpa, gpa+len) inside one region (len > 0), hinted as
 * gm_map_hinted(); NULL when no one region holds it all. */
void *gm_gpa_to_host_search(const struct gm *m, const struct gm_region **hint, uint64_t gpa,
                            uint64_t len);
static inline void *gm_gpa_to_host_hinted(const struct gm *m, const struct gm_region **hint,
                                          uint64_t gpa, uint64_t len)
{
        const struct gm_region *g = *hint;
        uint64_t off = gpa - g->gpa;

        if (__builtin_expect(off < g->size && len - 1 < g->size - off, 1))
                return g->host + off;
        return gm_gpa_to_host_search(m, hint, gpa, len);
}
/* Copies guest memory out (for indirect tables): 0 or -EFAULT. */
int gm_copy_from(const struct gm *m, uint64_t gpa, void *dst, size_t len);
