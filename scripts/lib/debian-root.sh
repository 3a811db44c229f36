# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash disable=SC2016 # scripts run in namespaces expand their own $vars
# scripts/lib/debian-root.sh: a Debian arm64 root file system made with
# mmdebstrap on this host, whatever its architecture, for
# scripts/board-rehearsal.sh (the board's root) and scripts/make-guest.sh
# (a guest's root). Sourced, never run. Owns the debian_root_* functions
# and DEBIAN_ROOT_SOURCES; touches nothing until a function is called, and
# then only what its arguments name. Needs root.
#
#   debian_root_unfit            why this host cannot make a root: prints the
#                                reason and fails; silent and 0 if it can
#   debian_root_qemu_user        (x86-64 and other foreign hosts) prints the
#                                path of a static qemu-aarch64, unpacked from
#                                Debian's qemu-user-static .deb into
#                                $DEBIAN_ROOT_QEMU_USER (a directory the
#                                caller names) on first use
#   debian_root_in_ns WORK ROOT SCRIPT [ARG]...
#                                runs bash SCRIPT ($1... the ARGs, ROOT in
#                                $ROOT) in mount and pid namespaces of its
#                                own where arm64 programs run (below); WORK
#                                takes a fifo while it starts
#   debian_root_sources RELEASE WORK
#                                sets DEBIAN_ROOT_SOURCES to the host's apt
#                                source files, rewritten for RELEASE into
#                                WORK/sources when the host runs another one
#   debian_root_make WORK ROOT RELEASE TAG MODULES PACKAGES LOG [OPTION]...
#                                mmdebstrap --variant=minbase RELEASE into
#                                ROOT (below)
#
# On an arm64 host everything runs natively. Elsewhere arm64 programs (the
# packages' maintainer scripts, chroot commands) run under qemu-user: a
# static qemu-aarch64 from Debian's qemu-user-static, unpacked (never
# installed: its postinst would register binfmt handlers host-wide) and
# registered with binfmt_misc in a private user namespace (Linux >= 6.7
# gives each user namespace its own binfmt_misc), so the host's binfmt_misc
# is never touched. qemu-user rather than a system emulator: it runs the
# host's system calls at about native speed and needs no boot.

debian_root_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEBIAN_ROOT_SOURCES=()

# Messages name the script that sourced this file (e.g. make-guest).
debian_root_name=${0##*/}
debian_root_name=${debian_root_name%.sh}
debian_root_say() { printf '%s: %s\n' "$debian_root_name" "$*" >&2; }
debian_root_die() { debian_root_say "error: $*"; exit 2; }
# debian_root_native: true on an arm64 host (no qemu-user needed).
debian_root_native() { [[ $(uname -m) == aarch64 ]]; }

debian_root_unfit() {
    [[ $EUID -eq 0 ]] || { echo "needs root (mmdebstrap, chroot, user namespaces): run it as root or with sudo"; return 1; }
    debian_root_native && return 0
    unshare --user --map-root-user --mount --pid --fork --mount-proc \
        sh -c 'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null || {
        echo "no binfmt_misc of a user namespace's own here (Linux >= 6.7, not chrooted; this is $(uname -r)): arm64 maintainer scripts need one to run under qemu-user"
        return 1
    }
}

debian_root_qemu_user() {
    local qd=${DEBIAN_ROOT_QEMU_USER:?DEBIAN_ROOT_QEMU_USER names the directory for qemu-user} deb
    local q=$qd/usr/bin/qemu-aarch64-static
    if [[ ! -x $q ]]; then
        mkdir -p "$qd"
        (cd "$qd" && apt-get download -q -o APT::Sandbox::User=root qemu-user-static >&2) ||
            debian_root_die "apt-get download qemu-user-static failed (is Debian's archive reachable? apt-get update first)"
        deb=$(ls "$qd"/qemu-user-static_*.deb)
        # Only qemu-aarch64-static (~5 MB of the package's ~400 MB
        # unpacked: every architecture's emulator, and the manual pages).
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$qd" ./usr/bin/qemu-aarch64-static
        rm -f "$deb"
    fi
    echo "$q"
}

# qemu-user's CPU: its default, max, has pointer authentication with the
# architected algorithm (QARMA), which QEMU computes in software at every
# signed return. Debian 13 builds arm64 with branch protection (PAC and
# BTI in every function), so its programs ran ~14x slower than Debian
# 12's under qemu-user (a 20,000-iteration dash loop: 4.8 s against 0.35
# s with pauth=off; Debian 12's dash 0.40 s either way) and a root took
# ~50 min to make. Without PAuth the PAC and BTI instructions are hints
# (no-ops); nothing else changes. Every emulated program gets it
# (QEMU_CPU in the namespace's environment).
debian_root_qemu_cpu=max,pauth=off

