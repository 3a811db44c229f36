#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# net-modes: kvmmio's virtio-net in L2 over a tap in L1, one L2 boot per
# mode, checked from both sides:
#   vhost-irqfd   vhost-net, interrupts straight from vhost to the vGIC
#   vhost-relay   vhost-net, every interrupt relayed by a VMM thread
#   user-ioeventfd  the userspace backend, kicks through ioeventfds
#   user-trap     the userspace backend, kicks trapped as MMIO exits
#   vhost-irqfd-v1  as vhost-irqfd on the legacy (version 1) register layout
# Each: L2 pings L1 and L1 pings L2, iperf3 both ways, a 1 MiB file each way
# (HTTP from L1, nc to L1) with md5 compared, then poweroff (kvmmio exits 0). The counters: with
# vhost + irqfd the VMM trapped, polled, injected and relayed nothing while
# the guest's virtio interrupt count rose (the bypass, seen from both
# sides); with relay, about one relayed interrupt per guest interrupt. The
# register path: vhost-irqfd-mirror really runs on the mirror (regs_mirror
# 1, not kvmmio's fallback to trapping on a KVM without read-only slots): no
# register read exited and the kernel took the ACKs; vhost-irqfd traps, so
# every guest interrupt cost at least its InterruptStatus read as an exit.
# L2's side: tests/arm64/l2-hooks/50-kvmmio-l2test.sh (kvmmio.l2test=net).
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
# shellcheck source=bench/net-modes.sh
. "$KVMMIO_DIR/bin/net-modes.sh"
scenario_name=net-modes

require_dev /dev/kvm /dev/vhost-net /dev/net/tun
R=$KVMMIO_RESULTS
TAP=kvmtap0 HOST=10.0.0.1 GUEST=10.0.0.2
# KVMMIO_NET_MODES: a subset, separated by spaces or commas.
modes=$(echo "${KVMMIO_NET_MODES:-vhost-irqfd vhost-irqfd-mirror vhost-relay user-ioeventfd user-trap vhost-irqfd-v1}" | tr , " ")

mkdir -p /tmp/www
dd if=/dev/urandom of=/tmp/www/to-guest bs=64k count=16 2>/dev/null
to_guest_md5=$(md5sum </tmp/www/to-guest | cut -d' ' -f1)
iperf3 -s -D
httpd -p 8000 -h /tmp/www

