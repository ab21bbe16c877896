#!/usr/bin/env bash
# demo.sh BUILD — `make demo`: shares a demo folder with a throwaway Linux
# guest through sluice-fs, and shows what happened on both sides.
#
# Steps: build the guest image; make a demo folder; start sluice-fs on it as an
# ordinary user (as root: $SLUICE_TEST_USER, default sluice-test, created if
# missing); boot the guest, which lists the share, writes a file and powers off;
# show on the host the guest's listing, the file the guest wrote and the
# worker's counters (sluice-fs prints them on SIGUSR1).  Nothing is left
# running; the exit status is non-zero if any step failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
build=$(cd "$build" 2>/dev/null && pwd) || { echo "demo: no build directory '${1:-build}' (run make build)" >&2; exit 1; }

bold=; plain=
if [ -t 1 ]; then bold=$(printf '\033[1m'); plain=$(printf '\033[0m'); fi
step=0
say() { step=$((step + 1)); echo; echo "${bold}==> Step $step: $*${plain}"; }
die() { echo; echo "${bold}demo FAILED: $*${plain}" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP
chmod 0755 "$work"

say "checking what the demo needs"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (make deps installs it)"
sluice_fs=$build/daemon/sluice-fs
[ -x "$sluice_fs" ] || die "$sluice_fs is not built (make build)"
echo "sluice-fs: $sluice_fs"
echo "QEMU:      $(qemu-system-x86_64 --version | head -1)"

say "building the guest image (Debian kernel + busybox initramfs)"
image=$build/tests/guest/image
t=$(date +%s.%N)
"$here/build-image.sh" "$image" || die "build-image.sh failed"
printf 'image:     %s (kernel %s), ready in %.1f s\n' "$image" "$(cat "$image/kernel-version")" \
        "$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"

say "making a demo folder to share"
share=$work/share
mkdir -p "$share/photos"
echo "This folder lives on the host and is shared with the VM by sluice-fs." >"$share/README.txt"
printf '# Notes\n- shared over virtiofs\n' >"$share/notes.md"
head -c 200000 /dev/urandom >"$share/photos/holiday.jpg"
head -c 120000 /dev/urandom >"$share/photos/cat.jpg"
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
        user=${SLUICE_TEST_USER:-sluice-test}
        if ! id -u "$user" >/dev/null 2>&1; then
                echo "creating the ordinary user $user to run sluice-fs"
                useradd --create-home --shell /bin/bash --user-group "$user" || die "useradd $user failed"
        fi
        export SLUICE_TEST_USER=$user
        chown -R "$user:" "$share"
fi
(cd "$share" && ls -lR .) | sed 's/^/host:   /'
echo "sluice-fs will run as the ordinary user '$user'"

say "starting sluice-fs and booting a throwaway guest (TCG, a few seconds)"
console=$work/console.log daemon_log=$work/sluice-fs.log
"$here/run-guest.sh" --image "$image" --backend sluice --sluice-fs "$sluice_fs" \
        --shared-dir "$share" --tag demo --timeout 120 \
        --console "$console" --daemon-log "$daemon_log" "$here/demo-workload.sh"
status=$?

say "what the guest saw: its listing of the share (and df)"
tr -d '\r' <"$console" | sed -n 's/^guest:   //p' | sed 's/^/  /'

say "on the host: the file the guest wrote"
if [ -f "$share/hello-from-guest.txt" ]; then
        ls -l "$share/hello-from-guest.txt" "$share/some-data.bin" | sed 's/^/  /'
        sed 's/^/  | /' "$share/hello-from-guest.txt"
        owner=$(stat -c %U "$share/hello-from-guest.txt")
        echo "  owned by '$owner' on the host (the user sluice-fs runs as)"
        [ "$owner" = "$user" ] || { echo "  expected owner '$user'"; status=1; }
else
        echo "  hello-from-guest.txt is missing!"
        status=1
fi

say "the worker's counters (sluice-fs on SIGUSR1)"
counters=$(sed -n '/^--- run-guest: SIGUSR1/,/^--- run-guest: SIGTERM/{/^--- run-guest:/d;p}' "$daemon_log")
if [ -n "$counters" ]; then
        echo "$counters" | sed 's/^/  /'
else
        echo "  (sluice-fs printed no counters; its whole log follows)"
        sed 's/^/  /' "$daemon_log"
        status=1
fi

say "cleaning up"
echo "QEMU and sluice-fs have exited; removing $work"
if [ "$status" = 0 ]; then
        echo; echo "${bold}demo OK: the guest listed the share, wrote a file the host can read, and sluice-fs counted it all.${plain}"
else
        die "see the messages above"
fi
