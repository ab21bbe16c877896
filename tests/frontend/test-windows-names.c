/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-windows-names.c — sluice-fs --names=windows through the test VMM: a
 * host folder holding every character Windows forbids, device names,
 * trailing dots and spaces and names with U+F0xx characters of their own is
 * listed with names Windows can open; each is reached by its mapped name and
 * by the name virtiofs.exe makes of it; creating, renaming and removing
 * through mapped names leaves the decoded names on the host; a mapped name
 * that decodes to ".", ".." or holds a '/' never leaves the folder; posix
 * mode shows the same folder unchanged; Worker1.SetNames switches live. */
#include "control-client.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const windows_opts[] = { "--names=windows", NULL };

/* A name written with '`' before a character for U+F000 + that character
 * and "`0" for U+F000 itself: "a`:b" is what Windows shows for a:b. */
static char *w(const char *spec)
{
        GString *o = g_string_new(NULL);

        for (const char *p = spec; *p; p++) {
                if (*p == '`' && p[1]) {
                        p++;
                        g_string_append_unichar(o, 0xf000 + (*p == '0' ? 0 : (unsigned char)*p));
                } else {
                        g_string_append_c(o, *p);
                }
        }
        return g_string_free(o, FALSE);
}

/* The host names of the folder, and the names Windows is to see. */
static const struct { const char *host, *guest; } names[] = {
        { "a:b", "a`:b" },
        { "what?.md", "what`?.md" },
        { "x|y", "x`|y" },
        { "a<b>.c", "a`<b`>.c" },
        { "star*", "star`*" },
        { "\"quoted\"", "`\"quoted`\"" },
        { "back\\slash", "back`\\slash" },
        { "ctl\x01", "ctl`\x01" },
        { "Meeting 10:30.txt", "Meeting 10`:30.txt" },
        { "end.", "end`." },
        { "end ", "end` " },
        { "CON", "CO`N" },
        { "aux.txt", "au`x.txt" },
        { "com1.log", "com`1.log" },
        { "lpt9", "lpt`9" },
        { "conference.txt", "conference.txt" },
        { "plain", "plain" },
        { "日本語.txt", "日本語.txt" },
};

static void make_folder(Harness *h)
{
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
                harness_write(h, names[i].host, names[i].host);
        harness_mkdir(h, "dir:x");
}

static ino_t host_ino(Harness *h, const char *rel)
{
        g_autofree char *p = harness_path(h, rel);
        struct stat st;

        if (lstat(p, &st) < 0)
                return 0;
        return st.st_ino;
}

static gboolean host_exists(Harness *h, const char *rel)
{
        return host_ino(h, rel) != 0;
}

struct listing { GPtrArray *names; uint64_t last_off; gboolean entries_ok; };

static void collect(const struct fuse_dirent *d, const char *name,
                    const struct fuse_entry_out *entry, void *userdata)
{
        struct listing *l = userdata;

        g_ptr_array_add(l->names, g_strndup(name, d->namelen));
        l->last_off = d->off;
        /* READDIRPLUS looked each entry up by its host name */
        if (entry && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
            (entry->nodeid == 0 || entry->attr.ino != d->ino))
                l->entries_ok = FALSE;
}

static GPtrArray *list_dir(struct vmm *v, uint64_t node, gboolean plus)
{
        struct listing l = { g_ptr_array_new_with_free_func(g_free), 0, TRUE };
        g_autofree char *buf = g_malloc(4096);
        uint64_t fh;

        assert_ok(vmm_opendir(v, node, &fh));
        for (int i = 0; i < 1000; i++) {
                size_t got = 0;
                int r = vmm_readdir(v, node, fh, l.last_off, plus, buf, 4096, &got);

                assert_ok(r);
                if (r < 0 || got == 0)
                        break;
                assert_ok(vmm_dirents_foreach(buf, got, plus, collect, &l));
        }
        g_assert_true(l.entries_ok);
        assert_ok(vmm_releasedir(v, node, fh));
        return l.names;
}

static gboolean listed(GPtrArray *list, const char *name)
{
        for (guint i = 0; i < list->len; i++)
                if (strcmp(g_ptr_array_index(list, i), name) == 0)
                        return TRUE;
        return FALSE;
}

