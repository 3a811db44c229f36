#!/usr/bin/env bash
# Prepares the arm64 platform for `make check`: fetches the Debian arm64
# packages (cached), cross-builds kvmmio's arm64 binaries, and packs them into
# an L1 initramfs.
#
#   scripts/arm64/prepare.sh OUTDIR
#     -> OUTDIR/build (the arm64 build tree), OUTDIR/l1-initramfs.cpio.gz
#
# Where the platform's tools cannot be had (no qemu-system-aarch64 or no
# cross compiler), it writes OUTDIR/unavailable with the reason and exits 0:
# the platform tests then skip with that one line (or fail, under
# KVMMIO_REQUIRE_ARM64=1, as in CI).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: prepare.sh OUTDIR}
mkdir -p "$out"
rm -f "$out/unavailable"

for tool in qemu-system-aarch64 aarch64-linux-gnu-g++; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is not installed (scripts/install-deps.sh installs it)" >"$out/unavailable"
    echo "arm64 platform unavailable: $(cat "$out/unavailable")"
    exit 0
  fi
done

"$src/scripts/arm64/fetch-packages.sh"
"$src/scripts/build-arm64.sh" "$out/build"
bins=()
# A clean make environment: under `make check` the outer MAKEFLAGS would add
# "Entering directory" lines to the list.
for b in $(env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory -C "$out/build" print-platform-binaries); do
  bins+=(--bin "$out/build/$b")
done
# The main job's driver (bench/net-compare.sh) runs in L1 like on an arm64
# host; tcp_rr's server runs in L2.
bins+=(--bin "$src/bench/net-compare.sh" --l2-bin "$out/build/bench/tcp_rr")
# The hostile-guest scenario's guest program.
bins+=(--l2-bin "$out/build/tests/arm64/hostile_guest")
# L2's side of the scenarios that boot L2 under kvmmio (kvmmio.l2test=...).
for h in "$src"/tests/arm64/l2-hooks/*.sh; do
  bins+=(--l2-hook "$h")
done
"$src/scripts/arm64/build-initramfs.sh" --out "$out/l1-initramfs.cpio.gz" "${bins[@]}"
