#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Prepares the arm64 platform for `make check`: fetches the Debian arm64
# packages (cached), cross-builds kvmmio's arm64 binaries, and packs them into
# an L1 initramfs.
#
#   scripts/arm64/prepare.sh OUTDIR [--kernels L1:L2]...
#     -> OUTDIR/build (the arm64 build tree), OUTDIR/repro (the stale-code
#        scenario's reproducers), OUTDIR/tools.img (the tools disk: fio and
#        its libraries, which run.sh attaches), OUTDIR/l1-initramfs.cpio.gz
#        (L1 and L2 on the default kernel, 6.1 on Debian 12), and for each
#        --kernels L1:L2 (kernel series, e.g. 6.12:6.1, or 6.12-16k:6.1 for
#        Debian's 16 KiB-page kernel in L1; common.sh) another initramfs,
#        OUTDIR/l1-initramfs-l1-L1-l2-L2.cpio.gz, whose L1 boots L1 and whose
#        L2 is L2 (tests/arm64/platform-test.sh --kernels L1:L2 runs it)
#
# Where the platform's tools cannot be had (no qemu-system-aarch64 or no
# cross compiler), it writes OUTDIR/unavailable with the reason and exits 0:
# the platform tests then skip with that one line (or fail, under
# KVMMIO_REQUIRE_ARM64=1, as in CI).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: prepare.sh OUTDIR [--kernels L1:L2]...}
shift
combos=() series=()
while (($#)); do
  case $1 in
  --kernels)
    [[ ${2:-} =~ ^([0-9]+\.[0-9]+(-[a-z0-9]+)?):([0-9]+\.[0-9]+(-[a-z0-9]+)?)$ ]] ||
      { echo "prepare.sh: --kernels wants L1:L2 kernel series, e.g. 6.12:6.1 or 6.12-16k:6.1" >&2; exit 2; }
    combos+=("$2") series+=(--kernel "${BASH_REMATCH[1]}" --kernel "${BASH_REMATCH[3]}")
    shift 2 ;;
  *) echo "prepare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
rm -f "$out/unavailable"

for tool in qemu-system-aarch64 aarch64-linux-gnu-g++; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is not installed (scripts/install-deps.sh installs it)" >"$out/unavailable"
    echo "arm64 platform unavailable: $(cat "$out/unavailable")"
    exit 0
  fi
done

"$src/scripts/arm64/fetch-packages.sh" "${series[@]}"
"$src/scripts/build-arm64.sh" "$out/build"
bins=()
# A clean make environment: under `make check` the outer MAKEFLAGS would add
# "Entering directory" lines to the list.
for b in $(env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory -C "$out/build" print-platform-binaries); do
  bins+=(--bin "$out/build/$b")
done
# The reproducers of the stale-code scenario: standalone C, no kvmmio code.
mkdir -p "$out/repro"
for r in stale-vm-code tcg-smc-repro; do
  if [ ! "$out/repro/$r" -nt "$src/tests/arm64/repro/$r.c" ]; then
    aarch64-linux-gnu-gcc -O2 -Wall -Wextra -Werror -static -pthread \
      -o "$out/repro/$r" "$src/tests/arm64/repro/$r.c"
  fi
  bins+=(--bin "$out/repro/$r")
done
# The main job's driver (bench/net-compare.sh) runs in L1 like on an arm64
# host; tcp_rr's and udp_pps's servers run in L2, and vsock_stream's ends.
bins+=(--bin "$src/bench/net-compare.sh" --bin "$src/bench/outside-counters.sh" --l2-bin "$out/build/bench/tcp_rr"
  --l2-bin "$out/build/bench/udp_pps" --l2-bin "$out/build/bench/vsock_stream")
# The start-up benchmark beside it (bench/boot_floor is a platform binary).
bins+=(--bin "$src/bench/startup.sh")
# The hostile-guest scenario's guest program.
bins+=(--l2-bin "$out/build/tests/arm64/hostile_guest")
# vmm-boot's vsock case: the guest's side of the transfer (L1's is a
# platform binary).
bins+=(--l2-bin "$out/build/tests/arm64/vsock_probe")
# L2's side of the scenarios that boot L2 under kvmmio (kvmmio.l2test=...).
for h in "$src"/tests/arm64/l2-hooks/*.sh; do
  bins+=(--l2-hook "$h")
done
# tools.img: the tools disk run.sh attaches (fio for the main job's disk cells).
"$src/scripts/arm64/build-initramfs.sh" --out "$out/l1-initramfs.cpio.gz" --tools-out "$out/tools.img" "${bins[@]}"
for c in "${combos[@]}"; do
  "$src/scripts/arm64/build-initramfs.sh" --l1-kernel "${c%:*}" --l2-kernel "${c#*:}" \
    --out "$out/l1-initramfs-l1-${c%:*}-l2-${c#*:}.cpio.gz" "${bins[@]}"
done
