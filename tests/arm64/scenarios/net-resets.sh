#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# net-resets: virtio-net with two queue pairs in an L2 guest with two vCPUs,
# one L2 boot per backend, checked from both sides:
#   vhost-mq  vhost-net (one kernel worker per queue pair), irq=irqfd
#   user-mq   the userspace backend
# In each boot, in order:
#   multiqueue  two pinned iperf3 clients (-P 2 each) both ways; with vhost,
#               both vhost worker threads in L1 must have run (CPU time from
#               /proc/TID/stat): virtio-mmio has one interrupt line per
#               device, so the guest's /proc/interrupts cannot split queues
#   resets      20 `ip link set eth0 down/up` and 3 rmmod/insmod virtio_net
#               in L2, then ping and a checksummed file each way; kvmmio's
#               open fds (ls /proc/PID/fd) the same before and after, and
#               one activation per driver load
#   outage      L1 takes the tap down for 5 s while L2 pings; pings stop,
#               then come back, the guest saw its carrier go and return,
#               and a checksummed file arrives after it
# Then L2 powers off (kvmmio exits 0) with no guest errors counted.
# L2's side: tests/arm64/l2-hooks/50-kvmmio-l2test.sh (kvmmio.l2test=net-resets).
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
# shellcheck source=bench/net-modes.sh
. "$KVMMIO_DIR/bin/net-modes.sh"
scenario_name=net-resets

require_dev /dev/kvm /dev/vhost-net /dev/net/tun
R=$KVMMIO_RESULTS
TAP=kvmtap0 HOST=10.0.0.1 GUEST=10.0.0.2
modes=$(echo "${KVMMIO_NET_MODES:-vhost-mq user-mq}" | tr , " ")  # spaces or commas
RELOADS=3

# "TID TICKS NAME" (utime + stime) for each vhost worker thread in L1. Before
# Linux 6.4 a worker is a kernel thread named vhost-TID after the thread
# that called VHOST_SET_OWNER; from 6.4 on it is a thread of the process,
# named likewise. Only the kvmmio under test uses vhost-net in L1 while this
# runs, so every vhost-* thread is one of its workers. (Matching the TID
# against kvmmio's threads as well failed once in ~10 runs with 0 workers
# found while traffic flowed; the names are printed for such a case.)
# On an arm64 host the scenario has a PID namespace of its own, where those
# kernel threads are not: $KVMMIO_ALL_PROC is the host's whole /proc there.
vhost_ticks() {
    for s in "${KVMMIO_ALL_PROC:-/proc}"/[0-9]*/stat /proc/"$1"/task/[0-9]*/stat; do
        [ -r "$s" ] || continue
        # comm may hold spaces: split at the parentheses.
        sed -n 's/^\([0-9]*\) (\(.*\)) \(.*\)$/\1 \2 \3/p' "$s" 2>/dev/null |
            awk 'substr($2, 1, 6) == "vhost-" { print $1, $14 + $15, $2 }'
    done | sort -u
}
open_fds() { ls "/proc/$1/fd" | wc -l; }
# Waits for L2 to connect to TCP port $1 (L2 retries until L1 listens).
meet_guest() { timeout 600 nc -l -p "$1" </dev/null >/dev/null; }

mkdir -p /tmp/www
dd if=/dev/urandom of=/tmp/www/to-guest bs=64k count=16 2>/dev/null
to_guest_md5=$(md5sum </tmp/www/to-guest | cut -d' ' -f1)
iperf3 -s -p 5201 -D
iperf3 -s -p 5202 -D
httpd -p 8000 -h /tmp/www

