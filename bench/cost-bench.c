/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cost-bench — sends a backend N requests of one kind, one outstanding, so
 * that what the backend spends on them can be counted from outside
 * (bench/cost-run.sh runs the backend under callgrind or strace).
 *
 *   cost-bench --socket=PATH --row=ROW[,ROW...] -n N [--twice=ROW] [--quiesce=PID] [OPTION...]
 *   cost-bench --list
 *
 * A run is: connect and INIT, the row's set-up (the files it needs, made
 * through the backend itself so that any backend sees the same work), N
 * iterations of the row, the row's tear-down, disconnect.  Everything but
 * the N iterations is the same whatever N is, so the difference between a
 * run of N2 and a run of N1 iterations, divided by N2 - N1, is the cost of
 * one iteration alone: connection, set-up and exit cancel out.  Several
 * rows in one run (--row=A,B,C, one after the other, each on files of its
 * own) save the backend's start-ups: a run of N each and one run per row
 * with that row at 2N (--twice) give every row's figure from K + 1 runs
 * instead of 2K.  With --mark a STATFS request goes before every row and
 * after the last: cost-run.sh has callgrind dump its counts each time the
 * backend starts to answer one, so that one run gives every row's count
 * apart, and two runs (N and 2N) all the rows' figures.
 *
 * The frontend is tests/frontend's test VMM (vmm.h): its own cost does not
 * matter here, only the backend's is counted.  Each request is a plain
 * descriptor chain (header, one descriptor per argument, out header, reply)
 * unless --indirect / --chunk lay it out the way a Linux guest does (one
 * indirect table, buffers cut at page boundaries).  Every reply is checked:
 * a request that fails makes the run fail (exit 1), so a row can never be
 * "measured" on errors.
 *
 * --quiesce=PID makes the count repeatable.  A backend's threads race the
 * frontend: a request published while the thread that answered the last one
 * is still on its way back to sleep is found without a wake-up, one published
 * a little later costs a wake-up and perhaps a spurious one after it, and
 * under valgrind (which runs one thread at a time) the split changes from run
 * to run by several percent.  So before every request the frontend waits
 * until every thread of PID (and of its child processes) sleeps waiting for
 * events: each request then meets the backend in the same state, as it
 * would from a guest that is not in a hurry.
 *
 * For the same reason VIRTIO_RING_F_EVENT_IDX is not negotiated unless
 * --event-idx says so: the test VMM asks for the used-ring interrupt only
 * once it waits, after the kick, so whether the backend sends the call or
 * finds it suppressed depends on which side was faster.  Without the
 * feature the backend always calls, as it does for a Linux guest, which
 * keeps its callbacks enabled between requests. */
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

#define DIR_ENTRIES     100
#define BIG_IO          (1u << 20)
#define SMALL_IO        4096u
#define READDIR_BUF     (64u << 10)     /* room for DIR_ENTRIES readdirplus entries and . and .. */

static struct {
        bool indirect;
        size_t chunk;
} layout;

static bool event_idx;
static pid_t quiesce_pid;
static unsigned long quiesce_timeouts;

/* A thread asleep in one of these waits for work; anything else (running,
 * waiting for valgrind's lock, stopped by strace) is still busy. */
static bool waiting_for_events(const char *wchan)
{
        static const char *const waits[] = {
                "epoll", "ep_poll", "poll_schedule_timeout", "do_sys_poll", "do_select", "futex",
                "do_wait", "sigtimedwait", "sigsuspend", "accept", "unix_stream_read", "eventfd_read",
        };
        for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
                if (strstr(wchan, waits[i]))
                        return true;
        return false;
}

/* True when every thread of pid is asleep waiting for events; adds pid's
 * child processes to *more (at most max_more). */
