// SPDX-License-Identifier: BSD-2-Clause
// QueueSet: queues going live and stopping (virtio 1.2 4.2.2 QueueReady,
// 4.2.4 QueuePFN), their rings at activation and reset.
#include "mmio_queues.h"

#include <bit>
#include <stdexcept>

#include "mmio_features.h"
#include "mmio_interrupts.h"
#include "mmio_lifecycle.h"

namespace kvmmio::virtio {

QueueSet::QueueSet(TransportContext& ctx, const FeatureNegotiation& features, const DeviceLifecycle& lifecycle,
                   TransportInterrupts& interrupts, QueueFaultSink& faults)
    : ctx_(ctx), features_(features), lifecycle_(lifecycle), interrupts_(interrupts) {
  const uint32_t n = ctx_.device.num_queues();
  queues_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint16_t max = ctx_.device.queue_max_size(i);
    if (max == 0 || !std::has_single_bit(max) || max > kMaxQueueSize)
      throw std::invalid_argument(ctx_.env.name + ": queue sizes must be powers of two <= 32768");
    queues_.emplace_back(ctx_.env.memory, i, max, ctx_.device.backend_owns_queue(i), &faults);
  }
}

void QueueSet::go_live(QueueState& q, const QueueLayout& layout) {
  q.layout = layout;
  q.ready = true;
  if (!lifecycle_.active()) return;  // DRIVER_OK will start it
  // A queue enabled after DRIVER_OK (or again after a queue reset).
  start_ring(q);
  update_bypass();
  ctx_.device.enable_queue(active_queue(q));
  if (!q.backend_owned) ctx_.device.queue_notify(q.index);
}

void QueueSet::stop(QueueState& q) {
  // The device (a backend) lets go of the ring and its fds first.
  if (lifecycle_.active()) ctx_.device.reset_queue(q.index);
  q.ring->stop();  // the device must not touch a queue that is not ready (4.2.2)
  q.ready = false;
  update_bypass();
}

std::vector<ActiveQueue> QueueSet::start_live() {
  std::vector<ActiveQueue> live;
  for (QueueState& q : queues_) {
    if (!q.ready) continue;
    start_ring(q);
    live.push_back(active_queue(q));
  }
  return live;
}

void QueueSet::stop_rings() {
  for (QueueState& q : queues_) q.ring->stop();
}

void QueueSet::notify_vmm_owned() {
  for (const QueueState& q : queues_) {
    if (q.ready && !q.backend_owned) ctx_.device.queue_notify(q.index);
  }
}

void QueueSet::reset() {
  for (QueueState& q : queues_) {
    q.ring->stop();
    q.ready = false;
    q.layout = {};
    q.reset_registers();
  }
  selected_ = 0;
}

void QueueSet::update_bypass() {
  // Only a backend writing the irqfd itself hides interrupts from the VMM.
  bool bypass = false;
  if (lifecycle_.active() && ctx_.options.irq == IrqMode::kIrqFd) {
    for (const QueueState& q : queues_) bypass |= q.ready && q.backend_owned;
  }
  interrupts_.set_bypass(bypass);
}

void QueueSet::start_ring(QueueState& q) {
  if (q.backend_owned) return;  // the backend processes this ring
  q.ring->configure(q.layout, {.event_idx = features_.accepted(feature::kRingEventIdx),
                               .indirect = features_.accepted(feature::kRingIndirectDesc)});
}

ActiveQueue QueueSet::active_queue(QueueState& q) {
  ActiveQueue a;
  a.index = q.index;
  a.layout = q.layout;
  if (q.backend_owned) {
    a.notify_fd = q.notify_fd();
    a.interrupt_fd = interrupts_.fd();
  } else {
    a.ring = q.ring.get();
  }
  return a;
}

}  // namespace kvmmio::virtio
