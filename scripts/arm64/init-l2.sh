#!/bin/busybox sh
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=dash
# scripts/arm64/init-l2.sh: /init of the L2 initramfs (build-initramfs.sh
# copies it to /l2/initramfs in L1). Owns the L2 guest from boot to power-off.
#
# 1. mounts proc, sysfs, devtmpfs; writes KVMMIO-L2-INIT to the kernel's
#    log (the console shows it with the guest clock's stamp); loads the virtio modules Debian's kernel
#    builds as modules (virtio_mmio, failover, net_failover, virtio_net,
#    virtio_console, virtio_blk, gpio_keys, virtio_rng, squashfs, virtio_pci:
#    the main job's peer VMM's, vmw_vsock_virtio_transport) in the order of
#    /lib/modules/load-order;
#    with console=hvc0 (kvmmio --console virtio), then reopens its stdio on
#    /dev/hvc0: the kernel opened /dev/console before virtio_console existed;
# 2. prints "KVMMIO-L2-READY" on the console (what an L1 test waits for);
# 3. runs each /l2-init.d/*.sh hook in name order (build-initramfs.sh
#    --l2-hook), printing "KVMMIO-L2-HOOK: NAME status N", then powers off;
#    without hooks, a shell on the console (exit powers off).
# Extension point: parse more kvmmio.* parameters from /proc/cmdline here
# (e.g. kvmmio.run=...) and act on them before step 3.

/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/kvmmio/bin:/usr/sbin:/usr/bin:/sbin:/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The first thing userspace does, as a kernel message (level 3, so that it
# reaches the console under `quiet` too): stamped by the guest's clock, it
# says when init began and, less its stamp, when the clock started
# (bench/boot_timer; bench/startup.sh times each VMM to this line).
echo "<3>KVMMIO-L2-INIT" >/dev/kmsg
mount -t tmpfs tmpfs /tmp

load-modules KVMMIO-L2-ERROR: || true   # each failure is a KVMMIO-L2-ERROR line

# console=hvc0: hvc0 exists only now that virtio_console (a module) has
# bound the virtio console, so the kernel found no /dev/console to give
# /init its stdin/stdout/stderr at boot ("unable to open an initial
# console"). Open them on hvc0 (its node may take a moment to appear).
case " $(cat /proc/cmdline) " in
*" console=hvc0 "*)
    i=0
    while [ ! -c /dev/hvc0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    exec </dev/hvc0 >/dev/hvc0 2>&1
    ;;
esac

echo "KVMMIO-L2-READY"

hooks=$(ls /l2-init.d/*.sh 2>/dev/null)
if [ -n "$hooks" ]; then
    for h in $hooks; do
        sh "$h"
        echo "KVMMIO-L2-HOOK: ${h##*/} status $?"
    done
else
    setsid cttyhack sh
fi
poweroff -f
