#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/startup.sh: kvmmio's start-up against its floor, in one run on an
# arm64 KVM host (a board, or L1 of the nested platform: the `startup`
# scenario runs it there). Each repeat runs, one after the other (in an
# order that changes each repeat, so that each follows each other equally
# often):
#   floor    bench/boot_floor: raw KVM ioctls, a VM, guest RAM, one vCPU,
#            the vGIC, the same kernel and initrd read into RAM, then the
#            first KVM_RUN: the least any VMM does before the guest runs
#   kvmmio   `kvmmio run` with the same kernel, initrd, RAM and vCPU, plus
#            a console and (with --tap) one vhost-net device with irqfd and
#            the register mirror; its --stats snapshot (SIGUSR1) once vCPU 0
#            has run, then SIGTERM
# and reads the same phases from both (kvmmio's --stats "startup_ms",
# docs/usage.md; the floor prints its own). The table gives each phase's
# median, and the ratio of kvmmio's to_first_run to the floor's: under TCG
# only that ratio carries over to hardware (docs/benchmarks.md,
# "Start-up").
#
#   bench/startup.sh --kernel Image --initrd FILE --out DIR [--repeats N]
#                    [--mem MiB] [--gic auto|3|2] [--tap NAME] [--vmm NAME=PATH]...
#     --repeats N  interleaved repeats (default 5)
#     --mem MiB    guest RAM (default 128)
#     --gic N      the vGIC both create (default auto: v3 where KVM has it)
#     --tap NAME   give kvmmio's guest one vhost-net device on this tap
#                  (kvmmio makes it; default none)
#     --vmm NAME=PATH  a kvmmio binary to time, repeatable (default
#                  kvmmio=kvmmio, the one on PATH): two builds side by
#                  side, e.g. before=/tmp/kvmmio-old after=kvmmio, give a
#                  change's before and after in one run
# Writes DIR/startup.jsonl (one record per run: {"vmm", "rep",
# "startup_ms"}), DIR/startup.txt (the table, also printed) and
# DIR/startup.json ({"repeats", "median_ms": {vmm: {phase: ms}},
# "ratio_to_floor"}). Exit status 0, 1 when a run failed, 2 on bad usage.
# POSIX sh and jq (busybox is enough besides jq).
set -u
die() { echo "startup.sh: $*" >&2; exit 2; }
kernel='' initrd='' out='' repeats=5 mem=128 gic=auto tap='' vmms=''
while [ $# -gt 0 ]; do
    case $1 in
    --kernel) kernel=${2:?--kernel needs an Image}; shift 2 ;;
    --initrd) initrd=${2:?--initrd needs a FILE}; shift 2 ;;
    --out) out=${2:?--out needs a DIR}; shift 2 ;;
    --repeats) repeats=${2:?--repeats needs N}; shift 2 ;;
    --mem) mem=${2:?--mem needs MiB}; shift 2 ;;
    --gic) gic=${2:?--gic needs auto, 3 or 2}; shift 2 ;;
    --tap) tap=${2:?--tap needs a NAME}; shift 2 ;;
    --vmm) vmms="$vmms ${2:?--vmm needs NAME=PATH}"; shift 2 ;;
    -h | --help) sed -n '2,29p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
if [ -z "$kernel" ] || [ -z "$initrd" ] || [ -z "$out" ]; then die "--kernel, --initrd and --out are required (see --help)"; fi
[ -f "$kernel" ] || die "--kernel $kernel: no such file"
[ -f "$initrd" ] || die "--initrd $initrd: no such file"
case $repeats in '' | *[!0-9]* | 0*) die "--repeats '$repeats': want a positive whole number" ;; esac
case $mem in '' | *[!0-9]* | 0*) die "--mem '$mem': want MiB" ;; esac
case $gic in auto | 2 | 3) ;; *) die "--gic '$gic': want auto, 3 or 2" ;; esac
vmms=${vmms:-kvmmio=kvmmio}
for v in $vmms; do
    case $v in
    floor=* | *=*=* | =* | *=) die "--vmm '$v': want NAME=PATH, NAME not floor" ;;
    [a-z]*=*) command -v "${v#*=}" >/dev/null || die "--vmm $v: ${v#*=} is not a program" ;;
    *) die "--vmm '$v': want NAME=PATH (NAME: lower-case letters, digits, -)" ;;
    esac
