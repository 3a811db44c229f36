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
#
# A module's parameters on the kernel command line (NAME.KEY=VALUE, e.g.
# virtio_net.napi_tx=0) are given to its insmod as KEY=VALUE, as modprobe
# does: the kernel applies them only to built-in code, and insmod reads no
# command line. Values with spaces (quoted) are not supported.
set -f  # the command line's words are not file patterns
cmdline=$(cat /proc/cmdline 2>/dev/null || true)
# params_of NAME: sets $params to the command line's NAME.KEY=VALUE words,
# as KEY=VALUE (no subshell: this runs once per module on every boot).
params_of() {
    params=''
    for w in $cmdline; do
        case $w in "$1".?*) params="$params ${w#"$1".}" ;; esac
    done
}
status=0
while read -r m; do
    # The module's name: its file name without .ko[.xz], - read as _.
    name=${m##*/} name=${name%%.ko*}
    case $name in *-*) name=$(echo "$name" | tr - _) ;; esac
    params_of "$name"
    [ -z "$params" ] || echo "load-modules: $name$params (from the kernel command line)"
    # shellcheck disable=SC2086 # $params: KEY=VALUE words
    case $m in
    *.ko.xz) xzcat "/lib/modules/$m" >/tmp/module.ko && insmod /tmp/module.ko $params ;;
    *) insmod "/lib/modules/$m" $params ;;
    esac || { echo "$1 insmod $m failed"; status=1; }
    rm -f /tmp/module.ko
done </lib/modules/load-order
exit $status
