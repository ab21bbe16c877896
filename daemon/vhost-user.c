/* vhost-user.c — see vhost-user.h.
 *
 * Ring life cycle (docs/interop/vhost-user.rst, "Starting and stopping
 * rings"): a ring is started once it has a kick fd, addresses and a size, and
 * is enabled (rings start enabled unless VHOST_USER_F_PROTOCOL_FEATURES was
 * negotiated, then SET_VRING_ENABLE enables them).  GET_VRING_BASE stops it.
 * Any change of the memory table stops every running ring, changes the table
 * and restarts them with freshly translated ring addresses, so queue threads
 * never see a table being changed under them. */
#include "vhost-user.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_fs.h>
#include <linux/virtio_ring.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest-memory.h"
#include "log.h"
#include "queue-thread.h"
#include "vhost-user-proto.h"
#include "virtqueue.h"

struct vu_vring {
        struct vq vq;
        struct queue_thread *qt;
        unsigned num;
        struct vu_vring_addr addr;
        bool addr_set;
        bool enabled;
        int kick_fd, call_fd, err_fd;
};

struct vu_dev {
        int fd;
        const struct fs_options *opts;
        struct fs_session *session;
        struct stats *stats;
        uint64_t features;
        uint64_t protocol_features;
        bool owner;
        unsigned n_vrings;       /* hiprio + request queues */
        struct vu_vring *vrings;
        struct gm mem;
};

/* Received fds; every one we do not keep is closed when the message is done. */
struct vu_fds {
        int fd[VHOST_USER_MAX_FDS];
        unsigned n;
};

static const char *const request_names[VHOST_USER_MAX] = {
        [VHOST_USER_GET_FEATURES] = "GET_FEATURES",
        [VHOST_USER_SET_FEATURES] = "SET_FEATURES",
        [VHOST_USER_SET_OWNER] = "SET_OWNER",
        [VHOST_USER_RESET_OWNER] = "RESET_OWNER",
        [VHOST_USER_SET_MEM_TABLE] = "SET_MEM_TABLE",
        [VHOST_USER_SET_LOG_BASE] = "SET_LOG_BASE",
        [VHOST_USER_SET_LOG_FD] = "SET_LOG_FD",
        [VHOST_USER_SET_VRING_NUM] = "SET_VRING_NUM",
        [VHOST_USER_SET_VRING_ADDR] = "SET_VRING_ADDR",
        [VHOST_USER_SET_VRING_BASE] = "SET_VRING_BASE",
        [VHOST_USER_GET_VRING_BASE] = "GET_VRING_BASE",
        [VHOST_USER_SET_VRING_KICK] = "SET_VRING_KICK",
        [VHOST_USER_SET_VRING_CALL] = "SET_VRING_CALL",
        [VHOST_USER_SET_VRING_ERR] = "SET_VRING_ERR",
        [VHOST_USER_GET_PROTOCOL_FEATURES] = "GET_PROTOCOL_FEATURES",
        [VHOST_USER_SET_PROTOCOL_FEATURES] = "SET_PROTOCOL_FEATURES",
        [VHOST_USER_GET_QUEUE_NUM] = "GET_QUEUE_NUM",
        [VHOST_USER_SET_VRING_ENABLE] = "SET_VRING_ENABLE",
        [VHOST_USER_SET_BACKEND_REQ_FD] = "SET_BACKEND_REQ_FD",
        [VHOST_USER_GET_CONFIG] = "GET_CONFIG",
        [VHOST_USER_SET_CONFIG] = "SET_CONFIG",
        [VHOST_USER_GET_INFLIGHT_FD] = "GET_INFLIGHT_FD",
        [VHOST_USER_SET_INFLIGHT_FD] = "SET_INFLIGHT_FD",
        [VHOST_USER_RESET_DEVICE] = "RESET_DEVICE",
        [VHOST_USER_GET_MAX_MEM_SLOTS] = "GET_MAX_MEM_SLOTS",
        [VHOST_USER_ADD_MEM_REG] = "ADD_MEM_REG",
        [VHOST_USER_REM_MEM_REG] = "REM_MEM_REG",
        [VHOST_USER_SET_STATUS] = "SET_STATUS",
        [VHOST_USER_GET_STATUS] = "GET_STATUS",
};

