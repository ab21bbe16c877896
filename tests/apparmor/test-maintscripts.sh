#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sluice package's real postinst and postrm (debian/) against libvirt's
# AppArmor files in scratch roots ($DPKG_ROOT): libvirt < 9.6, whose QEMU
# abstraction includes only the local file, and libvirt >= 9.6, which
# includes the snippet folder; the local file missing, empty, or holding an
# admin's lines.  Checks that the include goes in once, only where it is
# needed, that nothing of the admin's is lost, that remove and purge leave
# the files byte for byte as libvirt left them, that a libvirt upgrade (the
# file trigger) takes the include out again, and that the running VMs'
# profiles are reloaded only when the kernel's AppArmor is on and the root
# is this machine's (a fake apparmor_parser and a fake profile list).
# Then through dpkg itself (--root, a stand-in for libvirt's package): the
# file trigger runs when another package installs, upgrades or purges the
# abstraction, and a purge leaves what libvirt alone would.
#
#   test-maintscripts.sh WORK_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

work=${1:?usage: test-maintscripts.sh WORK_DIR}
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
need_tools sed grep sha256sum find stat

rm -rf "$work"
mkdir -p "$work/bin" "$work/sys" || fail "cannot make $work"
scratch=$work/root

# The copies that run: debhelper's token out, and the running kernel's
# AppArmor files and this machine's root replaced by fakes (each a line the
# scripts must hold exactly once, or the test would run something else).
prepare() { # SCRIPT → $work/SCRIPT
        local src=$top/debian/$1 dst=$work/$1 expr count
        [ -f "$src" ] || fail "no $src"
        cp "$src" "$dst"
        for expr in '^#DEBHELPER#$' \
                '^root=\${DPKG_ROOT:-}$' \
                '^aa_enabled=/sys/module/apparmor/parameters/enabled$' \
                '^aa_profiles=/sys/kernel/security/apparmor/profiles$'; do
                [ "$1" = sluice.postrm ] && [ "${expr#^aa_}" != "$expr" ] && continue
                count=$(grep -c -- "$expr" "$dst")
                [ "$count" = 1 ] || fail "$1 holds $count lines matching $expr, not 1"
        done
        sed -i -e 's/^#DEBHELPER#$/: debhelper additions left out by the test/' \
                -e "s|^root=\${DPKG_ROOT:-}\$|root=\${DPKG_ROOT:-$scratch}|" \
                -e "s|^aa_enabled=.*|aa_enabled=$work/sys/enabled|" \
                -e "s|^aa_profiles=.*|aa_profiles=$work/sys/profiles|" "$dst"
        head -n 1 "$dst" | grep -qx '#!/bin/sh' || fail "$1 does not start with #!/bin/sh"
        grep -qx 'set -e' "$dst" || fail "$1 has no set -e"
}
prepare sluice.postinst
prepare sluice.postrm

# A fake apparmor_parser: logs its arguments, fails for a profile whose
# name is in $work/parser-fails.
cat >"$work/bin/apparmor_parser" <<FAKE
#!/bin/sh
echo "\$*" >>"$work/parser.log"
for a; do grep -qxF "\${a##*/}" "$work/parser-fails" 2>/dev/null && { echo "fake parser error" >&2; exit 1; }; done
exit 0
FAKE
chmod 755 "$work/bin/apparmor_parser"
: >"$work/parser-fails"
export PATH=$work/bin:$PATH

abstractions=$scratch/etc/apparmor.d/abstractions
local_dir=$scratch/etc/apparmor.d/local/abstractions
local_file=$local_dir/libvirt-qemu
mark="# Added by the sluice package, removed with it: its worker sockets"
include_line="#include <abstractions/libvirt-qemu.d/sluice>"

