/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-hotplug-slots.c — where another device fits into a VM, as its domain
 * XML says: free PCIe root ports on q35 (not the ones a device or a switch
 * uses, not those with hot-plug off), free bus slots on i440fx; numbers out
 * of PCI's range are ignored; the root-port rewrite adds exactly what was
 * asked, keeps the rest, and refuses i440fx, other machines and counts out
 * of range with named errors; the no-slot error says what to do. */
#include "config.h"

#include "errors.h"
#include "hotplug-slots.h"

#define HEAD "<domain type='qemu'><name>v</name><memory unit='KiB'>262144</memory>" \
             "<os><type arch='x86_64' machine='pc-q35-7.2'>hvm</type></os><devices>"
#define TAIL "<graphics type='vnc' port='-1' passwd='s3cret'/></devices></domain>"
#define PCIE_ROOT "<controller type='pci' index='0' model='pcie-root'/>"
#define PORT(i, slot) "<controller type='pci' index='" #i "' model='pcie-root-port'>" \
                      "<address type='pci' domain='0x0000' bus='0x00' slot='" #slot "' function='0x0'/></controller>"
#define ON_BUS(bus) "<memballoon model='virtio'><address type='pci' domain='0x0000' bus='" #bus \
                    "' slot='0x00' function='0x0'/></memballoon>"

static SluiceHotplugSlots count_ok(const char *xml)
{
        g_autoptr(GError) error = NULL;
        SluiceHotplugSlots slots;

        g_assert_true(sluice_hotplug_slots_count(xml, &slots, &error));
        g_assert_no_error(error);
        return slots;
}

static void test_count_q35(void)
{
        SluiceHotplugSlots s;

        /* three ports, two with a device */
        s = count_ok(HEAD PCIE_ROOT PORT(1, 0x01) PORT(2, 0x02) PORT(3, 0x03) ON_BUS(0x01) ON_BUS(0x02) TAIL);
        g_assert_cmpint(s.bus, ==, SLUICE_HOTPLUG_BUS_PCIE);
        g_assert_cmpuint(s.root_ports, ==, 3);
        g_assert_cmpuint(s.free, ==, 1);
        g_assert_false(s.bridges);

        /* every port used: nothing fits */
        s = count_ok(HEAD PCIE_ROOT PORT(1, 0x01) PORT(2, 0x02) ON_BUS(0x01) ON_BUS(2) TAIL);
        g_assert_cmpuint(s.free, ==, 0);
        g_assert_cmpuint(s.root_ports, ==, 2);

        /* hot-plug off, and a switch's upstream port on a root port */
        s = count_ok(HEAD PCIE_ROOT
                     "<controller type='pci' index='1' model='pcie-root-port'><target hotplug='off'/></controller>"
                     PORT(2, 0x02)
                     "<controller type='pci' index='3' model='pcie-switch-upstream-port'>"
                     "<address type='pci' bus='0x02' slot='0x00'/></controller>"
                     "<controller type='pci' index='4' model='pcie-switch-downstream-port'>"
                     "<address type='pci' bus='0x03' slot='0x00'/></controller>" TAIL);
        g_assert_cmpuint(s.free, ==, 1); /* the downstream port */

        /* a bridge: libvirt may find a place there */
        s = count_ok(HEAD PCIE_ROOT PORT(1, 0x01) ON_BUS(0x01)
                     "<controller type='pci' index='2' model='pcie-to-pci-bridge'/>" TAIL);
        g_assert_cmpuint(s.free, ==, 0);
        g_assert_true(s.bridges);
}

static void test_count_i440fx(void)
{
        SluiceHotplugSlots s = count_ok(
                HEAD "<controller type='pci' index='0' model='pci-root'/>"
                "<video><address type='pci' bus='0x00' slot='0x02'/></video>"
                "<disk><address type='pci' bus='0x00' slot='0x03'/></disk>" TAIL);

        g_assert_cmpint(s.bus, ==, SLUICE_HOTPLUG_BUS_PCI);
        /* slots 1..31, less the chipset's slot 1, the video's and the disk's */
        g_assert_cmpuint(s.free, ==, 28);
        g_assert_cmpuint(s.root_ports, ==, 0);
}

