/* SPDX-License-Identifier: GPL-2.0-or-later */
/* make-corpus.c — writes the seed corpora of the three fuzz targets:
 *   make-corpus DIR   →  DIR/fuzz-fuse/NAME, DIR/fuzz-virtqueue/NAME, DIR/fuzz-vhost-user/NAME
 *
 * Each seed is one case of what the frontend and unit suites send — the
 * ordinary request sequences and every hostile case of the attack catalogue
 * (tests/frontend/README.md names the seed that reaches each case) — encoded
 * in the input format of its target (the comment at the top of each
 * fuzz-*.c).  The FUSE requests are built from <linux/fuse.h>, the rings from
 * <linux/virtio_ring.h>, the vhost-user messages from vhost-user-proto.h:
 * the same definitions the daemon and the test VMM use.  Deterministic, so
 * running it again gives the committed files (tests/fuzz/README.md). */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vhost-user-proto.h"

#ifndef FUSE_TMPFILE
#define FUSE_TMPFILE 51
#endif

struct out {
        uint8_t d[40000];
        size_t n;
};

static const char *top;

static void put(struct out *o, const void *p, size_t n)
{
        if (o->n + n > sizeof(o->d)) {
                fprintf(stderr, "make-corpus: seed too big\n");
                exit(1);
        }
        memcpy(o->d + o->n, p, n);
        o->n += n;
}

static void put8(struct out *o, uint8_t v) { put(o, &v, 1); }
static void put16(struct out *o, uint16_t v) { put(o, &v, 2); }
static void put32(struct out *o, uint32_t v) { put(o, &v, 4); }

static void save(const char *target, const char *name, const struct out *o)
{
        char path[4096];
        FILE *f;

        (void)mkdir(top, 0755);
        snprintf(path, sizeof(path), "%s/%s", top, target);
        (void)mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%s/%s", top, target, name);
        f = fopen(path, "wb");
        if (!f || fwrite(o->d, 1, o->n, f) != o->n || fclose(f) != 0) {
                fprintf(stderr, "make-corpus: cannot write %s: %s\n", path, strerror(errno));
                exit(1);
        }
}

/* ---- fuzz-fuse: records of flags, node, handle, layout, length, request ---- */

/* Record flags (fuzz-fuse.c). */
#define R_KEEP_LEN    1
#define R_KEEP_UNIQUE 2
#define R_KEEP_IDS    4
#define R_OUT(c)      ((c) << 3)   /* 0 1 MiB, 1 4096, 2 none, 3 8, 4 16, 5 120, 6 256, 7 64 KiB */
#define R_NO_INIT     64
#define R_READONLY    128

struct req {
        uint8_t flags, node, handle, layout;
        uint32_t opcode;
        uint64_t nodeid;
        int32_t len_delta;    /* with R_KEEP_LEN: header len = real length + this */
        uint32_t uid;         /* with R_KEEP_IDS */
};

/* One request: the header, then up to three argument pieces. */
static void fuse_rec(struct out *o, struct req r, const void *a1, size_t l1, const void *a2,
                     size_t l2, const void *a3, size_t l3)
{
        size_t len = sizeof(struct fuse_in_header) + l1 + l2 + l3;
        struct fuse_in_header h = {
                .len = (uint32_t)((int64_t)len + r.len_delta), .opcode = r.opcode,
                .unique = 1, .nodeid = r.nodeid ? r.nodeid : FUSE_ROOT_ID,
                .uid = r.uid, .gid = r.uid, .pid = 1,
        };

        put8(o, r.flags);
        put8(o, r.node);
        put8(o, r.handle);
        put8(o, r.layout);
        put16(o, (uint16_t)len);
        put(o, &h, sizeof(h));
        if (l1)
                put(o, a1, l1);
        if (l2)
                put(o, a2, l2);
        if (l3)
                put(o, a3, l3);
}

/* Shorthands: a request on the root (node 0 = keep), on learnt node n, with handle fh. */
#define ON(op_)              ((struct req){ .opcode = (op_) })
#define ON_NODE(op_, n_)     ((struct req){ .opcode = (op_), .node = (n_) })
#define ON_FH(op_, n_, fh_)  ((struct req){ .opcode = (op_), .node = (n_), .handle = (fh_) })
#define NAME(s_)             s_, sizeof(s_)

static void f_lookup(struct out *o, struct req r, const char *name)
{
        r.opcode = FUSE_LOOKUP;
        fuse_rec(o, r, name, strlen(name) + 1, NULL, 0, NULL, 0);
}

static void f_create(struct out *o, const char *name, uint32_t mode, uint32_t flags)
{
        struct fuse_create_in in = { .flags = flags, .mode = mode, .umask = 022 };

        fuse_rec(o, ON(FUSE_CREATE), &in, sizeof(in), name, strlen(name) + 1, NULL, 0);
}

static void f_open(struct out *o, uint8_t node, uint32_t flags)
{
        struct fuse_open_in in = { .flags = flags };

        fuse_rec(o, ON_NODE(FUSE_OPEN, node), &in, sizeof(in), NULL, 0, NULL, 0);
}

static void f_write(struct out *o, struct req r, uint64_t off, const char *data, uint32_t size)
{
        struct fuse_write_in in = { .offset = off, .size = size };

        r.opcode = FUSE_WRITE;
        fuse_rec(o, r, &in, sizeof(in), data, strlen(data), NULL, 0);
}

static void f_read(struct out *o, struct req r, uint64_t off, uint32_t size)
{
        struct fuse_read_in in = { .offset = off, .size = size };

        r.opcode = FUSE_READ;
        fuse_rec(o, r, &in, sizeof(in), NULL, 0, NULL, 0);
}

static void f_mkdir(struct out *o, struct req r, const char *name, uint32_t mode)
{
        struct fuse_mkdir_in in = { .mode = mode, .umask = 022 };

        r.opcode = FUSE_MKDIR;
        fuse_rec(o, r, &in, sizeof(in), name, strlen(name) + 1, NULL, 0);
}

static void f_mknod(struct out *o, const char *name, uint32_t mode, uint32_t rdev)
{
        struct fuse_mknod_in in = { .mode = mode, .rdev = rdev, .umask = 022 };

        fuse_rec(o, ON(FUSE_MKNOD), &in, sizeof(in), name, strlen(name) + 1, NULL, 0);
}

static void f_rename(struct out *o, struct req r, const char *from, const char *to, uint32_t flags)
{
        struct fuse_rename2_in in = { .newdir = FUSE_ROOT_ID, .flags = flags };

        r.opcode = FUSE_RENAME2;
        fuse_rec(o, r, &in, sizeof(in), from, strlen(from) + 1, to, strlen(to) + 1);
}

static void f_symlink(struct out *o, const char *name, const char *target)
{
        fuse_rec(o, ON(FUSE_SYMLINK), name, strlen(name) + 1, target, strlen(target) + 1, NULL, 0);
}

static void f_setattr(struct out *o, struct req r, struct fuse_setattr_in in)
{
        r.opcode = FUSE_SETATTR;
        fuse_rec(o, r, &in, sizeof(in), NULL, 0, NULL, 0);
}

static void f_setxattr(struct out *o, uint8_t node, const char *name, const char *value)
{
        struct fuse_setxattr_in in = { .size = (uint32_t)strlen(value) };

        /* The short form: the daemon does not accept FUSE_SETXATTR_EXT. */
        fuse_rec(o, ON_NODE(FUSE_SETXATTR, node), &in, FUSE_COMPAT_SETXATTR_IN_SIZE, name,
                 strlen(name) + 1, value,
                 strlen(value));
}

static void f_lk(struct out *o, uint32_t op, uint8_t node, uint8_t fh, uint64_t owner,
                 uint32_t type, uint32_t lk_flags)
{
        struct fuse_lk_in in = {
                .owner = owner, .lk = { .start = 0, .end = 99, .type = type, .pid = 1 },
                .lk_flags = lk_flags,
        };

        fuse_rec(o, ON_FH(op, node, fh), &in, sizeof(in), NULL, 0, NULL, 0);
}

/* A POSIX lock call on [start, end] (tests/frontend/test-locks.c). */
static void f_lk_range(struct out *o, uint32_t op, uint8_t node, uint8_t fh, uint64_t owner,
                       uint32_t type, uint64_t start, uint64_t end)
{
        struct fuse_lk_in in = {
                .owner = owner, .lk = { .start = start, .end = end, .type = type, .pid = 1 },
        };

        fuse_rec(o, ON_FH(op, node, fh), &in, sizeof(in), NULL, 0, NULL, 0);
}

