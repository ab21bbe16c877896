/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-passthrough.c — the FUSE operations end to end through fs_process(),
 * in-process, against a temporary shared folder. */
#include <glib.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/xattr.h>

#include "fuse-test-util.h"
#include "pt-internal.h"

static void test_init_flags(void)
{
        struct ft t;
        const struct fuse_init_out *o;
        struct fuse_init_in init = { .major = 7, .minor = 38, .max_readahead = 131072,
                                     .flags = 0xfffffffbu, .flags2 = 0xb };

        ft_setup(&t);
        /* Protocols older than 7.12 are refused (and the session goes on). */
        init.minor = 11;
        g_assert_cmpint(ft_send(&t, FUSE_INIT, 0, &init, sizeof(init), NULL, 0), ==, -EPROTO);
        init.minor = 38;
        g_assert_cmpint(ft_send(&t, FUSE_INIT, 0, &init, 8, NULL, 0), ==, -EINVAL);
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_DESTROY, 0, NULL, 0, NULL, 0), ==, 0);
        /* After DESTROY requests fail until the next INIT. */
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, -EIO);
        g_assert_cmpint(ft_send(&t, FUSE_INIT, 0, &init, sizeof(init), NULL, 0), ==, 0);
        o = ft_body(&t);
        g_assert_cmpuint(o->major, ==, 7);
        g_assert_cmpuint(o->minor, ==, 38);
        g_assert_cmpuint(o->max_write, ==, 1024 * 1024);
        g_assert_cmpuint(o->max_pages, ==, 256);
        g_assert_cmpuint(o->max_readahead, ==, 131072);
        g_assert_true(o->flags & FUSE_POSIX_LOCKS);
        g_assert_true(o->flags & FUSE_FLOCK_LOCKS);
        g_assert_true(o->flags & FUSE_DO_READDIRPLUS);
        g_assert_true(o->flags & FUSE_MAX_PAGES);
        g_assert_false(o->flags & FUSE_WRITEBACK_CACHE);
        g_assert_false(o->flags & FUSE_POSIX_ACL);
        /* Unknown opcodes: ENOSYS. */
        g_assert_cmpint(ft_send(&t, FUSE_IOCTL, 1, NULL, 0, NULL, 0), ==, -ENOSYS);
        g_assert_cmpint(ft_send(&t, 4000, 1, NULL, 0, NULL, 0), ==, -ENOSYS);
        ft_teardown(&t);
}

static void test_create_write_read(void)
{
        struct ft t;
        struct fuse_entry_out e, e2;
        uint64_t fh, fh2;
        size_t len;
        g_autofree char *path = NULL, *contents = NULL;
        struct stat st;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "hello.txt", 0666, O_RDWR, &e, &fh), ==, 0);
        g_assert_true(S_ISREG(e.attr.mode));
        g_assert_cmpuint(e.attr.mode & 07777, ==, 0644);   /* umask 022 applied */
        g_assert_cmpuint(e.attr.uid, ==, getuid());
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "hello, world\n", 13), ==, 0);
        g_assert_cmpint(ft_read(&t, e.nodeid, fh, 7, 100, &len), ==, 0);
        g_assert_cmpuint(len, ==, 6);
        g_assert_cmpmem(ft_body(&t), 6, "world\n", 6);
        g_assert_cmpint(ft_release(&t, e.nodeid, fh, false), ==, 0);
        /* The released fh is dead. */
        g_assert_cmpint(ft_read(&t, e.nodeid, fh, 0, 100, &len), ==, -EBADF);

        path = ft_path(&t, "hello.txt");
        g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
        g_assert_cmpstr(contents, ==, "hello, world\n");
        g_assert_cmpint(stat(path, &st), ==, 0);
        g_assert_cmpuint(st.st_uid, ==, getuid());

        /* Same file, same nodeid. */
        g_assert_cmpint(ft_lookup(&t, 1, "hello.txt", &e2), ==, 0);
        g_assert_cmpuint(e2.nodeid, ==, e.nodeid);
        g_assert_cmpint(ft_lookup(&t, 1, "missing", NULL), ==, -ENOENT);

        /* O_TRUNC on open, then append. */
        g_assert_cmpint(ft_open(&t, e.nodeid, O_WRONLY | O_TRUNC, &fh2), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh2, 0, "ab", 2), ==, 0);
        g_assert_cmpint(ft_release(&t, e.nodeid, fh2, false), ==, 0);
        g_clear_pointer(&contents, g_free);
        g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
        g_assert_cmpstr(contents, ==, "ab");
        /* Writing through a read-only handle fails. */
        g_assert_cmpint(ft_open(&t, e.nodeid, O_RDONLY, &fh2), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh2, 0, "x", 1), ==, -EBADF);
        ft_release(&t, e.nodeid, fh2, false);

        g_assert_cmpuint(stats_get(&t.stats.bytes_written), ==, 15);
        g_assert_cmpuint(stats_get(&t.stats.bytes_read), ==, 6);
        g_assert_cmpuint(stats_get(&t.stats.opcode[FUSE_CREATE]), ==, 1);
        g_assert_cmpuint(stats_get(&t.stats.errors), >=, 3);
        ft_teardown(&t);
}

