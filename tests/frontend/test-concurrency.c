/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-concurrency.c — one frontend thread per request queue (--queues=4),
 * with blocking locks, INTERRUPT, FORGET and RELEASE crossing between them.
 *
 * What a user would notice otherwise: two guest processes both inside a
 * lock-protected section (a counter file that loses increments), a blocked
 * fcntl(F_SETLKW)/flock() that Ctrl-C does not end or that never returns
 * after the holder closed its file, a lock that outlives its file, a reply
 * that never comes, a worker that crashes when one queue forgets an inode
 * another queue is still using.  Run under ThreadSanitizer (make check's
 * TSan pass, tests/run-suites.sh), this is also the daemon's race detector.
 *
 * Every wait is for a condition (a reply, a barrier), never a sleep: a
 * SETLKW is known to be waiting in the worker once a request sent after it
 * on the same queue has been answered (a queue thread takes its ring in
 * order and registers the waiter before it moves on). */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define THREADS   4           /* = request queues: thread t drives queue t + 1 */
#define ROUNDS    12          /* even rounds POSIX locks, odd rounds flock() */
#define OFFSET_MAX INT64_MAX  /* fuse_file_lock.end: to the end of the file */

/* g_test_message()/g_test_fail() are not meant for many threads at once.
 * Only failures before the first are reported: the later ones are mostly
 * its echo (requests not sent, a worker gone). */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

