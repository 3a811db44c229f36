#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# vmm-boot: kvmmio boots the Debian arm64 kernel (/l2/Image, /l2/initramfs)
# as an L2 guest on the vGIC this L1 offers (--gic auto), on the PL011
# console, and stops the way its documentation says:
#   cpus1, cpus2  L2 reaches /init (KVMMIO-L2-READY on kvmmio's stdout),
#                 reports its CPU count and GIC, powers off (poweroff -f:
#                 PSCI SYSTEM_OFF); kvmmio exits 0. L2 has an rtc0 (the
#                 PL031), and it and L2's clock, set from it at boot, are
#                 within 2 s of L1's clock (hvc-cpus2 checks the same)
#   reset         2 vCPUs, a disk and a virtio-net (userspace backend), as
#                 --user 65534 --group 65534, --on-reboot restart (the
#                 default; the other cases pass exit): L2 marks the disk and runs reboot -f
#                 (PSCI SYSTEM_RESET); the same kvmmio, confined and
#                 unprivileged, boots it again (READY twice), where L2
#                 reads the mark through virtio-blk, has both CPUs online
#                 and its eth0, and powers off: exit 0, stats reboots 1
#   reset-exit    --on-reboot exit: L2 runs reboot -f; kvmmio exits 3
#   unprivileged  --user 65534 --group 65534, 2 vCPUs: while L2 runs,
#                 kvmmio's real, effective, saved and filesystem IDs are
#                 65534 and it has no capability; SIGTERM then stops the VM
#                 (final stats written) within 1 s and kvmmio exits 143 (a
#                 root kvmmio's SIGTERM: hostile-guest and disk-stall)
#   console-input commands typed into kvmmio's stdin reach L2's shell
#                 through the PL011 (RX FIFO, level interrupt) and run there;
#                 the last one is poweroff -f
#   bad-guest     a 76-byte "kernel" whose load KVM cannot emulate: kvmmio
#                 exits 1 and logs the vCPU's registers
#   setup-errors  a vGIC this L1 lacks, more RAM than L1 has, (GICv2) more
#                 than 8 vCPUs: exit 2 with the fix named, no stats file left
#   hvc-cpus2     --console virtio (console=hvc0, modern transport), 2 vCPUs:
#                 L2's READY and report arrive over virtio-console; L2 sees
#                 device ID 0x0003 and hvc0 as its console; exit 0
#   hvc-v1-input  --console virtio,version=1 (legacy transport), 1 vCPU:
#                 commands typed on kvmmio's stdin reach L2's shell through
#                 the receiveq and print the device IDs (0x0003); exit 0
#   api           --api-socket, 2 vCPUs, driven by `kvmmio ctl`: stats
#                 (paused false, a footprint), pause (both vCPUs parked; their
#                 exits stand still over 1 s), resume (they run again),
#                 shutdown (L2 sees the PL061 power key through gpio-keys,
#                 then powers off: exit 0); the socket is gone after
#   disk          --disk on a 4 MiB image whose first MiB L1 filled, 2 vCPUs
#                 (so 2 request queues, VIRTIO_BLK_F_MQ): L2 sees 8192
#                 sectors, the serial and 2 hardware queues in
#                 /sys/block/vda/mq, reads that MiB (md5), writes
#                 1 MiB at 1 MiB with fsync and reads it back, then
#                 writes the third MiB and discards it (blkdiscard); after
#                 the power-off the image holds what L2 wrote and has at
#                 least 1 MiB fewer allocated blocks (kvmmio punched a
#                 hole); the disk's counters show reads, writes, a flush
#                 and a discard, no guest error,
#                 and, on the register mirror, no register read that exited;
#                 the entropy device (on by default) is L2's hw_random
#                 source (rng_current virtio_rng.N) and a 64-byte read of
#                 /dev/hwrng gets 64 bytes, which rng0 served
#   vsock         --vsock cid=3 (--name vsock-a, --rng off, 1 vCPU): L2 reads
#                 its CID (3); L1 (the host, CID 2) connects to L2's port
#                 5001 and L2 to L1's port 5000, each connection moving
#                 1 MiB of a checked pattern each way through vhost-vsock
#                 (L1's connection is a data window read from outside
#                 kvmmio, bench/outside-counters.sh, while L2 is silent:
#                 KVM exits, but not one MMIO exit to userspace and not
#                 one context switch of kvmmio's own threads);
#                 meanwhile a second kvmmio asking for CID 3 is refused
#                 (exit 2) naming vsock-a. L2 then reloads its driver (a
#                 reset and a second activation: activations 2), reads CID
#                 3 again and moves 1 MiB each way once more to L1;
#                 kvmmio's open fds are as many after as before. The
#                 bypass, from --stats: vsock0
#                 saw no trapped notify and injected or relayed no
#                 interrupt (vhost used the ioeventfds and the irqfd), its
#                 only polled notifies are the event queue's (Linux's one
#                 at probe), no register read exited (the mirror), and the
#                 event loop woke fewer than 64 times in the whole run
#                 (6 MiB is at least 1536 packets of 4 KiB)
#   fs            --fs tag=share on Debian 12's virtiofsd (from the tools
#                 disk; -o sandbox=chroot: L1's root is an initramfs, where
#                 a namespace cannot pivot_root) sharing an L1 directory
#                 (--rng off, 1 vCPU): L2 mounts the tag, reads the 1 MiB
#                 file L1 put there (md5) and writes one of its own, which
#                 L1 reads back with the md5 L2 printed; L2 then unmounts
#                 and rebinds its driver (a reset: GET_VRING_BASE, and a
#                 second activation: activations 2) and mounts and reads
#                 again. Before it, a kvmmio whose --fs socket nothing
#                 listens on is refused (exit 2) naming virtiofsd. The
#                 bypass, from --stats: fs0 saw no trapped or polled
#                 notify and injected or relayed no interrupt (virtiofsd
#                 used the ioeventfds and the irqfd), no register read
#                 exited (the mirror), the backend failed and hung up 0
#                 times, and the event loop woke fewer than 64 times in the
#                 whole run (2 MiB of FUSE reads and writes); and L2's
#                 write and sync, a data window L1 reads from outside
#                 kvmmio while L2 is silent (files in the share open and
#                 close it): KVM exits, but not one MMIO exit to
#                 userspace and not one context switch of kvmmio's threads
#   vhost-user-net  DPDK's testpmd (from the tools disk) forwards between
#                 two vhost-user ports, each the --net vhost-user of a kvmmio
#                 (--rng off, 1 vCPU, MACs given); L2a reaches L2b (ping)
#                 and sends it 1 MiB over TCP, whose md5 L2b prints as L2a
#                 did. Before it, a kvmmio whose socket nothing listens on
#                 is refused (exit 2) naming dpdk-testpmd. The bypass, from
#                 each --stats: net0 saw no trapped or polled notify and
#                 injected or relayed no interrupt (testpmd used the
#                 ioeventfds and the irqfds), no register read exited (the
#                 mirror), one activation and no backend failure, and each
#                 event loop woke fewer than 64 times in the whole run;
#                 and the transfer is a data window L1 reads from outside
#                 both kvmmios while both L2s are silent (each VM has a
#                 --vsock too, over which L1 says go and end and L2b says
#                 it has everything): KVM exits in each, but not one MMIO
#                 exit to userspace and not one context switch of either
#                 kvmmio's threads
#   disk-kill     L2 writes 1 MiB with fsync, says so, and kvmmio is then
#                 killed with SIGKILL: the image holds the MiB (a FLUSH is
#                 answered only after the data is in the file); a second
#                 kvmmio on the image was refused while the first ran,
#                 naming its PID, and gets the image once it is gone
#   names         two named VMs (--name vmA with its console on a socket,
#                 --name vmB), 1 vCPU each: `kvmmio list` shows both running
#                 with their PIDs, `kvmmio ctl vmA info` names it, `kvmmio
#                 console vmA` gets its console's output, a second --name
#                 vmB is refused naming the first's PID, `kvmmio stop`
#                 powers each off (the power key: exit 0), and their
#                 directories in /run/kvmmio are gone after
#   background    `kvmmio run ... &` typed into busybox sh -i in a tmux pane
#                 (tmux from the tools disk), the console on that terminal:
#                 never stopped (state T), the terminal's mode unchanged, a
#                 command typed meanwhile reaches the shell, and `kvmmio ctl
#                 shutdown` ends it with exit 0
# Every run's --stats JSON must show exits on every vCPU, the stop reason,
# and no guest errors. Each run is a test case in vmm-boot.json (GoogleTest's
# JSON shape, so the platform's summary counts them).
# L2's side is tests/arm64/l2-hooks/50-kvmmio-l2test.sh, chosen with
# kvmmio.l2test= on L2's command line. L2 stays `quiet`: every console
# byte is an MMIO exit in L1.
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
scenario_name=vmm-boot

require_dev /dev/kvm
command -v kvmmio >/dev/null || fail "kvmmio is not in /kvmmio/bin (scripts/arm64/prepare.sh puts it there)"
case $KVMMIO_L1_GIC in
3) want_gic=v3 want_l2_gic=GICv3 ;;
2) want_gic=v2 want_l2_gic=GIC-0 ;;
*) fail "KVMMIO_L1_GIC is '$KVMMIO_L1_GIC', not 3 or 2" ;;
esac

R=$KVMMIO_RESULTS

