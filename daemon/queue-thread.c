/* SPDX-License-Identifier: GPL-2.0-or-later */
/* queue-thread.c — see queue-thread.h. */
#include "queue-thread.h"

#include <errno.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu-spare.h"
#include "crash-point.h"
#include "log.h"

/* The token handed to fs_process() is a value, not a pointer: the chain's
 * head and the ring generation it was popped in, (generation << 16) | 0x8000
 * | head (the marker bit keeps it non-NULL).  A deferred completion hands it
 * back from another thread; it is pushed only if the generation is still
 * the ring's, so a completion that races a ring reset (qt_forget_deferred())
 * is dropped, and a head the guest reuses after the reset is never answered
 * with the old request's reply.  No per-head state: nothing to race on. */
#define TOKEN_MARK 0x8000u

static uintptr_t token_encode(uint32_t generation, uint16_t head)
{
        return ((uintptr_t)generation << 16) | TOKEN_MARK | head;
}

/* Completions of deferred requests, waiting for the queue thread: the only
 * thread that writes the used ring, so that vq_push()/vq_notify() need no
 * lock.  Deferred requests are rare (a SETLKW that waits), so this list has
 * a mutex; the common path only reads `pending` (one relaxed load). */
#define QT_DONE_MAX (2 * VQ_MAX_SIZE)

struct qt_done {
        uintptr_t token;
        uint32_t len;
};

struct queue_thread {
        struct vq *vq;
        unsigned index;
        unsigned poll_us;      /* --poll-us: the longest the window may grow */
        unsigned window_us;    /* the current polling window, adapted (see adapt_window()) */
        struct fs_worker *worker;
        struct stats_queue *stats;
        pthread_t thread;
        bool running;
        atomic_bool stop;
        int stop_fd;
        int kick_fd;
        /* Bumped when the ring is torn down (main thread); read per pop. */
        _Atomic uint32_t generation;
        unsigned unnotified;   /* replies pushed since the last vq_notify() (queue thread) */
        /* Deferred completions (see struct qt_done). */
        atomic_bool pending;   /* done[] is not empty: set under done_lock, read without */
        /* Deferred requests not completed yet: the sleeping thread polls
         * done_fd only while there are some (one fd less per sleep). */
        atomic_int deferred;
        bool direct;           /* the thread is stopped: completions push at once (done_lock) */
        int done_fd;           /* eventfd: wakes a sleeping queue thread for them */
        pthread_mutex_t done_lock;
        unsigned n_done;
        struct qt_done done[QT_DONE_MAX];
        struct qt_done taken[QT_DONE_MAX];   /* the queue thread's copy, outside the lock */
        struct vq_elem elem;   /* the chain being processed: no allocation per request */
        struct stats *global;
};

/* true (with *ret_head) when token was popped from the current ring. */
static bool token_current(struct queue_thread *qt, uintptr_t token, uint16_t *ret_head)
{
        uint16_t head = (uint16_t)(token & (TOKEN_MARK - 1));

        *ret_head = head;
        /* Re-encoding compares the generation at any uintptr_t width. */
        return token == token_encode(atomic_load_explicit(&qt->generation, memory_order_relaxed), head);
}

/* With the queue thread stopped (done_lock held): the reply of a deferred
 * request popped from the current ring goes out at once. */
static void push_stopped(struct queue_thread *qt, uintptr_t token, uint32_t len)
{
        uint16_t head;

        if (token_current(qt, token, &head)) {
                vq_complete_stopped(qt->vq, head, len);
                stats_add(&qt->stats->requests, 1);
        }
}

