/* SPDX-License-Identifier: GPL-2.0-or-later */
/* eio-fs.c — a tiny read-only FUSE file system of the guest-faults test, spoken
 * straight over /dev/fuse (no libfuse): it is the host-side fault below the
 * daemon.  The root directory holds two files:
 *   good  — "good data\n", read normally;
 *   bad   — 65536 bytes long, but every READ of it fails with EIO, as a file
 *           on a dying disk does (dm-error is not available in containers).
 *
 * Usage: eio-fs MOUNTPOINT  (root; mounts with allow_other so that the worker,
 * an ordinary user, can enter it; prints "eio-fs: ready" once mounted and
 * serves until the mount goes away: `umount MOUNTPOINT` ends it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fuse.h>

enum { INO_ROOT = 1, INO_GOOD = 2, INO_BAD = 3 };
static const char good_data[] = "good data\n";
#define BAD_SIZE 65536
#define MAX_WRITE 65536

static int fuse_fd = -1;

static int reply(uint64_t unique, int error, const void *data, size_t len)
{
        struct fuse_out_header out = { .len = sizeof(out) + (error ? 0 : len), .error = error, .unique = unique };
        struct iovec iov[2] = { { &out, sizeof(out) }, { (void *)data, error ? 0 : len } };

        if (writev(fuse_fd, iov, 2) < 0 && errno != ENOENT) /* ENOENT: the request was interrupted */
                return -errno;
        return 0;
}

static int fill_attr(uint64_t ino, struct fuse_attr *a)
{
        memset(a, 0, sizeof(*a));
        a->ino = ino;
        a->blksize = 4096;
        a->nlink = 1;
        switch (ino) {
        case INO_ROOT: a->mode = S_IFDIR | 0555; a->nlink = 2; break;
        case INO_GOOD: a->mode = S_IFREG | 0444; a->size = sizeof(good_data) - 1; break;
        case INO_BAD:  a->mode = S_IFREG | 0444; a->size = BAD_SIZE; break;
        default: return -ENOENT;
        }
        a->blocks = (a->size + 511) / 512;
        return 0;
}

static uint64_t lookup_name(const char *name)
{
        if (strcmp(name, "good") == 0)
                return INO_GOOD;
        if (strcmp(name, "bad") == 0)
                return INO_BAD;
        return 0;
}

/* READDIR: ".", "..", "good", "bad"; an entry's offset is its index + 1. */
static size_t fill_dir(uint64_t offset, size_t size, char *buf)
{
        static const struct { const char *name; uint64_t ino; uint32_t type; } ents[] = {
                { ".", INO_ROOT, DT_DIR }, { "..", INO_ROOT, DT_DIR },
                { "good", INO_GOOD, DT_REG }, { "bad", INO_BAD, DT_REG },
        };
        size_t used = 0;

        for (uint64_t i = offset; i < sizeof(ents) / sizeof(ents[0]); i++) {
                size_t namelen = strlen(ents[i].name), reclen = FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + namelen);
                struct fuse_dirent *d = (struct fuse_dirent *)(buf + used);

                if (used + reclen > size)
                        break;
                memset(d, 0, reclen);
                d->ino = ents[i].ino;
                d->off = i + 1;
                d->namelen = (uint32_t)namelen;
                d->type = ents[i].type;
                memcpy(d->name, ents[i].name, namelen);
                used += reclen;
        }
        return used;
}

