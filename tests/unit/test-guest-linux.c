/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-linux.c — which guest mount points the service accepts, how it
 * reads the guest's mount table and how it edits the guest's /etc/fstab. */
#include <glib.h>
#include <string.h>

#include "errors.h"
#include "fake-guest-agent.h"
#include "guest-agent.h"
#include "guest-linux.h"

static void assert_refused(const char *path, const char *says)
{
        g_autoptr(GError) error = NULL;

        g_assert_false(sluice_guest_linux_check_mount_point(path, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
        if (says != NULL && strstr(error->message, says) == NULL)
                g_error("refusing “%s” says “%s”, not “%s”", path, error->message, says);
        /* the message stays one readable line whatever the path holds */
        for (const char *p = error->message; *p != '\0'; p++)
                g_assert_cmpint((unsigned char)*p, >=, 0x20);
}

static void test_check_mount_point(void)
{
        static const char *const good[] = { "/mnt/docs", "/mnt/my docs", "/home/ann/Dropbox", "/tmp/x",
                                            "/srv/share", "/var/www", "/media/usb1", "/mnt/Fotos 2024/é",
                                            "/data", "/mnt/.hidden", "/mnt/a..b" };
        char longest[300];

        for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
                g_autoptr(GError) error = NULL;

                if (!sluice_guest_linux_check_mount_point(good[i], &error))
                        g_error("“%s” refused: %s", good[i], error->message);
        }
        longest[0] = '/';
        memset(longest + 1, 'a', 254);
        longest[255] = '\0';
        g_assert_true(sluice_guest_linux_check_mount_point(longest, NULL));
        longest[255] = 'a';
        longest[256] = '\0';
        assert_refused(longest, "255 bytes");

        assert_refused(NULL, "empty");
        assert_refused("", "empty");
        assert_refused("mnt/docs", "absolute");
        assert_refused("~/docs", "absolute");
        assert_refused("/", "root");
        assert_refused("/mnt//docs", "//");
        assert_refused("/mnt/docs/", "ends with");
        assert_refused("/mnt/./docs", "“..”");
        assert_refused("/mnt/../etc", "“..”");
        assert_refused("/mnt/..", "“..”");
        assert_refused("/mnt/do\ncs", "control");
        assert_refused("/mnt/do\tcs", "control");
        assert_refused("/mnt/\x1b[31mred", "control");
        assert_refused("/mnt/\xff\xfe", "UTF-8");
        assert_refused("/mnt/a\u2028b", "control");
        /* the system's folders themselves, and the insides of those the
         * system lives in */
        assert_refused("/etc", "system folder");
        assert_refused("/home", "system folder");
        assert_refused("/tmp", "system folder");
        assert_refused("/mnt", "system folder");
        assert_refused("/var", "system folder");
        assert_refused("/lib64", "system folder");
        assert_refused("/etc/ssh", "inside a system folder");
        assert_refused("/proc/1", "inside a system folder");
        assert_refused("/sys/fs/fuse", "inside a system folder");
        assert_refused("/dev/shm", "inside a system folder");
        assert_refused("/run/user/1000", "inside a system folder");
        assert_refused("/usr/local/share", "inside a system folder");
        assert_refused("/boot/efi", "inside a system folder");
        assert_refused("/bin/x", "inside a system folder");
        /* a name that merely starts like one is fine */
        g_assert_true(sluice_guest_linux_check_mount_point("/etcetera", NULL));
        g_assert_true(sluice_guest_linux_check_mount_point("/usrdata/x", NULL));
}

static void test_default_mount_point(void)
{
        g_autofree char *p = sluice_guest_linux_default_mount_point("docs");

        g_assert_cmpstr(p, ==, "/mnt/docs");
        g_assert_true(sluice_guest_linux_check_mount_point(p, NULL));
}

static const char proc_mounts[] =
        "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
        "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
        "docs2 /mnt/docs2 virtiofs rw,relatime 0 0\n"
        "photos /mnt/my\\040photos virtiofs rw,relatime 0 0\n"
        "tmpfs /mnt/docs tmpfs rw 0 0\n"
        "src /home/ann/src virtiofs rw,relatime 0 0";   /* no newline at the end */

static void test_is_mounted(void)
{
        g_assert_true(sluice_guest_linux_is_mounted(proc_mounts, "docs2", "/mnt/docs2"));
        g_assert_true(sluice_guest_linux_is_mounted(proc_mounts, "photos", "/mnt/my photos"));
        g_assert_true(sluice_guest_linux_is_mounted(proc_mounts, "src", "/home/ann/src"));
        /* a tag that is a prefix of another's, a path that is another's prefix */
        g_assert_false(sluice_guest_linux_is_mounted(proc_mounts, "docs", "/mnt/docs2"));
        g_assert_false(sluice_guest_linux_is_mounted(proc_mounts, "docs", "/mnt/docs"));
        g_assert_false(sluice_guest_linux_is_mounted(proc_mounts, "docs2", "/mnt/docs"));
        /* the escaped form is not the path */
        g_assert_false(sluice_guest_linux_is_mounted(proc_mounts, "photos", "/mnt/my\\040photos"));
        g_assert_false(sluice_guest_linux_is_mounted(proc_mounts, "photos", "/mnt/my"));
        /* another file system at the place, the tag elsewhere */
        g_assert_false(sluice_guest_linux_is_mounted("docs /mnt/docs tmpfs rw 0 0\n", "docs", "/mnt/docs"));
        g_assert_false(sluice_guest_linux_is_mounted("", "docs", "/mnt/docs"));
        g_assert_false(sluice_guest_linux_is_mounted(NULL, "docs", "/mnt/docs"));
        g_assert_false(sluice_guest_linux_is_mounted("docs\n/mnt/docs\nvirtiofs\n", "docs", "/mnt/docs"));
        g_assert_true(sluice_guest_linux_is_mounted("\n\n  docs\t/mnt/docs  virtiofs rw 0 0\n", "docs",
                                                    "/mnt/docs"));
}

static void test_is_mounted_hostile(void)
{
        GString *big = g_string_new(NULL);
        guint32 seed = 19;

        /* a line of a megabyte, escapes cut short at the end, binary */
        for (int i = 0; i < 1024 * 1024; i++)
                g_string_append_c(big, 'x');
        g_string_append(big, " \\04\n\\\n\\7777 \\ \\0 virtiofs\n");
        for (int i = 0; i < 64 * 1024; i++) {
                seed = seed * 1103515245u + 12345u;
                g_string_append_c(big, (char)(1 + (seed >> 16) % 255));
        }
        g_assert_false(sluice_guest_linux_is_mounted(big->str, "docs", "/mnt/docs"));
        g_string_append(big, "\ndocs /mnt/docs virtiofs rw 0 0");
        g_assert_true(sluice_guest_linux_is_mounted(big->str, "docs", "/mnt/docs"));
        g_string_free(big, TRUE);
        g_assert_false(sluice_guest_linux_is_mounted("docs /mnt/doc\\", "docs", "/mnt/doc\\"));
        g_assert_false(sluice_guest_linux_is_mounted("docs /mnt/doc\\", "docs", "/mnt/doc"));
}

static void test_fstab_edit(void)
{
        static const char user[] =
                "# /etc/fstab: static file system information.\n"
                "UUID=1234 / ext4 errors=remount-ro 0 1\n"
                "docs2 /mnt/docs2 virtiofs defaults 0 0\n";
        g_autofree char *on = sluice_guest_linux_fstab_edit(user, "docs", "/mnt/docs", TRUE);
        g_autofree char *again = sluice_guest_linux_fstab_edit(on, "docs", "/mnt/other place", TRUE);
        g_autofree char *off = sluice_guest_linux_fstab_edit(again, "docs", "/mnt/docs", FALSE);
        g_autofree char *off2 = sluice_guest_linux_fstab_edit(off, "docs", "/mnt/docs", FALSE);

        g_assert_cmpstr(on, ==, "# /etc/fstab: static file system information.\n"
                                "UUID=1234 / ext4 errors=remount-ro 0 1\n"
                                "docs2 /mnt/docs2 virtiofs defaults 0 0\n"
                                "# sluice: docs\n"
                                "docs /mnt/docs virtiofs defaults,nofail 0 0\n");
        /* replaced, not added twice; a space written as \040 */
        g_assert_cmpstr(again, ==, "# /etc/fstab: static file system information.\n"
                                   "UUID=1234 / ext4 errors=remount-ro 0 1\n"
                                   "docs2 /mnt/docs2 virtiofs defaults 0 0\n"
                                   "# sluice: docs\n"
                                   "docs /mnt/other\\040place virtiofs defaults,nofail 0 0\n");
        /* removed: the user's lines back as they were, a prefix tag's line kept */
        g_assert_cmpstr(off, ==, user);
        g_assert_cmpstr(off2, ==, user);
}

static void test_fstab_edit_odd(void)
{
        g_autofree char *no_newline = sluice_guest_linux_fstab_edit("UUID=1 / ext4 defaults 0 1", "t", "/mnt/t", TRUE);
        g_autofree char *empty = sluice_guest_linux_fstab_edit("", "t", "/mnt/t", TRUE);
        g_autofree char *from_null = sluice_guest_linux_fstab_edit(NULL, "t", "/mnt/t", FALSE);
        g_autofree char *edited_by_hand = NULL;
        g_autofree char *mark_last = NULL;
        g_autofree char *other_tag = NULL;
        g_autofree char *backslash = sluice_guest_linux_fstab_edit("", "t", "/mnt/a\\b", TRUE);

        g_assert_cmpstr(no_newline, ==, "UUID=1 / ext4 defaults 0 1\n# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0\n");
        g_assert_cmpstr(empty, ==, "# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0\n");
        g_assert_cmpstr(from_null, ==, "");
        g_assert_cmpstr(backslash, ==, "# sluice: t\nt /mnt/a\\134b virtiofs defaults,nofail 0 0\n");

        /* the user replaced the line under the mark with one of their own: it stays */
        edited_by_hand = sluice_guest_linux_fstab_edit("# sluice: t\n/dev/sdb1 /data ext4 defaults 0 2\n", "t",
                                                       "/mnt/t", FALSE);
        g_assert_cmpstr(edited_by_hand, ==, "/dev/sdb1 /data ext4 defaults 0 2\n");
        mark_last = sluice_guest_linux_fstab_edit("a b c d 0 0\n  # sluice: t  ", "t", "/mnt/t", FALSE);
        g_assert_cmpstr(mark_last, ==, "a b c d 0 0\n");
        /* another share's marked line (a longer tag) stays */
        other_tag = sluice_guest_linux_fstab_edit("# sluice: tt\ntt /mnt/tt virtiofs defaults,nofail 0 0\n", "t",
                                                  "/mnt/t", FALSE);
        g_assert_cmpstr(other_tag, ==, "# sluice: tt\ntt /mnt/tt virtiofs defaults,nofail 0 0\n");
}

static void test_fstab_edit_hostile(void)
{
        GString *big = g_string_new("# sluice: t\n");
        g_autofree char *off = NULL;

        for (int i = 0; i < 512 * 1024; i++)
                g_string_append_c(big, (char)(1 + i % 250));
        off = sluice_guest_linux_fstab_edit(big->str, "t", "/mnt/t", FALSE);
        /* the binary line does not start with the tag: kept whole */
        g_assert_cmpuint(strlen(off), ==, big->len - strlen("# sluice: t\n"));
        g_string_free(big, TRUE);
}

static char *edit(const char *fstab, const char *tag, gboolean present)
{
        g_autofree char *mount_point = g_strconcat("/mnt/", tag, NULL);

        return sluice_guest_linux_fstab_edit(fstab, tag, mount_point, present);
}

/* A mark whose entry an administrator deleted, above a line of their own
 * that starts with the tag: folder names such as "tmpfs", "proc" or "none"
 * make such tags.  Their line stays; only the stale mark goes. */
static void test_fstab_edit_stale_mark(void)
{
        static const char *const lines[] = {
                "tmpfs /tmp tmpfs defaults,size=2G 0 0\n",
                "proc /proc proc defaults 0 0\n",
                "none /dev/shm tmpfs defaults 0 0\n",
        };
        static const char *const tags[] = { "tmpfs", "proc", "none" };

        for (gsize i = 0; i < G_N_ELEMENTS(lines); i++) {
                g_autofree char *fstab = g_strdup_printf("UUID=1 / ext4 defaults 0 1\n# sluice: %s\n%s", tags[i],
                                                         lines[i]);
                g_autofree char *kept = g_strdup_printf("UUID=1 / ext4 defaults 0 1\n%s", lines[i]);
                g_autofree char *added = g_strdup_printf("%s# sluice: %s\n%s /mnt/%s virtiofs defaults,nofail 0 0\n",
                                                         kept, tags[i], tags[i], tags[i]);
                g_autofree char *off = edit(fstab, tags[i], FALSE);
                g_autofree char *on = edit(fstab, tags[i], TRUE);
                g_autofree char *on_off = edit(on, tags[i], FALSE);

                g_assert_cmpstr(off, ==, kept);
                g_assert_cmpstr(on, ==, added);
                g_assert_cmpstr(on_off, ==, kept);
        }
}

static void test_fstab_edit_tricky(void)
{
        static const char entry[] = "t /mnt/t virtiofs defaults,nofail 0 0";
        g_autofree char *crlf = edit("UUID=1 / ext4 defaults 0 1\r\n# sluice: t\r\nt /mnt/t virtiofs defaults,nofail 0 0\r\n"
                                     "UUID=2 /home ext4 defaults 0 2\r\n", "t", FALSE);
        g_autofree char *crlf_on = edit("UUID=1 / ext4 defaults 0 1\r\n", "t", TRUE);
        g_autofree char *no_newline_entry = edit("# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0", "t", FALSE);
        g_autofree char *two_marks = edit("# sluice: t\n# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0\nx y z w 0 0\n",
                                          "t", FALSE);
        g_autofree char *tabs = edit("# sluice: t\nt\t/mnt/t\tvirtiofs   defaults,nofail\t0 0\n", "t", FALSE);
        g_autofree char *comment_between = edit("# sluice: t\n# mine\nt /mnt/t virtiofs defaults,nofail 0 0\n", "t",
                                                FALSE);
        g_autofree char *options_changed = edit("# sluice: t\nt /mnt/t virtiofs defaults,nofail,ro 0 0\n", "t", FALSE);
        g_autofree char *fewer_fields = edit("# sluice: t\nt /mnt/t virtiofs\n", "t", FALSE);
        g_autofree char *more_fields = edit("# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0 0\n", "t", FALSE);
        g_autofree char *bad_mount_point = edit("# sluice: t\nt /etc virtiofs defaults,nofail 0 0\n", "t", FALSE);
        g_autofree char *twice = edit("# sluice: t\nt /mnt/a virtiofs defaults,nofail 0 0\nmid x y z 0 0\n"
                                      "# sluice: t\nt /mnt/b virtiofs defaults,nofail 0 0\n", "t", TRUE);
        g_autofree char *in_place = edit("# sluice: t\nt /mnt/old virtiofs defaults,nofail 0 0\nUUID=2 /home ext4 defaults 0 2\n",
                                         "t", TRUE);
        g_autofree char *same = NULL;

        /* CRLF: other lines keep their CR LF; Sluice's lines are LF */
        g_assert_cmpstr(crlf, ==, "UUID=1 / ext4 defaults 0 1\r\nUUID=2 /home ext4 defaults 0 2\r\n");
        g_assert_cmpstr(crlf_on, ==, "UUID=1 / ext4 defaults 0 1\r\n# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0\n");
        g_assert_cmpstr(no_newline_entry, ==, "");
        g_assert_cmpstr(two_marks, ==, "x y z w 0 0\n");
        g_assert_cmpstr(tabs, ==, "");
        /* not right after its mark, or not exactly Sluice's: not Sluice's */
        g_assert_cmpstr(comment_between, ==, "# mine\nt /mnt/t virtiofs defaults,nofail 0 0\n");
        g_assert_cmpstr(options_changed, ==, "t /mnt/t virtiofs defaults,nofail,ro 0 0\n");
        g_assert_cmpstr(fewer_fields, ==, "t /mnt/t virtiofs\n");
        g_assert_cmpstr(more_fields, ==, "t /mnt/t virtiofs defaults,nofail 0 0 0\n");
        g_assert_cmpstr(bad_mount_point, ==, "t /etc virtiofs defaults,nofail 0 0\n");
        /* two marked entries: one is left, where the first stood */
        g_assert_cmpstr(twice, ==, "# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0\nmid x y z 0 0\n");
        /* replaced where it stands; the same line again is no change at all */
        g_assert_cmpstr(in_place, ==, "# sluice: t\nt /mnt/t virtiofs defaults,nofail 0 0\nUUID=2 /home ext4 defaults 0 2\n");
        same = edit(in_place, "t", TRUE);
        g_assert_cmpstr(same, ==, in_place);
        g_assert_nonnull(strstr(in_place, entry));

        /* a line longer than 4 KiB, under the mark and elsewhere: kept byte for byte */
        {
                GString *fstab = g_string_new("# sluice: t\nt /mnt/t virtiofs defaults,nofail");
                g_autofree char *off = NULL;
                g_autofree char *expected = NULL;

                for (int i = 0; i < 600; i++)
                        g_string_append(fstab, ",x-opt");
                g_string_append(fstab, " 0 0\n# ");
                for (int i = 0; i < 5000; i++)
                        g_string_append_c(fstab, 'c');
                g_string_append_c(fstab, '\n');
                off = edit(fstab->str, "t", FALSE);
                expected = g_strdup(fstab->str + strlen("# sluice: t\n"));
                g_assert_cmpstr(off, ==, expected);
                g_string_free(fstab, TRUE);
        }
}

/* ---- the fstab in a (pretend) guest ---- */

static const char user_fstab[] = "# /etc/fstab\nUUID=1234 / ext4 errors=remount-ro 0 1\n";

static void assert_fstab_is(const char *text, guint mode)
{
        guint got_mode = 0;
        g_autoptr(GBytes) now = fake_guest_get_file("/etc/fstab", &got_mode);
        g_autofree char *got = NULL;

        g_assert_nonnull(now);
        got = g_strndup(g_bytes_get_data(now, NULL), g_bytes_get_size(now));
        g_assert_cmpstr(got, ==, text);
        g_assert_cmpuint(got_mode, ==, mode);
}

static void test_set_fstab(void)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(GBytes) temp = NULL;
        g_autofree char *expected = g_strconcat(user_fstab, "# sluice: docs\ndocs /mnt/docs virtiofs defaults,nofail 0 0\n",
                                                NULL);

        fake_guest_reset();
        fake_guest_put_file("/etc/fstab", user_fstab, -1, 0644);
        g_assert_true(sluice_guest_linux_set_fstab(NULL, "docs", "/mnt/docs", TRUE, &error));
        g_assert_no_error(error);
        assert_fstab_is(expected, 0644);
        /* never truncated in place */
        g_assert_false(fake_guest_saw("guest-file-open /etc/fstab w"));
        temp = fake_guest_get_file("/etc/.fstab.sluice", NULL);
        g_assert_null(temp);
        g_assert_true(sluice_guest_linux_set_fstab(NULL, "docs", "/mnt/docs", FALSE, &error));
        assert_fstab_is(user_fstab, 0644);

        /* none yet: a new one, readable by all */
        fake_guest_reset();
        g_assert_true(sluice_guest_linux_set_fstab(NULL, "docs", "/mnt/docs", TRUE, &error));
        assert_fstab_is("# sluice: docs\ndocs /mnt/docs virtiofs defaults,nofail 0 0\n", 0644);
}

