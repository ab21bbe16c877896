/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hotplug-slots.h — where another device can be hot-plugged into a VM, read
 * from its domain XML, and the rewrite that gives a q35 VM spare PCIe root
 * ports.  Pure functions over strings (libxml2), no libvirt calls, so they
 * can be tested without a hypervisor.
 *
 * Why it matters: QEMU plugs a PCIe device (every virtio device on q35) into
 * an empty PCIe root port only, and libvirt adds about as many root ports as
 * the devices at definition time need; a VM without spare ones refuses every
 * hot-plug with "No more available PCI slots".  An i440fx ("pc") machine
 * plugs into the slots of its PCI bus (pci.0) instead, and has no root ports. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* AddHotplugSlots' count 0, and the most one call adds */
#define SLUICE_HOTPLUG_SLOTS_DEFAULT 4
#define SLUICE_HOTPLUG_SLOTS_MAX 16

typedef enum {
        SLUICE_HOTPLUG_BUS_NONE, /* no PCI host bridge in the XML */
        SLUICE_HOTPLUG_BUS_PCIE, /* pcie-root (q35): devices go into root ports */
        SLUICE_HOTPLUG_BUS_PCI,  /* pci-root (i440fx): devices go into bus slots */
} SluiceHotplugBus;

typedef struct {
        SluiceHotplugBus bus;
        /* PCIE: root ports and switch downstream ports with hot-plug on and
         * nothing plugged in; PCI: free slots of pci-root and pci-bridges */
        guint free;
        /* pcie-root-port controllers in the XML, used or not */
        guint root_ports;
        /* PCIE only: a PCI bridge is there, whose slots libvirt may use as
         * well: free == 0 does not prove an attach fails */
        gboolean bridges;
} SluiceHotplugSlots;

/* Counts from a domain's XML.  FALSE with a G_MARKUP_ERROR when it is not
 * domain XML. */
gboolean sluice_hotplug_slots_count(const char *xml, SluiceHotplugSlots *ret, GError **error);

/* Adds COUNT (1..SLUICE_HOTPLUG_SLOTS_MAX) <controller type='pci'
 * model='pcie-root-port'/> to an inactive definition of the VM called NAME,
 * keeping everything else.  NULL with SLUICE_ERROR_UNSUPPORTED when its
 * machine has no PCIe root bus (i440fx: the message says why that does not
 * help), SLUICE_ERROR_INVALID_ARGUMENT for a COUNT out of range, or a
 * G_MARKUP_ERROR when it is not domain XML. */
char *sluice_hotplug_slots_add_root_ports(const char *xml, const char *name, guint count, GError **error);

/* The error of an attach that found no free place (SLUICE_ERROR_NO_HOTPLUG_SLOT):
 * what is wrong and what to do, for the machine kind BUS of the VM NAME. */
void sluice_hotplug_slots_set_exhausted(GError **error, const char *name, SluiceHotplugBus bus);

G_END_DECLS