static void test_big_read_write_split_iov(void)
{
        struct ft t;
        struct fuse_entry_out e;
        uint64_t fh;
        enum { N = 1024 * 1024 };
        g_autofree uint8_t *data = g_malloc(N);
        struct fuse_write_in win;
        struct fuse_read_in rin;
        struct fuse_in_header h;
        g_autofree uint8_t *outbuf = g_malloc(N + 16);
        struct fuse_out_header oh;
        size_t got;

        ft_setup(&t);
        for (size_t i = 0; i < N; i++)
                data[i] = (uint8_t)(i * 7 + (i >> 12));
        g_assert_cmpint(ft_create(&t, 1, "big", 0644, O_RDWR, &e, &fh), ==, 0);
        /* A 1 MiB write whose payload spans many guest buffers. */
        {
                struct iovec in[2 + 256];
                struct iovec out = { t.out, 4096 };

                win = (struct fuse_write_in){ .fh = fh, .offset = 0, .size = N };
                h = (struct fuse_in_header){ .len = sizeof(h) + sizeof(win) + N, .opcode = FUSE_WRITE,
                                             .unique = 77, .nodeid = e.nodeid };
                in[0] = (struct iovec){ &h, sizeof(h) };
                in[1] = (struct iovec){ &win, sizeof(win) };
                for (int i = 0; i < 256; i++)
                        in[2 + i] = (struct iovec){ data + i * 4096, 4096 };
                g_assert_cmpuint(fs_process(t.w, in, 258, &out, 1, NULL), ==,
                                 sizeof(oh) + sizeof(struct fuse_write_out));
                g_assert_cmpint(ft_hdr(&t)->error, ==, 0);
                g_assert_cmpuint(((const struct fuse_write_out *)ft_body(&t))->size, ==, N);
        }
        /* A 1 MiB read into a header buffer plus 256 page buffers. */
        {
                struct iovec in[2];
                struct iovec out[257];
                size_t n;

                rin = (struct fuse_read_in){ .fh = fh, .offset = 0, .size = N };
                h = (struct fuse_in_header){ .len = sizeof(h) + sizeof(rin), .opcode = FUSE_READ,
                                             .unique = 78, .nodeid = e.nodeid };
                in[0] = (struct iovec){ &h, sizeof(h) };
                in[1] = (struct iovec){ &rin, sizeof(rin) };
                out[0] = (struct iovec){ &oh, sizeof(oh) };
                for (int i = 0; i < 256; i++)
                        out[1 + i] = (struct iovec){ outbuf + i * 4096, 4096 };
                n = fs_process(t.w, in, 2, out, 257, NULL);
                g_assert_cmpuint(n, ==, sizeof(oh) + N);
                g_assert_cmpint(oh.error, ==, 0);
                g_assert_cmpuint(oh.len, ==, n);
                g_assert_cmpmem(outbuf, N, data, N);
        }
        /* A read larger than the reply buffer is cut to the buffer. */
        g_assert_cmpint(ft_send_iov(&t, FUSE_READ, e.nodeid, &rin, sizeof(rin), NULL, 0, NULL, 0,
                                    sizeof(oh) + 100), ==, 0);
        got = t.out_len - sizeof(oh);
        g_assert_cmpuint(got, ==, 100);
        ft_teardown(&t);
}

static void test_dirs_and_names(void)
{
        struct ft t;
        struct fuse_entry_out d, f, l;
        struct fuse_mkdir_in mk = { .mode = 0755, .umask = 022 };
        struct fuse_rename2_in rn2 = { 0 };
        struct fuse_link_in ln;
        uint64_t fh;
        g_autofree char *p1 = NULL, *p2 = NULL;
        char buf[64];

        ft_setup(&t);
        g_assert_cmpint(ft_send(&t, FUSE_MKDIR, 1, &mk, sizeof(mk), "sub", 4), ==, 0);
        memcpy(&d, ft_body(&t), sizeof(d));
        g_assert_true(S_ISDIR(d.attr.mode));
        g_assert_cmpint(ft_create(&t, d.nodeid, "a", 0644, O_WRONLY, &f, &fh), ==, 0);
        ft_release(&t, f.nodeid, fh, false);

        /* RENAME sub/a -> b (root) */
        {
                struct fuse_rename_in rn = { .newdir = 1 };
                uint8_t names[] = "a\0b";

                g_assert_cmpint(ft_send(&t, FUSE_RENAME, d.nodeid, &rn, sizeof(rn), names, sizeof(names)), ==, 0);
        }
        p1 = ft_path(&t, "b");
        g_assert_true(g_file_test(p1, G_FILE_TEST_IS_REGULAR));
        /* RENAME2 NOREPLACE onto an existing name fails; unknown flags are EINVAL. */
        g_assert_cmpint(ft_create(&t, 1, "c", 0644, O_WRONLY, NULL, &fh), ==, 0);
        rn2.newdir = 1;
        rn2.flags = RENAME_NOREPLACE;
        g_assert_cmpint(ft_send(&t, FUSE_RENAME2, 1, &rn2, sizeof(rn2), "b\0c", 4), ==, -EEXIST);
        rn2.flags = RENAME_EXCHANGE;
        g_assert_cmpint(ft_send(&t, FUSE_RENAME2, 1, &rn2, sizeof(rn2), "b\0c", 4), ==, 0);
        rn2.flags = 1u << 2; /* RENAME_WHITEOUT */
        g_assert_cmpint(ft_send(&t, FUSE_RENAME2, 1, &rn2, sizeof(rn2), "b\0c", 4), ==, -EINVAL);

        /* LINK and the nlink count. */
        ln.oldnodeid = f.nodeid;
        g_assert_cmpint(ft_send(&t, FUSE_LINK, d.nodeid, &ln, sizeof(ln), "hard", 5), ==, 0);
        memcpy(&l, ft_body(&t), sizeof(l));
        g_assert_cmpuint(l.nodeid, ==, f.nodeid);
        g_assert_cmpuint(l.attr.nlink, ==, 2);

        /* SYMLINK and READLINK: the target is stored, never followed. */
        g_assert_cmpint(ft_send(&t, FUSE_SYMLINK, 1, "sl", 3, "../outside/secret", 18), ==, 0);
        memcpy(&l, ft_body(&t), sizeof(l));
        g_assert_true(S_ISLNK(l.attr.mode));
        g_assert_cmpint(ft_send(&t, FUSE_READLINK, l.nodeid, NULL, 0, NULL, 0), ==, 0);
        g_assert_cmpuint(t.out_len - sizeof(struct fuse_out_header), ==, 17);
        g_assert_cmpmem(ft_body(&t), 17, "../outside/secret", 17);
        p2 = ft_path(&t, "sl");
        g_assert_cmpint(readlink(p2, buf, sizeof(buf)), ==, 17);

        /* UNLINK / RMDIR */
        g_assert_cmpint(ft_send(&t, FUSE_RMDIR, 1, "sub", 4, NULL, 0), ==, -ENOTEMPTY);
        g_assert_cmpint(ft_send(&t, FUSE_UNLINK, d.nodeid, "hard", 5, NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_RMDIR, 1, "sub", 4, NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_UNLINK, 1, "sub", 4, NULL, 0), ==, -ENOENT);

        /* MKNOD of a FIFO */
        {
                struct fuse_mknod_in mn = { .mode = S_IFIFO | 0600, .umask = 0 };
                struct fuse_entry_out fe;
                g_autofree char *pf = ft_path(&t, "fifo");
                struct stat st;
                uint64_t ffh;

                g_assert_cmpint(ft_send(&t, FUSE_MKNOD, 1, &mn, sizeof(mn), "fifo", 5), ==, 0);
                memcpy(&fe, ft_body(&t), sizeof(fe));
                g_assert_cmpint(stat(pf, &st), ==, 0);
                g_assert_true(S_ISFIFO(st.st_mode));
                /* Opening a FIFO on the host would block the queue thread. */
                g_assert_cmpint(ft_open(&t, fe.nodeid, O_RDONLY, &ffh), ==, -ENXIO);
        }
        ft_teardown(&t);
}

struct dirent_seen {
        GHashTable *names;
        uint64_t last_off;
        unsigned count;
};

