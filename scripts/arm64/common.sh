# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash disable=SC2034
# scripts/arm64/common.sh: shared paths and messages for the arm64 test
# platform scripts (fetch-packages.sh, build-initramfs.sh, run.sh).
# Sourced, never run. Owns only the variables REPO, CACHE, DEBS, ROOT and the
# functions say/die/kernel_version/check_series/series_flavour; touches
# nothing by itself.
#
# KVMMIO_CACHE (env) overrides the cache directory, default $REPO/.cache/arm64:
#   $CACHE/debs/            downloaded arm64 .deb files
#   $CACHE/root/            all of them unpacked into one arm64 root (sysroot);
#                           several kernels live side by side in it
#   $CACHE/kernel-version   the default kernel's release (linux-image-arm64 of
#                           the host's Debian release), e.g. 6.1.0-57-arm64
#   $CACHE/kernels/SERIES   the release of each kernel series fetched, e.g.
#                           kernels/6.12 = 6.12.95+deb12-arm64,
#                           kernels/6.12-16k = 6.12.117+deb12-arm64-16k
#   $CACHE/apt-backports/   a private apt configuration and package lists for
#                           the release's -backports suite (kernels only)

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${KVMMIO_CACHE:-$REPO/.cache/arm64}
DEBS=$CACHE/debs
ROOT=$CACHE/root

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { say "error: $*"; exit 2; }

# kernel_version [SERIES]: the release of the kernel fetch-packages.sh unpacked
# into $ROOT for SERIES (6.1, 6.12, 6.12-16k, ...); without SERIES, the
# default kernel.
kernel_version() {
    local f=$CACHE/kernel-version
    if [[ -n ${1:-} ]]; then
        check_series "$1"
        f=$CACHE/kernels/$1
    fi
    [[ -s $f ]] ||
        die "no arm64 kernel${1:+ $1} in $CACHE; run scripts/arm64/fetch-packages.sh${1:+ --kernel $1} first"
    cat "$f"
}

# check_series SERIES: dies unless SERIES looks like a kernel series: a
# version (6.12), optionally with a flavour of Debian's arm64 kernel after a
# dash (6.12-16k: the package linux-image-6.12.*-arm64-16k, 16 KiB pages).
check_series() {
    [[ $1 =~ ^[0-9]+\.[0-9]+(-[a-z0-9]+)?$ ]] ||
        die "'$1' is not a kernel series (say 6.1, 6.12 or 6.12-16k)"
}

# series_flavour SERIES: the flavour part of SERIES (16k for 6.12-16k), empty
# for the plain arm64 kernel.
series_flavour() {
    if [[ $1 == *-* ]]; then echo "${1#*-}"; fi
}
