#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# suites: the arm64 builds of the GoogleTest suites, run on real KVM/ARM and
# real vhost-net in L1: unit tests; the embedding example
# (examples/entropy_device, docs/embedding.md); the KVM layer (vGIC creation and the
# clear error for the version L1 does not offer, PSCI vCPU init and CPU_ON,
# ioeventfd with zero exits, irqfd SPIs the guest acknowledges through the
# GIC); tap, vhost-net and virtio-net with every backend; of the program's
# parts, its confinement: the seccomp filters with arm64's system calls,
# the privilege drop (the rest of vmm_tests needs host tools such as dtc).
# Nothing may skip.
#
# Suites run by their full path: a death test ("threadsafe" style) runs
# its child by executing argv[0] again.
#
# Each KVM test runs in a process of its own, as KVM selftests do. (This
# was once a mitigation for guests that "lost the PC advance" on the nested
# L1; they were running stale QEMU translations of the previous guest's
# code, which run.sh's sve=off removes: docs/arm64-platform.md, "Known L1
# issues".)
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"

status=0
# run_each SUITE [FILTER]
run_each() {
    suite=$(command -v "$1")
    step "$1 on vGICv$KVMMIO_L1_GIC, one process per test"
    mkdir -p "$KVMMIO_RESULTS/$1"
    for t in $("$suite" --gtest_list_tests --gtest_filter="${2:-*}" | awk '/^[^ ]/ {s=$1} /^  [^ ]/ {print s $1}'); do
        KVMMIO_REQUIRE_KVM=1 KVMMIO_REQUIRE_VHOST=1 KVMMIO_EXPECT_GIC=$KVMMIO_L1_GIC \
            "$suite" --gtest_filter="$t" --gtest_output="json:$KVMMIO_RESULTS/$1/$t.json" ||
            { echo "KVMMIO-FAIL: ${KVMMIO_SCENARIO_TAG:-}$t"; status=1; }
    done
    if grep -l '"result": "SKIPPED"' "$KVMMIO_RESULTS/$1"/*.json; then
        echo "KVMMIO-FAIL: ${KVMMIO_SCENARIO_TAG:-}$1 skipped tests on the arm64 platform, where everything must run"
        status=1
    fi
}

run_each unit_tests
step "examples/entropy_device: a VMM embedding libkvmmio, on real KVM/ARM"
entropy_device || { echo "KVMMIO-FAIL: ${KVMMIO_SCENARIO_TAG:-}examples/entropy_device exited $?"; status=1; }
run_each kvm_tests
run_each net_tests
run_each vmm_tests 'Seccomp*:Privileges*:OutputFileDeathTest*'
exit $status
