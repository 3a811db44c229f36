#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# net-compare.sh: the main job's measurements. Runs on an arm64 KVM host as
# root: L1 of the arm64 test platform (scenario net-compare), or a real
# arm64 board. POSIX sh; busybox is enough, plus iproute2's ip and iperf3.
#
# What it measures, one raw record per run into OUT/raw.jsonl (JSON lines,
# the format net_report reads; docs/benchmarks.md):
#   host            iperf3 between two network namespaces joined by a veth
#                   pair: this machine's own stack, no VM
#   vhost-irqfd     an L2 guest under kvmmio, vhost-net, vhost's interrupts
#                   straight into the vGIC
#   vhost-relay     vhost-net, every interrupt relayed by a VMM thread
#   user-ioeventfd  kvmmio's userspace backend, kicks through ioeventfds
#   user-trap       the userspace backend, kicks trapped as MMIO exits
#   qemu-pci        the peer VMM: QEMU (qemu-system-aarch64 -M virt -accel
#                   kvm) on the same guest and tap, vhost-net, virtio-net-pci
#                   with MSI-X through the GICv3 ITS (on request: --configs)
#   qemu-mmio       QEMU, vhost-net, virtio-net-device on virtio-mmio
# For each: guest-to-host (g2h) and host-to-guest (h2g), each stream count,
# each MTU, N repeats; then at the first MTU a TCP request/response latency
# run (tcp_rr) per repeat, and UDP packet-rate runs (udp_pps: each payload
# size, each direction, per repeat). Around each guest run the VMM's counters
# (kill -USR1 -> --stats snapshot) and the guest's virtio interrupt count
# (an HTTP CGI in L2) are read, so each record carries its own deltas.
# Every guest run also carries the counters read from outside any VMM
# ("outside": KVM's debugfs exits, MMIO exits to userspace, halt wake-ups,
# the VMM's non-vCPU threads' context switches and CPU time;
# bench/outside-counters.sh)
# and the guest's interrupts: the only counters QEMU's cells have, and the
# same rule for kvmmio's beside its own.
# The guest side is tests/arm64/l2-hooks/60-kvmmio-serve.sh.
#
# With --g2g-configs LIST (guest modes), guest-to-guest cells: for each mode
# two guests, each under its own kvmmio with that mode, their taps on one
# bridge (--net ...,bridge=); at the first MTU, iperf3 both ways (a2b: A's
# client sends to B, b2a the reverse) at each stream count, tcp_rr (A asks,
# B answers) and udp_pps both ways at each payload, the clients run in the
# guests (the serve hook's client CGI). Recorded as config g2g-MODE, with
# the counters of both VMMs and both guests added together.
#
# With --tools IMAGE (the tools disk, build-initramfs.sh --tools-out: fio),
# then the disk cells, one fio run each (kind fio), on a backing file here:
#   host            fio on the backing file itself (buffered: tmpfs has no
#                   O_DIRECT)
#   blk-ENGINE-REGS a guest whose virtio-blk disk is the backing file
#                   (--disk FILE,cache=writeback,engine=ENGINE,regs=REGS);
#                   fio in the guest on that disk, O_DIRECT (every request
#                   reaches the device); ENGINE io_uring or threads, REGS
#                   mirror or trap; the guest's network (its control
#                   channel) is vhost-irqfd-mirror's, which costs no exits
#   fs-mirror       a guest sharing a directory here through virtio-fs
#                   (--fs, virtiofsd the backend: from PATH, Debian's
#                   /usr/libexec or /usr/lib/qemu, or the tools disk), a
#                   file of the backing file's size in it; fio in the guest
#                   on that file, O_DIRECT (every request a FUSE request to
#                   virtiofsd), the registers from the mirror
# Each: sequential 1 MiB reads and writes, random 4 KiB reads and writes,
# at each --fio-depths iodepth (libaio), for --fio-seconds, N repeats,
# with the same counter deltas as the network runs.
#
# Then the vsock cells (kind vsock), vsock_stream for --seconds in each
# --dirs direction, N repeats:
#   host            L1 to itself over AF_VSOCK (CID 1, vsock_loopback)
#   vsock-mirror    a guest with --vsock cid=3 (vhost-vsock its backend,
#                   the registers from the mirror) and the host, g2h the
#                   guest sending, h2g the host; the same counter deltas
# SC2015: A && B || C
# is meant as "unless both". SC2016: jq programs are single-quoted, their
# $names are jq's.
# shellcheck disable=SC2015,SC2016
set -eu
# The modes: NET_COMPARE_CONFIGS, net_mode_spec (beside this script, in the
# repository and in the platform's L1 alike).
# shellcheck source=bench/net-modes.sh
. "$(dirname "$0")/net-modes.sh"
# The matrix's defaults, each declared once (beside this script too).
# shellcheck source=bench/matrix.sh
. "$(dirname "$0")/matrix.sh"

usage() {
    cat <<EOF
Usage: net-compare.sh --out DIR --kernel IMAGE --initrd FILE [options]
  --out DIR         results: raw.jsonl, and per guest boot its console, stderr
                    and stats (created; must be empty or absent)
  --kernel IMAGE    the arm64 guest kernel (L2)
  --initrd FILE     the guest initramfs with the serve hook (L2)
  --configs LIST    comma-separated, default $NET_COMPARE_CONFIGS;
                    also $NET_COMPARE_EXTRA_CONFIGS;
                    the peer VMM: $NET_COMPARE_PEER_CONFIGS, also
                    $NET_COMPARE_EXTRA_PEER_CONFIGS
  --qemu PROGRAM    the peer's qemu-system-aarch64 (default: the tools
                    disk's /qemu-system-aarch64 with --tools, else PATH's)
  --repeats N       runs per cell (default $MATRIX_REPEATS)
  --order ORDER     rounds (default): each round boots every config in
                    turn, the first a different one each round, and runs
                    one repeat of each of its cells, so that drift on the
                    machine and one boot's luck (what a boot fixes; not
                    the threads' placement: see --pin) fall on every
                    config alike;
                    blocks: each config boots once and runs all its
                    repeats (fewer boots: one per config instead of one
                    per config and repeat); recorded in raw.jsonl's meta
  --plan            print the boots in the order they would run (config
                    and repeats) after checking the options, and exit
  --check LEVEL     measure nothing: check OUT/raw.jsonl, written by a run
                    with the same matrix options, and exit 1 when it falls
                    short, one line per shortfall on stdout (what each
                    config read on stderr). cells: every cell of the matrix
                    has a run that succeeded, the micro record is there
                    with --micro, and the outside counters the report
                    needs are readable (not null) in every guest run;
                    modes: that, and each mode's counters fit it (what
                    make check's net-compare scenario wants); the check
                    is bench/net_check's, which must be on PATH
  --seconds S       iperf3 duration per run (default $MATRIX_SECONDS)
  --rr-seconds S    tcp_rr duration per run (default $MATRIX_RR_SECONDS)
  --pps-seconds S   udp_pps duration per run (default $MATRIX_PPS_SECONDS)
  --pps-flows N     UDP flows per packet-rate run, 1-64 (default $MATRIX_PPS_FLOWS): the
                    sender spreads its datagrams over N source ports, so
                    a multiqueue tap or device can spread them over its
                    queues (the -mq configs with --cpus 2); guest to
                    guest stays one flow; recorded in raw.jsonl's meta
  --pps-payloads LIST  UDP payload bytes, comma-separated (default $MATRIX_PPS_PAYLOADS;
                    each 16 to the first MTU - 28, one datagram a packet)
  --streams LIST    parallel streams, comma-separated (default $MATRIX_STREAMS)
  --mtus LIST       MTUs, comma-separated (default $MATRIX_MTUS)
  --dirs LIST       g2h,h2g (default both)
  --cpus N          guest vCPUs (default $MATRIX_GUEST_CPUS)
  --pin             while a guest is up, its vCPU threads run on the
                    CPUs this script may use but the highest, and
                    everything else (the VMM's other threads, vhost's
                    workers, this script and the tools it starts) on the
                    highest: a guest core of its own, as on a tuned
                    board; needs 2 or more CPUs and taskset; recorded in
                    raw.jsonl's meta
  --mem SIZE        guest RAM (default $MATRIX_GUEST_MEM)
  --guest-args ARGS more guest kernel command-line words, for every guest
                    of every VMM (e.g. "virtio_net.napi_tx=0": the guest's
                    transmit completions without interrupts); recorded in
                    raw.jsonl's meta as guest_args
  --tap NAME        the guest's tap (default kvmbench0)
  --micro           also run kvm_notify_bench first (the KVM-layer costs)
  --g2g-configs LIST  guest modes measured guest to guest (two guests on a
                    bridge), comma-separated, or none (default none)
  --tools IMAGE     the tools disk (a file or block device: squashfs with
                    /fio); with it, the fio cells after the network's
  --fio-configs LIST  host, blk-ENGINE-REGS (ENGINE io_uring or threads,
                    REGS mirror or trap) and fs-mirror (a shared folder),
                    default $MATRIX_FIO_CONFIGS;
                    none: no fio cells (the tools disk for QEMU only)
  --fio-seconds S   fio run time per run (default $MATRIX_FIO_SECONDS)
  --fio-depths LIST iodepths, comma-separated, 1-256 (default $MATRIX_FIO_DEPTHS)
  --fio-file FILE   the backing file (default /tmp/kvmmio-fio.img; must not
                    exist: created, filled with zeros, removed at the end)
  --fio-mib N       its size in MiB (default 128)
  --vsock-configs LIST  host and vsock-mirror (AF_VSOCK streams, host to
                    itself and host to guest), default $MATRIX_VSOCK_CONFIGS; none:
                    no vsock cells
Progress goes to stdout, prefixed with \$NET_COMPARE_PREFIX (default
"net-compare: "). Exit status 0 when every run completed, 1 when some
failed (they are in raw.jsonl with "failed":REASON), 2 on bad usage or set-up.
A run that failed and was tried again (on a fresh guest) has a record per
attempt, each with "attempt" (1, 2) and "outcome" ("failed" or "ok"); it
counts as failed only when its last attempt failed.
EOF
}

