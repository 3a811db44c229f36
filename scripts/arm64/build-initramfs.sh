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
#     bridge, veth, virtio-blk + deps    net_failover, virtio_net,
#   /usr/bin/iperf3 + its libraries      virtio_console + deps
#   /usr/sbin/ip (iproute2) + libraries
#   /kvmmio/lib.sh  tests/arm64/lib.sh /usr/bin/iperf3 + its libraries
#   /kvmmio/bin   --bin FILEs (PATH)   /kvmmio/bin   --l2-bin FILEs (PATH)
#     and net-modes.sh (bench/, sourced by the net scenarios and beside
#     net-compare.sh)
#   /scenarios  tests/arm64/scenarios/*.sh   /l2-init.d  --l2-hook FILEs
#   /l2/Image   the same kernel
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
source "$(dirname "$0")/common.sh"

usage() {
    cat <<EOF
Usage: ${0##*/} [--out FILE] [--bin FILE]... [--l2-bin FILE]... [--l2-hook FILE]...
  --out FILE      where to write the L1 initramfs (default \$CACHE/l1-initramfs.cpio.gz,
                  CACHE=${CACHE})
  --bin FILE      copy FILE to /kvmmio/bin in L1 (on PATH); repeatable.
                  Static arm64 binaries are simplest.
  --l2-bin FILE   copy FILE to /kvmmio/bin in L2 (on PATH); repeatable
  --l2-hook FILE  copy FILE to /l2-init.d in L2: L2's /init runs it after
                  KVMMIO-L2-READY, then powers off; repeatable
  --l2-out FILE   also write the L2 initramfs to FILE (for running the L2
                  guest on an arm64 host directly, as scripts/main.sh does)
Needs scripts/arm64/fetch-packages.sh to have run.
EOF
}

out=$CACHE/l1-initramfs.cpio.gz l2_out='' bins=() l2_bins=() l2_hooks=()
while (($#)); do
    case $1 in
    --out) out=${2:?--out needs a FILE}; shift 2 ;;
    --l2-out) l2_out=${2:?--l2-out needs a FILE}; shift 2 ;;
    --bin) bins+=("${2:?--bin needs a FILE}"); shift 2 ;;
    --l2-bin) l2_bins+=("${2:?--l2-bin needs a FILE}"); shift 2 ;;
    --l2-hook) l2_hooks+=("${2:?--l2-hook needs a FILE}"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done
for f in "${bins[@]}" "${l2_bins[@]}" "${l2_hooks[@]}"; do
    [[ -f $f ]] || die "no such file: $f"
done

kver=$(kernel_version)
moddir=$ROOT/lib/modules/$kver
[[ -x $ROOT/bin/busybox && -s $moddir/modules.dep ]] ||
    die "incomplete arm64 root in $ROOT: run scripts/arm64/fetch-packages.sh"
command -v cpio >/dev/null || die "cpio missing: run scripts/arm64/fetch-packages.sh"
READELF=aarch64-linux-gnu-readelf
# On an arm64 host, the native readelf reads arm64 binaries.
[[ $(uname -m) == aarch64 ]] && command -v readelf >/dev/null && READELF=readelf
command -v $READELF >/dev/null ||
    die "$READELF missing: run scripts/arm64/fetch-packages.sh (g++-aarch64-linux-gnu)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- kernel modules ---------------------------------------------------------
# modules.dep maps each module to its dependencies; index it by module name.
declare -A MOD_PATH MOD_DEPS
while IFS=: read -r path deps; do
    name=${path##*/}; name=${name%.ko}; name=${name//-/_}
    MOD_PATH[$name]=$path
    MOD_DEPS[$name]=$deps
done <"$moddir/modules.dep"

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
            grep -q "/$name.ko\$" "$moddir/modules.builtin" ||
                die "module $name is neither in modules.dep nor built in ($kver)"
            return
        fi
        for d in ${MOD_DEPS[$name]}; do
            d=${d##*/}; d=${d%.ko}; visit "${d//-/_}"
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
# program, its shared libraries (DT_NEEDED, recursively) and the loader.
add_program() {
    local tree=$1 file=$2 dir=$3 lib found d
    install -D -m 755 "$file" "$tree/$dir/${file##*/}"
    $READELF -l "$file" 2>/dev/null | grep -q 'interpreter: /lib/ld-linux-aarch64.so.1' ||
        return 0
    # The loader, where the program asks for it; libc.so.6 also names it.
    install -D -m 755 "$ROOT/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1" \
        "$tree/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"
    ln -sf aarch64-linux-gnu/ld-linux-aarch64.so.1 "$tree/lib/ld-linux-aarch64.so.1"
    local todo=("$file")
    while ((${#todo[@]})); do
        for lib in $($READELF -d "${todo[0]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            [[ -e $tree/lib/aarch64-linux-gnu/$lib ]] && continue
            found=''
            for d in "$ROOT/lib/aarch64-linux-gnu" "$ROOT/usr/lib/aarch64-linux-gnu"; do
                [[ -e $d/$lib ]] && { found=$d/$lib; break; }
            done
            [[ -n $found ]] ||
                die "${file##*/} needs $lib, not in $ROOT: link it with -static, or add the library's package to fetch-packages.sh"
            install -D -m 755 "$(readlink -f "$found")" "$tree/lib/aarch64-linux-gnu/$lib"
            todo+=("$found")
        done
        todo=("${todo[@]:1}")
    done
}

# new_tree TREE INIT: the skeleton both initramfs images share.
new_tree() {
    local tree=$1
    mkdir -p "$tree"/{bin,dev,proc,sys,tmp,kvmmio/bin}
    install -m 755 "$ROOT/bin/busybox" "$tree/bin/busybox"
    install -m 755 "$2" "$tree/init"
    add_program "$tree" "$ROOT/usr/bin/iperf3" usr/bin
}

# make_cpio TREE OUT: TREE as a gzip'ed newc cpio, every file owned by root.
make_cpio() {
    (cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
        cpio --quiet -o -H newc -R 0:0) | gzip -6 >"$2"
}

here=$(dirname "$0")

# --- L2 ---------------------------------------------------------------------
l2=$work/l2
new_tree "$l2" "$here/init-l2.sh"
add_modules "$l2" virtio_mmio failover net_failover virtio_net virtio_console
for f in "${l2_bins[@]}"; do add_program "$l2" "$f" kvmmio/bin; done
for f in "${l2_hooks[@]}"; do install -D -m 755 "$f" "$l2/l2-init.d/${f##*/}"; done

# --- L1 ---------------------------------------------------------------------
l1=$work/l1
new_tree "$l1" "$here/init-l1.sh"
add_modules "$l1" vhost_iotlb vhost tap tun vhost_net llc stp bridge veth \
    virtio_mmio virtio_blk # virtio-blk: the result disk of run.sh
# iproute2's ip ahead of busybox's on PATH: netns and veth (the host baseline
# of the main job's benchmark).
add_program "$l1" "$ROOT/bin/ip" usr/sbin
# jq: scripts read JSON (--stats, iperf3 -J, tcp_rr --json) with it.
add_program "$l1" "$ROOT/usr/bin/jq" usr/bin
install -D -m 644 "$REPO/tests/arm64/lib.sh" "$l1/kvmmio/lib.sh"
install -D -m 644 "$REPO/bench/net-modes.sh" "$l1/kvmmio/bin/net-modes.sh"
mkdir -p "$l1/scenarios"
install -m 755 "$REPO"/tests/arm64/scenarios/*.sh "$l1/scenarios/"
for f in "${bins[@]}"; do add_program "$l1" "$f" kvmmio/bin; done
install -D -m 644 "$ROOT/boot/vmlinuz-$kver" "$l1/l2/Image"
make_cpio "$l2" "$l1/l2/initramfs"
if [[ -n $l2_out ]]; then
    mkdir -p "$(dirname "$l2_out")"
    cp "$l1/l2/initramfs" "$l2_out"
fi

mkdir -p "$(dirname "$out")"
make_cpio "$l1" "$out.tmp"
mv "$out.tmp" "$out"
say "wrote $out ($(du -h "$out" | cut -f1); L2 initramfs $(du -h "$l1/l2/initramfs" | cut -f1)," \
    "kernel $kver, ${#bins[@]} --bin, ${#l2_bins[@]} --l2-bin, ${#l2_hooks[@]} --l2-hook)"
