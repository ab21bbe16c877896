/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuse-request.c — decoding FUSE requests from iovecs, writing replies into them. */
#include "fuse-request.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"
#include "log.h"
#include "stats.h"

static inline size_t iov_total(const struct iovec *iov, unsigned cnt)
{
        size_t total = 0;

        for (unsigned i = 0; i < cnt; i++)
                if (__builtin_add_overflow(total, iov[i].iov_len, &total))
                        return SIZE_MAX;
        return total;
}

/* Copies len bytes between buf and the iovecs' bytes from offset off on, in
 * the direction asked; returns how many bytes the iovecs held for it. */
static size_t iov_copy(const struct iovec *iov, unsigned cnt, size_t off, void *buf, size_t len,
                       bool into_iov)
{
        size_t done = 0;

        for (unsigned i = 0; i < cnt && done < len; i++) {
                uint8_t *seg;
                size_t n;

                if (off >= iov[i].iov_len) {
                        off -= iov[i].iov_len;
                        continue;
                }
                seg = (uint8_t *)iov[i].iov_base + off;
                n = iov[i].iov_len - off;
                if (n > len - done)
                        n = len - done;
                if (into_iov)
                        memcpy(seg, (const uint8_t *)buf + done, n);
                else
                        memcpy((uint8_t *)buf + done, seg, n);
                done += n;
                off = 0;
        }
        return done;
}

/* Where [off, off+len) lies whole in one of the first two iovecs (a Linux
 * guest's header and argument, or reply header and payload, each in their
 * own): its address there, else NULL (the caller walks the whole list). */
static inline uint8_t *iov_span(const struct iovec *iov, unsigned cnt, size_t off, size_t len)
{
        if (cnt > 0) {
                if (off < iov[0].iov_len)
                        return len <= iov[0].iov_len - off ? (uint8_t *)iov[0].iov_base + off : NULL;
                off -= iov[0].iov_len;
                if (cnt > 1 && off < iov[1].iov_len && len <= iov[1].iov_len - off)
                        return (uint8_t *)iov[1].iov_base + off;
        }
        return NULL;
}

/* Inline, so that a copy of a constant size (a header) is a few moves. */
static inline size_t iov_copy_from(const struct iovec *iov, unsigned cnt, size_t off, void *dst,
                                   size_t len)
{
        const uint8_t *p = iov_span(iov, cnt, off, len);

        if (__builtin_expect(p != NULL, 1)) {
                memcpy(dst, p, len);
                return len;
        }
        return iov_copy(iov, cnt, off, dst, len, false);
}

static inline size_t iov_copy_to(const struct iovec *iov, unsigned cnt, size_t off, const void *src,
                                 size_t len)
{
        uint8_t *p = iov_span(iov, cnt, off, len);

        if (__builtin_expect(p != NULL, 1)) {
                memcpy(p, src, len);
                return len;
        }
        return iov_copy(iov, cnt, off, (void *)src, len, true);
}

static unsigned iov_slice(const struct iovec *iov, unsigned cnt, size_t off, size_t len,
                          struct iovec *dst, unsigned max, size_t *covered)
{
        unsigned n = 0, i = 0;
        size_t done = 0;

        /* Skip the iovecs before off (a WRITE's header and fuse_write_in)... */
        while (i < cnt && off >= iov[i].iov_len)
                off -= iov[i++].iov_len;
        /* ...then one slice per iovec; a small READ or WRITE takes one. */
        for (; i < cnt && done < len && n < max; i++) {
                size_t l;

                if (off >= iov[i].iov_len) {   /* an empty iovec: no empty slice */
                        off -= iov[i].iov_len;
                        continue;
                }
                l = iov[i].iov_len - off;
                if (l > len - done)
                        l = len - done;
                dst[n].iov_base = (uint8_t *)iov[i].iov_base + off;
                dst[n].iov_len = l;
                n++;
                done += l;
                off = 0;
        }
        *covered = done;
        return n;
}

