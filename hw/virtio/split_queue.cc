// SPDX-License-Identifier: BSD-2-Clause
// SplitQueue: available-ring consumption with chain validation, used-ring
// publication, and notification suppression (virtio 1.2 2.7).
#include "kvmmio/virtio/split_queue.h"

#include <atomic>
#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace kvmmio::virtio {

// Modern rings are little-endian (2.7); legacy rings use the guest's byte
// order (2.7.3), which on every supported guest (arm64, x86-64 Linux) is
// little-endian too. A big-endian host would need byte swaps here.
static_assert(std::endian::native == std::endian::little, "ring accessors assume a little-endian host");

namespace {

// Offsets inside the ring parts (2.7.6 virtq_avail, 2.7.8 virtq_used).
constexpr uint64_t kFlagsOffset = 0;
constexpr uint64_t kIdxOffset = 2;
constexpr uint64_t kRingOffset = kRingHeaderSize;
constexpr uint64_t avail_entry(uint32_t slot) { return kRingOffset + 2ull * slot; }
constexpr uint64_t used_entry(uint32_t slot) { return kRingOffset + kUsedElemSize * slot; }
constexpr uint64_t used_event_offset(uint32_t size) { return avail_entry(size); }  // in avail
constexpr uint64_t avail_event_offset(uint32_t size) { return used_entry(size); }  // in used

// 16-bit ring fields the guest reads or writes concurrently. The layout was
// validated (parts 2- or 4-aligned, offsets even), so these are aligned.
std::atomic_ref<uint16_t> field16(std::span<uint8_t> part, uint64_t offset) {
  return std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t*>(part.data() + offset));
}

// A descriptor as it lies in guest memory (2.7.5).
struct RawDesc {
  uint64_t addr;
  uint32_t len;
  uint16_t flags;
  uint16_t next;
};
static_assert(sizeof(RawDesc) == kDescSize);

// vring_need_event() of 2.7.10: has `new_idx` passed `event` since `old_idx`?
bool need_event(uint16_t event, uint16_t new_idx, uint16_t old_idx) {
  return static_cast<uint16_t>(new_idx - event - 1) < static_cast<uint16_t>(new_idx - old_idx);
}

}  // namespace

const char* to_string(QueueError error) {
  switch (error) {
    case QueueError::kAvailIndexJump: return "available index moved by more than the queue size";
    case QueueError::kHeadOutOfRange: return "available ring entry beyond the queue size";
    case QueueError::kNextOutOfRange: return "descriptor next index beyond its table";
    case QueueError::kChainTooLong: return "descriptor chain longer than the queue size (loop?)";
    case QueueError::kBufferOutsideRam: return "descriptor buffer outside guest RAM or wrapping";
    case QueueError::kChainBytesTooLarge: return "descriptor chain longer than 2^32 - 1 bytes";
    case QueueError::kWritableBeforeReadable: return "device-readable descriptor after a device-writable one";
    case QueueError::kIndirectNotNegotiated: return "indirect descriptor without VIRTIO_F_INDIRECT_DESC";
    case QueueError::kNestedIndirect: return "indirect descriptor inside an indirect table";
    case QueueError::kIndirectWithNext: return "indirect descriptor with the NEXT flag";
    case QueueError::kIndirectBadLength: return "indirect table length zero or not a multiple of 16";
    case QueueError::kIndirectTableOutsideRam: return "indirect table outside guest RAM or wrapping";
  }
  return "?";
}

SplitQueue::SplitQueue(const GuestMemory& memory, uint32_t index, QueueFaultSink* faults)
    : memory_(memory), index_(index), faults_(faults) {}