die() { echo "net-compare.sh: $*" >&2; exit 2; }
say() { echo "${NET_COMPARE_PREFIX-net-compare: }$*"; }
NL='
'

out='' kernel='' initrd='' configs=$NET_COMPARE_CONFIGS
repeats=$MATRIX_REPEATS seconds=$MATRIX_SECONDS rr_seconds=$MATRIX_RR_SECONDS pps_seconds=$MATRIX_PPS_SECONDS
pps_flows=$MATRIX_PPS_FLOWS pps_payloads=$MATRIX_PPS_PAYLOADS streams=$MATRIX_STREAMS mtus=$MATRIX_MTUS
dirs=$MATRIX_DIRS cpus=$MATRIX_GUEST_CPUS mem=$MATRIX_GUEST_MEM order=$MATRIX_ORDER
tap=kvmbench0 micro=0 pin=0 g2g_configs=none qemu='' guest_args='' show_plan=0 check=''
# The fio jobs of each disk cell, RW:BS each: measure_fio runs them, --check
# expects them (net_check --fio-jobs).
FIO_JOBS='read:1048576 write:1048576 randread:4096 randwrite:4096'
vsock_configs=$MATRIX_VSOCK_CONFIGS
tools='' fio_configs=$MATRIX_FIO_CONFIGS fio_seconds=$MATRIX_FIO_SECONDS fio_depths=$MATRIX_FIO_DEPTHS fio_file=/tmp/kvmmio-fio.img fio_mib=128
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:?--out needs DIR}; shift 2 ;;
    --kernel) kernel=${2:?--kernel needs IMAGE}; shift 2 ;;
    --initrd) initrd=${2:?--initrd needs FILE}; shift 2 ;;
    --configs) configs=${2:?}; shift 2 ;;
    --repeats) repeats=${2:?}; shift 2 ;;
    --order) order=${2:?--order needs rounds or blocks}; shift 2 ;;
    --plan) show_plan=1; shift ;;
    --check) check=${2:?--check needs cells or modes}; shift 2 ;;
    --seconds) seconds=${2:?}; shift 2 ;;
    --rr-seconds) rr_seconds=${2:?}; shift 2 ;;
    --pps-seconds) pps_seconds=${2:?}; shift 2 ;;
    --pps-flows) pps_flows=${2:?--pps-flows needs N}; shift 2 ;;
    --pps-payloads) pps_payloads=${2:?}; shift 2 ;;
    --streams) streams=${2:?}; shift 2 ;;
    --mtus) mtus=${2:?}; shift 2 ;;
    --dirs) dirs=${2:?}; shift 2 ;;
    --cpus) cpus=${2:?}; shift 2 ;;
    --pin) pin=1; shift ;;
    --mem) mem=${2:?}; shift 2 ;;
    --guest-args) guest_args=${2?--guest-args needs ARGS}; shift 2 ;;
    --tap) tap=${2:?}; shift 2 ;;
    --qemu) qemu=${2:?--qemu needs PROGRAM}; shift 2 ;;
    --micro) micro=1; shift ;;
    --g2g-configs) g2g_configs=${2:?}; shift 2 ;;
    --tools) tools=${2:?}; shift 2 ;;
    --fio-configs) fio_configs=${2:?}; shift 2 ;;
    --fio-seconds) fio_seconds=${2:?}; shift 2 ;;
    --fio-depths) fio_depths=${2:?}; shift 2 ;;
    --fio-file) fio_file=${2:?}; shift 2 ;;
    --fio-mib) fio_mib=${2:?}; shift 2 ;;
    --vsock-configs) vsock_configs=${2:?}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done

# --- checks: each names its fix ----------------------------------------------
[ -n "$out" ] || [ "$show_plan" = 1 ] || die "--out DIR is required (see --help)"
is_count() { case $1 in '' | *[!0-9]* | 0*) return 1 ;; esac; }
for n in "$repeats" "$seconds" "$rr_seconds" "$pps_seconds" "$cpus" "$fio_seconds" "$fio_mib"; do
    is_count "$n" || die "not a positive whole number: '$n'"
done
is_count "$pps_flows" && [ "$pps_flows" -le 64 ] || die "--pps-flows: '$pps_flows' is not 1-64"
list() { echo "$1" | tr ',' ' '; }
all_configs=$NET_COMPARE_CONFIGS,$NET_COMPARE_EXTRA_CONFIGS,$NET_COMPARE_PEER_CONFIGS,$NET_COMPARE_EXTRA_PEER_CONFIGS
for c in $(list "$configs"); do
    case ,$all_configs, in *,"$c",*) ;;
    *) die "--configs: unknown '$c' ($(echo "$all_configs" | sed 's/,/, /g'))" ;;
    esac
done
is_peer() { case $1 in qemu-*) ;; *) return 1 ;; esac; }
# The peer's MSI-X needs an ITS, which only a GICv3 has.
case ,$configs,:${KVMMIO_L1_GIC:-} in *,qemu-pci,*:2 | *,qemu-pci-mq,*:2)
    die "--configs: qemu-pci and qemu-pci-mq need a GICv3 (MSI-X through its ITS); this host's is a GICv2: use qemu-mmio" ;;
esac
[ "$g2g_configs" != none ] || g2g_configs=''
for c in $(list "$g2g_configs"); do
    case $c in host | g2g-*) die "--g2g-configs: '$c' is not a guest mode (give the mode: vhost-irqfd-mirror, not g2g-vhost-irqfd-mirror)" ;; esac
    ! is_peer "$c" || die "--g2g-configs: '$c': the peer VMM is measured guest to host only"
    net_mode_spec "$c" >/dev/null || die "--g2g-configs: unknown mode '$c' ($(echo "$NET_COMPARE_CONFIGS,$NET_COMPARE_EXTRA_CONFIGS" | sed 's/^host,//; s/,/, /g'))"
done
# One line of words the kernel parses: kvmmio's --cmdline and QEMU's -append
# take it as one argument; quotes would reach the kernel's parser unpaired.
case $guest_args in *[\"\'\\]* | *"$NL"*) die "--guest-args: '$guest_args' has a quote, a backslash or a newline (give plain words: virtio_net.napi_tx=0)" ;; esac
for d in $(list "$dirs"); do case $d in g2h | h2g) ;; *) die "--dirs: '$d' is not g2h or h2g" ;; esac; done
case $order in rounds | blocks) ;; *) die "--order: '$order' is not rounds or blocks" ;; esac
case $check in '' | cells | modes) ;; *) die "--check: '$check' is not cells or modes" ;; esac
[ "$fio_configs" != none ] || fio_configs=''
for c in $(list "$fio_configs"); do
    case $c in host | blk-io_uring-mirror | blk-io_uring-trap | blk-threads-mirror | blk-threads-trap | fs-mirror) ;;
    *) die "--fio-configs: unknown '$c' ($(echo "$MATRIX_FIO_CONFIGS" | sed 's/,/, /g'))" ;;
    esac
done
for q in $(list "$fio_depths"); do
    is_count "$q" && [ "$q" -le 256 ] || die "--fio-depths: '$q' is not 1-256"
done
[ "$vsock_configs" != none ] || vsock_configs=''
for c in $(list "$vsock_configs"); do
    case $c in host | vsock-mirror) ;; *) die "--vsock-configs: unknown '$c' ($(echo "$MATRIX_VSOCK_CONFIGS" | sed 's/,/, /g'))" ;; esac