#define check(cond, ...)                                                                  \
        do {                                                                              \
                if (!(cond) && !atomic_load(&ctx->failed)) {                              \
                        pthread_mutex_lock(&report_lock);                                 \
                        g_test_message("FAIL %s:%d: %s", __FILE__, __LINE__, #cond);      \
                        g_test_message(__VA_ARGS__);                                      \
                        g_test_fail();                                                    \
                        pthread_mutex_unlock(&report_lock);                               \
                        atomic_store(&ctx->failed, true);                                 \
                }                                                                         \
        } while (0)
/* ECANCELED: not sent, an earlier failure was reported (see call()). */
#define check_errno(expr, expected)                                                       \
        do {                                                                              \
                int r_ = (expr), e_ = (expected);                                         \
                check(r_ == e_ || r_ == -ECANCELED, "%s = %d (%s), expected %d", #expr,   \
                      r_, r_ ? strerrorname_np(-r_) : "0", e_);                           \
        } while (0)

struct ctx {
        Harness *h;
        struct vmm *v;
        pthread_barrier_t barrier;
        pthread_mutex_t hiprio;     /* queue 0 is shared: one sender at a time */
        uint64_t counter_node;      /* "counter": the lock-protected file */
        ino_t victim_ino;           /* "victim": the file FORGETs fly at */
        atomic_int holders;         /* threads inside the locked section now */
        atomic_int acquisitions;
        atomic_bool failed;
};

struct worker {
        struct ctx *ctx;
        unsigned t, queue;
        uint64_t owner;
};

/* After a failure (a worker that died, say) the threads only run through
 * their barriers: every later request would wait out its timeout. */
static bool failed(struct ctx *ctx)
{
        return atomic_load(&ctx->failed);
}

/* One request on queue q; returns the FUSE error or a transport error. */
static int call(struct ctx *ctx, unsigned q, uint32_t opcode, uint64_t nodeid, const void *arg,
                size_t len, void *out, size_t out_size, size_t *ret_len)
{
        struct vmm_op op = { .queue = q, .opcode = opcode, .nodeid = nodeid,
                             .arg_cnt = arg ? 1 : 0, .arg = { { (void *)arg, len } },
                             .out = out, .out_size = out_size };
        int r = failed(ctx) ? -ECANCELED : vmm_op_run(ctx->v, &op);

        if (r < 0)
                return r;
        if (ret_len)
                *ret_len = op.out_len;
        return op.error;
}

/* INTERRUPT, FORGET and BATCH_FORGET go on the hiprio queue, as the guest sends them. */
static int hiprio(struct ctx *ctx, uint32_t opcode, uint64_t nodeid, const void *arg, size_t len)
{
        struct vmm_op op = { .hiprio = true, .opcode = opcode, .nodeid = nodeid, .arg_cnt = 1,
                             .arg = { { (void *)arg, len } }, .no_reply = true };
        int r;

        if (failed(ctx))
                return -ECANCELED;
        pthread_mutex_lock(&ctx->hiprio);
        r = vmm_op_run(ctx->v, &op);
        pthread_mutex_unlock(&ctx->hiprio);
        return r;
}

static int lookup(struct ctx *ctx, unsigned q, const char *name, struct fuse_entry_out *e)
{
        return call(ctx, q, FUSE_LOOKUP, VMM_ROOT, name, strlen(name) + 1, e, sizeof(*e), NULL);
}

static int forget(struct ctx *ctx, uint64_t nodeid, uint64_t n)
{
        struct fuse_forget_in in = { .nlookup = n };

        return hiprio(ctx, FUSE_FORGET, nodeid, &in, sizeof(in));
}

static int open_file(struct ctx *ctx, unsigned q, uint64_t nodeid, uint64_t *ret_fh)
{
        struct fuse_open_in in = { .flags = O_RDWR };
        struct fuse_open_out out = { 0 };
        int r = call(ctx, q, FUSE_OPEN, nodeid, &in, sizeof(in), &out, sizeof(out), NULL);

        *ret_fh = out.fh;
        return r;
}

/* close() in the guest: FLUSH (drops the owner's POSIX locks), then RELEASE
 * (drops the handle's flock() lock, as the kernel asks when it used one). */
static int close_file(struct ctx *ctx, unsigned q, uint64_t nodeid, uint64_t fh, uint64_t owner,
                      bool flocked)
{
        struct fuse_flush_in fl = { .fh = fh, .lock_owner = owner };
        struct fuse_release_in rel = { .fh = fh, .flags = O_RDWR, .lock_owner = owner,
                                       .release_flags = flocked ? FUSE_RELEASE_FLOCK_UNLOCK : 0 };
        int r = call(ctx, q, FUSE_FLUSH, nodeid, &fl, sizeof(fl), NULL, 0, NULL);

        return r < 0 ? r : call(ctx, q, FUSE_RELEASE, nodeid, &rel, sizeof(rel), NULL, 0, NULL);
}

static struct fuse_lk_in lock_arg(const struct worker *w, uint64_t fh, bool flocked)
{
        return (struct fuse_lk_in){
                .fh = fh, .owner = w->owner, .lk_flags = flocked ? FUSE_LK_FLOCK : 0,
                .lk = { .start = 0, .end = OFFSET_MAX, .type = F_WRLCK, .pid = 100 + w->t },
        };
}

/* The locked section: read the counter, add one, write it back.  A lock that
 * lets two threads in loses an increment (and trips `holders`). */
static void locked_increment(struct worker *w, uint64_t fh)
{
        struct ctx *ctx = w->ctx;
        struct fuse_read_in rd = { .fh = fh, .size = 32 };
        char buf[33] = { 0 };
        size_t got = 0;

        check(atomic_fetch_add(&ctx->holders, 1) == 0, "thread %u: two lock holders at once", w->t);
        check_errno(call(ctx, w->queue, FUSE_READ, ctx->counter_node, &rd, sizeof(rd), buf, 32, &got), 0);
        int n = atoi(buf) + 1;
        int len = snprintf(buf, sizeof(buf), "%d", n);
        struct { struct fuse_write_in in; char data[32]; } wr = {
                .in = { .fh = fh, .size = (uint32_t)len } };
        memcpy(wr.data, buf, (size_t)len);
        struct fuse_write_out wo = { 0 };
        check_errno(call(ctx, w->queue, FUSE_WRITE, ctx->counter_node, &wr, sizeof(wr.in) + (size_t)len,
                         &wo, sizeof(wo), NULL), 0);
        check(wo.size == (uint32_t)len, "thread %u: wrote %u of %d bytes", w->t, wo.size, len);
        atomic_fetch_add(&ctx->acquisitions, 1);
        atomic_fetch_sub(&ctx->holders, 1);
}

/* FORGETs of "victim" while the other queues use it: each thread's own
 * lookup given back (what a guest sends), and from the round's leader a
 * FORGET of far more lookups than it has, a BATCH_FORGET naming a node
 * that does not exist, INTERRUPTs of nothing (what a hostile guest sends).
 * An open handle keeps working throughout; the nodeid either still names
 * the victim or is stale (EBADF), never another file. */
static void victim_phase(struct worker *w, bool leader)
{
        struct ctx *ctx = w->ctx;
        struct fuse_entry_out e = { 0 };
        struct fuse_attr_out ao;
        struct fuse_getattr_in gi = { 0 };
        struct fuse_read_in rd = { .size = 16 };
        char buf[16];
        size_t got = 0;
        uint64_t fh = 0;

        check_errno(lookup(ctx, w->queue, "victim", &e), 0);
        check(e.attr.ino == ctx->victim_ino, "thread %u: victim has inode %llu", w->t,
              (unsigned long long)e.attr.ino);
        check_errno(open_file(ctx, w->queue, e.nodeid, &fh), 0);
        /* Everyone holds a handle before the first FORGET (the guest's
         * kernel forgets no inode it has open; a hostile one may, but the
         * OPEN of a node already forgotten would just fail). */
        pthread_barrier_wait(&ctx->barrier);
        if (leader) {
                struct fuse_forget_in too_many = { .nlookup = 1ull << 40 };
                struct {
                        struct fuse_batch_forget_in in;
                        struct fuse_forget_one one[3];
                } batch = { { .count = 3 }, { { e.nodeid, 1 }, { 0x7fff0000ull, 5 }, { 0, 1 } } };
                struct fuse_interrupt_in none = { .unique = 0 }, old = { .unique = 2 };

                check_errno(hiprio(ctx, FUSE_FORGET, e.nodeid, &too_many, sizeof(too_many)), 0);
                check_errno(hiprio(ctx, FUSE_BATCH_FORGET, 0, &batch, sizeof(batch)), 0);
                check_errno(hiprio(ctx, FUSE_INTERRUPT, 0, &none, sizeof(none)), 0);
                check_errno(hiprio(ctx, FUSE_INTERRUPT, 0, &old, sizeof(old)), 0);
        } else {
                check_errno(forget(ctx, e.nodeid, 1), 0);
        }
        rd.fh = fh;
        check_errno(call(ctx, w->queue, FUSE_READ, e.nodeid, &rd, sizeof(rd), buf, sizeof(buf), &got), 0);
        check(got == 6 && memcmp(buf, "victim", 6) == 0, "thread %u: read %zu bytes of victim", w->t, got);
        int r = call(ctx, w->queue, FUSE_GETATTR, e.nodeid, &gi, sizeof(gi), &ao, sizeof(ao), NULL);
        check(r == 0 || r == -EBADF, "thread %u: GETATTR of a forgotten node = %d", w->t, r);
        check(r != 0 || ao.attr.ino == ctx->victim_ino, "thread %u: the node became inode %llu", w->t,
              (unsigned long long)ao.attr.ino);
        check_errno(close_file(ctx, w->queue, e.nodeid, fh, w->owner, false), 0);
}

/* One round: the leader takes the lock; the others block in SETLKW on it;
 * one of them is interrupted (EINTR, no lock); FORGETs fly meanwhile; the
 * leader closes its file and the remaining two get the lock in turn, each
 * closing its file to hand it on. */
static void round_run(struct worker *w, unsigned round)
{
        struct ctx *ctx = w->ctx;
        unsigned leader = round % THREADS, interrupted = (round + 1) % THREADS;
        bool flocked = round % 2 == 1;
        uint64_t node = ctx->counter_node, fh = 0;
        struct fuse_lk_in lk;
        struct vmm_op wait_op = { 0 };
        bool waiting = false;   /* wait_op was sent and has no reply yet */

        check_errno(open_file(ctx, w->queue, node, &fh), 0);
        lk = lock_arg(w, fh, flocked);
        if (w->t == leader)
                check_errno(call(ctx, w->queue, FUSE_SETLK, node, &lk, sizeof(lk), NULL, 0, NULL), 0);
        pthread_barrier_wait(&ctx->barrier);

        if (w->t != leader) {
                struct fuse_getattr_in gi = { 0 };
                struct fuse_attr_out ao;

                wait_op = (struct vmm_op){ .queue = w->queue, .opcode = FUSE_SETLKW, .nodeid = node,
                                           .arg_cnt = 1, .arg = { { &lk, sizeof(lk) } } };
                waiting = !failed(ctx) && vmm_op_submit(ctx->v, &wait_op) == 0;
                check(waiting || failed(ctx), "thread %u: SETLKW not sent", w->t);
                /* Answered after the SETLKW was taken: it waits in the worker now. */
                check_errno(call(ctx, w->queue, FUSE_GETATTR, node, &gi, sizeof(gi), &ao, sizeof(ao), NULL), 0);
                if (waiting)
                        check_errno(vmm_op_wait(ctx->v, &wait_op, 0), -ETIMEDOUT);
        }
        pthread_barrier_wait(&ctx->barrier);

        if (w->t == interrupted) {
                /* Ctrl-C of the blocked process: the kernel sends INTERRUPT. */
                struct fuse_interrupt_in ii = { .unique = wait_op.unique };

                check_errno(hiprio(ctx, FUSE_INTERRUPT, 0, &ii, sizeof(ii)), 0);
                if (waiting && !failed(ctx)) {
                        check_errno(vmm_op_wait(ctx->v, &wait_op, -1), 0);
                        check_errno(wait_op.error, -EINTR);
                }
        }
        victim_phase(w, w->t == leader);
        pthread_barrier_wait(&ctx->barrier);

        if (w->t == leader) {
                locked_increment(w, fh);
        } else if (w->t != interrupted && waiting && !failed(ctx)) {
                check_errno(vmm_op_wait(ctx->v, &wait_op, -1), 0);
                check_errno(wait_op.error, 0);
                if (wait_op.error == 0)
                        locked_increment(w, fh);
        }
        /* The lock goes with the file: the next waiter (or round) gets it. */
        check_errno(close_file(ctx, w->queue, node, fh, w->owner, flocked), 0);
        pthread_barrier_wait(&ctx->barrier);
}

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct ctx *ctx = w->ctx;
        struct fuse_entry_out e;

        /* Each thread's own lookup of the counter: its nodeid is the same for all. */
        check_errno(lookup(ctx, w->queue, "counter", &e), 0);
        check(e.nodeid == ctx->counter_node, "thread %u: counter is node %llu", w->t,
              (unsigned long long)e.nodeid);
        pthread_barrier_wait(&ctx->barrier);
        for (unsigned round = 0; round < ROUNDS; round++)
                round_run(w, round);
        check_errno(forget(ctx, ctx->counter_node, 1), 0);
        return NULL;
}

