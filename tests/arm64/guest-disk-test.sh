#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tests/arm64/guest-disk-test.sh GIC: tests/arm64/scenarios/guest-disk.sh in
# a nested L1 on vGICv<GIC> (3 or 2), the body of guest-disk-gicv3.test and
# guest-disk-gicv2.test. The guest scripts/make-guest.sh makes (Debian 12,
# systemd) boots under kvmmio from its --disk to a login prompt, root logs
# in with its password, its network answers, iperf3 and fio run in it, it
# writes a file, syncs and reboots (kvmmio exits 3); then, here on the
# host, e2fsck -fn finds its disk clean and the file holding what the
# guest wrote (docs/usage.md, "Your first guest").
# Not one of make check's tests: making the guest needs root and Debian's
# archive, and takes minutes. scripts/test.sh (the README's test command,
# so CI) runs both as a step of its own, after make check; by hand, run
# them with `scripts/test.sh --scenarios guest-disk`, or from a build tree
# with `make check TESTS="tests/arm64/guest-disk-gicv3.test
# tests/arm64/guest-disk-gicv2.test"`.
# The guest is KVMMIO_GUEST (a make-guest.sh output directory), default
# BUILDDIR/guest, made there first if it has no debian.img (under a lock:
# two tests started at once make it once), with root's password
# KVMMIO_GUEST_PASSWORD, default kvmmio-guest-test (make-guest.sh locks
# root without one; a fixed test password, no secret: the guest runs
# nested, on its tap alone), given through a pipe (--root-password-file
# /dev/stdin), and the scenario logs in with it: a guest made beforehand
# (scripts/test.sh makes it with the same default) must have that
# password, and with --ssh-key GUEST-ssh-key.pub (a key pair beside the
# guest's directory, made with ssh-keygen when missing; the test's own, no
# secret either), whose private half the scenario logs in with over ssh.
# L1 gets two more disks
# (scripts/arm64/run.sh --disk): a tar of Image, initrd.img and the
# private key (ssh-key), and a copy, 512 MiB larger,
# of debian.img (the guest writes to its disk; the made one stays as it
# was). KVMMIO_ARM64_TIMEOUT bounds the L1 boot (default 1800 s);
# KVMMIO_GUEST_CONSOLE, KVMMIO_GUEST_PASSWORD, KVMMIO_GUEST_CPUS,
# KVMMIO_GUEST_MEM and KVMMIO_GUEST_END reach the scenario (its header says
# what they do). Needs e2fsck and debugfs (e2fsprogs) and jq on the host.
set -eu
gic=${1:?usage: guest-disk-test.sh GIC (3 or 2)}
case $gic in 2 | 3) ;; *) echo "guest-disk-test.sh: GIC $gic: want 3 or 2" >&2; exit 99 ;; esac
platform=$KVMMIO_BUILDDIR/arm64-platform
test=$KVMMIO_SRCDIR/tests/arm64/platform-test.sh
# Without the platform, platform-test.sh says why and skips (before a
# guest is made for nothing).
if [ -e "$platform/unavailable" ] || [ ! -s "$platform/l1-initramfs.cpio.gz" ]; then
  exec "$test" guest-disk "$gic"
fi
guest=${KVMMIO_GUEST:-$KVMMIO_BUILDDIR/guest}
guest=${guest%/}
KVMMIO_GUEST_PASSWORD=${KVMMIO_GUEST_PASSWORD:-kvmmio-guest-test}
if [ ! -s "$guest-ssh-key" ] && [ -s "$guest/debian.img" ]; then
  echo "FAIL: the guest in $guest has no key pair beside it ($guest-ssh-key): make it again (remove $guest)"
  exit 1
fi
if [ ! -s "$guest/debian.img" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: no guest in $guest, and making one (scripts/make-guest.sh) needs root"
    exit 77
  fi
  # make-guest.sh takes an output directory only root can write to.
  (umask 022 && mkdir -p "$guest")
  # One make at a time; the second test finds the guest the first made.
  # shellcheck disable=SC2016 # the inner sh expands them
  printf '%s\n' "$KVMMIO_GUEST_PASSWORD" | flock "$guest/.make-lock" sh -c \
    '[ -s "$1/debian.img" ] || { "$2/scripts/guest-test-key.sh" "$1-ssh-key" &&
       "$2/scripts/make-guest.sh" --out "$1" --root-password-file /dev/stdin --ssh-key "$1-ssh-key.pub"; }' \
    sh "$guest" "$KVMMIO_SRCDIR" || exit 99
