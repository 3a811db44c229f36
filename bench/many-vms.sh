#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/many-vms.sh: N VMs at once on the nested arm64 platform, each under
# its own kvmmio (128 MiB, 1 vCPU, vhost-net + irqfd + the register mirror,
# taps on one bridge: the many-vms scenario, tests/arm64/scenarios/
# many-vms.sh), for each N asked: how long kvmmio takes from exec to its
# first KVM_RUN, how much memory it holds outside guest RAM (Rss, and
# private: what one more VM costs), its threads, and the total. The
# per-VM cost must not grow with N (docs/benchmarks.md, "Footprint").
#
#   bench/many-vms.sh [--counts LIST] [--gic 3|2] [--out DIR]
#     --counts LIST  comma-separated VM counts, each 1 or even up to 32
#                    (default 1,8,32)
#     --gic N        L1's GIC (default 3)
#     --out DIR      results (default results/many-vms-YYYYmmdd-HHMMSS):
#                    DIR/nN/ the scenario's files per count, DIR/table.txt,
#                    DIR/many-vms.json
# Uses the build in $KVMMIO_BUILD (default build/), preparing its arm64
# platform (scripts/arm64/prepare.sh) where that is not done. L1 gets
# 1 GiB plus 160 MiB per VM. Under TCG absolute times mean little; the
# footprint and how the per-VM figures move with N carry over.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "many-vms.sh: $*" >&2; exit 2; }
counts=1,8,32 gic=3 out=''
while (($#)); do
    case $1 in
    --counts) counts=${2:?--counts needs a LIST}; shift 2 ;;
    --gic) gic=${2:?--gic needs 3 or 2}; shift 2 ;;
    --out) out=${2:?--out needs a DIR}; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
done
[[ $gic == [23] ]] || die "--gic $gic: want 3 or 2"
[[ $counts =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--counts '$counts': want numbers, comma-separated"
for n in ${counts//,/ }; do
    ((n == 1 || (n >= 2 && n <= 32 && n % 2 == 0))) || die "--counts: $n VMs: want 1, or an even number from 2 to 32"
done
[[ $(uname -m) != aarch64 ]] ||
    die "this drives the nested platform (x86-64); on an arm64 host: KVMMIO_MANY_VMS=N make check TESTS=tests/arm64/host-many-vms.test in the build"
command -v jq >/dev/null || die "jq is missing: apt-get install jq"
build=${KVMMIO_BUILD:-$src/build}
[[ -x $build/vmm/kvmmio ]] || die "no build in $build: run scripts/main.sh --build-only (or set KVMMIO_BUILD)"
out=${out:-$src/results/many-vms-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

"$src/scripts/arm64/prepare.sh" "$build/arm64-platform"
initramfs=$build/arm64-platform/l1-initramfs.cpio.gz

# median of numbers, one per line on stdin ("-" for none).
median() { sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { sort -n | tail -n 1; }

status=0 rows=()
for n in ${counts//,/ }; do
    echo "== $n VMs at once (L1: GICv$gic, $((1024 + 160 * n)) MiB)"
    r=$out/n$n
    run_status=0
    "$src/scripts/arm64/run.sh" --scenario many-vms --gic "$gic" --initramfs "$initramfs" \
        --mem $((1024 + 160 * n)) --timeout $((900 + 60 * n)) --results "$r" --quiet --progress \
        --env KVMMIO_MANY_VMS="$n" || run_status=$?
    ((run_status == 0)) || status=1
    # One line per VM that answered: to_first_run exec_to_main rss private threads.
    per_vm=$r/per-vm.tsv
    : >"$per_vm"
    for f in "$r"/vm*.boot.json; do
        [[ -s $f ]] || continue
        jq -r '[.startup_ms.to_first_run, .startup_ms.exec_to_main, .footprint.rss_outside_guest_ram_kib,
                .footprint.private_outside_guest_ram_kib, .footprint.threads] | @tsv' "$f" >>"$per_vm" || true
    done
    serving=$(sed -n 's/^boot: \([0-9]*\) of [0-9]* guests serving after \([0-9.]*\) s.*/\1 \2/p' "$r/console.log" | tail -n 1)
    col() { cut -f"$1" "$per_vm"; }
    startup=$(col 1 | median) startup_max=$(col 1 | maximum)
    rss=$(col 3 | median) private=$(col 4 | median) private_max=$(col 4 | maximum) threads=$(col 5 | median)
    private_total=$(col 4 | awk '{ s += $1 } END { printf "%.1f", s / 1024 }')
    rows+=("$n	${serving%% *}	${serving##* }	$startup	${startup_max:--}	$rss	$private	${private_max:--}	$threads	$private_total	$run_status")
    jq -n --argjson n "$n" --argjson status "$run_status" --rawfile tsv "$per_vm" \
        '{vms: $n, scenario_status: $status,
          per_vm: ($tsv | split("\n") | map(select(length > 0) | split("\t") | map(tonumber)
                   | {to_first_run_ms: .[0], exec_to_main_ms: .[1], rss_outside_guest_ram_kib: .[2],
                      private_outside_guest_ram_kib: .[3], threads: .[4]}))}' >"$r/summary.json"
done

{
    echo "kvmmio, N VMs at once on the nested platform (GICv$gic; 128 MiB, 1 vCPU, vhost-net + irqfd + mirror each)"
    echo "commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d)"
    printf '%-4s %-8s %-9s %-22s %-9s %-19s %-7s %-17s %s\n' N serving "boot (s)" "exec->KVM_RUN ms med/max" \
        "Rss KiB" "private KiB med/max" threads "private total MiB" "scenario"
    for row in "${rows[@]}"; do
        IFS=$'\t' read -r n s b st stm rss p pm th pt rs <<<"$row"
        printf '%-4s %-8s %-9s %-22s %-9s %-19s %-7s %-17s %s\n' "$n" "${s:--}/$n" "${b:--}" "$st/$stm" "$rss" \
            "$p/$pm" "$th" "$pt" "$([[ $rs == 0 ]] && echo passed || echo "FAILED ($rs)")"
    done
} | tee "$out/table.txt"
jq -s '{commit: $commit, gic: $gic, runs: .}' --arg commit "$(git -C "$src" rev-parse HEAD 2>/dev/null || echo '')" \
    --argjson gic "$gic" "$out"/n*/summary.json >"$out/many-vms.json"
echo "many-vms.sh: results in $out"
exit $status
