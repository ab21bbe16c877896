/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-vm-confinement.c — whether a confined VM's QEMU may reach Sluice's
 * sockets, and what the service tells a person, on every kind of host.
 *
 * This machine's kernel has neither AppArmor nor SELinux, so no confined
 * QEMU can run here: each case plants the files a real Ubuntu/Debian
 * (AppArmor) or Fedora (SELinux) host would have in a scratch root, which a
 * test build reads instead of / ($SLUICE_TEST_CONFINEMENT_ROOT).  This stands
 * in for a real confined host; it checks the reading of those files, not the
 * kernel's verdict. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domain-xml.h"
#include "errors.h"
#include "hotplug-private.h"
#include "vm-confinement.h"

#define UUID "6f1e9b2c-4a8d-4e0f-9c3b-2d7a5e8f1a40"
#define PROFILE "/etc/apparmor.d/libvirt/libvirt-" UUID
#define RELOAD "sudo apparmor_parser -r " PROFILE
#define LOCAL "/etc/apparmor.d/local/abstractions/libvirt-qemu"
#define ABSTRACTION "/etc/apparmor.d/abstractions/libvirt-qemu"
#define SOCKET "/tmp/sluice-1000-Ab12Cd/3.sock"

/* libvirt 9.0's abstraction (bookworm): the local file only */
#define ABSTRACTION_OLD "  # the local tunables\n  #include <abstractions/base>\n" \
                        "  include if exists <local/abstractions/libvirt-qemu>\n"
/* libvirt >= 9.6's (trixie): the .d folder as well */
#define ABSTRACTION_NEW ABSTRACTION_OLD "  include if exists <abstractions/libvirt-qemu.d>\n"
#define LOCAL_LINE "# sluice\ninclude <abstractions/libvirt-qemu.d/sluice>\n"

typedef struct {
        char *root;
} Host;

static void plant(Host *h, const char *path, const char *text, gssize len)
{
        g_autofree char *full = g_build_filename(h->root, path, NULL);
        g_autofree char *dir = g_path_get_dirname(full);
        g_autoptr(GError) error = NULL;

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_file_set_contents(full, text, len, &error);
        g_assert_no_error(error);
}

/* Sets a planted file's modification time, AGE seconds in the past. */
static void age(Host *h, const char *path, int seconds)
{
        g_autofree char *full = g_build_filename(h->root, path, NULL);
        struct timespec times[2];

        clock_gettime(CLOCK_REALTIME, &times[0]);
        times[0].tv_sec -= seconds;
        times[1] = times[0];
        g_assert_cmpint(utimensat(AT_FDCWD, full, times, 0), ==, 0);
}

static void host_setup(Host *h, gconstpointer data)
{
        g_autoptr(GError) error = NULL;

        h->root = g_dir_make_tmp("sluice-confinement-XXXXXX", &error);
        g_assert_no_error(error);
        g_setenv("SLUICE_TEST_CONFINEMENT_ROOT", h->root, TRUE);
}

static void remove_tree(const char *path)
{
        g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
        const char *name;

        if (dir) {
                while ((name = g_dir_read_name(dir))) {
                        g_autofree char *child = g_build_filename(path, name, NULL);
                        remove_tree(child);
                }
        }
        (void)chmod(path, 0700);
        (void)g_remove(path);
}

static void host_teardown(Host *h, gconstpointer data)
{
        g_unsetenv("SLUICE_TEST_CONFINEMENT_ROOT");
        remove_tree(h->root);
        g_free(h->root);
}

/* An Ubuntu/Debian host with AppArmor on and libvirt's abstraction as
 * ABSTRACTION_TEXT; the VM started 10 s ago, its profile written then. */
static void apparmor_host(Host *h, const char *abstraction_text)
{
        plant(h, "/sys/module/apparmor/parameters/enabled", "Y\n", -1);
        plant(h, ABSTRACTION, abstraction_text, -1);
        plant(h, PROFILE, "profile libvirt-" UUID " flags=(attach_disconnected) {\n}\n", -1);
        plant(h, PROFILE ".files", "  \"/var/lib/libvirt/qemu/domain-1-v/{,**}\" rwk,\n", -1);
        age(h, PROFILE, 10);
        age(h, PROFILE ".files", 10);
}

