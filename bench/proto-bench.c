/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proto-bench — the protocol benchmark: FUSE requests straight into
 * vhost-user-fs backends from the test VMM (tests/frontend/vmm.h), no guest
 * kernel in the way, so what it measures is the daemon (and the host's
 * syscalls under it).  bench/proto-run.sh starts the daemons and runs it;
 * bench/README.md ("The protocol benchmark") says what each row means.
 *
 *   proto-bench --dir=DIR --daemon=LABEL=SOCKET[,PID]... [--bare] [OPTION...]
 *   proto-bench --summarize=RESULTS_DIR [--primary=LABEL]
 *
 * It holds a connection to every daemon at once and takes each figure from
 * each of them in turn (A B C, then the next figure; the order rotates per
 * repetition), so that a noisy second on a shared machine hits every daemon
 * alike instead of one.  Every figure is a line of TSV (rep, label, group,
 * row, unit, better, value) appended to --out; --summarize takes medians.
 *
 * The frontend drives each request queue from one thread with preallocated
 * request slots (vmm_slot_*): N requests outstanding are N slots, refilled as
 * their replies come back, one kick per batch — and no kick while the daemon
 * says it is polling (EVENT_IDX avail_event), unless a row says not to honour
 * that.  Replies are waited for on the call eventfd, or by spinning on
 * used->idx (the notify rows compare the ways). */
#include "proto-bench.h"
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DATA_FILE       PB_DATA_FILE
#define DATA_SIZE       PB_DATA_SIZE
#define LOOKUP_FILE     PB_LOOKUP_FILE
#define MANY_DIR        "pb-many"       /* the memory row's 10,000 files */
#define MANY_FILES      10000
#define MAX_DEPTH       16
#define MAX_THREADS     PB_MAX_THREADS
#define MAX_SAMPLES     PB_MAX_SAMPLES
#define WIN_MAX_DESC    PB_WIN_MAX_DESC
#define PAGE            PB_PAGE
#define MAX_TARGETS     8

static pid_t cur_pid;                   /* the daemon whose figures are being taken */

/* ---- the daemon from outside: CPU time and memory ---- */

/* The daemon and its descendants (the legacy virtiofsd serves from a child
 * it forks into its sandbox): up to max pids, the daemon first. */
static unsigned daemon_pids(pid_t *pids, unsigned max)
{
        unsigned n = 0;
        if (cur_pid <= 0 || max == 0)
                return 0;
        pids[n++] = cur_pid;
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

/* Memory of the daemon and its descendants, KiB (-1 without --pid): VmRSS,
 * and the daemon's own part of it, VmRSS - RssShmem = RssAnon + RssFile.
 * The difference is guest memory (the memfd the frontend shares) that the
 * daemon has touched: the VM's RAM, counted once in the VM, not a cost of
 * the daemon — and it grows with whatever buffers the frontend happens to
 * use, the same for every daemon. */
struct rss { long vm, own; };

static struct rss daemon_rss_kib(void)
{
        pid_t pids[16];
        unsigned n = daemon_pids(pids, 16);
        struct rss sum = { n ? 0 : -1, n ? 0 : -1 };
        for (unsigned i = 0; i < n; i++) {
                char path[64], line[256];
                long kib, vm = 0, shmem = 0;
                snprintf(path, sizeof(path), "/proc/%d/status", (int)pids[i]);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                while (fgets(line, sizeof(line), f)) {
                        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
                                vm = kib;
                        else if (sscanf(line, "RssShmem: %ld", &kib) == 1)
                                shmem = kib;
                }
                fclose(f);
                sum.vm += vm;
                sum.own += vm - shmem;
        }
        return sum;
}

/* ---- host files the rows work on (prepared as the caller, before connecting) ---- */

static int prepare_files(void)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", pb_opt.dir, DATA_FILE);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
                return pb_fail(-errno, path);
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size != DATA_SIZE) {
                static char buf[1 << 20];
                memset(buf, 'x', sizeof(buf));
                for (off_t off = 0; off < DATA_SIZE; off += (off_t)sizeof(buf))
                        if (pwrite(fd, buf, sizeof(buf), off) != (ssize_t)sizeof(buf)) {
                                close(fd);
                                return pb_fail(-EIO, "writing the data file");
                        }
        }
        (void)fchmod(fd, 0666);  /* the daemon may run as another user */
        close(fd);
        snprintf(path, sizeof(path), "%s/%s", pb_opt.dir, LOOKUP_FILE);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (fd >= 0)
                close(fd);
        if (!pb_row_wanted("mem"))
                return 0;
        snprintf(path, sizeof(path), "%s/%s", pb_opt.dir, MANY_DIR);
        if (mkdir(path, 0777) < 0 && errno != EEXIST)
                return pb_fail(-errno, path);
        (void)chmod(path, 0777);
        for (unsigned i = 0; i < MANY_FILES; i++) {
                snprintf(path, sizeof(path), "%s/%s/f%05u", pb_opt.dir, MANY_DIR, i);
                fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
                if (fd < 0)
                        return pb_fail(-errno, path);
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
        uint64_t forget[128];           /* W_CREATE: unlinked nodes the daemon may drop */
        unsigned nforget;
        int error;
};