/* A host process's open file with a POSIX (OFD) and a flock() write lock on
 * rel: the fd, or -errno when either lock is taken. */
static int host_lock_both(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        int fd = open(path, O_RDWR | O_CLOEXEC), err;

        g_assert_cmpint(fd, >=, 0);
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
                return fd;
        err = -errno;
        close(fd);
        return err;
}

/* A worker with four request queues and a frontend that drives them all,
 * with a per-request timeout generous enough for TSan on a loaded machine. */
static void start_four_queues(Harness *h)
{
        const char *const extra[] = { "--queues=4", NULL };
        struct vmm_config cfg = { .request_queues = THREADS, .timeout_ms = 30000 };

        harness_start(h, extra);
        h->vmm = harness_connect(h, &cfg);
        g_assert_cmpuint(vmm_request_queues(h->vmm), ==, THREADS);
}

static void test_locks_forgets_on_all_queues(void)
{
        if (!harness_require_sluice("legacy virtiofsd has no --queues and no blocking locks"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "counter", "0");
        harness_write(h, "victim", "victim");
        start_four_queues(h);

        struct ctx c = { .h = h, .v = h->vmm }, *ctx = &c;
        struct fuse_entry_out e;
        g_autofree char *victim = harness_path(h, "victim");
        struct stat st;
        g_assert_cmpint(stat(victim, &st), ==, 0);
        c.victim_ino = st.st_ino;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "counter", &e));
        c.counter_node = e.nodeid;
        pthread_barrier_init(&c.barrier, NULL, THREADS);
        pthread_mutex_init(&c.hiprio, NULL);

        struct worker w[THREADS];
        pthread_t tid[THREADS];
        for (unsigned t = 0; t < THREADS; t++) {
                w[t] = (struct worker){ .ctx = ctx, .t = t, .queue = t + 1, .owner = 0x1000 + t };
                g_assert_cmpint(pthread_create(&tid[t], NULL, worker_main, &w[t]), ==, 0);
        }
        /* The counters dumped (main loop) while the queues update them. */
        for (int i = 0; i < 3; i++)
                g_assert_cmpint(kill(h->pid, SIGUSR1), ==, 0);
        for (unsigned t = 0; t < THREADS; t++)
                pthread_join(tid[t], NULL);
        if (atomic_load(&c.failed))
                return;   /* reported; the worker may be gone */

        /* Every acquisition counted once: the lock excluded, no reply was lost. */
        g_assert_cmpint(atomic_load(&c.acquisitions), ==, ROUNDS * (THREADS - 1));
        g_autofree char *count = harness_read(h, "counter");
        g_autofree char *want = g_strdup_printf("%d", ROUNDS * (THREADS - 1));
        g_assert_cmpstr(count, ==, want);
        /* No lock outlived its file: a host process takes both kinds at once. */
        int fd = host_lock_both(h, "counter");
        g_assert_cmpint(fd, >=, 0);
        close(fd);
        /* The worker is alive and the victim still reachable by name. */
        harness_assert_alive(h);
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "victim", &e));
        g_assert_cmpuint(e.attr.ino, ==, c.victim_ino);
        assert_ok(vmm_forget(h->vmm, e.nodeid, 1));
        assert_ok(vmm_forget(h->vmm, c.counter_node, 1));
        pthread_mutex_destroy(&c.hiprio);
        pthread_barrier_destroy(&c.barrier);
}

