/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hotplug-slots.c — see hotplug-slots.h.  The XML is libvirt's, but still
 * untrusted (anyone with access to the connection can edit a definition):
 * numbers out of PCI's range are ignored, never used as indices. */
#include "config.h"

#include "hotplug-slots.h"
#include "domain-xml-doc.h"
#include "errors.h"
#include "printable.h"

#include <glib/gi18n.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

/* PCI: 256 bus numbers, 32 slots per bus; slot 0 of a bridge is not hot-pluggable */
#define PCI_BUSES 256
#define PCI_SLOTS 32

static gboolean attr_is(xmlNode *node, const char *name, const char *value)
{
        xmlChar *got = xmlGetProp(node, BAD_CAST name);
        gboolean is = got && xmlStrEqual(got, BAD_CAST value);

        xmlFree(got);
        return is;
}

/* A PCI number as libvirt writes it ("0x1f", or decimal), or -1 when absent,
 * malformed or not below LIMIT. */
static gint64 attr_number(xmlNode *node, const char *name, guint64 limit)
{
        xmlChar *got = xmlGetProp(node, BAD_CAST name);
        guint64 value = 0;
        gboolean ok;

        if (!got)
                return -1;
        if (g_ascii_strncasecmp((const char *)got, "0x", 2) == 0)
                ok = g_ascii_string_to_unsigned((const char *)got + 2, 16, 0, limit - 1, &value, NULL);
        else
                ok = g_ascii_string_to_unsigned((const char *)got, 10, 0, limit - 1, &value, NULL);
        xmlFree(got);
        return ok ? (gint64)value : -1;
}

/* Every <address type='pci'> under NODE: its bus's slot taken in SLOTS. */
static void mark_used(xmlNode *node, guint32 *slots)
{
        for (xmlNode *n = node->children; n; n = n->next) {
                if (n->type != XML_ELEMENT_NODE)
                        continue;
                if (xmlStrEqual(n->name, BAD_CAST "address") && attr_is(n, "type", "pci")) {
                        gint64 bus = attr_number(n, "bus", PCI_BUSES);
                        gint64 slot = attr_number(n, "slot", PCI_SLOTS);

                        if (bus >= 0 && slot >= 0)
                                slots[bus] |= 1u << slot;
                }
                mark_used(n, slots);
        }
}

/* Slots 1..31 of BUS that nothing uses. */
static guint free_bridge_slots(const guint32 *slots, gint64 bus)
{
        guint n = 0;

        for (guint slot = 1; slot < PCI_SLOTS; slot++)
                if (!(slots[bus] & (1u << slot)))
                        n++;
        return n;
}

/* What DOC's <devices> have free, into *RET. */
static void count_doc(xmlDoc *doc, SluiceHotplugSlots *ret)
{
        g_autofree guint32 *slots = NULL;
        xmlNode *devices;
        guint ports_free = 0, bridge_free = 0;

        memset(ret, 0, sizeof(*ret));
        devices = sluice_domain_xml_child(xmlDocGetRootElement(doc), "devices");
        if (!devices)
                return;
        slots = g_new0(guint32, PCI_BUSES);
        mark_used(devices, slots);

        for (xmlNode *c = devices->children; c; c = c->next) {
                g_autofree char *model = NULL;
                gint64 index;
                xmlNode *target;

                if (c->type != XML_ELEMENT_NODE || !xmlStrEqual(c->name, BAD_CAST "controller") ||
                    !attr_is(c, "type", "pci"))
                        continue;
                model = (char *)xmlGetProp(c, BAD_CAST "model");
                index = attr_number(c, "index", PCI_BUSES);
                target = sluice_domain_xml_child(c, "target");
                if (!model)
                        continue;
                if (g_str_equal(model, "pcie-root")) {
                        ret->bus = SLUICE_HOTPLUG_BUS_PCIE;
                } else if (g_str_equal(model, "pci-root")) {
                        ret->bus = SLUICE_HOTPLUG_BUS_PCI;
                        /* slot 1 is the PIIX3 chipset's, whether the XML names it or not */
                        if (index == 0)
                                slots[0] |= 1u << 1;
                        if (index >= 0)
                                bridge_free += free_bridge_slots(slots, index);
                } else if (g_str_equal(model, "pcie-root-port") ||
                           g_str_equal(model, "pcie-switch-downstream-port")) {
                        if (g_str_equal(model, "pcie-root-port"))
                                ret->root_ports++;
                        /* one device each, in slot 0; hotplug='off' refuses it */
                        if (index >= 0 && !slots[index] && !(target && attr_is(target, "hotplug", "off")))
                                ports_free++;
                } else if (g_str_equal(model, "pci-bridge") || g_str_equal(model, "pcie-to-pci-bridge")) {
                        ret->bridges = TRUE;
                        if (index >= 0)
                                bridge_free += free_bridge_slots(slots, index);
                }
        }
        ret->free = ret->bus == SLUICE_HOTPLUG_BUS_PCIE ? ports_free
                    : ret->bus == SLUICE_HOTPLUG_BUS_PCI ? bridge_free
                                                         : 0;
}

