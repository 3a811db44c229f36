#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/arm64/fetch-packages.sh: everything the arm64 test platform needs
# from Debian's archive, fetched once.
#
# Owns: the host packages it installs (if missing), $CACHE/debs (downloaded
# arm64 .debs), $CACHE/root (those .debs unpacked into one arm64 root),
# $CACHE/stamps and
# $CACHE/kernel-version. See common.sh for $CACHE (env KVMMIO_CACHE).
#
# Idempotent: a second run installs, downloads and unpacks nothing.
# Usage: scripts/arm64/fetch-packages.sh        (no options)
set -euo pipefail
# shellcheck source=scripts/arm64/common.sh
source "$(dirname "$0")/common.sh"
export LC_ALL=C

if (($#)); then # no options: print the header above
    sed -n '2,11p' "$0"
    [[ $1 == -h || $1 == --help ]] && exit 0
    exit 2
fi

HOST_PKGS=(qemu-system-arm cpio kmod g++-aarch64-linux-gnu)
native_arm64=0
# On an arm64 host (scripts/main.sh there) arm64 is the native architecture:
# no foreign architecture, no emulator, no cross compiler.
[[ $(dpkg --print-architecture) == arm64 ]] && native_arm64=1 && HOST_PKGS=(cpio kmod binutils)

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
# linux-image-arm64 is a meta package; the real one names the kernel release.
kpkg=$(apt-cache depends linux-image-arm64:arm64 |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*-arm64\).*/\1/p' | head -n1)
[[ -n $kpkg ]] || die "cannot resolve linux-image-arm64:arm64 (apt-get update?)"
kver=${kpkg#linux-image-}

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
mapfile -t prog_libs < <(lib_closure iperf3 iproute2 jq)
# (libfdt for the cross build is scripts/build-arm64.sh's own sysroot.)
# zlib1g: libelf1's zlib, a library not named lib*.
PKGS=("$kpkg" busybox-static iperf3 iproute2 jq zlib1g "${prog_libs[@]}")

# Candidate versions, as "PACKAGE VERSION FILE"; FILE is the name
# `apt-get download` saves it under (epoch colon written as %3a).
declare -A VER FILE
while read -r p v f; do VER[$p]=$v; FILE[$p]=$f; done < <(
    apt-cache show --no-all-versions "${PKGS[@]/%/:arm64}" | awk '
        function emit() {
            if (p) { f = p "_" v "_" a ".deb"; gsub(/:/, "%3a", f); print p, v, f }
            p = ""
        }
        /^Package: /      { p = $2 }
        /^Version: /      { v = $2 }
        /^Architecture: / { a = $2 }
        /^$/              { emit() }
        END               { emit() }')

# --- download what is not cached yet ------------------------------------
mkdir -p "$DEBS" "$ROOT" "$CACHE/stamps"
files=() fetch=()
for p in "${PKGS[@]}"; do
    [[ -n ${VER[$p]:-} ]] || die "no candidate for $p:arm64 (apt-get update?)"
    files+=("${FILE[$p]}")
    [[ -s $DEBS/${FILE[$p]} ]] || fetch+=("$p:arm64=${VER[$p]}")
done
say "${#files[@]} packages, $((${#files[@]} - ${#fetch[@]})) cached, ${#fetch[@]} to download"
if ((${#fetch[@]})); then
    # Sandbox user root: _apt may not be able to write into $DEBS.
    (cd "$DEBS" && apt-get download -q -o APT::Sandbox::User=root "${fetch[@]}")
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

# Debian's kernel .deb ships no modules.dep; build-initramfs.sh needs one.
if [[ ! -s $ROOT/lib/modules/$kver/modules.dep ]]; then
    say "depmod $kver"
    depmod -b "$ROOT" "$kver"
fi
[[ -s $ROOT/boot/vmlinuz-$kver ]] || die "$ROOT/boot/vmlinuz-$kver missing after unpacking"

echo "$kver" >"$CACHE/kernel-version"
echo "kernel $kver (Image: $ROOT/boot/vmlinuz-$kver)"