# The last lines of libvirt's QEMU abstraction, as each version ships them
# (the policy test parses the whole real files).
abstraction_text() { # 9.0 | 11.3
        printf '  #include <abstractions/base>\n  /dev/kvm rw,\n'
        case $1 in
        9.0) printf '  # Site-specific additions and overrides. See local/README for details.\n'
             printf '  #include <local/abstractions/libvirt-qemu>\n' ;;
        11.3) printf '  include if exists <abstractions/libvirt-qemu.d>\n\n'
              printf '  ### DEPRECATED ###\n  include if exists <local/abstractions/libvirt-qemu>\n' ;;
        esac
}
# The admin's own lines, the last without its newline.
admin_text() { printf '  # site rule\n  /srv/images/** rwk,\n  owner /tmp/pulse-*/** rw,'; }

# A scratch root as libvirt VERSION left it, the local file in STATE.
make_root() { # VERSION STATE(missing|empty|admin)
        rm -rf "$scratch"
        mkdir -p "$abstractions/libvirt-qemu.d" "$scratch/etc/apparmor.d/libvirt"
        abstraction_text "$1" >"$abstractions/libvirt-qemu"
        cp "$top/data/apparmor/sluice" "$abstractions/libvirt-qemu.d/sluice"
        case $2 in
        missing) ;;
        empty) mkdir -p "$local_dir" && install -m 0644 /dev/null "$local_file" ;;
        admin) mkdir -p "$local_dir" && admin_text >"$local_file" && chmod 0640 "$local_file" ;;
        esac
}
# Every path below the root, with type, mode and content: two trees are
# the same when their states are.
state() {
        (cd "$scratch" && find . -printf '%p %y %m\n' | sort |
                while read -r p y m; do
                        if [ "$y" = f ]; then
                                printf '%s %s %s %s\n' "$p" "$y" "$m" "$(sha256sum <"$p" | cut -c1-16)"
                        else
                                printf '%s %s %s\n' "$p" "$y" "$m"
                        fi
                done)
}
pairs() { # how many marked includes the local file holds
        [ -f "$local_file" ] || { echo 0; return; }
        grep -A1 -xF -- "$mark" "$local_file" | grep -cxF -- "$include_line"
}
run() { # SCRIPT ARG… — runs the prepared copy with DPKG_ROOT=scratch
        DPKG_ROOT=$scratch sh "$work/$1" "${@:2}" >"$work/out" 2>&1 ||
                { cat "$work/out"; fail_later "$1 $* exited $?"; return 1; }
}

echo Y >"$work/sys/enabled"
printf 'libvirt-11111111-2222-3333-4444-555555555555 (enforce)\n' >"$work/sys/profiles"
: >"$work/parser.log"

