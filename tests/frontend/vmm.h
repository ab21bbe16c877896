/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vmm.h — a small test VMM: the driver (frontend) side of vhost-user-fs.
 *
 * It does what QEMU and the guest's virtio-fs driver do, and nothing of
 * sluice-fs: it creates guest memory in a memfd, connects to a backend's
 * vhost-user socket, negotiates features, hands over the memory table and
 * sets up split virtqueues (0 = hiprio, 1..N = request queues) in that
 * memory; then it lays FUSE requests out as descriptor chains, kicks, and
 * waits — with a timeout, so a hung backend fails a test instead of hanging
 * it — for the used ring.
 *
 * Guest memory is deliberately awkward: two regions of one memfd, the second
 * at a non-zero mmap offset and a guest-physical address above 4 GiB, with a
 * hole between them.  Rings live in region 0, request buffers in region 1.
 *
 * Plain C (no GLib) so that tools and tests can both use it.  Functions return
 * 0 or -errno; transport failures also print one line "vmm: …" on stderr. */
#pragma once

#include <linux/fuse.h>
#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define VMM_MAX_QUEUES   9          /* hiprio + up to 8 request queues */
#define VMM_MAX_SEGS     8          /* readable segments of one FUSE request after the header */

struct vmm;

struct vmm_config {
        size_t mem_size;            /* guest memory; default 128 MiB (two halves = two regions) */
        unsigned request_queues;    /* default 1 */
        unsigned queue_size;        /* default 1024, like QEMU's queue-size=1024 */
        bool add_mem_reg;           /* give memory with ADD_MEM_REG instead of SET_MEM_TABLE */
        bool no_event_idx;          /* do not negotiate VIRTIO_RING_F_EVENT_IDX */
        int timeout_ms;             /* per request and per vhost-user reply; default 10000 */
        int connect_timeout_ms;     /* retrying ECONNREFUSED/ENOENT; default 5000 */
};

/* Connects to the backend at socket_path, negotiates and starts every
 * queue.  cfg may be NULL for the defaults. */
int vmm_connect(const char *socket_path, const struct vmm_config *cfg, struct vmm **ret);
/* Same over an already connected socket (ownership passes). */
int vmm_connect_fd(int sock, const struct vmm_config *cfg, struct vmm **ret);
/* Stops the queues with GET_VRING_BASE (when the connection still works),
 * closes the socket, frees guest memory.  NULL is fine. */
void vmm_free(struct vmm *v);
/* Closes the socket at once, without stopping the queues (an abrupt disconnect). */
void vmm_drop(struct vmm *v);

uint64_t vmm_features(const struct vmm *v);           /* negotiated virtio features */
uint64_t vmm_protocol_features(const struct vmm *v);  /* negotiated protocol features */
unsigned vmm_backend_queue_num(const struct vmm *v);  /* GET_QUEUE_NUM, 0 without MQ */
struct virtio_fs_config;
/* GET_CONFIG of the whole virtio-fs config space; -EOPNOTSUPP when the
 * backend did not offer VHOST_USER_PROTOCOL_F_CONFIG. */
int vmm_get_config(struct vmm *v, struct virtio_fs_config *ret);
unsigned vmm_request_queues(const struct vmm *v);
unsigned vmm_queue_size(const struct vmm *v);
int vmm_socket(const struct vmm *v);

/* ---- guest memory ---- */
struct vmm_region { uint64_t gpa; uint64_t size; uint8_t *host; };
void vmm_region(const struct vmm *v, unsigned i, struct vmm_region *ret);  /* i = 0 or 1 */
/* Allocates len bytes (16-byte aligned) in region 1.  The area wraps around:
 * fine for the few requests a test has in flight at once. */
void *vmm_alloc(struct vmm *v, size_t len, uint64_t *ret_gpa);
/* Host pointer for [gpa, gpa+len) or NULL when it is not inside one region. */
void *vmm_gpa_to_host(const struct vmm *v, uint64_t gpa, size_t len);

/* Adds a third region (its own memfd) with ADD_MEM_REG and removes it with
 * REM_MEM_REG; both need CONFIGURE_MEM_SLOTS. */
