#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/make-guest.sh: a bootable Debian 12 (bookworm) arm64 guest for
# kvmmio, made from Debian's packages only, on an arm64 board or on an
# x86-64 machine (for the nested platform, docs/arm64-platform.md). It
# writes three files into the output directory:
#   Image       Debian's arm64 kernel (linux-image-arm64's vmlinuz, an
#               uncompressed arm64 Image)
#   initrd.img  its initramfs (initramfs-tools, MODULES=list): Debian's
#               kernel has virtio_mmio, virtio_blk, virtio_console and ext4
#               as modules, so it cannot mount a root on kvmmio's disk, nor
#               open hvc0, without them
#   debian.img  a raw ext4 image of the root file system (sparse): systemd,
#               a serial login on the console, iproute2, iperf3, fio,
#               ping, eth0 by DHCP (systemd-networkd, names through
#               systemd-resolved) or a static address, an ssh server
#               with --ssh-key, the root grown to the disk at each boot
# and prints the kvmmio command that boots it. docs/usage.md, "Your first
# guest", has the steps, the login and the network, with measured times.
#
# Root's password is locked (no console login) unless --root-password-file
# (or --root-password) gives one; --ssh-key puts a public key in root's
# authorized_keys and installs openssh-server (which lets root in with a
# key only).
#
# Owns the output directory's three files (and make-guest.log, when
# mmdebstrap fails) and its work directory, OUT/.make-guest.XXXXXX
# (mktemp -d: mode 0700, removed at the end); changes nothing else on the
# host but what apt-get installs when a tool is missing (mmdebstrap,
# e2fsprogs). It runs as root, so it trusts OUT only as far as root owns
# it: OUT (made 0755 if missing) must not be a symlink, must be root's
# and writable by nobody else, and no directory above it may be writable
# by others without the sticky bit; everything is made in the work
# directory, hooks included, and each result is renamed onto its name in
# OUT at the end (rename(2) replaces whatever entry is there: a symlink
# or hard link planted at the name is never written through).
# The root is made by scripts/lib/debian-root.sh (mmdebstrap; on a host
# that is not arm64 the maintainer scripts run under qemu-user, registered
# in a private user namespace: the host's binfmt_misc is never touched).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/debian-root.sh
source "$src/scripts/lib/debian-root.sh"

say() { printf 'make-guest: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

usage() {
    cat <<'EOF'
Usage: scripts/make-guest.sh [options]     (as root, or with sudo)
Makes a Debian 12 arm64 guest for kvmmio: OUT/Image, OUT/initrd.img and
OUT/debian.img (a raw ext4 root file system), then prints the kvmmio
command that boots it.
  --out DIR            output directory (default ./guest)
  --size SIZE          debian.img's size, sparse: a whole number with K, M,
                       G or T (binary; a plain number counts MiB, as kvmmio's
                       sizes do); default 2G. At least the root plus 15%
                       (the root is ~0.7 GiB)
  --hostname NAME      the guest's host name (default kvmmio-guest)
  --root-password-file FILE  root's password on the console: FILE's first
                       line (/dev/stdin reads it from a pipe). Without it,
                       or --root-password, root's password is locked ('*'
                       in /etc/shadow): no console login
  --root-password PASS the same from the command line (PASS shows in ps and
                       in the shell's history: prefer the file)
  --ssh-key FILE       public key(s) for root: FILE becomes the guest's
                       /root/.ssh/authorized_keys, and openssh-server is
                       installed (it lets root in with a key, never a
                       password)
  --ip dhcp|ADDR/LEN|none  eth0's address (systemd-networkd): dhcp (the
                       default: address, route and name servers from a DHCP
                       server, e.g. kvmmio network create's), a static
                       ADDR/LEN (e.g. 10.0.0.2/24), or none (eth0 left
                       unconfigured)
  --gateway ADDR       with a static --ip: eth0's default route (default
                       none)
  --dns ADDR           the guest's name server, a fixed /etc/resolv.conf
                       (default: with dhcp, the DHCP server's, through
                       systemd-resolved; with a static --ip, none)
  --packages LIST      more Debian packages for the root, comma-separated
                       (e.g. openssh-server,less)
  --force              replace an existing OUT/debian.img (whatever it holds)
  -h, --help           this text
Needs root (mmdebstrap, chroot, namespaces), ~3 GB free in OUT while it
runs, and Debian's archive (the host's apt sources name the mirror). OUT
must be root's, writable by root only, and not a symlink (a missing OUT is
made, mode 0755).
Installs mmdebstrap and e2fsprogs with apt-get if they are missing.
EOF
}