void SplitQueue::configure(const QueueLayout& layout, Features features) {
  if (validate_layout(memory_, layout, layout.size) != LayoutError::kNone)
    throw std::invalid_argument("SplitQueue::configure: layout not validated");
  layout_ = layout;
  features_ = features;
  desc_ = *memory_.span(layout.desc, desc_table_bytes(layout.size));
  avail_ = *memory_.span(layout.avail, avail_ring_bytes(layout.size));
  used_ = *memory_.span(layout.used, used_ring_bytes(layout.size));
  next_avail_ = next_used_ = 0;
  signalled_used_.reset();
  pushed_since_decision_ = false;
  notifications_disabled_ = false;
  broken_ = false;
  enabled_ = true;
}

void SplitQueue::stop() {
  enabled_ = false;
  desc_ = avail_ = used_ = {};
}

uint16_t SplitQueue::avail_idx_acquire() const {
  // Acquire: the ring entries and descriptors this index exposes were
  // written before it (the driver's barrier of 2.7.13.3.1).
  return field16(avail_, kIdxOffset).load(std::memory_order_acquire);
}

SplitQueue::PopResult SplitQueue::fail(QueueError error) {
  broken_ = true;
  if (faults_) faults_->queue_fault(index_, error);
  return PopResult::kBroken;
}

