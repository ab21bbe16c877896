/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-guest-tools.c — installers of the guest pieces found in a scratch
 * Downloads folder, bad files refused, msiexec's codes in words, the
 * argument vectors, and the doctor's reading of what Windows prints. */
#include <glib.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "fake-guest-agent.h"
#include "guest-agent.h"
#include "guest-doctor.h"
#include "guest-tools.h"

static const guchar MSI_MAGIC[8] = { 0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1 };

static char *scratch;

static char *put(const char *name, const char *kind)
{
        char *path = g_build_filename(scratch, name, NULL);
        g_autofree guchar *data = g_malloc0(64 * 1024);

        if (g_strcmp0(kind, "msi") == 0)
                memcpy(data, MSI_MAGIC, sizeof(MSI_MAGIC));
        else if (g_strcmp0(kind, "iso") == 0)
                memcpy(data + 0x8001, "CD001", 5);
        else
                memcpy(data, "<html>not an installer</html>", 29);
        g_assert_true(g_file_set_contents(path, (const char *)data, 64 * 1024, NULL));
        return path;
}

static void assert_refused(const char *path, SluiceGuestTool tool, int code, const char *says)
{
        g_autoptr(GError) error = NULL;
        g_auto(SluiceInstaller) installer = { .fd = -1 };

        g_assert_false(sluice_guest_tools_open_installer(path, tool, &installer, &error));
        g_assert_error(error, SLUICE_ERROR, code);
        if (strstr(error->message, says) == NULL)
                g_error("refusing “%s” says “%s”, not “%s”", path, error->message, says);
        g_assert_cmpint(installer.fd, ==, -1);
}

static void test_find_in_downloads(void)
{
        const char *const dirs[] = { scratch, NULL };
        g_autofree char *old = put("winfsp-1.12.22339.msi", "msi");
        g_autofree char *newest = put("winfsp-2.0.23075.msi", "msi");
        /* newer by its name, but a web page saved under it: skipped */
        g_autofree char *fake = put("winfsp-2.1.24051.msi", "html");
        g_autofree char *iso_old = put("virtio-win-0.1.240.iso", "iso");
        g_autofree char *iso_new = put("virtio-win-0.1.262.iso", "iso");
        g_autofree char *gt = put("virtio-win-gt-x64.msi", "msi");
        g_autofree char *found = NULL;
        g_auto(SluiceInstaller) installer = { .fd = -1 };

        found = sluice_guest_tools_find_installer(SLUICE_GUEST_TOOL_WINFSP, dirs, NULL);
        g_assert_cmpstr(found, ==, newest);
        g_clear_pointer(&found, g_free);
        /* the MSI goes into any guest; the ISO needs a CD-ROM drive */
        found = sluice_guest_tools_find_installer(SLUICE_GUEST_TOOL_VIRTIO_FS, dirs, NULL);
        g_assert_cmpstr(found, ==, gt);
        g_clear_pointer(&found, g_free);
        g_assert_cmpint(g_unlink(gt), ==, 0);
        found = sluice_guest_tools_find_installer(SLUICE_GUEST_TOOL_VIRTIO_FS, dirs, NULL);
        g_assert_cmpstr(found, ==, iso_new);
        g_assert_true(sluice_guest_tools_open_installer(found, SLUICE_GUEST_TOOL_VIRTIO_FS, &installer, NULL));
        g_assert_cmpint(installer.kind, ==, SLUICE_INSTALLER_ISO);
        g_assert_cmpuint(installer.size, ==, 64 * 1024);
        g_assert_cmpint(installer.fd, >=, 0);

        for (const char *const *p = (const char *const[]){ old, newest, fake, iso_old, iso_new, NULL }; *p; p++)
                (void)g_unlink(*p);
}

static void test_nothing_found(void)
{
        const char *const dirs[] = { scratch, "/nonexistent/Downloads", NULL };
        g_autoptr(GError) error = NULL;
        g_autofree char *found = sluice_guest_tools_find_installer(SLUICE_GUEST_TOOL_WINFSP, dirs, &error);

        g_assert_null(found);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND);
        /* where it looked, and where to get one */
        g_assert_nonnull(strstr(error->message, scratch));
        g_assert_nonnull(strstr(error->message, "winfsp.dev"));
        g_clear_error(&error);
        g_free(sluice_guest_tools_find_installer(SLUICE_GUEST_TOOL_VIRTIO_FS, dirs, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND);
        g_assert_nonnull(strstr(error->message, "virtio-win.iso"));
}

