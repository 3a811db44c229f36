// SPDX-License-Identifier: BSD-2-Clause
// QueueDrain: the budgeted drain loop (see the header).
#include "kvmmio/virtio/queue_drain.h"

namespace kvmmio::virtio {

void QueueDrain::bind(SplitQueue* ring, VirtioInterrupt* interrupt) {
  ring_ = ring;
  interrupt_ = interrupt;
  paused_ = false;
}

DrainResult QueueDrain::run(const DrainBudget& budget, const Handler& handle) {
  DrainResult r;
  if (!ring_) return r;
  for (;;) {
    ring_->disable_notifies();
    r.stop = DrainStop::kEmpty;
    while (r.stop == DrainStop::kEmpty) {
      if (!paused_) {
        if (r.chains >= budget.chains || r.bytes >= budget.bytes) {
          r.stop = DrainStop::kBudget;
          break;
        }
        const SplitQueue::PopResult popped = ring_->pop(chain_);
        if (popped == SplitQueue::PopResult::kEmpty) break;
        if (popped == SplitQueue::PopResult::kBroken) {
          r.stop = DrainStop::kBroken;
          break;
        }
        ++r.chains;
      }
      paused_ = false;
      const uint64_t left = budget.bytes > r.bytes ? budget.bytes - r.bytes : 0;
      const ChainStep step = handle(chain_, left);
      r.bytes += step.bytes;
      switch (step.kind) {
        case ChainStep::Kind::kUsed:
          ring_->push_used(chain_.head, step.written);
          break;
        case ChainStep::Kind::kKept:
          break;
        case ChainStep::Kind::kPaused:
          paused_ = true;
          r.stop = DrainStop::kPaused;
          break;
        case ChainStep::Kind::kUnfinished:
          paused_ = true;
          r.stop = DrainStop::kBudget;
          break;
        case ChainStep::Kind::kLast:
          ring_->push_used(chain_.head, step.written);
          r.stop = DrainStop::kLast;
          break;
        case ChainStep::Kind::kFailed:
          r.stop = DrainStop::kFailed;
          break;
      }
    }
    // Buffers the driver added after the last pop but before notifies were
    // enabled again would otherwise wait for a notify that never comes.
    if (r.stop != DrainStop::kEmpty || !ring_->enable_notifies()) break;
  }
  // The device has no more work for now: the driver's next buffers must
  // notify it.
  if (r.stop == DrainStop::kLast) ring_->enable_notifies();
  if (r.stop == DrainStop::kBudget && on_budget_) on_budget_();
  interrupt_if_due();
  return r;
}

void QueueDrain::complete(uint16_t head, uint32_t written) {
  if (ring_) ring_->push_used(head, written);
}

void QueueDrain::interrupt_if_due() {
  // should_interrupt() is false when nothing was pushed since its last answer.
  if (ring_ && ring_->should_interrupt() && interrupt_) interrupt_->signal_used();
}

}  // namespace kvmmio::virtio