done
for t in boot_floor jq; do command -v $t >/dev/null || die "$t is not on PATH"; done
[ -c /dev/kvm ] || die "no /dev/kvm: run it on an arm64 KVM host"
mkdir -p "$out" || die "cannot make $out"
raw=$out/startup.jsonl
: >"$raw"

net='' kvmmio_gic=auto
[ "$gic" = auto ] || kvmmio_gic=v$gic
# kvmmio makes the tap (and it goes with kvmmio), as a user's would.
[ -z "$tap" ] || net="--net tap=$tap,vhost=on,irq=irqfd,regs=mirror"

failures=0
# kvmmio_once NAME PATH REP: one start-up of the kvmmio at PATH, its
# startup_ms appended to $raw as NAME's.
kvmmio_once() {
    name=$1 prog=$2
    shift 2
    s=$out/$name-$1.stats.json
    rm -f "$s"
    # shellcheck disable=SC2086 # $net: options, words without spaces
    "$prog" run --kernel "$kernel" --initrd "$initrd" --mem "${mem}M" --cpus 1 --gic "$kvmmio_gic" $net \
        --cmdline "console=ttyAMA0 quiet panic=-1" --stats "$s" </dev/null >"$out/$name-$1.console" \
        2>"$out/$name-$1.log" &
    pid=$!
    # Nothing of this script's runs while kvmmio starts: an awk or jq
    # process takes L1's CPUs for a noticeable time under TCG, and did land
    # in kvmmio's phases (its image load took 1.7 times as long when the
    # first snapshot came 0.2 s after the exec). So a second of sleep, then
    # a snapshot each 0.5 s until one has to_first_run (60 at most); only
    # once kvmmio blocks SIGUSR1 (from main() on; before e55ab9e, from its
    # machine's signalfd on): before that its default action ends kvmmio.
    sleep 1
    i=0 ran=0
    while [ $i -lt 60 ] && kill -0 $pid 2>/dev/null; do
        i=$((i + 1))
        blk=$(awk '$1 == "SigBlk:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
        if [ $(( 0x${blk:-0} & 0x200 )) != 0 ]; then
            kill -USR1 $pid 2>/dev/null
            j=0; while [ ! -s "$s" ] && [ $j -lt 20 ]; do sleep 0.1; j=$((j + 1)); done
            if jq -e '.startup_ms.to_first_run' "$s" >/dev/null 2>&1; then ran=1; break; fi
            rm -f "$s"
        fi
        sleep 0.5
    done
    snapshot=$(cat "$s" 2>/dev/null)
    kill -TERM $pid 2>/dev/null
    wait $pid
    if [ $ran = 1 ]; then
        printf '%s\n' "$snapshot" | jq -c --arg vmm "$name" --argjson rep "$1" '{vmm: $vmm, rep: $rep, startup_ms}' >>"$raw"
    else
        echo "startup.sh: $name run $1 did not reach its first KVM_RUN (see $out/$name-$1.log)"
        failures=$((failures + 1))
    fi
}

floor_once() {
    if boot_floor --kernel "$kernel" --initrd "$initrd" --mem "$mem" --gic "$gic" >"$out/floor-$1.json" \
        2>"$out/floor-$1.log"; then
        jq -c --argjson rep "$1" '{vmm: "floor", rep: $rep, startup_ms}' "$out/floor-$1.json" >>"$raw"
    else
        echo "startup.sh: boot_floor run $1 failed: $(cat "$out/floor-$1.log")"
        failures=$((failures + 1))
    fi
}

# settle: waits (at most 20 s) until the CPUs were at least 90% idle for
# 0.5 s: whatever the last run left running in the kernel is not charged
# to the next start.
settle() {
    _t=0
    while [ $_t -lt 40 ]; do
        _a=$(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6; exit }' /proc/stat)
        sleep 0.5
        _b=$(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6; exit }' /proc/stat)
        # busy and idle ticks in the window: idle at least 9 of 10.
        echo "$_a $_b" | awk '{ busy = $3 - $1; idle = $4 - $2; exit !(busy * 9 <= idle) }' && return 0
        _t=$((_t + 1))
    done
}

# A first run of each, not counted: the kernel and initrd into the page
# cache, the programs' pages in.
floor_once 0
for v in $vmms; do settle; kvmmio_once "${v%%=*}" "${v#*=}" 0; done
: >"$raw"
# to_first_run of VMM in repeat REP ("-" if it failed).
took() { jq -r --arg v "$1" --argjson rep "$2" 'select(.vmm == $v and .rep == $rep) | .startup_ms.to_first_run' "$raw" | grep . || echo -; }
# Every counted start follows the same thing: an uncounted floor run, then
# a settled machine. In the nested platform a start right after a kvmmio
# whose guest had run loaded its image 3-10 times as slowly as one right
# after the floor (whose guest never runs), with L1's CPUs idle and its
# memory compacted either way (the cost is the emulator's, below L1): in a
# 21-repeat run the program that more often followed the floor came out
# with half the other's median image load, the same binary but for two
# unrelated lines. The order still changes each repeat so that each program
# follows each other equally often: odd repeats run the list forwards, even
# ones backwards; every second repeat rotates it by one.
# shellcheck disable=SC2086 # $vmms: words without spaces
set -- floor $vmms
rep=1
while [ $rep -le "$repeats" ]; do
    line='' seq=''
    for v in "$@"; do if [ $((rep % 2)) = 1 ]; then seq="$seq $v"; else seq="$v $seq"; fi; done
    for v in $seq; do
        boot_floor --kernel "$kernel" --initrd "$initrd" --mem "$mem" --gic "$gic" >/dev/null 2>&1 || true
        settle
        if [ "$v" = floor ]; then floor_once $rep; else kvmmio_once "${v%%=*}" "${v#*=}" $rep; fi
        line="$line${line:+, }${v%%=*} $(took "${v%%=*}" $rep) ms"
    done
    echo "startup.sh: repeat $rep/$repeats: $line"
    if [ $((rep % 2)) = 0 ]; then
        first=$1
        shift
        set -- "$@" "$first"
    fi
    rep=$((rep + 1))
done

# Medians per VMM and phase (in the order the first VMM ran them, then the
# floor's others), each VMM's ratio to the floor, the table.
names=$(for v in $vmms; do printf '%s ' "${v%%=*}"; done)
jq -s --argjson repeats "$repeats" --arg names "$names" '
    def median: sort | if length == 0 then null
        elif length % 2 == 1 then .[length / 2 | floor]
        else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def order($v): [.[] | select(.vmm == $v)][0].startup_ms // {} | keys_unsorted;
    ($names | split(" ") | map(select(. != ""))) as $vmms
    | (order($vmms[0])) as $k | (order("floor")) as $f
    | (($k + ($f - $k)) - ["to_first_run"] + ["to_first_run"]) as $phases
    | (group_by(.vmm) | map({key: .[0].vmm, value:
        ([.[].startup_ms | to_entries[]] | group_by(.key)
         | map({key: .[0].key, value: (map(.value) | median)}) | from_entries)}) | from_entries) as $m
    | {repeats: $repeats, vmms: $vmms, phases: $phases, median_ms: $m,
       ratio_to_floor: ($vmms | map({key: ., value:
           (if $m[.].to_first_run and $m.floor.to_first_run
            then $m[.].to_first_run / $m.floor.to_first_run else null end)}) | from_entries)}' \
    "$raw" >"$out/startup.json" || die "cannot summarise $raw"
{
    echo "Start-up, exec to vCPU 0's first KVM_RUN: medians of $repeats interleaved runs (ms)"
    jq -r '.median_ms as $m | (.vmms + ["floor"]) as $c
        | (["phase"] + $c | map(tostring) | join(" ")),
          (.phases[] as $p | [$p] + ($c | map($m[.][$p] // "-" | if type == "number" then (. * 10 | round / 10 | tostring) else . end)) | join(" "))' \
        "$out/startup.json" | awk '{ printf "%-14s", $1; for (i = 2; i <= NF; i++) printf " %10s", $i; printf "\n" }'
    jq -r '.ratio_to_floor | to_entries[] | "\(.key)/floor (to_first_run): \(.value | if type == "number" then (. * 100 | round / 100) else "-" end)"' \
        "$out/startup.json"
} | tee "$out/startup.txt"
[ $failures = 0 ] || { echo "startup.sh: $failures runs failed"; exit 1; }
