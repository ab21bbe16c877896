/* pt-lock.c — locks: GETLK, SETLK, SETLKW, the guest's lock owners and the
 * SETLKWs that have to wait.
 *
 * POSIX locks are taken as OFD locks, one open file description per guest
 * lock owner and inode (a host process has one pid for all guest processes);
 * flock() locks belong to the guest's handle.  A SETLKW on a contended lock
 * is deferred (freq_defer()): a thread of its own retries the non-blocking
 * lock with a 1 → 20 ms backoff and finishes the request when it gets the
 * lock, when INTERRUPT or a ring stop ends it with EINTR, or drops it without
 * a reply when the session is reset. */
#include "pt-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"

/* ---- lock owners ---- */

/* What an owner holds, as far as we applied it: F_GETLK's answer names the
 * guest process holding the conflicting lock (OFD locks have no pid of their
 * own), which the guest kernel passes on as l_pid. */
struct pt_lock_range {
        uint64_t start, end;     /* inclusive */
        uint32_t type;           /* F_RDLCK or F_WRLCK */
};

/* Ranges per owner we keep track of; beyond, the owner "may hold anything". */
#define LOCK_RANGES_MAX 64

struct pt_lock_owner {
        uint64_t owner;
        int fd;
        uint32_t pid;            /* the guest's pid of the latest lock (lk.pid) */
        bool ranges_lost;        /* more than LOCK_RANGES_MAX: ranges unknown */
        unsigned n_ranges;
        struct pt_lock_range *ranges;
        struct pt_lock_owner *next;
};

static void lock_owner_free(struct pt_lock_owner *o)
{
        (void) close(o->fd);
        free(o->ranges);
        free(o);
}

void pt_lock_owners_free(struct inode *inode)
{
        struct pt_lock_owner *o = inode->lock_owners;

        while (o) {
                struct pt_lock_owner *next = o->next;

                lock_owner_free(o);
                o = next;
        }
        inode->lock_owners = NULL;
}

static bool ranges_overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end)
{
        return a_start <= b_end && b_start <= a_end;
}

/* Applies a successful lock call of type `type` on [start, end] to o's
 * ranges, with POSIX semantics: the new range replaces whatever o held there. */
static void ranges_apply(struct pt_lock_owner *o, uint64_t start, uint64_t end, uint32_t type)
{
        unsigned n = 0, need = o->n_ranges + 2;
        struct pt_lock_range *out;

        if (o->ranges_lost)
                return;
        out = malloc(need * sizeof(*out));
        if (!out || need > LOCK_RANGES_MAX + 2)
                goto lost;
        for (unsigned k = 0; k < o->n_ranges; k++) {
                struct pt_lock_range cur = o->ranges[k];

                if (!ranges_overlap(cur.start, cur.end, start, end)) {
                        out[n++] = cur;
                        continue;
                }
                if (cur.start < start)
                        out[n++] = (struct pt_lock_range){ cur.start, start - 1, cur.type };
                if (cur.end > end)
                        out[n++] = (struct pt_lock_range){ end + 1, cur.end, cur.type };
        }
        if (type != F_UNLCK)
                out[n++] = (struct pt_lock_range){ start, end, type };
        if (n > LOCK_RANGES_MAX)
                goto lost;
        free(o->ranges);
        o->ranges = out;
        o->n_ranges = n;
        return;
lost:
        free(out);
        free(o->ranges);
        o->ranges = NULL;
        o->n_ranges = 0;
        o->ranges_lost = true;
}

/* Records what guest owner `owner` (process `pid`) now holds after a lock
 * call with `fl` succeeded.  An owner gone meanwhile (FLUSH) holds nothing. */
static void lock_owner_note(struct inode *inode, uint64_t owner, uint32_t pid, const struct flock *fl)
{
        uint64_t start = (uint64_t)fl->l_start;
        uint64_t end = fl->l_len == 0 ? (uint64_t)INT64_MAX : start + (uint64_t)fl->l_len - 1;

        pthread_mutex_lock(&inode->lock_mutex);
        for (struct pt_lock_owner *o = inode->lock_owners; o; o = o->next)
                if (o->owner == owner) {
                        if (fl->l_type != F_UNLCK && pid)
                                o->pid = pid;
                        ranges_apply(o, start, end, (uint32_t)fl->l_type);
                        break;
                }
        pthread_mutex_unlock(&inode->lock_mutex);
}

