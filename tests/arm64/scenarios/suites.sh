#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# suites: the arm64 builds of the GoogleTest suites, run on real KVM/ARM and
# real vhost-net in L1: unit tests; the embedding example
# (examples/entropy_device, docs/embedding.md); the KVM layer (vGIC creation and the
# clear error for the version L1 does not offer, PSCI vCPU init and CPU_ON,
# ioeventfd with zero exits, irqfd SPIs the guest acknowledges through the
# GIC); tap, vhost-net and virtio-net with every backend. Nothing may skip.
#
# Each KVM test runs in a process of its own, as KVM selftests do. (This
# was once a mitigation for guests that "lost the PC advance" on the nested
# L1; they were running stale QEMU translations of the previous guest's
# code, which run.sh's sve=off removes: docs/arm64-platform.md, "Known L1
# issues".)
# shellcheck source=tests/arm64/lib.sh
. /kvmmio/lib.sh

status=0
run_each() {
    suite=$1
    step "$suite on vGICv$KVMMIO_L1_GIC, one process per test"
    mkdir -p "$KVMMIO_RESULTS/$suite"
    for t in $("$suite" --gtest_list_tests | awk '/^[^ ]/ {s=$1} /^  [^ ]/ {print s $1}'); do
        KVMMIO_REQUIRE_KVM=1 KVMMIO_REQUIRE_VHOST=1 KVMMIO_EXPECT_GIC=$KVMMIO_L1_GIC \
            "$suite" --gtest_filter="$t" --gtest_output="json:$KVMMIO_RESULTS/$suite/$t.json" ||
            { echo "KVMMIO-FAIL: $t"; status=1; }
    done
    if grep -l '"result": "SKIPPED"' "$KVMMIO_RESULTS/$suite"/*.json; then
        echo "KVMMIO-FAIL: $suite skipped tests on the arm64 platform, where everything must run"
        status=1
    fi
}

run_each unit_tests
step "examples/entropy_device: a VMM embedding libkvmmio, on real KVM/ARM"
entropy_device || { echo "KVMMIO-FAIL: examples/entropy_device exited $?"; status=1; }
run_each kvm_tests
run_each net_tests
exit $status