static void test_bad_files_refused(void)
{
        g_autofree char *good = put("winfsp-2.0.23075.msi", "msi");
        g_autofree char *link = g_build_filename(scratch, "winfsp-9.9.msi", NULL);
        g_autofree char *dir = g_build_filename(scratch, "winfsp-dir.msi", NULL);
        g_autofree char *page = put("winfsp-3.0.msi", "html");
        g_autofree char *exe = put("winfsp-2.0.exe", "msi");
        g_autofree char *iso_as_msi = put("virtio-win-gt-x64.msi", "iso");
        g_autofree char *small = g_build_filename(scratch, "winfsp-0.msi", NULL);
        g_autofree char *fifo = g_build_filename(scratch, "winfsp-fifo.msi", NULL);
        g_auto(SluiceInstaller) installer = { .fd = -1 };

        g_assert_cmpint(symlink(good, link), ==, 0);
        g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
        g_assert_true(g_file_set_contents(small, (const char *)MSI_MAGIC, sizeof(MSI_MAGIC), NULL));
        g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);

        g_assert_true(sluice_guest_tools_open_installer(good, SLUICE_GUEST_TOOL_WINFSP, &installer, NULL));
        g_assert_cmpint(installer.kind, ==, SLUICE_INSTALLER_MSI);
        assert_refused(link, SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_INVALID_ARGUMENT, "symbolic link");
        assert_refused(dir, SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_INVALID_ARGUMENT, "not a regular file");
        assert_refused(fifo, SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_INVALID_ARGUMENT, "not a regular file");
        assert_refused(page, SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_INVALID_ARGUMENT, "not an MSI package");
        assert_refused(exe, SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_INVALID_ARGUMENT, "not WinFsp's installer");
        assert_refused(iso_as_msi, SLUICE_GUEST_TOOL_VIRTIO_FS, SLUICE_ERROR_INVALID_ARGUMENT, "not an MSI package");
        assert_refused(small, SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_INVALID_ARGUMENT, "cannot be an installer");
        /* WinFsp's file given as virtio-win's is taken by its name (an MSI)… */
        assert_refused("winfsp-2.0.23075.msi", SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_INVALID_ARGUMENT,
                       "whole path");
        assert_refused("/nonexistent/winfsp-2.0.msi", SLUICE_GUEST_TOOL_WINFSP, SLUICE_ERROR_NOT_FOUND,
                       "No such file");
        /* a name with a terminal escape is shown escaped */
        {
                g_autoptr(GError) error = NULL;

                g_assert_false(sluice_guest_tools_open_installer("/tmp/\033[2Jx.exe", SLUICE_GUEST_TOOL_WINFSP,
                                                                 &installer, &error));
                g_assert_null(strchr(error->message, '\033'));
        }
        for (const char *const *p = (const char *const[]){ good, link, page, exe, iso_as_msi, small, fifo, NULL }; *p;
             p++)
                (void)g_unlink(*p);
        (void)g_rmdir(dir);
}

static void test_msiexec_words(void)
{
        static const struct {
                int code;
                const char *says;
        } named[] = {
                { 1602, "cancelled" },          { 1603, "fatal error" },
                { 1618, "another installation is already in progress" },
                { 1619, "could not open the package" }, { 1620, "not a valid Windows Installer package" },
                { 1625, "policy" },             { 1633, "this kind of Windows" },
                { 1638, "another version of this product" }, { 1925, "administrator" },
        };
        gboolean reboot = TRUE;
        g_autofree char *unknown = NULL;

        g_assert_null(sluice_guest_tools_msiexec_result(0, &reboot));
        g_assert_false(reboot);
        g_assert_null(sluice_guest_tools_msiexec_result(3010, &reboot));
        g_assert_true(reboot);
        for (gsize i = 0; i < G_N_ELEMENTS(named); i++) {
                g_autofree char *words = sluice_guest_tools_msiexec_result(named[i].code, &reboot);
                g_autofree char *code = g_strdup_printf("code %d", named[i].code);

                g_assert_false(reboot);
                if (words == NULL || strstr(words, named[i].says) == NULL || strstr(words, code) == NULL)
                        g_error("msiexec %d says “%s”", named[i].code, words);
        }
        unknown = sluice_guest_tools_msiexec_result(4242, NULL);
        g_assert_cmpstr(unknown, ==, "msiexec ended with code 4242");
}