int vmm_add_extra_region(struct vmm *v, uint64_t gpa, size_t size);
int vmm_remove_extra_region(struct vmm *v);
/* The same with knobs, for a frontend that lies about its memory. */
struct vmm_extra_region {
        uint64_t gpa;
        size_t size;            /* the size declared to the backend (and mapped here) */
        size_t file_size;       /* the memfd's real size; 0 = size */
        bool sealable;          /* create the memfd with MFD_ALLOW_SEALING */
        bool set_mem_table;     /* send all three regions with SET_MEM_TABLE instead */
};
/* On failure (a nack is -EIO) the extra region is gone again. */
int vmm_add_extra_region_ex(struct vmm *v, const struct vmm_extra_region *x);
int vmm_extra_region_fd(const struct vmm *v);   /* -1 when there is none */

/* ---- raw virtqueue access (for malformed-input tests) ---- */
struct vring_desc *vmm_desc_table(struct vmm *v, unsigned q);
/* Takes n free descriptor slots of queue q (not chained: the caller fills
 * addr/len/flags/next). Returns -ENOSPC when not enough are free. */
int vmm_desc_get(struct vmm *v, unsigned q, unsigned n, uint16_t *ids);
/* Puts head in the avail ring and kicks.  The chain is owned by the vmm
 * until it completes (vmm_wait_used). */
int vmm_publish(struct vmm *v, unsigned q, uint16_t head, unsigned ndesc, const uint16_t *ids);
/* Writes value into the next avail ring slot and moves avail->idx by
 * idx_step (normally 1), with no checks and no bookkeeping: for feeding the
 * backend heads out of range or an index that jumps.  Kicks. */
int vmm_publish_raw(struct vmm *v, unsigned q, uint16_t value, uint16_t idx_step);
/* Waits for head to come back in the used ring.  -ETIMEDOUT after
 * timeout_ms (< 0: the configured timeout); -EPROTO for a bogus used entry. */
int vmm_wait_used(struct vmm *v, unsigned q, uint16_t head, uint32_t *ret_len, int timeout_ms);
/* True once the backend closed the vhost-user connection (polls it). */
bool vmm_backend_hung_up(struct vmm *v);
/* Waits up to timeout_ms for the backend to close the connection. */
bool vmm_wait_hung_up(struct vmm *v, int timeout_ms);

/* ---- hostile frontend knobs ---- */
enum vmm_vring_fd { VMM_VRING_KICK = 12, VMM_VRING_CALL = 13, VMM_VRING_ERR = 14 };
/* Sends SET_VRING_KICK/CALL/ERR for queue q with fd (any fd; the vmm keeps
 * its own); 0 when acked, -EIO when nacked, -ECONNRESET when the backend
 * dropped the connection instead. */
int vmm_set_vring_fd(struct vmm *v, enum vmm_vring_fd which, unsigned q, int fd);
/* GET_VRING_BASE: stops queue q in the backend; *ret_base is where it stopped. */
int vmm_get_vring_base(struct vmm *v, unsigned q, uint32_t *ret_base);
/* The used ring of queue q and its size in bytes (flags, idx, ring, avail_event). */
struct vring_used *vmm_used_ring(struct vmm *v, unsigned q, size_t *ret_size);
/* avail->idx as published so far on queue q. */
uint16_t vmm_avail_idx(const struct vmm *v, unsigned q);

/* ---- fast path: request slots, batches, counted kicks (benchmarks) ----
 *
 * vmm_op allocates, copies and kicks once per request: right for tests, but
 * its own cost would hide the backend's.  A slot is a request whose guest
 * memory (header, arguments, reply, indirect table) is allocated once; the
 * caller writes the arguments in place, adds slots to the avail ring, and
 * publishes them with one kick per batch.  All state lives in the queue: one
 * thread may drive each request queue at the same time (set-up and
 * vmm_slots_new happen before the threads start).  Slots and vmm_op requests
 * may share a queue, but only one of the two may be in flight at a time. */

