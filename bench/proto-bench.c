/* proto-bench — the protocol benchmark: FUSE requests straight into a
 * vhost-user-fs backend from the test VMM (tests/frontend/vmm.h), no guest
 * kernel in the way, so what it measures is the daemon (and the host's
 * syscalls under it).  bench/proto-run.sh runs it against every daemon;
 * bench/PROTO.md says what each row means.
 *
 *   proto-bench --socket=PATH --dir=DIR --label=NAME [--pid=PID] [OPTION...]
 *   proto-bench --bare --dir=DIR [OPTION...]      the same work as host syscalls
 *   proto-bench --summarize=RESULTS_DIR           raw.tsv → results.md, results.json
 *
 * Every figure is one line of TSV (rep, label, group, row, unit, better,
 * value) appended to --out (default stdout); --summarize takes the medians.
 *
 * The frontend drives each request queue from one thread with preallocated
 * request slots (vmm_slot_*): N requests outstanding means N slots, refilled
 * as their replies come back, one kick per batch — and no kick at all while
 * the daemon says it is polling (EVENT_IDX avail_event), unless told not to
 * honour that.  Replies are waited for on the call eventfd, or by spinning
 * on used->idx (the notify group compares the two). */
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define DATA_FILE       "pb-data"       /* READ/WRITE target, prepared on the host */
#define DATA_SIZE       (64u << 20)
#define LOOKUP_FILE     "pb-lookup"
#define MANY_DIR        "pb-many"       /* the memory row's 10,000 files */
#define MANY_FILES      10000
#define MAX_DEPTH       16
#define MAX_THREADS     8
#define MAX_SAMPLES     (1u << 20)
#define WIN_MAX_DESC    1024            /* viofs: at most 1024 descriptors, queue size 1024 */
#define PAGE            4096u

struct options {
        const char *socket;
        const char *dir;
        const char *label;
        const char *rows;
        const char *out;
        const char *summarize;
        const char *primary;
        unsigned queues[4];
        unsigned nqueues;
        pid_t pid;
        bool bare;
        unsigned rep;
        int duration_ms;
        uint64_t copy_bytes;
        uint32_t uid, gid;
        int max_opens;
};

static struct options opt = {
        .label = "daemon", .rows = "lat,ops,io,create,notify,win", .primary = "sluice",
        .queues = { 1, 2, 4 }, .nqueues = 3, .rep = 1, .duration_ms = 500,
        .copy_bytes = 2ull << 30, .max_opens = 50000,
};
static FILE *out;

static int64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool row_wanted(const char *name)
{
        size_t n = strlen(name);
        for (const char *p = opt.rows; *p;) {
                size_t len = strcspn(p, ",");
                if (len == n && strncmp(p, name, n) == 0)
                        return true;
                p += len + (p[len] == ',');
        }
        return false;
}

/* One figure.  better: "hi" (ops/s, MB/s) or "lo" (latency, CPU, memory). */
static void emit(const char *group, const char *row, const char *unit, const char *better, double value)
{
        fprintf(out, "%u\t%s\t%s\t%s\t%s\t%s\t%.6g\n", opt.rep, opt.label, group, row, unit, better, value);
        fflush(out);
        fprintf(stderr, "proto-bench: %-8s %-7s %-34s %12.6g %s\n", opt.label, group, row, value, unit);
}

static void emit_text(const char *group, const char *row, const char *fmt, ...)
{
        char buf[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(out, "%u\t%s\t%s\t%s\ttext\t-\t%s\n", opt.rep, opt.label, group, row, buf);
        fflush(out);
        fprintf(stderr, "proto-bench: %-8s %-7s %-34s %s\n", opt.label, group, row, buf);
}

static int fail(int err, const char *what)
{
        fprintf(stderr, "proto-bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
        return err < 0 ? err : -err;
}

/* ---- the daemon from outside: CPU time and memory ---- */

/* The daemon and its descendants (the legacy virtiofsd serves from a child
 * it forks into its sandbox): up to max pids, the daemon first. */
static unsigned daemon_pids(pid_t *pids, unsigned max)
{
        unsigned n = 0;
        if (opt.pid <= 0 || max == 0)
                return 0;
        pids[n++] = opt.pid;
        for (unsigned i = 0; i < n; i++) {
                char path[64], buf[4096];
                /* children of the main thread only: the daemons fork from it */
                snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pids[i], (int)pids[i]);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                size_t len = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                buf[len] = '\0';
                for (char *p = buf, *end; n < max; p = end) {
                        long child = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        pids[n++] = (pid_t)child;
                }
        }
        return n;
}

/* utime + stime of one process (every thread), in ns; -1 when it is gone. */
static int64_t process_cpu_ns(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* Fields after the command name (which may hold spaces): 3 = state … 14 utime, 15 stime. */
        char *p = strrchr(buf, ')');
        unsigned long long ut, st;
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return -1;
        return (int64_t)((ut + st) * (1000000000.0 / (double)sysconf(_SC_CLK_TCK)));
}

/* The daemon's CPU time (its descendants' too), ns; -1 without --pid. */
static int64_t daemon_cpu_ns(void)
{
        pid_t pids[16];
        unsigned n = daemon_pids(pids, 16);
        int64_t sum = n ? 0 : -1;
        for (unsigned i = 0; i < n; i++) {
                int64_t t = process_cpu_ns(pids[i]);
                if (t > 0)
                        sum += t;
        }
        return sum;
}

/* VmRSS of the daemon and its descendants, KiB; -1 without --pid. */
static long daemon_rss_kib(void)
{
        pid_t pids[16];
        unsigned n = daemon_pids(pids, 16);
        long sum = n ? 0 : -1;
        for (unsigned i = 0; i < n; i++) {
                char path[64], line[256];
                long kib = 0;
                snprintf(path, sizeof(path), "/proc/%d/status", (int)pids[i]);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                while (fgets(line, sizeof(line), f))
                        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
                                break;
                fclose(f);
                sum += kib;
        }
        return sum;
}

/* ---- host files the rows work on (prepared as the caller, before connecting) ---- */

static int prepare_files(void)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", opt.dir, DATA_FILE);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
                return fail(-errno, path);
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size != DATA_SIZE) {
                static char buf[1 << 20];
                memset(buf, 'x', sizeof(buf));
                for (off_t off = 0; off < DATA_SIZE; off += (off_t)sizeof(buf))
                        if (pwrite(fd, buf, sizeof(buf), off) != (ssize_t)sizeof(buf)) {
                                close(fd);
                                return fail(-EIO, "writing the data file");
                        }
        }
        (void)fchmod(fd, 0666);  /* the daemon may run as another user */
        close(fd);
        snprintf(path, sizeof(path), "%s/%s", opt.dir, LOOKUP_FILE);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (fd >= 0)
                close(fd);
        if (!row_wanted("mem"))
                return 0;
        snprintf(path, sizeof(path), "%s/%s", opt.dir, MANY_DIR);
        if (mkdir(path, 0777) < 0 && errno != EEXIST)
                return fail(-errno, path);
        (void)chmod(path, 0777);
        for (unsigned i = 0; i < MANY_FILES; i++) {
                snprintf(path, sizeof(path), "%s/%s/f%05u", opt.dir, MANY_DIR, i);
                fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
                if (fd < 0)
                        return fail(-errno, path);
                close(fd);
        }
        return 0;
}

/* ---- the closed loop: `depth` requests in flight on one queue ---- */

enum workload { W_GETATTR, W_LOOKUP_GETATTR, W_READ, W_WRITE, W_CREATE };

struct slot_state {
        int phase;
        uint64_t nodeid, fh, offset;
        int64_t t_start;                /* when this op's first request was added */
        unsigned serial;
};

struct loop {
        struct vmm *v;
        unsigned queue;
        struct vmm_slot *slots;
        unsigned depth;
        enum workload w;
        size_t io_size;
        uint64_t data_node, data_fh;    /* READ/WRITE: the open data file */
        uint64_t lookup_parent;
        unsigned thread;
        /* results */
        uint64_t ops, requests;
        uint32_t *samples;              /* per op, ns (depth 1 latency) */
        size_t nsamples;
        int64_t t_count, t_done;        /* the counted window: after the warm-up to the drain's end */
        int error;
};