static void test_argv(void)
{
        g_auto(GStrv) winfsp = sluice_guest_tools_msiexec_argv(SLUICE_GUEST_TOOL_WINFSP,
                                                               sluice_guest_tools_guest_path(SLUICE_GUEST_TOOL_WINFSP));
        g_auto(GStrv) viofs = sluice_guest_tools_msiexec_argv(SLUICE_GUEST_TOOL_VIRTIO_FS, "D:\\virtio-win-gt-x64.msi");
        g_autofree char *joined = NULL;
        SluiceGuestTool tool;

        g_assert_cmpstr(winfsp[0], ==, "C:\\Windows\\System32\\msiexec.exe");
        g_assert_cmpstr(winfsp[1], ==, "/i");
        g_assert_cmpstr(winfsp[2], ==, "C:\\Windows\\Temp\\sluice-winfsp.msi");
        g_assert_cmpstr(winfsp[3], ==, "/qn");
        g_assert_cmpstr(winfsp[4], ==, "/norestart");
        g_assert_null(winfsp[5]);
        g_assert_cmpstr(viofs[2], ==, "D:\\virtio-win-gt-x64.msi");
        g_assert_cmpstr(viofs[5], ==, "ADDLOCAL=FE_viofs_driver");
        g_assert_null(viofs[6]);
        /* never the agent or the serial driver: the channel the command came through */
        joined = g_strjoinv(" ", viofs);
        g_assert_null(strstr(joined, "qemu"));
        g_assert_null(strstr(joined, "vioserial"));

        g_assert_true(sluice_guest_tool_parse("winfsp", &tool));
        g_assert_cmpint(tool, ==, SLUICE_GUEST_TOOL_WINFSP);
        g_assert_true(sluice_guest_tool_parse("virtio-fs", &tool));
        g_assert_cmpint(tool, ==, SLUICE_GUEST_TOOL_VIRTIO_FS);
        g_assert_false(sluice_guest_tool_parse("qemu-ga", &tool));
}

static void test_noted_missing(void)
{
        const char *const both[] = { "virtio-fs", "winfsp", NULL };
        g_auto(GStrv) taken = NULL;

        g_assert_null(sluice_guest_tools_take_noted());
        sluice_guest_tools_note_missing(both);
        taken = sluice_guest_tools_take_noted();
        g_assert_cmpstrv(taken, both);
        g_assert_null(sluice_guest_tools_take_noted());
}

