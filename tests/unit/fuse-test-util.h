/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuse-test-util.h — driving fs_process() in-process for the FUSE unit tests:
 * a temporary shared folder, a session and a worker, and requests built in
 * ordinary heap buffers (no transport needed). */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fuse.h>

#include "fs-session.h"
#include "options.h"
#include "stats.h"

#define FT_OUT_SIZE (1024 * 1024 + 4096)

struct ft {
        char *dir;               /* the shared folder */
        char *outside;           /* a sibling directory the guest must never reach */
        struct fs_options opts;
        struct stats stats;
        struct fs_session *s;
        struct fs_worker *w;
        uint64_t unique;
        uint8_t *out;            /* the last reply */
        size_t out_len;
};

static inline void ft_rm_rf(const char *path)
{
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", path);

        g_assert_cmpint(system(cmd), ==, 0);
}

static inline const struct fuse_out_header *ft_hdr(struct ft *t)
{
        return (const struct fuse_out_header *)t->out;
}

static inline const void *ft_body(struct ft *t)
{
        return t->out + sizeof(struct fuse_out_header);
}

/* Sends one request made of up to three argument pieces; returns the reply's error
 * (0 on success), or 1 when there was no reply at all. */
static inline int ft_send_iov(struct ft *t, uint32_t opcode, uint64_t nodeid,
                              const void *a1, size_t l1, const void *a2, size_t l2,
                              const void *a3, size_t l3, size_t out_size)
{
        struct fuse_in_header h = {
                .len = (uint32_t)(sizeof(h) + l1 + l2 + l3),
                .opcode = opcode,
                .unique = ++t->unique,
                .nodeid = nodeid,
                .uid = getuid(), .gid = getgid(), .pid = 1,
        };
        struct iovec in[4] = {
                { &h, sizeof(h) }, { (void *)a1, l1 }, { (void *)a2, l2 }, { (void *)a3, l3 },
        };
        struct iovec out = { t->out, out_size };

        memset(t->out, 0xa5, FT_OUT_SIZE);
        t->out_len = fs_process(t->w, in, 4, &out, 1, NULL);
        if (t->out_len == 0)
                return 1;
        g_assert_cmpuint(t->out_len, !=, FS_PROCESS_DEFERRED);
        g_assert_cmpuint(t->out_len, >=, sizeof(struct fuse_out_header));
        g_assert_cmpuint(t->out_len, <=, out_size);
        g_assert_cmpuint(ft_hdr(t)->len, ==, t->out_len);
        g_assert_cmpuint(ft_hdr(t)->unique, ==, t->unique);
        return ft_hdr(t)->error;
}

static inline int ft_send(struct ft *t, uint32_t opcode, uint64_t nodeid,
                          const void *a1, size_t l1, const void *a2, size_t l2)
{
        return ft_send_iov(t, opcode, nodeid, a1, l1, a2, l2, NULL, 0, FT_OUT_SIZE);
}

static inline size_t ft_strsize(const char *s)
{
        return strlen(s) + 1;
}

static inline void ft_setup_opts(struct ft *t, const struct fs_options *opts)
{
        g_autofree char *base = g_dir_make_tmp("sluice-ft-XXXXXX", NULL);
        g_autofree char *secret = NULL;
        struct fuse_init_in init = {
                .major = 7, .minor = 38, .max_readahead = 128 * 1024,
                .flags = 0xfffffffb, .flags2 = 0xb,
        };
        int fd;

        memset(t, 0, sizeof(*t));
        g_assert_nonnull(base);
        t->dir = g_build_filename(base, "share", NULL);
        t->outside = g_build_filename(base, "outside", NULL);
        g_assert_cmpint(g_mkdir(t->dir, 0755), ==, 0);
        g_assert_cmpint(g_mkdir(t->outside, 0755), ==, 0);
        secret = g_build_filename(t->outside, "secret", NULL);
        g_assert_true(g_file_set_contents(secret, "secret", -1, NULL));
        if (opts)
                t->opts = *opts;
        else {
                t->opts.guest_uid = t->opts.host_uid = FS_ID_UNMAPPED;
                t->opts.guest_gid = t->opts.host_gid = FS_ID_UNMAPPED;
        }
        stats_init(&t->stats, 1);
        /* As main.c does: the guest's umask comes with each create, and every
         * inode holds an fd (a READDIRPLUS of a big directory needs many). */
        umask(0);
        {
                struct rlimit rl;

                if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                        rl.rlim_cur = rl.rlim_max;
                        (void)setrlimit(RLIMIT_NOFILE, &rl);
                }
        }
        t->out = g_malloc(FT_OUT_SIZE);
        fd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(fs_session_new(&t->opts, fd, &t->stats, &t->s), ==, 0);
        g_assert_cmpint(fs_worker_new(t->s, 1, &t->w), ==, 0);
        g_assert_cmpint(ft_send(t, FUSE_INIT, 0, &init, sizeof(init), NULL, 0), ==, 0);
}