static void lay_getattr(struct loop *l, struct vmm_slot *s, uint64_t node)
{
        struct fuse_getattr_in *in = s->args;
        *in = (struct fuse_getattr_in){ 0 };
        size_t seg = sizeof(*in);
        (void)vmm_slot_prepare(l->v, s, FUSE_GETATTR, node, &seg, 1, sizeof(struct fuse_attr_out), NULL);
}

static void lay_name(struct loop *l, struct vmm_slot *s, uint32_t opcode, uint64_t parent,
                     const char *name, size_t out_size)
{
        size_t seg = strlen(name) + 1;
        memcpy(s->args, name, seg);
        (void)vmm_slot_prepare(l->v, s, opcode, parent, &seg, 1, out_size, NULL);
}

static void slot_name(const struct loop *l, const struct slot_state *st, char *buf, size_t size)
{
        snprintf(buf, size, "pb-c%u-%u-%u", l->thread, (unsigned)(st - (struct slot_state *)l->slots[0].user), st->serial);
}

/* Lays out the request that starts or continues the slot's op. */
static void lay_next(struct loop *l, struct vmm_slot *s)
{
        struct slot_state *st = s->user;
        char name[64];
        switch (l->w) {
        case W_GETATTR:
                lay_getattr(l, s, VMM_ROOT);
                break;
        case W_LOOKUP_GETATTR:
                if (st->phase == 0)
                        lay_name(l, s, FUSE_LOOKUP, l->lookup_parent, LOOKUP_FILE, sizeof(struct fuse_entry_out));
                else
                        lay_getattr(l, s, st->nodeid);
                break;
        case W_READ: {
                struct fuse_read_in *in = s->args;
                *in = (struct fuse_read_in){ .fh = l->data_fh, .offset = st->offset, .size = (uint32_t)l->io_size };
                size_t seg = sizeof(*in);
                (void)vmm_slot_prepare(l->v, s, FUSE_READ, l->data_node, &seg, 1, l->io_size, NULL);
                break;
        }
        case W_WRITE: {
                struct fuse_write_in *in = s->args;
                *in = (struct fuse_write_in){ .fh = l->data_fh, .offset = st->offset, .size = (uint32_t)l->io_size };
                size_t seg[2] = { sizeof(*in), l->io_size };
                (void)vmm_slot_prepare(l->v, s, FUSE_WRITE, l->data_node, seg, 2, sizeof(struct fuse_write_out), NULL);
                break;
        }
        case W_CREATE:
                slot_name(l, st, name, sizeof(name));
                if (st->phase == 0) {
                        struct fuse_create_in *in = s->args;
                        *in = (struct fuse_create_in){ .flags = O_WRONLY | O_CREAT | O_EXCL, .mode = S_IFREG | 0644 };
                        size_t seg[2] = { sizeof(*in), strlen(name) + 1 };
                        memcpy((char *)s->args + sizeof(*in), name, seg[1]);
                        (void)vmm_slot_prepare(l->v, s, FUSE_CREATE, VMM_ROOT, seg, 2,
                                               sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out), NULL);
                } else if (st->phase == 1) {
                        struct fuse_release_in *in = s->args;
                        *in = (struct fuse_release_in){ .fh = st->fh, .flags = O_WRONLY };
                        size_t seg = sizeof(*in);
                        (void)vmm_slot_prepare(l->v, s, FUSE_RELEASE, st->nodeid, &seg, 1, 0, NULL);
                } else {
                        lay_name(l, s, FUSE_UNLINK, VMM_ROOT, name, 0);
                }
                break;
        }
}

/* Takes a slot's reply; returns true when the slot's op is complete. */
static bool take_reply(struct loop *l, struct vmm_slot *s)
{
        struct slot_state *st = s->user;
        size_t len = 0;
        int r = vmm_slot_result(s, &len);
        l->requests++;
        if (r < 0 && l->error == 0) {
                l->error = r;
                fprintf(stderr, "proto-bench: opcode %u failed: %s\n", s->in->opcode, strerror(-r));
        }
        switch (l->w) {
        case W_GETATTR:
                return true;
        case W_LOOKUP_GETATTR:
                if (st->phase == 0) {
                        st->nodeid = ((struct fuse_entry_out *)s->out)->nodeid;
                        st->phase = 1;
                        return false;
                }
                st->phase = 0;
                return true;
        case W_READ:
        case W_WRITE:
                st->offset += l->io_size * l->depth;
                if (st->offset + l->io_size > DATA_SIZE)
                        st->offset = (st->offset + l->io_size) % DATA_SIZE / l->io_size * l->io_size;
                return true;
        case W_CREATE:
                if (st->phase == 0) {
                        const struct fuse_entry_out *e = s->out;
                        const struct fuse_open_out *o = (const void *)(e + 1);
                        st->nodeid = e->nodeid;
                        st->fh = o->fh;
                        st->phase = 1;
                        return false;
                }
                if (st->phase == 1) {
                        st->phase = 2;
                        return false;
                }
                st->phase = 0;
                st->serial++;
                return true;
        }
        return true;
}

/* Runs the loop for duration_ns (after a tenth of it as warm-up). */
static int loop_run(struct loop *l, int64_t duration_ns)
{
        struct vmm_slot *done[MAX_DEPTH];
        struct slot_state st[MAX_DEPTH];
        memset(st, 0, sizeof(st));
        for (unsigned i = 0; i < l->depth; i++) {
                l->slots[i].user = &st[i];
                st[i].offset = (uint64_t)i * l->io_size % DATA_SIZE;
        }
        int64_t start = now_ns();
        int64_t counting = start + duration_ns / 10, end = counting + duration_ns;
        bool counting_started = false;
        for (unsigned i = 0; i < l->depth; i++) {
                lay_next(l, &l->slots[i]);
                st[i].t_start = start;
                int r = vmm_slot_add(l->v, &l->slots[i]);
                if (r < 0)
                        return fail(r, "slot add");
        }
        unsigned in_flight = l->depth;
        int r = vmm_queue_kick(l->v, l->queue);
        if (r < 0)
                return r;
        bool stopping = false;
        while (in_flight > 0) {
                int n = vmm_queue_reap(l->v, l->queue, done, MAX_DEPTH, -1);
                if (n < 0)
                        return fail(n, "waiting for replies");
                int64_t t = now_ns();
                if (!counting_started && t >= counting) {
                        counting_started = true;
                        l->ops = l->requests = 0;
                        l->nsamples = 0;
                        l->t_count = t;
                }
                if (t >= end)
                        stopping = true;
                for (int i = 0; i < n; i++) {
                        struct vmm_slot *s = done[i];
                        struct slot_state *ss = s->user;
                        in_flight--;
                        if (take_reply(l, s)) {
                                l->ops++;
                                if (l->samples && l->nsamples < MAX_SAMPLES)
                                        l->samples[l->nsamples++] = (uint32_t)(t - ss->t_start);
                                if (stopping)
                                        continue;
                                ss->t_start = t;
                        }
                        lay_next(l, s);
                        r = vmm_slot_add(l->v, s);
                        if (r < 0)
                                return fail(r, "slot add");
                        in_flight++;
                }
                r = vmm_queue_kick(l->v, l->queue);
                if (r < 0)
                        return r;
        }
        /* Ops finished while draining count too: the window ends with the drain. */
        l->t_done = now_ns();
        if (!counting_started)
                l->t_count = start;
        return l->error;
}

/* ---- one connection: slots per queue, a thread per queue ---- */

struct conn {
        struct vmm *v;
        unsigned nq;
        struct vmm_slot *slots[MAX_THREADS + 1];        /* per request queue: MAX_DEPTH small slots */
        struct vmm_slot *io_slots[MAX_THREADS + 1];     /* per request queue: MAX_DEPTH, 1 MiB each */
        struct fuse_init_out init;
        long rss_after_init;            /* the daemon's VmRSS right after INIT (KiB) */
        uint64_t data_node, data_fh;
        bool data_open;
};

static void conn_free(struct conn *c)
{
        if (c->v && c->data_open)
                (void)vmm_release(c->v, c->data_node, c->data_fh);
        vmm_free(c->v);
        c->v = NULL;
}

