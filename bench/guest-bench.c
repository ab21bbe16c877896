/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-bench.c — the benchmark that runs inside the test guest.
 *
 * One static binary (no fio: the Debian fio is dynamic and the guest is a
 * busybox initramfs), so that every backend gets byte-for-byte the same
 * workload.  It prints one "RESULT name value unit" line per figure, and
 * "FAIL what: error" when something goes wrong; bench/run.sh parses them.
 *
 *   guest-bench DIR [-n FILES] [-s SEQ_MIB] [-t RAND_SECONDS] [-T TREE_FILES]
 *                   [-j JOBS] [-p PHASE,PHASE,...] [-c CPU]
 *
 * Phases, in this order, each on a fresh subdirectory of DIR (DIR is the mounted
 * share); -p picks some (default meta,seqwrite,seqread,randread,randwrite,tree):
 *   meta       create N empty files (open O_CREAT|O_EXCL + close), drop caches,
 *              stat each (a cold stat: one LOOKUP per name), unlink each
 *   create     only the creates of meta (the files are left; for tracing one row)
 *   seqwrite   write SEQ_MIB in 1 MiB writes + fsync
 *   seqread    drop caches, read it back in 1 MiB reads
 *   randread   4 KiB pread at random aligned offsets of that file, O_DIRECT (each
 *   randwrite  op reaches the backend; falls back to buffered I/O where the file
 *              system refuses O_DIRECT, and says so), one op at a time (psync)
 *   jobs       randwrite in JOBS processes at once (-j, default 2), each with its
 *              own descriptor and one op at a time (fio's numjobs=JOBS iodepth=1):
 *              on a multi-queue guest (Linux >= 6.10, one queue per vCPU) the
 *              jobs' requests travel on different request queues
 *   tree       a "build": extract a tree of small files (1-16 KiB), drop caches,
 *              walk it (readdir + stat), read every source and write an object
 *              file beside it, then remove the whole tree
 * A phase that needs the data file without seqwrite gets it written, untimed.
 * -c CPU pins the process (and the jobs) to one vCPU: on a guest with more vCPUs
 * than request queues, whether a request completes on the vCPU that waits for it
 * (or needs a cross-vCPU wake-up) is then fixed instead of left to the scheduler.
 * Caches are dropped with /proc/sys/vm/drop_caches, so the guest must run as root.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024u * 1024u)
#define BLOCK 4096u
#define TREE_DIRS_MAX 1000u
#define JOBS_MAX 16u

static bool failed;

static void fail(const char *what)
{
        printf("FAIL %s: %s\n", what, strerror(errno));
        fflush(stdout);
        failed = true;
}

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void result(const char *name, double value, const char *unit)
{
        printf("RESULT %s %.3f %s\n", name, value, unit);
        fflush(stdout);
}

/* Writeback first, so that dropping really empties the guest's page cache. */
static void drop_caches(void)
{
        int fd;

        sync();
        fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "3\n", 2) != 2)
                fail("drop caches");
        if (fd >= 0)
                close(fd);
}

/* xorshift64*: the same offsets and sizes on every backend. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 2685821657736338717ull;
}

static int write_all(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, buf, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -1;
                }
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

/* ---- meta ---------------------------------------------------------------------------- */

static void bench_meta(const char *dir, unsigned n, bool create_only)
{
        char path[4096];
        struct stat st;
        double t;

        if (mkdir(dir, 0755) < 0) {
                fail("meta: mkdir");
                return;
        }
        t = now();
        for (unsigned i = 0; i < n; i++) {
                int fd;

                snprintf(path, sizeof(path), "%s/file-%06u", dir, i);
                fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (fd < 0) {
                        fail("meta: create");
                        return;
                }
                close(fd);
        }
        result("create", (now() - t) * 1e6 / n, "us/op");
        if (create_only)
                return;

        drop_caches();
        t = now();
        for (unsigned i = 0; i < n; i++) {
                snprintf(path, sizeof(path), "%s/file-%06u", dir, i);
                if (stat(path, &st) < 0) {
                        fail("meta: stat");
                        return;
                }
        }
        result("stat", (now() - t) * 1e6 / n, "us/op");

        t = now();
        for (unsigned i = 0; i < n; i++) {
                snprintf(path, sizeof(path), "%s/file-%06u", dir, i);
                if (unlink(path) < 0) {
                        fail("meta: unlink");
                        return;
                }
        }
        result("unlink", (now() - t) * 1e6 / n, "us/op");
        if (rmdir(dir) < 0)
                fail("meta: rmdir");
}

