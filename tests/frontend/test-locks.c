/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-locks.c — what a guest's locks cost the host, and what a host's
 * leases cost the guest:
 *
 *   - the kernel keeps every POSIX lock record a guest makes it keep: one
 *     owner, and the whole session, get ENOLCK beyond a bound (what
 *     /proc/locks lists for the file never exceeds it), same-type neighbours
 *     merge as in the kernel, and FLUSH, RELEASE + FORGET and the session's
 *     end leave no record behind;
 *   - a lock is taken on a description opened for what it locks: a guest's
 *     read lock on a script does not make the host's exec of it fail with
 *     ETXTBSY, GETLK and read locks work on a read-only mount, and a GETLK
 *     looks like no write to a host file watcher (no IN_CLOSE_WRITE);
 *   - an open that breaks a host process's lease (CREATE without O_EXCL,
 *     OPEN for writing) waits as a local open would, without spinning and
 *     without holding up the other requests of its queue, and finishes when
 *     the holder lets go (or ends with EINTR on INTERRUPT).
 *
 * Everything waits for conditions (a reply, the lease-break signal, an
 * inotify event, /proc/locks); the one timed window (the CPU-time ratio of
 * a waiting open) decides nothing by its length. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* sluice-fs's bounds (daemon/pt-internal.h, sluice-fs(1)). */
#define RECORDS_PER_OWNER   128
#define RECORDS_PER_SESSION 4096
#define OFFSET_MAX          INT64_MAX   /* fuse_file_lock.end: to the end of the file */

/* ---- helpers ---- */

static int lk_call(struct vmm *v, uint32_t opcode, uint64_t node, uint64_t fh, uint64_t owner,
                   uint32_t type, uint64_t start, uint64_t end, struct fuse_lk_out *ret)
{
        struct fuse_lk_in in = { .fh = fh, .owner = owner,
                                 .lk = { .start = start, .end = end, .type = type, .pid = 42 } };
        struct fuse_lk_out out = { 0 };
        int r = vmm_call(v, opcode, node, &in, sizeof(in), NULL, 0, NULL, 0,
                         opcode == FUSE_GETLK ? &out : NULL, opcode == FUSE_GETLK ? sizeof(out) : 0,
                         NULL);

        if (ret)
                *ret = out;
        return r;
}

static int setlk(struct vmm *v, uint64_t node, uint64_t fh, uint64_t owner, uint32_t type,
                 uint64_t start, uint64_t end)
{
        return lk_call(v, FUSE_SETLK, node, fh, owner, type, start, end, NULL);
}