static int conn_open(struct conn *c, unsigned nq)
{
        struct vmm_config cfg = {
                .request_queues = nq,
                /* Enough for MAX_DEPTH 1 MiB slots per queue and one 4 MiB
                 * request of 1024 page descriptors (the Windows row). */
                .mem_size = (size_t)(256 + 48 * nq) << 21,
                .timeout_ms = 20000,
        };
        memset(c, 0, sizeof(*c));
        c->nq = nq;
        int r = vmm_connect(opt.socket, &cfg, &c->v);
        if (r < 0)
                return fail(r, opt.socket);
        if (opt.uid)
                vmm_set_creds(c->v, opt.uid, opt.gid, 0);
        r = vmm_init(c->v, &c->init);
        if (r < 0)
                return fail(r, "FUSE INIT");
        c->rss_after_init = daemon_rss_kib();
        for (unsigned q = 1; q <= nq; q++) {
                struct vmm_slot_config small = { .in_cap = 512, .out_cap = 4096 };
                struct vmm_slot_config io = { .in_cap = sizeof(struct fuse_write_in) + (1u << 20),
                                              .out_cap = 1u << 20,
                                              .page_at = sizeof(struct fuse_write_in) };
                r = vmm_slots_new(c->v, q, MAX_DEPTH, &small, &c->slots[q]);
                if (r >= 0)
                        r = vmm_slots_new(c->v, q, MAX_DEPTH, &io, &c->io_slots[q]);
                if (r < 0)
                        return fail(r, "allocating request slots");
                for (unsigned i = 0; i < MAX_DEPTH; i++)
                        memset(c->io_slots[q][i].args, 'y', c->io_slots[q][i].in_cap);
                struct vmm_queue_mode mode = { .honour_suppression = true };
                vmm_queue_set_mode(c->v, q, &mode);
        }
        struct fuse_entry_out e;
        r = vmm_lookup(c->v, VMM_ROOT, DATA_FILE, &e);
        if (r < 0)
                return fail(r, "LOOKUP " DATA_FILE);
        c->data_node = e.nodeid;
        r = vmm_open(c->v, c->data_node, O_RDWR, &c->data_fh);
        if (r < 0)
                return fail(r, "OPEN " DATA_FILE);
        c->data_open = true;
        return 0;
}

static void set_mode(struct conn *c, bool honour, bool spin)
{
        struct vmm_queue_mode mode = { .honour_suppression = honour, .spin = spin };
        for (unsigned q = 1; q <= c->nq; q++)
                vmm_queue_set_mode(c->v, q, &mode);
}

struct measure {
        uint64_t ops, requests;
        double seconds;
        double cpu_ns;                  /* daemon CPU over the run; < 0 unknown */
        struct vmm_queue_counters counters;
        uint32_t *samples;
        size_t nsamples;
};

static void *loop_thread(void *arg)
{
        struct loop *l = arg;
        l->error = loop_run(l, (int64_t)opt.duration_ms * 1000000);
        return NULL;
}