static bool process_idle(pid_t pid, pid_t *more, unsigned *n_more, unsigned max_more)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        DIR *d = opendir(path);
        if (!d)
                return true;    /* gone */
        bool idle = true;
        struct dirent *de;
        while (idle && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char file[320], buf[512];
                snprintf(file, sizeof(file), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
                FILE *f = fopen(file, "re");
                if (!f)
                        continue;
                size_t len = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                buf[len] = '\0';
                const char *p = strrchr(buf, ')');
                if (!p || p[1] != ' ' || p[2] != 'S') {
                        idle = false;
                        break;
                }
                snprintf(file, sizeof(file), "/proc/%d/task/%s/wchan", (int)pid, de->d_name);
                f = fopen(file, "re");
                len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
                if (f)
                        fclose(f);
                buf[len] = '\0';
                if (!waiting_for_events(buf))
                        idle = false;
                snprintf(file, sizeof(file), "/proc/%d/task/%s/children", (int)pid, de->d_name);
                f = fopen(file, "re");
                if (f) {
                        long child;
                        while (*n_more < max_more && fscanf(f, "%ld", &child) == 1)
                                more[(*n_more)++] = (pid_t)child;
                        fclose(f);
                }
        }
        closedir(d);
        return idle;
}

/* Waits (up to 5 s, then goes on and counts it) until the backend is idle. */
static void quiesce(void)
{
        if (quiesce_pid <= 0)
                return;
        struct timespec start, now, pause = { 0, 20000 };
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                pid_t pids[64] = { quiesce_pid };
                unsigned n = 1;
                bool idle = true;
                for (unsigned i = 0; idle && i < n; i++)
                        idle = process_idle(pids[i], pids, &n, 64);
                if (idle)
                        return;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec - start.tv_sec >= 5) {
                        quiesce_timeouts++;
                        return;
                }
                nanosleep(&pause, NULL);
        }
}

static void *io_buf;            /* BIG_IO bytes: WRITE payloads and READ replies */
static void *dir_buf;           /* READDIR_BUF bytes */

static int fail(const char *what, int r)
{
        fprintf(stderr, "cost-bench: %s: %s\n", what, strerror(r < 0 ? -r : r));
        return -1;
}

/* One request laid out as --indirect/--chunk say; the FUSE error or a
 * transport error. */
static int req(struct vmm *v, uint32_t opcode, uint64_t nodeid, const void *a1, size_t l1,
               const void *a2, size_t l2, const void *a3, size_t l3, void *out, size_t out_size,
               size_t *ret_out_len)
{
        struct vmm_op op = { .opcode = opcode, .nodeid = nodeid, .out = out, .out_size = out_size,
                             .indirect = layout.indirect, .chunk = layout.chunk };
        const void *a[3] = { a1, a2, a3 };
        quiesce();
        size_t l[3] = { l1, l2, l3 };
        for (unsigned i = 0; i < 3; i++)
                if (a[i])
                        op.arg[op.arg_cnt++] = (struct iovec){ (void *)a[i], l[i] };
        int r = vmm_op_run(v, &op);
        if (r < 0)
                return r;
        if (ret_out_len)
                *ret_out_len = op.out_len;
        return op.error;
}

/* FORGET goes on the hiprio queue and has no reply, as a guest sends it. */
static int forget(struct vmm *v, uint64_t nodeid)
{
        struct fuse_forget_in in = { .nlookup = 1 };
        struct vmm_op op = { .hiprio = true, .opcode = FUSE_FORGET, .nodeid = nodeid, .no_reply = true,
                             .arg_cnt = 1, .arg = { { &in, sizeof(in) } },
                             .indirect = layout.indirect, .chunk = layout.chunk };
        quiesce();
        return vmm_op_run(v, &op);
}