/* close() in the guest: FLUSH with the closing process's lock owner. */
static int flush_owner(struct vmm *v, uint64_t node, uint64_t fh, uint64_t owner)
{
        struct fuse_flush_in in = { .fh = fh, .lock_owner = owner };

        return vmm_call(v, FUSE_FLUSH, node, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

static uint64_t lookup_open(struct vmm *v, const char *name, uint32_t flags, uint64_t *ret_fh)
{
        struct fuse_entry_out e = { 0 };

        assert_ok(vmm_lookup(v, VMM_ROOT, name, &e));
        assert_ok(vmm_open(v, e.nodeid, flags, ret_fh));
        return e.nodeid;
}

/* The lock records the worker holds on the file at `path`, as the kernel
 * lists them in the worker's /proc/PID/fdinfo/FD files (OFD locks are listed
 * under the description that holds them).  Not /proc/locks: the kernel hands
 * that out a page per read(), each read starting again at a position in the
 * machine's list of locks, so a lock taken or dropped by any other process
 * meanwhile (the other suites run beside this one) shifts the list and one of
 * ours is counted twice or not at all.  An fdinfo file is made whole in one
 * go, and between requests the worker's own records do not change. */
static unsigned proc_locks_of(Harness *h, const char *path)
{
        g_autofree char *key = NULL, *dir_path = NULL;
        g_autoptr(GDir) dir = NULL;
        const char *name;
        struct stat st;
        unsigned n = 0;

        g_assert_cmpint(stat(path, &st), ==, 0);
        key = g_strdup_printf("%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                              (unsigned long long)st.st_ino);
        dir_path = g_strdup_printf("/proc/%d/fdinfo", (int)h->pid);
        dir = g_dir_open(dir_path, 0, NULL);
        g_assert_nonnull(dir);
        while ((name = g_dir_read_name(dir))) {
                g_autofree char *file = g_build_filename(dir_path, name, NULL);
                g_autofree char *data = NULL;
                g_auto(GStrv) lines = NULL;

                /* an fd closed since the listing is no record */
                if (!g_file_get_contents(file, &data, NULL, NULL))
                        continue;
                lines = g_strsplit(data, "\n", -1);
                for (char **l = lines; *l; l++) {
                        g_auto(GStrv) fields = NULL;

                        if (!g_str_has_prefix(*l, "lock:") || strstr(*l, "->"))
                                continue;       /* not a record; a waiter */
                        fields = g_strsplit_set(*l, " \t", -1);
                        for (char **f = fields; *f; f++)
                                if (strcmp(*f, key) == 0) {
                                        n++;
                                        break;
                                }
                }
        }
        return n;
}

/* FORGET travels on the hiprio queue: its effect shows when it shows. */
static gboolean wait_proc_locks(Harness *h, const char *path, unsigned want)
{
        for (int i = 0; i < 2000; i++) {
                if (proc_locks_of(h, path) == want)
                        return TRUE;
                g_usleep(5000);
        }
        return FALSE;
}

/* ---- 4a: bounded records ---- */

static void test_records_bounded(void)
{
        g_autoptr(Harness) h = harness_new();
        g_autofree char *f_path = NULL, *g_path = NULL;
        uint64_t f, g, f_fh, g_fh, owner, total = 0;
        unsigned got;
        int r = 0;

        if (!harness_require_sluice("bounds are sluice-fs's"))
                return;
        harness_up(h, NULL);
        harness_write(h, "f", "many locks");
        harness_write(h, "g", "many owners");
        f_path = harness_path(h, "f");
        g_path = harness_path(h, "g");
        f = lookup_open(h->vmm, "f", O_RDWR, &f_fh);
        g = lookup_open(h->vmm, "g", O_RDWR, &g_fh);

        /* Neighbours of one type merge into one record, as in the kernel:
         * byte after byte, far more locks than the bound, and no ENOLCK. */
        for (uint64_t b = 0; b < 4 * RECORDS_PER_OWNER && r == 0; b++)
                r = setlk(h->vmm, f, f_fh, 1, F_RDLCK, b, b);
        assert_ok(r);
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, 1);
        assert_ok(setlk(h->vmm, f, f_fh, 1, F_UNLCK, 0, OFFSET_MAX));
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, 0);

        /* Separate read locks (every other byte): ENOLCK past the bound,
         * and the kernel holds exactly what was granted. */
        for (got = 0; got < 20000; got++)
                if ((r = setlk(h->vmm, f, f_fh, 1, F_RDLCK, 2 * got, 2 * got)) != 0)
                        break;
        assert_errno(r, -ENOLCK);
        g_assert_cmpuint(got, ==, RECORDS_PER_OWNER);
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, got);
        /* A lock that merges into held ones adds no record: still granted. */
        assert_ok(setlk(h->vmm, f, f_fh, 1, F_RDLCK, 1, 1));
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, got - 1);
        total += got - 1;

        /* An unlock that splits a range makes a record too: bounded alike. */
        assert_ok(setlk(h->vmm, f, f_fh, 2, F_RDLCK, 10000, 20000));
        for (got = 1; got < 20000; got++)
                if ((r = setlk(h->vmm, f, f_fh, 2, F_UNLCK, 10000 + 2 * got, 10000 + 2 * got)) != 0)
                        break;
        assert_errno(r, -ENOLCK);
        g_assert_cmpuint(got, ==, RECORDS_PER_OWNER);
        total += got;
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, total);

        /* The session: owner after owner fills its share until a new one
         * gets ENOLCK for its first lock. */
        for (owner = 100; owner < 200; owner++) {
                for (got = 0; got < RECORDS_PER_OWNER + 10; got++)
                        if ((r = setlk(h->vmm, g, g_fh, owner, F_RDLCK, 2 * got, 2 * got)) != 0)
                                break;
                assert_errno(r, -ENOLCK);
                total += got;
                if (got == 0 || g_test_failed())
                        break;
        }
        g_assert_cmpuint(owner, <, 200);
        g_assert_cmpuint(total, ==, RECORDS_PER_SESSION);
        g_assert_cmpuint(proc_locks_of(h, f_path) + proc_locks_of(h, g_path), ==, RECORDS_PER_SESSION);

        /* FLUSH (the guest's close) drops its owner's records... */
        assert_ok(flush_owner(h->vmm, f, f_fh, 1));
        assert_ok(flush_owner(h->vmm, f, f_fh, 2));
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, 0);
        /* ...and gives the session room again. */
        assert_ok(setlk(h->vmm, f, f_fh, 3, F_WRLCK, 0, 0));
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, 1);

        /* RELEASE and FORGET: the file's records go with it. */
        assert_ok(vmm_release(h->vmm, g, g_fh));
        assert_ok(vmm_forget(h->vmm, g, 1));
        g_assert_true(wait_proc_locks(h, g_path, 0));

        /* The session's end (DESTROY: the guest unmounts) drops the rest. */
        assert_ok(vmm_destroy(h->vmm));
        g_assert_cmpuint(proc_locks_of(h, f_path), ==, 0);
        harness_assert_alive(h);
}