gboolean sluice_hotplug_slots_count(const char *xml, SluiceHotplugSlots *ret, GError **error)
{
        g_autoptr(xmlDoc) doc = sluice_domain_xml_read(xml, error);

        memset(ret, 0, sizeof(*ret));
        if (!doc)
                return FALSE;
        count_doc(doc, ret);
        return TRUE;
}

void sluice_hotplug_slots_set_exhausted(GError **error, const char *name, SluiceHotplugBus bus)
{
        g_autofree char *word = sluice_shell_word(name);

        if (bus == SLUICE_HOTPLUG_BUS_PCI)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NO_HOTPLUG_SLOT,
                            _("The VM “%s” has no free slot on its PCI bus for another device. Its i440fx "
                              "machine plugs shared folders into that bus directly, so the fix is a free "
                              "slot: remove a device the VM does not need (virt-manager: the VM's details, "
                              "Remove Hardware), or take another shared folder out of it first."),
                            name);
        else
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NO_HOTPLUG_SLOT,
                            _("The VM “%s” has no free PCIe root port: each shared folder plugged into a "
                              "running VM needs one of its own. Sluice can add spare root ports to the VM's "
                              "saved definition (the “Add PCIe Slots” button, or sluicectl vm %s add-slots); "
                              "they take effect at the VM's next start: shut it down and start it again. "
                              "In virt-manager: Add Hardware → Controller → PCIe root port."),
                            name, word);
}

char *sluice_hotplug_slots_add_root_ports(const char *xml, const char *name, guint count, GError **error)
{
        g_autoptr(xmlDoc) doc = NULL;
        SluiceHotplugSlots slots;
        xmlNode *devices;

        if (count < 1 || count > SLUICE_HOTPLUG_SLOTS_MAX) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_INVALID_ARGUMENT,
                            _("Sluice adds 1 to %u root ports at a time, not %u."), SLUICE_HOTPLUG_SLOTS_MAX,
                            count);
                return NULL;
        }
        doc = sluice_domain_xml_read(xml, error);
        if (!doc)
                return NULL;
        count_doc(doc, &slots);
        if (slots.bus == SLUICE_HOTPLUG_BUS_PCI) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("The VM “%s” has an i440fx (“pc”) machine, which plugs devices into its PCI bus "
                              "directly, without PCIe root ports: adding root ports does not help. If it "
                              "runs out of slots, remove a device it does not need."),
                            name);
                return NULL;
        }
        if (slots.bus != SLUICE_HOTPLUG_BUS_PCIE) {
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_UNSUPPORTED,
                            _("The VM “%s” has no PCI Express root bus (a q35 machine has one), so Sluice "
                              "cannot add root ports to it."),
                            name);
                return NULL;
        }

        devices = sluice_domain_xml_ensure_child(xmlDocGetRootElement(doc), "devices");
        /* no index, no address: libvirt numbers and places each one */
        for (guint i = 0; i < count; i++) {
                xmlNode *port = xmlNewChild(devices, NULL, BAD_CAST "controller", NULL);

                xmlSetProp(port, BAD_CAST "type", BAD_CAST "pci");
                xmlSetProp(port, BAD_CAST "model", BAD_CAST "pcie-root-port");
        }
        return sluice_domain_xml_write(doc, error);
}
