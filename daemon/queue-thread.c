/* queue-thread.c — see queue-thread.h. */
#include "queue-thread.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cpu-spare.h"
#include "log.h"

/* The token handed to fs_process(): the slot of the chain's head, so that a
 * deferred completion knows which chain to return (heads are unique while in
 * flight) and whether the ring it came from still exists. */
struct qt_deferred {
        unsigned generation;
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
        /* Guards generation against a deferred completion racing a ring reset. */
        pthread_mutex_t complete_lock;
        unsigned generation;
        struct qt_deferred deferred[VQ_MAX_SIZE];
        struct vq_elem elem;   /* the chain being processed: no allocation per request */
};

static void complete_deferred(void *token, size_t len, void *userdata)
{
        struct queue_thread *qt = userdata;
        struct qt_deferred *d = token;
        uint16_t head;

        if (d < qt->deferred || d >= qt->deferred + VQ_MAX_SIZE) {
                log_error("queue %u: completion with a token that is not ours", qt->index);
                return;
        }
        head = (uint16_t)(d - qt->deferred);
        pthread_mutex_lock(&qt->complete_lock);
        if (d->generation == qt->generation) {
                vq_push(qt->vq, head, (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len));
                vq_notify(qt->vq);
                stats_add(&qt->stats->requests, 1);
        }
        pthread_mutex_unlock(&qt->complete_lock);
        atomic_fetch_sub_explicit(&qt->stats->in_flight, 1, memory_order_relaxed);
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
        qt->stats = &stats->queue[index <= FS_MAX_QUEUES ? index : FS_MAX_QUEUES];
        qt->kick_fd = -1;
        atomic_init(&qt->stop, false);
        pthread_mutex_init(&qt->complete_lock, NULL);
        qt->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (qt->stop_fd < 0) {
                r = -errno;
                free(qt);
                return r;
        }
        r = fs_worker_new(session, index, &qt->worker);
        if (r < 0) {
                close(qt->stop_fd);
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
        pthread_mutex_destroy(&qt->complete_lock);
        free(qt);
}

bool qt_running(struct queue_thread *qt)
{
        return qt && qt->running;
}

void qt_forget_deferred(struct queue_thread *qt)
{
        pthread_mutex_lock(&qt->complete_lock);
        qt->generation++;
        pthread_mutex_unlock(&qt->complete_lock);
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

/* Pops and processes everything available.  Returns the number of requests. */
static unsigned drain(struct queue_thread *qt, bool polled)
{
        struct vq_elem *e = &qt->elem;
        unsigned n = 0;

        while (!stopping(qt)) {
                struct qt_deferred *token;
                size_t len;

                if (vq_pop(qt->vq, e) <= 0)
                        break;
                stats_add(&qt->stats->in_flight, 1);
                token = &qt->deferred[e->head];
                /* Before fs_process(): the completion may run on another thread at once. */
                pthread_mutex_lock(&qt->complete_lock);
                token->generation = qt->generation;
                pthread_mutex_unlock(&qt->complete_lock);
                len = fs_process(qt->worker, e->iov, e->n_readable, e->iov + e->n_readable,
                                 e->n_writable, token);
                n++;
                if (polled)
                        stats_add(&qt->stats->polled, 1);
                if (len == FS_PROCESS_DEFERRED)
                        continue;
                if (len > e->writable_len) {
                        log_error("queue %u: reply of %zu bytes for a %llu-byte buffer; clamped",
                                  qt->index, len, (unsigned long long)e->writable_len);
                        len = (size_t)e->writable_len;
                }
                vq_push(qt->vq, e->head, (uint32_t)len);
                /* One interrupt per reply: a synchronous guest waits on each one. */
                vq_notify(qt->vq);
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

                if (!vq_avail_empty(qt->vq)) {
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
                if (stopping(qt) || vq_is_broken(qt->vq) || vq_avail_empty(qt->vq))
                        return;
                /* A request arrived between the last check and enabling kicks. */
                vq_set_notification(qt->vq, false);
                drain(qt, true);
        }
}

static void *qt_main(void *arg)
{
        struct queue_thread *qt = arg;

        log_debug("queue %u: thread started (polling up to %u µs)", qt->index, qt->poll_us);
        while (!stopping(qt)) {
                struct pollfd pfd[2] = {
                        { .fd = qt->kick_fd, .events = POLLIN },
                        { .fd = qt->stop_fd, .events = POLLIN },
                };
                uint64_t pause_start, spun_us = 0;
                eventfd_t v;

                if (!vq_is_broken(qt->vq))
                        serve(qt, &spun_us);
                if (stopping(qt))
                        break;
                /* The pause counts from the last reply: the spin is part of it. */
                pause_start = stats_now_usec() - spun_us;
                /* A broken queue waits only for stop: kicks would spin. */
                pfd[0].fd = vq_is_broken(qt->vq) ? -1 : qt->kick_fd;
                if (poll(pfd, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error("queue %u: poll failed: %s", qt->index, strerror(errno));
                        break;
                }
                if (pfd[0].revents & POLLIN) {
                        /* The kick fd is a non-blocking eventfd (vhost-user.c checks):
                         * one read clears it; EAGAIN is a kick someone else took. */
                        if (eventfd_read(qt->kick_fd, &v) == 0)
                                stats_add(&qt->stats->kicks, 1);
                        else if (errno != EAGAIN)
                                vq_set_broken(qt->vq, "the kick fd cannot be read");
                        adapt_window(qt, stats_now_usec() - pause_start);
                } else if (pfd[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
                        /* Waits for stop without the kick fd (a broken queue does not poll it). */
                        vq_set_broken(qt->vq, "the kick fd failed");
                }
        }
        log_debug("queue %u: thread stopped", qt->index);
        return NULL;
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
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = -pthread_create(&qt->thread, NULL, qt_main, qt);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r < 0)
                return r;
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
        qt->running = false;
        qt->kick_fd = -1;
}
