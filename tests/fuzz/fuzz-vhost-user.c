/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-vhost-user.c — libFuzzer target: a sequence of vhost-user messages,
 * with fds, into the device side (vhost-user.c) over a socketpair, through
 * vu_dev_dispatch() as main.c's loop calls it — no entry point of its own.
 *
 * Once per process: a session on an empty scratch folder and the options of
 * a worker with two request queues, a --tag (so the config space is offered)
 * and no busy-polling.  Per input: a fresh socketpair and vu_dev_new(); then
 * records until the input ends or the device drops the connection:
 *   u8  op: bit 7 clear: a message follows —
 *         low nibble: the number of fds on it (9..15: more than the 8 a
 *         message may carry, so the kernel truncates them), then one u8 per
 *         fd saying what the harness makes (fd_kinds below: eventfds of three
 *         sorts, memfds, a pipe, /dev/null), a memfd with contents taking a
 *         u16 length and that many bytes for its start;
 *         then the 12-byte header and, when its size fits a payload, exactly
 *         size bytes (zeros past the input's end); an input that ends inside a
 *         header sends what there is and shuts the socket down (a truncated
 *         message);
 *       bit 7 set: kick the (op & 15)'th eventfd made so far (a queue
 *         thread then walks that ring, when one is running)
 * After each message every reply is drained.  At the end vu_dev_free()
 * (queue threads stopped, the session reset, memory unmapped, fds closed),
 * and every 256 inputs the fds must be where they were. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-session.h"
#include "fuzz-util.h"
#include "options.h"
#include "stats.h"
#include "vhost-user-proto.h"
#include "vhost-user.h"

#define FZ_MEMFD_SIZE (64 * 1024)
#define FZ_MAX_HELD   64     /* fds the harness keeps per input (for kicks) */

static struct fs_options opts;
static struct stats stats;
static struct fs_session *session;
static char share[4096];
static unsigned long runs;
static unsigned fd_baseline;

static int held[FZ_MAX_HELD];   /* every fd made for this input, closed at its end */
static unsigned n_held;
static int kickable[FZ_MAX_HELD];   /* the eventfds among them */
static unsigned n_kickable;

enum fd_kind {
        FD_EVENTFD,           /* what QEMU sends: non-blocking */
        FD_EVENTFD_BLOCKING,  /* the device sets O_NONBLOCK itself */
        FD_EVENTFD_SEMAPHORE, /* refused as a kick fd */
        FD_MEMFD,             /* guest RAM: FZ_MEMFD_SIZE bytes, sealable */
        FD_MEMFD_SMALL,       /* 4 KiB: shorter than most regions claim */
        FD_MEMFD_UNSEALABLE,  /* no MFD_ALLOW_SEALING (like a tmpfs file) */
        FD_MEMFD_CONTENTS,    /* sealable, its start from the input (rings, requests) */
        FD_PIPE,              /* not an eventfd, not a regular file */
        FD_DEVNULL,
        FD_KINDS,
};

static void hold(int fd, bool kick)
{
        if (fd < 0)
                abort();
        if (n_held == FZ_MAX_HELD) {
                close(fd);
                return;
        }
        held[n_held++] = fd;
        if (kick)
                kickable[n_kickable++] = fd;
}

static int make_memfd(unsigned flags, off_t size)
{
        int fd = memfd_create("fuzz-guest-ram", MFD_CLOEXEC | flags);

        if (fd < 0 || ftruncate(fd, size) < 0)
                abort();
        return fd;
}

