// SPDX-License-Identifier: BSD-2-Clause
// QueueDrain: the one loop every device runs over a VMM-owned queue whose
// work the driver posts (virtio 1.2 section 2.7): suppress the driver's
// notifies, pop chains, let the device handle each, return them as used,
// stop at the work budget, re-enable notifies and look again (the race with
// the driver, 2.7.10), then decide on the interrupt (flags or EVENT_IDX,
// 2.7.7.2). The one queue that keeps its own loop is net RX in the
// userspace backend, where the tap, not the driver, brings the work and one
// frame can fill several chains (hw/net/user_backend.cc says why).
//
// Per run() at most budget.chains chains and about budget.bytes bytes (the
// device reports what each chain cost). At the budget the loop stops with
// the driver's notifies still suppressed and calls `on_budget`, which
// re-queues the rest (DeferredWork::schedule(), or a caller that comes
// back): the work is re-scheduled, never dropped, and no callback does
// more than one budget.
//
// What the device does with a chain (ChainStep):
//  - used(written): done, returned to the driver now;
//  - kept(): the device holds the chain and completes it later with
//    complete() (a request served asynchronously: pop now, push used
//    later), then decides on the interrupt with interrupt_if_due();
//  - paused(): the chain is not finished and the device waits for
//    something outside (an fd with room) and calls run() again itself; the
//    same chain comes first in that run; notifies stay suppressed;
//  - unfinished(): likewise, but the byte budget ran out inside the chain:
//    a budget stop;
//  - last(written): done, and the device wants no more chains for now;
//  - failed(): the chain broke the device's rules (it has called
//    needs_reset()); the drain stops.
// A malformed chain never reaches the device: the ring reports it to the
// transport (guest error, DEVICE_NEEDS_RESET) and the drain stops.
//
// Not thread-safe: the device lock serialises callers, as for the ring.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>

#include "kvmmio/base/export.h"
#include "kvmmio/virtio/descriptor_chain.h"
#include "kvmmio/virtio/split_queue.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::virtio {

struct KVMMIO_EXPORT ChainStep {
  enum class Kind { kUsed, kKept, kPaused, kUnfinished, kLast, kFailed };
  Kind kind = Kind::kUsed;
  uint32_t written = 0;  // kUsed, kLast: bytes written to the chain's device-writable part
  uint64_t bytes = 0;    // the work this step cost, counted against the byte budget

  static ChainStep used(uint32_t written, uint64_t bytes = 0) { return {Kind::kUsed, written, bytes}; }
  static ChainStep kept(uint64_t bytes = 0) { return {Kind::kKept, 0, bytes}; }
  static ChainStep paused(uint64_t bytes = 0) { return {Kind::kPaused, 0, bytes}; }
  static ChainStep unfinished(uint64_t bytes) { return {Kind::kUnfinished, 0, bytes}; }
  static ChainStep last(uint32_t written, uint64_t bytes = 0) { return {Kind::kLast, written, bytes}; }
  static ChainStep failed() { return {Kind::kFailed, 0, 0}; }
};

struct KVMMIO_EXPORT DrainBudget {
  unsigned chains = 0;  // chains popped per run
  uint64_t bytes = std::numeric_limits<uint64_t>::max();
};

enum class DrainStop {
  kEmpty,   // the ring had nothing more, notifies are enabled again
  kBudget,  // at the budget: on_budget re-queued the rest, notifies stay suppressed
  kPaused,  // the device paused on a chain and resumes the drain itself
  kLast,    // the device wanted no more chains
  kFailed,  // the device refused a chain
  kBroken,  // the ring found a malformed chain (reported by the ring)
  kStopped, // no ring (not active)
};

struct KVMMIO_EXPORT DrainResult {
  DrainStop stop = DrainStop::kStopped;
  unsigned chains = 0;  // popped in this run
  uint64_t bytes = 0;   // what the steps reported
};

class KVMMIO_EXPORT QueueDrain {
 public:
  // Handles one chain; `bytes_left` is what remains of the byte budget.
  using Handler = std::function<ChainStep(const DescriptorChain& chain, uint64_t bytes_left)>;

  // `on_budget` runs at every budget stop, holding the device lock.
  explicit QueueDrain(std::function<void()> on_budget = {}) : on_budget_(std::move(on_budget)) {}
  QueueDrain(const QueueDrain&) = delete;
  QueueDrain& operator=(const QueueDrain&) = delete;

  // The ring to drain and the interrupt to raise (activation, enable_queue);
  // forgets a paused chain (it belonged to the driver before the reset).
  void bind(SplitQueue* ring, VirtioInterrupt* interrupt);
  void unbind() { bind(nullptr, nullptr); }
  SplitQueue* ring() const { return ring_; }

  DrainResult run(const DrainBudget& budget, const Handler& handle);

  // A kept chain is done: returns it with `written` bytes; call
  // interrupt_if_due() once after a batch of completions.
  void complete(uint16_t head, uint32_t written);
  void interrupt_if_due();

 private:
  std::function<void()> on_budget_;
  SplitQueue* ring_ = nullptr;
  VirtioInterrupt* interrupt_ = nullptr;
  DescriptorChain chain_;  // reused: steady-state pops do not allocate
  bool paused_ = false;    // chain_ is a paused or unfinished chain, offered first
};

}  // namespace kvmmio::virtio
