/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-domain-xml.c — what Sluice reads from and writes into domain XML:
 * the shared-memory rule libvirt applies, the OS, QEMU's user, the devices
 * already plugged in, escaping of the hot-plugged device, and the shared
 * memory rewrite (keeps everything else, refuses what it cannot handle),
 * the guest agent's channel and its rewrite (adds it once, keeps the rest). */
#include "config.h"

#include "domain-xml.h"
#include "errors.h"

#include <libxml/parser.h>

#define DOMAIN_HEAD "<domain type='qemu'><name>v</name><memory unit='KiB'>262144</memory>"
#define DOMAIN_TAIL "<devices><disk type='file' device='disk'><source file='/var/a b.img'/>" \
                    "<target dev='vda' bus='virtio'/></disk>" \
                    "<graphics type='vnc' port='-1' passwd='s3cret'/></devices></domain>"

static SluiceDomainXml *parse_ok(const char *xml)
{
        g_autoptr(GError) error = NULL;
        SluiceDomainXml *info = sluice_domain_xml_parse(xml, &error);

        g_assert_no_error(error);
        g_assert_nonnull(info);
        return info;
}

static void test_shared_memory_rule(void)
{
        struct {
                const char *body;
                gboolean shared;
        } cases[] = {
                { "", FALSE },
                { "<memoryBacking><source type='memfd'/></memoryBacking>", FALSE },
                { "<memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>", TRUE },
                { "<memoryBacking><access mode='shared'/></memoryBacking>", TRUE },
                /* NUMA: each cell's memAccess, defaulting to the domain-wide access */
                { "<memoryBacking><access mode='shared'/></memoryBacking>"
                  "<cpu><numa><cell id='0' cpus='0' memory='262144' memAccess='private'/></numa></cpu>", FALSE },
                { "<cpu><numa><cell id='0' cpus='0' memory='262144' memAccess='shared'/></numa></cpu>", TRUE },
                { "<cpu><numa><cell id='0' cpus='0' memory='131072' memAccess='shared'/>"
                  "<cell id='1' cpus='1' memory='131072'/></numa></cpu>", FALSE },
                { "<memoryBacking><access mode='shared'/></memoryBacking>"
                  "<cpu><numa><cell id='0' cpus='0' memory='262144'/></numa></cpu>", TRUE },
        };

        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strconcat(DOMAIN_HEAD, cases[i].body, DOMAIN_TAIL, NULL);
                g_autoptr(SluiceDomainXml) info = parse_ok(xml);

                g_test_message("case %zu", i);
                g_assert_cmpint(info->shared_memory, ==, cases[i].shared);
        }
}

static void test_metadata_label_devices(void)
{
        const char *xml = DOMAIN_HEAD
                "<metadata><libosinfo:libosinfo xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'>"
                "<libosinfo:os id='http://microsoft.com/win/11'/></libosinfo:libosinfo></metadata>"
                "<devices><filesystem type='mount'><driver type='virtiofs'/><source socket='/run/s.sock'/>"
                "<target dir='docs'/><alias name='fs0'/></filesystem>"
                "<filesystem type='mount'><driver type='virtiofs'/><source dir='/srv'/>"
                "<target dir='srv'/></filesystem></devices>"
                "<seclabel type='dynamic' model='dac' relabel='yes'><label>+999:+995</label></seclabel></domain>";
        g_autoptr(SluiceDomainXml) info = parse_ok(xml);
        SluiceDomainFilesystem *fs;
        g_autofree char *short_id = sluice_domain_xml_os_short_id(info->os_id);

        g_assert_cmpstr(info->os_id, ==, "http://microsoft.com/win/11");
        g_assert_cmpstr(short_id, ==, "win11");
        g_assert_cmpint(info->dac_uid, ==, 999);
        g_assert_cmpuint(g_hash_table_size(info->filesystems), ==, 2);
        fs = g_hash_table_lookup(info->filesystems, "docs");
        g_assert_nonnull(fs);
        g_assert_cmpstr(fs->socket, ==, "/run/s.sock");
        g_assert_cmpstr(fs->alias, ==, "fs0");
        fs = g_hash_table_lookup(info->filesystems, "srv");
        g_assert_nonnull(fs);
        g_assert_null(fs->socket);
}

