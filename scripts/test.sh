#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The whole kvmmio test suite, from a fresh clone on Debian 12:
#   1. installs the build and test dependencies (scripts/install-deps.sh),
#   2. builds natively with warnings as errors,
#   3. make check: unit tests, the KVM-layer tests on this machine's
#      /dev/kvm, and (on x86-64) the arm64 build of the same tests run on
#      real KVM/ARM nested in qemu-system-aarch64, with L1 on GICv3 and GICv2,
#   4. line coverage of the host tests (scripts/coverage.sh --counted: gcovr
#      over the counts make check's run left in the build, which is
#      configured with --coverage; fails below the project's floor),
#   5. the Debian packages, from the release tarball's tree
#      (scripts/build-debs.sh --check: every tracked file in the tarball,
#      -O2 -Werror, lintian without errors, installcheck against the
#      packages' files; this replaces make distcheck, whose VPATH build
#      every build here already is),
#   6. fuzzes the virtio-mmio transport and the real devices for a bounded
#      time each (scripts/fuzz.sh, clang with ASan/UBSan, an RSS limit and a
#      per-input timeout; $KVMMIO_FUZZ_SECONDS per target, default 45),
#   7. rehearses the board path (scripts/board-rehearsal.sh, as root on an
#      x86-64 host; its root, the made guest and the image are made in the
#      background from the start of step 2, at the lowest priority while
#      the build and make check run, then beside steps 4-6 and 8, whose machine they
#      share: the root is one emulated dpkg at a time, ~56% of the 2-core
#      machine; its build is make check's arm64 cross build, completed and
#      carried in; the board boots as soon as its image is made, beside
#      what of steps 4-6 and 8 is left): a Debian 13 arm64 root (the release of current
#      boards and Raspberry Pi OS), in which scripts/make-guest.sh makes
#      the guest of docs/usage.md's "Your first guest" natively (it sees an
#      arm64 host), booted twice at once as an arm64 KVM host under
#      qemu-system-aarch64 on GICv2: one board runs `scripts/main.sh
#      --quick --configs host,vhost-irqfd-mirror` there, offline, with a
#      build carried in; the other `scripts/test.sh --scenarios vmm-boot`
#      on its own KVM (without the cases a GICv2 L1 of make check runs;
#      net-modes' mirror mode is main.sh's mirror cell), then README's
#      board quick start as written (the packages installed with apt,
#      that guest on a NAT network by name, ssh, a reboot in place, stop)
#      and the package's unit under systemd; $KVMMIO_BOARD_FLAGS replaces
#      the options, e.g. "--board bookworm:3 --board trixie:2" for the
#      Debian 12 board on GICv3 too: ~30 more minutes of the 2-core
#      machine, so by hand),
#   8. runs the README's main-job command on a quick matrix,
#      `scripts/main.sh --quick --configs host,vhost-irqfd-mirror,user-trap,
#      qemu-pci --mtus 1500,9000 --fio-configs host,blk-io_uring-mirror,
#      blk-threads-trap,fs-mirror --g2g-configs vhost-irqfd-mirror` (make
#      check's net-compare matrix inside it, so step 3 leaves that test
#      out; main.sh's verdict checks each mode's counters as it did), on
#      this build, and checks its report; after fuzzing, beside the
#      board's preparation and then its boot;
#   9. boots the board's made guest from its disk (x86-64, as root):
#      tests/arm64/guest-disk-gicv2.test in L1 on GICv2, a Raspberry Pi 4's
#      GIC (on a NAT network: DHCP, DNS, ssh with a key, login on the
#      console, ping, iperf3, fio, a file written, synced and checked by
#      e2fsck after a reboot), beside the board's boot (-gicv3.test, the
#      same on GICv3, runs by hand: both together cost CI a boot of 2-3 min
#      that the GIC does not change; `--scenarios guest-disk` makes the
#      guest on this x86-64 host instead, under qemu-user),
#  10. prints one line per phase ("make check: passed: ...", "coverage:",
#      "debs:", "fuzz:", "main job:", "board rehearsal:", "guest disk:",
#      each "FAILED (...)" with its status and log when it failed, so a log
#      kept only at its end still names the phase), where the real-KVM
#      coverage came from, then one closing line: "N passed, N failed,
#      N skipped" over every GoogleTest case.
#
# The host's /dev/kvm is optional: where it is absent the host KVM tests skip
# with that one reason; where it exists it must run a guest, or they fail.
# Under CI (CI=true) or with --strict the arm64 platform must run: a skip
# for want of it (no QEMU, no cross compiler) is a failure.
#
# The rehearsal skips, saying why, where the host cannot make its arm64
# root (not root, or no binfmt_misc of a user namespace's own: Linux < 6.7).
#
# On an arm64 host (a board) step 3 runs the Linux-guest scenarios on the
# host's own KVM instead of nested (tests/arm64/host-scenario.sh; they skip
# where /dev/kvm is absent), and steps 4-7 are for x86-64 development hosts.
#
#   scripts/test.sh [--strict] [--no-debs] [--no-fuzz] [--no-coverage]
#                   [--no-board] [--no-main] [--no-guest-disk]
#   scripts/test.sh --scenarios LIST [--net-modes LIST] [--strict]
#     only the named Linux-guest scenarios (vmm-boot, net-modes, net-resets,
#     hostile-guest, disk-stall (x86-64: in the hostile-guest boot),
#     many-vms; comma-separated; on x86-64 also guest-disk,
#     which is step 9, not make check: the guest scripts/make-guest.sh
#     makes, booted from its disk): build, then make check of just those
#     (on arm64 on this host's KVM, elsewhere nested on both GICs), and the
#     closing line; --net-modes LIST runs that subset of net-modes' modes
#     (e.g. vhost-irqfd-mirror; the scenarios read KVMMIO_NET_MODES).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
strict=${CI:-false} debs=1 fuzz=1 coverage=1 board=1 main=1 guest_disk=1 scenarios='' net_modes=''
while (($#)); do
  case $1 in
    --strict) strict=true ;;
    --no-debs) debs=0 ;;
    --no-fuzz) fuzz=0 ;;
    --no-coverage) coverage=0 ;;
    --no-board) board=0 ;;
    --no-main) main=0 ;;
    --no-guest-disk) guest_disk=0 ;;
    --scenarios) scenarios=${2:?--scenarios needs a LIST, e.g. vmm-boot,net-modes}; shift ;;
    --net-modes) net_modes=${2:?--net-modes needs a LIST, e.g. vhost-irqfd-mirror}; shift ;;
    -h | --help) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "test.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
