/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-fuse-request.c — decoding truncated, oversized and malformed requests:
 * error replies (or none), never a crash or an access past the buffers
 * (run it under ASan: meson setup -Db_sanitize=address,undefined). */
#include <glib.h>

#include "fuse-request.h"
#include "fuse-test-util.h"

static uint8_t scratch[FREQ_SCRATCH_SIZE];

static void test_decode_lengths(void)
{
        struct fuse_in_header h = { .len = sizeof(h) + 4, .opcode = FUSE_LOOKUP, .unique = 9, .nodeid = 1 };
        uint8_t *buf = g_malloc(sizeof(h) + 4);   /* exact size: ASan sees any overrun */
        uint8_t out[64];
        struct iovec in = { buf, sizeof(h) + 4 }, o = { out, sizeof(out) };
        struct freq r;
        const char *name;
        size_t pos = 0;

        memcpy(buf, &h, sizeof(h));
        memcpy(buf + sizeof(h), "abc", 4);
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_OK);
        g_assert_cmpuint(r.arg_len, ==, 4);
        g_assert_cmpint(freq_name(&r, &pos, &name), ==, 3);
        g_assert_cmpstr(name, ==, "abc");
        g_assert_null(freq_arg(&r, 5));
        g_assert_cmpint(freq_string(&r, &pos, 255, &name), ==, -EINVAL);   /* nothing left */

        /* Too short for a header: no reply. */
        in.iov_len = sizeof(h) - 1;
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_NO_REPLY);
        /* len claims more than the iovecs hold. */
        in.iov_len = sizeof(h) + 4;
        ((struct fuse_in_header *)buf)->len = sizeof(h) + 5;
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_ERROR);
        g_assert_cmpint(r.error, ==, -EINVAL);
        g_assert_cmpuint(freq_reply_error(&r, r.error), ==, sizeof(struct fuse_out_header));
        g_assert_cmpint(((struct fuse_out_header *)out)->error, ==, -EINVAL);
        g_assert_cmpuint(((struct fuse_out_header *)out)->unique, ==, 9);
        /* len smaller than the header. */
        ((struct fuse_in_header *)buf)->len = 3;
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_ERROR);
        ((struct fuse_in_header *)buf)->len = UINT32_MAX;
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_ERROR);
        /* Shorter len than the iovecs: the extra bytes are ignored. */
        ((struct fuse_in_header *)buf)->len = sizeof(h) + 2;
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_OK);
        pos = 0;
        g_assert_cmpint(freq_name(&r, &pos, &name), ==, -EINVAL);   /* "ab" without NUL */
        g_free(buf);
}

static void test_header_split_across_iovecs(void)
{
        struct fuse_in_header h = { .len = sizeof(h) + 2, .opcode = FUSE_LOOKUP, .unique = 5, .nodeid = 1 };
        uint8_t bytes[sizeof(h) + 2];
        struct iovec in[sizeof(bytes)];
        uint8_t out[16];
        struct iovec o = { out, sizeof(out) };
        struct freq r;
        const char *name;
        size_t pos = 0;

        memcpy(bytes, &h, sizeof(h));
        memcpy(bytes + sizeof(h), "z", 2);
        for (size_t k = 0; k < sizeof(bytes); k++)   /* one byte per iovec */
                in[k] = (struct iovec){ bytes + k, 1 };
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), in, sizeof(bytes), &o, 1), ==, FREQ_DECODE_OK);
        g_assert_cmpuint(r.in.unique, ==, 5);
        g_assert_cmpint(freq_name(&r, &pos, &name), ==, 1);
        g_assert_cmpstr(name, ==, "z");
}

static void test_reply_bounds(void)
{
        struct fuse_in_header h = { .len = sizeof(h), .opcode = FUSE_STATFS, .unique = 3, .nodeid = 1 };
        struct iovec in = { &h, sizeof(h) };
        uint8_t *small = g_malloc(sizeof(struct fuse_out_header) + 4);
        struct iovec o = { small, sizeof(struct fuse_out_header) + 4 };
        uint8_t big[100] = { 0 };
        struct freq r;

        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_OK);
        /* A reply larger than the writable space becomes EIO, header only. */
        g_assert_cmpuint(freq_reply(&r, big, sizeof(big)), ==, sizeof(struct fuse_out_header));
        g_assert_cmpint(((struct fuse_out_header *)small)->error, ==, -EIO);
        g_assert_false(freq_put(&r, 10, big, 20));
        g_assert_true(freq_put(&r, 16, big, 4));
        /* Not even a header fits: nothing is written. */
        o.iov_len = 8;
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, &o, 1), ==, FREQ_DECODE_OK);
        g_assert_cmpuint(freq_reply_error(&r, -ENOENT), ==, 0);
        /* No writable buffer at all. */
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, NULL, 0), ==, FREQ_DECODE_OK);
        g_assert_cmpuint(freq_reply(&r, NULL, 0), ==, 0);
        g_free(small);
}