static const char *request_name(uint32_t r)
{
        return r < VHOST_USER_MAX && request_names[r] ? request_names[r] : "UNKNOWN";
}

uint64_t vu_device_features(void)
{
        return (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_INDIRECT_DESC) |
               (1ull << VIRTIO_RING_F_EVENT_IDX) | (1ull << VHOST_USER_F_PROTOCOL_FEATURES);
}

uint64_t vu_protocol_features(const struct fs_options *opts)
{
        uint64_t f = (1ull << VHOST_USER_PROTOCOL_F_MQ) | (1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
                     (1ull << VHOST_USER_PROTOCOL_F_RESET_DEVICE) |
                     (1ull << VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS);

        /* The config space (tag, queue count) only when --tag was given, as
         * the Rust virtiofsd does: QEMU's vhost-user-fs-pci takes the tag from
         * its own property and warns on every start when a backend offers it. */
        if (opts->tag_given)
                f |= 1ull << VHOST_USER_PROTOCOL_F_CONFIG;
        return f;
}

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static void fds_close(struct vu_fds *fds)
{
        for (unsigned i = 0; i < fds->n; i++)
                close_fd(&fds->fd[i]);
        fds->n = 0;
}

/* Takes fd i out of the set (so fds_close() leaves it open). */
static int fds_take(struct vu_fds *fds, unsigned i)
{
        int fd = fds->fd[i];

        fds->fd[i] = -1;
        return fd;
}

int vu_dev_new(int conn_fd, const struct fs_options *opts, struct fs_session *session,
               struct stats *stats, struct vu_dev **ret)
{
        struct vu_dev *d;

        d = calloc(1, sizeof(*d));
        if (!d) {
                close(conn_fd);
                return -ENOMEM;
        }
        d->fd = conn_fd;
        d->opts = opts;
        d->session = session;
        d->stats = stats;
        d->n_vrings = 1 + opts->queues;
        gm_init(&d->mem);
        d->vrings = calloc(d->n_vrings, sizeof(*d->vrings));
        if (!d->vrings) {
                close(conn_fd);
                free(d);
                return -ENOMEM;
        }
        for (unsigned i = 0; i < d->n_vrings; i++) {
                struct vu_vring *vr = &d->vrings[i];

                vq_init(&vr->vq, &d->mem, i);
                vr->kick_fd = vr->call_fd = vr->err_fd = -1;
        }
        *ret = d;
        return 0;
}

int vu_dev_fd(struct vu_dev *d)
{
        return d->fd;
}

/* ---- ring start/stop ---- */

static bool has_feature(struct vu_dev *d, unsigned bit)
{
        return d->features & (1ull << bit);
}

static void vring_stop(struct vu_vring *vr)
{
        if (vr->qt)
                qt_stop(vr->qt);
}

static void vring_try_start(struct vu_dev *d, unsigned i)
{
        struct vu_vring *vr = &d->vrings[i];
        uint64_t desc_size, avail_size, used_size;
        void *desc, *avail, *used;
        int r;

        if (qt_running(vr->qt) || vr->kick_fd < 0 || !vr->addr_set || vr->num == 0 || !vr->enabled)
                return;
        vq_ring_sizes(vr->num, &desc_size, &avail_size, &used_size);
        desc = gm_uva_to_host(&d->mem, vr->addr.desc_user_addr, desc_size);
        avail = gm_uva_to_host(&d->mem, vr->addr.avail_user_addr, avail_size);
        used = gm_uva_to_host(&d->mem, vr->addr.used_user_addr, used_size);
        r = vq_set_rings(&vr->vq, vr->num, desc, avail, used);
        if (r < 0) {
                vq_set_broken(&vr->vq, "ring addresses outside guest memory or misaligned");
                return;
        }
        if (!vr->qt) {
                r = qt_new(d->session, &vr->vq, i, d->opts->poll_us, d->stats, &vr->qt);
                if (r < 0) {
                        log_error("queue %u: cannot create its worker: %s", i, strerror(-r));
                        return;
                }
        }
        r = qt_start(vr->qt, vr->kick_fd);
        if (r < 0)
                log_error("queue %u: cannot start its thread: %s", i, strerror(-r));
        else
                log_debug("queue %u started: size %u, base %u", i, vr->num, vr->vq.last_avail_idx);
}

/* Stops every running ring; returns a bitmap-ish mask of which ran (index < 65). */
static void stop_all(struct vu_dev *d, bool *was_running)
{
        for (unsigned i = 0; i < d->n_vrings; i++) {
                was_running[i] = qt_running(d->vrings[i].qt);
                vring_stop(&d->vrings[i]);
        }
}

static void restart(struct vu_dev *d, const bool *was_running)
{
        for (unsigned i = 0; i < d->n_vrings; i++)
                if (was_running[i])
                        vring_try_start(d, i);
}

static void vring_reset(struct vu_vring *vr)
{
        vring_stop(vr);
        if (vr->qt)
                qt_forget_deferred(vr->qt);
        pthread_mutex_lock(&vr->vq.used_lock);
        vr->vq.call_fd = -1;
        vr->vq.err_fd = -1;
        pthread_mutex_unlock(&vr->vq.used_lock);
        vq_reset(&vr->vq);
        close_fd(&vr->kick_fd);
        close_fd(&vr->call_fd);
        close_fd(&vr->err_fd);
        vr->num = 0;
        vr->addr_set = false;
        vr->enabled = false;
}

static void reset_device(struct vu_dev *d)
{
        for (unsigned i = 0; i < d->n_vrings; i++)
                vring_reset(&d->vrings[i]);
        fs_session_reset(d->session);
        d->features = 0;
}

void vu_dev_free(struct vu_dev *d)
{
        if (!d)
                return;
        for (unsigned i = 0; i < d->n_vrings; i++)
                vring_reset(&d->vrings[i]);
        /* Before unmapping: deferred requests may still point into guest memory. */
        fs_session_reset(d->session);
        for (unsigned i = 0; i < d->n_vrings; i++) {
                qt_free(d->vrings[i].qt);
                vq_destroy(&d->vrings[i].vq);
        }
        gm_clear(&d->mem);
        close_fd(&d->fd);
        free(d->vrings);
        free(d);
}

/* ---- socket I/O ---- */

static int recv_msg(struct vu_dev *d, struct vu_msg *msg, struct vu_fds *fds)
{
        char control[CMSG_SPACE(VHOST_USER_MAX_FDS * sizeof(int))];
        struct iovec iov = { .iov_base = &msg->hdr, .iov_len = sizeof(msg->hdr) };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1,
                .msg_control = control, .msg_controllen = sizeof(control),
        };
        ssize_t n;

        fds->n = 0;
        do
                n = recvmsg(d->fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        /* Collect fds first, so that every path below closes them. */
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                unsigned count;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                count = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                for (unsigned i = 0; i < count && fds->n < VHOST_USER_MAX_FDS; i++)
                        memcpy(&fds->fd[fds->n++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        }
        if (n == 0)
                return -ECONNRESET;
        if ((size_t)n < sizeof(msg->hdr)) {
                log_error("vhost-user: truncated message header (%zd bytes)", n);
                return -EPROTO;
        }
        if (mh.msg_flags & MSG_CTRUNC) {
                log_error("vhost-user: too many file descriptors on one message");
                return -EPROTO;
        }
        if ((msg->hdr.flags & VHOST_USER_VERSION_MASK) != VHOST_USER_VERSION) {
                log_error("vhost-user: unsupported protocol version %u",
                          msg->hdr.flags & VHOST_USER_VERSION_MASK);
                return -EPROTO;
        }
        if (msg->hdr.size > sizeof(msg->payload)) {
                log_error("vhost-user: %s payload of %u bytes is larger than any message",
                          request_name(msg->hdr.request), msg->hdr.size);
                return -EPROTO;
        }
        if (msg->hdr.size == 0)
                return 0;
        do
                n = recv(d->fd, &msg->payload, msg->hdr.size, MSG_WAITALL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t)n != msg->hdr.size) {
                log_error("vhost-user: %s payload truncated", request_name(msg->hdr.request));
                return n == 0 ? -ECONNRESET : -EPROTO;
        }
        return 0;
}

static int send_reply(struct vu_dev *d, const struct vu_msg *req, const void *payload,
                      uint32_t size)
{
        struct vu_msg reply;
        size_t total = sizeof(reply.hdr) + size;
        ssize_t n;

        reply.hdr.request = req->hdr.request;
        reply.hdr.flags = VHOST_USER_VERSION | VHOST_USER_REPLY_MASK;
        reply.hdr.size = size;
        memcpy(&reply.payload, payload, size);
        do
                n = send(d->fd, &reply, total, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return (size_t)n == total ? 0 : -EIO;
}

static int reply_u64(struct vu_dev *d, const struct vu_msg *req, uint64_t v)
{
        return send_reply(d, req, &v, sizeof(v));
}

/* ---- message handlers ----
 * Return 0 (success), a positive errno (the request failed: REPLY_ACK says so)
 * or a negative errno (protocol violation: drop the connection).  *replied is
 * set by handlers that send their own reply. */

#define NEED(size_)                                                             \
        do {                                                                    \
                if (msg->hdr.size < (size_)) {                                  \
                        log_error("vhost-user: %s payload too short (%u bytes)", \
                                  request_name(msg->hdr.request), msg->hdr.size); \
                        return -EPROTO;                                         \
                }                                                               \
        } while (0)

static int ring_index(struct vu_dev *d, const struct vu_msg *msg, uint32_t index)
{
        if (index >= d->n_vrings) {
                log_error("vhost-user: %s for ring %u; this device has %u",
                          request_name(msg->hdr.request), index, d->n_vrings);
                return -EPROTO;
        }
        return (int)index;
}

static int handle_set_features(struct vu_dev *d, const struct vu_msg *msg)
{
        bool was_running[FS_MAX_QUEUES + 1];
        uint64_t f;

        NEED(sizeof(uint64_t));
        f = msg->payload.u64;
        if (f & ~vu_device_features())
                log_warning("vhost-user: frontend set features 0x%llx we did not offer; ignored",
                            (unsigned long long)(f & ~vu_device_features()));
        stop_all(d, was_running);
        d->features = f & vu_device_features();
        for (unsigned i = 0; i < d->n_vrings; i++) {
                vq_set_features(&d->vrings[i].vq, d->features);
                /* Without protocol features there is no SET_VRING_ENABLE. */
                if (!has_feature(d, VHOST_USER_F_PROTOCOL_FEATURES))
                        d->vrings[i].enabled = true;
        }
        restart(d, was_running);
        return 0;
}

static int handle_set_mem_table(struct vu_dev *d, const struct vu_msg *msg, struct vu_fds *fds)
{
        bool was_running[FS_MAX_QUEUES + 1];
        const struct vu_memory *m = &msg->payload.memory;
        int r = 0;

        NEED(offsetof(struct vu_memory, regions));
        if (m->nregions > VHOST_USER_MEMORY_BASELINE_NREGIONS ||
            msg->hdr.size < offsetof(struct vu_memory, regions) +
                                    m->nregions * sizeof(struct vu_memory_region) ||
            fds->n != m->nregions) {
                log_error("vhost-user: SET_MEM_TABLE with %u regions, %u fds and %u bytes",
                          m->nregions, fds->n, msg->hdr.size);
                return -EPROTO;
        }
        stop_all(d, was_running);
        /* Waiting SETLKWs hold iovecs into the memory we are about to unmap. */
        fs_session_interrupt_deferred(d->session);
        gm_clear(&d->mem);
        for (unsigned i = 0; i < m->nregions; i++) {
                r = gm_add_region(&d->mem, &m->regions[i], fds->fd[i]);
                if (r < 0) {
                        log_error("vhost-user: cannot map guest memory region %u: %s", i,
                                  strerror(-r));
                        gm_clear(&d->mem);
                        break;
                }
        }
        restart(d, was_running);
        return r < 0 ? -r : 0;
}

static int handle_add_mem_reg(struct vu_dev *d, const struct vu_msg *msg, struct vu_fds *fds)
{
        bool was_running[FS_MAX_QUEUES + 1];
        int r;

        NEED(sizeof(struct vu_memory_single));
        if (fds->n != 1) {
                log_error("vhost-user: ADD_MEM_REG with %u fds", fds->n);
                return -EPROTO;
        }
        stop_all(d, was_running);
        r = gm_add_region(&d->mem, &msg->payload.mem_reg.region, fds->fd[0]);
        if (r < 0)
                log_error("vhost-user: cannot map guest memory region: %s", strerror(-r));
        restart(d, was_running);
        return r < 0 ? -r : 0;
}

static int handle_rem_mem_reg(struct vu_dev *d, const struct vu_msg *msg)
{
        bool was_running[FS_MAX_QUEUES + 1];
        int r;

        NEED(sizeof(struct vu_memory_single));
        stop_all(d, was_running);
        fs_session_interrupt_deferred(d->session);
        r = gm_remove_region(&d->mem, &msg->payload.mem_reg.region);
        if (r < 0)
                log_warning("vhost-user: REM_MEM_REG for a region we do not have");
        restart(d, was_running);
        return r < 0 ? -r : 0;
}

static int handle_vring_num(struct vu_dev *d, const struct vu_msg *msg)
{
        const struct vu_vring_state *s = &msg->payload.state;
        int i;

        NEED(sizeof(*s));
        if ((i = ring_index(d, msg, s->index)) < 0)
                return i;
        if (s->num == 0 || s->num > VQ_MAX_SIZE || (s->num & (s->num - 1))) {
                log_error("vhost-user: queue size %u for ring %d (a power of two up to %u)",
                          s->num, i, VQ_MAX_SIZE);
                return -EPROTO;
        }
        if (qt_running(d->vrings[i].qt)) {
                log_error("vhost-user: SET_VRING_NUM on running ring %d", i);
                return EBUSY;
        }
        d->vrings[i].num = s->num;
        return 0;
}

static int handle_vring_addr(struct vu_dev *d, const struct vu_msg *msg)
{
        const struct vu_vring_addr *a = &msg->payload.addr;
        struct vu_vring *vr;
        bool was_running;
        int i;

        NEED(sizeof(*a));
        if ((i = ring_index(d, msg, a->index)) < 0)
                return i;
        vr = &d->vrings[i];
        was_running = qt_running(vr->qt);
        vring_stop(vr);
        /* Rings at new addresses belong to a new driver instance: completions
         * of requests popped from the old rings must not land in these. */
        if (vr->qt && vr->addr_set &&
            (vr->addr.desc_user_addr != a->desc_user_addr ||
             vr->addr.avail_user_addr != a->avail_user_addr ||
             vr->addr.used_user_addr != a->used_user_addr))
                qt_forget_deferred(vr->qt);
        vr->addr = *a;
        vr->addr_set = true;
        if (was_running)
                vring_try_start(d, i);
        return 0;
}

static int handle_vring_base(struct vu_dev *d, const struct vu_msg *msg)
{
        const struct vu_vring_state *s = &msg->payload.state;
        int i;

        NEED(sizeof(*s));
        if ((i = ring_index(d, msg, s->index)) < 0)
                return i;
        if (s->num > UINT16_MAX) {
                log_error("vhost-user: ring base %u does not fit 16 bits", s->num);
                return -EPROTO;
        }
        if (qt_running(d->vrings[i].qt))
                return EBUSY;
        d->vrings[i].vq.last_avail_idx = (uint16_t)s->num;
        return 0;
}

static int handle_get_vring_base(struct vu_dev *d, const struct vu_msg *msg, bool *replied)
{
        const struct vu_vring_state *s = &msg->payload.state;
        struct vu_vring_state st;
        struct vu_vring *vr;
        int i;

        NEED(sizeof(*s));
        if ((i = ring_index(d, msg, s->index)) < 0)
                return i;
        vr = &d->vrings[i];
        /* Stopping the ring: the thread finishes its request and exits. */
        vring_stop(vr);
        close_fd(&vr->kick_fd);
        st.index = (uint32_t)i;
        st.num = vr->vq.last_avail_idx;
        log_debug("queue %d stopped at %u", i, st.num);
        *replied = true;
        return send_reply(d, msg, &st, sizeof(st));
}

/* SET_VRING_KICK / CALL / ERR: u64 with the ring index and a "no fd" bit. */
static int handle_vring_fd(struct vu_dev *d, const struct vu_msg *msg, struct vu_fds *fds)
{
        struct vu_vring *vr;
        uint64_t v;
        int i, fd = -1;

        NEED(sizeof(uint64_t));
        v = msg->payload.u64;
        if (v & ~(uint64_t)(VHOST_USER_VRING_IDX_MASK | VHOST_USER_VRING_NOFD_MASK)) {
                log_error("vhost-user: %s with unknown bits 0x%llx", request_name(msg->hdr.request),
                          (unsigned long long)v);
                return -EPROTO;
        }
        if ((i = ring_index(d, msg, (uint32_t)(v & VHOST_USER_VRING_IDX_MASK))) < 0)
                return i;
        if (!(v & VHOST_USER_VRING_NOFD_MASK)) {
                if (fds->n != 1) {
                        log_error("vhost-user: %s with %u fds", request_name(msg->hdr.request),
                                  fds->n);
                        return -EPROTO;
                }
                fd = fds_take(fds, 0);
        }
        vr = &d->vrings[i];
        switch (msg->hdr.request) {
        case VHOST_USER_SET_VRING_KICK:
                vring_stop(vr);
                close_fd(&vr->kick_fd);
                vr->kick_fd = fd;
                if (fd < 0)
                        log_warning("queue %d: no kick fd (polling mode is not supported)", i);
                /* A kick fd is what starts a ring (with its other parts in place). */
                vring_try_start(d, i);
                break;
        case VHOST_USER_SET_VRING_CALL:
                pthread_mutex_lock(&vr->vq.used_lock);
                vr->vq.call_fd = fd;
                pthread_mutex_unlock(&vr->vq.used_lock);
                close_fd(&vr->call_fd);
                vr->call_fd = fd;
                break;
        default:
                pthread_mutex_lock(&vr->vq.used_lock);
                vr->vq.err_fd = fd;
                pthread_mutex_unlock(&vr->vq.used_lock);
                close_fd(&vr->err_fd);
                vr->err_fd = fd;
                break;
        }
        return 0;
}

static int handle_vring_enable(struct vu_dev *d, const struct vu_msg *msg)
{
        const struct vu_vring_state *s = &msg->payload.state;
        int i;

        NEED(sizeof(*s));
        if ((i = ring_index(d, msg, s->index)) < 0)
                return i;
        if (s->num > 1) {
                log_error("vhost-user: SET_VRING_ENABLE %u", s->num);
                return -EPROTO;
        }
        d->vrings[i].enabled = s->num;
        if (s->num)
                vring_try_start(d, i);
        else
                vring_stop(&d->vrings[i]);
        return 0;
}

static int handle_get_config(struct vu_dev *d, const struct vu_msg *msg, bool *replied)
{
        const struct vu_config *req = &msg->payload.config;
        struct virtio_fs_config cfg;
        struct vu_config reply;
        uint32_t size = 0;

        NEED(offsetof(struct vu_config, region));
        memset(&cfg, 0, sizeof(cfg));
        memcpy(cfg.tag, d->opts->tag, strnlen(d->opts->tag, sizeof(cfg.tag)));
        cfg.num_request_queues = d->opts->queues;   /* little-endian host */
        memset(&reply, 0, sizeof(reply));
        reply.offset = req->offset;
        reply.flags = req->flags;
        /* Out of range: answer with size 0, which the frontend takes as failure. */
        if (req->size <= VHOST_USER_MAX_CONFIG_SIZE && req->offset <= sizeof(cfg) &&
            req->size <= sizeof(cfg) - req->offset) {
                size = req->size;
                memcpy(reply.region, (const uint8_t *)&cfg + req->offset, size);
        } else {
                log_warning("vhost-user: GET_CONFIG of %u bytes at %u is outside the config space",
                            req->size, req->offset);
        }
        reply.size = size;
        *replied = true;
        return send_reply(d, msg, &reply, (uint32_t)offsetof(struct vu_config, region) + size);
}

static int handle(struct vu_dev *d, const struct vu_msg *msg, struct vu_fds *fds, bool *replied)
{
        int r;

        switch (msg->hdr.request) {
        case VHOST_USER_GET_FEATURES:
                *replied = true;
                return reply_u64(d, msg, vu_device_features());
        case VHOST_USER_SET_FEATURES:
                return handle_set_features(d, msg);
        case VHOST_USER_GET_PROTOCOL_FEATURES:
                *replied = true;
                return reply_u64(d, msg, vu_protocol_features(d->opts));
        case VHOST_USER_SET_PROTOCOL_FEATURES:
                NEED(sizeof(uint64_t));
                d->protocol_features = msg->payload.u64 & vu_protocol_features(d->opts);
                return 0;
        case VHOST_USER_SET_OWNER:
                d->owner = true;
                return 0;
        case VHOST_USER_RESET_OWNER:
        case VHOST_USER_RESET_DEVICE:
                log_info("vhost-user: frontend reset the device");
                reset_device(d);
                return 0;
        case VHOST_USER_GET_QUEUE_NUM:
                *replied = true;
                return reply_u64(d, msg, d->n_vrings);
        case VHOST_USER_GET_MAX_MEM_SLOTS:
                *replied = true;
                return reply_u64(d, msg, GM_MAX_REGIONS);
        case VHOST_USER_SET_MEM_TABLE:
                return handle_set_mem_table(d, msg, fds);
        case VHOST_USER_ADD_MEM_REG:
                return handle_add_mem_reg(d, msg, fds);
        case VHOST_USER_REM_MEM_REG:
                return handle_rem_mem_reg(d, msg);
        case VHOST_USER_SET_VRING_NUM:
                return handle_vring_num(d, msg);
        case VHOST_USER_SET_VRING_ADDR:
                return handle_vring_addr(d, msg);
        case VHOST_USER_SET_VRING_BASE:
                return handle_vring_base(d, msg);
        case VHOST_USER_GET_VRING_BASE:
                return handle_get_vring_base(d, msg, replied);
        case VHOST_USER_SET_VRING_KICK:
        case VHOST_USER_SET_VRING_CALL:
        case VHOST_USER_SET_VRING_ERR:
                return handle_vring_fd(d, msg, fds);
        case VHOST_USER_SET_VRING_ENABLE:
                return handle_vring_enable(d, msg);
        case VHOST_USER_GET_CONFIG:
                return handle_get_config(d, msg, replied);
        default:
                r = msg->hdr.request;
                log_warning("vhost-user: unsupported request %s (%d)", request_name((uint32_t)r), r);
                /* Requests with a reply of their own that we do not know would
                 * leave the frontend waiting: better to drop it than hang it. */
                if (msg->hdr.request == VHOST_USER_GET_INFLIGHT_FD ||
                    msg->hdr.request == VHOST_USER_GET_STATUS)
                        return -EPROTO;
                return ENOSYS;
        }
}

int vu_dev_dispatch(struct vu_dev *d)
{
        struct vu_msg msg;
        struct vu_fds fds = { .n = 0 };
        bool replied = false;
        int r;

        r = recv_msg(d, &msg, &fds);
        if (r < 0) {
                fds_close(&fds);
                if (r != -ECONNRESET && r != -EPROTO)
                        log_error("vhost-user: receiving from the frontend failed: %s", strerror(-r));
                return r;
        }
        if (msg.hdr.flags & VHOST_USER_REPLY_MASK) {
                fds_close(&fds);
                log_error("vhost-user: frontend sent a reply (%s) as a request",
                          request_name(msg.hdr.request));
                return -EPROTO;
        }
        log_debug("vhost-user: %s (size %u, %u fds)", request_name(msg.hdr.request), msg.hdr.size,
                  fds.n);
        r = handle(d, &msg, &fds, &replied);
        fds_close(&fds);
        if (r < 0)
                return r;
        if (r > 0)
                log_warning("vhost-user: %s failed: %s", request_name(msg.hdr.request), strerror(r));
        if (!replied && (msg.hdr.flags & VHOST_USER_NEED_REPLY_MASK)) {
                int s = reply_u64(d, &msg, r == 0 ? 0 : 1);

                if (s < 0)
                        return s;
        }
        return 0;
}
