/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-limits.c — the sizes and numbers a guest can push sluice-fs to:
 * READ/WRITE sizes by what INIT negotiated (a Windows guest that asks
 * FUSE_MAX_PAGES on a 1024-entry queue gets more than 1 MiB, laid out as
 * virtio-win lays it: every page its own descriptor, all in one indirect
 * table), and open files by RLIMIT_NOFILE (EMFILE reaches the guest, the
 * worker carries on). */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define PAGE 4096u
#define PRLIMIT "/usr/bin/prlimit"

/* What sluice-fs offers: 1 MiB to every guest, up to 1020 pages (1024
 * descriptors less 4 for the headers) to one that asks FUSE_MAX_PAGES. */
#define DEFAULT_PAGES 256u
#define LARGE_PAGES   1020u

/* INIT as virtio-win's viofs sends it: FUSE 7.31, a 16-byte fuse_init_in,
 * DO_READDIRPLUS and (unless `max_pages` is FALSE) MAX_PAGES. */
static int init_windows(struct vmm *v, gboolean max_pages, struct fuse_init_out *ret)
{
        struct fuse_init_in in = {
                .major = 7, .minor = 31,
                .flags = FUSE_DO_READDIRPLUS | (max_pages ? FUSE_MAX_PAGES : 0),
        };
        struct fuse_init_out out = { 0 };
        size_t len = 0;
        int r = vmm_call(v, FUSE_INIT, 0, &in, offsetof(struct fuse_init_in, flags2), NULL, 0,
                         NULL, 0, &out, sizeof(out), &len);
        if (r < 0)
                return r;
        if (len < 24)
                return -EPROTO;
        vmm_set_init_flags(v, out.flags);
        *ret = out;
        return 0;
}

static struct vmm *connect_queue(Harness *h, unsigned queue_size)
{
        struct vmm_config cfg = { .queue_size = queue_size };
        struct vmm *v = NULL;
        assert_ok(vmm_connect(h->socket, &cfg, &v));
        g_assert_nonnull(v);
        return v;
}

/* Appends the descriptors of [gpa, gpa+len) cut at 4 KiB page boundaries. */
static void add_pages(struct vring_desc *table, unsigned *n, unsigned max, uint64_t gpa, size_t len,
                      bool writable)
{
        while (len > 0) {
                size_t piece = PAGE - (gpa & (PAGE - 1));
                if (piece > len)
                        piece = len;
                g_assert_cmpuint(*n, <, max);
                table[*n] = (struct vring_desc){
                        .addr = gpa, .len = (uint32_t)piece,
                        .flags = writable ? VRING_DESC_F_WRITE : 0,
                };
                (*n)++;
                gpa += piece;
                len -= piece;
        }
}

/* Guest memory of `len` bytes starting `before_page` bytes before a page
 * boundary: the worst case for how many pages a buffer touches. */
static void *alloc_at(struct vmm *v, size_t len, size_t before_page, uint64_t *ret_gpa)
{
        uint64_t gpa;
        uint8_t *p = vmm_alloc(v, len + 2 * PAGE, &gpa);
        g_assert_nonnull(p);
        size_t skip = (size_t)(PAGE - (gpa & (PAGE - 1))) % PAGE + PAGE - before_page;
        *ret_gpa = gpa + skip;
        return p + skip;
}

/* A request as virtio-win sends it: the request bytes (in) and the reply
 * buffer (out) each cut into page-sized descriptors, all of them in one
 * indirect table.  Returns the used length, or a transport error. */
static int run_paged(struct vmm *v, uint64_t in_gpa, size_t in_len, uint64_t out_gpa,
                     size_t out_len, unsigned *ret_ndesc, uint32_t *ret_used)
{
        enum { MAX = 1024 };   /* virtio-win's limit, and the largest table sluice-fs takes */
        uint64_t table_gpa;
        struct vring_desc *table = vmm_alloc(v, MAX * sizeof(*table), &table_gpa);
        unsigned n = 0;
        uint16_t id;

        g_assert_nonnull(table);
        add_pages(table, &n, MAX, in_gpa, in_len, false);
        add_pages(table, &n, MAX, out_gpa, out_len, true);
        for (unsigned i = 0; i + 1 < n; i++) {
                table[i].flags |= VRING_DESC_F_NEXT;
                table[i].next = (uint16_t)(i + 1);
        }
        int r = vmm_desc_get(v, 1, 1, &id);
        if (r < 0)
                return r;
        vmm_desc_table(v, 1)[id] = (struct vring_desc){
                .addr = table_gpa, .len = (uint32_t)(n * sizeof(*table)),
                .flags = VRING_DESC_F_INDIRECT,
        };
        r = vmm_publish(v, 1, id, 1, &id);
        if (r < 0)
                return r;
        *ret_ndesc = n;
        return vmm_wait_used(v, 1, id, ret_used, -1);
}

