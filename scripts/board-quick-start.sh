#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs README.md's board quick start, the block after the line
# "<!-- the board rehearsal runs the next block -->", as it stands, on a
# board where its packages and guest were made beforehand:
#
#   scripts/board-quick-start.sh README WORKDIR KEY
#     README   the README.md whose block runs
#     WORKDIR  the directory the block runs in: debs/ (build-debs.sh's
#              packages) and guest/ (make-guest.sh's guest, made with
#              --ssh-key KEY.pub)
#     KEY      the private key of that guest's root
#
# Each command runs with bash's eval, in order, but for two a user acts on
# what they print: `kvmmio network list` is repeated until the guest's lease
# is there (a user waits for the boot), and `ssh root@ADDRESS` logs in at
# that lease with KEY and runs a command instead of a shell. After the
# login, before the block's next command, the guest reboots in place (its
# `systemctl reboot`; kvmmio's default --on-reboot restart) and the login
# is made again: same kvmmio PID, new guest boot. Lines "QUICK-START: ..."
# say what ran; the last is "QUICK-START-DONE status=N" (0: every step as
# expected, else the first failure's reason). Needs root, /dev/kvm, ssh.
set -uo pipefail
readme=${1:?usage: board-quick-start.sh README WORKDIR KEY}
work=${2:?usage: board-quick-start.sh README WORKDIR KEY}
key=${3:?usage: board-quick-start.sh README WORKDIR KEY}
marker='<!-- the board rehearsal runs the next block -->'

say() { echo "QUICK-START: $*"; }
done_with() { echo "QUICK-START-DONE status=$1${2:+ ($2)}"; exit "$1"; }

# The block: the first ```sh fence after the marker, to its closing fence,
# with backslash-continued lines joined.
mapfile -t commands < <(awk -v m="$marker" '
    $0 == m { armed = 1; next }
    armed && !inside && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { if (sub(/\\$/, "")) { held = held $0; next } print held $0; held = "" }' "$readme")
((${#commands[@]} > 0)) || done_with 1 "no block after '$marker' in $readme"
say "${#commands[@]} commands from $readme, run in $work"
cd "$work" || done_with 1 "no $work"
chmod 600 "$key"
ssh_opts=(-i "$key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10)
addr='' name=''

# login WHAT: ssh to the lease; prints "HOST USER STATE BOOT_ID".
login() {
    # shellcheck disable=SC2016 # expanded by the guest's shell
    timeout 60 ssh "${ssh_opts[@]}" "root@$addr" \
        'echo "$(hostname) $(id -un) $(systemctl is-system-running) $(cat /proc/sys/kernel/random/boot_id)"' 2>/dev/null |
        tr -d '\r' | tail -n 1
}
# pid_of NAME: the VM's PID in kvmmio list.
pid_of() { kvmmio list 2>/dev/null | awk -v n="$1" '$1 == n { print $2; exit }'; }

for cmd in "${commands[@]}"; do
    [[ $cmd =~ ^[[:space:]]*(#|$) ]] && continue
    say "\$ $cmd"
    case $cmd in
    "kvmmio network list"*)
        # As a user: again until the guest has booted and taken its lease.
        out=''
        for _ in $(seq 300); do
            out=$(kvmmio network list 2>&1)
            addr=$(awk '$1 == "lease" { print $2; exit }' <<<"$out")
            [[ -z $addr ]] || break
            sleep 1
        done
        printf '%s\n' "$out"
        [[ -n $addr ]] || done_with 1 "no lease in kvmmio network list after 300 s"
        say "lease $addr"
        ;;
    "ssh root@ADDRESS"*)
        [[ -n $addr ]] || done_with 1 "ssh before any lease"
        # Until the guest's systemd has finished starting (a user who logs
        # in earlier just waits a little more for the login).
        first=''
        for _ in $(seq 30); do
            first=$(login)
            [[ $first =~ \ (running|degraded)\  ]] && break
            sleep 5
        done
        say "ssh root@$addr: '$first'"
        read -r host user state boot <<<"$first"
        [[ $user == root && $state =~ ^(running|degraded)$ ]] ||
            done_with 1 "ssh root@$addr did not log in to a running guest: '$first'"
        [[ $state == running ]] || say "the guest's systemd is $state"
        # Reboot in place: the same kvmmio, a new boot of the guest.
        [[ -n $name ]] || done_with 1 "no kvmmio run --name before the ssh"
        pid=$(pid_of "$name")
        timeout 30 ssh "${ssh_opts[@]}" "root@$addr" 'systemctl reboot' >/dev/null 2>&1
        again=''
        for _ in $(seq 60); do
            sleep 5
            again=$(login) || continue
            [[ -n $again && ${again##* } != "$boot" ]] && break
        done
        pid_after=$(pid_of "$name")
        say "after the guest's reboot: ssh '$again', kvmmio PID $pid before, ${pid_after:-none} after"
        [[ -n $again && ${again##* } != "$boot" ]] || done_with 1 "no new boot of the guest answered ssh within 300 s of its reboot"
        [[ -n $pid && $pid == "$pid_after" ]] || done_with 1 "the guest's reboot did not stay in kvmmio PID $pid (now '${pid_after:-none}')"
        say "rebooted in place: $host, boot ${boot:0:8} then ${again##* }"
        ;;
    *)
        [[ $cmd =~ --name[[:space:]]+([A-Za-z0-9][A-Za-z0-9._-]*) ]] && name=${BASH_REMATCH[1]}
        status=0
        eval "$cmd" || status=$?
        say "status $status"
        ((status == 0)) || done_with 1 "'$cmd' ended with status $status"
        if [[ $cmd == "kvmmio stop "* ]]; then
            [[ -z $(pid_of "$name") ]] || done_with 1 "$name still listed after kvmmio stop"
            say "$name stopped"
        fi
        ;;
    esac
done
[[ -n $addr && -n $name ]] || done_with 1 "the block had no kvmmio run --name, network list or ssh"
done_with 0
