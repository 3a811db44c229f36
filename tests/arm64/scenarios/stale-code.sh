#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# stale-code: a new VM runs its own guest code, not translated code QEMU
# kept from the VM that had the same host pages before it (the nested-L1
# "hang", docs/arm64-platform.md "Stale guest code"). Guards run.sh's
# -cpu max,...,sve=off: without it every round below fails.
#   tcg-smc-repro   QEMU itself, no KVM: code overwritten by an SVE store or
#                   by DC ZVA (tests/arm64/repro/tcg-smc-repro.c). Reported,
#                   not judged: QEMU before 8.2 keeps code that DC ZVA
#                   zeroed, which nothing here executes.
#   stale-vm-code   raw KVM: after a VM whose vCPU was kicked out of WFI,
#                   a store-loop VM in fresh RAM, in one process and in a
#                   process per round, and in the previous VM's RAM
#                   rewritten (tests/arm64/repro/stale-vm-code.c). Judged.
# KVMMIO_STALE_ARGS (commas for spaces) replaces stale-vm-code's options
# for a one-off investigation, e.g. --prelude,wfi-kick,--rounds,50.
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
require_dev /dev/kvm
for p in tcg-smc-repro stale-vm-code; do
    command -v $p >/dev/null || fail "$p is not in /kvmmio/bin (scripts/arm64/prepare.sh builds it)"
done
R=$KVMMIO_RESULTS

step "tcg-smc-repro: does QEMU drop code overwritten by an SVE store or DC ZVA? (kernel $(uname -r))"
tcg-smc-repro 3 >"$R/tcg-smc-repro.txt" 2>&1 || true
cat "$R/tcg-smc-repro.txt"

# Each stale-vm-code run is a test case in stale-code.json (lib.sh).
scenario_name=stale-code
run() {
    name=$1
    shift
    step "stale-vm-code $* on vGICv$KVMMIO_L1_GIC"
    t0=$(cut -d' ' -f1 /proc/uptime)
    if stale-vm-code --gic "$KVMMIO_L1_GIC" "$@" >"$R/$name.txt" 2>&1; then
        msg=''
    else
        cat "$R/$name.txt"
        msg="stale-vm-code $*: $(tail -n 1 "$R/$name.txt")"
    fi
    tail -n 1 "$R/$name.txt"
    record "$name" "$(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')" "$msg"
}
if [ -n "${KVMMIO_STALE_ARGS:-}" ]; then
    # shellcheck disable=SC2046 # word splitting wanted
    run custom $(echo "$KVMMIO_STALE_ARGS" | tr , ' ')
else
    common="--prelude irq-wfi-kick --rounds 5 --stores 1000 --timeout 5"
    # shellcheck disable=SC2086 # word splitting wanted
    {
        run fresh-ram $common
        run fresh-ram-fork $common --fork
        run reused-ram $common --reuse-ram
    }
fi
write_cases stale-code
