// SPDX-License-Identifier: BSD-2-Clause
// DriverRing: a split ring written from the driver's side.
#include "driver_ring.h"

#include <atomic>
#include <stdexcept>
#include <vector>

namespace kvmmio::virtio::test {
namespace {

template <typename T>
void put(const GuestMemory& memory, uint64_t gpa, T value) {
  if (!memory.store(gpa, value)) throw std::out_of_range("DriverRing: write outside guest RAM");
}
template <typename T>
T get(const GuestMemory& memory, uint64_t gpa) {
  auto v = memory.load<T>(gpa);
  if (!v) throw std::out_of_range("DriverRing: read outside guest RAM");
  return *v;
}

}  // namespace

QueueLayout DriverRing::linux_layout(uint64_t base, uint32_t size, uint32_t align) {
  QueueLayout l;
  l.size = size;
  l.desc = base;
  l.avail = base + desc_table_bytes(size);
  l.used = (l.avail + avail_ring_bytes(size) + align - 1) & ~uint64_t{align - 1};
  return l;
}

uint64_t DriverRing::linux_layout_bytes(uint32_t size, uint32_t align) {
  const QueueLayout l = linux_layout(0, size, align);
  return l.used + used_ring_bytes(size);
}

DriverRing::DriverRing(const GuestMemory& memory, const QueueLayout& layout)
    : memory_(memory), layout_(layout) {
  const struct {
    uint64_t gpa, len;
  } parts[] = {{layout.desc, desc_table_bytes(layout.size)},
               {layout.avail, avail_ring_bytes(layout.size)},
               {layout.used, used_ring_bytes(layout.size)}};
  for (const auto& part : parts) {
    const std::vector<uint8_t> zeros(part.len, 0);
    if (!memory.write(part.gpa, zeros.data(), part.len))
      throw std::out_of_range("DriverRing: ring outside guest RAM");
  }
}

uint16_t DriverRing::next_desc() {
  const uint16_t i = next_free_;
  next_free_ = static_cast<uint16_t>((next_free_ + 1) % layout_.size);
  return i;
}

uint16_t DriverRing::add(std::span<const Buffer> buffers) {
  if (buffers.empty()) throw std::invalid_argument("DriverRing::add: empty chain");
  std::vector<uint16_t> ids(buffers.size());
  for (auto& id : ids) id = next_desc();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const bool last = i + 1 == buffers.size();
    const uint16_t flags = (buffers[i].writable ? 2 : 0) | (last ? 0 : 1);
    write_desc(ids[i], buffers[i].gpa, buffers[i].len, flags, last ? 0 : ids[i + 1]);
  }
  set_avail_entry(avail_shadow_ % layout_.size, ids[0]);
  ++avail_shadow_;
  return ids[0];
}

uint16_t DriverRing::add_indirect(std::span<const Buffer> buffers, uint64_t table_gpa) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const bool last = i + 1 == buffers.size();
    const uint16_t flags = (buffers[i].writable ? 2 : 0) | (last ? 0 : 1);
    write_desc_at(table_gpa + 16 * i, buffers[i].gpa, buffers[i].len, flags,
                  last ? 0 : static_cast<uint16_t>(i + 1));
  }
  const uint16_t head = next_desc();
  write_desc(head, table_gpa, static_cast<uint32_t>(16 * buffers.size()), 4, 0);
  set_avail_entry(avail_shadow_ % layout_.size, head);
  ++avail_shadow_;
  return head;
}

void DriverRing::publish() { set_avail_idx(avail_shadow_); }

void DriverRing::write_desc(uint16_t index, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next) {
  write_desc_at(layout_.desc + 16ull * index, addr, len, flags, next);
}

void DriverRing::write_desc_at(uint64_t gpa, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next) {
  put(memory_, gpa, addr);
  put(memory_, gpa + 8, len);
  put(memory_, gpa + 12, flags);
  put(memory_, gpa + 14, next);
}

void DriverRing::set_avail_entry(uint16_t slot, uint16_t head) {
  put(memory_, layout_.avail + 4 + 2ull * slot, head);
}
void DriverRing::set_avail_idx(uint16_t idx) {
  // A release store, as the driver's barrier before the idx update makes it
  // (2.7.13.3.1): what was written before is visible with the index.
  std::atomic_ref<uint16_t>(*field16(layout_.avail + 2)).store(idx, std::memory_order_release);
  avail_shadow_ = idx;
}
void DriverRing::set_avail_flags(uint16_t flags) { put(memory_, layout_.avail, flags); }
void DriverRing::set_used_event(uint16_t event) {
  put(memory_, layout_.avail + 4 + 2ull * layout_.size, event);
}
uint16_t DriverRing::avail_idx() const { return get<uint16_t>(memory_, layout_.avail + 2); }
uint16_t DriverRing::used_idx() const {
  return std::atomic_ref<uint16_t>(*field16(layout_.used + 2)).load(std::memory_order_acquire);
}

uint16_t* DriverRing::field16(uint64_t gpa) const {
  auto s = memory_.span(gpa, sizeof(uint16_t));
  if (!s) throw std::out_of_range("DriverRing: ring outside guest RAM");
  return reinterpret_cast<uint16_t*>(s->data());
}
uint16_t DriverRing::used_flags() const { return get<uint16_t>(memory_, layout_.used); }
uint16_t DriverRing::avail_event() const {
  return get<uint16_t>(memory_, layout_.used + 4 + 8ull * layout_.size);
}

std::optional<UsedElem> DriverRing::take_used() {
  if (used_idx() == last_used_) return std::nullopt;  // an acquire: the element is visible
  const uint64_t at = layout_.used + 4 + 8ull * (last_used_ % layout_.size);
  ++last_used_;
  const UsedElem elem{get<uint32_t>(memory_, at), get<uint32_t>(memory_, at + 4)};
  // virtqueue_enable_cb(): with EVENT_IDX, "interrupt me for the next one"
  // (ignored by a device that did not negotiate it).
  set_used_event(last_used_);
  return elem;
}

}  // namespace kvmmio::virtio::test