/* What reg.exe and sc.exe print, CRLF lines as Windows has them. */
static void test_doctor_reading(void)
{
        static const char reg[] =
                "\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\r\n"
                "    ProductName    REG_SZ    Windows 10 Pro\r\n"
                "    DisplayVersion    REG_SZ    22H2\r\n"
                "    Empty    REG_SZ\r\n"
                "    Evil    REG_SZ    \033[2Jowned\x07 \xff\xfe\r\n\r\n";
        static const char qc[] =
                "[SC] QueryServiceConfig SUCCESS\r\n\r\nSERVICE_NAME: VirtioFsSvc\r\n"
                "        TYPE               : 10  WIN32_OWN_PROCESS\r\n"
                "        START_TYPE         : 2   AUTO_START\r\n"
                "        ERROR_CONTROL      : 1   NORMAL\r\n";
        g_autofree char *product = sluice_guest_doctor_reg_value(reg, strlen(reg), "ProductName");
        g_autofree char *display = sluice_guest_doctor_reg_value(reg, strlen(reg), "displayversion");
        g_autofree char *empty = sluice_guest_doctor_reg_value(reg, strlen(reg), "Empty");
        g_autofree char *evil = sluice_guest_doctor_reg_value(reg, strlen(reg), "Evil");
        g_autofree char *none = sluice_guest_doctor_reg_value(reg, strlen(reg), "CurrentBuild");
        g_auto(GStrv) all = sluice_guest_doctor_reg_values(reg, strlen(reg));

        g_assert_cmpstr(product, ==, "Windows 10 Pro");
        g_assert_cmpstr(display, ==, "22H2");
        g_assert_cmpstr(empty, ==, "");
        g_assert_null(none);
        g_assert_nonnull(evil);
        g_assert_true(g_utf8_validate(evil, -1, NULL));
        g_assert_null(strchr(evil, '\033'));
        g_assert_null(strchr(evil, '\x07'));
        g_assert_cmpuint(g_strv_length(all), ==, 4);
        g_assert_cmpstr(all[0], ==, "ProductName = Windows 10 Pro");
        g_assert_cmpint(sluice_guest_doctor_sc_start_type(qc, strlen(qc)), ==, 2);
        g_assert_cmpint(sluice_guest_doctor_sc_start_type("garbage", 7), ==, 0);
        g_assert_cmpint(sluice_guest_doctor_sc_start_type(NULL, 0), ==, 0);
}

static void test_cdrom(void)
{
        static const char with_empty[] =
                "<domain type='kvm'><name>w</name><devices>"
                "<disk type='file' device='disk'><source file='/v/w.qcow2'/><target dev='sda' bus='sata'/></disk>"
                "<disk type='file' device='cdrom'><source file='/v/win.iso'/><target dev='sdb' bus='sata'/></disk>"
                "<disk type='file' device='cdrom'><target dev='sdc' bus='sata'/><readonly/></disk>"
                "</devices></domain>";
        static const char without[] =
                "<domain type='kvm'><devices><disk type='file' device='cdrom'><source file='/v/win.iso'/>"
                "<target dev='sdb' bus='sata'/></disk></devices></domain>";
        static const char volumes[] = "C:\\|NTFS|\r\nE:\\|CDFS|VIRTIO-WIN-0.1.262\r\nZ:\\|VirtIO-FS|docs\r\n";
        g_autofree char *bus = NULL;
        g_autofree char *target = sluice_guest_tools_empty_cdrom(with_empty, &bus);
        g_autofree char *none_bus = NULL;
        g_autofree char *none = sluice_guest_tools_empty_cdrom(without, &none_bus);
        g_autofree char *garbage_bus = NULL;
        g_autofree char *garbage = sluice_guest_tools_empty_cdrom("<domain><devices", &garbage_bus);
        g_autofree char *xml = sluice_guest_tools_cdrom_xml("sdc", "sata", "/home/me/Down'<loads>/virtio-win.iso");
        g_autofree char *drive = sluice_guest_tools_virtio_win_drive(volumes, strlen(volumes));
        g_autofree char *msi = sluice_guest_tools_msi_on_drive(drive);

        g_assert_cmpstr(target, ==, "sdc");
        g_assert_cmpstr(bus, ==, "sata");
        g_assert_null(none);
        g_assert_null(garbage);
        /* the path is data in the XML, never markup */
        g_assert_nonnull(strstr(xml, "file='/home/me/Down&apos;&lt;loads&gt;/virtio-win.iso'"));
        g_assert_nonnull(strstr(xml, "<target dev='sdc' bus='sata'/>"));
        g_assert_cmpstr(drive, ==, "E:");
        g_assert_cmpstr(msi, ==, "E:\\virtio-win-gt-x64.msi");
        g_assert_null(sluice_guest_tools_virtio_win_drive("C:\\|NTFS|\r\n", 9));
}

typedef struct {
        guint calls;
        gsize last;
        gsize total;
        gboolean backwards;
} Seen;

static void on_progress(gsize done, gsize total, gpointer user_data)
{
        Seen *seen = user_data;

        seen->backwards |= done < seen->last;
        seen->calls++;
        seen->last = done;
        seen->total = total;
}

/* A 300 KiB installer copied in pieces with its progress; a full disk and
 * an agent failing midway end it with an error, never a loop. */