for version in 9.0 11.3; do
        for st in missing empty admin; do
                case=libvirt-$version/$st
                make_root "$version" "$st"
                before=$(state)
                admin_before=$( [ -f "$local_file" ] && sha256sum <"$local_file")

                run sluice.postinst configure || continue
                if [ "$version" = 9.0 ]; then
                        n=$(pairs)
                        if [ "$n" = 1 ] && [ "$(head -n 2 "$local_file")" = "$mark"$'\n'"$include_line" ]; then
                                pass "$case: configure put one marked include first in the local file"
                        else
                                fail_later "$case: configure left $n marked includes: $(cat -A "$local_file" 2>&1)"
                        fi
                        if [ "$(tail -n +3 "$local_file" | sha256sum)" = "${admin_before:-$(: | sha256sum)}" ]; then
                                pass "$case: every byte the local file held before follows the include"
                        else
                                fail_later "$case: the local file's own content changed: $(cat -A "$local_file")"
                        fi
                        if [ "$st" = admin ]; then
                                m=$(stat -c %a "$local_file")
                                [ "$m" = 640 ] && pass "$case: the local file keeps its mode 640" ||
                                        fail_later "$case: the local file's mode is now $m, not 640"
                        else
                                m=$(stat -c %a "$local_file")
                                [ "$m" = 644 ] && pass "$case: the local file is 0644, as libvirt makes it" ||
                                        fail_later "$case: the local file's mode is $m, not 644"
                        fi
                else
                        if [ "$(state)" = "$before" ]; then
                                pass "$case: configure changed nothing (libvirt includes the snippet folder)"
                        else
                                fail_later "$case: configure changed the tree: $(diff <(echo "$before") <(state) | tr '\n' ' ')"
                        fi
                fi
                after_install=$(state)
                run sluice.postinst configure 1.0 && run sluice.postinst triggered /etc/apparmor.d/abstractions/libvirt-qemu &&
                        if [ "$(state)" = "$after_install" ]; then
                                pass "$case: configure again (an upgrade) and triggered add nothing twice"
                        else
                                fail_later "$case: a second run changed the tree: $(diff <(echo "$after_install") <(state) | tr '\n' ' ')"
                        fi
                [ -s "$work/parser.log" ] && fail_later "$case: apparmor_parser ran with DPKG_ROOT set: $(cat "$work/parser.log")"

                run sluice.postrm remove || continue
                if [ "$version/$st" = 9.0/missing ]; then
                        # libvirt < 9.6 needs the file; its own postinst makes it empty.
                        if [ -f "$local_file" ] && [ ! -s "$local_file" ] && [ "$(stat -c %a "$local_file")" = 644 ]; then
                                pass "$case: remove left the empty 0644 local file libvirt's abstraction includes"
                        else
                                fail_later "$case: remove left $(ls -l "$local_file" 2>&1)"
                        fi
                        mkdir -p "$local_dir"
                        before=$(install -m 0644 /dev/null "$local_file.x" && mv "$local_file.x" "$local_file"; state)
                fi
                if [ "$(state)" = "$before" ]; then
                        pass "$case: remove left the files byte for byte as libvirt left them"
                else
                        fail_later "$case: remove left: $(diff <(echo "$before") <(state) | tr '\n' ' ')"
                fi
                rm -f "$abstractions/libvirt-qemu.d/sluice" # dpkg removes the conffile before the purge
                before=$(state)
                run sluice.postrm purge || continue
                if [ "$(state)" = "$before" ]; then
                        pass "$case: purge changed nothing more"
                else
                        fail_later "$case: purge changed: $(diff <(echo "$before") <(state) | tr '\n' ' ')"
                fi
        done
done

# libvirt upgraded from 9.0 to 11.3 under an installed sluice: the trigger
# takes the include out; what remains is what libvirt 11.3's postinst keeps
# (an empty local file goes, as it deletes it).
for st in empty admin; do
        case=upgrade-9.0-to-11.3/$st
        make_root 9.0 "$st"
        admin_before=$( [ -f "$local_file" ] && cat "$local_file"; echo .)
        run sluice.postinst configure || continue
        abstraction_text 11.3 >"$abstractions/libvirt-qemu"
        run sluice.postinst triggered /etc/apparmor.d/abstractions/libvirt-qemu || continue
        if [ "$st" = empty ]; then
                if [ ! -e "$local_file" ] && [ ! -e "$local_dir" ]; then
                        pass "$case: triggered removed the include, then the empty local file and folder (as libvirt 11.3's postinst does)"
                else
                        fail_later "$case: left $(ls -la "$local_dir" 2>&1 | tr '\n' ' ')"
                fi
        elif [ "$(cat "$local_file"; echo .)" = "$admin_before" ] && [ "$(stat -c %a "$local_file")" = 640 ]; then
                pass "$case: triggered removed the include; the admin's lines are as they were"
        else
                fail_later "$case: the local file is now: $(cat -A "$local_file")"
        fi
done

# libvirt purged under an installed sluice (its postrm deletes the local
# file): the trigger finds no abstraction and writes nothing.
make_root 9.0 empty
run sluice.postinst configure
rm -rf "$abstractions/libvirt-qemu" "$local_dir"
before=$(state)
run sluice.postinst triggered /etc/apparmor.d/abstractions/libvirt-qemu &&
        if [ "$(state)" = "$before" ]; then
                pass "libvirt purged: triggered writes nothing"
        else
                fail_later "libvirt purged: triggered changed: $(diff <(echo "$before") <(state) | tr '\n' ' ')"
        fi

