#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/arm64/fetch-packages.sh: everything the arm64 test platform needs
# from Debian's archive, fetched once.
#
# Owns: the host packages it installs (if missing), $CACHE/debs (downloaded
# arm64 .debs), $CACHE/root (those .debs unpacked into one arm64 root),
# $CACHE/stamps, $CACHE/kernel-version, $CACHE/kernels/ and
# $CACHE/apt-backports/. See common.sh for $CACHE (env KVMMIO_CACHE).
#
# Idempotent: a second run installs, downloads and unpacks nothing.
# Usage: scripts/arm64/fetch-packages.sh [--kernel SERIES]... [--no-qemu]
#   --no-qemu leaves out qemu-system-arm (the main job's peer VMM, for the
#   tools disk): a board whose main.sh measures no qemu-* config.
#   Always fetches the default kernel: linux-image-arm64 of the host's
#   Debian release (6.1 on Debian 12). --kernel SERIES (e.g. 6.12) also
#   fetches that series: from the host's release if its linux-image-arm64
#   is that series, else from the release's -backports suite, which is read
#   through a private apt configuration in $CACHE/apt-backports (the host's
#   own mirror; the system's apt sources and lists stay as they are).
#   A flavoured SERIES (6.12-16k: Debian's arm64-16k kernel, 16 KiB pages)
#   comes from the meta package linux-image-6.12-arm64-16k or
#   linux-image-arm64-16k of the release, else of its -backports suite.
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
source "$(dirname "$0")/common.sh"
export LC_ALL=C

series_wanted=() with_qemu=1
while (($#)); do
    case $1 in
    --no-qemu) with_qemu=0; shift ;;
    --kernel) check_series "${2:?--kernel needs a SERIES, e.g. 6.12}"; series_wanted+=("$2"); shift 2 ;;
    -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
    *) sed -n '2,23p' "$0" >&2; die "unknown argument: $1" ;;
    esac
done

# squashfs-tools: the tools disk (build-initramfs.sh --tools-out).
HOST_PKGS=(qemu-system-arm cpio kmod squashfs-tools g++-aarch64-linux-gnu)
native_arm64=0
# On an arm64 host (scripts/main.sh there) arm64 is the native architecture:
# no foreign architecture, no emulator, no cross compiler.
[[ $(dpkg --print-architecture) == arm64 ]] && native_arm64=1 && HOST_PKGS=(cpio kmod squashfs-tools binutils)

# --- host side: arm64 as a foreign architecture, host tools -------------
updated=0
apt_update_once() {
    ((updated)) && return
    say "apt-get update"
    apt-get update -qq
    updated=1
}
need_root() {
    [[ $EUID -eq 0 ]] || die "$1 needs root: run this script as root (or: sudo $0)"
}

if ((!native_arm64)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    need_root "dpkg --add-architecture arm64"
    dpkg --add-architecture arm64
    apt_update_once
fi
# Architecture added but package lists never fetched (fresh machine).
if ! compgen -G '/var/lib/apt/lists/*binary-arm64_Packages*' >/dev/null; then
    need_root "apt-get update"
    apt_update_once
fi

missing=()
for p in "${HOST_PKGS[@]}"; do
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == 'install ok installed' ]] ||
        missing+=("$p")
