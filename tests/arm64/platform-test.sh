#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs arm64 platform scenarios as a `make check` test:
#   platform-test.sh SCENARIO[,SCENARIO...] GIC [--kernels L1:L2] [--name NAME]
#                    [RUN.SH OPTION]...
#     (RUN.SH OPTION e.g. --env NAME=VALUE, --cpu cortex-a72)
# Boots L1 (gic-version=GIC) with the initramfs scripts/arm64/prepare.sh made
# in $KVMMIO_BUILDDIR/arm64-platform (with --kernels L1:L2, the one prepare.sh
# made for that pair of kernel series: L1 boots L1, L2 is L2), runs the
# scenario (a comma list: each in turn in that one boot, run.sh --scenario),
# prints the GoogleTest summaries it brought back, and returns its verdict.
# Results land in $KVMMIO_BUILDDIR/tests/arm64/results/NAME-gicvGIC[-l1-L1-l2-L2];
# NAME defaults to the scenario (a list's names joined by +). Exit 77
# (skip) with one line when the platform cannot exist here; 99 (hard error)
# instead when KVMMIO_REQUIRE_ARM64=1.
set -euo pipefail
scenario=${1:?scenario} gic=${2:?gic}
shift 2
platform=${KVMMIO_BUILDDIR:?}/arm64-platform
initramfs=$platform/l1-initramfs.cpio.gz
name=${scenario//,/+}
kernels=''
while (($#)); do
  case $1 in
  --kernels) kernels=${2:?--kernels needs L1:L2}; shift 2 ;;
  --name) name=${2:?--name needs a NAME}; shift 2 ;;
  *) break ;;
  esac
done
results=$KVMMIO_BUILDDIR/tests/arm64/results/$name-gicv$gic
if [ -n "$kernels" ]; then
  initramfs=$platform/l1-initramfs-l1-${kernels%:*}-l2-${kernels#*:}.cpio.gz
  results=$results-l1-${kernels%:*}-l2-${kernels#*:}
fi

if [ -e "$platform/unavailable" ] || [ ! -s "$initramfs" ]; then
  reason=$(cat "$platform/unavailable" 2>/dev/null ||
    echo "the L1 initramfs ${initramfs##*/} was not built${kernels:+ (prepare.sh --kernels $kernels)}")
  if [ "${KVMMIO_REQUIRE_ARM64:-0}" = 1 ]; then
    echo "ERROR: arm64 platform required (KVMMIO_REQUIRE_ARM64=1) but unavailable: $reason"
    exit 99
  fi
  echo "SKIP: arm64 platform unavailable: $reason"
  exit 77
fi

mkdir -p "$(dirname "$results")"
# One run, with one exception: when L1's own kernel reports a hard lockup
# (run.sh's status 127: L1 is dead before the scenario could say anything,
# QEMU is stopped at once), the scenario runs once more in a new L1, and
# this test's output says so; the first console stays beside the results
# ($results.first-attempt/console.log). A scenario's own failure, a timeout
# or a crash is never retried. (Failures that once looked intermittent were
# QEMU running stale guest code, which run.sh's sve=off removes;
# docs/arm64-platform.md, "Known L1 issues".)
# The time limit of one L1 boot: 900 s per scenario, 1800 for suites (four
# GoogleTest suites, ~400 cases, under TCG); a list gets the sum.
default_timeout=0
for s in ${scenario//,/ }; do
  if [ "$s" = suites ]; then default_timeout=$((default_timeout + 1800))
  else default_timeout=$((default_timeout + 900)); fi
done
# KVMMIO_NET_MODES (scripts/test.sh --net-modes) reaches the net scenarios
# in L1, commas for spaces (L1's kernel command line carries it).
modes=()
[ -z "${KVMMIO_NET_MODES:-}" ] || modes=(--env "KVMMIO_NET_MODES=${KVMMIO_NET_MODES// /,}")
rm -rf "$results" "$results.first-attempt"
run_once() {
  rm -rf "$results"
  "$KVMMIO_SRCDIR/scripts/arm64/run.sh" --scenario "$scenario" --gic "$gic" \
    --initramfs "$initramfs" --results "$results" \
    --timeout "${KVMMIO_ARM64_TIMEOUT:-$default_timeout}" "${modes[@]}" "$@"
}
# shellcheck source=tests/arm64/live-progress.sh
source "$KVMMIO_SRCDIR/tests/arm64/live-progress.sh"
started=$SECONDS
set +e
run_once "$@" 2>&1 | show_live "$name-gicv$gic${kernels:+ ($kernels)}"
status=${PIPESTATUS[0]}
if [ "$status" = 127 ]; then
  mv "$results" "$results.first-attempt"
  echo "== RETRY: L1's kernel reported a hard lockup after $((SECONDS - started)) s (console: $results.first-attempt/console.log); $scenario runs once more in a new L1"
  run_once "$@" 2>&1 | show_live "$name-gicv$gic${kernels:+ ($kernels)} (second L1)"
  status=${PIPESTATUS[0]}
fi
set -e
# The CPU time of the L1s (QEMU, reaped by run.sh, and so among this
# shell's reaped children): what the scenario costs the machine.
# shellcheck source=scripts/phase-budget.sh
source "$KVMMIO_SRCDIR/scripts/phase-budget.sh"
cpu_s=$(children_cpu $$)
echo "== $scenario on L1 gic-version=$gic${kernels:+, kernels L1:L2 $kernels}: exit status $status after $((SECONDS - started)) s, $cpu_s s of CPU; results in $results"
echo "   GoogleTest cases: $("$KVMMIO_SRCDIR/scripts/summarize-gtest.sh" "$results")"
"$KVMMIO_SRCDIR/scripts/summarize-gtest.sh" --failures "$results" | sed 's/^/   /'
grep -h 'KVMMIO-FAIL' "$results/console.log" 2>/dev/null | sed 's/^/   /' || true
exit $status