# The reload, on this machine's own root (DPKG_ROOT unset, the root a
# scratch one through the copy's fake default).
reload_case() { # NAME ENABLED EXPECTED-LOG [ARG…]
        local name=$1 enabled=$2 expected=$3
        shift 3
        echo "$enabled" >"$work/sys/enabled"
        : >"$work/parser.log"
        if env -u DPKG_ROOT sh "$work/sluice.postinst" "$@" >"$work/out" 2>&1; then
                if [ "$(cat "$work/parser.log")" = "$expected" ]; then
                        pass "reload, $name: apparmor_parser ran ${expected:+as: }$(tr '\n' ';' <<<"${expected:-not at all}")"
                else
                        fail_later "reload, $name: apparmor_parser ran as: $(tr '\n' ';' <"$work/parser.log"), expected: $(tr '\n' ';' <<<"$expected")"
                fi
        else
                fail_later "reload, $name: postinst $* failed: $(cat "$work/out")"
        fi
}
make_root 9.0 empty
vm1=libvirt-11111111-2222-3333-4444-555555555555
vm2=libvirt-66666666-7777-8888-9999-000000000000
vm3=libvirt-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee
for vm in $vm1 $vm2 $vm3; do
        printf '#include <tunables/global>\nprofile %s {\n}\n' "$vm" >"$scratch/etc/apparmor.d/libvirt/$vm"
done
# Two running VMs (one with a child profile), one stopped, libvirtd's own and others.
cat >"$work/sys/profiles" <<LIST
$vm2 (complain)
/usr/sbin/libvirtd (enforce)
$vm1//passt (enforce)
virt-aa-helper (enforce)
$vm1 (enforce)
libvirt-not-a-uuid (enforce)
lsb_release (enforce)
LIST
P=$scratch/etc/apparmor.d/libvirt
reload_case "AppArmor on, configure" Y "-r $P/$vm1"$'\n'"-r $P/$vm2" configure
reload_case "AppArmor off" N "" configure
reload_case "AppArmor on, triggered, nothing to change" Y "" triggered /etc/apparmor.d/abstractions/libvirt-qemu
rm -f "$local_file"
install -m 0644 /dev/null "$local_file"
reload_case "AppArmor on, triggered by a new libvirt" Y "-r $P/$vm1"$'\n'"-r $P/$vm2" triggered /etc/apparmor.d/abstractions/libvirt-qemu
echo Y >"$work/sys/enabled"
: >"$work/parser.log"
if DPKG_ROOT=$scratch sh "$work/sluice.postinst" configure >"$work/out" 2>&1 && [ ! -s "$work/parser.log" ]; then
        pass "reload, DPKG_ROOT set: apparmor_parser ran not at all"
else
        fail_later "reload, DPKG_ROOT set: $(cat "$work/parser.log" "$work/out")"
fi
echo "$vm1" >"$work/parser-fails"
: >"$work/parser.log"
if env -u DPKG_ROOT sh "$work/sluice.postinst" configure >"$work/out" 2>&1; then
        if grep -q "warning: cannot reload $P/$vm1" "$work/out" && grep -qx -- "-r $P/$vm2" "$work/parser.log"; then
                pass "reload, the parser failing for one VM: a warning, the next VM reloaded, the install succeeds"
        else
                fail_later "reload, the parser failing: no warning or no second reload: $(cat "$work/out" "$work/parser.log")"
        fi
else
        fail_later "reload, the parser failing for one VM failed the postinst: $(cat "$work/out")"