/* What the guest's kernel does when an unlinked inode is evicted: FORGET on
 * the hiprio queue.  Without it a daemon keeps every unlinked file (its
 * O_PATH fd, and on tmpfs its data) until the connection ends.  Batched, as
 * the kernel's forgets are off the request path. */
static int forget_flush(struct vmm *v, const uint64_t *nodes, unsigned n)
{
        struct fuse_batch_forget_in in = { .count = n };
        struct fuse_forget_one one[128];
        if (n == 0)
                return 0;
        if (n > 128)
                return -E2BIG;
        for (unsigned i = 0; i < n; i++)
                one[i] = (struct fuse_forget_one){ .nodeid = nodes[i], .nlookup = 1 };
        struct vmm_op op = { .hiprio = true, .opcode = FUSE_BATCH_FORGET, .no_reply = true,
                             .arg_cnt = 2, .arg = { { &in, sizeof(in) }, { one, n * sizeof(one[0]) } } };
        return vmm_op_run(v, &op);
}

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
                l->forget[l->nforget++] = st->nodeid;
                if (l->nforget == sizeof(l->forget) / sizeof(l->forget[0])) {
                        int fr = forget_flush(l->v, l->forget, l->nforget);
                        if (fr < 0 && l->error == 0)
                                l->error = fr;
                        l->nforget = 0;
                }
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
        int64_t start = pb_now_ns();
        int64_t counting = start + duration_ns / 10, end = counting + duration_ns;
        bool counting_started = false;
        for (unsigned i = 0; i < l->depth; i++) {
                lay_next(l, &l->slots[i]);
                st[i].t_start = start;
                int r = vmm_slot_add(l->v, &l->slots[i]);
                if (r < 0)
                        return pb_fail(r, "slot add");
        }
        unsigned in_flight = l->depth;
        int r = vmm_queue_kick(l->v, l->queue);
        if (r < 0)
                return r;
        bool stopping = false;
        while (in_flight > 0) {
                int n = vmm_queue_reap(l->v, l->queue, done, MAX_DEPTH, -1);
                if (n < 0)
                        return pb_fail(n, "waiting for replies");
                int64_t t = pb_now_ns();
                if (!counting_started && t >= counting) {
                        counting_started = true;
                        l->ops = l->requests = 0;
                        l->nsamples = 0;
                        l->t_count = t;
                }
                /* A figure of a handful of ops is one stall, not a median:
                 * run on (up to ten times as long) until there are a few. */
                if (t >= end && (l->ops >= 32 || t >= end + 9 * duration_ns))
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
                                return pb_fail(r, "slot add");
                        in_flight++;
                }
                r = vmm_queue_kick(l->v, l->queue);
                if (r < 0)
                        return r;
        }
        /* Ops finished while draining count too: the window ends with the drain. */
        l->t_done = pb_now_ns();
        r = forget_flush(l->v, l->forget, l->nforget);
        l->nforget = 0;
        if (r < 0 && l->error == 0)
                l->error = r;
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
        struct rss rss_after_init;      /* the daemon's memory right after INIT (KiB) */
        unsigned request_queues;        /* what the backend offers */
        struct vmm_slot *win_slot;      /* the copy's: 1024 descriptors, allocated at its first row */
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

static int conn_open(struct conn *c, const char *socket, unsigned nq)
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
        int r = vmm_connect(socket, &cfg, &c->v);
        if (r < 0)
                return pb_fail(r, socket);
        if (pb_opt.uid)
                vmm_set_creds(c->v, pb_opt.uid, pb_opt.gid, 0);
        r = vmm_init(c->v, &c->init);
        if (r < 0)
                return pb_fail(r, "FUSE INIT");
        c->rss_after_init = daemon_rss_kib();
        /* GET_QUEUE_NUM counts hiprio too; 0 = no MQ protocol feature (one queue) */
        unsigned offered = vmm_backend_queue_num(c->v);
        c->request_queues = offered > 1 ? offered - 1 : 1;
        for (unsigned q = 1; q <= nq; q++) {
                struct vmm_slot_config small = { .in_cap = 512, .out_cap = 4096 };
                struct vmm_slot_config io = { .in_cap = sizeof(struct fuse_write_in) + (1u << 20),
                                              .out_cap = 1u << 20,
                                              .page_at = sizeof(struct fuse_write_in) };
                r = vmm_slots_new(c->v, q, MAX_DEPTH, &small, &c->slots[q]);
                if (r >= 0)
                        r = vmm_slots_new(c->v, q, MAX_DEPTH, &io, &c->io_slots[q]);
                if (r < 0)
                        return pb_fail(r, "allocating request slots");
                for (unsigned i = 0; i < MAX_DEPTH; i++)
                        memset(c->io_slots[q][i].args, 'y', c->io_slots[q][i].in_cap);
                struct vmm_queue_mode mode = { .honour_suppression = true };
                vmm_queue_set_mode(c->v, q, &mode);
        }
        struct fuse_entry_out e;
        r = vmm_lookup(c->v, VMM_ROOT, DATA_FILE, &e);
        if (r < 0)
                return pb_fail(r, "LOOKUP " DATA_FILE);
        c->data_node = e.nodeid;
        r = vmm_open(c->v, c->data_node, O_RDWR, &c->data_fh);
        if (r < 0)
                return pb_fail(r, "OPEN " DATA_FILE);
        c->data_open = true;
        return 0;
}