/* fs_worker's completion callback: any thread. */
static void complete_deferred(void *token, size_t len, void *userdata)
{
        struct queue_thread *qt = userdata;
        uintptr_t v = (uintptr_t)token;
        uint32_t len32 = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
        bool queued = false;

        if (!(v & TOKEN_MARK) || (v & (TOKEN_MARK - 1)) >= VQ_MAX_SIZE) {
                log_error("queue %u: completion with a token that is not ours", qt->index);
                return;
        }
        pthread_mutex_lock(&qt->done_lock);
        if (qt->direct) {
                /* No queue thread to hand it to (a ring stop or reset is
                 * finishing deferred requests): push it now, serialised with
                 * the ring's teardown by the vq's lock. */
                push_stopped(qt, v, len32);
                pthread_mutex_unlock(&qt->done_lock);
                atomic_fetch_sub_explicit(&qt->deferred, 1, memory_order_release);
                atomic_fetch_sub_explicit(&qt->stats->in_flight, 1, memory_order_relaxed);
                return;
        }
        if (qt->n_done < QT_DONE_MAX) {
                qt->done[qt->n_done++] = (struct qt_done){ .token = v, .len = len32 };
                /* Release: a queue thread that sees it set (acquire) sees the entry. */
                atomic_store_explicit(&qt->pending, true, memory_order_release);
                queued = true;
        }
        pthread_mutex_unlock(&qt->done_lock);
        if (queued)
                (void)eventfd_write(qt->done_fd, 1);
        else   /* more completions than chains a ring can have in flight: a bug */
                log_error("queue %u: too many deferred completions; one is dropped", qt->index);
        /* After `pending` and the wake-up: see qt_main(). */
        atomic_fetch_sub_explicit(&qt->deferred, 1, memory_order_release);
        atomic_fetch_sub_explicit(&qt->stats->in_flight, 1, memory_order_relaxed);
}

/* Queue thread: pushes the deferred completions of the current ring. */
static void push_completions(struct queue_thread *qt)
{
        unsigned n;

        if (!atomic_load_explicit(&qt->pending, memory_order_acquire))
                return;
        pthread_mutex_lock(&qt->done_lock);
        n = qt->n_done;
        memcpy(qt->taken, qt->done, n * sizeof(qt->done[0]));
        qt->n_done = 0;
        atomic_store_explicit(&qt->pending, false, memory_order_relaxed);
        pthread_mutex_unlock(&qt->done_lock);
        for (unsigned i = 0; i < n; i++) {
                uint16_t head;

                if (!token_current(qt, qt->taken[i].token, &head))
                        continue;
                vq_push(qt->vq, head, qt->taken[i].len);
                qt->unnotified++;
                stats_add(&qt->stats->requests, 1);
        }
}

/* The request path's named crash points (crash-point.h), as CRASH_POINT()
 * but with the call out of line and marked cold, so that the drain loop
 * keeps its registers while no point is armed. */
enum { CRASH_AFTER_POP, CRASH_AFTER_FS_CALL };
#if SLUICE_TEST_HOOKS
static void __attribute__((noinline, cold)) crash_at_hit(int which)
{
        crash_point_hit(which == CRASH_AFTER_POP ? "after-pop" : "after-fs-call");
}

static inline void crash_at(int which)
{
        if (__builtin_expect(atomic_load_explicit(&crash_point_armed, memory_order_relaxed), 0))
                crash_at_hit(which);
}
#else
static inline void crash_at(int which)
{
}
#endif

static void notify(struct queue_thread *qt)
{
        if (qt->unnotified == 0)
                return;
        qt->unnotified = 0;
        vq_notify(qt->vq);
}

int qt_new(struct fs_session *session, struct vq *vq, unsigned index, unsigned poll_us,
           struct stats *stats, struct queue_thread **ret)
{
        struct queue_thread *qt;
        int r;

