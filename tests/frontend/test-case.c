/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-case.c — sluice-fs --case=insensitive: a Windows guest's names in any
 * case reach the one host file, never a second one beside it; twins made on
 * the host stay reachable by their exact names; the host's own changes are
 * seen; --case=sensitive stays as POSIX. */
#include "control-client.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const insensitive[] = { "--case=insensitive", NULL };

static int by_name(gconstpointer a, gconstpointer b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a host folder, sorted, joined by ",". */
static char *host_names(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        const char *n;
        g_assert_nonnull(d);
        while ((n = g_dir_read_name(d)))
                g_ptr_array_add(names, g_strdup(n));
        g_ptr_array_sort(names, by_name);
        g_ptr_array_add(names, NULL);
        return g_strjoinv(",", (char **)names->pdata);
}

static void collect(const struct fuse_dirent *d, const char *name,
                    const struct fuse_entry_out *entry, void *userdata)
{
        (void)d;
        (void)entry;
        if (strcmp(name, ".") != 0 && strcmp(name, ".."))
                g_ptr_array_add(userdata, g_strdup(name));
}

/* The names the guest lists in a folder, sorted, joined by ",". */
static char *guest_names(struct vmm *v, uint64_t node)
{
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        char buf[8192];
        size_t got = 0;
        uint64_t fh;
        assert_ok(vmm_opendir(v, node, &fh));
        assert_ok(vmm_readdir(v, node, fh, 0, false, buf, sizeof(buf), &got));
        assert_ok(vmm_dirents_foreach(buf, got, false, collect, names));
        assert_ok(vmm_releasedir(v, node, fh));
        g_ptr_array_sort(names, by_name);
        g_ptr_array_add(names, NULL);
        return g_strjoinv(",", (char **)names->pdata);
}

/* The daemon trusts a folder's index while the folder's times stand still;
 * a read less than a clock tick after a change is not kept.  Wait (bounded)
 * until the folder's last change is older than the clock's tick, so that
 * the next miss builds an index the later ones use: the host's change after
 * that must still be seen. */
static void wait_folder_settled(Harness *h, const char *rel)
{
        g_autofree char *path = harness_path(h, rel);
        struct stat st;
        g_assert_cmpint(stat(path, &st), ==, 0);
        for (int i = 0; i < 2000; i++) {
                struct timespec now;
                g_assert_cmpint(clock_gettime(CLOCK_REALTIME_COARSE, &now), ==, 0);
                if ((now.tv_sec > st.st_ctim.tv_sec ||
                     (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec)) &&
                    (now.tv_sec > st.st_mtim.tv_sec ||
                     (now.tv_sec == st.st_mtim.tv_sec && now.tv_nsec > st.st_mtim.tv_nsec)))
                        return;
                g_usleep(1000);
        }
        g_error("the coarse clock did not pass %s's ctime in 2 s", path);
}

static void test_lookup(void)
{
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "readme.txt", "hello");
        harness_mkdir(h, "Documents");
        harness_write(h, "Documents/Straße.TXT", "x");
        harness_write(h, "Documents/ДОКУМЕНТ", "y");
        harness_up(h, insensitive);
        struct vmm *v = h->vmm;
        struct fuse_entry_out exact, folded, docs, e;

        assert_ok(vmm_lookup(v, VMM_ROOT, "readme.txt", &exact));
        assert_ok(vmm_lookup(v, VMM_ROOT, "README.TXT", &folded));
        g_assert_cmpuint(folded.nodeid, ==, exact.nodeid);
        g_assert_cmpuint(folded.attr.ino, ==, exact.attr.ino);
        assert_ok(vmm_lookup(v, VMM_ROOT, "ReadMe.Txt", &folded));
        g_assert_cmpuint(folded.nodeid, ==, exact.nodeid);
        /* reading through the folded name reads the file */
        uint64_t fh;
        char buf[16];
        size_t got = 0;
        assert_ok(vmm_open(v, folded.nodeid, O_RDONLY, &fh));
        assert_ok(vmm_read(v, folded.nodeid, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "hello", 5);
        assert_ok(vmm_release(v, folded.nodeid, fh));

        assert_ok(vmm_lookup(v, VMM_ROOT, "DOCUMENTS", &docs));
        g_assert_true(S_ISDIR(docs.attr.mode));
        assert_ok(vmm_lookup(v, docs.nodeid, "STRAßE.txt", &e));
        assert_ok(vmm_lookup(v, docs.nodeid, "документ", &e));
        /* simple folding: ß is not "SS" */
        assert_errno(vmm_lookup(v, docs.nodeid, "STRASSE.TXT", &e), -ENOENT);
        assert_errno(vmm_lookup(v, VMM_ROOT, "README.TXT.bak", &e), -ENOENT);
        /* the listing shows the host's names as they are */
        g_autofree char *listed = guest_names(v, VMM_ROOT);
        g_assert_cmpstr(listed, ==, "Documents,readme.txt");
}

static void test_no_twin_made(void)
{
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "notes.txt", "old");
        harness_mkdir(h, "docs");
        harness_up(h, insensitive);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e, file;
        uint64_t fh;

        assert_ok(vmm_lookup(v, VMM_ROOT, "notes.txt", &file));
        assert_errno(vmm_mkdir(v, VMM_ROOT, "DOCS", 0755, &e), -EEXIST);
        assert_errno(vmm_mkdir(v, VMM_ROOT, "Notes.TXT", 0755, &e), -EEXIST);
        assert_errno(vmm_symlink(v, VMM_ROOT, "NOTES.TXT", "elsewhere", &e), -EEXIST);
        assert_errno(vmm_mknod(v, VMM_ROOT, "Docs", S_IFIFO | 0644, 0, &e), -EEXIST);
        assert_errno(vmm_link(v, file.nodeid, VMM_ROOT, "NOTES.txt", &e), -EEXIST);
        assert_errno(vmm_create(v, VMM_ROOT, "NOTES.TXT", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644,
                                &e, &fh), -EEXIST);
        /* CREATE without O_EXCL opens the file that is there */
        assert_ok(vmm_create(v, VMM_ROOT, "NOTES.TXT", O_RDWR | O_CREAT | O_TRUNC, S_IFREG | 0644, &e, &fh));
        g_assert_cmpuint(e.attr.ino, ==, file.attr.ino);
        assert_ok(vmm_write(v, e.nodeid, fh, 0, "new", 3, NULL));
        assert_ok(vmm_release(v, e.nodeid, fh));
        g_autofree char *content = harness_read(h, "notes.txt");
        g_assert_cmpstr(content, ==, "new");
        g_autofree char *names = host_names(h, "");
        g_assert_cmpstr(names, ==, "docs,notes.txt");
        /* a new name is made as the guest spelled it */
        assert_ok(vmm_mkdir(v, VMM_ROOT, "New Folder", 0755, &e));
        assert_errno(vmm_mkdir(v, VMM_ROOT, "NEW FOLDER", 0755, &e), -EEXIST);
        g_autofree char *after = host_names(h, "");
        g_assert_cmpstr(after, ==, "New Folder,docs,notes.txt");
}

