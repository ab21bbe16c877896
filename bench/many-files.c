/* SPDX-License-Identifier: GPL-2.0-or-later */
/* many-files — a tree of real size at the protocol level: N distinct files
 * (default 1,000,000, in 1,000 directories) looked up one by one and kept,
 * then GETATTRs of recently and long ago looked-up files, then a FORGET of
 * every one, on the test VMM of tests/frontend (no guest kernel in the way).
 * bench/many-files.sh makes the files and starts the daemons.
 *
 *   many-files --socket=PATH --pid=PID --share=DIR [--files=N] [--label=NAME]
 *              [--lookups-only]
 *
 * Prints "label key value" lines: the worker's RSS, descriptors and the
 * kernel's slab (Slab, and the filp cache: one object per open descriptor)
 * before the walk, after it and after the FORGETs; LOOKUP cost (wall time of
 * the round trip and the worker's CPU time, from its threads' schedstat) over
 * the lookups of files 1,000-5,999 and over the last 5,000; GETATTR cost of
 * 2,000 inodes that hold a descriptor and of 2,000 whose descriptor was
 * dropped (a reopen each).  A daemon that fails a LOOKUP (EMFILE) stops the
 * walk there: "failed_at" says after how many.  --lookups-only leaves out
 * the GETATTRs and the /proc figures (for counting a daemon's instructions
 * under callgrind: the walk and the FORGETs only). */
#include "vmm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PER_DIR 1000u
#define WINDOW  5000u

static const char *label = "daemon";
static pid_t pid;

static int64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time of all the worker's threads, in ns. */
static int64_t cpu_ns(void)
{
        char path[64];
        struct dirent *e;
        int64_t sum = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        d = opendir(path);
        if (!d)
                return 0;
        while ((e = readdir(d))) {
                char p[320];
                long long ns = 0;
                FILE *f;

                if (e->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof(p), "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
                f = fopen(p, "r");
                if (f && fscanf(f, "%lld", &ns) == 1)
                        sum += ns;
                if (f)
                        fclose(f);
        }
        closedir(d);
        return sum;
}

static long status_kib(const char *key)
{
        char path[64], line[256];
        long v = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "r");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0)
                        v = strtol(line + strlen(key), NULL, 10);
        fclose(f);
        return v;
}

static long open_fds(void)
{
        char path[64];
        struct dirent *e;
        long n = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
        d = opendir(path);
        if (!d)
                return -1;
        while ((e = readdir(d)))
                n += e->d_name[0] != '.';
        closedir(d);
        return n;
}

static long meminfo_kib(const char *key)
{
        char line[256];
        long v = -1;
        FILE *f = fopen("/proc/meminfo", "r");

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0)
                        v = strtol(line + strlen(key), NULL, 10);
        fclose(f);
        return v;
}

/* Active objects of a slab cache (needs root), -1 when unknown. */
static long slab_objects(const char *cache)
{
        char line[512], name[64];
        long active = -1, n;
        FILE *f = fopen("/proc/slabinfo", "r");

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "%63s %ld", name, &n) == 2 && strcmp(name, cache) == 0)
                        active = n;
        fclose(f);
        return active;
}

static void snapshot(const char *when)
{
        printf("%s rss_kib_%s %ld\n", label, when, status_kib("VmRSS:"));
        /* VmRSS also counts the guest memory the daemon has touched (shared
         * with the VMM): its own memory is the anonymous part. */
        printf("%s rss_anon_kib_%s %ld\n", label, when, status_kib("RssAnon:"));
        printf("%s rss_shmem_kib_%s %ld\n", label, when, status_kib("RssShmem:"));
        printf("%s fds_%s %ld\n", label, when, open_fds());
        printf("%s slab_kib_%s %ld\n", label, when, meminfo_kib("Slab:"));
        printf("%s filp_objects_%s %ld\n", label, when, slab_objects("filp"));
        printf("%s dentry_objects_%s %ld\n", label, when, slab_objects("dentry"));
        fflush(stdout);
}

/* Makes share/many/dKKKK/fNNN (empty, world-readable) unless already there. */
static int make_tree(const char *share, unsigned files)
{
        char path[4096];
        unsigned dirs = (files + PER_DIR - 1) / PER_DIR;

        snprintf(path, sizeof(path), "%s/many/.made-%u", share, files);
        if (access(path, F_OK) == 0)
                return 0;
        snprintf(path, sizeof(path), "%s/many", share);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        for (unsigned d = 0; d < dirs; d++) {
                snprintf(path, sizeof(path), "%s/many/d%04u", share, d);
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return -errno;
                for (unsigned i = 0; i < PER_DIR && d * PER_DIR + i < files; i++) {
                        int fd;

                        snprintf(path, sizeof(path), "%s/many/d%04u/f%03u", share, d, i);
                        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                        if (fd < 0)
                                return -errno;
                        close(fd);
                }
        }
        snprintf(path, sizeof(path), "%s/many/.made-%u", share, files);
        return close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0 ? -errno : 0;
}

static void cost(const char *row, int64_t wall, int64_t cpu, unsigned n)
{
        printf("%s %s_wall_ns %.0f\n", label, row, (double)wall / n);
        printf("%s %s_cpu_ns %.0f\n", label, row, (double)cpu / n);
        fflush(stdout);
}