/* ---- seq ----------------------------------------------------------------------------- */

/* Writes the data file; reports seq_write unless quiet (a preparation only). */
static int bench_seq_write(const char *path, unsigned mib, bool quiet)
{
        char *buf = malloc(MIB);
        double t;
        int fd, r = -1;

        if (!buf) {
                fail("seq: malloc");
                return -1;
        }
        for (unsigned i = 0; i < MIB; i++)
                buf[i] = (char)rng();

        t = now();
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                fail("seq: create");
                goto out;
        }
        for (unsigned i = 0; i < mib; i++) {
                if (write_all(fd, buf, MIB) < 0) {
                        fail("seq: write");
                        close(fd);
                        goto out;
                }
        }
        if (fsync(fd) < 0)
                fail("seq: fsync");
        else
                r = 0;
        close(fd);
        if (!quiet)
                result("seq_write", mib / (now() - t), "MiB/s");
out:
        free(buf);
        return r;
}

static void bench_seq_read(const char *path, unsigned mib)
{
        char *buf = malloc(MIB);
        double t;
        int fd;

        if (!buf) {
                fail("seq: malloc");
                return;
        }
        drop_caches();
        t = now();
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fail("seq: open");
                goto out;
        }
        uint64_t total = 0;
        for (;;) {
                ssize_t n = read(fd, buf, MIB);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        fail("seq: read");
                        break;
                }
                if (n == 0)
                        break;
                total += (uint64_t)n;
        }
        close(fd);
        if (total != (uint64_t)mib * MIB)
                printf("FAIL seq: read %" PRIu64 " bytes of %u MiB\n", total, mib);
        else
                result("seq_read", mib / (now() - t), "MiB/s");
out:
        free(buf);
}

/* ---- rand ---------------------------------------------------------------------------- */

struct rand_stats {
        uint64_t ops;
        double seconds;
        bool direct;
};

/* 4 KiB ops at random aligned offsets of the first BLOCKS blocks of PATH, one at a
 * time, for SECONDS.  Returns 0, or -1 after saying what failed. */
static int rand_run(const char *path, uint64_t blocks, double seconds, bool write_op,
                    struct rand_stats *ret)
{
        int flags = (write_op ? O_WRONLY : O_RDONLY) | O_CLOEXEC;
        uint64_t ops = 0;
        bool direct = true;
        void *buf;
        double t, end;
        int fd;

        if (posix_memalign(&buf, BLOCK, BLOCK) != 0) {
                fail("rand: memalign");
                return -1;
        }
        memset(buf, 0x5a, BLOCK);
        fd = open(path, flags | O_DIRECT);
        if (fd < 0 && errno == EINVAL) {
                direct = false;
                fd = open(path, flags);
        }
        if (fd < 0) {
                fail("rand: open");
                free(buf);
                return -1;
        }
        t = now();
        end = t + seconds;
        /* Check the clock every 64 ops: under TCG a clock read is not free. */
        do {
                for (unsigned k = 0; k < 64; k++) {
                        off_t off = (off_t)(rng() % blocks) * BLOCK;
                        ssize_t n = write_op ? pwrite(fd, buf, BLOCK, off) : pread(fd, buf, BLOCK, off);

                        if (n < 0 && errno == EINVAL && direct) {
                                /* O_DIRECT accepted at open, refused at I/O: go buffered. */
                                close(fd);
                                direct = false;
                                fd = open(path, flags);
                                if (fd < 0) {
                                        fail("rand: reopen");
                                        free(buf);
                                        return -1;
                                }
                                continue;
                        }
                        if (n != (ssize_t)BLOCK) {
                                fail(write_op ? "rand: pwrite" : "rand: pread");
                                close(fd);
                                free(buf);
                                return -1;
                        }
                        ops++;
                }
        } while (now() < end);
        *ret = (struct rand_stats) { .ops = ops, .seconds = now() - t, .direct = direct };
        close(fd);
        free(buf);
        return 0;
}

static void bench_rand_one(const char *path, unsigned mib, double seconds, bool write_op)
{
        const char *name = write_op ? "randwrite" : "randread";
        struct rand_stats st;

        if (rand_run(path, (uint64_t)mib * (MIB / BLOCK), seconds, write_op, &st) < 0)
                return;
        result(name, st.ops / st.seconds, "IOPS");
        printf("INFO %s direct=%d ops=%" PRIu64 "\n", name, st.direct, st.ops);
}

