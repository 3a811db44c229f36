#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# nat: two L2 guests on a NAT network of L1's (`kvmmio network create`),
# the way a board on Wi-Fi gives its guests a way out:
#   network   kvmmio network create: the bridge kvmnat0, its nftables
#             masquerade, dnsmasq for DHCP and DNS
#   guests    guest a, then guest b (vhost-net + irqfd + the register
#             mirror, --net tap=...,bridge=kvmnat0) take addresses by DHCP,
#             resolve outside.kvmmio.test through the gateway (L1's
#             /etc/hosts, through dnsmasq), send bytes to an "outside"
#             network namespace of L1's on documentation-range addresses
#             (203.0.113.0/24, RFC 5737: nothing leaves L1), whose own
#             counters see them from L1's address only (masqueraded), and b
#             pings a; both kvmmio exit 0
#   delete    kvmmio network delete: no bridge, table or dnsmasq left
# L2's side: tests/arm64/l2-hooks/50-kvmmio-l2test.sh (kvmmio.l2test=nat).
# shellcheck source=tests/arm64/lib.sh
. "${KVMMIO_DIR:-/kvmmio}/lib.sh"
# shellcheck source=bench/net-modes.sh
. "$KVMMIO_DIR/bin/net-modes.sh"
scenario_name=nat
require_dev /dev/kvm /dev/vhost-net /dev/net/tun
R=$KVMMIO_RESULTS
SPEC="$(net_mode_spec vhost-irqfd-mirror)"
# iproute2's ip, by path: busybox's has no netns, and busybox's shell runs
# its own applet for a bare `ip` whatever PATH says.
IP=/usr/sbin/ip
mkdir -p /run/netns
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }

# dnsmasq drops to its own user and group, which L1's initramfs lacks.
nat_prepare_l1
echo "203.0.113.2 outside.kvmmio.test" >>/etc/hosts

step "network: kvmmio network create (bridge, masquerade, dnsmasq)"
t0=$(uptime_s) msg=''
$IP netns add outside
$IP link add natup0 type veth peer name natup1
$IP link set natup1 netns outside
ip addr add 203.0.113.1/24 dev natup0 && ip link set natup0 up
$IP netns exec outside sh -c 'ip link set lo up; ip addr add 203.0.113.2/24 dev natup1; ip link set natup1 up'
$IP netns exec outside nft -f - <<'EOF'
table ip seen {
  chain input {
    type filter hook input priority filter; policy accept;
    tcp dport 7007 ip saddr 203.0.113.1 counter
    tcp dport 7007 ip saddr 192.168.123.0/24 counter
  }
}
EOF
# One connection per guest.
$IP netns exec outside sh -c 'nc -l -p 7007 >/tmp/outside-a; nc -l -p 7007 >/tmp/outside-b' &
kvmmio network create >"$R/create.log" 2>&1 || msg="kvmmio network create failed: $(tr '\n' ' ' <"$R/create.log")"
cat "$R/create.log"
record network "$(since "$t0")" "$msg"
[ -z "$msg" ] || fail "$msg"

# guest NAME [EXTRA]: one L2 on the network, in the background.
guest() {
    timeout 600 kvmmio run --kernel "$KVMMIO_L2/Image" --initrd "$KVMMIO_L2/initramfs" --mem 160M --cpus 1 \
        --rng off --on-reboot exit --net "tap=nat$1,$SPEC,bridge=kvmnat0" --stats "$R/$1.json" \
        --cmdline-replace "console=ttyAMA0 $L2_ARGS kvmmio.l2test=nat $2" \
        </dev/null >"$R/$1.console" 2>"$R/$1.log" &
    echo $! >"/tmp/nat-$1.pid"
}
# until_line FILE TEXT SECONDS: TEXT in FILE within SECONDS.
until_line() {
    i=0
    while ! grep -q "$2" "$1" 2>/dev/null; do
        i=$((i + 1)); [ $i -le "$3" ] || return 1; sleep 1
    done
}
line() { sed -n "s/.*$2: //p" "$1" | tr -d '\r' | head -n 1; }