done
[ "$fio_seconds" -le 60 ] || die "--fio-seconds: '$fio_seconds' is more than 60"
[ "$fio_mib" -ge 16 ] && [ "$fio_mib" -le 65536 ] || die "--fio-mib: '$fio_mib' is not 16-65536"
case $fio_file in /*) ;; *) die "--fio-file: '$fio_file' is not an absolute path" ;; esac
case $fio_file in *,* | *[[:space:]]*) die "--fio-file: '$fio_file' has a comma or white space (kvmmio's --disk)" ;; esac
if [ -n "$tools" ]; then
    [ -b "$tools" ] || [ -f "$tools" ] || die "--tools: '$tools' is neither a file nor a block device"
    # Made here and removed at the end: never someone else's file.
    [ -z "$fio_configs" ] || [ ! -e "$fio_file" ] || die "--fio-file: $fio_file exists (a run that was killed? remove it, or choose another)"
    case $tools in *,* | *[[:space:]]*) die "--tools: '$tools' has a comma or white space (kvmmio's --disk)" ;; esac
fi
for m in $(list "$mtus"); do
    is_count "$m" && [ "$m" -ge 576 ] && [ "$m" -le 65535 ] || die "--mtus: '$m' is not an MTU"
done
for s in $(list "$streams"); do
    is_count "$s" && [ "$s" -le 128 ] || die "--streams: '$s' is not 1-128"
done
first_mtu=$(list "$mtus" | cut -d' ' -f1)
for p in $(list "$pps_payloads"); do
    is_count "$p" && [ "$p" -ge 16 ] && [ "$p" -le $((first_mtu - 28)) ] ||
        die "--pps-payloads: '$p' is not 16-$((first_mtu - 28)) (one UDP datagram in one packet at MTU $first_mtu)"
done
# --pin's masks, in taskset's hex, taken from the CPUs this script was
# given (a user's own `taskset -c 2-5 ...` keeps --pin inside 2-5): the
# highest of them for everything but the vCPUs, the rest for the vCPUs.
# pin_start_mask is restored after each guest.
if [ "$pin" = 1 ]; then
    command -v taskset >/dev/null || die "--pin needs taskset: install util-linux (or a busybox with taskset)"
    pin_start_mask=$(taskset -p $$ | sed -n 's/.*mask: *//p')
    case $pin_start_mask in
    '' | *[!0-9a-fA-F]*) die "--pin: cannot read this process's CPU affinity (taskset -p $$ said '$pin_start_mask')" ;;
    esac
    # Shell arithmetic is 64-bit: 60 CPUs in the mask at most.
    [ ${#pin_start_mask} -le 15 ] ||
        die "--pin: this process may run on CPUs past the 60th (affinity 0x$pin_start_mask): start it under taskset -c with fewer"
    _m=$((0x$pin_start_mask)) _n=0 _top=0 _b=1
    while [ "$_b" -le "$_m" ]; do
        [ $((_m & _b)) = 0 ] || { _n=$((_n + 1)) _top=$_b; }
        _b=$((_b << 1))
    done
    [ "$_n" -ge 2 ] ||
        die "--pin needs 2 or more CPUs to run on (this process has $_n: affinity 0x$pin_start_mask): leave it out, or widen its taskset"
    pin_guest_mask=$(printf %x $((_m & ~_top))) pin_rest_mask=$(printf %x "$_top")
fi
# plan: the boots of the network cells in the order they run (--order), a
# word FIRST:LAST:CONFIG each: CONFIG boots once for repeats FIRST to LAST.
plan() {
    if [ "$order" = blocks ]; then
        for c in $(list "$configs"); do echo "1:$repeats:$c"; done
        return
    fi
    # Round r starts at the rth config, wrapping (r 1: as given).
    list "$configs" | awk -v repeats="$repeats" '{
        for (r = 1; r <= repeats; r++)
            for (i = 0; i < NF; i++) print r ":" r ":" $((i + r - 1) % NF + 1) }'
}
# for_each_boot FN: FN CONFIG for each word of the plan, with $rep_first
# and $rep_last set to its repeats (measure's range); after it, all of them.
for_each_boot() {
    for _step in $(plan); do
        rep_first=${_step%%:*} _c=${_step#*:}
        rep_last=${_c%%:*}
        "$1" "${_c#*:}"
    done
    rep_first=1 rep_last=$repeats
}
if [ "$show_plan" = 1 ]; then
    # shellcheck disable=SC2317 # called through for_each_boot
    print_boot() {
        if [ "$rep_first" = "$rep_last" ]; then echo "$1: repeat $rep_first"; else echo "$1: repeats $rep_first-$rep_last"; fi
    }
    for_each_boot print_boot
    [ -z "$g2g_configs" ] || echo "then guest to guest, each with all its repeats: $(list "$g2g_configs")"
    [ -z "$tools" ] || [ -z "$fio_configs" ] || echo "then fio, each with all its repeats: $(list "$fio_configs")"
    [ -z "$vsock_configs" ] || echo "then vsock, each with all its repeats: $(list "$vsock_configs")"
    exit 0
fi
# --- --check: what a run's raw.jsonl must show ----------------------------------------
# The verdict is bench/net_check's (bench/report/check.h says what each
# level asks), given this run's matrix: its shortfalls on stdout, one a
# line (scripts/main.sh lists them, the net-compare scenario records
# them), what it read on stderr. Its callers take no line for a pass, so a
# check that could not run says so on stdout.
if [ -n "$check" ]; then
    command -v net_check >/dev/null ||
        { echo "no net_check on PATH to check $out/raw.jsonl: build bench/net_check with make and put it on PATH"; exit 1; }
    set -- "$check" --out "$out" --configs "$configs" --g2g-configs "$g2g_configs" --mtus "$mtus" --dirs "$dirs" \
        --streams "$streams" --pps-payloads "$pps_payloads" --fio-configs "$fio_configs" --fio-depths "$fio_depths" \
        --fio-jobs "$FIO_JOBS" --vsock-configs "$vsock_configs"
    [ "$micro" = 0 ] || set -- "$@" --micro
    net_check "$@" && exit 0 || _st=$?
    [ "$_st" = 1 ] || echo "net_check exited with status $_st: no verdict on $out/raw.jsonl (see its message)"
    exit 1
fi
[ "$(id -u)" = 0 ] || die "needs root (namespaces, taps, /dev/kvm)"
need() { command -v "$1" >/dev/null || die "$1 not found: $2"; }
need iperf3 "install iperf3"
need tcp_rr "build bench/tcp_rr (make bench) and put it on PATH"
need udp_pps "build bench/udp_pps (make bench) and put it on PATH"
# iproute2's ip: busybox's has no netns, and a busybox shell runs its own
# applet for a bare `ip` whatever PATH says, so the binary is named by path.
IP=''
mkdir -p /run/netns 2>/dev/null || true
for p in /usr/sbin/ip /sbin/ip /bin/ip /usr/bin/ip; do
    [ -x "$p" ] && "$p" netns list >/dev/null 2>&1 && { IP=$p; break; }
done
[ -n "$IP" ] || die "no ip with 'netns' support: install iproute2 (busybox's ip has no netns)"
# Every config that boots a guest, the disk cells' too (they need kvmmio,
# wget and KVM's debugfs as much as the network's).
guests=$(list "$configs $g2g_configs${tools:+ $fio_configs} $vsock_configs" | tr ' ' '\n' | grep -v '^host$' || true)
if [ -n "$guests" ]; then
    if [ -n "$(echo "$guests" | grep -v '^qemu-' || true)" ]; then
        need kvmmio "build kvmmio (make) and put it on PATH"
    fi
    need wget "install wget (or busybox)"
    [ -c /dev/kvm ] || die "no /dev/kvm: this must run on an arm64 KVM host"
    [ -s "$kernel" ] || die "--kernel '$kernel': no such file (the arm64 guest Image)"
    [ -s "$initrd" ] || die "--initrd '$initrd': no such file (the guest initramfs)"
    case $configs,$g2g_configs in *vhost*)
        [ -c /dev/vhost-net ] || die "no /dev/vhost-net: modprobe vhost_net, or leave the vhost configs out" ;;
    esac
fi
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || die "--out $out is not empty"
raw=$out/raw.jsonl

# The records (docs/benchmarks.md, "Raw records"): one JSON object a line.
# Every run writes a few, and a jq process costs a noticeable fraction of a
# second in the nested L1 (TCG, dynamically linked), so what the shell can
# write by itself it writes: names and numbers, not the tools' output.
# json_str VALUE: VALUE as a JSON string, into $_s (jq only for a value
# with a character outside the plain set: quotes, backslashes, controls).
json_str() {
    case $1 in
    *[!A-Za-z0-9._:/+@=,\ -]*) _s=$(jq -cn --arg v "$1" '$v') ;;
    *) _s="\"$1\"" ;;
    esac
}
# run_id KIND [--arg NAME VALUE | --argjson NAME NUMBER]...: {"kind":KIND}
# and each NAME with its VALUE (a string) or NUMBER, as one JSON object (a
# run's identity, or a meta record), in the order given.
run_id() {
    json_str "$1"; _j="{\"kind\":$_s"; shift
    while [ $# -ge 3 ]; do
        case $1 in
        --arg) json_str "$3"; _j="$_j,\"$2\":$_s" ;;
        --argjson) is_number "$3" || die "run_id: $2 is not a number: '$3'"; _j="$_j,\"$2\":$3" ;;
        *) die "run_id: $1 is not --arg or --argjson" ;;
        esac
        shift 3
    done
    [ $# -eq 0 ] || die "run_id: a NAME without a VALUE: $*"
    printf '%s}\n' "$_j"
}
is_number() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
run_id meta --arg arch "$(uname -m)" --arg kernel "$(uname -r)" --arg host_cpus "$(nproc)" --arg repeats "$repeats" \
    --arg seconds "$seconds" --arg rr_seconds "$rr_seconds" --arg pps_seconds "$pps_seconds" --arg guest_cpus "$cpus" \
    --arg guest_mem "$mem" --arg pps_flows "$pps_flows" >"$raw"
[ -z "$guest_args" ] || run_id meta --arg guest_args "$guest_args" >>"$raw"
run_id meta --arg order "$order" >>"$raw"
[ "$pin" = 0 ] || run_id meta --arg pin "vcpus 0x$pin_guest_mask, rest 0x$pin_rest_mask" >>"$raw"
# clock: wall, or icount (scripts/arm64/run.sh --clock): the rates are then
# per second of L1's instruction-counted time.
[ -n "${KVMMIO_L1_GIC:-}" ] && run_id meta --arg platform nested-arm64-tcg --arg gic "v$KVMMIO_L1_GIC" \
    --arg clock "${KVMMIO_L1_CLOCK:-wall}" >>"$raw"
