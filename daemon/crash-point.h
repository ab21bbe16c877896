/* SPDX-License-Identifier: GPL-2.0-or-later */
/* crash-point.h — named places where a test build can kill the worker, so
 * that tests of the resume after a crash (resume-state.h) can die at the
 * instruction they mean instead of hoping a random SIGKILL lands there.
 *
 * In a -Dtest_hooks=true build, $SLUICE_FS_TEST_CRASH_AT=NAME[@N] makes the
 * N-th (default: first) pass through CRASH_POINT("NAME") raise SIGKILL on
 * the whole process.  The variable is read once, at start
 * (crash_point_init(), before the sandbox); a point costs one relaxed load
 * of a flag while no point is armed.  In other builds CRASH_POINT() is
 * nothing at all.
 *
 * Names (one list, so tests and code agree; tests/frontend/test-resume.c and
 * the unit tests use them):
 *   "after-pop"          a descriptor chain was taken from the avail ring
 *   "after-fs-call"      the file system call of a request is done, nothing replied
 *   "after-used-write"   the used element is written, the used index not yet moved
 *   "before-used-index"  just before the used index store
 *   "inode-insert"       in the middle of adding an inode to the table
 *   "forget-batch"       in the middle of a BATCH_FORGET */
#pragma once

#include "config.h"

#if SLUICE_TEST_HOOKS
#include <stdatomic.h>
#include <stdbool.h>

extern atomic_bool crash_point_armed;
void crash_point_init(void);
void crash_point_hit(const char *name);
#define CRASH_POINT(name)                                                                  \
        do {                                                                               \
                if (atomic_load_explicit(&crash_point_armed, memory_order_relaxed))        \
                        crash_point_hit(name);                                             \
        } while (0)
#else
static inline void crash_point_init(void)
{
}
#define CRASH_POINT(name) do { } while (0)
#endif
