/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-malformed.c — what a broken or hostile guest driver can put in the
 * virtqueues.  Each case may end in an error reply, no reply, or a broken
 * queue or dropped connection; but the daemon must not crash, must not write
 * outside the buffers it was given or outside the share, and must serve the
 * next frontend. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum outcome { REPLIED, NO_REPLY, BROKEN };

#define NEXT_NONE  (-1)
#define NEXT_RAW(x) (-1000 - (x))   /* a literal next index, not an index into the array */

struct raw_desc {
        uint64_t addr;
        uint32_t len;
        uint16_t flags;
        int next;                   /* index in the array, NEXT_NONE or NEXT_RAW(n) */
};

struct raw_result {
        enum outcome outcome;
        int error;
        uint32_t used_len;
};

static uint64_t guest_copy(struct vmm *v, const void *data, size_t len)
{
        uint64_t gpa;
        void *p = vmm_alloc(v, len, &gpa);
        g_assert_nonnull(p);
        memcpy(p, data, len);
        return gpa;
}

static uint64_t guest_buf(struct vmm *v, size_t len, uint8_t fill)
{
        uint64_t gpa;
        void *p = vmm_alloc(v, len, &gpa);
        g_assert_nonnull(p);
        memset(p, fill, len);
        return gpa;
}

/* Publishes the chain (head = descs[0]) on queue 1 and waits a little.
 * out_hdr_gpa: where a reply header would land (0: none to read). */
static struct raw_result send_chain(struct vmm *v, const struct raw_desc *descs, unsigned n,
                                    uint64_t out_hdr_gpa)
{
        struct raw_result res = { BROKEN, 0, 0 };
        uint16_t ids[16];
        g_assert_cmpuint(n, <=, G_N_ELEMENTS(ids));
        g_assert_cmpint(vmm_desc_get(v, 1, n, ids), ==, 0);
        struct vring_desc *table = vmm_desc_table(v, 1);
        for (unsigned i = 0; i < n; i++) {
                table[ids[i]] = (struct vring_desc){ .addr = descs[i].addr, .len = descs[i].len,
                                                     .flags = descs[i].flags };
                if (descs[i].next >= 0)
                        table[ids[i]].next = ids[descs[i].next];
                else if (descs[i].next <= NEXT_RAW(0))
                        table[ids[i]].next = (uint16_t)(NEXT_RAW(0) - descs[i].next);
        }
        g_assert_cmpint(vmm_publish(v, 1, ids[0], n, ids), ==, 0);
        int r = vmm_wait_used(v, 1, ids[0], &res.used_len, 1000);
        if (r == -ETIMEDOUT || r == -ECONNRESET) {
                g_test_message("outcome: no used entry (broken queue or dropped connection)");
                return res;
        }
        g_assert_cmpint(r, ==, 0);
        if (res.used_len >= sizeof(struct fuse_out_header) && out_hdr_gpa) {
                struct fuse_out_header *oh = vmm_gpa_to_host(v, out_hdr_gpa, sizeof(*oh));
                res.outcome = REPLIED;
                res.error = oh->error;
                g_test_message("outcome: reply, error %d (%s)", oh->error,
                               oh->error ? strerrorname_np(-oh->error) : "0");
        } else {
                res.outcome = NO_REPLY;
                g_test_message("outcome: used length %u", res.used_len);
        }
        return res;
}

/* The daemon survived and serves a new frontend from a clean state; the
 * share and the outside are as before. */
static void assert_survived(Harness *h, const char *share_before)
{
        vmm_drop(h->vmm);
        h->vmm = NULL;
        harness_assert_alive(h);
        if (harness_is_legacy())
                return;  /* it serves one connection only */
        struct vmm *v = NULL;
        int r = vmm_connect(h->socket, NULL, &v);
        assert_ok(r);
        if (r == 0) {
                assert_ok(vmm_init(v, NULL));
                struct fuse_attr a;
                assert_ok(vmm_getattr(v, VMM_ROOT, &a));
                struct fuse_entry_out e;
                assert_ok(vmm_lookup(v, VMM_ROOT, "file", &e));
                g_assert_cmpuint(e.attr.size, ==, 8);
                vmm_free(v);
        }
        harness_assert_alive(h);
        g_autofree char *after = harness_snapshot(h->share);
        g_assert_cmpstr(after, ==, share_before);
        harness_assert_outside_untouched(h);
}

static Harness *setup(char **snapshot)
{
        Harness *h = harness_new();
        harness_write(h, "file", "contents");
        harness_mkdir(h, "dir");
        harness_write(h, "dir/inner", "x");
        harness_start(h, NULL);
        h->vmm = harness_connect(h, NULL);
        *snapshot = harness_snapshot(h->share);
        return h;
}

