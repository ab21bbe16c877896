/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-folder-index.c — which host name a case-insensitive name means
 * (daemon/folder-index.c): answers, twins, the folder's changes, the bounds,
 * several threads. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "folder-index.h"

struct fixture {
        char *dir;
        int fd;                 /* O_PATH, as the daemon's inodes hold folders */
        struct findex *ix;
};

static void touch(const char *dir, const char *name)
{
        g_autofree char *p = g_build_filename(dir, name, NULL);
        g_assert_no_errno(g_file_set_contents(p, "", 0, NULL) ? 0 : -1);
}

static int open_folder(const char *dir)
{
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        return fd;
}

static void setup(struct fixture *f, gconstpointer data)
{
        (void)data;
        f->dir = g_dir_make_tmp("findex-XXXXXX", NULL);
        g_assert_nonnull(f->dir);
        f->fd = open_folder(f->dir);
        f->ix = findex_new(NULL);
        g_assert_nonnull(f->ix);
}

static void rm_rf(const char *dir)
{
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *n;
        while (d && (n = g_dir_read_name(d))) {
                g_autofree char *p = g_build_filename(dir, n, NULL);
                if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
                        rm_rf(p);
                else
                        g_unlink(p);
        }
        g_rmdir(dir);
}

static void teardown(struct fixture *f, gconstpointer data)
{
        (void)data;
        findex_free(f->ix);
        close(f->fd);
        rm_rf(f->dir);
        g_free(f->dir);
}

