#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# L2 side of the arm64 scenarios that boot L2 under kvmmio (vmm-boot.sh).
# L2's /init runs this hook after printing KVMMIO-L2-READY, then powers off
# (poweroff -f: PSCI SYSTEM_OFF, which ends kvmmio with status 0).
# What it does is chosen on L2's kernel command line with kvmmio.l2test=:
#   report  print what L2 sees: KVMMIO-L2-CPUS: N (online CPUs),
#           KVMMIO-L2-GIC: name (the timer's irqchip), KVMMIO-L2-VIRTIO-IDS:
#           the virtio device IDs (0x0003: the virtio console),
#           KVMMIO-L2-CONSOLE: the console tty (ttyAMA0 or hvc0),
#           KVMMIO-L2-RTC: rtc0's seconds since the epoch, then the
#           kernel's clock (date +%s), "end" and rtc0's name; "none end"
#           without an rtc0,
#           KVMMIO-L2-UPTIME: s
#   reboot  reboot -f (PSCI SYSTEM_RESET: kvmmio exits with status 3
#           under --on-reboot exit, boots L2 again with restart)
#   reboot-once  across a reboot in place, with a disk (/dev/vda): the
#           first boot finds no mark at the disk's start, writes one
#           (synced), says KVMMIO-L2-REBOOT and runs reboot -f; the boot
#           after it finds the mark (read through virtio-blk, reset and
#           activated again), says KVMMIO-L2-REBOOTED: cpus N (online
#           CPUs: the secondaries started again) net IFACES (the network
#           interfaces but lo: a virtio-net probed again) and powers off
#   wait    sleep until killed (the host side stops kvmmio with a signal)
#   net     networking over virtio-net (net-modes.sh is the L1 side):
#           address from kvmmio.ip=, peer kvmmio.host=; ping, iperf3 both
#           ways, checksummed transfers both ways, the device's interrupt
#           count; results as KVMMIO-L2-* lines
#   switch  two L2s on a user-space switch (vmm-boot's vhost-user-net
#           case): address kvmmio.ip=, the other's kvmmio.host=; a ping
#           through the switch (KVMMIO-L2-SWITCH-PING), then 1 MiB over TCP
#           from the client to the server (kvmmio.secs=client|server),
#           both silent from KVMMIO-L2-SWITCH-READY until L1 ends its
#           data window (vsock: L1's go on port 5010, the server's
#           "got it" to the host's 5011, L1's end on 5012):
#           KVMMIO-L2-SWITCH-SENT and -GOT, md5 and size
#   net-resets  multiqueue traffic, driver reload and link cycles, a tap
#           outage (net-resets.sh is the L1 side, which it meets at TCP
#           ports 5002-5006 to take its counts in between)
#   disk    the virtio-blk disk (vmm-boot.sh's disk case is the L1 side):
#           its size and serial, its hardware queues (blk-mq), the md5 of
#           its first MiB (written by L1),
#           then 1 MiB of random bytes written at its second MiB with
#           fsync, the page cache dropped and the same range read back;
#           results as KVMMIO-L2-DISK-* lines; then the entropy device:
#           KVMMIO-L2-RNG-CURRENT: hw_random's rng_current (virtio_rng.N),
#           KVMMIO-L2-RNG-BYTES: the bytes a 64-byte read of /dev/hwrng got
#   vsock   virtio-vsock (vmm-boot.sh's vsock case is the L1 side, the
#           host, which listens on port 5000 and connects to port 5001):
#           KVMMIO-L2-VSOCK-CID: L2's own CID (read from the device's
#           configuration space by the driver), then a listener
#           on 5001 (KVMMIO-L2-VSOCK-LISTENING), whose transfer L1 starts
#           (vsock_probe: BYTES each way; L2 prints nothing until L1
#           connects to its port 5003 after reading the counters around
#           it), then a connection to the host
#           (CID 2) port 5000, BYTES each way; each vsock_probe's line as
#           KVMMIO-L2-VSOCK-IN / -OUT; then the driver reloaded
#           (rmmod, insmod vmw_vsock_virtio_transport), the CID read again
#           (KVMMIO-L2-VSOCK-CID-AGAIN) and one more connection to port
#           5000 (KVMMIO-L2-VSOCK-AGAIN); then KVMMIO-L2-VSOCK-DONE, and
#           power-off once L1 connects to port 5002
#   fs      virtio-fs (vmm-boot.sh's fs case is the L1 side, which put a
#           1 MiB file from-l1 in the shared directory): the tag share
#           mounted, from-l1's md5 as KVMMIO-L2-FS-READ, 1 MiB of random
#           bytes written as from-l2 and synced (silently, between L1's
#           files window-open and window-closed in the share, L2's
#           window-done after the sync: L1's data window), its md5 as
#           KVMMIO-L2-FS-WROTE; then unmounted, the driver unbound from
#           the device and bound again (sysfs: virtiofs is a module on
#           6.1, built in on 6.12), mounted again and from-l1 read again
#           (KVMMIO-L2-FS-READ-AGAIN); then power-off
#   disk-kill  1 MiB of random bytes written at the disk's third MiB with
#           fsync, its md5 as KVMMIO-L2-DISK-WROTE, then
#           KVMMIO-L2-DISK-SYNCED and a wait until killed (vmm-boot.sh's
#           disk-kill case SIGKILLs kvmmio there)
#   hostile the hostile guest (hostile-guest.sh is the L1 side): unbinds
#           every virtio-mmio device from its driver, then hostile_guest
#           drives them by hand from the RAM kvmmio.reserved=BASE,SIZE
#           names (below kvmmio's --mem, above L2's mem=), until killed
#   disk-stall  the console echo against a disk flood (disk-stall.sh is
#           the L1 side, on the virtio console: console=hvc0): unbinds the
#           virtio-blk devices from their driver (the console stays),
#           turns the terminal's own echo off, and runs `hostile_guest
#           echo`: KVMMIO-L2-ECHO-READY, then each line read echoed back
#           from CPU 0; the line KVMMIO-START-FLOOD starts its disk mode
#           on CPU 1 (the disk's largest requests on every queue, reset
#           over and over, from the kvmmio.reserved= RAM), until killed
#   powerkey  the control socket's shutdown (L1: kvmmio ctl SOCKET
#           shutdown after KVMMIO-L2-POWER-KEY-READY): busybox has no
#           KEY_POWER handler, so this waits (60 s at most) for the
#           gpio-keys interrupt's count in /proc/interrupts to grow,
#           printing KVMMIO-L2-TICK and its uptime every half second (L1
#           sees from them whether L2 ran while paused), then prints
#           KVMMIO-L2-POWER-KEY and returns: /init powers off
#   nat     a guest on a NAT network (nat.sh is the L1 side): eth0's
#           address by DHCP (udhcpc; the lease as KVMMIO-L2-NAT-ADDR), the
#           name outside.kvmmio.test
#           through the gateway's DNS (KVMMIO-L2-NAT-DNS), bytes to the
#           outside's TCP port 7007 (KVMMIO-L2-NAT-OUT), a ping of
#           kvmmio.host= when given (the other guest: KVMMIO-L2-NAT-PEER),
#           KVMMIO-L2-NAT-DONE; then, with kvmmio.secs=wait, power-off once
#           L1 connects to port 5002
#   serve   the main job's benchmark endpoint: 60-kvmmio-serve.sh's
#   shell   an interactive shell on the console (the host types into it)
#   (none)  the same shell: what L2's /init gives when it has no hooks
read -r cmdline </proc/cmdline
test='' ip='' host='' secs=3 reserved=
for arg in $cmdline; do
    case $arg in
    kvmmio.l2test=*) test=${arg#*=} ;;
    kvmmio.ip=*) ip=${arg#*=} ;;
    kvmmio.host=*) host=${arg#*=} ;;
    kvmmio.secs=*) secs=${arg#*=} ;;
    kvmmio.reserved=*) reserved=${arg#*=} ;;
    esac
done

# The interrupts L2 took from its virtio-mmio devices (all CPUs summed).
virtio_irqs() {
    awk '/virtio/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts
}

# Interrupts taken from the power key (gpio-keys names its IRQ by the
# key's label, "GPIO Key Poweroff").
power_key_irqs() {
    awk '/Poweroff/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts
}

power_key_test() {
    modprobe gpio_keys 2>/dev/null  # a module in Debian's kernel; built in elsewhere
    grep -q Poweroff /proc/interrupts || { echo "KVMMIO-L2-ERROR: no gpio-keys power key in /proc/interrupts"; return; }
    n0=$(power_key_irqs)
    echo "KVMMIO-L2-POWER-KEY-READY"
    i=0
    while [ "$(power_key_irqs)" = "$n0" ]; do
        i=$((i + 1)); [ $i -le 120 ] || { echo "KVMMIO-L2-ERROR: the power key was not pressed in 60 s"; return; }
        echo "KVMMIO-L2-TICK $(cut -d' ' -f1 /proc/uptime)"
        sleep 0.5
    done
    echo "KVMMIO-L2-POWER-KEY"
}

nat_test() {
    ip link set lo up
    ip link set eth0 up || { echo "KVMMIO-L2-ERROR: no eth0"; return; }
    cat >/tmp/udhcpc.sh <<'EOF'
#!/bin/sh
case $1 in
bound | renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/$mask" dev "$interface"
    ip route add default via "$router"
    echo "$router" >/tmp/gateway ;;
esac
EOF
    chmod +x /tmp/udhcpc.sh
    udhcpc -i eth0 -n -q -f -t 10 -T 3 -s /tmp/udhcpc.sh >/tmp/udhcpc.log 2>&1 ||
        { echo "KVMMIO-L2-ERROR: no DHCP lease: $(tail -n 2 /tmp/udhcpc.log | tr '\n' ' ')"; return; }
    gw=$(cat /tmp/gateway)
    echo "KVMMIO-L2-NAT-ADDR: $(ip -4 -o addr show dev eth0 | awk '{ print $4 }') via $gw"
    echo "KVMMIO-L2-NAT-DNS: $(nslookup outside.kvmmio.test "$gw" 2>&1 | awk '/^Address/ { a = $NF } END { print a }')"
    if echo hello-from-l2 | nc -w 10 203.0.113.2 7007 >/dev/null 2>&1; then
        echo "KVMMIO-L2-NAT-OUT: ok"
    else
        echo "KVMMIO-L2-NAT-OUT: failed"
    fi
    if [ -n "$host" ]; then
        ping -c 2 -W 5 "$host" >/dev/null 2>&1 && echo "KVMMIO-L2-NAT-PEER: ok" || echo "KVMMIO-L2-NAT-PEER: failed"
    fi
    echo "KVMMIO-L2-NAT-DONE"
    if [ "$secs" = wait ]; then
        # The other guest pings this one meanwhile; L1 says when it is done.
        nc -l -p 5002 </dev/null >/dev/null 2>&1
    fi
}

# Two L2s on a user-space switch (vmm-boot's vhost-user-net case): this
# one's address is kvmmio.ip=, the other's kvmmio.host=; the server
# (kvmmio.secs=server) takes 1 MiB on TCP port 5003 from the client.
switch_test() {
    ip link set lo up
    ip addr add "$ip/24" dev eth0 && ip link set eth0 up || { echo "KVMMIO-L2-ERROR: no eth0"; return; }
    i=0
    until ping -c 1 -W 2 "$host" >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 90 ] || { echo "KVMMIO-L2-SWITCH-PING: failed"; return; }
    done
    echo "KVMMIO-L2-SWITCH-PING: ok"
    # The transfer is L1's data window, read from outside both VMMs: both
    # guests silent from L1's go (a connection to their vsock port 5010)
    # to L1's end (port 5012); the server tells L1 it has everything by
    # connecting to the host's port 5011. vhost-vsock carries the three,
    # with the VMMs out of its path too.
    if [ "$secs" = server ]; then
        # busybox nc ends at its stdin's end: a stdin that never ends, and
        # the file read once all of it is there (or after 90 s).
        (sleep 600 | nc -l -p 5003 >/tmp/from-peer) &
        echo "KVMMIO-L2-SWITCH-READY"
        vsock_probe listen 5010 0 120 >/dev/null 2>&1
        i=0
        while [ "$(wc -c </tmp/from-peer 2>/dev/null || echo 0)" -lt 1048576 ] && [ $i -lt 180 ]; do
            sleep 0.5; i=$((i + 1))
        done
        vsock_probe connect 2 5011 0 60 >/dev/null 2>&1
        vsock_probe listen 5012 0 60 >/dev/null 2>&1
        echo "KVMMIO-L2-SWITCH-GOT: $(md5sum </tmp/from-peer | cut -d' ' -f1) $(wc -c </tmp/from-peer)"
    else
        dd if=/dev/urandom of=/tmp/to-peer bs=64k count=16 2>/dev/null
        echo "KVMMIO-L2-SWITCH-READY"
        vsock_probe listen 5010 0 120 >/dev/null 2>&1
        i=0 sent=1
        until nc "$host" 5003 </tmp/to-peer 2>/dev/null; do
            i=$((i + 1)); [ $i -lt 60 ] || { sent=0; break; }
            sleep 1
        done
        vsock_probe listen 5012 0 60 >/dev/null 2>&1
        [ $sent = 1 ] || { echo "KVMMIO-L2-ERROR: the other guest never listened on port 5003"; return; }
        echo "KVMMIO-L2-SWITCH-SENT: $(md5sum </tmp/to-peer | cut -d' ' -f1) $(wc -c </tmp/to-peer)"
    fi
}

