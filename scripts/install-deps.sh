#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs what kvmmio needs to build, test and benchmark on Debian 12, with
# apt-get, idempotently: packages already present are not touched, and
# apt-get update runs only when something is missing.
#
#   scripts/install-deps.sh            everything (native + arm64 cross + platform + gnuplot)
#   scripts/install-deps.sh --native   only the native build and its tests
set -euo pipefail

# Each package is here for a named use (docs/arm64-platform.md lists why).
native=(g++ make autoconf automake libtool pkg-config linux-libc-dev libfdt-dev
        nlohmann-json3-dev  # every JSON kvmmio writes or reads (header-only)
        jq                  # the scripts read JSON with jq
        libseccomp-dev      # the VMM's per-thread system call filters
        device-tree-compiler libgtest-dev libgmock-dev
        gcovr               # scripts/coverage.sh: line coverage of the host tests
        clang libclang-rt-14-dev)  # scripts/fuzz.sh: libFuzzer, ASan, UBSan
# The main job's chart (net_report writes a gnuplot script; pngcairo).
report=(gnuplot-nox)
case $(dpkg --print-architecture) in
  arm64)
    # A board: the guests run on this kernel's KVM and the host baseline on
    # its own stack (iperf3 in network namespaces made with iproute2); cpio,
    # kmod and binutils build the guest's initramfs. No QEMU, no cross build.
    cross=()
    platform=(cpio kmod binutils iperf3 iproute2) ;;
  *)
    # The arm64 cross build, and the nested arm64 platform: QEMU runs L1;
    # cpio and kmod (depmod) build its initramfs. iperf3 and iproute2 run
    # inside L1 and L2 from Debian's arm64 packages, not from the host.
    cross=(g++-aarch64-linux-gnu libgtest-dev:arm64 libgmock-dev:arm64 libseccomp-dev:arm64)
    platform=(qemu-system-arm cpio kmod) ;;
esac

want=("${native[@]}")
case "${1:-}" in
  --native) ;;
  "" | --all) want+=("${cross[@]}" "${platform[@]}" "${report[@]}") ;;
  -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
  *) echo "install-deps.sh: unknown option $1 (use --native or --all)" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=sudo
  command -v sudo >/dev/null || { echo "install-deps.sh: run as root (or install sudo)" >&2; exit 2; }
else
  sudo_cmd=
fi

if printf '%s\n' "${want[@]}" | grep -q ':arm64$' &&
   ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install-deps: enabling the arm64 architecture for multiarch packages"
  $sudo_cmd dpkg --add-architecture arm64
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
$sudo_cmd apt-get update -q
[ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