fi
work=$KVMMIO_BUILDDIR/tests/arm64/guest-disk-gicv$gic-disks
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cp "$guest-ssh-key" "$work/ssh-key"
tar -cf "$work/boot.tar" -C "$guest" Image initrd.img -C "$work" ssh-key
cp --sparse=always "$guest/debian.img" "$work/debian.img"
# 512 MiB more than the image was made with, as a user enlarges it: the
# guest's root grows into it at boot (make-guest.sh's x-systemd.growfs).
truncate -s +512M "$work/debian.img"
export KVMMIO_ARM64_TIMEOUT="${KVMMIO_ARM64_TIMEOUT:-1800}"
set -- --disk "$work/boot.tar" --disk "$work/debian.img"
for v in KVMMIO_GUEST_CONSOLE KVMMIO_GUEST_PASSWORD KVMMIO_GUEST_CPUS KVMMIO_GUEST_MEM KVMMIO_GUEST_END; do
  eval "val=\${$v:-}"
  [ -z "$val" ] || set -- "$@" --env "$v=$val"
done
status=0
"$test" guest-disk "$gic" "$@" || status=$?

# The write/sync/reboot/fsck cycle's second half, on the disk L1 gave
# kvmmio (QEMU has closed it): e2fsck finds the file system clean, and
# the file the guest wrote before its reboot holds the bytes it reported.
# One more GoogleTest-shaped case beside the scenario's, so the tally
# counts it.
results=$KVMMIO_BUILDDIR/tests/arm64/results/guest-disk-gicv$gic
if [ -s "$results/cycle.md5" ]; then
  msg=''
  fsck_status=0
  have=''
  if ! command -v e2fsck >/dev/null || ! command -v debugfs >/dev/null; then
    msg="no e2fsck or debugfs on this host to check the disk: apt-get install e2fsprogs"
    : >"$results/fsck.txt"
  else
    e2fsck -fn "$work/debian.img" >"$results/fsck.txt" 2>&1 || fsck_status=$?
    have=$(debugfs -R 'cat /root/kvmmio-cycle' "$work/debian.img" 2>/dev/null | md5sum | cut -d' ' -f1)
  fi
  if [ -n "$msg" ]; then :
  elif [ $fsck_status -ne 0 ]; then
    msg="e2fsck -fn after the guest's reboot: status $fsck_status: $(tail -n 3 "$results/fsck.txt" | tr '\n"' ' _')"
  elif [ "$have" != "$(cat "$results/cycle.md5")" ]; then
    msg="/root/kvmmio-cycle on the disk has md5 $have, the guest wrote $(cat "$results/cycle.md5")"
  fi
  echo "guest-disk-gicv$gic: e2fsck -fn: $(tail -n 1 "$results/fsck.txt"); /root/kvmmio-cycle md5 $have"
  # GoogleTest's shape; a failed case carries its message in failures[].
  jq -n --arg m "$msg" --arg s "guest-disk.gicv$gic" '(if $m == "" then 0 else 1 end) as $n
    | {tests: 1, failures: $n, name: "AllTests", testsuites: [{name: $s, tests: 1, failures: $n,
       testsuite: [{name: "fsck-after-reboot", classname: $s, status: "RUN", result: "COMPLETED"}
                   + (if $n == 0 then {} else {failures: [{failure: $m}]} end)]}]}' >"$results/fsck.json"
  if [ -n "$msg" ]; then
    echo "FAIL: guest-disk-gicv$gic: $msg"
    [ $status -ne 0 ] || status=1
  fi
elif [ $status -eq 0 ] && [ "${KVMMIO_GUEST_END:-reboot}" = reboot ]; then
  echo "FAIL: guest-disk-gicv$gic: the scenario passed but left no cycle.md5 in $results"
  status=1
fi
exit $status