/* The guest pid of the owner (not `asker`) holding a lock of `type` that
 * overlaps [start, end], or 0 when none of ours does (a host process's lock). */
static uint32_t lock_holder_pid(struct inode *inode, uint64_t asker, uint64_t start, uint64_t end,
                                uint32_t type)
{
        uint32_t pid = 0;

        pthread_mutex_lock(&inode->lock_mutex);
        for (struct pt_lock_owner *o = inode->lock_owners; o && !pid; o = o->next) {
                if (o->owner == asker)
                        continue;
                if (o->ranges_lost) {
                        pid = o->pid;
                        continue;
                }
                for (unsigned k = 0; k < o->n_ranges; k++)
                        if (o->ranges[k].type == type &&
                            ranges_overlap(o->ranges[k].start, o->ranges[k].end, start, end)) {
                                pid = o->pid;
                                break;
                        }
        }
        pthread_mutex_unlock(&inode->lock_mutex);
        return pid;
}

static int lock_owner_open(struct inode *inode, int proc_fd, bool may_write)
{
        /* Read and write locks need an fd open for reading resp. writing. */
        int fd = may_write ? confine_reopen(proc_fd, inode->fd, O_RDWR) : -EACCES;

        if (fd == -EACCES || fd == -EISDIR || fd == -ETXTBSY)
                fd = confine_reopen(proc_fd, inode->fd, O_RDONLY);
        if (fd == -EACCES && may_write)
                fd = confine_reopen(proc_fd, inode->fd, O_WRONLY);
        return fd;
}

static int dup_fd(int fd)
{
        int r = fcntl(fd, F_DUPFD_CLOEXEC, 0);

        return r < 0 ? -errno : r;
}

/* A dup of the fd that carries guest lock owner `owner`'s OFD locks on
 * `inode` (the caller closes it; a concurrent FLUSH cannot pull it away).
 * An owner seen for the first time gets an fd (read-write where permitted)
 * when `create`; without it (GETLK, unlocking) a fresh unregistered fd is
 * returned instead, so that queries by made-up owners cost no lasting fd. */
static int lock_owner_fd(const struct pt_fs *fs, struct inode *inode, uint64_t owner, bool may_write,
                         bool create)
{
        int proc_fd = fs->proc_fd;
        struct pt_lock_owner *o;
        _cleanup_close_ int fd = -1;
        unsigned n = 0;
        int r;

        pthread_mutex_lock(&inode->lock_mutex);
        for (o = inode->lock_owners; o; o = o->next, n++)
                if (o->owner == owner) {
                        r = dup_fd(o->fd);
                        goto out;
                }
        if (!create) {
                /* Nothing of this owner's to see or drop: a throwaway open file. */
                pthread_mutex_unlock(&inode->lock_mutex);
                return lock_owner_open(inode, proc_fd, may_write);
        }
        if (n >= INODE_LOCK_OWNERS_MAX) {
                r = -ENOLCK;
                goto out;
        }
        /* Kept as long as the owner's locks: it counts against the guest's share. */
        fd = pt_fd_keep(fs, lock_owner_open(inode, proc_fd, may_write));
        if (fd < 0) {
                r = fd;
                goto out;
        }
        r = dup_fd(fd);
        if (r < 0)
                goto out;
        o = malloc(sizeof(*o));
        if (!o) {
                (void) close(r);
                r = -ENOMEM;
                goto out;
        }
        *o = (struct pt_lock_owner){ .owner = owner, .fd = TAKE_FD(fd) };
        o->next = inode->lock_owners;
        inode->lock_owners = o;
out:
        pthread_mutex_unlock(&inode->lock_mutex);
        return r;
}

void pt_lock_owner_release(struct inode *inode, uint64_t owner)
{
        struct pt_lock_owner **p, *o = NULL;

        pthread_mutex_lock(&inode->lock_mutex);
        for (p = &inode->lock_owners; *p; p = &(*p)->next)
                if ((*p)->owner == owner) {
                        o = *p;
                        *p = o->next;
                        break;
                }
        pthread_mutex_unlock(&inode->lock_mutex);
        if (o)
                lock_owner_free(o);
}