static void parse_dirents(struct ft *t, bool plus, struct dirent_seen *seen)
{
        const uint8_t *p = ft_body(t), *end = t->out + t->out_len;

        while (p < end) {
                const struct fuse_dirent *d;
                size_t size;

                if (plus) {
                        const struct fuse_direntplus *dp = (const void *)p;

                        d = &dp->dirent;
                        size = FUSE_DIRENTPLUS_SIZE(dp);
                } else {
                        d = (const void *)p;
                        size = FUSE_DIRENT_SIZE(d);
                }
                g_assert_cmpuint(size, <=, (size_t)(end - p));
                g_hash_table_add(seen->names, g_strndup(d->name, d->namelen));
                seen->last_off = d->off;
                seen->count++;
                p += size;
        }
}

static void test_readdir(gconstpointer plus_p)
{
        bool plus = GPOINTER_TO_INT(plus_p);
        struct ft t;
        struct fuse_open_in oin = { .flags = O_RDONLY };
        struct dirent_seen seen = { g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), 0, 0 };
        uint64_t fh;
        enum { N = 1500 };
        size_t inodes_before = 0;

        ft_setup(&t);
        for (int i = 0; i < N; i++) {
                /* Names of every length mod 8, so that some records end exactly with the name. */
                g_autofree char *name = g_strdup_printf("%.*s%05d", i % 17, "abcdefghijklmnopq", i);
                g_autofree char *p = ft_path(&t, name);

                g_assert_true(g_file_set_contents(p, "", 0, NULL));
        }
        g_assert_cmpint(ft_send(&t, FUSE_OPENDIR, 1, &oin, sizeof(oin), NULL, 0), ==, 0);
        fh = ((const struct fuse_open_out *)ft_body(&t))->fh;
        (void)inodes_before;
        for (int rounds = 0; rounds < 1000; rounds++) {
                struct fuse_read_in rin = { .fh = fh, .offset = seen.last_off, .size = 4096 };
                int err = ft_send(&t, plus ? FUSE_READDIRPLUS : FUSE_READDIR, 1, &rin, sizeof(rin), NULL, 0);

                g_assert_cmpint(err, ==, 0);
                if (t.out_len == sizeof(struct fuse_out_header))
                        break;
                g_assert_cmpuint(t.out_len, <=, sizeof(struct fuse_out_header) + 4096);
                parse_dirents(&t, plus, &seen);
        }
        g_assert_cmpuint(g_hash_table_size(seen.names), ==, N + 2);
        g_assert_cmpuint(seen.count, ==, N + 2);
        g_assert_true(g_hash_table_contains(seen.names, ".."));
        /* A buffer too small for one entry. */
        {
                struct fuse_read_in rin = { .fh = fh, .offset = 0, .size = 8 };

                g_assert_cmpint(ft_send(&t, FUSE_READDIR, 1, &rin, sizeof(rin), NULL, 0), ==, -EINVAL);
        }
        g_assert_cmpint(ft_release(&t, 1, fh, true), ==, 0);
        g_assert_cmpint(ft_release(&t, 1, fh, true), ==, -EBADF);
        g_hash_table_unref(seen.names);
        ft_teardown(&t);
}

static void test_setattr(void)
{
        struct ft t;
        struct fuse_entry_out e;
        struct fuse_setattr_in sa = { 0 };
        const struct fuse_attr_out *ao;
        uint64_t fh;
        g_autofree char *p = NULL;
        struct stat st;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "f", 0644, O_RDWR, &e, &fh), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "0123456789", 10), ==, 0);
        p = ft_path(&t, "f");

        sa.valid = FATTR_MODE;
        sa.mode = S_IFREG | 0600;
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, 0);
        ao = ft_body(&t);
        g_assert_cmpuint(ao->attr.mode & 07777, ==, 0600);

        sa.valid = FATTR_SIZE;
        sa.size = 4;
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_attr_out *)ft_body(&t))->attr.size, ==, 4);
        sa.valid = FATTR_SIZE | FATTR_FH;
        sa.fh = fh;
        sa.size = 2;
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, 0);
        g_assert_cmpint(stat(p, &st), ==, 0);
        g_assert_cmpint(st.st_size, ==, 2);

        sa.valid = FATTR_ATIME | FATTR_MTIME;
        sa.atime = 1000000000;
        sa.mtime = 1234567890;
        sa.mtimensec = 5;
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, 0);
        g_assert_cmpint(stat(p, &st), ==, 0);
        g_assert_cmpint(st.st_mtim.tv_sec, ==, 1234567890);
        g_assert_cmpint(st.st_mtim.tv_nsec, ==, 5);
        g_assert_cmpint(st.st_atim.tv_sec, ==, 1000000000);

        sa.valid = FATTR_MTIME | FATTR_MTIME_NOW;
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, 0);
        g_assert_cmpint(stat(p, &st), ==, 0);
        g_assert_cmpint(st.st_mtim.tv_sec, >, 1234567890);

        /* chown to ourselves works unprivileged. */
        sa.valid = FATTR_UID | FATTR_GID;
        sa.uid = getuid();
        sa.gid = getgid();
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, 0);
        ft_release(&t, e.nodeid, fh, false);
        ft_teardown(&t);
}

static void test_readonly(void)
{
        struct ft t;
        struct fuse_entry_out e;
        struct fuse_setattr_in sa = { .valid = FATTR_MODE, .mode = 0600 };
        struct fuse_mkdir_in mk = { .mode = 0755 };
        uint64_t fh, rfh;
        g_autofree char *p = NULL, *contents = NULL;
        size_t len;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "f", 0644, O_RDWR, &e, &fh), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "keep", 4), ==, 0);
        fs_session_set_readonly(t.s, true);
        g_assert_true(fs_session_get_readonly(t.s));
        /* A handle opened before the toggle cannot write either. */
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "lost", 4), ==, -EROFS);
        g_assert_cmpint(ft_create(&t, 1, "g", 0644, O_RDWR, NULL, NULL), ==, -EROFS);
        g_assert_cmpint(ft_open(&t, e.nodeid, O_WRONLY, NULL), ==, -EROFS);
        g_assert_cmpint(ft_open(&t, e.nodeid, O_RDONLY | O_TRUNC, NULL), ==, -EROFS);
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, -EROFS);
        g_assert_cmpint(ft_send(&t, FUSE_MKDIR, 1, &mk, sizeof(mk), "d", 2), ==, -EROFS);
        g_assert_cmpint(ft_send(&t, FUSE_UNLINK, 1, "f", 2, NULL, 0), ==, -EROFS);
        g_assert_cmpint(ft_send(&t, FUSE_SYMLINK, 1, "s", 2, "f", 2), ==, -EROFS);
        {
                struct fuse_fallocate_in fa = { .fh = fh, .length = 100 };
                struct fuse_access_in ac = { .mask = W_OK };

                g_assert_cmpint(ft_send(&t, FUSE_FALLOCATE, e.nodeid, &fa, sizeof(fa), NULL, 0), ==, -EROFS);
                g_assert_cmpint(ft_send(&t, FUSE_ACCESS, e.nodeid, &ac, sizeof(ac), NULL, 0), ==, -EROFS);
        }
        /* Reading still works. */
        g_assert_cmpint(ft_open(&t, e.nodeid, O_RDONLY, &rfh), ==, 0);
        g_assert_cmpint(ft_read(&t, e.nodeid, rfh, 0, 10, &len), ==, 0);
        g_assert_cmpmem(ft_body(&t), len, "keep", 4);
        p = ft_path(&t, "f");
        g_assert_true(g_file_get_contents(p, &contents, &len, NULL));
        g_assert_cmpstr(contents, ==, "keep");
        g_clear_pointer(&p, g_free);
        p = ft_path(&t, "g");
        g_assert_false(g_file_test(p, G_FILE_TEST_EXISTS));
        /* And back. */
        fs_session_set_readonly(t.s, false);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "more", 4), ==, 0);
        ft_teardown(&t);
}

