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

/* What the calling thread's fsuid/fsgid are, as creds_enter()/creds_leave()
 * last left them: a switch to the ids the thread has already (guest root
 * creating as root, one user's requests in a row) is skipped.  The kernel
 * makes such a setfsuid()/setfsgid() change nothing at all, so skipping it
 * is exactly the same.  Read from the kernel once per thread (a thread
 * starts with its creator's ids, which may be a request's): only these two
 * functions change a thread's fsuid/fsgid after creds_init(). */
static __thread struct {
        bool known;
        uid_t fsuid;
        gid_t fsgid;
} thread_ids;

static void thread_ids_known(void)
{
        if (thread_ids.known)
                return;
        thread_ids.fsgid = (gid_t)setfsgid((gid_t)-1);
        thread_ids.fsuid = (uid_t)setfsuid((uid_t)-1);
        thread_ids.known = true;
}

int creds_enter(uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups, struct creds_scope *ret)
{
        bool new_gid, new_uid;

        *ret = (struct creds_scope){ 0 };
        if (!creds_root_mode())
                return 0;
        /* setfsuid(-1) changes nothing: the request would run as root. */
        if (uid == (uid_t)-1 || gid == (gid_t)-1)
                return -EPERM;
        thread_ids_known();
        ret->active = true;
        ret->saved_fsuid = thread_ids.fsuid;
        ret->saved_fsgid = thread_ids.fsgid;
        if (n_groups > 0) {
                int r = thread_setgroups(n_groups, groups);

                if (r < 0) {
                        ret->active = false;
                        return -EPERM;
                }
                ret->groups_set = true;
        }
        new_gid = gid != thread_ids.fsgid;
        new_uid = uid != thread_ids.fsuid;
        /* The group first: a non-zero fsuid must not take away what changing it needs.
         * setfsgid()/setfsuid() report no error; setfs*id(-1) reads the value back,
         * and what was read is what the thread has from now on. */
        if (new_gid)
                (void)setfsgid(gid);
        if (new_uid)
                (void)setfsuid(uid);
        if (new_gid)
                thread_ids.fsgid = (gid_t)setfsgid((gid_t)-1);
        if (new_uid)
                thread_ids.fsuid = (uid_t)setfsuid((uid_t)-1);
        if (thread_ids.fsgid != gid || thread_ids.fsuid != uid) {
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
        /* fsuid 0 first: it gives the thread its file-system capabilities back.
         * Only what creds_enter() changed is changed back; the previous value
         * the kernel returns is what the thread had, and if that was not what
         * we thought, the next creds_enter() reads the truth again. */
        if (thread_ids.fsuid != scope->saved_fsuid &&
            (uid_t)setfsuid(scope->saved_fsuid) != thread_ids.fsuid)
                thread_ids.known = false;
        thread_ids.fsuid = scope->saved_fsuid;
        if (thread_ids.fsgid != scope->saved_fsgid &&
            (gid_t)setfsgid(scope->saved_fsgid) != thread_ids.fsgid)
                thread_ids.known = false;
        thread_ids.fsgid = scope->saved_fsgid;
        if (scope->groups_set && thread_setgroups(0, NULL) < 0)
                log_error("cannot drop a request's supplementary group again: %s", strerror(errno));
        scope->active = false;
        errno = saved_errno;
}
