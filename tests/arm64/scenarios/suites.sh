#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# suites: the arm64 builds of the GoogleTest suites, run on real KVM/ARM and
# real vhost-net in L1: unit tests; the embedding examples
# (examples/entropy_device in C++, examples/c_embedder in C, docs/embedding.md:
# each runs a guest whose interrupts must cost no vCPU exit with the register
# mirror); the KVM layer (vGIC creation and the
# clear error for the version L1 does not offer, PSCI vCPU init and CPU_ON,
# ioeventfd with zero exits, irqfd SPIs the guest acknowledges through the
# GIC); tap, vhost-net and virtio-net with every backend; of the program's
# parts, its confinement: the seccomp filters with arm64's system calls,
# the privilege drop (vmm_confinement_tests, those of vmm_tests' sources
# alone: the rest of vmm_tests needs host tools such as dtc).
# Nothing may skip.
#
# Suites run by their full path: a death test ("threadsafe" style) runs
# its child by executing argv[0] again.
#
# Each suite runs as one process, as on the host: a process per test case
# (~400 under TCG) cost minutes of process start-up per L1 boot and was
# never a fix (it dates from guests that ran stale QEMU translations, which
# run.sh's sve=off removes: docs/arm64-platform.md, "Known L1 issues").
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"

status=0
# run_suite SUITE [FILTER]: SUITE's cases (those FILTER selects) in one
# process; its GoogleTest JSON lands in $KVMMIO_RESULTS/SUITE.json. A crash
# leaves no JSON: that is a failure of its own.
run_suite() {
    suite=$(command -v "$1")
    json=$KVMMIO_RESULTS/$1.json
    step "$1 on vGICv$KVMMIO_L1_GIC"
    KVMMIO_REQUIRE_KVM=1 KVMMIO_REQUIRE_VHOST=1 KVMMIO_EXPECT_GIC=$KVMMIO_L1_GIC \
        "$suite" --gtest_filter="${2:-*}" --gtest_output="json:$json" ||
        { say_fail "$1 failed (exit $?)"; status=1; }
    [ -s "$json" ] || { say_fail "$1 wrote no results (it crashed?)"; status=1; return; }
    if grep -q '"result": "SKIPPED"' "$json"; then
        say_fail "$1 skipped tests on the arm64 platform, where everything must run"
        status=1
    fi
}

# Two virtio-blk cases (each on both I/O engines) need a file system that
# L1's /tmp (tmpfs, Linux 6.1) is not: fallocate zero-range, and O_DIRECT
# (tmpfs has it from 6.6). They test the device against the host's file
# system, not KVM or the CPU, and make check runs them on the host (where
# they skip only on such a /tmp).
run_suite unit_tests \
    "-*VirtioBlockEngineTest.DiscardAndWriteZeroesLeaveZeroes/*:*VirtioBlockEngineTest.CacheNoneServesUnalignedGuestBuffers/*"
# The examples print what they counted; nothing but 0 (77 would be a skip) passes.
step "examples/entropy_device: a VMM embedding libkvmmio, on real KVM/ARM"
entropy_device || { say_fail "examples/entropy_device exited $?"; status=1; }
step "examples/c_embedder: a C VMM owning its VM, with kvmmio's C API, on real KVM/ARM"
c_embedder || { say_fail "examples/c_embedder exited $?"; status=1; }
run_suite kvm_tests
run_suite net_tests
run_suite vmm_confinement_tests
exit $status