static void test_count_untrusted(void)
{
        g_autoptr(GError) error = NULL;
        SluiceHotplugSlots s;

        /* numbers out of range or malformed are ignored, never indices */
        s = count_ok(HEAD PCIE_ROOT "<controller type='pci' index='999' model='pcie-root-port'/>"
                     "<controller type='pci' index='abc' model='pcie-root-port'/>" PORT(1, 0x01)
                     "<x><address type='pci' bus='0x1ff' slot='0x00'/></x>"
                     "<x><address type='pci' bus='0x01' slot='99'/></x>"
                     "<x><address type='pci' bus='-1' slot='0'/></x>" TAIL);
        g_assert_cmpuint(s.root_ports, ==, 3);
        g_assert_cmpuint(s.free, ==, 1);

        /* no devices, no PCI */
        s = count_ok("<domain type='qemu'><name>v</name></domain>");
        g_assert_cmpint(s.bus, ==, SLUICE_HOTPLUG_BUS_NONE);
        g_assert_cmpuint(s.free, ==, 0);

        g_assert_false(sluice_hotplug_slots_count("<notdomain/>", &s, &error));
        g_assert_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_PARSE);
        g_clear_error(&error);
        g_assert_false(sluice_hotplug_slots_count("not xml", &s, &error));
        g_assert_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_PARSE);
}

static void test_add_root_ports(void)
{
        const char *xml = HEAD PCIE_ROOT PORT(1, 0x01) ON_BUS(0x01) TAIL;
        g_autoptr(GError) error = NULL;
        g_autofree char *out = sluice_hotplug_slots_add_root_ports(xml, "v", 4, &error);
        SluiceHotplugSlots s;

        g_assert_no_error(error);
        g_assert_nonnull(out);
        s = count_ok(out);
        g_assert_cmpuint(s.root_ports, ==, 5);
        /* without an index libvirt numbers them: not counted as free until it has */
        g_assert_nonnull(strstr(out, "<controller type=\"pci\" model=\"pcie-root-port\"/>"));
        /* everything else kept: the password, the port's address, the memballoon */
        g_assert_nonnull(strstr(out, "passwd=\"s3cret\""));
        g_assert_nonnull(strstr(out, "<memballoon"));
        g_assert_nonnull(strstr(out, "machine=\"pc-q35-7.2\""));

        /* the most at once, and one more */
        g_free(sluice_hotplug_slots_add_root_ports(xml, "v", SLUICE_HOTPLUG_SLOTS_MAX, &error));
        g_assert_no_error(error);
        g_assert_null(sluice_hotplug_slots_add_root_ports(xml, "v", SLUICE_HOTPLUG_SLOTS_MAX + 1, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
        g_clear_error(&error);
        g_assert_null(sluice_hotplug_slots_add_root_ports(xml, "v", 0, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT);
}

static void test_add_refused(void)
{
        g_autoptr(GError) error = NULL;

        /* i440fx: root ports do not help; the message says why */
        g_assert_null(sluice_hotplug_slots_add_root_ports(
                HEAD "<controller type='pci' index='0' model='pci-root'/>" TAIL, "oldpc", 4, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED);
        g_assert_nonnull(strstr(error->message, "oldpc"));
        g_assert_nonnull(strstr(error->message, "i440fx"));
        g_clear_error(&error);

        g_assert_null(sluice_hotplug_slots_add_root_ports(HEAD TAIL, "v", 4, &error));
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED);
        g_clear_error(&error);

        g_assert_null(sluice_hotplug_slots_add_root_ports("<x/>", "v", 4, &error));
        g_assert_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_PARSE);
}

static void test_exhausted_message(void)
{
        g_autoptr(GError) error = NULL;

        sluice_hotplug_slots_set_exhausted(&error, "my vm", SLUICE_HOTPLUG_BUS_PCIE);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NO_HOTPLUG_SLOT);
        /* what is wrong, the fix Sluice offers (the name quoted for a shell), virt-manager's way */
        g_assert_nonnull(strstr(error->message, "“my vm” has no free PCIe root port"));
        g_assert_nonnull(strstr(error->message, "sluicectl vm 'my vm' add-slots"));
        g_assert_nonnull(strstr(error->message, "next start"));
        g_assert_nonnull(strstr(error->message, "Add Hardware → Controller"));
        g_clear_error(&error);

        sluice_hotplug_slots_set_exhausted(&error, "oldpc", SLUICE_HOTPLUG_BUS_PCI);
        g_assert_error(error, SLUICE_ERROR, SLUICE_ERROR_NO_HOTPLUG_SLOT);
        g_assert_null(strstr(error->message, "add-slots"));
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/hotplug-slots/count-q35", test_count_q35);
        g_test_add_func("/hotplug-slots/count-i440fx", test_count_i440fx);
        g_test_add_func("/hotplug-slots/count-untrusted", test_count_untrusted);
        g_test_add_func("/hotplug-slots/add-root-ports", test_add_root_ports);
        g_test_add_func("/hotplug-slots/add-refused", test_add_refused);
        g_test_add_func("/hotplug-slots/exhausted-message", test_exhausted_message);
        return g_test_run();
}
