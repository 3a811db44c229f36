#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/arm64/run.sh: runs scenarios of the arm64 test platform: boots
# L1 (Debian's arm64 kernel, KVM at EL2) in qemu-system-aarch64 under TCG,
# runs tests/arm64/scenarios/NAME.sh there (several, one after the other, in
# the same boot with --scenario A,B,...) and brings verdicts and result
# files back. Owns the QEMU process it starts (killed on every exit path),
# a temporary directory, the --log file and the --results directory.
#
# Result channel: a sparse raw disk image attached as virtio-blk (serial
# kvmmio-results, /dev/vda in L1 unless --disk adds others). L1's /init
# writes a tar of /results (plus exit-status) onto it; this script unpacks
# it into --results DIR after QEMU exits. The console log only carries
# progress (KVMMIO-STEP) and human-readable markers.
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
source "$(dirname "$0")/common.sh"

usage() {
    cat <<EOF
Usage: ${0##*/} --scenario NAME[,NAME...] [options]
       ${0##*/} --interactive [--scenario NAME[,NAME...]] [options]

Boots L1 and runs tests/arm64/scenarios/NAME.sh inside it.
  --scenario NAME    scenario to run (file name without .sh). A comma list
                     A,B,... runs each in turn in the same L1 boot: each gets
                     its own results directory DIR/NAME and exit status
                     (DIR/NAME/exit-status); the run's status is the first
                     failing one's. All of them run, whatever the others did
  --gic 3|2          GIC version QEMU emulates for L1 (default 3); L1 can then
                     create the same vGIC version, and only that one
  --cpu MODEL        L1's CPU, QEMU's -cpu value (default $default_cpu;
                     cortex-a72: an ARMv8.0 CPU without VHE, KVM runs nVHE
                     in L1, as on a Raspberry Pi 4)
  --timeout SECONDS  kill QEMU after this long (default 600)
  --log FILE         console log (default DIR/console.log)
  --results DIR      where result files land (default \$CACHE/results/NAME).
                     The runner empties DIR first; it refuses a non-empty DIR
                     it did not create (marker file .kvmmio-results)
  --initramfs FILE   L1 initramfs (default \$CACHE/l1-initramfs.cpio.gz); L1
                     boots the kernel FILE.kernels names (build-initramfs.sh
                     --l1-kernel), else the default kernel
  --smp N            L1 vCPUs (default 2)
  --mem MB           L1 memory (default 2048)
  --disk FILE        attach FILE (a raw image, read-write) to L1 as one more
                     virtio-blk disk (repeatable); in L1 the Nth one (from
                     0) is the disk whose serial is kvmmio-diskN
                     (/sys/block/vd*/serial: the vdX order is QEMU's)
  --tools FILE|none   the tools disk (build-initramfs.sh --tools-out: fio and
                     its libraries), attached read-only with serial
                     kvmmio-tools; L1 mounts it at /tools (KVMMIO_TOOLS_DEV
                     names the device). Default: tools.img beside the
                     --initramfs FILE when there is one, else none
  --quiet            console only to the log file, not to stdout
  --progress         with --quiet: print the scenario's progress lines
                     (KVMMIO-STEP) as they come, nothing else
  --env NAME=VALUE   export NAME=VALUE to the scenario (repeatable). NAME:
                     upper case, digits, _; VALUE: no spaces (it travels on
                     L1's kernel command line as kvmmio.env.NAME=VALUE)
  --clock wall|icount  L1's time (default wall): icount counts L1's
                     instructions as its clock (QEMU -icount shift=0,
                     sleep=off: one instruction, one nanosecond, and idle
                     time skipped), so what L1 measures is instruction
                     time, which the host's load cannot stretch; all of
                     L1's vCPUs then share one host thread (slower); the
                     scenarios see KVMMIO_L1_CLOCK=icount
  --interactive      L1 shell on this terminal after the scenario, if any
                     (kvmmio.shell=1); no timeout, no log. Ctrl-A X quits QEMU
  -h, --help         this text
CACHE=${CACHE} (env KVMMIO_CACHE)

Results: DIR/exit-status (the scenario's status), the files the scenario
wrote to \$KVMMIO_RESULTS (/results in L1), DIR/console.log. With a list:
DIR/exit-status (the run's), DIR/NAME/exit-status and DIR/NAME/* (each
scenario's KVMMIO_RESULTS is /results/NAME), DIR/console.log.
Exit status: the scenario's own (0 pass, 1-123 fail; 124-255 become 1),
  124 timeout (the last KVMMIO-STEP is named), 125 L1 never reached the
  scenario (boot failure, panic, scenario missing from the initramfs),
  126 the scenario started but no verdict came back (L1 crashed),
  127 L1's own kernel reported a hard lockup (QEMU stopped at once: L1 is
  dead, nothing recovers; docs/arm64-platform.md, "Known L1 issues"),
  2 usage or setup error.
Binaries get into L1 through build-initramfs.sh --bin FILE (/kvmmio/bin).
EOF
}

# The known-good L1 CPU (see the QEMU command line below for why each part).
default_cpu=max,pauth=off,sve=off
scenario='' gic=3 cpu=$default_cpu timeout=600 log='' results='' initramfs=$CACHE/l1-initramfs.cpio.gz
smp=2 mem=2048 quiet=0 interactive=0 progress=0 envs=() disks=() tools='' clock=wall
while (($#)); do
    case $1 in
    --scenario) scenario=${2:?--scenario needs a NAME}; shift 2 ;;
    --gic) gic=${2:?--gic needs 3 or 2}; shift 2 ;;
    --cpu) cpu=${2:?--cpu needs a MODEL, e.g. cortex-a72}; shift 2 ;;
    --timeout) timeout=${2:?--timeout needs SECONDS}; shift 2 ;;
    --log) log=${2:?--log needs a FILE}; shift 2 ;;
    --results) results=${2:?--results needs a DIR}; shift 2 ;;
    --initramfs) initramfs=${2:?--initramfs needs a FILE}; shift 2 ;;
    --smp) smp=${2:?--smp needs N}; shift 2 ;;
    --mem) mem=${2:?--mem needs MB}; shift 2 ;;
    --disk) disks+=("${2:?--disk needs a FILE}"); shift 2 ;;
    --tools) tools=${2:?--tools needs a FILE or none}; shift 2 ;;
    --quiet) quiet=1; shift ;;
    --progress) progress=1; shift ;;
    --env) envs+=("${2:?--env needs NAME=VALUE}"); shift 2 ;;
    --clock) clock=${2:?--clock needs wall or icount}; shift 2 ;;
    --interactive) interactive=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done

