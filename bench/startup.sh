#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/startup.sh: how long kvmmio takes from its exec to its guest's
# init, against QEMU and against a floor, in one run on an arm64 KVM host
# (a board, or L1 of the nested platform: the `startup` scenario runs it
# there). Each repeat runs, one after the other (in an order that changes
# each repeat, so that each follows each other equally often):
#   floor    bench/boot_floor --run: raw KVM ioctls, a VM, guest RAM, one
#            vCPU, the vGIC, kvmmio's device tree without its devices, the
#            same kernel and initrd, and a PL011 serving the console: the
#            least any VMM does to boot this guest
#   kvmmio   `kvmmio run` with the same kernel, initrd, RAM and vCPU, plus
#            a console and (with --tap) one vhost-net device with irqfd and
#            the register mirror
#   qemu     (with --qemu) QEMU on KVM, the virt machine, the same guest,
#            and (with --tap) one vhost-net device (virtio-net-pci)
# each under bench/boot_timer, which reads the guest's console: the same
# command line for all (console=ttyAMA0 quiet), whose first line is the L2
# init's KVMMIO-L2-INIT, a kernel message stamped by the guest's clock.
# Each run gives to_init (exec to that line), to_guest_clock (exec to the
# guest kernel's clock starting: to_init less the line's stamp), and the
# VMM's own phases up to vCPU 0's first KVM_RUN (to_first_run: kvmmio's
# --stats "startup_ms", docs/usage.md; the floor prints its own; QEMU has
# none). The tables give each phase's median, the end-to-end spans'
# medians with their ranges, and the ratios of kvmmio's spans to QEMU's and
# the floor's (under TCG only ratios carry over to hardware:
# docs/benchmarks.md, "Start-up").
#
#   bench/startup.sh --kernel Image --initrd FILE --out DIR [--repeats N]
#                    [--mem MiB] [--gic auto|3|2] [--tap NAME] [--qemu PROGRAM]
#                    [--cmdline WORDS] [--vmm NAME=PATH]... [--rng-too]
#     --repeats N  interleaved repeats (default 5)
#     --mem MiB    guest RAM (default 256: Debian's arm64 kernel keeps 64
#                  MiB for CMA, and in 128 it cannot unpack the platform's
#                  initramfs: "Initramfs unpacking failed", a failed run)
#     --gic N      the vGIC all create (default auto: v3 where KVM has it)
#     --tap NAME   give kvmmio's guest one vhost-net device on the tap NAME
#                  and QEMU's on NAMEq (each VMM makes its own; default none)
#     --qemu PROGRAM  time QEMU too (qemu-system-aarch64; default: not)
#     --cmdline WORDS  the guest's command line under every VMM (default
#                  "console=ttyAMA0 quiet panic=-1"; KVMMIO-L2-INIT must
#                  reach the console: a PL011 console)
#     --vmm NAME=PATH  a kvmmio binary to time, repeatable (default
#                  kvmmio=kvmmio, the one on PATH): two builds side by
#                  side, e.g. before=/tmp/kvmmio-old after=kvmmio, give a
#                  change's before and after in one run
#     --rng-too    also time the first --vmm with its virtio-rng device
#                  (kvmmio's default; the others run with --rng off, as
#                  QEMU's guest has no entropy device), as NAME-rng: the
#                  entropy device's cost to the boot
# The guest's initramfs must print KVMMIO-L2-INIT to /dev/kmsg first
# (the platform's does: scripts/arm64/init-l2.sh). KVMMIO_L1_CLOCK=icount
# (the nested platform's run.sh --clock icount) says the clock is L1's
# instruction count: the tables and startup.json ("clock") say so.
# Writes DIR/startup.jsonl (one record per run: {"vmm", "rep",
# "startup_ms"}), DIR/startup.txt (the tables, also printed) and
# DIR/startup.json ({"repeats", "vmms", "phases", "median_ms": {vmm:
# {phase: ms}}, "range_ms": {vmm: {span: [min, max]}}, "ratios"}). Exit
# status 0, 1 when a run failed, 2 on bad usage.
# POSIX sh and jq (busybox is enough besides jq).
set -u
die() { echo "startup.sh: $*" >&2; exit 2; }
kernel='' initrd='' out='' repeats=5 mem=256 gic=auto tap='' vmms='' qemu='' cmdline='console=ttyAMA0 quiet panic=-1' rng_too=0
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
    --qemu) qemu=${2:?--qemu needs a PROGRAM}; shift 2 ;;
    --cmdline) cmdline=${2:?--cmdline needs the guest command line}; shift 2 ;;
    --rng-too) rng_too=1; shift ;;
    -h | --help) sed -n '2,/^# POSIX sh/p' "$0"; exit 0 ;;
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
    floor=* | qemu=* | *=*=* | =* | *=) die "--vmm '$v': want NAME=PATH, NAME not floor or qemu" ;;
    [a-z]*=*) command -v "${v#*=}" >/dev/null || die "--vmm $v: ${v#*=} is not a program" ;;
    *) die "--vmm '$v': want NAME=PATH (NAME: lower-case letters, digits, -)" ;;
    esac
