#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Cross-builds kvmmio for arm64 (library, tests, benchmarks, VMM), statically
# linked so the binaries can be dropped into the arm64 platform's initramfs.
#
#   scripts/build-arm64.sh [BUILDDIR] [--whole]   (default: build-arm64 in the repo)
#     --whole  every target, not only what L1 runs (make's default goal and
#              `make bench` too): the build the board rehearsal carries
#              into its board, where scripts/main.sh and scripts/test.sh
#              then find it up to date
# One build at a time in BUILDDIR (a lock in it): make check's platform
# and the board rehearsal's carry phase may ask for it at once.
#
# libfdt-dev:arm64 cannot be installed beside the amd64 libfdt-dev (apt
# removes one for the other), zlib1g-dev:arm64 and liburing-dev:arm64 would drag libc6-dev:arm64
# and newer amd64 zlib and kernel headers into the host, so their .debs are
# fetched with apt-get download and unpacked into a git-ignored sysroot
# under .cache/ instead.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-arm64}
whole=0
[[ ${2:-} != --whole ]] || whole=1
[[ -z ${2:-} || $whole = 1 ]] || { echo "build-arm64: unknown argument $2 (see its header)" >&2; exit 2; }
cache=${KVMMIO_CACHE:-$src/.cache/arm64}
sysroot=$cache/sysroot

mkdir -p "$build"
exec 9>"$build/.lock"
flock 9

command -v aarch64-linux-gnu-g++ >/dev/null ||
  { echo "build-arm64: aarch64-linux-gnu-g++ missing: run scripts/install-deps.sh" >&2; exit 2; }

# --- libfdt, zlib and liburing for arm64, unpacked into the sysroot ------------
# unpack_arm64 NAME PACKAGE...: once per sysroot (a stamp per NAME, so a
# sysroot made before NAME was added gets it too).
unpack_arm64() {
  local name=$1 pkg ver deb
  shift
  [ -e "$sysroot/.$name-stamp" ] && return 0
  mkdir -p "$cache/debs" "$sysroot"
  for pkg in "$@"; do
    ver=$(apt-cache policy "$pkg:arm64" | awk '/Candidate:/ {print $2}')
    [ -n "$ver" ] && [ "$ver" != "(none)" ] ||
      { echo "build-arm64: no candidate for $pkg:arm64 (run scripts/install-deps.sh, which enables arm64)" >&2; exit 2; }
    deb=$(ls "$cache/debs/${pkg}_${ver//:/%3a}_arm64.deb" 2>/dev/null || true)
    if [ -z "$deb" ]; then
      (cd "$cache/debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg:arm64=$ver")
    fi
    dpkg-deb -x "$cache/debs/${pkg}_${ver//:/%3a}_arm64.deb" "$sysroot"
  done
  touch "$sysroot/.$name-stamp"
}
unpack_arm64 libfdt libfdt1 libfdt-dev
unpack_arm64 zlib zlib1g zlib1g-dev  # --kernel Image.gz
unpack_arm64 liburing liburing2 liburing-dev  # virtio-blk's io_uring engine (liburing.a)

# nlohmann-json is header-only and the same for every architecture: the
# host's headers (scripts/install-deps.sh) are linked into the sysroot.
[ -d /usr/include/nlohmann ] ||
  { echo "build-arm64: /usr/include/nlohmann missing: run scripts/install-deps.sh (nlohmann-json3-dev)" >&2; exit 2; }
mkdir -p "$sysroot/usr/include"
ln -sfn /usr/include/nlohmann "$sysroot/usr/include/nlohmann"

# --- configure once, then build what the platform needs ----------------------
[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)
mkdir -p "$build"
cd "$build"
# A tree configured by an earlier version of this script, with the arm64
# Linux-guest scenarios off, is configured again: the board that carries
# this build runs them (scripts/test.sh --scenarios on it).
! grep -q '^ac_cs_config=.*--disable-arm64-platform' config.status 2>/dev/null || rm -f Makefile
if [ ! -f Makefile ]; then
  # Static binaries only: no libkvmmio.so (and no libtool wrapper scripts).
  # -O2 without -g: build-initramfs.sh strips the debug information off
  # anyway, and making it was a third of this build's compile time
  # (a test file: 12.5 s with -g -O2, 8.6 s with -O2).
  "$src/configure" --host=aarch64-linux-gnu --enable-static-binaries --disable-shared --enable-werror \
    CXXFLAGS=-O2 CFLAGS=-O2 \
    CPPFLAGS="-I$sysroot/usr/include" \
    LDFLAGS="-L$sysroot/usr/lib/aarch64-linux-gnu" \
    PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig -q
fi
# A make of its own (not the jobserver of a calling `make check`).
unset MAKEFLAGS MAKELEVEL
make -j"$(nproc)" platform-binaries
if ((whole)); then
  make -j"$(nproc)"
  make -j"$(nproc)" bench
fi
echo "build-arm64: arm64 binaries in $build: $(make -s --no-print-directory print-platform-binaries)"