/* The sluice package's snippet (data/apparmor/sluice itself, so that the
 * service's idea of the rule cannot drift from the file the package
 * installs), installed AGE seconds ago. */
static void install_rule(Host *h, int seconds)
{
        const char *top = g_getenv("SLUICE_SOURCE_ROOT");
        g_autofree char *source = g_build_filename(top != NULL ? top : "../..", "data", "apparmor", "sluice",
                                                   NULL);
        g_autofree char *text = NULL;
        g_autoptr(GError) error = NULL;

        g_file_get_contents(source, &text, NULL, &error);
        g_assert_no_error(error);
        plant(h, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, text, -1);
        age(h, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, seconds);
}

static SluiceConfinementReport *check(SluiceConfinementModel model, const char *label, const char *socket)
{
        SluiceConfinementVm vm = { .model = model, .label = label, .name = "debian12", .uuid = UUID };

        return sluice_confinement_check(&vm, socket);
}

static SluiceConfinementReport *check_apparmor(void)
{
        return check(SLUICE_CONFINEMENT_MODEL_APPARMOR, "libvirt-" UUID, SOCKET);
}

static void assert_ok(SluiceConfinementReport *r)
{
        g_assert_cmpint(r->status, ==, SLUICE_CONFINEMENT_OK);
        g_assert_cmpint(r->gap, ==, SLUICE_CONFINEMENT_GAP_NONE);
        g_assert_cmpstr(r->message, ==, "");
}

static void assert_says(const char *text, const char *const *words)
{
        for (; *words; words++)
                if (!strstr(text, *words))
                        g_error("“%s” is not in: %s", *words, text);
}

/* What every AppArmor message tells a person: how to reload and where a refusal shows. */
static const char *const reload_words[] = { RELOAD, "journalctl -k | grep apparmor", NULL };
/* ... and, when the rule is missing, where it goes for either libvirt */
static const char *const install_words[] = {
        SLUICE_CONFINEMENT_APPARMOR_RULE, SLUICE_CONFINEMENT_APPARMOR_SNIPPET,
        "include <abstractions/libvirt-qemu.d/sluice>", LOCAL, "9.6", NULL
};

/* No AppArmor in the kernel, or turned off: QEMU is not confined. */
static void test_apparmor_off(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) absent = NULL;
        g_autoptr(SluiceConfinementReport) off = NULL;

        absent = check_apparmor();
        assert_ok(absent);
        plant(h, "/sys/module/apparmor/parameters/enabled", "N\n", -1);
        off = check_apparmor();
        assert_ok(off);
}

static void test_not_installed(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        r = check_apparmor();
        g_assert_cmpint(r->status, ==, SLUICE_CONFINEMENT_BLOCKED);
        g_assert_cmpint(r->gap, ==, SLUICE_CONFINEMENT_GAP_RULE_NOT_INSTALLED);
        assert_says(r->message, (const char *const[]){ "not installed", NULL });
        assert_says(r->message, install_words);
        assert_says(r->message, reload_words);
}

/* A snippet without the rule (an edited or a foreign file) is not the rule. */
static void test_snippet_without_rule(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        plant(h, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, "# " SLUICE_CONFINEMENT_APPARMOR_RULE "\n/tmp/** rw,\n", -1);
        r = check_apparmor();
        g_assert_cmpint(r->gap, ==, SLUICE_CONFINEMENT_GAP_RULE_NOT_INSTALLED);
}

