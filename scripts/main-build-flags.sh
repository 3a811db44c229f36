#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# main-build-flags.sh ARCH: the configure arguments of scripts/main.sh's build
# on ARCH (uname -m), one per line. main.sh configures with them; the board
# rehearsal configures its carried build with them, so that the board's
# main.sh finds that build up to date.
#   - -O2 without -g, unless the caller's environment sets CXXFLAGS: the
#     main job measures, it does not debug, and -g made each file ~45%
#     slower to compile at -O2 (a net test file: 13.9 s with it, 9.6 s
#     without), which a board pays in full;
#   - aarch64: the programs linked statically (the guest's initramfs takes
#     bench/tcp_rr from this build: a busybox userland, no libstdc++, no
#     libkvmmio.so), so no shared library;
#   - elsewhere: no static library (the tools link the shared one).
set -euo pipefail
arch=${1:?usage: main-build-flags.sh ARCH}
if [[ -z ${CXXFLAGS+set} ]]; then
    echo CXXFLAGS=-O2
    echo CFLAGS=-O2
fi
if [[ $arch == aarch64 ]]; then
    echo --enable-static-binaries
    echo --disable-shared
else
    echo --disable-static
fi
