#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A fresh, minimal Debian 12 root to prove that kvmmio's own scripts install
# everything they need: nothing the host happens to have leaks in.
#
#   scripts/fresh-root.sh create DIR        mmdebstrap a minbase bookworm root
#                                           into DIR (empty or absent) and put a
#                                           clone of this repository at
#                                           DIR/root/kvmmio
#   scripts/fresh-root.sh run DIR CMD...    run CMD (a path inside the clone,
#                                           e.g. scripts/test.sh) as root in DIR
#                                           (its own mount namespace, pivoted
#                                           into DIR), /proc, /sys, /dev bound in
#   scripts/fresh-root.sh destroy DIR       unmount and remove DIR
#   scripts/fresh-root.sh sources           print the host's apt source files
#                                           (scripts/board-rehearsal.sh too)
#
# The root's apt sources are the host's own (/etc/apt/sources.list.d/*.sources
# and /etc/apt/sources.list), so it uses whatever Debian mirror the host does.
# Only CI and LANG pass into the root's environment. .ci/run uses this; a
# developer can too (as root, ~2 GB of disk for the root and its builds).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)

say() { printf 'fresh-root: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
usage() { sed -n '5,18p' "$0"; }

[[ $EUID -eq 0 ]] || die "needs root (mmdebstrap, mount namespaces and bind mounts): run it as root or with sudo"
cmd=${1:-}
dir=${2:-}
[[ -n $cmd && ( -n $dir || $cmd == sources ) ]] || { usage >&2; exit 2; }
shift $(($# < 2 ? $# : 2))

# Every mount this script makes lies under $dir; list them deepest first.
mounts_under() {
    local d
    d=$(readlink -f "$1")
    awk -v d="$d" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

unmount_all() {
    local m
    for m in $(mounts_under "$1"); do umount -l "$m" 2>/dev/null || true; done
    [[ -z $(mounts_under "$1") ]] || die "could not unmount everything under $1: $(mounts_under "$1" | tr '\n' ' ')"
}

bind_mounts() {
    local root=$1 fs
    # The root a mount point of its own, private: tests inside may make
    # private mount namespaces (unshare -m needs / to be a mount point), and
    # nothing mounted inside propagates back to the host.
    if ! mountpoint -q "$root"; then
        mount --bind "$root" "$root"
        mount --make-private "$root"
    fi
    for fs in proc sys dev; do
        mountpoint -q "$root/$fs" && continue
        mkdir -p "$root/$fs"
        mount --rbind "/$fs" "$root/$fs"
        # Unmounting inside the root must never unmount the host's own.
        mount --make-rslave "$root/$fs"
    done
}

host_sources() {
    local f found=()
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
        [[ -s $f ]] && grep -qv '^[[:space:]]*\(#\|$\)' "$f" && found+=("$f")
    done
    ((${#found[@]})) || die "no apt sources on this host (/etc/apt/sources.list{,.d/}): the root needs a Debian mirror"
    printf '%s\n' "${found[@]}"
}

case $cmd in
create)
    command -v mmdebstrap >/dev/null || {
        say "installing mmdebstrap on the host"
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap
    }
    [[ ! -e $dir || -z $(ls -A "$dir") ]] || die "$dir is not empty"
    mkdir -p "$dir"
    mapfile -t sources < <(host_sources)
    say "mmdebstrap --variant=minbase bookworm $dir (sources: ${sources[*]})"
    # Keys for the host's Signed-By lines come with debian-archive-keyring;
    # ca-certificates in case the host's mirror is https.
    mmdebstrap --variant=minbase --include=ca-certificates,debian-archive-keyring \
        bookworm "$dir" "${sources[@]}"
    cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    # What a new user does: clone the repository (committed state only).
    git clone -q --no-hardlinks "$src" "$dir/root/kvmmio"
    say "root ready: $(du -sh "$dir" | cut -f1), clone at $dir/root/kvmmio ($(git -C "$src" rev-parse --short HEAD))"
    ;;
run)
    (($#)) || die "run needs a command"
    [[ -d $dir/root/kvmmio ]] || die "$dir has no clone: run '$0 create $dir' first"
    bind_mounts "$dir"
    status=0
    # pivot_root in a mount namespace of its own, not chroot: a chrooted
    # process may not make user namespaces (clone(2): EPERM), and the board
    # rehearsal in scripts/test.sh makes them. The host's tree is detached
    # before CMD runs, so CMD sees only the root.
    # shellcheck disable=SC2016 # the inner shell expands its own $1...
    unshare --mount --propagation private --fork /bin/bash -c '
        cd "$1" && mkdir -p .host-root && pivot_root . .host-root && cd / &&
            umount -l /.host-root && rmdir /.host-root || exit 125
        exec /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            CI="$2" /bin/bash -c "cd /root/kvmmio && exec \"\$@\"" bash "${@:3}"' \
        bash "$dir" "${CI:-}" "$@" || status=$?
    unmount_all "$dir"
    exit $status
    ;;
destroy)
    [[ -e $dir ]] || exit 0
    unmount_all "$dir"
    # --one-file-system: even a mount missed above cannot take host files along.
    rm -rf --one-file-system "$dir"
    ;;
sources) host_sources ;;
-h | --help) usage; exit 0 ;;
*) usage >&2; exit 2 ;;
esac
