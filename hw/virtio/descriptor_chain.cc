// SPDX-License-Identifier: BSD-2-Clause
// Copies between a validated descriptor chain and host buffers, each
// segment looked up again through GuestMemory::span().
#include "kvmmio/virtio/descriptor_chain.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace kvmmio::virtio {
namespace {

// Walks the segments of one direction, skipping `offset` bytes, handing each
// piece to `copy(host, len)`. Returns the bytes handed over.
template <typename Copy>
size_t for_each_piece(const GuestMemory& memory, const DescriptorChain& chain, bool writable,
                      uint64_t offset, size_t want, Copy copy) {
  size_t done = 0;
  for (const Segment& s : chain.segments) {
    if (done == want) break;
    if (s.device_writable != writable) continue;
    if (offset >= s.len) {
      offset -= s.len;
      continue;
    }
    const size_t n = std::min<uint64_t>(s.len - offset, want - done);
    auto host = memory.span(s.gpa + offset, n);
    if (!host) break;  // validated at pop; cannot happen while RAM exists
    copy(host->data(), done, n);
    done += n;
    offset = 0;
  }
  return done;
}

}  // namespace

size_t read_from_chain(const GuestMemory& memory, const DescriptorChain& chain, uint64_t offset,
                       std::span<uint8_t> dst) {
  return for_each_piece(memory, chain, false, offset, dst.size(),
                        [&](const uint8_t* host, size_t at, size_t n) {
                          std::memcpy(dst.data() + at, host, n);
                        });
}

size_t write_to_chain(const GuestMemory& memory, const DescriptorChain& chain, uint64_t offset,
                      std::span<const uint8_t> src) {
  return for_each_piece(memory, chain, true, offset, src.size(),
                        [&](uint8_t* host, size_t at, size_t n) {
                          std::memcpy(host, src.data() + at, n);
                        });
}

size_t chain_host_spans(const GuestMemory& memory, const DescriptorChain& chain, bool writable,
                        uint64_t offset, uint64_t len, std::vector<std::span<uint8_t>>& out) {
  const size_t want = static_cast<size_t>(std::min<uint64_t>(len, SIZE_MAX));
  return for_each_piece(memory, chain, writable, offset, want, [&](uint8_t* host, size_t, size_t n) {
    out.emplace_back(host, n);
  });
}

}  // namespace kvmmio::virtio
