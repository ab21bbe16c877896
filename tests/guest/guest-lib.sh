# guest-lib.sh — the host side's common start of a guest test (bash), sourced
# by guest-*.sh: skips (exit 77) without QEMU or a guest kernel, sets `here`
# and `backend` ($SLUICE_GUEST_BACKEND, sluice by default), makes the test's
# temporary files (removed at exit) and checks what the guest left behind.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
backend=${SLUICE_GUEST_BACKEND:-sluice}

command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 is not installed"; exit 77; }
ls /boot/vmlinuz-* >/dev/null 2>&1 || { echo "SKIP: no guest kernel in /boot"; exit 77; }

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

failed=0
# host_check NAME EXPECTED ACTUAL — PASS/FAIL line; a FAIL sets failed=1
host_check() {
        if [ "$2" = "$3" ]; then echo "PASS host-$1"; else echo "FAIL host-$1: expected '$2', got '$3'"; failed=1; fi
}
