/* SPDX-License-Identifier: GPL-2.0-or-later */
/* domain-xml.c — see domain-xml.h.  XPath over libxml2 trees: libvirt's own
 * XML, but still treated as untrusted input (a domain's XML can be edited by
 * anyone with access to the connection). */
#include "config.h"

#include "domain-xml.h"
#include "domain-xml-doc.h"
#include "errors.h"
#include "printable.h"
#include "share-tag.h"

#include <glib/gi18n.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/un.h>

#define LIBOSINFO_NS "http://libosinfo.org/xmlns/libvirt/domain/1.0"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(xmlXPathContext, xmlXPathFreeContext)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(xmlXPathObject, xmlXPathFreeObject)

static void filesystem_free(gpointer data)
{
        SluiceDomainFilesystem *fs = data;

        g_free(fs->tag);
        g_free(fs->socket);
        g_free(fs->alias);
        g_free(fs);
}

void sluice_domain_xml_free(SluiceDomainXml *info)
{
        if (!info)
                return;
        g_free(info->os_id);
        g_free(info->confinement_label);
        g_clear_pointer(&info->filesystems, g_hash_table_unref);
        g_free(info);
}

xmlDoc *sluice_domain_xml_read(const char *xml, GError **error)
{
        xmlDoc *doc;

        /* NONET: never fetch anything a document points to */
        doc = xmlReadMemory(xml, (int)strnlen(xml, G_MAXINT), "domain.xml", NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        if (!doc || !xmlDocGetRootElement(doc) ||
            !xmlStrEqual(xmlDocGetRootElement(doc)->name, BAD_CAST "domain")) {
                if (doc)
                        xmlFreeDoc(doc);
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_PARSE,
                            "libvirt returned a domain description that is not domain XML");
                return NULL;
        }
        return doc;
}

/* XML parsed (*DOC, the caller frees it) and an XPath context on it, or NULL. */
static xmlXPathContext *parse_for_xpath(const char *xml, xmlDoc **doc, GError **error)
{
        xmlXPathContext *ctx;

        *doc = sluice_domain_xml_read(xml, error);
        if (!*doc)
                return NULL;
        ctx = xmlXPathNewContext(*doc);
        if (!ctx)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED, "out of memory");
        return ctx;
}

static xmlXPathObject *eval(xmlXPathContext *ctx, const char *expr, xmlNode *node)
{
        ctx->node = node ? node : xmlDocGetRootElement(ctx->doc);
        return xmlXPathEvalExpression(BAD_CAST expr, ctx);
}

/* The string value of an XPath expression, or NULL when it is empty. */
static char *eval_string(xmlXPathContext *ctx, const char *expr, xmlNode *node)
{
        g_autofree char *full = g_strdup_printf("string(%s)", expr);
        g_autoptr(xmlXPathObject) obj = eval(ctx, full, node);

        if (!obj || obj->type != XPATH_STRING || !obj->stringval || !*obj->stringval)
                return NULL;
        return g_strdup((const char *)obj->stringval);
}

static gboolean eval_bool(xmlXPathContext *ctx, const char *expr)
{
        g_autofree char *full = g_strdup_printf("boolean(%s)", expr);
        g_autoptr(xmlXPathObject) obj = eval(ctx, full, NULL);

        return obj && obj->type == XPATH_BOOLEAN && obj->boolval;
}

/* libvirt (qemuValidateDomainDefVhostUserRequireSharedMemory): without NUMA
 * cells the domain-wide access must be shared; with cells, each cell's
 * memAccess, defaulting to the domain-wide one, must be. */
static gboolean has_shared_memory(xmlXPathContext *ctx)
{
        gboolean global = eval_bool(ctx, "/domain/memoryBacking/access[@mode='shared']");

        if (!eval_bool(ctx, "/domain/cpu/numa/cell"))
                return global;
        if (eval_bool(ctx, "/domain/cpu/numa/cell[@memAccess='private']"))
                return FALSE;
        return global || !eval_bool(ctx, "/domain/cpu/numa/cell[not(@memAccess)]");
}