static void test_rename(void)
{
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "report.doc", "r");
        harness_write(h, "a.txt", "a");
        harness_write(h, "b.txt", "b");
        harness_write(h, "c.txt", "c");
        harness_up(h, insensitive);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;

        /* another case of its own name: renamed, as Windows does */
        assert_ok(vmm_rename(v, VMM_ROOT, "report.doc", VMM_ROOT, "Report.DOC", 0));
        g_autofree char *n1 = host_names(h, "");
        g_assert_cmpstr(n1, ==, "Report.DOC,a.txt,b.txt,c.txt");
        assert_ok(vmm_lookup(v, VMM_ROOT, "report.doc", &e));
        /* by a folded source name too */
        assert_ok(vmm_rename(v, VMM_ROOT, "REPORT.doc", VMM_ROOT, "REPORT.DOC", 0));
        g_autofree char *n2 = host_names(h, "");
        g_assert_cmpstr(n2, ==, "REPORT.DOC,a.txt,b.txt,c.txt");
        /* onto a name folding to another file: that file is replaced */
        assert_ok(vmm_rename(v, VMM_ROOT, "A.TXT", VMM_ROOT, "B.TXT", 0));
        g_autofree char *n3 = host_names(h, "");
        g_assert_cmpstr(n3, ==, "REPORT.DOC,b.txt,c.txt");
        g_autofree char *b = harness_read(h, "b.txt");
        g_assert_cmpstr(b, ==, "a");
        /* … unless the guest asked not to replace */
        assert_errno(vmm_rename(v, VMM_ROOT, "c.txt", VMM_ROOT, "B.txt", RENAME_NOREPLACE), -EEXIST);
        g_autofree char *n4 = host_names(h, "");
        g_assert_cmpstr(n4, ==, "REPORT.DOC,b.txt,c.txt");
}

