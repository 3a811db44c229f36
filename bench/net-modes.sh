# SPDX-License-Identifier: BSD-2-Clause
# net-modes.sh: kvmmio's virtio-net modes, sourced (POSIX sh, busybox is
# enough) by the main job's driver bench/net-compare.sh and by the arm64
# platform's scenarios net-modes, net-resets and net-compare, so a mode
# means one --net spec everywhere and its counters are judged by one rule.
#
#   NET_COMPARE_CONFIGS        the main job's configs, in report order:
#                              the host baseline, then five guest modes
#   NET_COMPARE_EXTRA_CONFIGS  modes the main job measures only when
#                              --configs names them
#   net_mode_spec MODE         the --net spec of MODE (without tap=);
#                              status 1 for an unknown mode
#   net_mode_misfit MODE TRAPPED POLLED INJECTED RELAYED GUEST_IRQS
#                              prints why the VMM's counters (notifies_*,
#                              interrupts_*; deltas or totals) and the
#                              guest's virtio interrupt count do not fit
#                              MODE, nothing when they do. With queues=2
#                              the control queue is the VMM's in every
#                              mode: its totals fit modes with one queue
#                              pair only; deltas over traffic (the driver
#                              uses it when it loads) fit the -mq modes.
#                              The rule is bench/net_check's (misfit).
# shellcheck shell=sh

# shellcheck disable=SC2034 # read by the scripts that source this file
NET_COMPARE_CONFIGS=host,vhost-irqfd,vhost-irqfd-mirror,vhost-relay,user-ioeventfd,user-trap
# The peer VMM: QEMU, from Debian's qemu-system-arm, booting the
# same guest on the same tap set-up, with vhost-net: qemu-pci its best path
# (virtio-net-pci, MSI-X through the GICv3 ITS, irqfd), qemu-mmio the
# transport kvmmio uses (virtio-net-device; QEMU relays vhost's interrupts
# in its main loop). Measured when --configs names them; counted from
# outside (bench/outside-counters.sh), as it has no --stats.
# shellcheck disable=SC2034 # as above
NET_COMPARE_PEER_CONFIGS=qemu-pci,qemu-mmio
# qemu-pci with two queue pairs (mq=on, an MSI-X vector per queue): the
# peer of vhost-irqfd-mirror-mq, on request only.
# shellcheck disable=SC2034 # as above
NET_COMPARE_EXTRA_PEER_CONFIGS=qemu-pci-mq
# Levers measured on request, not in the default matrix or CI: the mirror
# mode with vhost-net's busy polling, without VIRTIO_F_EVENT_IDX (the
# rings' flags alone suppress interrupts and notifies), and with two queue
# pairs (for a guest with two vCPUs; virtio-mmio gives the device one
# interrupt line for all its queues) (docs/benchmarks.md, "What is
# measured"; their runs in docs/results-log.md).
# shellcheck disable=SC2034 # as above
NET_COMPARE_EXTRA_CONFIGS=vhost-irqfd-mirror-poll,vhost-irqfd-mirror-noevidx,vhost-irqfd-mirror-mq

# Register reads: vhost-irqfd traps them (every guest interrupt costs the
# InterruptStatus read and the ACK as exits), vhost-irqfd-mirror serves them
# from the read-only mirror and takes the ACK in the kernel; the other
# modes use kvmmio's default, the mirror where KVM supports it.
net_mode_spec() {
    case $1 in
    vhost-irqfd) echo "vhost=on,irq=irqfd,notify=ioeventfd,regs=trap" ;;
    vhost-irqfd-mirror) echo "vhost=on,irq=irqfd,notify=ioeventfd,regs=mirror" ;;
    # 50 us: QEMU's usual poll-us, and about the gap between 64-byte
    # datagrams on the nested platform (docs/results-log.md, "2026-12-03:
    # busy polling on the mirror (`poll_us`)")
    vhost-irqfd-mirror-poll) echo "vhost=on,irq=irqfd,notify=ioeventfd,regs=mirror,poll_us=50" ;;
    vhost-irqfd-mirror-noevidx) echo "vhost=on,irq=irqfd,notify=ioeventfd,regs=mirror,event_idx=off" ;;
    vhost-irqfd-mirror-mq) echo "vhost=on,irq=irqfd,notify=ioeventfd,regs=mirror,queues=2" ;;
    vhost-relay) echo "vhost=on,irq=relay,notify=ioeventfd" ;;
    user-ioeventfd) echo "vhost=off,irq=irqfd,notify=ioeventfd" ;;
    user-trap) echo "vhost=off,irq=irqfd,notify=trap" ;;
    vhost-irqfd-v1) echo "vhost=on,irq=irqfd,notify=ioeventfd,version=1" ;;
    vhost-mq) echo "vhost=on,irq=irqfd,notify=ioeventfd,queues=2" ;;
    user-mq) echo "vhost=off,irq=irqfd,notify=ioeventfd,queues=2" ;;
    *) return 1 ;;
    esac
}

# Who carries the traffic in each mode: the rule is C++'s
# (bench/report/net_modes.cc), one rule for the main job's verdict
# (net_check modes) and the scenarios; net_check is on PATH where these run
# (L1's /kvmmio/bin, an arm64 host's build). When it cannot be run, that is
# said as a misfit: the callers take no output for a fit.
net_mode_misfit() {
    net_check misfit "$@" ||
        echo "$1: counters not judged: net_check misfit exited with status $? (build bench/net_check with make and put it on PATH)"
}