/* QEMU's confinement as the live XML of a system VM states it, beside the
 * DAC label: Ubuntu/Debian's AppArmor profile, Fedora's SELinux label. */
static void test_confinement(void)
{
        static const char *const dac =
                "<seclabel type='dynamic' model='dac' relabel='yes'><label>+64055:+994</label>"
                "<imagelabel>+64055:+994</imagelabel></seclabel>";
        g_autofree char *apparmor_xml = g_strconcat(DOMAIN_HEAD,
                "<seclabel type='dynamic' model='apparmor' relabel='yes'>"
                "<label>libvirt-6f1e9b2c-4a8d-4e0f-9c3b-2d7a5e8f1a40</label>"
                "<imagelabel>libvirt-6f1e9b2c-4a8d-4e0f-9c3b-2d7a5e8f1a40</imagelabel></seclabel>",
                dac, "</domain>", NULL);
        g_autofree char *selinux_xml = g_strconcat(DOMAIN_HEAD, dac,
                "<seclabel type='dynamic' model='selinux' relabel='yes'>"
                "<label>system_u:system_r:svirt_tcg_t:s0:c12,c34</label>"
                "<imagelabel>system_u:object_r:svirt_image_t:s0:c12,c34</imagelabel></seclabel>",
                "</domain>", NULL);
        g_autofree char *none_xml = g_strconcat(DOMAIN_HEAD,
                "<seclabel type='none' model='apparmor'/>", dac, "</domain>", NULL);
        g_autofree char *absent_xml = g_strconcat(DOMAIN_HEAD, dac, "</domain>", NULL);
        g_autoptr(SluiceDomainXml) apparmor = parse_ok(apparmor_xml);
        g_autoptr(SluiceDomainXml) selinux = parse_ok(selinux_xml);
        g_autoptr(SluiceDomainXml) none = parse_ok(none_xml);
        g_autoptr(SluiceDomainXml) absent = parse_ok(absent_xml);

        g_assert_cmpint(apparmor->confinement, ==, SLUICE_CONFINEMENT_MODEL_APPARMOR);
        g_assert_cmpstr(apparmor->confinement_label, ==, "libvirt-6f1e9b2c-4a8d-4e0f-9c3b-2d7a5e8f1a40");
        g_assert_cmpint(apparmor->dac_uid, ==, 64055);
        g_assert_cmpint(selinux->confinement, ==, SLUICE_CONFINEMENT_MODEL_SELINUX);
        g_assert_cmpstr(selinux->confinement_label, ==, "system_u:system_r:svirt_tcg_t:s0:c12,c34");
        /* type='none': libvirt runs QEMU unconfined */
        g_assert_cmpint(none->confinement, ==, SLUICE_CONFINEMENT_MODEL_NONE);
        g_assert_null(none->confinement_label);
        g_assert_cmpint(absent->confinement, ==, SLUICE_CONFINEMENT_MODEL_NONE);
        g_assert_null(absent->confinement_label);
}

static void test_os_short_id(void)
{
        const char *cases[][2] = {
                { "http://debian.org/debian/12", "debian12" },
                { "http://ubuntu.com/ubuntu/22.04", "ubuntu22.04" },
                { "http://microsoft.com/win/2k19", "win2k19" },
                { "http://x/../", "" },
                { "http://evil/a/b;rm -rf", "" },
                { "ftp://debian.org/debian/12", "" },
                { "", "" },
        };

        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *id = sluice_domain_xml_os_short_id(cases[i][0]);
                g_assert_cmpstr(id, ==, cases[i][1]);
        }
        g_autofree char *none = sluice_domain_xml_os_short_id(NULL);
        g_assert_cmpstr(none, ==, "");
}

static void test_not_xml(void)
{
        g_autoptr(GError) error = NULL;
        const char *bad[] = { "", "<domain", "<network/>", "\x01\x02", "<domain><name>&xx;</name></domain>" };

        for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_assert_null(sluice_domain_xml_parse(bad[i], &error));
                g_assert_nonnull(error);
                g_clear_error(&error);
        }
}

