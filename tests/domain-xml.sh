#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# domain-xml.sh [OPTIONS] NAME — prints the libvirt definition of a test VM:
# a diskless TCG guest (type='qemu': no KVM needed) that boots the test
# kernel and initramfs (tests/guest/build-image.sh, plus a workload cpio),
# writes its console to a file, and is destroyed when it powers off, reboots
# or crashes.  The demo, the libvirt suite and the applet-with-a-VM test all
# define their VMs with it.
#
#   --kernel FILE        the guest kernel (vmlinux)                 (required)
#   --initrd FILE        the initramfs                              (required)
#   --console FILE       the serial console's log file, appended    (required)
#   --tag TAG            sluice_tag=TAG on the kernel command line: the tag the
#                        guest's workload mounts
#   --cmdline ARGS       more kernel command line (after console=ttyS0 quiet panic=-1)
#   --memory MIB         guest memory (default 256)
#   --no-shared-memory   no <memoryBacking> with shared memfd memory: virtiofs
#                        then cannot attach (what the service must explain)
#   --metadata XML       an XML fragment inside <metadata> (e.g. libosinfo's OS id)
#   --device XML         an XML fragment inside <devices>, repeatable
#   --agent              the QEMU guest agent's channel (org.qemu.guest_agent.0;
#                        libvirt adds the virtio-serial controller and owns the socket)
#   --root-ports N       spare PCIe root ports (default 8); with 0, libvirt adds only
#                        those its own devices take: nothing can be hot-plugged
#   --reboot-restarts    a reboot or reset restarts the guest (hot-plugged devices
#                        kept) instead of destroying it
#
# Values are written as given, XML-escaped; --metadata and --device are XML.
# Exit: 0, or 2 on a usage error.
set -euo pipefail

usage() { sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
# text for an XML attribute or element
esc() { local s=$1; s=${s//&/&amp;}; s=${s//</&lt;}; s=${s//>/&gt;}; s=${s//\'/&apos;}; printf '%s' "$s"; }

kernel= initrd= console= tag= cmdline= memory=256 shared=1 metadata= devices=() agent= root_ports=8 on_reboot=destroy
while [ $# -gt 0 ]; do
        case $1 in
        --kernel) kernel=$2; shift ;;
        --initrd) initrd=$2; shift ;;
        --console) console=$2; shift ;;
        --tag) tag=$2; shift ;;
        --cmdline) cmdline=$2; shift ;;
        --memory) memory=$2; shift ;;
        --no-shared-memory) shared= ;;
        --metadata) metadata=$2; shift ;;
        --device) devices+=("$2"); shift ;;
        --agent) agent=1 ;;
        --reboot-restarts) on_reboot=restart ;;
        --root-ports) root_ports=$2; shift ;;
        -h|--help) usage ;;
        -*) echo "domain-xml.sh: unknown option $1" >&2; usage ;;
        *) break ;;
        esac
        shift
done
[ $# = 1 ] && [ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$console" ] || usage
case $memory in ''|*[!0-9]*) echo "domain-xml.sh: --memory $memory: a number of MiB" >&2; exit 2 ;; esac
case $root_ports in ''|*[!0-9]*) echo "domain-xml.sh: --root-ports $root_ports: a number" >&2; exit 2 ;; esac
name=$1

args="console=ttyS0 quiet panic=-1"
[ -z "$cmdline" ] || args+=" $cmdline"
[ -z "$tag" ] || args+=" sluice_tag=$tag"

echo "<domain type='qemu'>"
echo "  <name>$(esc "$name")</name>"
[ -z "$metadata" ] || echo "  <metadata>$metadata</metadata>"
echo "  <memory unit='MiB'>$memory</memory>"
echo "  <vcpu>1</vcpu>"
# virtiofs needs the guest's RAM shared with the backend process
[ -z "$shared" ] || echo "  <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>"
echo "  <os><type arch='x86_64' machine='q35'>hvm</type><kernel>$(esc "$kernel")</kernel>"
echo "    <initrd>$(esc "$initrd")</initrd><cmdline>$(esc "$args")</cmdline></os>"
# without ACPI, hot-plugging fails: "Bus 'pci.0' does not support hotplugging"
echo "  <features><acpi/></features>"
echo "  <on_poweroff>destroy</on_poweroff><on_reboot>$on_reboot</on_reboot><on_crash>destroy</on_crash>"
echo "  <devices>"
# q35 hot-plugs into free PCIe root ports, and libvirt adds about as many as
# the devices at boot need: without spares a second share at once would find
# "No more available PCI slots" (the devices at boot take some of these too)
echo "    <controller type='pci' index='0' model='pcie-root'/>"
for ((i = 0; i < root_ports; i++)); do echo "    <controller type='pci' model='pcie-root-port'/>"; done
echo "    <serial type='file'><source path='$(esc "$console")' append='on'/></serial>"
[ -z "$agent" ] || echo "    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
for d in ${devices[@]+"${devices[@]}"}; do echo "    $d"; done
echo "  </devices>"
echo "</domain>"
