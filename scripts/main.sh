#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The main job: what virtio-mmio with ioeventfd, irqfd and vhost-net buys an
# arm64 guest. Measures iperf3 throughput, TCP request/response latency and
# UDP packet rates (udp_pps, 64- and 1472-byte payloads) of a Linux guest
# under kvmmio in each mode against the host's own stack (two network
# namespaces over a veth pair), with the VMM's and the guest's counters per
# GB and per million packets, plus the KVM layer's notify and interrupt costs;
# the same under the peer VMM, QEMU (virtio-net-pci with MSI-X, and
# virtio-mmio; both with vhost-net), on the same guest, with the counters
# read from outside any VMM (KVM's exits, the VMM's context switches) for
# every VMM's cells alike;
# the same between two guests on one bridge, each under its own kvmmio;
# and fio in the guest on its virtio-blk disk against fio on the host on the
# same backing file (register mirror and trapped registers, io_uring and
# threads engines), and on a file in a folder shared through virtio-fs,
# counters per GB and per million requests; and kvmmio's
# start-up, exec to the guest's clock and init, against QEMU's and a bare
# KVM program's, with kvmmio's phases (bench/startup.sh);
# then writes the report (table, JSON, PNG chart, start-up table).
# docs/benchmarks.md explains it.
#
# On an arm64 host with /dev/kvm it runs there; on any other host it runs
# inside the arm64 test platform (real KVM/ARM nested in qemu-system-aarch64
# under TCG), where only ratios and counts carry over to hardware.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)

# The configs and their --net specs; the matrix's defaults: each one place.
# shellcheck source=bench/net-modes.sh
. "$src/bench/net-modes.sh"
# shellcheck source=bench/matrix.sh
. "$src/bench/matrix.sh"