/* Random locks, unlocks and write locks inside read ones (a fixed seed):
 * the daemon's count of the kernel's records never lets them pass the
 * bound, and it refuses only at the bound (one call adds two records at
 * most: a range split in two around a new one). */
static void test_records_model(void)
{
        g_autoptr(Harness) h = harness_new();
        g_autoptr(GRand) rand = g_rand_new_with_seed(17);
        g_autofree char *path = NULL;
        unsigned refused = 0, most = 0;
        uint64_t node, fh;

        if (!harness_require_sluice("bounds are sluice-fs's"))
                return;
        harness_up(h, NULL);
        harness_write(h, "f", "random locks");
        path = harness_path(h, "f");
        node = lookup_open(h->vmm, "f", O_RDWR, &fh);
        for (int i = 0; i < 3000 && !g_test_failed(); i++) {
                static const uint32_t types[] = { F_RDLCK, F_RDLCK, F_WRLCK, F_UNLCK };
                uint32_t type = types[g_rand_int_range(rand, 0, 4)];
                uint64_t start = (uint64_t)g_rand_int_range(rand, 0, 600);
                uint64_t end = g_rand_int_range(rand, 0, 50) == 0 ? OFFSET_MAX
                             : start + (uint64_t)g_rand_int_range(rand, 0, 3);
                int r = setlk(h->vmm, node, fh, 1, type, start, end);
                unsigned held = proc_locks_of(h, path);

                if (r == -ENOLCK) {
                        refused++;
                        g_assert_cmpuint(held + 2, >, RECORDS_PER_OWNER);
                } else {
                        assert_ok(r);
                }
                g_assert_cmpuint(held, <=, RECORDS_PER_OWNER);
                if (held > most)
                        most = held;
        }
        g_test_message("%u calls refused, %u records at most", refused, most);
        g_assert_cmpuint(refused, >, 0);
        harness_assert_alive(h);
}

/* ---- 4b: opened for what they lock ---- */

/* A guest's read lock on a script: the host can still run it. */
static void test_read_lock_exec(void)
{
        g_autoptr(Harness) h = harness_new();
        g_autoptr(GError) error = NULL;
        g_autofree char *path = NULL;
        uint64_t node, fh;
        int status = -1;

        if (!harness_require_sluice("sluice-fs's lock descriptions"))
                return;
        harness_up(h, NULL);
        harness_write(h, "script.sh", "#!/bin/sh\nexit 7\n");
        path = harness_path(h, "script.sh");
        g_assert_cmpint(chmod(path, 0755), ==, 0);
        node = lookup_open(h->vmm, "script.sh", O_RDONLY, &fh);

        assert_ok(setlk(h->vmm, node, fh, 1, F_RDLCK, 0, OFFSET_MAX));
        {
                const char *argv[] = { path, NULL };

                g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                             &status, &error);
        }
        g_assert_no_error(error);       /* not "Text file busy" */
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 7);
        /* A later write lock of the same owner upgrades its description. */
        assert_ok(setlk(h->vmm, node, fh, 1, F_WRLCK, 0, 9));
        g_assert_cmpuint(proc_locks_of(h, path), ==, 2);
        harness_assert_alive(h);
}