static void fill_pattern(uint8_t *p, size_t len, unsigned seed)
{
        for (size_t i = 0; i < len; i++)
                p[i] = (uint8_t)((i * 13 + seed + (i >> 12) * 7) & 0xff);
}

static uint64_t next_unique = 1ull << 40;

/* A WRITE of `size` bytes from a pattern, laid out as virtio-win does, with
 * the header and the reply straddling page boundaries.  Returns the reply's
 * error; *ret_written what the daemon said it wrote. */
static int write_paged(struct vmm *v, uint64_t nodeid, uint64_t fh, const uint8_t *data,
                       size_t size, uint32_t *ret_written, unsigned *ret_ndesc)
{
        const size_t hdr = sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in);
        uint64_t in_gpa, out_gpa;
        uint8_t *in = alloc_at(v, hdr + size, 40, &in_gpa);
        struct fuse_out_header *oh;
        uint32_t used = 0;

        *(struct fuse_in_header *)in = (struct fuse_in_header){
                .len = (uint32_t)(hdr + size), .opcode = FUSE_WRITE, .unique = next_unique++,
                .nodeid = nodeid, .uid = getuid(), .gid = getgid(), .pid = (uint32_t)getpid(),
        };
        *(struct fuse_write_in *)(in + sizeof(struct fuse_in_header)) =
                (struct fuse_write_in){ .fh = fh, .offset = 0, .size = (uint32_t)size };
        memcpy(in + hdr, data, size);
        oh = alloc_at(v, sizeof(*oh) + sizeof(struct fuse_write_out), 8, &out_gpa);
        memset(oh, 0xa5, sizeof(*oh) + sizeof(struct fuse_write_out));
        int r = run_paged(v, in_gpa, hdr + size, out_gpa, sizeof(*oh) + sizeof(struct fuse_write_out),
                          ret_ndesc, &used);
        if (r < 0)
                return r;
        if (used < sizeof(*oh) || oh->len != used)
                return -EPROTO;
        *ret_written = oh->error == 0 && used >= sizeof(*oh) + sizeof(struct fuse_write_out)
                ? ((struct fuse_write_out *)(oh + 1))->size : 0;
        return oh->error;
}

/* A READ of `size` bytes into `back`, laid out as virtio-win does. */
static int read_paged(struct vmm *v, uint64_t nodeid, uint64_t fh, uint8_t *back, size_t size,
                      size_t *ret_len, unsigned *ret_ndesc)
{
        const size_t hdr = sizeof(struct fuse_in_header) + sizeof(struct fuse_read_in);
        uint64_t in_gpa, out_gpa;
        uint8_t *in = alloc_at(v, hdr, 40, &in_gpa);
        struct fuse_out_header *oh = alloc_at(v, sizeof(*oh) + size, 8, &out_gpa);
        uint32_t used = 0;

        *(struct fuse_in_header *)in = (struct fuse_in_header){
                .len = (uint32_t)hdr, .opcode = FUSE_READ, .unique = next_unique++,
                .nodeid = nodeid, .uid = getuid(), .gid = getgid(), .pid = (uint32_t)getpid(),
        };
        *(struct fuse_read_in *)(in + sizeof(struct fuse_in_header)) =
                (struct fuse_read_in){ .fh = fh, .offset = 0, .size = (uint32_t)size };
        memset(oh, 0xa5, sizeof(*oh) + size);
        int r = run_paged(v, in_gpa, hdr, out_gpa, sizeof(*oh) + size, ret_ndesc, &used);
        if (r < 0)
                return r;
        if (used < sizeof(*oh) || oh->len != used)
                return -EPROTO;
        *ret_len = used - sizeof(*oh);
        memcpy(back, oh + 1, *ret_len);
        return oh->error;
}

