/* SPDX-License-Identifier: GPL-2.0-or-later */
/* soak-guest.c — the guest side of `make soak` (bench/soak.sh): NPROCS
 * processes, each pinned to its own vCPU (so that the guest spreads their
 * requests over the request queues), do random metadata and data operations
 * on thousands of files in their own subtree DIR/pN for SECONDS, and keep a
 * model of what that subtree must hold.  Every read is checked against the
 * model while running; at the end each process writes its model as a
 * manifest, MANIFESTS/pN.tsv, which the host (bench/soak-verify.py) compares
 * with the host tree: names, types, modes, sizes, link counts, CRC-32 of the
 * data, the user.soak xattr.
 *
 * Usage: soak-guest DIR MANIFESTS SECONDS NPROCS SEED
 * Prints "SOAK pN ops N ..." per process and exits 0, or prints a
 * "FAIL soak-pN: ..." line and exits 1 at the first surprise.
 *
 * Manifest lines (tab-separated, paths relative to DIR):
 *   D path mode
 *   F path mode size crc32 nlink xattr   (xattr "-" when there is none)
 * Statically linked into the guest (bench/soak.sh builds it). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define NDIRS     8        /* dK_G: hold the files; renamed now and then (G counts) */
#define NXDIRS    16       /* xK_G: empty directories, made, renamed, removed */
#define NNAMES    2400     /* file name slots per process: slot s lives in dir s % NDIRS */
#define NINODES   NNAMES
#define MAXSIZE   8192
#define MAXLINKS  4
#define XATTR_MAX 24

struct model_inode {
        int used;
        int nlink;
        mode_t mode;
        size_t size;
        unsigned char data[MAXSIZE];
        char xattr[XATTR_MAX + 1];   /* "" when none */
};

static struct model_inode inodes[NINODES];
static int name_inode[NNAMES];            /* -1: no such name */
static unsigned dir_gen[NDIRS];
static int xdir_gen[NXDIRS];              /* -1: absent */
static char base[4096];
static int me;
static uint64_t rng;
static unsigned long ops;

static void die(const char *fmt, ...)
{
        va_list ap;

        printf("FAIL soak-p%d: ", me);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf(" (after %lu operations)\n", ops);
        fflush(stdout);
        exit(1);
}

static uint64_t next(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static unsigned pick(unsigned n)
{
        return (unsigned)(next() % n);
}

static uint32_t crc32(const unsigned char *p, size_t n)
{
        uint32_t c = 0xffffffffu;

        while (n--) {
                c ^= *p++;
                for (int k = 0; k < 8; k++)
                        c = (c >> 1) ^ (0xedb88320u & -(c & 1u));
        }
        return ~c;
}

static void dir_path(char *buf, size_t size, unsigned d)
{
        snprintf(buf, size, "%s/d%u_%u", base, d, dir_gen[d]);
}

static void name_path(char *buf, size_t size, unsigned s)
{
        char dir[4200];

        dir_path(dir, sizeof(dir), s % NDIRS);
        snprintf(buf, size, "%s/f%u", dir, s);
}

static void xdir_path(char *buf, size_t size, unsigned x, int gen)
{
        snprintf(buf, size, "%s/x%u_%d", base, x, gen);
}

static void fill_random(unsigned char *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                p[i] = (unsigned char)next();
}

static int alloc_inode(void)
{
        for (int i = 0; i < NINODES; i++)
                if (!inodes[i].used)
                        return i;
        return -1;
}

static void drop_link(int s)
{
        struct model_inode *in = &inodes[name_inode[s]];

        if (--in->nlink == 0)
                in->used = 0;
        name_inode[s] = -1;
}

/* A random slot that has a name (want=1) or has none (want=0); -1 if none found. */
static int slot(int want)
{
        for (int tries = 0; tries < 64; tries++) {
                int s = (int)pick(NNAMES);

                if ((name_inode[s] >= 0) == want)
                        return s;
        }
        return -1;
}

static void write_all(int fd, const void *p, size_t n, off_t off, const char *what)
{
        ssize_t w = off >= 0 ? pwrite(fd, p, n, off) : write(fd, p, n);

        if (w < 0 || (size_t)w != n)
                die("%s: wrote %zd of %zu: %s", what, w, n, strerror(errno));
}

static void op_create(void)
{
        char p[4300];
        int s = slot(0), i = alloc_inode(), fd;
        struct model_inode *in;

        if (s < 0 || i < 0)
                return;
        in = &inodes[i];
        name_path(p, sizeof(p), (unsigned)s);
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0)
                die("create %s: %s", p, strerror(errno));
        memset(in, 0, sizeof(*in));
        in->used = 1;
        in->nlink = 1;
        in->mode = 0644;
        in->size = pick(4096);
        fill_random(in->data, in->size);
        write_all(fd, in->data, in->size, -1, "create");
        if (close(fd) < 0)
                die("close %s: %s", p, strerror(errno));
        name_inode[s] = i;
}