# --- checks -------------------------------------------------------------------
[[ -n $scenario || $interactive == 1 ]] || die "--scenario NAME is required (see --help)"
[[ $gic == [23] ]] || die "--gic must be 3 or 2, not '$gic'"
for e in "${envs[@]}"; do
    [[ $e =~ ^[A-Z_][A-Z0-9_]*=[^[:space:]]*$ ]] ||
        die "--env '$e': want NAME=VALUE, NAME in upper case, digits and _, VALUE without spaces"
done
for n in "$timeout" "$smp" "$mem"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "not a positive number: '$n'"
done
# Scenario names are file names: letters, digits, - and _ (so a comma can
# only separate them).
scenarios=()
[[ -n $scenario ]] && IFS=, read -r -a scenarios <<<"$scenario"
[[ $scenario != ,* && $scenario != *, && $scenario != *,,* ]] ||
    die "--scenario '$scenario': want NAME or NAME,NAME,... without empty names"
for s in "${scenarios[@]}"; do
    [[ $s =~ ^[A-Za-z0-9_-]+$ && -f $REPO/tests/arm64/scenarios/$s.sh ]] ||
        die "no scenario '$s' (tests/arm64/scenarios/$s.sh)"
done
[[ $(printf '%s\n' "${scenarios[@]}" | sort | uniq -d) == '' ]] ||
    die "--scenario '$scenario' names a scenario twice: their results would land in one directory"
for d in "${disks[@]}"; do
    [[ -f $d && -r $d && -w $d ]] || die "--disk $d: not a readable and writable file"
    [[ $d != *,* ]] || die "--disk $d: QEMU's -drive cannot take a file name with a comma"