static void test_twins(void)
{
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "Foo", "upper");
        harness_write(h, "foo", "lower");
        harness_up(h, insensitive);
        struct vmm *v = h->vmm;
        struct fuse_entry_out upper, lower, e;
        uint64_t fh;

        for (int round = 0; round < 2; round++) {
                assert_ok(vmm_lookup(v, VMM_ROOT, "Foo", &upper));
                assert_ok(vmm_lookup(v, VMM_ROOT, "foo", &lower));
                g_assert_cmpuint(upper.attr.ino, !=, lower.attr.ino);
                /* no name that only folds like them picks one at random */
                assert_errno(vmm_lookup(v, VMM_ROOT, "FOO", &e), -ENOENT);
                assert_errno(vmm_lookup(v, VMM_ROOT, "fOO", &e), -ENOENT);
                wait_folder_settled(h, "");
        }
        assert_errno(vmm_mkdir(v, VMM_ROOT, "FOO", 0755, &e), -EEXIST);
        assert_errno(vmm_create(v, VMM_ROOT, "FOO", O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh), -EEXIST);
        g_autofree char *listed = guest_names(v, VMM_ROOT);
        g_assert_cmpstr(listed, ==, "Foo,foo");
        g_autofree char *names = host_names(h, "");
        g_assert_cmpstr(names, ==, "Foo,foo");
        /* each exact name still opens its own file */
        char buf[8];
        size_t got = 0;
        assert_ok(vmm_open(v, upper.nodeid, O_RDONLY, &fh));
        assert_ok(vmm_read(v, upper.nodeid, fh, 0, buf, sizeof(buf), &got));
        g_assert_cmpmem(buf, got, "upper", 5);
        assert_ok(vmm_release(v, upper.nodeid, fh));
}

/* The host changes the folder behind the daemon's back, after the daemon
 * read it: the next miss sees the change. */
static void test_host_changes(void)
{
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "note.txt", "1");
        harness_up(h, insensitive);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;

        wait_folder_settled(h, "");
        assert_ok(vmm_lookup(v, VMM_ROOT, "NOTE.TXT", &e));
        assert_errno(vmm_lookup(v, VMM_ROOT, "LATER.TXT", &e), -ENOENT);
        /* a new file: found by its folded name */
        harness_write(h, "later.txt", "2");
        assert_ok(vmm_lookup(v, VMM_ROOT, "LATER.TXT", &e));
        /* a twin: the folded name no longer picks either */
        wait_folder_settled(h, "");
        assert_ok(vmm_lookup(v, VMM_ROOT, "NOTE.TXT", &e));
        harness_write(h, "Note.txt", "3");
        assert_errno(vmm_lookup(v, VMM_ROOT, "NOTE.TXT", &e), -ENOENT);
        /* a rename on the host */
        wait_folder_settled(h, "");
        assert_ok(vmm_lookup(v, VMM_ROOT, "LATER.TXT", &e));
        g_autofree char *from = harness_path(h, "later.txt");
        g_autofree char *to = harness_path(h, "final.txt");
        g_assert_cmpint(rename(from, to), ==, 0);
        assert_errno(vmm_lookup(v, VMM_ROOT, "LATER.TXT", &e), -ENOENT);
        assert_ok(vmm_lookup(v, VMM_ROOT, "FINAL.TXT", &e));
}

