/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu-spare.c — see cpu-spare.h. */
#include "cpu-spare.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int loadavg_fd = -1;   /* /proc/loadavg, or -1 */
static long n_cpus = 1;

/* Spinning is refused before this time (CLOCK_MONOTONIC µs). */
static _Atomic uint64_t refuse_until_usec;
static _Atomic uint64_t backoff_usec = CPU_SPARE_MIN_BACKOFF_US;
/* One sampler at a time: whoever sets the flag owns the fields below it; the
 * release when clearing it publishes them to the next owner (acquire). */
static atomic_bool sampling;
static _Atomic uint64_t next_sample_usec;

void cpu_spare_init(void)
{
        if (loadavg_fd < 0)
                loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
        n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (n_cpus < 1)
                n_cpus = 1;
}

static void refuse(uint64_t now_usec)
{
        uint64_t b = atomic_load_explicit(&backoff_usec, memory_order_relaxed);

        /* Relaxed: these are hints; a racing update loses one back-off step at worst. */
        atomic_store_explicit(&refuse_until_usec, now_usec + b, memory_order_relaxed);
        atomic_store_explicit(&backoff_usec, b * 2 > CPU_SPARE_MAX_BACKOFF_US ? CPU_SPARE_MAX_BACKOFF_US : b * 2,
                              memory_order_relaxed);
}

static void calm(void)
{
        uint64_t b = atomic_load_explicit(&backoff_usec, memory_order_relaxed);

        atomic_store_explicit(&backoff_usec, b / 2 < CPU_SPARE_MIN_BACKOFF_US ? CPU_SPARE_MIN_BACKOFF_US : b / 2,
                              memory_order_relaxed);
}

static ssize_t read_proc(int fd, char *buf, size_t size)
{
        ssize_t n = pread(fd, buf, size - 1, 0);

        if (n < 0)
                return -1;
        buf[n] = '\0';
        return n;
}

/* /proc/loadavg's 4th field, "running/total": tasks running now, ourselves included. */
static bool more_running_than_cpus(void)
{
        char buf[128], *p;
        long running;

        if (read_proc(loadavg_fd, buf, sizeof(buf)) < 0)
                return false;
        p = buf;
        for (int field = 0; field < 3; field++) {
                p = strchr(p, ' ');
                if (!p)
                        return false;
                p++;
        }
        running = strtol(p, NULL, 10);
        return running > n_cpus;
}

static void sample(uint64_t now_usec)
{
        if (loadavg_fd < 0)
                return;
        if (more_running_than_cpus())
                refuse(now_usec);
        else
                calm();
}

bool cpu_spare_available(uint64_t now_usec)
{
        if (now_usec >= atomic_load_explicit(&next_sample_usec, memory_order_relaxed) &&
            !atomic_exchange_explicit(&sampling, true, memory_order_acquire)) {
                /* Re-checked under the flag: another thread may just have sampled. */
                if (now_usec >= atomic_load_explicit(&next_sample_usec, memory_order_relaxed)) {
                        sample(now_usec);
                        atomic_store_explicit(&next_sample_usec, now_usec + CPU_SPARE_SAMPLE_US,
                                              memory_order_relaxed);
                }
                atomic_store_explicit(&sampling, false, memory_order_release);
        }
        return now_usec >= atomic_load_explicit(&refuse_until_usec, memory_order_relaxed);
}

void cpu_spare_preempted(uint64_t now_usec)
{
        refuse(now_usec);
}
