/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu-spare.h — may a busy-poll take a CPU now?
 *
 * A queue thread that spins waiting for the guest's next request is only a
 * win while a CPU is idle besides its own: on a host without a spare core
 * (a 2-core machine running a TCG vCPU, QEMU's main loop and other work) the
 * spinning thread takes the CPU that the vCPU or the main loop — the very
 * threads that produce the next request and deliver our interrupt — need.
 *
 * Two signals, both cheap:
 *  - the number of tasks running or runnable on the host now (/proc/loadavg's
 *    "R/T" field, the sampling thread included) against the online CPUs,
 *    sampled at most every CPU_SPARE_SAMPLE_US by whichever thread asks.
 *    (Not PSI's /proc/pressure/cpu: its "some" time also counts the wake-up
 *    latency of every kick, so at 100k kicks/s a calm host reads 30 % —
 *    refusing to poll would then feed the very signal that refuses it.)
 *  - the spinner itself noticing it was preempted: a gap in the monotonic
 *    clock between two spin iterations (each costs well under a µs) longer
 *    than a scheduler time slice's worth, CPU_SPARE_PREEMPT_GAP_US: someone
 *    CPU-bound shares our CPU.  Shorter gaps are left alone: in a VM the
 *    hypervisor's tick and interrupts take 20-50 µs about once per ms here,
 *    and a task that preempts us briefly got the CPU it wanted anyway.
 * Either one refuses spinning for a back-off period that doubles while the
 * contention lasts (up to CPU_SPARE_MAX_BACKOFF_US) and halves when a sample
 * finds the host calm again.  State is process-wide: when one queue finds
 * the CPUs taken, no queue should spin.  All of it is lock-free. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define CPU_SPARE_SAMPLE_US 10000            /* load sample period */
#define CPU_SPARE_MIN_BACKOFF_US 20000
#define CPU_SPARE_MAX_BACKOFF_US 2000000
#define CPU_SPARE_PREEMPT_GAP_US 200

/* Opens /proc/loadavg; call before the sandbox (Landlock would refuse it
 * later).  Without it, only preemption is detected. */
void cpu_spare_init(void);
/* true when spinning now takes nobody's CPU, as far as we can tell. */
bool cpu_spare_available(uint64_t now_usec);
/* The caller's spin paused for longer than CPU_SPARE_PREEMPT_GAP_US at
 * now_usec: no queue spins for a while. */
void cpu_spare_preempted(uint64_t now_usec);