failures=0
# record ID FILTER SUMMARY FILE [JQ_ARGS...]: appends ID plus the results
# FILTER takes from the tool's JSON output FILE, with "counters" when
# $_counters holds them and "outside" when $_outside does, and sets $_sum to SUMMARY (a jq string filter over
# that record: the progress line's words); one jq process for both.
# Non-zero (nothing written) when the results are not there.
record() {
    _id=$1 _filter=$2 _summary=$3 _file=$4
    shift 4
    _out=$(jq -r --argjson id "$_id" --argjson counters "${_counters:-null}" \
        --argjson outside "${_outside:-null}" "$@" "$_filter"' | $id + . +
        (if $counters then {counters: $counters} else {} end) +
        (if $outside then {outside: $outside} else {} end) |
        tojson, ('"$_summary"')' "$_file" 2>/dev/null) || return 1
    _rec=${_out%%"$NL"*} _sum=${_out#*"$NL"}
    [ -n "$_rec" ] && [ "$_rec" != "$_out" ] || return 1
    printf '%s\n' "$_rec" >>"$raw"
}
# record_iperf ID FILE, record_rr ID FILE, record_pps ID FILE: a run's
# record from iperf3 -J, tcp_rr --json or udp_pps --json output FILE.
record_iperf() {
    record "$1" '.end.sum_received | select(.bytes != null and .bits_per_second != null) |
        {bytes, seconds: $seconds, bps: .bits_per_second}' '.bps / 1e9 * 1000 | round / 1000' \
        "$2" --argjson seconds "$seconds"
}
record_rr() {
    record "$1" 'select(.transactions != null) | {transactions, seconds, tps,
        p50_us: .rtt_us.p50, p90_us: .rtt_us.p90, p99_us: .rtt_us.p99}' \
        '"\(.tps) transactions/s, p50 \(.p50_us) us"' "$2"
}
record_pps() {
    record "$1" 'select(.sent != null) | {sent, received, lost, seconds, pps: .pps_received}' \
        '"\(.pps) datagrams/s received, \(if .sent > 0 then 1000 * .lost / .sent | round / 10 else 0 end)% lost"' \
        "$2"
}

# Overall progress: "run I/N, ~M min left" from the runs so far. N counts
# every iperf3, tcp_rr and udp_pps run of the matrix; a repeated run does not.
count() { list "$1" | wc -w; }
runs_total=$(( $(count "$configs") * repeats * ( $(count "$mtus") * $(count "$dirs") * $(count "$streams") + 1 +
    $(count "$pps_payloads") * $(count "$dirs") ) ))
[ -z "$tools" ] || [ -z "$fio_configs" ] || runs_total=$((runs_total + $(count "$fio_configs") * repeats * 4 * $(count "$fio_depths")))
runs_total=$((runs_total + $(count "$g2g_configs") * repeats * (2 * $(count "$streams") + 1 + 2 * $(count "$pps_payloads"))))
runs_total=$((runs_total + $(count "$vsock_configs") * repeats * $(count "$dirs")))
runs_done=0 runs_started=$(date +%s)
# progress: counts one run and sets $_prog (not in a subshell: it counts).
progress() {
    runs_done=$((runs_done + 1))
    [ "$runs_done" -le "$runs_total" ] || runs_total=$runs_done
    _el=$(( $(date +%s) - runs_started ))
    _prog="run $runs_done/$runs_total, ~$(( (_el * (runs_total - runs_done) / runs_done + 59) / 60 )) min left"
}
failed() {  # ID REASON: a failed run
    failures=$((failures + 1))
    echo "$1" | jq -c --arg r "$2" '. + {failed: $r}' >>"$raw"
}

# --- micro: the KVM layer's notify and interrupt costs on this machine ------------
if [ "$micro" = 1 ]; then
    need kvm_notify_bench "build it (make bench)"
    say "KVM-layer microbenchmark (kvm_notify_bench)"
    if kvm_notify_bench --stores 5000 --irqs 500 --json "$out/kvm-bench.json" >"$out/kvm-bench.txt" 2>&1; then
        cat "$out/kvm-bench.txt"
        run_id micro --arg platform "arm64${KVMMIO_L1_GIC:+-gicv$KVMMIO_L1_GIC}" --arg file kvm-bench.json >>"$raw"
    else
        say "kvm_notify_bench failed: $(tail -n 1 "$out/kvm-bench.txt")"
        failures=$((failures + 1))
    fi
fi

# --- the measurements, the same for every config ------------------------------------
# run_iperf CLIENT_PREFIX SERVER DIR STREAMS FILE: iperf3 -J into FILE.
run_iperf() {
    r=''; [ "$3" = g2h ] && r=-R  # g2h: the server (guest side) sends
    # shellcheck disable=SC2086 # $1 is a command prefix, $r one flag
    timeout $((seconds + 60)) $1 iperf3 -c "$2" -P "$4" -t "$seconds" -J $r >"$5" 2>&1
}

# run_host and run_guest set, per config:
#   cfg     its name, as recorded
#   client  the prefix the host-side clients run under ('' or "ip netns exec NS")
#   server  the address of the side that serves iperf3, tcp_rr and udp_pps
#   base    the path prefix of its files (a guest's changes with each boot)

# counted: sets $_counters to the VMM's counter deltas from $_before to
# $_after (empty for the host config, which has no VMM, and for the peer,
# which has no --stats), and $_outside to the outside counters' from
# $_obefore to $_oafter (empty for the host, and guest to guest).
counted() {
    _counters='' _outside=''
    [ -z "$_before" ] || deltas "$_before" "$_after" || return 1
    [ -z "$_obefore" ] || { outside_deltas "$_obefore" "$_oafter" && other_vms_check; }
}

# snap_before, snap_after: the snapshots around a guest run: the VMM's
# (kvmmio's --stats with the guest's interrupts, into $_before and
# $_after; none for the peer) and the outside counters with the guest's
# interrupts ($_obefore, $_oafter). The outside ones are read inside the
# VMM's: kvmmio's snapshot wakes its threads and kicks its vCPUs, which
# the outside counts then leave out. Nothing for the host config.
snap_before() {
    _before='' _after='' _obefore='' _oafter=''
    [ "$cfg" != host ] || return 0
    if is_peer "$cfg"; then _g=$(guest_ctl irqs) || return 1
    else _before=$(snapshot) || return 1; _g=${_before##* }; fi
    # The guest's answer, when not a number, is an unreadable count.
    is_number "$_g" || _g=null
    _obefore="$(outside_counters) $_g"
}
snap_after() {
    [ "$cfg" != host ] || return 0
    _o=$(outside_counters)
    if is_peer "$cfg"; then _g=$(guest_ctl irqs) || return 1
    else _after=$(snapshot) || return 1; _g=${_after##* }; fi
    is_number "$_g" || _g=null
    _oafter="$_o $_g"
}

# one_iperf ID MTU DIR STREAMS REP: one iperf3 run, recorded with the
# counter deltas around it when the config is a guest; non-zero when it failed.
one_iperf() {
    _f=$base.iperf.json
    snap_before || return 1
    run_iperf "$client" "$server" "$3" "$4" "$_f" || return 1
    snap_after || return 1
    counted && record_iperf "$1" "$_f" || return 1
    progress
    say "$cfg $3 ${4}x MTU $2, repeat $5/$repeats: $_sum Gbit/s ($_prog)"
}

# one_rr MTU REP [CLIENT]: one tcp_rr latency run, recorded (or recorded as
# failed). CLIENT FILE runs the client, its JSON into FILE (default
# rr_client: from the host side).
one_rr() {
    _f=$base.rr.json _progress="$cfg TCP_RR, repeat $2/$repeats" _counters='' _outside=''
    _id=$(run_id rr --arg config "$cfg" --argjson mtu "$1" --argjson rep "$2")
    if "${3:-rr_client}" "$_f" && record_rr "$_id" "$_f"; then
        progress
        say "$_progress: $_sum ($_prog)"
    else
        progress
        say "$_progress: FAILED ($_prog)"
        failed "$_id" tcp_rr_failed
    fi
}

rr_client() {
    # shellcheck disable=SC2086 # $client is a command prefix
    timeout $((rr_seconds + 30)) $client tcp_rr client "$server" --port 5300 \
        --seconds "$rr_seconds" --size 1 --json >"$1" 2>&1
}

# one_pps ID MTU PAYLOAD DIR REP: one udp_pps run at full rate (g2h: the
# guest's server sends), recorded with the counter deltas around it when
# the config is a guest; non-zero when it failed.
one_pps() {
    _f=$base.pps.json _rev=''
    [ "$4" = g2h ] && _rev=--reverse
    snap_before || return 1
    # shellcheck disable=SC2086 # $client is a command prefix, $_rev one flag
    timeout $((pps_seconds + 60)) $client udp_pps client "$server" --port 5400 --seconds "$pps_seconds" \
        --payload "$3" --flows "$pps_flows" $_rev --json >"$_f" 2>&1 || return 1
    snap_after || return 1
    counted && record_pps "$1" "$_f" || return 1
    progress
    # With flows, the receiver's count of their source ports: that they all
    # arrived (the record keeps the rates only).
    [ "$pps_flows" = 1 ] || _sum="$_sum, $(jq -r '.sources' "$_f") of $pps_flows flows arrived"
    say "$cfg UDP $4 $3-byte payloads, repeat $5/$repeats: $_sum ($_prog)"
}

# attempt ID WHAT REASON FILE RUN...: RUN (a one_* function and its
# arguments, ID first) until it succeeds, or, when it fails, until
# $recover_fn says not to try again: then the run is recorded as failed
# with REASON. FILE is the run's output beside $base, whose last line says
# what went wrong. A run tried more than once leaves a record of every
# attempt, each with "attempt" N and "outcome" ("failed", with REASON as
# "failed", for each but perhaps the last; "ok" for one that succeeded),
# so a retry is on record; one tried once is recorded as before.
attempt() {
    _a_id=$1 _a_what=$2 _a_reason=$3 _a_file=$4 _a_n=1
    shift 4
    while ! "$@"; do
        say "$_a_what: FAILED ($(tail -n 1 "$base.$_a_file" 2>/dev/null))"
        if "$recover_fn" "$mtu"; then
            # This attempt failed and another follows: on record, not
            # counted (the run is judged by its last attempt).
            with_attempt "$_a_id" "$_a_n" failed | jq -c --arg r "$_a_reason" '. + {failed: $r}' >>"$raw"
            _a_n=$((_a_n + 1))
            # The RUN's ID (its first argument) with the attempt: the record
            # it writes when it succeeds.
            _a_run=$1
            shift 2
            set -- "$_a_run" "$(with_attempt "$_a_id" "$_a_n" ok)" "$@"
            continue
        fi
        progress
        say "$_a_what: counted failed ($_prog)"
        [ "$_a_n" = 1 ] || _a_id=$(with_attempt "$_a_id" "$_a_n" failed)
        failed "$_a_id" "$_a_reason"
        return 0
    done
}
# with_attempt ID N OUTCOME: the run identity ID (a JSON object, one line)
# with "attempt":N and "outcome":OUTCOME added.
with_attempt() { printf '%s,"attempt":%s,"outcome":"%s"}\n' "${1%\}}" "$2" "$3"; }

# measure SET_MTU RECOVER [G2G]: every iperf3 cell of the config, then its
# latency and packet-rate runs at the first MTU, repeats $rep_first to
# $rep_last (all of them, or one round's: --order). Two functions, called with
# the MTU:
#   SET_MTU   puts both ends on it (non-zero: could not)
#   RECOVER   after a failed run: 0 when the run should be repeated (on a
#             fresh guest), non-zero when it stays failed
# With G2G (g2g), the guest-to-guest cells: at the first MTU only, both
# ways between the guests, each run by the one_g2g_* functions.
measure() {
    set_mtu_fn=$1 recover_fn=$2 m_mtus=$mtus m_dirs=$dirs m_run=one_
    [ "${3:-}" != g2g ] || m_mtus=$first_mtu m_dirs=a2b,b2a m_run=one_g2g_
    for mtu in $(list "$m_mtus"); do
        "$set_mtu_fn" "$mtu" || say "$cfg: could not set MTU $mtu on both ends"
        for dir in $(list "$m_dirs"); do for s in $(list "$streams"); do
            k=$rep_first; while [ $k -le "$rep_last" ]; do
                id=$(run_id iperf --arg config "$cfg" --argjson mtu "$mtu" --arg dir "$dir" \
                    --argjson streams "$s" --argjson rep "$k")
                attempt "$id" "$cfg $dir ${s}x MTU $mtu, repeat $k/$repeats" iperf3_failed iperf.json \
                    "${m_run}iperf" "$id" "$mtu" "$dir" "$s" "$k"
                k=$((k + 1))
            done
        done; done
        [ "$mtu" = "$first_mtu" ] || continue
        k=$rep_first; while [ $k -le "$rep_last" ]; do "${m_run}rr" "$mtu" "$k"; k=$((k + 1)); done
        for p in $(list "$pps_payloads"); do for dir in $(list "$m_dirs"); do
            k=$rep_first; while [ $k -le "$rep_last" ]; do
                id=$(run_id pps --arg config "$cfg" --argjson mtu "$mtu" --argjson payload "$p" \
                    --arg dir "$dir" --argjson rep "$k")
                attempt "$id" "$cfg UDP $dir $p-byte payloads, repeat $k/$repeats" udp_pps_failed pps.json \
                    "${m_run}pps" "$id" "$mtu" "$p" "$dir" "$k"
                k=$((k + 1))
            done
        done; done
    done
}

# --- host baseline: two namespaces, one veth pair -------------------------------
NS_A=kvmmio-bench-a NS_B=kvmmio-bench-b
host_cleanup() {
    "$IP" netns pids "$NS_B" 2>/dev/null | xargs -r kill 2>/dev/null || true
    "$IP" netns del "$NS_A" 2>/dev/null || true
    "$IP" netns del "$NS_B" 2>/dev/null || true
}
run_host() {
    say "host baseline: namespaces $NS_A <-> $NS_B over a veth pair"
    host_cleanup
    mkdir -p /run/netns /var/run 2>/dev/null || true
    "$IP" netns add "$NS_A" && "$IP" netns add "$NS_B" &&
        "$IP" link add kvmmio-va netns "$NS_A" type veth peer name kvmmio-vb netns "$NS_B" &&
        "$IP" -n "$NS_A" addr add 10.77.0.1/24 dev kvmmio-va &&
        "$IP" -n "$NS_B" addr add 10.77.0.2/24 dev kvmmio-vb &&
        "$IP" -n "$NS_A" link set lo up && "$IP" -n "$NS_B" link set lo up &&
        "$IP" -n "$NS_A" link set kvmmio-va up && "$IP" -n "$NS_B" link set kvmmio-vb up ||
        { say "host baseline: cannot set up the namespaces"; failures=$((failures + 1)); host_cleanup; return; }
    "$IP" netns exec "$NS_B" iperf3 -s -D
    "$IP" netns exec "$NS_B" tcp_rr server --port 5300 </dev/null >/dev/null 2>&1 &
    "$IP" netns exec "$NS_B" udp_pps server --port 5400 </dev/null >/dev/null 2>&1 &
    sleep 1
    cfg=host client="$IP netns exec $NS_A" server=10.77.0.2 base=$out/host
    measure host_set_mtu no_second_try
    host_cleanup
}
host_set_mtu() {  # an MTU the veth pair refuses is a set-up error
    "$IP" -n "$NS_A" link set kvmmio-va mtu "$1" && "$IP" -n "$NS_B" link set kvmmio-vb mtu "$1" ||
        die "the veth pair refuses MTU $1"
}
no_second_try() { return 1; }

# --- guests -------------------------------------------------------------------------
GUEST=10.78.0.2 HOSTIP=10.78.0.1
max_mtu() { list "$mtus" | tr ' ' '\n' | sort -n | tail -n 1; }

# The running guest: its kvmmio's pid, its files' prefix and --stats file,
# its address, its tap, and the bridge that tap is on ('': none, the host's
# address is on the tap). A guest-to-guest config has two, a and b: the
# one in hand is in the plain names, guest_save A|B keeps it under its
# own, guest_load A|B takes one in hand.
gip=$GUEST g_tap=$tap g_bridge=''
pid_a='' base_a='' stats_a='' gip_a='' g_tap_a='' pid_b='' base_b='' stats_b='' gip_b='' g_tap_b=''
guest_save() {
    case $1 in
    a) pid_a=$pid base_a=$base stats_a=$stats gip_a=$gip g_tap_a=$g_tap ;;
    b) pid_b=$pid base_b=$base stats_b=$stats gip_b=$gip g_tap_b=$g_tap ;;
    *) die "guest_save: no guest '$1'" ;;
    esac
}
guest_load() {
    case $1 in
    a) pid=$pid_a base=$base_a stats=$stats_a gip=$gip_a g_tap=$g_tap_a ;;
    b) pid=$pid_b base=$base_b stats=$stats_b gip=$gip_b g_tap=$g_tap_b ;;
    *) die "guest_load: no guest '$1'" ;;
    esac
}