/* The daemon's own changes are seen by the next folded lookup at once. */
static void test_own_changes(void)
{
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "keep.txt", "k");
        harness_up(h, insensitive);
        struct vmm *v = h->vmm;
        struct fuse_entry_out e;
        uint64_t fh;

        wait_folder_settled(h, "");
        assert_errno(vmm_lookup(v, VMM_ROOT, "NEW.TXT", &e), -ENOENT);
        assert_ok(vmm_create(v, VMM_ROOT, "new.txt", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_release(v, e.nodeid, fh));
        assert_ok(vmm_lookup(v, VMM_ROOT, "NEW.TXT", &e));
        assert_ok(vmm_unlink(v, VMM_ROOT, "NEW.txt"));
        assert_errno(vmm_lookup(v, VMM_ROOT, "new.txt", &e), -ENOENT);
        assert_ok(vmm_rename(v, VMM_ROOT, "KEEP.TXT", VMM_ROOT, "kept.txt", 0));
        assert_errno(vmm_lookup(v, VMM_ROOT, "KEEP.TXT", &e), -ENOENT);
        assert_ok(vmm_lookup(v, VMM_ROOT, "KEPT.TXT", &e));
        g_autofree char *names = host_names(h, "");
        g_assert_cmpstr(names, ==, "kept.txt");

        /* a copy of many files into one folder, each then opened in another
         * case, and no twin of any made (the index kept up by each change) */
        struct fuse_entry_out dir;
        assert_ok(vmm_mkdir(v, VMM_ROOT, "Copy", 0755, &dir));
        for (int i = 0; i < 300; i++) {
                g_autofree char *n = g_strdup_printf("Photo-%03d.jpg", i);
                g_autofree char *upper = g_ascii_strup(n, -1);
                assert_ok(vmm_create(v, dir.nodeid, n, O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, &e, &fh));
                assert_ok(vmm_release(v, e.nodeid, fh));
                assert_ok(vmm_lookup(v, dir.nodeid, upper, &e));
                assert_errno(vmm_mkdir(v, dir.nodeid, upper, 0755, &e), -EEXIST);
                if (i % 3 == 0)
                        assert_ok(vmm_rename(v, dir.nodeid, upper, dir.nodeid, upper, 0));
                if (i % 5 == 0)
                        assert_ok(vmm_unlink(v, dir.nodeid, upper));
        }
        g_autofree char *path = harness_path(h, "Copy");
        g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
        guint count = 0;
        while (g_dir_read_name(d))
                count++;
        g_assert_cmpuint(count, ==, 300 - 60);
        assert_errno(vmm_lookup(v, dir.nodeid, "PHOTO-000.JPG", &e), -ENOENT);
        assert_ok(vmm_lookup(v, dir.nodeid, "PHOTO-001.JPG", &e));
        assert_ok(vmm_lookup(v, dir.nodeid, "PHOTO-003.JPG", &e));
        g_autofree char *renamed = harness_path(h, "Copy/PHOTO-003.JPG");
        g_assert_true(g_file_test(renamed, G_FILE_TEST_EXISTS));
}

/* A folded lookup answers from that one folder: never through a symlink,
 * never from outside the share. */
static void test_confined(void)
{
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_mkdir(h, "sub");
        harness_symlink(h, h->outside, "sub/Escape");
        harness_symlink(h, "..", "sub/Up");
        harness_up(h, insensitive);
        struct vmm *v = h->vmm;
        struct fuse_entry_out sub, e;

        assert_ok(vmm_lookup(v, VMM_ROOT, "SUB", &sub));
        /* the symlink itself, not what it points at */
        assert_ok(vmm_lookup(v, sub.nodeid, "ESCAPE", &e));
        g_assert_true(S_ISLNK(e.attr.mode));
        assert_errno(vmm_lookup(v, e.nodeid, "CANARY", NULL), -ENOTDIR);
        assert_ok(vmm_lookup(v, sub.nodeid, "up", &e));
        g_assert_true(S_ISLNK(e.attr.mode));
        /* the outside folder's file is no name of the share's folders */
        assert_errno(vmm_lookup(v, VMM_ROOT, "CANARY", NULL), -ENOENT);
        assert_errno(vmm_lookup(v, sub.nodeid, "canary", NULL), -ENOENT);
        assert_errno(vmm_lookup(v, sub.nodeid, "..", NULL), -EINVAL);
        harness_assert_outside_untouched(h);
        harness_assert_alive(h);
}

/* --case=sensitive (the default) keeps POSIX names. */
static void test_sensitive(void)
{
        static const char *const sensitive[] = { "--case=sensitive", NULL };
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        for (int i = 0; i < 2; i++) {
                g_autoptr(Harness) h = harness_new();
                harness_write(h, "readme.txt", "x");
                harness_up(h, i == 0 ? sensitive : NULL);
                struct vmm *v = h->vmm;
                struct fuse_entry_out e;
                uint64_t fh;
                assert_errno(vmm_lookup(v, VMM_ROOT, "README.TXT", &e), -ENOENT);
                assert_ok(vmm_create(v, VMM_ROOT, "README.TXT", O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644,
                                     &e, &fh));
                assert_ok(vmm_release(v, e.nodeid, fh));
                assert_ok(vmm_mkdir(v, VMM_ROOT, "Readme.txt", 0755, &e));
                g_autofree char *names = host_names(h, "");
                g_assert_cmpstr(names, ==, "README.TXT,Readme.txt,readme.txt");
        }
}

