#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs what kvmmio needs to build, test and benchmark on Debian 12
# (bookworm) or 13 (trixie), with apt-get, idempotently: packages already
# present are not touched, and apt-get update runs only when something is
# missing.
#
#   scripts/install-deps.sh            everything (native + arm64 cross + platform
#                                      + gnuplot + the test suite's own tools)
#   scripts/install-deps.sh --main     what scripts/main.sh needs: everything but
#                                      the test suite's own tools (fuzzing,
#                                      coverage, the board rehearsal)
#   scripts/install-deps.sh --native   only the native build and its tests
#   scripts/install-deps.sh --list [--main] [ARCH] [--release NAME]
#                                      print what the default (or --main)
#                                      installs on a Debian ARCH host (default
#                                      this one's) of release NAME (default
#                                      this one's, e.g. bookworm, trixie), one
#                                      a line; installs nothing
set -euo pipefail
arch=$(dpkg --print-architecture)
# shellcheck disable=SC1091 # the host's file
release=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
mode=${1:-}
list_main=0
if [ "$mode" = --list ]; then
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --main) list_main=1; shift ;;
      --release) release=${2:?--release needs a Debian release name, e.g. trixie}; shift 2 ;;
      -*) echo "install-deps.sh: unknown --list option $1 (see --help)" >&2; exit 2 ;;
      *) arch=$1; shift ;;
    esac
  done
fi
# The releases whose archives every name below was checked against (each
# name exists there for amd64 and arm64). The names are the releases' own
# defaults, not versions: libclang-rt-dev is the compiler runtime of the
# release's default clang (llvm-defaults: clang 14 and libclang-rt-14-dev
# on bookworm, 19 on trixie), so one list serves both. Another release may
# well work; it is named so that a missing package is not a surprise.
checked="bookworm trixie"
case " $checked " in
  *" $release "*) ;;
  *) [ "$mode" = --list ] && [ -n "$release" ] &&
       { echo "install-deps.sh: no package list checked for Debian release '$release' (checked: $checked)" >&2; exit 2; }
     echo "install-deps: this host's release (${release:-unknown}) is not one of: $checked; trying the same names" >&2 ;;
esac

# Each package is here for a named use (docs/arm64-platform.md lists why).
native=(g++ make autoconf automake libtool pkg-config linux-libc-dev libfdt-dev
        nlohmann-json3-dev  # every JSON kvmmio writes or reads (header-only)
        jq                  # the scripts read JSON with jq
        libseccomp-dev      # the VMM's per-thread system call filters
        zlib1g-dev          # --kernel Image.gz (same name on Debian 12 and 13)
        liburing-dev        # virtio-blk's io_uring engine (same name on Debian 12 and 13)
        device-tree-compiler libgtest-dev libgmock-dev)
# The test suite's own tools, which scripts/main.sh does not use.
testing=(gcovr               # scripts/coverage.sh: line coverage of the host tests
         clang libclang-rt-dev   # scripts/fuzz.sh: libFuzzer, ASan, UBSan (clang's own runtime)
         systemd             # systemd-analyze verify: tests/vmm/systemd-unit.test
         iproute2 nftables dnsmasq-base busybox  # tests/vmm/nat-network.test: kvmmio network's tools, and the stand-in guests' DHCP client
         openssh-client      # ssh-keygen: the key the test command's guest is made with (scripts/guest-test-key.sh)
         build-essential debhelper lintian)  # scripts/build-debs.sh: the Debian packages (dpkg-buildpackage wants build-essential)
# The main job's chart (net_report writes a gnuplot script; pngcairo).
report=(gnuplot-nox)
rehearsal=()
case $arch in
  arm64)
    # A board: the guests run on this kernel's KVM and the host baseline on
    # its own stack (iperf3 in network namespaces made with iproute2); cpio,
    # kmod and binutils build the guest's initramfs; wget talks to the
    # guests' control server (bench/net-compare.sh; minbase has no wget, the
    # board rehearsal found); squashfs-tools makes the tools disk (fio for
    # the disk cells); virtiofsd serves the shared-folder cells (fs-mirror):
    # Debian 13's standalone package, Debian 12's in qemu-system-common
    # (/usr/lib/qemu/virtiofsd). No QEMU, no cross build.
    cross=()
    virtiofsd=virtiofsd
    [ "$release" != bookworm ] || virtiofsd=qemu-system-common
    platform=(cpio kmod binutils iperf3 iproute2 wget squashfs-tools "$virtiofsd") ;;
  *)
    # The arm64 cross build, and the nested arm64 platform: QEMU runs L1;
    # cpio and kmod (depmod) build its initramfs. iperf3 and iproute2 run
    # inside L1 and L2 from Debian's arm64 packages, not from the host.
    cross=(g++-aarch64-linux-gnu libgtest-dev:arm64 libgmock-dev:arm64 libseccomp-dev:arm64)
    platform=(qemu-system-arm cpio kmod squashfs-tools)
    # scripts/board-rehearsal.sh (run by scripts/test.sh, not by --native's
    # make check): the board's root (mmdebstrap), its disk image
    # (mkfs.ext4, debugfs), the clone in it (git); e2fsprogs also checks
    # the guest-disk test's disk after its reboot (e2fsck, debugfs).
    rehearsal=(mmdebstrap e2fsprogs git) ;;
esac
main=("${native[@]}" "${cross[@]}" "${platform[@]}" "${report[@]}")

case "$mode" in
  --native) want=("${native[@]}" "${testing[@]}") ;;
  --main) want=("${main[@]}") ;;
  "" | --all) want=("${main[@]}" "${testing[@]}" "${rehearsal[@]}") ;;
  --list)
    if [ $list_main = 1 ]; then printf '%s\n' "${main[@]}"; else printf '%s\n' "${main[@]}" "${testing[@]}" "${rehearsal[@]}"; fi
    exit 0 ;;
  -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
  *) echo "install-deps.sh: unknown option $mode (see --help)" >&2; exit 2 ;;
esac

# Root (or sudo) only when something is to change: with everything present
# nothing runs apt-get, so an offline board or a user without sudo passes.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "install-deps.sh: run as root (or install sudo) to run: $*" >&2; exit 2
  fi
}

if printf '%s\n' "${want[@]}" | grep -q ':arm64$' &&
   ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install-deps: enabling the arm64 architecture for multiarch packages"
  as_root dpkg --add-architecture arm64
  force_update=1
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ] && [ -z "${force_update:-}" ]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]:-(none; refreshing lists)}"
as_root apt-get update -q
[ ${#missing[@]} -eq 0 ] || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