static int handle(const struct fuse_in_header *in, const char *arg, size_t arglen)
{
        switch (in->opcode) {
        case FUSE_INIT: {
                const struct fuse_init_in *ii = (const void *)arg;
                struct fuse_init_out o = {
                        .major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
                        .max_readahead = arglen >= sizeof(*ii) ? ii->max_readahead : 0,
                        .max_background = 16, .congestion_threshold = 12,
                        .max_write = MAX_WRITE, .time_gran = 1,
                };
                return reply(in->unique, 0, &o, sizeof(o));
        }
        case FUSE_LOOKUP: {
                struct fuse_entry_out e = { .entry_valid = 1, .attr_valid = 1 };

                if (in->nodeid != INO_ROOT || arglen == 0 || arg[arglen - 1] != '\0')
                        return reply(in->unique, -ENOENT, NULL, 0);
                e.nodeid = lookup_name(arg);
                if (!e.nodeid)
                        return reply(in->unique, -ENOENT, NULL, 0);
                e.generation = 1;
                fill_attr(e.nodeid, &e.attr);
                return reply(in->unique, 0, &e, sizeof(e));
        }
        case FUSE_GETATTR: {
                struct fuse_attr_out a = { .attr_valid = 1 };

                if (fill_attr(in->nodeid, &a.attr) < 0)
                        return reply(in->unique, -ENOENT, NULL, 0);
                return reply(in->unique, 0, &a, sizeof(a));
        }
        case FUSE_OPEN:
        case FUSE_OPENDIR: {
                const struct fuse_open_in *oi = (const void *)arg;
                struct fuse_open_out o = { 0 };

                if (arglen < sizeof(*oi))
                        return reply(in->unique, -EINVAL, NULL, 0);
                if ((oi->flags & O_ACCMODE) != O_RDONLY)
                        return reply(in->unique, -EROFS, NULL, 0);
                return reply(in->unique, 0, &o, sizeof(o));
        }
        case FUSE_READ:
        case FUSE_READDIR: {
                const struct fuse_read_in *ri = (const void *)arg;
                static char buf[MAX_WRITE];
                size_t size;

                if (arglen < sizeof(*ri))
                        return reply(in->unique, -EINVAL, NULL, 0);
                size = ri->size < sizeof(buf) ? ri->size : sizeof(buf);
                if (in->opcode == FUSE_READDIR)
                        return reply(in->unique, 0, buf, fill_dir(ri->offset, size, buf));
                if (in->nodeid == INO_BAD)
                        return reply(in->unique, -EIO, NULL, 0);  /* the fault under test */
                if (in->nodeid != INO_GOOD)
                        return reply(in->unique, -EISDIR, NULL, 0);
                if (ri->offset >= sizeof(good_data) - 1)
                        return reply(in->unique, 0, NULL, 0);
                if (size > sizeof(good_data) - 1 - ri->offset)
                        size = sizeof(good_data) - 1 - ri->offset;
                return reply(in->unique, 0, good_data + ri->offset, size);
        }
        case FUSE_STATFS: {
                struct fuse_statfs_out s = { .st = { .bsize = 4096, .frsize = 4096, .namelen = 255 } };
                return reply(in->unique, 0, &s, sizeof(s));
        }
        case FUSE_RELEASE:
        case FUSE_RELEASEDIR:
        case FUSE_FLUSH:
        case FUSE_ACCESS:
        case FUSE_DESTROY:
                return reply(in->unique, 0, NULL, 0);
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
                return 0;  /* no reply */
        default:
                return reply(in->unique, -ENOSYS, NULL, 0);
        }
}

int main(int argc, char **argv)
{
        static char buf[FUSE_MIN_READ_BUFFER + MAX_WRITE];
        char opts[128];

        if (argc != 2) {
                fprintf(stderr, "usage: eio-fs MOUNTPOINT\n");
                return 2;
        }
        fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fuse_fd < 0) {
                perror("eio-fs: /dev/fuse");
                return 77;
        }
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,default_permissions",
                 fuse_fd);
        if (mount("eio-fs", argv[1], "fuse.eio-fs", MS_NOSUID | MS_NODEV | MS_RDONLY, opts) < 0) {
                perror("eio-fs: mount");
                return 77;
        }
        printf("eio-fs: ready\n");
        fflush(stdout);
        for (;;) {
                ssize_t n = read(fuse_fd, buf, sizeof(buf));
                const struct fuse_in_header *in = (const void *)buf;

                if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
                        continue;
                if (n < 0 && errno == ENODEV)  /* unmounted */
                        return 0;
                if (n < 0) {
                        perror("eio-fs: read /dev/fuse");
                        return 1;
                }
                if ((size_t)n < sizeof(*in) || in->len != (uint32_t)n)
                        continue;
                if (handle(in, buf + sizeof(*in), (size_t)n - sizeof(*in)) < 0)
                        perror("eio-fs: reply");
        }
}
