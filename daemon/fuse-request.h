/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuse-request.h — one FUSE request in guest memory: decoding and replying.
 *
 * The request is the device-readable iovecs of a descriptor chain, the reply
 * goes into the device-writable ones; both point into guest memory, which the
 * guest may change under us at any moment.  So freq_decode() copies the
 * header and the (small) arguments once into the worker's scratch buffer and
 * every later check is made on that copy; only WRITE payloads stay in guest
 * memory, for pwritev().  Every length is checked against what the iovecs
 * really hold, and replies never exceed the writable space. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/fuse.h>

#define FREQ_NAME_MAX        255
#define FREQ_PATH_MAX        4096           /* SYMLINK targets */
#define FREQ_XATTR_SIZE_MAX  65536          /* XATTR_SIZE_MAX / XATTR_LIST_MAX */
/* READ and WRITE payloads, in pages of FREQ_PAGE_SIZE.  Every guest is
 * offered FREQ_MAX_PAGES_DEFAULT (1 MiB, what Linux takes: it caps a request
 * at fs.fuse.max_pages_limit = 256 pages and at its queue size - 4 whatever
 * we offer).  A guest that asks FUSE_MAX_PAGES on a larger queue is offered
 * more, up to FREQ_MAX_PAGES_LIMIT: virtio-win's viofs puts every page of a
 * request in its own descriptor, at most VQ_MAX_SIZE (1024) of them in one
 * indirect table, header pages included (fuse-dispatch.c's op_init()). */
#define FREQ_PAGE_SIZE        4096u
#define FREQ_MAX_PAGES_DEFAULT 256u
#define FREQ_MAX_PAGES_LIMIT  1020u          /* 1024 descriptors - 4 for the headers */
#define FREQ_MAX_WRITE        (FREQ_MAX_PAGES_DEFAULT * FREQ_PAGE_SIZE)  /* 1 MiB */
#define FREQ_MAX_WRITE_LIMIT  (FREQ_MAX_PAGES_LIMIT * FREQ_PAGE_SIZE)    /* 3.98 MiB */
/* Arguments of any request but WRITE fit here: the largest is SETXATTR
 * (header, name, 64 KiB value); BATCH_FORGET is read in pieces. */
#define FREQ_SCRATCH_SIZE    (FREQ_XATTR_SIZE_MAX + 2 * 4096)
/* iovecs per preadv()/pwritev() call: IOV_MAX.  A READ or WRITE whose guest
 * buffers take more (a 4 KiB descriptor per page of a FREQ_MAX_WRITE_LIMIT
 * request, some split where guest memory regions meet) is done in several
 * calls (pt-file.c). */
#define FREQ_MAX_IOV         1024

struct stats;

/* Finishes a deferred request in the transport: pushes `len` bytes as the used
 * length and notifies the guest (fs-session.h's fs_complete_fn). */
typedef void (*freq_complete_fn)(void *token, size_t len, void *userdata);

/* Where a request came from and how to finish it later: set by the
 * dispatcher, carried along by freq_defer(). */
struct freq_origin {
        freq_complete_fn complete;   /* NULL: this transport cannot defer */
        void *complete_data;
        void *token;                 /* the transport's handle of the descriptor chain */
        int queue_index;
        struct stats *stats;
        uint64_t start_usec;
};

struct freq {
        struct fuse_in_header in;    /* copy; in.len checked against in_size */
        const uint8_t *arg;          /* copy of the arguments (scratch) */
        size_t arg_len;              /* bytes in arg (for WRITE only the fuse_write_in) */
        size_t body_len;             /* in.len - sizeof(in): arguments in guest memory */

        const struct iovec *in_iov;
        unsigned in_cnt;
        size_t in_size;
        const struct iovec *out_iov;
        unsigned out_cnt;
        size_t out_size;

        size_t reply_len;            /* bytes written into out (the used length) */
        int error;                   /* the reply's error (≤ 0), for stats and trace */
        bool replied;
        bool deferred;               /* freq_defer() took it over */
        /* How names are read and written for this request (pt-name.h),
         * read once by the dispatcher: a live switch never splits a request. */
        unsigned name_modes;

        /* Worker scratch the handler may use (NULL in a deferred copy). */
        uint8_t *buf;                /* FREQ_XATTR_SIZE_MAX bytes: xattr values, readlink, dirents */
        struct iovec *iov;           /* FREQ_MAX_IOV iovecs: READ/WRITE slices of guest buffers */
        struct freq_origin origin;
};