# debian_root_in_ns: in new user, mount and pid namespaces (uids and gids
# mapped one to one, so files made there belong to the host's root), whose
# own binfmt_misc runs arm64 ELF files with qemu-user (flag F: the
# interpreter is opened now, so it works in chroots). On an arm64 host only
# the mount and pid namespaces: nothing to emulate.
debian_root_in_ns() {
    local work=$1 root=$2 script=$3 q fifo pid status=0
    shift 3
    if debian_root_native; then
        unshare --mount --pid --fork --mount-proc --propagation private \
            env ROOT="$root" bash -c 'set -euo pipefail
            '"$script" bash "$@"
        return
    fi
    q=$(debian_root_qemu_user)
    fifo=$(mktemp -u "$work/.ns.XXXXXX")
    mkfifo "$fifo"
    # The user namespace waits on the fifo until its maps are written (as
    # root here, no newuidmap needed), then makes the others.
    unshare --user bash -c 'read -r _ <"$1" && exec "${@:2}"' bash "$fifo" \
        unshare --mount --pid --fork --mount-proc --propagation private \
        env QEMU="$q" ROOT="$root" QEMU_CPU="$debian_root_qemu_cpu" bash -c '
        set -euo pipefail
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
            { echo "'"$debian_root_name"': no binfmt_misc of our own (Linux >= 6.7 needed)" >&2; exit 2; }
        printf "%s" ":qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:$QEMU:F" \
            >/proc/sys/fs/binfmt_misc/register
        '"$script" bash "$@" &
    pid=$!
    while [[ $(readlink "/proc/$pid/ns/user") == "$(readlink /proc/self/ns/user)" ]]; do sleep 0.05; done
    echo '0 0 65536' >"/proc/$pid/uid_map"
    echo '0 0 65536' >"/proc/$pid/gid_map"
    echo go >"$fifo"
    wait "$pid" || status=$?
    rm -f "$fifo"
    return "$status"
}