/* With --names=windows too: a host name Windows cannot spell (a ':' in it)
 * reached in another case by its mapped form (U+F03A, as WinFsp maps it)
 * and by the ':' virtiofs.exe decodes it to; no twin made by either. */
static void test_windows_names(void)
{
        static const char *const both[] = { "--names=windows", "--case=insensitive", NULL };
        if (!harness_require_sluice("--case is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        harness_write(h, "Notes:2024.txt", "n");
        harness_up(h, both);
        struct vmm *v = h->vmm;
        struct fuse_entry_out exact, e;

        assert_ok(vmm_lookup(v, VMM_ROOT, "Notes\uF03A2024.txt", &exact));
        assert_ok(vmm_lookup(v, VMM_ROOT, "NOTES\uF03A2024.TXT", &e));
        g_assert_cmpuint(e.attr.ino, ==, exact.attr.ino);
        assert_ok(vmm_lookup(v, VMM_ROOT, "notes:2024.TXT", &e));
        g_assert_cmpuint(e.attr.ino, ==, exact.attr.ino);
        assert_errno(vmm_mkdir(v, VMM_ROOT, "NOTES\uF03A2024.TXT", 0755, &e), -EEXIST);
        assert_errno(vmm_symlink(v, VMM_ROOT, "notes:2024.txt", "x", &e), -EEXIST);
        g_autofree char *names = host_names(h, "");
        g_assert_cmpstr(names, ==, "Notes:2024.txt");
        /* listed in the mapped form, once */
        g_autofree char *listed = guest_names(v, VMM_ROOT);
        g_assert_cmpstr(listed, ==, "Notes\uF03A2024.txt");
}

/* Worker1.SetNames switches case-insensitivity live, as sluice-service does
 * when the share's Case setting changes. */
static void test_set_names_live(void)
{
        if (!harness_require_sluice("Worker1.SetNames is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        sd_bus *c;

        harness_write(h, "readme.txt", "x");
        c = control_client_start(h);
        h->vmm = harness_connect(h, NULL);
        struct fuse_entry_out e;

        assert_errno(vmm_lookup(h->vmm, VMM_ROOT, "README.TXT", &e), -ENOENT);
        const char *modes[] = { "insensitive", "sensitive", "insensitive" };
        for (gsize i = 0; i < G_N_ELEMENTS(modes); i++) {
                g_assert_cmpint(control_client_set_names(c, "posix", modes[i], NULL), ==, 0);
                switch (i) {
                case 0:         /* insensitive: found, no twin made */
                        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "README.TXT", &e));
                        assert_errno(vmm_mkdir(h->vmm, VMM_ROOT, "Readme.TXT", 0755, &e), -EEXIST);
                        break;
                case 1:         /* sensitive again: as POSIX, a twin may be made */
                        assert_errno(vmm_lookup(h->vmm, VMM_ROOT, "README.TXT", &e), -ENOENT);
                        assert_ok(vmm_mkdir(h->vmm, VMM_ROOT, "Readme.TXT", 0755, &e));
                        break;
                default:        /* insensitive with twins: exact names only */
                        assert_errno(vmm_lookup(h->vmm, VMM_ROOT, "README.TXT", &e), -ENOENT);
                        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "Readme.TXT", &e));
                        g_assert_true(S_ISDIR(e.attr.mode));
                        assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "readme.txt", &e));
                        g_assert_true(S_ISREG(e.attr.mode));
                        break;
                }
        }
        harness_assert_alive(h);
        sd_bus_flush_close_unref(c);
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/case/lookup", test_lookup);
        g_test_add_func("/case/no-twin-made", test_no_twin_made);
        g_test_add_func("/case/rename", test_rename);
        g_test_add_func("/case/twins", test_twins);
        g_test_add_func("/case/host-changes", test_host_changes);
        g_test_add_func("/case/own-changes", test_own_changes);
        g_test_add_func("/case/confined", test_confined);
        g_test_add_func("/case/sensitive", test_sensitive);
        g_test_add_func("/case/windows-names", test_windows_names);
        g_test_add_func("/case/set-names-live", test_set_names_live);
        return g_test_run();
}