/* Hostile tag and socket path must come out as attribute values, not markup. */
static void test_device_escaping(void)
{
        const char *sock = "/tmp/a'b\"c&d<e>.sock";
        const char *tag = "x'/><filesystem";
        g_autofree char *device = sluice_domain_xml_filesystem(sock, tag);
        g_autofree char *domain = g_strconcat(DOMAIN_HEAD, "<devices>", device, "</devices></domain>", NULL);
        g_autoptr(SluiceDomainXml) info = parse_ok(domain);
        SluiceDomainFilesystem *fs;

        g_assert_cmpuint(g_hash_table_size(info->filesystems), ==, 1);
        fs = g_hash_table_lookup(info->filesystems, tag);
        g_assert_nonnull(fs);
        g_assert_cmpstr(fs->socket, ==, sock);
        g_assert_nonnull(strstr(device, "<driver type='virtiofs' queue='1024'/>"));
}

static void test_checks(void)
{
        g_autoptr(GError) error = NULL;

        g_assert_true(sluice_domain_xml_check_tag("docs", NULL));
        g_assert_true(sluice_domain_xml_check_tag("Dokumente-äöü", NULL));
        g_assert_false(sluice_domain_xml_check_tag("", &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
        g_clear_error(&error);
        g_assert_false(sluice_domain_xml_check_tag("0123456789012345678901234567890123456", NULL));
        g_assert_false(sluice_domain_xml_check_tag("a\nb", NULL));
        g_assert_false(sluice_domain_xml_check_tag("\xff\xfe", NULL));
        g_assert_true(sluice_domain_xml_check_socket("/run/user/1000/sluice/docs.sock", NULL));
        g_assert_false(sluice_domain_xml_check_socket("relative.sock", NULL));
        g_autofree char *longpath = g_strnfill(120, 'a');
        longpath[0] = '/';
        g_assert_false(sluice_domain_xml_check_socket(longpath, NULL));
}

static void test_enable_shared_memory(void)
{
        const char *xml = DOMAIN_HEAD "<memoryBacking><locked/></memoryBacking>"
                "<metadata><app xmlns='urn:x'>keep me</app></metadata>" DOMAIN_TAIL;
        g_autoptr(GError) error = NULL;
        g_autoptr(SluiceDomainXml) info = NULL;
        g_autofree char *again = NULL;
        gboolean changed = FALSE;
        g_autofree char *out = sluice_domain_xml_enable_shared_memory(xml, &changed, &error);

        g_assert_no_error(error);
        g_assert_true(changed);
        info = parse_ok(out);
        g_assert_true(info->shared_memory);
        g_assert_nonnull(strstr(out, "<source type=\"memfd\"/>"));
        /* everything else kept: locked memory, metadata, disk, the VNC password */
        g_assert_nonnull(strstr(out, "<locked/>"));
        g_assert_nonnull(strstr(out, "keep me"));
        g_assert_nonnull(strstr(out, "/var/a b.img"));
        g_assert_nonnull(strstr(out, "s3cret"));

        again = sluice_domain_xml_enable_shared_memory(out, &changed, &error);
        g_assert_no_error(error);
        g_assert_false(changed);
}

static void test_enable_keeps_file_source(void)
{
        const char *xml = DOMAIN_HEAD "<memoryBacking><source type='file'/></memoryBacking>" DOMAIN_TAIL;
        gboolean changed = FALSE;
        g_autofree char *out = sluice_domain_xml_enable_shared_memory(xml, &changed, NULL);

        g_assert_nonnull(out);
        g_assert_true(changed);
        g_assert_nonnull(strstr(out, "<source type=\"file\"/>"));
        g_assert_nonnull(strstr(out, "<access mode=\"shared\"/>"));
}

static void test_enable_refuses(void)
{
        const char *bodies[] = {
                "<memoryBacking><hugepages/></memoryBacking>",
                "<cpu><numa><cell id='0' cpus='0' memory='262144' memAccess='private'/></numa></cpu>",
                "<memoryBacking><source type='mystery'/></memoryBacking>",
        };

        for (gsize i = 0; i < G_N_ELEMENTS(bodies); i++) {
                g_autofree char *xml = g_strconcat(DOMAIN_HEAD, bodies[i], DOMAIN_TAIL, NULL);
                g_autoptr(GError) error = NULL;
                gboolean changed = TRUE;

                g_assert_null(sluice_domain_xml_enable_shared_memory(xml, &changed, &error));
                g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED);
                g_assert_false(changed);
                g_assert_cmpuint(strlen(error->message), >, 20);
        }
}

#define AGENT_CHANNEL(state) \
        "<channel type='unix'><source mode='bind' path='/var/lib/libvirt/qemu/channel/target/a.sock'/>" \
        "<target type='virtio' name='org.qemu.guest_agent.0'" state "/></channel>"

static void test_agent_channel(void)
{
        struct {
                const char *devices;
                SluiceDomainAgentChannel channel;
        } cases[] = {
                { "", SLUICE_DOMAIN_AGENT_CHANNEL_NONE },
                /* SPICE's agent is another channel */
                { "<channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>",
                  SLUICE_DOMAIN_AGENT_CHANNEL_NONE },
                /* a guestfwd or a serial port with the name is not the agent's */
                { "<channel type='unix'><target type='guestfwd' name='org.qemu.guest_agent.0'/></channel>",
                  SLUICE_DOMAIN_AGENT_CHANNEL_NONE },
                { AGENT_CHANNEL(""), SLUICE_DOMAIN_AGENT_CHANNEL_PRESENT },
                { AGENT_CHANNEL(" state='connected'"), SLUICE_DOMAIN_AGENT_CHANNEL_CONNECTED },
                { AGENT_CHANNEL(" state='disconnected'"), SLUICE_DOMAIN_AGENT_CHANNEL_DISCONNECTED },
                { AGENT_CHANNEL(" state='weird'"), SLUICE_DOMAIN_AGENT_CHANNEL_PRESENT },
        };

        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strconcat(DOMAIN_HEAD "<devices>", cases[i].devices,
                                                   "</devices></domain>", NULL);
                g_autoptr(SluiceDomainXml) info = parse_ok(xml);

                g_test_message("case %zu", i);
                g_assert_cmpint(info->agent_channel, ==, cases[i].channel);
        }

        /* only a device counts, not text elsewhere that looks like one */
        {
                g_autoptr(SluiceDomainXml) info = parse_ok(
                        DOMAIN_HEAD "<metadata><x xmlns='urn:x'>" AGENT_CHANNEL(" state='connected'")
                        "</x></metadata>" DOMAIN_TAIL);
                g_assert_cmpint(info->agent_channel, ==, SLUICE_DOMAIN_AGENT_CHANNEL_NONE);
        }
}

