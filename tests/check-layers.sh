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
# tests/, bench/ and fuzz/ (the lab) sit outside the layers and may
# include anything; nothing of the product (library or program) includes
# the lab.
# Inside the program, its rooms (one folder a job) are layered the same way,
# bottom up; a room sees its own files and lower rooms', never a room of its
# own level or above, and every file of vmm/ sits in a room (vmm/ itself
# holds only the systemd unit):
#   1 process          usage errors, exit statuses, privileges, seccomp,
#                      signals, output files, unix sockets, the terminal
#   2 boot console stats   images and device tree; the guest console; --stats
#   3 control          the control socket, named VMs
#   4 machine network  the VM and its devices' slots; NAT networks
#   5 cli              the command line and its commands
# One seam inside a layer pair: devices use the device interface
# (kvmmio/virtio/virtio_device.h and the rings), never the transport
# (kvmmio/virtio/mmio_transport.h, hw/virtio/): what a device may use comes
# with its activation. Nor the MMIO register file (kvmmio/virtio/mmio_regs.h):
# the virtio constants a device needs are kvmmio/virtio/virtio_spec.h's.
#
# Inside the transport (hw/virtio/mmio_*), its parts depend one way:
# transport_part below.
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

# room_of PATH: "LEVEL NAME" of a file of the program, "0 -" outside vmm/,
# "9 none" for a file of vmm/ in no room.
room_of() {
    case $1 in
    vmm/process/*) echo "1 process" ;;
    vmm/boot/*) echo "2 boot" ;;
    vmm/console/*) echo "2 console" ;;
    vmm/stats/*) echo "2 stats" ;;
    vmm/control/*) echo "3 control" ;;
    vmm/machine/*) echo "4 machine" ;;
    vmm/network/*) echo "4 network" ;;
    vmm/cli/*) echo "5 cli" ;;
    vmm/*) echo "9 none" ;;
    *) echo "0 -" ;;
    esac
}

# lab PATH: the benchmarks, the tests and the fuzzers.
lab() {
    case $1 in bench/* | tests/* | fuzz/*) return 0 ;; esac
    return 1
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

# transport_part PATH: "LEVEL PART" of a file of the virtio-mmio
# transport's parts (hw/virtio/mmio_parts.h), "" for any other file. A part
# includes only its own files and lower levels': its three owners (the
# queues, the mirror, and the device state over its features, config and
# interrupts) depend one way, and the register file and the wiring sit
# above them.
transport_part() {
    case $1 in
    hw/virtio/mmio_context.*) echo "0 context" ;;
    hw/virtio/mmio_queue_state.h | hw/virtio/mmio_queues.* | hw/virtio/mmio_notify.cc) echo "1 queues" ;;
    hw/virtio/mmio_mirror.*) echo "1 mirror" ;;
    hw/virtio/mmio_features.*) echo "1 features" ;;
    hw/virtio/mmio_config.*) echo "1 config" ;;
    hw/virtio/mmio_interrupts.*) echo "1 interrupts" ;;
    hw/virtio/mmio_device_state.*) echo "2 device-state" ;;
    hw/virtio/mmio_register_file.* | hw/virtio/mmio_modern.cc | hw/virtio/mmio_legacy.cc) echo "3 register-file" ;;
    hw/virtio/mmio_parts.h | hw/virtio/mmio_transport.cc) echo "4 wiring" ;;
    esac
}

# resolve FILE NAME: the root-relative path of `#include "NAME"` in FILE.
resolve() {
    case $2 in
    kvmmio/*) echo "include/$2" ;;
    vmm/* | hw/* | base/* | kvm/* | capi/* | bench/* | tests/* | fuzz/*) echo "$2" ;;
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
            set -- $(room_of "$f")
            from_level=$1 from_room=$2
            from_part=$(transport_part "$f")
            [ "$from_room" != none ] ||
                echo "$f: outside the program's rooms: put it in the folder of its job (vmm/process, boot, console, stats, control, machine, network or cli)"
            grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r hit; do
                line=${hit%%:*}
                name=$(echo "$hit" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
                path=$(resolve "$f" "$name")
                to=$(layer_of "$path")
                set -- $(room_of "$path")
                to_level=$1 to_room=$2
                if lab "$path"; then
                    echo "$f:$line: includes \"$name\": the product never includes the lab (bench/, tests/, fuzz/)"
                elif [ "$to" -gt "$from" ]; then
                    echo "$f:$line: includes \"$name\": $(layer_name "$from") may not include $(layer_name "$to")"
                elif [ "$from_level" != 0 ] && [ "$to_level" != 0 ] && [ "$to_room" != "$from_room" ] &&
                    [ "$to_level" -ge "$from_level" ]; then
                    echo "$f:$line: includes \"$name\": the program's room $from_room may not include $to_room"
                elif [ "$from" = 4 ] && transport_only "$path"; then
                    echo "$f:$line: includes \"$name\": devices see their activation, not the transport"
                elif [ "$from" = 4 ] && register_file "$path"; then
                    echo "$f:$line: includes \"$name\": devices take virtio constants from kvmmio/virtio/virtio_spec.h, not the MMIO register file"
                elif [ -n "$from_part" ] && set -- $(transport_part "$path") && [ $# = 2 ] &&
                    [ "$2" != "${from_part#* }" ] && [ "$1" -ge "${from_part%% *}" ]; then
                    echo "$f:$line: includes \"$name\": the transport's ${from_part#* } may not include its $2 (its parts depend one way: hw/virtio/mmio_parts.h)"
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
mkdir -p "$scratch/vmm/cli" "$scratch/vmm/process" "$scratch/vmm/boot"
printf '#include "vmm/process/usage_error.h"\n' >"$scratch/vmm/cli/ok.cc"
printf '#include "vmm/boot/device_tree.h"\n#include "vmm/cli/options.h"\n' >"$scratch/vmm/process/bad.cc"
printf '#include "vmm/console/console.h"\n#include "bench/pps/pps_core.h"\n' >"$scratch/vmm/boot/bad.cc"
printf '\n' >"$scratch/vmm/loose.cc"
mkdir -p "$scratch/hw/virtio"
printf '#include "mmio_context.h"\n#include "mmio_queues.h"\n#include "mmio_device_state.h"\n' >"$scratch/hw/virtio/mmio_queues.cc"
printf '#include "mmio_mirror.h"\n#include "mmio_register_file.h"\n' >"$scratch/hw/virtio/mmio_mirror.cc"
printf '#include "mmio_queues.h"\n#include "mmio_mirror.h"\n#include "mmio_interrupts.h"\n' >"$scratch/hw/virtio/mmio_device_state.cc"
if planted=$(check_tree "$scratch"); then
    echo "check-layers.sh: FAIL: the planted includes in base/bad.cc, hw/console/bad.cc, hw/net/bad.cc, hw/virtio/ and vmm/ went unnoticed"
    exit 1
fi
case $planted in
"base/bad.cc:2: includes \"kvmmio/vm.h\": base may not include kvm
hw/console/bad.cc:2: includes \"kvmmio/virtio/mmio_regs.h\": devices take virtio constants from kvmmio/virtio/virtio_spec.h, not the MMIO register file
hw/net/bad.cc:1: includes \"kvmmio/virtio/mmio_transport.h\": devices see their activation, not the transport
hw/virtio/mmio_mirror.cc:2: includes \"mmio_register_file.h\": the transport's mirror may not include its register-file (its parts depend one way: hw/virtio/mmio_parts.h)
hw/virtio/mmio_queues.cc:3: includes \"mmio_device_state.h\": the transport's queues may not include its device-state (its parts depend one way: hw/virtio/mmio_parts.h)
vmm/boot/bad.cc:1: includes \"vmm/console/console.h\": the program's room boot may not include console
vmm/boot/bad.cc:2: includes \"bench/pps/pps_core.h\": the product never includes the lab (bench/, tests/, fuzz/)
vmm/loose.cc: outside the program's rooms: put it in the folder of its job (vmm/process, boot, console, stats, control, machine, network or cli)
vmm/process/bad.cc:1: includes \"vmm/boot/device_tree.h\": the program's room process may not include boot
vmm/process/bad.cc:2: includes \"vmm/cli/options.h\": the program's room process may not include cli") ;;
*) echo "check-layers.sh: FAIL: the planted upward include was reported as: $planted"; exit 1 ;;
esac

# 2. The tree.
if ! found=$(check_tree "$src"); then
    echo "$found"
    echo "check-layers.sh: FAIL: includes that cross a layer upward, a device's seam, the transport's one-way parts or the program's rooms (docs/architecture.md, \"Layers\" and \"The program's rooms\")"
    exit 1
fi
echo "check-layers.sh: every #include in base, kvm, virtio, devices, capi and vmm stays in its layer or below, in the transport's parts one way, and in the program in its room or a lower one"
