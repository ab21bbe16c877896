/* SPDX-License-Identifier: GPL-2.0-or-later */
/* peer.c — see peer.h. */
#include "peer.h"

#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434   /* the same number on every architecture */
#endif

void peer_policy_init(struct peer_policy *p, const uint32_t *uids, unsigned n_uids)
{
        p->uids = uids;
        p->n_uids = n_uids;
        p->pid = 0;
        p->pidfd = -1;
}

void peer_policy_clear(struct peer_policy *p)
{
        if (p->pidfd >= 0)
                (void)close(p->pidfd);
        p->pidfd = -1;
        p->pid = 0;
}

int peer_policy_set_pid(struct peer_policy *p, pid_t pid)
{
        int fd;

        if (pid < 0)
                return -EINVAL;
        if (pid == 0) {
                peer_policy_clear(p);
                return 0;
        }
        fd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0 && errno != ENOSYS)
                return -errno;   /* ESRCH: no such process */
        peer_policy_clear(p);
        p->pid = pid;
        p->pidfd = fd;
        return 0;
}

/* A pidfd polls readable once its process has exited. */
static bool expected_process_alive(const struct peer_policy *p)
{
        struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
        const struct timespec now = { 0 };

        if (p->pidfd < 0)
                return true;
        return ppoll(&pfd, 1, &now, NULL) == 0;
}

static bool uid_allowed(const struct peer_policy *p, uid_t uid)
{
        if (p->n_uids == 0 || uid == 0 || uid == geteuid())
                return true;
        for (unsigned i = 0; i < p->n_uids; i++)
                if (uid == p->uids[i])
                        return true;
        return false;
}

bool peer_policy_check(const struct peer_policy *p, int conn, struct ucred *ret_cred,
                       const char **ret_reason)
{
        socklen_t len = sizeof(*ret_cred);

        ret_cred->pid = 0;
        ret_cred->uid = (uid_t)-1;
        ret_cred->gid = (gid_t)-1;
        *ret_reason = NULL;
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, ret_cred, &len) < 0 || len != sizeof(*ret_cred)) {
                ret_cred->pid = 0;
                ret_cred->uid = (uid_t)-1;
                if (p->n_uids == 0 && p->pid == 0)
                        return true;
                *ret_reason = "its credentials cannot be read";
                return false;
        }
        if (!uid_allowed(p, ret_cred->uid)) {
                *ret_reason = "not allowed by --allow-peer-uid";
                return false;
        }
        if (p->pid == 0)
                return true;
        if (ret_cred->pid != p->pid) {
                *ret_reason = "another program than the VM's QEMU";
                return false;
        }
        if (!expected_process_alive(p)) {
                *ret_reason = "the expected QEMU has exited, its pid may be another program's";
                return false;
        }
        return true;
}