step "guests: DHCP, DNS, the outside masqueraded, guest to guest"
t0=$(uptime_s) msg=''
guest a kvmmio.secs=wait
until_line "$R/a.console" KVMMIO-L2-NAT-DONE 300 || msg="guest a did not finish: $(tail -c 400 "$R/a.console" | tr '\r\n' '  ')"
a_addr=$(line "$R/a.console" KVMMIO-L2-NAT-ADDR | cut -d/ -f1)
echo "guest a: $(line "$R/a.console" KVMMIO-L2-NAT-ADDR), dns $(line "$R/a.console" KVMMIO-L2-NAT-DNS)," \
    "outside $(line "$R/a.console" KVMMIO-L2-NAT-OUT)"
if [ -z "$msg" ]; then
    guest b "kvmmio.host=$a_addr"
    read -r pb </tmp/nat-b.pid
    wait "$pb"; sb=$?
    echo "guest b: $(line "$R/b.console" KVMMIO-L2-NAT-ADDR), dns $(line "$R/b.console" KVMMIO-L2-NAT-DNS)," \
        "outside $(line "$R/b.console" KVMMIO-L2-NAT-OUT), a $(line "$R/b.console" KVMMIO-L2-NAT-PEER); kvmmio exit $sb"
    [ "$sb" = 0 ] || msg="guest b's kvmmio exited $sb: $(tail -n 2 "$R/b.log" | tr '\n' ' ')"
fi
nc -w 5 "$a_addr" 5002 </dev/null >/dev/null 2>&1
read -r pa </tmp/nat-a.pid
wait "$pa"; sa=$?
[ -n "$msg" ] || [ "$sa" = 0 ] || msg="guest a's kvmmio exited $sa: $(tail -n 2 "$R/a.log" | tr '\n' ' ')"
for g in a b; do
    [ -z "$msg" ] || break
    case $(line "$R/$g.console" KVMMIO-L2-NAT-ADDR) in
    192.168.123.*" via 192.168.123.1") ;;
    *) msg="guest $g: no lease from the network: $(grep -a KVMMIO-L2 "$R/$g.console" | tr '\r\n' '  ')" ;;
    esac
    [ -n "$msg" ] || [ "$(line "$R/$g.console" KVMMIO-L2-NAT-DNS)" = 203.0.113.2 ] ||
        msg="guest $g: outside.kvmmio.test resolved to '$(line "$R/$g.console" KVMMIO-L2-NAT-DNS)', not 203.0.113.2"
    [ -n "$msg" ] || [ "$(line "$R/$g.console" KVMMIO-L2-NAT-OUT)" = ok ] || msg="guest $g could not reach the outside"
done
[ -n "$msg" ] || [ "$(line "$R/b.console" KVMMIO-L2-NAT-PEER)" = ok ] || msg="guest b could not ping guest a ($a_addr)"
# packets SOURCE: the outside's count of packets to port 7007 from SOURCE.
packets() {
    $IP netns exec outside nft list chain ip seen input |
        awk -v s="$1" '$0 ~ "saddr " s " counter" { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}
from_l1=$(packets 203.0.113.1) from_guests=$(packets 192.168.123.0/24)
echo "outside: $from_l1 packets from L1's 203.0.113.1, $from_guests from 192.168.123.0/24;" \
    "got '$(cat /tmp/outside-a 2>/dev/null)' '$(cat /tmp/outside-b 2>/dev/null)'"
[ -n "$msg" ] || { [ "${from_l1:-0}" -gt 0 ] && [ "${from_guests:-1}" = 0 ]; } ||
    msg="the outside saw $from_l1 packets from L1 and $from_guests from the guests' subnet (masquerade: some, none)"
[ -n "$msg" ] || grep -q hello-from-l2 /tmp/outside-b || msg="the outside did not get guest b's bytes"
record guests "$(since "$t0")" "$msg"

step "delete: kvmmio network delete"
t0=$(uptime_s) msg=''
kvmmio network list
kvmmio network delete >"$R/delete.log" 2>&1 || msg="kvmmio network delete failed: $(tr '\n' ' ' <"$R/delete.log")"
[ -n "$msg" ] || ! ip link show kvmnat0 >/dev/null 2>&1 || msg="the bridge kvmnat0 is still there"
[ -n "$msg" ] || ! nft list table ip kvmmio-kvmnat0 >/dev/null 2>&1 || msg="the nftables table is still there"
[ -n "$msg" ] || ! pidof dnsmasq >/dev/null 2>&1 || msg="dnsmasq still runs"
record delete "$(since "$t0")" "$msg"
$IP netns del outside 2>/dev/null
write_cases nat
