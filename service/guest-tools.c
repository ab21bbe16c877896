/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-tools.c — installers of the guest pieces; see guest-tools.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "errors.h"
#include "guest-tools.h"
#include "printable.h"

#define MSIEXEC_EXE "C:\\Windows\\System32\\msiexec.exe"
/* virtio-win's feature for the VirtIO-FS driver and its service (its
 * features.wxs); nothing else of virtio-win is installed this way. */
#define VIRTIO_FS_FEATURE "ADDLOCAL=FE_viofs_driver"
#define VIRTIO_WIN_MSI "virtio-win-gt-x64.msi"

/* An MSI is an OLE compound file; an ISO 9660 image has its first volume
 * descriptor at sector 16 (0x8000), "CD001" after the type byte. */
static const guchar MSI_MAGIC[8] = { 0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1 };
#define ISO_MAGIC_OFFSET 0x8001
/* the smallest an MSI can be: a compound file's header sector and one more */
#define MSI_MIN 1024

const char *sluice_guest_tool_name(SluiceGuestTool tool)
{
        return tool == SLUICE_GUEST_TOOL_WINFSP ? "winfsp" : "virtio-fs";
}

gboolean sluice_guest_tool_parse(const char *word, SluiceGuestTool *ret)
{
        for (int t = 0; t < SLUICE_GUEST_TOOL_COUNT; t++)
                if (g_strcmp0(word, sluice_guest_tool_name(t)) == 0) {
                        *ret = t;
                        return TRUE;
                }
        return FALSE;
}

void sluice_installer_clear(SluiceInstaller *installer)
{
        if (installer->fd >= 0)
                (void)close(installer->fd);
        installer->fd = -1;
        g_clear_pointer(&installer->path, g_free);
        installer->size = 0;
}

static gboolean name_is(const char *base, const char *prefix, const char *suffix)
{
        gsize n = strlen(base), p = strlen(prefix), s = strlen(suffix);

        return n >= p + s && g_ascii_strncasecmp(base, prefix, p) == 0 &&
               g_ascii_strcasecmp(base + n - s, suffix) == 0;
}

/* The kind a file of TOOL named BASE is, or FALSE when the name is not one. */
static gboolean kind_of_name(SluiceGuestTool tool, const char *base, SluiceInstallerKind *kind)
{
        if (tool == SLUICE_GUEST_TOOL_WINFSP) {
                *kind = SLUICE_INSTALLER_MSI;
                return name_is(base, "winfsp", ".msi");
        }
        if (name_is(base, "", ".msi")) {
                *kind = SLUICE_INSTALLER_MSI;
                return TRUE;
        }
        *kind = SLUICE_INSTALLER_ISO;
        return name_is(base, "", ".iso");
}

static gboolean read_at(int fd, goffset offset, guchar *buf, gsize n)
{
        ssize_t got;

        do
                got = pread(fd, buf, n, offset);
        while (got < 0 && errno == EINTR);
        return got == (ssize_t)n;
}