# guest_ctl PATH: GET http://GUEST:8080/cgi-bin/PATH, the answer on stdout.
# wget's complaints go to the boot's .ctl file. (timeout, not wget -T:
# busybox 1.35's wget crashes on -T.)
guest_ctl() { timeout 20 wget -q -O - "http://$gip:8080/cgi-bin/$1" 2>>"$base.ctl"; }

pid='' boot=0
guest_stop() {
    [ -n "$pid" ] || return 0
    guest_ctl poweroff >/dev/null || true
    i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
    kill -0 "$pid" 2>/dev/null && { say "guest did not power off: SIGTERM"; kill "$pid"; }
    wait "$pid" && st=0 || st=$?
    # Not 0 after the guest's own power-off is kvmmio's failure (a crash,
    # a seccomp kill at 159), counted even when every measurement was made.
    [ "$st" = 0 ] || { say "kvmmio exited with status $st (see $base.log)"; failures=$((failures + 1)); }
    pid=''
    fs_stop
    [ "$pin" = 0 ] || taskset -p "$pin_start_mask" $$ >/dev/null
}
# pin_guest CONFIG: --pin for the guest up now ($pid, kvmmio or QEMU): its
# vCPU threads (oc_role's "vcpu", bench/outside-counters.sh) on the guest's
# CPUs, its other threads (vhost's workers among them from Linux 6.4) and
# the vhost workers that are kernel threads of their own ("vhost-PID",
# before 6.4) on the highest CPU. Non-zero when a thread cannot be moved or
# no vCPU thread was found.
pin_guest() {
    _vcpus=0 _rest=0
    for _t in /proc/"$pid"/task/*; do
        oc_role "$(cat "$_t/comm" 2>/dev/null)"
        if [ "$oc_r" = vcpu ]; then _m=$pin_guest_mask _vcpus=$((_vcpus + 1))
        else _m=$pin_rest_mask _rest=$((_rest + 1))
        fi
        taskset -p "$_m" "${_t##*/}" >/dev/null || return 1
    done
    for _p in /proc/[0-9]*; do
        [ "$(cat "$_p/comm" 2>/dev/null)" = "vhost-$pid" ] || continue
        taskset -p "$pin_rest_mask" "${_p##*/}" >/dev/null || return 1
        _rest=$((_rest + 1))
    done
    [ "$_vcpus" -gt 0 ] || { say "$1: --pin found no vCPU thread in process $pid"; return 1; }
    say "$1: pinned $_vcpus vCPU threads to CPUs 0x$pin_guest_mask, $_rest other threads to 0x$pin_rest_mask"
}
# fs-mirror's backend: virtiofsd on the directory $fs_share (made by the
# fio cells), one for each boot: it serves one VMM connection and ends
# with it. fs_start sets guest_disks' --fs; fs_stop waits for its end.
fs_pid='' fs_share='' fs_sock=''
fs_start() {
    _vfsd=$(command -v virtiofsd || true)
    for _c in /usr/libexec/virtiofsd /usr/lib/qemu/virtiofsd "$tools_dir/virtiofsd"; do
        [ -n "$_vfsd" ] || [ ! -x "$_c" ] || _vfsd=$_c
    done
    [ -n "$_vfsd" ] || { say "$cfg: no virtiofsd (apt-get install virtiofsd on Debian 13, qemu-system-common on 12)"; return 1; }
    rm -f "$fs_sock"
    # Debian 13's virtiofsd (Rust) names the directory --shared-dir;
    # Debian 12's (C, qemu-system-common) takes -o source=.
    if "$_vfsd" --help 2>&1 | grep -q -- --shared-dir; then
        set -- --shared-dir "$fs_share" --sandbox chroot
    else
        set -- -o source="$fs_share" -o sandbox=chroot
    fi
    "$_vfsd" --socket-path="$fs_sock" "$@" </dev/null >"$base.virtiofsd" 2>&1 &
    fs_pid=$!
    _i=0
    while [ ! -S "$fs_sock" ]; do
        _i=$((_i + 1))
        kill -0 "$fs_pid" 2>/dev/null && [ $_i -lt 150 ] || { say "$cfg: virtiofsd did not listen (see $base.virtiofsd)"; return 1; }
        sleep 0.2
    done
}
fs_stop() {
    [ -n "$fs_pid" ] || return 0
    _i=0; while kill -0 "$fs_pid" 2>/dev/null && [ $_i -lt 25 ]; do sleep 0.2; _i=$((_i + 1)); done
    kill "$fs_pid" 2>/dev/null || true
    wait "$fs_pid" 2>/dev/null || true
    fs_pid=''
}
# fio_cleanup: the tools disk's mount, the backing file and the shared
# directory, once made.
tools_dir='' fio_mounted=0 fio_made=0
fio_cleanup() {
    fs_stop
    [ "$fio_mounted" = 0 ] || umount "$tools_dir" 2>/dev/null || true
    [ -z "$tools_dir" ] || rmdir "$tools_dir" 2>/dev/null || true
    [ "$fio_made" = 0 ] || rm -rf "$fio_file" "$fio_file.share" "$fio_file.sock"
}
trap 'guest_stop; g2g_stop; host_cleanup; fio_cleanup' EXIT