/* libvirt older than 9.6 reads no .d folder; nobody added the local line. */
static void test_not_included(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;
        g_autoptr(SluiceConfinementReport) commented = NULL;

        apparmor_host(h, ABSTRACTION_OLD);
        install_rule(h, 60);
        r = check_apparmor();
        g_assert_cmpint(r->status, ==, SLUICE_CONFINEMENT_BLOCKED);
        g_assert_cmpint(r->gap, ==, SLUICE_CONFINEMENT_GAP_RULE_NOT_INCLUDED);
        assert_says(r->message, (const char *const[]){ "not included", ABSTRACTION, NULL });
        assert_says(r->message, install_words);
        assert_says(r->message, reload_words);

        /* a commented-out line includes nothing */
        plant(h, LOCAL, "# include <abstractions/libvirt-qemu.d/sluice>\n", -1);
        commented = check_apparmor();
        g_assert_cmpint(commented->gap, ==, SLUICE_CONFINEMENT_GAP_RULE_NOT_INCLUDED);
}

/* The package's line in the local abstraction, then the VM (re)started. */
static void test_local_line(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;
        g_autoptr(SluiceConfinementReport) unreached = NULL;

        apparmor_host(h, ABSTRACTION_OLD);
        install_rule(h, 60);
        plant(h, LOCAL, LOCAL_LINE, -1);
        age(h, LOCAL, 60);
        r = check_apparmor();
        assert_ok(r);

        /* an abstraction that does not include the local file leaves the line unread */
        plant(h, ABSTRACTION, "  #include <abstractions/base>\n", -1);
        unreached = check_apparmor();
        g_assert_cmpint(unreached->gap, ==, SLUICE_CONFINEMENT_GAP_RULE_NOT_INCLUDED);
}

static SluiceConfinementReport *explain_refusal(const char *label)
{
        SluiceConfinementVm vm = {
                .model = SLUICE_CONFINEMENT_MODEL_APPARMOR, .label = label, .name = "debian12", .uuid = UUID
        };

        return sluice_confinement_explain_refusal(&vm, SOCKET);
}

/* The local line added after the VM started, and nobody reloaded its
 * profile: the files look right, and they are as they would be after the
 * package reloaded it, so only QEMU's refusal tells. */
static void test_local_line_refused(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;
        g_autoptr(SluiceConfinementReport) refused = NULL;

        apparmor_host(h, ABSTRACTION_OLD);
        install_rule(h, 60);
        plant(h, LOCAL, LOCAL_LINE, -1);
        r = check_apparmor();
        assert_ok(r);
        refused = explain_refusal("libvirt-" UUID);
        g_assert_cmpint(refused->status, ==, SLUICE_CONFINEMENT_BLOCKED);
        g_assert_cmpint(refused->gap, ==, SLUICE_CONFINEMENT_GAP_PROFILE_PREDATES);
}

/* libvirt >= 9.6 includes the .d folder: the package's file is all it takes. */
static void test_directory_include(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        install_rule(h, 60);
        r = check_apparmor();
        assert_ok(r);
}

/* The rule installed while the VM ran, newer than the VM's profile file:
 * no problem is reported (the package reloads running VMs' profiles without
 * rewriting them, so file times cannot tell); a refusal then says the
 * profile was loaded before the rule, and how to reload it. */
static void test_profile_predates(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;
        g_autoptr(SluiceConfinementReport) refused = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        install_rule(h, 1);
        r = check_apparmor();
        assert_ok(r);
        refused = explain_refusal("libvirt-" UUID);
        g_assert_cmpint(refused->status, ==, SLUICE_CONFINEMENT_BLOCKED);
        g_assert_cmpint(refused->gap, ==, SLUICE_CONFINEMENT_GAP_PROFILE_PREDATES);
        assert_says(refused->message, (const char *const[]){ "loaded before", "debian12", NULL });
        assert_says(refused->message, reload_words);
}

/* A label that is not libvirt's profile name cannot steer the path read:
 * the profile is found by the VM's UUID. */
static void test_hostile_label(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        install_rule(h, 1);
        r = explain_refusal("libvirt-../../../../etc/passwd");
        g_assert_cmpint(r->gap, ==, SLUICE_CONFINEMENT_GAP_PROFILE_PREDATES);
        assert_says(r->message, reload_words);
}