static void op_write(int append)
{
        char p[4300];
        int s = slot(1), fd;
        struct model_inode *in;
        size_t off, len;

        if (s < 0)
                return;
        in = &inodes[name_inode[s]];
        name_path(p, sizeof(p), (unsigned)s);
        off = append ? in->size : pick((unsigned)in->size + 64);  /* a small hole now and then */
        len = 1 + pick(2048);
        if (off >= MAXSIZE)
                return;
        if (off + len > MAXSIZE)
                len = MAXSIZE - off;
        fd = open(p, O_WRONLY | (append ? O_APPEND : 0));
        if (fd < 0)
                die("open for write %s: %s", p, strerror(errno));
        if (off > in->size)
                memset(in->data + in->size, 0, off - in->size);
        fill_random(in->data + off, len);
        write_all(fd, in->data + off, len, append ? -1 : (off_t)off, append ? "append" : "write");
        if (off + len > in->size)
                in->size = off + len;
        if (pick(16) == 0 && fsync(fd) < 0)
                die("fsync %s: %s", p, strerror(errno));
        if (close(fd) < 0)
                die("close %s: %s", p, strerror(errno));
}

static void op_truncate(void)
{
        char p[4300];
        int s = slot(1);
        struct model_inode *in;
        size_t size = pick(MAXSIZE);

        if (s < 0)
                return;
        in = &inodes[name_inode[s]];
        name_path(p, sizeof(p), (unsigned)s);
        if (truncate(p, (off_t)size) < 0)
                die("truncate %s: %s", p, strerror(errno));
        if (size > in->size)
                memset(in->data + in->size, 0, size - in->size);
        in->size = size;
}

static void op_read_check(void)
{
        static unsigned char buf[MAXSIZE + 1];
        char p[4300];
        int s = slot(1), fd;
        struct model_inode *in;
        ssize_t n;
        struct stat st;

        if (s < 0)
                return;
        in = &inodes[name_inode[s]];
        name_path(p, sizeof(p), (unsigned)s);
        fd = open(p, O_RDONLY);
        if (fd < 0)
                die("open %s: %s", p, strerror(errno));
        n = read(fd, buf, sizeof(buf));
        if (n < 0)
                die("read %s: %s", p, strerror(errno));
        if ((size_t)n != in->size || memcmp(buf, in->data, in->size) != 0)
                die("read %s: %zd bytes, the model has %zu (or the data differ)", p, n, in->size);
        if (fstat(fd, &st) < 0 || (st.st_mode & 07777) != in->mode || (int)st.st_nlink != in->nlink)
                die("stat %s: mode %o nlink %d, the model has %o %d", p, st.st_mode & 07777,
                    (int)st.st_nlink, in->mode, in->nlink);
        close(fd);
}

static void op_rename(void)
{
        char a[4300], b[4300];
        int s = slot(1), t = (int)pick(NNAMES);

        if (s < 0 || s == t)
                return;
        name_path(a, sizeof(a), (unsigned)s);
        name_path(b, sizeof(b), (unsigned)t);
        if (rename(a, b) < 0)
                die("rename %s %s: %s", a, b, strerror(errno));
        if (name_inode[t] == name_inode[s])
                return;   /* two links of one file: rename does nothing */
        if (name_inode[t] >= 0)
                drop_link(t);
        name_inode[t] = name_inode[s];
        name_inode[s] = -1;
}

