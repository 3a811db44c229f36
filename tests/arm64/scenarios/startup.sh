#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# startup: kvmmio's start-up against its floor in one L1 boot
# (bench/startup.sh: bench/boot_floor and `kvmmio run` interleaved, the
# same L2 kernel and initramfs, 128 MiB, 1 vCPU, one vhost-net device for
# kvmmio). A benchmark, not a test: its table is docs/benchmarks.md's
# "Start-up"; scripts/main.sh runs it after net-compare.
#   KVMMIO_STARTUP_REPEATS  interleaved repeats (default 5)
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
require_dev /dev/kvm /dev/vhost-net
step "start-up: kvmmio against boot_floor, ${KVMMIO_STARTUP_REPEATS:-5} repeats, vGICv$KVMMIO_L1_GIC"
startup.sh --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" --out "$KVMMIO_RESULTS" \
    --repeats "${KVMMIO_STARTUP_REPEATS:-5}" --gic "$KVMMIO_L1_GIC" --tap kvmstart0 ||
    fail "startup.sh failed (status $?)"
