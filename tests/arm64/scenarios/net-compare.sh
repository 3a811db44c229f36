#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# net-compare: the main job's guest-versus-host network comparison in L1
# (bench/net-compare.sh does the work; scripts/main.sh runs this scenario
# with the full matrix and turns raw.jsonl into the report with net_report).
# Parameters (run.sh --env NAME=VALUE; lists comma-separated):
#   KVMMIO_BENCH_CONFIGS  default: NET_COMPARE_CONFIGS, the host and the five guest modes;
#                         the peer's (qemu-pci, qemu-mmio) need the tools disk
#   KVMMIO_BENCH_REPEATS  default 3
#   KVMMIO_BENCH_SECONDS  iperf3 seconds per run, default 5
#   KVMMIO_BENCH_PPS_SECONDS  udp_pps seconds per run, default 3
#   KVMMIO_BENCH_PPS_FLOWS  UDP flows per packet-rate run, default 1
#   KVMMIO_BENCH_CPUS     guest vCPUs, default 1
#   KVMMIO_BENCH_PIN      1: net-compare.sh --pin (default 0)
#   KVMMIO_BENCH_STREAMS  default 1,4
#   KVMMIO_BENCH_MTUS     default 1500,9000
#   KVMMIO_BENCH_MICRO    1: run the KVM-layer microbenchmark too (default 1)
#   KVMMIO_BENCH_G2G_CONFIGS  guest modes measured guest to guest, two guests
#                         on a bridge (net-compare.sh --g2g-configs; default
#                         none)
#   KVMMIO_BENCH_FIO_CONFIGS  the disk cells (net-compare.sh --fio-configs;
#                         default all); "none": no fio cells. They need the
#                         tools disk (run.sh --tools, KVMMIO_TOOLS_DEV)
#   KVMMIO_BENCH_FIO_SECONDS  fio seconds per run, default 5
#   KVMMIO_BENCH_FIO_DEPTHS   fio iodepths, default 1,32
#   KVMMIO_BENCH_GUEST_ARGS  more guest kernel command-line words, comma-
#                         separated (net-compare.sh --guest-args, which takes
#                         them space-separated), e.g. virtio_net.napi_tx=0
#   KVMMIO_BENCH_ORDER    rounds (default) or blocks (net-compare.sh --order)
#   KVMMIO_BENCH_CHECK    1: a test run (make check): every run must
#                         complete and every guest run must show counters
#                         that fit its mode; a GoogleTest-shaped verdict
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
# shellcheck source=bench/net-modes.sh
. "$KVMMIO_DIR/bin/net-modes.sh"
scenario_name=net-compare
require_dev /dev/kvm /dev/vhost-net /dev/net/tun

R=$KVMMIO_RESULTS/net-compare
configs=${KVMMIO_BENCH_CONFIGS:-$NET_COMPARE_CONFIGS}
g2g_configs=${KVMMIO_BENCH_G2G_CONFIGS:-none}
step "net-compare: ${KVMMIO_BENCH_REPEATS:-3} repeats of ${KVMMIO_BENCH_SECONDS:-5} s"
status=0
micro=''; [ "${KVMMIO_BENCH_MICRO:-1}" = 1 ] && micro=--micro
pin=''; [ "${KVMMIO_BENCH_PIN:-0}" = 1 ] && pin=--pin
fio_configs=${KVMMIO_BENCH_FIO_CONFIGS:-host,blk-io_uring-mirror,blk-io_uring-trap,blk-threads-mirror,blk-threads-trap}
# The tools disk: fio for the disk cells, QEMU for the peer's.
fio=''
case $fio_configs,$configs, in none,*qemu-*) ;; none,*) fio=none ;; esac
if [ "$fio" != none ]; then
    [ -b "${KVMMIO_TOOLS_DEV:-}" ] || fail_early="no tools disk in L1 (run.sh --tools; prepare.sh makes tools.img): no fio or QEMU cells"
    fio="--tools ${KVMMIO_TOOLS_DEV:-} --fio-configs $fio_configs --fio-seconds ${KVMMIO_BENCH_FIO_SECONDS:-5}"
    fio="$fio --fio-depths ${KVMMIO_BENCH_FIO_DEPTHS:-1,32}"