fi
# --- through dpkg itself ------------------------------------------------------
# Real dpkg in a scratch root (--root, scripts run with DPKG_ROOT): a package
# with sluice's scripts, trigger and snippet, and a stand-in for libvirt's
# package that ships the abstraction and treats the local file as libvirt's
# postinst and postrm do (9.0: create it empty; 11.3: delete it when empty).
# Does dpkg run the file trigger when another package installs, upgrades or
# purges the abstraction, and are the files as libvirt alone leaves them?
if command -v dpkg >/dev/null && command -v dpkg-deb >/dev/null; then
        pkgs=$work/pkgs
        mkdir -p "$pkgs"
        build_pkg() { # NAME VERSION DIR
                mkdir -p "$3/DEBIAN"
                printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: test <test@example.invalid>\nDescription: test package\n' \
                        "$1" "$2" >"$3/DEBIAN/control"
                (cd "$3" && find etc -type f | sed 's|^|/|' >DEBIAN/conffiles)
                dpkg-deb -b --root-owner-group "$3" "$pkgs/$1_$2.deb" >/dev/null || fail "cannot build $1 $2"
        }
        d=$pkgs/sluice
        mkdir -p "$d/etc/apparmor.d/abstractions/libvirt-qemu.d"
        cp "$top/data/apparmor/sluice" "$d/etc/apparmor.d/abstractions/libvirt-qemu.d/sluice"
        mkdir -p "$d/DEBIAN"
        cp "$work/sluice.postinst" "$d/DEBIAN/postinst"
        cp "$work/sluice.postrm" "$d/DEBIAN/postrm"
        grep -v '^#' "$top/debian/sluice.triggers" >"$d/DEBIAN/triggers"
        chmod 755 "$d/DEBIAN/postinst" "$d/DEBIAN/postrm"
        build_pkg sluice 1 "$d"
        for version in 9.0 11.3; do
                d=$pkgs/libvirt-$version
                mkdir -p "$d/etc/apparmor.d/abstractions" "$d/DEBIAN"
                abstraction_text "$version" >"$d/etc/apparmor.d/abstractions/libvirt-qemu"
                # What libvirt's own scripts do to the local file (the test's own rewrite).
                cat >"$d/DEBIAN/postinst" <<SCRIPT
#!/bin/sh
set -e
a="\$DPKG_ROOT/etc/apparmor.d/abstractions/libvirt-qemu"
l="\$DPKG_ROOT/etc/apparmor.d/local/abstractions/libvirt-qemu"
[ "\$1" = configure ] || exit 0
if [ "$version" = 9.0 ]; then
        if [ -e "\$a" ] && [ ! -e "\$l" ]; then mkdir -p "\${l%/*}"; install -m 0644 /dev/null "\$l"; fi
else
        [ -s "\$l" ] || rm -f "\$l"
        [ ! -d "\${l%/*}" ] || rmdir --ignore-fail-on-non-empty "\${l%/*}"
fi
SCRIPT
                cat >"$d/DEBIAN/postrm" <<SCRIPT