gboolean sluice_guest_tools_open_installer(const char *path, SluiceGuestTool tool, SluiceInstaller *ret,
                                           GError **error)
{
        g_autofree char *shown = sluice_printable_escaped(path != NULL ? path : "");
        g_autofree char *base = NULL;
        SluiceInstallerKind kind;
        struct stat st;
        guchar magic[8];
        int fd;

        if (path == NULL || !g_path_is_absolute(path)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("“%s” is not a file name Sluice can use: give the installer's whole path, starting with /"),
                            shown);
                return FALSE;
        }
        base = g_path_get_basename(path);
        if (!kind_of_name(tool, base, &kind)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            tool == SLUICE_GUEST_TOOL_WINFSP
                                    ? _("“%s” is not WinFsp's installer: give its winfsp-….msi from winfsp.dev")
                                    : _("“%s” is not virtio-win's installer: give virtio-win.iso or its virtio-win-gt-x64.msi"),
                            shown);
                return FALSE;
        }
        /* not a symlink (what it points at may change), not a FIFO that blocks the open */
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                int e = errno;

                g_set_error(error, SLUICE_ERROR,
                            e == ENOENT ? SLUICE_ERROR_NOT_FOUND : SLUICE_ERROR_INVALID_ARGUMENT,
                            e == ELOOP ? _("“%s” is a symbolic link: give the installer file itself")
                                       : _("Cannot open “%s”: %s"),
                            shown, g_strerror(e));
                return FALSE;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                (void)close(fd);
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("“%s” is not a regular file: give the installer file itself"), shown);
                return FALSE;
        }
        if ((kind == SLUICE_INSTALLER_MSI && ((gsize)st.st_size < MSI_MIN || (gsize)st.st_size > SLUICE_GUEST_TOOLS_MSI_MAX)) ||
            (kind == SLUICE_INSTALLER_ISO && ((gsize)st.st_size < ISO_MAGIC_OFFSET + 5 ||
                                              (gsize)st.st_size > SLUICE_GUEST_TOOLS_ISO_MAX))) {
                /* the number formatted first: xgettext cuts a msgid at a format macro */
                g_autofree char *bytes = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)st.st_size);

                (void)close(fd);
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("“%s” cannot be an installer: it has %s bytes"), shown, bytes);
                return FALSE;
        }
        if (kind == SLUICE_INSTALLER_MSI ? !read_at(fd, 0, magic, sizeof(MSI_MAGIC)) ||
                                                   memcmp(magic, MSI_MAGIC, sizeof(MSI_MAGIC)) != 0
                                         : !read_at(fd, ISO_MAGIC_OFFSET, magic, 5) || memcmp(magic, "CD001", 5) != 0) {
                (void)close(fd);
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            kind == SLUICE_INSTALLER_MSI
                                    ? _("“%s” is not an MSI package (it does not start as one): give the installer as downloaded")
                                    : _("“%s” is not a CD image (ISO 9660): give virtio-win.iso as downloaded"),
                            shown);
                return FALSE;
        }
        sluice_installer_clear(ret);
        ret->fd = fd;
        ret->path = g_strdup(path);
        ret->size = (gsize)st.st_size;
        ret->kind = kind;
        return TRUE;
}

static void add_dir(GPtrArray *dirs, const char *dir)
{
        if (dir == NULL || !g_path_is_absolute(dir))
                return;
        for (guint i = 0; i < dirs->len; i++)
                if (g_strcmp0(dirs->pdata[i], dir) == 0)
                        return;
        g_ptr_array_add(dirs, g_strdup(dir));
}

char **sluice_guest_tools_search_dirs(SluiceGuestTool tool)
{
        g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *downloads = g_build_filename(g_get_home_dir(), "Downloads", NULL);

        /* Fedora's virtio-win package */
        if (tool == SLUICE_GUEST_TOOL_VIRTIO_FS)
                add_dir(dirs, "/usr/share/virtio-win");
        add_dir(dirs, g_getenv("XDG_DOWNLOAD_DIR"));
        add_dir(dirs, g_get_user_special_dir(G_USER_DIRECTORY_DOWNLOAD));
        add_dir(dirs, downloads);
        g_ptr_array_add(dirs, NULL);
        return (char **)g_ptr_array_free(g_steal_pointer(&dirs), FALSE);
}

/* Ranks a file name of TOOL: 0 not one, higher is preferred. */
static int rank(SluiceGuestTool tool, const char *base)
{
        if (tool == SLUICE_GUEST_TOOL_WINFSP)
                return name_is(base, "winfsp-", ".msi") ? 1 : 0;
        if (g_ascii_strcasecmp(base, VIRTIO_WIN_MSI) == 0)
                return 2;       /* copied into any guest, no CD-ROM drive needed */
        return name_is(base, "virtio-win", ".iso") ? 1 : 0;
}