usage() {
    cat <<EOF
Usage: scripts/main.sh [options]
  --repeats N      runs per measurement (default $MATRIX_REPEATS; median and spread)
  --seconds S      iperf3 seconds per run (default $MATRIX_SECONDS)
  --pps-seconds S  udp_pps seconds per packet-rate run (default $MATRIX_PPS_SECONDS)
  --pps-flows N    UDP flows per packet-rate run, 1-64 (default $MATRIX_PPS_FLOWS): for
                   the multiqueue configs (-mq), whose tap spreads flows
                   over its queues
  --guest-cpus N   vCPUs of every guest, kvmmio's and QEMU's (default $MATRIX_GUEST_CPUS)
  --pin            while a guest is up, its vCPUs run on the CPUs but the
                   highest, everything else (the VMM's other threads,
                   vhost's workers, the host's tools) on the highest
                   (within a taskset main.sh runs under); nested, on L1's
                   CPUs; the report's meta says so
  --configs LIST   comma-separated subset of host,vhost-irqfd,
                   vhost-irqfd-mirror,vhost-relay,user-ioeventfd,user-trap,
                   qemu-pci,qemu-mmio (the peer VMM: QEMU; qemu-pci needs
                   a GICv3) (default all, without qemu-pci on a GICv2
                   host), or these plus vhost-irqfd-mirror-poll (the
                   mirror with poll_us=50), vhost-irqfd-mirror-noevidx
                   (the mirror with event_idx=off), vhost-irqfd-mirror-mq
                   (the mirror with two queue pairs) and qemu-pci-mq
                   (qemu-pci with two); never in the default
  --g2g-configs LIST  guest modes measured guest to guest (two guests, each
                   under its own kvmmio, taps on one bridge; at the first
                   MTU), or none (default: kvmmio's guest modes of
                   --configs)
  --streams LIST   parallel iperf3 streams (default $MATRIX_STREAMS)
  --mtus LIST      MTUs (default $MATRIX_MTUS)
  --fio-configs LIST  the disk cells: a subset of $MATRIX_FIO_CONFIGS
                   (fs-mirror: the shared folder, virtio-fs on virtiofsd;
                   default all), or none
  --vsock-configs LIST  the vsock cells: a subset of $MATRIX_VSOCK_CONFIGS
                   (AF_VSOCK streams, the host to itself and host to guest
                   through vhost-vsock; default both), or none
  --fio-seconds S  fio seconds per run (default $MATRIX_FIO_SECONDS)
  --fio-depths LIST  fio iodepths (default $MATRIX_FIO_DEPTHS)
  --startup-repeats N  repeats of the start-up benchmark (kvmmio against
                   QEMU and a bare KVM program, bench/startup.sh; default $MATRIX_STARTUP_REPEATS)
  --guest-args ARGS  more guest kernel command-line words for every guest
                   of every VMM, space-separated, each of letters, digits
                   and _.=:/- (e.g. "virtio_net.napi_tx=0"); the report's
                   meta names them
  --order ORDER    rounds (default): with --repeats above 1, each round
                   boots every configuration in turn (the first a
                   different one each round) for one repeat of its cells,
                   so that a slow spell of the machine or one boot's luck
                   falls on every configuration alike; blocks: each
                   configuration boots once for all its repeats (fewer
                   boots); the report's meta names it
  --clock CLOCK    nested only: the network and disk cells' L1 clock,
                   wall (default) or icount: L1 counts its instructions as
                   its time (scripts/arm64/run.sh --clock), so the cells'
                   rates are per second of instruction time and the
                   host's load does not reach them (about 4x longer;
                   docs/benchmarks.md, "Instruction-counted time"); the
                   start-up and microbenchmark boot is always icount
  --out DIR        results directory (default results/YYYYmmdd-HHMMSS)
  --quick          the smallest matrix (bench/matrix.sh): every
                   configuration once, $MATRIX_QUICK_REPEATS repeat of $MATRIX_QUICK_SECONDS s, $MATRIX_QUICK_STREAMS stream, MTU $MATRIX_QUICK_MTUS,
                   packet-rate runs of $MATRIX_QUICK_PPS_SECONDS s, guest to guest only
                   vhost-irqfd-mirror (when in --configs), fio runs of $MATRIX_QUICK_FIO_SECONDS s
                   at iodepth $MATRIX_QUICK_FIO_DEPTHS on $MATRIX_QUICK_FIO_CONFIGS,
                   $MATRIX_QUICK_STARTUP_REPEATS start-up repeats (a check that it all works, not a
                   measurement; what CI runs)
  --build-only     install what it needs and build, then stop (what
                   scripts/board-rehearsal.sh carries into its board)
  --check-only     build and measure nothing: judge the results already in
                   --out DIR (a run's, with the same matrix options) as a
                   run would, and exit with its status
  -h, --help       this text
Installs what it needs (scripts/install-deps.sh --main), builds, measures, and
prints the report; everything lands in the results directory it names.
Exit status 0 when every requested cell has a run that succeeded (a run
that passed on its retry counts), every phase (the comparison, the
KVM-layer microbenchmark, start-up, the report) did its part, the
counters the report needs were readable and each mode's counters fit it
(the register mirror's cells: no exit to userspace and no context switch
of the VMM's threads during traffic, no vCPU exit during disk requests or
vsock transfers; trapped registers: exits); else 1, after the report, with
a line for each failure and a closing summary line; 2 on bad usage.
Environment: KVMMIO_BUILD, the build directory (default build/);
KVMMIO_PROGRAM, on an arm64 host, the kvmmio to measure instead of the
build's (e.g. /usr/bin/kvmmio, the package's).
EOF
}