/* close() in the guest: FLUSH with the closing process's lock owner. */
static void f_flush_owner(struct out *o, uint8_t node, uint8_t fh, uint64_t owner)
{
        struct fuse_flush_in in = { .lock_owner = owner };

        fuse_rec(o, ON_FH(FUSE_FLUSH, node, fh), &in, sizeof(in), NULL, 0, NULL, 0);
}

static void f_handle_op(struct out *o, uint32_t op, uint8_t node, uint8_t fh)
{
        struct fuse_release_in in = { 0 };   /* fh first, like flush/fsync/release */

        fuse_rec(o, ON_FH(op, node, fh), &in, sizeof(in), NULL, 0, NULL, 0);
}

static void corpus_fuse(void)
{
        const char *t = "fuzz-fuse";
        struct out o;

        /* ---- what the frontend suites do (test-fuse-ops.c and the guest) ---- */
        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        fuse_rec(&o, ON_NODE(FUSE_GETATTR, 1), &(struct fuse_getattr_in){ 0 },
                 sizeof(struct fuse_getattr_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON_NODE(FUSE_ACCESS, 1), &(struct fuse_access_in){ .mask = 4 },
                 sizeof(struct fuse_access_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_STATFS), NULL, 0, NULL, 0, NULL, 0);
        fuse_rec(&o, ON_NODE(FUSE_FORGET, 1), &(struct fuse_forget_in){ .nlookup = 1 },
                 sizeof(struct fuse_forget_in), NULL, 0, NULL, 0);
        save(t, "lookup-getattr-forget", &o);

        o.n = 0;
        f_create(&o, "new", S_IFREG | 0644, O_RDWR);
        f_write(&o, ON_FH(0, 1, 1), 0, "hello, world\n", 13);
        f_read(&o, ON_FH(0, 1, 1), 0, 4096);
        f_handle_op(&o, FUSE_FSYNC, 1, 1);
        f_handle_op(&o, FUSE_FLUSH, 1, 1);
        f_handle_op(&o, FUSE_RELEASE, 1, 1);
        save(t, "create-write-read-release", &o);

        o.n = 0;
        f_mkdir(&o, ON(0), "d", 0755);
        f_mkdir(&o, ON_NODE(0, 1), "e", 0700);
        fuse_rec(&o, ON(FUSE_OPENDIR), &(struct fuse_open_in){ 0 }, sizeof(struct fuse_open_in),
                 NULL, 0, NULL, 0);
        fuse_rec(&o, ON_FH(FUSE_READDIRPLUS, 0, 1), &(struct fuse_read_in){ .size = 4096 },
                 sizeof(struct fuse_read_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON_FH(FUSE_READDIR, 0, 1), &(struct fuse_read_in){ .size = 4096 },
                 sizeof(struct fuse_read_in), NULL, 0, NULL, 0);
        f_handle_op(&o, FUSE_RELEASEDIR, 0, 1);
        fuse_rec(&o, ON(FUSE_RMDIR), NAME("d"), NULL, 0, NULL, 0);
        save(t, "mkdir-readdirplus-rmdir", &o);

        o.n = 0;
        f_rename(&o, ON(0), "f1", "f2", 0);
        f_lookup(&o, ON(0), "f2");
        fuse_rec(&o, ON_FH(FUSE_LINK, 0, 1), &(struct fuse_link_in){ 0 }, sizeof(struct fuse_link_in),
                 NAME("f3"), NULL, 0);
        f_rename(&o, ON(0), "f2", "sub", RENAME_EXCHANGE);
        f_rename(&o, ON(0), "f3", "f2", RENAME_NOREPLACE);
        fuse_rec(&o, ON(FUSE_UNLINK), NAME("f3"), NULL, 0, NULL, 0);
        save(t, "rename-link-unlink", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = 3 });
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = 0600 });
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){
                .valid = FATTR_ATIME | FATTR_MTIME, .atime = 1, .mtime = 2 });
        fuse_rec(&o, ON_NODE(FUSE_FALLOCATE, 1),
                 &(struct fuse_fallocate_in){ .offset = 0, .length = 8192 },
                 sizeof(struct fuse_fallocate_in), NULL, 0, NULL, 0);
        save(t, "setattr-fallocate", &o);

        o.n = 0;
        f_symlink(&o, "ln", "f1");
        fuse_rec(&o, ON_NODE(FUSE_READLINK, 1), NULL, 0, NULL, 0, NULL, 0);
        f_mknod(&o, "pipe", S_IFIFO | 0644, 0);
        fuse_rec(&o, ON(FUSE_TMPFILE), &(struct fuse_create_in){ .flags = O_RDWR, .mode = S_IFREG | 0600 },
                 sizeof(struct fuse_create_in), NAME("tmp"), NULL, 0);
        save(t, "symlink-readlink-mknod", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_setxattr(&o, 1, "user.k", "v");
        fuse_rec(&o, ON_NODE(FUSE_GETXATTR, 1), &(struct fuse_getxattr_in){ .size = 64 },
                 sizeof(struct fuse_getxattr_in), NAME("user.k"), NULL, 0);
        fuse_rec(&o, ON_NODE(FUSE_LISTXATTR, 1), &(struct fuse_getxattr_in){ .size = 64 },
                 sizeof(struct fuse_getxattr_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON_NODE(FUSE_REMOVEXATTR, 1), NAME("user.k"), NULL, 0, NULL, 0);
        save(t, "xattrs", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_open(&o, 1, O_RDWR);
        f_lk(&o, FUSE_SETLK, 1, 1, 1, F_WRLCK, 0);
        f_lk(&o, FUSE_GETLK, 1, 1, 2, F_WRLCK, 0);
        f_lk(&o, FUSE_SETLKW, 1, 1, 2, F_WRLCK, 0);        /* waits: deferred */
        fuse_rec(&o, ON(FUSE_INTERRUPT), &(struct fuse_interrupt_in){ .unique = 5 },
                 sizeof(struct fuse_interrupt_in), NULL, 0, NULL, 0);
        f_lk(&o, FUSE_SETLKW, 1, 1, 3, F_RDLCK, FUSE_LK_FLOCK);
        f_lk(&o, FUSE_SETLK, 1, 1, 1, F_UNLCK, 0);          /* wakes the waiters */
        f_handle_op(&o, FUSE_RELEASE, 1, 1);
        save(t, "locks-setlkw-interrupt", &o);

        /* One owner's separate read locks past its bound (ENOLCK), merging
         * neighbours, unlocks that split, the owner's close (test-locks.c). */
        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_open(&o, 1, O_RDWR);
        for (uint64_t b = 0; b < 2 * 140; b += 2)
                f_lk_range(&o, FUSE_SETLK, 1, 1, 1, F_RDLCK, b, b);
        f_lk_range(&o, FUSE_SETLK, 1, 1, 1, F_RDLCK, 1, 1);              /* merges three */
        f_lk_range(&o, FUSE_SETLK, 1, 1, 2, F_RDLCK, 1000, 2000);
        for (uint64_t b = 1002; b < 1002 + 2 * 20; b += 2)
                f_lk_range(&o, FUSE_SETLK, 1, 1, 2, F_UNLCK, b, b);     /* splits */
        f_lk_range(&o, FUSE_SETLK, 1, 1, 2, F_WRLCK, 1500, INT64_MAX);
        f_flush_owner(&o, 1, 1, 1);
        f_flush_owner(&o, 1, 1, 2);
        f_handle_op(&o, FUSE_RELEASE, 1, 1);
        save(t, "locks-many-records", &o);

        /* Locks on a read-only handle: GETLK and a read lock through a
         * read-only description, then a write lock that re-opens it
         * read-write, GETLK by another owner, unlock (test-locks.c). */
        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_open(&o, 1, O_RDONLY);
        f_lk_range(&o, FUSE_GETLK, 1, 1, 7, F_WRLCK, 0, INT64_MAX);
        f_lk_range(&o, FUSE_SETLK, 1, 1, 7, F_RDLCK, 0, INT64_MAX);
        f_lk_range(&o, FUSE_SETLK, 1, 1, 7, F_WRLCK, 10, 19);
        f_lk_range(&o, FUSE_GETLK, 1, 1, 8, F_RDLCK, 0, INT64_MAX);
        f_lk_range(&o, FUSE_SETLK, 1, 1, 8, F_RDLCK, 0, 9);
        f_lk_range(&o, FUSE_SETLK, 1, 1, 7, F_UNLCK, 0, INT64_MAX);
        f_flush_owner(&o, 1, 1, 8);
        f_handle_op(&o, FUSE_RELEASE, 1, 1);
        save(t, "locks-access", &o);

        o.n = 0;
        f_create(&o, "a", S_IFREG | 0644, O_RDWR);
        f_write(&o, ON_FH(0, 1, 1), 0, "0123456789", 10);
        fuse_rec(&o, ON_FH(FUSE_LSEEK, 1, 1), &(struct fuse_lseek_in){ .offset = 0, .whence = 3 },
                 sizeof(struct fuse_lseek_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON_FH(FUSE_COPY_FILE_RANGE, 1, 1),
                 &(struct fuse_copy_file_range_in){ .off_in = 0, .nodeid_out = 2, .off_out = 20,
                                                    .len = 10 },
                 sizeof(struct fuse_copy_file_range_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_SYNCFS), &(struct fuse_syncfs_in){ 0 }, sizeof(struct fuse_syncfs_in),
                 NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_BATCH_FORGET), &(struct fuse_batch_forget_in){ .count = 1 },
                 sizeof(struct fuse_batch_forget_in),
                 &(struct fuse_forget_one){ .nodeid = 2, .nlookup = 1 },
                 sizeof(struct fuse_forget_one), NULL, 0);
        save(t, "lseek-copy-syncfs-batch-forget", &o);

        o.n = 0;
        fuse_rec(&o, ON(FUSE_DESTROY), NULL, 0, NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_INIT),
                 &(struct fuse_init_in){ .major = 7, .minor = 31, .max_readahead = 65536 },
                 sizeof(struct fuse_init_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_INIT), &(struct fuse_init_in){ .major = 8 }, sizeof(struct fuse_init_in),
                 NULL, 0, NULL, 0);
        save(t, "destroy-reinit", &o);

        /* ---- hostile requests (tests/frontend/test-malformed.c, test-confinement.c,
         * test-security.c, tests/unit/test-fuse-request.c, test-passthrough.c) ---- */
        o.n = 0;
        fuse_rec(&o, ON(FUSE_GETATTR), NULL, 0, NULL, 0, NULL, 0);
        o.n -= 20;               /* the record keeps its length: 20 bytes of header only */
        o.d[4] = 20;
        o.d[5] = 0;
        save(t, "truncated-header", &o);

        o.n = 0;
        f_lookup(&o, (struct req){ .flags = R_KEEP_LEN, .len_delta = 100 }, "f1");
        f_lookup(&o, (struct req){ .flags = R_KEEP_LEN, .len_delta = -3 }, "f1");
        f_lookup(&o, (struct req){ .flags = R_KEEP_LEN, .len_delta = -1000 }, "f1");
        save(t, "header-len-mismatch", &o);

        o.n = 0;
        f_create(&o, "w", S_IFREG | 0644, O_RDWR);
        f_write(&o, ON_FH(0, 1, 1), 0, "abc", 100000);       /* size beyond the data */
        fuse_rec(&o, ON(FUSE_MKDIR), &(struct fuse_mkdir_in){ .mode = 0755 }, 4, NULL, 0, NULL, 0);
        fuse_rec(&o, ON_FH(FUSE_READ, 1, 1), &(struct fuse_read_in){ .size = 10 }, 12, NULL, 0, NULL, 0);
        save(t, "short-args", &o);

        o.n = 0;
        fuse_rec(&o, ON(FUSE_LOOKUP), "noterm", 6, NULL, 0, NULL, 0);
        {
                char longname[300];

                memset(longname, 'n', sizeof(longname) - 1);
                longname[sizeof(longname) - 1] = '\0';
                f_lookup(&o, ON(0), longname);
                f_mkdir(&o, ON(0), longname, 0755);
        }
        f_lookup(&o, ON(0), "");
        f_mkdir(&o, ON(0), "", 0755);
        save(t, "bad-names", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "..");
        f_lookup(&o, ON(0), ".");
        f_lookup(&o, ON_NODE(0, 1), "..");
        f_mkdir(&o, ON(0), "..", 0755);
        f_create(&o, "..", S_IFREG | 0644, O_RDWR);
        f_rename(&o, ON(0), "f1", "..", 0);
        save(t, "confinement-dotdot", &o);

        /* --names=windows (odd length, fuzz-fuse.c): mapped names made,
         * found in both forms, renamed, removed; ones decoding to "..", "."
         * or holding U+F02F; a 765-byte mapped name */
        o.n = 0;
        f_create(&o, "new\xef\x80\xbf.txt", S_IFREG | 0644, O_RDWR | O_EXCL);   /* new U+F03F .txt */
        f_lookup(&o, ON(0), "new?.txt");
        f_mkdir(&o, ON(0), "d\xef\x81\xbc", 0755);                              /* d U+F07C */
        f_rename(&o, ON(0), "new\xef\x80\xbf.txt", "CO\xef\x81\x8e", 0);       /* to CON */
        f_lookup(&o, ON(0), ".\xef\x80\xae");                                   /* .. */
        f_mkdir(&o, ON(0), "\xef\x80\xae", 0755);                                /* . */
        f_mkdir(&o, ON(0), ".\xef\x80\xae\xef\x80\xafoutside", 0755);            /* U+F02F */
        f_create(&o, "a\xef\x80\x80\xef\x80\xba\x62", S_IFREG | 0644, O_RDWR);   /* literal U+F03A */
        f_lookup(&o, ON(0), "a\xef\x80\x80:b");
        {
                char mapped[3 * 255 + 1];

                for (int i = 0; i < 255; i++)
                        memcpy(mapped + 3 * i, "\xef\x80\xba", 3);
                mapped[3 * 255] = '\0';
                f_mkdir(&o, ON(0), mapped, 0755);
        }
        if (o.n % 2 == 0)
                put8(&o, 0);            /* odd: served --names=windows */
        save(t, "windows-names", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "sub/../..");
        f_mkdir(&o, ON(0), "a/b", 0755);
        f_create(&o, "../outside/canary", S_IFREG | 0644, O_RDWR);
        f_symlink(&o, "x/y", "f1");
        f_rename(&o, ON(0), "f1", "../f1", 0);
        save(t, "confinement-slash-names", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "lnk");                             /* -> ../outside/canary */
        f_open(&o, 1, O_RDWR);
        f_open(&o, 1, O_RDONLY);
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = 0 });
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = 0777 });
        f_setxattr(&o, 1, "user.x", "1");
        fuse_rec(&o, ON_FH(FUSE_LINK, 0, 1), &(struct fuse_link_in){ 0 }, sizeof(struct fuse_link_in),
                 NAME("hard"), NULL, 0);
        f_symlink(&o, "etc", "/etc");
        f_lookup(&o, ON(0), "etc");
        fuse_rec(&o, ON_NODE(FUSE_OPENDIR, 2), &(struct fuse_open_in){ 0 }, sizeof(struct fuse_open_in),
                 NULL, 0, NULL, 0);
        f_create(&o, "lnk", S_IFREG | 0644, O_RDWR | O_TRUNC);
        save(t, "confinement-symlink-out", &o);

        o.n = 0;
        fuse_rec(&o, (struct req){ .opcode = FUSE_GETATTR, .nodeid = 0xdeadbeef },
                 &(struct fuse_getattr_in){ 0 }, sizeof(struct fuse_getattr_in), NULL, 0, NULL, 0);
        fuse_rec(&o, (struct req){ .opcode = FUSE_LOOKUP, .nodeid = (1ull << 32) | 2 }, NAME("f1"),
                 NULL, 0, NULL, 0);
        f_read(&o, (struct req){ .opcode = FUSE_READ }, 0, 10);  /* fh 0: never handed out */
        f_handle_op(&o, FUSE_RELEASE, 0, 0);
        fuse_rec(&o, (struct req){ .opcode = FUSE_FORGET, .nodeid = 1 },
                 &(struct fuse_forget_in){ .nlookup = UINT64_MAX }, sizeof(struct fuse_forget_in),
                 NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_BATCH_FORGET), &(struct fuse_batch_forget_in){ .count = 0xffffffff },
                 sizeof(struct fuse_batch_forget_in), NULL, 0, NULL, 0);
        save(t, "forged-ids", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_open(&o, 1, O_RDONLY);
        f_read(&o, (struct req){ .flags = R_OUT(2), .node = 1, .handle = 1 }, 0, 4096);
        f_read(&o, (struct req){ .flags = R_OUT(3), .node = 1, .handle = 1 }, 0, 4096);
        f_read(&o, (struct req){ .flags = R_OUT(4), .node = 1, .handle = 1 }, 0, 4096);
        f_read(&o, (struct req){ .flags = R_OUT(5), .node = 1, .handle = 1, .layout = 0x31 }, 0, 4096);
        fuse_rec(&o, (struct req){ .opcode = FUSE_READDIRPLUS, .flags = R_OUT(5) },
                 &(struct fuse_read_in){ .size = 65536 }, sizeof(struct fuse_read_in), NULL, 0, NULL, 0);
        save(t, "small-reply-buffer", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_open(&o, 1, O_RDWR);
        f_read(&o, ON_FH(0, 1, 1), INT64_MAX, 4096);
        f_read(&o, ON_FH(0, 1, 1), 0, 0xffffffff);
        f_write(&o, ON_FH(0, 1, 1), UINT64_MAX - 1, "x", 1);
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = UINT64_MAX });
        fuse_rec(&o, ON_FH(FUSE_FALLOCATE, 1, 1),
                 &(struct fuse_fallocate_in){ .offset = INT64_MAX, .length = INT64_MAX },
                 sizeof(struct fuse_fallocate_in), NULL, 0, NULL, 0);
        save(t, "huge-offsets", &o);

        o.n = 0;
        f_mknod(&o, "null", S_IFCHR | 0666, 0x103);
        f_mknod(&o, "blk", S_IFBLK | 0666, 0x800);
        f_mknod(&o, "sock", S_IFSOCK | 0644, 0);
        f_create(&o, "suid", S_IFREG | 06755, O_RDWR);
        f_lookup(&o, ON(0), "f1");
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = 04755 });
        f_setattr(&o, ON_NODE(0, 1),
                  (struct fuse_setattr_in){ .valid = FATTR_UID | FATTR_GID, .uid = 0, .gid = 0 });
        f_mkdir(&o, ON(0), "sgid", 02755);
        save(t, "devices-setid", &o);

        /* Writes and truncates that ask (or not) for the set-ID bits to go
         * (test-privileges.c): the host clears them whatever the flags say. */
        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = 06775 });
        fuse_rec(&o, ON_NODE(FUSE_OPEN, 1),
                 &(struct fuse_open_in){ .flags = O_RDWR, .open_flags = FUSE_OPEN_KILL_SUIDGID },
                 sizeof(struct fuse_open_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON_FH(FUSE_WRITE, 1, 1),
                 &(struct fuse_write_in){ .size = 4, .write_flags = FUSE_WRITE_KILL_SUIDGID },
                 sizeof(struct fuse_write_in), "kill", 4, NULL, 0);
        fuse_rec(&o, ON_FH(FUSE_WRITE, 1, 1),
                 &(struct fuse_write_in){ .offset = 4, .size = 4,
                                          .write_flags = FUSE_WRITE_KILL_SUIDGID | FUSE_WRITE_LOCKOWNER |
                                                         FUSE_WRITE_CACHE | 0xfffffff0u },
                 sizeof(struct fuse_write_in), "keep", 4, NULL, 0);
        f_setattr(&o, ON_NODE(0, 1),
                  (struct fuse_setattr_in){ .valid = FATTR_SIZE | FATTR_KILL_SUIDGID, .size = 2 });
        f_setattr(&o, ON_FH(0, 1, 1),
                  (struct fuse_setattr_in){ .valid = FATTR_SIZE | FATTR_FH | FATTR_KILL_SUIDGID, .size = 1 });
        save(t, "write-kill-setid", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "f1");
        f_setxattr(&o, 1, "trusted.overlay.opaque", "y");
        f_setxattr(&o, 1, "security.capability", "0123");
        f_setxattr(&o, 1, "system.posix_acl_access", "\x02");
        fuse_rec(&o, ON_NODE(FUSE_REMOVEXATTR, 1), NAME("security.selinux"), NULL, 0, NULL, 0);
        fuse_rec(&o, ON_NODE(FUSE_GETXATTR, 1), &(struct fuse_getxattr_in){ .size = 0x7fffffff },
                 sizeof(struct fuse_getxattr_in), NAME("user.k"), NULL, 0);
        save(t, "xattrs-refused", &o);

        o.n = 0;
        fuse_rec(&o, ON(9999), NULL, 0, NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_IOCTL), &(struct fuse_ioctl_in){ 0 }, sizeof(struct fuse_ioctl_in),
                 NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_SETUPMAPPING), NULL, 0, NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_NOTIFY_REPLY), NULL, 0, NULL, 0, NULL, 0);
        save(t, "unknown-opcodes", &o);

        o.n = 0;
        fuse_rec(&o, (struct req){ .flags = R_NO_INIT, .opcode = FUSE_GETATTR },
                 &(struct fuse_getattr_in){ 0 }, sizeof(struct fuse_getattr_in), NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_INIT), &(struct fuse_init_in){ .major = 7, .minor = 38 }, 8, NULL, 0, NULL, 0);
        fuse_rec(&o, ON(FUSE_INIT), &(struct fuse_init_in){ .major = 5 }, sizeof(struct fuse_init_in),
                 NULL, 0, NULL, 0);
        save(t, "before-init", &o);

        o.n = 0;
        f_lookup(&o, (struct req){ .flags = R_KEEP_IDS, .uid = 1000 }, "f1");
        f_create(&o, "mine", S_IFREG | 0600, O_RDWR);
        f_open(&o, 1, O_RDWR);
        fuse_rec(&o, (struct req){ .flags = R_KEEP_IDS, .uid = 0xffffffff, .opcode = FUSE_MKDIR },
                 &(struct fuse_mkdir_in){ .mode = 0755 }, sizeof(struct fuse_mkdir_in), NAME("x"), NULL, 0);
        save(t, "other-users", &o);

        /* A read-only share (test-readonly.c): every change refused, nothing changes. */
        o.n = 0;
        f_lookup(&o, (struct req){ .flags = R_READONLY }, "f1");
        f_open(&o, 1, O_RDWR);
        f_open(&o, 1, O_RDONLY);
        f_write(&o, ON_FH(0, 1, 1), 0, "x", 1);
        f_lk(&o, FUSE_SETLK, 1, 1, 1, F_WRLCK, 0);
        f_lk(&o, FUSE_SETLK, 1, 1, 1, F_RDLCK, FUSE_LK_FLOCK);
        f_setattr(&o, ON_NODE(0, 1), (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = 0 });
        f_create(&o, "new", S_IFREG | 0644, O_RDWR);
        f_mkdir(&o, ON(0), "d", 0755);
        fuse_rec(&o, ON(FUSE_UNLINK), NAME("f1"), NULL, 0, NULL, 0);
        f_rename(&o, ON(0), "f1", "f2", 0);
        f_setxattr(&o, 1, "user.k", "v");
        fuse_rec(&o, ON_NODE(FUSE_FALLOCATE, 1), &(struct fuse_fallocate_in){ .length = 4096 },
                 sizeof(struct fuse_fallocate_in), NULL, 0, NULL, 0);
        save(t, "readonly", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "fifo");
        f_open(&o, 1, O_RDONLY);
        f_create(&o, "fifo", S_IFREG | 0644, O_RDWR);
        f_open(&o, 1, O_RDONLY | O_DIRECTORY);
        fuse_rec(&o, ON_NODE(FUSE_OPENDIR, 1), &(struct fuse_open_in){ 0 }, sizeof(struct fuse_open_in),
                 NULL, 0, NULL, 0);
        save(t, "open-fifo-and-kinds", &o);

        /* CREATE without O_EXCL over every kind of existing name (a device
         * node must never be opened): only a regular file is opened, and only
         * after its type is known; a new name is made with O_EXCL underneath. */
        o.n = 0;
        f_create(&o, "fifo", S_IFREG | 0644, O_RDONLY);
        f_create(&o, "fifo", S_IFREG | 0644, O_WRONLY | O_TRUNC);
        f_create(&o, "lnk", S_IFREG | 0644, O_RDWR);
        f_create(&o, "sub", S_IFREG | 0644, O_RDONLY);
        f_create(&o, "f1", S_IFREG | 0644, O_RDWR | O_TRUNC);
        f_create(&o, "f1", S_IFREG | 0644, O_RDWR | O_EXCL);
        f_create(&o, "fresh", S_IFREG | 0644, O_RDWR);
        f_create(&o, "fresh", S_IFREG | 0644, O_RDWR);
        f_mknod(&o, "chr", S_IFCHR | 0666, 0x103);
        f_create(&o, "chr", S_IFREG | 0644, O_RDWR);
        save(t, "create-over-kinds", &o);

        /* A tree deeper than PATH_MAX: 20 MKDIRs of
         * 255-byte names, each in the directory the one before made, then at
         * its end what a POSIX suite does there: create, chmod, truncate,
         * xattrs, a rename out, an unlink. */
        o.n = 0;
        {
                char name[256];

                memset(name, 'd', 255);
                name[255] = '\0';
                for (uint8_t level = 0; level < 20; level++) {
                        name[0] = (char)('a' + level);
                        f_mkdir(&o, ON_NODE(0, level), name, 0755);
                }
        }
        {
                struct fuse_create_in in = { .flags = O_RDWR | O_CREAT, .mode = S_IFREG | 0644, .umask = 022 };

                fuse_rec(&o, ON_NODE(FUSE_CREATE, 20), &in, sizeof(in), NAME("leaf"), NULL, 0);
                fuse_rec(&o, ON_NODE(FUSE_CREATE, 20), &in, sizeof(in), NAME("victim"), NULL, 0);
        }
        f_setattr(&o, ON_NODE(0, 21), (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = S_IFREG | 0600 });
        f_setattr(&o, ON_NODE(0, 21), (struct fuse_setattr_in){ .valid = FATTR_SIZE, .size = 7 });
        f_setattr(&o, ON_NODE(0, 20), (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = S_IFDIR | 0700 });
        f_setxattr(&o, 21, "user.deep", "yes");
        fuse_rec(&o, ON_NODE(FUSE_REMOVEXATTR, 21), NAME("user.deep"), NULL, 0, NULL, 0);
        f_rename(&o, ON_NODE(0, 20), "leaf", "up", 0);
        fuse_rec(&o, ON_NODE(FUSE_UNLINK, 20), NAME("victim"), NULL, 0, NULL, 0);
        save(t, "deep-paths", &o);

        /* Metadata of symlinks and special files: served
         * through an fd, or refused without one; never by path under the
         * sandbox.  Nodes: 1 lnk, 2 fifo, 3 a new socket, 4 f1, 5 sub. */
        o.n = 0;
        f_lookup(&o, ON(0), "lnk");
        f_lookup(&o, ON(0), "fifo");
        f_mknod(&o, "sock", S_IFSOCK | 0644, 0);
        f_lookup(&o, ON(0), "f1");
        f_lookup(&o, ON(0), "sub");
        for (uint8_t n = 1; n <= 5; n++) {
                f_setattr(&o, ON_NODE(0, n), (struct fuse_setattr_in){
                        .valid = FATTR_ATIME | FATTR_MTIME, .atime = 1, .mtime = 2 });
                f_setattr(&o, ON_NODE(0, n), (struct fuse_setattr_in){
                        .valid = FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW });
                f_setattr(&o, ON_NODE(0, n), (struct fuse_setattr_in){
                        .valid = FATTR_UID | FATTR_GID, .uid = 0, .gid = 0 });
                f_setattr(&o, ON_NODE(0, n), (struct fuse_setattr_in){ .valid = FATTR_MODE, .mode = 0 });
                f_setattr(&o, ON_NODE(0, n), (struct fuse_setattr_in){
                        .valid = FATTR_MODE | FATTR_UID | FATTR_GID | FATTR_SIZE | FATTR_ATIME |
                                 FATTR_MTIME,
                        .mode = 0644, .size = 1, .atime = 3, .mtime = 4 });
        }
        save(t, "setattr-symlink-special", &o);

        o.n = 0;
        f_lookup(&o, ON(0), "lnk");
        f_lookup(&o, ON(0), "fifo");
        f_mknod(&o, "sock", S_IFSOCK | 0644, 0);
        f_lookup(&o, ON(0), "f1");
        f_lookup(&o, ON(0), "sub");
        for (uint8_t n = 1; n <= 5; n++) {
                f_setxattr(&o, n, "user.k", "v");
                fuse_rec(&o, ON_NODE(FUSE_GETXATTR, n), &(struct fuse_getxattr_in){ .size = 64 },
                         sizeof(struct fuse_getxattr_in), NAME("user.k"), NULL, 0);
                fuse_rec(&o, ON_NODE(FUSE_LISTXATTR, n), &(struct fuse_getxattr_in){ .size = 256 },
                         sizeof(struct fuse_getxattr_in), NULL, 0, NULL, 0);
                fuse_rec(&o, ON_NODE(FUSE_REMOVEXATTR, n), NAME("user.k"), NULL, 0, NULL, 0);
        }
        save(t, "xattr-symlink-special", &o);
}