/* A socket somewhere the rule does not cover would be refused whatever is installed. */
static void test_socket_outside(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = NULL;
        g_autoptr(SluiceConfinementReport) no_socket = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        install_rule(h, 60);
        r = check(SLUICE_CONFINEMENT_MODEL_APPARMOR, "libvirt-" UUID, "/run/user/1000/sluice/3.sock");
        g_assert_cmpint(r->gap, ==, SLUICE_CONFINEMENT_GAP_SOCKET_OUTSIDE_RULE);
        assert_says(r->message, (const char *const[]){ "/run/user/1000/sluice/3.sock", NULL });
        no_socket = check(SLUICE_CONFINEMENT_MODEL_APPARMOR, "libvirt-" UUID, NULL);
        assert_ok(no_socket);
}

/* Fedora: enforcing SELinux, QEMU as svirt_tcg_t.  Unprivileged, the module
 * cannot be seen: UNKNOWN, with what to check and how to install it. */
static void test_selinux(Host *h, gconstpointer data)
{
        static const char *const label = "system_u:system_r:svirt_tcg_t:s0:c12,c34";
        g_autoptr(SluiceConfinementReport) off = NULL;
        g_autoptr(SluiceConfinementReport) enforcing = NULL;
        g_autoptr(SluiceConfinementReport) permissive = NULL;
        g_autoptr(SluiceConfinementReport) garbage = NULL;

        off = check(SLUICE_CONFINEMENT_MODEL_SELINUX, label, SOCKET);
        assert_ok(off);
        plant(h, "/sys/fs/selinux/enforce", "1", -1);
        enforcing = check(SLUICE_CONFINEMENT_MODEL_SELINUX, label, SOCKET);
        g_assert_cmpint(enforcing->status, ==, SLUICE_CONFINEMENT_UNKNOWN);
        assert_says(enforcing->message, (const char *const[]){ "svirt_tcg_t", "debian12", "sudo semodule -l | grep sluice",
                                                      "make selinux && sudo make selinux-install",
                                                      "sudo ausearch -m avc -ts recent", NULL });
        plant(h, "/sys/fs/selinux/enforce", "0", -1);
        permissive = check(SLUICE_CONFINEMENT_MODEL_SELINUX, label, SOCKET);
        assert_ok(permissive);
        /* a label that is not a context still gets the advice */
        plant(h, "/sys/fs/selinux/enforce", "1", -1);
        garbage = check(SLUICE_CONFINEMENT_MODEL_SELINUX, "\x01:\xff", SOCKET);
        g_assert_cmpint(garbage->status, ==, SLUICE_CONFINEMENT_UNKNOWN);
        assert_says(garbage->message, (const char *const[]){ "semodule", NULL });
}

/* No confinement in the XML: nothing to read, nothing to say. */
static void test_unconfined(Host *h, gconstpointer data)
{
        g_autoptr(SluiceConfinementReport) r = check(SLUICE_CONFINEMENT_MODEL_NONE, NULL, SOCKET);

        assert_ok(r);
}

