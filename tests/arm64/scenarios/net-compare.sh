#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# net-compare: the main job's guest-versus-host network comparison in L1
# (bench/net-compare.sh does the work; scripts/main.sh runs this scenario
# with the full matrix and turns raw.jsonl into the report with net_report).
# Parameters (run.sh --env NAME=VALUE; lists comma-separated), each
# net-compare.sh's option of the same name; unset, the default is
# bench/matrix.sh's (MATRIX_*), the one place each is declared:
#   KVMMIO_BENCH_CONFIGS  default: NET_COMPARE_CONFIGS, the host and the five guest modes;
#                         the peer's (qemu-pci, qemu-mmio) need the tools disk
#   KVMMIO_BENCH_REPEATS, _SECONDS, _PPS_SECONDS, _PPS_FLOWS, _STREAMS,
#   _MTUS, _ORDER         --repeats, --seconds, ... (_ORDER: rounds or blocks)
#   KVMMIO_BENCH_CPUS     guest vCPUs (--cpus)
#   KVMMIO_BENCH_PIN      1: net-compare.sh --pin (default 0)
#   KVMMIO_BENCH_MICRO    1: run the KVM-layer microbenchmark too (default 1)
#   KVMMIO_BENCH_G2G_CONFIGS  guest modes measured guest to guest, two guests
#                         on a bridge (net-compare.sh --g2g-configs; default
#                         none)
#   KVMMIO_BENCH_FIO_CONFIGS, _FIO_SECONDS, _FIO_DEPTHS  the disk cells
#                         (--fio-configs ...); "none": no fio cells. They
#                         need the tools disk (run.sh --tools, KVMMIO_TOOLS_DEV)
#   KVMMIO_BENCH_VSOCK_CONFIGS  the vsock cells (--vsock-configs); "none":
#                         no vsock cells
#   KVMMIO_BENCH_GUEST_ARGS  more guest kernel command-line words, comma-
#                         separated (net-compare.sh --guest-args, which takes
#                         them space-separated), e.g. virtio_net.napi_tx=0
#   KVMMIO_BENCH_CHECK    1: a test run (make check): every run must
#                         complete and every guest run must show counters
#                         that fit its mode; a GoogleTest-shaped verdict
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
# shellcheck source=bench/net-modes.sh
. "$KVMMIO_DIR/bin/net-modes.sh"
# shellcheck source=bench/matrix.sh
. "$KVMMIO_DIR/bin/matrix.sh"
scenario_name=net-compare
require_dev /dev/kvm /dev/vhost-net /dev/net/tun

R=$KVMMIO_RESULTS/net-compare
configs=${KVMMIO_BENCH_CONFIGS:-$NET_COMPARE_CONFIGS}
g2g_configs=${KVMMIO_BENCH_G2G_CONFIGS:-none}
repeats=${KVMMIO_BENCH_REPEATS:-$MATRIX_REPEATS} seconds=${KVMMIO_BENCH_SECONDS:-$MATRIX_SECONDS}
streams=${KVMMIO_BENCH_STREAMS:-$MATRIX_STREAMS} mtus=${KVMMIO_BENCH_MTUS:-$MATRIX_MTUS}
fio_depths=${KVMMIO_BENCH_FIO_DEPTHS:-$MATRIX_FIO_DEPTHS}
step "net-compare: $repeats repeats of $seconds s"
status=0
micro=''; [ "${KVMMIO_BENCH_MICRO:-1}" = 1 ] && micro=--micro
pin=''; [ "${KVMMIO_BENCH_PIN:-0}" = 1 ] && pin=--pin
fio_configs=${KVMMIO_BENCH_FIO_CONFIGS:-$MATRIX_FIO_CONFIGS}
vsock_configs=${KVMMIO_BENCH_VSOCK_CONFIGS:-$MATRIX_VSOCK_CONFIGS}
# The tools disk: fio for the disk cells, QEMU for the peer's.
fio=''
case $fio_configs,$configs, in none,*qemu-*) ;; none,*) fio=none ;; esac
if [ "$fio" != none ]; then
    [ -b "${KVMMIO_TOOLS_DEV:-}" ] || fail_early="no tools disk in L1 (run.sh --tools; prepare.sh makes tools.img): no fio or QEMU cells"
    fio="--tools ${KVMMIO_TOOLS_DEV:-} --fio-configs $fio_configs --fio-seconds ${KVMMIO_BENCH_FIO_SECONDS:-$MATRIX_FIO_SECONDS}"
    fio="$fio --fio-depths $fio_depths"
fi
[ "$fio" != none ] || fio=''
[ -z "${fail_early:-}" ] || { step "net-compare: $fail_early"; fio=''; }
start=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086 # $micro, $pin and $fio: options, words without spaces
NET_COMPARE_PREFIX="KVMMIO-STEP: $KVMMIO_SCENARIO_TAG" net-compare.sh --out "$R" --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" \
    --configs "$configs" --g2g-configs "$g2g_configs" \
    --repeats "$repeats" --order "${KVMMIO_BENCH_ORDER:-$MATRIX_ORDER}" --seconds "$seconds" \
    --pps-seconds "${KVMMIO_BENCH_PPS_SECONDS:-$MATRIX_PPS_SECONDS}" --pps-flows "${KVMMIO_BENCH_PPS_FLOWS:-$MATRIX_PPS_FLOWS}" \
    --cpus "${KVMMIO_BENCH_CPUS:-$MATRIX_GUEST_CPUS}" \
    --streams "$streams" --mtus "$mtus" --vsock-configs "$vsock_configs" \
    --guest-args "$(echo "${KVMMIO_BENCH_GUEST_ARGS:-}" | tr ',' ' ')" $micro $pin $fio ||
    status=$?
secs=$(awk "BEGIN { print $(cut -d' ' -f1 /proc/uptime) - $start }")
[ "${KVMMIO_BENCH_CHECK:-0}" = 1 ] || exit $status

# --- as a test: what the raw records must show ------------------------------------
# net-compare.sh --check modes (the checks are bench/net_check's, a
# platform binary in /kvmmio/bin, which tests/report_tests and
# tests/bench/net-compare-check.test run on planted records):
# every cell has a run that succeeded, the outside counters are readable
# (null is never taken for 0: a mirror whose exits to userspace could not
# be read has not shown 0), and each mode's counters fit it. One line per
# shortfall; the case's message holds them all.
raw=$R/raw.jsonl
msg=''
[ $status = 0 ] || msg="net-compare.sh exited $status (its failed runs are in $raw)"
micro_check=''; [ "${KVMMIO_BENCH_MICRO:-1}" = 1 ] && micro_check=--micro
# The fio cells were run only with the tools disk.
check_fio=$fio_configs; [ -z "${fail_early:-}" ] || check_fio=none
# shellcheck disable=SC2086 # $micro_check: an option or nothing
shortfalls=$(net-compare.sh --check modes --out "$R" --configs "$configs" --g2g-configs "$g2g_configs" \
    --fio-configs "$check_fio" --fio-depths "$fio_depths" --vsock-configs "$vsock_configs" \
    --streams "$streams" --mtus "$mtus" $micro_check) || true
while IFS= read -r l; do
    [ -z "$l" ] || msg="${msg:+$msg; }$l"
done <<EOF
$shortfalls
EOF
[ -z "${fail_early:-}" ] || msg="${msg:+$msg; }$fail_early"
record all-modes "$secs" "$msg"
write_cases net-compare
