/* guest-memory.c — see guest-memory.h. */
#include "guest-memory.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"

void gm_init(struct gm *m)
{
        memset(m, 0, sizeof(*m));
}

static void region_unmap(struct gm_region *r)
{
        if (r->map_base)
                (void)munmap(r->map_base, r->map_size);
        memset(r, 0, sizeof(*r));
}

void gm_clear(struct gm *m)
{
        for (unsigned i = 0; i < m->n_regions; i++)
                region_unmap(&m->regions[i]);
        m->n_regions = 0;
}

/* [a, a+alen) and [b, b+blen) overlap; lengths are non-zero and do not wrap. */
static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
        return a < b + blen && b < a + alen;
}

int gm_add_region(struct gm *m, const struct vu_memory_region *r, int fd)
{
        long page = sysconf(_SC_PAGESIZE);
        uint64_t map_off, delta, end;
        struct gm_region *slot;
        void *base;

        if (r->memory_size == 0 ||
            __builtin_add_overflow(r->guest_phys_addr, r->memory_size, &end) ||
            __builtin_add_overflow(r->user_addr, r->memory_size, &end) ||
            __builtin_add_overflow(r->mmap_offset, r->memory_size, &end))
                return -EINVAL;
        if (fd < 0)
                return -EBADF;
        for (unsigned i = 0; i < m->n_regions; i++)
                if (ranges_overlap(m->regions[i].gpa, m->regions[i].size, r->guest_phys_addr,
                                   r->memory_size))
                        return -EINVAL;
        if (m->n_regions >= GM_MAX_REGIONS)
                return -ENOSPC;

        /* mmap() wants a page-aligned offset: map from the page below. */
        map_off = r->mmap_offset & ~(uint64_t)(page - 1);
        delta = r->mmap_offset - map_off;
        if (r->memory_size > SIZE_MAX - delta)
                return -EINVAL;
        base = mmap(NULL, (size_t)(r->memory_size + delta), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_NORESERVE, fd, (off_t)map_off);
        if (base == MAP_FAILED)
                return -errno;

        slot = &m->regions[m->n_regions++];
        slot->gpa = r->guest_phys_addr;
        slot->size = r->memory_size;
        slot->uva = r->user_addr;
        slot->mmap_offset = r->mmap_offset;
        slot->map_base = base;
        slot->map_size = (size_t)(r->memory_size + delta);
        slot->host = (uint8_t *)base + delta;
        log_debug("memory region gpa 0x%llx size 0x%llx uva 0x%llx offset 0x%llx",
                  (unsigned long long)slot->gpa, (unsigned long long)slot->size,
                  (unsigned long long)slot->uva, (unsigned long long)slot->mmap_offset);
        return 0;
}

int gm_remove_region(struct gm *m, const struct vu_memory_region *r)
{
        for (unsigned i = 0; i < m->n_regions; i++) {
                struct gm_region *g = &m->regions[i];

                if (g->gpa != r->guest_phys_addr || g->size != r->memory_size)
                        continue;
                region_unmap(g);
                /* Keep the table dense: move the last region into the hole. */
                m->regions[i] = m->regions[--m->n_regions];
                memset(&m->regions[m->n_regions], 0, sizeof(m->regions[0]));
                return 0;
        }
        return -ENOENT;
}

static const struct gm_region *find_gpa(const struct gm *m, uint64_t gpa)
{
        for (unsigned i = 0; i < m->n_regions; i++) {
                const struct gm_region *g = &m->regions[i];

                if (gpa >= g->gpa && gpa - g->gpa < g->size)
                        return g;
        }
        return NULL;
}

void *gm_gpa_to_host(const struct gm *m, uint64_t gpa, uint64_t len)
{
        const struct gm_region *g = find_gpa(m, gpa);
        uint64_t off;

        if (!g)
                return NULL;
        off = gpa - g->gpa;
        if (len > g->size - off)
                return NULL;
        return g->host + off;
}

void *gm_uva_to_host(const struct gm *m, uint64_t uva, uint64_t len)
{
        for (unsigned i = 0; i < m->n_regions; i++) {
                const struct gm_region *g = &m->regions[i];
                uint64_t off;

                if (uva < g->uva || uva - g->uva >= g->size)
                        continue;
                off = uva - g->uva;
                if (len > g->size - off)
                        return NULL;
                return g->host + off;
        }
        return NULL;
}

int gm_map(const struct gm *m, uint64_t gpa, uint64_t len, struct iovec *iov, unsigned max,
           unsigned *n)
{
        uint64_t end;

        if (__builtin_add_overflow(gpa, len, &end))
                return -EFAULT;
        while (len > 0) {
                const struct gm_region *g = find_gpa(m, gpa);
                uint64_t off, chunk;

                if (!g)
                        return -EFAULT;
                if (*n >= max)
                        return -ENOBUFS;
                off = gpa - g->gpa;
                chunk = g->size - off;
                if (chunk > len)
                        chunk = len;
                iov[*n].iov_base = g->host + off;
                iov[*n].iov_len = (size_t)chunk;
                (*n)++;
                gpa += chunk;
                len -= chunk;
        }
        return 0;
}

int gm_copy_from(const struct gm *m, uint64_t gpa, void *dst, size_t len)
{
        uint8_t *out = dst;
        uint64_t end;

        if (__builtin_add_overflow(gpa, (uint64_t)len, &end))
                return -EFAULT;
        while (len > 0) {
                const struct gm_region *g = find_gpa(m, gpa);
                uint64_t off, chunk;

                if (!g)
                        return -EFAULT;
                off = gpa - g->gpa;
                chunk = g->size - off;
                if (chunk > len)
                        chunk = len;
                memcpy(out, g->host + off, (size_t)chunk);
                out += chunk;
                gpa += chunk;
                len -= (size_t)chunk;
        }
        return 0;
}