out=guest size=2G hostname=kvmmio-guest password='' password_given=0 password_file='' ssh_key_file=''
ip=dhcp gateway='' dns='' packages='' force=0
while (($#)); do
    case $1 in
    --out) out=${2:?--out needs a DIR}; shift 2 ;;
    --size) size=${2:?--size needs a SIZE, e.g. 4G}; shift 2 ;;
    --hostname) hostname=${2:?--hostname needs a NAME}; shift 2 ;;
    --root-password) password=${2?--root-password needs a PASSWORD}; password_given=1; shift 2 ;;
    --root-password-file) password_file=${2:?--root-password-file needs a FILE}; shift 2 ;;
    --ssh-key) ssh_key_file=${2:?--ssh-key needs a FILE (a public key, e.g. ~/.ssh/id_ed25519.pub)}; shift 2 ;;
    --ip) ip=${2:?--ip needs dhcp, ADDR/LEN or none}; shift 2 ;;
    --gateway) gateway=${2:?--gateway needs an ADDR}; shift 2 ;;
    --dns) dns=${2:?--dns needs an ADDR}; shift 2 ;;
    --packages) packages=${2:?--packages needs a LIST}; shift 2 ;;
    --force) force=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
    esac
done

# --- the options, checked before anything is made -------------------------------
[[ $size =~ ^([1-9][0-9]*)([KkMmGgTt]?)$ ]] || die "--size: want a whole number with K, M, G or T, e.g. 4G, not '$size'"
case ${BASH_REMATCH[2]} in
[Kk]) size_mib=$((BASH_REMATCH[1] / 1024)) ;;
'' | [Mm]) size_mib=${BASH_REMATCH[1]} ;;
[Gg]) size_mib=$((BASH_REMATCH[1] * 1024)) ;;
[Tt]) size_mib=$((BASH_REMATCH[1] * 1024 * 1024)) ;;
esac
((size_mib >= 1024)) || die "--size $size: too small for the root (~0.7 GiB, and room to work): give at least 1G"
[[ $hostname =~ ^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$ ]] ||
    die "--hostname: letters, digits and - (not first or last), at most 63: not '$hostname'"
ipv4='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
ipv4="$ipv4\.$ipv4\.$ipv4\.$ipv4"
if [[ $ip != none && $ip != dhcp ]]; then
    [[ $ip =~ ^$ipv4/([0-9]|[12][0-9]|3[0-2])$ ]] || die "--ip: want dhcp, ADDR/LEN (e.g. 10.0.0.2/24) or none: not '$ip'"
fi
[[ -z $gateway || $gateway =~ ^$ipv4$ ]] || die "--gateway: not an IPv4 address: '$gateway'"
[[ -z $gateway || ( $ip != none && $ip != dhcp ) ]] ||
    die "--gateway goes with a static --ip ADDR/LEN (with --ip $ip, eth0's route is the DHCP server's, or none)"
[[ -z $dns || $dns =~ ^$ipv4$ ]] || die "--dns: not an IPv4 address: '$dns'"
[[ -z $packages || $packages =~ ^[a-z0-9][a-z0-9+.-]*(,[a-z0-9][a-z0-9+.-]*)*$ ]] ||
    die "--packages: want Debian package names, comma-separated: not '$packages'"
((!password_given)) || [[ -z $password_file ]] || die "--root-password and --root-password-file: give one"
((!password_given)) || [[ -n $password ]] ||
    die "--root-password: an empty password; leave the option out for a locked root, or give one"
if [[ -n $password_file ]]; then
    [[ -r $password_file ]] || die "--root-password-file: cannot read $password_file"
    IFS= read -r password <"$password_file" || [[ -n $password ]] ||
        die "--root-password-file: $password_file has no password on its first line"
    [[ -n $password ]] || die "--root-password-file: $password_file's first line is empty: put the password there"