/* Binary garbage, an oversized file, a FIFO, a folder: an answer, no crash or hang. */
static void test_garbage(Host *h, gconstpointer data)
{
        static const char junk[] = "\0\xff\xfe include <abstractions/libvirt-qemu.d>\0\n\x01\x02";
        g_autofree char *huge = g_malloc(SLUICE_CONFINEMENT_FILE_MAX_BYTES + 2);
        g_autofree char *snippet = g_build_filename(h->root, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, NULL);
        g_autoptr(SluiceConfinementReport) junk_snippet = NULL;
        g_autoptr(SluiceConfinementReport) junk_abstraction = NULL;
        g_autoptr(SluiceConfinementReport) big = NULL;
        g_autoptr(SluiceConfinementReport) fifo = NULL;
        g_autoptr(SluiceConfinementReport) folder = NULL;
        g_autoptr(SluiceConfinementReport) junk_enabled = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        plant(h, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, junk, sizeof(junk));
        junk_snippet = check_apparmor();
        g_assert_cmpint(junk_snippet->gap, ==, SLUICE_CONFINEMENT_GAP_RULE_NOT_INSTALLED);

        install_rule(h, 60);
        plant(h, ABSTRACTION, junk, sizeof(junk));
        junk_abstraction = check_apparmor();
        g_assert_cmpint(junk_abstraction->gap, ==, SLUICE_CONFINEMENT_GAP_RULE_NOT_INCLUDED);

        /* past the bound: the rule at its end is not read */
        memset(huge, '\n', SLUICE_CONFINEMENT_FILE_MAX_BYTES + 2);
        plant(h, SLUICE_CONFINEMENT_APPARMOR_SNIPPET, huge, SLUICE_CONFINEMENT_FILE_MAX_BYTES + 2);
        big = check_apparmor();
        g_assert_cmpint(big->status, ==, SLUICE_CONFINEMENT_UNKNOWN);
        assert_says(big->message, (const char *const[]){ SLUICE_CONFINEMENT_APPARMOR_SNIPPET, NULL });

        g_assert_cmpint(g_remove(snippet), ==, 0);
        g_assert_cmpint(mkfifo(snippet, 0644), ==, 0);
        fifo = check_apparmor();
        g_assert_cmpint(fifo->status, ==, SLUICE_CONFINEMENT_UNKNOWN);
        g_assert_cmpint(g_remove(snippet), ==, 0);
        g_assert_cmpint(g_mkdir(snippet, 0755), ==, 0);
        folder = check_apparmor();
        g_assert_cmpint(folder->status, ==, SLUICE_CONFINEMENT_UNKNOWN);

        plant(h, "/sys/module/apparmor/parameters/enabled", junk, sizeof(junk));
        junk_enabled = check_apparmor();
        g_assert_cmpint(junk_enabled->status, ==, SLUICE_CONFINEMENT_OK);
}

/* A file this user may not read: UNKNOWN naming it, never "ok". */
static void test_unreadable(Host *h, gconstpointer data)
{
        g_autofree char *abstraction = g_build_filename(h->root, ABSTRACTION, NULL);
        g_autoptr(SluiceConfinementReport) r = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        install_rule(h, 60);
        g_assert_cmpint(g_chmod(abstraction, 0), ==, 0);
        if (access(abstraction, R_OK) == 0) {
                g_test_skip("root reads a file of mode 0");
                return;
        }
        r = check_apparmor();
        g_assert_cmpint(r->status, ==, SLUICE_CONFINEMENT_UNKNOWN);
        assert_says(r->message, (const char *const[]){ ABSTRACTION, g_strerror(EACCES), NULL });
        assert_says(r->message, reload_words);
}

/* What the share's Error says when libvirt's hot-plug fails because QEMU
 * was refused the socket (libvirt 9.0 passes QEMU's words on). */
#define QEMU_REFUSED "internal error: unable to execute QEMU command 'chardev-add': " \
                     "Failed to connect to '" SOCKET "': Permission denied"

static SluiceDomainXml *live_xml(const char *seclabel)
{
        g_autofree char *xml = g_strdup_printf("<domain type='kvm'><name>debian12</name><uuid>%s</uuid>%s"
                                               "<seclabel type='dynamic' model='dac' relabel='yes'>"
                                               "<label>+64055:+994</label></seclabel></domain>",
                                               UUID, seclabel);
        g_autoptr(GError) error = NULL;
        SluiceDomainXml *info = sluice_domain_xml_parse(xml, &error);

        g_assert_no_error(error);
        return info;
}

