#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# L2 side of the main job's benchmark (bench/net-compare.sh drives it from
# L1, or from an arm64 host): with kvmmio.l2test=serve, L2 becomes a
# passive endpoint the host measures against, and stays up until told to
# power off. Other kvmmio.l2test values are 50-kvmmio-l2test.sh's.
#   eth0        address kvmmio.ip= (/24), up
#   iperf3 -s   the throughput peer (the host runs the clients, -R for
#               guest-to-host)
#   tcp_rr server (port 5201 is iperf3's; tcp_rr listens on 5300)
#   udp_pps server (control on TCP 5400; the host's client asks it to send
#               or receive the datagrams, bench/pps/pps_net.h)
#   httpd :8080 control, one CGI per request:
#     /cgi-bin/irqs          the interrupts L2 took from virtio devices so far
#     /cgi-bin/mtu?N         set eth0's MTU to N (68-65535), answers "mtu N"
#     /cgi-bin/poweroff      answers "bye", then poweroff -f (kvmmio exits 0)
#     /cgi-bin/iperf?A+S     this guest as iperf3's client of the iperf3 server
#                            at address A (another guest: guest-to-guest
#                            traffic) for S seconds (1-60); answers "BYTES
#                            BITS_PER_SECOND" as the receiver counted them
#     /cgi-bin/client?TOOL+A+N+S
#                            this guest as TOOL's client of the server of
#                            another guest at address A, for S seconds
#                            (1-60), answering the tool's JSON: iperf3 with N
#                            streams (1-128; this guest sends), tcp_rr (N 1),
#                            udp_pps with N-byte payloads (16-65507; this
#                            guest sends); bench/net-compare.sh's
#                            guest-to-guest cells
#     /cgi-bin/vsock?DIR+SECONDS
#                            vsock_stream: send, to the host (CID 2) port
#                            5600 for SECONDS (1-60); recv, one stream on
#                            port 5601 (the host sends), answering the
#                            receiver's JSON; bench/net-compare.sh's vsock
#                            cells
#     /cgi-bin/fio?RW+BS+DEPTH+SECONDS
#                            fio (from the tools disk, serial kvmmio-tools,
#                            mounted at /tools) on the disk whose serial is
#                            kvmmio-fio, else the file fio.img in the
#                            virtio-fs folder tagged kvmmio-fio: RW read, write, randread or
#                            randwrite, BS bytes (512-1048576, a multiple of
#                            512), DEPTH 1-256, SECONDS 1-60; O_DIRECT,
#                            libaio; answers fio's JSON
# Prints KVMMIO-L2-SERVING when all of it listens.
read -r cmdline </proc/cmdline
test='' ip=''
for arg in $cmdline; do
    case $arg in
    kvmmio.l2test=*) test=${arg#*=} ;;
    kvmmio.ip=*) ip=${arg#*=} ;;
    esac
done
[ "$test" = serve ] || exit 0

ip link set lo up
if ! { ip addr add "$ip/24" dev eth0 && ip link set eth0 up; }; then
    echo "KVMMIO-L2-ERROR: cannot bring up eth0 with kvmmio.ip=$ip"
    exit 1
fi

www=/tmp/serve-www
mkdir -p "$www/cgi-bin"
cat >"$www/cgi-bin/irqs" <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
awk '/virtio/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts
CGI
cat >"$www/cgi-bin/mtu" <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
case $QUERY_STRING in
'' | *[!0-9]*) echo "error: want /cgi-bin/mtu?N" ;;
*) if [ "$QUERY_STRING" -ge 68 ] && [ "$QUERY_STRING" -le 65535 ] &&
       ip link set eth0 mtu "$QUERY_STRING"; then
       echo "mtu $(cat /sys/class/net/eth0/mtu)"
   else
       echo "error: eth0 refused mtu $QUERY_STRING"
   fi ;;
esac
CGI
cat >"$www/cgi-bin/poweroff" <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
echo bye
# Detached, so the answer goes out first; the 3 s give vhost the time to
# take it from the TX ring on a busy host (the caller does not rely on it).
(sleep 3; poweroff -f) </dev/null >/dev/null 2>&1 &
CGI
cat >"$www/cgi-bin/iperf" <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
addr=${QUERY_STRING%+*} secs=${QUERY_STRING##*+}
case $addr in '' | *[!0-9.]*) echo "error: want /cgi-bin/iperf?ADDRESS+SECONDS"; exit 0 ;; esac
case $secs in '' | *[!0-9]*) echo "error: want /cgi-bin/iperf?ADDRESS+SECONDS"; exit 0 ;; esac
[ "$secs" -ge 1 ] && [ "$secs" -le 60 ] || { echo "error: SECONDS must be 1-60"; exit 0; }
# -J's end.sum_received: the first "bytes" and "bits_per_second" after it.
iperf3 -c "$addr" -t "$secs" -J 2>&1 | awk '
    /"sum_received"/ { r = 1 }
    r && /"bytes"/ && b == "" { b = $2; sub(",", "", b) }
    r && /"bits_per_second"/ && s == "" { s = $2; sub(",", "", s) }
    END { if (b == "" || s == "") print "error: iperf3 to the peer failed"; else print b, s }'
