#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# many-vms: several L2 guests at once, each under its own kvmmio (128 MiB,
# 1 vCPU, vhost-net + irqfd + the register mirror), every tap a port of one
# bridge in L1 (--net ...,bridge=), the way VMs run side by side on a board:
#   boot          all of them started together reach the serve hook (each
#                 kvmmio's start-up by phase and its footprint, from its
#                 control socket, are printed; with two VMs or more each
#                 holds under 1 MiB of private memory outside guest RAM)
#   macs          every VM has a MAC of its own (kvmmio derives it from the
#                 tap's name), and L1 reaches every guest over the bridge
#   g2g           guest-to-guest iperf3 between pairs (0->1, 2->3, ... all
#                 pairs at once), then the other way: bytes arrive, and while
#                 they move, no VMM involved traps, polls, injects or relays
#                 anything, no vCPU exits and no event-loop wake-up
#                 happens, while the guests take virtio interrupts (the
#                 bypass between two VMs, seen from both VMMs)
#   poweroff      each guest powers off (its serve hook's CGI); every
#                 kvmmio exits 0 with no guest error counted
# KVMMIO_MANY_VMS: how many (default 8; 1, or even from 2 to 32; L1 needs
# ~150 MiB each: run.sh --mem). With one VM there is no pair: g2g is left
# out (bench/many-vms.sh uses N = 1 for the footprint of a VM alone).
# L2's side: tests/arm64/l2-hooks/60-kvmmio-serve.sh (kvmmio.l2test=serve).
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
# shellcheck source=bench/net-modes.sh
. "$KVMMIO_DIR/bin/net-modes.sh"
scenario_name=many-vms

require_dev /dev/kvm /dev/vhost-net /dev/net/tun
R=$KVMMIO_RESULTS
N=${KVMMIO_MANY_VMS:-8} BR=kvmbr0 NET=10.0.9 SECS=4
# 160 MiB: Debian's arm64 kernel does not boot this initramfs in 64 MiB
# (its Image alone is 33 MB; unpacking the initramfs then runs out of
# memory: "System is deadlocked on memory", seen here), and 128 MiB
# stopped being enough too: in one CI run every L2 failed to unpack it
# ("Initramfs unpacking failed: write error", so no virtio_net module),
# reproduced in an L1 of its own, while the same L1 boots all eight in
# 160 MiB. The kernel keeps 64 MiB of it for CMA ("Memory: 24708K/131072K
# available ... 65536K cma-reserved" in 128 MiB), which leaves too little
# for the unpacked initramfs beside the kernel.
MEM=160M
case $N in '' | *[!0-9]*) fail "KVMMIO_MANY_VMS is '$N', not a number" ;; esac
if [ "$N" != 1 ] && { [ "$N" -lt 2 ] || [ "$N" -gt 32 ] || [ $((N % 2)) != 0 ]; }; then
    fail "KVMMIO_MANY_VMS is $N: want 1, or an even number from 2 to 32"
fi
# The time bounds grow with N: the guests share L1's two vCPUs under TCG.
BOOT_LIMIT=$((300 + 15 * N)) VM_LIMIT=$((900 + 30 * N))
SPEC="$(net_mode_spec vhost-irqfd-mirror)"

# IPv6 stays on and the windows start when the guests serve: kvmmio's tap
# monitor takes only its own tap's link messages (a socket filter,
# docs/virtio-net.md), so other taps coming up and the bridge's or IPv6's
# announcements about this one wake no event loop. Before that filter, one
# of them woke each VM's loop once in a window.
ip link add "$BR" type bridge
ip addr add "$NET.1/24" dev "$BR"
ip link set "$BR" up

