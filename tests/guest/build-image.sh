#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-image.sh OUTDIR — the Sluice test guest: a Debian kernel and a busybox
# initramfs that mounts virtiofs (and 9p) shares.
#
# Produces, and leaves alone when already up to date (a second run takes
# ~10 ms):
#   OUTDIR/vmlinux      uncompressed kernel ELF, for QEMU's fast PVH boot (-kernel vmlinux)
#   OUTDIR/bzImage      the installed bzImage itself (for libvirt <kernel> if preferred)
#   OUTDIR/initrd.cpio  busybox-static, /bin/sluice-guest-tool (xattrs, locks, renameat2),
#                       the virtio/virtiofs/9p modules and /init (init.sh)
#   OUTDIR/kernel-version  the kernel release the modules belong to
# Append a cpio made by mkcpio.sh that carries /workload.sh to run a workload.
#
# Environment: SLUICE_GUEST_KERNEL=/boot/vmlinuz-VER picks the kernel (default:
# the newest /boot/vmlinuz-*); its modules must be in ROOT/lib/modules/VER, where
# ROOT is $SLUICE_GUEST_MODULES (default /: the installed kernel's).  A kernel
# unpacked from a package (bench/fetch-trixie.sh kernel) names its usr/ there.
# Modules the kernel has built in (Linux 6.12's fuse, virtiofs, virtio_pci) are
# simply not loaded.
# Exit status: 0 done, 77 when no kernel or busybox-static is installed (so
# tests can skip), 1 on any other failure.
set -euo pipefail

if [ $# -ne 1 ]; then
        echo "usage: $0 OUTDIR" >&2
        exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
outdir=$1
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

kernel=${SLUICE_GUEST_KERNEL:-$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1 || true)}
if [ -z "$kernel" ] || [ ! -r "$kernel" ]; then
        echo "build-image: no readable kernel in /boot (install linux-image-amd64)" >&2
        exit 77
fi
kver=${kernel##*/vmlinuz-}
modroot=${SLUICE_GUEST_MODULES:-/}
modroot=${modroot%/}
# busybox-static installs /bin/busybox; the dynamic busybox package would too,
# but cannot run in an initramfs without its libraries.
busybox=/bin/busybox
if [ ! -x "$busybox" ] || readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
        echo "build-image: no static /bin/busybox (install busybox-static)" >&2
        exit 77
fi
[ -d "$modroot/lib/modules/$kver" ] || { echo "build-image: no $modroot/lib/modules/$kver for $kernel" >&2; exit 77; }

# Concurrent callers (meson runs tests in parallel) wait for one builder.
exec 9>"$outdir/.lock"
flock 9

# Everything the image is made from; a change in any of them rebuilds it.
stamp=$( {
        echo "$kernel $kver $modroot"
        stat -L -c '%s %Y' "$kernel" "$busybox"
        cat "$here/build-image.sh" "$here/init.sh" "$here/guest-tool.c" "$here/extract-vmlinux.sh"
} | sha256sum | cut -d' ' -f1)
if [ -f "$outdir/.stamp" ] && [ "$(cat "$outdir/.stamp")" = "$stamp" ] &&
   [ -s "$outdir/vmlinux" ] && [ -s "$outdir/bzImage" ] && [ -s "$outdir/initrd.cpio" ]; then
        exit 0
fi
rm -f "$outdir/.stamp"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

"$here/extract-vmlinux.sh" "$kernel" "$outdir/vmlinux"
cp "$kernel" "$outdir/bzImage.tmp" && mv -f "$outdir/bzImage.tmp" "$outdir/bzImage"

root=$stage/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,mnt,etc,root}
ln -s bin "$root/sbin"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
        [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
install -m 0755 "$here/init.sh" "$root/init"

# A static helper for what busybox cannot do (xattrs, flock, fcntl locks, renameat2).
cc=${CC:-cc}
if ! "$cc" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -static \
        -o "$root/bin/sluice-guest-tool" "$here/guest-tool.c"; then
        echo "build-image: cannot build guest-tool.c statically (need gcc and libc6-dev)" >&2
        exit 1
fi

# Modules in load order, dependencies first, each once.  Compressed modules
# are unpacked: busybox insmod loads plain .ko files only.
: >"$root/etc/modules.order"
for mod in virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
           fuse virtiofs netfs fscache 9pnet 9pnet_virtio 9p; do
        for path in $(modprobe ${modroot:+-d "$modroot"} -S "$kver" --show-depends "$mod" 2>/dev/null |
                      awk '$1 == "insmod" { print $2 }'); do
                # The path inside the guest: without the unpacked package's prefix.
                dest=${path#"$modroot"}; dest=${dest%.xz}; dest=${dest%.zst}; dest=${dest%.gz}
                grep -qxF "$dest" "$root/etc/modules.order" && continue
                mkdir -p "$root$(dirname "$dest")"
                case "$path" in
                *.xz)  xz -dc "$path" >"$root$dest" ;;
                *.zst) zstd -qdc "$path" >"$root$dest" ;;
                *.gz)  gzip -dc "$path" >"$root$dest" ;;
                *)     cp "$path" "$root$dest" ;;
                esac
                echo "$dest" >>"$root/etc/modules.order"
        done
done
grep -q '/virtiofs\.ko$' "$root/etc/modules.order" ||
        grep -q '/virtiofs\.ko$' "$modroot/lib/modules/$kver/modules.builtin" 2>/dev/null ||
        { echo "build-image: kernel $kver has no virtiofs, neither as a module nor built in" >&2; exit 1; }

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
        cpio --quiet -o -H newc -R 0:0 >"$outdir/initrd.cpio.tmp")
mv -f "$outdir/initrd.cpio.tmp" "$outdir/initrd.cpio"
echo "$kver" >"$outdir/kernel-version"
echo "$stamp" >"$outdir/.stamp"
