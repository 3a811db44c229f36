# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=sh
# tests/arm64/lib.sh: helpers for arm64 scenarios. In L1 it is
# /kvmmio/lib.sh; a scenario starts with `. "${KVMMIO_DIR:-/kvmmio}/lib.sh"`.
# Owns the functions below and turns on `set -eu`: any failing command
# fails the scenario. The scenario's exit status is the verdict.
#   step "text"        announce progress ("KVMMIO-STEP: text"; the runner
#                      names the last step on failure or timeout)
#   fail "msg"         print "KVMMIO-FAIL: msg" and exit 1
#   say_fail "msg"     print it and go on (the scenario's status fails it)
#   require_dev DEV... fail unless each DEV is a character device
#   $KVMMIO_RESULTS    directory whose files come back to the host
#   $KVMMIO_L1_GIC     GIC version of L1 (3 or 2)
#   $KVMMIO_SCENARIO_TAG  "NAME: " when the scenario runs in a list
#                      (run.sh --scenario A,B): step and fail lines carry it
#   $KVMMIO_DIR        this file's directory, with bin/net-modes.sh (/kvmmio)
#   $KVMMIO_L2         the L2 guest: Image and initramfs (/l2)
# The defaults are L1's paths; on an arm64 host the scenarios run directly
# (tests/arm64/host-scenario.sh), which points the two at its own tree.
set -eu
: "${KVMMIO_SCENARIO_TAG:=}"
: "${KVMMIO_RESULTS:=/results}" "${KVMMIO_DIR:=/kvmmio}" "${KVMMIO_L2:=/l2}"
mkdir -p "$KVMMIO_RESULTS"

# The kernel arguments of every L2 boot: quiet (each console byte is an
# MMIO exit to kvmmio in L1), panic=-1, and cryptomgr.notests: the kernel's
# crypto self-tests were ~2 s of L2's ~6 s to /init under TCG (kdf108 and
# the algorithms registered before it), and test nothing of kvmmio's.
# With panic=-1 a panicking L2 asks for a reset, as `reboot` does: the
# scenarios run kvmmio with --on-reboot exit (but where they test the
# reboot itself), so a panic ends the run with status 3 instead of booting
# L2 again and perhaps passing on the second boot.
L2_ARGS="quiet panic=-1 cryptomgr.notests"

step() { last_step=$*; echo "KVMMIO-STEP: $KVMMIO_SCENARIO_TAG$*"; }
# say_fail: a KVMMIO-FAIL line; the scenario goes on (its status says it failed).
say_fail() { failed_loudly=1; echo "KVMMIO-FAIL: $KVMMIO_SCENARIO_TAG$*"; }
fail() { say_fail "$@"; exit 1; }
# A scenario that set -e ends (a command failed outside a condition) has
# printed no KVMMIO-FAIL: name the step it was in, so the run's log says
# where it stopped rather than just its status.
last_step='' failed_loudly=''
on_scenario_exit() {
    st=$?
    [ "$st" = 0 ] || [ -n "$failed_loudly" ] ||
        echo "KVMMIO-FAIL: ${KVMMIO_SCENARIO_TAG}ended with status $st in step '${last_step:-before its first step}'"
}
trap on_scenario_exit EXIT
require_dev() {
    for d in "$@"; do [ -c "$d" ] || fail "no device $d"; done
}

# Scenarios made of several runs (vmm-boot, net-modes) report each as a test
# case, in GoogleTest's JSON shape (written with jq) so the platform's
# summary (scripts/summarize-gtest.sh) counts them with the suites' cases:
#   record NAME SECONDS MESSAGE   one case (MESSAGE empty: passed)
#   write_cases SUITE             $KVMMIO_RESULTS/SUITE.json; fails if any failed
cases_file=$KVMMIO_RESULTS/.cases.$$ failures=0 ncases=0
record() {
    ncases=$((ncases + 1))
    if [ -z "$3" ]; then
        step "$1 passed in $2 s"
    else
        say_fail "$1: $3"
        failures=$((failures + 1))
    fi
    # A passed case (names and a number) is written by the shell; a failed
    # one's message can hold anything, so jq quotes it.
    if [ -z "$3" ]; then
        printf '{"name":"%s","classname":"%s","time":"%ss","status":"RUN","result":"COMPLETED"}\n' \
            "$1" "$scenario_name.gicv$KVMMIO_L1_GIC" "$2" >>"$cases_file"
    else
        jq -cn --arg name "$1" --arg class "$scenario_name.gicv$KVMMIO_L1_GIC" --arg time "$2" \
            --arg failure "$3" '{name: $name, classname: $class, time: ($time + "s"),
                status: "RUN", result: "COMPLETED", failures: [{failure: $failure, type: ""}]}' \
            >>"$cases_file"
    fi
}
write_cases() {
    touch "$cases_file"
    jq -s --arg suite "$1.gicv$KVMMIO_L1_GIC" \
        '(map(select(.failures)) | length) as $failed
         | {tests: length, failures: $failed, name: "AllTests",
            testsuites: [{name: $suite, tests: length, failures: $failed, testsuite: .}]}' \
        "$cases_file" >"$KVMMIO_RESULTS/$1.json"
    rm -f "$cases_file"
    [ "$failures" = 0 ] || fail "$failures of $ncases runs of $1 failed (console, stderr and stats of each in the results)"
}