static void set_mode(struct conn *c, bool honour, bool spin, unsigned spin_us)
{
        struct vmm_queue_mode mode = { .honour_suppression = honour, .spin = spin, .spin_us = spin_us };
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
        l->error = loop_run(l, (int64_t)pb_opt.duration_ms * 1000000);
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
        int64_t t0 = pb_now_ns();
        int r = 0;
        if (threads == 1) {
                loop_thread(&loops[0]);
        } else {
                for (unsigned t = 0; t < threads; t++)
                        if (pthread_create(&tid[t], NULL, loop_thread, &loops[t]) != 0)
                                return pb_fail(-EAGAIN, "pthread_create");
                for (unsigned t = 0; t < threads; t++)
                        pthread_join(tid[t], NULL);
        }
        int64_t t1 = pb_now_ns();
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

static void emit_cpu(const char *row, const struct measure *m)
{
        if (m->cpu_ns >= 0 && m->requests > 0)
                pb_emit("cpu", row, "µs/req", "lo", m->cpu_ns / 1000.0 / (double)m->requests);
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
        pb_emit(group, row, "µs", "lo", pb_percentile_us(m.samples, m.nsamples, 0.50));
        snprintf(row, sizeof(row), "getattr p99%s", suffix);
        pb_emit(group, row, "µs", "lo", pb_percentile_us(m.samples, m.nsamples, 0.99));
        free(m.samples);
        snprintf(row, sizeof(row), "getattr qd1%s", suffix);
        emit_cpu(row, &m);
        /* The counters cover the whole run (warm-up too): per completion. */
        double done = (double)m.counters.completions;
        if (counters && done > 0) {
                snprintf(row, sizeof(row), "kicks/req%s", suffix);
                pb_emit(group, row, "per req", "lo", (double)m.counters.kicks / done);
                snprintf(row, sizeof(row), "kicks avoided/req%s", suffix);
                pb_emit(group, row, "per req", "hi", (double)m.counters.kicks_avoided / done);
                snprintf(row, sizeof(row), "call wake-ups/req%s", suffix);
                pb_emit(group, row, "per req", "lo", (double)m.counters.calls / done);
        }
        return 0;
}

/* The op API of the tests (vmm_op_submit/vmm_op_wait: allocation, copies and
 * a kick per request): how a frontend built on it, like the one the published
 * reference figures came from, sees the same daemon. */
static int row_op_api(struct conn *c, unsigned depth)
{
        struct vmm_op ops[MAX_DEPTH];
        struct fuse_getattr_in in = { 0 };
        struct fuse_attr_out attr[MAX_DEPTH];
        uint64_t n = 0;
        int64_t t0 = pb_now_ns(), end = t0 + (int64_t)pb_opt.duration_ms * 1000000;
        while (pb_now_ns() < end) {
                for (unsigned i = 0; i < depth; i++) {
                        ops[i] = (struct vmm_op){ .opcode = FUSE_GETATTR, .nodeid = VMM_ROOT,
                                                  .arg = { { &in, sizeof(in) } }, .arg_cnt = 1,
                                                  .out = &attr[i], .out_size = sizeof(attr[i]) };
                        int r = vmm_op_submit(c->v, &ops[i]);
                        if (r < 0)
                                return pb_fail(r, "vmm_op_submit");
                }
                for (unsigned i = 0; i < depth; i++) {
                        int r = vmm_op_wait(c->v, &ops[i], -1);
                        if (r < 0)
                                return pb_fail(r, "vmm_op_wait");
                }
                n += depth;
        }
        char row[64];
        snprintf(row, sizeof(row), "getattr qd%u, op API (submit %u, wait %u)", depth, depth, depth);
        pb_emit("ops", row, "ops/s", "hi", (double)n / ((double)(pb_now_ns() - t0) / 1e9));
        return 0;
}

static int row_ops(struct conn *c, unsigned arg)
{
        unsigned depth = arg & 0xff;
        bool lookup = arg & PB_OPS_LOOKUP;
        char row[64];
        struct measure m;
        int r = measure(c, lookup ? W_LOOKUP_GETATTR : W_GETATTR, depth, 0, 1, false, &m);
        if (r < 0)
                return r;
        snprintf(row, sizeof(row), "%s qd%u", lookup ? "lookup+getattr" : "getattr", depth);
        pb_emit("ops", row, lookup ? "pairs/s" : "ops/s", "hi", (double)m.ops / m.seconds);
        if (lookup)
                return 0;
        emit_cpu(row, &m);
        /* How often the daemon's interrupt woke the waiting frontend: with
         * EVENT_IDX, a reply the frontend asked to be told about (used_event). */
        if (m.counters.completions > 0) {
                snprintf(row, sizeof(row), "getattr qd%u: call wake-ups/req", depth);
                pb_emit("ops", row, "per req", "lo", (double)m.counters.calls / (double)m.counters.completions);
        }
        return 0;
}

/* GETATTR at `depth` outstanding with the frontend spinning on used->idx
 * instead of sleeping on the call fd (a guest that polls: no interrupt, no
 * wake-up), so the figure is the daemon's own rate and not the frontend's
 * wake-up latency. */
static int row_ops_spin(struct conn *c, unsigned depth)
{
        char row[64];
        struct measure m;
        set_mode(c, true, true, 0);
        int r = measure(c, W_GETATTR, depth, 0, 1, false, &m);
        set_mode(c, true, false, 0);
        if (r < 0)
                return r;
        snprintf(row, sizeof(row), "getattr qd%u, frontend spinning", depth);
        pb_emit("ops", row, "ops/s", "hi", (double)m.ops / m.seconds);
        emit_cpu(row, &m);
        return 0;
}

/* which = write * 3 + size index */
static int row_io(struct conn *c, unsigned which)
{
        bool write = which >= 3;
        size_t size = pb_io_sizes[which % 3];
        char row[64];
        struct measure m;
        int r = measure(c, write ? W_WRITE : W_READ, 1, size, 1, false, &m);
        if (r < 0)
                return r;
        snprintf(row, sizeof(row), "%s %s", write ? "write" : "read", pb_io_names[which % 3]);
        pb_emit("io", row, "MB/s", "hi", (double)m.ops * (double)size / m.seconds / 1e6);
        if (which % 3 == 2)
                emit_cpu(row, &m);
        return 0;
}

static int row_create(struct conn *c, unsigned arg)
{
        struct measure m;
        int r = measure(c, W_CREATE, 1, 0, 1, false, &m);
        if (r < 0)
                return r;
        pb_emit("create", "create+release+unlink", "cycles/s", "hi", (double)m.ops / m.seconds);
        emit_cpu("create+release+unlink", &m);
        return 0;
}

static int row_lat(struct conn *c, unsigned arg)
{
        return rows_latency(c, "lat", "", false);
}

/* Row 6: the same GETATTR at one outstanding, by frontend mode. */
static int row_notify(struct conn *c, unsigned mode)
{
        static const struct { bool honour, spin; unsigned spin_us; const char *name; } modes[] = {
                { false, false, 0, " (kick always, wait on call)" },
                { true, false, 0, " (honour suppr., wait on call)" },
                { true, false, 50, " (honour suppr., spin 50 µs, then call)" },
                { true, true, 0, " (honour suppr., spin)" },
        };
        set_mode(c, modes[mode].honour, modes[mode].spin, modes[mode].spin_us);
        int r = rows_latency(c, "notify", modes[mode].name, true);
        set_mode(c, true, false, 0);
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

        int64_t t0 = pb_now_ns(), cpu0 = daemon_cpu_ns(), front_ns = 0, write_ns = 0, getattr_ns = 0;
        struct fuse_create_in ci = { .flags = O_WRONLY | O_CREAT | O_TRUNC, .mode = S_IFREG | 0644 };
        size_t seg[2] = { sizeof(ci), strlen(name) + 1 };
        memcpy(s->args, &ci, sizeof(ci));
        memcpy((char *)s->args + sizeof(ci), name, seg[1]);
        r = vmm_slot_prepare(c->v, s, FUSE_CREATE, VMM_ROOT, seg, 2, sizeof(e) + sizeof(o), &lay);
        if (r >= 0)
                r = run_one(c, s);
        if (r < 0)
                return pb_fail(r, "CREATE pb-copy");
        memcpy(&e, s->out, sizeof(e));
        memcpy(&o, (char *)s->out + sizeof(e), sizeof(o));
        uint64_t requests = 1, writes = 0;
        for (uint64_t off = 0; off < pb_opt.copy_bytes; off += chunk) {
                size_t len = pb_opt.copy_bytes - off < chunk ? pb_opt.copy_bytes - off : chunk;
                int64_t a = pb_now_ns();
                /* The payload stays in the slot's pages: the guest's bounce copy is the guest's cost. */
                struct fuse_write_in *wi = s->args;
                *wi = (struct fuse_write_in){ .fh = o.fh, .offset = off, .size = (uint32_t)len };
                size_t wseg[2] = { sizeof(*wi), len };
                r = vmm_slot_prepare(c->v, s, FUSE_WRITE, e.nodeid, wseg, 2, sizeof(struct fuse_write_out), &lay);
                int64_t b = pb_now_ns();
                if (r >= 0)
                        r = run_one(c, s);
                int64_t d = pb_now_ns();
                if (r >= 0 && ((struct fuse_write_out *)s->out)->size != len)
                        r = -EIO;
                if (r < 0)
                        return pb_fail(r, "WRITE pb-copy");
                struct fuse_getattr_in *gi = s->args;
                *gi = (struct fuse_getattr_in){ .getattr_flags = FUSE_GETATTR_FH, .fh = o.fh };
                size_t gseg = sizeof(*gi);
                r = vmm_slot_prepare(c->v, s, FUSE_GETATTR, e.nodeid, &gseg, 1, sizeof(struct fuse_attr_out), &lay);
                int64_t f = pb_now_ns();
                if (r >= 0)
                        r = run_one(c, s);
                if (r < 0)
                        return pb_fail(r, "GETATTR pb-copy");
                int64_t g = pb_now_ns();
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
                return pb_fail(r, "FLUSH/RELEASE pb-copy");
        requests += 2;
        int64_t t1 = pb_now_ns(), cpu1 = daemon_cpu_ns();
        double secs = (double)(t1 - t0) / 1e9;
        char name_row[96];
        pb_emit("win", row, "GB/s", "hi", (double)pb_opt.copy_bytes / secs / 1e9);
        snprintf(name_row, sizeof(name_row), "%s: WRITE round trip", row);
        pb_emit("win", name_row, "µs", "lo", (double)write_ns / 1000.0 / (double)writes);
        snprintf(name_row, sizeof(name_row), "%s: GETATTR round trip", row);
        pb_emit("win", name_row, "µs", "lo", (double)getattr_ns / 1000.0 / (double)writes);
        snprintf(name_row, sizeof(name_row), "%s: frontend share", row);
        pb_emit("win", name_row, "%", "lo", 100.0 * (double)front_ns / (double)(t1 - t0));
        if (cpu0 >= 0 && cpu1 >= 0) {
                snprintf(name_row, sizeof(name_row), "%s: daemon CPU / wall", row);
                pb_emit("win", name_row, "%", "lo", 100.0 * (double)(cpu1 - cpu0) / (double)(t1 - t0));
                snprintf(name_row, sizeof(name_row), "%s", row);
                pb_emit("cpu", name_row, "µs/req", "lo", (double)(cpu1 - cpu0) / 1000.0 / (double)requests);
        }
        /* unlinked and forgotten: the daemon lets the 2 GiB go */
        (void)vmm_unlink(c->v, VMM_ROOT, name);
        (void)vmm_forget(c->v, e.nodeid, 1);
        return 0;
}

/* The largest WRITE viofs would send: max_write, capped by max_pages as
 * Linux does and by 1024 descriptors, four of which carry the headers. */
static size_t win_max_chunk(const struct conn *c)
{
        size_t max = c->init.max_write;
        if ((vmm_init_flags(c->v) & FUSE_MAX_PAGES) && c->init.max_pages &&
            (size_t)c->init.max_pages * PAGE < max)
                max = (size_t)c->init.max_pages * PAGE;
        if (max > (size_t)(WIN_MAX_DESC - 4) * PAGE)
                max = (size_t)(WIN_MAX_DESC - 4) * PAGE;
        return max & ~(size_t)(PAGE - 1);
}

static int row_win(struct conn *c, unsigned largest)
{
        size_t max = win_max_chunk(c);
        if (!c->win_slot) {
                struct vmm_slot_config cfg = { .in_cap = sizeof(struct fuse_write_in) + max, .out_cap = 4096,
                                               .page_at = sizeof(struct fuse_write_in), .max_desc = WIN_MAX_DESC };
                int r = vmm_slots_new(c->v, 1, 1, &cfg, &c->win_slot);
                if (r < 0)
                        return pb_fail(r, "allocating the copy's slot");
                memset(c->win_slot->args, 'w', cfg.in_cap);
        }
        if (!largest) {
                pb_emit("win", "max_write offered (INIT)", "KiB", "hi", c->init.max_write / 1024.0);
                pb_emit("win", "max_pages offered (INIT)", "pages", "hi", c->init.max_pages);
                return row_win_copy(c, c->win_slot, max < (1u << 20) ? max : 1u << 20, "copy, 1 MiB writes");
        }
        pb_emit("win", "largest max_write used", "KiB", "hi", max / 1024.0);
        return row_win_copy(c, c->win_slot, max, "copy, largest max_write");
}

/* Row 8: RSS idle after INIT and after 10,000 LOOKUPs; then OPEN without
 * RELEASE until the daemon says no. */
static int rows_mem(struct conn *c)
{
        struct rss idle = c->rss_after_init;
        struct fuse_entry_out dir, e;
        int r = vmm_lookup(c->v, VMM_ROOT, MANY_DIR, &dir);
        if (r < 0)
                return pb_fail(r, "LOOKUP " MANY_DIR);
        for (unsigned i = 0; i < MANY_FILES; i++) {
                char name[32];
                snprintf(name, sizeof(name), "f%05u", i);
                r = vmm_lookup(c->v, dir.nodeid, name, &e);
                if (r < 0)
                        return pb_fail(r, "LOOKUP of the many files");
        }
        struct rss after = daemon_rss_kib();
        if (idle.vm > 0 && after.vm > 0) {
                pb_emit("mem", "RSS idle after INIT", "KiB", "lo", (double)idle.vm);
                pb_emit("mem", "RSS idle after INIT, without guest memory", "KiB", "lo", (double)idle.own);
                pb_emit("mem", "RSS delta after 10,000 LOOKUPs", "KiB", "lo", (double)(after.vm - idle.vm));
                pb_emit("mem", "RSS delta after 10,000 LOOKUPs, without guest memory", "KiB", "lo",
                        (double)(after.own - idle.own));
        }
        int n = 0, err = 0;
        int64_t deadline = pb_now_ns() + 30 * 1000000000ll;
        while (n < pb_opt.max_opens && pb_now_ns() < deadline) {
                uint64_t fh;
                r = vmm_open(c->v, c->data_node, O_RDONLY, &fh);
                if (r != 0) {
                        err = r;
                        break;
                }
                n++;
        }
        bool alive = cur_pid <= 0 || kill(cur_pid, 0) == 0;
        int after_r = err > -4096 && err < 0 && alive ? vmm_getattr(c->v, VMM_ROOT, NULL) : -ECONNRESET;
        const char *en = err ? strerrorname_np(-err) : NULL;
        if (err == 0)
                pb_emit_text("mem", "OPEN without RELEASE", "no error in %d opens; GETATTR then: %s", n,
                          after_r == 0 ? "ok" : strerror(-after_r));
        else
                pb_emit_text("mem", "OPEN without RELEASE", "%s after %d opens; daemon %s, GETATTR then: %s",
                          en ? en : "?", n, alive ? "alive" : "GONE",
                          after_r == 0 ? "ok" : strerror(-after_r));
        return 0;
}

/* ---- the run: every figure from every target in turn ---- */

struct target {
        const char *label;
        const char *socket;             /* NULL: the bare syscalls */
        pid_t pid;
        struct conn conn;
        bool connected, failed;
};

static struct target targets[MAX_TARGETS];
static unsigned ntargets;
static struct pb_bare *bare;

struct entry {
        const char *group;              /* --rows name */
        int (*daemon)(struct conn *c, unsigned arg);
        int (*bare)(struct pb_bare *b, unsigned arg);
        unsigned arg;
};

static const struct entry entries[] = {
        { "lat", row_lat, pb_bare_lat, 0 },
        { "ops", row_ops, pb_bare_ops, 1 },
        { "ops", row_ops, pb_bare_ops, 4 },
        { "ops", row_ops, pb_bare_ops, 16 },
        { "ops", row_ops, pb_bare_ops, PB_OPS_LOOKUP | 1 },
        { "ops", row_ops, pb_bare_ops, PB_OPS_LOOKUP | 4 },
        { "ops", row_ops, pb_bare_ops, PB_OPS_LOOKUP | 16 },
        { "ops", row_ops_spin, NULL, 16 },
        { "ops", row_op_api, NULL, 1 },
        { "ops", row_op_api, NULL, 16 },
        { "io", row_io, pb_bare_io, 0 },
        { "io", row_io, pb_bare_io, 1 },
        { "io", row_io, pb_bare_io, 2 },
        { "io", row_io, pb_bare_io, 3 },
        { "io", row_io, pb_bare_io, 4 },
        { "io", row_io, pb_bare_io, 5 },
        { "create", row_create, pb_bare_create, 0 },
        { "notify", row_notify, NULL, 0 },
        { "notify", row_notify, NULL, 1 },
        { "notify", row_notify, NULL, 2 },
        { "notify", row_notify, NULL, 3 },
        { "win", row_win, pb_bare_win, 0 },
        { "win", row_win, pb_bare_win, 1 },
};

static void target_set(const struct target *t)
{
        pb_label = t->label;
        cur_pid = t->pid;
}

static void target_failed(struct target *t, int r)
{
        fprintf(stderr, "proto-bench: %s failed (%s): no more figures from it\n", t->label, strerror(-r));
        t->failed = true;
}

/* Row 5: GETATTR at 16 outstanding and READ 128 KiB per queue, one frontend
 * thread each, on a fresh connection with nq request queues. */
static int mq_figures(struct target *t, unsigned nq)
{
        struct conn c;
        struct measure m;
        char row[64];
        int r = conn_open(&c, t->socket, nq);
        if (r == -ENOTSUP) {
                conn_free(&c);
                fprintf(stderr, "proto-bench: %s: no %u request queues, skipped\n", t->label, nq);
                return 0;
        }
        if (r >= 0)
                r = measure(&c, W_GETATTR, 16, 0, nq, false, &m);
        if (r >= 0) {
                snprintf(row, sizeof(row), "getattr qd16 per queue, %u queue%s", nq, nq > 1 ? "s" : "");
                pb_emit("mq", row, "ops/s", "hi", (double)m.ops / m.seconds);
                emit_cpu(row, &m);
                r = measure(&c, W_READ, 1, 128 << 10, nq, false, &m);
        }
        if (r >= 0) {
                snprintf(row, sizeof(row), "read 128k qd1 per queue, %u queue%s", nq, nq > 1 ? "s" : "");
                pb_emit("mq", row, "MB/s", "hi", (double)m.ops * (128 << 10) / m.seconds / 1e6);
        }
        conn_free(&c);
        return r;
}

/* Row 8 wants a daemon nobody has talked to: its own connection, first. */
static int mem_figures(struct target *t)
{
        struct conn c;
        int r = conn_open(&c, t->socket, 1);
        if (r >= 0)
                r = rows_mem(&c);
        conn_free(&c);
        return r;
}

static int run(void)
{
        bool main_rows = false;
        for (size_t e = 0; e < sizeof(entries) / sizeof(entries[0]); e++)
                main_rows = main_rows || pb_row_wanted(entries[e].group);
        if (pb_row_wanted("mem"))
                for (unsigned i = 0; i < ntargets; i++) {
                        if (!targets[i].socket)
                                continue;
                        target_set(&targets[i]);
                        int r = mem_figures(&targets[i]);
                        if (r < 0)
                                target_failed(&targets[i], r);
                }
        if (main_rows)
                for (unsigned i = 0; i < ntargets; i++) {
                        struct target *t = &targets[i];
                        target_set(t);
                        if (!t->socket || t->failed)
                                continue;
                        int r = conn_open(&t->conn, t->socket, 1);
                        if (r < 0) {
                                conn_free(&t->conn);
                                target_failed(t, r);
                                continue;
                        }
                        t->connected = true;
                        pb_emit("mq", "request queues offered (GET_QUEUE_NUM - 1)", "queues", "hi",
                                t->conn.request_queues);
                }
        for (unsigned rep = pb_opt.first_rep; rep < pb_opt.first_rep + pb_opt.reps; rep++) {
                pb_opt.rep = rep;
                for (size_t e = 0; main_rows && e < sizeof(entries) / sizeof(entries[0]); e++) {
                        const struct entry *en = &entries[e];
                        if (!pb_row_wanted(en->group))
                                continue;
                        /* A B C, then B C A: no daemon always follows the same one. */
                        for (unsigned k = 0; k < ntargets; k++) {
                                struct target *t = &targets[(k + rep - 1) % ntargets];
                                target_set(t);
                                int r;
                                if (!t->socket)
                                        r = en->bare ? en->bare(bare, en->arg) : 0;
                                else if (!t->failed)
                                        r = en->daemon(&t->conn, en->arg);
                                else
                                        continue;
                                if (r < 0)
                                        target_failed(t, r);
                        }
                }
                for (unsigned q = 0; pb_row_wanted("mq") && q < pb_opt.nqueues; q++)
                        for (unsigned k = 0; k < ntargets; k++) {
                                struct target *t = &targets[(k + rep - 1) % ntargets];
                                target_set(t);
                                int r = !t->socket ? pb_bare_mq(bare, pb_opt.queues[q])
                                        : t->failed ? 0 : mq_figures(t, pb_opt.queues[q]);
                                if (r < 0)
                                        target_failed(t, r);
                        }
        }
        for (unsigned i = 0; i < ntargets; i++)
                if (targets[i].connected)
                        conn_free(&targets[i].conn);
        for (unsigned i = 0; i < ntargets; i++)
                if (targets[i].failed)
                        return -EIO;
        return 0;
}

/* ---- command line ---- */

static int usage(void)
{
        fprintf(stderr,
                "usage: proto-bench --dir=DIR --daemon=LABEL=SOCKET[,PID]... [--bare] [OPTION...]\n"
                "       proto-bench --summarize=RESULTS_DIR [--primary=LABEL]\n"
                "  --daemon=LABEL=SOCKET[,PID]  a daemon to measure (PID: for its CPU time and RSS)\n"
                "  --bare             also the same work as bare host syscalls (label \"bare\")\n"
                "  --rows=LIST        lat,ops,io,create,notify,win,mem,mq (default lat,ops,io,create,notify,win)\n"
                "  --queues=LIST      request queues for mq (default 1,2,4)\n"
                "  --reps=N           repetitions, interleaved (default 1)\n"
                "  --first-rep=N      number of the first repetition in the output (default 1)\n"
                "  --duration-ms=N    per figure (default 500)\n"
                "  --copy-mib=N       the Windows-shaped copy's size (default 2048)\n"
                "  --creds=UID:GID    the guest user in every request header (default the caller)\n"
                "  --max-opens=N      the open-file row gives up after N (default 50000)\n"
                "  --out=FILE         append figures (TSV) to FILE instead of stdout\n"
                "  --primary=LABEL    the daemon the summary's ratios are about (default sluice)\n");
        return 2;
}

static int add_target(const char *spec)
{
        /* LABEL=SOCKET[,PID]; the strings stay in argv */
        static char buf[MAX_TARGETS][4200];
        if (ntargets == MAX_TARGETS || strlen(spec) >= sizeof(buf[0]))
                return -E2BIG;
        char *b = strcpy(buf[ntargets], spec), *eq = strchr(b, '=');
        if (!eq || eq == b || !eq[1])
                return -EINVAL;
        *eq = '\0';
        char *comma = strrchr(eq + 1, ',');
        pid_t pid = 0;
        if (comma) {
                *comma = '\0';
                pid = (pid_t)atoi(comma + 1);
        }
        targets[ntargets++] = (struct target){ .label = b, .socket = eq + 1, .pid = pid };
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "daemon", required_argument, NULL, 'D' },
                { "dir", required_argument, NULL, 'd' },
                { "rows", required_argument, NULL, 'r' },
                { "queues", required_argument, NULL, 'q' },
                { "reps", required_argument, NULL, 'R' },
                { "first-rep", required_argument, NULL, 'n' },
                { "duration-ms", required_argument, NULL, 't' },
                { "copy-mib", required_argument, NULL, 'c' },
                { "creds", required_argument, NULL, 'u' },
                { "max-opens", required_argument, NULL, 'm' },
                { "out", required_argument, NULL, 'o' },
                { "bare", no_argument, NULL, 'b' },
                { "summarize", required_argument, NULL, 'S' },
                { "primary", required_argument, NULL, 'P' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *summary = NULL;
        bool with_bare = false;
        int c;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) >= 0) {
                switch (c) {
                case 'D':
                        if (add_target(optarg) < 0)
                                return usage();
                        break;
                case 'd': pb_opt.dir = optarg; break;
                case 'r': pb_opt.rows = optarg; break;
                case 'q': {
                        pb_opt.nqueues = 0;
                        for (char *p = optarg; *p && pb_opt.nqueues < 4;) {
                                unsigned n = (unsigned)strtoul(p, &p, 10);
                                if (n < 1 || n > MAX_THREADS)
                                        return usage();
                                pb_opt.queues[pb_opt.nqueues++] = n;
                                if (*p == ',')
                                        p++;
                                else if (*p)
                                        return usage();
                        }
                        break;
                }
                case 'R': pb_opt.reps = (unsigned)atoi(optarg); break;
                case 'n': pb_opt.first_rep = (unsigned)atoi(optarg); break;
                case 't': pb_opt.duration_ms = atoi(optarg); break;
                case 'c': pb_opt.copy_bytes = strtoull(optarg, NULL, 10) << 20; break;
                case 'u':
                        if (sscanf(optarg, "%u:%u", &pb_opt.uid, &pb_opt.gid) != 2)
                                return usage();
                        break;
                case 'm': pb_opt.max_opens = atoi(optarg); break;
                case 'o': pb_opt.out = optarg; break;
                case 'b': with_bare = true; break;
                case 'S': summary = optarg; break;
                case 'P': pb_opt.primary = optarg; break;
                default: return usage();
                }
        }
        if (summary)
                return pb_summarize(summary) < 0 ? 1 : 0;
        if (!pb_opt.dir || (ntargets == 0 && !with_bare) || pb_opt.duration_ms < 10 ||
            pb_opt.copy_bytes == 0 || pb_opt.reps < 1 || pb_opt.reps > 16 || optind != argc)
                return usage();
        if (with_bare) {
                if (ntargets == MAX_TARGETS)
                        return usage();
                targets[ntargets++] = (struct target){ .label = "bare" };
        }
        pb_out = stdout;
        if (pb_opt.out) {
                pb_out = fopen(pb_opt.out, "ae");
                if (!pb_out) {
                        (void)pb_fail(-errno, pb_opt.out);
                        return 1;
                }
        }
        int r = prepare_files();
        if (r >= 0 && with_bare)
                r = pb_bare_open(&bare);
        if (r >= 0)
                r = run();
        pb_bare_close(bare);
        if (pb_out != stdout)
                fclose(pb_out);
        return r < 0 ? 1 : 0;
}
