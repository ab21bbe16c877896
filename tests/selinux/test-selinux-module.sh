#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The SELinux module (data/selinux/sluice.te) grants a confined QEMU exactly
# what connecting to a worker's socket needs, and loads where one of its
# domains is missing.  Suite 'selinux'.
#
#   tests/selinux/test-selinux-module.sh WORKDIR
#
# 1. `make selinux` builds sluice.pp with the installed devel Makefile (the
#    reference policy's headers on Debian), with the real tools.
# 2. The package is turned back into CIL (policycoreutils' hll/pp) and every
#    statement in it is accounted for: the allow rules are exactly EXPECTED,
#    each source domain in an optional block of its own that requires it,
#    and nothing else but the requirements that optional blocks generate.
#    The same check must reject two broken modules (an extra rule; both
#    domains in one block), so that it is known to catch them.
# 3. Where Debian's reference policy is installed (selinux-policy-default,
#    secilc): the module is linked with all of its modules into a kernel
#    policy (neverallow rules checked), the block of a domain the policy
#    lacks must be the only one turned off, and the resolved policy must hold
#    the rules of the others.  As root, with a policy store, `semodule -i`
#    installs it into a scratch copy of that store (nothing is loaded).
# No SELinux kernel is needed and nothing on the machine is changed.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

