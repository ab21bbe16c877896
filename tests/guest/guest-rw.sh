#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-rw.sh — a Linux guest mounts a writable share and exercises it
# (workload-rw.sh); then the host checks what the guest left behind.
#
# Backend: $SLUICE_GUEST_BACKEND (sluice by default; "virtiofsd" runs the same
# test against QEMU's legacy daemon, which is how this harness was validated).
# Guest kernel and queues: $SLUICE_GUEST_KERNEL_SERIES (6.1, Debian 12's, by default; 6.12 is
# Debian 13's, fetched by bench/fetch-trixie.sh) and $SLUICE_GUEST_QUEUES request queues (with
# as many vCPUs, so that the guest spreads its requests); with more than one queue the worker's
# counters must show requests on every request queue.
# Exit 77 when QEMU or the guest kernel is missing (or Debian 13's cannot be fetched).
. "$(dirname "$0")/guest-lib.sh"
many=3000
kernel=${SLUICE_GUEST_KERNEL_SERIES:-6.1}
queues=${SLUICE_GUEST_QUEUES:-1}
guest_tmp share rw -d
guest_tmp console rw-console
guest_tmp daemon_log rw-daemon

# ---- what the guest finds in the share ------------------------------------------------
mkdir "$share/guest" "$share/many"
head -c 3145728 /dev/urandom >"$share/from-host.bin"
host_sha=$(sha256sum "$share/from-host.bin" | cut -d' ' -f1)
(cd "$share/many" && for i in $(seq -f %04g 1 "$many"); do echo "file $i" >"f$i"; done)

owner=$(id -un)
daemon_args=()
case "$backend" in
sluice|rust-virtiofsd) daemon_args=(--daemon-arg --xattr) ;;
virtiofsd) daemon_args=(--daemon-arg -o --daemon-arg xattr) ;;
esac
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ] && [ "$backend" = sluice ]; then
        owner=$SLUICE_TEST_USER
        chown -R "$owner:" "$share"
fi
idmap_env=()
if [ "$backend" = sluice ]; then
        # A guest user sees the worker's files as its own (workload-rw.sh); its
        # id differs from the worker's so that the mapping really maps.
        guest_id=1000
        [ "$(id -u "$owner")" = 1000 ] || [ "$(id -g "$owner")" = 1000 ] && guest_id=2000
        daemon_args+=(--daemon-arg "--translate-uid=$guest_id:$(id -u "$owner")"
                      --daemon-arg "--translate-gid=$guest_id:$(id -g "$owner")")
        idmap_env=(--env IDMAP_UID=$guest_id)
fi

"$here/run-guest.sh" --shared-dir "$share" --backend "$backend" "${daemon_args[@]}" \
        --kernel "$kernel" --queues "$queues" --smp "$queues" \
        --env HOST_SHA256="$host_sha" --env MANY_COUNT="$many" "${idmap_env[@]}" \
        --console "$console" --daemon-log "$daemon_log" --timeout 200 "$here/workload-rw.sh"
status=$?
[ "$status" = 77 ] && exit 77
host_check guest-kernel "$kernel" "$(tr -d '\r' <"$console" | sed -n 's/^GUEST-KERNEL \([0-9]*\.[0-9]*\).*/\1/p')"

# ---- every request queue served requests (the guest spreads them from Linux 6.10 on) ----
if [ "$backend" = sluice ] && [ "$queues" -gt 1 ]; then
        counters=$(sed -n '/^--- run-guest: SIGUSR1/,/^--- run-guest: SIGTERM/p' "$daemon_log")
        for q in $(seq 1 "$queues"); do
                n=$(echo "$counters" | awk -v k="queue$q-requests" '$1 == k { print $2 }')
                echo "request queue $q: ${n:-no counter} requests"
                if [ -z "$n" ] || [ "$n" -eq 0 ]; then
                        fail_later "host-queue$q-used: the worker served no request on request queue $q"
                else
                        pass "host-queue$q-used"
                fi
        done
fi

# ---- what the host sees afterwards ---------------------------------------------------
g=$share/guest
bigsum=$(tr -d '\r' <"$console" | sed -n 's/^BIGSUM \([0-9a-f]\{64\}\)$/\1/p')
host_check big-checksum "$bigsum" "$( [ -f "$g/big" ] && sha256sum "$g/big" | cut -d' ' -f1)"
[ -n "$bigsum" ] || fail_later "host-big-checksum: the guest printed no BIGSUM line"
host_check big-size 67108864 "$(stat -c %s "$g/big" 2>&1)"
host_check guest-file "written by the guest" "$(cat "$g/from-guest.txt" 2>&1)"
host_check guest-dir inside "$(cat "$g/guest-dir/inner" 2>&1)"
for f in from-guest.txt big guest-dir guest-dir/inner created sl; do
        host_check "owner-$f" "$owner" "$(stat -c %U "$g/$f" 2>&1)"
done
host_check symlink created "$(readlink "$g/sl")"
host_check symlink-absolute /etc/passwd "$(readlink "$g/abs-link")"
host_check mode 755 "$(stat -c %a "$g/created" 2>&1)"
host_check hardlink "1 linked more" "$(stat -c %h "$g/l1") $(tr '\n' ' ' <"$g/l1" | sed 's/ $//')"
host_check rename-exchange "two one" "$(cat "$g/b") $(cat "$g/c")"
host_check removed "" "$(ls "$g" | grep -E '^(a|rw|fifo|falloc|d1|sdir|gmany\..*)$')"
host_check many "$many" "$(ls "$share/many" | wc -l)"
host_check host-file "$host_sha" "$(sha256sum "$share/from-host.bin" | cut -d' ' -f1)"
if [ "$backend" = sluice ]; then
        host_check idmap-file "mine $owner" "$(cat "$g/by-user.txt" 2>&1) $(stat -c %U "$g/by-user.txt" 2>&1)"
        host_check idmap-denied "" "$(ls "$g" | grep by-other)"
fi
if command -v getfattr >/dev/null; then
        host_check xattr from-guest "$(getfattr --absolute-names --only-values -n user.kept "$g/created" 2>&1)"
fi

if [ "$status" != 0 ] || [ "$test_failures" != 0 ]; then
        echo "guest-rw: FAILED (run-guest status $status)"
        exit 1
fi
echo "guest-rw: all checks passed"