/* ---- fuzz-virtqueue: a ring header, then guest memory from gpa 0 ---- */

#define VQ_DESC   0x000      /* ring offsets (frontend address FZ_UVA + offset) */
#define VQ_AVAIL  0x100
#define VQ_USED   0x200
#define VQ_BUF    0x400      /* buffers from here */
#define VQ_REGION 0x4000     /* fuzz-virtqueue.c's FZ_REGION: the second region starts here */

struct ring {
        uint8_t num_log2, features, pops;
        uint16_t base, desc, avail, used;
        uint8_t mem[2 * VQ_REGION];
        size_t mem_len;
};

static void ring_init(struct ring *r, uint8_t features)
{
        memset(r, 0, sizeof(*r));
        r->num_log2 = 3;    /* 8 entries */
        r->features = features;
        r->pops = 16;
        r->desc = VQ_DESC;
        r->avail = VQ_AVAIL;
        r->used = VQ_USED;
        r->mem_len = VQ_BUF;
}

static void ring_mem(struct ring *r, uint64_t at, const void *p, size_t n)
{
        memcpy(r->mem + at, p, n);
        if (at + n > r->mem_len)
                r->mem_len = at + n;
}

static void ring_desc(struct ring *r, uint64_t table, unsigned i, uint64_t addr, uint32_t len,
                      uint16_t flags, uint16_t next)
{
        struct vring_desc d = { .addr = addr, .len = len, .flags = flags, .next = next };

        ring_mem(r, table + i * sizeof(d), &d, sizeof(d));
}