/* ---- ring stops while every queue has SETLKWs waiting ---- */

struct stopper {
        struct ctx *ctx;
        unsigned t, queue;
        uint64_t node;
        int posix_result, flock_result;   /* the SETLKWs' FUSE errors */
};

static void *waiter_main(void *arg)
{
        struct stopper *s = arg;
        struct ctx *ctx = s->ctx;
        uint64_t fh_posix = 0, fh_flock = 0;
        struct fuse_getattr_in gi = { 0 };
        struct fuse_attr_out ao;

        check_errno(open_file(ctx, s->queue, s->node, &fh_posix), 0);
        check_errno(open_file(ctx, s->queue, s->node, &fh_flock), 0);
        struct worker w = { .ctx = ctx, .t = s->t, .queue = s->queue, .owner = 0x2000 + s->t };
        struct fuse_lk_in lk_posix = lock_arg(&w, fh_posix, false), lk_flock = lock_arg(&w, fh_flock, true);
        struct vmm_op posix = { .queue = s->queue, .opcode = FUSE_SETLKW, .nodeid = s->node,
                                .arg_cnt = 1, .arg = { { &lk_posix, sizeof(lk_posix) } } };
        struct vmm_op flocked = { .queue = s->queue, .opcode = FUSE_SETLKW, .nodeid = s->node,
                                  .arg_cnt = 1, .arg = { { &lk_flock, sizeof(lk_flock) } } };
        bool sent = !failed(ctx) && vmm_op_submit(ctx->v, &posix) == 0 &&
                    vmm_op_submit(ctx->v, &flocked) == 0;

        check(sent || failed(ctx), "thread %u: SETLKWs not sent", s->t);
        /* Both wait in the worker once this is answered. */
        check_errno(call(ctx, s->queue, FUSE_GETATTR, s->node, &gi, sizeof(gi), &ao, sizeof(ao), NULL), 0);
        pthread_barrier_wait(&ctx->barrier);
        /* The main thread stops the rings now: each SETLKW gets one reply. */
        if (sent && !failed(ctx)) {
                check_errno(vmm_op_wait(ctx->v, &posix, -1), 0);
                check_errno(vmm_op_wait(ctx->v, &flocked, -1), 0);
                s->posix_result = posix.error;
                s->flock_result = flocked.error;
        }
        return NULL;
}