static void test_idmap_in_replies(void)
{
        struct ft t;
        struct fs_options o = { 0 };
        struct fuse_entry_out e;
        struct fuse_setattr_in sa = { .valid = FATTR_UID | FATTR_GID };

        o.guest_uid = 4242;
        o.host_uid = getuid();
        o.guest_gid = 4343;
        o.host_gid = getgid();
        ft_setup_opts(&t, &o);
        g_assert_cmpint(ft_create(&t, 1, "mine", 0644, O_RDWR, &e, NULL), ==, 0);
        g_assert_cmpuint(e.attr.uid, ==, 4242);
        g_assert_cmpuint(e.attr.gid, ==, 4343);
        /* chown to the guest id lands on the host id (a no-op chown to ourselves). */
        sa.uid = 4242;
        sa.gid = 4343;
        g_assert_cmpint(ft_send(&t, FUSE_SETATTR, e.nodeid, &sa, sizeof(sa), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_attr_out *)ft_body(&t))->attr.uid, ==, 4242);
        ft_teardown(&t);
}

static void test_xattr(void)
{
        struct ft t, tx;
        struct fs_options o = { 0 };
        struct fuse_entry_out e;
        struct fuse_setxattr_in si = { .size = 5 };
        struct fuse_getxattr_in gi = { .size = 0 };
        uint8_t setbuf[8 + 32 + 5];
        size_t n;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "x", 0644, O_RDWR, &e, NULL), ==, 0);
        /* Without --xattr: ENOSYS, so the guest stops asking. */
        g_assert_cmpint(ft_send(&t, FUSE_GETXATTR, e.nodeid, &gi, sizeof(gi), "user.a", 7), ==, -ENOSYS);
        ft_teardown(&t);

        o.xattr = true;
        o.guest_uid = o.host_uid = o.guest_gid = o.host_gid = FS_ID_UNMAPPED;
        ft_setup_opts(&tx, &o);
        g_assert_cmpint(ft_create(&tx, 1, "x", 0644, O_RDWR, &e, NULL), ==, 0);
        memcpy(setbuf, &si, 8);
        memcpy(setbuf + 8, "user.color", 11);
        memcpy(setbuf + 19, "green", 5);
        n = 8 + 11 + 5;
        if (ft_send(&tx, FUSE_SETXATTR, e.nodeid, setbuf, n, NULL, 0) == -EOPNOTSUPP) {
                g_test_skip("no user xattrs on this file system");
                ft_teardown(&tx);
                return;
        }
        g_assert_cmpint(ft_hdr(&tx)->error, ==, 0);
        g_assert_cmpint(ft_send(&tx, FUSE_GETXATTR, e.nodeid, &gi, sizeof(gi), "user.color", 11), ==, 0);
        g_assert_cmpuint(((const struct fuse_getxattr_out *)ft_body(&tx))->size, ==, 5);
        gi.size = 64;
        g_assert_cmpint(ft_send(&tx, FUSE_GETXATTR, e.nodeid, &gi, sizeof(gi), "user.color", 11), ==, 0);
        g_assert_cmpmem(ft_body(&tx), tx.out_len - 16, "green", 5);
        gi.size = 2;
        g_assert_cmpint(ft_send(&tx, FUSE_GETXATTR, e.nodeid, &gi, sizeof(gi), "user.color", 11), ==, -ERANGE);
        gi.size = 64;
        g_assert_cmpint(ft_send(&tx, FUSE_LISTXATTR, e.nodeid, &gi, sizeof(gi), NULL, 0), ==, 0);
        g_assert_nonnull(memmem(ft_body(&tx), tx.out_len - 16, "user.color", 11));
        g_assert_cmpint(ft_send(&tx, FUSE_REMOVEXATTR, e.nodeid, "user.color", 11, NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&tx, FUSE_GETXATTR, e.nodeid, &gi, sizeof(gi), "user.color", 11), ==, -ENODATA);
        ft_teardown(&tx);
}

/* ---- locks ---- */

struct completion {
        pthread_mutex_t m;
        pthread_cond_t c;
        size_t len;
        void *token;
        bool done;
};

static void on_complete(void *token, size_t len, void *userdata)
{
        struct completion *c = userdata;

        pthread_mutex_lock(&c->m);
        c->len = len;
        c->token = token;
        c->done = true;
        pthread_cond_broadcast(&c->c);
        pthread_mutex_unlock(&c->m);
}

static bool wait_complete(struct completion *c, int ms)
{
        bool done;
        gint64 end = g_get_monotonic_time() + ms * 1000;

        pthread_mutex_lock(&c->m);
        while (!c->done && g_get_monotonic_time() < end) {
                pthread_mutex_unlock(&c->m);
                g_usleep(2000);
                pthread_mutex_lock(&c->m);
        }
        done = c->done;
        pthread_mutex_unlock(&c->m);
        return done;
}