static SluiceDomainAgentChannel agent_channel(xmlXPathContext *ctx)
{
        static const char *const channel =
                "/domain/devices/channel/target[@type='virtio' and @name='" SLUICE_DOMAIN_AGENT_CHANNEL_NAME "']";
        g_autofree char *state_expr = g_strconcat(channel, "/@state", NULL);
        g_autofree char *state = NULL;

        if (!eval_bool(ctx, channel))
                return SLUICE_DOMAIN_AGENT_CHANNEL_NONE;
        state = eval_string(ctx, state_expr, NULL);
        if (g_strcmp0(state, "connected") == 0)
                return SLUICE_DOMAIN_AGENT_CHANNEL_CONNECTED;
        if (g_strcmp0(state, "disconnected") == 0)
                return SLUICE_DOMAIN_AGENT_CHANNEL_DISCONNECTED;
        return SLUICE_DOMAIN_AGENT_CHANNEL_PRESENT;
}

/* "+64055:+64055" → 64055, "libvirt-qemu:kvm" → the user's uid. */
static gint64 parse_dac_label(const char *label)
{
        g_autofree char *user = NULL;
        const char *colon;

        if (!label)
                return -1;
        colon = strchr(label, ':');
        user = colon ? g_strndup(label, (gsize)(colon - label)) : g_strdup(label);
        if (user[0] == '+') {
                guint64 uid;

                if (!g_ascii_string_to_unsigned(user + 1, 10, 0, G_MAXUINT32 - 1, &uid, NULL))
                        return -1;
                return (gint64)uid;
        }
        struct passwd *pw = getpwnam(user);
        return pw ? (gint64)pw->pw_uid : -1;
}

/* The first AppArmor or SELinux seclabel that confines QEMU (a host runs
 * one of the two; libvirt lists the DAC one beside it). */
static void parse_confinement(xmlXPathContext *ctx, SluiceDomainXml *info)
{
        static const struct {
                const char *model;
                SluiceConfinementModel value;
        } models[] = {
                { "apparmor", SLUICE_CONFINEMENT_MODEL_APPARMOR },
                { "selinux", SLUICE_CONFINEMENT_MODEL_SELINUX },
        };

        for (gsize i = 0; i < G_N_ELEMENTS(models); i++) {
                g_autofree char *seclabel = g_strdup_printf("/domain/seclabel[@model='%s' and not(@type='none')]",
                                                            models[i].model);
                g_autofree char *label_expr = g_strconcat(seclabel, "/label", NULL);

                if (!eval_bool(ctx, seclabel))
                        continue;
                info->confinement = models[i].value;
                info->confinement_label = eval_string(ctx, label_expr, NULL);
                return;
        }
        info->confinement = SLUICE_CONFINEMENT_MODEL_NONE;
}

SluiceDomainXml *sluice_domain_xml_parse(const char *xml, GError **error)
{
        g_autoptr(xmlDoc) doc = sluice_domain_xml_read(xml, error);
        g_autoptr(xmlXPathContext) ctx = NULL;
        g_autoptr(xmlXPathObject) devices = NULL;
        g_autofree char *label = NULL;
        SluiceDomainXml *info;

        if (!doc)
                return NULL;
        ctx = xmlXPathNewContext(doc);
        if (!ctx || xmlXPathRegisterNs(ctx, BAD_CAST "osinfo", BAD_CAST LIBOSINFO_NS) != 0) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_PARSE, "out of memory");
                return NULL;
        }

        info = g_new0(SluiceDomainXml, 1);
        info->filesystems = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, filesystem_free);
        info->shared_memory = has_shared_memory(ctx);
        info->os_id = eval_string(ctx, "/domain/metadata/osinfo:libosinfo/osinfo:os/@id", NULL);
        label = eval_string(ctx, "/domain/seclabel[@model='dac']/label", NULL);
        info->dac_uid = parse_dac_label(label);
        parse_confinement(ctx, info);
        info->agent_channel = agent_channel(ctx);

        devices = eval(ctx, "/domain/devices/filesystem", NULL);
        if (devices && devices->nodesetval) {
                for (int i = 0; i < devices->nodesetval->nodeNr; i++) {
                        xmlNode *node = devices->nodesetval->nodeTab[i];
                        SluiceDomainFilesystem *fs = g_new0(SluiceDomainFilesystem, 1);

                        fs->tag = eval_string(ctx, "target/@dir", node);
                        fs->socket = eval_string(ctx, "source/@socket", node);
                        fs->alias = eval_string(ctx, "alias/@name", node);
                        if (!fs->tag || g_hash_table_contains(info->filesystems, fs->tag)) {
                                filesystem_free(fs);
                                continue;
                        }
                        g_hash_table_insert(info->filesystems, fs->tag, fs);
                }
        }
        return info;
}