int freq_decode(struct freq *r, uint8_t *scratch, size_t scratch_size,
                const struct iovec *in, unsigned in_cnt,
                const struct iovec *out, unsigned out_cnt)
{
        size_t want;

        /* Field by field: the header is copied over just below, and the
         * origin and scratch pointers are the caller's to set. */
        r->arg = scratch;
        r->arg_len = 0;
        r->body_len = 0;
        r->in_iov = in;
        r->in_cnt = in_cnt;
        r->in_size = iov_total(in, in_cnt);
        r->out_iov = out;
        r->out_cnt = out_cnt;
        r->out_size = iov_total(out, out_cnt);
        r->reply_len = 0;
        r->error = 0;
        r->replied = false;
        r->deferred = false;
        r->buf = NULL;
        r->iov = NULL;
        r->origin = (struct freq_origin){ 0 };

        if (iov_copy_from(in, in_cnt, 0, &r->in, sizeof(r->in)) < sizeof(r->in)) {
                memset(&r->in, 0, sizeof(r->in));
                return FREQ_DECODE_NO_REPLY;
        }
        /* From here on a reply carries the guest's unique. */
        if (r->in.len < sizeof(r->in) || r->in.len > r->in_size) {
                r->error = -EINVAL;
                return FREQ_DECODE_ERROR;
        }
        r->body_len = r->in.len - sizeof(r->in);
        want = r->body_len;
        /* WRITE payloads stay in guest memory. */
        if (r->in.opcode == FUSE_WRITE && want > sizeof(struct fuse_write_in))
                want = sizeof(struct fuse_write_in);
        /* BATCH_FORGET may be longer than the scratch: read in pieces by the handler. */
        if (r->in.opcode == FUSE_BATCH_FORGET && want > scratch_size)
                want = scratch_size - scratch_size % sizeof(struct fuse_forget_one);
        if (want > scratch_size) {
                r->error = -E2BIG;
                return FREQ_DECODE_ERROR;
        }
        r->arg_len = iov_copy_from(in, in_cnt, sizeof(r->in), scratch, want);
        return FREQ_DECODE_OK;
}

const void *freq_arg(const struct freq *r, size_t size)
{
        return r->arg_len >= size ? r->arg : NULL;
}

int freq_string(const struct freq *r, size_t *pos, size_t max, const char **ret)
{
        const char *s, *nul;
        size_t avail;

        if (*pos >= r->arg_len)
                return -EINVAL;
        s = (const char *)r->arg + *pos;
        avail = r->arg_len - *pos;
        nul = memchr(s, '\0', avail < max + 1 ? avail : max + 1);
        if (!nul)
                return avail > max ? -ENAMETOOLONG : -EINVAL;
        *pos += (size_t)(nul - s) + 1;
        *ret = s;
        return (int)(nul - s);
}

int freq_name(const struct freq *r, size_t *pos, const char **ret)
{
        const char *name;
        int len = freq_string(r, pos, FREQ_NAME_MAX, &name);
        int bad;

        if (len < 0)
                return len;
        bad = confine_check_name(name, (size_t)len);
        if (bad < 0)
                return bad;
        *ret = name;
        return len;
}

int freq_ext_groups(const struct freq *r, uint32_t *ret, size_t max)
{
        size_t ext_len = (size_t)r->in.total_extlen * 8, pos;

        if (ext_len == 0)
                return 0;
        /* The extensions are the last bytes of the (wholly copied) arguments. */
        if (ext_len > r->body_len || r->arg_len != r->body_len)
                return -EINVAL;
        for (pos = r->body_len - ext_len; pos < r->body_len; ) {
                struct fuse_ext_header h;
                uint32_t n;

                if (r->body_len - pos < sizeof(h))
                        return -EINVAL;
                memcpy(&h, r->arg + pos, sizeof(h));
                if (h.size < sizeof(h) || h.size % 8 || h.size > r->body_len - pos)
                        return -EINVAL;
                if (h.type != FREQ_EXT_GROUPS) {
                        pos += h.size;
                        continue;
                }
                if (h.size < sizeof(h) + sizeof(n))
                        return -EINVAL;
                memcpy(&n, r->arg + pos + sizeof(h), sizeof(n));
                if (n > (h.size - sizeof(h) - sizeof(n)) / sizeof(uint32_t))
                        return -EINVAL;
                if (n > max)
                        n = (uint32_t)max;
                memcpy(ret, r->arg + pos + sizeof(h) + sizeof(n), n * sizeof(uint32_t));
                return (int)n;
        }
        return 0;
}

size_t freq_copy_in(const struct freq *r, size_t off, void *dst, size_t len)
{
        return iov_copy_from(r->in_iov, r->in_cnt, off, dst, len);
}

unsigned freq_in_slice(const struct freq *r, size_t off, size_t len,
                       struct iovec *dst, unsigned max, size_t *covered)
{
        return iov_slice(r->in_iov, r->in_cnt, off, len, dst, max, covered);
}

unsigned freq_out_slice(const struct freq *r, size_t off, size_t len,
                        struct iovec *dst, unsigned max, size_t *covered)
{
        return iov_slice(r->out_iov, r->out_cnt, off, len, dst, max, covered);
}