/* GET_VRING_BASE of each queue in turn while all four have a POSIX and a
 * flock() SETLKW waiting, the host's locks let go halfway, so that waiters
 * win their lock while other rings stop: every SETLKW gets exactly one
 * reply (EINTR, or success for at most one per lock), the worker lives,
 * and the next frontend's session starts with none of the old locks. */
static void test_ring_stops_with_waiters(void)
{
        if (!harness_require_sluice("legacy virtiofsd has no --queues and no blocking locks"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "file", "x");
        start_four_queues(h);

        /* The host holds both kinds of lock: every SETLKW must wait. */
        int holder = host_lock_both(h, "file");
        g_assert_cmpint(holder, >=, 0);

        struct ctx c = { .h = h, .v = h->vmm }, *ctx = &c;
        struct fuse_entry_out e;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e));
        pthread_barrier_init(&c.barrier, NULL, THREADS + 1);
        pthread_mutex_init(&c.hiprio, NULL);
        struct stopper st[THREADS];
        pthread_t tid[THREADS];
        for (unsigned t = 0; t < THREADS; t++) {
                st[t] = (struct stopper){ .ctx = ctx, .t = t, .queue = t + 1, .node = e.nodeid,
                                          .posix_result = 1, .flock_result = 1 };
                g_assert_cmpint(pthread_create(&tid[t], NULL, waiter_main, &st[t]), ==, 0);
        }
        pthread_barrier_wait(&c.barrier);
        for (unsigned q = 1; q <= THREADS; q++) {
                if (q == THREADS / 2 + 1)
                        close(holder);   /* the remaining waiters may win now */
                assert_ok(vmm_get_vring_base(h->vmm, q, NULL));
        }
        for (unsigned t = 0; t < THREADS; t++)
                pthread_join(tid[t], NULL);
        if (atomic_load(&c.failed))
                return;

        unsigned posix_won = 0, flock_won = 0;
        for (unsigned t = 0; t < THREADS; t++) {
                bool early = st[t].queue <= THREADS / 2;   /* stopped while the host held both */

                g_assert_true(st[t].posix_result == -EINTR || (!early && st[t].posix_result == 0));
                g_assert_true(st[t].flock_result == -EINTR || (!early && st[t].flock_result == 0));
                posix_won += st[t].posix_result == 0;
                flock_won += st[t].flock_result == 0;
        }
        g_test_message("SETLKWs that won their lock while the rings stopped: %u POSIX, %u flock",
                       posix_won, flock_won);
        g_assert_cmpuint(posix_won, <=, 1);
        g_assert_cmpuint(flock_won, <=, 1);

        /* A new frontend: a new session, which holds none of the old locks. */
        harness_assert_alive(h);
        vmm_free(h->vmm);
        h->vmm = harness_connect(h, NULL);
        int fd = host_lock_both(h, "file");
        g_assert_cmpint(fd, >=, 0);
        close(fd);
        struct fuse_attr a;
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "file", &e));
        assert_ok(vmm_getattr(h->vmm, e.nodeid, &a));
        harness_assert_alive(h);
        pthread_mutex_destroy(&c.hiprio);
        pthread_barrier_destroy(&c.barrier);
}

