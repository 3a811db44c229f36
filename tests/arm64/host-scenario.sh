#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs one Linux-guest scenario (tests/arm64/scenarios/NAME.sh, the same
# script the nested platform runs in L1) on this arm64 host's own KVM, as a
# `make check` test:   host-scenario.sh NAME
# scripts/arm64/host-prepare.sh (make's arm64-host-prepare) has made
# $KVMMIO_BUILDDIR/arm64-host. The scenario runs as L1's init runs it, with
# the host kept out of its way:
#   - its own network, mount and PID namespaces: tap kvmtap0 and 10.0.0.x
#     never meet this host's networks, its pkill sees only its own
#     processes, and everything it started dies with it; a /tmp of its own;
#   - L1's userland: busybox sh and applets first on PATH, then kvmmio from
#     this build, then the host's (iperf3, jq, iproute2's ip);
#   - KVMMIO_L1_GIC: this host's GIC, from /proc/interrupts (override with
#     KVMMIO_HOST_GIC=3|2), which the scenarios compare with kvmmio's;
#   - one scenario at a time on this host (a lock): they count vhost
#     workers and KVM's exits host-wide.
# Results (GoogleTest JSON included) land in
# $KVMMIO_BUILDDIR/tests/arm64/results/host-NAME-gicvN. Exit 77 (skip) with
# one line where the scenarios cannot run here (no /dev/kvm, not root); 99
# instead when KVMMIO_REQUIRE_ARM64=1.
set -euo pipefail
scenario=${1:?usage: host-scenario.sh SCENARIO}
src=${KVMMIO_SRCDIR:?} build=${KVMMIO_BUILDDIR:?}
host=$build/arm64-host
script=$src/tests/arm64/scenarios/$scenario.sh
[ -f "$script" ] || { echo "ERROR: no scenario $script"; exit 99; }
# The scenario gets a /tmp of its own, which would hide a tree under /tmp.
for d in "$src" "$build"; do
  case $(realpath "$d")/ in
  /tmp/*) echo "ERROR: $d is under /tmp, which the scenario gets a private one of: use a source and build directory elsewhere"; exit 99 ;;
  esac
done

if [ -e "$host/unavailable" ]; then
  if [ "${KVMMIO_REQUIRE_ARM64:-0}" = 1 ]; then
    echo "ERROR: arm64 scenarios required (KVMMIO_REQUIRE_ARM64=1) but unavailable: $(cat "$host/unavailable")"
    exit 99
  fi
  echo "SKIP: arm64 scenarios unavailable: $(cat "$host/unavailable")"
  exit 77
fi
[ -s "$host/l2/initramfs" ] ||
  { echo "ERROR: $host is not prepared: make check runs scripts/arm64/host-prepare.sh first"; exit 99; }

# The host's GIC. KVM's maintenance interrupt ("vgic") sits on the host's
# own interrupt controller, whose name says the version: GICv3, or GICv2
# (GIC-0 on kernels that do not call it GICv2).
gic=${KVMMIO_HOST_GIC:-}
if [ -z "$gic" ]; then
  chips=$(grep -m1 ' vgic$' /proc/interrupts || cat /proc/interrupts)
  case $chips in
  *GICv3*) gic=3 ;;
  *GICv2* | *GIC-0*) gic=2 ;;
  *) echo "ERROR: cannot tell this host's GIC version from /proc/interrupts; set KVMMIO_HOST_GIC=3 or 2"; exit 99 ;;
  esac
fi
[[ $gic == [23] ]] || { echo "ERROR: KVMMIO_HOST_GIC is '$gic', not 3 or 2"; exit 99; }

# /dev/vhost-net, /dev/net/tun and /dev/vhost-vsock may need their modules
# (modules are the host's, not a namespace's); the scenarios fail with "no
# device" otherwise.
for m in vhost_net tun vhost_vsock; do modprobe -q "$m" 2>/dev/null || true; done

# KVMMIO_PROGRAM=PATH: the scenario runs that kvmmio (e.g. the package's
# /usr/bin/kvmmio) instead of the build's, first on its PATH.
program_dir=$build/vmm
if [ -n "${KVMMIO_PROGRAM:-}" ]; then
  [ -f "$KVMMIO_PROGRAM" ] && [ -x "$KVMMIO_PROGRAM" ] ||
    { echo "ERROR: KVMMIO_PROGRAM=$KVMMIO_PROGRAM is not an executable file"; exit 99; }
  program_dir=$host/program
  mkdir -p "$program_dir"
  ln -sfn "$KVMMIO_PROGRAM" "$program_dir/kvmmio"
fi

results=$build/tests/arm64/results/host-$scenario-gicv$gic
rm -rf "$build"/tests/arm64/results/host-"$scenario"-gicv*
mkdir -p "$results"

# shellcheck source=tests/arm64/live-progress.sh
source "$src/tests/arm64/live-progress.sh"
started=$SECONDS

exec 8>"$host/lock"
flock 8
echo "== $scenario on this host's KVM (GICv$gic), $(uname -r), kvmmio $(readlink -f "$program_dir/kvmmio")"
set +e
# In the new namespaces: this host's /proc stays reachable at all-proc (the
# kernel's vhost threads, before Linux 6.4, are in no PID namespace but the
# first: net-resets looks there), a fresh /proc for this PID namespace, a
# tmpfs /tmp, loopback up; then the scenario under busybox sh, as in L1.
# The scenario is PID 1 of its namespace: when it ends, the kernel kills
# whatever it left running (iperf3 -s -D, httpd).
# shellcheck disable=SC2016 # the inner shell expands its own variables
timeout -k 30 "${KVMMIO_ARM64_TIMEOUT:-900}" \
  unshare --mount --net --pid --fork --kill-child --propagation private \
  env KVMMIO_DIR="$host/kvmmio" KVMMIO_L2="$host/l2" KVMMIO_RESULTS="$results" \
  KVMMIO_L1_GIC="$gic" KVMMIO_ALL_PROC="$host/all-proc" \
  SCENARIO_PATH="$program_dir:$host/kvmmio/bin:$host/busybox:$build/vmm:$build/tests/arm64:$PATH" \
  bash -c 'set -e
    mount --rbind /proc "$KVMMIO_ALL_PROC"
    mount -t proc proc /proc
    mount -t tmpfs tmpfs /tmp
    ip link set lo up
    cd /tmp
    export PATH=$SCENARIO_PATH
    unset SCENARIO_PATH
    exec sh "$1" </dev/null' bash "$script" 2>&1 | show_live "host-$scenario"
status=${PIPESTATUS[0]}
set -e
flock -u 8
[ "$status" -ne 124 ] || echo "KVMMIO-FAIL: $scenario did not finish in ${KVMMIO_ARM64_TIMEOUT:-900} s (KVMMIO_ARM64_TIMEOUT)"
echo "$status" >"$results/exit-status"
echo "== $scenario on this host's KVM (GICv$gic): exit status $status after $((SECONDS - started)) s; results in $results"
echo "   GoogleTest cases: $("$src/scripts/summarize-gtest.sh" "$results")"
"$src/scripts/summarize-gtest.sh" --failures "$results" | sed 's/^/   /'
exit "$status"
