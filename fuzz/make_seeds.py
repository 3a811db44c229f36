#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes the seed corpus of fuzz/virtio_mmio_fuzz.cc into fuzz/corpus/virtio_mmio/.

Each seed is a short program in the fuzzer's input language (see the Op enum
in virtio_mmio_fuzz.cc): a setup byte, then operations. The seeds give the
fuzzer the paths a real guest takes (Linux's bring-up in both layouts, an
echoed chain, an indirect table, config accesses, a backend-owned queue,
a queue reset) plus a malformed ring, to mutate from.
"""
import os
import struct

WRITE_REG, READ_REG, RAW, WRITE_RAM, DESC, EXPOSE, NOTIFY, BRING_UP, CONFIG = range(9)
NEXT, WRITE, INDIRECT = 1, 2, 4
RAM_A = 0x40000000
RING0 = RAM_A + 0x1000

def u8(v): return struct.pack('<B', v)
def u16(v): return struct.pack('<H', v)
def u32(v): return struct.pack('<I', v)
def u64(v): return struct.pack('<Q', v)

def bring_up(features=0xffffffffffffffff): return u8(BRING_UP) + u64(features)
def desc(index, offset, length, flags, nxt):
    """A descriptor whose buffer is RAM_A + 0x10000 + 2 * offset."""
    return u8(DESC) + u8(index) + u8(0) + u16(offset) + u16(length) + u8(flags) + u8(nxt)
def desc_raw(index, addr, length, flags, nxt):
    return u8(DESC) + u8(index) + u8(201) + u64(addr) + u32(length) + u8(flags) + u8(nxt)
def expose(head): return u8(EXPOSE) + u16(head) + u8(1)
def notify(q): return u8(NOTIFY) + u8(q)
def wreg(offset, value): return u8(WRITE_REG) + u8(offset // 4) + u32(value)
def rreg(offset): return u8(READ_REG) + u8(offset // 4)
def raw(offset, width_log2, value, write): return u8(RAW) + u16(offset) + u8(width_log2) + u64(value) + u8(write)

echo_chain = desc(0, 0, 16, NEXT, 1) + desc(1, 0x100, 16, WRITE, 0) + expose(0) + notify(0)
interrupt = rreg(0x60) + wreg(0x64, 1)

seeds = {
    'modern-echo': u8(0) + bring_up() + echo_chain + interrupt,
    'legacy-echo': u8(1) + bring_up() + echo_chain + interrupt,
    'descriptor-loop': u8(0) + bring_up() + desc(0, 0, 8, NEXT, 0) + expose(0) + notify(0) + rreg(0x70),
    'indirect': u8(0) + bring_up()
        + desc_raw(8, RAM_A + 0x10000, 16, NEXT, 1) + desc_raw(9, RAM_A + 0x10100, 16, WRITE, 0)
        + desc_raw(0, RING0 + 16 * 8, 32, INDIRECT, 0) + expose(0) + notify(0),
    # Linux's sequence register by register (modern): status, features, queue 0.
    'manual-modern': u8(0) + wreg(0x70, 0) + wreg(0x70, 1) + wreg(0x70, 3)
        + wreg(0x14, 1) + rreg(0x10) + wreg(0x14, 0) + rreg(0x10)
        + wreg(0x24, 1) + wreg(0x20, 1) + wreg(0x24, 0) + wreg(0x20, 0x30000003)
        + wreg(0x70, 11) + rreg(0x70)
        + wreg(0x30, 0) + rreg(0x44) + rreg(0x34) + wreg(0x38, 256)
        + wreg(0x80, RING0 & 0xffffffff) + wreg(0x84, 0)
        + wreg(0x90, (RING0 + 4096) & 0xffffffff) + wreg(0x94, 0)
        + wreg(0xa0, (RING0 + 8192) & 0xffffffff) + wreg(0xa4, 0)
        + wreg(0x44, 1) + wreg(0x70, 15) + rreg(0xfc),
    'manual-legacy': u8(1) + wreg(0x28, 4096) + wreg(0x70, 1) + wreg(0x70, 3)
        + wreg(0x24, 0) + wreg(0x20, 0x30000003)
        + wreg(0x30, 0) + rreg(0x40) + wreg(0x38, 256) + wreg(0x3c, 4096)
        + wreg(0x40, RING0 >> 12) + wreg(0x70, 7) + echo_chain,
    'config': u8(0) + raw(0x100, 0, 0, 0) + raw(0x102, 1, 0, 0) + raw(0x104, 2, 0xdeadbeef, 1)
        + raw(0x104, 2, 0, 0) + raw(0x108, 3, 0, 0) + raw(0x117, 0, 0, 0) + raw(0x1fc, 2, 0, 0)
        + bring_up() + u8(CONFIG) + u8(5) + rreg(0xfc) + interrupt,
    'backend-queue': u8(4) + bring_up() + notify(1) + rreg(0x60) + wreg(0x70, 0),
    'queue-reset': u8(0) + bring_up() + wreg(0x30, 1) + wreg(0xc0, 1) + rreg(0xc0) + rreg(0x44)
        + wreg(0x38, 8) + wreg(0x80, RAM_A + 0x8000) + wreg(0x90, RAM_A + 0x8080)
        + wreg(0xa0, RAM_A + 0x9000) + wreg(0x44, 1) + notify(1),
}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'virtio_mmio')
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
print(f'{len(seeds)} seeds in {out}')