/* LOOKUP name: the host inode it reaches, or 0 (and the error in *ret_err). */
static ino_t lookup_ino(struct vmm *v, uint64_t dir, const char *name, int *ret_err)
{
        struct fuse_entry_out e;
        int r = vmm_lookup(v, dir, name, &e);

        if (ret_err)
                *ret_err = r;
        if (r < 0)
                return 0;
        (void) vmm_forget(v, e.nodeid, 1);
        return e.attr.ino;
}

static void assert_listing(Harness *h, gboolean plus)
{
        g_autoptr(GPtrArray) list = list_dir(h->vmm, VMM_ROOT, plus);
        g_autofree char *dir = w("dir`:x");

        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
                g_autofree char *guest = w(names[i].guest);

                if (!listed(list, guest))
                        g_test_message("FAIL: %s listed as %s?", names[i].host, guest);
                g_assert_true(listed(list, guest));
                if (strcmp(names[i].host, guest) != 0)
                        g_assert_false(listed(list, names[i].host));
        }
        g_assert_true(listed(list, dir));
        g_assert_true(listed(list, "."));
        g_assert_true(listed(list, ".."));
        g_assert_cmpuint(list->len, ==, G_N_ELEMENTS(names) + 3);
}

static void test_listing(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();

        make_folder(h);
        harness_up(h, windows_opts);
        assert_listing(h, TRUE);
        assert_listing(h, FALSE);
}

static void test_lookup_both_forms(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();

        make_folder(h);
        harness_up(h, windows_opts);
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
                g_autofree char *guest = w(names[i].guest);
                ino_t want = host_ino(h, names[i].host);

                /* The name Windows was shown, and the one virtiofs.exe sends
                 * (it turns WinFsp's U+F0xx back into the bytes itself). */
                g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, guest, NULL), ==, want);
                g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, names[i].host, NULL), ==, want);
        }
        /* Through a mapped directory name, too. */
        {
                g_autofree char *dir = w("dir`:x");
                struct fuse_entry_out d, e;
                g_autofree char *inner = w("in`?");

                harness_write(h, "dir:x/in?", "deep");
                assert_ok(vmm_lookup(h->vmm, VMM_ROOT, dir, &d));
                assert_ok(vmm_lookup(h->vmm, d.nodeid, inner, &e));
                g_assert_cmpuint(e.attr.ino, ==, host_ino(h, "dir:x/in?"));
        }
        harness_assert_alive(h);
}

