#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fetch-trixie.sh CACHE virtiofsd|kernel — Debian 13 ("trixie") software that
# Debian 12 does not ship, unpacked under CACHE, never installed system-wide.
#
#   virtiofsd  the Rust virtiofsd that Debian 13, Fedora and Ubuntu ship (the
#              peer a user would pick instead of sluice-fs).  It needs glibc
#              2.39, so its libraries come from trixie too and it runs through
#              the unpacked dynamic loader.  Prints the path of a wrapper,
#              CACHE/virtiofsd/virtiofsd, that runs it with any arguments.
#   kernel     Linux 6.12 (virtio-fs multiqueue arrived in 6.10).  Prints
#              "VMLINUZ MODULES_DIR": the kernel image and the directory that
#              holds lib/modules/VER (for tests/guest/build-image.sh).
#
# A private apt state (lists, cache and sources list under CACHE/apt) reaches
# trixie on the Debian mirror the machine's own apt sources name: the address
# is read at run time from /etc/apt/sources.list.d/*.sources or
# /etc/apt/sources.list; nothing here names a host.  The first run downloads
# (virtiofsd: ~4 MB; kernel: ~110 MB); later runs print the cached result.
#
# Exit status: 0 and the path(s) on stdout; 77 when the packages cannot be had
# (no mirror, no network: callers skip, saying so); 1 on other failures; 2 on
# usage errors.  Messages go to stderr.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
[ $# -eq 2 ] || usage
cache=$1 what=$2
case "$what" in virtiofsd|kernel) ;; *) usage ;; esac
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
say() { echo "fetch-trixie: $*" >&2; }
unavailable() { say "$*"; exit 77; }

# Serialises concurrent callers (two test suites may ask at once).
exec 9>"$cache/.lock"
flock 9

# The mirror: the first http(s) URI of a Debian archive the machine uses.
mirror() {
        local uri
        uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
              awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' |
              grep -E '^https?://' | grep -v -- '-security' | head -1 || true)
        if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
                uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; exit } }' \
                      /etc/apt/sources.list | grep -v -- '-security' | head -1 || true)
        fi
        [ -n "$uri" ] || unavailable "no Debian mirror in /etc/apt/sources.list{,.d}: cannot fetch trixie packages"
        echo "${uri%/}"
}

apt_state=$cache/apt
apt_opts=()
apt_setup() {
        local m
        m=$(mirror)
        mkdir -p "$apt_state/lists/partial" "$apt_state/cache/archives/partial" "$apt_state/debs"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $m trixie main" \
                >"$apt_state/sources.list"
        apt_opts=(-o Dir::Etc::sourcelist="$apt_state/sources.list"
                  -o Dir::Etc::sourceparts=/nonexistent
                  -o Dir::State::Lists="$apt_state/lists"
                  -o Dir::Cache="$apt_state/cache"
                  -o APT::Sandbox::User=root
                  -o Debug::NoLocking=1
                  -o APT::Get::List-Cleanup=0)
        # Lists older than a day are refreshed; a failed refresh with old lists still works.
        if [ -z "$(find "$apt_state/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
                say "updating the private apt lists for trixie from $m"
                apt-get -qq "${apt_opts[@]}" update >&2 ||
                        [ -n "$(find "$apt_state/lists" -maxdepth 1 -name '*_Packages*')" ] ||
                        unavailable "apt-get update of trixie from $m failed (no network?)"
        fi
}

# download PKG... : the .deb files into $apt_state/debs (kept between runs).
download() {
        (cd "$apt_state/debs" && apt-get -qq "${apt_opts[@]}" download "$@" >&2) ||
                unavailable "apt-get download $* from trixie failed"
}

case "$what" in
virtiofsd)
        root=$cache/virtiofsd
        wrapper=$root/virtiofsd
        if [ ! -x "$wrapper" ] || ! "$wrapper" --version >/dev/null 2>&1; then
                apt_setup
                rm -rf "$root" "$apt_state/debs"/*.deb
                mkdir -p "$root/root"
                download virtiofsd libc6 libcap-ng0 libgcc-s1 libseccomp2
                for deb in "$apt_state/debs"/*.deb; do dpkg-deb -x "$deb" "$root/root"; done
                lib=$root/root/usr/lib/x86_64-linux-gnu
                [ -x "$root/root/usr/libexec/virtiofsd" ] && [ -e "$lib/ld-linux-x86-64.so.2" ] ||
                        { say "the unpacked packages lack usr/libexec/virtiofsd or the loader"; exit 1; }
                # Relative to itself, so that the directory can be copied where another
                # user can reach it (tests/guest/run-guest.sh does).
                cat >"$wrapper" <<'EOF'
#!/bin/sh
# Rust virtiofsd from Debian trixie, with trixie's own libc (see bench/fetch-trixie.sh).
d=$(dirname "$0")/root
exec "$d/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$d/usr/lib/x86_64-linux-gnu" \
        "$d/usr/libexec/virtiofsd" "$@"
EOF
                chmod 0755 "$wrapper"
                # Reachable by the unprivileged test user.
                chmod -R a+rX "$root"
                "$wrapper" --version >&2 || { say "the unpacked virtiofsd does not run"; exit 1; }
        fi
        echo "$wrapper"
        ;;
kernel)
        root=$cache/kernel
        img=$(ls "$root"/boot/vmlinuz-* 2>/dev/null | sort -V | tail -1 || true)
        if [ -z "$img" ]; then
                apt_setup
                rm -rf "$root"
                mkdir -p "$root"
                pkg=$(apt-cache "${apt_opts[@]}" search --names-only '^linux-image-6\.12\.[^ ]*[0-9]-amd64-unsigned$' |
                      awk '{ print $1 }' | sort -V | tail -1)
                [ -n "$pkg" ] || unavailable "trixie lists have no linux-image-6.12.*-amd64-unsigned"
                rm -f "$apt_state/debs"/linux-image-*.deb
                say "downloading $pkg (about 110 MB, once)"
                download "$pkg"
                dpkg-deb -x "$apt_state/debs/$pkg"_*.deb "$root"
                rm -f "$apt_state/debs"/linux-image-*.deb
                img=$(ls "$root"/boot/vmlinuz-* 2>/dev/null | sort -V | tail -1 || true)
                [ -n "$img" ] || { say "$pkg has no boot/vmlinuz-*"; exit 1; }
                # The package leaves modules.dep to its postinst: make it here.
                depmod -b "$root/usr" "${img##*/vmlinuz-}" ||
                        { say "depmod of the unpacked kernel failed"; rm -rf "$root"; exit 1; }
                chmod -R a+rX "$root"
        fi
        kver=${img##*/vmlinuz-}
        [ -s "$root/usr/lib/modules/$kver/modules.dep" ] || { say "no usr/lib/modules/$kver/modules.dep in the unpacked kernel"; exit 1; }
        echo "$img $root/usr"
        ;;
esac
