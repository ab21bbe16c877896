/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-lock.c — locks: GETLK, SETLK, SETLKW, the guest's lock owners, and the
 * requests that wait for a lock or a lease.
 *
 * POSIX locks are taken as OFD locks, one open file description per guest
 * lock owner and inode (a host process has one pid for all guest processes);
 * flock() locks belong to the guest's handle.  The description is opened
 * with the access its locks need: read-only for read locks (so a guest's read
 * lock neither makes the host's exec of the file fail with ETXTBSY nor fails
 * on a read-only mount, and closing it is no IN_CLOSE_WRITE), read-write
 * once the owner takes a write lock.  That upgrade opens a new description,
 * takes the owner's read locks again on it (read locks never conflict with
 * read locks, so nothing can come between) and closes the old one: an owner
 * always has one description, as OFD locks need (two would conflict).
 *
 * The kernel keeps every record a guest makes it keep, and its work per lock
 * grows with the records on the file.  So each owner's records are tracked
 * exactly as the kernel keeps them (same-type ranges that overlap or touch
 * merge, an unlock or a lock of the other type inside a range splits it),
 * and a call that would leave an owner with more than LOCK_RECORDS_PER_OWNER
 * records, or the session with more than LOCK_RECORDS_PER_SESSION, fails with
 * ENOLCK before it reaches the kernel, as the kernel's own limits answer.
 * The count, the kernel call and the note are one step under the inode's
 * stripe lock, so concurrent requests cannot overshoot the bounds.  Records
 * go with their owner: FLUSH (the guest's close), the inode's end (FORGET
 * once no handle holds it, or the last RELEASE after the last FORGET) and the
 * session's end.
 *
 * A request that has to wait (a SETLKW on a contended lock, an open behind a
 * host lease that is being broken: pt-file.c) is deferred (freq_defer()): a
 * thread of its own retries the non-blocking attempt with a 1 → 20 ms backoff
 * and finishes the request when it succeeds or fails for another reason,
 * when INTERRUPT or a ring stop ends it with EINTR, or drops it without a
 * reply when the session is reset. */
#include "pt-lock.h"


#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "log.h"
#include "pt-internal.h"

/* ---- lock owners ---- */

/* One record the kernel keeps for an owner's description.  F_GETLK's answer
 * also names the guest process holding the conflicting lock from them (OFD
 * locks have no pid of their own), which the guest kernel passes on as l_pid. */
struct pt_lock_range {
        uint64_t start, end;     /* inclusive */
        uint32_t type;           /* F_RDLCK or F_WRLCK */
};

struct pt_lock_owner {
        uint64_t owner;
        int fd;
        bool writable;           /* fd may take write locks */
        uint32_t pid;            /* the guest's pid of the latest lock (lk.pid) */
        unsigned n_ranges;       /* the kernel's records of fd, at most LOCK_RECORDS_PER_OWNER */
        struct pt_lock_range *ranges;
        atomic_uint *session_records;  /* the session's count these are part of */
        struct pt_lock_owner *next;
};

/* The locks of the inodes' lock-owner lists: striped by the inode's address
 * (inode structs are kept for reuse, so an address names one inode for the
 * table's life).  Two inodes may share a stripe: the critical sections are
 * list walks, opens and non-blocking lock calls, and never take a second stripe. */
#define OWNERS_LOCKS 64
static pthread_mutex_t owners_locks[OWNERS_LOCKS] = {
        [0 ... OWNERS_LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER
};

static pthread_mutex_t *owners_lock(const struct inode *inode)
{
        return &owners_locks[((uintptr_t)inode / 64) % OWNERS_LOCKS];
}

/* An inode's lock owners hang on its private_data (the inode table never
 * reads it), under its stripe lock: most inodes never see a lock, and a mutex
 * in each would make every inode 40 bytes larger. */
static struct pt_lock_owner *owners_of(const struct inode *inode)
{
        return inode->private_data;
}

/* Drops every lock of description fd, then closes it.  close() alone drops
 * them only with the description's last reference, and whoever looks at our
 * fds (a /proc/PID/fd reader) may hold one for a moment: the records would
 * outlive what we count. */
static void unlock_close(int fd)
{
        struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

        (void) fcntl(fd, F_OFD_SETLK, &fl);
        (void) close(fd);
}

static void lock_owner_free(struct pt_lock_owner *o)
{
        atomic_fetch_sub_explicit(o->session_records, o->n_ranges, memory_order_relaxed);
        unlock_close(o->fd);
        free(o->ranges);
        free(o);
}

void pt_lock_owners_free(struct inode *inode)
{
        struct pt_lock_owner *o = owners_of(inode);

        while (o) {
                struct pt_lock_owner *next = o->next;

                lock_owner_free(o);
                o = next;
        }
        inode->private_data = NULL;
}

static bool ranges_overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end)
{
        return a_start <= b_end && b_start <= a_end;
}

/* Overlapping or adjacent (ends are at most INT64_MAX: no overflow). */
static bool ranges_touch(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end)
{
        return a_start <= b_end + 1 && b_start <= a_end + 1;
}

/* The records o's description holds after a successful lock call of `type`
 * on [start, end], as the kernel's posix_lock_inode() leaves them: the new
 * range replaces whatever o held there, and merges with o's ranges of the
 * same type that overlap or touch it.  Stores a new array (n_ranges + 2 at
 * most: one range split in two, plus the new one) and its count;
 * -ENOMEM. */
static int ranges_after(const struct pt_lock_owner *o, uint64_t start, uint64_t end, uint32_t type,
                        struct pt_lock_range **ret, unsigned *ret_n)
{
        struct pt_lock_range *out = malloc((o->n_ranges + 2) * sizeof(*out));
        uint64_t new_start = start, new_end = end;
        unsigned n = 0;

        if (!out)
                return -ENOMEM;
        for (unsigned k = 0; k < o->n_ranges; k++) {
                struct pt_lock_range cur = o->ranges[k];

                if (type != F_UNLCK && cur.type == type &&
                    ranges_touch(cur.start, cur.end, start, end)) {
                        /* Same type: one record.  Its other neighbours of that
                         * type never touch it (records were merged before). */
                        if (cur.start < new_start)
                                new_start = cur.start;
                        if (cur.end > new_end)
                                new_end = cur.end;
                        continue;
                }
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
                out[n++] = (struct pt_lock_range){ new_start, new_end, type };
        *ret = out;
        *ret_n = n;
        return 0;
}

static void flock_range(const struct flock *fl, uint64_t *ret_start, uint64_t *ret_end)
{
        *ret_start = (uint64_t)fl->l_start;
        *ret_end = fl->l_len == 0 ? (uint64_t)INT64_MAX : *ret_start + (uint64_t)fl->l_len - 1;
}

/* The guest pid of the owner (not `asker`) holding a lock of `type` that
 * overlaps [start, end], or 0 when none of ours does (a host process's lock). */
static uint32_t lock_holder_pid(struct inode *inode, uint64_t asker, uint64_t start, uint64_t end,
                                uint32_t type)
{
        uint32_t pid = 0;

        pthread_mutex_lock(owners_lock(inode));
        for (struct pt_lock_owner *o = owners_of(inode); o && !pid; o = o->next) {
                if (o->owner == asker)
                        continue;
                for (unsigned k = 0; k < o->n_ranges; k++)
                        if (o->ranges[k].type == type &&
                            ranges_overlap(o->ranges[k].start, o->ranges[k].end, start, end)) {
                                pid = o->pid;
                                break;
                        }
        }
        pthread_mutex_unlock(owners_lock(inode));
        return pid;
}

/* An open file description of `inode` for locks: read-write when write locks
 * are wanted, else read-only (a write-only one where reading is denied: it
 * still answers GETLK and unlocks).  O_NONBLOCK: a host lease being broken
 * answers EAGAIN ("busy") instead of holding the stripe lock for the
 * lease-break time; on a regular file it changes nothing else. */
static int lock_owner_open(const struct pt_fs *fs, struct inode *inode, bool write)
{
        int fd = confine_reopen(fs->proc_fd, inode->fd, (write ? O_RDWR : O_RDONLY) | O_NONBLOCK);

        if (fd == -EACCES)
                fd = confine_reopen(fs->proc_fd, inode->fd, O_WRONLY | O_NONBLOCK);
        return fd;
}

static bool fd_may_write(int fd)
{
        int flags = fcntl(fd, F_GETFL);

        return flags >= 0 && (flags & O_ACCMODE) != O_RDONLY;
}

static struct pt_lock_owner *owner_find(struct inode *inode, uint64_t owner, unsigned *ret_count)
{
        unsigned n = 0;

        for (struct pt_lock_owner *o = owners_of(inode); o; o = o->next, n++)
                if (o->owner == owner)
                        return o;
        if (ret_count)
                *ret_count = n;
        return NULL;
}

/* Gives owner o a description that may take write locks: a new read-write
 * one carrying o's (read) locks, which replaces the read-only one. */
static int owner_upgrade(const struct pt_fs *fs, struct inode *inode, struct pt_lock_owner *o)
{
        _cleanup_close_ int fd = pt_fd_keep(fs, lock_owner_open(fs, inode, true));

        if (fd < 0)
                return fd;
        for (unsigned k = 0; k < o->n_ranges; k++) {
                const struct pt_lock_range *rg = &o->ranges[k];
                struct flock fl = {
                        .l_type = (short)rg->type,
                        .l_whence = SEEK_SET,
                        .l_start = (off_t)rg->start,
                        .l_len = rg->end >= (uint64_t)INT64_MAX ? 0 : (off_t)(rg->end - rg->start + 1),
                };

                /* Read locks here (a read-only description holds no other):
                 * they cannot conflict with the ones they copy. */
                if (fcntl(fd, F_OFD_SETLK, &fl) < 0)
                        return -errno;
        }
        unlock_close(o->fd);
        o->fd = TAKE_FD(fd);
        o->writable = true;
        return 0;
}

/* SETLK of guest lock owner `owner` (process `pid`) on `inode`, POSIX
 * semantics, without waiting: 0, -EAGAIN when another lock is in the way,
 * -ENOLCK beyond the bounds, -errno. */
static int owner_setlk(struct pt_fs *fs, struct inode *inode, uint64_t owner, uint32_t pid,
                       const struct flock *fl)
{
        struct pt_lock_range *after = NULL;
        struct pt_lock_owner *o;
        uint64_t start, end;
        unsigned n_owners = 0, n_after;
        bool made = false;
        int err;

        flock_range(fl, &start, &end);
        pthread_mutex_lock(owners_lock(inode));
        o = owner_find(inode, owner, &n_owners);
        if (!o) {
                _cleanup_close_ int fd = -1;

                /* An owner we never saw holds nothing to unlock. */
                err = 0;
                if (fl->l_type == F_UNLCK)
                        goto out;
                err = -ENOLCK;
                if (n_owners >= PT_LOCK_OWNERS_MAX)
                        goto out;
                /* Kept as long as the owner's locks: it counts against the guest's share. */
                fd = pt_fd_keep(fs, lock_owner_open(fs, inode, fl->l_type == F_WRLCK));
                err = fd;
                if (fd < 0)
                        goto out;
                err = -ENOMEM;
                o = calloc(1, sizeof(*o));
                if (!o)
                        goto out;
                *o = (struct pt_lock_owner){ .owner = owner, .writable = fd_may_write(fd),
                                             .session_records = &fs->lock_records };
                o->fd = TAKE_FD(fd);
                o->next = owners_of(inode);
                inode->private_data = o;
                made = true;
        }
        if (fl->l_type == F_WRLCK && !o->writable && (err = owner_upgrade(fs, inode, o)) < 0)
                goto out;

        if ((err = ranges_after(o, start, end, (uint32_t)fl->l_type, &after, &n_after)) < 0) {
                err = -ENOLCK;
                goto out;
        }
        if (n_after > o->n_ranges) {
                unsigned more = n_after - o->n_ranges;
                unsigned total = atomic_fetch_add_explicit(&fs->lock_records, more,
                                                           memory_order_relaxed);

                if (n_after > LOCK_RECORDS_PER_OWNER || total + more > LOCK_RECORDS_PER_SESSION) {
                        atomic_fetch_sub_explicit(&fs->lock_records, more, memory_order_relaxed);
                        err = -ENOLCK;
                        goto out;
                }
        }
        if (fcntl(o->fd, F_OFD_SETLK, fl) < 0) {
                err = errno == EACCES ? -EAGAIN : -errno;
                if (n_after > o->n_ranges)
                        atomic_fetch_sub_explicit(&fs->lock_records, n_after - o->n_ranges,
                                                  memory_order_relaxed);
                goto out;
        }
        if (n_after < o->n_ranges)
                atomic_fetch_sub_explicit(&fs->lock_records, o->n_ranges - n_after,
                                          memory_order_relaxed);
        free(o->ranges);
        o->ranges = TAKE_PTR(after);
        o->n_ranges = n_after;
        if (fl->l_type != F_UNLCK && pid)
                o->pid = pid;
        err = 0;
out:
        if (err < 0 && made) {
                /* Refused at once: the owner keeps no description (a made-up
                 * owner per call would cost an fd each). */
                inode->private_data = o->next;
                lock_owner_free(o);
        }
        pthread_mutex_unlock(owners_lock(inode));
        free(after);
        return err;
}

static int dup_fd(int fd)
{
        int r = fcntl(fd, F_DUPFD_CLOEXEC, 0);

        return r < 0 ? -errno : r;
}

void pt_lock_owner_release(struct inode *inode, uint64_t owner)
{
        struct pt_lock_owner *o, *prev = NULL;

        pthread_mutex_lock(owners_lock(inode));
        for (o = owners_of(inode); o; prev = o, o = o->next)
                if (o->owner == owner) {
                        if (prev)
                                prev->next = o->next;
                        else
                                inode->private_data = o->next;
                        break;
                }
        pthread_mutex_unlock(owners_lock(inode));
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

/* F_OFD_GETLK as `owner` sees it: through its description (its own locks
 * are no conflict).  An owner that holds nothing sees what any description
 * without OFD locks sees: the guest's handle `fh` of this file (its flock()
 * locks are another kind), or else a throwaway read-only one (a query makes
 * no owner). */
static int owner_getlk(struct pt_fs *fs, struct inode *inode, uint64_t owner, uint64_t fh,
                       struct flock *fl)
{
        _cleanup_close_ int fd = -1;
        struct pt_lock_owner *o;
        int err = 0;

        pthread_mutex_lock(owners_lock(inode));
        o = owner_find(inode, owner, NULL);
        if (o && fcntl(o->fd, F_OFD_GETLK, fl) < 0)
                err = -errno;
        pthread_mutex_unlock(owners_lock(inode));
        if (o)
                return err;
        {
                _cleanup_href_ h = PT_FILE(fs, fh);

                if (h.p && h.p->inode == inode)
                        return fcntl(h.p->fd, F_OFD_GETLK, fl) < 0 ? -errno : 0;
        }
        fd = lock_owner_open(fs, inode, false);
        if (fd < 0)
                return fd;
        return fcntl(fd, F_OFD_GETLK, fl) < 0 ? -errno : 0;
}

int pt_getlk(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        PT_ARG(fuse_lk_in, in, r);
        struct fuse_lk_out out = { 0 };
        struct flock fl;
        int err;

        PT_NEED_FD(fs, i);
        if ((err = lk_to_flock(&in->lk, &fl)) < 0)
                return err;
        if (i->type != S_IFREG)
                return -EINVAL;
        if ((err = owner_getlk(fs, i, in->owner, in->fh, &fl)) < 0)
                return err;
        out.lk.type = (uint32_t)fl.l_type;
        if (fl.l_type != F_UNLCK) {
                out.lk.start = (uint64_t)fl.l_start;
                out.lk.end = fl.l_len == 0 ? (uint64_t)INT64_MAX : (uint64_t)(fl.l_start + fl.l_len - 1);
                /* OFD locks have no owning process: ours know which guest process it is. */
                out.lk.pid = lock_holder_pid(i, in->owner, out.lk.start, out.lk.end, out.lk.type);
        }
        return pt_reply(r, &out, sizeof(out));
}

/* ---- requests that wait ---- */

/* A deferred request and the attempt it retries. */
struct pt_lock_waiter {
        struct pt_fs *fs;
        struct freq *req;         /* from freq_defer(); only the waiter thread touches it */
        uint64_t unique;          /* the request's, for INTERRUPT */
        int queue_index;          /* the request's, for ring stops */
        pt_lock_try_fn try;
        pt_lock_done_fn done;
        void *arg;
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

/* Called with the waiters' mutex held. */
static void waiter_unlink(struct pt_lock_waiters *set, struct pt_lock_waiter *w)
{
        for (struct pt_lock_waiter **p = &set->list; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        return;
                }
}

static void *lock_waiter_thread(void *arg)
{
        struct pt_lock_waiter *w = arg;
        struct pt_lock_waiters *set = &w->fs->waiters;
        unsigned delay_us = 1000;
        bool cancelled = false;
        int err;

        /* Retrying with a short backoff, rather than blocking in F_OFD_SETLKW
         * or a blocking open, lets a session reset stop the wait without signals. */
        for (;;) {
                struct timespec ts;

                err = w->try(w->fs, w->req, w->arg);
                if (err != -EAGAIN)
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
        /* Closed, put, replied and the transport told before it leaves the
         * list: whoever waits for the list to empty may then unmap the guest
         * memory or free the inode table, and finds nothing of the waiter left. */
        w->done(w->fs, w->arg);
        if (cancelled)
                freq_drop(w->req);
        else
                freq_finish(w->req, err);
        pthread_mutex_lock(&set->mutex);
        waiter_unlink(set, w);
        set->n--;
        pthread_cond_broadcast(&set->cond);
        pthread_mutex_unlock(&set->mutex);
        free(w);
        return NULL;
}

int pt_lock_wait_defer(struct pt_fs *fs, struct freq *r, pt_lock_try_fn try, pt_lock_done_fn done,
                       void *arg)
{
        struct pt_lock_waiters *set = &fs->waiters;
        struct pt_lock_waiter *w;
        pthread_attr_t attr;
        pthread_t tid;
        int err;

        w = calloc(1, sizeof(*w));
        if (!w) {
                done(fs, arg);
                return -ENOMEM;
        }
        *w = (struct pt_lock_waiter){ .fs = fs, .try = try, .done = done, .arg = arg };

        pthread_mutex_lock(&set->mutex);
        if (set->n >= MAX_LOCK_WAITERS || set->cancel) {
                err = -EAGAIN;
                goto fail;
        }
        err = freq_defer(r, &w->req);
        if (err < 0)
                goto fail;
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
                done(fs, arg);
                free(w);
                return -EAGAIN;
        }
        return 0;
fail:
        pthread_mutex_unlock(&set->mutex);
        done(fs, arg);
        free(w);
        return err;
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

/* A SETLKW that waits: the lock it retries. */
struct setlkw_wait {
        int fd;                   /* flock(): a dup of the handle's fd */
        struct inode *inode;      /* POSIX: referenced, where the owner's description is */
        uint64_t owner;
        uint32_t pid;
        int flock_op;
        struct flock fl;
};

static int setlkw_try(struct pt_fs *fs, struct freq *d, void *arg)
{
        struct setlkw_wait *s = arg;

        if (s->fd >= 0)
                return flock(s->fd, s->flock_op | LOCK_NB) == 0 ? 0
                       : errno == EWOULDBLOCK ? -EAGAIN : -errno;
        return owner_setlk(fs, s->inode, s->owner, s->pid, &s->fl);
}

static void setlkw_done(struct pt_fs *fs, void *arg)
{
        struct setlkw_wait *s = arg;

        if (s->fd >= 0)
                (void) close(s->fd);
        if (s->inode)
                inode_put(fs->inodes, s->inode);
        free(s);
}

/* A SETLKW that got EAGAIN waits; the queue goes on.  Too many waiting: ENOLCK. */
static int setlkw_defer(struct pt_fs *fs, struct freq *r, struct inode *inode, int flock_fd,
                        int flock_op, uint64_t owner, uint32_t pid, const struct flock *fl)
{
        struct setlkw_wait *s = calloc(1, sizeof(*s));
        int err;

        if (!s)
                return -ENOLCK;
        *s = (struct setlkw_wait){ .fd = -1, .owner = owner, .pid = pid, .flock_op = flock_op,
                                   .fl = *fl };
        if (flock_fd >= 0) {
                s->fd = dup_fd(flock_fd);
                if (s->fd < 0) {
                        free(s);
                        return -ENOLCK;
                }
        } else {
                inode_ref(fs->inodes, inode);
                s->inode = inode;
        }
        err = pt_lock_wait_defer(fs, r, setlkw_try, setlkw_done, s);
        return err == -EAGAIN || err == -ENOMEM ? -ENOLCK : err;
}

/* Locks held through a handle that a worker before a restart had: they
 * died with it (pt-lock.h).  The first lock request through such a handle
 * learns it (ENOLCK, logged once); unlocking succeeds as it always did.
 * Otherwise notes that the handle takes locks, for a successor. */
static int lock_after_restart(struct pt_fs *fs, uint64_t fh, short type)
{
        _cleanup_href_ h = PT_FILE(fs, fh);

        if (type == F_UNLCK)
                return 0;
        if (!h.p)
                h.p = handle_get(fs->handles, fh, true);
        if (!h.p)
                return 0;   /* the handler answers for a bad fh */
        if (atomic_exchange_explicit(&h.p->locks_lost, false, memory_order_relaxed)) {
                log_warning("lock through fh %#llx refused (ENOLCK): the locks taken through it died with the previous worker",
                            (unsigned long long)fh);
                return -ENOLCK;
        }
        handle_note_locks(fs->handles, h.p);
        return 0;
}

static int do_setlk(struct pt_fs *fs, struct freq *r, struct inode *i, bool wait)
{
        PT_ARG(fuse_lk_in, in, r);
        uint32_t pid = in->lk.pid ? in->lk.pid : r->in.pid;
        struct flock fl;
        int err;

        PT_NEED_FD(fs, i);
        if ((err = lk_to_flock(&in->lk, &fl)) < 0)
                return err;
        /* Read-only: nothing that could keep a host writer waiting (guest-policy.h). */
        if ((err = policy_check_lock(pt_is_readonly(fs), fl.l_type, in->lk_flags & FUSE_LK_FLOCK,
                                     pid)) < 0)
                return err;
        if ((err = lock_after_restart(fs, in->fh, fl.l_type)) < 0)
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
                if (!wait || err != -EWOULDBLOCK || op == LOCK_UN)
                        return err;
                return setlkw_defer(fs, r, i, h.p->fd, op, 0, 0, &fl);
        }

        /* POSIX locks: one open file description per guest lock owner. */
        if (i->type != S_IFREG)
                return -EINVAL;
        err = owner_setlk(fs, i, in->owner, pid, &fl);
        if (err == 0)
                return pt_reply_ok(r);
        if (err != -EAGAIN || !wait)
                return err;
        return setlkw_defer(fs, r, i, -1, 0, in->owner, pid, &fl);
}

int pt_setlk(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        return do_setlk(fs, r, i, false);
}

int pt_setlkw(struct pt_fs *fs, struct freq *r, struct inode *i)
{
        return do_setlk(fs, r, i, true);
}