done
# The tools disk: beside the initramfs unless --tools says otherwise.
[[ -n $tools ]] || { tools=$(dirname "$initramfs")/tools.img; [[ -e $tools ]] || tools=none; }
if [[ $tools != none ]]; then
    [[ -f $tools && -r $tools ]] || die "--tools $tools: not a readable file (build-initramfs.sh --tools-out makes it)"
    [[ $tools != *,* ]] || die "--tools $tools: QEMU's -drive cannot take a file name with a comma"
fi
[[ $cpu =~ ^[A-Za-z0-9_.,=-]+$ ]] ||
    die "--cpu '$cpu': want a QEMU CPU model with options, e.g. cortex-a72 or $default_cpu"
[[ $clock == wall || $clock == icount ]] || die "--clock '$clock': want wall or icount"
# The results: DIR itself for one scenario, DIR/NAME for each of a list.
multi=0
((${#scenarios[@]} > 1)) && multi=1
command -v qemu-system-aarch64 >/dev/null ||
    die "qemu-system-aarch64 missing: run scripts/arm64/fetch-packages.sh"
[[ -s $initramfs ]] || die "no initramfs $initramfs: run scripts/arm64/build-initramfs.sh"
# The L1 kernel is the one whose modules the initramfs carries.
l1_release='' l2_release=''
if [[ -s $initramfs.kernels ]]; then
    l1_release=$(awk '$1 == "l1" { print $2 }' "$initramfs.kernels")
    l2_release=$(awk '$1 == "l2" { print $2 }' "$initramfs.kernels")
fi
l1_release=${l1_release:-$(kernel_version "")}
kernel=$ROOT/boot/vmlinuz-$l1_release
[[ -s $kernel ]] || die "no kernel $kernel (named by $initramfs.kernels): run scripts/arm64/fetch-packages.sh --kernel SERIES"
for f in "$REPO"/tests/arm64/lib.sh "$REPO"/tests/arm64/scenarios/*.sh \
    "$REPO"/scripts/arm64/init-l[12].sh; do
    [[ $f -nt $initramfs ]] &&
        say "warning: $f is newer than $initramfs: run scripts/arm64/build-initramfs.sh"
done

default_name=${scenario//,/+}
results=${results:-$CACHE/results/${default_name:-interactive}}
if [[ -d $results && -n $(ls -A "$results") ]]; then
    [[ -e $results/.kvmmio-results ]] ||
        die "$results is not empty and not a results directory of this runner: empty it or choose another --results DIR"
    find "$results" -mindepth 1 -delete
fi
mkdir -p "$results"
touch "$results/.kvmmio-results"
log=${log:-$results/console.log}
mkdir -p "$(dirname "$log")"

# --- QEMU, and its clean-up on every exit path ----------------------------------
work=$(mktemp -d)
disk=$work/results.img
truncate -s 256M "$disk" # sparse: costs only what L1 writes

# cryptomgr.notests: the kernel's crypto self-tests take seconds of every
# boot under TCG and test nothing of kvmmio's.
append="console=ttyAMA0 panic=-1 rdinit=/init quiet cryptomgr.notests kvmmio.gic=$gic"
[[ -n $scenario ]] && append+=" kvmmio.scenario=$scenario"
((interactive)) && append+=" kvmmio.shell=1"
# The scenarios label their times by it (KVMMIO_L1_CLOCK).
[[ $clock == wall ]] || append+=" kvmmio.env.KVMMIO_L1_CLOCK=$clock"
for e in "${envs[@]}"; do append+=" kvmmio.env.$e"; done
# The known-good L1 command line (docs/arm64-platform.md). pauth=off: the
# Debian kernels sign every return address where the CPU has pointer
# authentication, which TCG computes in software (pauth-impdef=on made it
# ~2.7x cheaper than the architected QARMA; off is cheaper still: a
# net-modes boot took 127 s instead of 157, 19% less CPU). kvmmio asks KVM
# for no pointer authentication for its guests, boards up to the Pi 5 have
# none, and without it the signing instructions are hints. sve=off: QEMU's TCG
# invalidates translated code after an SVE store to a code page only where
# the store's first byte lands, so L1 programs whose memcpy is glibc's SVE
# one (kvmmio loading a guest) leave stale translations behind, and a later
# L2 guest on the reused page runs the previous guest's code ("Stale guest
# code", docs/arm64-platform.md). -nic none: L1 needs no network card, and
# QEMU's default one would need a ROM file (ipxe-qemu) that nothing else
# here uses. --cpu replaces the CPU (a board's, e.g. cortex-a72: no SVE and
# no pointer authentication to begin with).
# shellcheck disable=SC2054 # commas belong to QEMU option values
qemu=(qemu-system-aarch64
    -machine "virt,virtualization=on,gic-version=$gic"
    -cpu "$cpu" -smp "$smp" -m "$mem"
    -nographic -no-reboot -nic none -kernel "$kernel" -initrd "$initramfs" -append "$append"
    -drive "file=$disk,format=raw,if=none,id=results"
    -device virtio-blk-device,drive=results,serial=kvmmio-results)
# --clock icount: instruction counting needs TCG's single thread.
# shellcheck disable=SC2054 # commas belong to QEMU option values
if [[ $clock == icount ]]; then qemu+=(-accel tcg,thread=single -icount shift=0,sleep=off)
else qemu+=(-accel tcg,thread=multi); fi
# The tools disk, read-only (runs may share it): L1 mounts it at /tools.
# shellcheck disable=SC2054 # commas belong to QEMU option values
[[ $tools == none ]] || qemu+=(-drive "file=$tools,format=raw,if=none,id=tools,readonly=on"
    -device virtio-blk-device,drive=tools,serial=kvmmio-tools)
# --disk: L1 tells them apart by serial (init-l1.sh finds the results disk
# the same way): which one is vda depends on QEMU's virtio-mmio slot order.
for i in "${!disks[@]}"; do
    qemu+=(-drive "file=${disks[i]},format=raw,if=none,id=disk$i"
        -device "virtio-blk-device,drive=disk$i,serial=kvmmio-disk$i")
done

qpid='' sleeper='' streamer='' lockwatch=''
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    set +e # best effort: every step runs even if an earlier one fails
    # QEMU leads its own process group (setsid): kill the whole group, then
    # reap it so not even a zombie stays behind.
    [[ -n $qpid ]] && { kill -KILL -- "-$qpid"; wait "$qpid"; } 2>/dev/null
    [[ -n $sleeper ]] && kill "$sleeper" 2>/dev/null
    [[ -n $streamer ]] && kill "$streamer" 2>/dev/null
    [[ -n $lockwatch ]] && kill "$lockwatch" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# markers NAME: the text after "NAME: " on each console line that has it.
markers() {
    [[ -f $log ]] || return 0
    sed -n "s/.*$1: \(.*\)/\1/p" "$log" | tr -d '\r'
}
# scenario_step [NAME]: the scenario's last step, not L1 /init's own ("L1
# init: ..."); with NAME, the last step of NAME in a list (tagged "NAME: ").
scenario_step() {
    markers KVMMIO-STEP | grep -v '^L1 init:' | { if [[ -n ${1:-} ]]; then grep -F "$1: " || true; else cat; fi; } |
        tail -n 1
}

unpack_results() {
    tar -xf "$disk" -C "$results" 2>/dev/null || true
}

start=$EPOCHREALTIME
if ((interactive)); then
    say "interactive L1 (Ctrl-A X quits QEMU)"
    "${qemu[@]}" || true
    unpack_results
    exit 0
fi

: >"$log"
say "scenario $scenario, gic $gic, cpu $cpu, L1 kernel $l1_release${l2_release:+, L2 kernel $l2_release}, timeout ${timeout}s, clock $clock, log $log"
setsid "${qemu[@]}" </dev/null >"$log" 2>&1 &
qpid=$!
if ((!quiet)); then
    tail -n +1 -f --pid="$qpid" "$log" | sed -u 's/\r$//' &
    streamer=$!
elif ((progress)); then
    tail -n +1 -f --pid="$qpid" "$log" | sed -un 's/\r$//; s/^KVMMIO-STEP: /  /p' &
    streamer=$!
fi
sleep "$timeout" &
sleeper=$!
# L1's kernel declaring one of its CPUs dead ("Watchdog detected hard
# LOCKUP"): seen once, a 16 KiB-page L1 whose CPU 0 never came back from its
# first L2 entry while the 2-core host ran two other L1s and compilers.
# Nothing recovers from it; without this the run waited out its whole limit
# (2700 s). Stopping here costs ~40 s.
# (grep's own status, not a pipeline's: under pipefail a pipeline would
# report tail's SIGPIPE.)
grep -a -m 1 -q 'Watchdog detected hard LOCKUP' < <(tail -n +1 -f --pid="$qpid" "$log") &
lockwatch=$!

# stop_qemu: kills QEMU's process group before its end (a time limit, a
# dead L1) and waits for the rest of the run's jobs.
stop_qemu() {
    if [[ -n $sleeper ]]; then kill "$sleeper" 2>/dev/null || true; wait "$sleeper" 2>/dev/null || true; fi
    sleeper=''
    kill -KILL -- "-$qpid" 2>/dev/null || true
    wait "$qpid" 2>/dev/null || true
    qpid=''
    [[ -n $streamer ]] && { wait "$streamer" || true; streamer=''; }
}

finished=''
while :; do
    wait -n -p finished "$qpid" "$sleeper" ${lockwatch:+"$lockwatch"} && st=0 || st=$?
    [[ $finished == "$lockwatch" ]] || break
    lockwatch=''
    if ((st == 0)); then
        stop_qemu
        say "L1's kernel reported a hard lockup during step: $(markers KVMMIO-STEP | tail -n 1)"
        grep -a -m 3 -E 'hard LOCKUP|rcu_sched detected stalls' "$log" | tr -d '\r' >&2 || true
        exit 127
    fi
    # The watcher ended with QEMU (no lockup): wait for QEMU itself.
done
# A watcher still running ends with QEMU's log (tail --pid), or cleanup()
# stops it.
if [[ $finished == "$sleeper" ]]; then
    sleeper=''
    stop_qemu
    say "TIMEOUT after $timeout s during step: $(markers KVMMIO-STEP | tail -n 1)"
    exit 124
fi
qpid=''
kill "$sleeper" 2>/dev/null || true
wait "$sleeper" 2>/dev/null || true
sleeper=''
[[ -n $streamer ]] && { wait "$streamer" || true; streamer=''; }
elapsed=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $start }")

# --- verdict ----------------------------------------------------------------------
unpack_results
while read -r line; do say "L1: $line"; done < <(markers KVMMIO-ERROR)
# A list: each scenario's own verdict first (the run's status follows).
failed_one=''
if ((multi)); then
    for s in "${scenarios[@]}"; do
        if [[ -s $results/$s/exit-status ]]; then
            st=$(<"$results/$s/exit-status")
            if [[ $st == 0 ]]; then say "  $s passed"; else
                say "  $s FAILED with status $st"
                failed_one=${failed_one:-$s}
            fi
        else
            say "  $s: no verdict"
        fi
    done
fi
if [[ -s $results/exit-status ]]; then
    status=$(<"$results/exit-status")
    [[ $status =~ ^[0-9]+$ ]] || { say "garbled exit-status '$status'"; exit 126; }
    if ((status == 0)); then
        say "scenario $scenario PASSED in ${elapsed}s (results in $results)"
        exit 0
    fi
    say "scenario $scenario FAILED with status $status in ${elapsed}s," \
        "last step: $(scenario_step "$failed_one") (results in $results)"
    while read -r line; do say "fail: $line"; done < <(markers KVMMIO-FAIL)
    ((status < 124)) || status=1
    exit "$status"
fi
if grep -q KVMMIO-SCENARIO-START "$log"; then
    say "scenario $scenario started but no verdict came back (L1 crashed?)," \
        "last step: $(scenario_step); see $log"
    exit 126
fi
say "L1 never reached the scenario (last step: $(markers KVMMIO-STEP | tail -n 1))"
grep -a -m 1 'Kernel panic' "$log" | tr -d '\r' >&2 || true
say "last lines of $log:"
tail -n 10 "$log" | tr -d '\r' >&2
exit 125