/* ---- a new session on one queue while the others are busy ---- */

#define RESET_ITERATIONS 60
#define RESETS           4

struct busy {
        struct ctx *ctx;
        unsigned t, queue;
        char name[8];
        unsigned ok;                /* iterations that saw the file's content */
};

/* Name lookups and reads, as a guest process does them, on one queue: after
 * a session reset elsewhere the nodeids and fhs of the old session are stale
 * (EBADF); no other error, never wrong data, and every request answered. */
static void *busy_main(void *arg)
{
        struct busy *b = arg;
        struct ctx *ctx = b->ctx;

        pthread_barrier_wait(&ctx->barrier);
        for (unsigned i = 0; i < RESET_ITERATIONS && !failed(ctx); i++) {
                struct fuse_entry_out e = { 0 };
                struct fuse_read_in rd = { .size = 16 };
                char buf[16];
                size_t got = 0;
                uint64_t fh = 0;
                int r = lookup(ctx, b->queue, b->name, &e);

                check(r == 0, "thread %u: LOOKUP = %d", b->t, r);
                if (r < 0)
                        continue;
                r = open_file(ctx, b->queue, e.nodeid, &fh);
                check(r == 0 || r == -EBADF, "thread %u: OPEN = %d", b->t, r);
                if (r == 0) {
                        rd.fh = fh;
                        r = call(ctx, b->queue, FUSE_READ, e.nodeid, &rd, sizeof(rd), buf, sizeof(buf), &got);
                        check(r == 0 || r == -EBADF, "thread %u: READ = %d", b->t, r);
                        check(r != 0 || (got == strlen(b->name) && memcmp(buf, b->name, got) == 0),
                              "thread %u: READ gave %zu bytes of something else", b->t, got);
                        b->ok += r == 0;
                        r = close_file(ctx, b->queue, e.nodeid, fh, 0x3000 + b->t, false);
                        check(r == 0 || r == -EBADF, "thread %u: FLUSH/RELEASE = %d", b->t, r);
                }
                check_errno(forget(ctx, e.nodeid, 1), 0);
        }
        return NULL;
}