/* ---- GETLK ---- */

static int lk_to_flock(const struct fuse_file_lock *lk, struct flock *fl)
{
        if (lk->type != F_RDLCK && lk->type != F_WRLCK && lk->type != F_UNLCK)
                return -EINVAL;
        if (lk->start > (uint64_t)INT64_MAX || lk->end < lk->start)
                return -EINVAL;
        memset(fl, 0, sizeof(*fl));
        fl->l_type = (short)lk->type;
        fl->l_whence = SEEK_SET;
        fl->l_start = (off_t)lk->start;
        fl->l_len = lk->end >= (uint64_t)INT64_MAX ? 0 : (off_t)(lk->end - lk->start + 1);
        return 0;
}

int pt_getlk(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        PT_ARG(fuse_lk_in, in, r);
        struct fuse_lk_out out = { 0 };
        struct flock fl;
        _cleanup_close_ int fd = -1;
        int err;

        if ((err = lk_to_flock(&in->lk, &fl)) < 0)
                return err;
        if (i->type != S_IFREG)
                return -EINVAL;
        /* A query makes no owner: an owner without locks sees what any fd sees. */
        fd = lock_owner_fd(fs, i, in->owner, !pt_is_readonly(fs), false);
        if (fd < 0)
                return fd;
        if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
                return -errno;
        out.lk.type = (uint32_t)fl.l_type;
        if (fl.l_type != F_UNLCK) {
                out.lk.start = (uint64_t)fl.l_start;
                out.lk.end = fl.l_len == 0 ? (uint64_t)INT64_MAX : (uint64_t)(fl.l_start + fl.l_len - 1);
                /* OFD locks have no owning process: ours know which guest process it is. */
                out.lk.pid = lock_holder_pid(i, in->owner, out.lk.start, out.lk.end, out.lk.type);
        }
        return pt_reply(r, &out, sizeof(out));
}

/* ---- SETLKW that has to wait ---- */

/* A deferred SETLKW: the request (its reply side) and the lock it retries. */
struct pt_lock_waiter {
        struct pt_fs *fs;
        struct freq *req;         /* from freq_defer(); only the waiter thread touches it */
        uint64_t unique;          /* the request's, for INTERRUPT */
        int queue_index;          /* the request's, for ring stops */
        int fd;                   /* a dup: the lock's open file description */
        struct inode *inode;      /* referenced: where a POSIX lock is noted once taken */
        uint64_t owner;
        uint32_t pid;
        bool is_flock;
        int flock_op;
        struct flock fl;
        /* under fs->waiters.mutex */
        bool interrupted;
        struct pt_lock_waiter *next;
};

#define MAX_LOCK_WAITERS 256

void pt_lock_waiters_init(struct pt_lock_waiters *lw)
{
        pthread_condattr_t ca;

        memset(lw, 0, sizeof(*lw));
        pthread_mutex_init(&lw->mutex, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&lw->cond, &ca);
        pthread_condattr_destroy(&ca);
}

void pt_lock_waiters_fini(struct pt_lock_waiters *lw)
{
        pthread_mutex_destroy(&lw->mutex);
        pthread_cond_destroy(&lw->cond);
}

static int try_lock(struct pt_lock_waiter *w)
{
        if (w->is_flock)
                return flock(w->fd, w->flock_op | LOCK_NB) < 0 ? -errno : 0;
        return fcntl(w->fd, F_OFD_SETLK, &w->fl) < 0 ? -errno : 0;
}

static bool lock_busy(int err)
{
        return err == -EAGAIN || err == -EACCES || err == -EWOULDBLOCK;
}

/* Called with the waiters' mutex held. */
static void waiter_unlink(struct pt_lock_waiters *set, struct pt_lock_waiter *w)
{
        for (struct pt_lock_waiter **p = &set->list; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        return;
                }
}

static void waiter_free(struct pt_lock_waiter *w)
{
        if (w->fd >= 0)
                (void) close(w->fd);
        if (w->inode)
                inode_put(w->fs->inodes, w->inode);
        free(w);
}

