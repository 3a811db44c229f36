#!/bin/busybox sh
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=dash
# scripts/arm64/load-modules.sh PREFIX: loads the modules an initramfs
# carries, in /lib/modules/load-order (paths under /lib/modules, dependencies
# first; build-initramfs.sh writes it), and prints "PREFIX insmod PATH
# failed" for each one that does not load. Both inits (init-l1.sh,
# init-l2.sh) run it as /bin/load-modules; exit status 1 if any failed.
#
# Kernels whose modules are xz-compressed (Debian's 6.12) get them unpacked
# first: busybox's insmod would try finit_module on the .xz (the kernel logs
# "Invalid ELF header magic" for each) before decompressing it itself.
status=0
while read -r m; do
    case $m in
    *.ko.xz) xzcat "/lib/modules/$m" >/tmp/module.ko && insmod /tmp/module.ko ;;
    *) insmod "/lib/modules/$m" ;;
    esac || { echo "$1 insmod $m failed"; status=1; }
    rm -f /tmp/module.ko
done </lib/modules/load-order
exit $status