done
for t in boot_floor boot_timer jq; do command -v $t >/dev/null || die "$t is not on PATH"; done
[ -z "$qemu" ] || command -v "$qemu" >/dev/null || die "--qemu $qemu: not a program (qemu-system-aarch64)"
[ -c /dev/kvm ] || die "no /dev/kvm: run it on an arm64 KVM host"
mkdir -p "$out" || die "cannot make $out"
raw=$out/startup.jsonl
: >"$raw"

net='' kvmmio_gic=auto
[ "$gic" = auto ] || kvmmio_gic=v$gic
# kvmmio makes the tap (and it goes with kvmmio), as a user's would.
[ -z "$tap" ] || net="--net tap=$tap,vhost=on,irq=irqfd,regs=mirror"

failures=0
# timed NAME REP COMMAND...: COMMAND under boot_timer, to the init's line
# (then boot_timer ends it), into DIR/NAME-REP.timer.json; the console
# and COMMAND's stderr beside it. A guest
# whose kernel could not unpack the whole initramfs (too little RAM) is a
# failed run: its init came from part of it, sooner than a whole one's.
timed() {
    _n=$1 _r=$2
    shift 2
    rm -f "$out/$_n-$_r.timer.json"
    boot_timer --marker KVMMIO-L2-INIT --until marker --timeout 120 --console "$out/$_n-$_r.console" \
        --json "$out/$_n-$_r.timer.json" -- "$@" </dev/null 2>"$out/$_n-$_r.log" || return 1
    ! grep -q 'Initramfs unpacking failed' "$out/$_n-$_r.console" || {
        echo "the guest could not unpack its initramfs: $(grep -m 1 'Initramfs unpacking failed' "$out/$_n-$_r.console"); give it more --mem" >>"$out/$_n-$_r.log"
        return 1
    }
}
# record NAME REP [PHASES]: one run's record: the VMM's own phases (a JSON
# object, or none) and boot_timer's to_guest_clock and to_init.
record() {
    jq -c --arg vmm "$1" --argjson rep "$2" --argjson phases "${3:-{\}}" \
        '{vmm: $vmm, rep: $rep, startup_ms: ($phases + {to_guest_clock: .guest_clock_ms, to_init: .marker_ms})}' \
        "$out/$1-$2.timer.json" >>"$raw"
}
failed_run() {
    echo "startup.sh: $1 run $2 did not reach the guest's init: $(tail -n 1 "$out/$1-$2.log" 2>/dev/null) (see $out/$1-$2.log, $out/$1-$2.console)"
    failures=$((failures + 1))
}

# kvmmio_once NAME PATH REP [RNG]: one start-up of the kvmmio at PATH, to
# its guest's init; its own phases from the --stats document it writes
# when boot_timer stops it (SIGTERM). RNG (default off): --rng's value.
kvmmio_once() {
    name=$1 prog=$2 s=$out/$1-$3.stats.json
    rm -f "$s"
    # --rng off: the devices above and no more (QEMU's guest has no
    # entropy device either); --rng-too's run has it.
    # shellcheck disable=SC2086 # $net: options, words without spaces
    if timed "$name" "$3" "$prog" run --kernel "$kernel" --initrd "$initrd" --mem "${mem}M" --cpus 1 \
        --gic "$kvmmio_gic" --rng "${4:-off}" $net --cmdline-replace "$cmdline" --stats "$s" &&
        phases=$(jq -ce '.startup_ms | select(.to_first_run != null)' "$s" 2>/dev/null); then
        record "$name" "$3" "$phases"
    else
        failed_run "$name" "$3"
    fi
}

