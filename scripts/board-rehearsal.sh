#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2016 # scripts run in namespaces expand their own $vars
# The board path, rehearsed: a Debian 12 or 13 arm64 root filesystem booted
# as an arm64 KVM host (qemu-system-aarch64 -M virt,virtualization=on, TCG) that
# runs the README's main-job command, `scripts/main.sh --quick`, the way a
# board user would: as root in a clone of the repository, without network.
#
#   scripts/board-rehearsal.sh [--dir DIR] [--board RELEASE:GIC]... [--configs LIST]
#                              [--fio-configs LIST] [--g2g-configs LIST] [--vsock-configs LIST] [--timeout S]
#                              [--phases LIST] [--keep]
#                              [--scenarios LIST] [--net-modes LIST] [--arm64-build DIR]
#                              [--vmm-boot-skip LIST] [--scenarios-on RELEASES]
#   scripts/board-rehearsal.sh --check-host
#     --dir DIR      work directory (default <build>/board-rehearsal; ~6 GB
#                    per release), one DIR/RELEASE per release
#     --board R:N    a board of Debian release R (bookworm, trixie) with a
#                    GICvN (3 or 2), booted once; repeatable (default
#                    bookworm:3 trixie:2: one GIC per release); one root
#                    per release serves all its boards
#     --release R --gic N  the same as --board R:N (--gic alone: bookworm)
#     --configs LIST passed to main.sh --quick as --configs (default: all six)
#     --fio-configs LIST  passed to main.sh --quick as --fio-configs (default:
#                    --quick's own: host, blk-io_uring-mirror, blk-io_uring-trap,
#                    fs-mirror)
#     --g2g-configs LIST  passed to main.sh --quick as --g2g-configs (default:
#                    --quick's own: the mirror guest to guest, when in --configs)
#     --vsock-configs LIST  passed to main.sh --quick as --vsock-configs
#                    (default: --quick's own: host, vsock-mirror)
#     --timeout S    bound of each board boot (default 3600 s)
#     --phases LIST  root,carry,image,boot (default all; later phases reuse
#                    what earlier ones left in DIR); also guest (not by
#                    default; the test command asks for it): scripts/
#                    make-guest.sh run in the board's root as on the board
#                    itself (below; beside carry's builds when both run),
#                    whose guest the next image then carries for README's
#                    quick start
#     --keep         keep the booted disk images (DIR/gicN/main.img, rest.img)
#     --scenarios LIST  after main.sh, `scripts/test.sh --scenarios LIST`
#                    on the board's KVM (default vmm-boot,net-modes; none: skip)
#     --net-modes LIST  test.sh's --net-modes (default vhost-irqfd-mirror;
#                    all: every mode)
#     --vmm-boot-skip LIST  vmm-boot's cases left out on the board
#                    (KVMMIO_VMM_BOOT_SKIP, tests/arm64/scenarios/vmm-boot.sh;
#                    default none: every case)
#     --scenarios-on RELEASES  the releases whose boards run the scenarios
#                    (comma-separated, default all; the others run main.sh
#                    only)
#     --arm64-build DIR  the arm64 cross build the carry phase completes
#                    and carries in (default build/arm64-platform/build:
#                    make check's; scripts/build-arm64.sh makes it where
#                    it is missing)
#     --check-host   whether this host can rehearse; prints why not, exit 3
# Needs root (mmdebstrap, chroot, namespaces) and network for the first two
# phases (Debian's archive only: the host's apt sources name the mirror).
#
# Phases, each timed with its CPU time (DIR/times.txt); docs/benchmarks.md
# ("The rehearsal") says what each does and checks:
#  root   mmdebstrap of the release's arm64 root, its maintainer scripts
#         under a qemu-user of this script's own (binfmt_misc of a private
#         user namespace), with what main.sh installs on arm64 and a kernel
#  carry  a clone of this checkout in the root, main.sh's arm64 package
#         cache, the arm64 platform's cross build carried in, and the
#         release's arm64 packages cross-built (lintian without errors);
#         a later carry pulls this checkout's HEAD, as a board user would
#  guest  (asked for, not by default) make-guest.sh run inside the root
#  image  an ext4 image of the root with the rehearsal's init
#  boot   per --gic, two copies of the image booted at once (QEMU under
#         nice -n 10): apt installs the packages on each, then main.sh
#         --quick on one; test.sh --scenarios, README's quick start and
#         the package's unit under systemd on the other; their logs read
#         back and checked
# docs/benchmarks.md ("On a board") has the steps; docs/results-log.md
# the measured times.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/debian-root.sh
source "$src/scripts/lib/debian-root.sh"

say() { printf 'board-rehearsal: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
usage() { sed -n '9,/^#     --check-host   whether/p' "$0"; }

dir='' gics=() boards=() release='' configs='' fio_configs='' g2g_configs='' vsock_configs='' timeout=3600 phases=root,carry,image,boot keep=0 check_host=0
scenarios=vmm-boot,net-modes net_modes=vhost-irqfd-mirror vmm_boot_skip='' scenarios_on='' arm64_build=''
while (($#)); do
    case $1 in
    --dir) dir=${2:?--dir needs DIR}; shift 2 ;;
    --gic) [[ ${2:-} == [23] ]] || die "--gic takes 2 or 3"; gics+=("$2"); shift 2 ;;
    --release) release=${2:?--release needs a Debian release, e.g. trixie}; shift 2 ;;
    --board) [[ ${2:-} =~ ^[a-z]+:[23]$ ]] || die "--board takes RELEASE:GIC, e.g. trixie:2 (GIC 3 or 2)"
        boards+=("$2"); shift 2 ;;
    --configs) configs=${2:?--configs needs a LIST}; shift 2 ;;
    --fio-configs) fio_configs=${2:?--fio-configs needs a LIST}; shift 2 ;;
    --vsock-configs) vsock_configs=${2:?--vsock-configs needs a LIST}; shift 2 ;;
    --g2g-configs) g2g_configs=${2:?--g2g-configs needs a LIST}; shift 2 ;;
    --timeout) timeout=${2:?--timeout needs S}; shift 2 ;;
    --phases) phases=${2:?--phases needs a LIST}; shift 2 ;;
    --keep) keep=1; shift ;;
    --scenarios) scenarios=${2:?--scenarios needs a LIST or none}; shift 2 ;;
    --net-modes) net_modes=${2:?--net-modes needs a LIST or all}; shift 2 ;;
    --vmm-boot-skip) vmm_boot_skip=${2:?--vmm-boot-skip needs a LIST of vmm-boot cases}; shift 2 ;;
    --scenarios-on) scenarios_on=${2:?--scenarios-on needs RELEASES, e.g. trixie}; shift 2 ;;
    --arm64-build) arm64_build=${2:?--arm64-build needs DIR}; shift 2 ;;
    --check-host) check_host=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done
