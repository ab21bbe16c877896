/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-windows.c — the drive letters a share may ask for in a Windows
 * guest, reading what Windows' programs print, and what a Windows agent's
 * error becomes in a share's Error (against fake-guest-agent.c). */
#include <glib.h>
#include <string.h>

#include "errors.h"
#include "fake-guest-agent.h"
#include "guest-agent.h"
#include "guest-windows.h"
#include "sluice-dbus.h"

static void assert_refused(const char *drive, const char *says)
{
        g_autoptr(GError) error = NULL;

        g_assert_false(sluice_guest_windows_check_drive(drive, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
        if (strstr(error->message, says) == NULL)
                g_error("refusing “%s” says “%s”, not “%s”", drive, error->message, says);
        g_assert_null(strchr(error->message, '\n'));
}

static void test_check_drive(void)
{
        static const char *const good[] = { "", "D:", "Z:", "z:", "m:", "Q:" };

        for (gsize i = 0; i < G_N_ELEMENTS(good); i++)
                g_assert_true(sluice_guest_windows_check_drive(good[i], NULL));
        g_assert_true(sluice_guest_windows_check_drive(NULL, NULL));   /* first free from Z: down */

        assert_refused("C:", "where Windows itself lives");
        assert_refused("c:", "where Windows itself lives");
        assert_refused("A:", "floppy");
        assert_refused("b:", "floppy");
        assert_refused("Z", "not a drive letter");
        assert_refused("Z:\\", "not a drive letter");
        assert_refused("ZZ:", "not a drive letter");
        assert_refused("1:", "not a drive letter");
        assert_refused("Ä:", "not a drive letter");
        assert_refused("Z:\n", "Z:\\n");
        assert_refused("\xff:", "“\\xff:”");
}

/* What `sc.exe query` prints on Windows 10/11: CRLF lines, a blank first. */
#define SC_RUNNING_TEXT                                                                          \
        "\r\nSERVICE_NAME: VirtioFsSvc \r\n"                                                     \
        "        TYPE               : 10  WIN32_OWN_PROCESS  \r\n"                               \
        "        STATE              : 4  RUNNING \r\n"                                           \
        "                                (STOPPABLE, NOT_PAUSABLE, ACCEPTS_SHUTDOWN)\r\n"        \
        "        WIN32_EXIT_CODE    : 0  (0x0)\r\n"                                              \
        "        SERVICE_EXIT_CODE  : 0  (0x0)\r\n"                                              \
        "        CHECKPOINT         : 0x0\r\n"                                                   \
        "        WAIT_HINT          : 0x0\r\n"

static int sc_state(const char *text)
{
        return sluice_guest_windows_sc_state(text, strlen(text));
}

static void test_sc_state(void)
{
        g_assert_cmpint(sc_state(SC_RUNNING_TEXT), ==, 4);
        g_assert_cmpint(sc_state("\r\nSERVICE_NAME: VirtioFsSvc \r\n"
                                 "        TYPE               : 10  WIN32_OWN_PROCESS  \r\n"
                                 "        STATE              : 1  STOPPED \r\n"
                                 "        WIN32_EXIT_CODE    : 1077  (0x435)\r\n"), ==, 1);
        g_assert_cmpint(sc_state("SERVICE_NAME: VirtioFsSvc\n        TYPE : 10\n        STATE : 2  START_PENDING\n"),
                        ==, 2);
        /* a translated key: the third key-value line holds the state */
        g_assert_cmpint(sc_state("\r\nSERVICE_NAME: VirtioFsSvc \r\n"
                                 "        TYP                : 10  WIN32_OWN_PROCESS  \r\n"
                                 "        STATUS             : 3  STOP_PENDING \r\n"
                                 "        WIN32_EXITCODE     : 0  (0x0)\r\n"), ==, 3);
        /* the service is not installed (English, German) */
        g_assert_cmpint(sc_state("[SC] EnumQueryServicesStatus:OpenService FAILED 1060:\r\n\r\n"
                                 "The specified service does not exist as an installed service.\r\n\r\n"), ==, 0);
        g_assert_cmpint(sc_state("[SC] EnumQueryServicesStatus:OpenService FEHLER 1060:\r\n\r\n"
                                 "Der angegebene Dienst ist kein installierter Dienst.\r\n\r\n"), ==, 0);
        g_assert_cmpint(sc_state(""), ==, 0);
        g_assert_cmpint(sluice_guest_windows_sc_state(NULL, 0), ==, 0);
        g_assert_cmpint(sc_state("STATE : 99 NONSENSE\r\n"), ==, 0);
        g_assert_cmpint(sc_state("STATE : 4"), ==, 4);     /* no line end */
        /* bounded: only LEN bytes are read */
        g_assert_cmpint(sluice_guest_windows_sc_state(SC_RUNNING_TEXT, 40), ==, 0);
}

static void test_launchctl(void)
{
        g_autofree char *message = NULL;

        g_assert_true(sluice_guest_windows_launchctl_ok("OK\n", 3, NULL));
        g_assert_true(sluice_guest_windows_launchctl_ok("OK\r\n", 4, NULL));
        g_assert_true(sluice_guest_windows_launchctl_ok("OK\nvirtiofs sluice-b\n", 20, NULL));
        g_assert_false(sluice_guest_windows_launchctl_ok("KO launcher: error 183\n", 23, &message));
        g_assert_cmpstr(message, ==, "KO launcher: error 183");
        g_clear_pointer(&message, g_free);
        g_assert_false(sluice_guest_windows_launchctl_ok("OKAY\n", 5, NULL));
        g_assert_false(sluice_guest_windows_launchctl_ok("", 0, &message));
        g_assert_cmpstr(message, ==, "");
}

/* What the read-back prints: DriveInfo names end in a backslash. */
#define VOLUMES_TEXT                    \
        "C:\\|NTFS|\r\n"                \
        "D:\\|CDFS|virtio-win-0.1.262\r\n" \
        "Z:\\|VirtIO-FS|Photos\r\n"     \
        "Y:\\|VirtIO-FS|src.2024\r\n"   \
        "X:\\|NTFS|src.2024\r\n"

static void test_drive_of(void)
{
        g_autofree char *z = NULL, *y = NULL, *none = NULL, *lower = NULL, *bare = NULL;
        guint32 in_use = 0;

        z = sluice_guest_windows_drive_of(VOLUMES_TEXT, strlen(VOLUMES_TEXT), "Photos", &in_use);
        g_assert_cmpstr(z, ==, "Z:");
        g_assert_cmphex(in_use, ==, (1u << 2) | (1u << 3) | (1u << 23) | (1u << 24) | (1u << 25));
        y = sluice_guest_windows_drive_of(VOLUMES_TEXT, strlen(VOLUMES_TEXT), "src.2024", NULL);
        g_assert_cmpstr(y, ==, "Y:");      /* the NTFS volume of the same label is not it */
        none = sluice_guest_windows_drive_of(VOLUMES_TEXT, strlen(VOLUMES_TEXT), "Music", NULL);
        g_assert_null(none);
        lower = sluice_guest_windows_drive_of("z:|virtio-fs|photos\n", 20, "Photos", NULL);
        g_assert_cmpstr(lower, ==, "Z:");
        bare = sluice_guest_windows_drive_of("W:|VirtIO-FS|a\r\n", 16, "a", NULL);
        g_assert_cmpstr(bare, ==, "W:");

        /* lines that are not volumes are skipped, not misread */
        static const char *const junk[] = {
                "Z|VirtIO-FS|a\r\n", "ZZ:|VirtIO-FS|a\r\n", "1:|VirtIO-FS|a\r\n", "Z:\\x|VirtIO-FS|a\r\n",
                "Z:\\ VirtIO-FS a\r\n", "Z:\\|VirtIO-FS\r\n", "Z:\\|VirtIO-FS|ab\r\n", "\xff\xfe|\x01|\r\n",
                "Z:\\|VirtIO-FS|a\0b\r\n",
        };
        for (gsize i = 0; i < G_N_ELEMENTS(junk); i++) {
                g_autofree char *got = sluice_guest_windows_drive_of(junk[i], strlen(junk[i]) + (i == 8 ? 4 : 0),
                                                                     "a", NULL);
                if (got != NULL)
                        g_error("“%s” was read as %s", junk[i], got);
        }
        g_assert_null(sluice_guest_windows_drive_of(NULL, 0, "a", &in_use));
        g_assert_cmphex(in_use, ==, 0);
}

/* What a broken or hostile Windows agent may say: terminal escapes (a
 * screen clear, a window title, a colour), C1 controls (CSI as one
 * character, NEL), a bidi override, and bytes that are not UTF-8 (a lone
 * surrogate as libvirt's JSON parser decodes "\udc80", a bare 0xff). */
#define HOSTILE_DESC                                                                                   \
        "\x1b[2J\x1b]0;owned\x07" "access \xc2\x9b" "31mdenied\xc2\x85 \xe2\x80\xae" "exe.txt \xed\xb2\x80\xff" \
        " end"

/* Valid UTF-8, one line, nothing a terminal or a label would act on. */
static void assert_printable(const char *text)
{
        if (!g_utf8_validate(text, -1, NULL))
                g_error("not valid UTF-8: “%s”", g_strescape(text, NULL));
        for (const char *p = text; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                if (g_unichar_iscntrl(c) || !g_unichar_isprint(c))
                        g_error("U+%04X in “%s”", c, g_strescape(text, NULL));
        }
}

static guint32 drives(const char *letters)
{
        guint32 mask = 0;

        for (const char *l = letters; *l != '\0'; l++)
                mask |= 1u << (*l - 'A');
        return mask;
}

static void assert_picked(const char *wanted, const char *in_use, const char *want)
{
        g_autofree char *got = sluice_guest_windows_pick_drive(wanted, drives(in_use));

        g_assert_cmpstr(got, ==, want);
}

/* A share's letter taken by another drive (a USB stick, another share):
 * the next free one from Z: down, never A: to C:, never one in use. */
static void test_pick_drive(void)
{
        assert_picked("Z:", "CD", "Z:");
        assert_picked("y:", "CD", "Y:");
        assert_picked("Z:", "CDZ", "Y:");
        assert_picked("Z:", "CDYZ", "X:");
        assert_picked("M:", "CDMZ", "Y:");
        assert_picked("", "CDZ", "Y:");
        assert_picked(NULL, "", "Z:");
        assert_picked("Z:", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", NULL);
        assert_picked("Z:", "ABCEFGHIJKLMNOPQRSTUVWXYZ", "D:");
        /* what a drive check refuses is never handed back */
        assert_picked("C:", "D", "Z:");
        assert_picked("Z:\\", "D", "Z:");
}

static void test_agent_error_printable(void)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *drive = NULL;
        g_autoptr(SluiceShare) share = sluice_share_skeleton_new();
        g_autoptr(GVariant) properties = NULL;
        const char *shown = NULL;

        fake_guest_reset();
        /* libvirt reports an agent's {"error": …} with its desc as it came */
        fake_guest_fail("guest-exec", 0,
                        "internal error: unable to execute QEMU agent command 'guest-exec': " HOSTILE_DESC);
        drive = sluice_guest_windows_mount(NULL, "docs", "", FALSE, FALSE, &error);
        g_assert_null(drive);
        /* the agent's own failure, its code kept for vm-guest.c to word */
        g_assert_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_FAILED);
        assert_printable(error->message);
        /* still says what the guest said, less what a terminal would act on */
        g_assert_nonnull(strstr(error->message, "access"));
        g_assert_nonnull(strstr(error->message, "denied"));
        g_assert_nonnull(strstr(error->message, " end"));
        g_assert_null(strstr(error->message, "\x1b"));

        /* the Error property as a client reads it: a D-Bus string, intact */
        sluice_share_set_error(share, error->message);
        properties = g_dbus_interface_skeleton_get_properties(G_DBUS_INTERFACE_SKELETON(share));
        g_assert_true(g_variant_lookup(properties, "Error", "&s", &shown));
        g_assert_cmpstr(shown, ==, error->message);

        /* the unmount's path says it the same way */
        g_clear_error(&error);
        g_assert_false(sluice_guest_windows_unmount(NULL, "docs", "Z:", &error));
        g_assert_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_FAILED);
        assert_printable(error->message);
}

