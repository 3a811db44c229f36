#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# check-layers.sh: fails on an #include that crosses a layer upward
# (docs/architecture.md, "Layers"). A test of `make check`; also runs by
# hand: tests/check-layers.sh [SRCDIR].
#
# Layers, bottom up; a file may include its own layer and those below:
#   1 base     base/, include/kvmmio/base/
#   2 kvm      kvm/, include/kvmmio/*.h, include/kvmmio/arch/
#   3 virtio   hw/virtio/, include/kvmmio/virtio/
#   4 devices  hw/net/, hw/console/, hw/block/, hw/gpio/, hw/rng/, hw/rtc/, hw/vhost/, hw/vsock/, hw/fs/,
#              include/kvmmio/net/, include/kvmmio/console/, include/kvmmio/block/,
#              include/kvmmio/gpio/, include/kvmmio/rng/, include/kvmmio/rtc/, include/kvmmio/amba/,
#              include/kvmmio/vhost/, include/kvmmio/vsock/, include/kvmmio/fs/
#   5 capi     capi/, include/kvmmio/kvmmio.h (the C API)
#   6 vmm      vmm/
# tests/, bench/ and fuzz/ sit outside the layers and may include anything.
# One seam inside a layer pair: devices use the device interface
# (kvmmio/virtio/virtio_device.h and the rings), never the transport
# (kvmmio/virtio/mmio_transport.h, hw/virtio/): what a device may use comes
# with its activation. Nor the MMIO register file (kvmmio/virtio/mmio_regs.h):
# the virtio constants a device needs are kvmmio/virtio/virtio_spec.h's.
#
# Before it trusts a clean answer, the check plants an upward include in a
# scratch tree and makes sure it is caught: a check that cannot fail proves
# nothing.
set -eu

layer_name() {
    case $1 in 1) echo base ;; 2) echo kvm ;; 3) echo virtio ;; 4) echo devices ;; 5) echo capi ;; 6) echo vmm ;; esac
}

# layer_of PATH (relative to the source root): 1-6, or 0 outside the layers.
layer_of() {
    case $1 in
    base/* | include/kvmmio/base/*) echo 1 ;;
    capi/* | include/kvmmio/kvmmio.h) echo 5 ;;
    include/kvmmio/arch/*) echo 2 ;;
    include/kvmmio/virtio/* | hw/virtio/*) echo 3 ;;
    include/kvmmio/net/* | include/kvmmio/console/* | include/kvmmio/block/* | include/kvmmio/gpio/* | \
    include/kvmmio/rng/* | include/kvmmio/rtc/* | include/kvmmio/amba/* | \
    include/kvmmio/vhost/* | include/kvmmio/vsock/* | include/kvmmio/fs/* | \
    hw/net/* | hw/console/* | hw/block/* | hw/gpio/* | hw/rng/* | hw/rtc/* | hw/vhost/* | hw/vsock/* | hw/fs/*) echo 4 ;;
    include/kvmmio/*/*) echo 0 ;;
    include/kvmmio/* | kvm/*) echo 2 ;;
    vmm/*) echo 6 ;;
    *) echo 0 ;;
    esac
}

# transport_only PATH: the transport's own files, hidden from devices.
transport_only() {
    case $1 in include/kvmmio/virtio/mmio_transport.h | hw/virtio/*) return 0 ;; esac
    return 1
}

# register_file PATH: the MMIO register offsets, the transport's business.
register_file() {
    [ "$1" = include/kvmmio/virtio/mmio_regs.h ]
}

# resolve FILE NAME: the root-relative path of `#include "NAME"` in FILE.
resolve() {
    case $2 in
    kvmmio/*) echo "include/$2" ;;
    vmm/* | hw/* | base/* | kvm/* | capi/*) echo "$2" ;;
    *) echo "${1%/*}/$2" ;;  # a private header next to the file
    esac
}

# check_tree ROOT: prints one line per upward include; fails if any.
check_tree() {
    (
        cd "$1"
        bad=0
        for f in $(find base kvm hw capi vmm include/kvmmio -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | LC_ALL=C sort); do
            from=$(layer_of "$f")
            [ "$from" != 0 ] || continue
            grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r hit; do
                line=${hit%%:*}
                name=$(echo "$hit" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
                path=$(resolve "$f" "$name")
                to=$(layer_of "$path")
                if [ "$to" -gt "$from" ]; then
                    echo "$f:$line: includes \"$name\": $(layer_name "$from") may not include $(layer_name "$to")"
                elif [ "$from" = 4 ] && transport_only "$path"; then
                    echo "$f:$line: includes \"$name\": devices see their activation, not the transport"
                elif [ "$from" = 4 ] && register_file "$path"; then
                    echo "$f:$line: includes \"$name\": devices take virtio constants from kvmmio/virtio/virtio_spec.h, not the MMIO register file"
                fi
            done
        done | { found=$(cat); [ -z "$found" ] || { echo "$found"; exit 1; }; }
    )
}

src=${1:-${KVMMIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}}

# 1. The check catches an upward include (a base file reaching into kvm)
#    and a device reaching for its transport.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/base" "$scratch/kvm"
printf '#include "kvmmio/base/log.h"\n' >"$scratch/kvm/ok.cc"
printf '#include <vector>\n#include "kvmmio/vm.h"\n' >"$scratch/base/bad.cc"
mkdir -p "$scratch/hw/net"
printf '#include "kvmmio/virtio/mmio_transport.h"\n' >"$scratch/hw/net/bad.cc"
mkdir -p "$scratch/hw/console"
printf '#include "kvmmio/virtio/virtio_spec.h"\n#include "kvmmio/virtio/mmio_regs.h"\n' >"$scratch/hw/console/bad.cc"
if planted=$(check_tree "$scratch"); then
    echo "check-layers.sh: FAIL: the planted includes in base/bad.cc, hw/console/bad.cc and hw/net/bad.cc went unnoticed"
    exit 1
fi
case $planted in
"base/bad.cc:2: includes \"kvmmio/vm.h\": base may not include kvm
hw/console/bad.cc:2: includes \"kvmmio/virtio/mmio_regs.h\": devices take virtio constants from kvmmio/virtio/virtio_spec.h, not the MMIO register file
hw/net/bad.cc:1: includes \"kvmmio/virtio/mmio_transport.h\": devices see their activation, not the transport") ;;
*) echo "check-layers.sh: FAIL: the planted upward include was reported as: $planted"; exit 1 ;;
esac

# 2. The tree.
if ! found=$(check_tree "$src"); then
    echo "$found"
    echo "check-layers.sh: FAIL: includes that cross a layer upward or a device's seam (docs/architecture.md, \"Layers\")"
    exit 1
fi
echo "check-layers.sh: every #include in base, kvm, virtio, devices, capi and vmm stays in its layer or below"
