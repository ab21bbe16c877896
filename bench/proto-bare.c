/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proto-bare.c — the physical limit: each row's work done with bare host
 * syscalls in this process, on the same files as the daemons see (the
 * label "bare").  A daemon can approach these figures, never pass them:
 * it makes the same syscalls plus the ring round trip.
 *
 *   GETATTR         fstat of the folder
 *   LOOKUP+GETATTR  fstatat(folder, name) + fstat of an O_PATH fd
 *   READ/WRITE      pread/pwrite of the same file into a memory buffer
 *   CREATE cycle    openat(O_CREAT|O_EXCL) + close + unlinkat
 *   copy            pwrite of each chunk + fstat, then close
 *
 * A syscall is synchronous: "N outstanding" is one thread back to back,
 * except in the queue rows, where N queues are N threads. */
#include "proto-bench.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pb_bare {
        int dirfd, datafd;
        void *buf;                      /* 4 MiB, page aligned */
};

int pb_bare_open(struct pb_bare **ret)
{
        char path[4096];
        struct pb_bare *b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/%s", pb_opt.dir, PB_DATA_FILE);
        b->dirfd = open(pb_opt.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        b->datafd = open(path, O_RDWR | O_CLOEXEC);
        b->buf = aligned_alloc(PB_PAGE, 4u << 20);
        if (b->dirfd < 0 || b->datafd < 0 || !b->buf) {
                int r = pb_fail(b->buf ? -errno : -ENOMEM, pb_opt.dir);
                pb_bare_close(b);
                return r;
        }
        memset(b->buf, 'b', 4u << 20);
        *ret = b;
        return 0;
}

void pb_bare_close(struct pb_bare *b)
{
        if (!b)
                return;
        if (b->dirfd >= 0)
                close(b->dirfd);
        if (b->datafd >= 0)
                close(b->datafd);
        free(b->buf);
        free(b);
}

static int64_t duration_ns(void)
{
        return (int64_t)pb_opt.duration_ms * 1000000;
}

int pb_bare_lat(struct pb_bare *b, unsigned arg)
{
        uint32_t *s = malloc(PB_MAX_SAMPLES * sizeof(uint32_t));
        struct stat st;
        size_t n = 0;
        if (!s)
                return -ENOMEM;
        int64_t end = pb_now_ns() + duration_ns();
        for (int64_t t = pb_now_ns(); t < end && n < PB_MAX_SAMPLES;) {
                (void)fstat(b->dirfd, &st);
                int64_t u = pb_now_ns();
                s[n++] = (uint32_t)(u - t);
                t = u;
        }
        pb_emit("lat", "getattr p50", "µs", "lo", pb_percentile_us(s, n, 0.5));
        pb_emit("lat", "getattr p99", "µs", "lo", pb_percentile_us(s, n, 0.99));
        free(s);
        return 0;
}

int pb_bare_ops(struct pb_bare *b, unsigned arg)
{
        bool lookup = arg & PB_OPS_LOOKUP;
        struct stat st;
        uint64_t ops = 0;
        char row[64];
        int fd = openat(b->dirfd, PB_LOOKUP_FILE, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return pb_fail(-errno, PB_LOOKUP_FILE);
        int64_t t0 = pb_now_ns(), end = t0 + duration_ns();
        while (pb_now_ns() < end)
                for (unsigned k = 0; k < 64; k++, ops++) {
                        if (lookup) {
                                (void)fstatat(b->dirfd, PB_LOOKUP_FILE, &st, AT_SYMLINK_NOFOLLOW);
                                (void)fstat(fd, &st);
                        } else {
                                (void)fstat(b->dirfd, &st);
                        }
                }
        close(fd);
        snprintf(row, sizeof(row), "%s qd%u", lookup ? "lookup+getattr" : "getattr", arg & 0xff);
        pb_emit("ops", row, lookup ? "pairs/s" : "ops/s", "hi", (double)ops / ((double)(pb_now_ns() - t0) / 1e9));
        return 0;
}

int pb_bare_io(struct pb_bare *b, unsigned which)
{
        bool write = which >= 3;
        size_t size = pb_io_sizes[which % 3];
        uint64_t ops = 0, off = 0;
        char row[64];
        int64_t t0 = pb_now_ns(), end = t0 + duration_ns();
        while (pb_now_ns() < end) {
                ssize_t k = write ? pwrite(b->datafd, b->buf, size, (off_t)off)
                                  : pread(b->datafd, b->buf, size, (off_t)off);
                if (k != (ssize_t)size)
                        return pb_fail(k < 0 ? -errno : -EIO, "bare I/O");
                off = (off + size) % PB_DATA_SIZE;
                ops++;
        }
        snprintf(row, sizeof(row), "%s %s", write ? "write" : "read", pb_io_names[which % 3]);
        pb_emit("io", row, "MB/s", "hi", (double)ops * (double)size / ((double)(pb_now_ns() - t0) / 1e9) / 1e6);
        return 0;
}

int pb_bare_create(struct pb_bare *b, unsigned arg)
{
        uint64_t ops = 0;
        int64_t t0 = pb_now_ns(), end = t0 + duration_ns();
        while (pb_now_ns() < end) {
                int fd = openat(b->dirfd, "pb-bare", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (fd < 0)
                        return pb_fail(-errno, "bare create");
                close(fd);
                (void)unlinkat(b->dirfd, "pb-bare", 0);
                ops++;
        }
        pb_emit("create", "create+release+unlink", "cycles/s", "hi",
                (double)ops / ((double)(pb_now_ns() - t0) / 1e9));
        return 0;
}

int pb_bare_win(struct pb_bare *b, unsigned largest)
{
        struct stat st;
        size_t chunk = largest ? (size_t)(PB_WIN_MAX_DESC - 4) * PB_PAGE : 1u << 20;
        int64_t t0 = pb_now_ns();
        int fd = openat(b->dirfd, "pb-copy", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return pb_fail(-errno, "bare copy");
        for (uint64_t off = 0; off < pb_opt.copy_bytes; off += chunk) {
                size_t len = pb_opt.copy_bytes - off < chunk ? pb_opt.copy_bytes - off : chunk;
                if (pwrite(fd, b->buf, len, (off_t)off) != (ssize_t)len) {
                        close(fd);
                        return pb_fail(-EIO, "bare copy write");
                }
                (void)fstat(fd, &st);
        }
        close(fd);
        double secs = (double)(pb_now_ns() - t0) / 1e9;
        (void)unlinkat(b->dirfd, "pb-copy", 0);
        pb_emit("win", largest ? "copy, largest max_write" : "copy, 1 MiB writes", "GB/s", "hi",
                (double)pb_opt.copy_bytes / secs / 1e9);
        return 0;
}

struct bare_thread {
        struct pb_bare *b;
        bool read;                      /* pread 128 KiB, else fstat */
        uint64_t ops;
        int64_t end;
        void *buf;
};

static void *bare_loop(void *arg)
{
        struct bare_thread *t = arg;
        struct stat st;
        uint64_t off = 0;
        while (pb_now_ns() < t->end)
                for (unsigned i = 0; i < 64; i++, t->ops++) {
                        if (!t->read) {
                                (void)fstat(t->b->dirfd, &st);
                        } else {
                                (void)!pread(t->b->datafd, t->buf, 128 << 10, (off_t)off);
                                off = (off + (128 << 10)) % PB_DATA_SIZE;
                        }
                }
        return NULL;
}

int pb_bare_mq(struct pb_bare *b, unsigned threads)
{
        char row[64];
        for (unsigned kind = 0; kind < 2; kind++) {
                struct bare_thread t[PB_MAX_THREADS];
                pthread_t tid[PB_MAX_THREADS];
                unsigned started = 0;
                int64_t t0 = pb_now_ns();
                for (; started < threads && started < PB_MAX_THREADS; started++) {
                        t[started] = (struct bare_thread){ .b = b, .read = kind == 1,
                                                           .end = t0 + duration_ns(),
                                                           .buf = malloc(128 << 10) };
                        if (!t[started].buf ||
                            pthread_create(&tid[started], NULL, bare_loop, &t[started]) != 0) {
                                free(t[started].buf);
                                break;
                        }
                }
                uint64_t ops = 0;
                for (unsigned i = 0; i < started; i++) {
                        pthread_join(tid[i], NULL);
                        ops += t[i].ops;
                        free(t[i].buf);
                }
                if (started < threads)
                        return pb_fail(-EAGAIN, "bare threads");
                double secs = (double)(pb_now_ns() - t0) / 1e9;
                if (kind == 0) {
                        snprintf(row, sizeof(row), "getattr qd16 per queue, %u queue%s", threads, threads > 1 ? "s" : "");
                        pb_emit("mq", row, "ops/s", "hi", (double)ops / secs);
                } else {
                        snprintf(row, sizeof(row), "read 128k qd1 per queue, %u queue%s", threads, threads > 1 ? "s" : "");
                        pb_emit("mq", row, "MB/s", "hi", (double)ops * (128 << 10) / secs / 1e6);
                }
        }
        return 0;
}
