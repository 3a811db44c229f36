#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# guest-disk: the guest scripts/make-guest.sh makes (Debian 12, systemd)
# boots under kvmmio from its --disk, as docs/usage.md ("Your first guest")
# tells a user to boot it: `kvmmio network create` (the NAT network
# kvmnat0, 192.168.123.0/24, with dnsmasq), then kvmmio run --kernel Image
# --initrd initrd.img --disk debian.img --cpus 2 --mem 1G --cmdline
# "root=/dev/vda rw" --net tap=kvmtap0,bridge=kvmnat0 (the console= word
# is kvmmio's default: ttyAMA0, or hvc0 with --console virtio).
# Then, on the console, as a user would: root logs in at the login prompt
# with KVMMIO_GUEST_PASSWORD (make-guest.sh locks root without a password;
# guest-disk-test.sh makes the guest with one and sets it), systemd
# reports the system running (not degraded), the root file system fills
# its disk (guest-disk-test.sh gives a copy 512 MiB larger than the
# image: systemd-growfs grows it at boot), eth0 took an address of
# 192.168.123.0/24 by DHCP, `kvmmio network list` shows that lease with the
# guest's host name, the guest resolves a name of L1's /etc/hosts through
# the DHCP server's DNS (systemd-resolved), L1 pings it and logs in over
# ssh with the key in the boot tar (ssh-key; make-guest.sh --ssh-key), as
# a user would, and runs a command; iperf3 and fio run in the guest; the
# guest writes 4 MiB of random bytes to /root/kvmmio-cycle, syncs, prints
# their md5 (cycle.md5 in the results), and `reboot`s: systemd unmounts,
# the kernel asks for a reset, and kvmmio, run with --on-reboot exit (the
# default would boot the guest again in place), exits 3 with the stop
# reason reset. tests/arm64/guest-disk-gicv3.test
# then checks the disk on the host: e2fsck finds the file system clean, and
# the file holds those bytes (the write/sync/reboot/fsck cycle).
# KVMMIO_GUEST_END=poweroff ends with `poweroff` instead (exit 0, stop
# reason poweroff; no cycle).
# KVMMIO_GUEST_CONSOLE=virtio boots it on --console virtio instead
# (console=hvc0: the login prompt on hvc0); KVMMIO_GUEST_PASSWORD=PASS
# logs in with that password (a guest made with --root-password-file of
# it); unset, root logs in without one (a guest made before make-guest.sh
# locked root by default);
# KVMMIO_GUEST_CPUS and KVMMIO_GUEST_MEM replace --cpus 2 and --mem 1G.
# Not in make check (the guest takes minutes to make, as root, from
# Debian's archive): tests/arm64/guest-disk-gicv3.test makes it and boots
# L1 with two more disks: run.sh's --disk 0 a tar of Image and initrd.img,
# --disk 1 (a copy of) debian.img, given to kvmmio as the block device.
# Results: guest.console (the whole console), guest.json (--stats),
# guest.stderr, summary.txt (the lines docs/usage.md quotes), and
# guest-disk.json (one GoogleTest case, named CONSOLE-cpusN).
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
R=$KVMMIO_RESULTS
console=${KVMMIO_GUEST_CONSOLE:-serial}
case $console in
serial) tty=ttyAMA0 ;;
virtio) tty=hvc0 ;;
*) fail "KVMMIO_GUEST_CONSOLE is '$console', not serial or virtio" ;;
esac
cpus=${KVMMIO_GUEST_CPUS:-2} mem=${KVMMIO_GUEST_MEM:-1G}
end=${KVMMIO_GUEST_END:-reboot}
case $end in
reboot) want_status=3 want_reason=reset ;;
poweroff) want_status=0 want_reason=poweroff ;;
*) fail "KVMMIO_GUEST_END is '$end', not reboot or poweroff" ;;
esac

require_dev /dev/kvm
command -v kvmmio >/dev/null || fail "kvmmio is not in /kvmmio/bin (scripts/arm64/prepare.sh puts it there)"

# l1_disk SERIAL: L1's block device whose virtio serial is SERIAL.
l1_disk() {
    for f in /sys/block/vd*/serial; do
        if [ -r "$f" ] && [ "$(cat "$f")" = "$1" ]; then
            f=${f%/serial}
            echo "/dev/${f##*/}"
            return
        fi
    done
    return 1
}
boot=$(l1_disk kvmmio-disk0) || fail "no disk kvmmio-disk0 (run.sh --disk: the tar of Image and initrd.img); see tests/arm64/guest-disk-gicv3.test"
disk=$(l1_disk kvmmio-disk1) || fail "no disk kvmmio-disk1 (run.sh --disk: debian.img); see tests/arm64/guest-disk-gicv3.test"
g=/tmp/guest
mkdir -p $g
tar -xf "$boot" -C $g Image initrd.img ssh-key || fail "no Image, initrd.img and ssh-key in the tar on $boot"
disk_mib=$(($(cat "/sys/block/${disk#/dev/}/size") / 2048))
step "the guest: Image $(wc -c <$g/Image) bytes, initrd.img $(wc -c <$g/initrd.img) bytes, debian.img $disk_mib MiB on $disk"

