/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-memory.c — see guest-memory.h. */
#include "guest-memory.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* ---- the SIGBUS guard (see guest-memory.h) ----
 * Every guest memory mapping is registered here; the handler only
 * reads this table.  It changes only while no thread touches guest memory
 * (the transport stops the queues around memory changes), but the fields
 * are atomics so that the handler never sees a torn entry. */

struct guard {
        _Atomic(uintptr_t) start;   /* 0 = free slot */
        _Atomic(size_t) len;
        _Atomic(struct gm *) owner;
};

#define GUARD_SLOTS (2 * GM_MAX_REGIONS)
static struct guard guards[GUARD_SLOTS];
static struct sigaction previous_sigbus;
static pthread_once_t sigbus_once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
        uintptr_t addr = (uintptr_t)si->si_addr;

        for (unsigned i = 0; si->si_code > 0 && i < GUARD_SLOTS; i++) {
                uintptr_t start = atomic_load(&guards[i].start);
                size_t len = atomic_load(&guards[i].len);
                struct gm *owner = atomic_load(&guards[i].owner);

                if (!start || addr < start || addr - start >= len)
                        continue;
                /* The file behind this region shrank: put zero pages where
                 * it was, so the faulting access (and any later one) completes. */
                if (mmap((void *)start, len, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
                         0) == MAP_FAILED)
                        break;
                if (owner)
                        atomic_store(&owner->lost, true);
                return;
        }
        /* Not ours: behave as if we had never been installed. */
        if ((previous_sigbus.sa_flags & SA_SIGINFO) && previous_sigbus.sa_sigaction) {
                previous_sigbus.sa_sigaction(sig, si, ctx);
                return;
        }
        if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN) {
                previous_sigbus.sa_handler(sig);
                return;
        }
        (void)sigaction(SIGBUS, &previous_sigbus, NULL);
        if (si->si_code <= 0)   /* sent, not a fault: deliver it again with the old action */
                (void)raise(sig);
        /* A fault re-executes the access and now gets the default action. */
}

static void sigbus_install(void)
{
        struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };

        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, &previous_sigbus) < 0)
                log_warning("cannot install the SIGBUS handler for guest memory: %s",
                            strerror(errno));
}

static void guard_add(struct gm *m, void *base, size_t len)
{
        for (unsigned i = 0; i < GUARD_SLOTS; i++) {
                if (atomic_load(&guards[i].start))
                        continue;
                atomic_store(&guards[i].len, len);
                atomic_store(&guards[i].owner, m);
                atomic_store(&guards[i].start, (uintptr_t)base);
                return;
        }
        log_warning("too many unsealed guest memory mappings to guard; a shrink of this one "
                    "would kill the worker");
}

static void guard_remove(void *base)
{
        for (unsigned i = 0; i < GUARD_SLOTS; i++)
                if (atomic_load(&guards[i].start) == (uintptr_t)base)
                        atomic_store(&guards[i].start, 0);
}

void gm_init(struct gm *m)
{
        memset(m, 0, sizeof(*m));
        atomic_init(&m->lost, false);
}

static void region_unmap(struct gm_region *r)
{
        if (r->map_base) {
                guard_remove(r->map_base);
                (void)munmap(r->map_base, r->map_size);
        }
        memset(r, 0, sizeof(*r));
}

void gm_clear(struct gm *m)
{
        for (unsigned i = 0; i < m->n_regions; i++)
                region_unmap(&m->regions[i]);
        m->n_regions = 0;
        atomic_store(&m->lost, false);
}

bool gm_lost(const struct gm *m)
{
        return atomic_load_explicit(&((struct gm *)m)->lost, memory_order_relaxed);
}

/* Makes sure fd holds [0, end) for as long as we map it: seals a memfd
 * against shrinking when it can be sealed, then checks the size.  Sets
 * *ret_sealed when a shrink is impossible from now on. */
static int region_fd_check(int fd, uint64_t end, bool *ret_sealed)
{
        struct stat st;
        int seals;

        seals = fcntl(fd, F_GET_SEALS);
        if (seals >= 0 && !(seals & F_SEAL_SHRINK) && !(seals & F_SEAL_SEAL) &&
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0)
                seals |= F_SEAL_SHRINK;
        *ret_sealed = seals >= 0 && (seals & F_SEAL_SHRINK);
        /* After sealing: a shrink that raced the seal shows here. */
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode)) {
                log_error("guest memory fd is not a regular file (mode 0%o): cannot check its size",
                          (unsigned)st.st_mode);
                return -EINVAL;
        }
        if ((uint64_t)st.st_size < end) {
                log_error("guest memory fd holds %lld bytes, the region needs %llu",
                          (long long)st.st_size, (unsigned long long)end);
                return -ENXIO;
        }
        return 0;
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
        bool sealed;
        void *base;
        int err;

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
        err = region_fd_check(fd, r->mmap_offset + r->memory_size, &sealed);
        if (err < 0)
                return err;
        /* Every mapping is guarded: a sealed memfd cannot shrink, but a fault
         * can still fail (tmpfs out of space, no free huge page). */
        (void)pthread_once(&sigbus_once, sigbus_install);
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
        guard_add(m, base, slot->map_size);
        log_debug("memory region gpa 0x%llx size 0x%llx uva 0x%llx offset 0x%llx (%s)",
                  (unsigned long long)slot->gpa, (unsigned long long)slot->size,
                  (unsigned long long)slot->uva, (unsigned long long)slot->mmap_offset,
                  sealed ? "sealed against shrinking"
                         : "cannot be sealed: a shrink would break the device");
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

int gm_map_search(const struct gm *m, const struct gm_region **hint, uint64_t gpa, uint64_t len,
                  struct iovec *iov, unsigned max, unsigned *n)
{
        const struct gm_region *g = find_gpa(m, gpa);

        if (g)
                *hint = g;
        return gm_map(m, gpa, len, iov, max, n);
}

void *gm_gpa_to_host_search(const struct gm *m, const struct gm_region **hint, uint64_t gpa,
                            uint64_t len)
{
        const struct gm_region *g = find_gpa(m, gpa);
        uint64_t off;

        if (!g || len == 0)
                return NULL;
        *hint = g;
        off = gpa - g->gpa;
        if (len > g->size - off)
                return NULL;
        return g->host + off;
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