/* GETATTRs of ids[from..from+n): wall and CPU per request. */
static int getattrs(struct vmm *v, const uint64_t *ids, unsigned from, unsigned n, const char *row)
{
        int64_t w0 = now_ns(), c0 = cpu_ns();
        struct fuse_attr a;

        for (unsigned i = from; i < from + n; i++) {
                int r = vmm_getattr(v, ids[i], &a);

                if (r < 0) {
                        printf("%s %s_failed %d\n", label, row, r);
                        return r;
                }
        }
        cost(row, now_ns() - w0, cpu_ns() - c0, n);
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "socket", required_argument, NULL, 's' },
                { "pid", required_argument, NULL, 'p' },
                { "share", required_argument, NULL, 'd' },
                { "files", required_argument, NULL, 'n' },
                { "label", required_argument, NULL, 'l' },
                { "make-only", no_argument, NULL, 'm' },
                { "lookups-only", no_argument, NULL, 'o' },
                { NULL, 0, NULL, 0 },
        };
        const char *sock = NULL, *share = NULL;
        unsigned files = 1000000, dirs, done = 0;
        bool make_only = false, lookups_only = false;
        uint64_t *ids, *dir_ids, many;
        struct fuse_entry_out e;
        struct fuse_init_out init;
        struct vmm_config cfg = { .timeout_ms = 60000 };
        struct vmm *v = NULL;
        int64_t w0 = 0, c0 = 0;
        int c, r;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 's': sock = optarg; break;
                case 'p': pid = (pid_t)atoi(optarg); break;
                case 'd': share = optarg; break;
                case 'n': files = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'l': label = optarg; break;
                case 'm': make_only = true; break;
                case 'o': lookups_only = true; break;
                default: return 2;
                }
        }
        if (!share || files < 2 * WINDOW || (!make_only && (!sock || pid <= 0))) {
                fprintf(stderr, "usage: many-files --share=DIR [--make-only | --socket=PATH --pid=PID] "
                        "[--files=N >= %u] [--label=NAME]\n", 2 * WINDOW);
                return 2;
        }
        if ((r = make_tree(share, files)) < 0) {
                fprintf(stderr, "many-files: cannot make the files in %s: %s\n", share, strerror(-r));
                return 1;
        }
        if (make_only)
                return 0;
        dirs = (files + PER_DIR - 1) / PER_DIR;
        ids = calloc(files, sizeof(*ids));
        dir_ids = calloc(dirs, sizeof(*dir_ids));
        if (!ids || !dir_ids)
                return 1;
        if ((r = vmm_connect(sock, &cfg, &v)) < 0 || (r = vmm_init(v, &init)) < 0) {
                fprintf(stderr, "many-files: cannot connect to %s: %s\n", sock, strerror(-r));
                return 1;
        }
        snapshot("before");
        if ((r = vmm_lookup(v, VMM_ROOT, "many", &e)) < 0) {
                fprintf(stderr, "many-files: LOOKUP many: %s\n", strerror(-r));
                return 1;
        }
        many = e.nodeid;

        /* The walk: a directory, then its files; every nodeid kept. */
        long peak_fds = 0;
        for (unsigned d = 0; d < dirs && done == d * PER_DIR; d++) {
                char name[16];

                snprintf(name, sizeof(name), "d%04u", d);
                if ((r = vmm_lookup(v, many, name, &e)) < 0)
                        break;
                dir_ids[d] = e.nodeid;
                for (unsigned i = 0; i < PER_DIR && done < files; i++) {
                        if (done == 1000 || done == files - WINDOW) {
                                w0 = now_ns();
                                c0 = cpu_ns();
                        }
                        snprintf(name, sizeof(name), "f%03u", i);
                        if ((r = vmm_lookup(v, dir_ids[d], name, &e)) < 0)
                                break;
                        ids[done++] = e.nodeid;
                        if (done == 1000 + WINDOW)
                                cost("lookup_at_1k", now_ns() - w0, cpu_ns() - c0, WINDOW);
                        if (done == files)
                                cost("lookup_at_end", now_ns() - w0, cpu_ns() - c0, WINDOW);
                        if (done % 50000 == 0 && !lookups_only) {
                                long n = open_fds();

                                peak_fds = n > peak_fds ? n : peak_fds;
                                fprintf(stderr, "%s: %u looked up, %ld descriptors\n", label, done, n);
                        }
                }
        }
        printf("%s looked_up %u\n", label, done);
        if (done < files)
                printf("%s failed_at %u %s\n", label, done, strerror(-r));
        printf("%s peak_fds %ld\n", label, peak_fds);
        snapshot("walked");

        if (done == files && !lookups_only) {
                /* The last looked up still hold descriptors; the first ones do not. */
                getattrs(v, ids, files - 2000, 2000, "getattr_cached");
                getattrs(v, ids, 0, 2000, "getattr_reopen");
                getattrs(v, ids, 0, 2000, "getattr_cached_again");
        }

        /* Everything forgotten, as a guest under memory pressure would. */
        int64_t f0 = now_ns();
        for (unsigned i = 0; i < done; i++)
                vmm_forget(v, ids[i], 1);
        for (unsigned d = 0; d < dirs; d++)
                if (dir_ids[d])
                        vmm_forget(v, dir_ids[d], 1);
        vmm_forget(v, many, 1);
        /* A request with a reply: every FORGET before it has been served. */
        vmm_getattr(v, VMM_ROOT, &e.attr);
        printf("%s forget_all_s %.1f\n", label, (double)(now_ns() - f0) / 1e9);
        snapshot("forgotten");
        vmm_free(v);
        free(ids);
        free(dir_ids);
        return 0;
}