/* Publishes heads[] in the avail ring. */
static void ring_avail(struct ring *r, const uint16_t *heads, unsigned n, uint16_t idx)
{
        uint16_t flags = 0;

        ring_mem(r, r->avail, &flags, 2);
        ring_mem(r, r->avail + 2, &idx, 2);
        for (unsigned i = 0; i < n; i++)
                ring_mem(r, r->avail + 4 + 2 * i, &heads[i], 2);
}

static void ring_save(const char *name, const struct ring *r)
{
        struct out o = { .n = 0 };

        put8(&o, r->num_log2);
        put8(&o, r->features);
        put16(&o, r->base);
        put16(&o, r->desc);
        put16(&o, r->avail);
        put16(&o, r->used);
        put8(&o, r->pops);
        put32(&o, 0);
        put(&o, r->mem, r->mem_len);
        save("fuzz-virtqueue", name, &o);
}

/* A FUSE GETATTR request with room for its reply, as the guest driver queues it. */
static void ring_request(struct ring *r, uint64_t at)
{
        struct {
                struct fuse_in_header h;
                struct fuse_getattr_in in;
        } req = { .h = { .len = sizeof(req), .opcode = FUSE_GETATTR, .unique = 2, .nodeid = 1 } };

        ring_mem(r, at, &req, sizeof(req));
}