        qt = calloc(1, sizeof(*qt));
        if (!qt)
                return -ENOMEM;
        qt->vq = vq;
        qt->index = index;
        /* Queue 0 carries FORGETs, which nobody waits for: polling it only burns CPU. */
        qt->poll_us = index == 0 ? 0 : poll_us;
        qt->window_us = qt->poll_us;
        qt->stats = &stats->queue[index < STATS_MAX_QUEUES ? index : STATS_MAX_QUEUES - 1];
        qt->global = stats;
        qt->kick_fd = -1;
        atomic_init(&qt->stop, false);
        atomic_init(&qt->generation, 0);
        atomic_init(&qt->pending, false);
        atomic_init(&qt->deferred, 0);
        qt->direct = true;   /* until qt_start() */
        pthread_mutex_init(&qt->done_lock, NULL);
        qt->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        qt->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        r = qt->stop_fd < 0 || qt->done_fd < 0 ? -errno : fs_worker_new(session, index, &qt->worker);
        if (r < 0) {
                if (qt->stop_fd >= 0)
                        close(qt->stop_fd);
                if (qt->done_fd >= 0)
                        close(qt->done_fd);
                pthread_mutex_destroy(&qt->done_lock);
                free(qt);
                return r;
        }
        fs_worker_set_complete(qt->worker, complete_deferred, qt);
        *ret = qt;
        return 0;
}

void qt_free(struct queue_thread *qt)
{
        if (!qt)
                return;
        qt_stop(qt);
        fs_worker_free(qt->worker);
        close(qt->stop_fd);
        close(qt->done_fd);
        pthread_mutex_destroy(&qt->done_lock);
        free(qt);
}

bool qt_running(struct queue_thread *qt)
{
        return qt && qt->running;
}

void qt_forget_deferred(struct queue_thread *qt)
{
        /* Called with the thread stopped (joined) or about to be: a completion
         * of an older generation still in done[] is dropped when the thread
         * next runs.  The thread never pushes into a ring being torn down:
         * vhost-user.c stops it first. */
        atomic_fetch_add_explicit(&qt->generation, 1, memory_order_relaxed);
}

static bool stopping(struct queue_thread *qt)
{
        return atomic_load_explicit(&qt->stop, memory_order_relaxed);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Pops and processes everything available, pushing each reply as soon as it
 * is ready and notifying it at once: whether that becomes an interrupt is the
 * driver's choice (EVENT_IDX's used_event, or VRING_AVAIL_F_NO_INTERRUPT),
 * and a driver that is busy taking replies has said it wants none.  Holding
 * back the interrupt to cover a run of replies looked cheaper, but it keeps
 * a waiting driver asleep while we work through the run, so it cannot refill
 * the ring in parallel: GETATTR at 16 outstanding went from 370k to 670k/s on
 * the protocol benchmark when we stopped doing it (bench/README.md).
 * Returns the number of requests. */
static unsigned drain(struct queue_thread *qt, bool polled)
{
        struct vq_elem *e = &qt->elem;
        unsigned n = 0;

        push_completions(qt);
        notify(qt);
        while (!stopping(qt)) {
                uint32_t generation = atomic_load_explicit(&qt->generation, memory_order_relaxed);
                size_t len;

                /* The usual end of a drain, answered inline without a call;
                 * vq_pop() makes every other check (a broken queue included). */
                if (vq_avail_empty(qt->vq) || vq_pop(qt->vq, e) <= 0)
                        break;
                crash_at(CRASH_AFTER_POP);
                stats_add(&qt->stats->in_flight, 1);
                len = fs_process(qt->worker, e->iov, e->n_readable, e->iov + e->n_readable,
                                 e->n_writable, (void *)token_encode(generation, e->head));
                crash_at(CRASH_AFTER_FS_CALL);
                n++;
                if (polled)
                        stats_add(&qt->stats->polled, 1);
                if (len == FS_PROCESS_DEFERRED) {
                        /* The completion may already have run (and counted
                         * down first): the count only asks "poll done_fd?". */
                        atomic_fetch_add_explicit(&qt->deferred, 1, memory_order_relaxed);
                        continue;
                }
                if (len > e->writable_len) {
                        log_error("queue %u: reply of %zu bytes for a %llu-byte buffer; clamped",
                                  qt->index, len, (unsigned long long)e->writable_len);
                        len = (size_t)e->writable_len;
                }
                vq_push(qt->vq, e->head, (uint32_t)len);
                qt->unnotified++;
                notify(qt);
                stats_add(&qt->stats->requests, 1);
                atomic_fetch_sub_explicit(&qt->stats->in_flight, 1, memory_order_relaxed);
        }
        if (n)
                stats_add(&qt->stats->batches, 1);
        return n;
}