run_mode() {
    mode=$1 out=$R/net-$1
    start=$(cut -d' ' -f1 /proc/uptime)
    step "net $mode: boot L2 with --net tap=$TAP,$(net_mode_spec "$mode")"
    start_l2_net "$out" "$(net_mode_spec "$mode")" 1 300 kvmmio.l2test=net
    # The listener's own stdin stays open (sleep): busybox nc stops sending
    # when its peer half-closes, so a listener at EOF would cut L2's upload.
    rm -f /tmp/from-guest
    (sleep 600 | nc -l -p 5001 >/tmp/from-guest) &
    wait_l2_marker "$out.console" NET-UP 600
    ping_back=failed
    ping -c 3 -A -W 5 "$GUEST" >/dev/null 2>&1 && ping_back=ok
    nc -l -p 5002 </dev/null >/dev/null  # L2 waits for this to start its traffic
    finish_l2_net "$out" "$start"
    secs=$l2_secs c=$out.console j=$out.json msg=$l2_msg
    [ -n "$msg" ] || [ "$(l2_marker "$c" DRIVER)" = virtio_net ] || msg="eth0 is not virtio_net"
    # /sys/bus/virtio/devices: one virtio-net (ID 1), on both layouts, and
    # the entropy device kvmmio adds unless --rng off (ID 4), in either order.
    ids=$(l2_marker "$c" VIRTIO-IDS)
    [ -n "$msg" ] || [ "$ids" = "0x0001 0x0004 " ] || [ "$ids" = "0x0004 0x0001 " ] ||
        msg="/sys/bus/virtio/devices shows '$ids', not one virtio-net and the entropy device"
    [ -n "$msg" ] || [ "$(l2_marker "$c" PING)" = ok ] || msg="L2 could not ping L1"
    [ -n "$msg" ] || [ $ping_back = ok ] || msg="L1 could not ping L2"
    for dir in tx rx; do
        bps=$(l2_marker "$c" "IPERF-$dir" | cut -d' ' -f1)
        echo "net $mode: iperf3 $dir ${bps:-?} Mbit/s"
        [ -n "$msg" ] || awk "BEGIN { exit !($bps > 0) }" 2>/dev/null || msg="iperf3 $dir failed ($bps)"
    done
    [ -n "$msg" ] || [ "$(l2_marker "$c" MD5-FROM-HOST)" = "$to_guest_md5 1048576" ] ||
        msg="file to L2 corrupted: $(l2_marker "$c" MD5-FROM-HOST)"
    [ -n "$msg" ] || [ "$(l2_marker "$c" MD5-TO-HOST)" = "$(md5sum </tmp/from-guest | cut -d' ' -f1)" ] ||
        msg="file from L2 corrupted ($(wc -c </tmp/from-guest) bytes arrived)"
    guest_irqs=$(l2_marker "$c" IRQS)
    trapped=$(stats_counter "$j" notifies_trapped) polled=$(stats_counter "$j" notifies_polled)
    injected=$(stats_counter "$j" interrupts_injected) relayed=$(stats_counter "$j" interrupts_relayed)
    # Guest errors of every device (the UART's and the net device's).
    errors=$(guest_errors_total "$j")
    echo "net $mode: guest virtio irqs $guest_irqs; VMM trapped $trapped polled $polled injected $injected relayed $relayed; guest errors $errors"
    [ -n "$msg" ] || [ "${guest_irqs:-0}" -gt 0 ] || msg="the guest took no virtio interrupts"
    [ -n "$msg" ] || [ "$errors" = 0 ] || msg="$errors guest errors"
    # Who carried the traffic (bench/net-modes.sh); with relay, also one
    # relayed interrupt per guest interrupt, within a factor of 2.
    [ -n "$msg" ] || msg=$(net_mode_misfit "$mode" "$trapped" "$polled" "$injected" "$relayed" "$guest_irqs")
    regs_mirror=$(stats_counter "$j" regs_mirror) reads=$(stats_counter "$j" register_reads)
    acks=$(stats_counter "$j" interrupt_acks_in_kernel)
    echo "net $mode: regs_mirror $regs_mirror, register reads that exited $reads, ACKs taken in the kernel $acks"
    case $mode in
    vhost-irqfd-mirror | vhost-irqfd-mirror-*)
        [ -n "$msg" ] || [ "$regs_mirror" = 1 ] || msg="regs=mirror not in effect (regs_mirror $regs_mirror)"
        [ -n "$msg" ] || [ "$reads" = 0 ] || msg="$reads register reads exited under regs=mirror"
        [ -n "$msg" ] || [ "${acks:-0}" -gt 0 ] || msg="no InterruptACK taken in the kernel under regs=mirror" ;;
    vhost-irqfd)
        [ -n "$msg" ] || [ "$regs_mirror" = 0 ] || msg="regs=trap not in effect (regs_mirror $regs_mirror)"
        [ -n "$msg" ] || [ "${reads:-0}" -ge "$guest_irqs" ] ||
            msg="regs=trap: $reads register reads exited for $guest_irqs guest interrupts" ;;
    esac
    if [ "$mode" = vhost-relay ]; then
        [ -n "$msg" ] || awk "BEGIN { r = $relayed / $guest_irqs; exit !(r > 0.5 && r < 2) }" ||
            msg="relayed $relayed for $guest_irqs guest interrupts"
    fi
    record "$mode" "$secs" "$msg"
}

for m in $modes; do run_mode "$m"; done
pkill iperf3 2>/dev/null || true
pkill httpd 2>/dev/null || true

write_cases net-modes