/* What the agent says of itself and its OS becomes the Vm's GuestOsName
 * and the version in its messages: printable and bounded as well. */
static void test_osinfo_printable(void)
{
        g_autoptr(JsonObject) osinfo = json_object_new();
        g_autoptr(JsonObject) info = json_object_new();
        g_autoptr(GString) long_version = g_string_new("9.2.0");
        g_autofree char *name = NULL;
        SluiceGuestAgentInfo agent = { 0 };

        json_object_set_string_member(osinfo, "id", "mswindows");
        json_object_set_string_member(osinfo, "pretty-name", "Windows " HOSTILE_DESC);
        g_assert_cmpint(sluice_guest_agent_os_type_from(osinfo, &name), ==, SLUICE_WIRE_GUEST_OS_WINDOWS);
        assert_printable(name);
        g_assert_true(g_str_has_prefix(name, "Windows "));
        for (int i = 0; i < 200; i++)
                g_string_append(long_version, "\x1b[0m\xe2\x80\xae");
        json_object_set_string_member(info, "version", long_version->str);
        sluice_guest_agent_info_from(info, &agent);
        assert_printable(agent.version);
        g_assert_cmpuint(g_utf8_strlen(agent.version, -1), <=, 41);
        /* no command enabled: the blocked list is Sluice's own names */
        g_assert_cmpstr(agent.blocked, ==, "guest-exec, guest-exec-status, guest-file-open, guest-file-read, "
                                           "guest-file-write, guest-file-close");
        sluice_guest_agent_info_clear(&agent);
}