build=${KVMMIO_BUILD:-$src/build}
jobs=$(nproc)
arch=$(uname -m)
[[ -z $net_modes || -n $scenarios ]] || { echo "test.sh: --net-modes goes with --scenarios (e.g. --scenarios net-modes)" >&2; exit 2; }

# --scenarios: the make-check tests that run each named scenario.
only_tests=()
if [[ -n $scenarios ]]; then
  [[ $scenarios =~ ^[a-z0-9,-]+$ ]] || { echo "test.sh: --scenarios: not a comma-separated list: '$scenarios'" >&2; exit 2; }
  [[ -z $net_modes || $net_modes =~ ^[a-z0-9,-]+$ ]] || { echo "test.sh: --net-modes: not a comma-separated list: '$net_modes'" >&2; exit 2; }
  for s in ${scenarios//,/ }; do
    if [[ $arch == aarch64 ]]; then
      named=("tests/arm64/host-$s.test")
    else
      # Its own tests (NAME-gicvN), or else the tests that run it in one
      # L1 boot with others (vmm-boot, net-modes: the board-class L1s).
      named=()
      for g in 3 2; do [[ ! -f $src/tests/arm64/$s-gicv$g.test ]] || named+=("tests/arm64/$s-gicv$g.test"); done
      if [[ ${#named[@]} -eq 0 ]]; then
        for t in "$src"/tests/arm64/*-gicv[23].test; do
          ! grep -qE "platform-test\.sh\" ([a-z0-9-]+,)*$s(,[a-z0-9-]+)* " "$t" || named+=("tests/arm64/${t##*/}")
        done
      fi
    fi
    [[ ${#named[@]} -gt 0 && -f $src/${named[0]} ]] || {
      echo "test.sh: --scenarios: no scenario '$s' here; one of: vmm-boot, net-modes, net-resets, hostile-guest, many-vms (disk-stall and guest-disk too on x86-64)" >&2
      exit 2
    }
    only_tests+=("${named[@]}")
  done
  coverage=0 debs=0 fuzz=0 board=0 main=0 guest_disk=0
  [[ -z $net_modes ]] || export KVMMIO_NET_MODES=$net_modes
fi

# Phase times against their budgets (scripts/phase-budget.sh), printed as
# each phase ends and again at the close, with the phases that overran.
# shellcheck source=scripts/phase-budget.sh
source "$src/scripts/phase-budget.sh"
phase_start=$SECONDS phase_times=()
phase_done() {
  budget_note "$1" $((SECONDS - phase_start))
  phase_times+=("$BUDGET_LINE")
  echo "test.sh: phase $BUDGET_LINE"
  phase_start=$SECONDS
}

# Only the scenarios: what scripts/main.sh installs is enough (a board has
# it, offline); the full suite adds its own tools (fuzzing, coverage).
deps=()
[[ -z $scenarios ]] || deps=(--main)
"$src/scripts/install-deps.sh" "${deps[@]}"
phase_done dependencies

# A session's priority against the others': with the scheduler's
# autogroups (Debian's kernels), each session (setsid) shares the CPUs
# equally with every other, whatever its processes' nice values, so nice
# alone gave the background half the machine. The session's own nice, in
# /proc/PID/autogroup, is what counts then; no such file: plain nice does.
# Only once PID has its own session: until its setsid runs it is in this
# script's autogroup, whose nice this must never change.
autogroup_nice() {
  local own group i=0
  [ -w "/proc/$1/autogroup" ] && own=$(cut -d' ' -f1 /proc/$$/autogroup 2>/dev/null) || return 0
  while group=$(cut -d' ' -f1 "/proc/$1/autogroup" 2>/dev/null) && [ "$group" = "$own" ]; do
    i=$((i + 1)); [ $i -le 100 ] || return 0
    sleep 0.02
  done
  [ -n "$group" ] || return 0
  echo "$2" >"/proc/$1/autogroup" 2>/dev/null || true
}

# The board rehearsal (step 7; see below for what it runs): its root,
# carried build and image start now, in the background, beside the build
# and make check (at the lowest priority: background_after_check), then
# coverage, the packages, fuzzing and the main job; its boot follows its
# image, beside what of those is left. Its root is on the run's longest
# path (root, carry beside the guest, image, boot) and starts downloading
# while the build compiles.
# vmm-boot on the board leaves out the cases whose path is the guest's and
# KVM's alone, the same on any host userland: the SMP boot, the PSCI reset,
# the two virtio-console boots, the virtio-blk disk, the backgrounded run
# under tmux, the control socket and named VMs (make check runs them on its
# board-class L1s, board-16k with the same 6.12 kernel in L2), and the
# one-vCPU boot and power-off (each of its main job's guests is one); the
# board runs what its Debian 13 userland takes part in (SIGTERM, the
# privilege drop, console input from a pipe, set-up errors), ~80 s less of
# the board's boot. No net-modes there: its one mode on the board, the
# mirror, is main.sh's mirror cell, with the same counters checked, and
# the board-class L1s run every mode on both GICs. Its main.sh runs two
# disk cells, the mirror's with io_uring (its userland's io_uring and glibc;
# the host's fio cell measures the board, not kvmmio) and the shared
# folder's, and no guest-to-guest cell (the main job runs the mirror's; on the
# board it added ~100 s), and no vsock cell (the main job's and make
# check's run them nested; on the board they would add about a minute).
# The shared-folder cells (fs-mirror) are the only run of kvmmio against
# Debian 13's virtiofsd (the Rust one; the nested platform's is Debian
# 12's C one): about a minute of the board's boot.
# By hand, without --vmm-boot-skip, --fio-configs, --g2g-configs and
# --vsock-configs, every case and --quick's disk, guest-to-guest and vsock
# cells run.
board_flags=${KVMMIO_BOARD_FLAGS:-"--board trixie:2 --scenarios vmm-boot --configs host,vhost-irqfd-mirror --fio-configs blk-io_uring-mirror,fs-mirror --g2g-configs none --vsock-configs none --vmm-boot-skip cpus1,cpus2,reset,reset-exit,hvc-cpus2,hvc-v1-input,disk,vsock,fs,vhost-user-net,disk-kill,background,api,names"}
board_status=0 board_line='' board_prep_pid='' board_log=$build/board-rehearsal.log
# The guest phase (make-guest.sh in the board's root) joins them where
# step 9 boots its guest; the board's image then carries it for README's
# quick start. The board boots as soon as its image is made, beside
# whatever of steps 4-6 and 8 is still running: its L1 leaves part of the
# two cores idle (its scenarios wait on L2 boots and timers), which they
# fill.
board_phases=root,carry,image,boot
[ $guest_disk = 0 ] || [ "$arch" = aarch64 ] || [[ " $board_flags " != *" --board trixie:"* ]] || board_phases=root,carry,guest,image,boot
mkdir -p "$build"
if [ $board = 1 ] && [ "$arch" != aarch64 ]; then
  if why=$("$src/scripts/board-rehearsal.sh" --check-host); then
    echo "test.sh: the board rehearsal (--phases $board_phases): in the background, log $board_log"
    # In a session of its own, so that stopping this script early stops
    # all of it (mmdebstrap, qemu-user, the cross build, QEMU) with one
    # signal. Its carried build is make check's arm64 cross build,
    # completed (board-rehearsal.sh --arm64-build).
    # shellcheck disable=SC2086 # board_flags: words of options
    nice -n 19 setsid "$src/scripts/board-rehearsal.sh" --dir "$build/board-rehearsal" $board_flags \
      --arm64-build "$build/arm64-platform/build" --phases "$board_phases" >"$board_log" 2>&1 &
    board_prep_pid=$!
    autogroup_nice "$board_prep_pid" 19
  else
    board_line="board rehearsal: skipped: $why"
  fi
fi

# The guest of "Your first guest" (step 9) is the board's: the guest
# phase above makes it natively in the board's arm64 root, as a board
# owner would, with the test's password and ssh key (guest-disk-test.sh's).
guest_status=0 guest_line='' guest_boot_pid=''
guest_dir=$build/board-rehearsal/trixie/guest guest_boot_log=$build/guest-disk.log
if [ $guest_disk = 1 ] && [ "$arch" != aarch64 ]; then
  if [ -z "$board_prep_pid" ]; then
    guest_line="guest disk: skipped: its guest is the board rehearsal's, which does not run here${board_line:+ (${board_line#board rehearsal: })}"
  elif [[ $board_phases != *,guest,* ]]; then
    guest_line="guest disk: skipped: its guest is the Debian 13 board's, and \$KVMMIO_BOARD_FLAGS has no --board trixie:N"
  fi
fi
# Stopping this script early stops what runs in the background (each in a
# session of its own: one signal reaches mmdebstrap, qemu-user, QEMU).
stop_background() {
  local p
  for p in "$board_prep_pid" "$guest_boot_pid"; do
    [ -z "$p" ] || kill -- -"$p" 2>/dev/null || true
  done
}
trap stop_background EXIT

# The build directory, made once and then reused as it is: autoreconf only
# where there is no configure, configure only where there is no Makefile.
# Later changes to configure.ac or a Makefile.am reach the build through
# make's own rebuild rules. A build configured before, e.g. by
# scripts/main.sh on a board (--enable-static-binaries, no -Werror), is
# kept: rerunning autoreconf would make make rerun configure and rebuild
# everything (an hour on a slow board), with the tree up to date.
# On arm64 the L2 guest's initramfs takes programs of this build, which
# must then be static (as main.sh builds them there).
cd "$src"
[ -x configure ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
# The tree is built once for make check and for line coverage: with
# coverage on (the default), a new build directory is configured with gcc's
# --coverage at -O0, so the counts come from make check's own run of the host
# tests instead of a second build and a second run (~5 min less on 2 cores);
# the Debian packages' build still compiles the tarball at -O2 with -Werror. No -g: gcov
# does not use it, and it cost a sixth of each file's compile time at -O0
# (a net test file: 10.1 s with it, 8.4 s without).
# -fprofile-update=atomic: the VMM's threads (vCPUs, I/O engines, the event
# loop) run the same code at once; gcc's plain counter increments race and
# can leave counts that gcov prints as negative, which gcovr refuses to read.
coverage_flags=(CXXFLAGS="-O0 --coverage -fprofile-update=atomic" CFLAGS="-O0 --coverage -fprofile-update=atomic" LDFLAGS="--coverage")
[ $coverage = 1 ] || coverage_flags=()
# The native tests, tools and VMM link the shared library, so a static one
# would only compile every library source a second time; on arm64 the
# programs are static (see above): the static library, and no shared one.
static=(--disable-static)
[[ $arch != aarch64 ]] || static=(--enable-static-binaries --disable-shared)
[ -f Makefile ] || "$src/configure" --enable-werror -q "${static[@]}" "${coverage_flags[@]}"
make -j"$jobs"
phase_done build
# A reused build must still run the scenarios asked for.
if [[ -n $scenarios ]]; then
  # (automake comments out a false conditional's lines in the Makefile)
  rule='$(ARM64_PLATFORM_TESTS:.test=.log): arm64-platform-prepare'
  [[ $arch != aarch64 ]] || rule='$(ARM64_HOST_TESTS:.test=.log): arm64-host-prepare'
  grep -qxF "$rule" Makefile || {
    echo "test.sh: $build was configured without the arm64 scenarios (--disable-tests or --disable-arm64-platform): reconfigure it, or point KVMMIO_BUILD at another directory" >&2
    exit 2
  }
fi
# A build directory configured earlier without --coverage gets the separate
# coverage build (scripts/coverage.sh's own).
in_build_coverage=0
grep -q '^CXXFLAGS = .*--coverage' Makefile && in_build_coverage=1
# Counts of this run only (the board rehearsal's root is not searched).
find . -path ./board-rehearsal -prune -o -name '*.gcda' -exec rm -f {} +

# make check's idle moments (one scenario left running, downloads, the
# initramfs's compression) are the background's while make check runs:
# nice 19 takes no CPU from its scenarios, whose guests run under TCG on
# the wall clock. After it, the background runs at the foreground's
# priority: every process of each tree (mmdebstrap, qemu-user, the cross
# build) is reniced, twice, for a child forked mid-walk; later children
# inherit it. If make check failed, neither is needed: both stop.
# (From /proc: the fresh root has no ps.)
pid_parents() {
  local f k v p
  for f in /proc/[0-9]*/status; do
    p=''
    while read -r k v; do
      case $k in
        Pid:) p=$v ;;
        PPid:) echo "$p $v"; break ;;
      esac
    done 2>/dev/null <"$f" || true
  done
}
renice_tree() {
  local pass p
  for pass in 1 2; do
    for p in $(pid_parents | awk -v root="$1" '
        { parent[$1] = $2 } END { for (p in parent) { q = p
          while (q != "" && q != root && q > 1) q = parent[q]
          if (q == root) print p } }'); do
      renice -n 0 -p "$p" >/dev/null 2>&1 || true
    done
    [ $pass = 2 ] || sleep 1
  done
}
background_after_check() {
  if [ $check_status -ne 0 ]; then
    stop_background
    [ -z "$board_prep_pid" ] || board_line="board rehearsal: not run: make check failed"
    [ -z "$board_prep_pid" ] || [ -n "$guest_line" ] || guest_line="guest disk: not run: make check failed"
    board_prep_pid=''
    return
  fi
  local p
  [ -z "$board_prep_pid" ] || { autogroup_nice "$board_prep_pid" 0; renice_tree "$board_prep_pid"; }
}

export GTEST_OUTPUT="json:$build/tests/results/"
rm -rf "$build/tests/results" "$build/tests/arm64/results"
if [ "$strict" = true ]; then
  export KVMMIO_REQUIRE_ARM64=1
fi
check_status=0
if ((${#only_tests[@]})); then
  # The scenarios use the VMM and the bench tools (their prepare rule
  # builds them), not the GoogleTest programs: check_PROGRAMS= keeps make
  # check from compiling those (on a board, most of the build's time).
  make -j"$jobs" check TESTS="${only_tests[*]}" check_PROGRAMS= || check_status=$?
else
  # make check's net-compare test runs the main job's driver on a small
  # matrix and checks each mode's counters. Where this script runs the
  # main job (step 8), that matrix is inside the main job's, judged by the
  # same rules (main.sh's verdict is net-compare.sh --check modes), so
  # make check leaves the test out: one L1 boot, and the host's, the
  # mirror's, vsock's and the microbenchmark's cells, fewer.
  check_vars=()
  if [ $main = 1 ] && [[ $arch != aarch64 ]] && grep -q '^tests/arm64/net-compare-gicv3.log:' Makefile; then
    # shellcheck disable=SC2016 # $(...) is make's
    platform_tests=$(printf 'print-platform-tests:\n\t@echo $(ARM64_PLATFORM_TESTS)\n' |
      make -s -f Makefile -f - print-platform-tests)
    check_vars=(ARM64_PLATFORM_TESTS="${platform_tests/tests\/arm64\/net-compare-gicv3.test/}")
    echo "test.sh: make check without tests/arm64/net-compare-gicv3.test: the main job (step 8) runs its cells and checks"
  fi
  make -j"$jobs" check "${check_vars[@]}" || check_status=$?
fi
# automake's summary of the failed tests (the build's top directory).
# With pipefail a missing file made this line end the script (set -e)
# before its phase table and closing line: tail alone, never fatal.
[ $check_status -eq 0 ] || tail -n 80 test-suite.log 2>/dev/null || true
unset GTEST_OUTPUT
phase_done "make check"
# automake's own count, every test script included (the closing tally
# counts GoogleTest cases only), for the closing lines.
check_line="make check: $( ( [ $check_status -eq 0 ] && echo passed ) || echo "FAILED (status $check_status)"):$(
  sed -n 's/^# \(TOTAL\|PASS\|SKIP\|FAIL\|ERROR\): *\([0-9]*\)/ \2 \L\1,/p' test-suite.log 2>/dev/null | paste -sd '' | sed 's/,$//')"

# The two background preparations get the whole machine from here on.
background_after_check

coverage_status=0 coverage_line=''
if [ $coverage = 1 ]; then
  if [ $in_build_coverage = 1 ]; then
    coverage_line=$("$src/scripts/coverage.sh" --counted "$build") || coverage_status=$?
  else
    coverage_line=$("$src/scripts/coverage.sh" "${build}-coverage") || coverage_status=$?
  fi
  [ $coverage_status -eq 0 ] || coverage_line="coverage: FAILED (status $coverage_status; scripts/coverage.sh's reason above): ${coverage_line#coverage: }"
  echo "$coverage_line"
  phase_done coverage
fi

dist_status=0 debs_line=''
if [ $debs = 1 ] && [ $check_status -eq 0 ]; then
  # Bounded: a hung build or installcheck must fail the run, not stall it.
  timeout --kill-after=30 "${KVMMIO_DEBS_TIMEOUT:-1500}" "$src/scripts/build-debs.sh" "$build" "$build/debs" --check ||
    dist_status=$?
  [ $dist_status -ne 124 ] || echo "test.sh: the Debian packages were not built in ${KVMMIO_DEBS_TIMEOUT:-1500} s" >&2
  phase_done debs
  if [ $dist_status -eq 0 ]; then
    debs_line="debs: passed (scripts/build-debs.sh --check: $(ls "$build/debs"/*.deb | sed 's|.*/||' | paste -sd ' '))"
  else
    debs_line="debs: FAILED (status $dist_status; scripts/build-debs.sh --check, log $build/debs/build.log)"
  fi
fi

fuzz_status=0 fuzz_line=''
if [ $fuzz = 1 ]; then
  "$src/scripts/fuzz.sh" "${KVMMIO_FUZZ_SECONDS:-45}" || fuzz_status=$?
  phase_done fuzz
  if [ $fuzz_status -eq 0 ]; then
    fuzz_line="fuzz: passed (${KVMMIO_FUZZ_SECONDS:-45} s a target, no finding)"
  else
    fuzz_line="fuzz: FAILED (status $fuzz_status; a finding's input is in ${KVMMIO_FUZZ_BUILD:-$src/build-fuzz}/artifacts)"
  fi
fi

# The README's main-job command, on this build (main.sh finds it up to
# date), in the machine's room beside the board's root.
main_status=0 main_line=''
if [ $main = 1 ]; then
  main_out=$build/main-quick
  main_report=$main_out/report
  if [ $check_status -ne 0 ]; then
    main_line="main job: not run: make check failed"
  elif [[ $arch != aarch64 && -e $build/arm64-platform/unavailable ]]; then
    main_line="main job: skipped: arm64 platform unavailable: $(cat "$build/arm64-platform/unavailable")"
    [ "$strict" != true ] || main_status=1
  elif [[ $arch == aarch64 && ! -c /dev/kvm ]]; then
    main_line="main job: skipped: no /dev/kvm on this arm64 host"
  else
    # The network cells of the host, the mirror mode, user-trap (the mode
    # every exit shows in) and the peer VMM's best path, qemu-pci, at both
    # MTUs, the mirror's guest to guest; the disk cells of the host, the
    # mirror with io_uring, trapped registers with the worker threads and
    # the shared folder; vsock (--quick's host and vsock-mirror). Make
    # check's net-compare matrix is inside it (make check leaves that test
    # out above), and main.sh's verdict checks each mode's counters as the
    # test did. The board-class L1s' net-modes check the other modes.
    main_flags=(--quick --configs host,vhost-irqfd-mirror,user-trap,qemu-pci --mtus 1500,9000
      --fio-configs host,blk-io_uring-mirror,blk-threads-trap,fs-mirror --g2g-configs vhost-irqfd-mirror)
    echo "test.sh: the README main-job command: scripts/main.sh ${main_flags[*]}"
    rm -rf "$main_out"
    # main.sh's own verdict: status 1 when a requested cell has no run that
    # succeeded, a phase failed or a counter the report needs is null; its
    # last line sums up (its FAILED lines above it say what).
    main_log=$build/main-quick.log
    KVMMIO_BUILD=$build "$src/scripts/main.sh" "${main_flags[@]}" \
      --out "$main_out" 2>&1 | tee "$main_log" || main_status=${PIPESTATUS[0]}
    # Its report: the table, the JSON (with its schema_version) and the
    # chart (a PNG starts with \211PNG); the peer VMM's qemu-pci cells beside
    # kvmmio's, with the counters read from outside it.
    missing=()
    for f in report.txt report.json throughput.png; do [ -s "$main_report/$f" ] || missing+=("$f"); done
    # report_has JQ: the report has a cell JQ selects (one jq run).
    report_has() { jq -e "[$1] | length > 0" "$main_report/report.json" >/dev/null; }
    if [ $main_status -ne 0 ] || [ ${#missing[@]} -ne 0 ]; then
      main_line="main job: FAILED (status $main_status: $(grep '^main.sh: ' "$main_log" | tail -n 1 || true);"
      main_line+=" missing in $main_report: ${missing[*]:-none}; $main_log)"
      [ $main_status -ne 0 ] || main_status=1
    elif [ "$(od -An -c -N4 "$main_report/throughput.png" | tr -d ' ')" != '211PNG' ]; then
      main_line="main job: FAILED ($main_report/throughput.png is not a PNG)"; main_status=1
    elif ! grep -q '"schema_version"' "$main_report/report.json"; then
      main_line="main job: FAILED ($main_report/report.json has no schema_version)"; main_status=1
    elif ! report_has '.iperf[], .pps[] | select(.config == "qemu-pci" and .runs_ok > 0 and (.outside_per_gb // .outside_per_mpkt) != null)'; then
      main_line="main job: FAILED (no qemu-pci cell with outside counters in $main_report/report.json)"; main_status=1
    elif ! report_has '.fio[] | select(.config == "blk-io_uring-mirror" and .runs_ok > 0 and .vmm_cpu_core_pct != null)'; then
      # The disk's half of a storage target (MB/s at a share of one core):
      # the VMM's CPU time read from outside it, io_uring's workers included.
      main_line="main job: FAILED (no blk-io_uring-mirror fio cell with vmm_cpu_core_pct in $main_report/report.json)"; main_status=1
    elif ! report_has '.vsock[]? | select(.config == "vsock-mirror" and .runs_ok > 0 and .ratio_to_host != null)'; then
      # Host and guest over AF_VSOCK through vhost-vsock, beside the host's own.
      main_line="main job: FAILED (no vsock-mirror cell with a ratio to the host's in $main_report/report.json)"; main_status=1
    elif ! report_has '.fio[] | select(.config == "fs-mirror" and .runs_ok > 0 and .ratio_to_host != null)'; then
      # The shared folder beside the host's file: virtiofsd's cells.
      main_line="main job: FAILED (no fs-mirror fio cell with a ratio to the host's in $main_report/report.json)"; main_status=1
    else
      main_line="main job: passed (scripts/main.sh ${main_flags[*]}; report in $main_report)"
    fi
  fi
  phase_done "main job"
fi

# The board rehearsal, which boots in the background once its image is
# made: in the test command (so in CI) the Debian 13 board on GICv2,
# running main.sh --quick with the host baseline and the mirror mode
# (step 8, the main job, runs the others nested), then test.sh --scenarios
# vmm-boot on its own KVM, then README's board quick start. The Debian 12 board (--board
# bookworm:3) is made and booted by the same script, but two boards beside
# the rest do not fit CI's budget (docs/arm64-platform.md, "CI's time
# budget"): it runs by hand. KVMMIO_BOARD_FLAGS replaces the flags, e.g.
# "--board bookworm:3 --board trixie:2" for both boards.
if [ -n "$board_prep_pid" ]; then
  # The guest's boot from its disk (step 9), once the board's guest phase
  # has made it (its line in the release's times.txt): L1 on GICv2,
  # beside the board's boot (make check of that test; its GoogleTest
  # results join the closing line's tally).
  guest_times=$build/board-rehearsal/trixie/times.txt
  if [[ $board_phases == *,guest,* && -z $guest_line ]]; then
    while kill -0 "$board_prep_pid" 2>/dev/null && ! grep -q '^guest ' "$guest_times" 2>/dev/null; do sleep 5; done
    if ! grep -q '^guest ' "$guest_times" 2>/dev/null; then
      guest_line="guest disk: not run: the board rehearsal ended before its guest was made"
    elif [ -e "$build/arm64-platform/unavailable" ]; then
      guest_line="guest disk: skipped: arm64 platform unavailable: $(cat "$build/arm64-platform/unavailable")"
      [ "$strict" != true ] || guest_status=1
    else
      echo "test.sh: the board's made guest from its disk, tests/arm64/guest-disk-gicv2.test: in the background, log $guest_boot_log"
      KVMMIO_GUEST=$guest_dir setsid make -j1 check \
        TESTS="tests/arm64/guest-disk-gicv2.test" \
        check_PROGRAMS= >"$guest_boot_log" 2>&1 &
      guest_boot_pid=$!
    fi
  fi
  wait "$board_prep_pid" || board_status=$?
  board_prep_pid=''
  # Its output here, after the rest's instead of inside it.
  cat "$board_log"
  phase_done "board rehearsal"
  if [ $board_status -eq 0 ]; then
    board_line="board rehearsal: passed ($board_flags): $(tr -s ' ' <"$build/board-rehearsal/times.txt" | paste -sd';' | sed 's/;/; /g')"
  else
    board_line="board rehearsal: FAILED (status $board_status; $board_log, $build/board-rehearsal)"
  fi
fi

if [ -n "$guest_boot_pid" ]; then
  wait "$guest_boot_pid" || guest_status=$?
  guest_boot_pid=''
  # make check's own lines for the test (its result, the live progress).
  grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS): |^== ' "$guest_boot_log" || true
  [ $guest_status -eq 0 ] || tail -n 60 "$build"/tests/arm64/guest-disk-gicv[23].log 2>/dev/null || true
  phase_done "guest disk"
  if [ $guest_status -eq 0 ]; then
    guest_line="guest disk: passed (the guest make-guest.sh made in the board's root, from its disk on GICv2; made $(grep -o 'done in .*' "$build/board-rehearsal/trixie/guest.log" | sed 's/^done //' | head -n 1))"
  else
    guest_line="guest disk: FAILED (status $guest_status; $guest_boot_log, $build/tests/arm64/guest-disk-gicv[23].log)"
  fi
fi

printf 'test.sh: phase times:\n'; printf '  %s\n' "${phase_times[@]}"
# The nested scenarios' own times (platform-test.sh's closing line in each
# test's log), longest first, each with its L1s' CPU time: where make
# check's time and the machine's work went.
if compgen -G "$build/tests/arm64/*.log" >/dev/null; then
  printf 'test.sh: nested scenarios, longest first (wall, CPU):\n'
  sed -n 's/^== \(.*\): exit status \([0-9]*\) after \([0-9]*\) s, \([0-9]*\) s of CPU.*/\3 \4 \1 (status \2)/p' \
    "$build"/tests/arm64/*.log | sort -rn | awk '{ w = $1; c = $2; sub(/^[0-9]+ [0-9]+ /, ""); printf "  %5d s %5d s  %s\n", w, c, $0 }'
  # A scenario run twice because L1's kernel locked up (platform-test.sh):
  # said here, so a pass after a retry is never silent.
  grep -h '^== RETRY: ' "$build"/tests/arm64/*.log | sed 's/^== /test.sh: /' || true
fi
echo "test.sh: $(budget_close)"
# Where the real-KVM coverage came from, then one closing line, alone, over
# every GoogleTest case that ran, native and arm64.
echo "$check_line"
[ -z "$coverage_line" ] || echo "$coverage_line"
[ -z "$debs_line" ] || echo "$debs_line"
[ -z "$fuzz_line" ] || echo "$fuzz_line"
[ -z "$main_line" ] || echo "$main_line"
[ -z "$board_line" ] || echo "$board_line"
[ -z "$guest_line" ] || echo "$guest_line"
"$src/scripts/kvm-coverage.sh" "$build"
# The failed cases by name (at most 20), so that a log kept only in part
# still says which.
"$src/scripts/summarize-gtest.sh" --failures "$build/tests/results" "$build/tests/arm64/results" |
  head -n 20 || true
"$src/scripts/summarize-gtest.sh" "$build/tests/results" "$build/tests/arm64/results"
[ $check_status -eq 0 ] && [ $coverage_status -eq 0 ] && [ $dist_status -eq 0 ] && [ $fuzz_status -eq 0 ] &&
  [ $main_status -eq 0 ] && [ $board_status -eq 0 ] && [ $guest_status -eq 0 ]
