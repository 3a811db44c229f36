#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# l1-facts: the L1 is the board class a test claims, so a misconfigured
# variant (wrong --cpu, --gic or initramfs) fails here instead of silently
# testing the default L1. The .test file states its claims with run.sh --env:
#   KVMMIO_EXPECT_PAGE_SIZE  L1's page size in bytes (4096, 16384)
#   KVMMIO_EXPECT_KVM_MODE   vhe or nvhe: how KVM came up in L1 (its
#                            "VHE mode" / "Hyp mode initialized" line)
#   KVMMIO_EXPECT_GIC        3 or 2: the interrupt controller L1 itself runs
#                            on (/proc/interrupts' chip: GICv3, or GICv2 /
#                            GIC-0 as kernels name a GICv2)
#   KVMMIO_EXPECT_CPU_PART   optional: the "CPU part" of /proc/cpuinfo
#                            (0xd08 is a Cortex-A72)
# All but the last are required: a claim left out is a test that cannot fail.
# Each fact is a test case in l1-facts.json; the facts also go to
# $KVMMIO_RESULTS/l1-facts.txt.
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
scenario_name=l1-facts

for v in KVMMIO_EXPECT_PAGE_SIZE KVMMIO_EXPECT_KVM_MODE KVMMIO_EXPECT_GIC; do
    eval "[ -n \"\${$v:-}\" ]" ||
        fail "$v is not set: give it with run.sh --env $v=VALUE (see tests/arm64/scenarios/l1-facts.sh)"
done
require_dev /dev/kvm

step "L1's page size, KVM mode, GIC and CPU"
# The page size the kernel maps this process with (busybox has no getconf).
page_kib=$(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps)
page=$((${page_kib:-0} * 1024))
# KVM's own line: "VHE mode initialized successfully" at EL2 with VHE,
# "Hyp mode initialized successfully" for nVHE ("Protected nVHE mode" for
# pKVM, which no test here claims).
kvm_line=$(dmesg | grep -m 1 -E 'kvm \[[0-9]+\]: .*mode initialized successfully' || true)
case $kvm_line in
*'VHE mode initialized'*) case $kvm_line in *nVHE*) mode=protected-nvhe ;; *) mode=vhe ;; esac ;;
*'Hyp mode initialized'*) mode=nvhe ;;
*) mode=unknown ;;
esac
chip=$(awk '$1 ~ /^[0-9]+:$/ { for (i = 2; i <= NF; i++) if ($i ~ /^GIC/) { print $i; exit } }' /proc/interrupts)
case $chip in
GICv3) gic=3 ;;
GICv2 | GIC-0) gic=2 ;;
*) gic="unknown ($chip)" ;;
esac
part=$(awk -F': *' '/^CPU part/ { print $2; exit }' /proc/cpuinfo)
{
    echo "kernel $(uname -r)"
    echo "page_size $page"
    echo "kvm_mode $mode ($kvm_line)"
    echo "gic $gic"
    echo "cpu_part $part"
} | tee "$KVMMIO_RESULTS/l1-facts.txt"

check() { # NAME SEEN WANTED
    if [ "$2" = "$3" ]; then record "$1" 0 ''; else record "$1" 0 "L1 has $1 '$2', the test claims '$3'"; fi
}
check page_size "$page" "$KVMMIO_EXPECT_PAGE_SIZE"
check kvm_mode "$mode" "$KVMMIO_EXPECT_KVM_MODE"
check gic "$gic" "$KVMMIO_EXPECT_GIC"
[ -z "${KVMMIO_EXPECT_CPU_PART:-}" ] || check cpu_part "$part" "$KVMMIO_EXPECT_CPU_PART"
write_cases l1-facts