net_test() {
    ip link set lo up
    ip addr add "$ip/24" dev eth0 && ip link set eth0 up || { echo "KVMMIO-L2-ERROR: no eth0"; return; }
    echo "KVMMIO-L2-DRIVER: $(basename "$(readlink /sys/class/net/eth0/device/driver)")"
    echo "KVMMIO-L2-VIRTIO-IDS: $(cat /sys/bus/virtio/devices/*/device 2>/dev/null | tr '\n' ' ')"
    ping -c 3 -A -W 5 "$host" >/dev/null 2>&1 && echo "KVMMIO-L2-PING: ok" || echo "KVMMIO-L2-PING: failed"
    echo "KVMMIO-L2-NET-UP"
    # L1 pings us now; it says when it is done by opening port 5002.
    i=0
    while ! nc "$host" 5002 </dev/null >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 60 ] || break; sleep 1
    done
    irq0=$(virtio_irqs)
    for dir in tx rx; do
        r=''; [ $dir = rx ] && r=-R
        bps=$(iperf3 -c "$host" -t "$secs" $r -f m 2>&1 | awk '/receiver$/ { print $(NF - 2) }')
        echo "KVMMIO-L2-IPERF-$dir: ${bps:-failed} Mbit/s"
    done
    wget -q -O /tmp/from-host "http://$host:8000/to-guest" || echo "KVMMIO-L2-ERROR: wget failed"
    echo "KVMMIO-L2-MD5-FROM-HOST: $(md5sum </tmp/from-host | cut -d' ' -f1) $(wc -c </tmp/from-host)"
    dd if=/dev/urandom of=/tmp/to-host bs=64k count=32 2>/dev/null
    echo "KVMMIO-L2-MD5-TO-HOST: $(md5sum </tmp/to-host | cut -d' ' -f1)"
    nc "$host" 5001 </tmp/to-host
    echo "KVMMIO-L2-IRQS: $(($(virtio_irqs) - irq0))"
    echo "KVMMIO-L2-NET-DONE"
}