# The tools disk, mounted for the whole run: fio, and the peer's QEMU.
if [ -n "$tools" ]; then
    tools_dir=$(mktemp -d /tmp/kvmmio-tools.XXXXXX)
    _o=ro; [ -b "$tools" ] || _o=ro,loop
    mount -t squashfs -o "$_o" "$tools" "$tools_dir" || die "cannot mount the tools disk $tools (squashfs) at $tools_dir"
    fio_mounted=1
fi
# The peer: QEMU's system emulator for arm64, on KVM.
case ,$configs, in *,qemu-*)
    if [ -z "$qemu" ]; then
        if [ -x "$tools_dir/qemu-system-aarch64" ]; then qemu=$tools_dir/qemu-system-aarch64
        else qemu=$(command -v qemu-system-aarch64) ||
            die "no qemu-system-aarch64 for the qemu-* configs: give --tools (the platform's tools disk has it), --qemu PROGRAM, or install qemu-system-arm"
        fi
    fi
    _v=$("$qemu" --version 2>&1 | head -n 1) || die "$qemu does not run: $_v"
    say "peer VMM: $_v ($qemu)"
    ;;
esac
# The outside counters read KVM's debugfs; mounted here if it is not yet.
OUTSIDE=$(dirname "$0")/outside-counters.sh
[ -r "$OUTSIDE" ] || die "$OUTSIDE missing (bench/outside-counters.sh belongs beside this script)"
# Its oc_role names the VMMs' threads for --pin (and sets oc_r).
# shellcheck disable=SC2034 # read by the sourced file
OUTSIDE_COUNTERS_LIB=1
# shellcheck source=bench/outside-counters.sh
. "$OUTSIDE"
if [ -n "$guests" ] && [ ! -e /sys/kernel/debug/kvm/exits ]; then
    mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
    [ -e /sys/kernel/debug/kvm/exits ] ||
        say "KVM's debugfs counters are unreadable here (no /sys/kernel/debug/kvm/exits): null in the records"
fi

# guest_start CONFIG: boots the guest and waits until it serves (0) or not (1).
# Its network is $guest_net's (a net-modes.sh config; default CONFIG), and
# $guest_disks (words) are kvmmio's further arguments.
guest_start() {
    boot=$((boot + 1))
    base=$out/$1-boot$boot stats=$out/$1-boot$boot.stats.json
    _cmdline="console=ttyAMA0 quiet panic=-1 kvmmio.l2test=serve kvmmio.ip=$gip${guest_args:+ $guest_args}"
    # --pin: this script and what it starts from here on, the VMM included,
    # on the highest CPU; pin_guest moves the vCPUs off it once they exist.
    [ "$pin" = 0 ] || taskset -p "$pin_rest_mask" $$ >/dev/null
    if is_peer "$1"; then
        peer_start "$1"
    else
        case $1 in fs-*) fs_start || return 1 ;; esac
        _spec="tap=$g_tap,$(net_mode_spec "${guest_net:-$1}"),mtu=$(max_mtu)${g_bridge:+,bridge=$g_bridge}"
        say "$1: boot the guest (--net $_spec${guest_disks:+ $guest_disks})"
        # --rng off: the peer VMMs' guests have no entropy device, and its
        # notifies and interrupts would count in vmm_counters' sums (the
        # guest's hw_random thread reads it now and then, mid-run).
        # --on-reboot exit: a guest that panics (panic=-1) ends its run.
        # shellcheck disable=SC2086 # $guest_disks: words without spaces
        kvmmio run --kernel "$kernel" --initrd "$initrd" --mem "$mem" --cpus "$cpus" --rng off --on-reboot exit \
            --net "$_spec" --stats "$stats" $guest_disks --cmdline-replace "$_cmdline" \
            </dev/null >"$base.console" 2>"$base.log" &
        pid=$!
    fi
    i=0
    while ! "$IP" link show "$g_tap" >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 150 ] && kill -0 $pid 2>/dev/null || break; sleep 0.2
    done
    [ -n "$g_bridge" ] || "$IP" addr add "$HOSTIP/24" dev "$g_tap" 2>/dev/null || true
    "$IP" link set "$g_tap" up 2>/dev/null || true
    i=0
    while ! grep -q KVMMIO-L2-SERVING "$base.console"; do
        i=$((i + 1))
        kill -0 $pid 2>/dev/null && [ $i -lt 900 ] || { say "$1: the guest never served (see $base.console)"; return 1; }
        sleep 0.2
    done
    [ "$pin" = 0 ] || pin_guest "$1" || return 1
    sleep 1
}

# peer_start CONFIG: the same guest under QEMU (qemu-pci or qemu-mmio): the
# same kernel, initramfs, command line, vCPUs and memory, vhost-net on a
# tap of the same name, the MTU offered the same way (VIRTIO_NET_F_MTU).
# -cpu host and the host's GIC (the L1's, named by KVMMIO_L1_GIC);
# -nodefaults and romfile= (no option ROM: the kernel is loaded directly);
# debug-threads=on names QEMU's vCPU threads "CPU N/KVM", which the outside
# counters leave out of the VMM's own context switches. The guest's console
# goes to the file kvmmio's would.
peer_start() {
    _queues=''
    case $1 in
    qemu-pci) _dev=virtio-net-pci,romfile= ;;
    # two queue pairs, each with its vectors (rx, tx), plus config and control
    qemu-pci-mq) _dev=virtio-net-pci,romfile=,mq=on,vectors=6 _queues=,queues=2 ;;
    *) _dev=virtio-net-device ;;
    esac
    _args="-M virt,gic-version=${KVMMIO_L1_GIC:-host} -accel kvm -cpu host -smp $cpus -m $mem"
    _args="$_args -nodefaults -no-user-config -display none -no-reboot -name kvmmio-peer,debug-threads=on"
    _args="$_args -netdev tap,id=net0,ifname=$g_tap,script=no,downscript=no,vhost=on$_queues"
    _args="$_args -device $_dev,netdev=net0,host_mtu=$(max_mtu)"
    say "$1: boot the guest under QEMU ($_args)"
    # shellcheck disable=SC2086 # $_args: options, words without spaces
    "$qemu" $_args -kernel "$kernel" -initrd "$initrd" -append "$_cmdline" -serial "file:$base.console" \
        </dev/null >"$base.qemu.out" 2>"$base.log" &
    pid=$!
}