static int create(struct vmm *v, uint64_t parent, const char *name, uint64_t *ret_node, uint64_t *ret_fh)
{
        struct fuse_create_in in = { .flags = O_RDWR | O_CREAT, .mode = S_IFREG | 0644, .umask = 022 };
        struct { struct fuse_entry_out e; struct fuse_open_out o; } out;
        size_t len = 0;
        /* Defined on every path: the callers test r < 0, and a reply's
         * error field is not bounded to 0 or a negative errno. */
        *ret_node = 0;
        *ret_fh = 0;
        int r = req(v, FUSE_CREATE, parent, &in, sizeof(in), name, strlen(name) + 1, NULL, 0,
                    &out, sizeof(out), &len);
        if (r == 0 && len != sizeof(out))
                r = -EPROTO;
        if (r == 0) {
                *ret_node = out.e.nodeid;
                *ret_fh = out.o.fh;
        }
        return r;
}

static int release(struct vmm *v, uint32_t opcode, uint64_t node, uint64_t fh)
{
        struct fuse_release_in in = { .fh = fh, .flags = O_RDWR };
        return req(v, opcode, node, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

/* A file that exists, closed, and (unless keep) unknown to the backend again. */
static int make_file(struct vmm *v, uint64_t parent, const char *name, bool keep, uint64_t *ret_node)
{
        uint64_t node, fh;
        int r = create(v, parent, name, &node, &fh);
        if (r == 0)
                r = release(v, FUSE_RELEASE, node, fh);
        if (r == 0 && !keep)
                r = forget(v, node);
        if (ret_node)
                *ret_node = node;
        return r;
}

/* ---- the rows: set-up, one iteration, tear-down ---- */

/* Every row names its files after itself, so that rows run one after the
 * other in one connection (--row=A,B) leave each other alone. */
struct row_state {
        const char *name;               /* the row's: its file or folder */
        char other[64];                 /* rename's second name */
        uint64_t node, fh, dir;
        uint64_t iteration;
};

static int io_setup(struct vmm *v, struct row_state *s)
{
        int r = create(v, VMM_ROOT, s->name, &s->node, &s->fh);
        if (r < 0)
                return fail("CREATE of the data file", r);
        /* a whole MiB of data, so that every READ returns what it asks for */
        struct fuse_write_in in = { .fh = s->fh, .size = BIG_IO };
        struct fuse_write_out out;
        r = req(v, FUSE_WRITE, s->node, &in, sizeof(in), io_buf, BIG_IO, NULL, 0, &out, sizeof(out), NULL);
        if (r == 0 && out.size != BIG_IO)
                r = -EIO;
        return r < 0 ? fail("WRITE 1 MiB", r) : 0;
}

static int io_teardown(struct vmm *v, struct row_state *s)
{
        int r = release(v, FUSE_RELEASE, s->node, s->fh);
        return r < 0 ? fail("RELEASE", r) : 0;
}

static int do_read(struct vmm *v, struct row_state *s, uint32_t size)
{
        struct fuse_read_in in = { .fh = s->fh, .size = size, .flags = O_RDWR };
        size_t len = 0;
        int r = req(v, FUSE_READ, s->node, &in, sizeof(in), NULL, 0, NULL, 0, io_buf, size, &len);
        if (r == 0 && len != size)
                r = -EIO;
        return r < 0 ? fail("READ", r) : 0;
}

static int do_write(struct vmm *v, struct row_state *s, uint32_t size)
{
        struct fuse_write_in in = { .fh = s->fh, .size = size, .flags = O_RDWR };
        struct fuse_write_out out;
        int r = req(v, FUSE_WRITE, s->node, &in, sizeof(in), io_buf, size, NULL, 0, &out, sizeof(out), NULL);
        if (r == 0 && out.size != size)
                r = -EIO;
        return r < 0 ? fail("WRITE", r) : 0;
}

static int read_4k(struct vmm *v, struct row_state *s) { return do_read(v, s, SMALL_IO); }
static int read_1m(struct vmm *v, struct row_state *s) { return do_read(v, s, BIG_IO); }
static int write_4k(struct vmm *v, struct row_state *s) { return do_write(v, s, SMALL_IO); }
static int write_1m(struct vmm *v, struct row_state *s) { return do_write(v, s, BIG_IO); }

static int file_setup(struct vmm *v, struct row_state *s)
{
        int r = make_file(v, VMM_ROOT, s->name, true, &s->node);
        return r < 0 ? fail("CREATE of the file", r) : 0;
}

static int getattr(struct vmm *v, struct row_state *s)
{
        struct fuse_getattr_in in = { 0 };
        struct fuse_attr_out out;
        size_t len = 0;
        int r = req(v, FUSE_GETATTR, s->node, &in, sizeof(in), NULL, 0, NULL, 0, &out, sizeof(out), &len);
        if (r == 0 && len != sizeof(out))
                r = -EPROTO;
        return r < 0 ? fail("GETATTR", r) : 0;
}

/* The file exists but the backend has forgotten it: every LOOKUP finds a
 * new inode and the FORGET drops it, as in a walk of a tree. */
static int lookup_setup(struct vmm *v, struct row_state *s)
{
        int r = make_file(v, VMM_ROOT, s->name, false, &s->node);
        return r < 0 ? fail("CREATE of the file", r) : 0;
}

static int lookup_forget(struct vmm *v, struct row_state *s)
{
        struct fuse_entry_out e;
        size_t len = 0;
        int r = req(v, FUSE_LOOKUP, VMM_ROOT, s->name, strlen(s->name) + 1, NULL, 0, NULL, 0,
                    &e, sizeof(e), &len);
        if (r == 0 && (len != sizeof(e) || e.nodeid == 0))
                r = -EPROTO;
        if (r < 0)
                return fail("LOOKUP", r);
        r = forget(v, e.nodeid);
        return r < 0 ? fail("FORGET", r) : 0;
}

/* In a guest's order: the FORGET comes when the unlinked inode leaves its
 * cache (the legacy virtiofsd fails an UNLINK of a name it has forgotten). */
static int create_cycle(struct vmm *v, struct row_state *s)
{
        uint64_t node, fh;
        int r = create(v, VMM_ROOT, s->name, &node, &fh);
        if (r < 0)
                return fail("CREATE", r);
        r = release(v, FUSE_RELEASE, node, fh);
        if (r < 0)
                return fail("RELEASE", r);
        r = req(v, FUSE_UNLINK, VMM_ROOT, s->name, strlen(s->name) + 1, NULL, 0, NULL, 0, NULL, 0, NULL);
        if (r < 0)
                return fail("UNLINK", r);
        r = forget(v, node);
        return r < 0 ? fail("FORGET", r) : 0;
}

/* A folder of DIR_ENTRIES files, none of them known to the backend. */
static int dir_setup(struct vmm *v, struct row_state *s)
{
        struct fuse_mkdir_in in = { .mode = 0755, .umask = 022 };
        struct fuse_entry_out e;
        size_t len = 0;
        int r = req(v, FUSE_MKDIR, VMM_ROOT, &in, sizeof(in), s->name, strlen(s->name) + 1, NULL, 0,
                    &e, sizeof(e), &len);
        if (r == 0 && len != sizeof(e))
                r = -EPROTO;
        if (r < 0)
                return fail("MKDIR", r);
        s->dir = e.nodeid;
        for (unsigned i = 0; i < DIR_ENTRIES; i++) {
                char entry[32];
                snprintf(entry, sizeof(entry), "entry-%03u", i);
                r = make_file(v, s->dir, entry, false, NULL);
                if (r < 0)
                        return fail("CREATE of a folder entry", r);
        }
        return 0;
}

struct dirent_count { unsigned entries; };

static void count_dirent(const struct fuse_dirent *d, const char *name, const struct fuse_entry_out *entry,
                         void *userdata)
{
        struct dirent_count *c = userdata;
        (void)d; (void)entry;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
                c->entries++;
}

/* OPENDIR, one READDIRPLUS that returns all DIR_ENTRIES, RELEASEDIR.  Each
 * entry adds a lookup to its inode (the guest now knows it) and nothing
 * forgets them: after the first iteration the backend knows every inode. */
static int readdir_cycle(struct vmm *v, struct row_state *s)
{
        struct fuse_open_in oin = { .flags = O_RDONLY | O_DIRECTORY };
        struct fuse_open_out oout;
        size_t len = 0;
        int r = req(v, FUSE_OPENDIR, s->dir, &oin, sizeof(oin), NULL, 0, NULL, 0, &oout, sizeof(oout), &len);
        if (r == 0 && len != sizeof(oout))
                r = -EPROTO;
        if (r < 0)
                return fail("OPENDIR", r);
        struct fuse_read_in rin = { .fh = oout.fh, .size = READDIR_BUF, .flags = O_RDONLY | O_DIRECTORY };
        r = req(v, FUSE_READDIRPLUS, s->dir, &rin, sizeof(rin), NULL, 0, NULL, 0, dir_buf, READDIR_BUF, &len);
        if (r < 0)
                return fail("READDIRPLUS", r);
        struct dirent_count c = { 0 };
        r = vmm_dirents_foreach(dir_buf, len, true, count_dirent, &c);
        if (r == 0 && c.entries != DIR_ENTRIES) {
                fprintf(stderr, "cost-bench: READDIRPLUS returned %u entries, not %u\n", c.entries, DIR_ENTRIES);
                return -1;
        }
        if (r < 0)
                return fail("READDIRPLUS reply", r);
        r = release(v, FUSE_RELEASEDIR, s->dir, oout.fh);
        return r < 0 ? fail("RELEASEDIR", r) : 0;
}

/* chmod, alternating between two modes so that every one changes something */
static int setattr(struct vmm *v, struct row_state *s)
{
        struct fuse_setattr_in in = { .valid = FATTR_MODE,
                                      .mode = S_IFREG | (s->iteration & 1 ? 0644 : 0600) };
        struct fuse_attr_out out;
        size_t len = 0;
        int r = req(v, FUSE_SETATTR, s->node, &in, sizeof(in), NULL, 0, NULL, 0, &out, sizeof(out), &len);
        if (r == 0 && len != sizeof(out))
                r = -EPROTO;
        return r < 0 ? fail("SETATTR", r) : 0;
}

static int rename_setup(struct vmm *v, struct row_state *s)
{
        /* kept known, as a guest renames what it has looked up (the legacy
         * virtiofsd fails a RENAME of a name it does not know) */
        snprintf(s->other, sizeof(s->other), "%s-2", s->name);
        int r = make_file(v, VMM_ROOT, s->name, true, &s->node);
        return r < 0 ? fail("CREATE of the file", r) : 0;
}

/* NAME -> NAME-2, then back: a run of even N ends where it began */
static int rename_one(struct vmm *v, struct row_state *s)
{
        struct fuse_rename_in in = { .newdir = VMM_ROOT };
        const char *from = s->iteration & 1 ? s->other : s->name;
        const char *to = s->iteration & 1 ? s->name : s->other;
        int r = req(v, FUSE_RENAME, VMM_ROOT, &in, sizeof(in), from, strlen(from) + 1, to, strlen(to) + 1,
                    NULL, 0, NULL);
        return r < 0 ? fail("RENAME", r) : 0;
}

struct row {
        const char *name;
        int (*setup)(struct vmm *, struct row_state *);
        int (*one)(struct vmm *, struct row_state *);
        int (*teardown)(struct vmm *, struct row_state *);
        const char *what;
};

static const struct row rows[] = {
        { "getattr", file_setup, getattr, NULL, "GETATTR of a file" },
        { "lookup-forget", lookup_setup, lookup_forget, NULL, "LOOKUP of a file the backend forgot, FORGET" },
        { "read-4k", io_setup, read_4k, io_teardown, "READ 4 KiB at offset 0 of a 1 MiB file" },
        { "write-4k", io_setup, write_4k, io_teardown, "WRITE 4 KiB at offset 0" },
        { "read-1m", io_setup, read_1m, io_teardown, "READ 1 MiB at offset 0" },
        { "write-1m", io_setup, write_1m, io_teardown, "WRITE 1 MiB at offset 0" },
        { "create-release-forget-unlink", NULL, create_cycle, NULL, "CREATE, RELEASE, UNLINK, FORGET" },
        { "opendir-readdirplus100-releasedir", dir_setup, readdir_cycle, NULL,
          "OPENDIR, READDIRPLUS of 100 entries, RELEASEDIR" },
        { "setattr", file_setup, setattr, NULL, "SETATTR of the mode (chmod)" },
        { "rename", rename_setup, rename_one, NULL, "RENAME in one folder, back and forth" },
};

/* A STATFS between rows: bench/cost-run.sh has callgrind dump its counts
 * whenever the backend enters its STATFS handler, one file per row. */
static int mark(struct vmm *v)
{
        struct fuse_statfs_out out;
        size_t len = 0;
        int r = req(v, FUSE_STATFS, VMM_ROOT, NULL, 0, NULL, 0, NULL, 0, &out, sizeof(out), &len);
        return r < 0 ? fail("STATFS", r) : 0;
}

static int usage(void)
{
        fprintf(stderr,
                "usage: cost-bench --socket=PATH --row=ROW[,ROW...] -n N [OPTION...]\n"
                "       cost-bench --list\n"
                "  --socket=PATH      the backend's vhost-user socket\n"
                "  --row=ROW,...      what to send (--list names them), row after row\n"
                "  -n N               iterations of each row (0: set-up and tear-down only)\n"
                "  --twice=ROW        2N iterations of that row\n"
                "  --mark             a STATFS before every row and after the last\n"
                "  --creds=UID:GID    the guest user in every request header (default the caller)\n"
                "  --indirect         every request in one indirect descriptor table\n"
                "  --chunk=BYTES      cut every buffer into descriptors of at most BYTES\n"
                "  --event-idx        negotiate VIRTIO_RING_F_EVENT_IDX (see above)\n"
                "  --quiesce=PID      before every request, wait until the backend PID is idle\n"
                "  --timeout-ms=MS    per request (default 60000: the backend may run under valgrind)\n");
        return 2;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "socket", required_argument, NULL, 's' },
                { "row", required_argument, NULL, 'r' },
                { "creds", required_argument, NULL, 'u' },
                { "indirect", no_argument, NULL, 'i' },
                { "chunk", required_argument, NULL, 'c' },
                { "timeout-ms", required_argument, NULL, 't' },
                { "list", no_argument, NULL, 'l' },
                { "quiesce", required_argument, NULL, 'q' },
                { "event-idx", no_argument, NULL, 'e' },
                { "twice", required_argument, NULL, 'w' },
                { "mark", no_argument, NULL, 'm' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *socket = NULL, *row_names = NULL, *twice = NULL;
        unsigned long long n = 0;
        unsigned uid = 0, gid = 0;
        bool have_n = false, creds = false, marks = false;
        int timeout_ms = 60000, c;
        char *end;

        while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
                switch (c) {
                case 's': socket = optarg; break;
                case 'r': row_names = optarg; break;
                case 'w': twice = optarg; break;
                case 'm': marks = true; break;
                case 'n':
                        errno = 0;
                        n = strtoull(optarg, &end, 10);
                        if (errno || *end || optarg[0] == '-')
                                return usage();
                        have_n = true;
                        break;
                case 'u':
                        if (sscanf(optarg, "%u:%u", &uid, &gid) != 2)
                                return usage();
                        creds = true;
                        break;
                case 'i': layout.indirect = true; break;
                case 'c': layout.chunk = strtoul(optarg, NULL, 10); break;
                case 't': timeout_ms = atoi(optarg); break;
                case 'e': event_idx = true; break;
                case 'q': quiesce_pid = (pid_t)atoi(optarg); break;
                case 'l':
                        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                                printf("%-36s %s\n", rows[i].name, rows[i].what);
                        return 0;
                default: return usage();
                }
        }
        if (!socket || !row_names || !have_n || optind != argc)
                return usage();
        const size_t n_rows = sizeof(rows) / sizeof(rows[0]);
        const struct row *run[sizeof(rows) / sizeof(rows[0])];
        unsigned n_run = 0;
        bool twice_found = !twice;
        for (const char *p = row_names; *p;) {
                size_t len = strcspn(p, ",");
                const struct row *row = NULL;
                for (size_t i = 0; i < n_rows; i++)
                        if (strlen(rows[i].name) == len && strncmp(rows[i].name, p, len) == 0)
                                row = &rows[i];
                if (!row || n_run == n_rows) {
                        fprintf(stderr, "cost-bench: no row '%.*s' (--list names them), or one twice\n",
                                (int)len, p);
                        return 2;
                }
                for (unsigned i = 0; i < n_run; i++)
                        if (run[i] == row) {
                                fprintf(stderr, "cost-bench: row %s named twice\n", row->name);
                                return 2;
                        }
                run[n_run++] = row;
                if (twice && strcmp(twice, row->name) == 0)
                        twice_found = true;
                p += len + (p[len] == ',');
        }
        if (n_run == 0 || !twice_found) {
                fprintf(stderr, "cost-bench: --twice names a row not in --row\n");
                return 2;
        }

        io_buf = calloc(1, BIG_IO);
        dir_buf = calloc(1, READDIR_BUF);
        if (!io_buf || !dir_buf) {
                fail("memory", -ENOMEM);
                return 1;
        }
        memset(io_buf, 0x5a, BIG_IO);

        /* guest memory for a 1 MiB request and its reply, with room to spare */
        struct vmm_config cfg = { .mem_size = 64u << 20, .timeout_ms = timeout_ms,
                                  .connect_timeout_ms = timeout_ms, .no_event_idx = !event_idx };
        struct vmm *v = NULL;
        int r = vmm_connect(socket, &cfg, &v);
        if (r < 0) {
                fail("connect", r);
                return 1;
        }
        if (creds)
                vmm_set_creds(v, uid, gid, 0);
        r = vmm_init(v, NULL);
        if (r < 0) {
                fail("INIT", r);
                vmm_free(v);
                return 1;
        }

        int status = 0;
        for (unsigned i = 0; status == 0 && i < n_run; i++) {
                const struct row *row = run[i];
                uint64_t iterations = twice && strcmp(twice, row->name) == 0 ? 2 * n : n;
                struct row_state s = { .name = row->name };
                if (marks && mark(v) < 0) {
                        status = 1;
                        break;
                }
                if (row->setup && row->setup(v, &s) < 0)
                        status = 1;
                for (s.iteration = 0; status == 0 && s.iteration < iterations; s.iteration++)
                        if (row->one(v, &s) < 0)
                                status = 1;
                if (status == 0 && row->teardown && row->teardown(v, &s) < 0)
                        status = 1;
                if (status)
                        fprintf(stderr, "cost-bench: row %s failed after %llu of %llu iterations\n", row->name,
                                (unsigned long long)s.iteration, (unsigned long long)iterations);
        }
        if (status == 0 && marks && mark(v) < 0)
                status = 1;
        quiesce();
        vmm_free(v);
        if (quiesce_timeouts)
                fprintf(stderr, "cost-bench: the backend was still busy 5 s after %lu of the requests "
                        "(see --quiesce): the count may vary\n", quiesce_timeouts);
        free(io_buf);
        free(dir_buf);
        return status;
}