/* JOBS processes doing randwrite at once, each on its own file (as fio's numjobs
 * does: one file, under Linux's per-inode write lock, would serialise them in the
 * guest before any request left it).  They start together (a pipe closed by the
 * parent); the figure is the sum of each job's IOPS. */
static void bench_jobs(unsigned jobs, unsigned mib, double seconds)
{
        int go[2], res[2];
        pid_t pids[JOBS_MAX];
        char path[64];
        unsigned started = 0;
        double iops = 0;
        uint64_t ops = 0;
        bool direct = true, ok = true;

        for (unsigned j = 0; j < jobs; j++) {
                snprintf(path, sizeof(path), "job%u.dat", j);
                if (bench_seq_write(path, mib, true) < 0)
                        return;
        }
        drop_caches();
        if (pipe(go) < 0 || pipe(res) < 0) {
                fail("jobs: pipe");
                return;
        }
        fflush(stdout);
        for (unsigned j = 0; j < jobs; j++) {
                pid_t pid = fork();

                if (pid < 0) {
                        fail("jobs: fork");
                        ok = false;
                        break;
                }
                if (pid == 0) {
                        struct rand_stats st = { 0 };
                        char c;

                        close(go[1]);
                        close(res[0]);
                        rng_state ^= 0x632be59bd9b4e019ull * (j + 1);   /* own offsets per job */
                        while (read(go[0], &c, 1) < 0 && errno == EINTR)
                                ;
                        snprintf(path, sizeof(path), "job%u.dat", j);
                        if (rand_run(path, (uint64_t)mib * (MIB / BLOCK), seconds, true, &st) < 0)
                                _exit(1);
                        _exit(write(res[1], &st, sizeof(st)) == (ssize_t)sizeof(st) ? 0 : 1);
                }
                pids[started++] = pid;
        }
        close(go[0]);
        close(go[1]);        /* all jobs start now */
        close(res[1]);
        for (unsigned j = 0; j < started; j++) {
                struct rand_stats st;

                if (read(res[0], &st, sizeof(st)) != (ssize_t)sizeof(st) || st.seconds <= 0) {
                        ok = false;
                        continue;
                }
                iops += st.ops / st.seconds;
                ops += st.ops;
                direct = direct && st.direct;
        }
        close(res[0]);
        for (unsigned j = 0; j < started; j++) {
                int status;

                if (waitpid(pids[j], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        ok = false;
        }
        if (!ok || started != jobs) {
                printf("FAIL jobs: %u of %u jobs did not finish\n", jobs - started, jobs);
                failed = true;
        } else {
                result("randwrite_jobs", iops, "IOPS");
                printf("INFO randwrite_jobs jobs=%u direct=%d ops=%" PRIu64 "\n", jobs, direct, ops);
        }
        for (unsigned j = 0; j < jobs; j++) {
                snprintf(path, sizeof(path), "job%u.dat", j);
                (void) unlink(path);
        }
}

/* ---- tree ---------------------------------------------------------------------------- */

struct tree {
        const char *root;
        unsigned files, dirs, per_dir;
        char *data;        /* 16 KiB of source text */
};

static size_t tree_file_size(unsigned i)
{
        /* 1-16 KiB, a fixed function of the index so every run writes the same bytes. */
        return 1024 + (size_t)((i * 2654435761u) % (15 * 1024));
}

static void tree_path(const struct tree *tr, unsigned i, const char *suffix, char *buf, size_t len)
{
        snprintf(buf, len, "%s/d%03u/src%04u%s", tr->root, i / tr->per_dir, i, suffix);
}

static int tree_extract(struct tree *tr)
{
        char path[4096];

        if (mkdir(tr->root, 0755) < 0)
                return fail("tree: mkdir root"), -1;
        for (unsigned d = 0; d < tr->dirs; d++) {
                snprintf(path, sizeof(path), "%s/d%03u", tr->root, d);
                if (mkdir(path, 0755) < 0)
                        return fail("tree: mkdir"), -1;
        }
        for (unsigned i = 0; i < tr->files; i++) {
                int fd;

                tree_path(tr, i, ".c", path, sizeof(path));
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                        return fail("tree: create"), -1;
                if (write_all(fd, tr->data, tree_file_size(i)) < 0) {
                        close(fd);
                        return fail("tree: write"), -1;
                }
                close(fd);
        }
        return 0;
}

/* What make does first: list every directory and stat every entry. */
static int tree_scan(struct tree *tr, unsigned *seen)
{
        char path[4096];

        *seen = 0;
        for (unsigned d = 0; d < tr->dirs; d++) {
                struct dirent *de;
                struct stat st;
                DIR *dp;

                snprintf(path, sizeof(path), "%s/d%03u", tr->root, d);
                dp = opendir(path);
                if (!dp)
                        return fail("tree: opendir"), -1;
                while ((de = readdir(dp))) {
                        if (de->d_name[0] == '.')
                                continue;
                        if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                                closedir(dp);
                                return fail("tree: stat"), -1;
                        }
                        (*seen)++;
                }
                closedir(dp);
        }
        return 0;
}

/* Then the compiler: read each source, write an object of half its size. */
static int tree_compile(struct tree *tr)
{
        char path[4096], buf[16384];

        for (unsigned i = 0; i < tr->files; i++) {
                size_t size = tree_file_size(i);
                ssize_t n;
                int fd;

                tree_path(tr, i, ".c", path, sizeof(path));
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return fail("tree: open source"), -1;
                n = read(fd, buf, sizeof(buf));
                close(fd);
                if (n != (ssize_t)size) {
                        errno = n < 0 ? errno : EIO;
                        return fail("tree: read source"), -1;
                }
                tree_path(tr, i, ".o", path, sizeof(path));
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                        return fail("tree: create object"), -1;
                if (write_all(fd, buf, size / 2) < 0) {
                        close(fd);
                        return fail("tree: write object"), -1;
                }
                close(fd);
        }
        return 0;
}

static int tree_remove(struct tree *tr)
{
        char path[4096];

        for (unsigned i = 0; i < tr->files; i++) {
                tree_path(tr, i, ".c", path, sizeof(path));
                if (unlink(path) < 0)
                        return fail("tree: unlink source"), -1;
                tree_path(tr, i, ".o", path, sizeof(path));
                if (unlink(path) < 0)
                        return fail("tree: unlink object"), -1;
        }
        for (unsigned d = 0; d < tr->dirs; d++) {
                snprintf(path, sizeof(path), "%s/d%03u", tr->root, d);
                if (rmdir(path) < 0)
                        return fail("tree: rmdir"), -1;
        }
        if (rmdir(tr->root) < 0)
                return fail("tree: rmdir root"), -1;
        return 0;
}

static void bench_tree(const char *root, unsigned files)
{
        struct tree tr = { .root = root, .files = files, .per_dir = 50 };
        unsigned seen;
        double t, total;

        tr.dirs = (files + tr.per_dir - 1) / tr.per_dir;
        if (tr.dirs > TREE_DIRS_MAX) {
                printf("FAIL tree: at most %u files\n", TREE_DIRS_MAX * tr.per_dir);
                return;
        }
        tr.data = malloc(16384);
        if (!tr.data) {
                fail("tree: malloc");
                return;
        }
        for (unsigned i = 0; i < 16384; i++)
                tr.data[i] = "abcdefghijklmnopqrstuvwxyz{}();\n"[rng() % 32];

        t = now();
        if (tree_extract(&tr) < 0)
                goto out;
        result("tree_extract", now() - t, "s");
        total = now() - t;

        drop_caches();
        t = now();
        if (tree_scan(&tr, &seen) < 0 || tree_compile(&tr) < 0)
                goto out;
        result("tree_build", now() - t, "s");
        total += now() - t;
        if (seen != files)
                printf("FAIL tree: scan saw %u of %u files\n", seen, files);

        t = now();
        if (tree_remove(&tr) < 0)
                goto out;
        result("tree_rm", now() - t, "s");
        total += now() - t;
        result("tree_total", total, "s");
out:
        free(tr.data);
}

static unsigned parse_count(const char *s, unsigned max)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || end == s || v == 0 || v > max) {
                fprintf(stderr, "guest-bench: '%s' is not a number from 1 to %u\n", s, max);
                exit(2);
        }
        return (unsigned)v;
}