/* A hostile guest: INIT again (a new session, no DESTROY) on queue 1 while
 * queues 2–4 look up, open, read and close.  The old session's inodes and
 * handles go while the other queue threads use them. */
static void test_reinit_while_busy(void)
{
        if (!harness_require_sluice("legacy virtiofsd has no --queues"))
                return;
        g_autoptr(Harness) h = harness_new();
        struct busy b[THREADS];
        for (unsigned t = 1; t < THREADS; t++) {
                b[t] = (struct busy){ .t = t, .queue = t + 1 };
                g_snprintf(b[t].name, sizeof(b[t].name), "f%u", t);
                harness_write(h, b[t].name, b[t].name);
        }
        start_four_queues(h);
        struct ctx c = { .h = h, .v = h->vmm }, *ctx = &c;
        pthread_barrier_init(&c.barrier, NULL, THREADS);
        pthread_mutex_init(&c.hiprio, NULL);
        pthread_t tid[THREADS];
        for (unsigned t = 1; t < THREADS; t++) {
                b[t].ctx = ctx;
                g_assert_cmpint(pthread_create(&tid[t], NULL, busy_main, &b[t]), ==, 0);
        }
        pthread_barrier_wait(&c.barrier);
        for (unsigned i = 0; i < RESETS && !failed(ctx); i++) {
                struct fuse_attr a;

                check_errno(vmm_init(h->vmm, NULL), 0);
                for (unsigned k = 0; k < 10; k++)
                        check_errno(vmm_getattr(h->vmm, VMM_ROOT, &a), 0);
        }
        for (unsigned t = 1; t < THREADS; t++)
                pthread_join(tid[t], NULL);
        if (atomic_load(&c.failed))
                return;
        harness_assert_alive(h);
        /* The session that is left works on every queue. */
        for (unsigned t = 1; t < THREADS; t++) {
                struct fuse_entry_out e;

                g_test_message("queue %u: %u of %u reads succeeded", b[t].queue, b[t].ok, RESET_ITERATIONS);
                assert_ok(lookup(ctx, b[t].queue, b[t].name, &e));
                g_assert_cmpuint(e.attr.size, ==, strlen(b[t].name));
        }
        pthread_mutex_destroy(&c.hiprio);
        pthread_barrier_destroy(&c.barrier);
}

static const struct concurrency_test {
        const char *path;
        void (*fn)(void);
} tests[] = {
        { "/concurrency/locks-forgets-on-all-queues", test_locks_forgets_on_all_queues },
        { "/concurrency/ring-stops-with-waiters", test_ring_stops_with_waiters },
        { "/concurrency/reinit-while-busy", test_reinit_while_busy },
};

/* After a failure the later tests are skipped: a worker that died (a TSan
 * report kills it) costs each request its whole timeout, and three tests of
 * that would outlast the suite's timeout, hiding the report behind it. */
static void run_unless_one_failed(gconstpointer data)
{
        static bool one_failed;
        const struct concurrency_test *t = data;

        if (one_failed) {
                g_test_skip("an earlier test failed");
                return;
        }
        t->fn();
        one_failed = g_test_failed();
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        for (size_t i = 0; i < G_N_ELEMENTS(tests); i++)
                g_test_add_data_func(tests[i].path, &tests[i], run_unless_one_failed);
        return g_test_run();
}