# Reading --stats documents. jq starts slowly (it compiles its builtins
# at every start): ~1 s a process under TCG in L1, and a vmm-boot case used
# to read a dozen values, one jq each. So a document is read once:
#   stats_flat FILE        one jq: every scalar of FILE as a line "PATH<TAB>
#                          VALUE" (PATH: keys and indices joined by '.',
#                          e.g. devices.2.counters.tx_bytes; tabs and
#                          newlines in strings become spaces), into a file
#                          named by $stats_flat_out; made again when FILE
#                          changed (a copy is compared); status 1 when FILE
#                          is missing or not JSON
#   stats_value FILE PATH  the value at PATH (e.g. cpus, stop_reason)
#   startup_line FILE      the start-up phases in one line
# and the lookups below (stats_counter, guest_errors_total, device_counter)
# are awk over that file.
stats_flat() {
    stats_flat_out=/tmp/kvmmio-stats-flat/$(echo "$1" | tr / _)
    [ -s "$1" ] || return 1
    if [ ! -f "$stats_flat_out" ] || ! cmp -s "$1" "$stats_flat_out.src"; then
        mkdir -p /tmp/kvmmio-stats-flat
        rm -f "$stats_flat_out"
        if ! cp "$1" "$stats_flat_out.src" ||
            ! jq -r 'paths(scalars) as $p
                | "\($p | map(tostring) | join("."))\t\(getpath($p) | tostring | gsub("[\t\n]"; " "))"' \
                "$stats_flat_out.src" >"$stats_flat_out.tmp" 2>/dev/null; then
            rm -f "$stats_flat_out.src" "$stats_flat_out.tmp"
            return 1
        fi
        mv "$stats_flat_out.tmp" "$stats_flat_out"
    fi
}
stats_value() {
    stats_flat "$1" || return 1
    awk -F '\t' -v k="$2" '$1 == k { print $2; exit }' "$stats_flat_out"
}
# startup_line FILE: kvmmio's start-up phases (--stats startup_ms), one
# line: "exec_to_main 10.0 setup 2.1 ... to_first_run 21.0" (ms).
startup_line() {
    stats_flat "$1" || return 1
    awk -F '\t' 'index($1, "startup_ms.") == 1 { printf "%s%s %s", s, substr($1, 12), $2; s = " " }
        END { print "" }' "$stats_flat_out"
}