static const char *const phase_names[] = {
        "meta", "create", "seqwrite", "seqread", "randread", "randwrite", "jobs", "tree",
};
enum { PH_META, PH_CREATE, PH_SEQWRITE, PH_SEQREAD, PH_RANDREAD, PH_RANDWRITE, PH_JOBS, PH_TREE };
#define PHASES_DEFAULT ((1u << PH_META) | (1u << PH_SEQWRITE) | (1u << PH_SEQREAD) | \
                        (1u << PH_RANDREAD) | (1u << PH_RANDWRITE) | (1u << PH_TREE))

static unsigned parse_phases(const char *list)
{
        char buf[256], *save = NULL;
        unsigned mask = 0;

        if (strlen(list) >= sizeof(buf)) {
                fprintf(stderr, "guest-bench: -p '%s' is too long\n", list);
                exit(2);
        }
        strcpy(buf, list);
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                unsigned i;

                for (i = 0; i < sizeof(phase_names) / sizeof(phase_names[0]); i++)
                        if (strcmp(tok, phase_names[i]) == 0)
                                break;
                if (i == sizeof(phase_names) / sizeof(phase_names[0])) {
                        fprintf(stderr, "guest-bench: unknown phase '%s'\n", tok);
                        exit(2);
                }
                mask |= 1u << i;
        }
        if (!mask) {
                fprintf(stderr, "guest-bench: -p names no phase\n");
                exit(2);
        }
        return mask;
}

