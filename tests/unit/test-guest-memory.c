/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-memory.c — guest memory regions and address translation edges. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest-memory.h"

#define MIB (1024u * 1024u)

/* A memfd of `size` bytes, and our own view of it (what the "VMM" writes). */
static int new_memfd(size_t size, uint8_t **view)
{
        int fd = memfd_create("guest", MFD_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, (off_t)size), ==, 0);
        *view = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        g_assert_true(*view != MAP_FAILED);
        return fd;
}

static struct vu_memory_region region(uint64_t gpa, uint64_t size, uint64_t uva, uint64_t off)
{
        return (struct vu_memory_region){ .guest_phys_addr = gpa, .memory_size = size,
                                          .user_addr = uva, .mmap_offset = off };
}

static void test_translate_bounds(void)
{
        struct gm m;
        uint8_t *view, *p;
        struct vu_memory_region r = region(0x100000, MIB, 0x7f0000000000, 0);
        int fd = new_memfd(MIB, &view);

        gm_init(&m);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, 0);
        close(fd);   /* the mapping keeps the memory */

        /* Writes by the guest (our view) are what the device reads: zero copy, shared. */
        p = gm_gpa_to_host(&m, 0x100000 + 42, 4);
        g_assert_nonnull(p);
        view[42] = 0xab;
        g_assert_cmpuint(p[0], ==, 0xab);

        g_assert_nonnull(gm_gpa_to_host(&m, 0x100000, MIB));            /* the whole region */
        g_assert_nonnull(gm_gpa_to_host(&m, 0x100000 + MIB - 1, 1));    /* last byte */
        g_assert_null(gm_gpa_to_host(&m, 0x100000 + MIB - 1, 2));       /* one past the end */
        g_assert_null(gm_gpa_to_host(&m, 0x100000 + MIB, 1));           /* just after */
        g_assert_null(gm_gpa_to_host(&m, 0x100000 - 1, 2));              /* just before */
        g_assert_null(gm_gpa_to_host(&m, 0x100000, UINT64_MAX));         /* huge length */
        g_assert_null(gm_gpa_to_host(&m, UINT64_MAX, 2));                /* wraps */

        g_assert_true(gm_uva_to_host(&m, 0x7f0000000000 + 42, 1) == p);
        g_assert_null(gm_uva_to_host(&m, 0x7f0000000000 + MIB, 1));
        g_assert_null(gm_uva_to_host(&m, 0x7f0000000000 + 8, MIB));

        gm_clear(&m);
        g_assert_null(gm_gpa_to_host(&m, 0x100000, 1));
        munmap(view, MIB);
}

static void test_bad_regions(void)
{
        struct gm m;
        uint8_t *view;
        int fd = new_memfd(MIB, &view);
        struct vu_memory_region r;

        gm_init(&m);
        r = region(0, 0, 0, 0);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -EINVAL);         /* empty */
        r = region(UINT64_MAX - 100, MIB, 0, 0);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -EINVAL);         /* gpa wraps */
        r = region(0, MIB, UINT64_MAX - 100, 0);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -EINVAL);         /* uva wraps */
        r = region(0, MIB, 0, UINT64_MAX - 100);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -EINVAL);         /* offset wraps */
        r = region(0, MIB, 0, 0);
        g_assert_cmpint(gm_add_region(&m, &r, -1), ==, -EBADF);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, 0);
        r = region(MIB / 2, MIB, 0x10000000, 0);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -EINVAL);         /* overlaps */
        g_assert_cmpuint(m.n_regions, ==, 1);

        /* Table full. */
        for (unsigned i = 1; i < GM_MAX_REGIONS; i++) {
                r = region((uint64_t)i * MIB, 4096, (uint64_t)i * MIB, 0);
                g_assert_cmpint(gm_add_region(&m, &r, fd), ==, 0);
        }
        r = region((uint64_t)GM_MAX_REGIONS * MIB, 4096, 0, 0);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -ENOSPC);

        /* Remove one, the rest stay reachable. */
        r = region(3 * (uint64_t)MIB, 4096, 0, 0);
        g_assert_cmpint(gm_remove_region(&m, &r), ==, 0);
        g_assert_cmpint(gm_remove_region(&m, &r), ==, -ENOENT);
        g_assert_null(gm_gpa_to_host(&m, 3 * (uint64_t)MIB, 1));
        g_assert_nonnull(gm_gpa_to_host(&m, 4 * (uint64_t)MIB, 1));
        g_assert_nonnull(gm_gpa_to_host(&m, (uint64_t)(GM_MAX_REGIONS - 1) * MIB, 4096));
        gm_clear(&m);
        close(fd);
        munmap(view, MIB);
}