static gchar *host_contents(Harness *h, const char *rel, gsize *ret_len)
{
        g_autofree char *path = harness_path(h, rel);
        gchar *data = NULL;
        g_assert_true(g_file_get_contents(path, &data, ret_len, NULL));
        return data;
}

/* A Windows guest on a 1024-entry queue: the largest max_write, and a WRITE
 * and a READ of that size in 4 KiB descriptors, 1024 of them in one indirect
 * table, come out byte-exact; one byte more is an error, not a crash. */
static void test_large_windows(void)
{
        if (!harness_require_sluice("sluice-fs's own max_write"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_start(h, NULL);
        struct vmm *v = connect_queue(h, 1024);
        struct fuse_init_out init;
        assert_ok(init_windows(v, TRUE, &init));
        g_assert_true(init.flags & FUSE_MAX_PAGES);
        g_assert_cmpuint(init.max_pages, ==, LARGE_PAGES);
        g_assert_cmpuint(init.max_write, ==, LARGE_PAGES * PAGE);

        const size_t size = init.max_write;
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_create(v, VMM_ROOT, "big", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        g_autofree uint8_t *data = g_malloc(size + PAGE);
        g_autofree uint8_t *back = g_malloc(size + PAGE);
        fill_pattern(data, size + PAGE, 5);

        uint32_t written = 0;
        unsigned ndesc = 0;
        assert_ok(write_paged(v, e.nodeid, fh, data, size, &written, &ndesc));
        g_assert_cmpuint(ndesc, ==, 1024);   /* the layout really is the worst case */
        g_assert_cmpuint(written, ==, size);
        gsize len = 0;
        g_autofree gchar *host = host_contents(h, "big", &len);
        g_assert_cmpuint(len, ==, size);
        g_assert_true(memcmp(host, data, size) == 0);

        /* Windows asks for the attributes after every write. */
        struct fuse_attr a;
        assert_ok(vmm_getattr(v, e.nodeid, &a));
        g_assert_cmpuint(a.size, ==, size);

        size_t got = 0;
        memset(back, 0, size);
        assert_ok(read_paged(v, e.nodeid, fh, back, size, &got, &ndesc));
        g_assert_cmpuint(ndesc, ==, 1024);
        g_assert_cmpuint(got, ==, size);
        g_assert_true(memcmp(back, data, size) == 0);

        /* Oversize: a page more than max_write (the table still fits). */
        assert_errno(write_paged(v, e.nodeid, fh, data, size + 16, &written, &ndesc), -EINVAL);
        g_assert_cmpuint(ndesc, <=, 1024);
        harness_assert_alive(h);
        /* A READ asking more gets what was negotiated at most. */
        struct fuse_read_in ri = { .fh = fh, .offset = 0, .size = (uint32_t)size + PAGE };
        struct vmm_op r = { .opcode = FUSE_READ, .nodeid = e.nodeid, .arg_cnt = 1,
                            .arg = { { &ri, sizeof(ri) } }, .out = back, .out_size = size + PAGE,
                            .chunk = 1u << 20 };
        assert_ok(vmm_op_run(v, &r));
        assert_ok(r.error);
        g_assert_cmpuint(r.out_len, ==, size);
        /* Still serving, the file unchanged by the refused write. */
        assert_ok(vmm_getattr(v, e.nodeid, &a));
        g_assert_cmpuint(a.size, ==, size);
        assert_ok(vmm_release(v, e.nodeid, fh));
        vmm_free(v);
}

/* Guests that do not ask, or whose queue is too small to carry more, get
 * the 1 MiB of before; so does a Linux guest on a 256-entry queue. */
static void test_default_limits(void)
{
        if (!harness_require_sluice("sluice-fs's own max_write"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_start(h, NULL);
        struct fuse_init_out init;

        struct vmm *v = connect_queue(h, 1024);
        assert_ok(init_windows(v, FALSE, &init));
        g_assert_false(init.flags & FUSE_MAX_PAGES);
        g_assert_cmpuint(init.max_write, ==, DEFAULT_PAGES * PAGE);
        /* Such a guest's WRITE of more is refused, the daemon carries on. */
        struct fuse_entry_out e;
        uint64_t fh;
        assert_ok(vmm_create(v, VMM_ROOT, "f", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh));
        const size_t size = DEFAULT_PAGES * PAGE + PAGE;
        g_autofree uint8_t *data = g_malloc(size);
        fill_pattern(data, size, 9);
        uint32_t written = 0;
        unsigned ndesc = 0;
        assert_errno(write_paged(v, e.nodeid, fh, data, size, &written, &ndesc), -EINVAL);
        assert_ok(write_paged(v, e.nodeid, fh, data, size - PAGE, &written, &ndesc));
        g_assert_cmpuint(written, ==, size - PAGE);
        assert_ok(vmm_release(v, e.nodeid, fh));
        vmm_free(v);

        v = connect_queue(h, 256);
        assert_ok(init_windows(v, TRUE, &init));
        g_assert_cmpuint(init.max_pages, ==, DEFAULT_PAGES);
        g_assert_cmpuint(init.max_write, ==, DEFAULT_PAGES * PAGE);
        vmm_free(v);

        v = connect_queue(h, 256);
        assert_ok(vmm_init(v, &init));
        g_assert_cmpuint(init.max_pages, ==, DEFAULT_PAGES);
        g_assert_cmpuint(init.max_write, ==, DEFAULT_PAGES * PAGE);
        vmm_free(v);

        /* In between: what the queue carries. */
        v = connect_queue(h, 512);
        assert_ok(init_windows(v, TRUE, &init));
        g_assert_cmpuint(init.max_pages, ==, 512 - 4);
        g_assert_cmpuint(init.max_write, ==, (512 - 4) * PAGE);
        vmm_free(v);
        harness_assert_alive(h);
}

static unsigned long soft_nofile(GPid pid)
{
        g_autofree char *path = g_strdup_printf("/proc/%d/limits", (int)pid);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        const char *line = strstr(text, "Max open files");
        g_assert_nonnull(line);
        return strtoul(line + strlen("Max open files"), NULL, 10);
}

/* Lines of the log that contain `what`. */
static unsigned log_count(const char *log, const char *what)
{
        g_autofree char *text = NULL;
        unsigned n = 0;
        if (!g_file_get_contents(log, &text, NULL, NULL))
                return 0;
        for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
                n++;
        return n;
}

/* Waits (10 s at most) for `what` or `or` (may be NULL) to appear in the log. */
static gboolean log_wait(const char *log, const char *what, const char *or)
{
        for (int i = 0; i < 1000; i++) {
                if (log_count(log, what) > 0 || (or && log_count(log, or) > 0))
                        return TRUE;
                g_usleep(10000);
        }
        return FALSE;
}

/* A worker whose open-file limit is small: it raises the soft limit to the
 * hard one; when the guest has used up its share, CREATE, OPEN and LOOKUP
 * fail with EMFILE, GETATTR, WRITE and FLUSH still work, and so does the
 * transport — a new memory region (an fd from the frontend), a frontend
 * knocking (accepted and refused, no accept() loop) — thanks to the
 * descriptors kept in reserve; a RELEASE makes room for the next OPEN. */
static void test_emfile(void)
{
        if (!harness_require_sluice("sluice-fs's own limit handling"))
                return;
        if (access(PRLIMIT, X_OK) < 0) {
                g_test_skip(PRLIMIT " is not installed");
                return;
        }
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "keep", "kept");
        harness_write(h, "later", "later");
        /* sh (as the daemon's user) sends the daemon's log to a file. */
        g_autofree char *log = g_build_filename(h->dir, "daemon.log", NULL);
        g_autofree char *redirect = g_strdup_printf("exec \"$0\" \"$@\" 2>>'%s'", log);
        GPtrArray *argv = harness_daemon_argv(h, TRUE, NULL);
        const char *wrapper[] = { "/bin/sh", "-c", redirect, PRLIMIT, "--nofile=32:64", "--" };
        for (unsigned i = G_N_ELEMENTS(wrapper); i-- > 0; )
                g_ptr_array_insert(argv, 0, g_strdup(wrapper[i]));
        harness_start_argv(h, argv);
        g_ptr_array_unref(argv);
        struct vmm *v = h->vmm = harness_connect(h, NULL);
        /* After the connection: until the daemon runs, h->pid is still the
         * shell or prlimit, with the soft limit of 32. */
        g_assert_cmpuint(soft_nofile(h->pid), ==, 64);

        struct fuse_entry_out keep;
        assert_ok(vmm_lookup(v, VMM_ROOT, "keep", &keep));
        uint64_t fhs[64], nodes[64];
        unsigned n = 0;
        int err = 0;
        for (; n < G_N_ELEMENTS(fhs); n++) {
                char name[16];
                struct fuse_entry_out e;
                g_snprintf(name, sizeof(name), "f%u", n);
                err = vmm_create(v, VMM_ROOT, name, O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fhs[n]);
                if (err != 0)
                        break;
                nodes[n] = e.nodeid;
        }
        g_test_message("%u files open when CREATE failed with %d", n, err);
        g_assert_cmpuint(n, >, 0);
        g_assert_cmpuint(n, <, G_N_ELEMENTS(fhs));
        g_assert_cmpint(err, ==, -EMFILE);
        /* A failed CREATE may have left one descriptor: OPENs take what is left. */
        uint64_t fh, open_fhs[8];
        unsigned n_open = 0;
        while ((err = vmm_open(v, keep.nodeid, O_RDONLY, &fh)) == 0 && n_open < G_N_ELEMENTS(open_fhs))
                open_fhs[n_open++] = fh;
        g_assert_cmpuint(n_open, <, G_N_ELEMENTS(open_fhs));
        g_assert_cmpint(err, ==, -EMFILE);
        struct fuse_entry_out e;
        assert_errno(vmm_lookup(v, VMM_ROOT, "later", &e), -EMFILE);

        /* What needs no new descriptor still works. */
        struct fuse_attr a;
        assert_ok(vmm_getattr(v, VMM_ROOT, &a));
        assert_ok(vmm_getattr(v, keep.nodeid, &a));
        g_assert_cmpuint(a.size, ==, 4);
        uint32_t written = 0;
        assert_ok(vmm_write(v, nodes[0], fhs[0], 0, "abc", 3, &written));
        g_assert_cmpuint(written, ==, 3);
        /* FLUSH (a guest's close()) must not fail for want of a descriptor. */
        assert_ok(vmm_flush(v, nodes[0], fhs[0]));

        /* The transport still gets descriptors: a memory region (its memfd)... */
        assert_ok(vmm_add_extra_region(v, 0x200000000ull, 1 << 20));
        assert_ok(vmm_getattr(v, keep.nodeid, &a));
        assert_ok(vmm_remove_extra_region(v));
        /* ... and a second frontend knocking is accepted and refused, once. */
        int knock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_strlcpy(sa.sun_path, h->socket, sizeof(sa.sun_path));
        g_assert_cmpint(connect(knock, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
        g_assert_true(log_wait(log, "refusing a second frontend", "cannot accept"));
        g_assert_cmpuint(log_count(log, "refusing a second frontend"), ==, 1);
        g_assert_cmpuint(log_count(log, "accept failed"), ==, 0);
        g_assert_cmpuint(log_count(log, "cannot accept"), ==, 0);
        close(knock);
        assert_ok(vmm_getattr(v, keep.nodeid, &a));

        /* A RELEASE makes room for the next OPEN. */
        assert_ok(vmm_release(v, nodes[0], fhs[0]));
        assert_ok(vmm_open(v, keep.nodeid, O_RDONLY, &fh));
        char buf[8] = { 0 };
        size_t len = 0;
        assert_ok(vmm_read(v, keep.nodeid, fh, 0, buf, sizeof(buf), &len));
        g_assert_cmpstr(buf, ==, "kept");
        assert_ok(vmm_release(v, keep.nodeid, fh));
        for (unsigned i = 1; i < n; i++)
                assert_ok(vmm_release(v, nodes[i], fhs[i]));
        for (unsigned i = 0; i < n_open; i++)
                assert_ok(vmm_release(v, keep.nodeid, open_fhs[i]));
        /* All released: LOOKUP works again. */
        assert_ok(vmm_lookup(v, VMM_ROOT, "later", &e));
        harness_assert_alive(h);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/limits/large-windows", test_large_windows);
        g_test_add_func("/limits/default", test_default_limits);
        g_test_add_func("/limits/emfile", test_emfile);
        return g_test_run();
}