#define F_EVENT_IDX 1
#define F_INDIRECT  2
#define F_CALL      4
#define F_TOGGLE    8

static void corpus_virtqueue(void)
{
        struct ring r;
        const uint16_t h0[] = { 0 }, h01[] = { 0, 1 }, h_big[] = { 9 };

        /* Ordinary chains: request + reply, two at once, with interrupts. */
        ring_init(&r, F_CALL);
        ring_request(&r, VQ_BUF);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 56, VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF + 0x100, 120, VRING_DESC_F_WRITE, 0);
        ring_desc(&r, VQ_DESC, 2, VQ_BUF + 0x200, 40, VRING_DESC_F_NEXT, 3);
        ring_desc(&r, VQ_DESC, 3, VQ_BUF + 0x300, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 4);
        ring_desc(&r, VQ_DESC, 4, VQ_BUF + 0x310, 100, VRING_DESC_F_WRITE, 0);
        ring_avail(&r, (const uint16_t[]){ 0, 2 }, 2, 2);
        ring_save("chains", &r);

        /* EVENT_IDX with used_event, notifications toggled, a wrapped index. */
        ring_init(&r, F_EVENT_IDX | F_CALL | F_TOGGLE);
        r.base = 0xffff;
        ring_request(&r, VQ_BUF);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 56, VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF + 0x100, 120, VRING_DESC_F_WRITE, 0);
        {
                uint16_t used_event = 0;
                uint16_t heads[8] = { 0 };

                ring_avail(&r, heads, 8, 1);
                ring_mem(&r, VQ_AVAIL + 4 + 2 * 8, &used_event, 2);
        }
        ring_save("event-idx-wrap", &r);

        /* An indirect table, and one after a direct descriptor. */
        ring_init(&r, F_INDIRECT | F_CALL);
        ring_request(&r, VQ_BUF + 0x200);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 3 * 16, VRING_DESC_F_INDIRECT, 0);
        ring_desc(&r, VQ_BUF, 0, VQ_BUF + 0x200, 40, VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_BUF, 1, VQ_BUF + 0x228, 16, VRING_DESC_F_NEXT, 2);
        ring_desc(&r, VQ_BUF, 2, VQ_BUF + 0x300, 120, VRING_DESC_F_WRITE, 0);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF + 0x200, 56, VRING_DESC_F_NEXT, 2);
        ring_desc(&r, VQ_DESC, 2, VQ_BUF + 0x80, 16, VRING_DESC_F_INDIRECT, 0);
        ring_desc(&r, VQ_BUF + 0x80, 0, VQ_BUF + 0x300, 120, VRING_DESC_F_WRITE, 0);
        ring_avail(&r, h01, 2, 2);
        ring_save("indirect", &r);

        /* A buffer crossing from one memory region into the next. */
        ring_init(&r, 0);
        ring_desc(&r, VQ_DESC, 0, VQ_REGION - 24, 56, VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_REGION + 0x100, 120, VRING_DESC_F_WRITE, 0);
        ring_avail(&r, h0, 1, 1);
        ring_mem(&r, VQ_REGION + 0x200, "", 1);
        ring_save("region-crossing", &r);

        /* ---- hostile rings (tests/frontend/test-malformed.c, tests/unit/test-virtqueue.c) ---- */
        ring_init(&r, 0);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 16, VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF, 16, VRING_DESC_F_NEXT, 0);   /* 0 -> 1 -> 0 ... */
        ring_avail(&r, h0, 1, 1);
        ring_save("descriptor-loop", &r);

        ring_init(&r, 0);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 16, VRING_DESC_F_NEXT, 8);   /* next == num */
        ring_avail(&r, h0, 1, 1);
        ring_save("next-out-of-range", &r);

        ring_init(&r, 0);
        ring_desc(&r, VQ_DESC, 0, 0x100000, 16, 0, 0);                 /* beyond both regions */
        ring_desc(&r, VQ_DESC, 1, UINT64_MAX - 8, 16, 0, 0);           /* wraps */
        ring_avail(&r, h01, 2, 2);
        ring_save("outside-guest-memory", &r);

        ring_init(&r, 0);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 0x80000000u, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF, 0x80000000u, VRING_DESC_F_WRITE, 0);
        ring_avail(&r, h0, 1, 1);
        ring_save("length-overflow", &r);

        ring_init(&r, 0);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF + 16, 16, VRING_DESC_F_NEXT, 2);   /* readable after writable */
        ring_avail(&r, h0, 1, 1);
        ring_save("readable-after-writable", &r);

        ring_init(&r, 0);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 16, VRING_DESC_F_INDIRECT, 0);    /* not negotiated */
        ring_avail(&r, h0, 1, 1);
        ring_save("indirect-not-negotiated", &r);

        ring_init(&r, F_INDIRECT);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 16, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF, 20, VRING_DESC_F_INDIRECT, 0);    /* not a multiple of 16 */
        ring_desc(&r, VQ_DESC, 2, VQ_BUF, 16, VRING_DESC_F_INDIRECT, 0);    /* nested */
        ring_desc(&r, VQ_BUF, 0, VQ_BUF, 16, VRING_DESC_F_INDIRECT, 0);
        ring_desc(&r, VQ_DESC, 3, 0x100000, 32, VRING_DESC_F_INDIRECT, 0);  /* outside memory */
        ring_desc(&r, VQ_DESC, 4, VQ_BUF, 0, VRING_DESC_F_INDIRECT, 0);     /* empty */
        ring_desc(&r, VQ_DESC, 5, VQ_BUF, 2048 * 16, VRING_DESC_F_INDIRECT, 0); /* too long */
        ring_avail(&r, (const uint16_t[]){ 0, 1, 2, 3, 4, 5 }, 6, 6);
        ring_save("bad-indirect", &r);
        for (uint16_t i = 1; i < 6; i++) {    /* each bad kind first in its own seed */
                char name[32];

                r.base = i;
                snprintf(name, sizeof(name), "bad-indirect-%u", i);
                ring_save(name, &r);
        }

        /* Indirect tables that loop, point past themselves, or turn readable after a
         * direct writable descriptor; and one whose WRITE flag must be ignored (served). */
        ring_init(&r, F_INDIRECT);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 32, VRING_DESC_F_INDIRECT, 0);
        ring_desc(&r, VQ_BUF, 0, VQ_BUF + 0x200, 16, VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_BUF, 1, VQ_BUF + 0x300, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 0);
        ring_avail(&r, h0, 1, 1);
        ring_save("indirect-loop", &r);
        ring_init(&r, F_INDIRECT);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 32, VRING_DESC_F_INDIRECT, 0);
        ring_desc(&r, VQ_BUF, 0, VQ_BUF + 0x200, 16, VRING_DESC_F_NEXT, 7);
        ring_avail(&r, h0, 1, 1);
        ring_save("indirect-next-out-of-table", &r);
        ring_init(&r, F_INDIRECT);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF + 0x300, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_DESC, 1, VQ_BUF, 16, VRING_DESC_F_INDIRECT, 0);
        ring_desc(&r, VQ_BUF, 0, VQ_BUF + 0x200, 16, 0, 0);
        ring_avail(&r, h0, 1, 1);
        ring_save("indirect-readable-after-writable", &r);
        ring_init(&r, F_INDIRECT | F_CALL);
        ring_request(&r, VQ_BUF + 0x200);
        ring_desc(&r, VQ_DESC, 0, VQ_BUF, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_WRITE, 0);
        ring_desc(&r, VQ_BUF, 0, VQ_BUF + 0x200, 56, VRING_DESC_F_NEXT, 1);
        ring_desc(&r, VQ_BUF, 1, VQ_BUF + 0x300, 120, VRING_DESC_F_WRITE, 0);
        ring_avail(&r, h0, 1, 1);
        ring_save("indirect-write-flag-ignored", &r);

        ring_init(&r, 0);
        ring_avail(&r, h0, 1, 9);                        /* avail idx 9 ahead on an 8-entry ring */
        ring_save("avail-too-far", &r);
        ring_init(&r, 0);
        ring_avail(&r, h_big, 1, 1);                     /* head 9 >= num */
        ring_save("head-out-of-range", &r);

        ring_init(&r, 0);
        r.num_log2 = 0x80 | 0;                           /* followed by a raw size: none here */
        ring_save("bad-queue-size", &r);
        ring_init(&r, 0);
        r.avail = VQ_AVAIL + 1;                          /* misaligned */
        r.used = VQ_USED + 2;
        ring_save("misaligned-rings", &r);
        ring_init(&r, 0);
        r.num_log2 = 10;                                 /* 1024 entries: the rings leave the region */
        r.desc = 0x3f00;
        ring_save("rings-outside-memory", &r);
}

