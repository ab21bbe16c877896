/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stable-memory.c — memory that lock-free readers may touch (see stable-memory.h). */
#include "stable-memory.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

void *stable_map_zeroed(size_t bytes)
{
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

void stable_release(void *p, size_t bytes)
{
        /* Two tables (inodes, handles) may ask at once under their own locks. */
        static _Atomic int page_ok = -1;
        int ok = atomic_load_explicit(&page_ok, memory_order_relaxed);

        if (ok < 0) {
                ok = sysconf(_SC_PAGESIZE) == STABLE_UNIT_BYTES;
                atomic_store_explicit(&page_ok, ok, memory_order_relaxed);
        }
        if (ok)
                (void) madvise(p, bytes, MADV_DONTNEED);
}