/* Makes an fd of the kind the input names; -1 when the harness holds too many. */
static int make_fd(struct fz_input *in)
{
        int fd, p[2];

        /* Room for two: a pipe takes both its ends (hold() closes what does
         * not fit, and a closed fd must not be sent: sendmsg() says EBADF). */
        if (n_held + 2 > FZ_MAX_HELD)
                return -1;
        switch (fz_u8(in) % FD_KINDS) {
        case FD_EVENTFD:
                fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                hold(fd, true);
                return fd;
        case FD_EVENTFD_BLOCKING:
                fd = eventfd(0, EFD_CLOEXEC);
                hold(fd, true);
                return fd;
        case FD_EVENTFD_SEMAPHORE:
                fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
                hold(fd, false);
                return fd;
        case FD_MEMFD:
                fd = make_memfd(MFD_ALLOW_SEALING, FZ_MEMFD_SIZE);
                break;
        case FD_MEMFD_SMALL:
                fd = make_memfd(MFD_ALLOW_SEALING, 4096);
                break;
        case FD_MEMFD_UNSEALABLE:
                fd = make_memfd(0, FZ_MEMFD_SIZE);
                break;
        case FD_MEMFD_CONTENTS: {
                uint8_t buf[4096];
                size_t n = fz_u16(in) % (sizeof(buf) + 1);

                fd = make_memfd(MFD_ALLOW_SEALING, FZ_MEMFD_SIZE);
                fz_bytes(in, buf, n);
                if (n && pwrite(fd, buf, n, 0) != (ssize_t)n)
                        abort();
                break;
        }
        case FD_PIPE:
                if (pipe2(p, O_CLOEXEC) < 0)
                        abort();
                hold(p[1], false);
                fd = p[0];
                break;
        default:
                fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                break;
        }
        hold(fd, false);
        return fd;
}

static void drain(int fd)
{
        char buf[4096];

        while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
                ;
}

/* Sends one message; false when the input ended inside its header (the
 * socket is then shut down, so that the device reads a short message). */
static bool send_message(int sock, uint8_t op, struct fz_input *in)
{
        int fds[15];
        unsigned n_fds = op & 15, n = 0;
        struct {
                struct vu_msg_header hdr;
                union vu_payload payload;
        } __attribute__((packed)) msg;
        size_t len;
        char control[CMSG_SPACE(sizeof(fds))];
        struct iovec iov;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        for (unsigned i = 0; i < n_fds; i++) {
                int fd = make_fd(in);

                if (fd >= 0)
                        fds[n++] = fd;
        }
        if (in->left < sizeof(msg.hdr)) {
                len = in->left;
                fz_bytes(in, &msg.hdr, len);
        } else {
                fz_bytes(in, &msg.hdr, sizeof(msg.hdr));
                len = sizeof(msg.hdr);
                if (msg.hdr.size <= sizeof(msg.payload)) {
                        fz_bytes(in, &msg.payload, msg.hdr.size);
                        len += msg.hdr.size;
                }
        }
        iov.iov_base = &msg;
        iov.iov_len = len;
        if (n) {
                struct cmsghdr *c;

                memset(control, 0, sizeof(control));
                mh.msg_control = control;
                mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(n * sizeof(int));
                memcpy(CMSG_DATA(c), fds, n * sizeof(int));
        }
        if (len == 0 && n == 0) {
                (void)shutdown(sock, SHUT_WR);
                return false;
        }
        if (len == 0) {
                /* fds need at least one byte to ride on: a one-byte header. */
                iov.iov_len = 1;
                len = 1;
        }
        if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)len)
                abort();
        if (len < sizeof(msg.hdr)) {
                (void)shutdown(sock, SHUT_WR);
                return false;
        }
        return true;
}

static void setup(void)
{
        int fd;

        snprintf(share, sizeof(share), "%s", fz_make_scratch("sluice-fuzz-vu"));
        opts.guest_uid = opts.host_uid = FS_ID_UNMAPPED;
        opts.guest_gid = opts.host_gid = FS_ID_UNMAPPED;
        opts.queues = 2;
        opts.poll_us = 0;
        opts.tag_given = true;
        snprintf(opts.tag, sizeof(opts.tag), "fuzz");
        stats_init(&stats, 1 + opts.queues);
        fd = open(share, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fs_session_new(&opts, fd, &stats, &session) < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fz_input in = { data, size };
        struct vu_dev *d;
        int sv[2];

        if (!session)
                setup();
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
        if (vu_dev_new(sv[1], &opts, session, &stats, &d) < 0)
                abort();
        while (in.left > 0) {
                uint8_t op = fz_u8(&in);

                if (op & 0x80) {
                        if (n_kickable)
                                (void)eventfd_write(kickable[(op & 15) % n_kickable], 1);
                        continue;
                }
                if (!send_message(sv[0], op, &in)) {
                        (void)vu_dev_dispatch(d);
                        break;
                }
                if (vu_dev_dispatch(d) < 0)
                        break;   /* main.c drops the connection here */
                drain(sv[0]);
        }
        vu_dev_free(d);
        close(sv[0]);
        for (unsigned i = 0; i < n_held; i++)
                close(held[i]);
        n_held = n_kickable = 0;
        fz_check_fds(&runs, &fd_baseline);
        return 0;
}