# debian_root_sources: the host's apt sources (its mirror:
# scripts/fresh-root.sh sources); for another release the same files with
# the host's release name replaced (e.g. trixie, trixie-updates,
# trixie-security from the same mirror), written into WORK/sources.
debian_root_sources() {
    local release=$1 work=$2 host_release i f
    # shellcheck disable=SC1091 # the host's file
    host_release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    mapfile -t DEBIAN_ROOT_SOURCES < <("$debian_root_src/scripts/fresh-root.sh" sources)
    ((${#DEBIAN_ROOT_SOURCES[@]})) ||
        debian_root_die "no apt sources on this host (/etc/apt/sources.list{,.d/}): the root needs a Debian mirror"
    [[ $release != "$host_release" ]] || return 0
    [[ -n $host_release ]] ||
        debian_root_die "cannot tell this host's release (VERSION_CODENAME in /etc/os-release) to derive $release's sources from"
    rm -rf "$work/sources"
    mkdir -p "$work/sources"
    for i in "${!DEBIAN_ROOT_SOURCES[@]}"; do
        f=$work/sources/$i-${DEBIAN_ROOT_SOURCES[i]##*/}
        sed "s/\b$host_release\b/$release/g" "${DEBIAN_ROOT_SOURCES[i]}" >"$f"
        DEBIAN_ROOT_SOURCES[i]=$f
    done
}

# debian_root_make WORK ROOT RELEASE TAG MODULES PACKAGES LOG [OPTION]...
# makes ROOT (removed first if it exists) an arm64 Debian RELEASE: minbase
# plus PACKAGES (comma-separated; debian-archive-keyring, and
# ca-certificates for an https mirror, are added), from the host's mirror
# (debian_root_sources). PACKAGES should pull in linux-image-arm64: its
# initramfs is made once, at the end, with MODULES=list and MODULES (a
# comma-separated list, e.g. virtio_mmio,virtio_blk,ext4): Debian's
# MODULES=most, thousands of emulated modinfo and cp calls, took 15-20 min
# per initramfs under qemu-user; a list takes under a minute. TAG (letters,
# digits, -) names the files this puts in ROOT/etc. Each OPTION goes to
# mmdebstrap before the hook that makes the initramfs (a --customize-hook
# given here runs before it). The output, each line with the seconds since
# the start, goes to LOG (where the time goes: download, unpack, maintainer
# scripts, initramfs); its I: lines to stderr as well.
debian_root_make() {
    local work=$1 root=$2 release=$3 tag=$4 modules=$5 packages=$6 log=$7
    shift 7
    local tls=() pkgs modules_hook noinitramfs_hook initramfs_once
    [[ $tag =~ ^[a-z0-9-]+$ ]] || debian_root_die "debian_root_make: a TAG of letters, digits and -, not '$tag'"
    [[ $modules =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] || debian_root_die "debian_root_make: not a list of modules: '$modules'"
    debian_root_sources "$release" "$work"
    [[ ! -e $root ]] || rm -rf --one-file-system "$root"
    # ca-certificates only for an https mirror (the root's own apt): its
    # postinst (update-ca-certificates, a process per certificate) took
    # minutes under qemu-user.
    ! grep -qs 'https://' "${DEBIAN_ROOT_SOURCES[@]}" || tls=(ca-certificates)
    pkgs=$(printf '%s,' "$packages" "${tls[@]}" debian-archive-keyring)
    # The setup hook: the initramfs's modules, before the customize hook
    # makes it (the root's later boots load the rest from /lib/modules).
    modules_hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d" &&
        echo MODULES=list >"$1/etc/initramfs-tools/conf.d/'"$tag"'" &&
        printf "%s\n" '"${modules//,/ }"' >"$1/usr/share/initramfs-tools/modules.d/'"$tag"'.conf"'
    # Documentation, manual pages and message translations: not unpacking
    # them saves dpkg's work under qemu-user and the root's size (dpkg's
    # path-exclude, kept in the root; the copyright files stay). A
    # dpkg.cfg.d file from the setup hook rather than mmdebstrap's
    # --dpkgopt: with that, mmdebstrap extracts the essential packages
    # through mmtarfilter, a python process per package, which took longer
    # than the excludes save.
    # force-unsafe-io as well: dpkg then skips its fsync of every file it
    # unpacks (~25,000 per root, ~4 ms each on a test machine's disk, one
    # after the other); a crash mid-install would only mean making the root
    # again. The last customize hook removes it: the root's own dpkg is
    # Debian's.
    modules_hook+=' && mkdir -p "$1/etc/dpkg/dpkg.cfg.d" &&
        printf "%s\n" "path-exclude=/usr/share/doc/*" "path-include=/usr/share/doc/*/copyright" \
            "path-exclude=/usr/share/man/*" "path-exclude=/usr/share/info/*" \
            "path-exclude=/usr/share/locale/*" >"$1/etc/dpkg/dpkg.cfg.d/'"$tag"'-excludes" &&
        echo force-unsafe-io >"$1/etc/dpkg/dpkg.cfg.d/'"$tag"'-unsafe-io"'
    # One initramfs instead of three: dpkg would make it in linux-image's
    # postinst and again in two initramfs-tools triggers (each ~1 min under
    # qemu-user); update-initramfs is diverted to a no-op while packages
    # install (essential hook: dpkg exists, initramfs-tools not yet) and
    # run once at the end (the last customize hook).
    noinitramfs_hook='chroot "$1" dpkg-divert --quiet --local --rename --add /usr/sbin/update-initramfs &&
        printf "#!/bin/sh\nexit 0\n" >"$1/usr/sbin/update-initramfs" && chmod +x "$1/usr/sbin/update-initramfs"'
    initramfs_once='rm "$1/usr/sbin/update-initramfs" "$1/etc/dpkg/dpkg.cfg.d/'"$tag"'-unsafe-io" &&
        chroot "$1" dpkg-divert --quiet --local --rename --remove /usr/sbin/update-initramfs &&
        chroot "$1" update-initramfs -c -k all'
    debian_root_say "mmdebstrap arm64 $release $root: ${pkgs%,}"
    if debian_root_native; then
        debian_root_say "this host is arm64: mmdebstrap and the maintainer scripts run natively, no qemu-user"
    else
        debian_root_say "this host is $(uname -m): the maintainer scripts run under qemu-user"
    fi
    # --skip=check/qemu: mmdebstrap's check wants arch-test on the host; the
    # namespace's binfmt handler (flag F) makes arm64 programs just run.
    # ROOT leaves the environment first: mkinitramfs, run by the last hook,
    # writes an inherited $ROOT into the initramfs (conf/conf.d/root) as
    # the root device to mount when the kernel command line names none.
    debian_root_in_ns "$work" "$root" 'n=$1; shift
        opts=("${@:1:n}"); shift "$n"
        root=$ROOT
        export -n ROOT
        mmdebstrap --mode=root --arch=arm64 --variant=minbase --verbose --skip=check/qemu \
            --setup-hook="$2" --essential-hook="$3" "${opts[@]}" --customize-hook="$4" \
            --include="$1" "$5" "$root" "${@:6}"' \
        $# "$@" "${pkgs%,}" "$modules_hook" "$noinitramfs_hook" "$initramfs_once" "$release" \
        "${DEBIAN_ROOT_SOURCES[@]}" 2>&1 |
        awk 'BEGIN { srand(); t0 = srand() } { srand(); t = srand(); printf "%4d %s\n", t - t0, $0; fflush() }' |
        tee "$log" | awk -v p="$debian_root_name" '/^ *[0-9]+ I: / { print p ": root: " $0 > "/dev/stderr" }'
}
