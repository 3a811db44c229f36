#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/arm64/build-initramfs.sh: assembles the L1 initramfs of the arm64
# test platform (newc cpio, gzip) from the root fetch-packages.sh unpacked.
# Owns only the file it writes (--out); reads $CACHE/root and the repository.
#
# L1 image:                          L2 payload (/l2/initramfs inside L1):
#   /init       init-l1.sh             /init      init-l2.sh
#   /bin        static busybox         /bin       static busybox
#   /lib/modules  vhost, tap/tun,      /lib/modules  virtio_mmio, failover,
#     bridge, veth, virtio-blk,          net_failover, virtio_net,
#     vhost_vsock + deps                 virtio_console, virtio_blk,
#   /usr/bin/iperf3 + its libraries      gpio_keys, virtio_rng,
#                                        vmw_vsock_virtio_transport, virtiofs
#                                        + deps
#   /usr/sbin/ip (iproute2) + libraries
#   /kvmmio/lib.sh  tests/arm64/lib.sh /usr/bin/iperf3 + its libraries
#   /kvmmio/bin   --bin FILEs (PATH)   /kvmmio/bin   --l2-bin FILEs (PATH)
#     and net-modes.sh (bench/, sourced by the net scenarios and beside
#     net-compare.sh)
#   /scenarios  tests/arm64/scenarios/*.sh   /l2-init.d  --l2-hook FILEs
#   /l2/Image   the L2 kernel
#
# Tools disk (--tools-out FILE), a read-only squashfs image that L1 and L2
# mount instead of carrying what is on it in an initramfs: fio and its
# shared libraries (librados, librbd, gluster, ICU...: 81 MB, 28 MB of
# gzip, which every boot would unpack), tmux and its libraries (vmm-boot's
# background case), qemu-system-aarch64 and its (the main job's peer
# VMM, run in L1) and virtiofsd (the backend of --fs, run in L1), with the
# loader, and /fio, /tmux, /qemu-system-aarch64 and /virtiofsd, wrappers
# that run them on those libraries wherever the image is mounted.
#
# L1 boots the --l1-kernel series (its modules are in L1's image), L2 the
# --l2-kernel series (/l2/Image, its modules in L2's image); both default to
# the default kernel. OUT.kernels records the two releases ("l1 RELEASE",
# "l2 RELEASE"); run.sh boots L1 with the kernel it names.
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
source "$(dirname "$0")/common.sh"