fi
[ "$fio" != none ] || fio=''
[ -z "${fail_early:-}" ] || { step "net-compare: $fail_early"; fio=''; }
start=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086 # $micro, $pin and $fio: options, words without spaces
NET_COMPARE_PREFIX="KVMMIO-STEP: $KVMMIO_SCENARIO_TAG" net-compare.sh --out "$R" --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" \
    --configs "$configs" --g2g-configs "$g2g_configs" \
    --repeats "${KVMMIO_BENCH_REPEATS:-3}" --order "${KVMMIO_BENCH_ORDER:-rounds}" --seconds "${KVMMIO_BENCH_SECONDS:-5}" \
    --pps-seconds "${KVMMIO_BENCH_PPS_SECONDS:-3}" --pps-flows "${KVMMIO_BENCH_PPS_FLOWS:-1}" \
    --cpus "${KVMMIO_BENCH_CPUS:-1}" \
    --streams "${KVMMIO_BENCH_STREAMS:-1,4}" --mtus "${KVMMIO_BENCH_MTUS:-1500,9000}" \
    --guest-args "$(echo "${KVMMIO_BENCH_GUEST_ARGS:-}" | tr ',' ' ')" $micro $pin $fio ||
    status=$?
secs=$(awk "BEGIN { print $(cut -d' ' -f1 /proc/uptime) - $start }")
[ "${KVMMIO_BENCH_CHECK:-0}" = 1 ] || exit $status

# --- as a test: what the raw records must show ------------------------------------
raw=$R/raw.jsonl
# runs KIND CONFIG [FILTER]: the completed KIND runs of CONFIG (JSON lines
# of raw.jsonl), FILTER (jq) applied to them as an array.
runs() {
    jq -rcn --arg k "$1" --arg c "$2" "[inputs | select(.kind == \$k and .config == \$c and .failed == null)] | ${3:-.[]}" "$raw"
}
msg=''
[ $status = 0 ] || msg="net-compare.sh exited $status: $(jq -n '[inputs | select(.failed)] | length' "$raw") failed runs"
for c in $(echo "$configs" | tr ',' ' '); do
    [ -n "$msg" ] || [ "$(runs iperf "$c" length)" -gt 0 ] || msg="no iperf3 result for $c"
    [ -n "$msg" ] || [ "$(runs rr "$c" length)" -gt 0 ] || msg="no latency result for $c"
    [ -n "$msg" ] || [ "$(runs pps "$c" 'map(select(.received > 0)) | length')" -gt 0 ] ||
        msg="no packet-rate result with packets received for $c"
    [ "$c" != host ] || continue
    # From outside every VMM alike (bench/outside-counters.sh, summed over
    # the iperf3 runs): KVM counted exits and the guest took interrupts;
    # with the register mirror not one exit to userspace and not one
    # context switch of kvmmio's own threads (the claim, seen from outside
    # the VMM); trapped registers exit to userspace; a VMM that relays or
    # serves the queue switches; QEMU's virtio-mmio relays vhost's
    # interrupts in its main loop (which also shows the count reads QEMU's
    # threads).
    # shellcheck disable=SC2016,SC2046 # a jq program ($k is jq's); five numbers
    set -- $(runs iperf "$c" 'def sum($k): map(.outside[$k] // 0) | add // 0;
        "\(map(select(.outside == null)) | length) \(sum("kvm_exits")) \(sum("kvm_mmio_exit_user")) \(sum("vmm_ctxt_switches")) \(sum("guest_irqs"))"')
    echo "net-compare $c, outside: kvm exits $2, to userspace $3, VMM context switches $4, guest irqs $5"
    [ -n "$msg" ] || [ "$1" = 0 ] || msg="$c: $1 iperf3 runs without outside counters"
    [ -n "$msg" ] || { [ "$2" -gt 0 ] && [ "$5" -gt 0 ]; } || msg="$c: outside counters read no KVM exit or no guest interrupt"
    case $c in
    vhost-irqfd-mirror) [ -n "$msg" ] || [ "$3$4" = 00 ] ||
        msg="$c: $3 exits to userspace and $4 VMM context switches during traffic, not 0 and 0 (the register mirror)" ;;
    vhost-irqfd) [ -n "$msg" ] || [ "$3" -gt 0 ] || msg="$c: no exit to userspace with trapped registers" ;;
    vhost-relay | user-* | qemu-mmio) [ -n "$msg" ] || [ "$4" -gt 0 ] || msg="$c: no VMM context switch, though the VMM relays" ;;
    esac
    is_peer=0; case $c in qemu-*) is_peer=1 ;; esac
    [ $is_peer = 0 ] || continue
    # Per mode, summed over its runs: who carried the traffic.
    # shellcheck disable=SC2016 # a jq program: $k is jq's
    sums=$(runs iperf "$c" 'def sum($k): map(.counters[$k] // 0) | add // 0;
        "\(sum("trapped")) \(sum("polled")) \(sum("injected")) \(sum("relayed")) \(sum("guest_irqs"))"')
    # shellcheck disable=SC2086 # five numbers
    set -- $sums
    echo "net-compare $c: trapped $1 polled $2 injected $3 relayed $4 guest irqs $5"
    # The rule net-modes applies too (bench/net-modes.sh): vhost+irqfd leaves
    # the VMM out entirely.
    [ -n "$msg" ] || msg=$(net_mode_misfit "$c" "$@")
done
# The register mirror: the same traffic as vhost-irqfd with (almost) no vCPU
# exits left, where vhost-irqfd pays two per guest interrupt (the
# InterruptStatus read and the ACK). Snapshots interrupt the vCPUs, so not
# exactly zero: under a tenth of the trapped mode's.
exits_of() { runs iperf "$1" 'map(.counters.vcpu_exits // 0) | add // 0'; }
case ,$configs, in
*,vhost-irqfd,*vhost-irqfd-mirror,*)
    trapped_exits=$(exits_of vhost-irqfd) mirror_exits=$(exits_of vhost-irqfd-mirror)
    echo "net-compare: vCPU exits during traffic: vhost-irqfd $trapped_exits, vhost-irqfd-mirror $mirror_exits"
    [ -n "$msg" ] || [ "$trapped_exits" -gt 0 ] || msg="vhost-irqfd: no vCPU exits counted (is the counter read?)"
    [ -n "$msg" ] || [ $((mirror_exits * 10)) -lt "$trapped_exits" ] ||
        msg="vhost-irqfd-mirror: $mirror_exits vCPU exits during traffic, not under a tenth of vhost-irqfd's $trapped_exits"
    ;;