static void test_posix_locks_and_setlkw(void)
{
        struct ft t;
        struct fuse_entry_out e;
        uint64_t fh1, fh2;
        struct fuse_lk_in lk = { 0 };
        struct completion c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, false };
        struct fuse_flush_in fl = { 0 };
        uint8_t reply[64];
        struct fuse_in_header h;
        struct iovec in[2], out;
        int token = 99;

        ft_setup(&t);
        fs_worker_set_complete(t.w, on_complete, &c);
        g_assert_cmpint(ft_create(&t, 1, "lockme", 0644, O_RDWR, &e, &fh1), ==, 0);
        g_assert_cmpint(ft_open(&t, e.nodeid, O_RDWR, &fh2), ==, 0);

        /* Owner A takes a write lock on [0, 99]. */
        lk = (struct fuse_lk_in){ .fh = fh1, .owner = 0xA, .lk = { .start = 0, .end = 99, .type = F_WRLCK } };
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);
        /* Owner B sees it with GETLK and cannot take it with SETLK. */
        lk.owner = 0xB;
        lk.fh = fh2;
        lk.lk = (struct fuse_file_lock){ .start = 50, .end = 60, .type = F_RDLCK };
        g_assert_cmpint(ft_send(&t, FUSE_GETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_lk_out *)ft_body(&t))->lk.type, ==, F_WRLCK);
        g_assert_cmpuint(((const struct fuse_lk_out *)ft_body(&t))->lk.end, ==, 99);
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, -EAGAIN);
        /* A's own GETLK sees no conflict. */
        lk.owner = 0xA;
        g_assert_cmpint(ft_send(&t, FUSE_GETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_lk_out *)ft_body(&t))->lk.type, ==, F_UNLCK);

        /* B's SETLKW is deferred: the queue thread goes on. */
        lk.owner = 0xB;
        h = (struct fuse_in_header){ .len = sizeof(h) + sizeof(lk), .opcode = FUSE_SETLKW,
                                     .unique = 500, .nodeid = e.nodeid };
        in[0] = (struct iovec){ &h, sizeof(h) };
        in[1] = (struct iovec){ &lk, sizeof(lk) };
        out = (struct iovec){ reply, sizeof(reply) };
        g_assert_cmpuint(fs_process(t.w, in, 2, &out, 1, &token), ==, FS_PROCESS_DEFERRED);
        g_assert_false(wait_complete(&c, 100));
        /* Other requests still run meanwhile. */
        g_assert_cmpint(ft_lookup(&t, 1, "lockme", NULL), ==, 0);
        /* A closes its file: FLUSH with its owner releases its locks, B gets the lock. */
        fl.fh = fh1;
        fl.lock_owner = 0xA;
        g_assert_cmpint(ft_send(&t, FUSE_FLUSH, e.nodeid, &fl, sizeof(fl), NULL, 0), ==, 0);
        g_assert_true(wait_complete(&c, 5000));
        g_assert_true(c.token == &token);
        g_assert_cmpuint(c.len, ==, sizeof(struct fuse_out_header));
        g_assert_cmpint(((struct fuse_out_header *)reply)->error, ==, 0);
        g_assert_cmpuint(((struct fuse_out_header *)reply)->unique, ==, 500);
        /* Now A is the one who cannot lock. */
        lk.owner = 0xA;
        lk.lk.type = F_WRLCK;
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, -EAGAIN);

        /* INTERRUPT ends a waiting SETLKW with EINTR, and it gets no lock. */
        c.done = false;
        h.unique = 502;
        lk.owner = 0xD;
        g_assert_cmpuint(fs_process(t.w, in, 2, &out, 1, &token), ==, FS_PROCESS_DEFERRED);
        g_assert_false(wait_complete(&c, 50));
        g_assert_cmpint(ft_send(&t, FUSE_INTERRUPT, 0, &(struct fuse_interrupt_in){ 502 },
                                sizeof(struct fuse_interrupt_in), NULL, 0), ==, 1);
        g_assert_true(wait_complete(&c, 5000));
        g_assert_cmpint(((struct fuse_out_header *)reply)->error, ==, -EINTR);
        g_assert_cmpuint(((struct fuse_out_header *)reply)->unique, ==, 502);

        /* A SETLKW that would wait forever is cancelled by a session reset, without a reply. */
        c.done = false;
        h.unique = 501;
        lk.owner = 0xC;
        g_assert_cmpuint(fs_process(t.w, in, 2, &out, 1, &token), ==, FS_PROCESS_DEFERRED);
        g_assert_cmpuint(stats_get(&t.stats.opcode[FUSE_SETLKW]), ==, 2);
        fs_session_reset(t.s);
        g_assert_false(c.done);
        ft_teardown(&t);
}

#define RECORD_FILES (LOCK_RECORDS_PER_SESSION / LOCK_RECORDS_PER_OWNER + 2)

/* Looks up and opens "locked-K" for each K (made when `create`). */
static void open_record_files(struct ft *t, bool create, uint64_t *nodeid, uint64_t *fh)
{
        for (unsigned k = 0; k < RECORD_FILES; k++) {
                g_autofree char *name = g_strdup_printf("locked-%u", k);
                struct fuse_entry_out e;

                if (create)
                        g_assert_cmpint(ft_create(t, 1, name, 0644, O_RDWR, &e, &fh[k]), ==, 0);
                else {
                        g_assert_cmpint(ft_lookup(t, 1, name, &e), ==, 0);
                        g_assert_cmpint(ft_open(t, e.nodeid, O_RDWR, &fh[k]), ==, 0);
                }
                nodeid[k] = e.nodeid;
        }
}

/* Takes separate read locks (every other byte), owner K on file K (the
 * kernel's work per lock grows with the records on one file), until the
 * session's bound refuses a new owner's first one; returns how many were
 * granted. */
static unsigned fill_lock_records(struct ft *t, const uint64_t *nodeid, const uint64_t *fh)
{
        unsigned granted = 0;

        for (unsigned owner = 0; owner < RECORD_FILES; owner++) {
                for (uint64_t k = 0;; k++) {
                        struct fuse_lk_in lk = { .fh = fh[owner], .owner = owner + 1,
                                                 .lk = { .start = 2 * k, .end = 2 * k, .type = F_RDLCK } };
                        int err = ft_send(t, FUSE_SETLK, nodeid[owner], &lk, sizeof(lk), NULL, 0);

                        if (err == -ENOLCK) {
                                if (k == 0)
                                        return granted;
                                break;
                        }
                        g_assert_cmpint(err, ==, 0);
                        granted++;
                }
        }
        return granted;
}

/* The session's count of lock records goes down again when they go: with
 * their file (RELEASE, then FORGET) and with the session (DESTROY + INIT:
 * the whole bound is free again). */
