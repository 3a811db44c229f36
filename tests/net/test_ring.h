// TestRing: a split virtqueue laid out in guest memory and driven from the
// driver's side (as Linux's virtio_ring does), for tests of device backends:
// add buffers, publish them in the avail ring, collect used entries.
// Memory order: descriptors before the avail index (release); the used index
// before the used entries (acquire).
#pragma once

#include <linux/virtio_ring.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "kvmmio/guest_memory.h"

namespace kvmmio::test {

class TestRing {
 public:
  TestRing(GuestMemory& memory, uint64_t desc, uint64_t avail, uint64_t used, uint16_t size)
      : mem_(memory), desc_(desc), avail_(avail), used_(used), size_(size) {
    auto d = mem_.span(desc, 16ull * size), a = mem_.span(avail, 6 + 2ull * size),
         u = mem_.span(used, 6 + 8ull * size);
    if (!d || !a || !u) throw std::invalid_argument("test ring outside guest memory");
    std::fill(d->begin(), d->end(), 0);
    std::fill(a->begin(), a->end(), 0);
    std::fill(u->begin(), u->end(), 0);
  }

  uint64_t desc_gpa() const { return desc_; }
  uint64_t avail_gpa() const { return avail_; }
  uint64_t used_gpa() const { return used_; }
  uint16_t size() const { return size_; }

  // Puts one single-descriptor buffer in the ring and publishes it.
  void add_buffer(uint16_t id, uint64_t addr, uint32_t len, bool device_writable) {
    vring_desc d{};
    d.addr = addr;
    d.len = len;
    d.flags = device_writable ? VRING_DESC_F_WRITE : 0;
    mem_.store(desc_ + 16ull * (id % size_), d);
    mem_.store<uint16_t>(avail_ + 4 + 2ull * (avail_idx_ % size_), id);
    ++avail_idx_;
    ref(avail_ + 2).store(avail_idx_, std::memory_order_release);
  }

  struct Used {
    uint32_t id;
    uint32_t len;
  };
  // The next used entry, if the device has published one.
  std::optional<Used> next_used() {
    const uint16_t idx = ref(used_ + 2).load(std::memory_order_acquire);
    if (idx == used_seen_) return std::nullopt;
    const uint64_t at = used_ + 4 + 8ull * (used_seen_ % size_);
    ++used_seen_;
    return Used{*mem_.load<uint32_t>(at), *mem_.load<uint32_t>(at + 4)};
  }
  uint16_t avail_idx() const { return avail_idx_; }

 private:
  std::atomic_ref<uint16_t> ref(uint64_t gpa) {
    return std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t*>(mem_.span(gpa, 2)->data()));
  }

  GuestMemory& mem_;
  uint64_t desc_, avail_, used_;
  uint16_t size_;
  uint16_t avail_idx_ = 0;
  uint16_t used_seen_ = 0;
};

}  // namespace kvmmio::test