fi
[[ $password != *$'\n'* ]] || die "--root-password: a password of one line"
ssh_key=''
if [[ -n $ssh_key_file ]]; then
    [[ -r $ssh_key_file && -f $ssh_key_file ]] || die "--ssh-key: cannot read the file $ssh_key_file"
    ssh_key=$(<"$ssh_key_file")
    [[ $ssh_key != *"PRIVATE KEY"* ]] ||
        die "--ssh-key: $ssh_key_file is a private key: give the public one (e.g. ${ssh_key_file%.pub}.pub)"
    grep -Eq '(^|[[:space:]])(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp[0-9]+|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+=*' <<<"$ssh_key" ||
        die "--ssh-key: no public key in $ssh_key_file (want authorized_keys lines, e.g. 'ssh-ed25519 AAAA... user@host')"
fi

# --- the host: root, tools, space -------------------------------------------------
[[ $EUID -eq 0 ]] || die "needs root (mmdebstrap, chroot, namespaces): run it as root or with sudo"
# Tools from Debian's packages, installed with apt-get where missing (the
# host's own archive), as scripts/fresh-root.sh installs mmdebstrap.
missing=()
for t in mmdebstrap:mmdebstrap mkfs.ext4:e2fsprogs unshare:util-linux dpkg-deb:dpkg; do
    command -v "${t%%:*}" >/dev/null || missing+=("${t#*:}")
