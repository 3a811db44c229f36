#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The whole kvmmio test suite, from a fresh clone on Debian 12:
#   1. installs the build and test dependencies (scripts/install-deps.sh),
#   2. builds natively with warnings as errors,
#   3. make check: unit tests, the KVM-layer tests on this machine's
#      /dev/kvm, and (on x86-64) the arm64 build of the same tests run on
#      real KVM/ARM nested in qemu-system-aarch64, with L1 on GICv3 and GICv2,
#   4. line coverage of the host tests (scripts/coverage.sh: a --coverage
#      build, gcovr; fails below the project's floor),
#   5. make distcheck (tarball, VPATH build, install, uninstall),
#   6. fuzzes the virtio-mmio transport and the real devices for a bounded
#      time each (scripts/fuzz.sh, clang with ASan/UBSan, an RSS limit and a
#      per-input timeout; $KVMMIO_FUZZ_SECONDS per target, default 60),
#   7. rehearses the board path (scripts/board-rehearsal.sh, as root on an
#      x86-64 host): a Debian 12 arm64 root booted as an arm64 KVM host
#      under qemu-system-aarch64 on GICv3, a Debian 13 one on GICv2, each
#      runs `scripts/main.sh --quick` there, offline, with a build carried
#      in ($KVMMIO_BOARD_FLAGS passes options, e.g. "--board trixie:3"),
#   8. prints where the real-KVM coverage came from, then one closing line:
#      "N passed, N failed, N skipped" over every test case.
#
# The host's /dev/kvm is optional: where it is absent the host KVM tests skip
# with that one reason; where it exists it must run a guest, or they fail.
# Under CI (CI=true) or with --strict the arm64 platform must run: a skip
# for want of it (no QEMU, no cross compiler) is a failure.
#
# The rehearsal skips, saying why, where the host cannot make its arm64
# root (not root, or no binfmt_misc of a user namespace's own: Linux < 6.7).
#
#   scripts/test.sh [--strict] [--no-distcheck] [--no-fuzz] [--no-coverage]
#                   [--no-board]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
strict=${CI:-false} distcheck=1 fuzz=1 coverage=1 board=1
for a in "$@"; do
  case $a in
    --strict) strict=true ;;
    --no-distcheck) distcheck=0 ;;
    --no-fuzz) fuzz=0 ;;
    --no-coverage) coverage=0 ;;
    --no-board) board=0 ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option $a (see --help)" >&2; exit 2 ;;
  esac
done
build=${KVMMIO_BUILD:-$src/build}
jobs=$(nproc)

# Phase times, printed as each phase ends and again at the close.
phase_start=$SECONDS phase_times=()
phase_done() {
  local t=$((SECONDS - phase_start))
  phase_times+=("$(printf '%-16s %4d s' "$1" "$t")")
  echo "test.sh: phase '$1' took $t s"
  phase_start=$SECONDS
}

"$src/scripts/install-deps.sh"
phase_done dependencies

cd "$src"
autoreconf -fi
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$src/configure" --enable-werror -q
make -j"$jobs"
phase_done build

export GTEST_OUTPUT="json:$build/tests/results/"
rm -rf "$build/tests/results" "$build/tests/arm64/results"
if [ "$strict" = true ]; then
  export KVMMIO_REQUIRE_ARM64=1
fi
check_status=0
make -j"$jobs" check || check_status=$?
[ $check_status -eq 0 ] || { cat tests/test-suite.log 2>/dev/null | tail -n 80; }
unset GTEST_OUTPUT
phase_done "make check"

coverage_status=0 coverage_line=''
if [ $coverage = 1 ]; then
  coverage_line=$("$src/scripts/coverage.sh" "${build}-coverage") || coverage_status=$?
  echo "$coverage_line"
  phase_done coverage
fi

dist_status=0
if [ $distcheck = 1 ] && [ $check_status -eq 0 ]; then
  # Bounded: a hung test in the tarball build must fail the run, not stall it.
  timeout --kill-after=30 "${KVMMIO_DISTCHECK_TIMEOUT:-1500}" make -j"$jobs" distcheck || dist_status=$?
  [ $dist_status -ne 124 ] || echo "test.sh: make distcheck did not finish in ${KVMMIO_DISTCHECK_TIMEOUT:-1500} s" >&2
  phase_done distcheck
fi

fuzz_status=0
if [ $fuzz = 1 ]; then
  "$src/scripts/fuzz.sh" "${KVMMIO_FUZZ_SECONDS:-60}" || fuzz_status=$?
  phase_done fuzz
fi

board_status=0 board_line=''
if [ $board = 1 ] && [ "$(uname -m)" != aarch64 ]; then
  if [ $check_status -ne 0 ]; then
    board_line="board rehearsal: not run: make check failed"
  elif why=$("$src/scripts/board-rehearsal.sh" --check-host); then
    make board-rehearsal BOARD_REHEARSAL_FLAGS="${KVMMIO_BOARD_FLAGS:-}" || board_status=$?
    phase_done "board rehearsal"
    if [ $board_status -eq 0 ]; then
      board_line="board rehearsal: passed (${KVMMIO_BOARD_FLAGS:-Debian 12 on GICv3, Debian 13 on GICv2}): $(tr -s ' ' <"$build/board-rehearsal/times.txt" | paste -sd, | sed 's/,/, /g')"
    else
      board_line="board rehearsal: FAILED (status $board_status; $build/board-rehearsal)"
    fi
  else
    board_line="board rehearsal: skipped: $why"
  fi
fi

printf 'test.sh: phase times:\n'; printf '  %s\n' "${phase_times[@]}"
# Where the real-KVM coverage came from, then one closing line, alone, over
# every GoogleTest case that ran, native and arm64.
[ -z "$coverage_line" ] || echo "$coverage_line"
[ -z "$board_line" ] || echo "$board_line"
"$src/scripts/kvm-coverage.sh" "$build"
"$src/scripts/summarize-gtest.sh" "$build/tests/results" "$build/tests/arm64/results"
[ $check_status -eq 0 ] && [ $coverage_status -eq 0 ] && [ $dist_status -eq 0 ] && [ $fuzz_status -eq 0 ] &&
  [ $board_status -eq 0 ]