static struct fuse_in_header header(uint32_t opcode, uint64_t nodeid, uint32_t len)
{
        static uint64_t unique = 1000001;
        return (struct fuse_in_header){ .len = len, .opcode = opcode, .unique = unique += 2,
                                        .nodeid = nodeid, .uid = getuid(), .gid = getgid(),
                                        .pid = (uint32_t)getpid() };
}

/* A request whose readable part is `in` (len bytes) with a 4 KiB reply buffer. */
static struct raw_result send_bytes(struct vmm *v, const void *in, size_t len)
{
        uint64_t out = guest_buf(v, 4096, 0);
        struct raw_desc d[] = {
                { guest_copy(v, in, len), (uint32_t)len, VRING_DESC_F_NEXT, 1 },
                { out, 4096, VRING_DESC_F_WRITE, NEXT_NONE },
        };
        return send_chain(v, d, 2, out);
}

static void test_truncated_header(void)
{
        g_autofree char *snap = NULL;
        g_autoptr(Harness) h = setup(&snap);
        struct fuse_in_header ih = header(FUSE_GETATTR, VMM_ROOT, sizeof(ih) + 16);
        struct raw_result r = send_bytes(h->vmm, &ih, 20);
        g_assert_true(r.outcome != REPLIED || r.error < 0);
        /* A readable part of length 0. */
        if (r.outcome != BROKEN) {
                uint64_t out = guest_buf(h->vmm, 64, 0);
                struct raw_desc d[] = { { out, 64, VRING_DESC_F_WRITE, NEXT_NONE } };
                r = send_chain(h->vmm, d, 1, out);
                g_assert_true(r.outcome != REPLIED || r.error < 0);
        }
        assert_survived(h, snap);
}

static void test_header_len_mismatch(void)
{
        g_autofree char *snap = NULL;
        g_autoptr(Harness) h = setup(&snap);
        struct { struct fuse_in_header ih; char name[8]; } req = { header(FUSE_LOOKUP, VMM_ROOT, 0), "file" };
        uint32_t lens[] = { 4096, 1u << 31, 0xffffffff, 10, sizeof(struct fuse_in_header) };
        for (unsigned i = 0; i < G_N_ELEMENTS(lens); i++) {
                req.ih = header(FUSE_LOOKUP, VMM_ROOT, lens[i]);
                struct raw_result r = send_bytes(h->vmm, &req, sizeof(req));
                g_test_message("header len %u", lens[i]);
                if (r.outcome == BROKEN)
                        break;
                /* A lookup with an inconsistent length must not succeed. */
                if (lens[i] != sizeof(req))
                        g_assert_true(r.outcome != REPLIED || r.error < 0);
        }
        assert_survived(h, snap);
}

static void test_short_args(void)
{
        g_autofree char *snap = NULL;
        g_autoptr(Harness) h = setup(&snap);
        const uint32_t opcodes[] = { FUSE_WRITE, FUSE_READ, FUSE_SETATTR, FUSE_RENAME, FUSE_RENAME2,
                                     FUSE_LINK, FUSE_MKNOD, FUSE_MKDIR, FUSE_CREATE, FUSE_INIT,
                                     FUSE_SETLK, FUSE_GETLK, FUSE_SETXATTR, FUSE_GETXATTR,
                                     FUSE_FALLOCATE, FUSE_LSEEK, FUSE_COPY_FILE_RANGE,
                                     FUSE_BATCH_FORGET, FUSE_FORGET, FUSE_INTERRUPT, FUSE_OPEN,
                                     FUSE_ACCESS, FUSE_RELEASE, FUSE_FLUSH, FUSE_FSYNC,
                                     FUSE_READDIR, FUSE_READDIRPLUS, FUSE_TMPFILE, FUSE_SYMLINK };
        for (unsigned i = 0; i < G_N_ELEMENTS(opcodes); i++) {
                /* 3 bytes of arguments: less than any of these needs. */
                struct __attribute__((packed)) { struct fuse_in_header ih; uint8_t arg[3]; } req;
                req.ih = header(opcodes[i], VMM_ROOT, sizeof(req));
                memset(req.arg, 0x41, sizeof(req.arg));
                g_test_message("opcode %u with 3 bytes of arguments", opcodes[i]);
                struct raw_result r = send_bytes(h->vmm, &req, sizeof(req));
                if (r.outcome == BROKEN)
                        break;
                g_assert_true(r.outcome != REPLIED || r.error < 0);
        }
        /* BATCH_FORGET whose count promises more than it carries. */
        struct { struct fuse_in_header ih; struct fuse_batch_forget_in b; struct fuse_forget_one one; } bf = {
                header(FUSE_BATCH_FORGET, 0, sizeof(bf)), { .count = 100000 }, { VMM_ROOT, 1 } };
        (void)send_bytes(h->vmm, &bf, sizeof(bf));
        assert_survived(h, snap);
}