done
if ((${#missing[@]})); then
    command -v apt-get >/dev/null ||
        die "missing ${missing[*]}, and no apt-get to install them: this needs a Debian (or Debian-based) host"
    say "installing on the host: ${missing[*]}"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } >&2 ||
        die "apt-get could not install ${missing[*]}: run 'apt-get update && apt-get install ${missing[*]}' and see what it says"
fi
command -v apt-get >/dev/null || die "no apt-get: this needs a Debian (or Debian-based) host"
why=$(debian_root_unfit) || die "$why"

# --- the output directory: root's, and root's alone ------------------------------
# This runs as root and writes into OUT: an OUT (or a directory above it)
# that someone else can write to would let them plant a symlink where a
# result goes, or swap the directory for their own while this runs.
# check_dirs_from DIR: DIR (a physical path) and each directory above it:
# one that others may write to without the sticky bit (other-writable, or
# group-writable for a group other than root's) would let them rename OUT
# away and put their own in its place. /tmp (sticky) is fine.
check_dirs_from() {
    local d=$1 dperm dgid dmode
    while :; do
        read -r dperm dgid < <(stat -c '%a %g' -- "$d") || die "cannot stat $d"
        dmode=$((8#$dperm))
        if ((!(dmode & 8#1000) && ((dmode & 8#002) || ((dmode & 8#020) && dgid != 0)))); then
            die "--out $out is inside $d, which others can write to (mode $dperm, no sticky bit): choose a directory elsewhere, or 'chmod go-w $d'"
        fi
        [[ $d != / ]] || break
        d=$(dirname -- "$d")
    done
}
# Trailing slashes off: "DIR/" would follow a symlink at DIR.
[[ $out =~ ^(.*[^/])/+$ ]] && out=${BASH_REMATCH[1]}
[[ ! -L $out ]] || die "--out $out is a symlink: give the directory it points to ($(readlink -f -- "$out" 2>/dev/null || echo '?')), or a new path"
[[ ! -e $out || -d $out ]] || die "--out $out exists and is not a directory: choose another --out"
if [[ ! -e $out ]]; then
    # The nearest directory that exists, checked before anything is made.
    p=$(dirname -- "$out")
    while [[ ! -e $p ]]; do p=$(dirname -- "$p"); done
    check_dirs_from "$(cd -P -- "$p" && pwd -P)"
    { mkdir -p -- "$(dirname -- "$out")" && mkdir -m 0755 -- "$out"; } ||
        die "cannot make the output directory $out"
fi
# Again after mkdir: a path made meanwhile by someone else is not ours.
[[ ! -L $out && -d $out ]] || die "--out $out: not a directory, or a symlink: choose another --out"
owner=$(stat -c %u -- "$out")
[[ $owner == "$EUID" ]] ||
    die "--out $out belongs to uid $owner ($(stat -c %U -- "$out")), not to root: choose a directory root owns (or a new path; it is made), or 'chown root: $out' if it is yours to give"
perm=$(stat -c %a -- "$out")
((!(8#$perm & 8#022))) ||
    die "--out $out is writable by group or others (mode $perm): 'chmod go-w $out', or choose a directory only root can write to"
out=$(cd -P -- "$out" && pwd -P) || die "cannot enter $out"
check_dirs_from "$(dirname -- "$out")"
img=$out/debian.img
[[ ! -e $img && ! -L $img ]] || ((force)) ||
    die "$img exists (a guest's disk, maybe with data): remove it, choose another --out, or give --force"
# Space: the root while it is made (its packages, ~0.3 GB, are downloaded
# into it first) and then the image, on the same file system.
need_mib=3072
free_mib=$(df -Pm "$out" | awk 'NR == 2 { print $4 }')
((free_mib >= need_mib)) ||
    die "no space: $out has ${free_mib} MiB free, making the guest needs ~${need_mib} MiB (the root, then its image): free some, or choose --out elsewhere"

# The work directory: fresh, root's, mode 0700 (mktemp -d), in OUT (the
# same file system: the results are renamed, not copied, into OUT, and the
# space checked above is the space used). Everything is made in it, the
# customize hook and the password file included; nothing under OUT but it
# is read or run. apt's downloads then run as root, not as _apt (which
# cannot enter it): mmdebstrap says so in its log ("Download is performed
# unsandboxed as root"); apt checks the packages' signatures either way.
for stale in "$out"/.make-guest "$out"/.make-guest.??????; do
    [[ ! -e $stale ]] ||
        say "note: $stale is an earlier run's work directory (interrupted, or running now): 'rm -rf --one-file-system $stale' once no make-guest.sh runs on $out"
done
work=$(mktemp -d -- "$out/.make-guest.XXXXXX") || die "cannot make a work directory in $out"
keep_log=0
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    if ((keep_log)) && [[ -s $work/root.log ]]; then
        mv -f -T -- "$work/root.log" "$out/make-guest.log"
        say "mmdebstrap's log: $out/make-guest.log"
    fi
    [[ ! -e $work ]] || rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work/hook/overlay"
root=$work/root
export DEBIAN_ROOT_QEMU_USER=$work/qemu-user
start=$SECONDS

# --- the guest's own settings: a customize hook -------------------------------------
# Files in hook/overlay are copied into the root before its initramfs is
# made. The hook runs on the host, in mmdebstrap's namespace; the commands
# it runs in the root (chroot) are arm64 ones.
o=$work/hook/overlay
mkdir -p "$o/etc/systemd/network" "$o/etc/initramfs-tools/conf.d"
# The root's file system type for the initramfs: initramfs-tools would
# otherwise probe the device /etc/fstab names, which here is the host's
# /dev/vda or nothing, and leave e2fsck out ("Couldn't identify type of
# root file system for fsck hook"). With e2fsck in, the root is checked
# before it is mounted.
echo FSTYPE=ext4 >"$o/etc/initramfs-tools/conf.d/kvmmio-guest-fstype"
# console=hvc0 (--console virtio): an init-top script that starts
# systemd-udevd again where the udev script's did not survive a /init
# without standard streams (its comment says more).
mkdir -p "$o/etc/initramfs-tools/scripts/init-top"
cat >"$o/etc/initramfs-tools/scripts/init-top/kvmmio-udev" <<'UDEV'
#!/bin/sh
# scripts/make-guest.sh (kvmmio): systemd-udevd again, if it is not running.
# With console=hvc0 the kernel has no console yet when it starts /init
# (virtio_console is a module, loaded later), so /init and what it starts
# have no stdin, stdout or stderr. The udev script's systemd-udevd did not
# survive that (no udevd process left), so its init-bottom script failed
# (udevadm control --exit), /dev was never moved to the root and run-init
# could not open the console: an "(initramfs)" prompt on hvc0. Started here
# with its standard streams on /dev/null, it runs.
PREREQ="udev"
prereqs() { echo "$PREREQ"; }
case $1 in
prereqs) prereqs; exit 0 ;;
esac
udevadm control --ping >/dev/null 2>&1 && exit 0
exec </dev/null >/dev/null 2>&1
/lib/systemd/systemd-udevd --daemon --resolve-names=never
udevadm trigger --type=subsystems --action=add
udevadm trigger --type=devices --action=add
udevadm settle || true
UDEV
chmod +x "$o/etc/initramfs-tools/scripts/init-top/kvmmio-udev"
echo "$hostname" >"$o/etc/hostname"
cat >"$o/etc/hosts" <<EOF
127.0.0.1	localhost
127.0.1.1	$hostname
::1		localhost ip6-localhost ip6-loopback
ff02::1		ip6-allnodes
ff02::2		ip6-allrouters
EOF
# x-systemd.growfs: systemd-growfs grows the root's ext4 to the whole disk
# at each boot, so a debian.img made larger on the host (truncate -s 8G,
# with the guest off) is the guest's room at its next boot.
cat >"$o/etc/fstab" <<'EOF'
# The root: kvmmio's first --disk (virtio-blk), the guest's /dev/vda.
/dev/vda	/	ext4	rw,errors=remount-ro,x-systemd.growfs	0	1
EOF
if [[ $ip != none ]]; then
    {
        echo "# eth0: kvmmio's first --net (virtio-net) (scripts/make-guest.sh --ip $ip)"
        echo "[Match]"
        echo "Name=eth0"
        echo
        echo "[Network]"
        if [[ $ip == dhcp ]]; then
            echo "DHCP=ipv4"
        else
            echo "Address=$ip"
            [[ -z $gateway ]] || echo "Gateway=$gateway"
        fi
        echo "LinkLocalAddressing=no"
    } >"$o/etc/systemd/network/20-eth0.network"
fi
# The host's resolv.conf, which mmdebstrap copies in, means nothing in the
# guest. With DHCP and no --dns, systemd-resolved's stub is the guest's
# resolver and asks the name servers the DHCP server named (the customize
# hook links /etc/resolv.conf to it).
if [[ -n $dns ]]; then
    echo "nameserver $dns" >"$o/etc/resolv.conf"
elif [[ $ip != dhcp ]]; then
    echo "# no name server (scripts/make-guest.sh --dns ADDR sets one)" >"$o/etc/resolv.conf"
else
    : >"$work/hook/resolved"
fi
[[ -z $password ]] || (umask 077 && printf 'root:%s\n' "$password" >"$work/hook/password")
[[ -z $ssh_key ]] || (umask 077 && printf '%s\n' "$ssh_key" >"$work/hook/authorized_keys")
cat >"$work/hook/customize" <<'EOF'
#!/bin/sh
# make-guest.sh's customize hook (mmdebstrap): $1 is the guest's root.
set -eu
d=$(dirname "$0")
cp -a "$d/overlay/." "$1/"
if [ -e "$1/etc/systemd/network/20-eth0.network" ]; then
    chroot "$1" systemctl enable --quiet systemd-networkd.service
fi
if [ -e "$d/resolved" ]; then
    chroot "$1" systemctl enable --quiet systemd-resolved.service
    ln -sfn ../run/systemd/resolve/stub-resolv.conf "$1/etc/resolv.conf"
fi
# Root's password: the one given, else locked: '*' in /etc/shadow, which
# no password hashes to (no console login). '*' rather than passwd -l's
# '!': an sshd without PAM takes a '!' for a locked account and refuses
# root's key too.
if [ -s "$d/password" ]; then
    chroot "$1" chpasswd <"$d/password"
else
    chroot "$1" usermod --password '*' root
fi
if [ -s "$d/authorized_keys" ]; then
    install -d -o 0 -g 0 -m 0700 "$1/root/.ssh"
    install -o 0 -g 0 -m 0600 "$d/authorized_keys" "$1/root/.ssh/authorized_keys"
fi
EOF
chmod +x "$work/hook/customize"

# --- the root -------------------------------------------------------------------
# systemd as init (with udev: the disk's device unit; dbus and
# libpam-systemd: logind for the console's login session), the kernel
# and its initramfs, the tools the guest is for, e2fsprogs (fsck).
pkgs=systemd-sysv,udev,dbus,libpam-systemd,linux-image-arm64,initramfs-tools,kmod
pkgs+=,e2fsprogs,procps,iproute2,iputils-ping,iperf3,fio
# DHCP's names: systemd-resolved (its own package since Debian 12).
[[ $ip != dhcp || -n $dns ]] || pkgs+=,systemd-resolved
[[ -z $ssh_key ]] || pkgs+=,openssh-server
[[ -z $packages ]] || pkgs+=,$packages
keep_log=1
say "making the root in $root (several minutes; mmdebstrap's log on failure: $out/make-guest.log)"
# virtio_console: hvc0 (--console virtio) must exist when the initramfs
# hands the console to systemd.
debian_root_make "$work" "$root" bookworm kvmmio-guest virtio_mmio,virtio_blk,virtio_console,ext4 \
    "$pkgs" "$work/root.log" --customize-hook="$work/hook/customize" ||
    die "mmdebstrap failed (see $out/make-guest.log)"
root_secs=$((SECONDS - start))

kver=$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
[[ -n $kver && -s $root/boot/vmlinuz-$kver && -s $root/boot/initrd.img-$kver ]] ||
    die "no kernel and initramfs in the root's /boot (linux-image-arm64 did not install?): see $out/make-guest.log"
used_mib=$(du -sm "$root" | cut -f1)
min_mib=$((used_mib * 115 / 100 + 64))
((size_mib >= min_mib)) || die "--size $size: the root takes ${used_mib} MiB; give at least ${min_mib}M"
keep_log=0

# --- the output -----------------------------------------------------------------
# Made in the work directory, then each renamed onto its name in OUT
# (mv -T: rename(2), which replaces the entry there, a symlink included,
# never writing through it). The kernel and initramfs stay in the image's
# /boot as well (the guest's own apt updates them there).
cp "$root/boot/vmlinuz-$kver" "$work/Image"
cp "$root/boot/initrd.img-$kver" "$work/initrd.img"
cmp -s -n 4 -i 56:0 "$work/Image" <(printf 'ARM\x64') ||
    die "$root/boot/vmlinuz-$kver is not an uncompressed arm64 Image (no ARM\\x64 magic at byte 56)"
# mkfs.ext4 -d copies the root into the new file system: no loop mount; the
# file is sparse (only what the root fills is written).
mkfs.ext4 -q -F -L debian -d "$root" "$work/debian.img" "${size_mib}M" >/dev/null ||
    die "mkfs.ext4 -d could not make debian.img (space: $(df -Ph "$out" | awk 'NR == 2 { print $4 }') free)"
[[ ! -e $img && ! -L $img ]] || ((force)) ||
    die "$img appeared while the guest was made: remove it, or give --force, and run again"
for f in Image initrd.img debian.img; do
    mv -f -T -- "$work/$f" "$out/$f" || die "cannot move $f into $out"
done
secs=$((SECONDS - start))

human() { numfmt --to=iec-i --suffix=B "$1"; }
say "done in $((secs / 60)) min $((secs % 60)) s (the root $((root_secs / 60)) min $((root_secs % 60)) s); kernel $kver"
say "  $out/Image       $(human "$(stat -c %s "$out/Image")")"
say "  $out/initrd.img  $(human "$(stat -c %s "$out/initrd.img")")"
say "  $out/debian.img  $(human "$(stat -c %s "$img")") ($(human $(($(stat -c %b "$img") * 512))) on disk; the root ${used_mib} MiB)"
if [[ -n $password ]]; then
    login="Log in on the console as root, with the password given."
else
    login="Root's password is locked: no console login (make it again with --root-password-file FILE for one)."
fi
if [[ -n $ssh_key ]]; then
    login+=" Root logs in over ssh with the key given (ssh root@ADDRESS)."
fi
net='' eth0=''
if [[ $ip == dhcp ]]; then
    net=" --net tap=kvmtap0,bridge=kvmnat0"
    eth0=" eth0 takes its address by DHCP: kvmmio network list shows the leases."
    cat <<EOF

The guest's network (once, as root): a NAT network with a DHCP server,
the bridge kvmnat0 on 192.168.123.1/24 (docs/usage.md, "NAT networks"):

  kvmmio network create
EOF
elif [[ $ip != none ]]; then
    # The host's end of the tap: the guest's network with .1 (or .2 where
    # the guest is .1). A tap made beforehand keeps its address; kvmmio
    # attaches to it and brings it up (docs/virtio-net.md).
    host_ip=${ip%/*}
    host_ip=${host_ip%.*}.1
    [[ $host_ip != "${ip%/*}" ]] || host_ip=${host_ip%.*}.2
    net=" --net tap=kvmtap0"
    eth0=" The guest's eth0 is $ip${gateway:+, gateway $gateway}: ping ${ip%/*}."
    cat <<EOF

The host's end of the guest's network (once, as root):

  ip tuntap add kvmtap0 mode tap vnet_hdr
  ip addr add $host_ip/${ip#*/} dev kvmtap0
EOF
fi
cat <<EOF

Boot it (on an arm64 host with /dev/kvm, as root; the console is this
terminal, Ctrl-A x stops the VM):

  kvmmio run --kernel $out/Image --initrd $out/initrd.img \\
      --disk $out/debian.img --cpus 2 --mem 1G \\
      --cmdline "root=/dev/vda rw"$net

$login$eth0
With --console virtio the console is hvc0 (kvmmio's default console= follows it).
docs/usage.md, "Your first guest", says more.
EOF
