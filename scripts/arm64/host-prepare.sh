#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Prepares `make check` on an arm64 host to run the Linux-guest scenarios
# (tests/arm64/scenarios) on this host's own KVM, the way the nested
# platform runs them in L1 (tests/arm64/host-scenario.sh runs each):
#
#   scripts/arm64/host-prepare.sh BUILDDIR
#     -> BUILDDIR/arm64-host/l2/Image, l2/initramfs   the L2 guest: Debian's
#          arm64 kernel, and an initramfs with tcp_rr, udp_pps, vsock_stream, hostile_guest, vsock_probe
#          from BUILDDIR and the hooks in tests/arm64/l2-hooks
#        BUILDDIR/arm64-host/kvmmio/lib.sh, kvmmio/bin/net-modes.sh
#          what the scenarios source ($KVMMIO_DIR; links into the source),
#          and kvmmio/bin/net_check (a link to BUILDDIR's), which
#          net-modes.sh runs
#        BUILDDIR/arm64-host/busybox/   L1's userland (httpd, nc, ping, sh...)
#          as links to the static busybox of the arm64 package cache
#
# Where the scenarios cannot run here (no /dev/kvm, not root), it writes
# BUILDDIR/arm64-host/unavailable with the reason, prepares nothing and
# exits 0: the tests then skip with that one line (docs/arm64-platform.md).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: host-prepare.sh BUILDDIR}" && pwd)
out=$build/arm64-host
mkdir -p "$out"
rm -f "$out/unavailable"
unavailable() {
    echo "$1" >"$out/unavailable"
    echo "host-prepare.sh: the Linux-guest scenarios cannot run here: $1"
    exit 0
}
die() { echo "host-prepare.sh: error: $*" >&2; exit 2; }

[[ $(uname -m) == aarch64 ]] || die "this host is $(uname -m): the scenarios run on an arm64 host (elsewhere, nested: scripts/arm64/prepare.sh)"
[[ -e /dev/kvm ]] || unavailable "no /dev/kvm on this arm64 host (KVM is off, or the kernel has none)"
# A network namespace, a private /tmp and the vhost_net and tun modules.
[[ $EUID -eq 0 ]] || unavailable "not root: the scenarios need a network namespace of their own and the vhost_net and tun modules (run make check as root)"

# The L2 guest's programs are copied into a busybox initramfs: static ones.
for p in bench/tcp_rr bench/udp_pps bench/vsock_stream tests/arm64/hostile_guest tests/arm64/vsock_probe; do
    f=$build/$p
    [[ -x $f ]] || die "$f is not built (make -C $build $p)"
    if ! readelf -h "$f" >/dev/null 2>&1 || readelf -l "$f" | grep -q 'program interpreter'; then
        die "$f is not a static program: the L2 guest has no libraries; configure $build with --enable-static-binaries (as scripts/main.sh and scripts/test.sh do on arm64)"
    fi
done

# --no-qemu: the scenarios boot their guests under kvmmio alone; QEMU, the
# main job's peer VMM, is main.sh's to fetch when its --configs name a
# qemu-* cell. A board is offline here (the board rehearsal's is): a
# package its cache does not hold would fail the fetch and every scenario.
"$src/scripts/arm64/fetch-packages.sh" --no-qemu
# shellcheck source=scripts/arm64/common.sh
source "$src/scripts/arm64/common.sh"
kver=$(kernel_version)

# The L2 initramfs, rebuilt when one of its inputs is newer (this host is
# L1: build-initramfs.sh --l2-only makes no L1 image).
l2_bins=(--l2-bin "$build/bench/tcp_rr" --l2-bin "$build/bench/udp_pps" --l2-bin "$build/bench/vsock_stream"
    --l2-bin "$build/tests/arm64/hostile_guest" --l2-bin "$build/tests/arm64/vsock_probe")
hooks=()
for h in "$src"/tests/arm64/l2-hooks/*.sh; do hooks+=(--l2-hook "$h"); done
mkdir -p "$out/l2"
initrd=$out/l2/initramfs
if [[ ! -s $initrd ]] || [[ -n $(find "$build/bench/tcp_rr" "$build/bench/udp_pps" "$build/bench/vsock_stream" \
    "$build/tests/arm64/hostile_guest" "$build/tests/arm64/vsock_probe" "$src/tests/arm64/l2-hooks" "$src/scripts/arm64/init-l2.sh" \
    "$src/scripts/arm64/build-initramfs.sh" "$ROOT/boot/vmlinuz-$kver" -newer "$initrd" -print -quit) ]]; then
    "$src/scripts/arm64/build-initramfs.sh" --l2-only --l2-out "$initrd.tmp" \
        "${l2_bins[@]}" "${hooks[@]}"
    mv "$initrd.tmp" "$initrd"
fi
ln -sfn "$ROOT/boot/vmlinuz-$kver" "$out/l2/Image"

mkdir -p "$out/kvmmio/bin"
ln -sfn "$src/tests/arm64/lib.sh" "$out/kvmmio/lib.sh"
ln -sfn "$src/bench/net-modes.sh" "$out/kvmmio/bin/net-modes.sh"
ln -sfn "$src/bench/matrix.sh" "$out/kvmmio/bin/matrix.sh"
# net-modes.sh's net_mode_misfit runs the modes' rule in net_check, a
# platform binary in L1 (/kvmmio/bin): here this build's, on the same PATH.
[[ -x $build/bench/net_check ]] || die "$build/bench/net_check is not built (make -C $build bench/net_check)"
ln -sfn "$build/bench/net_check" "$out/kvmmio/bin/net_check"

# L1's userland: every busybox applet but ip (L1 has iproute2's ip, which
# the host has too).
rm -rf "$out/busybox"
mkdir -p "$out/busybox"
for a in $("$ROOT/bin/busybox" --list); do
    [[ $a == ip ]] || ln -s "$ROOT/bin/busybox" "$out/busybox/$a"
done
# Where the runner binds this host's own /proc (kernel threads included).
mkdir -p "$out/all-proc"
echo "host-prepare.sh: ready in $out (L2 kernel $kver)"