static inline void ft_setup(struct ft *t)
{
        ft_setup_opts(t, NULL);
}

static inline void ft_teardown(struct ft *t)
{
        g_autofree char *base = g_path_get_dirname(t->dir);

        fs_worker_free(t->w);
        fs_session_free(t->s);
        ft_rm_rf(base);
        g_free(t->dir);
        g_free(t->outside);
        g_free(t->out);
}

static inline char *ft_path(struct ft *t, const char *rel)
{
        return g_build_filename(t->dir, rel, NULL);
}

static inline int ft_lookup(struct ft *t, uint64_t parent, const char *name, struct fuse_entry_out *e)
{
        int err;

        if (e)
                memset(e, 0, sizeof(*e));
        err = ft_send(t, FUSE_LOOKUP, parent, name, ft_strsize(name), NULL, 0);

        if (err == 0 && e)
                memcpy(e, ft_body(t), sizeof(*e));
        return err;
}

static inline int ft_create(struct ft *t, uint64_t parent, const char *name, uint32_t mode,
                            uint32_t flags, struct fuse_entry_out *e, uint64_t *fh)
{
        struct fuse_create_in in = { .flags = flags, .mode = S_IFREG | mode, .umask = 022 };
        int err;

        if (e)
                memset(e, 0, sizeof(*e));
        if (fh)
                *fh = 0;
        err = ft_send(t, FUSE_CREATE, parent, &in, sizeof(in), name, ft_strsize(name));

        if (err == 0) {
                const struct fuse_open_out *o =
                        (const void *)((const uint8_t *)ft_body(t) + sizeof(struct fuse_entry_out));

                if (e)
                        memcpy(e, ft_body(t), sizeof(*e));
                if (fh)
                        *fh = o->fh;
        }
        return err;
}

static inline int ft_open(struct ft *t, uint64_t nodeid, uint32_t flags, uint64_t *fh)
{
        struct fuse_open_in in = { .flags = flags };
        int err;

        if (fh)
                *fh = 0;
        err = ft_send(t, FUSE_OPEN, nodeid, &in, sizeof(in), NULL, 0);

        if (err == 0 && fh)
                *fh = ((const struct fuse_open_out *)ft_body(t))->fh;
        return err;
}

static inline int ft_write(struct ft *t, uint64_t nodeid, uint64_t fh, uint64_t off,
                           const void *data, size_t len)
{
        struct fuse_write_in in = { .fh = fh, .offset = off, .size = (uint32_t)len };
        int err = ft_send(t, FUSE_WRITE, nodeid, &in, sizeof(in), data, len);

        if (err == 0)
                g_assert_cmpuint(((const struct fuse_write_out *)ft_body(t))->size, ==, len);
        return err;
}

/* Returns the error; the data is at ft_body(t), its length in *len. */
static inline int ft_read(struct ft *t, uint64_t nodeid, uint64_t fh, uint64_t off, uint32_t size,
                          size_t *len)
{
        struct fuse_read_in in = { .fh = fh, .offset = off, .size = size };
        int err = ft_send(t, FUSE_READ, nodeid, &in, sizeof(in), NULL, 0);

        if (len)
                *len = err == 0 ? t->out_len - sizeof(struct fuse_out_header) : 0;
        return err;
}

static inline int ft_release(struct ft *t, uint64_t nodeid, uint64_t fh, bool dir)
{
        struct fuse_release_in in = { .fh = fh };

        return ft_send(t, dir ? FUSE_RELEASEDIR : FUSE_RELEASE, nodeid, &in, sizeof(in), NULL, 0);
}