/* A write that fails midway (a full /etc, the agent timing out) leaves the
 * guest's /etc/fstab byte for byte as it was, and says so. */
static void test_set_fstab_fails(void)
{
        static const struct {
                const char *why;
                gssize space;           /* bytes the guest's disk has in all, -1: plenty */
                const char *command;    /* fails as libvirt reports it */
                guint nth;
                const char *says;
        } cases[] = {
                { "a full file system, no room for a copy", sizeof(user_fstab) + 8, NULL, 0, "No space left on device" },
                { "the agent times out writing", -1, "guest-file-write", 1, "did not answer in time" },
                { "a full file system", sizeof(user_fstab) * 2 + 8, NULL, 0, "No space left on device" },
                { "the agent times out reading back", -1, "guest-file-read", 2, "did not answer in time" },
                { "the agent times out renaming", -1, "guest-exec", 3, "did not answer in time" },
        };

        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(GError) error = NULL;
                g_autoptr(GBytes) temp = NULL;
                g_autofree char *says = NULL;

                g_test_message("%s", cases[i].why);
                fake_guest_reset();
                fake_guest_put_file("/etc/fstab", user_fstab, -1, 0644);
                fake_guest_set_space(cases[i].space);
                if (cases[i].command != NULL)
                        fake_guest_fail(cases[i].command, cases[i].nth,
                                        "Guest agent is not responding: Guest agent didn't respond to command, "
                                        "timed out");
                g_assert_false(sluice_guest_linux_set_fstab(NULL, "docs", "/mnt/docs", TRUE, &error));
                /* an agent that timed out stays the agent's error, its code kept */
                if (cases[i].command != NULL)
                        g_assert_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_TIMEOUT);
                else    /* a full disk: what cp said, or the agent's failed write */
                        g_assert_true(error->domain == SLUICE_GUEST_AGENT_ERROR ||
                                      g_error_matches(error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT));
                /* …and reads, worded as vm-guest.c words it, as the user reads it */
                says = sluice_guest_agent_error_sentence(error, "Mounting “docs” in “vm1” failed", NULL);
                g_test_message("it says: %s", says);
                fake_guest_fail(NULL, 0, NULL);
                assert_fstab_is(user_fstab, 0644);
                if (strstr(says, cases[i].says) == NULL || strstr(says, "/etc/fstab is unchanged") == NULL)
                        g_error("%s: the error says “%s”", cases[i].why, says);
                temp = fake_guest_get_file("/etc/.fstab.sluice", NULL);
                g_assert_null(temp);
        }
}