/* A region that starts at a non-page-aligned offset of its fd. */
static void test_unaligned_offset(void)
{
        struct gm m;
        uint8_t *view, *p;
        int fd = new_memfd(2 * MIB, &view);
        struct vu_memory_region r = region(0x1000, MIB, 0, 0x1234);

        gm_init(&m);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, 0);
        view[0x1234 + 7] = 0x5a;
        p = gm_gpa_to_host(&m, 0x1000 + 7, 1);
        g_assert_nonnull(p);
        g_assert_cmpuint(*p, ==, 0x5a);
        gm_clear(&m);
        close(fd);
        munmap(view, 2 * MIB);
}

/* A buffer across two adjacent regions maps to two iovecs, each in its region. */
static void test_map_across_regions(void)
{
        struct gm m;
        uint8_t *view_a, *view_b;
        int fd_a = new_memfd(MIB, &view_a), fd_b = new_memfd(MIB, &view_b);
        struct vu_memory_region ra = region(0, MIB, 0x10000000, 0);
        struct vu_memory_region rb = region(MIB, MIB, 0x20000000, 0);
        struct iovec iov[4];
        unsigned n = 0;
        uint8_t copy[16];

        gm_init(&m);
        g_assert_cmpint(gm_add_region(&m, &ra, fd_a), ==, 0);
        g_assert_cmpint(gm_add_region(&m, &rb, fd_b), ==, 0);
        memset(view_a + MIB - 8, 'a', 8);
        memset(view_b, 'b', 8);

        g_assert_cmpint(gm_map(&m, MIB - 8, 16, iov, 4, &n), ==, 0);
        g_assert_cmpuint(n, ==, 2);
        g_assert_cmpuint(iov[0].iov_len, ==, 8);
        g_assert_cmpuint(iov[1].iov_len, ==, 8);
        g_assert_cmpmem(iov[0].iov_base, 8, "aaaaaaaa", 8);
        g_assert_cmpmem(iov[1].iov_base, 8, "bbbbbbbb", 8);

        /* Not enough room for the second iovec. */
        n = 0;
        g_assert_cmpint(gm_map(&m, MIB - 8, 16, iov, 1, &n), ==, -ENOBUFS);
        /* Past the end of the second region, or wrapping. */
        n = 0;
        g_assert_cmpint(gm_map(&m, MIB - 8, MIB + 9, iov, 4, &n), ==, -EFAULT);
        n = 0;
        g_assert_cmpint(gm_map(&m, UINT64_MAX - 4, 16, iov, 4, &n), ==, -EFAULT);
        /* Zero length maps to nothing. */
        n = 0;
        g_assert_cmpint(gm_map(&m, 0, 0, iov, 4, &n), ==, 0);
        g_assert_cmpuint(n, ==, 0);

        g_assert_cmpint(gm_copy_from(&m, MIB - 8, copy, 16), ==, 0);
        g_assert_cmpmem(copy, 16, "aaaaaaaabbbbbbbb", 16);
        g_assert_cmpint(gm_copy_from(&m, 2 * MIB - 8, copy, 16), ==, -EFAULT);

        /* Contiguous translation refuses what spans regions: they are separate mappings. */
        g_assert_null(gm_gpa_to_host(&m, MIB - 8, 16));

        gm_clear(&m);
        close(fd_a);
        close(fd_b);
        munmap(view_a, MIB);
        munmap(view_b, MIB);
}