guest_ip() { echo "$NET.$((10 + $1))"; }
# ctl I PATH: wget of guest I's control CGI (60-kvmmio-serve.sh), 90 s and
# 3 more per VM at most (busybox's wget here has no -T; with 32 VMs one
# guest took longer than 90 s to answer its poweroff).
ctl() { timeout $((90 + 3 * N)) wget -q -O - "http://$(guest_ip "$1"):8080/cgi-bin/$2" 2>>"$R/ctl.log"; }
# vm_stats I FILE: the running kvmmio I's --stats document, from its socket.
vm_stats() { kvmmio ctl "/tmp/many-vm$1.sock" stats >"$2" 2>>"$R/vm$1.log"; }
seq_vms() { i=0; while [ $i -lt "$N" ]; do echo $i; i=$((i + 1)); done; }

step "boot $N VMs at once on bridge $BR ($SPEC, $MEM, 1 vCPU each)"
t0=$(uptime_s)
# --rng off: the guests' hw_random thread reads the entropy device about
# once a minute, a notify the VMM serves; the windows below measure the
# network's path, which must wake no VMM.
for i in $(seq_vms); do
    : >"$R/vm$i.console"
    timeout $VM_LIMIT kvmmio run --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" --mem "$MEM" --cpus 1 \
        --rng off --on-reboot exit --net "tap=kvmvm$i,$SPEC,bridge=$BR" --api-socket "/tmp/many-vm$i.sock" --stats "$R/vm$i.json" \
        --cmdline-replace "console=ttyAMA0 $L2_ARGS kvmmio.l2test=serve kvmmio.ip=$(guest_ip "$i")" \
        </dev/null >"$R/vm$i.console" 2>"$R/vm$i.log" &
    echo $! >"/tmp/many-vm$i.pid"
done
# Until every guest serves, every kvmmio has ended, or BOOT_LIMIT s (one
# grep a look: a process costs ~10 ms under TCG, and the VMs boot meanwhile).
msg='' serving=0 alive=$N deadline=$(awk -v a="$t0" -v l=$BOOT_LIMIT 'BEGIN { print a + l }')
while [ "$serving" -lt "$N" ] && [ "$alive" -gt 0 ] && awk -v d="$deadline" -v n="$(uptime_s)" 'BEGIN { exit !(n < d) }'; do
    sleep 1
    serving=$(grep -l KVMMIO-L2-SERVING "$R"/vm*.console | wc -l)
    alive=0
    for i in $(seq_vms); do read -r p <"/tmp/many-vm$i.pid"; ! running "$p" || alive=$((alive + 1)); done
done
t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
echo "boot: $serving of $N guests serving after $t s ($alive kvmmio running)"
for i in $(seq_vms); do
    grep -q KVMMIO-L2-SERVING "$R/vm$i.console" ||
        echo "vm$i: not serving; log: $(tail -n 3 "$R/vm$i.log" | tr '\n' ' '); console: $(tail -c 300 "$R/vm$i.console" | tr '\r\n' '  ')"
done
for i in $(seq_vms); do
    if vm_stats "$i" "$R/vm$i.boot.json"; then
        private=$(stats_value "$R/vm$i.boot.json" footprint.private_outside_guest_ram_kib)
        echo "vm$i: start-up (ms) $(startup_line "$R/vm$i.boot.json");" \
            "footprint $(stats_value "$R/vm$i.boot.json" footprint.rss_outside_guest_ram_kib) KiB Rss," \
            "$private KiB private, $(stats_value "$R/vm$i.boot.json" footprint.threads) threads"
        # What one more VM costs: its private memory outside guest RAM,
        # under 1 MiB (docs/benchmarks.md, "Footprint"); with two or more
        # the text is shared (a kvmmio alone counts it as its own).
        case $private in '' | *[!0-9]*) [ -n "$msg" ] || msg="vm$i: no private footprint in its stats" ;;
        *) [ -n "$msg" ] || [ "$N" = 1 ] || [ "$private" -lt 1024 ] ||
            msg="vm$i: $private KiB private outside guest RAM, not under 1 MiB" ;;
        esac
    else
        msg="vm$i's control socket did not answer: $(tail -n 2 "$R/vm$i.log" | tr '\n"' ' _')"
    fi