repeats=$MATRIX_REPEATS seconds=$MATRIX_SECONDS pps_seconds=$MATRIX_PPS_SECONDS pps_flows=$MATRIX_PPS_FLOWS
guest_cpus=$MATRIX_GUEST_CPUS streams=$MATRIX_STREAMS mtus=$MATRIX_MTUS order=$MATRIX_ORDER
fio_configs=$MATRIX_FIO_CONFIGS fio_seconds=$MATRIX_FIO_SECONDS fio_depths=$MATRIX_FIO_DEPTHS
vsock_configs=$MATRIX_VSOCK_CONFIGS startup_repeats=$MATRIX_STARTUP_REPEATS
configs='' out='' build_only=0 g2g_configs='' quick=0 guest_args='' pin=0 check_only=0 clock=wall
while (($#)); do
    case $1 in
    --repeats) repeats=${2:?--repeats needs N}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs S}; shift 2 ;;
    --pps-seconds) pps_seconds=${2:?--pps-seconds needs S}; shift 2 ;;
    --pps-flows) pps_flows=${2:?--pps-flows needs N}; shift 2 ;;
    --guest-cpus) guest_cpus=${2:?--guest-cpus needs N}; shift 2 ;;
    --pin) pin=1; shift ;;
    --configs) configs=${2:?--configs needs a LIST}; shift 2 ;;
    --g2g-configs) g2g_configs=${2:?--g2g-configs needs a LIST}; shift 2 ;;
    --streams) streams=${2:?--streams needs a LIST}; shift 2 ;;
    --mtus) mtus=${2:?--mtus needs a LIST}; shift 2 ;;
    --fio-configs) fio_configs=${2:?--fio-configs needs a LIST}; shift 2 ;;
    --fio-seconds) fio_seconds=${2:?--fio-seconds needs S}; shift 2 ;;
    --fio-depths) fio_depths=${2:?--fio-depths needs a LIST}; shift 2 ;;
    --vsock-configs) vsock_configs=${2:?--vsock-configs needs a LIST}; shift 2 ;;
    --startup-repeats) startup_repeats=${2:?--startup-repeats needs N}; shift 2 ;;
    --guest-args) guest_args=${2?--guest-args needs ARGS}; shift 2 ;;
    --order) order=${2:?--order needs rounds or blocks}; shift 2 ;;
    --clock) clock=${2:?--clock needs wall or icount}; shift 2 ;;
    --out) out=${2:?--out needs a DIR}; shift 2 ;;
    --quick) repeats=$MATRIX_QUICK_REPEATS seconds=$MATRIX_QUICK_SECONDS pps_seconds=$MATRIX_QUICK_PPS_SECONDS
        streams=$MATRIX_QUICK_STREAMS mtus=$MATRIX_QUICK_MTUS startup_repeats=$MATRIX_QUICK_STARTUP_REPEATS quick=1
        fio_configs=$MATRIX_QUICK_FIO_CONFIGS fio_seconds=$MATRIX_QUICK_FIO_SECONDS fio_depths=$MATRIX_QUICK_FIO_DEPTHS; shift ;;
    --build-only) build_only=1; shift ;;
    --check-only) check_only=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "main.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
# Every config by default, the peer's too; an arm64 host with a GICv2 has
# no ITS for qemu-pci's MSI-X (the nested platform's L1 here has a GICv3).
if [ -z "$configs" ]; then
    configs=$NET_COMPARE_CONFIGS,$NET_COMPARE_PEER_CONFIGS
    if [ "$(uname -m)" = aarch64 ] && ! grep -qs 'arm,gic-v3' /proc/device-tree/*/compatible \
        /proc/device-tree/*/*/compatible; then
        configs=${configs/,qemu-pci/}
    fi
fi
for n in "$repeats" "$seconds" "$pps_seconds" "$pps_flows" "$guest_cpus" "$fio_seconds" "$startup_repeats"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "main.sh: not a positive whole number: '$n'" >&2; exit 2; }
done
# Guest to guest, unless given: every guest mode of --configs (--quick:
# the mirror alone, when it is there), or none.
if [ -z "$g2g_configs" ]; then
    g2g_configs=$(tr ',' '\n' <<<"$configs" | grep -v -e '^host$' -e '^qemu-' | paste -sd, -) || true
    ((!quick)) || { [[ ,$configs, == *,vhost-irqfd-mirror,* ]] && g2g_configs=vhost-irqfd-mirror || g2g_configs=''; }
    g2g_configs=${g2g_configs:-none}
fi
((pps_flows <= 64)) || { echo "main.sh: --pps-flows '$pps_flows': give 1-64" >&2; exit 2; }
[[ $order == @(rounds|blocks) ]] || { echo "main.sh: --order '$order': give rounds or blocks" >&2; exit 2; }
[[ $clock == @(wall|icount) ]] || { echo "main.sh: --clock '$clock': give wall or icount" >&2; exit 2; }
for l in "$configs" "$streams" "$mtus" "$fio_configs" "$fio_depths" "$g2g_configs" "$vsock_configs"; do
    [[ $l =~ ^[a-z0-9_,-]+$ ]] || { echo "main.sh: not a comma-separated list: '$l'" >&2; exit 2; }
done
# Nested, the words travel on L1's kernel command line joined by commas
# (run.sh --env): no word may hold a comma or a quote.
[[ -z $guest_args || $guest_args =~ ^[A-Za-z0-9_.=:/-]+( [A-Za-z0-9_.=:/-]+)*$ ]] || {
    echo "main.sh: --guest-args '$guest_args': give words of letters, digits and _.=:/- separated by single spaces (e.g. 'virtio_net.napi_tx=0')" >&2
    exit 2
}
if ((check_only)); then
    [[ -n $out && -d $out ]] || { echo "main.sh: --check-only needs --out DIR, a run's results directory" >&2; exit 2; }
    out=$(cd "$out" && pwd)
