# SPDX-License-Identifier: GPL-2.0-or-later
# workload-lib.sh — the check helpers of every workload (busybox sh), in the
# guest as /workload-lib.sh (run-guest.sh puts it there); a workload starts
# with `. /workload-lib.sh`.  One line per check: `PASS name` or
# `FAIL name: detail`; the workload ends with DONE.

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
# check NAME COMMAND… — PASS when COMMAND succeeds, else FAIL with its output
check() {
        name=$1
        shift
        if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tr '\n' ' ')"; fi
}
# same NAME EXPECTED ACTUAL
same() {
        if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}
# fails_with NAME MESSAGE COMMAND… — COMMAND must fail and print MESSAGE
fails_with() {
        name=$1 msg=$2
        shift 2
        if out=$("$@" 2>&1); then
                fail "$name" "succeeded, expected '$msg'"
        else
                case "$out" in *"$msg"*) pass "$name" ;; *) fail "$name" "expected '$msg', got: $out" ;; esac
        fi
}
# give_up NAME DETAIL — a FAIL after which nothing else can be checked
give_up() {
        fail "$1" "$2"
        echo DONE
        exit 1
}
# mount_share — mounts the share on /mnt ($SLUICE_MOUNT) or gives up
mount_share() {
        $SLUICE_MOUNT || give_up mount "$SLUICE_MOUNT failed"
}