/* An fstab larger than what Sluice reads is refused whole, never cut. */
static void test_set_fstab_too_large(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *big = g_malloc(SLUICE_GUEST_AGENT_FILE_MAX + 2);
        g_autoptr(GBytes) now = NULL;

        memset(big, '#', SLUICE_GUEST_AGENT_FILE_MAX + 1);
        big[SLUICE_GUEST_AGENT_FILE_MAX] = '\n';
        big[SLUICE_GUEST_AGENT_FILE_MAX + 1] = '\0';
        fake_guest_reset();
        fake_guest_put_file("/etc/fstab", big, -1, 0644);
        g_assert_false(sluice_guest_linux_set_fstab(NULL, "docs", "/mnt/docs", TRUE, &error));
        /* the agent layer's refusal, its code kept */
        g_assert_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL);
        g_assert_nonnull(strstr(error->message, "larger than"));
        now = fake_guest_get_file("/etc/fstab", NULL);
        g_assert_cmpuint(g_bytes_get_size(now), ==, SLUICE_GUEST_AGENT_FILE_MAX + 1);
        g_assert_false(fake_guest_saw("guest-file-write"));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/guest-linux/check-mount-point", test_check_mount_point);
        g_test_add_func("/guest-linux/default-mount-point", test_default_mount_point);
        g_test_add_func("/guest-linux/is-mounted", test_is_mounted);
        g_test_add_func("/guest-linux/is-mounted-hostile", test_is_mounted_hostile);
        g_test_add_func("/guest-linux/fstab-edit", test_fstab_edit);
        g_test_add_func("/guest-linux/fstab-edit-odd", test_fstab_edit_odd);
        g_test_add_func("/guest-linux/fstab-edit-hostile", test_fstab_edit_hostile);
        g_test_add_func("/guest-linux/fstab-edit-stale-mark", test_fstab_edit_stale_mark);
        g_test_add_func("/guest-linux/fstab-edit-tricky", test_fstab_edit_tricky);
        g_test_add_func("/guest-linux/set-fstab", test_set_fstab);
        g_test_add_func("/guest-linux/set-fstab-fails", test_set_fstab_fails);
        g_test_add_func("/guest-linux/set-fstab-too-large", test_set_fstab_too_large);
        return g_test_run();
}