# Waits until L1 listens on TCP port $1 (L1 takes a count, then listens).
meet_host() {
    i=0
    while ! nc "$host" "$1" </dev/null >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 300 ] || { echo "KVMMIO-L2-ERROR: L1 never opened port $1"; return 1; }
        sleep 1
    done
}

# eth0 with its address, up; waits for the interface after a driver load.
eth0_up() {
    i=0
    while [ ! -e /sys/class/net/eth0 ]; do
        i=$((i + 1)); [ $i -lt 100 ] || return 1; sleep 0.1
    done
    ip addr add "$ip/24" dev eth0 2>/dev/null
    ip link set eth0 up
}

# The file L1 serves, fetched and checksummed; then one sent back to L1.
transfer_check() {  # TAG
    rm -f /tmp/from-host
    wget -q -O /tmp/from-host "http://$host:8000/to-guest" || echo "KVMMIO-L2-ERROR: wget failed ($1)"
    echo "KVMMIO-L2-MD5-FROM-HOST-$1: $(md5sum </tmp/from-host | cut -d' ' -f1) $(wc -c </tmp/from-host)"
}

# iperf3 to both of L1's servers at once, one client pinned to each CPU, so
# both queue pairs carry traffic (XPS maps each CPU to its own TX queue, and
# the tap steers a flow's receive side to the queue it was sent on).
parallel_iperf() {  # DIRECTION-FLAG
    cpus=$(grep -c '^processor' /proc/cpuinfo)
    c=0 pids=''
    while [ $c -lt 2 ]; do
        taskset $((1 << (c % cpus))) iperf3 -c "$host" -p $((5201 + c)) -t "$secs" -P 2 ${1:+"$1"} -f m \
            >/tmp/iperf-$c 2>&1 &
        pids="$pids $!"
        c=$((c + 1))
    done
    # shellcheck disable=SC2086 # one word per pid
    wait $pids
    # Total, then per client: receiver Mbit/s and the sender's retransmits.
    for f in /tmp/iperf-0 /tmp/iperf-1; do
        awk '/SUM.*sender$/ { r = $(NF - 1) } /SUM.*receiver$/ { m = $(NF - 2) } END { print m, r }' "$f"
    done | awk '{ s += $1; n += ($1 != ""); d = d " " $1 "/" $2 } END { if (n == 2) print s " Mbit/s (client Mbit/s/retransmits:" d ")"; else print "failed" }'
}

