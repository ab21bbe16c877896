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
#                       the virtio/virtiofs/9p/virtio_console modules, /init (init.sh),
#                       Debian 12's QEMU guest agent /usr/sbin/qemu-ga with its libraries
#                       (when it can be had), /bin/sluice-qga-windows (qga-windows.c) and
#                       the host's rsync with its libraries (when installed)
#   OUTDIR/qemu-ga      present when the image carries qemu-ga (tests that need it
#                       skip without it); OUTDIR/qemu-ga.missing says why not
#   OUTDIR/kernel-version  the kernel release the modules belong to
# Append a cpio made by mkcpio.sh that carries /workload.sh to run a workload.
#
# Environment: SLUICE_GUEST_KERNEL=/boot/vmlinuz-VER picks the kernel (default:
# the newest /boot/vmlinuz-*); its modules must be in ROOT/lib/modules/VER, where
# ROOT is $SLUICE_GUEST_MODULES (default /: the installed kernel's).  A kernel
# unpacked from a package (bench/fetch-trixie.sh kernel) names its usr/ there.
# Modules the kernel has built in (Linux 6.12's fuse, virtiofs, virtio_pci) are
# simply not loaded.
# The guest agent comes from `apt-get download qemu-guest-agent`, kept in
# $SLUICE_GUEST_CACHE (default OUTDIR/.qga) and reused from there; its libraries
# are the host's (ldd), so the host should be Debian 12 as the package is.  If the
# download fails the image is built without the agent and this says so on stderr.
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

# The QEMU guest agent's package, downloaded once into the cache.
qga_cache=${SLUICE_GUEST_CACHE:-$outdir/.qga}
mkdir -p "$qga_cache"
qga_deb=$(ls "$qga_cache"/qemu-guest-agent_*.deb 2>/dev/null | sort -V | tail -1 || true)
qga_why=
if [ -z "$qga_deb" ]; then
        # apt's sandbox user cannot write a cache owned by root: download as root
        qga_download() {
                (cd "$qga_cache" && timeout 120 apt-get -q -o APT::Sandbox::User=root download qemu-guest-agent) \
                        >>"$qga_cache/download.log" 2>&1
        }
        # a machine whose packages were all there already may never have
        # fetched apt's lists (make deps updates them only to install):
        # as root, fetch them once and try again
        if qga_download || { [ "$(id -u)" = 0 ] && timeout 300 apt-get update -qq >>"$qga_cache/download.log" 2>&1 &&
                             qga_download; }; then
                qga_deb=$(ls "$qga_cache"/qemu-guest-agent_*.deb 2>/dev/null | sort -V | tail -1 || true)
        fi
        [ -n "$qga_deb" ] || qga_why="apt-get download qemu-guest-agent failed: $(tail -n 1 "$qga_cache/download.log")"
fi
qga_c=$here/qga-windows.c
[ -f "$qga_c" ] || qga_c=
# rsync, the host's (make deps installs it), for guest root's rsync -a into a
# share (workload-users.sh); optional: without it that check is skipped.
rsync_bin=$(command -v rsync || true)
[ -z "$rsync_bin" ] || ! ldd "$rsync_bin" | grep -q 'not found' || rsync_bin=

# Everything the image is made from; a change in any of them rebuilds it.
stamp=$( {
        echo "$kernel $kver $modroot"
        stat -L -c '%s %Y' "$kernel" "$busybox"
        cat "$here/build-image.sh" "$here/init.sh" "$here/guest-tool.c" "$here/extract-vmlinux.sh"
        [ -z "$qga_deb" ] || { echo "$qga_deb"; stat -L -c '%s %Y' "$qga_deb"; }
        [ -z "$qga_c" ] || cat "$qga_c"
        [ -z "$rsync_bin" ] || { echo "$rsync_bin"; stat -L -c '%s %Y' "$rsync_bin"; }
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
# The tests' pretend Windows agent (speaks QGA on the agent's port).
if [ -n "$qga_c" ] && ! "$cc" -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -static \
        -o "$root/bin/sluice-qga-windows" "$qga_c"; then
        echo "build-image: cannot build qga-windows.c statically" >&2
        exit 1
fi

# libraries_of BINARY — the libraries BINARY links and the loader (ldd)
libraries_of() {
        ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}
# copy_libraries LIB… — into the image at the same paths
copy_libraries() {
        local lib
        for lib in "$@"; do
                mkdir -p "$root$(dirname "$lib")"
                cp -L "$lib" "$root$lib"
        done
}

# The QEMU guest agent: the binary, the libraries it links and the loader.
rm -f "$outdir/qemu-ga" "$outdir/qemu-ga.missing"
if [ -n "$qga_deb" ]; then
        dpkg-deb -x "$qga_deb" "$stage/qga" || qga_why="dpkg-deb -x $qga_deb failed"
fi
if [ -z "$qga_why" ]; then
        mkdir -p "$root/usr/sbin"
        cp "$stage/qga/usr/sbin/qemu-ga" "$root/usr/sbin/qemu-ga"
        libs=$(libraries_of "$stage/qga/usr/sbin/qemu-ga")
        if ldd "$stage/qga/usr/sbin/qemu-ga" | grep -q 'not found'; then
                qga_why="qemu-ga needs libraries the host lacks: $(ldd "$stage/qga/usr/sbin/qemu-ga" | grep 'not found' | tr -s ' \t\n' ' ')"
                rm -f "$root/usr/sbin/qemu-ga"
        else
                # shellcheck disable=SC2086 # one path a word
                copy_libraries $libs
        fi
fi
if [ -n "$rsync_bin" ]; then
        cp -L "$rsync_bin" "$root/bin/rsync"
        # shellcheck disable=SC2046 # one path a word
        copy_libraries $(libraries_of "$rsync_bin")
fi
if [ -n "$qga_why" ]; then
        echo "build-image: the image has no QEMU guest agent: $qga_why" >&2
fi

# Modules in load order, dependencies first, each once.  Compressed modules
# are unpacked: busybox insmod loads plain .ko files only.
: >"$root/etc/modules.order"
for mod in virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
           fuse virtiofs netfs fscache 9pnet 9pnet_virtio 9p virtio_console; do
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
if [ -z "$qga_why" ]; then
        "$stage/qga/usr/sbin/qemu-ga" --version >"$outdir/qemu-ga" 2>&1 || echo "qemu-ga" >"$outdir/qemu-ga"
else
        echo "$qga_why" >"$outdir/qemu-ga.missing"
fi
echo "$kver" >"$outdir/kernel-version"
echo "$stamp" >"$outdir/.stamp"