#!/bin/sh
set -e
a="\$DPKG_ROOT/etc/apparmor.d/abstractions/libvirt-qemu"
l="\$DPKG_ROOT/etc/apparmor.d/local/abstractions/libvirt-qemu"
if [ "\$1" = purge ] && [ ! -e "\$a" ]; then rm -f "\$l"; rmdir --ignore-fail-on-non-empty "\${l%/*}" 2>/dev/null || :; fi
SCRIPT
                chmod 755 "$d/DEBIAN/postinst" "$d/DEBIAN/postrm"
                build_pkg libvirt-policy "$version" "$d"
        done
        new_dpkg_root() { # ROOT
                rm -rf "$1"
                mkdir -p "$1/var/lib/dpkg/info" "$1/var/lib/dpkg/updates" "$1/var/lib/dpkg/triggers" "$1/etc/apparmor.d"
                : >"$1/var/lib/dpkg/status"
        }
        dpkg_in() { # ROOT ARG…
                dpkg --root="$1" --force-script-chrootless --log=/dev/null "${@:2}" >>"$work/dpkg.log" 2>&1 ||
                        { tail -n 20 "$work/dpkg.log"; fail "dpkg --root=$1 ${*:2} failed"; }
        }
        etc_state() { (scratch=$1/etc state); }
        libvirt_only=$work/dpkg-libvirt-only
        scratch_dpkg=$work/dpkg-root
        : >"$work/dpkg.log"

        # sluice first, libvirt 9.0 after it: the trigger adds the include.
        new_dpkg_root "$scratch_dpkg"
        new_dpkg_root "$libvirt_only"
        dpkg_in "$scratch_dpkg" -i "$pkgs/sluice_1.deb"
        dpkg_in "$scratch_dpkg" -i "$pkgs/libvirt-policy_9.0.deb"
        dpkg_in "$libvirt_only" -i "$pkgs/libvirt-policy_9.0.deb"
        if grep -q 'Processing triggers for sluice' "$work/dpkg.log"; then
                pass "dpkg: libvirt's package installing the abstraction runs sluice's file trigger"
        else
                fail_later "dpkg: no trigger processing for sluice: $(cat "$work/dpkg.log")"
        fi
        local_file=$scratch_dpkg/etc/apparmor.d/local/abstractions/libvirt-qemu
        n=$(pairs)
        [ "$n" = 1 ] && pass "dpkg: libvirt 9.0 installed after sluice: one marked include in the local file" ||
                fail_later "dpkg: libvirt 9.0 installed after sluice: $n marked includes"
        # libvirt upgraded to 11.3: the include goes, and so does the empty file.
        dpkg_in "$scratch_dpkg" -i "$pkgs/libvirt-policy_11.3.deb"
        dpkg_in "$libvirt_only" -i "$pkgs/libvirt-policy_11.3.deb"
        if [ ! -e "$local_file" ] && [ "$(cd "$scratch_dpkg/etc/apparmor.d" && find local 2>/dev/null)" = \
                "$(cd "$libvirt_only/etc/apparmor.d" && find local 2>/dev/null)" ]; then
                pass "dpkg: libvirt upgraded to 11.3: the trigger took the include out; local/ is as libvirt alone leaves it"
        else
                fail_later "dpkg: after the upgrade to 11.3: $(cd "$scratch_dpkg/etc/apparmor.d" && find local -ls 2>&1 | tr '\n' ' ')"
        fi
        dpkg_in "$scratch_dpkg" -P sluice
        a=$(etc_state "$scratch_dpkg") b=$(etc_state "$libvirt_only")
        [ "$a" = "$b" ] && pass "dpkg: sluice purged: /etc/apparmor.d is byte for byte what libvirt alone leaves" ||
                fail_later "dpkg: after purging sluice: $(diff <(echo "$b") <(echo "$a") | tr '\n' ' ')"

        # libvirt 9.0 first, sluice after it, then libvirt purged under sluice.
        new_dpkg_root "$scratch_dpkg"
        dpkg_in "$scratch_dpkg" -i "$pkgs/libvirt-policy_9.0.deb"
        before=$(etc_state "$scratch_dpkg")
        dpkg_in "$scratch_dpkg" -i "$pkgs/sluice_1.deb"
        dpkg_in "$scratch_dpkg" -i "$pkgs/sluice_1.deb"
        n=$(pairs)
        [ "$n" = 1 ] && pass "dpkg: sluice installed (and reinstalled) after libvirt 9.0: one marked include" ||
                fail_later "dpkg: sluice after libvirt 9.0: $n marked includes"
        dpkg_in "$scratch_dpkg" -P sluice
        [ "$(etc_state "$scratch_dpkg")" = "$before" ] &&
                pass "dpkg: sluice purged: /etc/apparmor.d is byte for byte as libvirt 9.0 left it" ||
                fail_later "dpkg: after purging sluice: $(diff <(echo "$before") <(etc_state "$scratch_dpkg") | tr '\n' ' ')"
        dpkg_in "$scratch_dpkg" -i "$pkgs/sluice_1.deb"
        dpkg_in "$scratch_dpkg" -P libvirt-policy
        left=$(cd "$scratch_dpkg/etc/apparmor.d" && find local/abstractions abstractions/libvirt-qemu 2>/dev/null)
        [ -z "$left" ] && pass "dpkg: libvirt purged under sluice: the trigger wrote nothing back (no local file left)" ||
                fail_later "dpkg: libvirt purged under sluice, left: $left"
else
        note "SKIP the cases through dpkg: no dpkg or dpkg-deb here"
fi
finish
