// SPDX-License-Identifier: BSD-2-Clause
// QueueSet: the queue registers, queues going live and stopping (virtio 1.2
// 4.2.2 QueueReady, 4.2.4 QueuePFN), their rings at activation and reset.
#include "mmio_queues.h"

#include <bit>
#include <stdexcept>
#include <utility>

namespace kvmmio::virtio {
namespace {

void set_half(uint64_t& address, bool high, uint32_t value) {
  address = high ? (address & uint64_t{0xffffffff}) | (uint64_t{value} << 32)
                 : (address & ~uint64_t{0xffffffff}) | value;
}

}  // namespace

QueueSet::QueueSet(TransportContext& ctx, QueueFaultSink& faults) : ctx_(ctx) {
  const uint32_t n = ctx_.device.num_queues();
  queues_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint16_t max = ctx_.device.queue_max_size(i);
    if (max == 0 || !std::has_single_bit(max) || max > kMaxQueueSize)
      throw std::invalid_argument(ctx_.env.name + ": queue sizes must be powers of two <= 32768");
    queues_.emplace_back(ctx_.env.memory, i, max, ctx_.device.backend_owns_queue(i), &faults);
  }
}

bool QueueSet::set_size(uint32_t num) {
  QueueState* q = selected_mutable();
  if (!q || q->ready) return false;
  q->num = num;
  return true;
}

bool QueueSet::set_address(QueueAddress which, bool high_half, uint32_t value) {
  QueueState* q = selected_mutable();
  if (!q || q->ready) return false;
  switch (which) {
    case QueueAddress::kDesc: set_half(q->desc, high_half, value); break;
    case QueueAddress::kDriver: set_half(q->driver, high_half, value); break;
    case QueueAddress::kDevice: set_half(q->device, high_half, value); break;
  }
  return true;
}

bool QueueSet::set_align(uint32_t align) {
  QueueState* q = selected_mutable();
  if (!q || q->ready) return false;
  q->align = align;
  return true;
}

QueueLayout QueueSet::modern_layout() const {
  const QueueState* q = selected();
  return q ? QueueLayout{q->num, q->desc, q->driver, q->device} : QueueLayout{};
}

void QueueSet::go_live(const QueueLayout& layout, uint32_t pfn) {
  QueueState* q = selected_mutable();
  if (!q || q->ready) return;
  q->layout = layout;
  q->pfn = pfn;
  q->ready = true;
  if (!active_) return;  // DRIVER_OK will start it
  // A queue enabled after DRIVER_OK (or again after a queue reset).
  start_ring(*q, *active_);
  update_bypass();
  ctx_.device.enable_queue(active_queue(*q, *active_));
  if (!q->backend_owned) ctx_.device.queue_notify(q->index);
}

void QueueSet::stop_selected(bool reset_registers) {
  QueueState* q = selected_mutable();
  if (!q) return;
  if (q->ready) stop(*q);
  if (reset_registers) q->reset_registers();
}

void QueueSet::stop(QueueState& q) {
  // The device (a backend) lets go of the ring and its fds first.
  if (active_) ctx_.device.reset_queue(q.index);
  q.ring->stop();  // the device must not touch a queue that is not ready (4.2.2)
  q.ready = false;
  update_bypass();
}

std::vector<ActiveQueue> QueueSet::start_live(const QueueActivation& activation) {
  starting_ = activation;
  std::vector<ActiveQueue> live;
  for (QueueState& q : queues_) {
    if (!q.ready) continue;
    start_ring(q, activation);
    live.push_back(active_queue(q, activation));
  }
  return live;
}

void QueueSet::abort_start() {
  for (QueueState& q : queues_) q.ring->stop();
  starting_.reset();
}

void QueueSet::activated() {
  active_ = std::exchange(starting_, std::nullopt);
  update_bypass();
  for (const QueueState& q : queues_) {
    if (q.ready && !q.backend_owned) ctx_.device.queue_notify(q.index);
  }
}

void QueueSet::deactivated() {
  active_.reset();
  update_bypass();
}

void QueueSet::reset() {
  active_.reset();
  starting_.reset();
  for (QueueState& q : queues_) {
    q.ring->stop();
    q.ready = false;
    q.layout = {};
    q.reset_registers();
  }
  selected_ = 0;
  update_bypass();
}

void QueueSet::update_bypass() {
  // Only a backend writing the irqfd itself hides interrupts from the VMM.
  bool bypass = false;
  if (active_ && ctx_.options.irq == IrqMode::kIrqFd) {
    for (const QueueState& q : queues_) bypass |= q.ready && q.backend_owned;
  }
  bypass_.store(bypass);
}

void QueueSet::start_ring(QueueState& q, const QueueActivation& activation) {
  if (q.backend_owned) return;  // the backend processes this ring
  q.ring->configure(q.layout, activation.rings);
}

ActiveQueue QueueSet::active_queue(QueueState& q, const QueueActivation& activation) {
  ActiveQueue a;
  a.index = q.index;
  a.layout = q.layout;
  if (q.backend_owned) {
    a.notify_fd = q.notify_fd();
    a.interrupt_fd = activation.interrupt_fd;
  } else {
    a.ring = q.ring.get();
  }
  return a;
}

}  // namespace kvmmio::virtio