/* Runs workload w with `depth` outstanding on each of threads queues at once. */
static int measure(struct conn *c, enum workload w, unsigned depth, size_t io_size, unsigned threads,
                   bool latency, struct measure *ret)
{
        struct loop loops[MAX_THREADS];
        pthread_t tid[MAX_THREADS];
        struct vmm_queue_counters before[MAX_THREADS + 1];
        memset(ret, 0, sizeof(*ret));
        if (threads > c->nq || depth > MAX_DEPTH)
                return -EINVAL;
        for (unsigned t = 0; t < threads; t++) {
                unsigned q = t + 1;
                bool io = w == W_READ || w == W_WRITE;
                loops[t] = (struct loop){
                        .v = c->v, .queue = q, .slots = io ? c->io_slots[q] : c->slots[q],
                        .depth = depth, .w = w, .io_size = io_size, .data_node = c->data_node,
                        .data_fh = c->data_fh, .lookup_parent = VMM_ROOT, .thread = t,
                };
                if (latency && t == 0) {
                        loops[t].samples = malloc(MAX_SAMPLES * sizeof(uint32_t));
                        if (!loops[t].samples)
                                return -ENOMEM;
                }
                vmm_queue_counters(c->v, q, &before[q]);
        }
        int64_t cpu0 = daemon_cpu_ns();
        int64_t t0 = now_ns();
        int r = 0;
        if (threads == 1) {
                loop_thread(&loops[0]);
        } else {
                for (unsigned t = 0; t < threads; t++)
                        if (pthread_create(&tid[t], NULL, loop_thread, &loops[t]) != 0)
                                return fail(-EAGAIN, "pthread_create");
                for (unsigned t = 0; t < threads; t++)
                        pthread_join(tid[t], NULL);
        }
        int64_t t1 = now_ns();
        int64_t cpu1 = daemon_cpu_ns();
        /* The loops count from the end of their warm-up to the end of the
         * drain; the daemon's CPU is scaled to that share of the run. */
        double window = 0;
        for (unsigned t = 0; t < threads; t++)
                window += (double)(loops[t].t_done - loops[t].t_count) / threads;
        ret->seconds = window / 1e9;
        ret->cpu_ns = cpu0 >= 0 && cpu1 >= 0 && t1 > t0 ? (double)(cpu1 - cpu0) * window / (double)(t1 - t0) : -1;
        for (unsigned t = 0; t < threads; t++) {
                struct vmm_queue_counters after;
                vmm_queue_counters(c->v, t + 1, &after);
                ret->ops += loops[t].ops;
                ret->requests += loops[t].requests;
                ret->counters.kicks += after.kicks - before[t + 1].kicks;
                ret->counters.kicks_avoided += after.kicks_avoided - before[t + 1].kicks_avoided;
                ret->counters.calls += after.calls - before[t + 1].calls;
                ret->counters.completions += after.completions - before[t + 1].completions;
                if (loops[t].error < 0 && r == 0)
                        r = loops[t].error;
        }
        ret->samples = loops[0].samples;
        ret->nsamples = loops[0].nsamples;
        return r;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static double percentile_us(uint32_t *s, size_t n, double p)
{
        if (n == 0)
                return NAN;
        qsort(s, n, sizeof(*s), cmp_u32);
        size_t i = (size_t)(p * (double)(n - 1) + 0.5);
        return s[i] / 1000.0;
}

static void emit_cpu(const char *row, const struct measure *m)
{
        if (m->cpu_ns >= 0 && m->requests > 0)
                emit("cpu", row, "µs/req", "lo", m->cpu_ns / 1000.0 / (double)m->requests);
}

/* ---- row groups on a daemon ---- */

static int rows_latency(struct conn *c, const char *group, const char *suffix, bool counters)
{
        struct measure m;
        char row[96];
        int r = measure(c, W_GETATTR, 1, 0, 1, true, &m);
        if (r < 0)
                return r;
        snprintf(row, sizeof(row), "getattr p50%s", suffix);
        emit(group, row, "µs", "lo", percentile_us(m.samples, m.nsamples, 0.50));
        snprintf(row, sizeof(row), "getattr p99%s", suffix);
        emit(group, row, "µs", "lo", percentile_us(m.samples, m.nsamples, 0.99));
        free(m.samples);
        snprintf(row, sizeof(row), "getattr qd1%s", suffix);
        emit_cpu(row, &m);
        /* The counters cover the whole run (warm-up too): per completion. */
        double done = (double)m.counters.completions;
        if (counters && done > 0) {
                snprintf(row, sizeof(row), "kicks/req%s", suffix);
                emit(group, row, "", "lo", (double)m.counters.kicks / done);
                snprintf(row, sizeof(row), "kicks avoided/req%s", suffix);
                emit(group, row, "", "hi", (double)m.counters.kicks_avoided / done);
                snprintf(row, sizeof(row), "call wake-ups/req%s", suffix);
                emit(group, row, "", "lo", (double)m.counters.calls / done);
        }
        return 0;
}

/* The op API of the tests (vmm_op_submit/vmm_op_wait: allocation, copies and
 * a kick per request): how a frontend built on it, like the reference
 * figures, sees the same daemon. */
static int row_op_api(struct conn *c, unsigned depth)
{
        struct vmm_op ops[MAX_DEPTH];
        struct fuse_getattr_in in = { 0 };
        struct fuse_attr_out attr[MAX_DEPTH];
        uint64_t n = 0;
        int64_t t0 = now_ns(), end = t0 + (int64_t)opt.duration_ms * 1000000;
        while (now_ns() < end) {
                for (unsigned i = 0; i < depth; i++) {
                        ops[i] = (struct vmm_op){ .opcode = FUSE_GETATTR, .nodeid = VMM_ROOT,
                                                  .arg = { { &in, sizeof(in) } }, .arg_cnt = 1,
                                                  .out = &attr[i], .out_size = sizeof(attr[i]) };
                        int r = vmm_op_submit(c->v, &ops[i]);
                        if (r < 0)
                                return fail(r, "vmm_op_submit");
                }
                for (unsigned i = 0; i < depth; i++) {
                        int r = vmm_op_wait(c->v, &ops[i], -1);
                        if (r < 0)
                                return fail(r, "vmm_op_wait");
                }
                n += depth;
        }
        char row[64];
        snprintf(row, sizeof(row), "getattr qd%u, op API (submit %u, wait %u)", depth, depth, depth);
        emit("ops", row, "ops/s", "hi", (double)n / ((double)(now_ns() - t0) / 1e9));
        return 0;
}

static int rows_ops(struct conn *c)
{
        static const unsigned depths[] = { 1, 4, 16 };
        char row[64];
        struct measure m;
        for (unsigned i = 0; i < 3; i++) {
                int r = measure(c, W_GETATTR, depths[i], 0, 1, false, &m);
                if (r < 0)
                        return r;
                snprintf(row, sizeof(row), "getattr qd%u", depths[i]);
                emit("ops", row, "ops/s", "hi", (double)m.ops / m.seconds);
                emit_cpu(row, &m);
        }
        for (unsigned i = 0; i < 3; i++) {
                int r = measure(c, W_LOOKUP_GETATTR, depths[i], 0, 1, false, &m);
                if (r < 0)
                        return r;
                snprintf(row, sizeof(row), "lookup+getattr qd%u", depths[i]);
                emit("ops", row, "pairs/s", "hi", (double)m.ops / m.seconds);
        }
        int r = row_op_api(c, 1);
        if (r >= 0)
                r = row_op_api(c, 16);
        return r;
}

static int rows_io(struct conn *c)
{
        static const size_t sizes[] = { 4096, 128 << 10, 1 << 20 };
        static const char *names[] = { "4k", "128k", "1m" };
        char row[64];
        struct measure m;
        for (unsigned w = 0; w < 2; w++)
                for (unsigned i = 0; i < 3; i++) {
                        int r = measure(c, w ? W_WRITE : W_READ, 1, sizes[i], 1, false, &m);
                        if (r < 0)
                                return r;
                        snprintf(row, sizeof(row), "%s %s", w ? "write" : "read", names[i]);
                        emit("io", row, "MB/s", "hi", (double)m.ops * (double)sizes[i] / m.seconds / 1e6);
                        if (i == 2)
                                emit_cpu(row, &m);
                }
        return 0;
}

static int rows_create(struct conn *c)
{
        struct measure m;
        int r = measure(c, W_CREATE, 1, 0, 1, false, &m);
        if (r < 0)
                return r;
        emit("create", "create+release+unlink", "cycles/s", "hi", (double)m.ops / m.seconds);
        emit_cpu("create+release+unlink", &m);
        return 0;
}

/* Row 6: the same GETATTR at one outstanding in three frontend modes. */
static int rows_notify(struct conn *c)
{
        int r;
        set_mode(c, false, false);
        r = rows_latency(c, "notify", " (kick always, wait on call)", true);
        set_mode(c, true, false);
        if (r >= 0)
                r = rows_latency(c, "notify", " (honour suppr., wait on call)", true);
        set_mode(c, true, true);
        if (r >= 0)
                r = rows_latency(c, "notify", " (honour suppr., spin)", true);
        set_mode(c, true, false);
        return r;
}

/* One request on slot s, waited for: the Windows driver's only mode. */
static int run_one(struct conn *c, struct vmm_slot *s)
{
        struct vmm_slot *done;
        int r = vmm_slot_add(c->v, s);
        if (r >= 0)
                r = vmm_queue_kick(c->v, 1);
        if (r >= 0)
                r = vmm_queue_reap(c->v, 1, &done, 1, -1);
        if (r < 0)
                return r;
        return vmm_slot_result(s, NULL);
}

/* Row 7: a copy in virtio-win viofs's shape — CREATE, then per max_write
 * chunk a WRITE (payload in 4 KiB descriptors, all in one indirect table)
 * and a GETATTR, then FLUSH and RELEASE; one request at a time. */
static int row_win_copy(struct conn *c, struct vmm_slot *s, size_t chunk, const char *row)
{
        const struct vmm_layout lay = { .indirect = true, .chunk = PAGE };
        const char *name = "pb-copy";
        struct fuse_entry_out e;
        struct fuse_open_out o;
        int r;

        int64_t t0 = now_ns(), cpu0 = daemon_cpu_ns(), front_ns = 0, write_ns = 0, getattr_ns = 0;
        struct fuse_create_in ci = { .flags = O_WRONLY | O_CREAT | O_TRUNC, .mode = S_IFREG | 0644 };
        size_t seg[2] = { sizeof(ci), strlen(name) + 1 };
        memcpy(s->args, &ci, sizeof(ci));
        memcpy((char *)s->args + sizeof(ci), name, seg[1]);
        r = vmm_slot_prepare(c->v, s, FUSE_CREATE, VMM_ROOT, seg, 2, sizeof(e) + sizeof(o), &lay);
        if (r >= 0)
                r = run_one(c, s);
        if (r < 0)
                return fail(r, "CREATE pb-copy");
        memcpy(&e, s->out, sizeof(e));
        memcpy(&o, (char *)s->out + sizeof(e), sizeof(o));
        uint64_t requests = 1, writes = 0;
        for (uint64_t off = 0; off < opt.copy_bytes; off += chunk) {
                size_t len = opt.copy_bytes - off < chunk ? opt.copy_bytes - off : chunk;
                int64_t a = now_ns();
                /* The payload stays in the slot's pages: the guest's bounce copy is the guest's cost. */
                struct fuse_write_in *wi = s->args;
                *wi = (struct fuse_write_in){ .fh = o.fh, .offset = off, .size = (uint32_t)len };
                size_t wseg[2] = { sizeof(*wi), len };
                r = vmm_slot_prepare(c->v, s, FUSE_WRITE, e.nodeid, wseg, 2, sizeof(struct fuse_write_out), &lay);
                int64_t b = now_ns();
                if (r >= 0)
                        r = run_one(c, s);
                int64_t d = now_ns();
                if (r >= 0 && ((struct fuse_write_out *)s->out)->size != len)
                        r = -EIO;
                if (r < 0)
                        return fail(r, "WRITE pb-copy");
                struct fuse_getattr_in *gi = s->args;
                *gi = (struct fuse_getattr_in){ .getattr_flags = FUSE_GETATTR_FH, .fh = o.fh };
                size_t gseg = sizeof(*gi);
                r = vmm_slot_prepare(c->v, s, FUSE_GETATTR, e.nodeid, &gseg, 1, sizeof(struct fuse_attr_out), &lay);
                int64_t f = now_ns();
                if (r >= 0)
                        r = run_one(c, s);
                if (r < 0)
                        return fail(r, "GETATTR pb-copy");
                int64_t g = now_ns();
                front_ns += (b - a) + (f - d);
                write_ns += d - b;
                getattr_ns += g - f;
                requests += 2;
                writes++;
        }
        struct fuse_flush_in fi = { .fh = o.fh };
        size_t fseg = sizeof(fi);
        memcpy(s->args, &fi, sizeof(fi));
        r = vmm_slot_prepare(c->v, s, FUSE_FLUSH, e.nodeid, &fseg, 1, 0, &lay);
        if (r >= 0)
                r = run_one(c, s);
        struct fuse_release_in ri = { .fh = o.fh, .flags = O_WRONLY };
        size_t rseg = sizeof(ri);
        memcpy(s->args, &ri, sizeof(ri));
        if (r >= 0)
                r = vmm_slot_prepare(c->v, s, FUSE_RELEASE, e.nodeid, &rseg, 1, 0, &lay);
        if (r >= 0)
                r = run_one(c, s);
        if (r < 0)
                return fail(r, "FLUSH/RELEASE pb-copy");
        requests += 2;
        int64_t t1 = now_ns(), cpu1 = daemon_cpu_ns();
        double secs = (double)(t1 - t0) / 1e9;
        char name_row[96];
        emit("win", row, "GB/s", "hi", (double)opt.copy_bytes / secs / 1e9);
        snprintf(name_row, sizeof(name_row), "%s: WRITE round trip", row);
        emit("win", name_row, "µs", "lo", (double)write_ns / 1000.0 / (double)writes);
        snprintf(name_row, sizeof(name_row), "%s: GETATTR round trip", row);
        emit("win", name_row, "µs", "lo", (double)getattr_ns / 1000.0 / (double)writes);
        snprintf(name_row, sizeof(name_row), "%s: frontend share", row);
        emit("win", name_row, "%", "lo", 100.0 * (double)front_ns / (double)(t1 - t0));
        if (cpu0 >= 0 && cpu1 >= 0) {
                snprintf(name_row, sizeof(name_row), "%s: daemon CPU / wall", row);
                emit("win", name_row, "%", "lo", 100.0 * (double)(cpu1 - cpu0) / (double)(t1 - t0));
                snprintf(name_row, sizeof(name_row), "%s", row);
                emit("cpu", name_row, "µs/req", "lo", (double)(cpu1 - cpu0) / 1000.0 / (double)requests);
        }
        (void)vmm_unlink(c->v, VMM_ROOT, name);
        return 0;
}

static int rows_win(struct conn *c)
{
        /* Linux caps a request at max_pages; viofs at 1024 descriptors,
         * four of which carry the headers. */
        size_t max = c->init.max_write;
        if ((vmm_init_flags(c->v) & FUSE_MAX_PAGES) && c->init.max_pages &&
            (size_t)c->init.max_pages * PAGE < max)
                max = (size_t)c->init.max_pages * PAGE;
        if (max > (size_t)(WIN_MAX_DESC - 4) * PAGE)
                max = (size_t)(WIN_MAX_DESC - 4) * PAGE;
        max &= ~(size_t)(PAGE - 1);
        emit("win", "max_write offered (INIT)", "KiB", "hi", c->init.max_write / 1024.0);
        emit("win", "max_pages offered (INIT)", "pages", "hi", c->init.max_pages);
        struct vmm_slot *s;
        struct vmm_slot_config cfg = { .in_cap = sizeof(struct fuse_write_in) + max, .out_cap = 4096,
                                       .page_at = sizeof(struct fuse_write_in), .max_desc = WIN_MAX_DESC };
        int r = vmm_slots_new(c->v, 1, 1, &cfg, &s);
        if (r < 0)
                return fail(r, "allocating the copy's slot");
        memset(s->args, 'w', cfg.in_cap);
        r = row_win_copy(c, s, max < (1u << 20) ? max : 1u << 20, "copy, 1 MiB writes");
        if (r >= 0)
                r = row_win_copy(c, s, max, "copy, largest max_write");
        if (r >= 0)
                emit("win", "largest max_write used", "KiB", "hi", max / 1024.0);
        return r;
}

/* Row 8: RSS idle after INIT and after 10,000 LOOKUPs; then OPEN without
 * RELEASE until the daemon says no. */
static int rows_mem(struct conn *c)
{
        long idle = c->rss_after_init;
        struct fuse_entry_out dir, e;
        int r = vmm_lookup(c->v, VMM_ROOT, MANY_DIR, &dir);
        if (r < 0)
                return fail(r, "LOOKUP " MANY_DIR);
        for (unsigned i = 0; i < MANY_FILES; i++) {
                char name[32];
                snprintf(name, sizeof(name), "f%05u", i);
                r = vmm_lookup(c->v, dir.nodeid, name, &e);
                if (r < 0)
                        return fail(r, "LOOKUP of the many files");
        }
        long after = daemon_rss_kib();
        if (idle > 0 && after > 0) {
                emit("mem", "RSS idle after INIT", "KiB", "lo", (double)idle);
                emit("mem", "RSS delta after 10,000 LOOKUPs", "KiB", "lo", (double)(after - idle));
        }
        int n = 0, err = 0;
        int64_t deadline = now_ns() + 30 * 1000000000ll;
        while (n < opt.max_opens && now_ns() < deadline) {
                uint64_t fh;
                r = vmm_open(c->v, c->data_node, O_RDONLY, &fh);
                if (r != 0) {
                        err = r;
                        break;
                }
                n++;
        }
        bool alive = opt.pid <= 0 || kill(opt.pid, 0) == 0;
        int after_r = err > -4096 && err < 0 && alive ? vmm_getattr(c->v, VMM_ROOT, NULL) : -ECONNRESET;
        const char *en = err ? strerrorname_np(-err) : NULL;
        if (err == 0)
                emit_text("mem", "OPEN without RELEASE", "no error in %d opens; GETATTR then: %s", n,
                          after_r == 0 ? "ok" : strerror(-after_r));
        else
                emit_text("mem", "OPEN without RELEASE", "%s after %d opens; daemon %s, GETATTR then: %s",
                          en ? en : "?", n, alive ? "alive" : "GONE",
                          after_r == 0 ? "ok" : strerror(-after_r));
        return 0;
}

/* Row 5: GETATTR at 16 outstanding and READ 128 KiB per queue, one thread each. */
static int rows_mq(void)
{
        double base_getattr = 0, base_read = 0;
        for (unsigned i = 0; i < opt.nqueues; i++) {
                unsigned nq = opt.queues[i];
                struct conn c;
                struct measure m;
                char row[64];
                int r = conn_open(&c, nq);
                if (r < 0) {
                        conn_free(&c);
                        if (r == -ENOTSUP) {
                                fprintf(stderr, "proto-bench: %s: no %u request queues, skipped\n", opt.label, nq);
                                continue;
                        }
                        return r;
                }
                r = measure(&c, W_GETATTR, 16, 0, nq, false, &m);
                if (r < 0) {
                        conn_free(&c);
                        return r;
                }
                double g = (double)m.ops / m.seconds;
                snprintf(row, sizeof(row), "getattr qd16 per queue, %u queue%s", nq, nq > 1 ? "s" : "");
                emit("mq", row, "ops/s", "hi", g);
                emit_cpu(row, &m);
                r = measure(&c, W_READ, 1, 128 << 10, nq, false, &m);
                conn_free(&c);
                if (r < 0)
                        return r;
                double rd = (double)m.ops * (128 << 10) / m.seconds / 1e6;
                snprintf(row, sizeof(row), "read 128k qd1 per queue, %u queue%s", nq, nq > 1 ? "s" : "");
                emit("mq", row, "MB/s", "hi", rd);
                if (nq == 1) {
                        base_getattr = g;
                        base_read = rd;
                } else if (base_getattr > 0) {
                        snprintf(row, sizeof(row), "getattr: %u queues / 1", nq);
                        emit("mq", row, "x", "hi", g / base_getattr);
                        snprintf(row, sizeof(row), "read 128k: %u queues / 1", nq);
                        emit("mq", row, "x", "hi", rd / base_read);
                }
        }
        return 0;
}

static int run_daemon(void)
{
        int r = 0;
        bool main_rows = row_wanted("lat") || row_wanted("ops") || row_wanted("io") ||
                         row_wanted("create") || row_wanted("notify") || row_wanted("win") ||
                         row_wanted("mem");
        if (main_rows) {
                struct conn c;
                r = conn_open(&c, 1);
                /* mem first: "idle" means right after INIT */
                if (r >= 0 && row_wanted("mem"))
                        r = rows_mem(&c);
                if (r >= 0 && row_wanted("lat"))
                        r = rows_latency(&c, "lat", "", false);
                if (r >= 0 && row_wanted("ops"))
                        r = rows_ops(&c);
                if (r >= 0 && row_wanted("io"))
                        r = rows_io(&c);
                if (r >= 0 && row_wanted("create"))
                        r = rows_create(&c);
                if (r >= 0 && row_wanted("notify"))
                        r = rows_notify(&c);
                if (r >= 0 && row_wanted("win"))
                        r = rows_win(&c);
                conn_free(&c);
        }
        if (r >= 0 && row_wanted("mq"))
                r = rows_mq();
        return r;
}

/* ---- the physical limit: the same work as bare syscalls, in this process ---- */

struct bare_thread {
        int dirfd, datafd;
        unsigned kind;                  /* 0 fstat, 1 pread 128k */
        uint64_t ops;
        int64_t end;
        void *buf;
};

static void *bare_loop(void *arg)
{
        struct bare_thread *b = arg;
        struct stat st;
        uint64_t off = 0;
        while (now_ns() < b->end)
                for (unsigned i = 0; i < 64; i++, b->ops++) {
                        if (b->kind == 0) {
                                (void)fstat(b->dirfd, &st);
                        } else {
                                (void)!pread(b->datafd, b->buf, 128 << 10, (off_t)off);
                                off = (off + (128 << 10)) % DATA_SIZE;
                        }
                }
        return NULL;
}

static int run_bare(void)
{
        int dirfd = open(opt.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", opt.dir, DATA_FILE);
        int datafd = open(path, O_RDWR | O_CLOEXEC);
        if (dirfd < 0 || datafd < 0)
                return fail(-errno, opt.dir);
        int64_t dur = (int64_t)opt.duration_ms * 1000000;
        struct stat st;
        void *buf = aligned_alloc(PAGE, 4u << 20);
        if (!buf)
                return -ENOMEM;
        memset(buf, 'b', 4u << 20);

        if (row_wanted("lat")) {
                uint32_t *s = malloc(MAX_SAMPLES * sizeof(uint32_t));
                size_t n = 0;
                if (!s)
                        return -ENOMEM;
                int64_t end = now_ns() + dur;
                for (int64_t t = now_ns(); t < end && n < MAX_SAMPLES;) {
                        (void)fstat(dirfd, &st);
                        int64_t u = now_ns();
                        s[n++] = (uint32_t)(u - t);
                        t = u;
                }
                emit("lat", "getattr p50", "µs", "lo", percentile_us(s, n, 0.5));
                emit("lat", "getattr p99", "µs", "lo", percentile_us(s, n, 0.99));
                free(s);
        }
        if (row_wanted("ops")) {
                /* A syscall is synchronous: every depth is one thread back to back. */
                static const unsigned depths[] = { 1, 4, 16 };
                char row[64];
                for (unsigned i = 0; i < 3; i++) {
                        struct bare_thread b = { .dirfd = dirfd, .end = now_ns() + dur / 3 };
                        int64_t t0 = now_ns();
                        bare_loop(&b);
                        snprintf(row, sizeof(row), "getattr qd%u", depths[i]);
                        emit("ops", row, "ops/s", "hi", (double)b.ops / ((double)(now_ns() - t0) / 1e9));
                }
                for (unsigned i = 0; i < 3; i++) {
                        uint64_t ops = 0;
                        int fd = openat(dirfd, LOOKUP_FILE, O_PATH | O_CLOEXEC);
                        int64_t t0 = now_ns(), end = t0 + dur / 3;
                        while (now_ns() < end)
                                for (unsigned k = 0; k < 64; k++, ops++) {
                                        (void)fstatat(dirfd, LOOKUP_FILE, &st, AT_SYMLINK_NOFOLLOW);
                                        (void)fstat(fd, &st);
                                }
                        close(fd);
                        snprintf(row, sizeof(row), "lookup+getattr qd%u", depths[i]);
                        emit("ops", row, "pairs/s", "hi", (double)ops / ((double)(now_ns() - t0) / 1e9));
                }
        }
        if (row_wanted("io")) {
                static const size_t sizes[] = { 4096, 128 << 10, 1 << 20 };
                static const char *names[] = { "4k", "128k", "1m" };
                char row[64];
                for (unsigned w = 0; w < 2; w++)
                        for (unsigned i = 0; i < 3; i++) {
                                uint64_t ops = 0, off = 0;
                                int64_t t0 = now_ns(), end = t0 + dur;
                                while (now_ns() < end) {
                                        ssize_t k = w ? pwrite(datafd, buf, sizes[i], (off_t)off)
                                                      : pread(datafd, buf, sizes[i], (off_t)off);
                                        if (k != (ssize_t)sizes[i])
                                                return fail(-EIO, "bare I/O");
                                        off = (off + sizes[i]) % DATA_SIZE;
                                        ops++;
                                }
                                snprintf(row, sizeof(row), "%s %s", w ? "write" : "read", names[i]);
                                emit("io", row, "MB/s", "hi",
                                     (double)ops * (double)sizes[i] / ((double)(now_ns() - t0) / 1e9) / 1e6);
                        }
        }
        if (row_wanted("create")) {
                uint64_t ops = 0;
                int64_t t0 = now_ns(), end = t0 + dur;
                while (now_ns() < end) {
                        int fd = openat(dirfd, "pb-bare", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                        if (fd < 0)
                                return fail(-errno, "bare create");
                        close(fd);
                        (void)unlinkat(dirfd, "pb-bare", 0);
                        ops++;
                }
                emit("create", "create+release+unlink", "cycles/s", "hi", (double)ops / ((double)(now_ns() - t0) / 1e9));
        }
        if (row_wanted("win")) {
                /* the copy's work: pwrite each chunk, fstat after it, close */
                for (unsigned v = 0; v < 2; v++) {
                        size_t chunk = v ? (size_t)(WIN_MAX_DESC - 4) * PAGE : 1u << 20;
                        int64_t t0 = now_ns();
                        int fd = openat(dirfd, "pb-copy", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                        if (fd < 0)
                                return fail(-errno, "bare copy");
                        for (uint64_t off = 0; off < opt.copy_bytes; off += chunk) {
                                size_t len = opt.copy_bytes - off < chunk ? opt.copy_bytes - off : chunk;
                                if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
                                        return fail(-EIO, "bare copy write");
                                (void)fstat(fd, &st);
                        }
                        close(fd);
                        double secs = (double)(now_ns() - t0) / 1e9;
                        (void)unlinkat(dirfd, "pb-copy", 0);
                        emit("win", v ? "copy, largest max_write" : "copy, 1 MiB writes", "GB/s", "hi",
                             (double)opt.copy_bytes / secs / 1e9);
                }
        }
        if (row_wanted("mq")) {
                char row[64];
                for (unsigned kind = 0; kind < 2; kind++)
                        for (unsigned i = 0; i < opt.nqueues; i++) {
                                unsigned n = opt.queues[i];
                                struct bare_thread b[MAX_THREADS];
                                pthread_t tid[MAX_THREADS];
                                int64_t t0 = now_ns();
                                for (unsigned t = 0; t < n; t++) {
                                        b[t] = (struct bare_thread){ .dirfd = dirfd, .datafd = datafd,
                                                                     .kind = kind, .end = t0 + dur,
                                                                     .buf = malloc(128 << 10) };
                                        if (!b[t].buf || pthread_create(&tid[t], NULL, bare_loop, &b[t]) != 0)
                                                return fail(-ENOMEM, "bare threads");
                                }
                                uint64_t ops = 0;
                                for (unsigned t = 0; t < n; t++) {
                                        pthread_join(tid[t], NULL);
                                        ops += b[t].ops;
                                        free(b[t].buf);
                                }
                                double secs = (double)(now_ns() - t0) / 1e9;
                                if (kind == 0) {
                                        snprintf(row, sizeof(row), "getattr qd16 per queue, %u queue%s", n, n > 1 ? "s" : "");
                                        emit("mq", row, "ops/s", "hi", (double)ops / secs);
                                } else {
                                        snprintf(row, sizeof(row), "read 128k qd1 per queue, %u queue%s", n, n > 1 ? "s" : "");
                                        emit("mq", row, "MB/s", "hi", (double)ops * (128 << 10) / secs / 1e6);
                                }
                        }
        }
        free(buf);
        close(datafd);
        close(dirfd);
        return 0;
}

/* ---- summary: medians, spreads, ratios ---- */

#define MAX_LABELS 8
#define MAX_ROWS   160
#define MAX_REPS   16

struct cell {
        double v[MAX_REPS];
        unsigned n;
        char text[160];
};

struct srow {
        char group[16], row[96], unit[16], better[4];
        struct cell cell[MAX_LABELS];
};

static char labels[MAX_LABELS][32];
static unsigned nlabels;
static struct srow srows[MAX_ROWS];
static unsigned nsrows;

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double cell_median(const struct cell *c)
{
        double v[MAX_REPS];
        if (c->n == 0)
                return NAN;
        memcpy(v, c->v, c->n * sizeof(double));
        qsort(v, c->n, sizeof(double), cmp_double);
        return c->n % 2 ? v[c->n / 2] : (v[c->n / 2 - 1] + v[c->n / 2]) / 2;
}

/* ± half the range, in % of the median */
static double cell_spread(const struct cell *c)
{
        double lo = INFINITY, hi = -INFINITY, m = cell_median(c);
        for (unsigned i = 0; i < c->n; i++) {
                lo = fmin(lo, c->v[i]);
                hi = fmax(hi, c->v[i]);
        }
        return c->n > 1 && m != 0 ? (hi - lo) / 2 / fabs(m) * 100 : 0;
}

static void fmt_value(char *buf, size_t size, double v)
{
        if (isnan(v))
                snprintf(buf, size, "–");
        else if (fabs(v) >= 100000)
                snprintf(buf, size, "%.0fk", v / 1000);
        else if (fabs(v) >= 10000)
                snprintf(buf, size, "%.1fk", v / 1000);
        else if (fabs(v) >= 100)
                snprintf(buf, size, "%.0f", v);
        else
                snprintf(buf, size, "%.3g", v);
}

static int label_index(const char *l)
{
        for (unsigned i = 0; i < nlabels; i++)
                if (strcmp(labels[i], l) == 0)
                        return (int)i;
        if (nlabels == MAX_LABELS)
                return -1;
        snprintf(labels[nlabels], sizeof(labels[0]), "%s", l);
        return (int)nlabels++;
}

static struct srow *row_get(const char *group, const char *row, const char *unit, const char *better)
{
        for (unsigned i = 0; i < nsrows; i++)
                if (strcmp(srows[i].group, group) == 0 && strcmp(srows[i].row, row) == 0)
                        return &srows[i];
        if (nsrows == MAX_ROWS)
                return NULL;
        struct srow *r = &srows[nsrows++];
        snprintf(r->group, sizeof(r->group), "%s", group);
        snprintf(r->row, sizeof(r->row), "%s", row);
        snprintf(r->unit, sizeof(r->unit), "%s", unit);
        snprintf(r->better, sizeof(r->better), "%s", better);
        return r;
}

static const char *group_title(const char *g)
{
        static const struct { const char *g, *t; } titles[] = {
                { "lat", "GETATTR of the root, one request outstanding" },
                { "ops", "Requests per second at 1, 4, 16 outstanding (one queue)" },
                { "io", "READ / WRITE of one page-cache-hot file, one outstanding" },
                { "create", "CREATE + RELEASE + UNLINK, one outstanding" },
                { "notify", "Notification suppression: GETATTR at one outstanding by frontend mode" },
                { "win", "Windows-shaped copy (virtio-win viofs: one request at a time, 4 KiB descriptors in one indirect table, GETATTR after each WRITE)" },
                { "mq", "Request queues, one frontend thread each (daemons that offer them)" },
                { "cpu", "Daemon CPU per request (utime+stime of the process / requests)" },
                { "mem", "Memory and descriptors" },
                { "targets", "The issue's targets, from the medians above" },
        };
        for (size_t i = 0; i < sizeof(titles) / sizeof(titles[0]); i++)
                if (strcmp(titles[i].g, g) == 0)
                        return titles[i].t;
        return g;
}

static void json_str(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        fprintf(f, "\\%c", *s);
                else if ((unsigned char)*s < 0x20)
                        fprintf(f, "\\u%04x", *s);
                else
                        fputc(*s, f);
        }
        fputc('"', f);
}

static double median_of(const char *group, const char *row, const char *label)
{
        int li = -1;
        for (unsigned i = 0; i < nlabels; i++)
                if (strcmp(labels[i], label) == 0)
                        li = (int)i;
        for (unsigned i = 0; i < nsrows && li >= 0; i++)
                if (strcmp(srows[i].group, group) == 0 && strcmp(srows[i].row, row) == 0)
                        return cell_median(&srows[i].cell[li]);
        return NAN;
}

static void derived(const char *row, const char *better, unsigned label, double value)
{
        struct srow *r;
        if (isnan(value) || isinf(value) || !(r = row_get("targets", row, "x", better)))
                return;
        r->cell[label].v[0] = value;
        r->cell[label].n = 1;
}

/* The targets, from the medians: each daemon against the bare
 * syscalls, and sluice-fs's polling against --poll-us=0 and Rust virtiofsd. */
static void add_targets(void)
{
        double fstat_us = 1e6 / median_of("ops", "getattr qd1", "bare");
        double pread = median_of("io", "read 1m", "bare"), pwrite = median_of("io", "write 1m", "bare");
        unsigned n = nlabels;
        for (unsigned l = 0; l < n; l++) {
                const char *d = labels[l];
                if (strcmp(d, "bare") == 0)
                        continue;
                derived("GETATTR qd16: wall time per request / bare fstat (≤ 3)", "lo", l,
                        1e6 / median_of("ops", "getattr qd16", d) / fstat_us);
                derived("GETATTR qd16: daemon CPU per request / bare fstat", "lo", l,
                        median_of("cpu", "getattr qd16", d) / fstat_us);
                derived("READ 1 MiB / bare pread (≥ 0.7)", "hi", l, median_of("io", "read 1m", d) / pread);
                derived("WRITE 1 MiB / bare pwrite (≥ 0.7)", "hi", l, median_of("io", "write 1m", d) / pwrite);
        }
        int p = label_index(opt.primary);
        if (p < 0)
                return;
        double p50 = median_of("lat", "getattr p50", opt.primary);
        derived("GETATTR p50 qd1: sluice / sluice-poll0 (≤ 0.6)", "lo", (unsigned)p,
                p50 / median_of("lat", "getattr p50", "sluice-poll0"));
        derived("GETATTR p50 qd1: sluice / virtiofsd (≤ 0.8)", "lo", (unsigned)p,
                p50 / median_of("lat", "getattr p50", "virtiofsd"));
        derived("GETATTR qd16 ops/s: sluice / virtiofsd (≥ 2.5)", "hi", (unsigned)p,
                median_of("ops", "getattr qd16", opt.primary) / median_of("ops", "getattr qd16", "virtiofsd"));
        derived("GETATTR qd16 ops/s: sluice / legacy (≥ 2)", "hi", (unsigned)p,
                median_of("ops", "getattr qd16", opt.primary) / median_of("ops", "getattr qd16", "legacy"));
        derived("copy 1 MiB: sluice / fastest peer (≥ 1)", "hi", (unsigned)p,
                median_of("win", "copy, 1 MiB writes", opt.primary) /
                        fmax(fmax(median_of("win", "copy, 1 MiB writes", "virtiofsd"),
                                  median_of("win", "copy, 1 MiB writes", "legacy")),
                             median_of("win", "copy, 1 MiB writes", "sluice-poll0")));
}

static int summarize(const char *dir)
{
        char path[4096], line[1024];
        snprintf(path, sizeof(path), "%s/raw.tsv", dir);
        FILE *in = fopen(path, "re");
        if (!in)
                return fail(-errno, path);
        while (fgets(line, sizeof(line), in)) {
                char *f[7], *save = NULL;
                unsigned n = 0;
                line[strcspn(line, "\n")] = '\0';
                if (line[0] == '#' || line[0] == '\0')
                        continue;
                for (char *p = strtok_r(line, "\t", &save); p && n < 7; p = strtok_r(NULL, "\t", &save))
                        f[n++] = p;
                if (n != 7)
                        continue;
                int li = label_index(f[1]);
                struct srow *r = row_get(f[2], f[3], f[4], f[5]);
                if (li < 0 || !r)
                        continue;
                struct cell *c = &r->cell[li];
                if (strcmp(f[4], "text") == 0) {
                        if (!c->text[0])
                                snprintf(c->text, sizeof(c->text), "%s", f[6]);
                        else if (!strstr(c->text, f[6]) && strlen(c->text) + strlen(f[6]) + 4 < sizeof(c->text))
                                strcat(strcat(c->text, " / "), f[6]);
                } else if (c->n < MAX_REPS) {
                        c->v[c->n++] = strtod(f[6], NULL);
                }
        }
        fclose(in);
        add_targets();
        int primary = -1;
        for (unsigned i = 0; i < nlabels; i++)
                if (strcmp(labels[i], opt.primary) == 0)
                        primary = (int)i;

        snprintf(path, sizeof(path), "%s/results.md", dir);
        FILE *md = fopen(path, "we");
        snprintf(path, sizeof(path), "%s/results.json", dir);
        FILE *js = fopen(path, "we");
        if (!md || !js)
                return fail(-errno, path);
        snprintf(path, sizeof(path), "%s/meta.txt", dir);
        FILE *meta = fopen(path, "re");
        fprintf(md, "## Protocol benchmark (bench/proto-run.sh)\n\n");
        fprintf(js, "{\n  \"meta\": [");
        if (meta) {
                bool first = true;
                while (fgets(line, sizeof(line), meta)) {
                        line[strcspn(line, "\n")] = '\0';
                        fprintf(md, "%s  \n", line);
                        fprintf(js, "%s\n    ", first ? "" : ",");
                        json_str(js, line);
                        first = false;
                }
                fclose(meta);
        }
        fprintf(md, "\nMedians ± half the range (%% of the median); ratio = %s / peer, > 1 = %s better.\n",
                opt.primary, opt.primary);
        fprintf(js, "],\n  \"primary\": ");
        json_str(js, opt.primary);
        fprintf(js, ",\n  \"rows\": [");
        /* rows grouped, groups and rows in the order they first came */
        static struct srow sorted[MAX_ROWS];
        unsigned ns = 0;
        for (unsigned i = 0; i < nsrows; i++) {
                bool seen = false;
                for (unsigned k = 0; k < i; k++)
                        seen = seen || strcmp(srows[k].group, srows[i].group) == 0;
                if (seen)
                        continue;
                for (unsigned k = i; k < nsrows; k++)
                        if (strcmp(srows[k].group, srows[i].group) == 0)
                                sorted[ns++] = srows[k];
        }
        memcpy(srows, sorted, ns * sizeof(*srows));
        const char *group = "";
        for (unsigned i = 0; i < nsrows; i++) {
                struct srow *r = &srows[i];
                bool text = strcmp(r->unit, "text") == 0;
                if (strcmp(group, r->group) != 0) {
                        group = r->group;
                        fprintf(md, "\n### %s\n\n| row | unit |", group_title(group));
                        for (unsigned l = 0; l < nlabels; l++)
                                fprintf(md, " %s |", labels[l]);
                        for (unsigned l = 0; l < nlabels; l++)
                                if ((int)l != primary && primary >= 0)
                                        fprintf(md, " %s/%s |", opt.primary, labels[l]);
                        fprintf(md, "\n|---|---|");
                        for (unsigned l = 0; l < nlabels; l++)
                                fprintf(md, "---|");
                        for (unsigned l = 0; l < nlabels; l++)
                                if ((int)l != primary && primary >= 0)
                                        fprintf(md, "---|");
                        fprintf(md, "\n");
                }
                fprintf(md, "| %s | %s |", r->row, text ? "" : r->unit);
                fprintf(js, "%s\n    {\"group\": ", i ? "," : "");
                json_str(js, r->group);
                fprintf(js, ", \"row\": ");
                json_str(js, r->row);
                fprintf(js, ", \"unit\": ");
                json_str(js, r->unit);
                fprintf(js, ", \"better\": ");
                json_str(js, r->better);
                fprintf(js, ", \"daemons\": {");
                for (unsigned l = 0; l < nlabels; l++) {
                        struct cell *c = &r->cell[l];
                        char v[32];
                        fprintf(js, "%s", l ? ", " : "");
                        json_str(js, labels[l]);
                        if (text) {
                                fprintf(md, " %s |", c->text[0] ? c->text : "–");
                                fprintf(js, ": {\"text\": ");
                                json_str(js, c->text);
                                fprintf(js, "}");
                                continue;
                        }
                        double m = cell_median(c);
                        fmt_value(v, sizeof(v), m);
                        if (c->n > 1)
                                fprintf(md, " %s ±%.0f%% |", v, cell_spread(c));
                        else
                                fprintf(md, " %s |", v);
                        fprintf(js, ": {\"values\": [");
                        for (unsigned k = 0; k < c->n; k++)
                                fprintf(js, "%s%.6g", k ? ", " : "", c->v[k]);
                        if (c->n)
                                fprintf(js, "], \"median\": %.6g, \"spread_pct\": %.3g}", m, cell_spread(c));
                        else
                                fprintf(js, "]}");
                }
                fprintf(js, "}, \"ratio\": {");
                bool first = true;
                for (unsigned l = 0; l < nlabels && primary >= 0; l++) {
                        if ((int)l == primary)
                                continue;
                        double a = cell_median(&r->cell[primary]), b = cell_median(&r->cell[l]);
                        double ratio = strcmp(r->better, "lo") == 0 ? b / a : a / b;
                        if (text || isnan(ratio) || isinf(ratio) || strcmp(r->unit, "x") == 0) {
                                fprintf(md, " |");
                                continue;
                        }
                        fprintf(md, " %.2f |", ratio);
                        fprintf(js, "%s", first ? "" : ", ");
                        json_str(js, labels[l]);
                        fprintf(js, ": %.4g", ratio);
                        first = false;
                }
                fprintf(js, "}}");
                fprintf(md, "\n");
        }
        fprintf(js, "\n  ]\n}\n");
        fclose(md);
        fclose(js);
        snprintf(path, sizeof(path), "%s/results.md", dir);
        in = fopen(path, "re");
        while (in && fgets(line, sizeof(line), in))
                fputs(line, stdout);
        if (in)
                fclose(in);
        return 0;
}

/* ---- command line ---- */

static int usage(void)
{
        fprintf(stderr,
                "usage: proto-bench --socket=PATH --dir=DIR [--label=NAME] [--pid=PID] [OPTION...]\n"
                "       proto-bench --bare --dir=DIR [OPTION...]\n"
                "       proto-bench --summarize=RESULTS_DIR [--primary=LABEL]\n"
                "  --rows=LIST        lat,ops,io,create,notify,win,mem,mq (default lat,ops,io,create,notify,win)\n"
                "  --queues=LIST      request queues for mq (default 1,2,4)\n"
                "  --duration-ms=N    per measurement (default 500)\n"
                "  --copy-mib=N       the Windows-shaped copy's size (default 2048)\n"
                "  --creds=UID:GID    the guest user in every request header (default the caller)\n"
                "  --max-opens=N      the open-file row gives up after N (default 50000)\n"
                "  --rep=N            repetition number written with each figure\n"
                "  --out=FILE         append figures (TSV) to FILE instead of stdout\n");
        return 2;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "socket", required_argument, NULL, 's' },
                { "dir", required_argument, NULL, 'd' },
                { "label", required_argument, NULL, 'l' },
                { "pid", required_argument, NULL, 'p' },
                { "rows", required_argument, NULL, 'r' },
                { "queues", required_argument, NULL, 'q' },
                { "duration-ms", required_argument, NULL, 't' },
                { "copy-mib", required_argument, NULL, 'c' },
                { "creds", required_argument, NULL, 'u' },
                { "max-opens", required_argument, NULL, 'm' },
                { "rep", required_argument, NULL, 'n' },
                { "out", required_argument, NULL, 'o' },
                { "bare", no_argument, NULL, 'b' },
                { "summarize", required_argument, NULL, 'S' },
                { "primary", required_argument, NULL, 'P' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) >= 0) {
                switch (c) {
                case 's': opt.socket = optarg; break;
                case 'd': opt.dir = optarg; break;
                case 'l': opt.label = optarg; break;
                case 'p': opt.pid = atoi(optarg); break;
                case 'r': opt.rows = optarg; break;
                case 'q': {
                        opt.nqueues = 0;
                        for (char *p = optarg; *p && opt.nqueues < 4;) {
                                unsigned n = (unsigned)strtoul(p, &p, 10);
                                if (n < 1 || n > MAX_THREADS)
                                        return usage();
                                opt.queues[opt.nqueues++] = n;
                                if (*p == ',')
                                        p++;
                                else if (*p)
                                        return usage();
                        }
                        break;
                }
                case 't': opt.duration_ms = atoi(optarg); break;
                case 'c': opt.copy_bytes = strtoull(optarg, NULL, 10) << 20; break;
                case 'u':
                        if (sscanf(optarg, "%u:%u", &opt.uid, &opt.gid) != 2)
                                return usage();
                        break;
                case 'm': opt.max_opens = atoi(optarg); break;
                case 'n': opt.rep = (unsigned)atoi(optarg); break;
                case 'o': opt.out = optarg; break;
                case 'b': opt.bare = true; opt.label = "bare"; break;
                case 'S': opt.summarize = optarg; break;
                case 'P': opt.primary = optarg; break;
                default: return usage();
                }
        }
        if (opt.summarize)
                return summarize(opt.summarize) < 0 ? 1 : 0;
        if (!opt.dir || (!opt.bare && !opt.socket) || opt.duration_ms < 10 || opt.copy_bytes == 0)
                return usage();
        out = stdout;
        if (opt.out) {
                out = fopen(opt.out, "ae");
                if (!out) {
                        (void)fail(-errno, opt.out);
                        return 1;
                }
        }
        int r = prepare_files();
        if (r >= 0)
                r = opt.bare ? run_bare() : run_daemon();
        if (out != stdout)
                fclose(out);
        return r < 0 ? 1 : 0;
}