struct vmm_slot {
        /* guest memory, fixed for the slot's life */
        struct fuse_in_header *in;      /* the request header ... */
        void *args;                     /* ... and in_cap argument bytes after it */
        size_t in_cap;
        struct fuse_out_header *out_hdr;
        void *out;                      /* out_cap reply bytes after the out header */
        size_t out_cap;
        void *user;                     /* the caller's */
        /* result of the last request, set by vmm_queue_reap */
        uint32_t used_len;
        /* internal */
        unsigned queue;
        bool in_flight;
        uint16_t head;
        unsigned ndesc;                 /* descriptors of the prepared chain */
        bool indirect;
        struct vring_desc *table;       /* the prepared chain (guest memory: may be indirect) */
        uint64_t table_gpa;
        unsigned table_cap;
        uint64_t in_gpa, out_hdr_gpa;
        size_t out_size;                /* writable bytes after the out header, as prepared */
};

struct vmm_slot_config {
        size_t in_cap;                  /* argument bytes after the header */
        size_t out_cap;                 /* reply bytes after the out header */
        size_t page_at;                 /* args + page_at is 4 KiB aligned (WRITE payloads
                                         * sit in pages, as in a guest's page cache) */
        unsigned max_desc;              /* longest chain; default VMM_MAX_SEGS * 4 + 4 */
};

/* Allocates n slots for request queue q (guest memory taken for good from the
 * top of region 1, out of vmm_alloc's reach).  *ret is an array of n; freed
 * by vmm_free. -ENOMEM when region 1 cannot spare it. */
int vmm_slots_new(struct vmm *v, unsigned q, unsigned n, const struct vmm_slot_config *cfg,
                  struct vmm_slot **ret);

struct vmm_layout {
        bool indirect;                  /* the chain in the slot's indirect table */
        size_t chunk;                   /* split every segment into descriptors of ≤ chunk bytes */
};

/* Writes the header and lays the chain out the way Linux does: the header,
 * one readable segment per seg_len (consecutive in args), the out header,
 * out_size writable bytes.  Nothing is published.  layout may be NULL.
 * -E2BIG when it does not fit the slot. */
int vmm_slot_prepare(struct vmm *v, struct vmm_slot *s, uint32_t opcode, uint64_t nodeid,
                     const size_t *seg_len, unsigned nseg, size_t out_size,
                     const struct vmm_layout *layout);
/* Puts a prepared slot in the avail ring without publishing it (-ENOSPC when
 * the queue has too few free descriptors). */
int vmm_slot_add(struct vmm *v, struct vmm_slot *s);
/* Publishes everything added since the last call (one avail->idx store) and
 * kicks, unless the mode honours suppression and the backend asked for none. */
int vmm_queue_kick(struct vmm *v, unsigned q);
/* Waits (spinning or on the call fd, see vmm_queue_mode) until at least one
 * slot has completed, then hands back up to max completed slots.  Returns how
 * many, -ETIMEDOUT after timeout_ms (< 0: the configured timeout), -EPROTO
 * for a used entry that names no slot in flight. */
int vmm_queue_reap(struct vmm *v, unsigned q, struct vmm_slot **ret, unsigned max, int timeout_ms);
/* Checks a completed slot's reply (length, unique, error range): the FUSE
 * error (0 or -errno), or -EPROTO.  *ret_out_len: payload bytes. */
int vmm_slot_result(const struct vmm_slot *s, size_t *ret_out_len);

struct vmm_queue_mode {
        bool honour_suppression;        /* skip a kick the backend said it does not need
                                         * (avail_event with EVENT_IDX, else VRING_USED_F_NO_NOTIFY) */
        bool spin;                      /* wait by reading used->idx, with interrupts off */
        unsigned spin_us;               /* without spin: read used->idx this long before
                                         * sleeping on the call fd (interrupts stay on) */
};
void vmm_queue_set_mode(struct vmm *v, unsigned q, const struct vmm_queue_mode *mode);

struct vmm_queue_counters {
        uint64_t kicks;                 /* eventfd writes to the kick fd */
        uint64_t kicks_avoided;         /* batches published without one (suppressed) */
        uint64_t calls;                 /* call fd wake-ups read while waiting */
        uint64_t completions;           /* used entries consumed by vmm_queue_reap */
};
void vmm_queue_counters(const struct vmm *v, unsigned q, struct vmm_queue_counters *ret);

