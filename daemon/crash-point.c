/* SPDX-License-Identifier: GPL-2.0-or-later */
/* crash-point.c — see crash-point.h.  Test builds only. */
#include "crash-point.h"

#if SLUICE_TEST_HOOKS
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

atomic_bool crash_point_armed;
static char armed_name[64];
static _Atomic unsigned long passes_left;

void crash_point_init(void)
{
        const char *spec = getenv("SLUICE_FS_TEST_CRASH_AT");
        const char *at;
        unsigned long n = 1;
        size_t len;

        if (!spec || !*spec)
                return;
        at = strchr(spec, '@');
        len = at ? (size_t)(at - spec) : strlen(spec);
        if (at) {
                char *end;

                n = strtoul(at + 1, &end, 10);
                if (*end || n == 0) {
                        log_warning("SLUICE_FS_TEST_CRASH_AT=%s: the count after @ is not a number; ignored",
                                    spec);
                        return;
                }
        }
        if (len == 0 || len >= sizeof(armed_name)) {
                log_warning("SLUICE_FS_TEST_CRASH_AT=%s: no such crash point; ignored", spec);
                return;
        }
        memcpy(armed_name, spec, len);
        armed_name[len] = '\0';
        atomic_store(&passes_left, n);
        atomic_store(&crash_point_armed, true);
        log_info("test build: crashing at the %lu. pass through \"%s\"", n, armed_name);
}

void crash_point_hit(const char *name)
{
        if (strcmp(name, armed_name) != 0)
                return;
        if (atomic_fetch_sub(&passes_left, 1) != 1)
                return;
        /* Not abort(): no core, no handler, nothing flushed — as a SIGKILL from outside. */
        (void)raise(SIGKILL);
}
#endif