char *sluice_guest_tools_find_installer(SluiceGuestTool tool, const char *const *dirs, GError **error)
{
        g_autofree char *best = NULL;
        g_autofree char *best_base = NULL;
        int best_rank = 0;
        g_autofree char *where = NULL;

        for (gsize i = 0; dirs != NULL && dirs[i] != NULL; i++) {
                g_autoptr(GDir) dir = g_dir_open(dirs[i], 0, NULL);
                const char *base;

                while (dir != NULL && (base = g_dir_read_name(dir)) != NULL) {
                        g_autofree char *path = NULL;
                        g_auto(SluiceInstaller) candidate = { .fd = -1 };
                        int r = rank(tool, base);

                        if (r == 0 || r < best_rank ||
                            (r == best_rank && best_base != NULL && strverscmp(base, best_base) <= 0))
                                continue;
                        path = g_build_filename(dirs[i], base, NULL);
                        if (!sluice_guest_tools_open_installer(path, tool, &candidate, NULL))
                                continue;
                        g_free(best);
                        g_free(best_base);
                        best = g_steal_pointer(&path);
                        best_base = g_strdup(base);
                        best_rank = r;
                }
        }
        if (best != NULL)
                return g_steal_pointer(&best);
        where = dirs != NULL ? g_strjoinv(", ", (char **)dirs) : g_strdup("");
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                    tool == SLUICE_GUEST_TOOL_WINFSP
                            ? _("No WinFsp installer (winfsp-….msi) was found in %s. Download it from https://winfsp.dev/rel/ and try again, or give its path.")
                            : _("No virtio-win installer (virtio-win-gt-x64.msi or virtio-win.iso) was found in %s. Download virtio-win.iso from https://fedorapeople.org/groups/virt/virtio-win/direct-downloads/ (or install your distribution's virtio-win package) and try again, or give its path."),
                    where);
        return NULL;
}

const char *sluice_guest_tools_guest_path(SluiceGuestTool tool)
{
        return tool == SLUICE_GUEST_TOOL_WINFSP ? "C:\\Windows\\Temp\\sluice-winfsp.msi"
                                                : "C:\\Windows\\Temp\\sluice-virtio-win-gt-x64.msi";
}

char **sluice_guest_tools_msiexec_argv(SluiceGuestTool tool, const char *msi_path)
{
        GStrvBuilder *b = g_strv_builder_new();
        char **argv;

        g_strv_builder_add_many(b, MSIEXEC_EXE, "/i", msi_path, "/qn", "/norestart", NULL);
        if (tool == SLUICE_GUEST_TOOL_VIRTIO_FS)
                g_strv_builder_add(b, VIRTIO_FS_FEATURE);
        argv = g_strv_builder_end(b);
        g_strv_builder_unref(b);
        return argv;
}

static xmlNode *child(xmlNode *node, const char *name)
{
        for (xmlNode *c = node != NULL ? node->children : NULL; c != NULL; c = c->next)
                if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0)
                        return c;
        return NULL;
}

static char *attribute(xmlNode *node, const char *name)
{
        xmlChar *value = node != NULL ? xmlGetProp(node, (const xmlChar *)name) : NULL;
        char *copy = value != NULL ? g_strdup((const char *)value) : NULL;

        xmlFree(value);
        return copy;
}