static void test_copy_into_guest(void)
{
        const gsize size = 300 * 1024;
        g_autofree char *path = g_build_filename(scratch, "winfsp-copy.msi", NULL);
        g_autofree guchar *data = g_malloc(size);
        g_autoptr(GBytes) in_guest = NULL;
        g_autoptr(GError) error = NULL;
        Seen seen = { 0 };
        int fd;

        for (gsize i = 0; i < size; i++)
                data[i] = (guchar)(i * 7 + 3);
        memcpy(data, MSI_MAGIC, sizeof(MSI_MAGIC));
        g_assert_true(g_file_set_contents(path, (const char *)data, (gssize)size, NULL));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);

        fake_guest_reset();
        g_assert_true(sluice_guest_agent_write_from_fd(NULL, "C:\\Windows\\Temp\\sluice-winfsp.msi", fd, size,
                                                       on_progress, &seen, &error));
        g_assert_no_error(error);
        in_guest = fake_guest_get_file("C:\\Windows\\Temp\\sluice-winfsp.msi", NULL);
        g_assert_nonnull(in_guest);
        g_assert_cmpmem(g_bytes_get_data(in_guest, NULL), g_bytes_get_size(in_guest), data, size);
        g_assert_cmpuint(seen.calls, ==, (size + SLUICE_GUEST_AGENT_WRITE_CHUNK - 1) / SLUICE_GUEST_AGENT_WRITE_CHUNK);
        g_assert_cmpuint(seen.last, ==, size);
        g_assert_cmpuint(seen.total, ==, size);
        g_assert_false(seen.backwards);

        /* a full disk in the guest */
        fake_guest_reset();
        fake_guest_set_space(100 * 1024);
        g_assert_false(sluice_guest_agent_write_from_fd(NULL, "C:\\t.msi", fd, size, NULL, NULL, &error));
        g_assert_nonnull(error);
        g_assert_nonnull(strstr(error->message, "No space left"));
        g_clear_error(&error);

        /* the agent fails at its third write */
        fake_guest_reset();
        fake_guest_fail("guest-file-write", 3, "Guest agent is not responding: Guest agent not available for now");
        seen = (Seen){ 0 };
        g_assert_false(sluice_guest_agent_write_from_fd(NULL, "C:\\t.msi", fd, size, on_progress, &seen, &error));
        g_assert_nonnull(error);
        g_assert_true(error->domain == SLUICE_GUEST_AGENT_ERROR);
        g_assert_nonnull(strstr(error->message, "not responding"));
        g_assert_cmpuint(seen.calls, ==, 2);
        g_assert_true(fake_guest_saw("guest-file-close"));
        g_clear_error(&error);

        /* the host file is shorter than said (changed after it was checked) */
        fake_guest_reset();
        g_assert_false(sluice_guest_agent_write_from_fd(NULL, "C:\\t.msi", fd, size + 4096, NULL, NULL, &error));
        g_assert_nonnull(error);
        g_assert_nonnull(strstr(error->message, "shorter"));

        close(fd);
        (void)g_unlink(path);
        fake_guest_reset();
}

int main(int argc, char **argv)
{
        int status;

        g_test_init(&argc, &argv, NULL);
        scratch = g_dir_make_tmp("sluice-tools-XXXXXX", NULL);
        g_assert_nonnull(scratch);
        g_test_add_func("/guest-tools/find-in-downloads", test_find_in_downloads);
        g_test_add_func("/guest-tools/nothing-found", test_nothing_found);
        g_test_add_func("/guest-tools/bad-files-refused", test_bad_files_refused);
        g_test_add_func("/guest-tools/msiexec-words", test_msiexec_words);
        g_test_add_func("/guest-tools/argv", test_argv);
        g_test_add_func("/guest-tools/noted-missing", test_noted_missing);
        g_test_add_func("/guest-tools/doctor-reading", test_doctor_reading);
        g_test_add_func("/guest-tools/cdrom", test_cdrom);
        g_test_add_func("/guest-tools/copy-into-guest", test_copy_into_guest);
        status = g_test_run();
        (void)g_rmdir(scratch);
        g_free(scratch);
        return status;
}