/* ---- FUSE requests ---- */
struct vmm_op {
        /* request */
        unsigned queue;                     /* default (0) means queue 1; set hiprio for queue 0 */
        bool hiprio;
        uint32_t opcode;
        uint64_t nodeid;
        struct iovec arg[VMM_MAX_SEGS];     /* readable segments after fuse_in_header */
        unsigned arg_cnt;
        void *out;                          /* reply payload after fuse_out_header */
        size_t out_size;
        bool no_reply;                      /* FORGET & co: no writable descriptors */
        /* layout knobs */
        bool indirect;                      /* the whole chain in one indirect table */
        size_t chunk;                       /* split every segment into descriptors of ≤ chunk bytes */
        uint32_t uid, gid, pid;             /* fuse_in_header credentials; 0 = the test's own */
        uint16_t total_extlen;              /* fuse_in_header: 8-byte units of extensions (last args) */
        /* results */
        uint64_t unique;
        int error;                          /* fuse_out_header.error: 0 or -errno */
        size_t out_len;                     /* payload bytes received */
        uint32_t used_len;                  /* length in the used ring */
        /* internal */
        uint16_t head;
        unsigned ndesc;
        uint16_t ids[VMM_MAX_SEGS * 4 + 4];
        uint64_t out_hdr_gpa;
        uint64_t out_gpa;
};

/* Threads: one thread per queue may run vmm_op requests at the same time
 * (connect, vmm_set_creds and region changes happen before they start).
 * Sends op and waits for its reply.  Returns 0 when a reply came back (then
 * op->error holds the FUSE error), -errno on a transport failure. */
int vmm_op_run(struct vmm *v, struct vmm_op *op);
/* The two halves, for requests whose reply comes later (SETLKW). */
int vmm_op_submit(struct vmm *v, struct vmm_op *op);
int vmm_op_wait(struct vmm *v, struct vmm_op *op, int timeout_ms);

/* One request with up to three argument segments; returns the FUSE error
 * (0 or -errno), or a transport error (-ETIMEDOUT, -EPROTO, -ECONNRESET…). */
int vmm_call(struct vmm *v, uint32_t opcode, uint64_t nodeid,
             const void *a1, size_t l1, const void *a2, size_t l2, const void *a3, size_t l3,
             void *out, size_t out_size, size_t *ret_out_len);

/* ---- typed FUSE helpers (all return 0 or -errno) ---- */
#define VMM_ROOT FUSE_ROOT_ID

int vmm_init(struct vmm *v, struct fuse_init_out *ret);   /* FUSE 7.38 INIT, as Linux 6.1 sends it */
int vmm_destroy(struct vmm *v);
int vmm_lookup(struct vmm *v, uint64_t parent, const char *name, struct fuse_entry_out *ret);
int vmm_forget(struct vmm *v, uint64_t nodeid, uint64_t nlookup);
int vmm_getattr(struct vmm *v, uint64_t nodeid, struct fuse_attr *ret);
int vmm_setattr(struct vmm *v, uint64_t nodeid, const struct fuse_setattr_in *in, struct fuse_attr *ret);
int vmm_readlink(struct vmm *v, uint64_t nodeid, char *buf, size_t size);  /* NUL-terminates */
int vmm_symlink(struct vmm *v, uint64_t parent, const char *name, const char *target,
                struct fuse_entry_out *ret);
int vmm_mknod(struct vmm *v, uint64_t parent, const char *name, uint32_t mode, uint32_t rdev,
              struct fuse_entry_out *ret);
int vmm_mkdir(struct vmm *v, uint64_t parent, const char *name, uint32_t mode,
              struct fuse_entry_out *ret);
int vmm_unlink(struct vmm *v, uint64_t parent, const char *name);
int vmm_rmdir(struct vmm *v, uint64_t parent, const char *name);
/* flags == 0 sends RENAME, otherwise RENAME2 */
int vmm_rename(struct vmm *v, uint64_t olddir, const char *oldname, uint64_t newdir,
               const char *newname, uint32_t flags);
int vmm_link(struct vmm *v, uint64_t nodeid, uint64_t newparent, const char *newname,
             struct fuse_entry_out *ret);