net_resets_test() {
    ip link set lo up
    eth0_up || { echo "KVMMIO-L2-ERROR: no eth0"; return; }
    echo "KVMMIO-L2-QUEUES: $(ls -d /sys/class/net/eth0/queues/rx-* | wc -l) rx $(ls -d /sys/class/net/eth0/queues/tx-* | wc -l) tx"
    ping -c 3 -A -W 5 "$host" >/dev/null 2>&1 && echo "KVMMIO-L2-PING: ok" || echo "KVMMIO-L2-PING: failed"
    echo "KVMMIO-L2-NET-UP"
    meet_host 5002 || return
    echo "KVMMIO-L2-MQ-IPERF-tx: $(parallel_iperf '')"
    echo "KVMMIO-L2-MQ-IPERF-rx: $(parallel_iperf -R)"
    meet_host 5003 || return
    # L1 takes its vhost workers' counts now: the resets below may end them.
    meet_host 5006 || return
    # Link cycles stop and start the driver's queues; driver reloads reset
    # the device (virtio remove and probe), which restarts the backend.
    n=0
    while [ $n -lt 20 ]; do
        ip link set eth0 down && ip link set eth0 up || echo "KVMMIO-L2-ERROR: link cycle $n"
        n=$((n + 1))
    done
    vnet=$(grep '/virtio_net.ko$' /lib/modules/load-order)
    n=0
    while [ $n -lt 3 ]; do
        rmmod virtio_net || echo "KVMMIO-L2-ERROR: rmmod virtio_net"
        insmod "/lib/modules/$vnet" || echo "KVMMIO-L2-ERROR: insmod virtio_net"
        eth0_up || echo "KVMMIO-L2-ERROR: no eth0 after reload $n"
        n=$((n + 1))
    done
    echo "KVMMIO-L2-RESETS: 20 link cycles, $n driver reloads"
    ping -c 3 -A -W 5 "$host" >/dev/null 2>&1 && echo "KVMMIO-L2-PING-AFTER-RESETS: ok" ||
        echo "KVMMIO-L2-PING-AFTER-RESETS: failed"
    transfer_check RESETS
    dd if=/dev/urandom of=/tmp/to-host bs=64k count=32 2>/dev/null
    echo "KVMMIO-L2-MD5-TO-HOST: $(md5sum </tmp/to-host | cut -d' ' -f1)"
    nc "$host" 5001 </tmp/to-host
    meet_host 5004 || return
    # L1 now takes its tap down for a few seconds; pings go unanswered meanwhile.
    meet_host 5005 || return
    ping -c 40 -i 0.5 -W 1 "$host" >/tmp/outage 2>&1
    echo "KVMMIO-L2-OUTAGE-PINGS: $(awk '/packets transmitted/ { print $1, $4 }' /tmp/outage)"
    ping -c 3 -A -W 5 "$host" >/dev/null 2>&1 && echo "KVMMIO-L2-PING-AFTER-OUTAGE: ok" ||
        echo "KVMMIO-L2-PING-AFTER-OUTAGE: failed"
    echo "KVMMIO-L2-CARRIER-AFTER-OUTAGE: $(cat /sys/class/net/eth0/carrier)"
    transfer_check OUTAGE
    echo "KVMMIO-L2-NET-DONE"
}