/* The fd must hold mmap_offset + memory_size bytes and be a file. */
static void test_short_fd(void)
{
        struct gm m;
        uint8_t *view;
        int fd = new_memfd(MIB, &view), p[2];
        struct vu_memory_region r;

        gm_init(&m);
        r = region(0, 2 * MIB, 0, 0);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -ENXIO);
        r = region(0, MIB, 0, 4096);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, -ENXIO);
        r = region(0, MIB - 4096, 0, 4096);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, 0);
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        r = region(4 * MIB, 4096, 4 * MIB, 0);
        g_assert_cmpint(gm_add_region(&m, &r, p[0]), ==, -EINVAL);
        g_assert_cmpuint(m.n_regions, ==, 1);
        close(p[0]);
        close(p[1]);
        gm_clear(&m);
        close(fd);
        munmap(view, MIB);
}

/* A memfd left sealable gets F_SEAL_SHRINK (and only that): the frontend can
 * no longer pull pages from under the mapping, but may still grow it. */
static void test_seals_shrink(void)
{
        struct gm m;
        int fd = memfd_create("guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        struct vu_memory_region r = region(0, MIB, 0, 0);

        g_assert_cmpint(ftruncate(fd, MIB), ==, 0);
        gm_init(&m);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, 0);
        g_assert_cmpint(fcntl(fd, F_GET_SEALS), ==, F_SEAL_SHRINK);
        g_assert_cmpint(ftruncate(fd, MIB / 2), ==, -1);
        g_assert_cmpint(errno, ==, EPERM);
        g_assert_cmpint(ftruncate(fd, 2 * MIB), ==, 0);
        g_assert_false(gm_lost(&m));
        gm_clear(&m);
        close(fd);
}

/* A memfd that cannot be sealed and shrinks after mapping: touching the lost
 * part does not kill us (SIGBUS is handled); it reads zeros and the memory
 * is reported lost until the table is cleared. */
static void test_unsealed_shrink_survives(void)
{
        struct gm m;
        uint8_t *view;
        int fd = new_memfd(MIB, &view);
        struct vu_memory_region r = region(0x100000, MIB, 0x7f0000000000, 0);
        volatile uint8_t *p;

        view[MIB - 1] = 0x77;
        gm_init(&m);
        g_assert_cmpint(gm_add_region(&m, &r, fd), ==, 0);
        g_assert_true(fcntl(fd, F_GET_SEALS) == F_SEAL_SEAL);   /* nothing added */
        p = gm_gpa_to_host(&m, 0x100000 + MIB - 1, 1);
        g_assert_cmpuint(*p, ==, 0x77);
        munmap(view, MIB);
        g_assert_cmpint(ftruncate(fd, 4096), ==, 0);
        g_assert_false(gm_lost(&m));
        g_assert_cmpuint(*p, ==, 0);     /* faulted, survived */
        *p = 1;                          /* writes go nowhere the frontend sees */
        g_assert_true(gm_lost(&m));
        gm_clear(&m);
        g_assert_false(gm_lost(&m));
        close(fd);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/guest-memory/translate-bounds", test_translate_bounds);
        g_test_add_func("/guest-memory/bad-regions", test_bad_regions);
        g_test_add_func("/guest-memory/unaligned-offset", test_unaligned_offset);
        g_test_add_func("/guest-memory/map-across-regions", test_map_across_regions);
        g_test_add_func("/guest-memory/short-fd", test_short_fd);
        g_test_add_func("/guest-memory/seals-shrink", test_seals_shrink);
        g_test_add_func("/guest-memory/unsealed-shrink-survives", test_unsealed_shrink_survives);
        return g_test_run();
}
