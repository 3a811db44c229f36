#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds kvmmio's libFuzzer targets with clang (ASan + UBSan) and runs each
# for a bounded time on its committed corpus. Exits non-zero when a fuzzer
# finds a crash, a sanitizer report, a violated invariant, an input that
# takes more than TIMEOUT seconds, or memory beyond RSS_LIMIT MiB (unbounded
# time or memory per input is a finding); the input that did it is left in
# BUILDDIR/artifacts/TARGET/.
#
#   scripts/fuzz.sh [SECONDS] [--update-corpus]     (default 60 s per target)
#
# Targets (fuzz/*.cc, corpora in fuzz/corpus/TARGET/):
#   virtio_mmio   the transport and split virtqueue, behind a small device
#   device        the real devices on one MMIO bus: the PL011, virtio-net with
#                 the userspace backend on the socketpair stand-in of a tap,
#                 virtio-console, virtio-rng and virtio-vsock (without its
#                 vhost-vsock backend)
#   block         virtio-blk on a small image file, with its I/O worker
#   control_request  the control socket's request parser and dispatcher
#                 (--api-socket), behind a fake machine
#   vhost_user    the vhost-user front end's set-up against a backend whose
#                 every reply is the input
# New inputs are collected in BUILDDIR/corpus/TARGET, not in the repository;
# --update-corpus merges the interesting ones into fuzz/corpus/TARGET/.
# BUILDDIR is $KVMMIO_FUZZ_BUILD, default build-fuzz in the repository;
# KVMMIO_FUZZ_RSS_LIMIT_MB (512) and KVMMIO_FUZZ_TIMEOUT (10) set the bounds.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
seconds=60 update=0
for a in "$@"; do
  case $a in
    --update-corpus) update=1 ;;
    -h | --help) sed -n '2,/^# KVMMIO_FUZZ_RSS_LIMIT_MB/p' "$0"; exit 0 ;;
    *[!0-9]* | "") echo "fuzz.sh: unknown argument $a (see --help)" >&2; exit 2 ;;
    *) seconds=$a ;;
  esac
done
build=${KVMMIO_FUZZ_BUILD:-$src/build-fuzz}
rss_limit=${KVMMIO_FUZZ_RSS_LIMIT_MB:-512}
timeout=${KVMMIO_FUZZ_TIMEOUT:-10}
cxx=${CLANGXX:-clang++}
command -v "$cxx" >/dev/null ||
  { echo "fuzz.sh: $cxx missing: apt-get install clang libclang-rt-dev (scripts/install-deps.sh does)" >&2; exit 2; }

