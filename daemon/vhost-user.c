/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vhost-user.c — see vhost-user.h.
 *
 * Ring life cycle (docs/interop/vhost-user.rst, "Starting and stopping
 * rings"): a ring is started once it has a kick fd, addresses and a size, and
 * is enabled (rings start enabled unless VHOST_USER_F_PROTOCOL_FEATURES was
 * negotiated, then SET_VRING_ENABLE enables them).  GET_VRING_BASE stops it.
 * Any change of the memory table stops every running ring, changes the table
 * and restarts them with freshly translated ring addresses, so queue threads
 * never see a table being changed under them.
 *
 * Stopping a ring is final for what it carried: its deferred requests (a
 * SETLKW waiting for a lock) are finished — replied and pushed — before the
 * stop is acknowledged, and the ring is detached from the virtqueue, so that
 * nothing is written to it or to its buffers afterwards, as the spec wants.
 *
 * Errors: a handler returns 0 or -errno.  -errno means the request failed
 * (REPLY_ACK reports it; the device carries on).  A frontend that breaks the
 * protocol (a malformed message, a ring that does not exist, an fd that is
 * not an eventfd…) goes through vu_broken(): logged once, every ring
 * stopped, every later message refused, and the caller drops the
 * connection.  The process is never at stake: it keeps answering signals
 * and the next frontend gets a fresh device. */
#include "vhost-user.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_config.h>
#include <linux/virtio_fs.h>
#include <linux/virtio_ring.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-store.h"
#include "guest-memory.h"
#include "log.h"
#include "resume-state.h"
#include "mount-namespace.h"
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
        uint16_t *resume_heads;  /* a resumed ring's in-flight heads (vu_dev_resume()) */
        unsigned n_resume;
};