# make is run here as a user runs it, whatever make (make check) runs this test.
unset MAKEFLAGS MFLAGS MAKELEVEL
src=${SLUICE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
work=${1:?usage: $0 WORKDIR}
devel=/usr/share/selinux/devel/Makefile
pp2cil=/usr/libexec/selinux/hll/pp

[ -f "$devel" ] || skip "no $devel (Debian package selinux-policy-dev)"
need_tools checkmodule semodule_package m4 make
[ -x "$pp2cil" ] || skip "no $pp2cil (Debian package policycoreutils)"

# Every permission the module grants: source target class permission.
EXPECTED='svirt_t unconfined_t unix_stream_socket connectto
svirt_t user_tmp_t sock_file write
svirt_tcg_t unconfined_t unix_stream_socket connectto
svirt_tcg_t user_tmp_t sock_file write'
# The types its blocks may require.
REQUIRED_TYPES=' svirt_t svirt_tcg_t unconfined_t user_tmp_t '

rm -rf "$work"
mkdir -p "$work"

# check_cil CIL — checks the module in CIL against EXPECTED: prints one line
# per fault and returns 1 if there was any.  On success it writes
# CIL.blocks: "OPTIONAL-NAME SOURCE-DOMAIN" per block.
check_cil() {
        local cil=$1 report
        # The converter writes one statement per line, optional blocks opened
        # on a line of their own and closed by a lone ")": anything else is
        # reported, not guessed at.
        report=$(awk -v required="$REQUIRED_TYPES" -v blocks="$cil.blocks" -v rules="$cil.rules" '
                function fault(msg) { printf "%s:%d: %s: %s\n", FILENAME, FNR, msg, line; bad = 1 }
                {
                        line = $0
                        sub(/^[ \t]+/, "", line); sub(/[ \t]+$/, "", line)
                        if (line == "" || line ~ /^;/) next
                }
                line ~ /^\(optional [A-Za-z0-9_]+$/ {
                        if (opt != "") { fault("an optional block inside another"); next }
                        opt = substr(line, 11); nopt++; next
                }
                line == ")" {
                        if (opt == "") fault("a closing parenthesis outside any block")
                        opt = ""; next
                }
                {
                        nopen = gsub(/\(/, "(", line); nclose = gsub(/\)/, ")", line)
                        if (nopen != nclose) { fault("a statement over several lines"); next }
                }
                opt == "" && line ~ /^\(roleattributeset cil_gen_require system_r\)$/ { next }
                opt != "" && line ~ /^\(typeattributeset cil_gen_require [A-Za-z0-9_]+\)$/ {
                        t = line; sub(/^\(typeattributeset cil_gen_require /, "", t); sub(/\)$/, "", t)
                        if (index(required, " " t " ") == 0) fault("requires a type it has no use for")
                        req[opt, t] = 1; next
                }
                opt != "" && line ~ /^\(allow [A-Za-z0-9_]+ [A-Za-z0-9_]+ \([a-z_]+ \([a-z_ ]+\)\)\)$/ {
                        s = line; gsub(/[()]/, "", s); n = split(s, w, " ")
                        for (i = 5; i <= n; i++) print w[2], w[3], w[4], w[i] >rules
                        if ((opt, "src") in src && src[opt, "src"] != w[2])
                                fault("two source domains share an optional block")
                        src[opt, "src"] = w[2]; srcs[opt] = w[2]
                        if (w[2] in owner && owner[w[2]] != opt)
                                fault("a domain has rules in two optional blocks")
                        owner[w[2]] = opt
                        next
                }
                { fault(opt == "" ? "a statement outside the optional blocks" : "a statement other than an allow rule or a requirement") }
                END {
                        if (opt != "") { print FILENAME ": an optional block is not closed"; bad = 1 }
                        for (o in srcs) {
                                if (!((o, srcs[o]) in req)) {
                                        printf "%s: block %s does not require its domain %s\n", FILENAME, o, srcs[o]; bad = 1
                                }
                                print o, srcs[o] >blocks
                        }
                        exit bad
                }' "$cil") || { printf '%s\n' "$report"; return 1; }
        local granted
        granted=$(sort -u "$cil.rules")
        if [ "$granted" != "$(sort <<<"$EXPECTED")" ]; then
                comm -23 <(printf '%s\n' "$granted") <(sort <<<"$EXPECTED") | sed 's/^/grants more: /'
                comm -13 <(printf '%s\n' "$granted") <(sort <<<"$EXPECTED") | sed 's/^/lacks: /'
                return 1
        fi
        [ "$(wc -l <"$cil.blocks")" = 2 ] || { echo "not one optional block per domain"; return 1; }
}

# 1. The build, as a user runs it.
t=$EPOCHREALTIME
if out=$(make -s -C "$src" --no-print-directory selinux SELINUX_BUILD="$work/build" 2>&1) &&
        [ -s "$work/build/sluice.pp" ]; then
        pass "make selinux built sluice.pp ($(since "$t") s)"
else
        printf '%s\n' "$out"
        fail "make selinux did not build sluice.pp"
fi

# 2. What the package grants.
"$pp2cil" "$work/build/sluice.pp" "$work/sluice.cil" || fail "$pp2cil cannot read sluice.pp"
if report=$(check_cil "$work/sluice.cil"); then
        pass "sluice.pp grants exactly $(wc -l <<<"$EXPECTED") permissions, one optional block per domain:" \
                "$(sort -k2 "$work/sluice.cil.blocks" | awk '{ printf "%s%s", sep, $2; sep = ", " }')"
else
        printf '%s\n' "$report"
        fail_later "sluice.pp grants other than what connecting needs"
fi

# The same check on two broken modules, built the same way.
broken() { # NAME SED-ARGUMENT… — builds a variant of sluice.te; prints its CIL path
        local dir=$work/broken-$1
        shift
        mkdir -p "$dir"
        sed "$@" "$src/data/selinux/sluice.te" >"$dir/sluice.te"
        make -s -C "$dir" -f "$devel" sluice.pp >"$dir/make.log" 2>&1 &&
                "$pp2cil" "$dir/sluice.pp" "$dir/sluice.cil" && echo "$dir/sluice.cil"
}
if cil=$(broken extra-rule -e '/allow svirt_t user_tmp_t:sock_file write;/a\	allow svirt_t user_tmp_t:dir search;'); then
        if check_cil "$cil" >"$cil.report"; then
                fail_later "the check let an extra rule (dir search) through"
        else
                pass "the check rejects an extra rule: $(head -n 1 "$cil.report" | tr -s ' ')"
        fi
else
        fail_later "could not build the module with an extra rule"
fi
# Both domains under the first block: a policy without svirt_tcg_t would
# then turn off the rules of svirt_t too.
if cil=$(broken one-block -e '/type svirt_t, unconfined_t, user_tmp_t;/a\		type svirt_tcg_t;' \
        -e '/allow svirt_t unconfined_t:unix_stream_socket connectto;/a\	allow svirt_tcg_t unconfined_t:unix_stream_socket connectto;'); then
        if check_cil "$cil" >"$cil.report"; then
                fail_later "the check let two domains share a block"
        else
                pass "the check rejects two domains in one block: $(head -n 1 "$cil.report")"
        fi
else
        fail_later "could not build the module with two domains in one block"
fi

# 3. Linked into the reference policy Debian ships.
refpol=/usr/share/selinux/default
if ! command -v secilc >/dev/null || ! command -v secil2conf >/dev/null ||
        ! [ -f "$refpol/base.pp.bz2" ] || ! command -v bzip2 >/dev/null; then
        note "not linked: needs secilc and Debian's selinux-policy-default (in the Makefile's DEPS_TEST)"
        finish
fi
t=$EPOCHREALTIME
mkdir -p "$work/refpolicy"
for pp in "$refpol"/*.pp.bz2; do
        name=$(basename "$pp" .pp.bz2)
        bzip2 -dc "$pp" | "$pp2cil" >"$work/refpolicy/$name.cil" ||
                fail "$pp2cil cannot read $pp"
done
nmods=$(find "$work/refpolicy" -name '*.cil' | wc -l)
if grep -q '^(type svirt_tcg_t)' "$work/refpolicy"/*.cil; then
        absent=''
else
        absent=svirt_tcg_t
fi
note "the reference policy: $nmods modules; svirt_tcg_t ${absent:+not }defined"
# -vv names every optional block it turns off and why.
if secilc -vv -m -M true -o "$work/policy.bin" -f /dev/null \
        "$work/refpolicy"/*.cil "$work/sluice.cil" >"$work/secilc.log" 2>&1; then
        pass "linked with $nmods reference policy modules into a kernel policy," \
                "neverallow rules checked ($(since "$t") s)"
else
        grep -v '^Parsing\|Disabling optional\|Failed to resolve' "$work/secilc.log" | tail -n 20
        fail_later "secilc cannot link sluice.cil into the reference policy"
fi
while read -r block domain; do
        off=$(grep -c "Disabling optional '$block' at $work/sluice.cil" "$work/secilc.log")
        if [ "$domain" = "$absent" ]; then
                if [ "$off" -gt 0 ]; then
                        pass "the block of $domain, which the policy lacks, is turned off"
                else
                        fail_later "the block of $domain stayed on though the policy lacks $domain"
                fi
        elif [ "$off" = 0 ]; then
                pass "the block of $domain stays on"
        else
                grep "$work/sluice.cil" "$work/secilc.log" | head -n 5
                fail_later "the block of $domain is turned off though the policy has $domain"
        fi
done <"$work/sluice.cil.blocks"
# The rules the resolved policy holds, as secil2conf writes them out.
if secil2conf -M true -o "$work/policy.conf" "$work/refpolicy"/*.cil "$work/sluice.cil" \
        >"$work/secil2conf.log" 2>&1; then
        want=$(grep -v "^${absent:-none} " <<<"$EXPECTED" | sort)
        have=$(awk '$1 == "allow" && ($2 == "svirt_t" || $2 == "svirt_tcg_t") &&
                ($3 == "user_tmp_t" || $3 == "unconfined_t") && $4 == ":" {
                        gsub(/[{};]/, ""); for (i = 6; i <= NF; i++) print $2, $3, $5, $i }' \
                "$work/policy.conf" | sort -u)
        missing=$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$have"))
        if [ -z "$missing" ]; then
                pass "the linked policy holds the rules of ${absent:+every domain but $absent:}" \
                        "$(tr '\n' ';' <<<"$want" | sed 's/;$//; s/;/; /g')"
        else
                printf 'missing: %s\n' "$missing"
                fail_later "the linked policy lacks rules of the module"
        fi
else
        tail -n 20 "$work/secil2conf.log"
        fail_later "secil2conf cannot resolve the reference policy with the module"
fi

# `semodule -i`, as make selinux-install runs it, into a scratch copy of the
# policy store (root: the store is root's alone); -n: nothing is loaded.
store=/var/lib/selinux/default
if [ "$(id -u)" = 0 ] && [ -d "$store/active" ] && [ -d /etc/selinux/default ] &&
        command -v semodule >/dev/null; then
        t=$EPOCHREALTIME
        root=$work/root
        mkdir -p "$root/var/lib/selinux" "$root/etc"
        { cp -a "$store" "$root/var/lib/selinux/" && cp -a /etc/selinux "$root/etc/"; } ||
                fail "cannot copy the policy store"
        if semodule -p "$root" -s default -n -i "$work/build/sluice.pp" >"$work/semodule.log" 2>&1 &&
                semodule -p "$root" -s default -l | grep -qx sluice; then
                pass "semodule -i installs it into a copy of the policy store ($(since "$t") s)"
        else
                cat "$work/semodule.log"
                fail_later "semodule -i refuses the module"
        fi
        rm -rf "$root"
else
        note "semodule -i not tried: needs root and Debian's policy store in $store"
fi

finish
