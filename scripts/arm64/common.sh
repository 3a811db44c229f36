# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash disable=SC2034
# scripts/arm64/common.sh: shared paths and messages for the arm64 test
# platform scripts (fetch-packages.sh, build-initramfs.sh, run.sh).
# Sourced, never run. Owns only the variables REPO, CACHE, DEBS, ROOT and the
# functions say/die; touches nothing by itself.
#
# KVMMIO_CACHE (env) overrides the cache directory, default $REPO/.cache/arm64:
#   $CACHE/debs/            downloaded arm64 .deb files
#   $CACHE/root/            all of them unpacked into one arm64 root (sysroot)
#   $CACHE/kernel-version   the kernel release in that root, e.g. 6.1.0-57-arm64

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${KVMMIO_CACHE:-$REPO/.cache/arm64}
DEBS=$CACHE/debs
ROOT=$CACHE/root

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { say "error: $*"; exit 2; }

# kernel_version: the kernel release fetch-packages.sh unpacked into $ROOT.
kernel_version() {
    [[ -s $CACHE/kernel-version ]] ||
        die "no arm64 kernel in $CACHE; run scripts/arm64/fetch-packages.sh first"
    cat "$CACHE/kernel-version"
}