# What the host must give, checked before anything is made: root, and a
# binfmt_misc of a user namespace's own (Linux >= 6.7; not in a chroot,
# where the kernel refuses user namespaces).
host_unfit() {
    [[ $EUID -ne 0 || $(uname -m) != aarch64 ]] ||
        { echo "this host is arm64: run scripts/main.sh here, it is the board"; return; }
    debian_root_unfit || true
}
if ((check_host)); then
    why=$(host_unfit)
    [[ -z $why ]] || { echo "$why"; exit 3; }
    exit 0
fi
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout: not a number of seconds: $timeout"
[[ -z $configs || $configs =~ ^[a-z0-9,-]+$ ]] || die "--configs: not a list: $configs"
[[ -z $fio_configs || $fio_configs =~ ^[a-z0-9_,-]+$ ]] || die "--fio-configs: not a list: $fio_configs"
[[ -z $vsock_configs || $vsock_configs =~ ^[a-z0-9_,-]+$ ]] || die "--vsock-configs: not a list: $vsock_configs"
[[ -z $g2g_configs || $g2g_configs =~ ^[a-z0-9_,-]+$ ]] || die "--g2g-configs: not a list: $g2g_configs"
[[ $scenarios =~ ^[a-z0-9,-]+$ ]] || die "--scenarios: not a list: $scenarios"
[[ $net_modes =~ ^[a-z0-9,-]+$ ]] || die "--net-modes: not a list: $net_modes"
[[ -z $vmm_boot_skip || $vmm_boot_skip =~ ^[a-z0-9,-]+$ ]] || die "--vmm-boot-skip: not a list: $vmm_boot_skip"
[[ $scenarios != none ]] || scenarios=''
[[ $net_modes != all ]] || net_modes=''
# test.sh's --net-modes on the board, given only where net-modes runs there.
board_net_modes=$net_modes
[[ ,$scenarios, == *,net-modes,* ]] || board_net_modes=''
dir=${dir:-$src/build/board-rehearsal}
arm64_build=${arm64_build:-$src/build/arm64-platform/build}
mkdir -p "$arm64_build"
arm64_build=$(cd "$arm64_build" && pwd)
why=$(host_unfit)
[[ -z $why ]] || die "$why"
for p in ${phases//,/ }; do
    [[ $p == @(root|carry|guest|image|boot) ]] || die "--phases: unknown phase '$p'"
done
want() { [[ ,$phases, == *,$1,* ]]; }
guest_done=0
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

[[ -z $release ]] || ((${#gics[@]})) || gics=(3)
root=$dir/root
times=$dir/times.txt
! want root || : >"$times"   # a new root starts a new record
phase_start=$SECONDS
# Each phase's CPU time too (its processes: mmdebstrap under qemu-user,
# the compilers, QEMU), its cost to the machine, where its wall time also
# holds the waits on the work beside it: the CPU time of this shell's
# reaped children since the last mark (children_cpu, phase-budget.sh). A
# background subshell (the guest phase) counts its own children from zero;
# the shell that waits for it marks again after the wait, so that the next
# phase does not take them.
# shellcheck source=scripts/phase-budget.sh
source "$src/scripts/phase-budget.sh"
cpu_mark=0 cpu_mark_pid=$BASHPID
phase_cpu_mark() {
    local me=$BASHPID
    cpu_mark=$(children_cpu "$me") cpu_mark_pid=$me
}
phase_done() {
    local t=$((SECONDS - phase_start)) me=$BASHPID cpu
    cpu=$(children_cpu "$me")
    [[ $cpu_mark_pid == "$me" ]] || cpu_mark=0 cpu_mark_pid=$me
    printf '%-14s %4d min %02d s, %d s of CPU\n' "$1" $((t / 60)) $((t % 60)) $((cpu - cpu_mark)) | tee -a "$times" >&2
    cpu_mark=$cpu
    phase_start=$SECONDS
}

need_tool() { command -v "$1" >/dev/null || die "$1 missing: apt-get install $2"; }
need_tool mmdebstrap mmdebstrap
need_tool qemu-system-aarch64 qemu-system-arm
need_tool mkfs.ext4 e2fsprogs
need_tool debugfs e2fsprogs
need_tool unshare util-linux

# --- qemu-user, private to this run ------------------------------------------
# The static qemu-aarch64 from Debian's qemu-user-static, unpacked
# (scripts/lib/debian-root.sh). The releases' runs share one
# (BOARD_REHEARSAL_QEMU_USER, set for them).
export DEBIAN_ROOT_QEMU_USER=${BOARD_REHEARSAL_QEMU_USER:-$dir/qemu-user}

# --- several releases: one run of this script per release -----------------
# --board R:N... (or none: the default) runs this script once per release
# as --release R --gic N... --dir DIR/R: first the root, carry and image
# phases of all releases at once (each mostly one emulated dpkg or the
# network at a time: two share this machine's cores well), then the boots,
# also side by side: a board alone leaves part of the host's cores idle (the
# Debian 13 board's own test.sh found its 2 CPUs 56% busy: its scenarios
# wait on L2 boots and timers), which a second board fills. Their output
# is prefixed
# with the release; DIR/times.txt collects the phase times, each named by
# release, and the whole run's time.
if [[ -z $release ]]; then
    if ((${#boards[@]} == 0)); then
        if ((${#gics[@]})); then boards=("${gics[@]/#/bookworm:}"); else boards=(bookworm:3 trixie:2); fi
    fi
    releases=()
    for b in "${boards[@]}"; do
        [[ " ${releases[*]} " == *" ${b%:*} "* ]] || releases+=("${b%:*}")
    done
    for r in "${releases[@]}"; do
        "$src/scripts/install-deps.sh" --list --main arm64 --release "$r" >/dev/null ||
            die "--board $r: not a Debian release scripts/install-deps.sh knows (bookworm, trixie)"
    done
    for r in ${scenarios_on//,/ }; do
        [[ " ${releases[*]} " == *" $r "* ]] || die "--scenarios-on $r: no board of that release (--board ${r}:N)"
    done
    export BOARD_REHEARSAL_QEMU_USER=$dir/qemu-user
    ! want root || debian_root_qemu_user >/dev/null   # once, before the runs share it
    # run_release R PHASES: this script for release R's boards.
    run_release() {
        local r=$1 args b
        args=(--release "$r" --dir "$dir/$r" --timeout "$timeout" --phases "$2" --arm64-build "$arm64_build")
        for b in "${boards[@]}"; do [[ ${b%:*} != "$r" ]] || args+=(--gic "${b#*:}"); done
        [[ -z $configs ]] || args+=(--configs "$configs")
        [[ -z $fio_configs ]] || args+=(--fio-configs "$fio_configs")
        [[ -z $g2g_configs ]] || args+=(--g2g-configs "$g2g_configs")
        [[ -z $vsock_configs ]] || args+=(--vsock-configs "$vsock_configs")
        if [[ -z $scenarios_on || ,$scenarios_on, == *,$r,* ]]; then
            args+=(--scenarios "${scenarios:-none}" --net-modes "${net_modes:-all}")
            [[ -z $vmm_boot_skip ]] || args+=(--vmm-boot-skip "$vmm_boot_skip")
        else
            args+=(--scenarios none)
        fi
        ((!keep)) || args+=(--keep)
        say "Debian $r: ${args[*]}"
        "$0" "${args[@]}" 2>&1 | sed -u "s/^/[$r] /" >&2
    }
    failed=0 prep=()
    for p in root carry guest image; do ! want $p || prep+=("$p"); done
    if ((${#prep[@]})); then
        pids=()
        prep_list=$(IFS=,; echo "${prep[*]}")
        for r in "${releases[@]}"; do run_release "$r" "$prep_list" & pids+=($!); done
        for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    fi
    if want boot && ((!failed)); then
        pids=()
        for r in "${releases[@]}"; do run_release "$r" boot & pids+=($!); done
        for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    fi
    for r in "${releases[@]}"; do sed "s/^/$r /" "$dir/$r/times.txt" 2>/dev/null; done >"$dir/times.txt"
    t=$SECONDS
    printf '%-23s %4d min %02d s\n' "all boards" $((t / 60)) $((t % 60)) >>"$dir/times.txt"
    say "times of all boards (also in $dir/times.txt):"
    cat "$dir/times.txt" >&2
    exit $failed
fi

# in_ns SCRIPT [ARG]...: runs bash SCRIPT (its $1... the ARGs, the root in
# $ROOT) in new user, mount and pid namespaces whose own binfmt_misc runs
# arm64 programs under qemu-user, each with QEMU_CPU=max,pauth=off (no
# pointer authentication: Debian 13's programs ran ~14x slower with it;
# scripts/lib/debian-root.sh says why). The board boots under qemu-system
# without PAuth too, as the nested platform's L1 does (scripts/arm64/run.sh).
in_ns() { debian_root_in_ns "$dir" "$root" "$@"; }

# in_root CMD: runs the shell command CMD as root inside the arm64 root
# (under qemu-user), with /proc, /sys, /dev and a /tmp of its own, a clean
# environment, in /root/kvmmio.
in_root_body='
        mount -t proc proc "$ROOT/proc"
        mount -t tmpfs tmpfs "$ROOT/tmp"
        mount --rbind /sys "$ROOT/sys"
        mount --rbind /dev "$ROOT/dev"
        chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb QEMU_CPU="$QEMU_CPU" \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            /bin/bash -euo pipefail -c "cd /root/kvmmio && $1" bash'
in_root() { in_ns "$in_root_body" "$1"; }

# in_root_as_board CMD: in_root, with the root bind-mounted onto itself
# first, so that its / is a mount point as a booted board's is: a program
# in it that makes a mount namespace of its own and changes /'s
# propagation (make-guest.sh's unshare --propagation private) needs that;
# in a plain chroot the kernel refuses it (EINVAL).
in_root_as_board() {
    in_ns '
        mount --rbind "$ROOT" "$ROOT"'"$in_root_body" "$1"
}

# board_mounts (the start of a script run by in_ns): the namespace in which
# the host's aarch64-linux-gnu-g++ builds for the board: the board's clone
# is at /root/kvmmio and the board's /usr/include and
# /usr/lib/aarch64-linux-gnu cover the host's, where the cross compiler
# looks after its own directories: headers and libraries (libfdt,
# libseccomp, Google Test) are the board's own. So is the C library: the
# cross compiler's own glibc (/usr/aarch64-linux-gnu, searched first) is
# covered too: its include directory by the same names from the board's
# /usr/include/aarch64-linux-gnu and /usr/include, but for the cross g++'s
# libstdc++ headers (c++/N), kept; its lib directory by the board's
# libraries. Without that a Debian 13 board's libgtest.a (g++ 14, glibc
# 2.41) did not link against the host's glibc 2.36 (__isoc23_strtol,
# __isoc23_strtoull); the compiler itself stays the host's g++.
board_mounts='
    mount -t tmpfs tmpfs /mnt
    mkdir /mnt/board
    mount --rbind "$ROOT" /mnt/board   # reachable when /root is covered
    mount -t tmpfs tmpfs /root
    mkdir /root/kvmmio
    mount --bind /mnt/board/root/kvmmio /root/kvmmio
    mount --bind /mnt/board/usr/include /usr/include
    mount --bind /mnt/board/usr/lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu
    cross=/usr/aarch64-linux-gnu
    mkdir /mnt/cxx /mnt/include
    cxx=$(cd "$cross/include/c++" && ls)   # the cross g++ version, e.g. 12
    mount --bind "$cross/include/c++/$cxx" /mnt/cxx
    # What the cross glibc and kernel headers have, taken from the board
    # (its multiarch directory over its generic one; symbolic links
    # followed: Debian 13'"'"'s asm headers link into /usr/lib/linux); the rest of the
    # board'"'"'s headers (libfdt, gtest) stay at /usr/include, so the
    # dependency files keep naming them there.
    for e in "$cross"/include/*; do
        e=${e##*/}
        [ "$e" != c++ ] || continue
        for d in /mnt/board/usr/include /mnt/board/usr/include/aarch64-linux-gnu; do
            [ ! -e "$d/$e" ] || cp -RL --preserve=timestamps "$d/$e" /mnt/include/
        done
    done
    mkdir -p "/mnt/include/c++/$cxx"
    mount --bind /mnt/cxx "/mnt/include/c++/$cxx"
    mount --rbind /mnt/include "$cross/include"
    mount --bind /mnt/board/usr/lib/aarch64-linux-gnu "$cross/lib"
    export PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/mnt/board/usr/share/pkgconfig
    export QEMU_LD_PREFIX=/mnt/board   # configure runs arm64 test programs
'

# carry_arm64_build CLONE: the board's build, /root/kvmmio/build, is the
# arm64 platform's cross build (scripts/build-arm64.sh, the one make
# check's nested scenarios run; --arm64-build), made whole and carried
# in: one arm64 build for every phase, instead of a second compile of the
# same tree. Its programs are static, so the Debian 12 sysroot they were
# linked against does not matter on a Debian 13 board. That build was
# made from this checkout: the clone takes this checkout's tracked files
# and the autotools' output with their times, and the build's text files
# (Makefile, config.status, libtool, the dependency files) name the
# board's paths instead of this checkout's and the build's own, their
# times kept. make on the board (main.sh's, test.sh's) then finds every
# target up to date, as the boot's check requires.
carry_arm64_build() {
    local clone=$1 f ref from_build from_src
    "$src/scripts/build-arm64.sh" "$arm64_build" --whole
    # This checkout's files over the clone's, with their times: the
    # sources the build was made from (with any uncommitted change).
    (cd "$src" && git ls-files -z | while IFS= read -r -d '' f; do [[ ! -e $f && ! -L $f ]] || printf '%s\0' "$f"; done |
        xargs -0 cp -pP --parents -t "$clone")
    (cd "$src" && cp -pPR --parents configure aclocal.m4 config.h.in build-aux m4 "$clone")
    (cd "$src" && find . -name Makefile.in -not -path './build*' -not -path './.cache/*' -print0 |
        xargs -0 cp -p --parents -t "$clone")
    rm -rf "$clone/build"
    flock "$arm64_build/.lock" cp -a "$arm64_build" "$clone/build"
    rm -f "$clone/build/.lock"
    # The paths configure recorded (and the compiles, the dependency files).
    from_build=$(sed -n 's/^abs_top_builddir = //p' "$clone/build/Makefile")
    from_src=$(sed -n 's/^abs_top_srcdir = //p' "$clone/build/Makefile")
    [[ -n $from_build && -n $from_src ]] || die "carry: $arm64_build/Makefile names no abs_top_builddir or abs_top_srcdir"
    ref=$(mktemp)
    grep -rlIF -e "$from_build" -e "$from_src" "$clone/build" | while IFS= read -r f; do
        touch -r "$f" "$ref"
        sed -i -e "s|${from_build//./\\.}|/root/kvmmio/build|g" -e "s|${from_src//./\\.}|/root/kvmmio|g" "$f"
        touch -r "$ref" "$f"
    done
    rm -f "$ref"
}

# carry_debs (run by in_ns, $1 = OUT in the clone's build directory, which
# the namespace keeps where it covers the rest of /root): the board
# release's arm64 packages, cross-built by scripts/build-debs.sh --arch arm64
# from the clone (its build directory, configured above, gives the tarball's
# tree) in the board_mounts namespace, so they compile against the
# board's headers and link its libraries; dpkg-shlibdeps reads the board's
# dpkg database (DPKG_ADMINDIR), so their Depends name the board's
# packages and versions. --check: lintian too (installcheck needs an arm64
# host: the board's boot installs them and runs them instead).
carry_debs=$board_mounts'
    export DPKG_ADMINDIR=/mnt/board/var/lib/dpkg PKG_CONFIG=pkg-config
    nice -n 10 /root/kvmmio/scripts/build-debs.sh /root/kvmmio/build "$1" --arch arm64 --check
'

# board_deps BUILD: the dependency files (.deps/*.P[l]o) name the cross
# compiler's own C and C++ headers, which the board does not have (its g++
# has the same ones elsewhere); make would take each missing name as a
# reason to recompile. Keep the names that exist in the board's root.
board_deps() {
    local gone=$dir/.deps-gone f
    find "$1" -path '*/.deps/*' -name '*.P*o' -exec grep -oh '/[^ :\\]*' {} + | sort -u |
        while read -r f; do [[ -e $root$f ]] || echo "$f"; done >"$gone"
    find "$1" -path '*/.deps/*' -name '*.P*o' -print0 | while IFS= read -r -d '' f; do
        awk 'NR == FNR { gone[$0] = 1; next }
             /^[^ ].*:$/ && (substr($0, 1, length($0) - 1) in gone) { next }
             { n = split($0, t, " "); out = ""
               for (i = 1; i <= n; i++) if (!(t[i] in gone)) out = out " " t[i]
               print (substr($0, 1, 1) == " " ? out : substr(out, 2)) }' "$gone" "$f" >"$f.board"
        touch -r "$f" "$f.board"
        mv "$f.board" "$f"
    done
    say "carry: $(wc -l <"$gone") cross-compiler headers dropped from the dependency files"
    rm -f "$gone"
}

# --- guest (by hand): make-guest.sh on the board's own userland ----------------
# "Your first guest" made on the board: scripts/make-guest.sh from the
# clone, run as root inside the arm64 root with the archive (its programs
# under qemu-user, so it sees an arm64 host: mmdebstrap and the guest's
# maintainer scripts run as they would natively, no qemu-user of its own).
# The guest lands in DIR/guest, not in the board's image. With the carry
# phase it runs beside that phase's two cross builds (started in it, once
# the clone and the offline cache are there), so that its one emulated
# process at a time and their compilers share the host's cores; without
# the carry phase, alone, on the clone an earlier carry left.
guest_phase() {
    [[ -x $root/root/kvmmio/scripts/make-guest.sh ]] || die "guest: no clone in the root: run the carry phase"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    rm -rf "$root/root/guest"
    # What README's quick start uses beside kvmmio, as a board owner has it
    # (the packages' Recommends, nftables and dnsmasq-base, and an ssh
    # client): installed now, while the root has the archive.
    say "guest: apt-get install nftables dnsmasq-base openssh-client in the root"
    in_root "apt-get install -y -q --no-install-recommends nftables dnsmasq-base openssh-client" >"$dir/guest-tools.log" 2>&1 ||
        { rm -f "$root/etc/resolv.conf"; tail -n 20 "$dir/guest-tools.log" >&2; die "guest: apt-get install in the root failed ($dir/guest-tools.log)"; }
    # With the test command's password and a key pair of the test's own,
    # as its guest-disk test wants (KVMMIO_GUEST=DIR/RELEASE/guest boots it).
    "$src/scripts/guest-test-key.sh" "$root/root/guest-ssh-key"
    status=0
    say "guest: scripts/make-guest.sh --out /root/guest in the root (log: $dir/guest.log)"
    in_root_as_board "printf 'kvmmio-guest-test\n' | scripts/make-guest.sh --out /root/guest --root-password-file /dev/stdin --ssh-key /root/guest-ssh-key.pub" \
        >"$dir/guest.log" 2>&1 || status=$?
    rm -f "$root/etc/resolv.conf"
    ((status == 0)) || { tail -n 30 "$dir/guest.log" >&2; die "guest: make-guest.sh in the root: status $status ($dir/guest.log)"; }
    grep -q 'this host is arm64: mmdebstrap and the maintainer scripts run natively' "$dir/guest.log" ||
        die "guest: make-guest.sh did not take the native path ($dir/guest.log)"
    for f in Image initrd.img debian.img; do
        [[ -s $root/root/guest/$f ]] || die "guest: no $f made ($dir/guest.log)"
    done
    rm -rf "$dir/guest"
    mv "$root/root/guest" "$dir/guest"
    mv -f "$root/root/guest-ssh-key" "$root/root/guest-ssh-key.pub" "$dir/"
    say "guest: $(grep -o 'done in .*' "$dir/guest.log" | head -n 1); in $dir/guest"
    phase_done guest
}

# --- root ---------------------------------------------------------------------
if want root; then
    mapfile -t deps < <("$src/scripts/install-deps.sh" --list --main arm64 --release "$release")
    # scripts/lib/debian-root.sh: mmdebstrap, the maintainer scripts under
    # qemu-user, no documentation, one initramfs at the end. Its modules:
    # those of the board's root disk (virtio, ext4); the board's main.sh
    # loads what it needs later (vhost_net, tun) from /lib/modules. apt's
    # package lists stay in the root (--skip=cleanup/apt/lists):
    # fetch-packages.sh resolves versions with them on the offline board.
    # The root's log, each line with the seconds since the start, is
    # DIR/root.log. systemd: a board's init, under which the boot runs the
    # package's kvmmio@.service last; Debian 13's apt brings it along,
    # Debian 12's minbase has none (its board then had no unit to check).
    debian_root_make "$dir" "$root" "$release" board-rehearsal virtio_pci,virtio_mmio,virtio_blk,ext4 \
        "$(IFS=,; echo "${deps[*]},linux-image-arm64,systemd")" "$dir/root.log" --skip=cleanup/apt/lists
    echo board >"$root/etc/hostname"
    say "root: $(du -sh "$root" | cut -f1)"
    phase_done root
fi
[[ -x $root/usr/bin/g++ ]] || die "no arm64 root in $root: run the root phase"

# --- carry: clone, the offline arm64 cache, the native build -------------------
if want carry; then
    clone=$root/root/kvmmio
    if [[ -d $clone/.git ]]; then
        # A later run: what a board user does after a change, git pull, and
        # main.sh's build goes on from where it was.
        git -C "$clone" fetch -q "$src" HEAD
        git -C "$clone" merge -q --ff-only FETCH_HEAD ||
            die "$clone cannot fast-forward to $(git -C "$src" rev-parse --short HEAD): remove it"
    else
        git clone -q --no-hardlinks "$src" "$clone"
        # Seed the cache with this checkout's downloads; fetch-packages.sh in
        # the root then fetches what the root's lists resolve to, and unpacks.
        if [[ -d $src/.cache/arm64/debs ]]; then
            mkdir -p "$clone/.cache/arm64"
            cp -a "$src/.cache/arm64/debs" "$clone/.cache/arm64/"
        fi
    fi
    say "clone at /root/kvmmio: $(git -C "$clone" rev-parse --short HEAD)"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    # QEMU, the main job's peer, only when its --configs ask for it (as the
    # board's main.sh will fetch it).
    no_qemu=''
    [[ -z $configs || ,$configs, == *,qemu-* ]] || no_qemu=' --no-qemu'
    in_root "scripts/arm64/fetch-packages.sh$no_qemu"
    phase_done carry-cache
    # main.sh's build: the arm64 platform's cross build, carried in
    # (compiling under qemu-user took ~49 min, g++ at ~15x its native
    # CPU time; carry_arm64_build above).
    rm -f "$root/etc/resolv.conf"
    need_tool aarch64-linux-gnu-g++ g++-aarch64-linux-gnu
    [[ -d /usr/lib/aarch64-linux-gnu ]] ||
        die "no /usr/lib/aarch64-linux-gnu to cover with the board's libraries: scripts/install-deps.sh (its arm64 cross packages make it)"
    guest_pid=''
    if want guest; then guest_phase & guest_pid=$!; fi
    carry_arm64_build "$clone"
    board_deps "$clone/build"
    phase_done carry-build
    # The packages the board installs with apt (the boot's first step).
    need_tool dpkg-buildpackage dpkg-dev
    need_tool dh debhelper
    need_tool lintian lintian
    # In a subshell of its own, which counts only its own children: this
    # shell reaps the guest's subshell as soon as it ends, and its CPU
    # would otherwise be charged to this phase as well as to its own line.
    (
        in_ns "$carry_debs" /root/kvmmio/build/debs
        ls "$root"/root/kvmmio/build/debs/*.deb >/dev/null 2>&1 || die "carry: no packages in $root/root/kvmmio/build/debs"
        phase_done carry-debs
    )
    phase_start=$SECONDS
    phase_cpu_mark
    if [[ -n $guest_pid ]]; then
        wait "$guest_pid" || die "guest: failed beside the carry phase (its message above)"
        guest_done=1
        phase_cpu_mark  # the guest's CPU is in its own line
    fi
fi

# --- guest, without the carry phase --------------------------------------------
if want guest && ((!guest_done)); then guest_phase; fi

# --- image ---------------------------------------------------------------------
img=$dir/board.img
if want image; then
    [[ -x $root/root/kvmmio/build/vmm/kvmmio ]] || die "no native build in the root: run the carry phase"
    ls "$root"/root/kvmmio/build/debs/kvmmio_*_arm64.deb >/dev/null 2>&1 || die "no packages in the root: run the carry phase"
    rm -rf "$root/root/board-rehearsal" "$root/root/quick-start"
    mkdir -p "$root/root/board-rehearsal"
    # README's quick start, when the guest phase made its guest: the
    # directory it runs in holds debs/ (the carried packages) and guest/
    # (that guest, made with the key beside it); the init runs it.
    quick_start=0
    if [[ -s $dir/guest/debian.img && -s $dir/guest-ssh-key ]]; then
        [[ -x $root/usr/bin/ssh && -x $root/usr/sbin/nft ]] ||
            die "image: the root lacks ssh or nft for the quick start: run the guest phase again"
        mkdir -p "$root/root/quick-start"
        ln -s /root/kvmmio/build/debs "$root/root/quick-start/debs"
        cp -a --sparse=always "$dir/guest" "$root/root/quick-start/guest"
        cp "$dir/guest-ssh-key" "$root/root/quick-start/key"
        quick_start=1
    fi
    echo $quick_start >"$dir/quick-start"
    cat >"$root/root/board-rehearsal/init" <<EOF
#!/bin/sh
# The rehearsal's init (scripts/board-rehearsal.sh): what a board user does
# after logging in as root, then poweroff. Two boards boot copies of this
# image at once (kvmmio_board_part= on the kernel command line): "main"
# runs main.sh, "rest" the scenarios, the quick start and systemd.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
hostname board
ip link set lo up
# The tuning docs/usage.md ("Huge pages") gives a board: huge pages for
# kvmmio's guest RAM.
echo advise >/sys/kernel/mm/transparent_hugepage/shmem_enabled
export HOME=/root LANG=C.UTF-8 TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
r=/root/board-rehearsal
part=\${kvmmio_board_part:-main}
cd /root/kvmmio
echo "BOARD: \$(uname -r), \$(nproc) CPUs, GICv\${kvmmio_board_gic:-?}, part \$part"
# kvmmio as a board user gets it: the release's packages, installed with
# apt (offline: their dependencies are the root's already); everything
# after runs that kvmmio (KVMMIO_PROGRAM), the build only for the harness.
echo "BOARD: apt-get install ./build/debs/*.deb"
start=\$(date +%s)
{ apt-get install -y -q --no-install-recommends /root/kvmmio/build/debs/kvmmio_*.deb /root/kvmmio/build/debs/libkvmmio*.deb 2>&1
  echo \$? >\$r/\$part-apt-status; } | tee \$r/\$part-apt.log
echo "BOARD-DONE apt-get status=\$(cat \$r/\$part-apt-status) after \$((\$(date +%s) - start)) s: \$(command -v kvmmio) \$(dpkg-query -W -f='\${Version}' kvmmio 2>&1) (\$(kvmmio --version 2>&1 | head -n 1))" | tee \$r/\$part-installed.txt
export KVMMIO_PROGRAM=/usr/bin/kvmmio
if [ "\$part" = main ]; then
echo "BOARD: scripts/main.sh --quick ${configs:+--configs $configs} ${fio_configs:+--fio-configs $fio_configs} ${g2g_configs:+--g2g-configs $g2g_configs} ${vsock_configs:+--vsock-configs $vsock_configs}"
start=\$(date +%s)
{ scripts/main.sh --quick ${configs:+--configs $configs} ${fio_configs:+--fio-configs $fio_configs} ${g2g_configs:+--g2g-configs $g2g_configs} ${vsock_configs:+--vsock-configs $vsock_configs} --out \$r/results 2>&1; echo \$? >\$r/status; } | tee \$r/main.log
status=\$(cat \$r/status)
echo \$((\$(date +%s) - start)) >\$r/seconds
echo "BOARD-DONE status=\$status after \$(cat \$r/seconds) s"
sync
echo o >/proc/sysrq-trigger
sleep 60
fi
# The rest: the Linux-guest scenarios on the board's KVM, as a board user
# runs them: scripts/test.sh --scenarios, on the carried build.
if [ -n "$scenarios" ]; then
    echo "BOARD: ${vmm_boot_skip:+KVMMIO_VMM_BOOT_SKIP=$vmm_boot_skip }scripts/test.sh --scenarios $scenarios ${board_net_modes:+--net-modes $board_net_modes}"
    start=\$(date +%s)
    { ${vmm_boot_skip:+KVMMIO_VMM_BOOT_SKIP=$vmm_boot_skip} scripts/test.sh --scenarios $scenarios ${board_net_modes:+--net-modes $board_net_modes} 2>&1; echo \$? >\$r/test-status; } | tee \$r/test.log
    echo \$((\$(date +%s) - start)) >\$r/test-seconds
    mkdir -p \$r/test-results
    cp -r build/tests/arm64/results/. \$r/test-results/ 2>/dev/null
    cp build/tests/arm64/host-*.log \$r/test-results/ 2>/dev/null
    echo "BOARD-DONE test.sh status=\$(cat \$r/test-status) after \$(cat \$r/test-seconds) s"
fi
# README's quick start, as it stands, where a guest was made for it
# (scripts/board-quick-start.sh): install, network, run by name, ssh, a
# reboot in place, stop.
if [ -d /root/quick-start ]; then
    echo "BOARD: scripts/board-quick-start.sh README.md /root/quick-start"
    start=\$(date +%s)
    { scripts/board-quick-start.sh README.md /root/quick-start /root/quick-start/key 2>&1; echo \$? >\$r/quick-start-status; } | tee \$r/quick-start.log
    echo "BOARD-DONE quick start status=\$(cat \$r/quick-start-status) after \$((\$(date +%s) - start)) s"
fi
# Last, systemd as init, as a board boots: the package's kvmmio@.service
# runs a VM from /etc/kvmmio/board-vm.conf (main.sh's guest, in the mode
# that powers off on the power key); the rehearsal's oneshot unit, started
# by multi-user.target, starts it, lists it, stops it and powers off.
# Its guest is the scenarios' L2 (scripts/arm64/host-prepare.sh, which
# test.sh --scenarios ran; again where it did not: it is idempotent).
if [ -x /lib/systemd/systemd ] && [ -e /usr/lib/systemd/system/kvmmio@.service ]; then
    [ -s build/arm64-host/l2/initramfs ] || scripts/arm64/host-prepare.sh build >\$r/host-prepare.log 2>&1
    mkdir -p /etc/kvmmio /etc/systemd/system/multi-user.target.wants
    cat >/etc/kvmmio/board-vm.conf <<CONF
# The board rehearsal's VM (scripts/board-rehearsal.sh): the scenarios' L2.
kernel /root/kvmmio/build/arm64-host/l2/Image
initrd /root/kvmmio/build/arm64-host/l2/initramfs
mem 256M
cpus 1
cmdline-replace console=ttyAMA0 earlycon quiet panic=-1 kvmmio.l2test=powerkey
CONF
    cat >/etc/systemd/system/kvmmio-unit-check.service <<UNIT
[Unit]
Description=The board rehearsal's check of kvmmio@.service
After=basic.target
[Service]
Type=oneshot
ExecStart=\$r/unit-check
StandardOutput=journal+console
StandardError=journal+console
UNIT
    ln -sfn ../kvmmio-unit-check.service /etc/systemd/system/multi-user.target.wants/kvmmio-unit-check.service
    echo "BOARD: exec /lib/systemd/systemd (kvmmio@board-vm.service)"
    sync
    exec /lib/systemd/systemd
fi
sync
echo o >/proc/sysrq-trigger
sleep 60
EOF
    chmod +x "$root/root/board-rehearsal/init"
    # unit-check: run by systemd (the init's last step) as a oneshot unit.
    cat >"$root/root/board-rehearsal/unit-check" <<'EOF'
#!/bin/sh
# The board rehearsal's check of the package's kvmmio@.service under
# systemd as init: start kvmmio@board-vm, wait for its guest, list it, stop
# it (ExecStop: kvmmio stop, the power key), record, power the board off.
r=/root/board-rehearsal
u=kvmmio@board-vm.service
{
    echo "UNIT: PID 1 is $(cat /proc/1/comm), $(systemctl --version | head -n 1)"
    start=$(date +%s)
    systemctl start $u
    echo "UNIT: systemctl start $u: status $?"
    i=0
    until journalctl -b -u $u -o cat | grep -q KVMMIO-L2-POWER-KEY-READY || [ $i -ge 180 ]; do
        sleep 1
        i=$((i + 1))
    done
    echo "UNIT: the guest waits for its power key after $(($(date +%s) - start)) s"
    kvmmio list >$r/unit-list.txt 2>&1
    systemctl is-active $u >$r/unit-active.txt 2>&1
    systemctl stop $u
    echo "UNIT: systemctl stop $u: status $?"
    systemctl show -p ActiveState -p Result -p ExecMainStatus $u >$r/unit-show.txt 2>&1
    journalctl -b -u $u -o cat >$r/unit-journal.txt 2>&1
    echo "UNIT: list: $(tr '\n' '|' <$r/unit-list.txt); active then: $(cat $r/unit-active.txt); after stop: $(tr '\n' ' ' <$r/unit-show.txt)"
} 2>&1 | tee $r/unit.log
sync
systemctl poweroff --no-block
EOF
    chmod +x "$root/root/board-rehearsal/unit-check"
    kver=$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n1)
    cp "$root/boot/vmlinuz-$kver" "$dir/vmlinuz"
    cp "$root/boot/initrd.img-$kver" "$dir/initrd.img"
    echo "$kver" >"$dir/kernel-version"
    used=$(du -sm "$root" | cut -f1)
    size=$((used + 3072))  # room for main.sh's initramfs files and results
    rm -f "$img"
    mkfs.ext4 -q -F -L board -d "$root" "$img" "${size}M"
    rm -rf "$root/root/quick-start"
    say "image: $img, ${size} MB (root ${used} MB), kernel $kver"
    phase_done image
fi

# --- boot and check -----------------------------------------------------------
check() {
    local out=$1/results ok=1 c cfgs
    # The packages: installed with apt on each board, and the kvmmio
    # everything ran.
    for c in main rest; do
        [[ $(cat "$1/$c-apt-status" 2>/dev/null) == 0 ]] ||
            { say "gic$2 ($c): apt-get install of the packages: status $(cat "$1/$c-apt-status" 2>/dev/null || echo missing) ($c-apt.log)"; ok=0; }
        grep -q ': /usr/bin/kvmmio ' "$1/$c-installed.txt" 2>/dev/null ||
            { say "gic$2 ($c): no installed /usr/bin/kvmmio: $(cat "$1/$c-installed.txt" 2>/dev/null)"; ok=0; }
    done
    grep -q '^main.sh: kvmmio: /usr/bin/kvmmio ' "$1/main.log" 2>/dev/null ||
        { say "gic$2: main.sh did not run the installed kvmmio (no 'main.sh: kvmmio: /usr/bin/kvmmio' in main.log)"; ok=0; }
    # The package's unit under systemd as init: the VM ran, listed by name,
    # and stopped by systemctl stop (the power key; kvmmio exit 0).
    grep -q '^board-vm  *[0-9][0-9]*  *running ' "$1/unit-list.txt" 2>/dev/null ||
        { say "gic$2: kvmmio list under systemd did not show board-vm running: $(tr '\n' '|' <"$1/unit-list.txt" 2>/dev/null)"; ok=0; }
    [[ $(cat "$1/unit-active.txt" 2>/dev/null) == active ]] ||
        { say "gic$2: kvmmio@board-vm was '$(cat "$1/unit-active.txt" 2>/dev/null)', not active"; ok=0; }
    grep -q '^ExecMainStatus=0$' "$1/unit-show.txt" 2>/dev/null && grep -q '^Result=success$' "$1/unit-show.txt" &&
        grep -qx 'KVMMIO-L2-POWER-KEY.\{0,1\}' "$1/unit-journal.txt" ||
        { say "gic$2: systemctl stop kvmmio@board-vm: $(tr '\n' ' ' <"$1/unit-show.txt" 2>/dev/null); the guest's power key $(grep -cx 'KVMMIO-L2-POWER-KEY.\{0,1\}' "$1/unit-journal.txt" 2>/dev/null) times in the journal"; ok=0; }
    # README's quick start, where the image had its guest: every command
    # as expected (board-quick-start.sh's closing line).
    if [[ $(cat "$dir/quick-start" 2>/dev/null) == 1 ]]; then
        [[ $(cat "$1/quick-start-status" 2>/dev/null) == 0 ]] && grep -qx 'QUICK-START-DONE status=0' "$1/quick-start.log" ||
            { say "gic$2: README's quick start: $(grep '^QUICK-START-DONE' "$1/quick-start.log" 2>/dev/null || echo 'no closing line') (quick-start.log)"; ok=0; }
    fi
    # Each scenario's log opens with the kvmmio it runs (host-scenario.sh).
    if [[ -n $scenarios ]]; then
        local f first
        for f in "$1"/test-results/host-*.log; do
            [[ -e $f ]] || { say "gic$2: no scenario logs in $1/test-results"; ok=0; break; }
            first=$(grep -m1 '^== .* on this host' "$f" || true)
            [[ $first == *', kvmmio /usr/bin/kvmmio' ]] ||
                { say "gic$2: ${f##*/} did not run the installed kvmmio: '${first:-no opening line}'"; ok=0; }
        done
    fi
    [[ $(cat "$1/status" 2>/dev/null) == 0 ]] || { say "gic$2: main.sh status $(cat "$1/status" 2>/dev/null || echo missing)"; ok=0; }
    for f in report.txt report.json throughput.png; do
        [[ -s $out/report/$f ]] || { say "gic$2: no $f"; ok=0; }
    done
    # shellcheck source=bench/net-modes.sh
    cfgs=${configs:-$(. "$src/bench/net-modes.sh" && echo "$NET_COMPARE_CONFIGS")}
    for c in ${cfgs//,/ }; do
        jq -e -n --arg c "$c" 'any(inputs; .kind == "iperf" and .config == $c and .failed == null)' \
            "$out/arm64/raw.jsonl" >/dev/null 2>&1 ||
            { say "gic$2: no completed iperf run of $c"; ok=0; }
        grep -q "$c" "$out/report/report.txt" 2>/dev/null || { say "gic$2: $c not in report.txt"; ok=0; }
    done
    # The guest-to-guest cells asked for by name.
    [[ -z $g2g_configs || $g2g_configs == none ]] || for c in ${g2g_configs//,/ }; do
        jq -e -n --arg c "g2g-$c" 'any(inputs; .kind == "iperf" and .config == $c and .failed == null)' \
            "$out/arm64/raw.jsonl" >/dev/null 2>&1 ||
            { say "gic$2: no completed guest-to-guest iperf run of $c"; ok=0; }
    done
    # The disk cells: each config's fio runs, with requests done.
    cfgs=${fio_configs:-host,blk-io_uring-mirror,blk-io_uring-trap,fs-mirror}
    [[ $cfgs == none ]] || for c in ${cfgs//,/ }; do
        jq -e -n --arg c "$c" 'any(inputs; .kind == "fio" and .config == $c and .failed == null and .ios > 0)' \
            "$out/arm64/raw.jsonl" >/dev/null 2>&1 ||
            { say "gic$2: no completed fio run of $c"; ok=0; }
    done
    # The carried build must be up to date on the board: make prints a
    # "  CXX  file" line for anything it compiles.
    local built='^  (CC|CXX|CPPAS|AR|CCLD|CXXLD) ' n log
    for log in main.log ${scenarios:+test.log}; do
        n=$(grep -cE "$built" "$1/$log" 2>/dev/null) || true
        ((${n:-0} == 0)) ||
            { say "gic$2: the board built $n files (the carried build was not up to date; see $log)"; ok=0; }
    done
    # test.sh --scenarios: status 0, and its closing line counts the
    # scenarios' cases: some passed, none failed.
    if [[ -n $scenarios ]]; then
        local last
        [[ $(cat "$1/test-status" 2>/dev/null) == 0 ]] ||
            { say "gic$2: test.sh status $(cat "$1/test-status" 2>/dev/null || echo missing)"; ok=0; }
        last=$(tail -n 1 "$1/test.log" 2>/dev/null)
        if ! [[ $last =~ ^([0-9]+)\ passed,\ 0\ failed,\ [0-9]+\ skipped$ ]] || ((BASH_REMATCH[1] == 0)); then
            say "gic$2: test.sh's closing line is '$last', not N passed (N > 0), 0 failed"
            ok=0
        fi
    fi
    ((ok))
}

failed=0
if want boot; then
    [[ -s $img ]] || die "no image: run the image phase"
    for g in "${gics[@]}"; do
        d=$dir/gic$g
        rm -rf "$d"
        mkdir -p "$d"
        # Two boards from copies of the image, at once: main.sh on one, the
        # scenarios, the quick start and systemd on the other. Each waits
        # on its L2 guests and timers for much of its time, so together
        # they keep both of the machine's cores busy where one board in
        # turn left a quarter of them idle; main.sh's cells and the rest
        # share nothing but the image they start from. The rest's board
        # has one CPU: with two each, four vCPU threads on two cores spent
        # a third more CPU time (a preempted vCPU's lock spun on by its
        # sibling, likely); 7 min 35 s and 781 s of CPU for both, against 11 min
        # 26 s and 746 s one after the other, on a quiet machine.
        pids=() parts=(main rest)
        declare -A smp=([main]=2 [rest]=1)
        for part in "${parts[@]}"; do
            cp --sparse=always "$img" "$d/$part.img"
            say "booting the board, GICv$g, part $part (at most $((timeout / 60)) min; console: $d/console-$part.log)"
            timeout --foreground -k 10 "$timeout" nice -n 10 qemu-system-aarch64 \
                -M "virt,virtualization=on,gic-version=$g" -cpu max,pauth=off,sve=off \
                -smp "${smp[$part]}" -m 3072 -accel tcg,thread=multi -nographic -no-reboot -nic none \
                -kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
                -append "root=/dev/vda rw console=ttyAMA0 init=/root/board-rehearsal/init panic=-1 kvmmio_board_gic=$g kvmmio_board_part=$part" \
                -drive "file=$d/$part.img,format=raw,if=virtio" </dev/null >"$d/console-$part.log" 2>&1 &
            pids+=($!)
        done
        for i in 0 1; do
            part=${parts[i]} status=0
            wait "${pids[i]}" || status=$?
            ((status != 124)) || say "gic$g: the board ($part) did not power off within $timeout s"
            # Both boards' files in one place: their names differ (the
            # packages' install is PART-apt-*), but the scripts the image
            # carried, the same in both.
            debugfs -R "rdump /root/board-rehearsal $d" "$d/$part.img" >/dev/null 2>&1 ||
                say "gic$g: debugfs could not read /root/board-rehearsal back from the $part board"
            cp -a "$d/board-rehearsal/." "$d/" 2>/dev/null || true
            rm -rf "$d/board-rehearsal"
            ((keep)) || rm -f "$d/$part.img"
        done
        phase_done "boot-gic$g"
        if check "$d" "$g"; then
            say "gic$g: passed: main.sh --quick in $(cat "$d/seconds") s on the board; report:"
            sed 's/^/  /' "$d/results/report/report.txt" >&2
            [[ -z $scenarios ]] ||
                say "gic$g: test.sh --scenarios $scenarios in $(cat "$d/test-seconds") s: $(tail -n 1 "$d/test.log")"
            # README's quick start, where the image carried it: its lease,
            # login and reboot in place, as board-quick-start.sh said them.
            [[ $(cat "$dir/quick-start" 2>/dev/null) != 1 ]] ||
                say "gic$g: README's quick start: $(grep -E '^QUICK-START: (lease|ssh|rebooted|.* stopped$)' "$d/quick-start.log" |
                    sed 's/^QUICK-START: //' | paste -sd ';' | sed 's/;/; /g'); $(tail -n 1 "$d/quick-start.log")"
        else
            say "gic$g: FAILED; see $d/main.log, $d/test.log and the consoles $d/console-main.log, $d/console-rest.log"
            # The cause, here: CI keeps only this script's output, not
            # the board's files.
            for f in main.log test.log; do
                [[ -s $d/$f ]] || continue
                say "gic$g: the last lines of $f, and its FAIL lines:"
                { grep -E '^(FAIL|ERROR):|\[  FAILED  \]' "$d/$f" | head -n 20; tail -n 30 "$d/$f"; } |
                    sed "s/^/  $f: /" >&2
            done
            for f in "$d"/test-results/host-*.log; do
                [[ -s $f ]] && grep -qiE 'fail|error' "$f" || continue
                say "gic$g: ${f##*/}'s FAIL and error lines:"
                grep -iE 'fail|error' "$f" | head -n 25 | sed "s/^/  ${f##*/}: /" >&2
            done
            failed=1
        fi
    done
fi
say "times (also in $times):"
cat "$times" >&2
exit $failed