static void test_enable_guest_agent(void)
{
        const char *xml = DOMAIN_HEAD "<metadata><app xmlns='urn:x'>keep me</app></metadata>"
                "<devices><disk type='file' device='disk'><source file='/var/a b.img'/>"
                "<target dev='vda' bus='virtio'/></disk>"
                "<channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>"
                "<graphics type='vnc' port='-1' passwd='s3cret'/></devices></domain>";
        g_autoptr(GError) error = NULL;
        g_autoptr(SluiceDomainXml) info = NULL;
        g_autofree char *again = NULL;
        gboolean changed = FALSE;
        g_autofree char *out = sluice_domain_xml_enable_guest_agent(xml, &changed, &error);

        g_assert_no_error(error);
        g_assert_true(changed);
        info = parse_ok(out);
        g_assert_cmpint(info->agent_channel, ==, SLUICE_DOMAIN_AGENT_CHANNEL_PRESENT);
        g_assert_nonnull(strstr(out, "<channel type=\"unix\"><target type=\"virtio\" "
                                     "name=\"org.qemu.guest_agent.0\"/></channel>"));
        /* everything else kept: metadata, disk, SPICE's channel, the VNC password */
        g_assert_nonnull(strstr(out, "keep me"));
        g_assert_nonnull(strstr(out, "/var/a b.img"));
        g_assert_nonnull(strstr(out, "com.redhat.spice.0"));
        g_assert_nonnull(strstr(out, "s3cret"));
        g_assert_false(info->shared_memory);

        /* once is enough */
        again = sluice_domain_xml_enable_guest_agent(out, &changed, &error);
        g_assert_no_error(error);
        g_assert_false(changed);
        g_assert_cmpstr(again, ==, out);
}

