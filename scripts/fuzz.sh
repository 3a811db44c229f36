#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the virtio-mmio libFuzzer target with clang (ASan + UBSan) and runs
# it for a bounded time on the committed corpus. Exits non-zero when the
# fuzzer finds a crash, a sanitizer report or a violated invariant; the input
# that did it is left in BUILDDIR/artifacts/.
#
#   scripts/fuzz.sh [SECONDS] [--update-corpus]     (default 60 s)
#
# New inputs are collected in BUILDDIR/corpus, not in the repository;
# --update-corpus merges the interesting ones into fuzz/corpus/virtio_mmio/.
# BUILDDIR is $KVMMIO_FUZZ_BUILD, default build-fuzz in the repository.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
seconds=60 update=0
for a in "$@"; do
  case $a in
    --update-corpus) update=1 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *[!0-9]* | "") echo "fuzz.sh: unknown argument $a (see --help)" >&2; exit 2 ;;
    *) seconds=$a ;;
  esac
done
build=${KVMMIO_FUZZ_BUILD:-$src/build-fuzz}
seeds=$src/fuzz/corpus/virtio_mmio
cxx=${CLANGXX:-clang++}
command -v "$cxx" >/dev/null ||
  { echo "fuzz.sh: $cxx missing: apt-get install clang libclang-rt-14-dev" >&2; exit 2; }

mkdir -p "$build/corpus" "$build/artifacts"
bin=$build/virtio_mmio_fuzz
# The library sources the target reaches; no KVM objects (notify_fd_source.cc
# needs a Vm, and the fuzzer traps every notification).
sources=(
  "$src/fuzz/virtio_mmio_fuzz.cc"
  "$src/tests/virtio/mmio_driver.cc"
  "$src/kvm/guest_memory.cc" "$src/base/log.cc" "$src/base/event_fd.cc"
  "$src/base/event_loop.cc" "$src/base/device_lock.cc"
)
for f in "$src"/hw/virtio/*.cc; do
  [ "$(basename "$f")" = notify_fd_source.cc ] || sources+=("$f")
done
newest=$(ls -t "${sources[@]}" "$src"/include/kvmmio/*.h "$src"/include/kvmmio/base/*.h "$src"/include/kvmmio/virtio/*.h "$src"/hw/virtio/*.h | head -1)
if [ ! -x "$bin" ] || [ "$newest" -nt "$bin" ]; then
  echo "fuzz.sh: building $bin"
  "$cxx" -std=c++20 -O1 -g -Wall -Wextra -Werror \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/include" -DVIRTIO_RING_NO_LEGACY=1 "${sources[@]}" -o "$bin"
fi

echo "fuzz.sh: fuzzing for ${seconds}s from $(ls "$seeds" | wc -l) seeds"
set +e
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$bin" -max_total_time="$seconds" -close_fd_mask=2 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/" "$build/corpus" "$seeds" >"$build/fuzz.log" 2>&1
status=$?
set -e
grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|==[0-9]+==|stat::(number_of_executed_units|new_units_added|peak_rss)|fuzz invariant|SUMMARY|Done )' \
  "$build/fuzz.log" || true
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: FAILED (status $status); see $build/fuzz.log and $build/artifacts/" >&2
  exit 1
fi
if [ $update = 1 ]; then
  mkdir -p "$build/merged"
  "$bin" -merge=1 -close_fd_mask=2 "$build/merged" "$seeds" "$build/corpus" >/dev/null 2>&1
  cp -n "$build/merged"/* "$seeds"/ 2>/dev/null || true
  echo "fuzz.sh: corpus now $(ls "$seeds" | wc -l) inputs"
fi
echo "fuzz.sh: no crash in ${seconds}s"