static void test_changes(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        struct vmm *v;
        struct fuse_entry_out e, d;
        uint64_t fh;
        g_autofree char *create = w("new`?.txt"), *moved = w("moved`:.txt");
        g_autofree char *mkdir_name = w("d`|1"), *link_name = w("ln`*");
        g_autofree char *hard = w("hard`<"), *fifo = w("f`>"), *dot = w("dot`.");
        g_autofree char *dev = w("PR`N");
        char buf[64];

        harness_up(h, windows_opts);
        v = h->vmm;
        assert_ok(vmm_create(v, VMM_ROOT, create, O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, &e, &fh));
        assert_ok(vmm_release(v, e.nodeid, fh));
        g_assert_true(host_exists(h, "new?.txt"));
        /* CREATE without O_EXCL opens the same file by either name */
        assert_ok(vmm_create(v, VMM_ROOT, "new?.txt", O_RDWR | O_CREAT, S_IFREG | 0644, &d, &fh));
        g_assert_cmpuint(d.attr.ino, ==, e.attr.ino);
        assert_ok(vmm_release(v, d.nodeid, fh));

        assert_ok(vmm_rename(v, VMM_ROOT, create, VMM_ROOT, moved, 0));
        g_assert_false(host_exists(h, "new?.txt"));
        g_assert_true(host_exists(h, "moved:.txt"));
        assert_ok(vmm_rename(v, VMM_ROOT, moved, VMM_ROOT, create, RENAME_NOREPLACE));
        g_assert_true(host_exists(h, "new?.txt"));

        assert_ok(vmm_mkdir(v, VMM_ROOT, mkdir_name, 0755, &d));
        g_assert_true(host_exists(h, "d|1"));
        /* the link's name is mapped, its target is data: unchanged */
        assert_ok(vmm_symlink(v, VMM_ROOT, link_name, "x:y", NULL));
        {
                g_autofree char *p = harness_path(h, "ln*");
                ssize_t n = readlink(p, buf, sizeof(buf) - 1);

                g_assert_cmpint(n, ==, 3);
                buf[n > 0 ? n : 0] = '\0';
                g_assert_cmpstr(buf, ==, "x:y");
        }
        assert_ok(vmm_link(v, e.nodeid, VMM_ROOT, hard, NULL));
        g_assert_cmpuint(host_ino(h, "hard<"), ==, e.attr.ino);
        assert_ok(vmm_mknod(v, VMM_ROOT, fifo, S_IFIFO | 0644, 0, NULL));
        g_assert_true(host_exists(h, "f>"));
        assert_ok(vmm_mkdir(v, VMM_ROOT, dot, 0755, NULL));
        g_assert_true(host_exists(h, "dot."));
        assert_ok(vmm_create(v, VMM_ROOT, dev, O_RDWR | O_CREAT | O_EXCL, S_IFREG | 0644, &d, &fh));
        assert_ok(vmm_release(v, d.nodeid, fh));
        g_assert_true(host_exists(h, "PRN"));

        assert_ok(vmm_unlink(v, VMM_ROOT, create));
        assert_ok(vmm_unlink(v, VMM_ROOT, hard));
        assert_ok(vmm_unlink(v, VMM_ROOT, link_name));
        assert_ok(vmm_unlink(v, VMM_ROOT, "f>"));       /* the byte form */
        assert_ok(vmm_rmdir(v, VMM_ROOT, mkdir_name));
        assert_ok(vmm_rmdir(v, VMM_ROOT, dot));
        assert_ok(vmm_unlink(v, VMM_ROOT, dev));
        g_assert_false(host_exists(h, "new?.txt"));
        g_assert_false(host_exists(h, "hard<"));
        g_assert_false(host_exists(h, "ln*"));
        g_assert_false(host_exists(h, "f>"));
        g_assert_false(host_exists(h, "d|1"));
        g_assert_false(host_exists(h, "dot."));
        g_assert_false(host_exists(h, "PRN"));
        harness_assert_alive(h);
}

/* The longest host name: 255 forbidden bytes are 765 bytes for the guest. */
static void test_long_names(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        char host[NAME_MAX + 1];
        GString *guest = g_string_new(NULL);
        g_autoptr(GPtrArray) list = NULL;
        struct fuse_entry_out e;

        memset(host, ':', NAME_MAX);
        host[NAME_MAX] = '\0';
        {
                /* harness_write()'s temporary name would be too long */
                g_autofree char *p = harness_path(h, host);
                int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

                g_assert_cmpint(fd, >=, 0);
                close(fd);
                harness_chown_to_user(p);
        }
        harness_up(h, windows_opts);
        for (int i = 0; i < NAME_MAX; i++)
                g_string_append_unichar(guest, 0xf03a);
        list = list_dir(h->vmm, VMM_ROOT, TRUE);
        g_assert_true(listed(list, guest->str));
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, guest->str, NULL), ==, host_ino(h, host));
        /* one more decodes to 256 bytes: too long for the host */
        g_string_append_unichar(guest, 0xf03a);
        assert_errno(vmm_create(h->vmm, VMM_ROOT, guest->str, O_RDWR | O_CREAT | O_EXCL,
                                S_IFREG | 0644, &e, NULL), -ENAMETOOLONG);
        g_string_free(guest, TRUE);
        harness_assert_alive(h);
}

/* Mapped names that would leave the folder or name it: refused, or a
 * harmless name of their own. */