run_mode() {
    mode=$1 out=$R/net-resets-$1
    start=$(cut -d' ' -f1 /proc/uptime)
    step "net-resets $mode: boot L2 (2 vCPUs) with --net tap=$TAP,$(net_mode_spec "$mode")"
    start_l2_net "$out" "$(net_mode_spec "$mode")" 2 900 "kvmmio.l2test=net-resets kvmmio.secs=4"
    pid=$l2_pid  # kvmmio
    rm -f /tmp/from-guest
    (sleep 900 | nc -l -p 5001 >/tmp/from-guest) &
    wait_l2_marker "$out.console" NET-UP 900
    fds_before=$(open_fds $pid)
    vhost_ticks $pid >/tmp/ticks-before
    meet_guest 5002 || true  # L2 starts its iperf3 clients
    meet_guest 5003 || true  # L2's traffic is done
    # Counted before L2 goes on (it waits for port 5006): its link cycles
    # and driver reloads restart the backend, and a count taken meanwhile
    # (a scan of /proc, seconds under TCG) missed the workers.
    vhost_ticks $pid >/tmp/ticks-after
    meet_guest 5006 || true  # L2 starts its resets
    step "net-resets $mode: L2 cycles its link and reloads virtio_net"
    meet_guest 5004 || true  # L2's resets and transfers are done
    fds_after=$(open_fds $pid)
    step "net-resets $mode: the tap goes down for 5 s"
    meet_guest 5005 || true  # L2 pings from now on
    sleep 3
    ip link set "$TAP" down
    sleep 5
    ip link set "$TAP" up
    finish_l2_net "$out" "$start"
    secs=$l2_secs c=$out.console j=$out.json msg=$l2_msg
    [ -n "$msg" ] || [ "$(l2_marker "$c" QUEUES)" = "2 rx 2 tx" ] || msg="L2 sees queues '$(l2_marker "$c" QUEUES)', not 2 pairs"
    [ -n "$msg" ] || [ "$(l2_marker "$c" PING)" = ok ] || msg="L2 could not ping L1"
    for dir in tx rx; do
        bps=$(l2_marker "$c" "MQ-IPERF-$dir" | cut -d' ' -f1)
        echo "net-resets $mode: iperf3 2 clients x 2 flows, $dir: $(l2_marker "$c" "MQ-IPERF-$dir")"
        [ -n "$msg" ] || awk "BEGIN { exit !($bps > 0) }" 2>/dev/null || msg="iperf3 $dir failed ($bps)"
    done
    # Per vhost worker: CPU ticks spent during the traffic phase.
    workers=$(wc -l </tmp/ticks-after)
    spread=$(awk 'NR == FNR { t[$1] = $2; next } { printf "%s%d", sep, $2 - t[$1]; sep = " " }' \
        /tmp/ticks-before /tmp/ticks-after)
    echo "net-resets $mode: vhost workers $workers ($(awk '{ printf "%s ", $3 }' /tmp/ticks-after)), CPU ticks during traffic: ${spread:-none}"
    if [ "${mode%%-*}" = vhost ]; then
        [ -n "$msg" ] || [ "$workers" = 2 ] || msg="$workers vhost workers, not one per queue pair"
        for t in $spread; do
            [ -n "$msg" ] || [ "$t" -gt 0 ] || msg="a vhost worker did no work: ticks $spread"
        done
    fi
    [ -n "$msg" ] || [ "$(l2_marker "$c" PING-AFTER-RESETS)" = ok ] || msg="no ping after the resets"
    [ -n "$msg" ] || [ "$(l2_marker "$c" MD5-FROM-HOST-RESETS)" = "$to_guest_md5 1048576" ] ||
        msg="file to L2 after the resets corrupted: $(l2_marker "$c" MD5-FROM-HOST-RESETS)"
    [ -n "$msg" ] || [ "$(l2_marker "$c" MD5-TO-HOST)" = "$(md5sum </tmp/from-guest | cut -d' ' -f1)" ] ||
        msg="file from L2 after the resets corrupted ($(wc -c </tmp/from-guest) bytes arrived)"
    echo "net-resets $mode: kvmmio open fds $fds_before before the resets, $fds_after after"
    [ -n "$msg" ] || [ "$fds_before" = "$fds_after" ] || msg="open fds $fds_before -> $fds_after"
    activations=$(stats_counter "$j" activations)
    [ -n "$msg" ] || [ "$activations" = $((RELOADS + 1)) ] ||
        msg="$activations activations for $RELOADS driver reloads"
    pings=$(l2_marker "$c" OUTAGE-PINGS)  # "sent received"
    downs=$(stats_counter "$j" tap_down) ups=$(stats_counter "$j" tap_up)
    echo "net-resets $mode: outage pings sent/answered $pings; tap_down $downs tap_up $ups"
    [ -n "$msg" ] || awk -v p="$pings" 'BEGIN { split(p, a, " "); exit !(a[2] > 0 && a[2] < a[1]) }' ||
        msg="pings during the outage: sent/answered '$pings' (expected some lost, some answered)"
    [ -n "$msg" ] || [ "$(l2_marker "$c" PING-AFTER-OUTAGE)" = ok ] || msg="no ping after the outage"
    [ -n "$msg" ] || [ "$(l2_marker "$c" CARRIER-AFTER-OUTAGE)" = 1 ] || msg="L2's carrier is off after the outage"
    [ -n "$msg" ] || { [ "${downs:-0}" -ge 1 ] && [ "${ups:-0}" -ge 1 ]; } ||
        msg="the tap outage was not counted: tap_down $downs tap_up $ups"
    [ -n "$msg" ] || [ "$(l2_marker "$c" MD5-FROM-HOST-OUTAGE)" = "$to_guest_md5 1048576" ] ||
        msg="file to L2 after the outage corrupted: $(l2_marker "$c" MD5-FROM-HOST-OUTAGE)"
    errors=$(guest_errors_total "$j")
    echo "net-resets $mode: guest errors $errors; ctrl_commands $(stats_counter "$j" ctrl_commands); tap_errors $(stats_counter "$j" tap_errors)"
    [ -n "$msg" ] || [ "$errors" = 0 ] || msg="$errors guest errors"
    record "$mode" "$secs" "$msg"
}

for m in $modes; do run_mode "$m"; done
pkill iperf3 2>/dev/null || true
pkill httpd 2>/dev/null || true

write_cases net-resets