/* ---- fuzz-vhost-user: op, fds, header, payload ---- */

enum { K_EVENTFD, K_EVENTFD_BLOCKING, K_SEMAPHORE, K_MEMFD, K_MEMFD_SMALL, K_MEMFD_UNSEALABLE,
       K_MEMFD_CONTENTS, K_PIPE, K_DEVNULL };

#define VU_RAM_UVA 0x7f1000000000ull

static void vu_msg(struct out *o, const uint8_t *kinds, unsigned n_fds, uint32_t request,
                   uint32_t flags, const void *payload, uint32_t size)
{
        struct vu_msg_header h = { .request = request, .flags = flags, .size = size };

        put8(o, (uint8_t)n_fds);
        for (unsigned i = 0; i < n_fds; i++)
                put8(o, kinds[i]);
        put(o, &h, sizeof(h));
        if (payload && size <= sizeof(union vu_payload))
                put(o, payload, size);
}

#define V1 VHOST_USER_VERSION
#define NR VHOST_USER_NEED_REPLY_MASK

static void vu_plain(struct out *o, uint32_t request, uint32_t flags)
{
        vu_msg(o, NULL, 0, request, flags, NULL, 0);
}

static void vu_u64(struct out *o, uint32_t request, uint64_t v, uint8_t fd_kind, bool with_fd)
{
        vu_msg(o, &fd_kind, with_fd, request, V1 | NR, &v, sizeof(v));
}