static void test_hotplug_refusal(Host *h, gconstpointer data)
{
        g_autoptr(SluiceDomainXml) apparmor = live_xml("<seclabel type='dynamic' model='apparmor' relabel='yes'>"
                                                      "<label>libvirt-" UUID "</label></seclabel>");
        g_autoptr(SluiceDomainXml) selinux = live_xml("<seclabel type='dynamic' model='selinux' relabel='yes'>"
                                                     "<label>system_u:system_r:svirt_t:s0:c1,c2</label></seclabel>");
        g_autoptr(SluiceDomainXml) unconfined = live_xml("<seclabel type='none' model='apparmor'/>");
        g_autoptr(GError) error = NULL;
        g_autofree char *problem = NULL;

        apparmor_host(h, ABSTRACTION_NEW);
        g_assert_true(sluice_hotplug_confinement_refusal(QEMU_REFUSED, apparmor, "debian12", UUID, SOCKET,
                                                         &problem, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED);
        assert_says(error->message,
                    (const char *const[]){ "AppArmor confinement", "debian12", "not installed", NULL });
        assert_says(error->message, install_words);
        assert_says(error->message, reload_words);
        g_assert_nonnull(problem);
        g_assert_nonnull(strstr(error->message, problem));
        g_clear_error(&error);
        g_clear_pointer(&problem, g_free);

        /* not QEMU's refusal, or nothing confines it: libvirt's words stay */
        g_assert_false(sluice_hotplug_confinement_refusal("Failed to connect to '" SOCKET "': Connection refused",
                                                          apparmor, "debian12", UUID, SOCKET, &problem, &error));
        g_assert_false(sluice_hotplug_confinement_refusal(QEMU_REFUSED, unconfined, "debian12", UUID, SOCKET,
                                                          &problem, &error));
        g_assert_false(sluice_hotplug_confinement_refusal(NULL, apparmor, "debian12", UUID, SOCKET, &problem,
                                                          &error));
        /* the rule in place and included, yet refused: the running profile
         * predates it, and the error says how to reload it */
        install_rule(h, 60);
        g_assert_true(sluice_hotplug_confinement_refusal(QEMU_REFUSED, apparmor, "debian12", UUID, SOCKET,
                                                         &problem, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED);
        assert_says(error->message, (const char *const[]){ "loaded before", NULL });
        assert_says(error->message, reload_words);
        g_clear_error(&error);
        g_clear_pointer(&problem, g_free);

        /* AppArmor off: something else refused it (the ACL), libvirt's words stay */
        plant(h, "/sys/module/apparmor/parameters/enabled", "N\n", -1);
        g_assert_false(sluice_hotplug_confinement_refusal(QEMU_REFUSED, apparmor, "debian12", UUID, SOCKET,
                                                          &problem, &error));
        g_assert_no_error(error);
        g_assert_null(problem);

        /* SELinux enforcing: most likely the policy, and what to check */
        plant(h, "/sys/fs/selinux/enforce", "1\n", -1);
        g_assert_true(sluice_hotplug_confinement_refusal(QEMU_REFUSED, selinux, "debian12", UUID, SOCKET,
                                                         &problem, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED);
        assert_says(error->message,
                    (const char *const[]){ "most likely", "SELinux", "svirt_t", "semodule", NULL });
}

static void test_needs_hooks(void)
{
        g_test_skip("the service reads the host's own files in this build: "
                    "configure it with -Dtest_hooks=true (make check does)");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        if (!SLUICE_TEST_HOOKS) {
                g_test_add_func("/vm-confinement/needs-test-hooks", test_needs_hooks);
                return g_test_run();
        }
#define HOST_TEST(path, fn) g_test_add("/vm-confinement/" path, Host, NULL, host_setup, fn, host_teardown)
        HOST_TEST("apparmor-off", test_apparmor_off);
        HOST_TEST("not-installed", test_not_installed);
        HOST_TEST("snippet-without-rule", test_snippet_without_rule);
        HOST_TEST("not-included", test_not_included);
        HOST_TEST("local-line", test_local_line);
        HOST_TEST("local-line-refused", test_local_line_refused);
        HOST_TEST("directory-include", test_directory_include);
        HOST_TEST("profile-predates", test_profile_predates);
        HOST_TEST("hostile-label", test_hostile_label);
        HOST_TEST("socket-outside-rule", test_socket_outside);
        HOST_TEST("selinux", test_selinux);
        HOST_TEST("unconfined", test_unconfined);
        HOST_TEST("garbage", test_garbage);
        HOST_TEST("unreadable", test_unreadable);
        HOST_TEST("hotplug-refusal", test_hotplug_refusal);
#undef HOST_TEST
        return g_test_run();
}
