#!/bin/busybox sh
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=dash
# scripts/arm64/init-l1.sh: /init of the L1 initramfs (build-initramfs.sh
# copies it in). Owns the L1 guest from boot to power-off: mounts, modules,
# one scenario or several in turn, shipping their results to the host,
# power-off (or a shell).
#
# Kernel command line (set by run.sh):
#   kvmmio.scenario=NAME  run /scenarios/NAME.sh
#   kvmmio.scenario=A,B   run each in turn: KVMMIO_RESULTS=/results/A, its
#                         status in /results/A/exit-status, its KVMMIO-STEP
#                         and KVMMIO-FAIL lines tagged "A: "
#                         (KVMMIO_SCENARIO_TAG); /results/exit-status is the
#                         first failing status, 0 if none failed
#   kvmmio.gic=N          the GIC version QEMU emulates; exported as KVMMIO_L1_GIC
#   kvmmio.shell=1        after the scenario, a shell on the console, not power-off
#   kvmmio.env.NAME=VALUE exported to the scenario as NAME=VALUE (run.sh --env)
#
# Console lines run.sh reads: "KVMMIO-STEP: text" (progress, also printed by
# scenarios through lib.sh), "KVMMIO-SCENARIO-START: NAME",
# "KVMMIO-SCENARIO-STATUS: NAME N" (lists), "KVMMIO-STATUS: N" and
# "KVMMIO-ERROR: text".
#
# Result channel: /results (KVMMIO_RESULTS) plus exit-status, as a tar
# written raw onto the virtio-blk disk run.sh attaches and unpacks: the one
# whose serial is kvmmio-results (/dev/vda when run.sh adds no --disk; with
# more disks QEMU's slot order decides which is vda, and a results tar on
# another disk would overwrite it).

/bin/busybox mkdir -p /proc /sys /dev /tmp /results /sbin /usr/bin /usr/sbin /var/run
# The initramfs's root directory comes world-writable; a host's is not, and
# DPDK (vmm-boot's vhost-user-net case) refuses to load a driver below one.
/bin/busybox chmod 755 /
/bin/busybox --install -s
export PATH=/kvmmio/bin:/usr/sbin:/usr/bin:/sbin:/bin

step() { echo "KVMMIO-STEP: $*"; }
error() { echo "KVMMIO-ERROR: $*"; }

step "L1 init: mounts and modules"
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
# A host has its loopback up (tests talk to 127.0.0.1, e.g. udp_pps's).
ip link set lo up

load-modules KVMMIO-ERROR: || true   # each failure is a KVMMIO-ERROR line
# Shared memory may have transparent huge pages where it asks (kvmmio's
# guest RAM, a memfd, does: MADV_HUGEPAGE), as docs/usage.md ("Huge
# pages") tells a board's user to set; Debian's default is never. L2 boots
# took 40-60% less time with it.
thp=/sys/kernel/mm/transparent_hugepage/shmem_enabled
[ ! -w $thp ] || echo advise >$thp || echo "KVMMIO-ERROR: cannot set $thp to advise"

scenario='' gic='' shell=0
read -r cmdline </proc/cmdline
for arg in $cmdline; do
    case $arg in
    kvmmio.scenario=*) scenario=${arg#*=} ;;
    kvmmio.gic=*) gic=${arg#*=} ;;
    kvmmio.shell=1) shell=1 ;;
    kvmmio.env.*=*)
        kv=${arg#kvmmio.env.}
        case ${kv%%=*} in
        *[!A-Z0-9_]* | '') error "ignoring $arg: NAME must be upper case, digits, _" ;;
        *) export "${kv%%=*}=${kv#*=}" ;;
        esac ;;
    esac
done
export KVMMIO_L1_GIC="$gic" KVMMIO_RESULTS=/results
# The tools disk (run.sh --tools: fio and its libraries, squashfs), read
# only at /tools; KVMMIO_TOOLS_DEV names its device for scenarios that give
# it to L2 too.
for f in /sys/block/vd*/serial; do
    if ! [ -r "$f" ] || [ "$(cat "$f")" != kvmmio-tools ]; then continue; fi
    f=${f%/serial} KVMMIO_TOOLS_DEV=/dev/${f##*/}
    mkdir -p /tools
    if mount -t squashfs -o ro "$KVMMIO_TOOLS_DEV" /tools; then
        export KVMMIO_TOOLS_DEV
    else
        error "cannot mount the tools disk $KVMMIO_TOOLS_DEV (squashfs) at /tools"
        unset KVMMIO_TOOLS_DEV
    fi
    break
done
list=$(echo "$scenario" | tr , ' ')

missing=''
for s in $list; do
    [ -f "/scenarios/$s.sh" ] || missing="$missing $s"
done
if [ -n "$missing" ]; then
    error "no scenario$(for s in $missing; do printf ' /scenarios/%s.sh' "$s"; done) in this" \
        "initramfs (have: $(cd /scenarios && echo *.sh)); rebuild it with scripts/arm64/build-initramfs.sh"
elif [ -n "$scenario" ]; then
    status=0
    for s in $list; do
        echo "KVMMIO-SCENARIO-START: $s"
        if [ "$s" = "$scenario" ]; then
            # One scenario: its results are /results itself.
            # stdin from /dev/null: a stray read must not wait for a console
            # nobody types on.
            (cd /tmp && sh "/scenarios/$s.sh" </dev/null)
            status=$?
            break
        fi
        mkdir -p "/results/$s"
        (cd /tmp && KVMMIO_RESULTS=/results/$s KVMMIO_SCENARIO_TAG="$s: " \
            sh "/scenarios/$s.sh" </dev/null)
        st=$?
        echo "$st" >"/results/$s/exit-status"
        echo "KVMMIO-SCENARIO-STATUS: $s $st"
        [ "$status" != 0 ] || status=$st
    done
    echo "$status" >/results/exit-status

    # results_disk: the disk with run.sh's serial (nothing if none yet).
    results_disk() {
        for f in /sys/block/vd*/serial; do
            if [ -r "$f" ] && [ "$(cat "$f")" = kvmmio-results ]; then
                f=${f%/serial}
                echo "/dev/${f##*/}"
                return
            fi
        done
    }
    i=0
    while [ ! -b "$(results_disk)" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    dev=$(results_disk)
    step "L1 init: shipping results to ${dev:-the results disk}"
    if [ ! -b "$dev" ]; then
        error "no virtio-blk disk with serial kvmmio-results: results cannot leave L1"
    elif ! { tar -cf "$dev" -C /results . && sync; }; then
        # sync above: poweroff -f does not flush the page cache.
        error "writing results to $dev failed (more than 256 MiB?)"
    fi
    echo "KVMMIO-STATUS: $status"
fi

if [ "$shell" = 1 ]; then
    echo "L1 shell (exit or Ctrl-D powers off; Ctrl-A X quits QEMU)"
    setsid cttyhack sh
fi
poweroff -f