static void *lock_waiter_thread(void *arg)
{
        struct pt_lock_waiter *w = arg;
        struct pt_lock_waiters *set = &w->fs->waiters;
        unsigned delay_us = 1000;
        bool cancelled = false;
        int err;

        /* Retrying with a short backoff, rather than blocking in F_OFD_SETLKW,
         * lets a session reset stop the wait without signals. */
        for (;;) {
                struct timespec ts;

                err = try_lock(w);
                if (!lock_busy(err))
                        break;
                pthread_mutex_lock(&set->mutex);
                cancelled = set->cancel;
                if (w->interrupted) {
                        pthread_mutex_unlock(&set->mutex);
                        err = -EINTR;
                        break;
                }
                if (!cancelled) {
                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        ts.tv_nsec += (long)delay_us * 1000;
                        if (ts.tv_nsec >= 1000000000) {
                                ts.tv_sec++;
                                ts.tv_nsec -= 1000000000;
                        }
                        (void) pthread_cond_timedwait(&set->cond, &set->mutex, &ts);
                        cancelled = set->cancel;
                }
                pthread_mutex_unlock(&set->mutex);
                if (cancelled)
                        break;
                if (delay_us < 20000)
                        delay_us *= 2;
        }
        if (err == 0 && !w->is_flock)
                lock_owner_note(w->inode, w->owner, w->pid, &w->fl);
        /* Closed, put, replied and the transport told before it leaves the
         * list: whoever waits for the list to empty may then unmap the guest
         * memory or free the inode table, and finds nothing of the waiter left. */
        (void) close(w->fd);
        w->fd = -1;
        if (w->inode) {
                inode_put(w->fs->inodes, w->inode);
                w->inode = NULL;
        }
        if (cancelled)
                freq_drop(w->req);
        else
                freq_finish(w->req, err);
        pthread_mutex_lock(&set->mutex);
        waiter_unlink(set, w);
        set->n--;
        pthread_cond_broadcast(&set->cond);
        pthread_mutex_unlock(&set->mutex);
        waiter_free(w);
        return NULL;
}

static int defer_lock(struct pt_fs *fs, struct freq *r, struct inode *inode, int fd, bool is_flock,
                      int flock_op, const struct flock *fl)
{
        const struct fuse_lk_in *in = freq_arg(r, sizeof(*in));
        struct pt_lock_waiters *set = &fs->waiters;
        struct pt_lock_waiter *w;
        pthread_attr_t attr;
        pthread_t tid;
        int err;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOLCK;
        w->fs = fs;
        w->fd = dup_fd(fd);
        if (w->fd < 0) {
                waiter_free(w);
                return -ENOLCK;
        }
        w->is_flock = is_flock;
        w->flock_op = flock_op;
        if (fl)
                w->fl = *fl;
        if (!is_flock) {
                inode_ref(fs->inodes, inode);
                w->inode = inode;
                w->owner = in->owner;
                w->pid = in->lk.pid ? in->lk.pid : r->in.pid;
        }

        pthread_mutex_lock(&set->mutex);
        if (set->n >= MAX_LOCK_WAITERS || set->cancel) {
                pthread_mutex_unlock(&set->mutex);
                waiter_free(w);
                return -ENOLCK;
        }
        err = freq_defer(r, &w->req);
        if (err < 0) {
                pthread_mutex_unlock(&set->mutex);
                waiter_free(w);
                return err == -ENOMEM ? -ENOLCK : err;
        }
        w->unique = r->in.unique;
        w->queue_index = r->origin.queue_index;
        set->n++;
        w->next = set->list;
        set->list = w;
        pthread_mutex_unlock(&set->mutex);

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        err = -pthread_create(&tid, &attr, lock_waiter_thread, w);
        pthread_attr_destroy(&attr);
        if (err < 0) {
                pthread_mutex_lock(&set->mutex);
                waiter_unlink(set, w);
                set->n--;
                pthread_cond_broadcast(&set->cond);
                pthread_mutex_unlock(&set->mutex);
                /* Not deferred after all: the dispatcher replies the error. */
                r->deferred = false;
                freq_drop(w->req);
                waiter_free(w);
                return -ENOLCK;
        }
        return 0;
}