# The NAT network, as "Your first guest" has a user make it; a name in
# L1's /etc/hosts, which its dnsmasq answers the guest.
nat_prepare_l1
echo "192.168.123.1 l1.kvmmio.test" >>/etc/hosts
kvmmio network create >"$R/network.log" 2>&1 || fail "kvmmio network create: $(tr '\n' ' ' <"$R/network.log")"
step "$(head -n 1 "$R/network.log")"

# The console: kvmmio's stdin is a fifo this script writes lines into,
# each after the guest has answered the one before (a program reading the
# terminal would swallow lines typed ahead).
con=$R/guest.console
fifo=/tmp/guest-console-in
mkfifo $fifo
: >"$con"
t0=$(uptime_s)
kvmmio run --kernel $g/Image --initrd $g/initrd.img --disk "$disk,device=on" --cpus "$cpus" --mem "$mem" \
    --console "$console" --cmdline "root=/dev/vda rw" --net tap=kvmtap0,bridge=kvmnat0 --stats "$R/guest.json" \
    --on-reboot exit <$fifo >"$con" 2>"$R/guest.stderr" &
pid=$!
exec 3>$fifo
since() { awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.0f", b - a }'; }
# wait_console TEXT SECONDS: until TEXT is on the console, or kvmmio ended.
wait_console() {
    i=0
    while ! grep -q "$1" "$con" && kill -0 $pid 2>/dev/null && [ $i -lt $(($2 * 2)) ]; do
        sleep 0.5
        i=$((i + 1))
    done
    grep -q "$1" "$con"
}
# marker NAME: what the guest printed for NAME (the helper m below prints
# "KVMMIO-G-NAME: text"; the echo of a typed line never has that text).
# Not anchored: bash's bracketed-paste sequences (ESC [?2004l CR) come
# before a command's output on its line.
marker() { sed -n "s/.*KVMMIO-G-$1: //p" "$con" | tr -d '\r' | tail -n 1; }
# guest NAME SECONDS COMMAND: types COMMAND, then `m NAME $?` on the next
# line, and waits for the marker; the marker's text is the status.
guest() {
    echo "$3" >&3
    echo "m $1 \$?" >&3
    wait_console "KVMMIO-G-$1: " "$2" || { stop; fail "the guest did not answer '$3' within $2 s (last console line: $(tail -n 1 "$con" | tr -d '\r'))"; }
}
# stop: kvmmio, L1's iperf3 server and the network go (a run leaves
# nothing behind for a scenario after it).
stop() {
    exec 3>&-
    kill $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    pkill -x iperf3 2>/dev/null || true
    kvmmio network delete >/dev/null 2>&1 || true
}

step "kvmmio boots the guest (--cpus $cpus --mem $mem --console $console, console=$tty); waiting for the login prompt (systemd under nested TCG: minutes)"
wait_console "kvmmio-guest login:" 1200 || { stop; fail "no login prompt after $(since) s (last console line: $(tail -n 1 "$con" | tr -d '\r'))"; }
login_s=$(since)
prompt=$(grep -a "kvmmio-guest login:" "$con" | tr -d '\r' | head -n 1)
issue=$(grep -a "Debian GNU/Linux 12 kvmmio-guest" "$con" | tr -d '\r' | head -n 1)
step "login prompt after $login_s s: $issue / $prompt"
case $issue in *" $tty") ;; *) stop; fail "the getty is not on $tty: '$issue'" ;; esac
sleep 2
echo root >&3
if [ -n "${KVMMIO_GUEST_PASSWORD:-}" ]; then
    wait_console 'Password:' 120 || { stop; fail "no password prompt after root (a guest with no password at all, made before make-guest.sh locked root? make it again)"; }
    sleep 1
    echo "$KVMMIO_GUEST_PASSWORD" >&3
fi
if ! wait_console 'root@kvmmio-guest:~#' 120; then
    stop
    if grep -aq 'Login incorrect' "$con"; then
        fail "Login incorrect as root: KVMMIO_GUEST_PASSWORD is not the password the guest was made with (make-guest.sh --root-password-file)"
    elif [ -z "${KVMMIO_GUEST_PASSWORD:-}" ] && grep -aq 'Password:' "$con"; then
        fail "the guest asks for root's password and KVMMIO_GUEST_PASSWORD is unset (make-guest.sh locks root unless --root-password-file gives one)"
    fi
    fail "no shell prompt after logging in as root"
