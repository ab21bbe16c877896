/* cpu-spare.h — may a busy-poll take a CPU now?
 *
 * A queue thread that spins waiting for the guest's next request is only a
 * win while a CPU is idle besides its own: on a host without a spare core
 * (a 2-core machine running a TCG vCPU, QEMU's main loop and other work) the
 * spinning thread takes the CPU that the vCPU or the main loop — the very
 * threads that produce the next request and deliver our interrupt — need.
 *
 * Two signals, both cheap:
 *  - the host's CPU pressure, sampled at most every CPU_SPARE_SAMPLE_US by
 *    whichever thread asks: the share of time some runnable task waited for
 *    a CPU (/proc/pressure/cpu "some"), or where PSI is missing, the number
 *    of running tasks (/proc/loadavg) against the online CPUs;
 *  - the spinner itself noticing it was preempted (a gap in the monotonic
 *    clock between two spin iterations: the kernel ran someone else there).
 * Either one refuses spinning for a back-off period that doubles while the
 * contention lasts (up to CPU_SPARE_MAX_BACKOFF_US) and halves when a sample
 * finds the host calm again.  State is process-wide: when one queue finds
 * the CPUs taken, no queue should spin.  All of it is lock-free. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define CPU_SPARE_SAMPLE_US 10000            /* pressure sample period */
#define CPU_SPARE_MIN_BACKOFF_US 20000
#define CPU_SPARE_MAX_BACKOFF_US 2000000
/* A pause between two spin iterations longer than this is a preemption: an
 * iteration costs well under a microsecond, interrupts a few. */
#define CPU_SPARE_PREEMPT_GAP_US 20

/* Opens the pressure files; call before the sandbox (Landlock would refuse
 * them later).  Without them, only preemption is detected. */
void cpu_spare_init(void);
/* true when spinning now takes nobody's CPU, as far as we can tell. */
bool cpu_spare_available(uint64_t now_usec);
/* The caller's spin was preempted at now_usec: stop everyone spinning for a while. */
void cpu_spare_preempted(uint64_t now_usec);