#define POLL_GROW_START_US 10

/* Adapts the polling window to how long the guest really paused before the
 * kick that woke us (idle_us), the way KVM's halt-polling does: a pause that
 * a longer window (up to --poll-us) would have caught grows it; a longer one
 * shrinks it.  A guest that answers within microseconds (spare host cores)
 * gets polled; one that takes longer (TCG, an oversubscribed host, where the
 * spinning thread would steal the CPU the guest needs) does not. */
static void adapt_window(struct queue_thread *qt, uint64_t idle_us)
{
        if (qt->poll_us == 0)
                return;
        if (idle_us <= qt->poll_us) {
                if (qt->window_us < idle_us)
                        qt->window_us = qt->window_us ? qt->window_us * 2 : POLL_GROW_START_US;
                if (qt->window_us > qt->poll_us)
                        qt->window_us = qt->poll_us;
        } else {
                qt->window_us /= 2;
                if (qt->window_us < POLL_GROW_START_US)
                        qt->window_us = 0;
        }
}

/* Spins for up to window_us waiting for the next request; returns true when
 * one came.  Gives up early when spinning would take a CPU someone else
 * needs (cpu-spare.h): *spun_us says how long it really spun. */
static bool spin(struct queue_thread *qt, uint64_t *spun_us)
{
        uint64_t start = stats_now_usec(), now = start, deadline = start + qt->window_us;

        while (!stopping(qt) && !vq_is_broken(qt->vq) && now < deadline) {
                uint64_t before = now;

                if (!vq_avail_empty(qt->vq) ||
                    atomic_load_explicit(&qt->pending, memory_order_relaxed)) {
                        *spun_us = now - start;
                        return true;
                }
                cpu_relax();
                now = stats_now_usec();
                /* An iteration takes well under a µs: a gap this long means
                 * the kernel gave our CPU to someone runnable, who needs it. */
                if (now - before > CPU_SPARE_PREEMPT_GAP_US) {
                        cpu_spare_preempted(now);
                        stats_add(&qt->stats->poll_refused, 1);
                        break;
                }
        }
        *spun_us = now - start;
        return false;
}

/* Drain after a kick, then poll; returns with notifications enabled and the
 * ring empty (or broken, or asked to stop).  *spun_us: how long the last
 * spin lasted (0 when refused), which is part of the guest's pause. */
static void serve(struct queue_thread *qt, uint64_t *spun_us)
{
        vq_set_notification(qt->vq, false);
        drain(qt, false);
        for (;;) {
                *spun_us = 0;
                if (qt->window_us > 0) {
                        /* Checked before every spin, not per iteration: the
                         * sample behind it is taken every few ms at most. */
                        if (!cpu_spare_available(stats_now_usec()))
                                stats_add(&qt->stats->poll_refused, 1);
                        else
                                while (spin(qt, spun_us) && cpu_spare_available(stats_now_usec()))
                                        drain(qt, true);
                }
                vq_set_notification(qt->vq, true);
                if (stopping(qt) || vq_is_broken(qt->vq) ||
                    (vq_avail_empty(qt->vq) && !atomic_load_explicit(&qt->pending, memory_order_relaxed)))
                        return;
                /* A request arrived between the last check and enabling kicks. */
                vq_set_notification(qt->vq, false);
                drain(qt, true);
        }
}

/* poll() and eventfd_read() without glibc's wrappers, which are cancellation
 * points and bracket every call with cancellation bookkeeping that a queue
 * thread (never cancelled) does not need: the same system calls (ppoll, as
 * glibc's poll() makes on architectures without poll; read), fewer
 * instructions on every sleep.  -1 with errno on failure. */
