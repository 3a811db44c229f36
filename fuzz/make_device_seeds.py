#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes the seed corpus of fuzz/device_fuzz.cc into fuzz/corpus/device/.

Each seed is a short program in the target's input language (the Op enum in
device_fuzz.cc): a setup byte (bit 0: legacy net, bit 1: legacy console,
bit 2: net MTU, bit 3: legacy rng, bit 4: vhost-vsock offers SEQPACKET,
bit 5: legacy vsock), then operations. They give the fuzzer
what real guests do (virtio-net RX and TX in both layouts, the control
queue, virtio-console output and input, the PL011, the PL031's alarm, the
power key on the PL061, a reboot in place's reset of every device, virtio-rng requests
within and beyond its rate bound, virtio-vsock's configuration space read
and written at every width, its bring-up and event queue) and what the hostile guest scenario did
(one RX head repeated with one writable byte per chain under a 64 KiB
frame, a console chain repeating the same bytes), to mutate from.
"""
import os
import struct

(BUS, REG, RAM, DESC, EXPOSE, NOTIFY, NET_UP, CON_UP, TAP, DRAIN_WIRE, HOST_IN, DRAIN_OUT,
 FLUSH, RNG_UP, RNG_CLOCK, VSOCK_UP, VSOCK_CONFIG, RTC_CLOCK, POWER_KEY, HOST_RESET) = range(20)
UART, RTC, GPIO = 0, 6, 7  # bus() selectors (kNear in device_fuzz.cc)
RTC_START = 1_700_000_000  # the RTC clock's first reading
NEXT, WRITE = 1, 2
NET_RX, NET_TX, NET_CTRL, CON_RX, CON_TX, RNG = range(6)
MRG_RXBUF, CTRL_VQ, MQ, MAC, STATUS, VERSION_1 = 1 << 15, 1 << 17, 1 << 22, 1 << 5, 1 << 16, 1 << 32

def u8(v): return struct.pack('<B', v)
def u16(v): return struct.pack('<H', v)
def u32(v): return struct.pack('<I', v)
def u64(v): return struct.pack('<Q', v)

def net_up(features, sizes=(0, 0, 0)):  # size selectors: 0 = 256 entries
    return u8(NET_UP) + u64(features) + b''.join(u8(s) for s in sizes)
def con_up(tx_log2=7): return u8(CON_UP) + u64(VERSION_1) + u8(tx_log2)
def rng_up(size_log2=6): return u8(RNG_UP) + u64(VERSION_1) + u8(size_log2)
def rng_clock(us): return u8(RNG_CLOCK) + u16(us)
SEQPACKET = 1 << 1
def vsock_up(features, size_log2=(4, 4, 3)):
    return u8(VSOCK_UP) + u64(features) + b''.join(u8(s) for s in size_log2)
def vsock_config(offset, width_log2, value=0, write=False):
    return u8(VSOCK_CONFIG) + u8(offset) + u8(width_log2) + u64(value) + u8(1 if write else 0)
def notify_vsock(q): return u8(NOTIFY) + u8(12) + u8(q)
def desc(ring, index, offset, length, flags, nxt):
    """A descriptor of `ring` whose buffer is kBuffers + 8 * offset."""
    return u8(DESC) + u8(ring) + u8(index) + u8(0) + u16(offset) + u16(length) + u8(flags) + u8(nxt)
def desc_long(ring, index, offset, length, flags, nxt):
    return u8(DESC) + u8(ring) + u8(index) + u8(1) + u16(offset) + u32(length) + u8(flags) + u8(nxt)
def expose(ring, head, count=1): return u8(EXPOSE) + u8(ring) + u8(count - 1) + u8(head)
def notify_net(q): return u8(NOTIFY) + u8(0) + u8(q)
def notify_con(q): return u8(NOTIFY) + u8(1) + u8(q)
def notify_rng(): return u8(NOTIFY) + u8(2) + u8(0)
def tap(length, seed=1, wire=0):
    if length < 256:
        return u8(TAP) + u8(0) + u8(length) + u8(seed) + u8(wire)
    return u8(TAP) + u8(1) + u16(length - 4096) + u8(seed) + u8(wire)
def host_in(data, console): return u8(HOST_IN) + u8(len(data)) + data + u8(1 if console else 0)
def bus(sel, offset, width_log2, value, write): return u8(BUS) + u8(sel) + u16(offset) + u8(width_log2) + u64(value) + u8(write)
def rtc_clock(seconds): return u8(RTC_CLOCK) + u16(seconds)
def power_key(pressed): return u8(POWER_KEY) + u8(1 if pressed else 0)

modern = VERSION_1 | MAC | STATUS
rx_buffers = b''.join(desc(NET_RX, i, i * 256, 2048, WRITE, 0) + expose(NET_RX, i) for i in range(8))
tx_frame = desc(NET_TX, 0, 0x4000, 72, 0, 0) + expose(NET_TX, 0, 16) + notify_net(1) + u8(FLUSH) + u8(DRAIN_WIRE)
repeated_one_byte = (b''.join(desc(NET_RX, i, 0x100, 1, NEXT, i + 1) for i in range(15))
                     + desc(NET_RX, 15, 0x200, 1, WRITE, 0))

seeds = {
    'net-modern-rx': u8(0) + net_up(modern | MRG_RXBUF) + rx_buffers + notify_net(0) + tap(5000) + u8(FLUSH),
    'net-legacy-rx-10-byte-header': u8(1) + net_up(MAC | STATUS) + rx_buffers + notify_net(0) + tap(200) + u8(FLUSH),
    'net-modern-tx': u8(0) + net_up(modern) + tx_frame,
    'net-ctrl': u8(0) + net_up(modern | CTRL_VQ | MQ, (0, 0, 1)) +
                desc(NET_CTRL, 0, 0x5000, 4, NEXT, 1) + desc(NET_CTRL, 1, 0x5100, 1, WRITE, 0) +
                expose(NET_CTRL, 0, 64) + notify_net(4) + u8(FLUSH),
    'net-held-chains': u8(0) + net_up(modern | MRG_RXBUF) + repeated_one_byte + tap(65566) + u8(FLUSH) +
                       b''.join(expose(NET_RX, 0, 64) + notify_net(0) + u8(FLUSH) for _ in range(6)),
    'net-legacy-mq-without-ctrl': u8(1) + net_up(MAC | MQ),
    'console-output': u8(0) + con_up() + desc(CON_TX, 0, 0x8000, 100, 0, 0) + expose(CON_TX, 0, 4) +
                      notify_con(1) + u8(DRAIN_OUT) + u8(FLUSH),
    'console-amplified-output': u8(2) + con_up() +
                      b''.join(desc_long(CON_TX, i, 0, 0x80000, NEXT if i < 63 else 0, i + 1) for i in range(64)) +
                      expose(CON_TX, 0, 64) + notify_con(1) + u8(FLUSH) + u8(DRAIN_OUT) + u8(FLUSH),
    'console-input': u8(0) + con_up() + desc(CON_RX, 0, 0x9000, 64, WRITE, 0) + expose(CON_RX, 0) +
                     notify_con(0) + host_in(b'hello from the host\r', True) + u8(FLUSH),
    'rng-requests': u8(0) + rng_up() + b''.join(desc(RNG, i, 0xa000 + i * 8, 64, WRITE, 0) for i in range(8)) +
                    b''.join(expose(RNG, i) for i in range(8)) + notify_rng() + u8(FLUSH),
    'rng-legacy-chain': u8(8) + rng_up(3) + desc(RNG, 0, 0xa000, 16, WRITE | NEXT, 1) +
                        desc(RNG, 1, 0xa100, 1000, WRITE, 0) + expose(RNG, 0) + notify_rng() + u8(FLUSH),
    # Beyond the 4 KiB burst: requests wait for the clock the input moves.
    'rng-throttled': u8(0) + rng_up() + desc(RNG, 0, 0xb000, 0x1000, WRITE, 0) + expose(RNG, 0, 8) +
                     notify_rng() + rng_clock(1000) + u8(FLUSH) + rng_clock(60000) + u8(FLUSH),
    'rng-device-readable': u8(0) + rng_up() + desc(RNG, 0, 0xa000, 16, NEXT, 1) + desc(RNG, 1, 0xa100, 64, WRITE, 0) +
                           expose(RNG, 0, 2) + notify_rng() + u8(FLUSH),
    # Linux reads guest_cid as two 32-bit reads; then every width, in and
    # past the field, and writes the driver must not make.
    'vsock-config': u8(16) + vsock_config(0, 2) + vsock_config(4, 2) +
                    b''.join(vsock_config(o, w) for w in range(4) for o in range(0, 16, 1 << w)) +
                    vsock_config(0, 2, 7, True) + vsock_config(0, 3, 7, True) + vsock_config(1, 0, 1, True) +
                    vsock_config(0, 2),
    'vsock-bring-up': u8(16) + vsock_up(VERSION_1 | SEQPACKET) + desc(2, 0, 0xc000, 8, WRITE, 0) +
                      expose(2, 0, 8) + notify_vsock(2) + notify_vsock(0) + notify_vsock(3) + u8(FLUSH),
    'vsock-legacy': u8(32) + vsock_up(0) + vsock_config(0, 2) + vsock_config(4, 2, 1, True),
    # rtc-pl031's alarm: the time read, a match 5 s on, unmasked, the
    # clock moved past it (the line rises), then cleared through RTCICR.
    'rtc-alarm': u8(0) + bus(RTC, 0x000, 2, 0, 0) + bus(RTC, 0x004, 2, RTC_START + 5, 1) +
                 bus(RTC, 0x010, 2, 1, 1) + rtc_clock(10) + bus(RTC, 0x018, 2, 0, 0) + bus(RTC, 0x01c, 2, 1, 1) +
                 bus(RTC, 0x008, 2, 0, 1) + bus(RTC, 0x004, 2, 3, 1) + bus(RTC, 0xfe0, 2, 0, 0),
    # gpio-keys on pin 3: both edges, unmasked; the key pressed and released.
    'gpio-power-key': u8(0) + bus(GPIO, 0x408, 2, 0x08, 1) + bus(GPIO, 0x410, 2, 0x08, 1) + power_key(True) +
                      bus(GPIO, 0x418, 2, 0, 0) + bus(GPIO, 0x41c, 2, 0x08, 1) + power_key(False) +
                      bus(GPIO, 0x020, 2, 0, 0),
    # A reboot in place with every device busy: the net receiving, the
    # console writing, an alarm set, the key held; then the drivers again.
    'host-reset': u8(0) + net_up(modern | MRG_RXBUF) + rx_buffers + notify_net(0) + tap(200) +
                  con_up() + desc(CON_TX, 0, 0x8000, 100, 0, 0) + expose(CON_TX, 0, 4) + notify_con(1) +
                  bus(RTC, 0x004, 2, RTC_START + 2, 1) + bus(RTC, 0x010, 2, 1, 1) + power_key(True) +
                  u8(HOST_RESET) + u8(FLUSH) + rtc_clock(5) + net_up(modern | MRG_RXBUF) + rx_buffers +
                  notify_net(0) + tap(200) + u8(FLUSH) + u8(HOST_RESET) + u8(HOST_RESET),
    'uart': u8(0) + bus(0, 0x30, 2, 0x301, 1) + bus(0, 0x2c, 2, 0x70, 1) + bus(0, 0, 0, ord('x'), 1) +
            host_in(b'abc', False) + bus(0, 0x18, 2, 0, 0) + bus(0, 0, 2, 0, 0) + bus(3, 0x10, 3, 0, 0),
}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'device')
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
print(f'{len(seeds)} seeds in {out}')
