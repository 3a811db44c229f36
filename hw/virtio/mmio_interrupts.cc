// SPDX-License-Identifier: BSD-2-Clause
// TransportInterrupts: InterruptStatus's bits, InterruptACK (virtio 1.2
// 4.2.2), the edge, and the irq=relay forwarder of backends' interrupts.
#include "mmio_interrupts.h"

namespace kvmmio::virtio {

// irq=relay, what QEMU and kvmtool do for virtio-mmio: backends signal an
// eventfd (the interrupt fd they are given), and the event loop sets
// InterruptStatus and raises the line. No lock: the work is atomic.
TransportInterrupts::TransportInterrupts(TransportContext& ctx) : ctx_(ctx) {
  if (ctx_.options.irq != IrqMode::kRelay) return;
  relay_ = std::make_unique<EventFd>();
  relay_watch_ = ctx_.env.loop->watch_eventfd(relay_->fd(), [this](uint64_t) { relay(); });
}

TransportInterrupts::~TransportInterrupts() { relay_watch_ = {}; }

void TransportInterrupts::post(uint32_t bits) {
  // Counted first, so whoever sees the interrupt also sees the count.
  ctx_.counters.interrupts_injected.fetch_add(1, std::memory_order_relaxed);
  status_.fetch_or(bits);
}

void TransportInterrupts::acknowledge(uint32_t bits) {
  if (bits & ~interrupt::kAll) ctx_.guest_error("InterruptACK 0x%x sets undefined bits", bits);
  status_.fetch_and(~(bits & interrupt::kAll));
}

int TransportInterrupts::fd() const { return relay_ ? relay_->fd() : ctx_.env.irq.fd(); }

void TransportInterrupts::relay() {
  ctx_.counters.interrupts_relayed.fetch_add(1, std::memory_order_relaxed);
  status_.fetch_or(interrupt::kUsedBuffer);  // the bit before the edge
  ctx_.env.irq.signal();
}

}  // namespace kvmmio::virtio