done
[ -n "$msg" ] || [ "$serving" = "$N" ] || msg="only $serving of $N guests reached their serve hook"
record boot "$t" "$msg"

step "every VM its own MAC, every guest reachable over $BR"
t0=$(uptime_s) msg=''
for i in $(seq_vms); do
    sed -n 's/.*net0: tap kvmvm[0-9]*, MAC \([0-9a-f:]*\).*/\1/p' "$R/vm$i.log" | head -n 1
done >"$R/macs"
echo "macs: $(tr '\n' ' ' <"$R/macs")"
[ "$(grep -c . "$R/macs")" = "$N" ] || msg="$(grep -c . "$R/macs") of $N kvmmio logs name their MAC"
[ -n "$msg" ] || [ "$(sort -u "$R/macs" | grep -c .)" = "$N" ] || msg="two VMs share a MAC: $(sort "$R/macs" | uniq -d | tr '\n' ' ')"
for i in $(seq_vms); do
    [ -n "$msg" ] || ping -c 1 -W 10 "$(guest_ip "$i")" >/dev/null 2>&1 || msg="L1 cannot ping guest $i over $BR"
done
record macs "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')" "$msg"

# counts I: "EXITS WAKEUPS TRAPPED POLLED INJECTED RELAYED GUEST_IRQS" of VM I.
counts() {
    vm_stats "$1" "$R/vm$1.now.json" || return 1
    g=$(ctl "$1" irqs) || return 1
    stats_flat "$R/vm$1.now.json" || return 1
    awk -F '\t' -v g="$g" '{ n = split($1, p, ".") }
        p[1] == "vcpus" && p[n] == "total_exits" { e += $2 }
        $1 == "event_loop_wakeups" { w = $2 }
        p[1] == "devices" && p[3] == "counters" && p[4] == "notifies_trapped" { t += $2 }
        p[1] == "devices" && p[3] == "counters" && p[4] == "notifies_polled" { q += $2 }
        p[1] == "devices" && p[3] == "counters" && p[4] == "interrupts_injected" { j += $2 }
        p[1] == "devices" && p[3] == "counters" && p[4] == "interrupts_relayed" { r += $2 }
        END { print e + 0, w + 0, t + 0, q + 0, j + 0, r + 0, g + 0 }' "$stats_flat_out"
}