int vmm_open(struct vmm *v, uint64_t nodeid, uint32_t flags, uint64_t *ret_fh);
int vmm_create(struct vmm *v, uint64_t parent, const char *name, uint32_t flags, uint32_t mode,
               struct fuse_entry_out *ret_entry, uint64_t *ret_fh);
/* READ into buf (size bytes max); *ret_len gets what came back. */
int vmm_read(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, void *buf,
             size_t size, size_t *ret_len);
int vmm_write(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, const void *buf,
              size_t size, uint32_t *ret_written);
int vmm_flush(struct vmm *v, uint64_t nodeid, uint64_t fh);
int vmm_release(struct vmm *v, uint64_t nodeid, uint64_t fh);
int vmm_fsync(struct vmm *v, uint64_t nodeid, uint64_t fh, bool datasync);
int vmm_opendir(struct vmm *v, uint64_t nodeid, uint64_t *ret_fh);
int vmm_releasedir(struct vmm *v, uint64_t nodeid, uint64_t fh);
int vmm_fsyncdir(struct vmm *v, uint64_t nodeid, uint64_t fh);
/* READDIR (plus = false) or READDIRPLUS; raw reply bytes. */
int vmm_readdir(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, bool plus,
                void *buf, size_t size, size_t *ret_len);
/* Calls fn for every entry of a READDIR/READDIRPLUS reply buffer; returns
 * -EPROTO when the buffer is malformed.  entry is NULL for plain READDIR. */
typedef void (*vmm_dirent_fn)(const struct fuse_dirent *d, const char *name,
                              const struct fuse_entry_out *entry, void *userdata);
int vmm_dirents_foreach(const void *buf, size_t len, bool plus, vmm_dirent_fn fn, void *userdata);
int vmm_statfs(struct vmm *v, uint64_t nodeid, struct fuse_kstatfs *ret);
int vmm_access(struct vmm *v, uint64_t nodeid, uint32_t mask);
int vmm_setxattr(struct vmm *v, uint64_t nodeid, const char *name, const void *value,
                 size_t size, uint32_t flags);
/* size == 0 asks for the size (returned in *ret_len). */
int vmm_getxattr(struct vmm *v, uint64_t nodeid, const char *name, void *buf, size_t size,
                 size_t *ret_len);
int vmm_listxattr(struct vmm *v, uint64_t nodeid, void *buf, size_t size, size_t *ret_len);
int vmm_removexattr(struct vmm *v, uint64_t nodeid, const char *name);
int vmm_getlk(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t owner,
              const struct fuse_file_lock *lk, struct fuse_file_lock *ret);
int vmm_setlk(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t owner,
              const struct fuse_file_lock *lk, bool wait, bool flock);
int vmm_fallocate(struct vmm *v, uint64_t nodeid, uint64_t fh, uint32_t mode, uint64_t offset,
                  uint64_t length);
int vmm_lseek(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, uint32_t whence,
              uint64_t *ret_offset);
int vmm_copy_file_range(struct vmm *v, uint64_t node_in, uint64_t fh_in, uint64_t off_in,
                        uint64_t node_out, uint64_t fh_out, uint64_t off_out, uint64_t len,
                        uint32_t *ret_copied);
int vmm_syncfs(struct vmm *v);
int vmm_tmpfile(struct vmm *v, uint64_t parent, uint32_t flags, uint32_t mode,
                struct fuse_entry_out *ret_entry, uint64_t *ret_fh);

/* Looks up a '/'-separated path from the root, one LOOKUP per component. */
int vmm_lookup_path(struct vmm *v, const char *path, struct fuse_entry_out *ret);

/* The FUSE flags the init reply granted (0 before vmm_init). */
uint32_t vmm_init_flags(const struct vmm *v);
void vmm_set_init_flags(struct vmm *v, uint32_t flags);  /* for vmm_init() */
/* The uid, gid and pid (0: the test's own) in the header of every later
 * request whose vmm_op leaves them 0: a guest process of another user. */
void vmm_set_creds(struct vmm *v, uint32_t uid, uint32_t gid, uint32_t pid);
void vmm_clear_creds(struct vmm *v);