static void test_bad_names(void)
{
        g_autofree char *snap = NULL;
        g_autoptr(Harness) h = setup(&snap);
        struct vmm *v = h->vmm;
        /* No NUL at the end of the name. */
        /* packed: no padding byte may end up acting as the NUL */
        struct __attribute__((packed)) { struct fuse_in_header ih; char name[4]; } nonul = { header(FUSE_LOOKUP, VMM_ROOT, sizeof(nonul)),
                                                                     { 'f', 'i', 'l', 'e' } };
        struct raw_result r = send_bytes(v, &nonul, sizeof(nonul));
        g_assert_true(r.outcome != REPLIED || r.error < 0);
        struct __attribute__((packed)) { struct fuse_in_header ih; struct fuse_mkdir_in m; char name[3]; } mk = {
                header(FUSE_MKDIR, VMM_ROOT, sizeof(mk)), { .mode = 0755 }, { 'n', 'e', 'w' } };
        r = send_bytes(v, &mk, sizeof(mk));
        g_assert_true(r.outcome != REPLIED || r.error < 0);
        if (r.outcome == BROKEN) {
                assert_survived(h, snap);
                return;
        }
        /* Names with '/', empty, ".", "..": never resolved on the host. */
        const char *bad[] = { "dir/inner", "/file", "dir/", "", ".", "..", "../outside" };
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_test_message("name \"%s\"", bad[i]);
                struct fuse_entry_out e;
                int err = vmm_lookup(v, VMM_ROOT, bad[i], &e);
                if (g_str_equal(bad[i], ".") && err == 0)
                        g_assert_cmpuint(e.nodeid, ==, VMM_ROOT);  /* "." may name the directory itself */
                else
                        g_assert_cmpint(err, <, 0);
                g_assert_cmpint(vmm_mkdir(v, VMM_ROOT, bad[i], 0755, NULL), <, 0);
                g_assert_cmpint(vmm_create(v, VMM_ROOT, bad[i], O_RDWR | O_CREAT, S_IFREG | 0644,
                                           NULL, NULL), <, 0);
                g_assert_cmpint(vmm_unlink(v, VMM_ROOT, bad[i]), <, 0);
                g_assert_cmpint(vmm_rename(v, VMM_ROOT, "file", VMM_ROOT, bad[i], 0), <, 0);
        }
        assert_survived(h, snap);
}

/* Reply buffers too small for the reply: nothing is written past them. */
static void test_small_reply_buffer(void)
{
        g_autofree char *snap = NULL;
        g_autoptr(Harness) h = setup(&snap);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        assert_ok(vmm_lookup(v, VMM_ROOT, "file", &e));
        uint64_t fh;
        assert_ok(vmm_open(v, e.nodeid, O_RDONLY, &fh));

        /* READ of 4 KiB into 3 bytes of writable space followed by a guard. */
        const size_t sizes[] = { 3, 16, 17, 20 };
        for (unsigned i = 0; i < G_N_ELEMENTS(sizes); i++) {
                struct { struct fuse_in_header ih; struct fuse_read_in r; } req = {
                        header(FUSE_READ, e.nodeid, sizeof(req)), { .fh = fh, .size = 4096 } };
                uint64_t out;
                uint8_t *p = vmm_alloc(v, sizes[i] + 64, &out);
                memset(p, 0xee, sizes[i] + 64);
                struct raw_desc d[] = {
                        { guest_copy(v, &req, sizeof(req)), sizeof(req), VRING_DESC_F_NEXT, 1 },
                        { out, (uint32_t)sizes[i], VRING_DESC_F_WRITE, NEXT_NONE },
                };
                g_test_message("READ into %zu bytes", sizes[i]);
                struct raw_result r = send_chain(v, d, 2, sizes[i] >= 16 ? out : 0);
                for (size_t k = sizes[i]; k < sizes[i] + 64; k++)
                        if (p[k] != 0xee) {
                                g_test_message("FAIL: byte %zu past a %zu-byte reply buffer written", k, sizes[i]);
                                g_test_fail();
                                break;
                        }
                g_assert_cmpuint(r.used_len, <=, sizes[i]);
                if (r.outcome == BROKEN)
                        break;
        }
        /* GETATTR with room for the header only. */
        if (!vmm_backend_hung_up(v)) {
                struct fuse_in_header ih = header(FUSE_GETATTR, VMM_ROOT, sizeof(ih) + sizeof(struct fuse_getattr_in));
                struct { struct fuse_in_header ih; struct fuse_getattr_in g; } req = { ih, { 0 } };
                uint64_t out;
                uint8_t *p = vmm_alloc(v, 16 + 64, &out);
                memset(p, 0xee, 16 + 64);
                struct raw_desc d[] = {
                        { guest_copy(v, &req, sizeof(req)), sizeof(req), VRING_DESC_F_NEXT, 1 },
                        { out, 16, VRING_DESC_F_WRITE, NEXT_NONE },
                };
                struct raw_result r = send_chain(v, d, 2, out);
                g_assert_true(r.outcome != REPLIED || r.error < 0);
                for (size_t k = 16; k < 16 + 64; k++)
                        g_assert_cmpuint(p[k], ==, 0xee);
        }
        assert_survived(h, snap);
}