# check_stats FILE CPUS STATUS REASON: the --stats document of one run.
check_stats() {
    f=$1
    [ -s "$f" ] || { echo "no stats file $f"; return 1; }
    # One jq for the whole document (stats_flat, lib.sh); awk reads it.
    stats_flat "$f" || { echo "stats: $f is not JSON"; return 1; }
    [ "$(stats_value "$f" cpus)" = "$2" ] || { echo "stats: cpus is not $2"; return 1; }
    [ "$(stats_value "$f" gic)" = "$want_gic" ] || { echo "stats: gic is not $want_gic"; return 1; }
    [ "$(stats_value "$f" exit_status)" = "$3" ] || { echo "stats: exit_status is not $3"; return 1; }
    [ "$(stats_value "$f" stop_reason)" = "$4" ] || { echo "stats: stop_reason is not '$4'"; return 1; }
    [ "$(stats_value "$f" unclaimed_mmio)" = 0 ] || { echo "stats: unclaimed MMIO accesses"; return 1; }
    # Every vCPU recorded exits (secondaries at least the kick that stopped
    # them): "entries idle", the vCPU entries and those with 0 exits.
    vcpus=$(awk -F '\t' '{ n = split($1, p, ".") }
        p[1] == "vcpus" && n == 3 && p[3] == "total_exits" { e++; if ($2 == 0) z++ }
        END { print e + 0, z + 0 }' "$stats_flat_out")
    [ "${vcpus% *}" = "$2" ] || { echo "stats: not $2 vCPU entries with total_exits"; return 1; }
    [ "${vcpus#* }" = 0 ] || { echo "stats: a vCPU with no exits"; return 1; }
    # The start-up was timed up to the guest's first instruction.
    awk "BEGIN { exit !($(stats_value "$f" startup_ms.to_first_run) + 0 > 0) }" ||
        { echo "stats: no startup_ms.to_first_run"; return 1; }
    # No device saw a guest error on a clean boot.
    [ "$(guest_errors_total "$f")" = 0 ] || { echo "stats: guest errors"; return 1; }
    # The console device (the UART, or virtio-console: arg 5) printed.
    tx=$(device_counter "$f" "${5:-uart0}" tx_bytes)
    [ "${tx:-0}" -gt 0 ] || { echo "stats: ${5:-uart0} sent nothing"; return 1; }
}

# boot NAME CPUS L2TEST [STDIN [CONSOLE]]: runs kvmmio in the background
# (stdin from STDIN, default the scenario's /dev/null; --console CONSOLE,
# default serial, with L2's console on ttyAMA0, or hvc0 for virtio...),
# output in $R/NAME.* (stats in $STATS if set), more options in $EXTRA;
# --on-reboot $ON_REBOOT, default exit (tests/arm64/lib.sh says why);
# sets $pid.
boot() {
    : >"$R/$1.console"
    case ${5:-serial} in serial*) tty=ttyAMA0 ;; *) tty=hvc0 ;; esac
    kvmmio run --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" --mem 256M --cpus "$2" --gic auto \
        --console "${5:-serial}" --on-reboot "${ON_REBOOT:-exit}" \
        --cmdline-replace "console=$tty earlycon $L2_ARGS kvmmio.l2test=$3" --stats "${STATS:-$R/$1.json}" \
        ${EXTRA:-} <"${4:-/dev/null}" >"$R/$1.console" 2>"$R/$1.stderr" &
    pid=$! booted=$1
}

# wait_for FILE TEXT SECONDS: until TEXT is in FILE or kvmmio has ended.
wait_for() {
    i=0
    while ! grep -q "$2" "$1" && kill -0 "$pid" 2>/dev/null && [ $i -lt $(($3 * 5)) ]; do
        sleep 0.2; i=$((i + 1))
    done
    grep -q "$2" "$1"
}

# finish SECONDS: waits for kvmmio (killing it after SECONDS); sets $status.
finish() {
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt $(($1 * 5)) ]; do sleep 0.2; i=$((i + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
        # SIGTERM first: kvmmio then writes its stats (per-vCPU exits show
        # where a stuck guest was); SIGKILL if even that does not end it.
        # Either may find kvmmio gone already: not a failure of the kill.
        echo "${booted:-kvmmio}: kvmmio still runs after $1 s; L2's last console lines:"
        tail -n 5 "$R/${booted:-none}.console" 2>/dev/null | tr -d '\r' | sed 's/^/    /'
        kill -TERM "$pid" 2>/dev/null || true
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" || true
        # The status carries where L2 stood, so that a failure's one line
        # in CI's log says whether L2 booted at all.
        status="timeout (L2's last line: '$(tr -d '\r' <"$R/${booted:-none}.console" 2>/dev/null | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-160 | tr '"' _)')"
    else
        status=0
        wait "$pid" || status=$?
    fi
}

