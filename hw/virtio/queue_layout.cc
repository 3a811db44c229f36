// SPDX-License-Identifier: BSD-2-Clause
// Split-ring layout checks (virtio 1.2 2.7) and the legacy layout (2.7.2).
#include "kvmmio/virtio/queue_layout.h"

#include <bit>

#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {

const char* to_string(LayoutError error) {
  switch (error) {
    case LayoutError::kNone: return "valid";
    case LayoutError::kSizeZero: return "queue size is zero";
    case LayoutError::kSizeNotPowerOfTwo: return "queue size is not a power of two";
    case LayoutError::kSizeAboveMax: return "queue size exceeds QueueNumMax";
    case LayoutError::kDescMisaligned: return "descriptor table not 16-byte aligned";
    case LayoutError::kAvailMisaligned: return "available ring not 2-byte aligned";
    case LayoutError::kUsedMisaligned: return "used ring not 4-byte aligned";
    case LayoutError::kDescOutsideRam: return "descriptor table outside guest RAM";
    case LayoutError::kAvailOutsideRam: return "available ring outside guest RAM";
    case LayoutError::kUsedOutsideRam: return "used ring outside guest RAM";
  }
  return "?";
}

LayoutError validate_layout(const GuestMemory& memory, const QueueLayout& layout, uint32_t max_size) {
  const uint32_t n = layout.size;
  if (n == 0) return LayoutError::kSizeZero;
  if (!std::has_single_bit(n)) return LayoutError::kSizeNotPowerOfTwo;
  if (n > max_size || n > kMaxQueueSize) return LayoutError::kSizeAboveMax;
  if (layout.desc % kDescAlign) return LayoutError::kDescMisaligned;
  if (layout.avail % kAvailAlign) return LayoutError::kAvailMisaligned;
  if (layout.used % kUsedAlign) return LayoutError::kUsedMisaligned;
  // span() refuses ranges that wrap or leave a RAM region.
  if (!memory.span(layout.desc, desc_table_bytes(n))) return LayoutError::kDescOutsideRam;
  if (!memory.span(layout.avail, avail_ring_bytes(n))) return LayoutError::kAvailOutsideRam;
  if (!memory.span(layout.used, used_ring_bytes(n))) return LayoutError::kUsedOutsideRam;
  return LayoutError::kNone;
}

std::optional<QueueLayout> legacy_layout(uint32_t pfn, uint32_t page_size, uint32_t align,
                                         uint32_t size) {
  if (!std::has_single_bit(page_size) || !std::has_single_bit(align)) return std::nullopt;
  // pfn < 2^32 and page_size <= 2^31, so every sum below stays under 2^64.
  QueueLayout layout;
  layout.size = size;
  layout.desc = uint64_t{pfn} * page_size;
  layout.avail = layout.desc + desc_table_bytes(size);
  const uint64_t avail_end = layout.avail + avail_ring_bytes(size);
  layout.used = (avail_end + align - 1) & ~(uint64_t{align} - 1);
  return layout;
}

}  // namespace kvmmio::virtio