enum {
        FREQ_DECODE_OK = 0,
        FREQ_DECODE_NO_REPLY,        /* too short for a header: drop it */
        FREQ_DECODE_ERROR,           /* bad lengths: answer with r->error */
};

/* Decodes the request; `scratch` (FREQ_SCRATCH_SIZE bytes) receives the arguments. */
int freq_decode(struct freq *r, uint8_t *scratch, size_t scratch_size,
                const struct iovec *in, unsigned in_cnt,
                const struct iovec *out, unsigned out_cnt);

/* The fixed-size argument at the start of the arguments, or NULL when the
 * request is shorter (the caller replies -EINVAL). */
const void *freq_arg(const struct freq *r, size_t size);

/* A NUL-terminated string at *pos in the arguments, at most max bytes before
 * the NUL; advances *pos past the NUL.  Returns its length or -EINVAL/-ENAMETOOLONG. */
int freq_string(const struct freq *r, size_t *pos, size_t max, const char **ret);
/* The same for a path component the guest wants to name: also checked with
 * confine_check_name() ('/', ".", ".." and empty names are -EINVAL). */
int freq_name(const struct freq *r, size_t *pos, const char **ret);

/* FUSE 7.39's FUSE_CREATE_SUPP_GROUP: a node-creating request may end with
 * an extension area (in.total_extlen 8-byte units, after the arguments)
 * holding a fuse_ext_header of type FREQ_EXT_GROUPS and the creator's
 * supplementary group(s) that matter for the new node.  Stores up to `max`
 * of them in ret; returns how many (0: no such extension), -EINVAL for an
 * area that does not parse.  Reads the copied arguments only. */
#define FREQ_EXT_GROUPS 32
int freq_ext_groups(const struct freq *r, uint32_t *ret, size_t max);

/* Copies `len` bytes at offset `off` of the request (the whole request, header
 * included) into dst; returns the number copied (less at the end). */
size_t freq_copy_in(const struct freq *r, size_t off, void *dst, size_t len);

/* Fills dst with iovecs covering [off, off+len) of the request resp. the reply
 * buffer; returns the iovec count and stores the bytes covered in *covered. */
unsigned freq_in_slice(const struct freq *r, size_t off, size_t len,
                       struct iovec *dst, unsigned max, size_t *covered);
unsigned freq_out_slice(const struct freq *r, size_t off, size_t len,
                        struct iovec *dst, unsigned max, size_t *covered);

/* Writes `len` bytes at offset off of the reply buffer; false when they do not fit. */
bool freq_put(struct freq *r, size_t off, const void *src, size_t len);

/* Replies: a header plus `len` bytes of arg.  When that does not fit the
 * writable space the reply becomes -EIO (header only); when not even a header
 * fits, nothing is written.  Returns r->reply_len. */
size_t freq_reply(struct freq *r, const void *arg, size_t len);
size_t freq_reply_error(struct freq *r, int error);
/* The payload (len bytes after the header) is already in place: writes the header. */
size_t freq_reply_payload(struct freq *r, size_t len);
/* FORGET, BATCH_FORGET, INTERRUPT: no reply at all. */
size_t freq_reply_none(struct freq *r);

/* Stats and trace of a finished request (the dispatcher's and freq_finish()'s last step). */
void freq_done(const struct freq *r);

/* Deferral, as libfuse's fuse_req_t outlives its handler: the request is
 * answered later, from another thread.  freq_defer() copies what the reply
 * needs (header, reply iovecs, origin) into *ret and marks r deferred; the
 * handler then returns 0 without replying, and the transport keeps the
 * descriptor chain until the completion runs.  -EDEADLK when the transport
 * cannot finish requests later, -ENOMEM. */
int freq_defer(struct freq *r, struct freq **ret);
/* Replies `error` (< 0) or, with 0, an empty success unless a reply was
 * written on d already (freq_reply() & co. work on a deferred copy); counts
 * and traces the request, runs the transport's completion and frees d.
 * Thread-safe per request. */
void freq_finish(struct freq *d, int error);
/* Frees a deferred request without a reply (the session is going away and the
 * transport forgets its chains). */
void freq_drop(struct freq *d);