case $test in
report)
    echo "KVMMIO-L2-CPUS: $(grep -c '^processor' /proc/cpuinfo)"
    # The chip name in /proc/interrupts: "GICv3" for arm,gic-v3, "GIC-0"
    # for arm,cortex-a15-gic.
    echo "KVMMIO-L2-GIC: $(awk '/arch_timer/ { print $(NF - 3); exit }' /proc/interrupts)"
    echo "KVMMIO-L2-VIRTIO-IDS: $(cat /sys/bus/virtio/devices/*/device 2>/dev/null | tr '\n' ' ')"
    echo "KVMMIO-L2-CONSOLE: $(cat /sys/class/tty/console/active 2>/dev/null)"
    # kvmmio's PL031: its counter, and the clock the kernel set from it at
    # boot (RTC_HCTOSYS), both read just before the line goes out; L1
    # compares them with its own clock as the line arrives.
    if [ -r /sys/class/rtc/rtc0/since_epoch ]; then
        echo "KVMMIO-L2-RTC: $(cat /sys/class/rtc/rtc0/since_epoch) $(date +%s) end $(cat /sys/class/rtc/rtc0/name 2>/dev/null)"
    else
        echo "KVMMIO-L2-RTC: none end"
    fi
    echo "KVMMIO-L2-UPTIME: $(cut -d' ' -f1 /proc/uptime)"
    ;;