/* The shared folder on a read-only mount (a DVD under /run/media). */
static void test_read_only_mount(void)
{
        g_autoptr(Harness) h = harness_new();
        struct fuse_lk_out out;
        uint64_t node, fh;

        if (!harness_require_sluice("sluice-fs's lock descriptions"))
                return;
        if (geteuid() != 0) {
                g_test_skip("needs root for a read-only bind mount");
                return;
        }
        harness_write(h, "f", "on a read-only mount");
        if (mount(h->share, h->share, NULL, MS_BIND, NULL) < 0) {
                g_test_skip("no bind mount here (a container without CAP_SYS_ADMIN)");
                return;
        }
        g_assert_cmpint(mount(NULL, h->share, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL), ==, 0);
        harness_up(h, NULL);
        node = lookup_open(h->vmm, "f", O_RDONLY, &fh);

        assert_ok(lk_call(h->vmm, FUSE_GETLK, node, fh, 1, F_WRLCK, 0, OFFSET_MAX, &out));
        g_assert_cmpuint(out.lk.type, ==, F_UNLCK);
        assert_ok(setlk(h->vmm, node, fh, 1, F_RDLCK, 0, OFFSET_MAX));
        /* Another owner sees it. */
        assert_ok(lk_call(h->vmm, FUSE_GETLK, node, fh, 2, F_WRLCK, 0, OFFSET_MAX, &out));
        g_assert_cmpuint(out.lk.type, ==, F_RDLCK);
        harness_assert_alive(h);
        g_assert_cmpint(umount2(h->share, MNT_DETACH), ==, 0);
}

/* The next close event on the inotify fd: IN_CLOSE_WRITE or IN_CLOSE_NOWRITE. */
static uint32_t next_close_event(int ino_fd)
{
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

        for (;;) {
                struct pollfd p = { .fd = ino_fd, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, 10000) <= 0)
                        return 0;
                n = read(ino_fd, buf, sizeof(buf));
                g_assert_cmpint(n, >, 0);
                for (char *at = buf; at < buf + n;) {
                        const struct inotify_event *ev = (const void *)at;

                        if (ev->mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE))
                                return ev->mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE);
                        at += sizeof(*ev) + ev->len;
                }
        }
}

/* A GETLK (and a read lock's end) is no write to a host file watcher. */
static void test_getlk_no_close_write(void)
{
        g_autoptr(Harness) h = harness_new();
        g_autofree char *path = NULL;
        struct fuse_entry_out e = { 0 };
        struct fuse_lk_out out;
        uint64_t fh;
        int ino_fd;

        if (!harness_require_sluice("sluice-fs's lock descriptions"))
                return;
        harness_up(h, NULL);
        harness_write(h, "watched", "watched by a file manager");
        path = harness_path(h, "watched");
        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "watched", &e));
        assert_ok(vmm_open(h->vmm, e.nodeid, O_RDONLY, &fh));
        ino_fd = inotify_init1(IN_CLOEXEC);
        g_assert_cmpint(ino_fd, >=, 0);
        g_assert_cmpint(inotify_add_watch(ino_fd, path, IN_CLOSE_WRITE | IN_CLOSE_NOWRITE), >=, 0);

        /* An owner that holds nothing asks through the guest's handle (no
         * open, no close), or without one through a throwaway description. */
        assert_ok(lk_call(h->vmm, FUSE_GETLK, e.nodeid, fh, 7, F_WRLCK, 0, OFFSET_MAX, &out));
        assert_ok(lk_call(h->vmm, FUSE_GETLK, e.nodeid, 0, 7, F_WRLCK, 0, OFFSET_MAX, &out));
        g_assert_cmpuint(next_close_event(ino_fd), ==, IN_CLOSE_NOWRITE);
        /* A read lock's description, closed by the owner's FLUSH. */
        assert_ok(setlk(h->vmm, e.nodeid, fh, 8, F_RDLCK, 0, OFFSET_MAX));
        assert_ok(flush_owner(h->vmm, e.nodeid, fh, 8));
        g_assert_cmpuint(next_close_event(ino_fd), ==, IN_CLOSE_NOWRITE);
        /* An owner's first lock a write lock: one read-write description,
         * kept (the next close is the throwaway one of another owner's GETLK
         * without a handle). */
        assert_ok(setlk(h->vmm, e.nodeid, fh, 9, F_WRLCK, 0, 9));
        assert_ok(lk_call(h->vmm, FUSE_GETLK, e.nodeid, 0, 10, F_RDLCK, 0, 9, &out));
        g_assert_cmpuint(out.lk.type, ==, F_WRLCK);
        g_assert_cmpuint(next_close_event(ino_fd), ==, IN_CLOSE_NOWRITE);
        assert_ok(flush_owner(h->vmm, e.nodeid, fh, 9));
        g_assert_cmpuint(next_close_event(ino_fd), ==, IN_CLOSE_WRITE);
        close(ino_fd);
        harness_assert_alive(h);
}