# The library sources each target reaches; no KVM objects (notify_fd_source.cc
# and kvm_mmio_slot.cc need a Vm, and the targets trap every notification).
common=("$src/tests/virtio/mmio_driver.cc" "$src/kvm/guest_memory.cc" "$src"/base/*.cc)
for f in "$src"/hw/virtio/*.cc; do
  case $(basename "$f") in notify_fd_source.cc | kvm_mmio_slot.cc) ;; *) common+=("$f") ;; esac
done
sources_of() {
  case $1 in
    virtio_mmio) echo "$src/fuzz/virtio_mmio_fuzz.cc" "${common[@]}" ;;
    device) echo "$src/fuzz/device_fuzz.cc" "${common[@]}" "$src/kvm/mmio_bus.cc" \
              "$src"/hw/net/*.cc "$src"/hw/console/*.cc "$src"/hw/rng/*.cc "$src"/hw/vhost/*.cc \
              "$src"/hw/vsock/*.cc "$src"/hw/rtc/*.cc "$src"/hw/gpio/*.cc ;;
    block) echo "$src/fuzz/block_fuzz.cc" "${common[@]}" "$src/tests/virtio/driver_ring.cc" \
              "$src"/hw/block/*.cc ;;
    # The fake machine's stats may read the footprint and press a power key.
    control_request) echo "$src/fuzz/control_request_fuzz.cc" "$src"/base/*.cc \
              "$src/vmm/control/control_protocol.cc" "$src/vmm/stats/stats.cc" "$src/vmm/stats/footprint.cc" \
              "$src/vmm/machine/power_key.cc" "$src/hw/gpio/pl061.cc" ;;
    vhost_user) echo "$src/fuzz/vhost_user_fuzz.cc" "$src"/base/*.cc "$src/kvm/guest_memory.cc" \
              "$src"/hw/vhost/*.cc ;;
  esac
}

# build_targets TARGET...: every source is is compiled once, into BUILDDIR/obj (the targets share the
# library's), all of them in parallel, by make with the compiler's own
# dependency files: a header change rebuilds what includes it, nothing else.
# Objects get -fsanitize=fuzzer-no-link; the link adds libFuzzer's main.
# shellcheck disable=SC2054 # -fsanitize=a,b: one word with commas
flags=(-std=c++20 -O1 -gline-tables-only -Wall -Wextra -Werror
  -fsanitize=address,undefined -fno-sanitize-recover=undefined
  -I"$src/include" -I"$src" -DVIRTIO_RING_NO_LEGACY=1)
# shellcheck disable=SC2016 # $(CXX), $<, $@: make's, not the shell's
build_targets() {
  local t s mk=$build/targets.mk objs
  mkdir -p "$build/obj"
  {
    printf 'CXX := %s\nFLAGS := %s\n' "$cxx" "${flags[*]}"
    printf '%s/obj/%%.o: %s/%%\n\t@mkdir -p $(@D)\n\t$(CXX) $(FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@\n' "$build" "$src"
    for t in "$@"; do
      objs=()
      for s in $(sources_of "$t"); do objs+=("$build/obj/${s#"$src"/}.o"); done
      printf '%s/%s_fuzz: %s\n\t$(CXX) $(FLAGS) -fsanitize=fuzzer $^ -o $@ -lpthread -luring\n' \
        "$build" "$t" "${objs[*]}"
      printf -- '-include %s\n' "${objs[@]/%.o/.d}"
    done
  } >"$mk"
  echo "fuzz.sh: building ${*/%/_fuzz} in $build"
  local -a bins=()
  for t in "$@"; do bins+=("$build/${t}_fuzz"); done
  make -s -f "$mk" -j"$(nproc)" "${bins[@]}"
}

# fuzz_target TARGET: runs TARGET's fuzzer for the time given, prints a
# summary; status 1 on a finding. The targets run side by side (a libFuzzer
# run is one process: one target alone keeps one core busy).
fuzz_target() {
  local target=$1 seeds bin s
  seeds=$src/fuzz/corpus/$target
  mkdir -p "$build/corpus/$target" "$build/artifacts/$target" "$seeds"
  bin=$build/${target}_fuzz
  echo "fuzz.sh: $target: fuzzing for ${seconds}s from $(ls "$seeds" | wc -l) seeds (rss limit ${rss_limit} MiB, ${timeout} s per input)"
  # A small ASan quarantine: the RSS limit then measures kvmmio, not freed
  # memory ASan holds back.
  s=0
  ASAN_OPTIONS=quarantine_size_mb=64:malloc_context_size=10 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$bin" -max_total_time="$seconds" -rss_limit_mb="$rss_limit" -timeout="$timeout" \
    -close_fd_mask=2 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$target/" "$build/corpus/$target" "$seeds" >"$build/$target.log" 2>&1 || s=$?
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|==[0-9]+==|stat::(number_of_executed_units|new_units_added|peak_rss)|fuzz invariant|SUMMARY|Done )' \
    "$build/$target.log" | sed "s/^/  $target: /" || true
  if [ "$s" -ne 0 ]; then
    echo "fuzz.sh: $target FAILED (status $s); see $build/$target.log and $build/artifacts/$target/"
    return 1
  fi
  if [ $update = 1 ]; then
    rm -rf "$build/merged/$target"
    mkdir -p "$build/merged/$target"
    "$bin" -merge=1 -close_fd_mask=2 "$build/merged/$target" "$seeds" "$build/corpus/$target" >/dev/null 2>&1
    cp -n "$build/merged/$target"/* "$seeds"/ 2>/dev/null || true
    echo "fuzz.sh: $target corpus now $(ls "$seeds" | wc -l) inputs"
  fi
  echo "fuzz.sh: $target: no finding in ${seconds}s"
}

# The targets at once, each one's output kept apart and printed whole.
targets=(virtio_mmio device block control_request vhost_user) pids=()
mkdir -p "$build"
build_targets "${targets[@]}" || { echo "fuzz.sh: the fuzz targets did not build" >&2; exit 1; }
for target in "${targets[@]}"; do
  fuzz_target "$target" >"$build/$target.summary" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  wait "${pids[i]}" || status=1
  cat "$build/${targets[i]}.summary"
done
exit $status
