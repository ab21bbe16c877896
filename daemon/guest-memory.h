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
 * queue thread runs (vhost-user.c stops and restarts them around a change). */
#pragma once

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
};

struct gm {
        unsigned n_regions;
        struct gm_region regions[GM_MAX_REGIONS];
};

void gm_init(struct gm *m);
/* Unmaps every region. */
void gm_clear(struct gm *m);
/* Maps one region from fd (the caller keeps and closes fd).  -EINVAL for a
 * zero, wrapping or overlapping range, -ENOSPC when the table is full, or
 * mmap()'s -errno. */
int gm_add_region(struct gm *m, const struct vu_memory_region *r, int fd);
/* Unmaps the region with this guest address and size; -ENOENT if none. */
int gm_remove_region(struct gm *m, const struct vu_memory_region *r);

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
/* Copies guest memory out (for indirect tables): 0 or -EFAULT. */
int gm_copy_from(const struct gm *m, uint64_t gpa, void *dst, size_t len);