reboot)
    echo "KVMMIO-L2-REBOOT"
    reboot -f
    ;;
reboot-once)
    # The disk is what survives a reboot (RAM is emptied, the device tree
    # made again): 16 bytes at its start mark the first boot as done.
    if [ "$(dd if=/dev/vda bs=16 count=1 2>/dev/null)" = KVMMIO-REBOOTED! ]; then
        echo "KVMMIO-L2-REBOOTED: cpus $(grep -c ^processor /proc/cpuinfo) net $(ls /sys/class/net | grep -v '^lo$' | tr '\n' ' ')"
    else
        printf KVMMIO-REBOOTED! | dd of=/dev/vda bs=16 count=1 conv=notrunc 2>/dev/null
        sync
        echo "KVMMIO-L2-REBOOT"
        reboot -f
    fi
    ;;
net)
    net_test
    ;;
switch)
    switch_test
    ;;
nat)
    nat_test
    ;;
net-resets)
    net_resets_test
    ;;
hostile)
    drivers=/sys/bus/platform/drivers/virtio-mmio
    for d in "$drivers"/*.virtio; do
        [ -e "$d" ] && echo "${d##*/}" >"$drivers/unbind"
    done
    echo "KVMMIO-L2-UNBOUND: $(ls -d "$drivers"/*.virtio 2>/dev/null | wc -l) left bound"
    hostile_guest "${reserved%,*}" "${reserved#*,}" || echo "KVMMIO-L2-ERROR: hostile_guest exited $?"
    ;;
