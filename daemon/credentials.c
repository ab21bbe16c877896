/* SPDX-License-Identifier: GPL-2.0-or-later */
/* credentials.c — per-thread fsuid/fsgid/groups of a request (see credentials.h). */
#include "credentials.h"

#include <errno.h>
#include <grp.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

static atomic_bool root_mode;

int creds_init(void)
{
        if (geteuid() != 0) {
                atomic_store(&root_mode, false);
                return 0;
        }
        /* glibc's setgroups() changes every thread: right here, before any
         * exists; from now on only the per-thread system call is used. */
        if (setgroups(0, NULL) < 0) {
                int r = -errno;

                log_error("running as root, but cannot drop the supplementary groups: %s", strerror(-r));
                return r;
        }
        atomic_store(&root_mode, true);
        log_info("running as root: nodes the guest creates belong to the requesting guest user");
        return 1;
}

bool creds_root_mode(void)
{
        return atomic_load_explicit(&root_mode, memory_order_relaxed);
}

/* The raw system call: only the calling thread's groups. */
static int thread_setgroups(size_t n, const gid_t *groups)
{
        return syscall(SYS_setgroups, n, groups) < 0 ? -errno : 0;
}

int creds_enter(uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups, struct creds_scope *ret)
{
        *ret = (struct creds_scope){ 0 };
        if (!creds_root_mode())
                return 0;
        /* setfsuid(-1) changes nothing: the request would run as root. */
        if (uid == (uid_t)-1 || gid == (gid_t)-1)
                return -EPERM;
        ret->active = true;
        if (n_groups > 0) {
                int r = thread_setgroups(n_groups, groups);

                if (r < 0) {
                        ret->active = false;
                        return -EPERM;
                }
                ret->groups_set = true;
        }
        /* The group first: a non-zero fsuid must not take away what changing it needs.
         * setfsgid()/setfsuid() report no error; setfs*id(-1) reads the value back. */
        ret->saved_fsgid = (gid_t)setfsgid(gid);
        ret->saved_fsuid = (uid_t)setfsuid(uid);
        if ((gid_t)setfsgid((gid_t)-1) != gid || (uid_t)setfsuid((uid_t)-1) != uid) {
                creds_leave(ret);
                return -EPERM;
        }
        return 0;
}

void creds_leave(struct creds_scope *scope)
{
        int saved_errno = errno;

        if (!scope->active)
                return;
        /* fsuid 0 first: it gives the thread its file-system capabilities back. */
        (void)setfsuid(scope->saved_fsuid);
        (void)setfsgid(scope->saved_fsgid);
        if (scope->groups_set && thread_setgroups(0, NULL) < 0)
                log_error("cannot drop a request's supplementary group again: %s", strerror(errno));
        scope->active = false;
        errno = saved_errno;
}
