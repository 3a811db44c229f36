// SPDX-License-Identifier: BSD-2-Clause
// Where a split virtqueue's three parts lie in guest memory, and the checks
// a layout must pass before the device touches it (virtio 1.2 section 2.7:
// sizes and alignments; 2.7.2 legacy layout; 4.2.4 QueuePFN/QueueAlign).
#pragma once

#include <cstdint>
#include <optional>

#include "kvmmio/base/export.h"
#include "kvmmio/guest_memory.h"

namespace kvmmio::virtio {

// Split-ring geometry (2.7 table "Virtqueue Part / Alignment / Size").
inline constexpr uint64_t kDescSize = 16;
inline constexpr uint64_t kDescAlign = 16;
inline constexpr uint64_t kAvailAlign = 2;
inline constexpr uint64_t kUsedAlign = 4;
inline constexpr uint64_t kUsedElemSize = 8;
// flags + idx (+ used_event / avail_event after the ring)
inline constexpr uint64_t kRingHeaderSize = 4;
inline constexpr uint64_t kRingEventSize = 2;

constexpr uint64_t desc_table_bytes(uint32_t size) { return kDescSize * size; }
constexpr uint64_t avail_ring_bytes(uint32_t size) { return kRingHeaderSize + 2ull * size + kRingEventSize; }
constexpr uint64_t used_ring_bytes(uint32_t size) {
  return kRingHeaderSize + kUsedElemSize * size + kRingEventSize;
}

struct KVMMIO_EXPORT QueueLayout {
  uint32_t size = 0;   // QueueNum: entries in each part
  uint64_t desc = 0;   // Descriptor Area (descriptor table)
  uint64_t avail = 0;  // Driver Area (available ring)
  uint64_t used = 0;   // Device Area (used ring)
  bool operator==(const QueueLayout&) const = default;
};

enum class LayoutError {
  kNone,
  kSizeZero,
  kSizeNotPowerOfTwo,  // split rings only (2.7: "Queue Size value is always a power of 2")
  kSizeAboveMax,       // QueueNum > QueueNumMax (4.2.2)
  kDescMisaligned,
  kAvailMisaligned,
  kUsedMisaligned,
  kDescOutsideRam,  // not wholly inside one RAM region, or wrapping
  kAvailOutsideRam,
  kUsedOutsideRam,
};
KVMMIO_EXPORT const char* to_string(LayoutError error);

// Checks size and each part's alignment and extent in guest RAM.
KVMMIO_EXPORT LayoutError validate_layout(const GuestMemory& memory, const QueueLayout& layout, uint32_t max_size);

// The legacy layout (2.7.2): descriptor table at QueuePFN * GuestPageSize,
// the available ring right after it, the used ring at the next QueueAlign
// boundary. nullopt when page_size or align is not a power of two.
KVMMIO_EXPORT std::optional<QueueLayout> legacy_layout(uint32_t pfn, uint32_t page_size, uint32_t align,
                                         uint32_t size);

}  // namespace kvmmio::virtio