/* ---- 5: an open behind a host lease ---- */

/* CPU time (user + system, in clock ticks) of process pid, all threads. */
static unsigned long long cpu_ticks(GPid pid)
{
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
        g_autofree char *data = NULL;
        unsigned long long utime = 0, stime = 0;
        const char *p;

        g_assert_true(g_file_get_contents(path, &data, NULL, NULL));
        p = strrchr(data, ')');         /* after the command name */
        g_assert_nonnull(p);
        /* fields 3..13 skipped, 14 utime, 15 stime */
        g_assert_cmpint(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                               &utime, &stime), ==, 2);
        return utime + stime;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Waits for the lease-break signal (SIGIO, blocked in every thread since main()). */
static gboolean wait_lease_break(int sig_fd)
{
        struct pollfd p = { .fd = sig_fd, .events = POLLIN };
        struct signalfd_siginfo si;

        if (poll(&p, 1, 10000) <= 0)
                return FALSE;
        return read(sig_fd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo == SIGIO;
}

/* What waits behind the lease: a CREATE without O_EXCL, an OPEN for
 * writing, a SETATTR truncating without a handle. */
enum lease_kind { LEASE_CREATE, LEASE_OPEN, LEASE_TRUNCATE };

static void lease_case(enum lease_kind kind)
{
        const gboolean create = kind == LEASE_CREATE;
        struct fuse_setattr_in si = { .valid = FATTR_SIZE, .size = 0 };
        struct fuse_attr_out so = { 0 };
        g_autoptr(Harness) h = harness_new();
        g_autofree char *path = NULL;
        struct fuse_entry_out e = { 0 };
        struct fuse_create_in ci = { .flags = O_WRONLY, .mode = S_IFREG | 0644 };
        struct fuse_open_in oi = { .flags = O_WRONLY };
        struct {
                struct fuse_entry_out e;
                struct fuse_open_out o;
        } reply = { 0 };
        struct vmm_op op = { 0 };
        struct fuse_getattr_in gi = { 0 };
        struct fuse_attr_out ao;
        struct vmm_op ga = { .opcode = FUSE_GETATTR, .nodeid = VMM_ROOT, .arg_cnt = 1,
                             .arg = { { &gi, sizeof(gi) } }, .out = &ao, .out_size = sizeof(ao) };
        unsigned long long cpu0, cpu1;
        double t0, t1, hz = (double)sysconf(_SC_CLK_TCK);
        sigset_t sigio;
        int lease_fd, sig_fd;

        if (!harness_require_sluice("sluice-fs's waiting opens"))
                return;
        if (geteuid() != 0) {
                g_test_skip("needs CAP_LEASE for a lease on the test user's file");
                return;
        }
        {
                g_autofree char *bt = NULL;

                /* The kernel ends an unanswered break after this many seconds:
                 * the checks below need the open to be waiting meanwhile. */
                if (g_file_get_contents("/proc/sys/fs/lease-break-time", &bt, NULL, NULL) &&
                    atoi(bt) < 30) {
                        g_test_skip("/proc/sys/fs/lease-break-time is below 30 s");
                        return;
                }
        }
        sigemptyset(&sigio);
        sigaddset(&sigio, SIGIO);
        sig_fd = signalfd(-1, &sigio, SFD_CLOEXEC);
        g_assert_cmpint(sig_fd, >=, 0);
        harness_up(h, NULL);
        harness_write(h, "leased", "shared by Samba");
        path = harness_path(h, "leased");
        if (!create)
                assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "leased", &e));

        /* A host read lease (an oplock): a write open breaks it. */
        lease_fd = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(lease_fd, >=, 0);
        if (fcntl(lease_fd, F_SETLEASE, F_RDLCK) < 0 && errno == EINVAL) {
                g_test_skip("no leases on this file system");
                close(lease_fd);
                close(sig_fd);
                return;
        }
        g_assert_cmpint(fcntl(lease_fd, F_GETLEASE), ==, F_RDLCK);

        if (create)
                op = (struct vmm_op){ .opcode = FUSE_CREATE, .nodeid = VMM_ROOT, .arg_cnt = 2,
                                      .arg = { { &ci, sizeof(ci) }, { "leased", 7 } },
                                      .out = &reply, .out_size = sizeof(reply) };
        else if (kind == LEASE_TRUNCATE)
                op = (struct vmm_op){ .opcode = FUSE_SETATTR, .nodeid = e.nodeid, .arg_cnt = 1,
                                      .arg = { { &si, sizeof(si) } },
                                      .out = &so, .out_size = sizeof(so) };
        else
                op = (struct vmm_op){ .opcode = FUSE_OPEN, .nodeid = e.nodeid, .arg_cnt = 1,
                                      .arg = { { &oi, sizeof(oi) } },
                                      .out = &reply.o, .out_size = sizeof(reply.o) };
        assert_ok(vmm_op_submit(h->vmm, &op));
        /* The worker's open reached the lease: the kernel tells us to let go. */
        g_assert_true(wait_lease_break(sig_fd));

        /* The same queue answers another request meanwhile... */
        assert_ok(vmm_op_run(h->vmm, &ga));
        assert_errno(ga.error, 0);
        /* ...while the open still waits for the holder. */
        assert_errno(vmm_op_wait(h->vmm, &op, 0), -ETIMEDOUT);

        /* And the worker burns (almost) nothing while it waits: a window of
         * a second, judged by the ratio alone. */
        cpu0 = cpu_ticks(h->pid);
        t0 = now_s();
        g_usleep(1000 * 1000);
        cpu1 = cpu_ticks(h->pid);
        t1 = now_s();
        g_test_message("worker CPU %.3f s in %.3f s of waiting", (cpu1 - cpu0) / hz, t1 - t0);
        g_assert_cmpfloat((cpu1 - cpu0) / hz, <, 0.1 * (t1 - t0));
        assert_errno(vmm_op_wait(h->vmm, &op, 0), -ETIMEDOUT);

        if (kind == LEASE_OPEN) {
                /* Ctrl-C of the waiting process: EINTR, as a local open's wait. */
                struct fuse_interrupt_in ii = { .unique = op.unique };
                struct vmm_op intr = { .hiprio = true, .opcode = FUSE_INTERRUPT, .arg_cnt = 1,
                                       .arg = { { &ii, sizeof(ii) } }, .no_reply = true };

                assert_ok(vmm_op_run(h->vmm, &intr));
                assert_ok(vmm_op_wait(h->vmm, &op, -1));
                assert_errno(op.error, -EINTR);
                /* Asked again, it waits again. */
                op.error = 0;
                assert_ok(vmm_op_submit(h->vmm, &op));
                assert_ok(vmm_op_run(h->vmm, &ga));
                assert_errno(vmm_op_wait(h->vmm, &op, 0), -ETIMEDOUT);
        }

        /* The holder lets go: the open goes through. */
        g_assert_cmpint(fcntl(lease_fd, F_SETLEASE, F_UNLCK), ==, 0);
        close(lease_fd);
        assert_ok(vmm_op_wait(h->vmm, &op, -1));
        assert_errno(op.error, 0);
        if (create)
                g_assert_cmpuint(reply.e.nodeid, !=, 0);
        if (kind == LEASE_TRUNCATE) {
                struct stat st;

                g_assert_cmpuint(so.attr.size, ==, 0);
                g_assert_cmpint(stat(path, &st), ==, 0);
                g_assert_cmpint(st.st_size, ==, 0);
                close(sig_fd);
                harness_assert_alive(h);
                return;
        }
        {
                uint32_t written = 0;

                assert_ok(vmm_write(h->vmm, create ? reply.e.nodeid : e.nodeid, reply.o.fh, 0,
                                    "guest", 5, &written));
                g_assert_cmpuint(written, ==, 5);
        }
        close(sig_fd);
        harness_assert_alive(h);
}