static void usage(const char *argv0)
{
        fprintf(stderr, "usage: %s DIR [-n FILES] [-s SEQ_MIB] [-t RAND_SECONDS] [-T TREE_FILES] "
                "[-j JOBS] [-p meta,create,seqwrite,seqread,randread,randwrite,jobs,tree] [-c CPU]\n", argv0);
        exit(2);
}

int main(int argc, char **argv)
{
        unsigned n = 1000, seq_mib = 128, rand_s = 2, tree_files = 1000, jobs = 2;
        unsigned phases = PHASES_DEFAULT;
        bool have_data = false;
        long cpu = -1;
        int opt;

        while ((opt = getopt(argc, argv, "n:s:t:T:j:p:c:")) != -1) {
                switch (opt) {
                case 'n': n = parse_count(optarg, 1000000); break;
                case 's': seq_mib = parse_count(optarg, 4096); break;
                case 't': rand_s = parse_count(optarg, 600); break;
                case 'T': tree_files = parse_count(optarg, TREE_DIRS_MAX * 50); break;
                case 'j': jobs = parse_count(optarg, JOBS_MAX); break;
                case 'p': phases = parse_phases(optarg); break;
                case 'c': {
                        char *end;

                        errno = 0;
                        cpu = strtol(optarg, &end, 10);
                        if (errno || *end || end == optarg || cpu < 0 || cpu >= CPU_SETSIZE) {
                                fprintf(stderr, "guest-bench: -c '%s' is not a CPU number\n", optarg);
                                return 2;
                        }
                        break;
                }
                default: usage(argv[0]);
                }
        }
        if (optind != argc - 1)
                usage(argv[0]);
        if (cpu >= 0) {
                cpu_set_t set;

                CPU_ZERO(&set);
                CPU_SET((int)cpu, &set);
                if (sched_setaffinity(0, sizeof(set), &set) < 0)
                        fail("sched_setaffinity");
                printf("INFO pinned to vCPU %ld\n", cpu);
        }
        /* Relative paths from here on: short, and bounded whatever DIR is. */
        if (chdir(argv[optind]) < 0) {
                fail("chdir");
                return 1;
        }
        if (phases & (1u << PH_META))
                bench_meta("meta", n, false);
        else if (phases & (1u << PH_CREATE))
                bench_meta("meta", n, true);
        if (phases & (1u << PH_SEQWRITE))
                have_data = bench_seq_write("seq.dat", seq_mib, false) == 0;
        if (!have_data && (phases & ((1u << PH_SEQREAD) | (1u << PH_RANDREAD) | (1u << PH_RANDWRITE))))
                have_data = bench_seq_write("seq.dat", seq_mib, true) == 0;
        if (have_data && (phases & (1u << PH_SEQREAD)))
                bench_seq_read("seq.dat", seq_mib);
        if (have_data && (phases & ((1u << PH_RANDREAD) | (1u << PH_RANDWRITE))))
                drop_caches();
        if (have_data && (phases & (1u << PH_RANDREAD)))
                bench_rand_one("seq.dat", seq_mib, rand_s, false);
        if (have_data && (phases & (1u << PH_RANDWRITE)))
                bench_rand_one("seq.dat", seq_mib, rand_s, true);
        if (have_data && unlink("seq.dat") < 0)
                fail("seq: unlink");
        if (phases & (1u << PH_JOBS))
                bench_jobs(jobs, seq_mib, rand_s);
        if (phases & (1u << PH_TREE))
                bench_tree("tree", tree_files);
        return failed ? 1 : 0;
}
