#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# startup: kvmmio's start-up to its guest's init against QEMU's and the
# floor's in one L1 boot (bench/startup.sh: bench/boot_floor --run, `kvmmio
# run` and QEMU from the tools disk interleaved, the same L2 kernel and
# initramfs, 128 MiB, 1 vCPU, one vhost-net device for kvmmio and QEMU). A
# benchmark, not a test: its tables are docs/benchmarks.md's "Start-up";
# scripts/main.sh runs it after net-compare.
#   KVMMIO_STARTUP_REPEATS  interleaved repeats (default: bench/matrix.sh's)
#   KVMMIO_STARTUP_RNG=1    also kvmmio with its virtio-rng device
#                           (startup.sh --rng-too): the entropy device's
#                           cost to the boot
#   KVMMIO_STARTUP_VMMS     NAME=FILE,...: time these kvmmio builds side by
#                           side instead of L1's own (startup.sh --vmm), each
#                           FILE on the squashfs image given as run.sh's
#                           first --disk (serial kvmmio-disk0), e.g. a
#                           change's before and after:
#     mksquashfs before/kvmmio after/kvmmio-after vmms.img  (static arm64 builds)
#     scripts/arm64/run.sh --scenario startup --gic 2 --disk vmms.img \
#         --env KVMMIO_STARTUP_VMMS=before=kvmmio,after=kvmmio-after ...
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
# shellcheck source=bench/matrix.sh
. "$KVMMIO_DIR/bin/matrix.sh"
require_dev /dev/kvm /dev/vhost-net
vmms=''
if [ -n "${KVMMIO_STARTUP_VMMS:-}" ]; then
    dev=''
    for f in /sys/block/vd*/serial; do
        [ "$(cat "$f" 2>/dev/null)" = kvmmio-disk0 ] && { f=${f%/serial}; dev=/dev/${f##*/}; }
    done
    [ -n "$dev" ] || fail "KVMMIO_STARTUP_VMMS: no disk with serial kvmmio-disk0 (run.sh --disk IMAGE)"
    mkdir -p /vmms
    mount -t squashfs -o ro "$dev" /vmms || fail "KVMMIO_STARTUP_VMMS: cannot mount $dev (a squashfs image?)"
    for v in $(echo "$KVMMIO_STARTUP_VMMS" | tr ',' ' '); do
        [ -x "/vmms/${v#*=}" ] || fail "KVMMIO_STARTUP_VMMS: no program ${v#*=} on $dev"
        vmms="$vmms --vmm ${v%%=*}=/vmms/${v#*=}"
    done
fi
rng_too=''
[ "${KVMMIO_STARTUP_RNG:-0}" != 1 ] || rng_too=--rng-too
# QEMU from the tools disk (run.sh attaches it; L1 mounts it at /tools).
[ -x /tools/qemu-system-aarch64 ] || fail "no /tools/qemu-system-aarch64: the start-up table needs the tools disk (run.sh --tools; prepare.sh makes tools.img)"
step "start-up: kvmmio against QEMU and boot_floor, to the guest's init, ${KVMMIO_STARTUP_REPEATS:-$MATRIX_STARTUP_REPEATS} repeats, vGICv$KVMMIO_L1_GIC"
# shellcheck disable=SC2086 # $vmms: options, words without spaces
startup.sh --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" --out "$KVMMIO_RESULTS" \
    --repeats "${KVMMIO_STARTUP_REPEATS:-$MATRIX_STARTUP_REPEATS}" --gic "$KVMMIO_L1_GIC" --tap kvmstart0 \
    --qemu /tools/qemu-system-aarch64 $vmms $rng_too ||
    fail "startup.sh failed (status $?)"