static bool later(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Waits (bounded) until the coarse clock is `secs` past the folder's last
 * change.  A scan is kept only when that change is older than the clock's
 * current tick (secs 0), so the next lookup builds an index the one after
 * can use; an index kept up by our own changes is read again once the
 * folder is a second old (secs 1). */
static void wait_folder_older(int fd, int secs)
{
        struct stat st;
        g_assert_no_errno(fstat(fd, &st));
        st.st_ctim.tv_sec += secs;
        st.st_mtim.tv_sec += secs;
        for (int i = 0; i < 4000; i++) {
                struct timespec now;
                g_assert_no_errno(clock_gettime(CLOCK_REALTIME_COARSE, &now));
                if (later(&now, &st.st_ctim) && later(&now, &st.st_mtim))
                        return;
                g_usleep(1000);
        }
        g_error("the coarse clock did not pass the folder's ctime + %d s in 4 s", secs);
}

static void wait_folder_settled(int fd)
{
        wait_folder_older(fd, 0);
}

static int lookup(struct fixture *f, const char *name, char out[FINDEX_NAME_SIZE])
{
        return findex_lookup(f->ix, f->fd, name, strlen(name), out);
}

static struct findex_stats stats(struct findex *ix)
{
        struct findex_stats s;
        findex_get_stats(ix, &s);
        return s;
}

static void test_answers(struct fixture *f, gconstpointer data)
{
        char out[FINDEX_NAME_SIZE];
        (void)data;
        touch(f->dir, "Readme.txt");
        touch(f->dir, "Straße");
        touch(f->dir, "ДОКУМЕНТ");
        g_autofree char *folder = g_build_filename(f->dir, "Folder", NULL);
        g_assert_no_errno(g_mkdir(folder, 0755));

        g_assert_cmpint(lookup(f, "README.TXT", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "Readme.txt");
        g_assert_cmpint(lookup(f, "readme.txt", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "Readme.txt");
        g_assert_cmpint(lookup(f, "STRAßE", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "Straße");
        g_assert_cmpint(lookup(f, "документ", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "ДОКУМЕНТ");
        g_assert_cmpint(lookup(f, "folder", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "Folder");
        g_assert_cmpint(lookup(f, "STRASSE", out), ==, FINDEX_NONE);
        g_assert_cmpint(lookup(f, "missing", out), ==, FINDEX_NONE);
        /* "." and ".." are never answers */
        g_assert_cmpint(lookup(f, ".", out), ==, FINDEX_NONE);
        g_assert_cmpint(lookup(f, "..", out), ==, FINDEX_NONE);
}

static void test_twins(struct fixture *f, gconstpointer data)
{
        char out[FINDEX_NAME_SIZE];
        (void)data;
        touch(f->dir, "Foo");
        touch(f->dir, "foo");
        touch(f->dir, "bar");
        wait_folder_settled(f->fd);
        for (int round = 0; round < 2; round++) {       /* scanned, then kept */
                g_assert_cmpint(lookup(f, "FOO", out), ==, FINDEX_MANY);
                g_assert_cmpint(lookup(f, "foo", out), ==, FINDEX_MANY);
                g_assert_cmpint(lookup(f, "BAR", out), ==, FINDEX_ONE);
                g_assert_cmpstr(out, ==, "bar");
        }
        g_assert_cmpuint(stats(f->ix).scans, ==, 1);
}

static void test_kept_and_invalidated(struct fixture *f, gconstpointer data)
{
        char out[FINDEX_NAME_SIZE];
        struct stat st;
        (void)data;
        touch(f->dir, "Report.DOC");
        wait_folder_settled(f->fd);
        g_assert_cmpint(lookup(f, "report.doc", out), ==, FINDEX_ONE);
        g_assert_cmpint(lookup(f, "REPORT.DOC", out), ==, FINDEX_ONE);
        g_assert_cmpint(lookup(f, "other", out), ==, FINDEX_NONE);
        struct findex_stats s = stats(f->ix);
        g_assert_cmpuint(s.scans, ==, 1);
        g_assert_cmpuint(s.hits, ==, 2);
        g_assert_cmpuint(s.folders, ==, 1);
        g_assert_cmpuint(s.names, ==, 1);

        /* the host adds a twin behind our back: the next miss sees it */
        touch(f->dir, "REPORT.doc");
        g_assert_cmpint(lookup(f, "report.doc", out), ==, FINDEX_MANY);
        /* … and removes the first one */
        g_autofree char *p = g_build_filename(f->dir, "Report.DOC", NULL);
        g_assert_no_errno(g_unlink(p));
        g_assert_cmpint(lookup(f, "report.doc", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "REPORT.doc");
        /* a rename on the host */
        g_autofree char *from = g_build_filename(f->dir, "REPORT.doc", NULL);
        g_autofree char *to = g_build_filename(f->dir, "Final.doc", NULL);
        g_assert_no_errno(g_rename(from, to));
        g_assert_cmpint(lookup(f, "report.doc", out), ==, FINDEX_NONE);
        g_assert_cmpint(lookup(f, "FINAL.DOC", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "Final.doc");

        /* the daemon's own change: forgotten at once, read again */
        wait_folder_settled(f->fd);
        g_assert_cmpint(lookup(f, "final.doc", out), ==, FINDEX_ONE);
        g_assert_cmpint(lookup(f, "final.doc", out), ==, FINDEX_ONE);
        guint64 scans = stats(f->ix).scans;
        g_assert_no_errno(fstat(f->fd, &st));
        findex_forget(f->ix, st.st_dev, st.st_ino);
        g_assert_cmpuint(stats(f->ix).folders, ==, 0);
        g_assert_cmpint(lookup(f, "final.doc", out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(f->ix).scans, ==, scans + 1);
}

/* The daemon's own changes bring the index up to date instead of making
 * the next miss read the folder again; a twin they make, or a change the
 * index did not see before them, drops it. */
static void test_own_changes(struct fixture *f, gconstpointer data)
{
        char out[FINDEX_NAME_SIZE];
        struct findex_stamp stamp;
        (void)data;
        touch(f->dir, "Keep.txt");
        wait_folder_settled(f->fd);
        g_assert_cmpint(lookup(f, "KEEP.TXT", out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(f->ix).scans, ==, 1);

        /* a hundred files made by "the daemon": not a scan after each (one
         * more at a second's boundary at most) */
        for (int i = 0; i < 100; i++) {
                g_autofree char *n = g_strdup_printf("New%03d.txt", i);
                g_autofree char *upper = g_ascii_strup(n, -1);
                g_assert_cmpint(lookup(f, upper, out), ==, FINDEX_NONE);
                g_assert_no_errno(findex_stamp(f->fd, &stamp));
                touch(f->dir, n);
                findex_note_change(f->ix, f->fd, &stamp, NULL, n);
                g_assert_cmpint(lookup(f, upper, out), ==, FINDEX_ONE);
                g_assert_cmpstr(out, ==, n);
        }
        g_assert_cmpuint(stats(f->ix).scans, <, 10);
        g_assert_cmpuint(stats(f->ix).names, ==, 101);

        /* a removal and a rename */
        g_autofree char *p = g_build_filename(f->dir, "New007.txt", NULL);
        g_assert_no_errno(findex_stamp(f->fd, &stamp));
        g_assert_no_errno(g_unlink(p));
        findex_note_change(f->ix, f->fd, &stamp, "New007.txt", NULL);
        g_assert_cmpint(lookup(f, "new007.TXT", out), ==, FINDEX_NONE);
        g_autofree char *from = g_build_filename(f->dir, "Keep.txt", NULL);
        g_autofree char *to = g_build_filename(f->dir, "KEEP.TXT", NULL);
        g_assert_no_errno(findex_stamp(f->fd, &stamp));
        g_assert_no_errno(g_rename(from, to));
        findex_note_change(f->ix, f->fd, &stamp, "Keep.txt", "KEEP.TXT");
        g_assert_cmpint(lookup(f, "keep.txt", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "KEEP.TXT");

        /* quiet for a second: read once more (a host change in the tick of
         * one of ours would not have moved the times), then kept again */
        wait_folder_older(f->fd, 1);
        guint64 scans = stats(f->ix).scans;
        g_assert_cmpint(lookup(f, "keep.txt", out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(f->ix).scans, ==, scans + 1);
        g_assert_cmpint(lookup(f, "keep.txt", out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(f->ix).scans, ==, scans + 1);

        /* the host changed the folder before our change: dropped, read again */
        touch(f->dir, "host.txt");
        g_assert_no_errno(findex_stamp(f->fd, &stamp));
        stamp.mtime.tv_nsec ^= 1;       /* as if taken before the host's change */
        touch(f->dir, "ours.txt");
        findex_note_change(f->ix, f->fd, &stamp, NULL, "ours.txt");
        g_assert_cmpuint(stats(f->ix).folders, ==, 0);
        g_assert_cmpint(lookup(f, "HOST.TXT", out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(f->ix).scans, ==, scans + 2);

        /* a twin made by us: the key is ambiguous from then on */
        wait_folder_settled(f->fd);
        g_assert_cmpint(lookup(f, "OURS.TXT", out), ==, FINDEX_ONE);
        g_assert_no_errno(findex_stamp(f->fd, &stamp));
        touch(f->dir, "Ours.txt");
        findex_note_change(f->ix, f->fd, &stamp, NULL, "Ours.txt");
        g_assert_cmpint(lookup(f, "OURS.TXT", out), ==, FINDEX_MANY);
        /* removing one twin: the index cannot tell what is left, drops it */
        g_autofree char *twin = g_build_filename(f->dir, "Ours.txt", NULL);
        g_assert_no_errno(findex_stamp(f->fd, &stamp));
        g_assert_no_errno(g_unlink(twin));
        findex_note_change(f->ix, f->fd, &stamp, "Ours.txt", NULL);
        g_assert_cmpuint(stats(f->ix).folders, ==, 0);
        g_assert_cmpint(lookup(f, "OURS.TXT", out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "ours.txt");
}

static void test_errors(struct fixture *f, gconstpointer data)
{
        char out[FINDEX_NAME_SIZE];
        char long_name[300];
        (void)data;
        touch(f->dir, "file");
        g_autofree char *p = g_build_filename(f->dir, "file", NULL);
        int fd = open(p, O_PATH | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(findex_lookup(f->ix, fd, "x", 1, out), ==, -ENOTDIR);
        close(fd);
        memset(long_name, 'a', sizeof(long_name));
        g_assert_cmpint(findex_lookup(f->ix, f->fd, long_name, sizeof(long_name), out), ==, -ENAMETOOLONG);
        g_assert_cmpint(findex_lookup(f->ix, f->fd, "", 0, out), ==, -ENAMETOOLONG);
        g_assert_cmpint(findex_lookup(f->ix, -1, "x", 1, out), ==, -EBADF);
}

/* Folders over the cap are evicted least recently used first; a folder too
 * big for the bounds is answered but never kept. */
static void test_bounds(void)
{
        struct findex_limits lim = { .max_folders = 2, .max_names = 10, .max_bytes = 1u << 20 };
        g_autofree char *top = g_dir_make_tmp("findex-XXXXXX", NULL);
        struct findex *ix = findex_new(&lim);
        char out[FINDEX_NAME_SIZE];
        int fds[3];

        for (int i = 0; i < 3; i++) {
                g_autofree char *d = g_strdup_printf("%s/d%d", top, i);
                g_assert_no_errno(g_mkdir(d, 0755));
                touch(d, "Name");
                fds[i] = open_folder(d);
        }
        for (int i = 0; i < 3; i++)
                wait_folder_settled(fds[i]);
        for (int i = 0; i < 3; i++) {
                g_assert_cmpint(findex_lookup(ix, fds[i], "NAME", 4, out), ==, FINDEX_ONE);
                g_assert_cmpstr(out, ==, "Name");
        }
        struct findex_stats s = stats(ix);
        g_assert_cmpuint(s.folders, ==, 2);
        g_assert_cmpuint(s.scans, ==, 3);
        /* d1 and d2 are kept, d0 (least recently used) went */
        g_assert_cmpint(findex_lookup(ix, fds[2], "NAME", 4, out), ==, FINDEX_ONE);
        g_assert_cmpint(findex_lookup(ix, fds[1], "NAME", 4, out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(ix).scans, ==, 3);
        g_assert_cmpint(findex_lookup(ix, fds[0], "NAME", 4, out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(ix).scans, ==, 4);
        /* d0's return pushed out d2, the least recently used now */
        g_assert_cmpint(findex_lookup(ix, fds[1], "NAME", 4, out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(ix).scans, ==, 4);

        /* a folder of 20 names, over max_names: right answers, nothing kept */
        g_autofree char *big = g_strdup_printf("%s/big", top);
        g_assert_no_errno(g_mkdir(big, 0755));
        for (int i = 0; i < 20; i++) {
                g_autofree char *n = g_strdup_printf("File%02d", i);
                touch(big, n);
        }
        int bfd = open_folder(big);
        wait_folder_settled(bfd);
        g_assert_cmpint(findex_lookup(ix, bfd, "FILE07", 6, out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "File07");
        g_assert_cmpint(findex_lookup(ix, bfd, "file19", 6, out), ==, FINDEX_ONE);
        g_assert_cmpstr(out, ==, "File19");
        g_assert_cmpint(findex_lookup(ix, bfd, "file20", 6, out), ==, FINDEX_NONE);
        s = stats(ix);
        g_assert_cmpuint(s.scans, ==, 7);
        g_assert_cmpuint(s.names, <=, lim.max_names);
        g_assert_cmpuint(s.bytes, <=, lim.max_bytes);
        g_assert_cmpuint(s.folders, ==, 2);     /* the small ones stay */

        /* a byte bound: one folder's table alone is over it */
        struct findex_limits tiny = { .max_bytes = 64 };
        struct findex *ix2 = findex_new(&tiny);
        g_assert_cmpint(findex_lookup(ix2, fds[0], "name", 4, out), ==, FINDEX_ONE);
        g_assert_cmpuint(stats(ix2).folders, ==, 0);
        g_assert_cmpuint(stats(ix2).bytes, ==, 0);
        findex_free(ix2);

        close(bfd);
        for (int i = 0; i < 3; i++)
                close(fds[i]);
        findex_free(ix);
        rm_rf(top);
}

struct race {
        struct fixture *f;
        gint stop;
        gint wrong;
};

static void *race_reader(void *data)
{
        struct race *r = data;
        char out[FINDEX_NAME_SIZE];
        while (!g_atomic_int_get(&r->stop)) {
                int m = lookup(r->f, "STABLE", out);
                if (m != FINDEX_ONE || strcmp(out, "Stable") != 0)
                        g_atomic_int_inc(&r->wrong);
        }
        return NULL;
}

/* Readers on several threads while the folder changes (noted as the
 * daemon's own changes) and is forgotten: the name that is always there is
 * always the answer. */
static void test_threads(struct fixture *f, gconstpointer data)
{
        struct race r = { .f = f };
        pthread_t t[3];
        struct stat st;
        (void)data;
        touch(f->dir, "Stable");
        g_assert_no_errno(fstat(f->fd, &st));
        for (int i = 0; i < 3; i++)
                g_assert_cmpint(pthread_create(&t[i], NULL, race_reader, &r), ==, 0);
        for (int i = 0; i < 300; i++) {
                g_autofree char *n = g_strdup_printf("churn%d", i % 7);
                g_autofree char *p = g_build_filename(f->dir, n, NULL);
                struct findex_stamp stamp;
                g_assert_no_errno(findex_stamp(f->fd, &stamp));
                if (i % 2) {
                        touch(f->dir, n);
                        findex_note_change(f->ix, f->fd, &stamp, NULL, n);
                } else if (g_unlink(p) == 0) {
                        findex_note_change(f->ix, f->fd, &stamp, n, NULL);
                }
                if (i % 5 == 0)
                        findex_forget(f->ix, st.st_dev, st.st_ino);
        }
        g_atomic_int_set(&r.stop, 1);
        for (int i = 0; i < 3; i++)
                pthread_join(t[i], NULL);
        g_assert_cmpint(r.wrong, ==, 0);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add(path, struct fixture, NULL, setup, fn, teardown)
        ADD("/folder-index/answers", test_answers);
        ADD("/folder-index/twins", test_twins);
        ADD("/folder-index/kept-and-invalidated", test_kept_and_invalidated);
        ADD("/folder-index/own-changes", test_own_changes);
        ADD("/folder-index/errors", test_errors);
        ADD("/folder-index/threads", test_threads);
        g_test_add_func("/folder-index/bounds", test_bounds);
        return g_test_run();
}
