/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-cpu-spare.c — the busy-poll's "no spare CPU" back-off: a preemption
 * stops spinning for a while, repeated ones for longer, and spinning comes
 * back.  Time is passed in explicitly and /proc/loadavg is not opened
 * (cpu_spare_init() is not called), so nothing here depends on the host's
 * load or on timing. */
#include <glib.h>

#include "cpu-spare.h"

static void test_backoff(void)
{
        uint64_t t = 1000000;

        g_assert_true(cpu_spare_available(t));
        /* Preempted while spinning: nobody spins for the minimal back-off. */
        cpu_spare_preempted(t);
        g_assert_false(cpu_spare_available(t + 1));
        g_assert_false(cpu_spare_available(t + CPU_SPARE_MIN_BACKOFF_US - 1));
        g_assert_true(cpu_spare_available(t + CPU_SPARE_MIN_BACKOFF_US));
        /* Contention that lasts doubles it... */
        t += CPU_SPARE_MIN_BACKOFF_US;
        cpu_spare_preempted(t);
        g_assert_false(cpu_spare_available(t + 2 * CPU_SPARE_MIN_BACKOFF_US - 1));
        g_assert_true(cpu_spare_available(t + 2 * CPU_SPARE_MIN_BACKOFF_US));
        /* ...up to the maximum, never beyond. */
        for (int i = 0; i < 40; i++) {
                t += CPU_SPARE_MAX_BACKOFF_US;
                cpu_spare_preempted(t);
        }
        g_assert_false(cpu_spare_available(t + CPU_SPARE_MAX_BACKOFF_US - 1));
        g_assert_true(cpu_spare_available(t + CPU_SPARE_MAX_BACKOFF_US));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/cpu-spare/backoff", test_backoff);
        return g_test_run();
}