static void test_enable_guest_agent_no_devices(void)
{
        gboolean changed = FALSE;
        g_autofree char *out = sluice_domain_xml_enable_guest_agent(DOMAIN_HEAD "</domain>", &changed, NULL);
        g_autoptr(SluiceDomainXml) info = NULL;

        g_assert_nonnull(out);
        g_assert_true(changed);
        info = parse_ok(out);
        g_assert_cmpint(info->agent_channel, ==, SLUICE_DOMAIN_AGENT_CHANNEL_PRESENT);

        /* a definition that has it (with a state, from whatever source) is left alone */
        {
                const char *has = DOMAIN_HEAD "<devices>" AGENT_CHANNEL(" state='disconnected'") "</devices></domain>";
                g_autofree char *same = sluice_domain_xml_enable_guest_agent(has, &changed, NULL);

                g_assert_false(changed);
                g_assert_cmpstr(same, ==, has);
        }
}

/* What is not a domain is refused; what a domain's XML holds is never
 * expanded or fetched (entities, external references) on the way through. */
static void test_enable_guest_agent_hostile(void)
{
        const char *bad[] = { "", "<domain", "<network><devices/></network>", "\x01\x02",
                              "<domain><name>&xx;</name></domain>" };
        const char *entity = "<!DOCTYPE domain [<!ENTITY x SYSTEM 'file:///etc/passwd'>"
                             "<!ENTITY y 'YYYYYYYY'>]>"
                             DOMAIN_HEAD "<description>&x;&y;</description>" DOMAIN_TAIL;
        g_autoptr(GError) error = NULL;
        g_autofree char *out = NULL;
        gboolean changed = TRUE;

        for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_assert_null(sluice_domain_xml_enable_guest_agent(bad[i], &changed, &error));
                g_assert_nonnull(error);
                g_assert_false(changed);
                g_clear_error(&error);
                changed = TRUE;
        }
        out = sluice_domain_xml_enable_guest_agent(entity, &changed, &error);
        g_assert_no_error(error);
        g_assert_true(changed);
        g_assert_null(strstr(out, "root:"));
        g_assert_null(strstr(out, "YYYYYYYY</description>"));
        g_assert_nonnull(strstr(out, "&x;&y;"));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        xmlInitParser();
        g_test_add_func("/domain-xml/shared-memory-rule", test_shared_memory_rule);
        g_test_add_func("/domain-xml/metadata-label-devices", test_metadata_label_devices);
        g_test_add_func("/domain-xml/confinement", test_confinement);
        g_test_add_func("/domain-xml/os-short-id", test_os_short_id);
        g_test_add_func("/domain-xml/not-xml", test_not_xml);
        g_test_add_func("/domain-xml/device-escaping", test_device_escaping);
        g_test_add_func("/domain-xml/checks", test_checks);
        g_test_add_func("/domain-xml/enable-shared-memory", test_enable_shared_memory);
        g_test_add_func("/domain-xml/enable-keeps-file-source", test_enable_keeps_file_source);
        g_test_add_func("/domain-xml/enable-refuses", test_enable_refuses);
        g_test_add_func("/domain-xml/agent-channel", test_agent_channel);
        g_test_add_func("/domain-xml/enable-guest-agent", test_enable_guest_agent);
        g_test_add_func("/domain-xml/enable-guest-agent-no-devices", test_enable_guest_agent_no_devices);
        g_test_add_func("/domain-xml/enable-guest-agent-hostile", test_enable_guest_agent_hostile);
        return g_test_run();
}