# qemu_once REP: QEMU (KVM, the virt machine, the same vGIC), the same
# guest with one vhost-net device (virtio-net-pci, the peer's best path in
# net-compare.sh) on its own tap.
qemu_once() {
    _gic=host
    [ "$gic" = auto ] || _gic=$gic
    _netq=''
    [ -z "$tap" ] || _netq="-netdev tap,id=net0,ifname=${tap}q,script=no,downscript=no,vhost=on -device virtio-net-pci,netdev=net0,romfile="
    # shellcheck disable=SC2086 # $_netq: options, words without spaces
    if timed qemu "$1" "$qemu" -M "virt,gic-version=$_gic" -accel kvm -cpu host -smp 1 -m "$mem" \
        -nodefaults -no-user-config -display none -no-reboot $_netq \
        -kernel "$kernel" -initrd "$initrd" -append "$cmdline" -serial stdio; then
        record qemu "$1"
    else
        failed_run qemu "$1"
    fi
}

# floor_once REP: the floor, to the guest's init: no device but the
# console (boot_floor --run).
floor_once() {
    f=$out/floor-$1.json
    rm -f "$f"
    if timed floor "$1" boot_floor --kernel "$kernel" --initrd "$initrd" --mem "$mem" --gic "$gic" \
        --run "$cmdline" --json "$f" && phases=$(jq -ce '.startup_ms' "$f" 2>/dev/null); then
        record floor "$1" "$phases"
    else
        failed_run floor "$1"
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

# once VMM REP: one counted (REP > 0) or warm-up (REP 0) run of VMM.
once() {
    case $1 in
    floor) floor_once "$2" ;;
    qemu) qemu_once "$2" ;;
    "$rng_name") kvmmio_once "$1" "${first_vmm#*=}" "$2" on ;;
    *) for _v in $vmms; do [ "${_v%%=*}" != "$1" ] || kvmmio_once "$1" "${_v#*=}" "$2"; done ;;
    esac
}
names=$(for v in $vmms; do printf '%s ' "${v%%=*}"; done)
for first_vmm in $vmms; do break; done
rng_name=-
if [ "$rng_too" = 1 ]; then
    rng_name=${first_vmm%%=*}-rng
    case " $names" in *" $rng_name "*) die "--rng-too: a --vmm is named $rng_name already" ;; esac
    names="$names$rng_name "
fi
[ -z "$qemu" ] || names="${names}qemu "
# A first run of each, not counted: the kernel and initrd into the page
# cache, the programs' pages in.
for v in floor $names; do settle; once "$v" 0; done
: >"$raw"
failures=0
# SPAN of VMM in repeat REP ("-" if it failed).
took() { jq -r --arg v "$1" --argjson rep "$2" --arg s "$3" 'select(.vmm == $v and .rep == $rep) | .startup_ms[$s] | values' "$raw" | grep . || echo -; }
# Every counted start follows the same thing: an uncounted floor run to
# its first KVM_RUN (no guest runs), then a settled machine. In the nested
# platform a start right after a kvmmio whose guest had run loaded its
# image 3-10 times as slowly as one right after the floor (whose guest
# never runs), with L1's CPUs idle and its memory compacted either way
# (the cost is the emulator's, below L1): in a 21-repeat run the program
# that more often followed the floor came out with half the other's median
# image load, the same binary but for two unrelated lines. The order still
# changes each repeat so that each program follows each other equally
# often: odd repeats run the list forwards, even ones backwards; every
# second repeat rotates it by one.
# shellcheck disable=SC2086 # $names: words without spaces
set -- floor $names
rep=1
while [ $rep -le "$repeats" ]; do
    line='' seq=''
    for v in "$@"; do if [ $((rep % 2)) = 1 ]; then seq="$seq $v"; else seq="$v $seq"; fi; done
    for v in $seq; do
        boot_floor --kernel "$kernel" --initrd "$initrd" --mem "$mem" --gic "$gic" >/dev/null 2>&1 || true
        settle
        once "$v" $rep
        line="$line${line:+, }$v $(took "$v" $rep to_guest_clock)/$(took "$v" $rep to_init) ms"
    done
    echo "startup.sh: repeat $rep/$repeats (exec to guest clock/init): $line"
    if [ $((rep % 2)) = 0 ]; then
        first=$1
        shift
        set -- "$@" "$first"
    fi
    rep=$((rep + 1))