static int sleep_on(struct pollfd *pfd, unsigned n)
{
        return (int)syscall(SYS_ppoll, pfd, (unsigned long)n, NULL, NULL, 0);
}

static int take_eventfd(int fd, eventfd_t *ret)
{
        long r = syscall(SYS_read, fd, ret, sizeof(*ret));

        if (r == (long)sizeof(*ret))
                return 0;
        if (r >= 0)
                errno = EIO;
        return -1;
}

/* The reply a request gets when it cannot be run again: EIO, for the
 * unique in its header.  Returns the reply's length (0 when the chain has
 * no room for a header or no request header to answer). */
static size_t reply_eio(const struct vq_elem *e)
{
        struct fuse_in_header in;
        struct fuse_out_header out;
        size_t got = 0;
        const struct iovec *w = e->iov + e->n_readable;
        const uint8_t *src = (const uint8_t *)&out;
        size_t left = sizeof(out);

        for (unsigned i = 0; i < e->n_readable && got < sizeof(in); i++) {
                size_t n = e->iov[i].iov_len < sizeof(in) - got ? e->iov[i].iov_len : sizeof(in) - got;

                memcpy((uint8_t *)&in + got, e->iov[i].iov_base, n);
                got += n;
        }
        if (got < sizeof(in) || e->writable_len < sizeof(out))
                return 0;
        out = (struct fuse_out_header){ .len = sizeof(out), .error = -EIO, .unique = in.unique };
        for (unsigned i = 0; i < e->n_writable && left; i++) {
                size_t n = w[i].iov_len < left ? w[i].iov_len : left;

                memcpy(w[i].iov_base, src, n);
                src += n;
                left -= n;
        }
        return sizeof(out);
}

void qt_resume_in_flight(struct queue_thread *qt, const uint16_t *heads, unsigned n,
                         bool replay, unsigned *n_replayed, unsigned *n_failed)
{
        struct vq_elem *e = &qt->elem;
        uint32_t generation = atomic_load_explicit(&qt->generation, memory_order_relaxed);

        for (unsigned i = 0; i < n; i++) {
                bool replayed = false;
                size_t len;

                if (vq_elem_at(qt->vq, heads[i], e) < 0)
                        break;
                stats_add(&qt->stats->in_flight, 1);
                if (replay)
                        len = fs_process_again(qt->worker, e->iov, e->n_readable,
                                               e->iov + e->n_readable, e->n_writable,
                                               (void *)token_encode(generation, e->head), &replayed);
                else
                        len = reply_eio(e);
                stats_add(replayed ? &qt->global->resume_replayed : &qt->global->resume_failed, 1);
                (*(replayed ? n_replayed : n_failed))++;
                /* The thread is not running: its completion pushes directly. */
                if (len == FS_PROCESS_DEFERRED) {
                        atomic_fetch_add_explicit(&qt->deferred, 1, memory_order_relaxed);
                        continue;
                }
                if (len > e->writable_len)
                        len = (size_t)e->writable_len;
                vq_push(qt->vq, e->head, (uint32_t)len);
                stats_add(&qt->stats->requests, 1);
                atomic_fetch_sub_explicit(&qt->stats->in_flight, 1, memory_order_relaxed);
        }
        vq_notify_force(qt->vq);
}