# vmm_counters: "exits wakeups injected relayed trapped polled" from a fresh
# --stats snapshot of the running kvmmio.
vmm_counters() {
    rm -f "$stats"
    kill -USR1 "$pid" 2>/dev/null || return 1
    i=0; while [ ! -s "$stats" ]; do i=$((i + 1)); [ $i -lt 100 ] || return 1; sleep 0.1; done
    jq -r '([.vcpus[].total_exits] | add // 0) as $e |
        def total($k): [.devices[].counters[$k] // 0] | add // 0;
        "\($e) \($e + .event_loop_wakeups) \(total("interrupts_injected")) \(total("interrupts_relayed")) \(total("notifies_trapped")) \(total("notifies_polled"))"' "$stats"
}
# snapshot: the VMM counters and the guest's interrupt count, one line.
snapshot() {
    v=$(vmm_counters) || return 1
    g=$(guest_ctl irqs) || return 1
    echo "$v $g"
}
# deltas BEFORE AFTER: a record's "counters" object into $_counters, from
# two snapshots of seven counts each; non-zero when they are not that.
deltas() {
    # shellcheck disable=SC2086 # fourteen numbers
    set -- $1 $2
    [ $# -eq 14 ] || return 1
    for _n in "$@"; do is_number "$_n" || return 1; done
    _counters="{\"vcpu_exits\":$(($8 - $1)),\"wakeups\":$(($9 - $2)),\"injected\":$((${10} - $3)),"
    _counters="$_counters\"relayed\":$((${11} - $4)),\"trapped\":$((${12} - $5)),\"polled\":$((${13} - $6)),"
    _counters="$_counters\"guest_irqs\":$((${14} - $7))}"
}

# outside_counters: bench/outside-counters.sh's counters for the running
# VMM ($pid), as words in OUTSIDE_NAMES' order (all but guest_irqs): a
# number, or null where unreadable.
outside_counters() {
    _oc=$(sh "$OUTSIDE" "$pid") || _oc=''
    # Each by its name: anything but a whole number (null, a missing
    # member, output cut short) is null, never 0 and never a lost word.
    for _n in $OUTSIDE_NAMES; do
        [ "$_n" != guest_irqs ] || continue
        _v=${_oc#*\""$_n"\":}
        [ "$_v" != "$_oc" ] || _v=null
        _v=${_v%%[,\}]*}
        is_number "$_v" || _v=null
        printf '%s ' "$_v"
    done
}
# The words of a snapshot: outside_counters', then the guest's interrupts.
# Each is a member of the record's "outside" but kvm_exits_all_vms, the
# cross-check of kvm_exits (KVM's exits over all VMs; outside_deltas).
OUTSIDE_NAMES='kvm_exits kvm_mmio_exit_user kvm_mmio_exit_kernel kvm_halt_wakeup vmm_ctxt_switches vmm_cpu_ms kvm_exits_all_vms guest_irqs'
# outside_deltas BEFORE AFTER: a record's "outside" object into $_outside,
# from two snapshots of OUTSIDE_NAMES' words each; a counter unreadable at
# either end is null, and so is one that went down (vmm_ctxt_switches
# loses a thread that exits, e.g. an io_uring worker retired when idle: a
# negative delta is no count), but for vmm_cpu_ms's resolution (below).
# $_other_exits: the exits of VMs other than the VMM's over the run (all
# VMs' less its own), or null where either is unreadable.
outside_deltas() {
    # shellcheck disable=SC2086 # two snapshots' words
    set -- $1 $2
    _k=0
    for _n in $OUTSIDE_NAMES; do _k=$((_k + 1)); done
    [ $# -eq $((2 * _k)) ] || return 1
    _outside='' _i=1 _a='' _b='' _own=null _all=null
    for _n in $OUTSIDE_NAMES; do
        eval "_b=\${$_i} _a=\${$((_i + _k))}"
        _v=null
        if is_number "$_b" && is_number "$_a"; then
            _v=$((_a - _b))
            # vmm_cpu_ms is good to a clock tick or so per vCPU (a whole
            # process's time less its vCPUs'; outside-counters.sh): an idle
            # VMM can read up to 50 ms (5 ticks at 100 Hz) below where it
            # started, which is 0; further below is no reading.
            if [ "$_v" -lt 0 ]; then
                if [ "$_n" = vmm_cpu_ms ] && [ "$_v" -ge -50 ]; then _v=0; else _v=null; fi
            fi
        fi
        _i=$((_i + 1))
        case $_n in
        kvm_exits) _own=$_v ;;
        kvm_exits_all_vms) _all=$_v; continue ;;
        esac
        _outside="$_outside${_outside:+,}\"$_n\":$_v"
    done
    _outside="{$_outside}"
    _other_exits=null
    ! is_number "$_own" || ! is_number "$_all" || _other_exits=$((_all - _own))
}
# other_vms_check: when VMs other than the VMM's exited during the run (a
# VM the run did not start: the host was shared, so the cell's timings are
# not this VMM's alone), says so and puts "other_vm_exits" in the run's
# outside counters, which --check cells fails. The two counts are read one
# after the other, so the VMM's own exits between the reads are let
# through: up to 1% of them, and 10.
other_vms=0
other_vms_check() {
    case $_other_exits in '' | null | -*) return 0 ;; esac
    [ "$_other_exits" -gt $((_own / 100 + 10)) ] || return 0
    other_vms=$((other_vms + 1))
    _outside="${_outside%\}},\"other_vm_exits\":$_other_exits}"
    say "$cfg: $_other_exits exits of other VMs during this run (KVM's exits over all VMs less this VMM's $_own): another VM ran on this host; this VMM's counters are its own, its timings are not"
}

set_mtu() {  # MTU: on the tap and in the guest
    "$IP" link set "$g_tap" mtu "$1" && [ "$(guest_ctl "mtu?$1")" = "mtu $1" ]
}

guest_recover() {
    # The known nested-L1 hang (docs/arm64-platform.md): once per boot of
    # a config (a round's, with --order rounds), a fresh guest when this
    # one stopped answering, then the run again.
    guest_ctl irqs >/dev/null && return 1
    [ "$restarts" -lt 1 ] || return 1
    restarts=1
    say "$cfg: the guest stopped answering; rebooting it once"
    guest_stop
    guest_start "$cfg" && { [ "$1" = none ] || set_mtu "$1"; }
}

run_guest() {
    cfg=$1 client='' server=$GUEST restarts=0 guest_net='' guest_disks=''
    guest_start "$cfg" || { guest_stop; guest_start "$cfg" || { guest_stop; failed "$(run_id iperf --arg config "$cfg")" guest_did_not_boot; return; }; }
    measure set_mtu guest_recover
    guest_stop
}

run_config() {
    case $1 in
    host) run_host ;;
    *) run_guest "$1" ;;
    esac
}
for_each_boot run_config

# --- guest to guest: two guests on one bridge ---------------------------------------
G2G_BRIDGE=kvmg2gbr0 G2G_NET=10.79.0
# g2g_stop: both guests of a guest-to-guest config stopped (A last, left
# loaded), the bridge gone; nothing when there are none.
g2g_stop() {
    guest_load b; guest_stop; guest_save b
    guest_load a; guest_stop; guest_save a
    "$IP" link del "$G2G_BRIDGE" 2>/dev/null || true
}

# g2g_snapshot: both VMMs' counters and both guests' interrupt counts,
# added, as one line of seven (snapshot's shape). Run in $(...): the
# guest it loads is the subshell's.
g2g_snapshot() {
    guest_load b; _sb=$(snapshot) || return 1
    guest_load a; _sa=$(snapshot) || return 1
    # shellcheck disable=SC2086 # fourteen numbers
    set -- $_sa $_sb
    [ $# -eq 14 ] || return 1
    for _n in "$@"; do is_number "$_n" || return 1; done
    echo "$(($1 + $8)) $(($2 + $9)) $(($3 + ${10})) $(($4 + ${11})) $(($5 + ${12})) $(($6 + ${13})) $(($7 + ${14}))"
}

# g2g_client FROM TOOL TO N SECONDS FILE: guest FROM (a or b) runs TOOL's
# client (iperf3, tcp_rr or udp_pps) against guest TO for SECONDS, N its
# streams or payload bytes (the serve hook's client CGI); the tool's JSON
# into FILE. Guest A is loaded again after.
g2g_client() {
    case $3 in a) _to=$gip_a ;; b) _to=$gip_b ;; *) die "g2g_client: no guest '$3'" ;; esac
    guest_load "$1"
    timeout $(($5 + 60)) wget -q -O "$6" "http://$gip:8080/cgi-bin/client?$2+$_to+$4+$5" 2>>"$base.ctl" &&
        _st=0 || _st=$?
    guest_load a
    return "$_st"
}

# g2g_dir DIR: "FROM TO" of a2b or b2a.
g2g_dir() { case $1 in a2b) echo "a b" ;; *) echo "b a" ;; esac; }

# one_g2g KIND ID DIR N REP: one iperf3 (KIND iperf, N streams) or udp_pps
# run at full rate (KIND pps, N-byte payloads) from guest to guest,
# recorded with both VMMs' and guests' counter deltas around it.
one_g2g() {
    _f=$base.$1.json _obefore=''
    _before=$(g2g_snapshot) || return 1
    # shellcheck disable=SC2046 # FROM TO: two words, $6 and $7
    set -- "$@" $(g2g_dir "$3")
    case $1 in
    iperf) g2g_client "$6" iperf3 "$7" "$4" "$seconds" "$_f" ;;
    *) g2g_client "$6" udp_pps "$7" "$4" "$pps_seconds" "$_f" ;;
    esac || return 1
    _after=$(g2g_snapshot) || return 1
    counted && "record_$1" "$2" "$_f" || return 1
    progress
    case $1 in
    iperf) say "$cfg $3 ${4}x MTU $first_mtu, repeat $5/$repeats: $_sum Gbit/s ($_prog)" ;;
    *) say "$cfg UDP $3 $4-byte payloads, repeat $5/$repeats: $_sum ($_prog)" ;;
    esac
}
# measure's runners with one_iperf's and one_pps's arguments (the MTU is
# the first).
one_g2g_iperf() { one_g2g iperf "$1" "$3" "$4" "$5"; }
one_g2g_pps() { one_g2g pps "$1" "$4" "$3" "$5"; }

# one_g2g_rr MTU REP: one tcp_rr run, A's client against B's server.
one_g2g_rr() { one_rr "$1" "$2" g2g_rr_client; }
g2g_rr_client() { g2g_client a tcp_rr b 1 "$rr_seconds" "$1"; }

# g2g_set_mtu MTU: both taps and both guests on MTU (the bridge follows).
g2g_set_mtu() {
    guest_load b; set_mtu "$1" && _st=0 || _st=1
    guest_load a; set_mtu "$1" && [ "$_st" = 0 ]
}

# run_g2g MODE: guests B (10.79.0.3) and A (.2), each on a tap of its own
# on bridge kvmg2gbr0 (the host's address .1 is the bridge's), both in MODE.
run_g2g() {
    cfg=g2g-$1 guest_net=$1 guest_disks='' restarts=0 _ok=0
    g2g_stop
    if "$IP" link add "$G2G_BRIDGE" type bridge && "$IP" addr add "$G2G_NET.1/24" dev "$G2G_BRIDGE" &&
        "$IP" link set "$G2G_BRIDGE" up; then
        g_bridge=$G2G_BRIDGE g_tap=kvmg2g-b gip=$G2G_NET.3
        guest_start "$cfg" && _ok=1
        guest_save b
        pid=''
        if [ $_ok = 1 ]; then
            g_tap=kvmg2g-a gip=$G2G_NET.2
            guest_start "$cfg" || _ok=0
        fi
        guest_save a
    else
        say "$cfg: cannot make bridge $G2G_BRIDGE"
    fi
    if [ $_ok = 1 ]; then
        measure g2g_set_mtu no_second_try g2g
    else
        failed "$(run_id iperf --arg config "$cfg")" guest_did_not_boot
    fi
    g2g_stop
    g_bridge='' g_tap=$tap gip=$GUEST
}

for c in $(list "$g2g_configs"); do run_g2g "$c"; done

# --- the disk cells: fio ----------------------------------------------------------

