/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cost-noseccomp.so — LD_PRELOAD'ed into QEMU's legacy virtiofsd by
 * bench/cost-run.sh so that it can run under valgrind.
 *
 * The legacy virtiofsd always installs a seccomp filter and has no option
 * to leave it out; valgrind does not implement the seccomp system call, so
 * seccomp_init() fails and the daemon exits.  Sluice-fs (--sandbox=none)
 * and Rust virtiofsd (--seccomp none) are counted without their filters,
 * so the legacy daemon is too: these stand-ins for libseccomp's four
 * functions it calls accept every rule and load nothing.  Used for
 * counting only, never to serve anyone. */
#include <stdint.h>

void *seccomp_init(uint32_t def_action);
int seccomp_rule_add(void *ctx, uint32_t action, int syscall, unsigned int arg_cnt, ...);
int seccomp_load(void *ctx);
void seccomp_release(void *ctx);

static int token;

void *seccomp_init(uint32_t def_action)
{
        (void)def_action;
        return &token;
}

int seccomp_rule_add(void *ctx, uint32_t action, int syscall, unsigned int arg_cnt, ...)
{
        (void)ctx; (void)action; (void)syscall; (void)arg_cnt;
        return 0;
}

int seccomp_load(void *ctx)
{
        (void)ctx;
        return 0;
}

void seccomp_release(void *ctx)
{
        (void)ctx;
}