fi
if [ -n "${KVMMIO_GUEST_PASSWORD:-}" ]; then step "root logged in with its password"; else step "root logged in without a password"; fi
# One helper, then one line at a time.
# shellcheck disable=SC2016 # expanded by the guest's shell
printf '%s\n' 'm() { printf "KVMMIO-G-%s: %s\n" "$1" "$2"; }' >&3
# shellcheck disable=SC2016
guest STATE 600 'm STATE-TEXT "$(systemctl is-system-running --wait)"'
state=$(marker STATE-TEXT)
# shellcheck disable=SC2016
guest FAILED 60 'm FAILED-UNITS "$(systemctl --failed --plain --no-legend | tr "\n" " ")"'
# shellcheck disable=SC2016
guest BOOT 60 'm BOOT-TIME "$(systemd-analyze time | head -n 1)"'
# shellcheck disable=SC2016
guest INFO 60 'm ETH0 "$(ip -br addr show eth0 | tr -s " ")"; m ROOT "$(findmnt -n -o SOURCE,FSTYPE,OPTIONS /)"; m KERNEL "$(uname -r)"; m FREE "$(df -h / | tail -n 1 | tr -s " ")"; m ROOT-KIB "$(df -k / | tail -n 1 | tr -s " " | cut -d" " -f2)"'
step "the guest: systemd $state; $(marker BOOT-TIME); eth0 $(marker ETH0); / $(marker ROOT)"

# The guest's lease, as a user finds it: kvmmio network list's line with
# its host name.
i=0 lease=''
while [ -z "$lease" ] && [ $i -lt 60 ]; do
    lease=$(kvmmio network list 2>/dev/null | awk '$1 == "lease" && $4 == "kvmmio-guest" { print $2; exit }')
    [ -n "$lease" ] || { sleep 1; i=$((i + 1)); }
done
kvmmio network list >"$R/network-list.txt" 2>&1 || true
step "kvmmio network list: the guest's lease ${lease:-(none)}"
addr=${lease:-192.168.123.0}
# shellcheck disable=SC2016
guest DNS 60 'm RESOLVED "$(getent hosts l1.kvmmio.test | tr -s " ")"'

step "L1 pings the guest, then logs in over ssh with the key"
ping_out=$(ping -c 5 -W 5 "$addr" 2>&1 | tail -n 2 | tr '\n' ' ') || true
step "ping $addr: $ping_out"
chmod 600 $g/ssh-key
ssh=$(command -v ssh || echo /tools/ssh)  # the tools disk's (run.sh --tools)
ssh_status=0
# shellcheck disable=SC2016 # the guest's shell expands it
timeout 120 "$ssh" -i $g/ssh-key -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o ConnectTimeout=60 -o LogLevel=ERROR "root@$addr" 'echo "$(hostname) $(id -un) $(systemctl is-system-running)"' \
    >"$R/ssh.out" 2>"$R/ssh.err" || ssh_status=$?
ssh_out=$(tr -d '\r' <"$R/ssh.out" | tail -n 1)
step "ssh root@$addr: status $ssh_status, '$ssh_out'"

step "iperf3 from the guest to L1 (5 s), then fio in the guest"
iperf3 -s -D -1 -p 5201 >/dev/null 2>&1 || true
sleep 1
# shellcheck disable=SC2016
guest IPERF 180 'iperf3 -c 192.168.123.1 -t 5 | tail -n 4'
# A small random read/write job through the file system (O_DIRECT, libaio):
# the disk under load, not a measurement (nested TCG).
# shellcheck disable=SC2016
guest FIO 600 'fio --name=randrw --filename=/root/fio.test --size=64M --rw=randrw --bs=4k --ioengine=libaio --iodepth=16 --direct=1 --runtime=20 --time_based --end_fsync=1 --group_reporting; rm -f /root/fio.test'

if [ "$end" = reboot ]; then
    # What the host checks after L1 is gone (guest-disk-gicv3.test).
    # shellcheck disable=SC2016
    guest CYCLE 120 'head -c 4194304 /dev/urandom >/root/kvmmio-cycle && sync && m CYCLE-MD5 "$(md5sum </root/kvmmio-cycle | cut -d" " -f1)"'
    marker CYCLE-MD5 >"$R/cycle.md5"
    step "the guest wrote /root/kvmmio-cycle (md5 $(cat "$R/cycle.md5")) and synced"
fi
step "$end in the guest"
t1=$(uptime_s)
echo "$end" >&3
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.5; i=$((i + 1)); done
stop_s=$(awk -v a="$t1" -v b="$(uptime_s)" 'BEGIN { printf "%.0f", b - a }')
if kill -0 $pid 2>/dev/null; then
    kill -TERM $pid || true  # it may end between the check and the kill
    status=timeout
    wait $pid || true