static void test_strings(void)
{
        uint8_t req[sizeof(struct fuse_in_header) + 600];
        struct fuse_in_header *h = (void *)req;
        struct iovec in = { req, sizeof(req) };
        struct freq r;
        const char *s;
        size_t pos = 0;

        memset(req, 'n', sizeof(req));
        *h = (struct fuse_in_header){ .len = sizeof(req), .opcode = FUSE_SYMLINK };
        req[sizeof(*h) + 256] = '\0';     /* a 256-byte name */
        req[sizeof(req) - 1] = '\0';
        g_assert_cmpint(freq_decode(&r, scratch, sizeof(scratch), &in, 1, NULL, 0), ==, FREQ_DECODE_OK);
        g_assert_cmpint(freq_name(&r, &pos, &s), ==, -ENAMETOOLONG);
        pos = 0;
        g_assert_cmpint(freq_string(&r, &pos, 4095, &s), ==, 256);
        g_assert_cmpuint(pos, ==, 257);
        g_assert_cmpint(freq_string(&r, &pos, 4095, &s), ==, 600 - 257 - 1);
        g_assert_cmpint(freq_string(&r, &pos, 4095, &s), ==, -EINVAL);
        pos = 0;
        g_assert_cmpint(freq_string(&r, &pos, 10, &s), ==, -ENAMETOOLONG);
}

/* Every opcode with arguments cut at every length up to its full size, through
 * fs_process(): an error reply (or none for FORGET-likes), never a crash. */
static void test_truncated_every_opcode(void)
{
        struct ft t;
        uint8_t args[256];

        ft_setup(&t);
        memset(args, 0, sizeof(args));
        for (uint32_t op = 1; op <= 52; op++) {
                if (op == FUSE_INIT || op == FUSE_DESTROY)
                        continue;
                for (size_t len = 0; len < 72; len++) {
                        int err = ft_send(&t, op, 1, args, len, NULL, 0);

                        /* Zeroed arguments are never valid enough to succeed, except for
                         * the few ops that take none or accept zeros. */
                        if (err == 0 || err == 1)
                                continue;
                        g_assert_cmpint(err, <, 0);
                        g_assert_cmpint(err, >, -4096);
                }
        }
        /* The session still works. */
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, 1, args, sizeof(struct fuse_getattr_in), NULL, 0), ==, 0);
        ft_teardown(&t);
}

static void test_write_lengths(void)
{
        struct ft t;
        struct fuse_entry_out e;
        uint64_t fh;
        struct fuse_write_in w;
        uint8_t data[16] = "0123456789abcdef";

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "w", 0644, O_RDWR, &e, &fh), ==, 0);
        /* size larger than the payload that came with it */
        w = (struct fuse_write_in){ .fh = fh, .size = 17 };
        g_assert_cmpint(ft_send(&t, FUSE_WRITE, e.nodeid, &w, sizeof(w), data, sizeof(data)), ==, -EINVAL);
        /* larger than max_write */
        w.size = (1u << 20) + 1;
        g_assert_cmpint(ft_send(&t, FUSE_WRITE, e.nodeid, &w, sizeof(w), data, sizeof(data)), ==, -EINVAL);
        /* negative offsets */
        w.size = 4;
        w.offset = (uint64_t)INT64_MAX + 1;
        g_assert_cmpint(ft_send(&t, FUSE_WRITE, e.nodeid, &w, sizeof(w), data, sizeof(data)), ==, -EINVAL);
        /* a request too big for the scratch buffer (not a WRITE) */
        {
                size_t n = FREQ_SCRATCH_SIZE + 100;
                g_autofree uint8_t *huge = g_malloc0(n);

                g_assert_cmpint(ft_send(&t, FUSE_SETXATTR, e.nodeid, huge, n, NULL, 0), ==, -E2BIG);
        }
        /* a reply buffer too small for a header: no reply */
        g_assert_cmpint(ft_send_iov(&t, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 },
                                    sizeof(struct fuse_getattr_in), NULL, 0, NULL, 0, 8), ==, 1);
        /* ... and one too small for the attributes: EIO */
        g_assert_cmpint(ft_send_iov(&t, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 },
                                    sizeof(struct fuse_getattr_in), NULL, 0, NULL, 0, 20), ==, -EIO);
        /* a truncated header */
        {
                struct fuse_in_header h = { .len = 100, .opcode = FUSE_GETATTR, .unique = 1 };
                struct iovec in = { &h, 10 }, out = { t.out, 100 };

                g_assert_cmpuint(fs_process(t.w, &in, 1, &out, 1, NULL), ==, 0);
        }
        ft_teardown(&t);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        log_set_level(LOG_LEVEL_WARNING);
        g_test_add_func("/fuse-request/decode-lengths", test_decode_lengths);
        g_test_add_func("/fuse-request/split-header", test_header_split_across_iovecs);
        g_test_add_func("/fuse-request/reply-bounds", test_reply_bounds);
        g_test_add_func("/fuse-request/strings", test_strings);
        g_test_add_func("/fuse-request/truncated-every-opcode", test_truncated_every_opcode);
        g_test_add_func("/fuse-request/write-lengths", test_write_lengths);
        return g_test_run();
}