# one_fio ID RW BS DEPTH REP: one fio run on the backing file (host) or in
# the guest on its disk, recorded with the counter deltas around it when
# the config is a guest; non-zero when it failed.
one_fio() {
    _f=$base.fio.json _before='' _after='' _obefore=''
    if [ "$cfg" = host ]; then
        timeout $((fio_seconds + 60)) "$tools_dir/fio" --name=host --filename="$fio_file" --rw="$2" --bs="$3" \
            --iodepth="$4" --runtime="$fio_seconds" --time_based --direct=0 --ioengine=libaio \
            --output-format=json --output="$_f" </dev/null >"$base.fio.err" 2>&1 ||
            { tail -n 1 "$base.fio.err" >>"$_f"; return 1; }
    else
        snap_before || return 1
        timeout $((fio_seconds + 60)) wget -q -O "$_f" \
            "http://$GUEST:8080/cgi-bin/fio?$2+$3+$4+$fio_seconds" 2>>"$base.ctl" || return 1
        snap_after || return 1
    fi
    counted || return 1
    # fio's JSON: the first job, its read or write side.
    record "$1" '.jobs[0] | (if ($rw | test("read")) then .read else .write end) |
        select(.io_bytes != null and .total_ios != null and .runtime != null and .iops != null and .bw_bytes != null) |
        {bytes: .io_bytes, ios: .total_ios, seconds: (.runtime / 1000), iops, bw_bps: .bw_bytes}' \
        '"\(.iops | round) IO/s, \(.bw_bps / 1e6 | round) MB/s"' "$_f" --arg rw "$2" || return 1
    progress
    say "$cfg fio $2 $3 B depth $4, repeat $5/$repeats: $_sum ($_prog)"
}

# measure_fio RECOVER: every fio cell of the config (RECOVER as measure's).
measure_fio() {
    recover_fn=$1 mtu=none
    for job in $FIO_JOBS; do
        rw=${job%:*} bs=${job#*:}
        for q in $(list "$fio_depths"); do
            k=1; while [ $k -le "$repeats" ]; do
                id=$(run_id fio --arg config "$cfg" --arg rw "$rw" --argjson bs "$bs" \
                    --argjson depth "$q" --argjson rep "$k")
                attempt "$id" "$cfg fio $rw $bs B depth $q, repeat $k/$repeats" fio_failed fio.json \
                    one_fio "$id" "$rw" "$bs" "$q" "$k"
                k=$((k + 1))
            done
        done
    done
}

run_fio_guest() {
    cfg=$1 restarts=0 guest_net=vhost-irqfd-mirror
    case $cfg in
    fs-*)
        # The tag the guest's fio CGI mounts; a file of the backing
        # file's size. The guest's CPU and the reply bound as under TCG:
        # a nested L1's virtiofsd can take seconds to answer.
        fs_share=$fio_file.share fs_sock=$fio_file.sock
        mkdir -p "$fs_share"
        [ -f "$fs_share/fio.img" ] || dd if=/dev/zero of="$fs_share/fio.img" bs=1M count="$fio_mib" 2>/dev/null ||
            { failed "$(run_id fio --arg config "$cfg")" no_shared_file; return; }
        guest_disks="--fs tag=kvmmio-fio,socket=$fs_sock,reply_timeout_ms=30000" ;;
    *)
        _eng=${cfg#blk-} _eng=${_eng%-*} _regs=${cfg##*-}
        guest_disks="--disk $fio_file,serial=kvmmio-fio,cache=writeback,engine=$_eng,regs=$_regs" ;;
    esac
    # A block device (L1's own disk) is a disk of the host: kvmmio takes it
    # only when told so (device=on).
    _tdev=''; [ ! -b "$tools" ] || _tdev=,device=on
    guest_disks="$guest_disks --disk $tools,ro=on,serial=kvmmio-tools$_tdev"
    guest_start "$cfg" || { guest_stop; guest_start "$cfg" ||
        { guest_stop; failed "$(run_id fio --arg config "$cfg")" guest_did_not_boot; return; }; }
    # fio once before the counted runs: its libraries come off the tools
    # disk now, not during a measurement.
    timeout 180 wget -q -O "$base.fio-warm-up" "http://$GUEST:8080/cgi-bin/fio?read+4096+1+1" 2>>"$base.ctl" ||
        say "$cfg: fio's warm-up run failed ($(tail -n 1 "$base.fio-warm-up" 2>/dev/null))"
    measure_fio guest_recover
    guest_stop
}

if [ -n "$tools" ] && [ -n "$fio_configs" ]; then
    [ -x "$tools_dir/fio" ] || die "the tools disk $tools has no /fio (build-initramfs.sh --tools-out makes it)"
    say "fio: $("$tools_dir/fio" --version 2>&1 | head -n 1); backing file $fio_file, $fio_mib MiB"
    fio_started=$(date +%s) fio_made=1
    dd if=/dev/zero of="$fio_file" bs=1M count="$fio_mib" 2>/dev/null || die "cannot write $fio_file ($fio_mib MiB)"
    for c in $(list "$fio_configs"); do
        case $c in
        host) cfg=host base=$out/fio-host; measure_fio no_second_try ;;
        *) run_fio_guest "$c" ;;
        esac
    done
    say "fio cells: $(( $(date +%s) - fio_started )) s"
else
    say "no --tools or no --fio-configs: no fio cells"
fi
# --- vsock: AF_VSOCK streams, host to itself and host to guest -----------------
# one_vsock ID DIR REP: one vsock_stream run for $seconds; the receiver's
# JSON is the record (bytes, seconds, bps), with the counter deltas
# around it for a guest. The guest's ends run through its vsock CGI.
VSOCK_GUEST_CID=3
# The ends of a run (one_vsock's $_to, $_f, $base, $gip): the receiver
# writes its JSON, the record, to $_f; the host's server listens on 5600,
# the guest's on 5601 (its vsock CGI).
vsock_recv_host() { timeout "$_to" vsock_stream server --port 5600 --timeout "$_to" --json >"$_f" 2>"$base.vsock.err"; }
vsock_recv_guest() { timeout "$_to" wget -q -O "$_f" "http://$gip:8080/cgi-bin/vsock?recv+$seconds" 2>>"$base.ctl"; }
vsock_send_host() {  # CID PORT
    timeout "$_to" vsock_stream client "$1" --port "$2" --seconds "$seconds" --timeout 30 >/dev/null 2>>"$base.vsock.err"
}
vsock_send_guest() { timeout "$_to" wget -q -O "$base.vsock.guest" "http://$gip:8080/cgi-bin/vsock?send+$seconds" 2>>"$base.ctl"; }
# vsock_transfer RECEIVER SENDER [ARG...]: RECEIVER in the background,
# then SENDER ARG...; a sender that fails ends the receiver.
vsock_transfer() {
    "$1" &
    _srv=$! _send=$2
    shift 2
    "$_send" "$@" || { kill "$_srv" 2>/dev/null; wait "$_srv" 2>/dev/null; return 1; }
    wait "$_srv"
}
one_vsock() {
    _f=$base.vsock.json _before='' _after='' _obefore=''
    rm -f "$_f"
    _to=$((seconds + 60))
    if [ "$cfg" = host ]; then
        vsock_transfer vsock_recv_host vsock_send_host 1 5600 || return 1
    else
        snap_before || return 1
        case $2 in
        g2h) vsock_transfer vsock_recv_host vsock_send_guest || return 1 ;;
        *) vsock_transfer vsock_recv_guest vsock_send_host "$VSOCK_GUEST_CID" 5601 || return 1 ;;
        esac
        snap_after || return 1
    fi
    counted || return 1
    record "$1" 'select(.bytes != null and .seconds != null and .bps != null and .bytes > 0) | {bytes, seconds, bps}' \
        '"\(.bps / 1e9 * 1000 | round / 1000) Gbit/s"' "$_f" || return 1
    progress
    say "$cfg vsock $2, repeat $3/$repeats: $_sum ($_prog)"
}
# measure_vsock RECOVER: every vsock cell of the config (RECOVER as
# measure's).
measure_vsock() {
    recover_fn=$1 mtu=none
    for d in $(list "$dirs"); do
        k=1; while [ $k -le "$repeats" ]; do
            id=$(run_id vsock --arg config "$cfg" --arg dir "$d" --argjson rep "$k")
            attempt "$id" "$cfg vsock $d, repeat $k/$repeats" vsock_failed vsock.err one_vsock "$id" "$d" "$k"
            k=$((k + 1))
        done
    done
}
if [ -n "$vsock_configs" ]; then
    need vsock_stream "build bench/vsock_stream (make bench) and put it on PATH"
    vsock_started=$(date +%s)
    for c in $(list "$vsock_configs"); do
        case $c in
        host)
            cfg=host base=$out/vsock-host
            if [ ! -e /sys/module/vsock_loopback ] && ! modprobe -q vsock_loopback 2>/dev/null; then
                say "host vsock: no vsock_loopback (modprobe vsock_loopback): no host cell"
                failed "$(run_id vsock --arg config host)" no_vsock_loopback
                continue
            fi
            measure_vsock no_second_try ;;
        *)
            cfg=$c restarts=0 guest_net=vhost-irqfd-mirror
            guest_disks="--vsock cid=$VSOCK_GUEST_CID"
            guest_start "$cfg" || { guest_stop; guest_start "$cfg" ||
                { guest_stop; failed "$(run_id vsock --arg config "$cfg")" guest_did_not_boot; continue; }; }
            measure_vsock guest_recover
            guest_stop ;;
        esac
    done
    guest_disks=''
    say "vsock cells: $(( $(date +%s) - vsock_started )) s"
fi

# completed KIND: how many runs of KIND completed.
completed() { jq -n --arg k "$1" '[inputs | select(.kind == $k and .failed == null)] | length' "$raw"; }
say "done: $(completed iperf) iperf3 runs, $(completed rr) latency runs, $(completed pps) packet-rate runs, $(completed fio) fio runs, $(completed vsock) vsock runs, $failures failed; $raw"
[ "$other_vms" = 0 ] || say "$other_vms runs had other VMs exiting beside the VMM's (see above): their cells' timings shared the host (--check cells fails them)"
[ "$failures" = 0 ]