static void test_lock_records_freed(void)
{
        struct fuse_init_in init = { .major = 7, .minor = 38, .max_readahead = 128 * 1024 };
        struct fuse_forget_in fg = { .nlookup = 1 };
        uint64_t nodeid[RECORD_FILES], fh[RECORD_FILES];
        struct ft t;

        ft_setup(&t);
        open_record_files(&t, true, nodeid, fh);
        g_assert_cmpuint(fill_lock_records(&t, nodeid, fh), ==, LOCK_RECORDS_PER_SESSION);

        /* The first file goes (its owner's 128 records with it): exactly
         * that many can be taken again, on it once more. */
        {
                struct fuse_release_in rel = { .fh = fh[0] };
                struct fuse_entry_out e;
                unsigned again = 0;
                int err = 0;

                g_assert_cmpint(ft_send(&t, FUSE_RELEASE, nodeid[0], &rel, sizeof(rel), NULL, 0), ==, 0);
                g_assert_cmpint(ft_send(&t, FUSE_FORGET, nodeid[0], &fg, sizeof(fg), NULL, 0), ==, 1);
                g_assert_cmpint(ft_lookup(&t, 1, "locked-0", &e), ==, 0);
                g_assert_cmpint(ft_open(&t, e.nodeid, O_RDWR, &fh[0]), ==, 0);
                for (uint64_t owner = 100; err == 0; owner++) {
                        struct fuse_lk_in lk = { .fh = fh[0], .owner = owner,
                                                 .lk = { .start = 0, .end = 0, .type = F_RDLCK } };

                        err = ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0);
                        if (err == 0)
                                again++;
                }
                g_assert_cmpint(err, ==, -ENOLCK);
                g_assert_cmpuint(again, ==, LOCK_RECORDS_PER_OWNER);
        }

        g_assert_cmpint(ft_send(&t, FUSE_DESTROY, 0, NULL, 0, NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_INIT, 0, &init, sizeof(init), NULL, 0), ==, 0);
        open_record_files(&t, false, nodeid, fh);
        g_assert_cmpuint(fill_lock_records(&t, nodeid, fh), ==, LOCK_RECORDS_PER_SESSION);
        ft_teardown(&t);
}

/* A guest reset: the new kernel sends INIT without the old one's DESTROY.  It
 * gets a fresh session — nothing of the old one's nodeids, handles, locks or
 * waiting SETLKWs survives, and the old SETLKW writes nothing. */
static void test_init_again_after_guest_reset(void)
{
        struct fuse_init_in init = { .major = 7, .minor = 38, .max_readahead = 131072,
                                     .flags = 0xfffffffbu, .flags2 = 0xb };
        struct completion c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, false };
        struct fuse_entry_out e, e2;
        struct fuse_lk_in lk;
        struct fuse_in_header h;
        struct iovec in[2], out;
        uint8_t reply[64], untouched[64];
        uint64_t fh, dfh;
        int token = 7;
        size_t len;
        struct ft t;

        ft_setup(&t);
        fs_worker_set_complete(t.w, on_complete, &c);
        g_assert_cmpint(ft_create(&t, 1, "kept", 0644, O_RDWR, &e, &fh), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "before reset", 12), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_OPENDIR, 1, &(struct fuse_open_in){ 0 },
                                sizeof(struct fuse_open_in), NULL, 0), ==, 0);
        dfh = ((const struct fuse_open_out *)ft_body(&t))->fh;
        /* The old kernel's owner A holds a lock, its owner B waits for it. */
        lk = (struct fuse_lk_in){ .fh = fh, .owner = 0xA, .lk = { .end = 99, .type = F_WRLCK } };
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);
        lk.owner = 0xB;
        h = (struct fuse_in_header){ .len = sizeof(h) + sizeof(lk), .opcode = FUSE_SETLKW,
                                     .unique = 900, .nodeid = e.nodeid };
        in[0] = (struct iovec){ &h, sizeof(h) };
        in[1] = (struct iovec){ &lk, sizeof(lk) };
        memset(reply, 0x5a, sizeof(reply));
        memcpy(untouched, reply, sizeof(reply));
        out = (struct iovec){ reply, sizeof(reply) };
        g_assert_cmpuint(fs_process(t.w, in, 2, &out, 1, &token), ==, FS_PROCESS_DEFERRED);

        /* The new kernel's INIT: answered, and the old waiter is gone when it returns. */
        g_assert_cmpint(ft_send(&t, FUSE_INIT, 0, &init, sizeof(init), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_init_out *)ft_body(&t))->minor, ==, 38);
        g_assert_true(fs_session_is_initialized(t.s));
        g_assert_false(c.done);
        g_assert_cmpmem(reply, sizeof(reply), untouched, sizeof(untouched));

        /* The old numbers mean nothing now. */
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, e.nodeid, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, -EBADF);
        g_assert_cmpint(ft_read(&t, e.nodeid, fh, 0, 100, &len), ==, -EBADF);
        g_assert_cmpint(ft_send(&t, FUSE_READDIR, 1, &(struct fuse_read_in){ .fh = dfh, .size = 4096 },
                                sizeof(struct fuse_read_in), NULL, 0), ==, -EBADF);
        /* The file is still there, and the old kernel's lock went with it. */
        g_assert_cmpint(ft_lookup(&t, 1, "kept", &e2), ==, 0);
        g_assert_cmpint(ft_open(&t, e2.nodeid, O_RDWR, &fh), ==, 0);
        g_assert_cmpint(ft_read(&t, e2.nodeid, fh, 0, 100, &len), ==, 0);
        g_assert_cmpmem(ft_body(&t), len, "before reset", 12);
        lk = (struct fuse_lk_in){ .fh = fh, .owner = 0xC, .lk = { .end = 99, .type = F_WRLCK } };
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e2.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);
        g_assert_cmpint(ft_write(&t, e2.nodeid, fh, 12, ", after", 7), ==, 0);

        /* A refused INIT (too old) leaves the running session alone. */
        init.major = 6;
        g_assert_cmpint(ft_send(&t, FUSE_INIT, 0, &init, sizeof(init), NULL, 0), ==, -EPROTO);
        g_assert_cmpint(ft_read(&t, e2.nodeid, fh, 0, 100, &len), ==, 0);
        g_assert_cmpmem(ft_body(&t), len, "before reset, after", 19);
        ft_teardown(&t);
}

/* A SETLKW deferred from queue `q` of worker w, with its own reply buffer. */
struct waiting {
        struct fuse_in_header h;
        struct fuse_lk_in lk;
        uint8_t reply[64];
        struct completion c;
};

static void start_waiting(struct ft *t, struct fs_worker *w, struct waiting *wt, uint64_t nodeid,
                          uint64_t fh, uint64_t owner, uint64_t unique)
{
        struct iovec in[2], out;

        *wt = (struct waiting){ .c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, false } };
        wt->h = (struct fuse_in_header){ .len = sizeof(wt->h) + sizeof(wt->lk), .opcode = FUSE_SETLKW,
                                         .unique = unique, .nodeid = nodeid };
        wt->lk = (struct fuse_lk_in){ .fh = fh, .owner = owner, .lk = { .end = 9, .type = F_WRLCK } };
        in[0] = (struct iovec){ &wt->h, sizeof(wt->h) };
        in[1] = (struct iovec){ &wt->lk, sizeof(wt->lk) };
        out = (struct iovec){ wt->reply, sizeof(wt->reply) };
        fs_worker_set_complete(w, on_complete, &wt->c);
        g_assert_cmpuint(fs_process(w, in, 2, &out, 1, wt), ==, FS_PROCESS_DEFERRED);
}

