#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes the multiqueue seeds of fuzz/block_fuzz.cc into fuzz/corpus/block/.

The other block seeds (read-write-flush, hostile-reset, ...) are one-queue
inputs committed before multiqueue; these give the fuzzer several request
queues to mutate from. Each seed is a short program in the target's input
language (the Op enum in block_fuzz.cc): a flags byte (bit 0: ro=on, bit 1:
teardown without a reset first, bit 2: the threads engine, bits 3-4: 0 for
one queue, 1-3 for 2-4 queues), then operations; with several queues, the
operations that name a ring read its queue first.
"""
import os
import struct

(WRITE_REGISTER, WRITE_RAM, HEADER, WRITE_DESCRIPTOR, EXPOSE_HEAD, NOTIFY, WAIT_IDLE, BRING_UP,
 RESET) = range(9)
NEXT, WRITE = 1, 2
T_IN, T_OUT, T_FLUSH, T_GET_ID = 0, 1, 2, 3  # indexes into the target's types[]
VERSION_1 = 1 << 32


def u8(v): return struct.pack('<B', v)
def u16(v): return struct.pack('<H', v)
def u32(v): return struct.pack('<I', v)
def u64(v): return struct.pack('<Q', v)


def flags(queues, threads=False, ro=False, no_reset=False):
    return u8((1 if ro else 0) | (2 if no_reset else 0) | (4 if threads else 0) | ((queues - 1) << 3))


def bring_up(live):  # features: everything offered (the target drops INDIRECT_DESC)
    return u8(BRING_UP) + u64(0xffffffffffffffff) + u8(live - 1)


def header(offset, type_index, sector):  # offset into the buffer area
    return u8(HEADER) + u16(offset) + u32(0) + u8(type_index) + u8(0) + u8(sector)


def desc(queue, index, offset, length, flag_bits, nxt):
    return u8(WRITE_DESCRIPTOR) + u8(queue) + u8(index) + u16(offset) + u16(length) + u8(flag_bits) + u8(nxt)


def expose(queue, head): return u8(EXPOSE_HEAD) + u8(queue) + u8(head)
def notify(queue): return u8(NOTIFY) + u8(queue)


def request(queue, first, base, type_index, sector, data_len, data_writable):
    """A request as Linux frames it, descriptors first..first+2 of `queue`'s
    table, its header, data and status at `base` in the buffer area."""
    out = header(base, type_index, sector)
    if data_len:
        out += desc(queue, first, base, 16, NEXT, first + 1)
        out += desc(queue, first + 1, base + 0x100, data_len, NEXT | (WRITE if data_writable else 0), first + 2)
        out += desc(queue, first + 2, base + 0x80, 1, WRITE, 0)
    else:
        out += desc(queue, first, base, 16, NEXT, first + 1)
        out += desc(queue, first + 1, base + 0x80, 1, WRITE, 0)
    return out + expose(queue, first) + notify(queue)


def seeds():
    # Four queues on io_uring, all set up: a read on each, a write on queue
    # 1, a FLUSH on queue 2 once it completed, a notify for a fifth queue
    # (the device has none), a reset with requests in flight.
    s = flags(4) + bring_up(4)
    for q in range(4):
        s += request(q, 0, 0x1000 * q, T_IN, 8 * q, 512, True)
    s += u8(WAIT_IDLE)
    s += request(1, 3, 0x5000, T_OUT, 40, 1024, False) + u8(WAIT_IDLE)
    s += request(2, 3, 0x6000, T_FLUSH, 0, 0, False) + notify(4) + u8(WAIT_IDLE)
    for q in range(4):
        s += request(q, 6, 0x7000 + 0x400 * q, T_IN, 16, 512, True)
    s += u8(RESET)
    yield 'multiqueue-4', s
    # Two queues on the threads engine, only queue 0 set up (a driver with
    # one CPU): notifies for queue 1 find no ring; queue 0 serves GET_ID.
    s = flags(2, threads=True) + bring_up(1)
    s += request(0, 0, 0, T_GET_ID, 0, 20, True) + notify(1) + u8(WAIT_IDLE)
    s += request(1, 0, 0x1000, T_IN, 0, 512, True)
    s += request(0, 3, 0x2000, T_IN, 1, 512, True) + u8(WAIT_IDLE)
    yield 'multiqueue-2-one-live', s


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'block')
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
