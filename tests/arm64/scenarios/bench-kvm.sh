#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench-kvm: the KVM-layer cost benchmark on real KVM/ARM in L1 (used by
# scripts/main.sh). Under TCG only the ratios carry over to hardware.
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
step "kvm_notify_bench on vGICv$KVMMIO_L1_GIC"
kvm_notify_bench --stores 5000 --irqs 500 --json "$KVMMIO_RESULTS/kvm-bench.json" \
    >"$KVMMIO_RESULTS/kvm-bench.txt"
cat "$KVMMIO_RESULTS/kvm-bench.txt"