static void assert_finished_eintr(struct waiting *wt)
{
        const struct fuse_out_header *oh = (const void *)wt->reply;

        /* Done by the time fs_session_finish_deferred() returned: no waiting here. */
        g_assert_true(wt->c.done);
        g_assert_true(wt->c.token == wt);
        g_assert_cmpuint(wt->c.len, ==, sizeof(*oh));
        g_assert_cmpint(oh->error, ==, -EINTR);
        g_assert_cmpuint(oh->unique, ==, wt->h.unique);
}

/* Ring stop (GET_VRING_BASE): the deferred requests of that queue, and only
 * those, are finished with EINTR — reply written and completion run — before
 * fs_session_finish_deferred() returns. */
static void test_finish_deferred_per_queue(void)
{
        struct fs_worker *w2;
        struct waiting a, b, b2;
        struct fuse_entry_out e;
        struct fuse_lk_in lk;
        uint64_t fh;
        struct ft t;

        ft_setup(&t);
        g_assert_cmpint(fs_worker_new(t.s, 2, &w2), ==, 0);
        g_assert_cmpint(ft_create(&t, 1, "contended", 0644, O_RDWR, &e, &fh), ==, 0);
        lk = (struct fuse_lk_in){ .fh = fh, .owner = 1, .lk = { .end = 9, .type = F_WRLCK } };
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);

        start_waiting(&t, t.w, &a, e.nodeid, fh, 2, 1001);    /* queue 1 */
        start_waiting(&t, w2, &b, e.nodeid, fh, 3, 1002);     /* queue 2 */
        start_waiting(&t, w2, &b2, e.nodeid, fh, 4, 1003);    /* queue 2 */

        fs_session_finish_deferred(t.s, 2);
        assert_finished_eintr(&b);
        assert_finished_eintr(&b2);
        /* Queue 1's waiter is still waiting for the lock. */
        g_assert_false(a.c.done);
        /* A queue with nothing deferred: returns at once. */
        fs_session_finish_deferred(t.s, 5);
        g_assert_false(a.c.done);
        /* All queues (what SET_MEM_TABLE does). */
        fs_session_finish_deferred(t.s, -1);
        assert_finished_eintr(&a);

        fs_worker_free(w2);
        ft_teardown(&t);
}

static void test_flock(void)
{
        struct ft t;
        struct fuse_entry_out e;
        uint64_t fh1, fh2;
        struct fuse_lk_in lk;
        g_autofree char *p = NULL;
        int hostfd;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "fl", 0644, O_RDWR, &e, &fh1), ==, 0);
        g_assert_cmpint(ft_open(&t, e.nodeid, O_RDONLY, &fh2), ==, 0);
        lk = (struct fuse_lk_in){ .fh = fh1, .owner = 1, .lk = { .end = INT64_MAX, .type = F_WRLCK },
                                  .lk_flags = FUSE_LK_FLOCK };
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, 0);
        /* Another open file of the same file (guest side) conflicts ... */
        lk.fh = fh2;
        lk.lk.type = F_RDLCK;
        g_assert_cmpint(ft_send(&t, FUSE_SETLK, e.nodeid, &lk, sizeof(lk), NULL, 0), ==, -EWOULDBLOCK);
        /* ... and so does a host process. */
        p = ft_path(&t, "fl");
        hostfd = open(p, O_RDONLY);
        g_assert_cmpint(flock(hostfd, LOCK_SH | LOCK_NB), ==, -1);
        /* RELEASE with FLOCK_UNLOCK drops it. */
        {
                struct fuse_release_in rel = { .fh = fh1, .release_flags = FUSE_RELEASE_FLOCK_UNLOCK };

                g_assert_cmpint(ft_send(&t, FUSE_RELEASE, e.nodeid, &rel, sizeof(rel), NULL, 0), ==, 0);
        }
        g_assert_cmpint(flock(hostfd, LOCK_SH | LOCK_NB), ==, 0);
        close(hostfd);
        ft_teardown(&t);
}

static void test_misc_ops(void)
{
        struct ft t;
        struct fuse_entry_out e;
        uint64_t fh, fh2;
        struct fuse_fallocate_in fa;
        struct fuse_lseek_in ls;
        struct fuse_copy_file_range_in cr;
        struct fuse_fsync_in fs = { 0 };
        struct fuse_access_in ac = { .mask = R_OK | W_OK };
        size_t len;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "sparse", 0644, O_RDWR, &e, &fh), ==, 0);
        fa = (struct fuse_fallocate_in){ .fh = fh, .offset = 0, .length = 1 << 20 };
        g_assert_cmpint(ft_send(&t, FUSE_FALLOCATE, e.nodeid, &fa, sizeof(fa), NULL, 0), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 3 << 20, "tail", 4), ==, 0);
        g_assert_cmpint(ft_write(&t, e.nodeid, fh, 0, "head", 4), ==, 0);
        ls = (struct fuse_lseek_in){ .fh = fh, .offset = 0, .whence = SEEK_DATA };
        g_assert_cmpint(ft_send(&t, FUSE_LSEEK, e.nodeid, &ls, sizeof(ls), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_lseek_out *)ft_body(&t))->offset, ==, 0);
        ls.whence = SEEK_HOLE;
        g_assert_cmpint(ft_send(&t, FUSE_LSEEK, e.nodeid, &ls, sizeof(ls), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_lseek_out *)ft_body(&t))->offset, <=, 3 << 20);
        g_assert_cmpuint(((const struct fuse_lseek_out *)ft_body(&t))->offset, >=, 4);
        ls.whence = 17;
        g_assert_cmpint(ft_send(&t, FUSE_LSEEK, e.nodeid, &ls, sizeof(ls), NULL, 0), ==, -EINVAL);

        g_assert_cmpint(ft_create(&t, 1, "copy", 0644, O_RDWR, NULL, &fh2), ==, 0);
        cr = (struct fuse_copy_file_range_in){ .fh_in = fh, .off_in = 3 << 20, .fh_out = fh2,
                                               .off_out = 1, .len = 4 };
        g_assert_cmpint(ft_send(&t, FUSE_COPY_FILE_RANGE, e.nodeid, &cr, sizeof(cr), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_write_out *)ft_body(&t))->size, ==, 4);
        g_assert_cmpint(ft_read(&t, 0, fh2, 0, 10, &len), ==, 0);
        g_assert_cmpuint(len, ==, 5);
        g_assert_cmpmem((const uint8_t *)ft_body(&t) + 1, 4, "tail", 4);

        fs.fh = fh;
        g_assert_cmpint(ft_send(&t, FUSE_FSYNC, e.nodeid, &fs, sizeof(fs), NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_FLUSH, e.nodeid, &(struct fuse_flush_in){ .fh = fh },
                                sizeof(struct fuse_flush_in), NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_STATFS, 1, NULL, 0, NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_statfs_out *)ft_body(&t))->st.namelen, >, 0);
        g_assert_cmpint(ft_send(&t, FUSE_ACCESS, e.nodeid, &ac, sizeof(ac), NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_SYNCFS, 1, &(uint64_t){ 0 }, 8, NULL, 0), ==, 0);
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, e.nodeid, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, 0);
        g_assert_cmpuint(((const struct fuse_attr_out *)ft_body(&t))->attr.size, ==, (3 << 20) + 4);
        /* INTERRUPT gets no reply. */
        g_assert_cmpint(ft_send(&t, FUSE_INTERRUPT, 0, &(struct fuse_interrupt_in){ 1 },
                                sizeof(struct fuse_interrupt_in), NULL, 0), ==, 1);
        /* TMPFILE: an unnamed file in the directory. */
        {
                struct fuse_create_in ci = { .flags = O_RDWR, .mode = S_IFREG | 0600 };
                int err = ft_send(&t, 51, 1, &ci, sizeof(ci), "/", 2);

                g_assert_true(err == 0 || err == -EOPNOTSUPP);
        }
        ft_teardown(&t);
}