static void op_link(void)
{
        char a[4300], b[4300];
        int s = slot(1), t = slot(0);

        if (s < 0 || t < 0 || inodes[name_inode[s]].nlink >= MAXLINKS)
                return;
        name_path(a, sizeof(a), (unsigned)s);
        name_path(b, sizeof(b), (unsigned)t);
        if (link(a, b) < 0)
                die("link %s %s: %s", a, b, strerror(errno));
        name_inode[t] = name_inode[s];
        inodes[name_inode[s]].nlink++;
}

static void op_unlink(void)
{
        char p[4300];
        int s = slot(1);

        if (s < 0)
                return;
        name_path(p, sizeof(p), (unsigned)s);
        if (unlink(p) < 0)
                die("unlink %s: %s", p, strerror(errno));
        drop_link(s);
}

static void op_chmod(void)
{
        static const mode_t modes[] = { 0600, 0640, 0644, 0664, 0700, 0755 };
        char p[4300];
        int s = slot(1);
        mode_t m = modes[pick(6)];

        if (s < 0)
                return;
        name_path(p, sizeof(p), (unsigned)s);
        if (chmod(p, m) < 0)
                die("chmod %s: %s", p, strerror(errno));
        inodes[name_inode[s]].mode = m;
}

static void op_setxattr(void)
{
        char p[4300], v[XATTR_MAX + 1];
        int s = slot(1);

        if (s < 0)
                return;
        name_path(p, sizeof(p), (unsigned)s);
        snprintf(v, sizeof(v), "v%llu", (unsigned long long)(next() % 1000000000000ull));
        if (setxattr(p, "user.soak", v, strlen(v), 0) < 0)
                die("setxattr %s: %s", p, strerror(errno));
        strcpy(inodes[name_inode[s]].xattr, v);
}

static void op_xdir(void)
{
        char a[4300], b[4300];
        unsigned x = pick(NXDIRS), y = pick(NXDIRS);

        if (xdir_gen[x] < 0) {
                xdir_path(a, sizeof(a), x, 0);
                if (mkdir(a, 0755) < 0)
                        die("mkdir %s: %s", a, strerror(errno));
                xdir_gen[x] = 0;
        } else if (pick(2) == 0) {
                xdir_path(a, sizeof(a), x, xdir_gen[x]);
                if (rmdir(a) < 0)
                        die("rmdir %s: %s", a, strerror(errno));
                xdir_gen[x] = -1;
        } else if (x != y && xdir_gen[y] < 0) {
                /* xK_G -> xM_(G+1): the name is new, the directory the same. */
                xdir_path(a, sizeof(a), x, xdir_gen[x]);
                xdir_path(b, sizeof(b), y, xdir_gen[x] + 1);
                if (rename(a, b) < 0)
                        die("rename %s %s: %s", a, b, strerror(errno));
                xdir_gen[y] = xdir_gen[x] + 1;
                xdir_gen[x] = -1;
        }
}

/* A directory full of files renamed: every path below it changes. */
static void op_rename_dir(void)
{
        char a[4300], b[4300];
        unsigned d = pick(NDIRS);

        dir_path(a, sizeof(a), d);
        dir_gen[d]++;
        dir_path(b, sizeof(b), d);
        if (rename(a, b) < 0)
                die("rename %s %s: %s", a, b, strerror(errno));
}