else
    status=0
    wait $pid || status=$?
fi
stop

reads=$(device_counter "$R/guest.json" disk0 reads)
writes=$(device_counter "$R/guest.json" disk0 writes)
flushes=$(device_counter "$R/guest.json" disk0 flushes)
{
    echo "console $console ($tty): login prompt after ${login_s} s: $issue / $prompt"
    echo "systemd: $state; failed units: $(marker FAILED-UNITS)"
    echo "boot: $(marker BOOT-TIME)"
    echo "kernel $(marker KERNEL); / $(marker ROOT); df $(marker FREE) ($(marker ROOT-KIB) KiB on a disk of $disk_mib MiB)"
    echo "eth0: $(marker ETH0); lease ${lease:-none}; l1.kvmmio.test resolves to '$(marker RESOLVED)'"
    echo "ping from L1: $ping_out"
    echo "ssh from L1: status $ssh_status, '$ssh_out' $(head -c 200 "$R/ssh.err" | tr '\n' ' ')"
    echo "iperf3 (guest to L1):"
    grep -a -E 'sender|receiver' "$con" | tr -d '\r' | sed 's/^/  /'
    echo "fio:"
    grep -a -E '(read|write): IOPS=|(READ|WRITE): bw=|vda: ios=' "$con" | tr -d '\r' | sed 's/^/  /'
    echo "$end: kvmmio exit status $status after ${stop_s} s; stop reason $(stats_value "$R/guest.json" stop_reason)"
    echo "disk0: reads $reads, writes $writes, flushes $flushes"
    echo "whole run: $(since) s"
} >"$R/summary.txt"
while read -r line; do step "$line"; done <"$R/summary.txt"

# The verdict, one case in GoogleTest's JSON shape (lib.sh's record), so
# the platform's summary counts it.
scenario_name=guest-disk
msg=''
if [ "$state" != running ]; then msg="systemd is '$state', not running; failed units: $(marker FAILED-UNITS)"
elif ! marker ETH0 | grep -q '192\.168\.123\.[0-9]*/24'; then msg="eth0 has no address of 192.168.123.0/24 (DHCP): $(marker ETH0)"
elif ! root_kib=$(marker ROOT-KIB) || ! [ "$root_kib" -ge $((disk_mib * 1024 * 90 / 100)) ] 2>/dev/null; then
    msg="the root file system has '$root_kib' KiB on a disk of $disk_mib MiB: not grown to the disk (x-systemd.growfs)"
elif [ -z "$lease" ]; then msg="kvmmio network list shows no lease of kvmmio-guest: $(tr '\n' ' ' <"$R/network-list.txt")"
elif ! marker ETH0 | grep -q "$lease/24"; then msg="the lease $lease is not eth0's address: $(marker ETH0)"
elif [ "$(marker RESOLVED)" != "192.168.123.1 l1.kvmmio.test" ]; then msg="the guest resolved l1.kvmmio.test to '$(marker RESOLVED)', not 192.168.123.1 (DNS through the DHCP server)"
elif ! echo "$ping_out" | grep -q ' 0% packet loss'; then msg="L1 could not ping the guest: $ping_out"
elif [ "$ssh_status" != 0 ] || [ "$ssh_out" != "kvmmio-guest root running" ]; then msg="ssh root@$lease with the key: status $ssh_status, '$ssh_out' ($(head -c 300 "$R/ssh.err" | tr '\n' ' '))"
elif [ "$(marker IPERF)" != 0 ]; then msg="iperf3 in the guest failed (status $(marker IPERF))"
elif [ "$(marker FIO)" != 0 ]; then msg="fio in the guest failed (status $(marker FIO))"
elif ! grep -aq 'write: IOPS=' "$con"; then msg="fio printed no write IOPS"
elif [ "$end" = reboot ] && [ "$(marker CYCLE)" != 0 ]; then msg="writing and syncing /root/kvmmio-cycle failed (status $(marker CYCLE))"
elif [ "$status" != "$want_status" ]; then msg="kvmmio exit status $status after the guest's $end, not $want_status"
elif [ "$(stats_value "$R/guest.json" stop_reason)" != "$want_reason" ]; then msg="stop reason $(stats_value "$R/guest.json" stop_reason) after the guest's $end, not $want_reason"
elif [ "$(guest_errors_total "$R/guest.json")" != 0 ]; then msg="guest errors in --stats"
elif [ "${writes:-0}" -eq 0 ] || [ "${flushes:-0}" -eq 0 ]; then msg="disk0: writes ${writes:-?}, flushes ${flushes:-?}"
fi
record "$console-cpus$cpus" "$(since)" "$msg"
write_cases guest-disk