elif ((!build_only)); then
    out=${out:-$src/results/$(date +%Y%m%d-%H%M%S)}
    out=$(mkdir -p "$out" && cd "$out" && pwd)
fi
build=${KVMMIO_BUILD:-$src/build}
arch=$(uname -m)
[[ $clock == wall || $arch != aarch64 ]] ||
    { echo "main.sh: --clock icount is the nested platform's: on this arm64 host the cells run on its own clock; leave --clock out" >&2; exit 2; }
# KVMMIO_PROGRAM=PATH (an arm64 host's): the kvmmio the cells run, e.g. the
# package's /usr/bin/kvmmio, instead of the build's; the harness's own
# programs (tcp_rr, udp_pps, net_report) still come from the build.
vmm_dir=$build/vmm
if [[ -n ${KVMMIO_PROGRAM:-} ]]; then
    [[ $arch == aarch64 ]] ||
        { echo "main.sh: KVMMIO_PROGRAM is for an arm64 host: nested, the cells run the platform's own cross build in L1; unset it" >&2; exit 2; }
    [[ $KVMMIO_PROGRAM == /* && -f $KVMMIO_PROGRAM && -x $KVMMIO_PROGRAM ]] ||
        { echo "main.sh: KVMMIO_PROGRAM=$KVMMIO_PROGRAM: not an executable file by its absolute path (e.g. /usr/bin/kvmmio: apt-get install kvmmio)" >&2; exit 2; }
    vmm_dir=$build/program
    mkdir -p "$vmm_dir"
    ln -sfn "$KVMMIO_PROGRAM" "$vmm_dir/kvmmio"
    echo "main.sh: kvmmio: $KVMMIO_PROGRAM (KVMMIO_PROGRAM: $("$KVMMIO_PROGRAM" --version 2>&1 | head -n 1))"
fi
started=$SECONDS
step() { echo "== $*"; }

# What failed, one line each: said as it happens, listed again at the end,
# where any of them makes the exit status 1 (after the report, which shows
# the failed runs).
failures=()
failure() {
    failures+=("$*")
    echo "main.sh: FAILED: $*"
}
# The raw files and where each phase left its results: the nested
# platform's (any host but arm64) or this arm64 host's own.
if [ "$arch" != aarch64 ]; then
    net_dir=$out/arm64-gicv3/net-compare micro_dir=$out/arm64-gicv2/bench-kvm startup_dir=$out/arm64-gicv2/startup
else
    net_dir=$out/arm64 micro_dir='' startup_dir=$out/arm64/startup
fi
# judge: the results' own evidence, after the run (or alone, --check-only):
# each requested cell has a run that succeeded, the counters the report
# needs are readable and each mode's counters fit it, the claim included:
# with the register mirror not one exit to userspace and not one context
# switch of the VMM's own threads while traffic moves, read from outside
# it (bench/net-compare.sh --check modes, on the matrix given here); the
# microbenchmark and the start-up table are there, and the report was made.
judge() {
    local micro=() line
    [ "$arch" = aarch64 ] || micro=(--micro)  # the scenario runs it (KVMMIO_BENCH_MICRO)
    # The check is this build's bench/net_check (with --check-only judge
    # runs without building: a missing one is a failure line that says so).
    while IFS= read -r line; do
        [ -z "$line" ] || failure "net-compare: $line"
    done < <(PATH=$build/bench:$PATH sh "$src/bench/net-compare.sh" --check modes --out "$net_dir" --configs "$configs" \
        --g2g-configs "$g2g_configs" --streams "$streams" --mtus "$mtus" --fio-configs "$fio_configs" \
        --fio-depths "$fio_depths" --vsock-configs "$vsock_configs" "${micro[@]}" 2>/dev/null || true)
    if [ -d "$out/host" ] && [ ! -s "$out/host/kvm-bench.json" ]; then
        failure "micro: kvm_notify_bench on this machine wrote no result ($out/host/kvm-bench.txt)"
    fi
    if [ -n "$micro_dir" ] && [ ! -s "$micro_dir/kvm-bench.json" ]; then
        failure "micro: the GICv2 L1's kvm_notify_bench wrote no result in $micro_dir (see $out/arm64-gicv2/console.log)"
    fi
    [ -s "$startup_dir/startup.txt" ] ||
        failure "start-up: no start-up table ($startup_dir/startup.txt; see bench/startup.sh's output above)"
    local f
    for f in report.txt report.json throughput.png; do
        [ -s "$out/report/$f" ] || failure "report: no $out/report/$f"
    done
}
# verdict: every failure again, one line each, then the summary line; the
# exit status.
verdict() {
    local f
    if ((${#failures[@]} == 0)); then
        echo "main.sh: passed: every requested cell has a run that succeeded, every phase did its part," \
            "the counters the report needs were readable and each mode's counters fit it (results in $out)"
        exit 0
    fi
    for f in "${failures[@]}"; do echo "main.sh: FAILED: $f"; done
    echo "main.sh: FAILED: ${#failures[@]} failures, listed above; the report ($out/report/report.txt) shows the failed runs"
    exit 1
}
if ((check_only)); then
    judge
    verdict
fi

step "dependencies and the native build ($build)"
"$src/scripts/install-deps.sh" --main  # not the test suite's fuzzing and coverage tools
# configure once; later changes to configure.ac or a Makefile.am are picked
# up by make's own rebuild rules. (Rerunning autoreconf every time made make
# rerun configure, minutes on a slow board, even with the build up to date.)
[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)
mkdir -p "$build"
cd "$build"
# -O2 without debug information; static programs on arm64 (the guest's
# initramfs takes bench/tcp_rr from this build): scripts/main-build-flags.sh.
mapfile -t flags < <("$src/scripts/main-build-flags.sh" "$arch")
[ -f Makefile ] || "$src/configure" -q "${flags[@]}"
make -s -j"$(nproc)"
make -s -j"$(nproc)" bench
if ((build_only)); then
    step "built in $build after $((SECONDS - started)) s"
    exit 0
fi

# The KVM-layer microbenchmark on this machine: notify by ioeventfd vs MMIO
# exit, interrupt by irqfd vs a relay thread.
raws=()
if [ -c /dev/kvm ]; then
    step "KVM-layer costs on this machine ($arch)"
    mkdir -p "$out/host"
    if ./bench/kvm_notify_bench --json "$out/host/kvm-bench.json" >"$out/host/kvm-bench.txt" 2>&1; then
        cat "$out/host/kvm-bench.txt"
        echo "{\"kind\":\"micro\",\"platform\":\"host-$arch\",\"file\":\"kvm-bench.json\"}" >"$out/host/raw.jsonl"
        raws+=(--raw "$out/host/raw.jsonl")
    else
        failure "micro: kvm_notify_bench on this machine exited with status $? ($(tail -n 1 "$out/host/kvm-bench.txt"))"
        rm -f "$out/host/kvm-bench.json"
    fi
else
    step "no /dev/kvm here: skipping the host's KVM-layer microbenchmark"
fi

if [ "$arch" != aarch64 ]; then
    # One L1 boot runs the whole comparison; its time grows with the matrix
    # (udp_pps: two payload sizes, two directions per config and repeat).
    n_configs=$(tr ',' '\n' <<<"$configs" | wc -l)
    runs=$((n_configs * 2 * $(tr ',' '\n' <<<"$streams" | wc -l) * $(tr ',' '\n' <<<"$mtus" | wc -l) * repeats))
    pps_runs=$((n_configs * 2 * 2 * repeats))
    g2g_runs=0
    [ "$g2g_configs" = none ] ||
        g2g_runs=$(($(tr ',' '\n' <<<"$g2g_configs" | wc -l) * (2 * $(tr ',' '\n' <<<"$streams" | wc -l) + 5) * repeats))
    runs=$((runs + g2g_runs))
    fio_runs=0
    [ "$fio_configs" = none ] ||
        fio_runs=$(($(tr ',' '\n' <<<"$fio_configs" | wc -l) * 4 * $(tr ',' '\n' <<<"$fio_depths" | wc -l) * repeats))
    timeout=$((900 + runs * (seconds + 20) + pps_runs * (pps_seconds + 20) + fio_runs * (fio_seconds + 20)))
    # Instruction-counted time: one TCG thread for L1's CPUs, and every
    # second of L1's time is a billion of its instructions: a run took
    # about 4x its wall-clock time.
    [[ $clock == wall ]] || timeout=$((timeout * 6))
    step "guest versus host on real KVM/ARM, nested under qemu-system-aarch64 (TCG):" \
        "$runs iperf3 runs of $seconds s, $pps_runs udp_pps runs of $pps_seconds s," \
        "$fio_runs fio runs of $fio_seconds s, at most $((timeout / 60)) min"
    "$src/scripts/arm64/prepare.sh" "$build/arm64-platform"
    "$src/scripts/arm64/run.sh" --scenario net-compare --gic 3 --clock "$clock" --quiet --progress \
        --initramfs "$build/arm64-platform/l1-initramfs.cpio.gz" --results "$out/arm64-gicv3" \
        --timeout "$timeout" --env KVMMIO_BENCH_REPEATS="$repeats" \
        --env KVMMIO_BENCH_SECONDS="$seconds" --env KVMMIO_BENCH_PPS_SECONDS="$pps_seconds" \
        --env KVMMIO_BENCH_CONFIGS="$configs" --env KVMMIO_BENCH_G2G_CONFIGS="$g2g_configs" \
        --env KVMMIO_BENCH_STREAMS="$streams" --env KVMMIO_BENCH_MTUS="$mtus" \
        --env KVMMIO_BENCH_FIO_CONFIGS="$fio_configs" --env KVMMIO_BENCH_FIO_SECONDS="$fio_seconds" \
        --env KVMMIO_BENCH_FIO_DEPTHS="$fio_depths" --env KVMMIO_BENCH_GUEST_ARGS="${guest_args// /,}" \
        --env KVMMIO_BENCH_VSOCK_CONFIGS="$vsock_configs" \
        --env KVMMIO_BENCH_ORDER="$order" --env KVMMIO_BENCH_PPS_FLOWS="$pps_flows" \
        --env KVMMIO_BENCH_CPUS="$guest_cpus" --env KVMMIO_BENCH_PIN="$pin" ||
        failure "net-compare: the comparison's L1 boot exited with status $? (failed runs, or see $out/arm64-gicv3/console.log)"
    step "KVM-layer costs and kvmmio's start-up on real KVM/ARM with a GICv2 (one more L1 boot, instruction-counted time)"
    # Each scenario of the list writes to a directory of its own. In L1's
    # instruction-counted time (run.sh --clock icount): the start-up spans'
    # repeats then agree within a few percent instead of a third
    # (docs/benchmarks.md, "In instruction time"), and the microbenchmark's
    # costs are instructions, as its record's platform says.
    "$src/scripts/arm64/run.sh" --scenario bench-kvm,startup --gic 2 --clock icount --quiet \
        --initramfs "$build/arm64-platform/l1-initramfs.cpio.gz" --results "$out/arm64-gicv2" \
        --env KVMMIO_STARTUP_REPEATS="$startup_repeats" ||
        failure "micro, start-up: the GICv2 L1 boot exited with status $? (see $out/arm64-gicv2/console.log)"
    if [ -s "$out/arm64-gicv2/bench-kvm/kvm-bench.json" ]; then
        cat "$out/arm64-gicv2/bench-kvm/kvm-bench.txt"
        echo '{"kind":"micro","platform":"arm64-gicv2-icount","file":"kvm-bench.json"}' >"$out/arm64-gicv2/bench-kvm/raw.jsonl"
        raws+=(--raw "$out/arm64-gicv2/bench-kvm/raw.jsonl")
    fi
    title="kvmmio on nested KVM/ARM (TCG; only ratios and counts carry over to hardware)"
    [[ $clock == wall ]] || title+="; rates per second of L1's instruction-counted time"
else
    # An arm64 board: the same driver, directly. The guest is Debian's arm64
    # kernel with the L2 initramfs the test platform builds.
    step "guest versus host on this arm64 host's KVM"
    # /dev/vhost-net and /dev/net/tun exist before their modules load only
    # where systemd made the static nodes; load them so any init will do.
    # loop and squashfs: net-compare.sh mounts the tools disk (an image file);
    # vhost_vsock and vsock_loopback: the vsock cells (guest and host).
    for m in vhost_net tun loop squashfs vhost_vsock vsock_loopback; do modprobe -q "$m" 2>/dev/null || true; done
    # QEMU (the peer, on the tools disk) only when a qemu-* config wants it.
    no_qemu=--no-qemu
    [[ ,$configs, != *,qemu-* ]] || no_qemu=''
    "$src/scripts/arm64/fetch-packages.sh" $no_qemu
    "$src/scripts/arm64/build-initramfs.sh" --l2-only --tools-out "$build/arm64-platform/tools.img" \
        --l2-out "$build/arm64-platform/l2-initramfs.cpio.gz" --l2-bin "$build/bench/tcp_rr" \
        --l2-bin "$build/bench/udp_pps" --l2-bin "$build/bench/vsock_stream" \
        --l2-hook "$src/tests/arm64/l2-hooks/50-kvmmio-l2test.sh" \
        --l2-hook "$src/tests/arm64/l2-hooks/60-kvmmio-serve.sh"
    # shellcheck source=scripts/arm64/common.sh
    kernel=$(source "$src/scripts/arm64/common.sh" && echo "$ROOT/boot/vmlinuz-$(kernel_version)")
    # The tools disk: fio, and the peer's qemu-system-aarch64.
    fio=(--tools "$build/arm64-platform/tools.img" --fio-configs "$fio_configs"
        --fio-seconds "$fio_seconds" --fio-depths "$fio_depths")
    pin_opt=(); ((!pin)) || pin_opt=(--pin)
    PATH=$vmm_dir:$build/bench:$PATH "$src/bench/net-compare.sh" --out "$out/arm64" "${fio[@]}" \
        --kernel "$kernel" --initrd "$build/arm64-platform/l2-initramfs.cpio.gz" \
        --configs "$configs" --g2g-configs "$g2g_configs" --repeats "$repeats" --seconds "$seconds" --pps-seconds "$pps_seconds" \
        --streams "$streams" --mtus "$mtus" --guest-args "$guest_args" --order "$order" \
        --pps-flows "$pps_flows" --cpus "$guest_cpus" --vsock-configs "$vsock_configs" "${pin_opt[@]}" ||
        failure "net-compare: bench/net-compare.sh exited with status $? (failed runs are in $out/arm64/raw.jsonl)"
    step "kvmmio's start-up against QEMU's and its floor (bench/startup.sh)"
    # QEMU where the board has one (Debian's qemu-system-arm).
    qemu_opt=()
    ! command -v qemu-system-aarch64 >/dev/null || qemu_opt=(--qemu qemu-system-aarch64)
    PATH=$vmm_dir:$build/bench:$PATH "$src/bench/startup.sh" --kernel "$kernel" \
        --initrd "$build/arm64-platform/l2-initramfs.cpio.gz" --out "$startup_dir" \
        --repeats "$startup_repeats" --tap kvmstart0 "${qemu_opt[@]}" ||
        failure "start-up: bench/startup.sh exited with status $?"
    title="kvmmio on $(tr -d '\0' </proc/device-tree/model 2>/dev/null || echo "this arm64 host")"
fi

step "report"
# The chart's title says which tree and when: the commit (with "+changes"
# when the work tree differs from it) and the UTC date.
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "no git")
git -C "$src" diff --quiet HEAD 2>/dev/null || commit+="+changes"
title+=", commit $commit, $(date -u +%Y-%m-%d)"
# Every attempt of a retried run is in raw.jsonl: net_report judges each
# run by its last attempt and shows the earlier ones as retries.
[ ! -s "$net_dir/raw.jsonl" ] || raws+=(--raw "$net_dir/raw.jsonl")
./bench/net_report "${raws[@]}" --out "$out/report" --title "$title" ||
    failure "report: bench/net_report exited with status $?"
[ ! -s "$out/report/throughput.gp" ] || gnuplot "$out/report/throughput.gp" ||
    failure "report: gnuplot $out/report/throughput.gp exited with status $?"
# kvmmio's start-up beside QEMU's and the floor's (docs/benchmarks.md, "Start-up").
if [ -s "$startup_dir/startup.txt" ]; then
    mkdir -p "$out/report"
    cp "$startup_dir/startup.txt" "$startup_dir/startup.json" "$out/report/"
    cat "$out/report/startup.txt"
fi
step "results in $out (report: $out/report/report.txt, report.json, throughput.png, startup.txt)" \
    "after $(((SECONDS - started) / 60)) min"
judge
verdict