void pt_lock_interrupt(struct pt_fs *fs, uint64_t unique)
{
        struct pt_lock_waiters *set = &fs->waiters;

        pthread_mutex_lock(&set->mutex);
        for (struct pt_lock_waiter *w = set->list; w; w = w->next)
                if (w->unique == unique)
                        w->interrupted = true;
        pthread_cond_broadcast(&set->cond);
        pthread_mutex_unlock(&set->mutex);
}

static bool any_waiter_of(struct pt_lock_waiters *set, int queue_index)
{
        for (struct pt_lock_waiter *w = set->list; w; w = w->next)
                if (queue_index < 0 || w->queue_index == queue_index)
                        return true;
        return false;
}

void pt_lock_finish_waiters(struct pt_fs *fs, int queue_index)
{
        struct pt_lock_waiters *set = &fs->waiters;

        pthread_mutex_lock(&set->mutex);
        for (struct pt_lock_waiter *w = set->list; w; w = w->next)
                if (queue_index < 0 || w->queue_index == queue_index)
                        w->interrupted = true;
        pthread_cond_broadcast(&set->cond);
        /* A waiter leaves the list only after it replied. */
        while (any_waiter_of(set, queue_index))
                pthread_cond_wait(&set->cond, &set->mutex);
        pthread_mutex_unlock(&set->mutex);
}

void pt_lock_cancel_waiters(struct pt_fs *fs)
{
        struct pt_lock_waiters *set = &fs->waiters;

        pthread_mutex_lock(&set->mutex);
        set->cancel = true;
        pthread_cond_broadcast(&set->cond);
        while (set->n > 0)
                pthread_cond_wait(&set->cond, &set->mutex);
        set->cancel = false;
        pthread_mutex_unlock(&set->mutex);
}

/* ---- SETLK, SETLKW ---- */

static int do_setlk(struct pt_fs *fs, struct freq *r, struct inode *i, bool wait)
{
        PT_ARG(fuse_lk_in, in, r);
        struct flock fl;
        _cleanup_close_ int fd = -1;
        int err;

        if ((err = lk_to_flock(&in->lk, &fl)) < 0)
                return err;
        /* Read-only: nothing that could keep a host writer waiting (guest-policy.h). */
        if ((err = policy_check_lock(pt_is_readonly(fs), fl.l_type, in->lk_flags & FUSE_LK_FLOCK,
                                     in->lk.pid ? in->lk.pid : r->in.pid)) < 0)
                return err;

        if (in->lk_flags & FUSE_LK_FLOCK) {
                /* flock() locks belong to the open file: the guest's handle. */
                _cleanup_href_ h = PT_FILE(fs, in->fh);
                int op = fl.l_type == F_RDLCK ? LOCK_SH : fl.l_type == F_WRLCK ? LOCK_EX : LOCK_UN;

                if (!h.p) {
                        h.p = handle_get(fs->handles, in->fh, true);
                        if (!h.p)
                                return -EBADF;
                }
                if (flock(h.p->fd, op | LOCK_NB) == 0)
                        return pt_reply_ok(r);
                err = -errno;
                if (!wait || !lock_busy(err) || op == LOCK_UN)
                        return err;
                return defer_lock(fs, r, i, h.p->fd, true, op, NULL);
        }

        /* POSIX locks: one open file description per guest lock owner. */
        if (i->type != S_IFREG)
                return -EINVAL;
        /* Unlocking by an owner we never saw drops nothing: no fd kept for it. */
        fd = lock_owner_fd(fs, i, in->owner, !pt_is_readonly(fs), fl.l_type != F_UNLCK);
        if (fd < 0)
                return fd;
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
                lock_owner_note(i, in->owner, in->lk.pid ? in->lk.pid : r->in.pid, &fl);
                return pt_reply_ok(r);
        }
        err = -errno;
        if (!lock_busy(err))
                return err;
        if (!wait)
                return -EAGAIN;
        return defer_lock(fs, r, i, fd, false, 0, &fl);
}

int pt_setlk(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        return do_setlk(fs, r, i, false);
}

int pt_setlkw(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        return do_setlk(fs, r, i, true);
}