static void write_manifest(const char *manifests)
{
        char p[4300], rel[4300];
        FILE *f;
        int fd;

        snprintf(p, sizeof(p), "%s/p%d.tsv", manifests, me);
        f = fopen(p, "w");
        if (!f)
                die("manifest %s: %s", p, strerror(errno));
        fprintf(f, "D\tp%d\t755\n", me);
        for (unsigned d = 0; d < NDIRS; d++)
                fprintf(f, "D\tp%d/d%u_%u\t755\n", me, d, dir_gen[d]);
        for (unsigned x = 0; x < NXDIRS; x++)
                if (xdir_gen[x] >= 0)
                        fprintf(f, "D\tp%d/x%u_%d\t755\n", me, x, xdir_gen[x]);
        for (unsigned s = 0; s < NNAMES; s++) {
                const struct model_inode *in;

                if (name_inode[s] < 0)
                        continue;
                in = &inodes[name_inode[s]];
                snprintf(rel, sizeof(rel), "p%d/d%u_%u/f%u", me, s % NDIRS, dir_gen[s % NDIRS], s);
                fprintf(f, "F\t%s\t%o\t%zu\t%08x\t%d\t%s\n", rel, in->mode, in->size,
                        crc32(in->data, in->size), in->nlink, in->xattr[0] ? in->xattr : "-");
        }
        fflush(f);
        fd = fileno(f);
        if (ferror(f) || fsync(fd) < 0 || fclose(f) != 0)
                die("writing manifest %s: %s", p, strerror(errno));
}

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int child(const char *dir, const char *manifests, double seconds, int ncpus, uint64_t seed)
{
        static const char *const names[] = { "create", "write", "append", "truncate", "read", "rename",
                                             "link", "unlink", "chmod", "setxattr", "dirs", "dir-rename" };
        unsigned long count[12] = { 0 };
        cpu_set_t cpus;
        double end;

        CPU_ZERO(&cpus);
        CPU_SET(me % ncpus, &cpus);
        (void)sched_setaffinity(0, sizeof(cpus), &cpus);
        rng = seed * 2654435761u + (uint64_t)me * 0x9e3779b97f4a7c15ull + 1;
        snprintf(base, sizeof(base), "%s/p%d", dir, me);
        if (mkdir(base, 0755) < 0)
                die("mkdir %s: %s", base, strerror(errno));
        for (int s = 0; s < NNAMES; s++)
                name_inode[s] = -1;
        for (unsigned x = 0; x < NXDIRS; x++)
                xdir_gen[x] = -1;
        for (unsigned d = 0; d < NDIRS; d++) {
                char p[4300];

                dir_path(p, sizeof(p), d);
                if (mkdir(p, 0755) < 0)
                        die("mkdir %s: %s", p, strerror(errno));
        }
        /* The tree starts with about 3/5 of the names taken. */
        for (int k = 0; k < NNAMES * 3 / 5; k++) {
                op_create();
                ops++;
        }
        printf("SOAK p%d populated\n", me);   /* the host's warm-up counts from here */
        end = now() + seconds;
        while (now() < end) {
                for (int k = 0; k < 64; k++) {
                        unsigned r = pick(100), which;

                        /* create/unlink balance keeps the tree near its starting size */
                        if (r < 12)       { which = 0; op_create(); }
                        else if (r < 30)  { which = 1; op_write(0); }
                        else if (r < 38)  { which = 2; op_write(1); }
                        else if (r < 44)  { which = 3; op_truncate(); }
                        else if (r < 60)  { which = 4; op_read_check(); }
                        else if (r < 68)  { which = 5; op_rename(); }
                        else if (r < 72)  { which = 6; op_link(); }
                        else if (r < 84)  { which = 7; op_unlink(); }
                        else if (r < 90)  { which = 8; op_chmod(); }
                        else if (r < 95)  { which = 9; op_setxattr(); }
                        else if (r < 99)  { which = 10; op_xdir(); }
                        else              { which = 11; op_rename_dir(); }
                        count[which]++;
                        ops++;
                }
        }
        write_manifest(manifests);
        printf("SOAK p%d cpu %d ops %lu:", me, sched_getcpu(), ops);
        for (int k = 0; k < 12; k++)
                printf(" %s=%lu", names[k], count[k]);
        printf("\n");
        fflush(stdout);
        return 0;
}

int main(int argc, char **argv)
{
        int nprocs, ncpus, failed = 0;
        double seconds;
        uint64_t seed;

        if (argc != 6) {
                fprintf(stderr, "usage: soak-guest DIR MANIFESTS SECONDS NPROCS SEED\n");
                return 2;
        }
        seconds = atof(argv[3]);
        nprocs = atoi(argv[4]);
        seed = strtoull(argv[5], NULL, 10);
        ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (nprocs < 1 || nprocs > 64 || ncpus < 1)
                return 2;
        umask(0);
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (me = 0; me < nprocs; me++) {
                pid_t pid = fork();

                if (pid < 0) {
                        perror("fork");
                        return 1;
                }
                if (pid == 0)
                        _exit(child(argv[1], argv[2], seconds, ncpus, seed));
        }
        for (int k = 0; k < nprocs; k++) {
                int status;

                if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        failed = 1;
        }
        return failed;
}