# Net scenarios (net-modes, net-resets): L2 under kvmmio with virtio-net
# over tap $TAP in L1, which gets $HOST/24; L2 gets $GUEST.
#   stats_counter FILE NAME   "NAME": N of a --stats file (the first one)
#   l2_marker FILE NAME       the text after "KVMMIO-L2-NAME: " in a console
#   guest_errors_total FILE   guest_errors summed over every device
#   start_l2_net OUT NETSPEC CPUS TIMEOUT KERNEL-ARGS
#                             boots L2 in the background (console OUT.console,
#                             stats OUT.json, stderr OUT.log; pid in $l2_pid),
#                             then addresses the tap and brings it up
#   wait_l2_marker FILE NAME TICKS
#                             waits until the console shows KVMMIO-L2-NAME, L2
#                             exits, or TICKS times 0.2 s pass
#   finish_l2_net OUT START   waits for that kvmmio; sets l2_secs (since START,
#                             a /proc/uptime reading) and l2_msg: empty, or why
#                             the run failed (kvmmio's exit status, or L2 never
#                             printed KVMMIO-L2-NET-DONE)
stats_counter() {
    stats_flat "$1" || return 1
    # The first object (in document order) with key NAME: null and false
    # print nothing, as jq's `// empty` did.
    awk -F '\t' -v k="$2" '{ n = split($1, p, ".") }
        p[n] == k { if ($2 != "null" && $2 != "false") print $2; exit }' "$stats_flat_out"
}
l2_marker() {
    sed -n "s/^KVMMIO-L2-$2: //p" "$1" | tr -d '\r' | head -n 1
}
guest_errors_total() {
    stats_flat "$1" || return 1
    awk -F '\t' '{ n = split($1, p, ".") }
        n == 4 && p[1] == "devices" && p[3] == "counters" && p[4] == "guest_errors" { t += $2 }
        END { print t + 0 }' "$stats_flat_out"
}
start_l2_net() {
    : >"$1.console"
    timeout "$4" kvmmio run --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" --mem 256M --cpus "$3" \
        --net "tap=$TAP,$2" --stats "$1.json" \
        --cmdline-replace "console=ttyAMA0 $L2_ARGS kvmmio.ip=$GUEST kvmmio.host=$HOST $5" \
        </dev/null >"$1.console" 2>"$1.log" &
    l2_pid=$!
    _i=0
    while ! ip link show "$TAP" >/dev/null 2>&1; do
        _i=$((_i + 1)); [ $_i -lt 100 ] || break; sleep 0.2
    done
    ip addr add "$HOST/24" dev "$TAP" 2>/dev/null
    ip link set "$TAP" up
}
wait_l2_marker() {
    _i=0
    while ! grep -q "KVMMIO-L2-$2" "$1" && kill -0 "$l2_pid" 2>/dev/null; do
        _i=$((_i + 1)); [ $_i -lt "$3" ] || break; sleep 0.2
    done
}
finish_l2_net() {
    _status=0
    wait "$l2_pid" || _status=$?
    l2_secs=$(awk -v s="$2" -v e="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { print e - s }')
    pkill -f "nc -l -p 500" 2>/dev/null || true
    l2_msg=''
    [ $_status -eq 0 ] || l2_msg="kvmmio exited $_status ($(tail -n 2 "$1.log" | tr '\n"' ' '))"
    [ -n "$l2_msg" ] || grep -q KVMMIO-L2-NET-DONE "$1.console" ||
        l2_msg="L2 did not finish ($(grep KVMMIO-L2-ERROR "$1.console" | head -n 3 | tr '\r\n' '  '))"
}

# Scenarios that stop kvmmio with SIGTERM and read its --stats (vmm-boot,
# hostile-guest) use the helpers below.
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# device_counter FILE DEVICE KEY: the counter KEY of device DEVICE ("uart0",
# "console0", "net0") in a --stats document.
device_counter() {
    stats_flat "$1" || return 1
    awk -F '\t' -v d="$2" -v k="$3" '{ n = split($1, p, ".") }
        n == 3 && p[1] == "devices" && p[3] == "name" && $2 == d { dev[p[2]] = 1 }
        n == 4 && p[1] == "devices" && p[3] == "counters" && p[4] == k { v[p[2]] = $2 }
        END { for (i in dev) if ((i in v) && v[i] != "null" && v[i] != "false") print v[i] }' "$stats_flat_out"
}

# running PID: true while PID exists and has not exited (a zombie waiting
# for `wait` has).
running() { [ -e "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# stop_with_sigterm STATS: SIGTERM to $pid; sets $stopped_s, the seconds
# until kvmmio had stopped the VM (its final stats, with the exit status,
# are in STATS), and $exit_s, until the process was gone (after the
# kernel tore the VM and its memory down), both to /proc/uptime's 0.01 s.
stop_with_sigterm() {
    ts=$(uptime_s)
    kill -TERM "$pid" 2>/dev/null || true
    stopped_s='' i=0
    while running "$pid" && [ $i -lt 1000 ]; do
        [ -n "$stopped_s" ] || ! grep -q '"exit_status"' "$1" 2>/dev/null ||
            stopped_s=$(awk -v a="$ts" -v b="$(uptime_s)" 'BEGIN { printf "%.2f", b - a }')
        sleep 0.01
        i=$((i + 1))
    done
    exit_s=$(awk -v a="$ts" -v b="$(uptime_s)" 'BEGIN { printf "%.2f", b - a }')
    # Gone before the first look: stopped no later than that.
    [ -n "$stopped_s" ] || ! grep -q '"exit_status"' "$1" 2>/dev/null || stopped_s=$exit_s
}

# sigterm_bounds [STOP_S]: what the scenarios require of a stop by SIGTERM.
# kvmmio itself stops the VM within STOP_S (default 1) s of SIGTERM (a few
# ms here, in TCG, with a guest that only runs); the kernel's teardown of
# the VM afterwards (~0.7 s for 256 MiB in this nested L1, more when the
# host is busy) is bounded more loosely.
sigterm_bounds() {
    if [ -z "$stopped_s" ]; then echo "kvmmio never wrote its final stats after SIGTERM"
    elif awk -v s="$stopped_s" -v b="${1:-1}" 'BEGIN { exit !(s > b) }'; then
        echo "kvmmio took $stopped_s s to stop after SIGTERM (bound ${1:-1} s)"
    elif awk -v s="$exit_s" 'BEGIN { exit !(s > 8) }'; then echo "kvmmio took $exit_s s to exit after SIGTERM"
    fi
}

# nat_prepare_l1: what `kvmmio network create` and ssh need of L1's bare
# initramfs: /run; the users dnsmasq drops to (Debian's dnsmasq-base makes
# dnsmasq, in nogroup, with dip) and root (ssh wants a user for its uid).
nat_prepare_l1() {
    mkdir -p /etc /run /root
    grep -q '^root:' /etc/passwd 2>/dev/null || echo 'root:x:0:0:root:/root:/bin/sh' >>/etc/passwd
    grep -q '^dnsmasq:' /etc/passwd 2>/dev/null || echo 'dnsmasq:x:999:65534:dnsmasq:/nonexistent:/bin/false' >>/etc/passwd
    grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
    grep -q '^dip:' /etc/group 2>/dev/null || echo 'dip:x:30:' >>/etc/group
}