done
if ((${#missing[@]})); then
    need_root "installing ${missing[*]}"
    apt_update_once
    say "installing host packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- resolve the arm64 packages and their versions ----------------------
# kernel_package [APT OPTION]...: the package linux-image-arm64:arm64 (a meta
# package) depends on, which names the kernel release.
kernel_package() { meta_kernel_package linux-image-arm64 "$@"; }
# meta_kernel_package META [APT OPTION]...: the kernel package META:arm64
# depends on (linux-image-RELEASE, RELEASE ending in -arm64 or -arm64-FLAVOUR).
# apt-cache names it with ":arm64" on a foreign-architecture host and
# without on an arm64 one (a board): both are read.
meta_kernel_package() {
    local meta=$1; shift
    apt-cache "$@" depends "$meta:arm64" 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^: ]*-arm64\(-[a-z0-9]*\)\{0,1\}\)\([: ].*\)\{0,1\}$/\1/p' | head -n1
}
# series_of RELEASE: 6.1.0-57-arm64 -> 6.1
series_of() { [[ $1 =~ ^([0-9]+\.[0-9]+) ]] && echo "${BASH_REMATCH[1]}"; }

kpkg=$(kernel_package)
[[ -n $kpkg ]] || die "cannot resolve linux-image-arm64:arm64 (apt-get update?)"
kver=${kpkg#linux-image-}
default_series=$(series_of "$kver")

# The -backports suite of the host's release, read through apt options that
# point at a private source list and private package lists: nothing of the
# system's apt configuration changes. The mirror is the one the host's apt
# sources use for its release (apt-get indextargets), so no host name is
# written down here; Debian's archive keyring verifies the suite.
BPO=$CACHE/apt-backports
APT_BPO=(-o "Dir::Etc::SourceList=$BPO/sources.list" -o "Dir::Etc::SourceParts=$BPO/sources.list.d"
    -o "Dir::State::Lists=$BPO/lists" -o "Dir::Cache=$BPO/cache" -o APT::Sandbox::User=root)
backports_ready=0
setup_backports() {
    ((backports_ready)) && return
    local codename mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    # shellcheck disable=SC1091 # the host's file
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [[ -n $codename ]] || die "cannot tell this host's Debian release (VERSION_CODENAME in /etc/os-release)"
    # shellcheck disable=SC2016 # apt's own $(FIELD) syntax
    mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' |
        awk -v r="$codename" '$2 == r && $3 == "deb" { print $1; exit }')
    [[ -n $mirror ]] || die "no apt source for $codename to take the mirror of $codename-backports from"
    mkdir -p "$BPO/sources.list.d" "$BPO/lists/partial" "$BPO/cache/archives/partial"
    local opts=arch=arm64
    [[ -e $keyring ]] && opts+=" signed-by=$keyring"
    local line="deb [$opts] $mirror $codename-backports main"
    if [[ ! -s $BPO/sources.list || $(<"$BPO/sources.list") != "$line" ]]; then
        echo "$line" >"$BPO/sources.list"
        rm -f "$BPO"/lists/*_Packages*
    fi
    if ! compgen -G "$BPO/lists/*_Packages*" >/dev/null; then
        say "apt-get update for $codename-backports ($mirror, private lists in $BPO)"
        apt-get "${APT_BPO[@]}" update -qq ||
            die "apt-get update of $codename-backports failed (network? mirror $mirror?)"
    fi
    backports_ready=1
}

# KERNELS: "SERIES PACKAGE APT" for each kernel to fetch; APT is "system" or
# "backports". The default kernel comes first.
KERNELS=("$default_series $kpkg system")
# flavoured_kernel SERIES: "PACKAGE APT" for a flavoured series (6.12-16k):
# the release's meta packages first, then those of its -backports suite.
flavoured_kernel() {
    local f v=${1%%-*} meta p
    f=$(series_flavour "$1")
    for meta in "linux-image-$v-arm64-$f" "linux-image-arm64-$f"; do
        p=$(meta_kernel_package "$meta")
        [[ -n $p && $(series_of "${p#linux-image-}") == "$v" ]] && { echo "$p system"; return; }
    done
    setup_backports
    for meta in "linux-image-$v-arm64-$f" "linux-image-arm64-$f"; do
        p=$(meta_kernel_package "$meta" "${APT_BPO[@]}")
        [[ -n $p && $(series_of "${p#linux-image-}") == "$v" ]] && { echo "$p backports"; return; }
    done
    die "kernel $1: no arm64 kernel $v of flavour $f (meta package linux-image-$v-arm64-$f or" \
        "linux-image-arm64-$f) in this release or its backports; Debian's arm64 kernels have 4 KiB (6.12)" \
        "or 16 KiB pages (6.12-16k) only (docs/arm64-platform.md, \"Kernels\")"
}
for s in "${series_wanted[@]}"; do
    [[ $s == "$default_series" ]] && continue
    [[ " ${KERNELS[*]} " == *" $s "* ]] && continue
    if [[ -n $(series_flavour "$s") ]]; then
        k=$(flavoured_kernel "$s") || exit 2
        KERNELS+=("$s $k")
        continue
    fi
    setup_backports
    p=$(kernel_package "${APT_BPO[@]}")
    if [[ -z $p || $(series_of "${p#linux-image-}") != "$s" ]]; then
        bpo=${p#linux-image-}
        die "kernel $s: the host's release has ${kpkg#linux-image-}, its backports" \
            "${bpo:-no arm64 kernel}; no arm64 kernel $s in Debian's archive here"
    fi
    KERNELS+=("$s $p backports")
done

# (Each apt-cache call costs ~1 s where its cache is disabled: batch them.)

# lib_closure PKG...: the packages named lib* that PKG... depend on, recursively
# (what a dynamically linked program needs at run time; no debconf & co).
lib_closure() {
    local -A seen=()
    local todo=("$@") next d
    while ((${#todo[@]})); do
        next=()
        for d in $(apt-cache depends --no-recommends --no-suggests --no-conflicts \
                --no-breaks --no-replaces --no-enhances "${todo[@]/%/:arm64}" |
                sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \(lib[^:< ]*\).*/\2/p'); do
            [[ -n ${seen[$d]:-} ]] && continue
            seen[$d]=1; next+=("$d")
        done
        todo=("${next[@]}")
    done
    printf '%s\n' "${!seen[@]}" | sort
}

# iproute2: L1's `ip netns` and veth pairs for the main job's host baseline
# (busybox's ip has neither).
# jq: the scenarios and the main job's driver read JSON (--stats, iperf3,
# tcp_rr) with it, never by line shape.
# fio: the main job's disk cells, in L1 (the host side) and in L2 (from the
# tools disk build-initramfs.sh --tools-out makes: its libraries, librados,
# librbd, gluster and the like, are ~20 MB that no L2 initramfs carries).
# tmux: vmm-boot's background case (kvmmio run ... & from an interactive
# shell on a terminal), from the tools disk too, with the C.UTF-8 locale it
# insists on (libc-bin's /usr/lib/locale/C.utf8).
# qemu-system-arm: qemu-system-aarch64, the main job's peer VMM (bench/
# net-compare.sh's qemu-pci and qemu-mmio cells), from the tools disk in L1.
# nftables, dnsmasq-base: `kvmmio network`'s nft and dnsmasq, in L1 (the
# nat scenario: a NAT network on the nested board).
# openssh-client: ssh, from the tools disk, the guest-disk scenario's login
# to its guest.
# qemu-system-common: Debian 12's virtiofsd (/usr/lib/qemu/virtiofsd), the
# backend of vmm-boot's fs case (--fs), from the tools disk in L1; its
# libraries are mostly qemu-system-arm's.
QEMU_PKGS=(qemu-system-arm qemu-system-common)
# dpdk-dev: DPDK's testpmd (/usr/bin/dpdk-testpmd) and its vhost PMD, the
# user-space switch of vmm-boot's vhost-user-net case (--net vhost-user),
# from the tools disk in L1, with the qemu ones (a board measures neither).
# Not dpdk-dev's own dependencies (~210 packages, 33 MB, for every DPDK
# tool): the libraries testpmd loads (readelf -d dpdk-testpmd: each
# librte_X.so.23 is Debian's librte-X23, librte-X-23 where X ends in a
# digit), the two drivers it is given (net_vhost and mempool_ring, with
# librte_vhost), and ibverbs-providers (libmlx5, a library testpmd's mlx5
# driver links). DPDK 22.11's ABI is 23.
DPDK_LIBS=(eal kvargs telemetry ethdev net mbuf mempool ring meter cmdline rcu hash timer
           cryptodev crypto-scheduler security reorder bitratestats metrics latencystats bpf
           gro gso ip-frag sched pdump pcapng eventdev pci bus-pci bus-vdev bus-dpaa
           bus-auxiliary common-dpaax common-iavf common-mlx5 mempool-dpaa net-bnxt net-i40e
           net-ixgbe net-ice net-dpaa net-bond net-mlx5 net-vhost vhost mempool-ring)
DPDK_PKGS=(ibverbs-providers)
for l in "${DPDK_LIBS[@]}"; do
    if [[ $l == *[0-9] ]]; then DPDK_PKGS+=("librte-$l-23"); else DPDK_PKGS+=("librte-${l}23"); fi
done
((with_qemu)) || QEMU_PKGS=() DPDK_PKGS=()
# (dpdk-dev itself after the closure: its Depends are the ~210.)
mapfile -t prog_libs < <(lib_closure iperf3 iproute2 jq fio tmux nftables dnsmasq-base openssh-client \
    "${QEMU_PKGS[@]}" "${DPDK_PKGS[@]}")
((${#DPDK_PKGS[@]} == 0)) || DPDK_PKGS+=(dpdk-dev)
# (libfdt for the cross build is scripts/build-arm64.sh's own sysroot.)
# zlib1g: libelf1's zlib, a library not named lib*.
PKGS=("$kpkg" busybox-static iperf3 iproute2 jq fio tmux nftables dnsmasq-base openssh-client "${QEMU_PKGS[@]}" libc-bin zlib1g
      "${DPDK_PKGS[@]}" "${prog_libs[@]}")
mapfile -t PKGS < <(printf '%s\n' "${PKGS[@]}" | awk '!seen[$0]++')  # a library named twice is one package
BPO_PKGS=()
for k in "${KERNELS[@]:1}"; do
    read -r _ p a <<<"$k"
    if [[ $a == backports ]]; then BPO_PKGS+=("$p"); else PKGS+=("$p"); fi
done

# Candidate versions, as "PACKAGE VERSION FILE"; FILE is the name
# `apt-get download` saves it under (epoch colon written as %3a).
declare -A VER FILE
# candidates [APT OPTION]... -- PACKAGE...: "PACKAGE VERSION FILE" lines.
candidates() {
    local opts=()
    while [[ $1 != -- ]]; do opts+=("$1"); shift; done
    shift
    apt-cache "${opts[@]}" show --no-all-versions "${@/%/:arm64}" | awk '
        function emit() {
            if (p) { f = p "_" v "_" a ".deb"; gsub(/:/, "%3a", f); print p, v, f }
            p = ""
        }
        /^Package: /      { p = $2 }
        /^Version: /      { v = $2 }
        /^Architecture: / { a = $2 }
        /^$/              { emit() }
        END               { emit() }'
}
while read -r p v f; do VER[$p]=$v; FILE[$p]=$f; done < <(candidates -- "${PKGS[@]}")
if ((${#BPO_PKGS[@]})); then
    while read -r p v f; do VER[$p]=$v; FILE[$p]=$f; done < <(candidates "${APT_BPO[@]}" -- "${BPO_PKGS[@]}")
fi

# --- download what is not cached yet ------------------------------------
mkdir -p "$DEBS" "$ROOT" "$CACHE/stamps"
files=() fetch=() fetch_bpo=()
for p in "${PKGS[@]}" "${BPO_PKGS[@]}"; do
    [[ -n ${VER[$p]:-} ]] || die "no candidate for $p:arm64 (apt-get update?)"
    files+=("${FILE[$p]}")
    [[ -s $DEBS/${FILE[$p]} ]] && continue
    if [[ " ${BPO_PKGS[*]} " == *" $p "* ]]; then
        fetch_bpo+=("$p:arm64=${VER[$p]}")
    else
        fetch+=("$p:arm64=${VER[$p]}")
    fi
done
nfetch=$((${#fetch[@]} + ${#fetch_bpo[@]}))
say "${#files[@]} packages, $((${#files[@]} - nfetch)) cached, $nfetch to download"
# Sandbox user root: _apt may not be able to write into $DEBS. Downloads
# land in $DEBS/.incoming and move into $DEBS whole, so that $DEBS holds
# only complete files: a later run, or a copy of $DEBS made meanwhile (the
# board rehearsal seeds its board's cache from it), never takes a partly
# downloaded .deb for a cached one.
if ((nfetch)); then
    incoming=$DEBS/.incoming
    rm -rf "$incoming"
    mkdir -p "$incoming"
    if ((${#fetch[@]})); then
        (cd "$incoming" && apt-get download -q -o APT::Sandbox::User=root "${fetch[@]}")
    fi
    if ((${#fetch_bpo[@]})); then
        (cd "$incoming" && apt-get "${APT_BPO[@]}" download -q "${fetch_bpo[@]}")
    fi
    find "$incoming" -maxdepth 1 -name '*.deb' -exec mv -t "$DEBS" {} +
    rm -rf "$incoming"
fi

# --- unpack each .deb once into the merged root -------------------------
for f in "${files[@]}"; do
    [[ -s $DEBS/$f ]] || die "download of $f failed (network? apt sources?)"
    stamp=$CACHE/stamps/$f.unpacked
    [[ -e $stamp ]] && continue
    say "unpacking $f"
    dpkg-deb -x "$DEBS/$f" "$ROOT"
    touch "$stamp"
done

# Debian 13's packages put everything under /usr (a merged-/usr system has
# /lib, /bin and /sbin as links into it); Debian 12's still use /lib and
# /bin. The links, where no package made the directory, keep the paths the
# scripts use (lib/modules, bin/busybox, lib/aarch64-linux-gnu) the same
# for both.
for d in bin sbin lib; do
    [[ -e $ROOT/$d || ! -d $ROOT/usr/$d ]] || ln -s "usr/$d" "$ROOT/$d"
done

# Debian's kernel .deb ships no modules.dep; build-initramfs.sh needs one.
mkdir -p "$CACHE/kernels"
for k in "${KERNELS[@]}"; do
    read -r s p _ <<<"$k"
    v=${p#linux-image-}
    if [[ ! -s $ROOT/lib/modules/$v/modules.dep ]]; then
        say "depmod $v"
        depmod -b "$ROOT" "$v"
    fi
    [[ -s $ROOT/boot/vmlinuz-$v ]] || die "$ROOT/boot/vmlinuz-$v missing after unpacking"
    echo "$v" >"$CACHE/kernels/$s"
    echo "kernel $s: $v (Image: $ROOT/boot/vmlinuz-$v)"
done
echo "$kver" >"$CACHE/kernel-version"