CGI
cat >"$www/cgi-bin/client" <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
want() { echo "error: want /cgi-bin/client?TOOL+ADDRESS+N+SECONDS ($*)"; exit 0; }
set -f  # the query's words, unglobbed
set -- $(echo "$QUERY_STRING" | tr '+' ' ')
set +f
[ $# = 4 ] || want "four values"
case $2 in '' | *[!0-9.]*) want "ADDRESS an IPv4 address" ;; esac
for n in "$3" "$4"; do case $n in '' | *[!0-9]* | 0*) want "whole numbers" ;; esac; done
[ ${#3} -le 5 ] && [ ${#4} -le 2 ] && [ "$4" -le 60 ] || want "SECONDS 1-60"
case $1 in
iperf3) [ "$3" -le 128 ] || want "N streams 1-128"
    iperf3 -c "$2" -P "$3" -t "$4" -J ;;
tcp_rr) [ "$3" = 1 ] || want "N 1 for tcp_rr"
    tcp_rr client "$2" --port 5300 --seconds "$4" --size 1 --json ;;
udp_pps) [ "$3" -ge 16 ] && [ "$3" -le 65507 ] || want "N payload bytes 16-65507"
    udp_pps client "$2" --port 5400 --seconds "$4" --payload "$3" --json ;;
*) want "TOOL iperf3, tcp_rr or udp_pps" ;;
esac </dev/null 2>/tmp/client.err || echo "error: $1 failed: $(tail -n 1 /tmp/client.err)"
CGI
cat >"$www/cgi-bin/vsock" <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
# send: to the host (CID 2) port 5600 for SECONDS; recv: one stream on
# port 5601, the receiver's JSON as the answer.
dir=${QUERY_STRING%+*} secs=${QUERY_STRING##*+}
case $secs in '' | *[!0-9]*) echo "error: want /cgi-bin/vsock?send+SECONDS or recv+SECONDS"; exit 0 ;; esac
[ ${#secs} -le 2 ] && [ "$secs" -ge 1 ] && [ "$secs" -le 60 ] || { echo "error: SECONDS must be 1-60"; exit 0; }
case $dir in
send) vsock_stream client 2 --port 5600 --seconds "$secs" --timeout 30 --json ;;
recv) vsock_stream server --port 5601 --timeout $((secs + 60)) --json ;;
*) echo "error: want /cgi-bin/vsock?send+SECONDS or recv+SECONDS"; exit 0 ;;
esac </dev/null 2>/tmp/vsock.err || echo "error: vsock_stream $dir failed: $(tail -n 1 /tmp/vsock.err)"
CGI
cat >"$www/cgi-bin/fio" <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
# by_serial SERIAL: the virtio-blk disk with that serial (nothing if none).
by_serial() {
    for f in /sys/block/vd*/serial; do
        [ -r "$f" ] && [ "$(cat "$f")" = "$1" ] && { f=${f%/serial}; echo "/dev/${f##*/}"; return; }
    done
}
want() { echo "error: want /cgi-bin/fio?RW+BS+DEPTH+SECONDS ($*)"; exit 0; }
set -f  # the query's words, unglobbed
set -- $(echo "$QUERY_STRING" | tr '+' ' ')
set +f
[ $# = 4 ] || want "four values"
case $1 in read | write | randread | randwrite) ;; *) want "RW read, write, randread or randwrite" ;; esac
for n in "$2" "$3" "$4"; do case $n in '' | *[!0-9]* | 0*) want "whole numbers" ;; esac; done
[ ${#2} -le 7 ] && [ "$2" -ge 512 ] && [ "$2" -le 1048576 ] && [ $(($2 % 512)) = 0 ] ||
    want "BS 512-1048576, a multiple of 512"
[ ${#3} -le 3 ] && [ "$3" -le 256 ] || want "DEPTH 1-256"
[ ${#4} -le 2 ] && [ "$4" -le 60 ] || want "SECONDS 1-60"
[ -x /tools/fio ] || { echo "error: no /tools/fio (the tools disk, serial kvmmio-tools)"; exit 0; }
# The disk with serial kvmmio-fio, else the file fio.img in the shared
# folder tagged kvmmio-fio (virtio-fs), mounted at the first run.
dev=$(by_serial kvmmio-fio)
if [ ! -b "$dev" ]; then
    mkdir -p /mnt/fio
    grep -q ' /mnt/fio virtiofs ' /proc/mounts || mount -t virtiofs kvmmio-fio /mnt/fio 2>/dev/null ||
        { echo "error: no disk with serial kvmmio-fio and no shared folder tagged kvmmio-fio"; exit 0; }
    dev=/mnt/fio/fio.img
    [ -f "$dev" ] || { echo "error: no fio.img in the shared folder kvmmio-fio"; exit 0; }
fi
rm -f /tmp/fio.json
if /tools/fio --name=guest --filename="$dev" --rw="$1" --bs="$2" --iodepth="$3" --runtime="$4" \
    --time_based --direct=1 --ioengine=libaio --output-format=json --output=/tmp/fio.json \
    </dev/null >/tmp/fio.err 2>&1 && [ -s /tmp/fio.json ]; then
    cat /tmp/fio.json
else
    echo "error: fio failed: $(tail -n 1 /tmp/fio.err)"
fi
CGI
chmod 755 "$www"/cgi-bin/*

# The tools disk, read only, where L1 gives one (the main job's fio cells).
for f in /sys/block/vd*/serial; do
    if [ -r "$f" ] && [ "$(cat "$f")" = kvmmio-tools ]; then
        f=${f%/serial}
        mkdir -p /tools
        mount -t squashfs -o ro "/dev/${f##*/}" /tools || echo "KVMMIO-L2-ERROR: cannot mount the tools disk /dev/${f##*/}"
        break
    fi
done

iperf3 -s -D
tcp_rr server --port 5300 </dev/null >/dev/null 2>&1 &
udp_pps server --port 5400 </dev/null >/dev/null 2>&1 &
httpd -p 8080 -h "$www"
echo "KVMMIO-L2-SERVING"
while :; do sleep 60; done