static void test_forget_counts(void)
{
        struct ft t;
        struct fuse_entry_out e;
        struct fuse_forget_in fg = { .nlookup = 3 };
        struct {
                struct fuse_batch_forget_in h;
                struct fuse_forget_one one[2];
        } bf;

        ft_setup(&t);
        g_assert_cmpint(ft_create(&t, 1, "f", 0644, O_RDWR, &e, NULL), ==, 0);
        g_assert_cmpint(ft_lookup(&t, 1, "f", NULL), ==, 0);
        g_assert_cmpint(ft_lookup(&t, 1, "f", NULL), ==, 0);
        /* FORGET has no reply. */
        g_assert_cmpint(ft_send(&t, FUSE_FORGET, e.nodeid, &fg, sizeof(fg), NULL, 0), ==, 1);
        /* Three lookups, three forgotten (the create's handle still holds the inode,
         * but the nodeid is no longer the guest's). */
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, e.nodeid, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, -EBADF);
        g_assert_cmpint(ft_lookup(&t, 1, "f", &e), ==, 0);
        bf.h = (struct fuse_batch_forget_in){ .count = 2 };
        bf.one[0] = (struct fuse_forget_one){ .nodeid = e.nodeid, .nlookup = 1 };
        bf.one[1] = (struct fuse_forget_one){ .nodeid = 0xdeadbeef12345ull, .nlookup = 1 };
        g_assert_cmpint(ft_send(&t, FUSE_BATCH_FORGET, 0, &bf, sizeof(bf), NULL, 0), ==, 1);
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, e.nodeid, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, -EBADF);
        /* The root can never be forgotten. */
        g_assert_cmpint(ft_send(&t, FUSE_FORGET, 1, &fg, sizeof(fg), NULL, 0), ==, 1);
        g_assert_cmpint(ft_send(&t, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 },
                                sizeof(struct fuse_getattr_in), NULL, 0), ==, 0);
        ft_teardown(&t);
}

static void test_cache_modes(void)
{
        static const struct {
                enum fs_cache_mode mode;
                uint64_t timeout;
                uint32_t file_flags, dir_flags;
        } cases[] = {
                { FS_CACHE_AUTO, 1, 0, 0 },
                { FS_CACHE_ALWAYS, 86400, FOPEN_KEEP_CACHE, FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR },
                { FS_CACHE_NEVER, 0, FOPEN_DIRECT_IO, 0 },
        };

        for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++) {
                struct fs_options o = { .cache = cases[k].mode };
                struct fuse_entry_out e;
                struct ft t;
                uint64_t fh;

                o.guest_uid = o.host_uid = o.guest_gid = o.host_gid = FS_ID_UNMAPPED;
                ft_setup_opts(&t, &o);
                g_assert_cmpint(ft_create(&t, 1, "f", 0644, O_RDWR, &e, &fh), ==, 0);
                g_assert_cmpuint(e.entry_valid, ==, cases[k].timeout);
                g_assert_cmpuint(e.attr_valid, ==, cases[k].timeout);
                g_assert_cmpint(ft_open(&t, e.nodeid, O_RDONLY, &fh), ==, 0);
                g_assert_cmpuint(((const struct fuse_open_out *)ft_body(&t))->open_flags, ==, cases[k].file_flags);
                g_assert_cmpint(ft_send(&t, FUSE_OPENDIR, 1, &(struct fuse_open_in){ 0 },
                                        sizeof(struct fuse_open_in), NULL, 0), ==, 0);
                g_assert_cmpuint(((const struct fuse_open_out *)ft_body(&t))->open_flags, ==, cases[k].dir_flags);
                ft_teardown(&t);
        }
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/passthrough/init", test_init_flags);
        g_test_add_func("/passthrough/create-write-read", test_create_write_read);
        g_test_add_func("/passthrough/big-io", test_big_read_write_split_iov);
        g_test_add_func("/passthrough/dirs-and-names", test_dirs_and_names);
        g_test_add_data_func("/passthrough/readdir", GINT_TO_POINTER(0), test_readdir);
        g_test_add_data_func("/passthrough/readdirplus", GINT_TO_POINTER(1), test_readdir);
        g_test_add_func("/passthrough/setattr", test_setattr);
        g_test_add_func("/passthrough/readonly", test_readonly);
        g_test_add_func("/passthrough/idmap", test_idmap_in_replies);
        g_test_add_func("/passthrough/xattr", test_xattr);
        g_test_add_func("/passthrough/posix-locks-setlkw", test_posix_locks_and_setlkw);
        g_test_add_func("/passthrough/lock-records-freed", test_lock_records_freed);
        g_test_add_func("/passthrough/init-again-after-guest-reset", test_init_again_after_guest_reset);
        g_test_add_func("/passthrough/finish-deferred-per-queue", test_finish_deferred_per_queue);
        g_test_add_func("/passthrough/flock", test_flock);
        g_test_add_func("/passthrough/misc", test_misc_ops);
        g_test_add_func("/passthrough/forget", test_forget_counts);
        g_test_add_func("/passthrough/cache-modes", test_cache_modes);
        return g_test_run();
}