static void test_refused(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *dot = w("`."), *dotdot = w(".`."), *slash = w("a`/b");
        g_autofree char *up = w(".`.`/outside"), *nul = w("`0"), *raw_up = w(".`./outside");
        struct fuse_entry_out e;
        uint64_t fh;
        int err;

        harness_mkdir(h, "sub");
        harness_up(h, windows_opts);
        /* "." and ".." by their mapped forms */
        assert_errno(vmm_mkdir(h->vmm, VMM_ROOT, dot, 0755, &e), -EINVAL);
        assert_errno(vmm_mkdir(h->vmm, VMM_ROOT, dotdot, 0755, &e), -EINVAL);
        assert_errno(vmm_create(h->vmm, VMM_ROOT, dotdot, O_RDWR | O_CREAT, S_IFREG | 0644, &e, &fh),
                     -EINVAL);
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, dotdot, &err), ==, 0);
        assert_errno(err, -EINVAL);
        {
                struct fuse_entry_out s;

                assert_ok(vmm_lookup(h->vmm, VMM_ROOT, "sub", &s));
                assert_errno(vmm_rename(h->vmm, s.nodeid, dotdot, VMM_ROOT, "x", 0), -EINVAL);
                assert_errno(vmm_rmdir(h->vmm, s.nodeid, dotdot), -EINVAL);
                assert_errno(vmm_unlink(h->vmm, s.nodeid, dot), -EINVAL);
        }
        /* U+F02F is never '/', U+F000 never a NUL: a name of its own in the folder */
        assert_ok(vmm_mkdir(h->vmm, VMM_ROOT, slash, 0755, &e));
        g_assert_true(host_exists(h, slash));
        g_assert_false(host_exists(h, "a"));
        assert_ok(vmm_mkdir(h->vmm, VMM_ROOT, up, 0755, &e));
        g_assert_true(host_exists(h, up));
        assert_ok(vmm_mkdir(h->vmm, VMM_ROOT, nul, 0755, &e));
        g_assert_true(host_exists(h, nul));
        /* raw '/' as ever */
        assert_errno(vmm_mkdir(h->vmm, VMM_ROOT, "a/b", 0755, &e), -EINVAL);
        assert_errno(vmm_mkdir(h->vmm, VMM_ROOT, raw_up, 0755, &e), -EINVAL);
        harness_assert_outside_untouched(h);
        harness_assert_alive(h);
}

/* A host file literally named with U+F03A next to a:b: each listed under a
 * name of its own that reaches it, neither shadows the other. */
static void test_ambiguous(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *lit = w("a`:b"), *lit_guest = w("a`0`:b"), *lit_sent = w("a`0:b");
        g_autoptr(GPtrArray) list = NULL;
        struct fuse_entry_out e;
        ino_t colon, literal;

        harness_write(h, "a:b", "colon");
        harness_write(h, lit, "literal");
        colon = host_ino(h, "a:b");
        literal = host_ino(h, lit);
        harness_up(h, windows_opts);
        list = list_dir(h->vmm, VMM_ROOT, TRUE);
        g_assert_true(listed(list, lit));          /* a:b as WinFsp shows it */
        g_assert_true(listed(list, lit_guest));    /* the literal one, U+F000 in front */
        g_assert_cmpuint(list->len, ==, 4);
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, lit, NULL), ==, colon);
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, "a:b", NULL), ==, colon);
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, lit_guest, NULL), ==, literal);
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, lit_sent, NULL), ==, literal);
        /* making either again is refused: the name is taken */
        assert_errno(vmm_mkdir(h->vmm, VMM_ROOT, lit, 0755, &e), -EEXIST);
        assert_errno(vmm_mkdir(h->vmm, VMM_ROOT, lit_guest, 0755, &e), -EEXIST);
        /* removing one leaves the other */
        assert_ok(vmm_unlink(h->vmm, VMM_ROOT, lit_guest));
        g_assert_false(host_exists(h, lit));
        g_assert_cmpuint(host_ino(h, "a:b"), ==, colon);
        harness_assert_alive(h);
}

/* The same folder served --names=posix (the default): unchanged. */
static void test_posix_unchanged(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *lit = w("a`:b");
        g_autoptr(GPtrArray) list = NULL;
        const char *const posix[] = { "--names=posix", NULL };

        make_folder(h);
        harness_write(h, lit, "literal");
        harness_up(h, posix);
        list = list_dir(h->vmm, VMM_ROOT, TRUE);
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
                g_assert_true(listed(list, names[i].host));
                g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, names[i].host, NULL), ==,
                                 host_ino(h, names[i].host));
        }
        g_assert_true(listed(list, "dir:x"));
        g_assert_true(listed(list, lit));
        /* a U+F0xx name is only itself */
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, lit, NULL), ==, host_ino(h, lit));
        harness_assert_alive(h);
}

/* ---- Worker1.SetNames over the control channel, as sluice-service calls it ---- */