static void test_outside_guest_memory(void)
{
        struct vmm_region r1;
        const uint64_t hole = 0x80000000ull;
        for (int c = 0; c < 7; c++) {
                g_autofree char *snap = NULL;
                g_autoptr(Harness) h = setup(&snap);
                struct vmm *v = h->vmm;
                vmm_region(v, 1, &r1);
                struct { struct fuse_in_header ih; struct fuse_getattr_in g; } req = {
                        header(FUSE_GETATTR, VMM_ROOT, sizeof(req)), { 0 } };
                uint64_t in = guest_copy(v, &req, sizeof(req));
                uint64_t out = guest_buf(v, 4096, 0);
                struct raw_desc d[2] = {
                        { in, sizeof(req), VRING_DESC_F_NEXT, 1 },
                        { out, 4096, VRING_DESC_F_WRITE, NEXT_NONE },
                };
                switch (c) {
                case 0: d[0].addr = hole; break;                          /* readable in the hole */
                case 1: d[1].addr = hole; break;                          /* writable in the hole */
                case 2: d[0].addr = 1ull << 50; break;                    /* far beyond */
                case 3: d[1].addr = r1.gpa + r1.size - 100; break;        /* straddles the end */
                case 4: d[1].len = 0xffffffff; break;                     /* huge length */
                case 5: d[0].addr = UINT64_MAX - 8; d[0].len = 64; break; /* wraps around */
                case 6: d[1].addr = r1.gpa - 8; break;                    /* starts in the hole */
                }
                g_test_message("case %d", c);
                struct raw_result r = send_chain(v, d, 2, c == 1 || c == 6 ? 0 : out);
                g_assert_true(r.outcome != REPLIED || r.error < 0);
                assert_survived(h, snap);
        }
}

static void test_descriptor_loops(void)
{
        for (int c = 0; c < 5; c++) {
                g_autofree char *snap = NULL;
                g_autoptr(Harness) h = setup(&snap);
                struct vmm *v = h->vmm;
                struct { struct fuse_in_header ih; struct fuse_getattr_in g; } req = {
                        header(FUSE_GETATTR, VMM_ROOT, sizeof(req)), { 0 } };
                uint64_t in = guest_copy(v, &req, sizeof(req));
                uint64_t out = guest_buf(v, 4096, 0);
                struct raw_result r;
                g_test_message("case %d", c);
                if (c == 0) {           /* A → B → A */
                        struct raw_desc d[] = {
                                { in, sizeof(req), VRING_DESC_F_NEXT, 1 },
                                { out, 4096, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 0 },
                        };
                        r = send_chain(v, d, 2, out);
                } else if (c == 1) {    /* a descriptor chained to itself */
                        struct raw_desc d[] = { { in, sizeof(req), VRING_DESC_F_NEXT, 0 } };
                        r = send_chain(v, d, 1, 0);
                } else if (c == 2) {    /* next beyond the table */
                        struct raw_desc d[] = {
                                { in, sizeof(req), VRING_DESC_F_NEXT, NEXT_RAW(vmm_queue_size(v) + 5) },
                        };
                        r = send_chain(v, d, 1, 0);
                } else if (c == 3) {    /* writable before readable */
                        struct raw_desc d[] = {
                                { out, 4096, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1 },
                                { in, sizeof(req), 0, NEXT_NONE },
                        };
                        r = send_chain(v, d, 2, out);
                } else {                /* a loop inside an indirect table */
                        struct vring_desc table[2] = {
                                { .addr = in, .len = sizeof(req), .flags = VRING_DESC_F_NEXT, .next = 1 },
                                { .addr = out, .len = 4096, .flags = VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, .next = 0 },
                        };
                        struct raw_desc d[] = { { guest_copy(v, table, sizeof(table)), sizeof(table),
                                                  VRING_DESC_F_INDIRECT, NEXT_NONE } };
                        r = send_chain(v, d, 1, out);
                }
                g_assert_true(r.outcome != REPLIED || r.error < 0);
                assert_survived(h, snap);
        }
}

