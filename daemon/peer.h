/* SPDX-License-Identifier: GPL-2.0-or-later */
/* peer.h — who may be the worker's frontend.
 *
 * Two checks on each accepted connection, by its SO_PEERCRED:
 *  - its user (--allow-peer-uid): listed, the worker's own, or root;
 *  - its process (--allow-peer-pid, or Worker1.SetPeerPid from the service
 *    just before it hot-plugs): the VM's QEMU, and no other process of the
 *    same user.  A qemu:///system VM's QEMU runs as libvirt-qemu like every
 *    other system VM's, so the user alone does not tie a socket to its VM.
 *
 * The expected process is held as a pidfd from the moment it is named: while
 * that process lives, its pid cannot be given to another one, so a peer whose
 * pid matches while the pidfd says "alive" is that process.  When it has
 * exited (a VM restarted gets a new QEMU) the pid is refused until the service
 * names the new one.  Kernels without pidfd_open (before 5.3) compare the pid
 * alone.  A connection queued before the expected process existed is the one
 * case the pid cannot tell apart; the service names the pid before it asks
 * libvirt to plug the device, and QEMU connects during that call.
 *
 * Main thread only.  System calls: pidfd_open (when a pid is named), ppoll,
 * getsockopt, close. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct peer_policy {
        const uint32_t *uids;   /* --allow-peer-uid; none: any user the socket lets in */
        unsigned n_uids;
        pid_t pid;              /* expected frontend process; 0: any process of an allowed user */
        int pidfd;              /* on pid, or -1 (no pidfd_open here) */
};

void peer_policy_init(struct peer_policy *p, const uint32_t *uids, unsigned n_uids);
/* Expects the frontend to be process pid from now on (0: no longer check the
 * process).  0, or -ESRCH when no such process exists (nothing changes then),
 * -EINVAL for a negative pid. */
int peer_policy_set_pid(struct peer_policy *p, pid_t pid);
/* Whether the peer on conn may be the frontend.  *ret_cred: who it is (uid
 * -1, pid 0 if unknown); *ret_reason: why not, for the log, when refused. */
bool peer_policy_check(const struct peer_policy *p, int conn, struct ucred *ret_cred,
                       const char **ret_reason);
void peer_policy_clear(struct peer_policy *p);