static void vu_state(struct out *o, uint32_t request, uint32_t index, uint32_t num)
{
        struct vu_vring_state s = { .index = index, .num = num };

        vu_msg(o, NULL, 0, request, V1 | NR, &s, sizeof(s));
}

/* A memory table of one region: memfd kind `kind` (FZ_MEMFD_SIZE = 64 KiB). */
static void vu_mem_table(struct out *o, uint8_t kind, uint64_t size)
{
        struct vu_memory m = { .nregions = 1 };

        m.regions[0] = (struct vu_memory_region){
                .guest_phys_addr = 0, .memory_size = size, .user_addr = VU_RAM_UVA, .mmap_offset = 0,
        };
        vu_msg(o, &kind, 1, VHOST_USER_SET_MEM_TABLE, V1 | NR, &m,
               (uint32_t)(offsetof(struct vu_memory, regions) + sizeof(m.regions[0])));
}

/* The start of a device bring-up, as QEMU does it (and the test VMM). */
static void vu_handshake(struct out *o)
{
        uint64_t proto = (1ull << VHOST_USER_PROTOCOL_F_MQ) | (1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
                         (1ull << VHOST_USER_PROTOCOL_F_CONFIG) |
                         (1ull << VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS) |
                         (1ull << VHOST_USER_PROTOCOL_F_RESET_DEVICE);

        vu_plain(o, VHOST_USER_GET_FEATURES, V1);
        vu_plain(o, VHOST_USER_GET_PROTOCOL_FEATURES, V1);
        vu_u64(o, VHOST_USER_SET_PROTOCOL_FEATURES, proto, 0, false);
        vu_plain(o, VHOST_USER_GET_QUEUE_NUM, V1);
        vu_plain(o, VHOST_USER_GET_MAX_MEM_SLOTS, V1);
        vu_plain(o, VHOST_USER_SET_OWNER, V1);
        vu_u64(o, VHOST_USER_SET_FEATURES,
               (1ull << 32) | (1ull << VIRTIO_RING_F_INDIRECT_DESC) | (1ull << VIRTIO_RING_F_EVENT_IDX) |
                       (1ull << VHOST_USER_F_PROTOCOL_FEATURES), 0, false);
}

/* Ring `index` of 8 entries at ring_base in guest memory, with call, err and kick eventfds, enabled. */
static void vu_ring(struct out *o, uint32_t index, uint64_t ring_base)
{
        struct vu_vring_addr a = {
                .index = index, .desc_user_addr = VU_RAM_UVA + ring_base,
                .avail_user_addr = VU_RAM_UVA + ring_base + 0x100,
                .used_user_addr = VU_RAM_UVA + ring_base + 0x200,
        };

        vu_state(o, VHOST_USER_SET_VRING_NUM, index, 8);
        vu_msg(o, NULL, 0, VHOST_USER_SET_VRING_ADDR, V1 | NR, &a, sizeof(a));
        vu_state(o, VHOST_USER_SET_VRING_BASE, index, 0);
        vu_u64(o, VHOST_USER_SET_VRING_CALL, index, K_EVENTFD, true);
        vu_u64(o, VHOST_USER_SET_VRING_ERR, index, K_EVENTFD, true);
        vu_u64(o, VHOST_USER_SET_VRING_KICK, index, K_EVENTFD, true);
        vu_state(o, VHOST_USER_SET_VRING_ENABLE, index, 1);
}

/* A memory table whose memfd holds ring 1 at 0 with a FUSE INIT chain in it. */
static void vu_mem_table_with_init(struct out *o)
{
        struct {
                struct fuse_in_header h;
                struct fuse_init_in in;
        } init = {
                .h = { .len = sizeof(init), .opcode = FUSE_INIT, .unique = 1 },
                .in = { .major = 7, .minor = 38, .max_readahead = 65536 },
        };
        uint8_t ram[0x600] = { 0 };
        struct vring_desc d[2] = {
                { .addr = 0x400, .len = sizeof(init), .flags = VRING_DESC_F_NEXT, .next = 1 },
                { .addr = 0x500, .len = 0x100, .flags = VRING_DESC_F_WRITE },
        };
        uint16_t avail[3] = { 0, 1, 0 };   /* flags, idx 1, ring[0] = head 0 */
        struct vu_memory m = { .nregions = 1 };
        uint8_t kind = K_MEMFD_CONTENTS;
        struct vu_msg_header h = { .request = VHOST_USER_SET_MEM_TABLE, .flags = V1 | NR };

        memcpy(ram, d, sizeof(d));
        memcpy(ram + 0x100, avail, sizeof(avail));
        memcpy(ram + 0x400, &init, sizeof(init));
        m.regions[0] = (struct vu_memory_region){ .memory_size = 0x10000, .user_addr = VU_RAM_UVA };
        h.size = (uint32_t)(offsetof(struct vu_memory, regions) + sizeof(m.regions[0]));
        put8(o, 1);
        put8(o, kind);
        put16(o, sizeof(ram));
        put(o, ram, sizeof(ram));
        put(o, &h, sizeof(h));
        put(o, &m, h.size);
}

static void corpus_vhost_user(void)
{
        const char *t = "fuzz-vhost-user";
        struct out o;

        /* ---- what QEMU and the test VMM send ---- */
        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_MEMFD, 0x10000);
        vu_ring(&o, 0, 0x1000);
        vu_ring(&o, 1, 0x2000);
        put8(&o, 0x80 | 2);      /* kick ring 0 (eventfds: call, err, kick per ring) */
        put8(&o, 0x80 | 5);      /* and ring 1 */
        vu_state(&o, VHOST_USER_GET_VRING_BASE, 0, 0);
        vu_state(&o, VHOST_USER_GET_VRING_BASE, 1, 0);
        {
                struct vu_config c = { .offset = 0, .size = 40 };

                vu_msg(&o, NULL, 0, VHOST_USER_GET_CONFIG, V1, &c, offsetof(struct vu_config, region) + 40);
        }
        vu_plain(&o, VHOST_USER_RESET_DEVICE, V1 | NR);
        save(t, "bring-up-stop-reset", &o);

        o.n = 0;
        vu_handshake(&o);
        vu_mem_table_with_init(&o);
        vu_ring(&o, 1, 0);
        put8(&o, 0x80 | 2);      /* its kick: the third eventfd made */
        vu_state(&o, VHOST_USER_GET_VRING_BASE, 1, 0);
        save(t, "ring-with-fuse-init", &o);

        o.n = 0;
        vu_handshake(&o);
        {
                struct vu_memory_single r = {
                        .region = { .guest_phys_addr = 0x100000, .memory_size = 0x10000,
                                    .user_addr = VU_RAM_UVA + 0x100000 },
                };
                uint8_t kind = K_MEMFD;

                vu_msg(&o, &kind, 1, VHOST_USER_ADD_MEM_REG, V1 | NR, &r, sizeof(r));
                r.region.guest_phys_addr = 0;
                r.region.user_addr = VU_RAM_UVA;
                vu_msg(&o, &kind, 1, VHOST_USER_ADD_MEM_REG, V1 | NR, &r, sizeof(r));
                vu_msg(&o, &kind, 1, VHOST_USER_ADD_MEM_REG, V1 | NR, &r, sizeof(r));   /* overlaps */
                vu_ring(&o, 1, 0x1000);
                vu_msg(&o, NULL, 0, VHOST_USER_REM_MEM_REG, V1 | NR, &r, sizeof(r));
                vu_msg(&o, NULL, 0, VHOST_USER_REM_MEM_REG, V1 | NR, &r, sizeof(r));     /* gone */
        }
        save(t, "add-rem-mem-reg", &o);

        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_MEMFD, 0x10000);
        vu_ring(&o, 1, 0x1000);
        vu_mem_table(&o, K_MEMFD, 0x8000);      /* a new table under a running ring */
        vu_u64(&o, VHOST_USER_SET_VRING_CALL, 1 | VHOST_USER_VRING_NOFD_MASK, 0, false);
        vu_u64(&o, VHOST_USER_SET_VRING_KICK, 1 | VHOST_USER_VRING_NOFD_MASK, 0, false);
        vu_plain(&o, VHOST_USER_RESET_OWNER, V1);
        save(t, "mem-table-change-nofd", &o);

        /* ---- hostile frontends (tests/frontend/test-hostile-frontend.c, test-lifecycle.c) ---- */
        /* One bad message after the handshake: an fd of the wrong kind or a
         * field out of range (each a broken device). */
        static const struct {
                const char *name;
                uint32_t request;
                uint64_t value;       /* the u64 payload; for ring states: index << 32 | num */
                int fd_kind;          /* -1: none */
        } one_bad[] = {
                { "pipe-call-fd", VHOST_USER_SET_VRING_CALL, 1, K_PIPE },
                { "devnull-kick-fd", VHOST_USER_SET_VRING_KICK, 1, K_DEVNULL },
                { "semaphore-kick-fd", VHOST_USER_SET_VRING_KICK, 1, K_SEMAPHORE },
                { "memfd-err-fd", VHOST_USER_SET_VRING_ERR, 1, K_MEMFD },
                { "memfd-kick-fd", VHOST_USER_SET_VRING_KICK, 1, K_MEMFD },    /* a regular file */
                { "pipe-kick-fd", VHOST_USER_SET_VRING_KICK, 1, K_PIPE },
                { "vring-fd-missing", VHOST_USER_SET_VRING_CALL, 1, -1 },      /* no fd, no NOFD bit */
                { "vring-fd-unknown-bits", VHOST_USER_SET_VRING_CALL, 1 | (1ull << 20), K_EVENTFD },
                { "ring-index-out-of-range", VHOST_USER_SET_VRING_NUM, 3ull << 32 | 8, -1 }, /* rings 0..2 */
                { "ring-size-not-power-of-two", VHOST_USER_SET_VRING_NUM, 1ull << 32 | 6, -1 },
                { "ring-size-too-big", VHOST_USER_SET_VRING_NUM, 1ull << 32 | 2048, -1 },
                { "ring-base-too-big", VHOST_USER_SET_VRING_BASE, 1ull << 32 | 0x10000, -1 },
                { "ring-enable-2", VHOST_USER_SET_VRING_ENABLE, 1ull << 32 | 2, -1 },
        };

        for (unsigned i = 0; i < sizeof(one_bad) / sizeof(one_bad[0]); i++) {
                uint64_t v = one_bad[i].value;
                bool state = one_bad[i].request == VHOST_USER_SET_VRING_NUM ||
                             one_bad[i].request == VHOST_USER_SET_VRING_BASE ||
                             one_bad[i].request == VHOST_USER_SET_VRING_ENABLE;

                o.n = 0;
                vu_handshake(&o);
                if (state)
                        vu_state(&o, one_bad[i].request, (uint32_t)(v >> 32), (uint32_t)v);
                else
                        vu_u64(&o, one_bad[i].request, v, (uint8_t)one_bad[i].fd_kind,
                               one_bad[i].fd_kind >= 0);
                save(t, one_bad[i].name, &o);
        }

        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_MEMFD_SMALL, 0x10000);          /* the fd holds 4 KiB */
        vu_ring(&o, 1, 0x1000);
        save(t, "small-region-fd", &o);
        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_MEMFD_UNSEALABLE, 0x10000);
        vu_ring(&o, 1, 0x1000);
        put8(&o, 0x80 | 2);
        save(t, "unsealable-region", &o);
        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_DEVNULL, 0x10000);
        save(t, "region-not-a-file", &o);

        o.n = 0;
        vu_handshake(&o);
        {
                struct vu_memory m = { .nregions = 2 };
                uint8_t kinds[2] = { K_MEMFD, K_MEMFD };

                m.regions[0] = (struct vu_memory_region){ .memory_size = 0x10000, .user_addr = VU_RAM_UVA };
                m.regions[1] = (struct vu_memory_region){ .guest_phys_addr = 0x8000, .memory_size = 0x10000,
                                                          .user_addr = VU_RAM_UVA + 0x100000 };
                vu_msg(&o, kinds, 2, VHOST_USER_SET_MEM_TABLE, V1 | NR, &m,
                       offsetof(struct vu_memory, regions) + 2 * sizeof(m.regions[0]));   /* overlap */
                m.regions[0].memory_size = UINT64_MAX;                                       /* wraps */
                vu_msg(&o, kinds, 1, VHOST_USER_SET_MEM_TABLE, V1 | NR, &m,
                       offsetof(struct vu_memory, regions) + sizeof(m.regions[0]));
                m.nregions = 9;                                                             /* > 8 */
                vu_msg(&o, kinds, 2, VHOST_USER_SET_MEM_TABLE, V1 | NR, &m,
                       offsetof(struct vu_memory, regions) + 2 * sizeof(m.regions[0]));
        }
        save(t, "bad-mem-table", &o);
        o.n = 0;
        vu_handshake(&o);
        {
                struct vu_memory m = { .nregions = 1 };
                uint8_t kinds[2] = { K_MEMFD, K_MEMFD };

                m.regions[0] = (struct vu_memory_region){ .memory_size = 0x10000, .user_addr = VU_RAM_UVA };
                vu_msg(&o, kinds, 2, VHOST_USER_SET_MEM_TABLE, V1 | NR, &m,
                       offsetof(struct vu_memory, regions) + sizeof(m.regions[0]));   /* 2 fds, 1 region */
        }
        save(t, "mem-table-fd-count", &o);

        o.n = 0;
        vu_handshake(&o);
        {
                uint8_t kinds[12] = { 0 };

                vu_msg(&o, kinds, 12, VHOST_USER_SET_OWNER, V1, NULL, 0);   /* more than 8 fds */
        }
        save(t, "too-many-fds", &o);

        o.n = 0;
        vu_handshake(&o);
        put8(&o, 0);
        put32(&o, VHOST_USER_GET_FEATURES);
        put32(&o, V1);                       /* 8 of the 12 header bytes, then the end */
        save(t, "truncated-header", &o);
        o.n = 0;
        vu_handshake(&o);
        vu_msg(&o, NULL, 0, VHOST_USER_SET_FEATURES, V1, NULL, 0x10000);   /* larger than any payload */
        save(t, "oversized-payload", &o);
        o.n = 0;
        vu_handshake(&o);
        vu_msg(&o, NULL, 0, VHOST_USER_SET_FEATURES, V1, "\1\2\3", 3);      /* u64 expected */
        vu_msg(&o, NULL, 0, VHOST_USER_SET_VRING_ADDR, V1, "\1\2\3\4\5\6\7\10", 8);
        save(t, "short-payload", &o);
        o.n = 0;
        vu_plain(&o, VHOST_USER_GET_FEATURES, 2);              /* version 2 */
        save(t, "bad-version", &o);
        o.n = 0;
        vu_plain(&o, VHOST_USER_GET_FEATURES, V1 | VHOST_USER_REPLY_MASK);
        save(t, "reply-as-request", &o);

        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_MEMFD, 0x10000);
        vu_ring(&o, 1, 0xff80);                                  /* rings past the region's end */
        save(t, "ring-addresses-outside", &o);
        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_MEMFD, 0x10000);
        vu_ring(&o, 1, 0x1001);                                  /* misaligned */
        save(t, "ring-addresses-misaligned", &o);
        o.n = 0;
        vu_handshake(&o);
        vu_mem_table(&o, K_MEMFD, 0x10000);
        vu_ring(&o, 1, 0x1000);
        vu_state(&o, VHOST_USER_SET_VRING_NUM, 1, 16);           /* on a running ring */
        vu_state(&o, VHOST_USER_SET_VRING_BASE, 1, 3);
        save(t, "change-running-ring", &o);

        o.n = 0;
        vu_handshake(&o);
        {
                struct vu_config c = { .offset = 30, .size = 200 };

                vu_msg(&o, NULL, 0, VHOST_USER_GET_CONFIG, V1, &c, offsetof(struct vu_config, region) + 4);
                c.offset = 0xffffffff;
                c.size = 8;
                vu_msg(&o, NULL, 0, VHOST_USER_GET_CONFIG, V1, &c, offsetof(struct vu_config, region));
        }
        save(t, "config-out-of-range", &o);
        o.n = 0;
        vu_handshake(&o);
        vu_plain(&o, VHOST_USER_SET_LOG_BASE, V1 | NR);
        vu_plain(&o, VHOST_USER_SET_INFLIGHT_FD, V1 | NR);
        vu_plain(&o, 200, V1 | NR);
        vu_plain(&o, VHOST_USER_GET_INFLIGHT_FD, V1);            /* would leave QEMU waiting */
        save(t, "unsupported-requests", &o);
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: %s DIR  (writes DIR/fuzz-fuse, DIR/fuzz-virtqueue, DIR/fuzz-vhost-user)\n",
                        argv[0]);
                return 2;
        }
        top = argv[1];
        corpus_fuse();
        corpus_virtqueue();
        corpus_vhost_user();
        return 0;
}
