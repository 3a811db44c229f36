// SPDX-License-Identifier: BSD-2-Clause
// BlockRequest: one virtio-blk request (virtio 1.2 section 5.2.6), read
// from a descriptor chain and checked against the disk before any I/O.
//
// Framing (2.7.4.2: any split into descriptors is allowed, so nothing here
// assumes one descriptor per part): the device-readable part starts with
// the 16-byte header; the status byte is the last byte of the
// device-writable part. Data is the rest: device-writable for IN and
// GET_ID, device-readable for OUT, DISCARD and WRITE_ZEROES.
//
// Everything is guest-controlled. parse_request() answers either a request
// to execute, or the status to write at once and why (a guest error):
//  - no device-writable byte: there is nowhere to put a status (the driver
//    put it in a device-readable descriptor); the chain is returned with 0
//    bytes written;
//  - a readable part shorter than the header;
//  - data in the wrong direction (writable bytes beyond the status for OUT,
//    readable bytes beyond the header for IN, ...);
//  - IN/OUT: no data, a length that is not a whole number of sectors (or
//    of the O_DIRECT alignment), more data segments than SEG_MAX, more
//    data bytes than max_request_bytes (whatever the segments: they may
//    all name one buffer), or sector + length beyond the capacity
//    (checked without overflow);
//  - OUT, DISCARD, WRITE_ZEROES on a read-only disk;
//  - DISCARD/WRITE_ZEROES: not offered, not exactly one range (max_*_seg
//    is 1), flags other than unmap, a range longer than offered or beyond
//    the capacity;
//  - an unknown type: UNSUPP.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/block/virtio_blk_spec.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/descriptor_chain.h"

namespace kvmmio::block {

// What the device offers, as requests are checked against it.
struct KVMMIO_EXPORT DiskLimits {
  uint64_t capacity_sectors = 0;
  uint32_t alignment = spec::kSectorSize;  // offsets and lengths of IN/OUT, in bytes
  uint32_t seg_max = 0;                    // data segments per IN/OUT request
  uint64_t max_request_bytes = 0;          // data bytes per IN/OUT request (0: no bound)
  uint32_t max_range_sectors = 0;          // per DISCARD/WRITE_ZEROES range (the config's max_*_sectors)
  bool read_only = false;
  bool discard = false;
  bool write_zeroes = false;
};

struct KVMMIO_EXPORT BlockRequest {
  uint32_t type = 0;
  uint64_t sector = 0;      // IN/OUT: the first sector; DISCARD/WRITE_ZEROES: the range's
  uint64_t data_bytes = 0;  // IN/OUT: the data; DISCARD/WRITE_ZEROES: the range, in bytes
  bool unmap = false;       // WRITE_ZEROES may deallocate
  uint64_t status_offset = 0;  // where the status byte is in the device-writable part
};

struct KVMMIO_EXPORT ParsedRequest {
  // A request to execute, or nullopt: then `status` is the answer now.
  std::optional<BlockRequest> request;
  uint8_t status = spec::kSOk;
  uint32_t type = 0;  // the header's, where there is one (for messages)
  // nullopt: there is no device-writable byte, no status can be written.
  std::optional<uint64_t> status_offset;
  // Why the request was refused (a guest error), or nullptr.
  const char* error = nullptr;
};

KVMMIO_EXPORT ParsedRequest parse_request(const GuestMemory& memory, const virtio::DescriptorChain& chain,
                                          const DiskLimits& limits);

// Counts the segments of one direction that hold bytes of [offset, offset
// + len) of that part (the data segments of a request).
KVMMIO_EXPORT uint32_t segments_spanned(const virtio::DescriptorChain& chain, bool writable, uint64_t offset,
                                        uint64_t len);

}  // namespace kvmmio::block