char *sluice_domain_xml_os_short_id(const char *os_id)
{
        g_auto(GStrv) parts = NULL;
        guint n;

        if (!os_id || !g_str_has_prefix(os_id, "http://"))
                return g_strdup("");
        parts = g_strsplit(os_id + strlen("http://"), "/", -1);
        n = g_strv_length(parts);
        /* host/family/version */
        if (n < 3 || !*parts[n - 2] || !*parts[n - 1])
                return g_strdup("");
        for (guint i = n - 2; i < n; i++)
                for (const char *c = parts[i]; *c; c++)
                        if (!g_ascii_isalnum(*c) && *c != '.' && *c != '-' && *c != '_')
                                return g_strdup("");
        return g_strconcat(parts[n - 2], parts[n - 1], NULL);
}

static gboolean has_control_chars(const char *s)
{
        for (const unsigned char *c = (const unsigned char *)s; *c; c++)
                if (*c < 0x20 || *c == 0x7f)
                        return TRUE;
        return FALSE;
}

gboolean sluice_domain_xml_check_tag(const char *tag, GError **error)
{
        if (!tag || !*tag || strlen(tag) > SLUICE_TAG_MAX_BYTES || !g_utf8_validate(tag, -1, NULL) ||
            has_control_chars(tag)) {
                g_autofree char *shown = sluice_printable_escaped(tag);

                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("The tag “%s” is not valid: use 1 to %d bytes of text without control characters."),
                            shown, SLUICE_TAG_MAX_BYTES);
                return FALSE;
        }
        return TRUE;
}

gboolean sluice_domain_xml_check_socket(const char *socket_path, GError **error)
{
        if (!socket_path || socket_path[0] != '/' ||
            strlen(socket_path) >= sizeof(((struct sockaddr_un *)NULL)->sun_path) ||
            !g_utf8_validate(socket_path, -1, NULL) || has_control_chars(socket_path)) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("The socket path “%s” is not usable: it must be an absolute path shorter than %zu bytes."),
                            socket_path && g_utf8_validate(socket_path, -1, NULL) ? socket_path : "?",
                            sizeof(((struct sockaddr_un *)NULL)->sun_path));
                return FALSE;
        }
        return TRUE;
}

char *sluice_domain_xml_filesystem(const char *socket_path, const char *tag)
{
        g_autofree char *socket_esc = g_markup_escape_text(socket_path, -1);
        g_autofree char *tag_esc = g_markup_escape_text(tag, -1);

        return g_strdup_printf("<filesystem type='mount' accessmode='passthrough'>"
                               "<driver type='virtiofs' queue='1024'/>"
                               "<source socket='%s'/>"
                               "<target dir='%s'/>"
                               "</filesystem>",
                               socket_esc, tag_esc);
}

xmlNode *sluice_domain_xml_child(xmlNode *parent, const char *name)
{
        for (xmlNode *n = parent ? parent->children : NULL; n; n = n->next)
                if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, BAD_CAST name))
                        return n;
        return NULL;
}