static void test_lease_create(void)
{
        lease_case(LEASE_CREATE);
}

static void test_lease_open(void)
{
        lease_case(LEASE_OPEN);
}

/* A truncate without a handle re-opens the file for writing: the same wait. */
static void test_lease_truncate(void)
{
        lease_case(LEASE_TRUNCATE);
}

/* A leased open waiting when QEMU stops its ring (GET_VRING_BASE): finished
 * with EINTR before the stop is acknowledged; when the guest unmounts
 * (DESTROY): dropped without a reply, and nothing of it is left to answer
 * once the lease goes. */
static void test_lease_wait_ended(void)
{
        for (int reset = 0; reset < 2; reset++) {
                g_autoptr(Harness) h = harness_new();
                g_autofree char *path = NULL;
                struct fuse_entry_out e = { 0 };
                struct fuse_open_in oi = { .flags = O_WRONLY };
                struct fuse_open_out oo = { 0 };
                struct fuse_getattr_in gi = { 0 };
                struct fuse_attr_out ao;
                struct vmm_op ga = { .opcode = FUSE_GETATTR, .nodeid = VMM_ROOT, .arg_cnt = 1,
                                     .arg = { { &gi, sizeof(gi) } }, .out = &ao,
                                     .out_size = sizeof(ao) };
                struct vmm_op op;
                sigset_t sigio;
                int lease_fd, sig_fd;

                if (!harness_require_sluice("sluice-fs's waiting opens"))
                        return;
                if (geteuid() != 0) {
                        g_test_skip("needs CAP_LEASE for a lease on the test user's file");
                        return;
                }
                sigemptyset(&sigio);
                sigaddset(&sigio, SIGIO);
                sig_fd = signalfd(-1, &sigio, SFD_CLOEXEC);
                g_assert_cmpint(sig_fd, >=, 0);
                harness_up(h, NULL);
                harness_write(h, "leased", "shared by Samba");
                path = harness_path(h, "leased");
                assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "leased", &e));
                lease_fd = open(path, O_RDONLY | O_CLOEXEC);
                g_assert_cmpint(lease_fd, >=, 0);
                g_assert_cmpint(fcntl(lease_fd, F_SETLEASE, F_RDLCK), ==, 0);
                op = (struct vmm_op){ .opcode = FUSE_OPEN, .nodeid = e.nodeid, .arg_cnt = 1,
                                      .arg = { { &oi, sizeof(oi) } }, .out = &oo,
                                      .out_size = sizeof(oo) };
                assert_ok(vmm_op_submit(h->vmm, &op));
                g_assert_true(wait_lease_break(sig_fd));
                assert_ok(vmm_op_run(h->vmm, &ga));     /* the open waits in its thread */
                assert_errno(vmm_op_wait(h->vmm, &op, 0), -ETIMEDOUT);

                if (!reset) {
                        uint32_t base = 0;

                        assert_ok(vmm_get_vring_base(h->vmm, 1, &base));
                        /* Finished before the stop's reply: in the used ring already. */
                        assert_ok(vmm_op_wait(h->vmm, &op, 0));
                        assert_errno(op.error, -EINTR);
                } else {
                        assert_ok(vmm_destroy(h->vmm));
                        g_assert_cmpint(fcntl(lease_fd, F_SETLEASE, F_UNLCK), ==, 0);
                        /* A negative check: a leftover waiter retries at least
                         * every 20 ms; 10x that can only make this pass wrongly. */
                        g_usleep(200000);
                        assert_errno(vmm_op_wait(h->vmm, &op, 0), -ETIMEDOUT);
                }
                close(lease_fd);
                close(sig_fd);
                harness_assert_alive(h);
        }
}

