#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# smoke: the arm64 test platform itself. Checks inside L1 that KVM, vhost-net,
# tun and the L2 payload are there, and writes smoke.txt to the results.
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"

step "KVM: /dev/kvm"
require_dev /dev/kvm

step "vhost-net and tun: /dev/vhost-net, /dev/net/tun"
require_dev /dev/vhost-net /dev/net/tun

step "L1 runs on GICv$KVMMIO_L1_GIC with KVM's vGIC up (/proc/interrupts)"
grep -q "GICv$KVMMIO_L1_GIC .* vgic\$" /proc/interrupts ||
    fail "no GICv$KVMMIO_L1_GIC vgic maintenance interrupt in /proc/interrupts"

step "L2 payload: /l2/Image, /l2/initramfs"
for f in "$KVMMIO_L2/Image" "$KVMMIO_L2/initramfs"; do
    [ -s "$f" ] || fail "missing or empty $f"
done

step "dynamic arm64 programs run: iperf3 --version"
iperf3 --version >/dev/null || fail "iperf3 does not run (libraries or loader missing?)"

step "writing $KVMMIO_RESULTS/smoke.txt"
{
    uname -a
    echo "KVMMIO_L1_GIC=$KVMMIO_L1_GIC"
    iperf3 --version | head -n 1
    head -n 8 /proc/interrupts
} >"$KVMMIO_RESULTS/smoke.txt"