/* The one builder of messages that quote a guest: whatever its arguments
 * hold, the message is printable and bounded. */
static void test_set_error(void)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(GString) long_text = g_string_new(NULL);

        sluice_guest_agent_set_error(&error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, "it said: %s", HOSTILE_DESC);
        assert_printable(error->message);
        g_assert_true(g_str_has_prefix(error->message, "it said: "));
        g_clear_error(&error);
        for (int i = 0; i < 5000; i++)
                g_string_append(long_text, "\xe2\x80\xae\x1b[1m");
        sluice_guest_agent_set_error(&error, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, "%s", long_text->str);
        assert_printable(error->message);
        g_assert_cmpuint(g_utf8_strlen(error->message, -1), <=, SLUICE_GUEST_AGENT_MESSAGE_MAX_CHARS + 1);
        sluice_guest_agent_set_error(NULL, SLUICE_ERROR, SLUICE_ERROR_GUEST_AGENT, "%s", "ignored");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/guest-windows/check-drive", test_check_drive);
        g_test_add_func("/guest-windows/sc-state", test_sc_state);
        g_test_add_func("/guest-windows/launchctl", test_launchctl);
        g_test_add_func("/guest-windows/drive-of", test_drive_of);
        g_test_add_func("/guest-windows/pick-drive", test_pick_drive);
        g_test_add_func("/guest-windows/agent-error-printable", test_agent_error_printable);
        g_test_add_func("/guest-windows/set-error", test_set_error);
        g_test_add_func("/guest-windows/osinfo-printable", test_osinfo_printable);
        return g_test_run();
}
