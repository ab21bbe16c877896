# SPDX-License-Identifier: GPL-2.0-or-later
# guest-lib.sh — the host side's common start of a guest test (bash), sourced
# by guest-*.sh: sources tests/lib.sh (pass, fail_later, skip…), skips (exit
# 77) without QEMU or a guest kernel, sets `here` and `backend`
# ($SLUICE_GUEST_BACKEND, sluice by default), makes the test's temporary files
# (removed at exit) and checks what the guest left behind.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
backend=${SLUICE_GUEST_BACKEND:-sluice}

need_tools qemu-system-x86_64
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip "no guest kernel in /boot"

guest_tmp_paths=()
trap 'rm -rf "${guest_tmp_paths[@]}"' EXIT
trap 'exit 1' INT TERM HUP
# guest_tmp VAR NAME [-d] — a temporary file (directory with -d) named after NAME in $VAR
guest_tmp() {
        local path
        path=$(mktemp ${3:+"$3"} "${TMPDIR:-/tmp}/sluice-$2.XXXXXX") || exit 1
        guest_tmp_paths+=("$path")
        printf -v "$1" '%s' "$path"
}

# host_check NAME EXPECTED ACTUAL — pass "host-NAME", or fail_later saying
# what was expected and what was found
host_check() {
        if [ "$2" = "$3" ]; then pass "host-$1"; else fail_later "host-$1: expected '$2', got '$3'"; fi
}