done

# The clock the times are in: wall-clock time, or (nested, run.sh --clock
# icount) L1's instructions counted as nanoseconds.
clock=${KVMMIO_L1_CLOCK:-wall}
unit=ms
[ "$clock" = wall ] || unit="ms of L1's instruction-counted time"
# Medians per VMM and phase (in the order the first kvmmio ran them, then
# the floor's others, then the spans), the spans' ranges, kvmmio's ratios
# to QEMU and the floor, the tables.
jq -s --argjson repeats "$repeats" --arg names "$names" --arg clock "$clock" '
    def median: sort | if length == 0 then null
        elif length % 2 == 1 then .[length / 2 | floor]
        else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def order($v): [.[] | select(.vmm == $v)][0].startup_ms // {} | keys_unsorted;
    ["to_first_run", "to_guest_clock", "to_init"] as $spans
    | ($names | split(" ") | map(select(. != ""))) as $vmms
    | (order($vmms[0])) as $k | (order("floor")) as $f
    | (($k + ($f - $k)) - $spans + $spans) as $phases
    | (group_by(.vmm) | map({key: .[0].vmm, value: [.[].startup_ms | to_entries[] | select(.value != null)]})
       | from_entries) as $by
    | ($by | map_values(group_by(.key) | map({key: .[0].key, value: (map(.value) | median)}) | from_entries)) as $m
    | ($by | map_values(map(select(.key as $k | $spans | index($k))) | group_by(.key)
       | map({key: .[0].key, value: (map(.value) | [min, max])}) | from_entries)) as $r
    | {repeats: $repeats, clock: $clock, vmms: $vmms, phases: $phases, median_ms: $m, range_ms: $r,
       ratios: [$vmms[] as $v | select($v != "qemu") | ("qemu", "floor") as $o | $spans[] as $s
           | select($m[$v][$s] != null and ($m[$o][$s] // 0) > 0)
           | {vmm: $v, to: $o, span: $s, ratio: ($m[$v][$s] / $m[$o][$s])}]}' \
    "$raw" >"$out/startup.json" || die "cannot summarise $raw"
{
    echo "Start-up: medians of $repeats interleaved runs ($unit); the VMM's phases to vCPU 0's first KVM_RUN, then the spans from exec"
    jq -r '.median_ms as $m | (.vmms + ["floor"]) as $c
        | (["phase"] + $c | map(tostring) | join(" ")),
          (.phases[] as $p | [$p] + ($c | map($m[.][$p] // "-" | if type == "number" then (. * 10 | round / 10 | tostring) else . end)) | join(" "))' \
        "$out/startup.json" | awk '{ printf "%-14s", $1; for (i = 2; i <= NF; i++) printf " %10s", $i; printf "\n" }'
    echo "Spans from exec, median [min-max] of the $repeats runs ($unit):"
    jq -r '.median_ms as $m | .range_ms as $r | (.vmms + ["floor"])[] as $v | ["to_first_run", "to_guest_clock", "to_init"][] as $s
        | select($m[$v][$s] != null)
        | "  \($v) \($s): \($m[$v][$s] * 10 | round / 10) [\($r[$v][$s][0] * 10 | round / 10)-\($r[$v][$s][1] * 10 | round / 10)]"' \
        "$out/startup.json"
    jq -r '.ratios[] | "\(.vmm)/\(.to) (\(.span)): \(.ratio * 100 | round / 100)"' "$out/startup.json"
} | tee "$out/startup.txt"
[ $failures = 0 ] || { echo "startup.sh: $failures runs failed"; exit 1; }