static void *qt_main(void *arg)
{
        struct queue_thread *qt = arg;

        log_debug("queue %u: thread started (polling up to %u µs)", qt->index, qt->poll_us);
        while (!stopping(qt)) {
                struct pollfd pfd[3] = {
                        { .fd = qt->kick_fd, .events = POLLIN },
                        { .fd = qt->stop_fd, .events = POLLIN },
                        { .fd = qt->done_fd, .events = POLLIN },
                };
                uint64_t pause_start, spun_us = 0;
                eventfd_t v;

                if (!vq_is_broken(qt->vq))
                        serve(qt, &spun_us);
                if (stopping(qt))
                        break;
                /* The pause counts from the last reply: the spin is part of it.
                 * A queue that never polls has no window to adapt, nor a clock to read. */
                pause_start = qt->poll_us ? stats_now_usec() - spun_us : 0;
                /* Without deferred requests no completion can come.  A count
                 * that reached 0 was decremented after `pending` was set
                 * (release/acquire): re-check it instead of missing it. */
                if (atomic_load_explicit(&qt->deferred, memory_order_acquire) == 0) {
                        if (atomic_load_explicit(&qt->pending, memory_order_acquire) &&
                            !vq_is_broken(qt->vq))
                                continue;
                        pfd[2].fd = -1;
                }
                /* A broken queue waits only for stop: kicks and completions would spin. */
                if (vq_is_broken(qt->vq))
                        pfd[0].fd = pfd[2].fd = -1;
                if (sleep_on(pfd, 3) < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error("queue %u: poll failed: %s", qt->index, strerror(errno));
                        break;
                }
                if (pfd[0].revents & POLLIN) {
                        /* The kick fd is a non-blocking eventfd (vhost-user.c checks):
                         * one read clears it; EAGAIN is a kick someone else took. */
                        if (take_eventfd(qt->kick_fd, &v) == 0)
                                stats_add(&qt->stats->kicks, 1);
                        else if (errno != EAGAIN)
                                vq_set_broken(qt->vq, "the kick fd cannot be read");
                        if (qt->poll_us)
                                adapt_window(qt, stats_now_usec() - pause_start);
                } else if (pfd[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
                        /* Waits for stop without the kick fd (a broken queue does not poll it). */
                        vq_set_broken(qt->vq, "the kick fd failed");
                }
                /* Cleared before serve() looks at `pending`: no completion is missed. */
                if (pfd[2].revents & POLLIN)
                        (void)take_eventfd(qt->done_fd, &v);
        }
        log_debug("queue %u: thread stopped", qt->index);
        return NULL;
}

/* Switches between handing completions to the running thread and pushing
 * them at once (stopped); going direct pushes what is waiting. */
static void set_direct(struct queue_thread *qt, bool direct)
{
        pthread_mutex_lock(&qt->done_lock);
        qt->direct = direct;
        for (unsigned i = 0; direct && i < qt->n_done; i++)
                push_stopped(qt, qt->done[i].token, qt->done[i].len);
        if (direct) {
                qt->n_done = 0;
                atomic_store_explicit(&qt->pending, false, memory_order_relaxed);
        }
        pthread_mutex_unlock(&qt->done_lock);
}

int qt_start(struct queue_thread *qt, int kick_fd)
{
        sigset_t all, old;
        int r;

        if (qt->running)
                return 0;
        qt->kick_fd = kick_fd;
        atomic_store(&qt->stop, false);
        /* Signals belong to the main loop (signalfd): the thread blocks them
         * all but the synchronous ones, which a blocked mask would turn into
         * death: SIGBUS from a shrunk guest memory file has a handler
         * (guest-memory.c). */
        sigfillset(&all);
        sigdelset(&all, SIGBUS);
        sigdelset(&all, SIGSEGV);
        sigdelset(&all, SIGFPE);
        sigdelset(&all, SIGILL);
        /* From now on completions go through done[] to the thread. */
        set_direct(qt, false);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = -pthread_create(&qt->thread, NULL, qt_main, qt);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r < 0) {
                set_direct(qt, true);
                return r;
        }
        qt->running = true;
        return 0;
}

void qt_stop(struct queue_thread *qt)
{
        eventfd_t v;

        if (!qt->running)
                return;
        atomic_store(&qt->stop, true);
        (void)eventfd_write(qt->stop_fd, 1);
        pthread_join(qt->thread, NULL);
        (void)eventfd_read(qt->stop_fd, &v);
        /* The ring is ours again: what the thread left in done[] is pushed
         * now, and later completions push at once (the ring's teardown, by
         * the caller, may be waiting to finish them: vhost-user.c). */
        set_direct(qt, true);
        qt->running = false;
        qt->kick_fd = -1;
}