disk-stall)
    # A virtio device's parent is its virtio-mmio platform device.
    for v in /sys/bus/virtio/devices/*; do
        [ "$(cat "$v/device" 2>/dev/null)" = 0x0002 ] || continue
        p=$(readlink -f "$v/..")
        echo "${p##*/}" >/sys/bus/platform/drivers/virtio-mmio/unbind ||
            echo "KVMMIO-L2-ERROR: cannot unbind ${p##*/}"
    done
    # Only hostile_guest's echo: the terminal's own would answer from L2's
    # kernel before the program ran, and twice.
    stty -echo || echo "KVMMIO-L2-ERROR: stty -echo failed"
    hostile_guest echo "${reserved%,*}" "${reserved#*,}" || echo "KVMMIO-L2-ERROR: hostile_guest echo exited $?"
    ;;
disk)
    i=0
    while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    if [ -b /dev/vda ]; then
        echo "KVMMIO-L2-DISK-SECTORS: $(cat /sys/block/vda/size)"
        echo "KVMMIO-L2-DISK-SERIAL: $(cat /sys/block/vda/serial 2>/dev/null)"
        echo "KVMMIO-L2-DISK-QUEUES: $(ls -d /sys/block/vda/mq/[0-9]* 2>/dev/null | wc -l)"
        echo "KVMMIO-L2-DISK-FIRST: $(dd if=/dev/vda bs=64k count=16 2>/dev/null | md5sum | cut -d' ' -f1)"
        dd if=/dev/urandom of=/tmp/pattern bs=64k count=16 2>/dev/null
        # conv=fsync: the write reaches the device and a FLUSH follows.
        dd if=/tmp/pattern of=/dev/vda bs=64k seek=16 conv=fsync 2>/dev/null ||
            echo "KVMMIO-L2-ERROR: writing /dev/vda failed"
        echo "KVMMIO-L2-DISK-WROTE: $(md5sum </tmp/pattern | cut -d' ' -f1)"
        echo 3 >/proc/sys/vm/drop_caches
        echo "KVMMIO-L2-DISK-READBACK: $(dd if=/dev/vda bs=64k skip=16 count=16 2>/dev/null | md5sum | cut -d' ' -f1)"
        # DISCARD: the third MiB, written first, then discarded (L1 checks
        # the image's allocated blocks went down: kvmmio punched a hole).
        echo "KVMMIO-L2-DISK-DISCARD-MAX: $(cat /sys/block/vda/queue/discard_max_bytes 2>/dev/null)"
        if dd if=/tmp/pattern of=/dev/vda bs=64k seek=32 conv=fsync 2>/dev/null &&
            blkdiscard -o 2097152 -l 1048576 /dev/vda; then
            echo "KVMMIO-L2-DISK-DISCARDED"
        else
            echo "KVMMIO-L2-ERROR: writing or discarding the third MiB of /dev/vda failed"
        fi
    else
        echo "KVMMIO-L2-ERROR: no /dev/vda"
    fi
    # The entropy device (kvmmio's --rng on, the default): the hw_random
    # core's current source and 64 bytes of /dev/hwrng. Last: a device
    # that never answers holds up only this read.
    echo "KVMMIO-L2-RNG-CURRENT: $(cat /sys/devices/virtual/misc/hw_random/rng_current 2>/dev/null)"
    echo "KVMMIO-L2-RNG-BYTES: $(dd if=/dev/hwrng bs=64 count=1 2>/dev/null | wc -c | tr -d ' ')"
    ;;
vsock)
    bytes=1048576
    # The driver reads its CID at probe; the vsock core answers it here.
    echo "KVMMIO-L2-VSOCK-CID: $(vsock_probe cid 2>&1)"
    vsock_probe listen 5001 "$bytes" 60 >/tmp/vsock-in 2>&1 &
    in_pid=$!
    sleep 0.5
    echo "KVMMIO-L2-VSOCK-LISTENING"
    wait "$in_pid"
    # Silent until L1 has read its counters after the transfer (its data
    # window: a console line would fall inside it) and says so on 5003.
    vsock_probe listen 5003 0 60 >/dev/null 2>&1
    echo "KVMMIO-L2-VSOCK-IN: $(cat /tmp/vsock-in)"
    echo "KVMMIO-L2-VSOCK-OUT: $(vsock_probe connect 2 5000 "$bytes" 60 2>&1)"
    # A driver reload: the device is reset (vhost stopped, the CID kept)
    # and activated again; then another transfer to the host.
    m=$(grep '/vmw_vsock_virtio_transport\.ko' /lib/modules/load-order | head -n 1)
    case $m in *.ko.xz) xzcat "/lib/modules/$m" >/tmp/module.ko ;; *) cp "/lib/modules/$m" /tmp/module.ko ;; esac
    if rmmod vmw_vsock_virtio_transport && insmod /tmp/module.ko; then
        echo "KVMMIO-L2-VSOCK-CID-AGAIN: $(vsock_probe cid 2>&1)"
        echo "KVMMIO-L2-VSOCK-AGAIN: $(vsock_probe connect 2 5000 "$bytes" 60 2>&1)"
    else
        echo "KVMMIO-L2-ERROR: reloading vmw_vsock_virtio_transport failed"
    fi
    echo "KVMMIO-L2-VSOCK-DONE"
    # Power off only once L1 has looked at kvmmio (it connects to 5002).
    vsock_probe listen 5002 0 60 >/dev/null 2>&1
    ;;