# check_rtc CONSOLE L1_SECONDS: L2's KVMMIO-L2-RTC line (rtc0's seconds,
# then L2's clock) against L1's clock read as the line arrived. L2 read
# both just before printing, so L1's is ahead by the line's trip only;
# 2 s allows that, whole seconds on both sides and the half second the
# kernel adds when it sets its clock from the RTC.
check_rtc() {
    line=$(l2_marker "$1" RTC)
    case $line in
    '') echo "L2 printed no KVMMIO-L2-RTC line"; return 1 ;;
    none*) echo "L2 has no /sys/class/rtc/rtc0: rtc-pl031 did not bind kvmmio's PL031"; return 1 ;;
    esac
    [ -n "$2" ] || { echo "L1's clock was not read as L2's KVMMIO-L2-RTC line arrived"; return 1; }
    rtc=${line%% *} rest=${line#* }
    l2=${rest%% *}
    case $rtc$l2 in *[!0-9]*) echo "L2's RTC line is not two numbers: '$line'"; return 1 ;; esac
    for v in "rtc0 (the PL031) reads $rtc" "L2's clock reads $l2"; do
        d=$(($2 - ${v##* }))
        if [ "$d" -lt -2 ] || [ "$d" -gt 2 ]; then echo "$v, L1's clock $2: $d s apart, not within 2 s"; return 1; fi
    done
}

# run_poweroff CPUS [virtio]: a clean boot to /init and power-off, with the
# guest's own view checked; with virtio, on --console virtio: everything
# L2 prints (READY included) comes over hvc0, L2 sees virtio device 3.
run_poweroff() {
    if [ "${2:-}" = virtio ]; then
        name=hvc-cpus$1 con=virtio dev=console0 tty=hvc0
        step "kvmmio --console virtio: L2 with $1 vCPU(s) runs on hvc0 and powers off"
    else
        name=cpus$1 con=serial dev=uart0 tty=ttyAMA0
        step "kvmmio boots L2 with $1 vCPU(s) on vGICv$KVMMIO_L1_GIC and powers off"
    fi
    t0=$(uptime_s)
    boot "$name" "$1" report /dev/null "$con"
    # L1's clock as L2's RTC line arrives (0.2 s polls), for check_rtc.
    l1_now=''
    if wait_for "$R/$name.console" 'KVMMIO-L2-RTC: .* end' 180; then l1_now=$(date +%s); fi
    finish 180
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    out=$R/$name.console msg=''
    if [ "$status" != 0 ]; then msg="kvmmio exit status $status, not 0 ($(tail -n 3 "$R/$name.stderr" | tr '\n"' ' _'))"
    elif ! grep -q KVMMIO-L2-READY "$out"; then msg="no KVMMIO-L2-READY on $tty: L2 never reached /init (or its stdio is elsewhere)"
    elif ! grep -q "KVMMIO-L2-CPUS: $1" "$out"; then msg="L2 does not see $1 CPU(s): $(grep KVMMIO-L2-CPUS "$out")"
    elif ! grep -q "KVMMIO-L2-GIC: $want_l2_gic" "$out"; then msg="L2 does not run on $want_l2_gic: $(grep KVMMIO-L2-GIC "$out")"
    elif ! grep -q "KVMMIO-L2-CONSOLE: $tty" "$out"; then msg="L2's console is not $tty: $(grep KVMMIO-L2-CONSOLE "$out")"
    elif ! err=$(check_rtc "$out" "$l1_now"); then msg=$err
    elif [ $con = virtio ] && ! grep -q "KVMMIO-L2-VIRTIO-IDS: .*0x0003" "$out"; then
        msg="L2 has no virtio device 3: $(grep KVMMIO-L2-VIRTIO-IDS "$out")"
    elif ! err=$(check_stats "$R/$name.json" "$1" 0 poweroff $dev); then msg=$err
    elif [ $con = virtio ] && ! err=$(check_hvc_stats "$R/$name.json" 2); then msg=$err
    fi
    echo "$name: kvmmio exit $status after $t s; L2 $(grep -h 'KVMMIO-L2-UPTIME' "$out" || echo 'no uptime')"
    echo "$name: L2's RTC line '$(l2_marker "$out" RTC)', L1's clock then ${l1_now:-unread}"
    echo "$name: kvmmio start-up (ms): $(startup_line "$R/$name.json")"
    record "$name" "$t" "$msg"
}

run_reset() {
    step "L2 reboots (PSCI SYSTEM_RESET): kvmmio boots it again in place"
    img=/tmp/vmm-boot-reboot.img d=/tmp/kvmmio-reboot
    rm -f "$img"
    dd if=/dev/zero of="$img" bs=64k count=16 2>/dev/null
    mkdir -p "$d" && chmod 1777 "$d"  # the --stats file's directory: the user writes it
    t0=$(uptime_s)
    ON_REBOOT=restart STATS=$d/reset.json EXTRA="--disk $img --net tap=kvmreboot0,vhost=off --user 65534 --group 65534" \
        boot reset 2 reboot-once
    finish 300
    cp "$d/reset.json" "$R/reset.json" 2>/dev/null || true
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    out=$R/reset.console j=$R/reset.json msg=''
    readies=$(grep -c KVMMIO-L2-READY "$out")
    reboots=$(stats_value "$j" reboots)
    echo "reset: kvmmio exit $status after $t s; L2 ready $readies time(s); reboots ${reboots:-?};" \
        "$(grep -h KVMMIO-L2-REBOOTED "$out" || echo 'no second boot')"
    if [ "$status" != 0 ]; then msg="kvmmio exit status $status, not 0 ($(tail -n 3 "$R/reset.stderr" | tr '\n"' ' _'))"
    elif ! grep -Eq 'KVMMIO-L2-REBOOT($|[^E])' "$out"; then msg="L2 never got to reboot -f"
    elif [ "$readies" != 2 ]; then msg="L2 reached /init $readies time(s), not 2 (once, then after the reboot)"
    elif ! grep -q "KVMMIO-L2-REBOOTED: cpus 2 net eth0" "$out"; then
        msg="after the reboot L2 did not find its disk's mark with 2 CPUs and eth0: $(grep KVMMIO-L2-REBOOTED "$out" || echo 'no KVMMIO-L2-REBOOTED')"
    elif [ "$reboots" != 1 ]; then msg="stats: reboots is ${reboots:-missing}, not 1"
    elif ! grep -q 'booting it again in place (reboot 1)' "$R/reset.stderr"; then msg="kvmmio did not log the reboot"
    elif ! err=$(check_stats "$j" 2 0 poweroff); then msg=$err
    fi
    rm -f "$img"
    record reset "$t" "$msg"
}

run_reset_exit() {
    step "L2 reboots under --on-reboot exit: kvmmio exits 3"
    t0=$(uptime_s)
    ON_REBOOT=exit boot reset-exit 1 reboot
    finish 180
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    msg=''
    if [ "$status" != 3 ]; then msg="kvmmio exit status $status, not 3"
    elif ! grep -q KVMMIO-L2-REBOOT "$R/reset-exit.console"; then msg="L2 never got to reboot -f"
    elif [ "$(stats_value "$R/reset-exit.json" reboots)" != 0 ]; then msg="stats: reboots is not 0"
    elif ! err=$(check_stats "$R/reset-exit.json" 1 3 reset); then msg=$err
    fi
    record reset-exit "$t" "$msg"
}

# What kvmmio holds once set up with --user/--group: read from /proc while
# L2 runs, as root.
run_unprivileged() {
    step "--user 65534 --group 65534: L2 runs under an unprivileged kvmmio, which still stops on SIGTERM"
    t0=$(uptime_s)
    d=/tmp/kvmmio-unprivileged
    mkdir -p "$d" && chmod 1777 "$d"  # the --stats file's directory: the user writes it
    STATS=$d/unprivileged.json EXTRA="--user 65534 --group 65534" boot unprivileged 2 wait
    uids='' gids='' caps='' groups='' prm=''
    if wait_for "$R/unprivileged.console" KVMMIO-L2-WAITING 180; then
        st=$(cat "/proc/$pid/status" 2>/dev/null || true)
        uids=$(echo "$st" | awk '/^Uid:/ { print $2, $3, $4, $5 }')
        gids=$(echo "$st" | awk '/^Gid:/ { print $2, $3, $4, $5 }')
        groups=$(echo "$st" | awk '/^Groups:/ { $1 = ""; print }' | tr -d ' ')
        caps=$(echo "$st" | awk '/^CapEff:/ { print $2 }')
        prm=$(echo "$st" | awk '/^CapPrm:/ { print $2 }')
    fi
    stop_with_sigterm "$d/unprivileged.json"
    finish 60
    cp "$d/unprivileged.json" "$R/unprivileged.json" 2>/dev/null || true
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    echo "unprivileged: uids '$uids' gids '$gids' groups '$groups' CapEff $caps CapPrm $prm; stopped ${stopped_s:-?} s after SIGTERM, exited after $exit_s s"
    msg=''
    if ! grep -q KVMMIO-L2-WAITING "$R/unprivileged.console"; then
        msg="L2 never got to its hook (exit status $status: $(tail -n 2 "$R/unprivileged.stderr" | tr '\n"' ' _'))"
    elif [ "$uids" != "65534 65534 65534 65534" ] || [ "$gids" != "65534 65534 65534 65534" ]; then
        msg="kvmmio runs as uids '$uids', gids '$gids', not 65534"
    elif [ -n "$groups" ]; then msg="supplementary groups kept: $groups"
    elif [ "$caps" != 0000000000000000 ] || [ "$prm" != 0000000000000000 ]; then msg="capabilities kept: CapEff $caps CapPrm $prm"
    elif [ "$status" != 143 ]; then msg="kvmmio exit status $status, not 143 ($(tail -n 1 "$R/unprivileged.stderr"))"
    elif err=$(sigterm_bounds) && [ -n "$err" ]; then msg=$err
    elif ! err=$(check_stats "$R/unprivileged.json" 2 143 "signal SIGTERM"); then msg=$err
    fi
    record unprivileged "$t" "$msg"
}

# type_into_shell NAME CONSOLE LINE: boots L2's shell (1 vCPU, --console
# CONSOLE) with kvmmio's stdin on a FIFO; once L2 is ready types LINE and,
# after KVMMIO-ECHO-42 appears (or 60 s), poweroff -f. Sets $status, $t.
# A LINE that prints KVMMIO-ECHO-$((6*7)) proves a shell ran it: the
# terminal's echo of the line shows it unexpanded.
type_into_shell() {
    t0=$(uptime_s)
    fifo=/tmp/kvmmio-stdin-$1
    rm -f "$fifo"
    mkfifo "$fifo"
    boot "$1" 1 shell "$fifo" "$2"
    exec 3>"$fifo"  # (kvmmio's open of its stdin completes here)
    if wait_for "$R/$1.console" KVMMIO-L2-READY 180; then
        sleep 1
        echo "$3" >&3
        wait_for "$R/$1.console" KVMMIO-ECHO-42 60 || true
        echo 'poweroff -f' >&3
    fi
    finish 60
    exec 3>&-
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
}

run_console_input() {
    step "keys typed on kvmmio's stdin reach L2's shell through the PL011"
    # The two lines typed are 38 bytes (rx_bytes below).
    # shellcheck disable=SC2016 # expanded by L2's shell, not here
    type_into_shell console-input serial 'echo KVMMIO-ECHO-$((6*7))'
    out=$R/console-input.console
    rx=$(device_counter "$R/console-input.json" uart0 rx_bytes 2>/dev/null)
    irqs=$(device_counter "$R/console-input.json" uart0 interrupts 2>/dev/null)
    msg=''
    if ! grep -q KVMMIO-ECHO-42 "$out"; then msg="the typed command did not run in L2 (exit status $status)"
    elif [ "$status" != 0 ]; then msg="kvmmio exit status $status after poweroff -f, not 0"
    elif ! err=$(check_stats "$R/console-input.json" 1 0 poweroff); then msg=$err
    elif [ "${rx:-0}" -lt 38 ] || [ "${irqs:-0}" -lt 1 ]; then msg="stats: rx_bytes ${rx:-?}, interrupts ${irqs:-?}"
    fi
    record console-input "$t" "$msg"
}

# check_hvc_stats FILE VERSION: the virtio console's own counters: the
# transport version asked for, no DEVICE_NEEDS_RESET, one activation.
check_hvc_stats() {
    [ "$(device_counter "$1" console0 transport_version)" = "$2" ] ||
        { echo "stats: console0 transport_version is not $2"; return 1; }
    [ "$(device_counter "$1" console0 needs_reset)" = 0 ] || { echo "stats: console0 needed a reset"; return 1; }
    [ "$(device_counter "$1" console0 activations)" = 1 ] || { echo "stats: console0 activations is not 1"; return 1; }
}

# Keys into L2's shell over the legacy transport's receiveq.
run_hvc_input() {
    step "kvmmio --console virtio,version=1: keys on stdin reach L2's shell on hvc0"
    # 78 bytes typed; the device IDs printed next to 42.
    # shellcheck disable=SC2016 # expanded by L2's shell, not here
    type_into_shell hvc-v1-input virtio,version=1 'echo KVMMIO-ECHO-$((6*7)) $(cat /sys/bus/virtio/devices/*/device)'
    out=$R/hvc-v1-input.console
    rx=$(device_counter "$R/hvc-v1-input.json" console0 rx_bytes 2>/dev/null)
    msg=''
    if ! grep -q KVMMIO-L2-READY "$out"; then msg="no KVMMIO-L2-READY over hvc0 (exit status $status)"
    elif ! grep -q KVMMIO-ECHO-42 "$out"; then msg="the typed command did not run in L2 (exit status $status)"
    elif ! grep -q "KVMMIO-ECHO-42 .*0x0003" "$out"; then msg="L2 has no virtio device 3: $(grep KVMMIO-ECHO-42 "$out")"
    elif [ "$status" != 0 ]; then msg="kvmmio exit status $status after poweroff -f, not 0"
    elif ! err=$(check_stats "$R/hvc-v1-input.json" 1 0 poweroff console0); then msg=$err
    elif ! err=$(check_hvc_stats "$R/hvc-v1-input.json" 1); then msg=$err
    elif [ "${rx:-0}" -lt 78 ]; then msg="stats: console0 rx_bytes ${rx:-?}, less than the 78 bytes typed"
    fi
    record hvc-v1-input "$t" "$msg"
}

# The control socket on a real VM: kvmmio ctl SOCKET CMD, one JSON line back.
run_api() {
    step "kvmmio --api-socket: kvmmio ctl pauses, resumes and shuts L2 down with the power key"
    sock=/tmp/vmm-boot-api.sock
    t0=$(uptime_s)
    EXTRA="--api-socket $sock" boot api 2 powerkey
    msg=''
    ctl() { kvmmio ctl "$sock" "$1" 2>>"$R/api.ctl-stderr"; }
    exits() { ctl stats | jq '[.vcpus[].total_exits] | add'; }
    if ! wait_for "$R/api.console" KVMMIO-L2-POWER-KEY-READY 180; then
        msg="L2 never got ready for the power key ($(grep KVMMIO-L2-ERROR "$R/api.console" | head -n 1 | tr '\r\n' '  '))"
    else
        # L2's ticks (its own uptime, every half second): none while paused.
        ticks() { grep -c KVMMIO-L2-TICK "$R/api.console"; }
        before=$(ctl stats | jq -r '"\(.paused) \(.footprint.threads) \(.footprint.rss_outside_guest_ram_kib)"')
        paused=$(ctl pause | jq -r '"\(.result) \(.parked_vcpus)"')
        k1=$(ticks) e1=$(exits); sleep 2; e2=$(exits) k2=$(ticks)
        during=$(ctl stats | jq -r .paused)
        resumed=$(ctl resume | jq -r .result)
        sleep 2; e3=$(exits) k3=$(ticks)
        sd0=$(uptime_s)
        shutdown=$(ctl shutdown | jq -r .result)
        echo "api: before pause: paused threads rss_kib = $before; pause: $paused; exits $e1 -> $e2 paused, $e3 resumed; L2 ticks $k1 -> $k2 paused, $k3 resumed; shutdown: $shutdown"
        case $before in
        "false "[1-9]*" "[1-9]*) ;;
        *) msg="stats before pause: '$before' (paused threads rss_kib)" ;;
        esac
        if [ -n "$msg" ]; then :
        elif [ "$paused" != "paused 2" ]; then msg="pause answered '$paused', not 'paused 2'"
        elif [ "$during" != true ]; then msg="stats while paused: paused is '$during'"
        elif [ -z "$e1" ] || [ "$e1" != "$e2" ]; then msg="vCPU exits moved while paused: '$e1' -> '$e2'"
        elif [ "$k1" = 0 ] || [ "$k1" != "$k2" ]; then msg="L2 ticked while paused (or never): $k1 -> $k2 ticks"
        elif [ "$k3" -le "$k2" ]; then msg="L2 did not tick again after resume: $k2 -> $k3 ticks"
        elif [ "$resumed" != resumed ]; then msg="resume answered '$resumed'"
        elif [ "$shutdown" != "shutdown requested" ]; then msg="shutdown answered '$shutdown'"
        fi
    fi
    finish 60
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    # From kvmmio ctl shutdown to kvmmio's exit: the issue's bound, 5 s.
    sd=$(awk -v a="${sd0:-0}" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    echo "api: shutdown to exit: $sd s"
    if [ -n "$msg" ]; then :
    elif [ "$status" != 0 ]; then msg="kvmmio exit status $status after the power key, not 0"
    elif awk -v s="$sd" 'BEGIN { exit !(s > 5) }'; then msg="kvmmio exited $sd s after shutdown was asked, not within 5 s"
    elif ! tr -d '\r' <"$R/api.console" | grep -qx KVMMIO-L2-POWER-KEY; then msg="L2 never saw the power key"
    elif [ -e "$sock" ]; then msg="$sock is still there after kvmmio exited"
    elif ! err=$(check_stats "$R/api.json" 2 0 poweroff); then msg=$err
    fi
    record api "$t" "$msg"
}

# run_background: `kvmmio run ... &` typed into an interactive shell on a
# terminal (busybox sh -i in a tmux pane, tmux from the tools disk), its
# console on that terminal, as a user backgrounds a VM: kvmmio is never
# stopped, leaves the terminal's mode as the shell had it, takes none of
# the keys typed to the shell while it runs, and its guest shuts down
# cleanly through the control socket (exit 0).
# Named VMs: their runtime directories in /run/kvmmio, the commands that
# find them by name.
run_names() {
    step "kvmmio --name: two named VMs listed, one's console attached, a taken name refused, both stopped by name"
    t0=$(uptime_s)
    mkdir -p /run
    EXTRA="--name vmA" boot names-a 1 powerkey /dev/null serial,socket
    pid_a=$pid
    EXTRA="--name vmB" boot names-b 1 powerkey
    pid_b=$pid
    msg='' cpid=''
    # vmA's console is its socket: attach once it is there.
    i=0
    while [ $i -lt 300 ] && kill -0 "$pid_a" 2>/dev/null; do
        if [ -S /run/kvmmio/vmA/console.sock ]; then
            kvmmio console vmA </dev/null >"$R/names-a.attached" 2>"$R/names-a.attach-stderr" &
            cpid=$!
            break
        fi
        sleep 0.2; i=$((i + 1))
    done
    pid=$pid_b
    if [ -z "$cpid" ]; then
        msg="vmA's console socket /run/kvmmio/vmA/console.sock never appeared ($(tail -n 1 "$R/names-a.stderr"))"
    elif ! wait_for "$R/names-b.console" KVMMIO-L2-POWER-KEY-READY 180; then
        msg="vmB never got ready for the power key"
    else
        pid=$pid_a
        wait_for "$R/names-a.attached" KVMMIO-L2-POWER-KEY-READY 180 ||
            wait_for "$R/names-a.attached" KVMMIO-L2-TICK 30 ||
            msg="nothing of vmA's console reached kvmmio console vmA ($(tail -n 1 "$R/names-a.attach-stderr"))"
    fi
    if [ -z "$msg" ]; then
        kvmmio list >"$R/names.list" 2>>"$R/names.stderr"
        cat "$R/names.list"
        info=$(kvmmio ctl vmA info 2>>"$R/names.stderr" | jq -r '"\(.name) \(.pid) \(.vcpus) \(.mem_mib)"')
        taken=0
        kvmmio run --kernel "$KVMMIO_L2/Image" --name vmB >/dev/null 2>"$R/names-taken.stderr" || taken=$?
        if ! awk -v a="$pid_a" -v b="$pid_b" '$1 == "vmA" && $2 == a && $3 == "running" { ka = 1 }
                $1 == "vmB" && $2 == b && $3 == "running" { kb = 1 } END { exit !(ka && kb) }' "$R/names.list"; then
            msg="kvmmio list does not show vmA ($pid_a) and vmB ($pid_b) running: $(tr '\n' '|' <"$R/names.list")"
        elif [ "$info" != "vmA $pid_a 1 256" ]; then
            msg="kvmmio ctl vmA info: '$info', not 'vmA $pid_a 1 256'"
        elif [ "$taken" != 2 ] || ! grep -q "a VM of that name runs (kvmmio, PID $pid_b)" "$R/names-taken.stderr"; then
            msg="a second --name vmB was not refused naming PID $pid_b (status $taken: $(tail -n 1 "$R/names-taken.stderr"))"
        fi
    fi
    sb=0 sa=0
    stop_b=$(kvmmio stop vmB --timeout 30 2>&1) || sb=$?
    stop_a=$(kvmmio stop vmA --timeout 30 2>&1) || sa=$?
    echo "names: kvmmio stop vmB: '$stop_b' (status $sb); kvmmio stop vmA: '$stop_a' (status $sa)"
    pid=$pid_b; finish 30; status_b=$status
    pid=$pid_a; finish 30; status_a=$status
    # The console client ends with its VM's socket.
    i=0
    while [ -n "$cpid" ] && kill -0 "$cpid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    attached=ended
    if [ -n "$cpid" ] && kill -0 "$cpid" 2>/dev/null; then attached=running; kill "$cpid" 2>/dev/null; fi
    left=$(kvmmio list 2>&1 | sed 1d | tr '\n' '|')
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    if [ -n "$msg" ]; then :
    elif [ "$sb" != 0 ] || [ "$stop_b" != "vmB: powered off" ]; then msg="kvmmio stop vmB: '$stop_b' (status $sb)"
    elif [ "$sa" != 0 ] || [ "$stop_a" != "vmA: powered off" ]; then msg="kvmmio stop vmA: '$stop_a' (status $sa)"
    elif [ "$status_a" != 0 ] || [ "$status_b" != 0 ]; then msg="exit statuses vmA $status_a, vmB $status_b, not 0"
    elif [ "$attached" != ended ]; then msg="kvmmio console vmA still ran after vmA stopped"
    elif [ -e /run/kvmmio/vmA ] || [ -e /run/kvmmio/vmB ]; then msg="a directory is left in /run/kvmmio: $(ls /run/kvmmio | tr '\n' ' ')"
    elif [ -n "$left" ]; then msg="kvmmio list after both stopped: '$left'"
    elif ! err=$(check_stats "$R/names-a.json" 1 0 poweroff); then msg="vmA: $err"
    elif ! err=$(check_stats "$R/names-b.json" 1 0 poweroff); then msg="vmB: $err"
    fi
    record names "$t" "$msg"
}

run_background() {
    step "kvmmio run ... & from an interactive shell under tmux: never stopped, the terminal left alone"
    t0=$(uptime_s) msg=''
    tmux=$(command -v tmux || echo /tools/tmux)
    sock=/tmp/vmm-boot-bg.sock tsock=/tmp/vmm-boot-bg.tmux
    rm -f "$sock" "$tsock" /tmp/bg.stty-before /tmp/bg.stty-during /tmp/bg.typed /tmp/bg.status
    if [ ! -x "$tmux" ]; then
        record background 0 "no tmux: neither on PATH (apt-get install tmux) nor on the tools disk (/tools/tmux, run.sh --tools)"
        return
    fi
    # tmux's panes are ptys: devpts, which L1's /init does not mount.
    [ -d /dev/pts ] || mkdir /dev/pts
    grep -q ' /dev/pts devpts ' /proc/mounts || mount -t devpts devpts /dev/pts
    tm() { "$tmux" -S "$tsock" "$@"; }
    keys() { tm send-keys -t bg "$1" Enter; }
    pane() { tm capture-pane -p -t bg -S -2000 2>/dev/null | tr -d '\r'; }
    if ! tm -f /dev/null new-session -d -s bg -x 160 -y 50 "sh -i" 2>"$R/background.tmux-stderr"; then
        record background 0 "tmux new-session failed: $(head -n 1 "$R/background.tmux-stderr")"
        return
    fi
    keys "stty -g >/tmp/bg.stty-before"
    keys "{ kvmmio run --kernel $KVMMIO_L2/Image --initrd $KVMMIO_L2/initramfs --mem 256M --cpus 1 --gic auto --api-socket $sock --stats $R/background.json --cmdline-replace 'console=ttyAMA0 earlycon $L2_ARGS kvmmio.l2test=powerkey'; echo \$? >/tmp/bg.status; } &"
    i=0 pid=''
    while [ -z "$pid" ] && [ $i -lt 50 ]; do sleep 0.2; pid=$(pidof kvmmio || true); i=$((i + 1)); done
    # Its state, sampled while the guest boots: T is stopped by the terminal.
    states='' i=0
    while [ -n "$pid" ] && [ $i -lt 900 ] && ! pane | grep -q KVMMIO-L2-POWER-KEY-READY; do
        states="$states$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)"
        sleep 0.2; i=$((i + 1))
    done
    # The shell still has the terminal: what is typed now is its command.
    keys "stty -g >/tmp/bg.stty-during; echo typed >/tmp/bg.typed"
    sleep 3
    shutdown=$(kvmmio ctl "$sock" shutdown 2>>"$R/background.ctl-stderr" | jq -r .result)
    i=0
    while [ ! -s /tmp/bg.status ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
    pane >"$R/background.console"
    tm kill-server 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    echo "background: kvmmio states while booting: $(echo "$states" | fold -w1 | sort | uniq -c | tr -s ' \n' ' '); shutdown: $shutdown; exit status $(cat /tmp/bg.status 2>/dev/null)"
    if [ -z "$pid" ]; then msg="kvmmio did not start from the tmux pane (see background.console)"
    elif ! grep -q KVMMIO-L2-POWER-KEY-READY "$R/background.console"; then msg="L2 never got ready (see background.console)"
    elif echo "$states" | grep -q T; then msg="kvmmio was stopped (state T) while in the background"
    elif [ ! -s /tmp/bg.stty-before ] || ! cmp -s /tmp/bg.stty-before /tmp/bg.stty-during; then
        msg="the terminal's mode changed while kvmmio ran in the background ($(cat /tmp/bg.stty-before 2>/dev/null) -> $(cat /tmp/bg.stty-during 2>/dev/null))"
    elif [ "$(cat /tmp/bg.typed 2>/dev/null)" != typed ]; then msg="a command typed to the shell while kvmmio ran did not reach the shell"
    elif [ "$shutdown" != "shutdown requested" ]; then msg="shutdown answered '$shutdown'"
    elif [ "$(cat /tmp/bg.status 2>/dev/null)" != 0 ]; then msg="kvmmio exit status '$(cat /tmp/bg.status 2>/dev/null)' after the shutdown, not 0"
    elif ! err=$(check_stats "$R/background.json" 1 0 poweroff); then msg=$err
    fi
    record background "$t" "$msg"
}

# virtio-blk on a real guest: what L2 reads is the image, what L2 writes
# and flushes is in the image once kvmmio has exited.
run_disk() {
    step "kvmmio --disk: L2 reads and writes /dev/vda (virtio-blk), the image holds it"
    img=/tmp/vmm-boot-disk.img
    rm -f "$img"
    dd if=/dev/urandom of="$img" bs=64k count=16 2>/dev/null
    dd if=/dev/zero of="$img" bs=64k count=48 seek=16 2>/dev/null
    first=$(dd if="$img" bs=64k count=16 2>/dev/null | md5sum | cut -d' ' -f1)
    # Every block of the image is allocated now (dd wrote the zeros too),
    # 512-byte units: after L2's discard of one MiB, 2048 fewer.
    blocks0=$(stat -c %b "$img")
    t0=$(uptime_s)
    EXTRA="--disk $img,serial=kvmmio-disk0" boot disk 2 disk
    finish 180
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    out=$R/disk.console j=$R/disk.json msg=''
    written=$(dd if="$img" bs=64k skip=16 count=16 2>/dev/null | md5sum | cut -d' ' -f1)
    blocks1=$(stat -c %b "$img") discards=$(device_counter "$j" disk0 discards)
    reads=$(device_counter "$j" disk0 reads) writes=$(device_counter "$j" disk0 writes)
    flushes=$(device_counter "$j" disk0 flushes) exited=$(device_counter "$j" disk0 register_reads)
    mirror=$(device_counter "$j" disk0 regs_mirror) queues=$(device_counter "$j" disk0 queues)
    rng=$(l2_marker "$out" RNG-CURRENT) rng_read=$(l2_marker "$out" RNG-BYTES)
    rng_served=$(device_counter "$j" rng0 bytes_served)
    echo "disk: L2's hw_random source '$rng', $rng_read bytes read from /dev/hwrng; rng0 served ${rng_served:-?} bytes"
    echo "disk: L2 sectors $(l2_marker "$out" DISK-SECTORS), serial '$(l2_marker "$out" DISK-SERIAL)'," \
        "$(l2_marker "$out" DISK-QUEUES) hardware queues of ${queues:-?} offered;" \
        "reads ${reads:-?} writes ${writes:-?} flushes ${flushes:-?} discards ${discards:-?};" \
        "allocated 512-byte blocks of the image $blocks0 before, $blocks1 after;" \
        "regs_mirror ${mirror:-?}, register reads that exited ${exited:-?}"
    if [ "$status" != 0 ]; then msg="kvmmio exit status $status, not 0 ($(tail -n 3 "$R/disk.stderr" | tr '\n"' ' _'))"
    elif grep -q KVMMIO-L2-ERROR "$out"; then msg="L2: $(grep KVMMIO-L2-ERROR "$out" | head -n 2 | tr '\r\n' '  ')"
    elif [ "$(l2_marker "$out" DISK-SECTORS)" != 8192 ]; then msg="L2 sees $(l2_marker "$out" DISK-SECTORS) sectors, not 8192"
    elif [ "$(l2_marker "$out" DISK-SERIAL)" != kvmmio-disk0 ]; then msg="L2 reads serial '$(l2_marker "$out" DISK-SERIAL)'"
    elif [ "$queues" != 2 ] || [ "$(l2_marker "$out" DISK-QUEUES)" != 2 ]; then
        msg="disk0 offers ${queues:-?} queues and L2 uses $(l2_marker "$out" DISK-QUEUES): both should be 2 (one per vCPU)"
    elif [ "$(l2_marker "$out" DISK-FIRST)" != "$first" ]; then msg="L2 read a first MiB other than the image's"
    elif [ "$(l2_marker "$out" DISK-WROTE)" != "$written" ]; then msg="the image does not hold the MiB L2 wrote"
    elif [ "$(l2_marker "$out" DISK-READBACK)" != "$written" ]; then msg="L2 read back other bytes than it wrote"
    elif ! err=$(check_stats "$j" 2 0 poweroff); then msg=$err
    elif [ "${reads:-0}" -lt 1 ] || [ "${writes:-0}" -lt 1 ] || [ "${flushes:-0}" -lt 1 ]; then
        msg="disk0 counters: reads ${reads:-?}, writes ${writes:-?}, flushes ${flushes:-?}: each should be at least 1"
    elif [ "$mirror" = 1 ] && [ "$exited" != 0 ]; then msg="$exited register reads of disk0 exited on the mirror"
    elif ! grep -q KVMMIO-L2-DISK-DISCARDED "$out" || [ "${discards:-0}" -lt 1 ]; then
        msg="L2's discard of a MiB did not reach kvmmio (discard_max_bytes $(l2_marker "$out" DISK-DISCARD-MAX), discards ${discards:-?})"
    elif [ $((blocks0 - blocks1)) -lt 2048 ]; then
        msg="after L2 discarded a MiB the image has $blocks1 allocated 512-byte blocks, not at most $((blocks0 - 2048))"
    elif [ "${rng#virtio_rng.}" = "$rng" ]; then
        msg="L2's hw_random rng_current is '$rng', not virtio_rng.N: virtio_rng did not bind kvmmio's entropy device"
    elif [ "$rng_read" != 64 ]; then msg="a 64-byte read of L2's /dev/hwrng got '$rng_read' bytes"
    elif [ "${rng_served:-0}" -lt 64 ]; then msg="rng0 served ${rng_served:-no} bytes, fewer than the 64 L2 read"
    fi
    rm -f "$img"
    record disk "$t" "$msg"
}

# bypass_counters JSON DEV: what says whether kvmmio was in DEV's data path
# (a vhost or vhost-user backend's device), from the run's --stats: its
# notifies trapped and polled, the interrupts it injected and relayed, its
# register reads that exited and whether the mirror served them, its
# activations, and the run's event-loop wake-ups. Empty where the run left
# no stats (kvmmio failed to start).
# The vhost-user backends' reply bound (reply_timeout_ms=) in the fs and
# vhost-user-net cases: under TCG on a loaded machine a backend's reply
# took over the default 2 s (testpmd's, to SET_FEATURES, with its
# forwarding core busy and two L2s on L1's other CPU), which says nothing
# of the device; the default is docs/usage.md's, for a board.
TCG_REPLY_MS=30000

bypass_counters() {
    trapped=$(device_counter "$1" "$2" notifies_trapped || true) polled=$(device_counter "$1" "$2" notifies_polled || true)
    injected=$(device_counter "$1" "$2" interrupts_injected || true)
    relayed=$(device_counter "$1" "$2" interrupts_relayed || true)
    exited=$(device_counter "$1" "$2" register_reads || true) mirror=$(device_counter "$1" "$2" regs_mirror || true)
    acts=$(device_counter "$1" "$2" activations || true) wakeups=$(stats_value "$1" event_loop_wakeups || true)
}

# The data window read from outside the VMM (bench/outside-counters.sh,
# as the main job's cells are): L1 reads kvmmio's VM's KVM counters and
# its own threads' context switches right before and right after a
# transfer it drives itself, while L2 prints nothing (a console line is
# an exit to userspace and a wake-up of the VMM, which would fall inside
# the window). window_open NAME PID, then window_close NAME PID (NAME: a
# word, one per VMM in the window): sets window_msg to what the window
# shows against the bypass ('' when it holds) and window_line to its
# figures.
window_open() {
    [ -e /sys/kernel/debug/kvm/exits ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
    eval "window_before_$1=\$(outside-counters.sh \"\$2\" 2>/dev/null || echo '{}')"
}
window_close() {
    window_after=$(outside-counters.sh "$2" 2>/dev/null || echo '{}')
    window_before='{}'
    eval "window_before=\${window_before_$1:-'{}'}"
    # "EXITS TO_USER IN_KERNEL SWITCHES", each delta or "null" (unreadable
    # at either end: never taken for 0).
    window_d=$(jq -rn --argjson a "$window_before" --argjson b "$window_after" '
        [("kvm_exits", "kvm_mmio_exit_user", "kvm_mmio_exit_kernel", "vmm_ctxt_switches") as $k |
         if ($a[$k] | type) == "number" and ($b[$k] | type) == "number" then $b[$k] - $a[$k] else "null" end] |
        map(tostring) | join(" ")' 2>/dev/null) || window_d='null null null null'
    # shellcheck disable=SC2086 # four words
    set -- $window_d
    window_line="KVM exits $1, MMIO exits to userspace $2, in the kernel $3, VMM context switches $4"
    window_msg=''
    if [ "$1" = null ] || [ "$2" = null ] || [ "$4" = null ]; then
        window_msg="the outside counters are unreadable in the data window ($window_line): cannot show 0 (KVM's debugfs in L1, /proc/PID/task)"
    elif [ "$1" -le 0 ]; then
        window_msg="no KVM exit in the data window ($window_line): the counters did not follow the guest"
    elif [ "$2" != 0 ] || [ "$4" != 0 ]; then
        window_msg="the VMM took part in the data window: $window_line; not 0 exits to userspace and 0 VMM context switches"
    fi
}

# vsock: host (L1) and guest (L2) over AF_VSOCK, both ways, the data moved
# by L1's vhost-vsock; the VMM's share is counted from --stats, and
# L1's transfer to L2's port 5001 is a data window read from outside.
run_vsock() {
    step "kvmmio --vsock: L1 and L2 move 1 MiB each way on two AF_VSOCK connections through vhost-vsock"
    bytes=1048576 window_msg='' window_line=''
    t0=$(uptime_s)
    mkdir -p /run  # named VMs keep their directories in /run/kvmmio
    # L2 connects to the host's port 5000 once L1 has been to its 5001,
    # and again after it reloaded its driver.
    { vsock_probe listen 5000 "$bytes" 240; vsock_probe listen 5000 "$bytes" 120; } >"$R/vsock.l1-listen" 2>&1 &
    listener=$!
    EXTRA="--vsock cid=3 --rng off --name vsock-a" boot vsock 1 vsock
    msg='' out='' in_use=''
    if ! wait_for "$R/vsock.console" KVMMIO-L2-VSOCK-LISTENING 180; then
        msg="L2 never listened on vsock port 5001 ($(grep KVMMIO-L2-ERROR "$R/vsock.console" | head -n 1 | tr '\r\n' '  ')$(tail -n 2 "$R/vsock.stderr" | tr '\n"' ' _'))"
    else
        # A second VM wanting the same CID: refused at start, naming vsock-a.
        in_use=$(expect_setup_error vsock-in-use "CID 3 is in use by the VM vsock-a" --mem 64M --vsock cid=3) || true
        fds0=$(ls "/proc/$pid/fd" | wc -l)
        # The window: L2 waits on its listener, silent, until L1 has
        # read the counters after it and connected to port 5003.
        window_open vsock "$pid"
        out=$(vsock_probe connect 3 5001 "$bytes" 120 2>&1)
        window_close vsock "$pid"
        vsock_probe connect 3 5003 0 30 >/dev/null 2>&1 || true
        # After the reload and the transfer that follows: the same fds
        # (a reset leaks none), read while L2 waits to power off.
        wait_for "$R/vsock.console" KVMMIO-L2-VSOCK-DONE 120 || true
        fds1=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
        vsock_probe connect 3 5002 0 30 >/dev/null 2>&1 || true  # L2 may power off now
    fi
    finish 180
    # Done by now when L2 got through; else it would wait out its 240 s.
    kill "$listener" 2>/dev/null || true
    wait "$listener" || true
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    c=$R/vsock.console j=$R/vsock.json
    ok="vsock_probe: ok sent $bytes received $bytes"
    # (No stats file when kvmmio failed to start: the counters stay empty.)
    bypass_counters "$j" vsock0
    event=$(device_counter "$j" vsock0 event_notifies || true) verrs=$(device_counter "$j" vsock0 vhost_errors || true)
    echo "vsock: L2's CID '$(l2_marker "$c" VSOCK-CID)'; L1 -> L2:5001: $out; L2 -> L1:5000: $(tr '\n' '/' <"$R/vsock.l1-listen")"
    echo "vsock: L2's side: in '$(l2_marker "$c" VSOCK-IN)', out '$(l2_marker "$c" VSOCK-OUT)';" \
        "after a driver reload: CID '$(l2_marker "$c" VSOCK-CID-AGAIN)', out '$(l2_marker "$c" VSOCK-AGAIN)';" \
        "kvmmio's open fds ${fds0:-?} before, ${fds1:-?} after"
    echo "vsock: vsock0 notifies_trapped ${trapped:-?} notifies_polled ${polled:-?} (event queue ${event:-?})" \
        "interrupts_injected ${injected:-?} interrupts_relayed ${relayed:-?} activations ${acts:-?}" \
        "vhost_errors ${verrs:-?} register reads that exited ${exited:-?} (regs_mirror ${mirror:-?});" \
        "event_loop_wakeups ${wakeups:-?} in the whole run"
    echo "vsock: L1's 1 MiB each way to L2's port 5001, from outside kvmmio: ${window_line:-not reached}"
    if [ -n "$msg" ]; then :
    elif [ "$status" != 0 ]; then msg="kvmmio exit status $status, not 0 ($(tail -n 3 "$R/vsock.stderr" | tr '\n"' ' _'))"
    elif grep -q KVMMIO-L2-ERROR "$c"; then msg="L2: $(grep KVMMIO-L2-ERROR "$c" | head -n 2 | tr '\r\n' '  ')"
    elif [ -n "$in_use" ]; then msg=$in_use
    elif [ "$(l2_marker "$c" VSOCK-CID)" != 3 ]; then msg="L2's CID is '$(l2_marker "$c" VSOCK-CID)', not 3"
    elif [ "$out" != "$ok peer CID 3" ]; then msg="L1 to L2's port 5001: '$out'"
    elif [ "$(l2_marker "$c" VSOCK-IN)" != "$ok peer CID 2" ]; then msg="L2's listener: '$(l2_marker "$c" VSOCK-IN)'"
    elif [ "$(l2_marker "$c" VSOCK-OUT)" != "$ok peer CID 2" ]; then msg="L2 to L1's port 5000: '$(l2_marker "$c" VSOCK-OUT)'"
    elif [ "$(l2_marker "$c" VSOCK-CID-AGAIN)" != 3 ]; then msg="after the reload L2's CID is '$(l2_marker "$c" VSOCK-CID-AGAIN)'"
    elif [ "$(l2_marker "$c" VSOCK-AGAIN)" != "$ok peer CID 2" ]; then
        msg="after the reload, L2 to L1's port 5000: '$(l2_marker "$c" VSOCK-AGAIN)'"
    elif [ "$(tr '\n' '/' <"$R/vsock.l1-listen")" != "$ok peer CID 3/$ok peer CID 3/" ]; then
        msg="L1's listener: '$(tr '\n' '/' <"$R/vsock.l1-listen")'"
    elif [ -z "${fds0:-}" ] || [ "$fds0" != "${fds1:-}" ]; then msg="kvmmio had ${fds0:-?} fds open before the reload and ${fds1:-?} after"
    elif ! err=$(check_stats "$j" 1 0 poweroff); then msg=$err
    elif [ "$trapped" != 0 ]; then msg="vsock0 trapped ${trapped:-?} notifies: vhost-vsock's kicks should all go through the ioeventfds"
    elif [ "$injected" != 0 ] || [ "$relayed" != 0 ]; then
        msg="vsock0 injected ${injected:-?} and relayed ${relayed:-?} interrupts: vhost-vsock should write the irqfd itself"
    elif [ "${polled:-99}" -gt $((${event:-0} - ${acts:-0})) ]; then
        # event_notifies has the transport's one per DRIVER_OK besides the guest's.
        msg="vsock0 polled ${polled:-?} notifies, more than its event queue's $((${event:-0} - ${acts:-0})): a data queue's notify reached the VMM"
    elif [ "${polled:-99}" -gt 4 ]; then msg="vsock0 polled ${polled:-?} notifies: more than the event queue's fill at probe"
    elif [ "$acts" != 2 ] || [ "$verrs" != 0 ]; then
        msg="vsock0 activations ${acts:-?} (not 2: boot and reload), vhost_errors ${verrs:-?} (not 0)"
    elif [ "$mirror" = 1 ] && [ "$exited" != 0 ]; then msg="$exited register reads of vsock0 exited on the mirror"
    elif [ "${wakeups:-999}" -ge 64 ]; then
        msg="the event loop woke ${wakeups:-?} times in a run that moved 6 MiB over vsock: the VMM is in its data path"
    elif [ -n "${window_msg:-}" ]; then msg="L1's transfer to port 5001: $window_msg"
    fi
    record vsock "$t" "$msg"
}

# fs: a host (L1) directory shared with the guest (L2) through virtio-fs,
# the FUSE requests served by virtiofsd; the VMM's share from --stats.
run_fs() {
    step "kvmmio --fs: L2 mounts L1's directory through virtiofsd, reads L1's file and writes its own"
    t0=$(uptime_s)
    share=/tmp/kvmmio-share sock=/tmp/kvmmio-fs.sock msg='' missing=''
    virtiofsd=$(command -v virtiofsd || echo /tools/virtiofsd)
    rm -rf "$share" "$sock" && mkdir -p "$share"
    dd if=/dev/urandom of="$share/from-l1" bs=64k count=16 2>/dev/null
    l1_md5=$(md5sum <"$share/from-l1" | cut -d' ' -f1)
    if [ ! -x "$virtiofsd" ]; then
        record fs 0 "no virtiofsd: neither on PATH nor on the tools disk (/tools/virtiofsd, run.sh --tools)"
        return
    fi
    # A socket nothing listens on: refused before any VM exists.
    missing=$(expect_setup_error fs-no-backend "start the backend first, e.g. virtiofsd"         --fs tag=share,socket=/tmp/kvmmio-no-backend.sock) || true
    "$virtiofsd" --socket-path="$sock" -o source="$share" -o sandbox=chroot >"$R/fs.virtiofsd" 2>&1 &
    backend=$!
    i=0
    while [ ! -S "$sock" ] && kill -0 "$backend" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
    EXTRA="--fs tag=share,socket=$sock,reply_timeout_ms=$TCG_REPLY_MS --rng off" boot fs 1 fs
    # The data window: L2 writes and syncs its file between L1's
    # window-open and its own window-done, silent until window-closed.
    window_msg='' window_line=''
    if wait_for "$R/fs.console" KVMMIO-L2-FS-READ 180; then
        window_open fs "$pid"
        : >"$share/window-open"
        i=0
        while [ ! -e "$share/window-done" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
        if [ -e "$share/window-done" ]; then
            window_close fs "$pid"
        else
            window_msg="L2 never wrote window-done in the share (its write did not finish)"
        fi
        : >"$share/window-closed"
    fi
    finish 240
    # virtiofsd serves one connection and ends with it.
    i=0
    while kill -0 "$backend" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    kill "$backend" 2>/dev/null || true
    wait "$backend" || true
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    c=$R/fs.console j=$R/fs.json
    l2_file=$(md5sum <"$share/from-l2" 2>/dev/null | cut -d' ' -f1)
    bypass_counters "$j" fs0
    fails=$(device_counter "$j" fs0 backend_failures || true) hangups=$(device_counter "$j" fs0 backend_hangups || true)
    echo "fs: L1's file $l1_md5, L2 read '$(l2_marker "$c" FS-READ)' and again after its driver was bound again" \
        "'$(l2_marker "$c" FS-READ-AGAIN)'; L2 wrote '$(l2_marker "$c" FS-WROTE)', L1 reads ${l2_file:-nothing}"
    echo "fs: fs0 notifies_trapped ${trapped:-?} notifies_polled ${polled:-?} interrupts_injected ${injected:-?}" \
        "interrupts_relayed ${relayed:-?} activations ${acts:-?} backend_failures ${fails:-?}" \
        "backend_hangups ${hangups:-?} register reads that exited ${exited:-?} (regs_mirror ${mirror:-?});" \
        "event_loop_wakeups ${wakeups:-?} in the whole run"
    echo "fs: L2's 1 MiB write and sync, from outside kvmmio: ${window_line:-not reached}"
    if [ -n "$missing" ]; then msg=$missing
    elif [ "$status" != 0 ]; then
        msg="kvmmio exit status $status, not 0 ($(tail -n 3 "$R/fs.stderr" | tr '\n"' ' _'); virtiofsd: $(tail -n 2 "$R/fs.virtiofsd" | tr '\n"' ' _'))"
    elif grep -q KVMMIO-L2-ERROR "$c"; then msg="L2: $(grep KVMMIO-L2-ERROR "$c" | head -n 2 | tr '\r\n' '  ')"
    elif [ "$(l2_marker "$c" FS-READ)" != "$l1_md5" ]; then msg="L2 read '$(l2_marker "$c" FS-READ)' from L1's file, not $l1_md5"
    elif [ "$(l2_marker "$c" FS-READ-AGAIN)" != "$l1_md5" ]; then
        msg="after its driver was bound again L2 read '$(l2_marker "$c" FS-READ-AGAIN)', not $l1_md5"
    elif [ -z "$l2_file" ] || [ "$(l2_marker "$c" FS-WROTE)" != "$l2_file" ]; then
        msg="L2 wrote '$(l2_marker "$c" FS-WROTE)', L1 reads '${l2_file:-no file}' in the shared directory"
    elif ! err=$(check_stats "$j" 1 0 poweroff); then msg=$err
    elif [ "$trapped" != 0 ] || [ "$polled" != 0 ]; then
        msg="fs0 trapped ${trapped:-?} and polled ${polled:-?} notifies: virtiofsd's kicks should all go through the ioeventfds"
    elif [ "$injected" != 0 ] || [ "$relayed" != 0 ]; then
        msg="fs0 injected ${injected:-?} and relayed ${relayed:-?} interrupts: virtiofsd should write the irqfd itself"
    elif [ "$acts" != 2 ] || [ "$fails" != 0 ] || [ "$hangups" != 0 ]; then
        msg="fs0 activations ${acts:-?} (not 2: boot and reload), backend_failures ${fails:-?}, backend_hangups ${hangups:-?} (not 0)"
    elif [ "$mirror" = 1 ] && [ "$exited" != 0 ]; then msg="$exited register reads of fs0 exited on the mirror"
    elif [ "${wakeups:-999}" -ge 64 ]; then
        msg="the event loop woke ${wakeups:-?} times in a run that moved 3 MiB over virtio-fs: the VMM is in its data path"
    elif [ -n "$window_msg" ]; then msg="L2's write to the share: $window_msg"
    elif [ -z "$window_line" ]; then msg="L2's write to the share: no data window read (L2 never printed KVMMIO-L2-FS-READ)"
    fi
    rm -rf "$share"
    record fs "$t" "$msg"
}

# vhost-user-net: two L2s on DPDK's testpmd (its vhost PMD, forwarding
# between its two ports), each kvmmio with --net vhost-user; L2a sends L2b
# 1 MiB over TCP through the switch. The VMMs' share is counted from
# --stats.
run_vhost_user_net() {
    step "kvmmio --net vhost-user: two L2s move 1 MiB through DPDK's testpmd (vhost PMD), the VMMs out of the path"
    t0=$(uptime_s)
    msg='' missing='' testpmd=/tools/dpdk-testpmd
    if [ ! -x "$testpmd" ]; then
        record vhost-user-net 0 "no $testpmd (the tools disk: run.sh --tools, scripts/arm64/build-initramfs.sh --tools-out)"
        return
    fi
    # A socket nothing listens on: refused before any VM exists.
    missing=$(expect_setup_error vun-no-backend "start the backend first, e.g. dpdk-testpmd" \
        --net vhost-user=/tmp/kvmmio-no-switch.sock) || true
    rm -f /tmp/kvmmio-sw0.sock /tmp/kvmmio-sw1.sock
    # Two lcores: testpmd's main one and one forwarding core, which polls
    # both ports in a busy loop (a CPU of L1's). No huge pages: the vhost
    # PMD maps the guests' RAM from kvmmio's memfds, its own mbufs need none.
    "$testpmd" -l 0-1 --no-huge -m 256 --no-pci --no-shconf \
        --vdev net_vhost0,iface=/tmp/kvmmio-sw0.sock --vdev net_vhost1,iface=/tmp/kvmmio-sw1.sock \
        -- --forward-mode=io --auto-start --total-num-mbufs=4096 --stats-period 60 </dev/null >"$R/vun.testpmd" 2>&1 &
    switch=$!
    i=0
    while { [ ! -S /tmp/kvmmio-sw0.sock ] || [ ! -S /tmp/kvmmio-sw1.sock ]; } && kill -0 "$switch" 2>/dev/null &&
        [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
    # Each with a vsock device too: L1 opens and closes the data window
    # through it (vhost-vsock, with the VMMs out of its path as well).
    EXTRA="--rng off --vsock cid=6 --net vhost-user=/tmp/kvmmio-sw1.sock,mac=02:6b:76:00:00:0b,reply_timeout_ms=$TCG_REPLY_MS" \
        boot vun-b 1 "switch kvmmio.ip=10.0.9.2 kvmmio.host=10.0.9.1 kvmmio.secs=server"
    pid_b=$pid
    EXTRA="--rng off --vsock cid=5 --net vhost-user=/tmp/kvmmio-sw0.sock,mac=02:6b:76:00:00:0a,reply_timeout_ms=$TCG_REPLY_MS" \
        boot vun-a 1 "switch kvmmio.ip=10.0.9.1 kvmmio.host=10.0.9.2 kvmmio.secs=client"
    pid_a=$pid
    # The data window: both guests silent from READY; L1 reads both
    # VMMs' counters, says go, waits for the server's "got it", reads
    # them again, and says the window is over.
    line_a='' line_b='' window_a='' window_b=''
    if wait_for "$R/vun-b.console" KVMMIO-L2-SWITCH-READY 240 && wait_for "$R/vun-a.console" KVMMIO-L2-SWITCH-READY 240; then
        window_open a "$pid_a"
        window_open b "$pid_b"
        vsock_probe connect 6 5010 0 30 >/dev/null 2>&1 && vsock_probe connect 5 5010 0 30 >/dev/null 2>&1 &&
            got_all=$(vsock_probe listen 5011 0 180 2>&1) || got_all=''
        window_close a "$pid_a"
        line_a=$window_line window_a=$window_msg
        window_close b "$pid_b"
        line_b=$window_line window_b=$window_msg
        [ -n "$got_all" ] || window_a="L1 never heard from L2b that the 1 MiB arrived (vsock port 5011)"
        vsock_probe connect 5 5012 0 30 >/dev/null 2>&1 || true
        vsock_probe connect 6 5012 0 30 >/dev/null 2>&1 || true
    fi
    finish 240
    status_a=$status
    pid=$pid_b booted=vun-b
    finish 60
    status_b=$status
    kill -INT "$switch" 2>/dev/null || true
    wait "$switch" || true
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    ca=$R/vun-a.console cb=$R/vun-b.console
    sent=$(l2_marker "$ca" SWITCH-SENT) got=$(l2_marker "$cb" SWITCH-GOT)
    echo "vhost-user-net: L2a ping '$(l2_marker "$ca" SWITCH-PING)', sent '$sent'; L2b ping '$(l2_marker "$cb" SWITCH-PING)'," \
        "got '$got'; kvmmio exits $status_a and $status_b"
    echo "vhost-user-net: the 1 MiB from outside L2a's kvmmio: ${line_a:-not reached}; L2b's: ${line_b:-not reached}"
    for side in a b; do
        bypass_counters "$R/vun-$side.json" net0
        fails=$(device_counter "$R/vun-$side.json" net0 backend_failures || true)
        echo "vhost-user-net: L2$side's net0 notifies_trapped ${trapped:-?} notifies_polled ${polled:-?}" \
            "interrupts_injected ${injected:-?} interrupts_relayed ${relayed:-?} activations ${acts:-?}" \
            "backend_failures ${fails:-?} register reads that exited ${exited:-?} (regs_mirror ${mirror:-?});" \
            "event_loop_wakeups ${wakeups:-?} in the whole run"
        [ -z "$msg" ] || continue
        if [ "$(eval echo \$status_$side)" != 0 ]; then
            msg="L2$side's kvmmio exit status $(eval echo \$status_$side), not 0 ($(tail -n 3 "$R/vun-$side.stderr" | tr '\n"' ' _'); testpmd: $(tail -n 2 "$R/vun.testpmd" | tr '\n"' ' _'))"
        elif grep -q KVMMIO-L2-ERROR "$R/vun-$side.console"; then
            msg="L2$side: $(grep KVMMIO-L2-ERROR "$R/vun-$side.console" | head -n 2 | tr '\r\n' '  ')"
        elif [ "$(l2_marker "$R/vun-$side.console" SWITCH-PING)" != ok ]; then msg="L2$side never reached the other through the switch"
        elif ! err=$(check_stats "$R/vun-$side.json" 1 0 poweroff); then msg="L2$side: $err"
        elif [ "$trapped" != 0 ] || [ "$polled" != 0 ]; then
            msg="L2$side's net0 trapped ${trapped:-?} and polled ${polled:-?} notifies: testpmd's kicks should all go through the ioeventfds"
        elif [ "$injected" != 0 ] || [ "$relayed" != 0 ]; then
            msg="L2$side's net0 injected ${injected:-?} and relayed ${relayed:-?} interrupts: testpmd should write the irqfd itself"
        elif [ "$acts" != 1 ] || [ "$fails" != 0 ]; then msg="L2$side's net0 activations ${acts:-?} (not 1), backend_failures ${fails:-?} (not 0)"
        elif [ "$mirror" = 1 ] && [ "$exited" != 0 ]; then msg="$exited register reads of L2$side's net0 exited on the mirror"
        elif [ "${wakeups:-999}" -ge 64 ]; then
            msg="L2$side's event loop woke ${wakeups:-?} times in a run that moved 1 MiB through the switch: the VMM is in its data path"
        fi
    done
    if [ -n "$missing" ]; then msg=$missing
    elif [ -z "$msg" ] && { [ -z "$sent" ] || [ "$sent" != "$got" ]; }; then
        msg="L2a sent '${sent:-nothing}', L2b got '${got:-nothing}' through the switch"
    elif [ -z "$msg" ] && [ -z "$line_a" ]; then msg="no data window read (a guest never printed KVMMIO-L2-SWITCH-READY)"
    elif [ -z "$msg" ] && [ -n "$window_a" ]; then msg="L2a's VMM in the transfer: $window_a"
    elif [ -z "$msg" ] && [ -n "$window_b" ]; then msg="L2b's VMM in the transfer: $window_b"
    fi
    record vhost-user-net "$t" "$msg"
}

# SIGKILL right after the guest's fsync returned: whatever kvmmio had
# acknowledged must already be in the image, since nothing of kvmmio's
# runs after a SIGKILL. A second kvmmio on the image (with the bad-guest
# kernel, which stops at once) is refused while the first runs, naming it,
# and gets the image once the first is gone (then it stops on its kernel:
# exit 1, not the set-up error's 2).
second_on_disk() {
    kvmmio run --kernel /tmp/bad-Image --mem 64M --disk "$1" </dev/null >/dev/null 2>"$R/$2.stderr"
}
run_disk_kill() {
    step "kvmmio --disk, SIGKILL after L2's fsync: the image holds what L2 wrote, the lock is gone"
    img=/tmp/vmm-boot-disk-kill.img
    rm -f "$img"
    dd if=/dev/zero of="$img" bs=64k count=64 2>/dev/null
    make_bad_image /tmp/bad-Image
    t0=$(uptime_s)
    EXTRA="--disk $img" boot disk-kill 1 disk-kill
    out=$R/disk-kill.console msg='' while_running='' after=''
    if wait_for "$out" KVMMIO-L2-DISK-SYNCED 180; then
        second_on_disk "$img" disk-kill-second || while_running=$?
        kill -KILL "$pid" || true  # finish reports a kvmmio that ended first
    fi
    finish 60
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    written=$(dd if="$img" bs=64k skip=32 count=16 2>/dev/null | md5sum | cut -d' ' -f1)
    echo "disk-kill: L2 wrote $(l2_marker "$out" DISK-WROTE), the image holds $written after SIGKILL (exit $status)"
    echo "disk-kill: a second kvmmio on the image while the first ran: $(tail -n 1 "$R/disk-kill-second.stderr" 2>/dev/null)"
    [ "$status" != 137 ] || second_on_disk "$img" disk-kill-after || after=$?
    if ! grep -q KVMMIO-L2-DISK-SYNCED "$out"; then
        msg="L2 never reported its fsync (exit status $status): $(grep KVMMIO-L2-ERROR "$out" | head -n 1 | tr '\r\n' '  ')"
    elif [ "$status" != 137 ]; then msg="kvmmio exit status $status after SIGKILL, not 137"
    elif [ "$(l2_marker "$out" DISK-WROTE)" != "$written" ]; then msg="the image does not hold the MiB L2 wrote and fsynced"
    elif [ "$while_running" != 2 ] || ! grep -q "the image is in use by .*$pid" "$R/disk-kill-second.stderr"; then
        msg="a second kvmmio on the image while the first ran: exit ${while_running:-0}, not 2 naming PID $pid"
    elif [ "$after" != 1 ]; then
        msg="a kvmmio on the image after the SIGKILL: exit ${after:-0}, not 1 (its kernel's): $(tail -n 1 "$R/disk-kill-after.stderr" | tr '"' _)"
    fi
    rm -f "$img"
    record disk-kill "$t" "$msg"
}

# A kernel that branches past its header, then loads a pair of registers
# from 0x10000000, which is neither RAM nor a device. LDP gives KVM no
# instruction syndrome to emulate the access with, so KVM_RUN fails.
make_bad_image() {
    {
        printf '\020\000\000\024\000\000\000\000'             # 0: b .+64; code1
        printf '\000\000\000\000\000\000\000\000'             # 8: text_offset 0
        printf '\000\000\001\000\000\000\000\000'             # 16: image_size 64 KiB
        printf '\012\000\000\000\000\000\000\000'             # 24: flags 0xa: LE, 4K, anywhere
        printf '\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
        printf 'ARMd\000\000\000\000'                             # 56: magic "ARM\x64"
        printf '\001\000\242\322'                                 # 64: movz x1, #0x1000, lsl #16
        printf '\042\014\100\251'                                 # 68: ldp x2, x3, [x1]
        printf '\000\000\000\024'                                 # 72: b .
    } >"$1"
}

run_bad_guest() {
    step "a guest access KVM cannot emulate: kvmmio exits 1 with the registers logged"
    t0=$(uptime_s)
    make_bad_image /tmp/bad-Image
    kvmmio run --kernel /tmp/bad-Image --mem 64M --stats "$R/bad-guest.json" \
        </dev/null >"$R/bad-guest.console" 2>"$R/bad-guest.stderr" &
    pid=$!
    finish 60
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    msg=''
    if [ "$status" != 1 ]; then msg="kvmmio exit status $status, not 1"
    elif ! grep -q 'vCPU 0 registers: pc=0x40000044 ' "$R/bad-guest.stderr"; then
        msg="no register dump at the LDP (pc=0x40000044): $(tr '\n"' ' _' <"$R/bad-guest.stderr")"
    elif [ "$(stats_value "$R/bad-guest.json" exit_status)" != 1 ]; then msg="stats: exit_status is not 1"
    elif ! stats_value "$R/bad-guest.json" stop_reason | grep -q '^vCPU 0: '; then
        msg="stats: stop_reason does not name vCPU 0"
    fi
    record bad-guest "$t" "$msg"
}

# expect_setup_error NAME TEXT ARGS...: kvmmio run ARGS exits 2 at once,
# says TEXT, and leaves no stats file.
expect_setup_error() {
    name=$1 text=$2
    shift 2
    st=0
    kvmmio run --kernel "$KVMMIO_L2/Image" --stats "$R/$name.json" "$@" </dev/null >/dev/null 2>"$R/$name.stderr" || st=$?
    if [ "$st" != 2 ]; then echo "$name: exit status $st, not 2"; return 1; fi
    if ! grep -q "$text" "$R/$name.stderr"; then echo "$name: message lacks '$text': $(cat "$R/$name.stderr")"; return 1; fi
    if [ -e "$R/$name.json" ]; then echo "$name: left $name.json behind"; return 1; fi
}

run_setup_errors() {
    step "set-up errors on a real KVM host: exit 2, the fix named, nothing left"
    t0=$(uptime_s)
    if [ "$KVMMIO_L1_GIC" = 3 ]; then other=v2 fix='use --gic v3 or --gic auto'; else other=v3 fix='use --gic v2 or --gic auto'; fi
    msg=$(expect_setup_error wrong-gic "$fix" --gic "$other") &&
        msg=$(expect_setup_error too-much-mem "more than this host's" --mem 64G) &&
        msg=''
    if [ -z "$msg" ] && [ "$KVMMIO_L1_GIC" = 2 ]; then
        msg=$(expect_setup_error too-many-cpus 'a GICv2 guest can have at most 8 vCPUs' --cpus 9) && msg=''
    fi
    t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    record setup-errors "$t" "$msg"
}

# KVMMIO_VMM_BOOT_SKIP: cases left out, separated by spaces or commas (the
# Pi 4 class L1 leaves out unprivileged and background: how kvmmio
# stops, drops privileges and runs in the background does not depend on the
# CPU or GIC, and the 16 KiB-page L1 runs them; the board leaves out what
# its root cannot run, e.g. background without tmux).
skip=" $(echo "${KVMMIO_VMM_BOOT_SKIP:-}" | tr , ' ') "
cases=" cpus1 cpus2 reset reset-exit unprivileged console-input bad-guest setup-errors hvc-cpus2 hvc-v1-input disk vsock fs vhost-user-net disk-kill api names background "
for c in $skip; do
    case $cases in
    *" $c "*) ;;
    *) fail "KVMMIO_VMM_BOOT_SKIP: no case '$c'" ;;
    esac
done
case_wanted() {
    # Every case is in $cases, or a skip list naming it fails (a case once
    # left out of it failed only on the board, the one place that skips it).
    case $cases in *" $1 "*) ;; *) fail "vmm-boot: case '$1' is not in \$cases (add it there)" ;; esac
    case $skip in *" $1 "*) step "$1 left out (KVMMIO_VMM_BOOT_SKIP)"; return 1 ;; esac
}
! case_wanted cpus1 || run_poweroff 1
! case_wanted cpus2 || run_poweroff 2
! case_wanted reset || run_reset
! case_wanted reset-exit || run_reset_exit
! case_wanted unprivileged || run_unprivileged
! case_wanted console-input || run_console_input
! case_wanted bad-guest || run_bad_guest
! case_wanted setup-errors || run_setup_errors
! case_wanted hvc-cpus2 || run_poweroff 2 virtio
! case_wanted hvc-v1-input || run_hvc_input
! case_wanted disk || run_disk
! case_wanted vsock || run_vsock
! case_wanted fs || run_fs
! case_wanted vhost-user-net || run_vhost_user_net
! case_wanted disk-kill || run_disk_kill
! case_wanted api || run_api
! case_wanted names || run_names
! case_wanted background || run_background

write_cases vmm-boot