xmlNode *sluice_domain_xml_ensure_child(xmlNode *parent, const char *name)
{
        xmlNode *node = sluice_domain_xml_child(parent, name);

        return node ? node : xmlNewChild(parent, NULL, BAD_CAST name, NULL);
}

char *sluice_domain_xml_write(xmlDoc *doc, GError **error)
{
        xmlChar *out = NULL;
        int out_len = 0;
        char *result;

        xmlDocDumpMemory(doc, &out, &out_len);
        if (!out) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_FAILED, "out of memory");
                return NULL;
        }
        result = g_strndup((const char *)out, (gsize)out_len);
        xmlFree(out);
        return result;
}

char *sluice_domain_xml_enable_shared_memory(const char *xml, gboolean *changed,
                                             GError **error)
{
        g_autoptr(xmlDoc) doc = NULL;
        g_autoptr(xmlXPathContext) ctx = NULL;
        g_autofree char *source_type = NULL;
        xmlNode *root, *backing;
        char *result;

        *changed = FALSE;
        ctx = parse_for_xpath(xml, &doc, error);
        if (!ctx)
                return NULL;
        if (has_shared_memory(ctx))
                return g_strdup(xml);

        if (eval_bool(ctx, "/domain/memoryBacking/hugepages")) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("The VM's memory uses huge pages; Sluice does not change that layout. "
                              "Add <source type='memfd'/> and <access mode='shared'/> to its <memoryBacking> yourself (virsh edit)."));
                return NULL;
        }
        if (eval_bool(ctx, "/domain/cpu/numa/cell[@memAccess='private']")) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("A NUMA cell of the VM asks for private memory (memAccess='private'); "
                              "Sluice does not override that. Change it to memAccess='shared' yourself (virsh edit)."));
                return NULL;
        }
        source_type = eval_string(ctx, "/domain/memoryBacking/source/@type", NULL);
        if (source_type && !g_str_equal(source_type, "anonymous") &&
            !g_str_equal(source_type, "memfd") && !g_str_equal(source_type, "file")) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("The VM's memory has a source of type “%s” that Sluice does not know."),
                            source_type);
                return NULL;
        }

        root = xmlDocGetRootElement(doc);
        backing = sluice_domain_xml_ensure_child(root, "memoryBacking");
        /* a file source shares as well as memfd does: keep the owner's choice */
        if (!source_type || !g_str_equal(source_type, "file"))
                xmlSetProp(sluice_domain_xml_ensure_child(backing, "source"), BAD_CAST "type", BAD_CAST "memfd");
        xmlSetProp(sluice_domain_xml_ensure_child(backing, "access"), BAD_CAST "mode", BAD_CAST "shared");

        result = sluice_domain_xml_write(doc, error);
        *changed = result != NULL;
        return result;
}

char *sluice_domain_xml_enable_guest_agent(const char *xml, gboolean *changed, GError **error)
{
        g_autoptr(xmlDoc) doc = NULL;
        g_autoptr(xmlXPathContext) ctx = NULL;
        xmlNode *channel, *target;
        char *result;

        *changed = FALSE;
        ctx = parse_for_xpath(xml, &doc, error);
        if (!ctx)
                return NULL;
        if (agent_channel(ctx) != SLUICE_DOMAIN_AGENT_CHANNEL_NONE)
                return g_strdup(xml);

        /* no <source>: libvirt gives the socket a path of its own, in the
         * domain's private folder, for both system and session daemons */
        channel = xmlNewChild(sluice_domain_xml_ensure_child(xmlDocGetRootElement(doc), "devices"), NULL,
                              BAD_CAST "channel", NULL);
        xmlSetProp(channel, BAD_CAST "type", BAD_CAST "unix");
        target = xmlNewChild(channel, NULL, BAD_CAST "target", NULL);
        xmlSetProp(target, BAD_CAST "type", BAD_CAST "virtio");
        xmlSetProp(target, BAD_CAST "name", BAD_CAST SLUICE_DOMAIN_AGENT_CHANNEL_NAME);

        result = sluice_domain_xml_write(doc, error);
        *changed = result != NULL;
        return result;
}