struct vu_dev {
        int fd;
        const struct fs_options *opts;
        struct fs_session *session;
        struct stats *stats;
        uint64_t features;
        uint64_t protocol_features;
        bool owner;
        bool broken;             /* the frontend broke the protocol: serve nothing more */
        unsigned n_vrings;       /* hiprio + request queues */
        struct vu_vring *vrings;
        struct gm mem;
        /* --resume: the stored state (resume-state.h) and which fds the last
         * saved configuration names, so that an fd is removed from the store
         * only after the state stopped naming it. */
        struct rstate *rs;
        bool saved_mem[GM_MAX_REGIONS];          /* mem-<slot> is stored */
        /* per region slot: the slot whose stored fd it maps (rstate_region),
         * and the memory file it maps, to find a region of the same file */
        unsigned mem_fd_slot[GM_MAX_REGIONS];
        struct { dev_t dev; ino_t ino; } mem_file[GM_MAX_REGIONS];
        uint32_t saved_ring_flags[FS_MAX_QUEUES + 1];
        bool handed_over;        /* vu_dev_hand_over(): keep everything stored */
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

static int eventfd_check(int fd, char *what, size_t size);

/* ---- the stored state (--resume) ---- */

static void store_fd(struct vu_dev *d, const char *prefix, unsigned n, int fd)
{
        char name[FDSTORE_NAME_MAX + 1];

        if (!d->rs || fd < 0)
                return;
        fdstore_name(name, sizeof(name), prefix, n);
        (void)fdstore_replace(name, fd);
}

static void unstore_fd(const char *prefix, unsigned n)
{
        char name[FDSTORE_NAME_MAX + 1];

        fdstore_name(name, sizeof(name), prefix, n);
        (void)fdstore_remove(name);
}

static uint32_t ring_flags(const struct vu_vring *vr)
{
        return (vr->addr_set ? RSTATE_RING_ADDR : 0) | (vr->enabled ? RSTATE_RING_ENABLED : 0) |
               (vr->kick_fd >= 0 ? RSTATE_RING_KICK : 0) | (vr->call_fd >= 0 ? RSTATE_RING_CALL : 0) |
               (vr->err_fd >= 0 ? RSTATE_RING_ERR : 0);
}

/* Publishes the device's configuration, then removes from the store the
 * fds it no longer names (stores happen where an fd arrives, before). */
static void save_state(struct vu_dev *d)
{
        struct rstate_config *c;
        bool mem_now[GM_MAX_REGIONS] = { false };

        if (!d->rs)
                return;
        c = &d->rs->work;
        memset(c, 0, sizeof(*c));
        c->features = d->features;
        c->protocol_features = d->protocol_features;
        c->device = 1;
        c->owner = d->owner;
        c->n_rings = d->n_vrings;
        c->n_regions = d->mem.n_regions;
        for (unsigned i = 0; i < d->mem.n_regions; i++) {
                const struct gm_region *g = &d->mem.regions[i];

                c->regions[i] = (struct rstate_region){ .gpa = g->gpa, .size = g->size,
                                                        .uva = g->uva, .mmap_offset = g->mmap_offset,
                                                        .slot = g->slot,
                                                        .fd_slot = d->mem_fd_slot[g->slot] };
                mem_now[d->mem_fd_slot[g->slot]] = true;
        }
        for (unsigned i = 0; i < d->n_vrings; i++) {
                const struct vu_vring *vr = &d->vrings[i];

                c->rings[i] = (struct rstate_ring_config){
                        .num = vr->num, .flags = ring_flags(vr), .desc = vr->addr.desc_user_addr,
                        .avail = vr->addr.avail_user_addr, .used = vr->addr.used_user_addr };
        }
        rstate_commit(d->rs);
        for (unsigned i = 0; i < GM_MAX_REGIONS; i++) {
                if (d->saved_mem[i] && !mem_now[i])
                        unstore_fd("mem", i);
                d->saved_mem[i] = mem_now[i];
        }
        for (unsigned i = 0; i < d->n_vrings; i++) {
                uint32_t gone = d->saved_ring_flags[i] & ~c->rings[i].flags;

                if (gone & RSTATE_RING_KICK)
                        unstore_fd("kick", i);
                if (gone & RSTATE_RING_CALL)
                        unstore_fd("call", i);
                if (gone & RSTATE_RING_ERR)
                        unstore_fd("err", i);
                d->saved_ring_flags[i] = c->rings[i].flags;
        }
}

/* The lowest memory slot no region uses, as its own number or as the
 * name of the stored fd it maps (a stored mem-<slot> another region still
 * maps must not be replaced). */
static unsigned free_slot(const struct vu_dev *d)
{
        bool used[GM_MAX_REGIONS] = { false };
        unsigned s = 0;

        for (unsigned i = 0; i < d->mem.n_regions; i++) {
                used[d->mem.regions[i].slot] = true;
                used[d->mem_fd_slot[d->mem.regions[i].slot]] = true;
        }
        while (s < GM_MAX_REGIONS - 1 && used[s])
                s++;
        return s;
}

/* The fd slot of a region (other than `self`) that maps the same memory
 * file, or -1. */
static int same_file_slot(const struct vu_dev *d, unsigned self, dev_t dev, ino_t ino)
{
        for (unsigned i = 0; i < d->mem.n_regions; i++) {
                unsigned s = d->mem.regions[i].slot;

                if (s != self && d->mem_file[s].dev == dev && d->mem_file[s].ino == ino)
                        return (int)d->mem_fd_slot[s];
        }
        return -1;
}

/* Maps a region and gives it a slot; with --resume its fd is stored under
 * mem-<slot> before any state names it — unless a region of the same memory
 * file has its fd stored already: then the region names that one. */
static int add_region(struct vu_dev *d, const struct vu_memory_region *r, int fd)
{
        unsigned slot = free_slot(d);
        struct stat st = { 0 };
        int e = gm_add_region(&d->mem, r, fd), shared;

        if (e < 0)
                return e;
        d->mem.regions[d->mem.n_regions - 1].slot = slot;
        (void)fstat(fd, &st);   /* gm_add_region() did, and succeeded */
        d->mem_file[slot].dev = st.st_dev;
        d->mem_file[slot].ino = st.st_ino;
        shared = same_file_slot(d, slot, st.st_dev, st.st_ino);
        d->mem_fd_slot[slot] = shared >= 0 ? (unsigned)shared : slot;
        if (shared < 0)
                store_fd(d, "mem", slot, fd);
        return 0;
}

void vu_dev_set_state(struct vu_dev *d, struct rstate *rs)
{
        d->rs = rs;
        for (unsigned i = 0; i < d->n_vrings; i++)
                vq_set_state(&d->vrings[i].vq, rstate_ring(rs, i));
        save_state(d);
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
        /* Before the thread: the INIT it may serve at once offers what the ring carries. */
        fs_session_set_queue_size(d->session, i, vr->num);
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

/* The one place deferred requests are finished for a ring that stops or
 * whose memory goes away: their replies are written and pushed now, while
 * ring and memory are still ours.  ring < 0: every ring (memory changes).
 * The ring's own thread is stopped by the caller; the other rings keep
 * running (the FUSE layer finishes only this queue's requests), and the
 * ring index is the FUSE layer's queue index (0 = hiprio). */
static void finish_deferred(struct vu_dev *d, int ring)
{
        fs_session_finish_deferred(d->session, ring);
}

/* A ring stops for good (GET_VRING_BASE, a broken device): its thread is
 * joined, its deferred requests finished, and then it is detached, so that
 * nothing — no late completion either — writes to it any more. */
static void vring_stop_final(struct vu_dev *d, unsigned i)
{
        struct vu_vring *vr = &d->vrings[i];

        /* A ring that never ran has no deferred requests to finish. */
        if (vr->qt) {
                vring_stop(vr);
                finish_deferred(d, (int)i);
                qt_forget_deferred(vr->qt);
        }
        vq_detach(&vr->vq);
}

/* The broken path: every protocol violation ends here.  Returns -EPROTO,
 * for `return vu_broken(d, ...)`. */
static int vu_broken(struct vu_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int vu_broken(struct vu_dev *d, const char *fmt, ...)
{
        char why[256];
        va_list ap;

        if (d->broken)
                return -EPROTO;
        va_start(ap, fmt);
        (void)vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        log_error("vhost-user: %s; the frontend broke the protocol, the device stops serving it",
                  why);
        d->broken = true;
        for (unsigned i = 0; i < d->n_vrings; i++)
                vring_stop(&d->vrings[i]);
        finish_deferred(d, -1);
        for (unsigned i = 0; i < d->n_vrings; i++) {
                if (d->vrings[i].qt)
                        qt_forget_deferred(d->vrings[i].qt);
                vq_detach(&d->vrings[i].vq);
        }
        return -EPROTO;
}

static void vring_reset(struct vu_vring *vr)
{
        vring_stop(vr);
        if (vr->qt)
                qt_forget_deferred(vr->qt);
        vq_set_call_fd(&vr->vq, -1);
        vq_set_err_fd(&vr->vq, -1);
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

/* The frontend is gone for good: the state says "no device" first, then
 * the store lets go of every fd it named (the order of the protocol). */
static void unstore_device(struct vu_dev *d)
{
        rstate_clear_device(d->rs);
        for (unsigned i = 0; i < GM_MAX_REGIONS; i++)
                if (d->saved_mem[i])
                        unstore_fd("mem", i);
        for (unsigned i = 0; i < d->n_vrings; i++) {
                if (d->saved_ring_flags[i] & RSTATE_RING_KICK)
                        unstore_fd("kick", i);
                if (d->saved_ring_flags[i] & RSTATE_RING_CALL)
                        unstore_fd("call", i);
                if (d->saved_ring_flags[i] & RSTATE_RING_ERR)
                        unstore_fd("err", i);
        }
        (void)fdstore_remove("conn");
}

void vu_dev_hand_over(struct vu_dev *d)
{
        if (!d)
                return;
        for (unsigned i = 0; i < d->n_vrings; i++)
                vring_stop(&d->vrings[i]);
        /* A waiting SETLKW is answered (EINTR, as on a memory change): the
         * guest asks again of the successor; nothing stays in flight. */
        finish_deferred(d, -1);
        if (d->rs) {
                save_state(d);
                rstate_set_handed_over(d->rs, true);
        }
        d->handed_over = true;
}

void vu_dev_free(struct vu_dev *d)
{
        if (!d)
                return;
        /* The queue threads first: they write the rings' stored positions. */
        for (unsigned i = 0; i < d->n_vrings; i++)
                vring_stop(&d->vrings[i]);
        if (d->rs && !d->handed_over)
                unstore_device(d);
        /* The positions stay in the stored state for a successor (hand-over)
         * or were cleared above: the teardown below must not touch them. */
        for (unsigned i = 0; i < d->n_vrings; i++)
                vq_set_state(&d->vrings[i].vq, NULL);
        for (unsigned i = 0; i < d->n_vrings; i++)
                vring_reset(&d->vrings[i]);
        /* Before unmapping: deferred requests may still point into guest
         * memory.  A successor takes up the session's tables: not reset then. */
        if (!d->handed_over)
                fs_session_reset(d->session);
        for (unsigned i = 0; i < d->n_vrings; i++) {
                qt_free(d->vrings[i].qt);
                vq_destroy(&d->vrings[i].vq);
                free(d->vrings[i].resume_heads);
        }
        gm_clear(&d->mem);
        close_fd(&d->fd);
        free(d->vrings);
        free(d);
}

/* ---- resuming (--resume) ---- */

/* Takes the stored fd prefix-n for a state that names it: -EBADMSG with why
 * when the store does not have it (a torn state: stored after, or removed
 * before, the protocol allows). */
static int take_stored(const char *prefix, unsigned n, int *ret, char *why, size_t size)
{
        char name[FDSTORE_NAME_MAX + 1];
        int fd;

        fdstore_name(name, sizeof(name), prefix, n);
        fd = fdstore_take(name);
        if (fd < 0) {
                snprintf(why, size, "the stored state names fd '%s', which the store does not have",
                         name);
                return -EBADMSG;
        }
        *ret = fd;
        return 0;
}

static int take_ring_eventfd(const char *prefix, unsigned i, int *ret, char *why, size_t size)
{
        char what[96];
        int r = take_stored(prefix, i, ret, why, size);

        if (r < 0)
                return r;
        /* A previous worker a guest took over could have stored anything. */
        if (eventfd_check(*ret, what, sizeof(what)) < 0) {
                snprintf(why, size, "stored fd '%s-%u' is %s, not an eventfd", prefix, i, what);
                close_fd(ret);
                return -EBADMSG;
        }
        return 0;
}

/* Maps the stored memory regions, each from the stored fd it names (one
 * fd may serve several regions of one memory file). */
static int resume_memory(struct vu_dev *d, const struct rstate_config *c, char *why,
                         size_t why_size)
{
        int taken[GM_MAX_REGIONS];
        bool region_seen[GM_MAX_REGIONS] = { false };
        int r = 0;

        for (unsigned i = 0; i < GM_MAX_REGIONS; i++)
                taken[i] = -1;
        for (unsigned i = 0; i < c->n_regions && r == 0; i++) {
                const struct rstate_region *sr = &c->regions[i];
                struct vu_memory_region mr = { .guest_phys_addr = sr->gpa, .memory_size = sr->size,
                                               .user_addr = sr->uva,
                                               .mmap_offset = sr->mmap_offset };
                struct stat st = { 0 };

                if (region_seen[sr->slot]) {
                        snprintf(why, why_size, "the stored state names memory slot %u twice",
                                 sr->slot);
                        r = -EBADMSG;
                        break;
                }
                region_seen[sr->slot] = true;
                if (taken[sr->fd_slot] < 0) {
                        r = take_stored("mem", sr->fd_slot, &taken[sr->fd_slot], why, why_size);
                        if (r < 0)
                                break;
                }
                r = gm_add_region(&d->mem, &mr, taken[sr->fd_slot]);
                if (r < 0) {
                        snprintf(why, why_size, "cannot map stored memory slot %u: %s", sr->slot,
                                 strerror(-r));
                        r = -EBADMSG;
                        break;
                }
                (void)fstat(taken[sr->fd_slot], &st);
                d->mem.regions[d->mem.n_regions - 1].slot = sr->slot;
                d->mem_fd_slot[sr->slot] = sr->fd_slot;
                d->mem_file[sr->slot].dev = st.st_dev;
                d->mem_file[sr->slot].ino = st.st_ino;
                d->saved_mem[sr->fd_slot] = true;
        }
        /* the keeper keeps its copies; the mappings are ours */
        for (unsigned i = 0; i < GM_MAX_REGIONS; i++)
                close_fd(&taken[i]);
        return r;
}

int vu_dev_resume(struct vu_dev *d, struct rstate *rs, char *why, size_t why_size,
                  unsigned *ret_in_flight)
{
        const struct rstate_config *c = &rs->work;
        unsigned in_flight = 0;
        int r;

        *ret_in_flight = 0;
        if (c->n_rings != d->n_vrings) {
                snprintf(why, why_size, "the stored state has %u rings; this worker serves %u "
                         "(--queues changed)", c->n_rings, d->n_vrings);
                return -EBADMSG;
        }
        d->features = c->features & vu_device_features();
        d->protocol_features = c->protocol_features & vu_protocol_features(d->opts);
        d->owner = c->owner;
        r = resume_memory(d, c, why, why_size);
        if (r < 0)
                return r;
        d->rs = rs;
        for (unsigned i = 0; i < d->n_vrings; i++) {
                const struct rstate_ring_config *sc = &c->rings[i];
                struct vu_vring *vr = &d->vrings[i];
                struct rstate_ring *hot = rstate_ring(rs, i);
                uint64_t desc_size, avail_size, used_size;
                void *desc, *avail, *used;
                uint16_t stored_avail = hot->last_avail_idx;
                unsigned n = 0;

                vq_set_features(&vr->vq, d->features);
                vr->num = sc->num;
                vr->enabled = sc->flags & RSTATE_RING_ENABLED;
                vr->addr_set = sc->flags & RSTATE_RING_ADDR;
                vr->addr.index = i;
                vr->addr.desc_user_addr = sc->desc;
                vr->addr.avail_user_addr = sc->avail;
                vr->addr.used_user_addr = sc->used;
                if (((sc->flags & RSTATE_RING_KICK) &&
                     (r = take_ring_eventfd("kick", i, &vr->kick_fd, why, why_size)) < 0) ||
                    ((sc->flags & RSTATE_RING_CALL) &&
                     (r = take_ring_eventfd("call", i, &vr->call_fd, why, why_size)) < 0) ||
                    ((sc->flags & RSTATE_RING_ERR) &&
                     (r = take_ring_eventfd("err", i, &vr->err_fd, why, why_size)) < 0))
                        return r;
                d->saved_ring_flags[i] = ring_flags(vr);
                vq_set_call_fd(&vr->vq, vr->call_fd);
                vq_set_err_fd(&vr->vq, vr->err_fd);
                vq_set_base(&vr->vq, stored_avail);
                if (vr->num == 0 || !vr->addr_set) {
                        vq_set_state(&vr->vq, hot);
                        continue;
                }
                vq_ring_sizes(vr->num, &desc_size, &avail_size, &used_size);
                desc = gm_uva_to_host(&d->mem, sc->desc, desc_size);
                avail = gm_uva_to_host(&d->mem, sc->avail, avail_size);
                used = gm_uva_to_host(&d->mem, sc->used, used_size);
                /* Without the state attached: vq_set_rings() would write the
                 * guest's used index over the stored one vq_resume() needs. */
                if (vq_set_rings(&vr->vq, vr->num, desc, avail, used) < 0) {
                        snprintf(why, why_size, "ring %u's stored addresses are outside the stored "
                                 "memory", i);
                        return -EBADMSG;
                }
                vr->vq.rs = hot;
                free(vr->resume_heads);
                vr->resume_heads = malloc(VQ_MAX_SIZE * sizeof(uint16_t));
                if (!vr->resume_heads)
                        return -ENOMEM;
                if (vq_resume(&vr->vq, stored_avail, vr->resume_heads, &n) < 0) {
                        snprintf(why, why_size, "ring %u's stored positions do not match the "
                                 "guest's ring (a torn state)", i);
                        return -EBADMSG;
                }
                vr->n_resume = n;
                in_flight += n;
        }
        /* The store already holds every fd named here: commit as it is. */
        rstate_set_handed_over(rs, false);
        rstate_commit(rs);
        *ret_in_flight = in_flight;
        return 0;
}

void vu_dev_start_resumed(struct vu_dev *d, bool replay, unsigned *ret_replayed,
                          unsigned *ret_failed)
{
        *ret_replayed = *ret_failed = 0;
        for (unsigned i = 0; i < d->n_vrings; i++) {
                struct vu_vring *vr = &d->vrings[i];
                int r;

                if (vr->num == 0 || !vr->addr_set)
                        continue;
                if (!vr->qt) {
                        r = qt_new(d->session, &vr->vq, i, d->opts->poll_us, d->stats, &vr->qt);
                        if (r < 0) {
                                log_error("queue %u: cannot create its worker: %s", i, strerror(-r));
                                continue;
                        }
                }
                fs_session_set_queue_size(d->session, i, vr->num);
                /* Before the thread: the old requests are answered first, and
                 * every ring is signalled once. */
                qt_resume_in_flight(vr->qt, vr->resume_heads, vr->n_resume, replay, ret_replayed,
                                    ret_failed);
                vr->n_resume = 0;
                vring_try_start(d, i);
        }
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
        if ((size_t)n < sizeof(msg->hdr))
                return vu_broken(d, "truncated message header (%zd bytes)", n);
        if (mh.msg_flags & MSG_CTRUNC)
                return vu_broken(d, "too many file descriptors on one message");
        if ((msg->hdr.flags & VHOST_USER_VERSION_MASK) != VHOST_USER_VERSION)
                return vu_broken(d, "unsupported protocol version %u",
                                 msg->hdr.flags & VHOST_USER_VERSION_MASK);
        if (msg->hdr.size > sizeof(msg->payload))
                return vu_broken(d, "%s payload of %u bytes is larger than any message",
                                 request_name(msg->hdr.request), msg->hdr.size);
        if (msg->hdr.size == 0)
                return 0;
        do
                n = recv(d->fd, &msg->payload, msg->hdr.size, MSG_WAITALL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return -ECONNRESET;
        if ((size_t)n != msg->hdr.size)
                return vu_broken(d, "%s payload truncated", request_name(msg->hdr.request));
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
 * Return 0 or -errno: the request failed (REPLY_ACK says so).  Protocol
 * violations return vu_broken().  *replied is set by handlers that send
 * their own reply; for them a negative return is the socket failing. */

#define NEED(size_)                                                                \
        do {                                                                       \
                if (msg->hdr.size < (size_))                                       \
                        return vu_broken(d, "%s payload too short (%u bytes)",     \
                                         request_name(msg->hdr.request), msg->hdr.size); \
        } while (0)

/* The ring index, or vu_broken()'s -EPROTO. */
static int ring_index(struct vu_dev *d, const struct vu_msg *msg, uint32_t index)
{
        if (index >= d->n_vrings)
                return vu_broken(d, "%s for ring %u; this device has %u",
                                 request_name(msg->hdr.request), index, d->n_vrings);
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
            fds->n != m->nregions)
                return vu_broken(d, "SET_MEM_TABLE with %u regions, %u fds and %u bytes",
                                 m->nregions, fds->n, msg->hdr.size);
        stop_all(d, was_running);
        /* Waiting SETLKWs hold iovecs into the memory we are about to unmap. */
        finish_deferred(d, -1);
        gm_clear(&d->mem);
        for (unsigned i = 0; i < m->nregions; i++) {
                r = add_region(d, &m->regions[i], fds->fd[i]);
                if (r < 0) {
                        log_error("vhost-user: cannot map guest memory region %u: %s", i,
                                  strerror(-r));
                        gm_clear(&d->mem);
                        break;
                }
        }
        restart(d, was_running);
        return r;
}

static int handle_add_mem_reg(struct vu_dev *d, const struct vu_msg *msg, struct vu_fds *fds)
{
        bool was_running[FS_MAX_QUEUES + 1];
        int r;

        NEED(sizeof(struct vu_memory_single));
        if (fds->n != 1)
                return vu_broken(d, "ADD_MEM_REG with %u fds", fds->n);
        stop_all(d, was_running);
        r = add_region(d, &msg->payload.mem_reg.region, fds->fd[0]);
        if (r < 0)
                log_error("vhost-user: cannot map guest memory region: %s", strerror(-r));
        restart(d, was_running);
        return r;
}

static int handle_rem_mem_reg(struct vu_dev *d, const struct vu_msg *msg)
{
        bool was_running[FS_MAX_QUEUES + 1];
        int r;

        NEED(sizeof(struct vu_memory_single));
        stop_all(d, was_running);
        finish_deferred(d, -1);
        r = gm_remove_region(&d->mem, &msg->payload.mem_reg.region);
        if (r < 0)
                log_warning("vhost-user: REM_MEM_REG for a region we do not have");
        restart(d, was_running);
        return r;
}

static int handle_vring_num(struct vu_dev *d, const struct vu_msg *msg)
{
        const struct vu_vring_state *s = &msg->payload.state;
        int i;

        NEED(sizeof(*s));
        if ((i = ring_index(d, msg, s->index)) < 0)
                return i;
        if (s->num == 0 || s->num > VQ_MAX_SIZE || (s->num & (s->num - 1)))
                return vu_broken(d, "queue size %u for ring %d (a power of two up to %u)",
                                 s->num, i, VQ_MAX_SIZE);
        if (qt_running(d->vrings[i].qt)) {
                log_error("vhost-user: SET_VRING_NUM on running ring %d", i);
                return -EBUSY;
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
        if (s->num > UINT16_MAX)
                return vu_broken(d, "ring base %u does not fit 16 bits", s->num);
        if (qt_running(d->vrings[i].qt))
                return -EBUSY;
        vq_set_base(&d->vrings[i].vq, (uint16_t)s->num);
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
        /* Stopping the ring: the thread finishes its request and exits, the
         * deferred ones are finished, and only then does the frontend hear
         * that the ring is stopped. */
        vring_stop_final(d, (unsigned)i);
        close_fd(&vr->kick_fd);
        st.index = (uint32_t)i;
        st.num = vr->vq.last_avail_idx;
        log_debug("queue %d stopped at %u", i, st.num);
        *replied = true;
        return send_reply(d, msg, &st, sizeof(st));
}

static const char *file_type(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFREG: return "a regular file";
        case S_IFDIR: return "a directory";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFIFO: return "a pipe";
        case S_IFSOCK: return "a socket";
        case S_IFLNK: return "a symlink";
        default: return NULL;   /* an anonymous inode: eventfd, timerfd, epoll… */
        }
}

/* Kick, call and err fds must be eventfds: a pipe as call fd blocks a queue
 * thread in write() once full (holding the used-ring lock, so the whole
 * device hangs), /dev/zero as kick fd is always readable and spins one.
 * fstat() rules out every file type with a name; the /proc/self/fd link
 * tells an eventfd from other anonymous inodes (named by mountns_fd_path():
 * a root worker's "/" is the shared folder).  readlinkat() opens nothing,
 * so it works under Landlock too.  Then O_NONBLOCK: an eventfd whose counter
 * the frontend filled up would block write() as well.  (The flag is on the
 * frontend's open file too; QEMU creates its eventfds non-blocking anyway.)
 * Returns 0, or -EINVAL with what the fd is instead in `what`. */
static int eventfd_check(int fd, char *what, size_t size)
{
        char path[sizeof("/proc/self/fd/") + 12], link[64];
        struct stat st;
        const char *type;
        ssize_t n;
        int flags;

        if (fstat(fd, &st) < 0)
                return -errno;
        type = file_type(st.st_mode);
        if (type) {
                snprintf(what, size, "%s", type);
                return -EINVAL;
        }
        mountns_fd_path(path, sizeof(path), fd);
        n = readlinkat(AT_FDCWD, path, link, sizeof(link) - 1);
        if (n < 0) {
                snprintf(what, size, "unknown (cannot read %s: %s)", path, strerror(errno));
                return -EINVAL;
        }
        link[n] = '\0';
        if (strcmp(link, "anon_inode:[eventfd]") != 0) {
                snprintf(what, size, "%s", link);
                return -EINVAL;
        }
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0))
                return -errno;
        return 0;
}

/* A kick eventfd in EFD_SEMAPHORE mode hands out its count one read at a
 * time: a frontend that adds 2^62 keeps the queue thread busy for good.
 * Told apart without fdinfo (which 6.1 lacks): after adding 2, one read of
 * a plain eventfd returns all of it (≥ 2, with any kick of the guest's),
 * of a semaphore 1.  The read also eats pending kicks; harmless, as a ring
 * drains before it waits for the first one.  Called with the ring stopped,
 * so no queue thread reads the same file meanwhile.  Returns 0 or -EINVAL
 * with what is wrong in `what`. */
static int kick_fd_check(int fd, char *what, size_t size)
{
        eventfd_t v = 0;

        if (eventfd_write(fd, 2) < 0) {
                snprintf(what, size, "an eventfd that cannot take a kick (%s)", strerror(errno));
                return -EINVAL;
        }
        if (eventfd_read(fd, &v) < 0 || v < 2) {
                snprintf(what, size, "a semaphore eventfd (or one read elsewhere)");
                return -EINVAL;
        }
        return 0;
}

/* SET_VRING_KICK / CALL / ERR: u64 with the ring index and a "no fd" bit. */
static int handle_vring_fd(struct vu_dev *d, const struct vu_msg *msg, struct vu_fds *fds)
{
        struct vu_vring *vr;
        uint64_t v;
        int i, fd = -1;

        NEED(sizeof(uint64_t));
        v = msg->payload.u64;
        if (v & ~(uint64_t)(VHOST_USER_VRING_IDX_MASK | VHOST_USER_VRING_NOFD_MASK))
                return vu_broken(d, "%s with unknown bits 0x%llx", request_name(msg->hdr.request),
                                 (unsigned long long)v);
        if ((i = ring_index(d, msg, (uint32_t)(v & VHOST_USER_VRING_IDX_MASK))) < 0)
                return i;
        if (!(v & VHOST_USER_VRING_NOFD_MASK)) {
                char what[96];
                int r;

                if (fds->n != 1)
                        return vu_broken(d, "%s with %u fds", request_name(msg->hdr.request),
                                         fds->n);
                r = eventfd_check(fds->fd[0], what, sizeof(what));
                if (r == -EINVAL)
                        return vu_broken(d, "%s for ring %d: the fd is %s, not an eventfd",
                                         request_name(msg->hdr.request), i, what);
                if (r < 0)
                        return vu_broken(d, "%s for ring %d: cannot check the fd: %s",
                                         request_name(msg->hdr.request), i, strerror(-r));
                fd = fds_take(fds, 0);
        }
        vr = &d->vrings[i];
        /* Stored before the state names it (vu_dev_dispatch() saves it). */
        store_fd(d, msg->hdr.request == VHOST_USER_SET_VRING_KICK   ? "kick"
                    : msg->hdr.request == VHOST_USER_SET_VRING_CALL ? "call"
                                                                    : "err",
                 (unsigned)i, fd);
        switch (msg->hdr.request) {
        case VHOST_USER_SET_VRING_KICK:
                vring_stop(vr);
                if (fd >= 0) {
                        char what[96];

                        if (kick_fd_check(fd, what, sizeof(what)) < 0) {
                                close_fd(&fd);
                                return vu_broken(d, "SET_VRING_KICK for ring %d: the fd is %s",
                                                 i, what);
                        }
                }
                close_fd(&vr->kick_fd);
                vr->kick_fd = fd;
                if (fd < 0)
                        log_warning("queue %d: no kick fd (polling mode is not supported)", i);
                /* A kick fd is what starts a ring (with its other parts in place). */
                vring_try_start(d, i);
                break;
        case VHOST_USER_SET_VRING_CALL:
                vq_set_call_fd(&vr->vq, fd);
                close_fd(&vr->call_fd);
                vr->call_fd = fd;
                break;
        default:
                vq_set_err_fd(&vr->vq, fd);
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
        if (s->num > 1)
                return vu_broken(d, "SET_VRING_ENABLE %u", s->num);
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
                 * leave the frontend waiting: better to drop it than hang it.
                 * (We offer neither INFLIGHT_SHMFD nor STATUS.) */
                if (msg->hdr.request == VHOST_USER_GET_INFLIGHT_FD ||
                    msg->hdr.request == VHOST_USER_GET_STATUS)
                        return vu_broken(d, "%s without the protocol feature it needs",
                                         request_name(msg->hdr.request));
                return -ENOSYS;
        }
}

int vu_dev_dispatch(struct vu_dev *d)
{
        struct vu_msg msg;
        struct vu_fds fds = { .n = 0 };
        bool replied = false;
        int r;

        if (d->broken)
                return -EPROTO;
        r = recv_msg(d, &msg, &fds);
        if (r < 0) {
                fds_close(&fds);
                if (r != -ECONNRESET && !d->broken)
                        log_error("vhost-user: receiving from the frontend failed: %s", strerror(-r));
                return r;
        }
        /* A region of an unsealable file shrank and a queue tripped over it. */
        if (gm_lost(&d->mem)) {
                fds_close(&fds);
                return vu_broken(d, "a guest memory region shrank under the device");
        }
        if (msg.hdr.flags & VHOST_USER_REPLY_MASK) {
                fds_close(&fds);
                return vu_broken(d, "frontend sent a reply (%s) as a request",
                                 request_name(msg.hdr.request));
        }
        log_debug("vhost-user: %s (size %u, %u fds)", request_name(msg.hdr.request), msg.hdr.size,
                  fds.n);
        r = handle(d, &msg, &fds, &replied);
        fds_close(&fds);
        save_state(d);
        if (d->broken)
                return -EPROTO;
        if (replied)
                return r;   /* < 0 only when the reply could not be sent */
        if (r < 0)
                log_warning("vhost-user: %s failed: %s", request_name(msg.hdr.request), strerror(-r));
        if (msg.hdr.flags & VHOST_USER_NEED_REPLY_MASK)
                return reply_u64(d, &msg, r == 0 ? 0 : 1);
        return 0;
}