char *sluice_guest_tools_empty_cdrom(const char *domain_xml, char **bus)
{
        xmlDoc *doc;
        xmlNode *devices;
        char *found = NULL;

        *bus = NULL;
        if (domain_xml == NULL)
                return NULL;
        doc = xmlReadMemory(domain_xml, (int)strlen(domain_xml), "domain.xml", NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        if (doc == NULL)
                return NULL;
        devices = child(xmlDocGetRootElement(doc), "devices");
        for (xmlNode *d = devices != NULL ? devices->children : NULL; d != NULL && found == NULL; d = d->next) {
                g_autofree char *device = NULL;
                xmlNode *target;

                if (d->type != XML_ELEMENT_NODE || xmlStrcmp(d->name, (const xmlChar *)"disk") != 0)
                        continue;
                device = attribute(d, "device");
                target = child(d, "target");
                if (g_strcmp0(device, "cdrom") != 0 || target == NULL || child(d, "source") != NULL)
                        continue;
                found = attribute(target, "dev");
                if (found != NULL)
                        *bus = attribute(target, "bus");
        }
        xmlFreeDoc(doc);
        return found;
}

char *sluice_guest_tools_cdrom_xml(const char *target_dev, const char *bus, const char *iso_path)
{
        g_autofree char *dev = g_markup_escape_text(target_dev, -1);
        g_autofree char *b = bus != NULL ? g_markup_escape_text(bus, -1) : NULL;
        g_autofree char *file = g_markup_escape_text(iso_path, -1);

        return g_strdup_printf("<disk type='file' device='cdrom'><driver name='qemu' type='raw'/>"
                               "<source file='%s'/><target dev='%s'%s%s%s/><readonly/></disk>",
                               file, dev, b != NULL ? " bus='" : "", b != NULL ? b : "", b != NULL ? "'" : "");
}

char *sluice_guest_tools_virtio_win_drive(const char *volumes, gsize len)
{
        g_autofree char *text = volumes != NULL ? g_strndup(volumes, len) : g_strdup("");
        g_auto(GStrv) lines = g_strsplit(text, "\n", 64);

        for (gsize i = 0; lines[i] != NULL; i++) {
                g_auto(GStrv) parts = g_strsplit(g_strstrip(lines[i]), "|", 3);
                char letter;

                if (g_strv_length(parts) != 3 || strlen(parts[0]) < 2 || parts[0][1] != ':')
                        continue;
                letter = g_ascii_toupper(parts[0][0]);
                if (letter < 'D' || letter > 'Z' || g_ascii_strncasecmp(g_strstrip(parts[2]), "virtio-win", 10) != 0)
                        continue;
                return g_strdup_printf("%c:", letter);
        }
        return NULL;
}

char *sluice_guest_tools_msi_on_drive(const char *drive)
{
        return g_strdup_printf("%s\\%s", drive, VIRTIO_WIN_MSI);
}

/* Windows Installer's exit codes (Microsoft's "MsiExec.exe and
 * InstMsi.exe error messages"), said as what to do. */
static const struct {
        int code;
        const char *words;
} MSI_CODES[] = {
        { 1601, N_("the Windows Installer service could not be accessed (is it disabled, or is Windows still starting?)") },
        { 1602, N_("the installation was cancelled in the VM") },
        { 1603, N_("a fatal error occurred during the installation (Windows' event log, source MsiInstaller, says which)") },
        { 1605, N_("the package is not installed, so this action is not possible") },
        { 1608, N_("a required installation property is missing") },
        { 1612, N_("the installation source is not available") },
        { 1618, N_("another installation is already in progress in the VM: wait for it to finish (or restart Windows), then try again") },
        { 1619, N_("Windows Installer could not open the package: the copy in the VM is not a valid MSI") },
        { 1620, N_("Windows Installer could not open the package: it is not a valid Windows Installer package") },
        { 1622, N_("the installation log could not be written") },
        { 1624, N_("a transform could not be applied") },
        { 1625, N_("this installation is forbidden by Windows' system policy (ask the VM's administrator)") },
        { 1632, N_("the temporary folder is full or cannot be written") },
        { 1633, N_("this package is not for this kind of Windows (a 64-bit package on 32-bit Windows?)") },
        { 1635, N_("a patch package could not be opened") },
        { 1638, N_("another version of this product is already installed: uninstall it in the VM first (Settings, Apps), then try again") },
        { 1639, N_("msiexec was given an invalid command line") },
        { 1640, N_("installing from a remote desktop session is not allowed") },
        { 1925, N_("the installation needs administrator rights the guest agent does not have") },
};

char *sluice_guest_tools_msiexec_result(int code, gboolean *reboot)
{
        if (reboot != NULL)
                *reboot = code == 3010 || code == 1641;
        if (code == 0 || code == 3010 || code == 1641)
                return NULL;
        for (gsize i = 0; i < G_N_ELEMENTS(MSI_CODES); i++)
                if (MSI_CODES[i].code == code)
                        /* TRANSLATORS: the code, then what it means */
                        return g_strdup_printf(_("msiexec ended with code %d: %s"), code, _(MSI_CODES[i].words));
        return g_strdup_printf(_("msiexec ended with code %d"), code);
}

/* ---- what a mount learned missing ---- */

static GPrivate noted_missing = G_PRIVATE_INIT((GDestroyNotify)g_strfreev);

void sluice_guest_tools_note_missing(const char *const *missing)
{
        g_private_replace(&noted_missing, g_strdupv((char **)(missing != NULL ? missing : (const char *const[]){ NULL })));
}

char **sluice_guest_tools_take_noted(void)
{
        char **noted = g_private_get(&noted_missing);

        if (noted == NULL)
                return NULL;
        noted = g_strdupv(noted);
        g_private_replace(&noted_missing, NULL);
        return noted;
}