static inline bool put(struct freq *r, size_t off, const void *src, size_t len)
{
        if (off > r->out_size || len > r->out_size - off)
                return false;
        return iov_copy_to(r->out_iov, r->out_cnt, off, src, len) == len;
}

bool freq_put(struct freq *r, size_t off, const void *src, size_t len)
{
        return put(r, off, src, len);
}

static size_t reply_header(struct freq *r, int error, size_t payload)
{
        struct fuse_out_header h = {
                .len = (uint32_t)(sizeof(h) + payload),
                .error = error,
                .unique = r->in.unique,
        };

        r->replied = true;
        r->error = error;
        if (!put(r, 0, &h, sizeof(h))) {
                r->reply_len = 0;
                return 0;
        }
        r->reply_len = sizeof(h) + payload;
        return r->reply_len;
}

size_t freq_reply(struct freq *r, const void *arg, size_t len)
{
        const size_t hlen = sizeof(struct fuse_out_header);
        struct fuse_out_header h;
        uint8_t *p;

        if (len > r->out_size || hlen > r->out_size - len || len > UINT32_MAX - hlen)
                return reply_header(r, -EIO, 0);
        /* Header and payload in one iovec, or each in one of the first two:
         * written in place with the bounds already checked above. */
        p = iov_span(r->out_iov, r->out_cnt, 0, hlen);
        if (__builtin_expect(p != NULL, 1)) {
                uint8_t *payload = len ? iov_span(r->out_iov, r->out_cnt, hlen, len) : p;

                if (__builtin_expect(payload != NULL, 1)) {
                        h = (struct fuse_out_header){ .len = (uint32_t)(hlen + len),
                                                      .unique = r->in.unique };
                        if (len)
                                memcpy(payload, arg, len);
                        memcpy(p, &h, hlen);
                        r->replied = true;
                        r->error = 0;
                        r->reply_len = hlen + len;
                        return r->reply_len;
                }
        }
        if (len)
                put(r, hlen, arg, len);
        return reply_header(r, 0, len);
}

size_t freq_reply_error(struct freq *r, int error)
{
        if (error > 0)
                error = -error;
        if (error == 0)
                error = -EIO;
        return reply_header(r, error, 0);
}

size_t freq_reply_payload(struct freq *r, size_t len)
{
        if (len > r->out_size || sizeof(struct fuse_out_header) > r->out_size - len)
                return reply_header(r, -EIO, 0);
        return reply_header(r, 0, len);
}

size_t freq_reply_none(struct freq *r)
{
        r->replied = true;
        r->error = 0;
        r->reply_len = 0;
        return 0;
}

void freq_done(const struct freq *r)
{
        uint64_t now = stats_now_usec();

        if (r->origin.stats)
                stats_count_request(r->origin.stats, r->in.opcode, r->error,
                                    now - r->origin.start_usec);
        log_debug("unique=%llu %s nodeid=%llu -> %d (%zu bytes)",
                  (unsigned long long)r->in.unique, stats_opcode_name(r->in.opcode),
                  (unsigned long long)r->in.nodeid, r->error, r->reply_len);
}

/* A deferred request and its copy of the reply iovecs, in one allocation. */
struct freq_deferred {
        struct freq r;
        struct iovec out_iov[];
};

int freq_defer(struct freq *r, struct freq **ret)
{
        struct freq_deferred *d;

        if (!r->origin.complete)
                return -EDEADLK;
        d = calloc(1, sizeof(*d) + r->out_cnt * sizeof(struct iovec));
        if (!d)
                return -ENOMEM;
        /* Only the reply side survives: the arguments live in worker scratch. */
        d->r = *r;
        d->r.in_iov = NULL;
        d->r.in_cnt = 0;
        d->r.arg = NULL;
        d->r.arg_len = 0;
        d->r.buf = NULL;
        d->r.iov = NULL;
        memcpy(d->out_iov, r->out_iov, r->out_cnt * sizeof(struct iovec));
        d->r.out_iov = d->out_iov;
        r->deferred = true;
        *ret = &d->r;
        return 0;
}

void freq_finish(struct freq *d, int error)
{
        if (error < 0)
                freq_reply_error(d, error);
        else if (!d->replied)
                freq_reply(d, NULL, 0);
        freq_done(d);
        d->origin.complete(d->origin.token, d->reply_len, d->origin.complete_data);
        freq_drop(d);
}

void freq_drop(struct freq *d)
{
        /* d is the first member of its struct freq_deferred. */
        free(d);
}
