#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Says in one line where a test run's real-KVM coverage came from: the host's
# /dev/kvm (x86-64 KVM-layer tests, tests/kvm_tests) and the arm64 platform
# (every suite run in the nested L1, per GIC version), e.g.
#   host /dev/kvm absent: 14 host KVM cases skipped; arm64 KVM cases ran nested on GICv3 and GICv2 (520 and 518 cases passed in L1)
# On an arm64 host the scenarios run on the host's own KVM instead
# (tests/arm64/host-scenario.sh, results in host-NAME-gicvN), e.g.
#   host /dev/kvm present: 30 host KVM cases ran (30 passed, 0 failed); arm64 KVM cases ran on this arm64 host's KVM, GICv3 (12 cases passed)
# scripts/test.sh prints it just before its closing "N passed, ..." line.
#
#   scripts/kvm-coverage.sh BUILDDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: kvm-coverage.sh BUILDDIR}
count() { "$here/summarize-gtest.sh" "$@"; }   # "P passed, F failed, S skipped"
field() { awk -v w="$1" '{ for (i = 2; i <= NF; i++) if ($i ~ "^" w) { print $(i - 1); exit } }'; }

host_json=$build/tests/results/kvm_tests.json
if [[ ! -f $host_json ]]; then
    host="host KVM tests did not run"
else
    c=$(count "$host_json")
    passed=$(field passed <<<"$c") failed=$(field failed <<<"$c") skipped=$(field skipped <<<"$c")
    if [[ -e /dev/kvm ]]; then
        host="host /dev/kvm present: $((passed + failed)) host KVM cases ran ($passed passed, $failed failed)"
        ((skipped == 0)) || host+=", $skipped skipped"
    else
        host="host /dev/kvm absent: $skipped host KVM cases skipped"
        ((passed + failed == 0)) || host+=", $((passed + failed)) ran anyway"
    fi
fi

host_dirs=("$build"/tests/arm64/results/host-*-gicv[23])
gics=() passed=()
for gic in 3 2; do
    [[ ! -d ${host_dirs[0]} ]] || break
    # NAME-gicvN, and NAME-gicvN-l1-K1-l2-K2 for a test on other kernels.
    dirs=()
    for d in "$build"/tests/arm64/results/*-gicv"$gic" "$build"/tests/arm64/results/*-gicv"$gic"-l1-*; do
        [[ -d $d && ${d##*/} != host-* ]] && dirs+=("$d")
    done
    ((${#dirs[@]})) || continue
    n=$(count "${dirs[@]}" | field passed)
    ((n > 0)) && gics+=("GICv$gic") && passed+=("$n")
done
if [[ -d ${host_dirs[0]} ]]; then
    arm="arm64 KVM cases ran on this arm64 host's KVM, GICv${host_dirs[0]##*-gicv} ($(count "${host_dirs[@]}" | field passed) cases passed)"
elif ((${#gics[@]} == 2)); then
    arm="arm64 KVM cases ran nested on ${gics[0]} and ${gics[1]} (${passed[0]} and ${passed[1]} cases passed in L1)"
elif ((${#gics[@]} == 1)); then
    arm="arm64 KVM cases ran nested on ${gics[0]} only (${passed[0]} cases passed in L1)"
else
    reason=$(cat "$build/arm64-platform/unavailable" "$build/arm64-host/unavailable" 2>/dev/null || true)
    reason=${reason:-no arm64 scenario ran}
    arm="no arm64 KVM cases ran ($reason)"
fi
echo "$host; $arm"