fs)
    # The tag of kvmmio's --fs (virtiofs, with fuse, loaded at boot).
    mkdir -p /mnt/share
    if mount -t virtiofs share /mnt/share; then
        dd if=/dev/urandom of=/tmp/from-l2 bs=64k count=16 2>/dev/null
        echo "KVMMIO-L2-FS-READ: $(md5sum </mnt/share/from-l1 | cut -d' ' -f1)"
        # The write is L1's data window, read from outside kvmmio: silent
        # from L1's window-open file to L1's window-closed file (a
        # console line would fall inside it); window-done says the data
        # is written and synced.
        i=0
        while [ ! -e /mnt/share/window-open ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
        cp /tmp/from-l2 /mnt/share/from-l2 && sync && : >/mnt/share/window-done && sync
        i=0
        while [ ! -e /mnt/share/window-closed ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
        echo "KVMMIO-L2-FS-WROTE: $(md5sum </tmp/from-l2 | cut -d' ' -f1)"
        umount /mnt/share
        # The driver unbound and bound again (a module on 6.1, built in on
        # 6.12): the device is reset (the queues taken back from virtiofsd)
        # and activated again on the same connection.
        dev=''
        for d in /sys/bus/virtio/devices/virtio*; do
            [ "$(cat "$d/device" 2>/dev/null)" = 0x001a ] && dev=${d##*/}
        done
        drv=/sys/bus/virtio/drivers/virtiofs
        if [ -n "$dev" ] && echo "$dev" >"$drv/unbind" && echo "$dev" >"$drv/bind" &&
            mount -t virtiofs share /mnt/share; then
            echo "KVMMIO-L2-FS-READ-AGAIN: $(md5sum </mnt/share/from-l1 | cut -d' ' -f1)"
            umount /mnt/share
        else
            echo "KVMMIO-L2-ERROR: rebinding virtiofs to ${dev:-no virtio device 0x001a} and mounting again failed"
        fi
    else
        echo "KVMMIO-L2-ERROR: mount -t virtiofs share failed"
    fi
    ;;
disk-kill)
    i=0
    while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    dd if=/dev/urandom of=/tmp/pattern bs=64k count=16 2>/dev/null
    # The fsync's FLUSH is answered only once the data is in the image:
    # from SYNCED on, kvmmio holds none of it.
    if dd if=/tmp/pattern of=/dev/vda bs=64k seek=32 conv=fsync 2>/dev/null; then
        echo "KVMMIO-L2-DISK-WROTE: $(md5sum </tmp/pattern | cut -d' ' -f1)"
        echo "KVMMIO-L2-DISK-SYNCED"
    else
        echo "KVMMIO-L2-ERROR: writing /dev/vda failed"
    fi
    while :; do sleep 60; done
    ;;
powerkey)
    power_key_test
    ;;
wait)
    echo "KVMMIO-L2-WAITING"
    while :; do sleep 60; done
    ;;
serve)
    ;; # 60-kvmmio-serve.sh
shell | '')
    setsid cttyhack sh
    ;;
*)
    echo "KVMMIO-L2-ERROR: unknown kvmmio.l2test=$test"
    ;;
esac