static void test_bad_indirect(void)
{
        for (int c = 0; c < 6; c++) {
                g_autofree char *snap = NULL;
                g_autoptr(Harness) h = setup(&snap);
                struct vmm *v = h->vmm;
                struct { struct fuse_in_header ih; struct fuse_getattr_in g; } req = {
                        header(FUSE_GETATTR, VMM_ROOT, sizeof(req)), { 0 } };
                uint64_t in = guest_copy(v, &req, sizeof(req));
                uint64_t out = guest_buf(v, 4096, 0);
                struct vring_desc table[3] = {
                        { .addr = in, .len = sizeof(req), .flags = VRING_DESC_F_NEXT, .next = 1 },
                        { .addr = out, .len = 4096, .flags = VRING_DESC_F_WRITE },
                };
                uint32_t table_len = 2 * sizeof(struct vring_desc);
                uint16_t flags = VRING_DESC_F_INDIRECT;
                switch (c) {
                case 0:                 /* nested indirect */
                        table[1] = (struct vring_desc){ .addr = guest_copy(v, table, sizeof(table)),
                                                        .len = 32, .flags = VRING_DESC_F_INDIRECT };
                        break;
                case 1: table_len = 17; break;      /* not a multiple of 16 */
                case 2: table_len = 0; break;       /* empty */
                case 3: table[0].next = 7; break;   /* next past the table */
                case 4: flags |= VRING_DESC_F_NEXT; break;  /* indirect and next together */
                case 5: flags |= VRING_DESC_F_WRITE; break; /* to be ignored (virtio 1.1 2.6.5.3.2) */
                }
                uint64_t tgpa = guest_copy(v, table, sizeof(table));
                struct raw_desc d[] = { { tgpa, table_len, flags, c == 4 ? 0 : NEXT_NONE } };
                g_test_message("case %d", c);
                struct raw_result r = send_chain(v, d, 1, out);
                if (c == 5)
                        g_assert_true(r.outcome == REPLIED && r.error == 0);
                else
                        g_assert_true(r.outcome != REPLIED || r.error < 0);
                assert_survived(h, snap);
        }
        /* An indirect table outside guest memory. */
        g_autofree char *snap = NULL;
        g_autoptr(Harness) h = setup(&snap);
        struct raw_desc d[] = { { 0x80000000ull, 32, VRING_DESC_F_INDIRECT, NEXT_NONE } };
        struct raw_result r = send_chain(h->vmm, d, 1, 0);
        g_assert_true(r.outcome != REPLIED);
        assert_survived(h, snap);
}

/* The avail ring itself: a head past the table, an index that jumps. */
static void test_bad_avail(void)
{
        for (int c = 0; c < 2; c++) {
                g_autofree char *snap = NULL;
                g_autoptr(Harness) h = setup(&snap);
                unsigned qs = vmm_queue_size(h->vmm);
                if (c == 0)
                        assert_ok(vmm_publish_raw(h->vmm, 1, (uint16_t)(qs + 3), 1));
                else
                        assert_ok(vmm_publish_raw(h->vmm, 1, 0, (uint16_t)(qs + 10)));
                g_usleep(300000);
                harness_assert_alive(h);
                assert_survived(h, snap);
        }
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/malformed/truncated-header", test_truncated_header);
        g_test_add_func("/malformed/header-len-mismatch", test_header_len_mismatch);
        g_test_add_func("/malformed/short-args", test_short_args);
        g_test_add_func("/malformed/bad-names", test_bad_names);
        g_test_add_func("/malformed/small-reply-buffer", test_small_reply_buffer);
        g_test_add_func("/malformed/outside-guest-memory", test_outside_guest_memory);
        g_test_add_func("/malformed/descriptor-loops", test_descriptor_loops);
        g_test_add_func("/malformed/bad-indirect", test_bad_indirect);
        g_test_add_func("/malformed/bad-avail", test_bad_avail);
        return g_test_run();
}