SplitQueue::PopResult SplitQueue::pop(DescriptorChain& chain) {
  if (!enabled_) return PopResult::kEmpty;
  if (broken_) return PopResult::kBroken;
  uint16_t avail = avail_idx_acquire();
  if (avail == next_avail_ && features_.event_idx && !notifications_disabled_) {
    // Going idle: ask for a notify at the next entry (avail_event, 2.7.10),
    // then look again. Without the full fence the store could pass the
    // re-read, and a buffer added in between would come without a notify.
    field16(used_, avail_event_offset(layout_.size)).store(next_avail_, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    avail = avail_idx_acquire();
  }
  const uint16_t pending = static_cast<uint16_t>(avail - next_avail_);
  if (pending == 0) return PopResult::kEmpty;
  // The driver cannot have more chains outstanding than the ring holds.
  if (pending > layout_.size) return fail(QueueError::kAvailIndexJump);

  const uint32_t slot = next_avail_ & (layout_.size - 1);
  const uint16_t head = field16(avail_, avail_entry(slot)).load(std::memory_order_relaxed);
  chain.clear();
  chain.head = head;
  QueueError error;
  if (!walk(head, chain, &error)) return fail(error);
  ++next_avail_;
  return PopResult::kChain;
}

SplitQueue::Desc SplitQueue::read_desc(std::span<const uint8_t> table, uint32_t i) const {
  // One copy of the descriptor: the guest may rewrite it meanwhile, and
  // every check below is made on this copy only.
  RawDesc raw;
  std::memcpy(&raw, table.data() + uint64_t{i} * kDescSize, sizeof(raw));
  return {raw.addr, raw.len, raw.flags, raw.next};
}

bool SplitQueue::add_segment(const Desc& d, DescriptorChain& chain, bool* seen_writable,
                             QueueError* error) const {
  const bool writable = (d.flags & desc_flag::kWrite) != 0;
  if (!writable && *seen_writable) {
    *error = QueueError::kWritableBeforeReadable;
    return false;
  }
  if (!memory_.span(d.addr, d.len)) {
    *error = QueueError::kBufferOutsideRam;
    return false;
  }
  // A used length is 32 bits; a chain may not describe more (2.7.5).
  if (chain.readable_bytes + chain.writable_bytes + d.len > std::numeric_limits<uint32_t>::max()) {
    *error = QueueError::kChainBytesTooLarge;
    return false;
  }
  *seen_writable |= writable;
  (writable ? chain.writable_bytes : chain.readable_bytes) += d.len;
  chain.segments.push_back({d.addr, d.len, writable});
  return true;
}

bool SplitQueue::walk(uint16_t head, DescriptorChain& chain, QueueError* error) const {
  const uint32_t size = layout_.size;
  if (head >= size) {
    *error = QueueError::kHeadOutOfRange;
    return false;
  }
  std::span<const uint8_t> table = desc_;
  uint32_t table_entries = size;
  uint32_t i = head;
  bool in_indirect = false;
  bool seen_writable = false;
  // Buffers in the chain, direct and indirect together. A driver may not
  // build a chain longer than the queue size (2.7.5.3.1), so more than that
  // is a loop or a violation; either way the walk ends.
  uint32_t buffers = 0;
  for (;;) {
    const Desc d = read_desc(table, i);
    if (d.flags & desc_flag::kIndirect) {
      // Zero or more direct descriptors, then one indirect one that ends
      // the direct part (2.7.5.3.2). Its WRITE flag is ignored.
      if (!features_.indirect) *error = QueueError::kIndirectNotNegotiated;
      else if (in_indirect) *error = QueueError::kNestedIndirect;
      else if (d.flags & desc_flag::kNext) *error = QueueError::kIndirectWithNext;
      else if (d.len == 0 || d.len % kDescSize) *error = QueueError::kIndirectBadLength;
      else if (auto t = memory_.span(d.addr, d.len)) {
        table = *t;
        table_entries = d.len / kDescSize;
        i = 0;
        in_indirect = true;
        continue;
      } else {
        *error = QueueError::kIndirectTableOutsideRam;
      }
      return false;
    }
    if (++buffers > size) {
      *error = QueueError::kChainTooLong;
      return false;
    }
    if (!add_segment(d, chain, &seen_writable, error)) return false;
    if (!(d.flags & desc_flag::kNext)) return true;
    if (d.next >= table_entries) {
      *error = QueueError::kNextOutOfRange;
      return false;
    }
    i = d.next;
  }
}

void SplitQueue::push_used(uint16_t head, uint32_t written) {
  const UsedElement one{head, written};
  push_used(std::span<const UsedElement>(&one, 1));
}

void SplitQueue::push_used(std::span<const UsedElement> elements) {
  if (!enabled_ || broken_) return;
  const uint16_t before = next_used_;
  for (const UsedElement& e : elements) {
    if (e.head >= layout_.size) continue;
    const uint32_t slot = next_used_ & (layout_.size - 1);
    const uint32_t elem[2] = {e.head, e.written};  // virtq_used_elem: le32 id, le32 len
    std::memcpy(used_.data() + used_entry(slot), elem, sizeof(elem));
    ++next_used_;
  }
  if (next_used_ == before) return;
  pushed_since_decision_ = true;
  // Release: the elements (and the buffer contents) before the index (2.7.8).
  field16(used_, kIdxOffset).store(next_used_, std::memory_order_release);
}

bool SplitQueue::should_interrupt() {
  if (!enabled_) return false;
  // The used index must be visible before the driver's suppression fields
  // are read, or both sides can decide the other will act (2.7.7.2).
  if (!pushed_since_decision_) return false;
  pushed_since_decision_ = false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::optional<uint16_t> old = signalled_used_;
  signalled_used_ = next_used_;
  if (!features_.event_idx) {
    const uint16_t flags = field16(avail_, kFlagsOffset).load(std::memory_order_relaxed);
    return !(flags & kAvailFlagNoInterrupt);
  }
  if (!old) return true;  // no earlier decision to measure against
  const uint16_t used_event =
      field16(avail_, used_event_offset(layout_.size)).load(std::memory_order_relaxed);
  return need_event(used_event, next_used_, *old);
}

void SplitQueue::disable_notifies() {
  if (!enabled_) return;
  notifications_disabled_ = true;
  // With EVENT_IDX the flags must stay 0 (2.7.10); not moving avail_event
  // is the suppression.
  if (!features_.event_idx)
    field16(used_, kFlagsOffset).store(kUsedFlagNoNotify, std::memory_order_relaxed);
}

bool SplitQueue::enable_notifies() {
  if (!enabled_) return false;
  notifications_disabled_ = false;
  if (features_.event_idx)
    field16(used_, avail_event_offset(layout_.size)).store(next_avail_, std::memory_order_relaxed);
  else
    field16(used_, kFlagsOffset).store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return !broken_ && avail_idx_acquire() != next_avail_;
}

}  // namespace kvmmio::virtio