usage() {
    cat <<EOF
Usage: ${0##*/} [--out FILE] [--l1-kernel SERIES] [--l2-kernel SERIES]
                  [--bin FILE]... [--l2-bin FILE]... [--l2-hook FILE]...
  --out FILE      where to write the L1 initramfs (default \$CACHE/l1-initramfs.cpio.gz,
                  CACHE=${CACHE}); FILE.kernels names the two kernels
  --l1-kernel SERIES  L1's kernel series (6.1, 6.12; default: the default
                  kernel); fetch it first with fetch-packages.sh --kernel SERIES
  --l2-kernel SERIES  L2's kernel series: /l2/Image and L2's modules
  --bin FILE      copy FILE to /kvmmio/bin in L1 (on PATH); repeatable.
                  Static arm64 binaries are simplest.
  --l2-bin FILE   copy FILE to /kvmmio/bin in L2 (on PATH); repeatable
  --l2-hook FILE  copy FILE to /l2-init.d in L2: L2's /init runs it after
                  KVMMIO-L2-READY, then powers off; repeatable
  --l2-out FILE   also write the L2 initramfs to FILE (for running the L2
                  guest on an arm64 host directly, as scripts/main.sh does)
  --tools-out FILE  also write the tools disk (squashfs: fio and its
                  libraries; run FILE's /fio where it is mounted)
  --l2-only       write only the L2 initramfs (--l2-out), no L1 image: an
                  arm64 host is L1 itself (main.sh and host-prepare.sh there;
                  the L1 image was ~26 MB of gzip under a board's CPU)
Needs scripts/arm64/fetch-packages.sh to have run.
EOF
}

out=$CACHE/l1-initramfs.cpio.gz l2_out='' tools_out='' l2_only=0 bins=() l2_bins=() l2_hooks=() l1_series='' l2_series=''
while (($#)); do
    case $1 in
    --out) out=${2:?--out needs a FILE}; shift 2 ;;
    --l1-kernel) l1_series=${2:?--l1-kernel needs a SERIES}; shift 2 ;;
    --l2-kernel) l2_series=${2:?--l2-kernel needs a SERIES}; shift 2 ;;
    --l2-out) l2_out=${2:?--l2-out needs a FILE}; shift 2 ;;
    --l2-only) l2_only=1; shift ;;
    --tools-out) tools_out=${2:?--tools-out needs a FILE}; shift 2 ;;
    --bin) bins+=("${2:?--bin needs a FILE}"); shift 2 ;;
    --l2-bin) l2_bins+=("${2:?--l2-bin needs a FILE}"); shift 2 ;;
    --l2-hook) l2_hooks+=("${2:?--l2-hook needs a FILE}"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done
((!l2_only)) || [[ -n $l2_out ]] || die "--l2-only needs --l2-out FILE"
for f in "${bins[@]}" "${l2_bins[@]}" "${l2_hooks[@]}"; do
    [[ -f $f ]] || die "no such file: $f"
done

kver_l1=$(kernel_version "$l1_series")
kver_l2=$(kernel_version "$l2_series")
for v in "$kver_l1" "$kver_l2"; do
    [[ -x $ROOT/bin/busybox && -s $ROOT/lib/modules/$v/modules.dep ]] ||
        die "incomplete arm64 root in $ROOT (kernel $v): run scripts/arm64/fetch-packages.sh"
done
command -v cpio >/dev/null || die "cpio missing: run scripts/arm64/fetch-packages.sh"
READELF=aarch64-linux-gnu-readelf STRIP=aarch64-linux-gnu-strip
# On an arm64 host, the native binutils read arm64 binaries.
[[ $(uname -m) == aarch64 ]] && command -v readelf >/dev/null && READELF=readelf STRIP=strip
for tool in $READELF $STRIP; do
    command -v $tool >/dev/null ||
        die "$tool missing: run scripts/install-deps.sh (binutils-aarch64-linux-gnu, or binutils on arm64)"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- kernel modules ---------------------------------------------------------
# use_kernel RELEASE: index RELEASE's modules.dep (each module's path and
# dependencies) by module name, for add_modules.
declare -A MOD_PATH MOD_DEPS
kver='' moddir=''
use_kernel() {
    kver=$1 moddir=$ROOT/lib/modules/$1
    MOD_PATH=() MOD_DEPS=()
    local path deps name
    while IFS=: read -r path deps; do
        name=${path##*/}; name=${name%.ko}; name=${name//-/_}
        # (Kernels that compress modules: the index keys by the bare name.)
        name=${name%.ko.xz}; name=${name%.ko.zst}; name=${name%.ko.gz}
        MOD_PATH[$name]=$path
        MOD_DEPS[$name]=$deps
    done <"$moddir/modules.dep"
}

# add_modules TREE MODULE...: copy MODULE... and their dependencies into TREE
# and list them, dependencies first, in TREE/lib/modules/load-order.
add_modules() {
    local tree=$1 m; shift
    local -A seen=()
    visit() {
        local name=$1 d
        [[ -n ${seen[$name]:-} ]] && return
        seen[$name]=1
        if [[ -z ${MOD_PATH[$name]:-} ]]; then
            grep -qE "/$name\.ko(\.(xz|zst|gz))?\$" "$moddir/modules.builtin" ||
                die "module $name is neither in modules.dep nor built in ($kver)"
            return
        fi
        for d in ${MOD_DEPS[$name]}; do
            d=${d##*/}; d=${d%.xz}; d=${d%.zst}; d=${d%.gz}; d=${d%.ko}; visit "${d//-/_}"
        done
        install -D -m 644 "$moddir/${MOD_PATH[$name]}" "$tree/lib/modules/${MOD_PATH[$name]}"
        echo "${MOD_PATH[$name]}" >>"$tree/lib/modules/load-order"
    }
    mkdir -p "$tree/lib/modules"
    : >"$tree/lib/modules/load-order"
    for m in "$@"; do visit "$m"; done
}

# --- programs ---------------------------------------------------------------
# add_program TREE FILE DIR: copy FILE into TREE/DIR and, for a dynamic arm64
# program or a shared library (a plugin a program loads itself), its
# shared libraries (DT_NEEDED, recursively) and the loader.
add_program() {
    local tree=$1 file=$2 dir=$3 lib found d
    install -D -m 755 "$file" "$tree/$dir/${file##*/}"
    # Without their debug information: the test programs are built with -g
    # (144 of the L1 image's 198 MB), which every L1 boot would decompress
    # and unpack under TCG, and the L2 image's tools, each L2 boot. The
    # build tree keeps the full programs for addr2line or gdb.
    if $READELF -h "$file" >/dev/null 2>&1; then
        $STRIP --strip-debug "$tree/$dir/${file##*/}"
    fi
    [[ $file == *.so.* ]] || $READELF -l "$file" 2>/dev/null | grep -q 'interpreter: /lib/ld-linux-aarch64.so.1' ||
        return 0
    # The loader, where the program asks for it; libc.so.6 also names it.
    install -D -m 755 "$ROOT/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1" \
        "$tree/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"
    ln -sf aarch64-linux-gnu/ld-linux-aarch64.so.1 "$tree/lib/ld-linux-aarch64.so.1"
    # libgcc_s.so.1 with every dynamic program, though none names it: glibc
    # loads it itself to unwind a thread at pthread_cancel or pthread_exit,
    # and aborts the program without it. iperf3 3.16 and later (Debian 13's)
    # cancels its worker threads at the end of each test, so on a Debian 13
    # board L2's iperf3 client died with "Aborted" after a test.
    local todo=("$file") extra=libgcc_s.so.1
    while ((${#todo[@]})); do
        for lib in $($READELF -d "${todo[0]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') $extra; do
            [[ -e $tree/lib/aarch64-linux-gnu/$lib ]] && continue
            found=''
            # .../ceph: librados's RUNPATH (fio's libceph-common.so.2).
            for d in "$ROOT/lib/aarch64-linux-gnu" "$ROOT/usr/lib/aarch64-linux-gnu" \
                "$ROOT/usr/lib/aarch64-linux-gnu/ceph"; do
                [[ -e $d/$lib ]] && { found=$d/$lib; break; }
            done
            [[ -n $found ]] ||
                die "${file##*/} needs $lib, not in $ROOT: link it with -static, or add the library's package to fetch-packages.sh"
            install -D -m 755 "$(readlink -f "$found")" "$tree/lib/aarch64-linux-gnu/$lib"
            todo+=("$found")
        done
        todo=("${todo[@]:1}") extra=''
    done
}

# new_tree TREE INIT: the skeleton both initramfs images share.
new_tree() {
    local tree=$1
    mkdir -p "$tree"/{bin,dev,proc,sys,tmp,kvmmio/bin}
    install -m 755 "$ROOT/bin/busybox" "$tree/bin/busybox"
    install -m 755 "$2" "$tree/init"
    install -m 755 "$here/load-modules.sh" "$tree/bin/load-modules"
    add_program "$tree" "$ROOT/usr/bin/iperf3" usr/bin
}

# make_cpio TREE OUT: TREE as a gzip'ed newc cpio, every file owned by root.
make_cpio() {
    (cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
        cpio --quiet -o -H newc -R 0:0) | gzip -6 >"$2"
}

here=$(dirname "$0")

# --- the tools disk ----------------------------------------------------------
if [[ -n $tools_out ]]; then
    command -v mksquashfs >/dev/null || die "mksquashfs missing: run scripts/arm64/fetch-packages.sh (squashfs-tools)"
    tools=$work/tools
    # qemu-system-aarch64: the main job's peer VMM (net-compare.sh's qemu-*
    # cells), run in L1 like fio on the host side.
    # (QEMU where fetch-packages.sh fetched it: not with --no-qemu.)
    qemu_tool=(qemu-system-aarch64)
    [[ -x $ROOT/usr/bin/qemu-system-aarch64 ]] || qemu_tool=()
    # ssh: the guest-disk scenario logs in to its guest with it.
    for p in fio tmux ssh "${qemu_tool[@]}"; do
        [[ -x $ROOT/usr/bin/$p ]] || die "no $p in $ROOT: run scripts/arm64/fetch-packages.sh"
        add_program "$tools" "$ROOT/usr/bin/$p" usr/bin
        # The loader by its path in the image: the wrapper runs the program on
        # the image's libraries, not on the ones of the system that mounted it.
        cat >"$tools/$p" <<WRAPPER
#!/bin/sh
# $p from this image, on this image's libraries (build-initramfs.sh --tools-out).
d=\$(cd "\$(dirname "\$0")" && pwd)
exec "\$d/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1" --library-path "\$d/lib/aarch64-linux-gnu" "\$d/usr/bin/$p" "\$@"
WRAPPER
        chmod 755 "$tools/$p"
    done
    # virtiofsd: the backend of --fs (vmm-boot's fs case), Debian 12's C one
    # from qemu-system-common, where fetch-packages.sh fetched QEMU.
    if [[ -x $ROOT/usr/lib/qemu/virtiofsd ]]; then
        add_program "$tools" "$ROOT/usr/lib/qemu/virtiofsd" usr/bin
        cat >"$tools/virtiofsd" <<'WRAPPER'
#!/bin/sh
# virtiofsd from this image, on this image's libraries (build-initramfs.sh --tools-out).
d=$(cd "$(dirname "$0")" && pwd)
exec "$d/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1" --library-path "$d/lib/aarch64-linux-gnu" "$d/usr/bin/virtiofsd" "$@"
WRAPPER
        chmod 755 "$tools/virtiofsd"
    fi
    # dpdk-testpmd: the user-space switch of vmm-boot's vhost-user-net case
    # (--net vhost-user), where fetch-packages.sh fetched QEMU. Its drivers
    # are plugins DPDK would look for in its own directory: the wrapper
    # names the two the case uses (-d, before the caller's EAL arguments).
    if [[ -x $ROOT/usr/bin/dpdk-testpmd ]]; then
        add_program "$tools" "$ROOT/usr/bin/dpdk-testpmd" usr/bin
        for so in librte_net_vhost.so.23 librte_mempool_ring.so.23; do
            [[ -e $ROOT/usr/lib/aarch64-linux-gnu/$so ]] || die "no $so in $ROOT: run scripts/arm64/fetch-packages.sh"
            add_program "$tools" "$ROOT/usr/lib/aarch64-linux-gnu/$so" lib/aarch64-linux-gnu
        done
        cat >"$tools/dpdk-testpmd" <<'WRAPPER'
#!/bin/sh
# dpdk-testpmd from this image, on this image's libraries, with the vhost
# and mempool-ring drivers loaded (build-initramfs.sh --tools-out).
d=$(cd "$(dirname "$0")" && pwd)
l=$d/lib/aarch64-linux-gnu
exec "$l/ld-linux-aarch64.so.1" --library-path "$l" "$d/usr/bin/dpdk-testpmd" \
    -d "$l/librte_mempool_ring.so.23" -d "$l/librte_net_vhost.so.23" "$@"
WRAPPER
        chmod 755 "$tools/dpdk-testpmd"
    fi
    # tmux refuses to start without a UTF-8 locale (C.UTF-8 will do); its
    # wrapper points glibc at this one (LOCPATH).
    [[ -d $ROOT/usr/lib/locale/C.utf8 ]] || die "no C.utf8 locale in $ROOT: run scripts/arm64/fetch-packages.sh"
    mkdir -p "$tools/usr/lib/locale"
    cp -r "$ROOT/usr/lib/locale/C.utf8" "$tools/usr/lib/locale/"
    sed -i 's|^exec |LOCPATH=$d/usr/lib/locale LC_ALL=C.UTF-8 exec |' "$tools/tmux"
    mkdir -p "$(dirname "$tools_out")"
    rm -f "$tools_out.tmp"  # mksquashfs would add to it
    # Uncompressed: 0.1 s instead of 9 (gzip, 31 MB) here, and minutes on
    # a board's CPU under TCG; nothing for L1 and L2 to decompress either.
    mksquashfs "$tools" "$tools_out.tmp" -quiet -no-progress -all-root -noappend -noI -noD -noF -noX >/dev/null
    mv "$tools_out.tmp" "$tools_out"
    say "wrote $tools_out ($(du -h "$tools_out" | cut -f1) squashfs, uncompressed: fio, tmux, ssh, qemu-system-aarch64, virtiofsd, dpdk-testpmd and their libraries)"
fi

# --- L2 ---------------------------------------------------------------------
l2=$work/l2
use_kernel "$kver_l2"
new_tree "$l2" "$here/init-l2.sh"
add_modules "$l2" virtio_mmio failover net_failover virtio_net virtio_console virtio_blk gpio_keys \
    virtio_rng squashfs virtio_pci vmw_vsock_virtio_transport virtiofs # virtio_rng: kvmmio's entropy device (--rng on, the default);
# squashfs: the tools disk; virtio_pci: virtio-net-pci under the peer VMM (net-compare.sh's qemu-pci);
# vmw_vsock_virtio_transport (with vsock and its common part): the driver of --vsock's device;
# virtiofs (with fuse): the driver of --fs's device
for f in "${l2_bins[@]}"; do add_program "$l2" "$f" kvmmio/bin; done
for f in "${l2_hooks[@]}"; do install -D -m 755 "$f" "$l2/l2-init.d/${f##*/}"; done
if ((l2_only)); then
    mkdir -p "$(dirname "$l2_out")"
    make_cpio "$l2" "$l2_out.tmp"
    mv "$l2_out.tmp" "$l2_out"
    say "wrote $l2_out ($(du -h "$l2_out" | cut -f1); L2 kernel $kver_l2, ${#l2_bins[@]} --l2-bin," \
        "${#l2_hooks[@]} --l2-hook)"
    exit 0
fi

# --- L1 ---------------------------------------------------------------------
l1=$work/l1
use_kernel "$kver_l1"
new_tree "$l1" "$here/init-l1.sh"
add_modules "$l1" vhost_iotlb vhost tap tun vhost_net llc stp bridge veth \
    virtio_mmio virtio_blk squashfs vhost_vsock vsock_loopback crc32c_generic nf_tables nft_chain_nat nft_masq nft_ct
# virtio-blk: the result disk of run.sh; squashfs: the tools disk;
# vhost_vsock (with vsock): --vsock's backend; vsock_loopback: the main
# job's host vsock cell (L1 to itself, CID 1); nf_tables and the rest:
# `kvmmio network`'s masquerade (the nat scenario), crc32c_generic first:
# libcrc32c (under nf_conntrack) needs a crc32c, a soft dependency that
# modules.dep does not list
# iproute2's ip ahead of busybox's on PATH: netns and veth (the host baseline
# of the main job's benchmark).
add_program "$l1" "$ROOT/bin/ip" usr/sbin
# jq: scripts read JSON (--stats, iperf3 -J, tcp_rr --json) with it.
add_program "$l1" "$ROOT/usr/bin/jq" usr/bin
# nft, dnsmasq: what `kvmmio network create` runs (the nat scenario).
add_program "$l1" "$ROOT/usr/sbin/nft" usr/sbin
add_program "$l1" "$ROOT/usr/sbin/dnsmasq" usr/sbin
install -D -m 644 "$REPO/tests/arm64/lib.sh" "$l1/kvmmio/lib.sh"
install -D -m 644 "$REPO/bench/net-modes.sh" "$l1/kvmmio/bin/net-modes.sh"
install -D -m 644 "$REPO/bench/matrix.sh" "$l1/kvmmio/bin/matrix.sh"
mkdir -p "$l1/scenarios"
install -m 755 "$REPO"/tests/arm64/scenarios/*.sh "$l1/scenarios/"
for f in "${bins[@]}"; do add_program "$l1" "$f" kvmmio/bin; done
install -D -m 644 "$ROOT/boot/vmlinuz-$kver_l2" "$l1/l2/Image"
make_cpio "$l2" "$l1/l2/initramfs"
if [[ -n $l2_out ]]; then
    mkdir -p "$(dirname "$l2_out")"
    cp "$l1/l2/initramfs" "$l2_out"
fi

mkdir -p "$(dirname "$out")"
make_cpio "$l1" "$out.tmp"
printf 'l1 %s\nl2 %s\n' "$kver_l1" "$kver_l2" >"$out.kernels"
mv "$out.tmp" "$out"
say "wrote $out ($(du -h "$out" | cut -f1); L2 initramfs $(du -h "$l1/l2/initramfs" | cut -f1)," \
    "L1 kernel $kver_l1, L2 kernel $kver_l2, ${#bins[@]} --bin, ${#l2_bins[@]} --l2-bin," \
    "${#l2_hooks[@]} --l2-hook)"
