// SPDX-License-Identifier: BSD-2-Clause
// DriverRing: the driver's side of a split virtqueue, built in real guest
// memory the way Linux's virtio_ring does it (vring_init layout, free-running
// indices, release before publishing avail idx), plus raw writers so tests
// can build the malformed rings a hostile guest would.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/queue_layout.h"

namespace kvmmio::virtio::test {

struct Buffer {
  uint64_t gpa = 0;
  uint32_t len = 0;
  bool writable = false;
};

struct UsedElem {
  uint32_t id = 0;
  uint32_t len = 0;
};

class DriverRing {
 public:
  // Linux's layout for both virtio-mmio versions (vring_init with
  // VIRTIO_MMIO_VRING_ALIGN = PAGE_SIZE): descriptors at `base`, the
  // available ring right after, the used ring at the next `align` boundary.
  static QueueLayout linux_layout(uint64_t base, uint32_t size, uint32_t align = 4096);
  // Bytes the layout spans from `base`.
  static uint64_t linux_layout_bytes(uint32_t size, uint32_t align = 4096);

  // Zeroes the ring memory (the driver "MUST initialize flags ... to 0").
  DriverRing(const GuestMemory& memory, const QueueLayout& layout);

  const QueueLayout& layout() const { return layout_; }

  // Adds a chain of direct descriptors (taken round-robin from the table),
  // returns its head. Visible to the device only after publish().
  uint16_t add(std::span<const Buffer> buffers);
  // Adds one descriptor pointing at an indirect table written at table_gpa.
  uint16_t add_indirect(std::span<const Buffer> buffers, uint64_t table_gpa);
  // Publishes everything added: the avail idx moves, with a release fence.
  void publish();

  // Raw access for hostile rings.
  void write_desc(uint16_t index, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next);
  void write_desc_at(uint64_t gpa, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next);
  void set_avail_entry(uint16_t slot, uint16_t head);
  void set_avail_idx(uint16_t idx);
  void set_avail_flags(uint16_t flags);
  void set_used_event(uint16_t event);
  uint16_t avail_idx() const;

  // The device's side, as the driver reads it.
  uint16_t used_idx() const;
  uint16_t used_flags() const;
  uint16_t avail_event() const;
  // The next used element not yet taken, if any; then asks for an
  // interrupt at the next one (used_event), as Linux re-enables callbacks.
  std::optional<UsedElem> take_used();

 private:
  uint16_t next_desc();
  uint16_t* field16(uint64_t gpa) const;
  const GuestMemory& memory_;
  QueueLayout layout_;
  uint16_t next_free_ = 0;
  uint16_t avail_shadow_ = 0;  // idx including added-but-unpublished chains
  uint16_t last_used_ = 0;
};

}  // namespace kvmmio::virtio::test