esac
# Guest to guest: both directions, latency and packet rate for each mode;
# the counters of both VMMs and guests fit the mode, and with the mirror
# not one VMM wake-up (vCPU exit or event-loop wake-up) in either VMM.
[ "$g2g_configs" = none ] || for m in $(echo "$g2g_configs" | tr ',' ' '); do
    c=g2g-$m
    for d in a2b b2a; do
        [ -n "$msg" ] || [ "$(runs iperf "$c" "map(select(.dir == \"$d\")) | length")" -gt 0 ] || msg="no iperf3 result for $c $d"
        [ -n "$msg" ] || [ "$(runs pps "$c" "map(select(.dir == \"$d\" and .received > 0)) | length")" -gt 0 ] ||
            msg="no packet-rate result with packets received for $c $d"
    done
    [ -n "$msg" ] || [ "$(runs rr "$c" length)" -gt 0 ] || msg="no latency result for $c"
    # shellcheck disable=SC2016,SC2046 # a jq program ($k is jq's); seven numbers
    set -- $(runs iperf "$c" 'def sum($k): map(.counters[$k] // 0) | add // 0;
        "\(sum("trapped")) \(sum("polled")) \(sum("injected")) \(sum("relayed")) \(sum("guest_irqs")) \(sum("wakeups")) \(map(.bytes) | add // 0)"')
    echo "net-compare $c (both VMMs): trapped $1 polled $2 injected $3 relayed $4 guest irqs $5 wake-ups $6 over $7 bytes"
    [ -n "$msg" ] || msg=$(net_mode_misfit "$m" "$1" "$2" "$3" "$4" "$5" | sed "s/^/$c: /")
    case $m in *-mirror)
        [ -n "$msg" ] || [ "$6" = 0 ] || msg="$c: $6 VMM wake-ups during $7 bytes guest to guest, not 0 (the register mirror)" ;;
    esac
done
[ -n "$msg" ] || [ "${KVMMIO_BENCH_MICRO:-1}" != 1 ] || grep -q '"kind":"micro"' "$raw" || msg="no microbenchmark record"
# The disk cells: each fio config has its runs, with requests done; on the
# register mirror a request costs no vCPU exit, so none at all during them.
[ -n "$msg" ] || [ -z "${fail_early:-}" ] || msg=$fail_early
if [ "$fio_configs" != none ]; then
    for c in $(echo "$fio_configs" | tr ',' ' '); do
        [ -n "$msg" ] || [ "$(runs fio "$c" 'map(select(.ios > 0)) | length')" -gt 0 ] || msg="no fio result with requests done for $c"
        [ "$c" != host ] || continue
        # shellcheck disable=SC2016,SC2046 # a jq program ($k is jq's); five numbers
        set -- $(runs fio "$c" 'def sum($k): map(.counters[$k] // 0) | add // 0;
            "\(map(.ios) | add // 0) \(sum("vcpu_exits")) \(sum("trapped")) \(sum("polled")) \(sum("guest_irqs"))"')
        echo "net-compare $c: fio requests $1, vCPU exits $2, trapped $3, polled $4, guest irqs $5"
        case $c in
        *-mirror) [ -n "$msg" ] || [ "$2" = 0 ] || msg="$c: $2 vCPU exits during $1 fio requests, not 0 (the register mirror)" ;;
        *-trap) [ -n "$msg" ] || [ "$2" -gt 0 ] || msg="$c: no vCPU exits during $1 fio requests with trapped registers" ;;
        esac
    done
fi
record all-modes "$secs" "$msg"
write_cases net-compare
