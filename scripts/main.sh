#!/usr/bin/env bash
# The main job. Today: the KVM-layer cost benchmark (notify by ioeventfd vs
# MMIO exit, interrupt by irqfd vs a relay thread), on this machine's
# /dev/kvm and, when this machine is not arm64, on real KVM/ARM nested in
# qemu-system-aarch64. Results land in results/<date>/.
# (The guest-versus-host iperf comparison replaces this when virtio-net lands.)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${KVMMIO_RESULTS_DIR:-$src/results/$(date +%Y%m%d-%H%M%S)}
build=${KVMMIO_BUILD:-$src/build}
mkdir -p "$out"

"$src/scripts/install-deps.sh"
cd "$src" && autoreconf -fi
mkdir -p "$build" && cd "$build"
[ -f Makefile ] || "$src/configure" -q
make -j"$(nproc)" bench

echo "== KVM-layer costs on this machine ($(uname -m))"
./bench/kvm_notify_bench --json "$out/kvm-bench-$(uname -m).json" | tee "$out/kvm-bench-$(uname -m).txt"

if [ "$(uname -m)" != aarch64 ]; then
  echo "== KVM-layer costs on real KVM/ARM (nested under qemu-system-aarch64, TCG)"
  "$src/scripts/arm64/prepare.sh" "$build/arm64-platform"
  for gic in 3 2; do
    "$src/scripts/arm64/run.sh" --scenario bench-kvm --gic "$gic" --quiet \
      --initramfs "$build/arm64-platform/l1-initramfs.cpio.gz" --results "$out/arm64-gicv$gic"
    cat "$out/arm64-gicv$gic/kvm-bench.txt"
  done
fi
echo "== results in $out"