# g2g DIR: every pair at once: with DIR "up" guest 2k sends to 2k+1, with
# "down" 2k+1 to 2k. Each VMM's counters are read before and after.
g2g() {
    dir=$1  # set -- below takes the positional parameters
    step "guest-to-guest iperf3 ($dir), $((N / 2)) pairs at once, $SECS s"
    t0=$(uptime_s) msg=''
    for i in $(seq_vms); do counts "$i" >"/tmp/many-before$i" || [ -n "$msg" ] || msg="cannot read vm$i's counters"; done
    k=0 clients=''
    while [ $k -lt "$N" ]; do
        if [ "$dir" = up ]; then from=$k to=$((k + 1)); else from=$((k + 1)) to=$k; fi
        ctl $from "iperf?$(guest_ip $to)+$SECS" >"/tmp/many-g2g$k" &
        clients="$clients $!"
        k=$((k + 2))
    done
    # Each wget ends within its timeout 90.
    for c in $clients; do wait "$c" || true; done
    for i in $(seq_vms); do counts "$i" >"/tmp/many-after$i" || [ -n "$msg" ] || msg="cannot read vm$i's counters"; done
    bytes=0 k=0 woke=0
    while [ $k -lt "$N" ]; do
        read -r b bps <"/tmp/many-g2g$k" || b=''
        case $b in '' | *[!0-9]*) [ -n "$msg" ] || msg="pair $k: $(cat "/tmp/many-g2g$k")" ;;
        *) echo "g2g $dir: pair $k $(awk -v s="$bps" 'BEGIN { printf "%.0f", s / 1e6 }') Mbit/s, $b bytes"
           bytes=$((bytes + b)) ;;
        esac
        k=$((k + 2))
    done
    for i in $(seq_vms); do
        # shellcheck disable=SC2046 # fourteen numbers
        set -- $(cat "/tmp/many-before$i") $(cat "/tmp/many-after$i")
        [ $# = 14 ] || { [ -n "$msg" ] || msg="vm$i: counters unreadable"; continue; }
        exits=$(($8 - $1)) wakeups=$(($9 - $2)) irqs=$((${14} - $7))
        woke=$((woke + exits + wakeups))
        echo "g2g $dir: vm$i vCPU exits $exits, event-loop wake-ups $wakeups, guest virtio irqs $irqs;" \
            "trapped $((${10} - $3)) polled $((${11} - $4)) injected $((${12} - $5)) relayed $((${13} - $6))"
        [ -n "$msg" ] || msg=$(net_mode_misfit vhost-irqfd-mirror $((${10} - $3)) $((${11} - $4)) \
            $((${12} - $5)) $((${13} - $6)) $irqs | sed "s/^/vm$i: /")
        [ -n "$msg" ] || [ $exits = 0 ] || msg="vm$i: $exits vCPU exits during guest-to-guest traffic"
        [ -n "$msg" ] || [ $wakeups = 0 ] || msg="vm$i: $wakeups event-loop wake-ups during guest-to-guest traffic"
    done
    echo "g2g $dir: $bytes bytes in all; VMM wake-ups (vCPU exits + event-loop) per GB:" \
        "$(awk -v w="$woke" -v b="$bytes" 'BEGIN { if (b > 0) printf "%.1f", w * 1e9 / b; else print "n/a" }')"
    [ -n "$msg" ] || [ $bytes -gt 0 ] || msg="no guest-to-guest bytes arrived"
    record "g2g-$dir" "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')" "$msg"
}
if [ "$N" -ge 2 ]; then
    g2g up
    g2g down
else
    step "guest-to-guest iperf3 left out: one VM"
fi

step "power every guest off; every kvmmio exits 0 with no guest error"
t0=$(uptime_s) msg=''
# The guest powers off a few seconds after its answer leaves httpd, but on a
# starved L1 the answer can still sit in its TX ring when it does (one CI
# run lost guest 7's that way, and guest 7 powered off). So a lost answer
# is only a note; the verdict is the kvmmio's own end, within 60 s.
unanswered=''
for i in $(seq_vms); do ctl "$i" poweroff >/dev/null || unanswered="$unanswered $i"; done
[ -z "$unanswered" ] || echo "poweroff: no answer from guest(s)$unanswered; their kvmmio must still end"
for i in $(seq_vms); do
    read -r pid <"/tmp/many-vm$i.pid"
    n=0
    while running "$pid" && [ $n -lt 120 ]; do sleep 0.5; n=$((n + 1)); done
    if running "$pid"; then
        [ -n "$msg" ] || msg="vm$i: kvmmio still running 60 s after its poweroff was asked ($(tail -n 2 "$R/vm$i.console" | tr '\r\n"' '  _'))"
        kill -KILL "$pid" || true  # it may end between the two
    fi
    st=0
    wait "$pid" || st=$?
    [ -n "$msg" ] || [ $st = 0 ] || msg="vm$i: kvmmio exit status $st ($(tail -n 2 "$R/vm$i.log" | tr '\n"' ' _'))"
    [ -n "$msg" ] || [ "$(guest_errors_total "$R/vm$i.json")" = 0 ] || msg="vm$i: guest errors"
done
record poweroff "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')" "$msg"
ip link del "$BR" 2>/dev/null || true

write_cases many-vms