/* A root worker (libvirt's <binary> route) creates as the requesting guest
 * user, also when the create waited for a lease and the name went meanwhile:
 * the file it then makes is the requester's, not root's.  The lease is held
 * until the create has answered, so the old file can never be what it opens
 * (that open would meet the lease and wait again): once the name is gone, the
 * only way the create can end is by making the name anew. */
static void test_lease_create_as_requester(void)
{
        g_autoptr(Harness) h = NULL;
        g_autofree char *path = NULL;
        char name[] = "leased";
        struct fuse_create_in ci = { .flags = O_WRONLY, .mode = S_IFREG | 0644 };
        struct {
                struct fuse_entry_out e;
                struct fuse_open_out o;
        } reply = { 0 };
        struct fuse_getattr_in gi = { 0 };
        struct fuse_attr_out ao;
        struct vmm_op ga = { .opcode = FUSE_GETATTR, .nodeid = VMM_ROOT, .arg_cnt = 1,
                             .arg = { { &gi, sizeof(gi) } }, .out = &ao, .out_size = sizeof(ao) };
        struct vmm_op op = { .opcode = FUSE_CREATE, .nodeid = VMM_ROOT, .arg_cnt = 2,
                             .arg = { { &ci, sizeof(ci) }, { name, strlen(name) + 1 } },
                             .out = &reply, .out_size = sizeof(reply) };
        struct stat st, old;
        sigset_t sigio;
        int lease_fd, sig_fd;

        if (!harness_daemon_as_root(TRUE))
                return;
        h = harness_new();
        g_assert_cmpint(chmod(h->share, 0777), ==, 0);
        harness_up(h, NULL);
        harness_daemon_as_root(FALSE);
        sigemptyset(&sigio);
        sigaddset(&sigio, SIGIO);
        sig_fd = signalfd(-1, &sigio, SFD_CLOEXEC);
        g_assert_cmpint(sig_fd, >=, 0);
        vmm_set_creds(h->vmm, 1234, 1234, 0);

        path = harness_path(h, name);
        harness_write(h, name, "shared by Samba");
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        lease_fd = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(lease_fd, >=, 0);
        g_assert_cmpint(fcntl(lease_fd, F_SETLEASE, F_RDLCK), ==, 0);

        assert_ok(vmm_op_submit(h->vmm, &op));
        g_assert_true(wait_lease_break(sig_fd));
        assert_ok(vmm_op_run(h->vmm, &ga));     /* the create waits in its thread */
        assert_errno(vmm_op_wait(h->vmm, &op, 0), -ETIMEDOUT);
        /* The name goes (an unlink breaks no lease); the lease stays. */
        g_assert_cmpint(unlink(path), ==, 0);
        assert_ok(vmm_op_wait(h->vmm, &op, -1));
        assert_errno(op.error, 0);

        g_assert_cmpint(stat(path, &st), ==, 0);
        g_assert_cmpint(fstat(lease_fd, &old), ==, 0);
        g_assert_cmpuint(st.st_ino, !=, old.st_ino);
        g_assert_cmpuint(reply.e.attr.ino, ==, st.st_ino);
        g_assert_cmpuint(st.st_uid, ==, 1234);
        g_assert_cmpuint(st.st_gid, ==, 1234);
        g_assert_cmpint(fcntl(lease_fd, F_SETLEASE, F_UNLCK), ==, 0);
        close(lease_fd);
        close(sig_fd);
        harness_assert_alive(h);
}

int main(int argc, char **argv)
{
        sigset_t sigio;

        /* The lease-break signal goes to a signalfd: blocked before any thread starts. */
        sigemptyset(&sigio);
        sigaddset(&sigio, SIGIO);
        pthread_sigmask(SIG_BLOCK, &sigio, NULL);
        harness_test_init(&argc, &argv);
        g_test_add_func("/locks/records-bounded", test_records_bounded);
        g_test_add_func("/locks/records-model", test_records_model);
        g_test_add_func("/locks/read-lock-exec", test_read_lock_exec);
        g_test_add_func("/locks/read-only-mount", test_read_only_mount);
        g_test_add_func("/locks/getlk-no-close-write", test_getlk_no_close_write);
        g_test_add_func("/locks/lease-create", test_lease_create);
        g_test_add_func("/locks/lease-truncate", test_lease_truncate);
        g_test_add_func("/locks/lease-open", test_lease_open);
        g_test_add_func("/locks/lease-wait-ended", test_lease_wait_ended);
        g_test_add_func("/locks/lease-create-as-requester", test_lease_create_as_requester);
        return g_test_run();
}
