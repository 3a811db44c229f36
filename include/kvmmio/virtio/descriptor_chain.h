// SPDX-License-Identifier: BSD-2-Clause
// A validated descriptor chain as a device sees it: a list of guest buffers
// (gpa, len, device-writable), device-readable ones first (virtio 1.2
// section 2.7.4.2 "Message Framing"), and copies to and from those buffers
// through GuestMemory::span().
//
// SplitQueue::pop() fills chains; devices only read them. The gpa ranges
// were inside guest RAM when the chain was popped, and the copy helpers
// check them again, so nothing here can reach host memory outside RAM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kvmmio/base/export.h"
#include "kvmmio/guest_memory.h"

namespace kvmmio::virtio {

struct KVMMIO_EXPORT Segment {
  uint64_t gpa = 0;
  uint32_t len = 0;
  bool device_writable = false;
};

struct KVMMIO_EXPORT DescriptorChain {
  uint16_t head = 0;              // what push_used() returns to the driver
  std::vector<Segment> segments;  // device-readable segments, then device-writable
  uint64_t readable_bytes = 0;
  uint64_t writable_bytes = 0;

  void clear() {
    head = 0;
    segments.clear();
    readable_bytes = writable_bytes = 0;
  }
};

// Copies up to dst.size() bytes of the chain's device-readable part,
// starting `offset` bytes into it. Returns the bytes copied.
KVMMIO_EXPORT size_t read_from_chain(const GuestMemory& memory, const DescriptorChain& chain, uint64_t offset,
                       std::span<uint8_t> dst);

// Copies up to src.size() bytes into the chain's device-writable part,
// starting `offset` bytes into it. Returns the bytes copied (what the
// device reports as the used length, 2.7.8).
KVMMIO_EXPORT size_t write_to_chain(const GuestMemory& memory, const DescriptorChain& chain, uint64_t offset,
                      std::span<const uint8_t> src);

// The host bytes of `len` bytes of the chain's device-writable part
// (`writable`) or device-readable part, starting `offset` bytes into it,
// appended to `out` one span per piece (for preadv/pwritev straight into
// guest RAM). Returns the bytes covered, less than `len` where the part is
// shorter.
KVMMIO_EXPORT size_t chain_host_spans(const GuestMemory& memory, const DescriptorChain& chain, bool writable,
                                      uint64_t offset, uint64_t len, std::vector<std::span<uint8_t>>& out);

}  // namespace kvmmio::virtio
