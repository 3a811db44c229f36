// SPDX-License-Identifier: BSD-2-Clause
// SplitQueue: the device side of one split virtqueue (virtio 1.2 section
// 2.7): pops descriptor chains from the available ring, validated, and
// publishes used elements, with VIRTIO_F_EVENT_IDX notification suppression
// both ways (2.7.7, 2.7.10).
//
// The guest is hostile. Every guest-memory access goes through
// GuestMemory::span(): the three ring parts are looked up once when the
// queue is configured (their layout was validated, so the spans cover them
// exactly) and indexed modulo the queue size; indirect tables and buffers are
// looked up per chain. A malformed chain never yields a chain: the queue
// reports a QueueError to its fault sink (the transport: guest error,
// DEVICE_NEEDS_RESET) and stays broken until reconfigured.
//
// Memory ordering against the guest on other CPUs: the avail index is read
// with acquire before the ring entries it exposes; used elements are written
// before the used index is published with release; a full fence separates
// publishing from reading the driver's suppression fields (2.7.7.2, 2.7.10).
//
// Not thread-safe: one thread at a time (the transport serialises callers).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "kvmmio/base/export.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/descriptor_chain.h"
#include "kvmmio/virtio/queue_layout.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::virtio {


enum class QueueError {
  kAvailIndexJump,          // avail idx moved more than the queue size (2.7.6)
  kHeadOutOfRange,          // avail ring entry >= queue size
  kNextOutOfRange,          // next >= table size
  kChainTooLong,            // longer than the queue size: a loop, or 2.7.5.3.1
  kBufferOutsideRam,        // addr/len not wholly in one RAM region, or wrapping
  kChainBytesTooLarge,      // more than 2^32 - 1 bytes in total (2.7.5)
  kWritableBeforeReadable,  // 2.7.4.2
  kIndirectNotNegotiated,   // 2.7.5.3.1
  kNestedIndirect,          // INDIRECT inside an indirect table (2.7.5.3.1)
  kIndirectWithNext,        // INDIRECT together with NEXT (2.7.5.3.1)
  kIndirectBadLength,       // table length zero or not a multiple of 16
  kIndirectTableOutsideRam,
};
KVMMIO_EXPORT const char* to_string(QueueError error);

// Where a queue reports malformed input. The transport implements it.
class KVMMIO_EXPORT QueueFaultSink {
 public:
  virtual void queue_fault(uint32_t queue_index, QueueError error) = 0;

 protected:
  ~QueueFaultSink() = default;
};

class KVMMIO_EXPORT SplitQueue {
 public:
  struct Features {
    bool event_idx = false;  // VIRTIO_F_EVENT_IDX negotiated
    bool indirect = false;   // VIRTIO_F_INDIRECT_DESC negotiated
  };
  enum class PopResult { kChain, kEmpty, kBroken };

  SplitQueue(const GuestMemory& memory, uint32_t index, QueueFaultSink* faults = nullptr);
  SplitQueue(const SplitQueue&) = delete;
  SplitQueue& operator=(const SplitQueue&) = delete;

  // Starts using `layout` with fresh indices (both 0, 2.7.13). The layout
  // must pass validate_layout() with max_size = layout.size, else
  // std::invalid_argument (a transport bug, not a guest error).
  void configure(const QueueLayout& layout, Features features);
  // Stops touching guest memory (QueueReady = 0, reset). pop() reports
  // kEmpty, push_used() is ignored, until configure() again.
  void stop();

  bool enabled() const { return enabled_; }
  bool broken() const { return broken_; }
  uint32_t index() const { return index_; }
  const QueueLayout& layout() const { return layout_; }
  Features features() const { return features_; }
  uint16_t next_avail() const { return next_avail_; }
  uint16_t next_used() const { return next_used_; }

  // The next available chain, validated, into `chain` (whose vector is
  // reused, so steady-state pops do not allocate).
  PopResult pop(DescriptorChain& chain);

  // Returns chain `head` to the driver with `written` bytes written to its
  // device-writable part (2.7.8). Publishes the used index immediately.
  void push_used(uint16_t head, uint32_t written);

  // Several chains the driver must see together, e.g. the buffers of one
  // mergeable RX frame (5.1.6.4: a driver that finds fewer than num_buffers
  // used drops the frame): every element is written, then the used index
  // moves once, past all of them.
  struct UsedElement {
    uint16_t head;
    uint32_t written;
  };
  void push_used(std::span<const UsedElement> elements);

  // Whether the driver wants a used-buffer notification for what was pushed
  // since the last call that returned true (2.7.7.2: flags, or used_event
  // with EVENT_IDX, the vring_need_event() rule of 2.7.10).
  bool should_interrupt();

  // Available-buffer notification suppression (2.7.10): while processing,
  // a device may ask the driver not to notify; re-enabling returns whether
  // buffers arrived meanwhile (then the device must keep popping, or a
  // notify is lost).
  void disable_notifies();
  bool enable_notifies();

 private:
  struct Desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
  };
  Desc read_desc(std::span<const uint8_t> table, uint32_t i) const;
  bool walk(uint16_t head, DescriptorChain& chain, QueueError* error) const;
  bool add_segment(const Desc& d, DescriptorChain& chain, bool* seen_writable, QueueError* error) const;
  PopResult fail(QueueError error);
  uint16_t avail_idx_acquire() const;

  const GuestMemory& memory_;
  uint32_t index_;
  QueueFaultSink* faults_;
  QueueLayout layout_;
  Features features_;
  bool enabled_ = false;
  bool broken_ = false;
  std::span<uint8_t> desc_, avail_, used_;
  uint16_t next_avail_ = 0;  // the driver's avail entries consumed so far
  uint16_t next_used_ = 0;   // used idx published so far
  // The used idx at the last notification decision (vhost's signalled_used),
  // and whether anything was pushed since.
  std::optional<uint16_t> signalled_used_;
  bool pushed_since_decision_ = false;
  bool notifications_disabled_ = false;
};

}  // namespace kvmmio::virtio