static void test_set_names_live(void)
{
        if (!harness_require_sluice("Worker1.SetNames is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        g_autofree char *mapped = w("a`:b"), *mode_names = NULL, *case_mode = NULL;
        g_autofree char *refused = NULL;
        sd_bus *c;

        harness_write(h, "a:b", "x");
        c = control_client_start(h);
        h->vmm = harness_connect(h, NULL);
        mode_names = control_client_get(c, "Names");
        case_mode = control_client_get(c, "Case");
        g_assert_cmpstr(mode_names, ==, "posix");
        g_assert_cmpstr(case_mode, ==, "sensitive");
        {
                g_autoptr(GPtrArray) list = list_dir(h->vmm, VMM_ROOT, TRUE);

                g_assert_true(listed(list, "a:b"));
                g_assert_false(listed(list, mapped));
        }

        g_assert_cmpint(control_client_set_names(c, "windows", "sensitive", NULL), ==, 0);
        g_clear_pointer(&mode_names, g_free);
        mode_names = control_client_get(c, "Names");
        g_assert_cmpstr(mode_names, ==, "windows");
        {
                g_autoptr(GPtrArray) list = list_dir(h->vmm, VMM_ROOT, TRUE);

                g_assert_true(listed(list, mapped));
                g_assert_false(listed(list, "a:b"));
        }
        g_assert_cmpuint(lookup_ino(h->vmm, VMM_ROOT, mapped, NULL), ==, host_ino(h, "a:b"));

        /* anything else: InvalidArgs, nothing changed */
        g_assert_cmpint(control_client_set_names(c, "dos", "sensitive", &refused), <, 0);
        g_assert_cmpstr(refused, ==, "org.freedesktop.DBus.Error.InvalidArgs");
        g_clear_pointer(&refused, g_free);
        g_assert_cmpint(control_client_set_names(c, "posix", "upper", &refused), <, 0);
        g_assert_cmpstr(refused, ==, "org.freedesktop.DBus.Error.InvalidArgs");
        g_clear_pointer(&mode_names, g_free);
        mode_names = control_client_get(c, "Names");
        g_assert_cmpstr(mode_names, ==, "windows");

        /* the case mode travels with it (its behaviour: pt-name-case.c) */
        g_assert_cmpint(control_client_set_names(c, "windows", "insensitive", NULL), ==, 0);
        g_clear_pointer(&case_mode, g_free);
        case_mode = control_client_get(c, "Case");
        g_assert_cmpstr(case_mode, ==, "insensitive");

        /* and back */
        g_assert_cmpint(control_client_set_names(c, "posix", "sensitive", NULL), ==, 0);
        {
                g_autoptr(GPtrArray) list = list_dir(h->vmm, VMM_ROOT, TRUE);

                g_assert_true(listed(list, "a:b"));
        }
        harness_assert_alive(h);
        sd_bus_flush_close_unref(c);
}

/* Bad values on the command line: a clear message, exit 2. */
static void test_bad_options(void)
{
        if (!harness_require_sluice("--names is sluice-fs's"))
                return;
        g_autoptr(Harness) h = harness_new();
        const char *const bad[][2] = {
                { "--names=dos", "names mode" },
                { "--names=", "names mode" },
                { "--case=upper", "case mode" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                const char *const extra[] = { bad[i][0], NULL };
                g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, extra);
                g_autofree char *out = NULL, *err = NULL;
                int status;

                status = harness_run((const char *const *)argv->pdata, &out, &err);
                g_assert_true(WIFEXITED(status));
                g_assert_cmpint(WEXITSTATUS(status), ==, 2);
                g_assert_nonnull(strstr(err, bad[i][1]));
        }
}

int main(int argc, char **argv)
{
        harness_test_init(&argc, &argv);
        g_test_add_func("/windows-names/listing", test_listing);
        g_test_add_func("/windows-names/lookup-both-forms", test_lookup_both_forms);
        g_test_add_func("/windows-names/changes", test_changes);
        g_test_add_func("/windows-names/long-names", test_long_names);
        g_test_add_func("/windows-names/refused", test_refused);
        g_test_add_func("/windows-names/ambiguous", test_ambiguous);
        g_test_add_func("/windows-names/posix-unchanged", test_posix_unchanged);
        g_test_add_func("/windows-names/set-names-live", test_set_names_live);
        g_test_add_func("/windows-names/bad-options", test_bad_options);
        return g_test_run();
}
