// SPDX-License-Identifier: BSD-2-Clause
// TransportInterrupts: InterruptStatus and InterruptACK (virtio 1.2 4.2.2),
// used-buffer and configuration interrupts, and the irq=relay forwarder of
// backends' interrupts.
//
// InterruptStatus when a backend bypasses the VMM (irq=irqfd, a backend-
// owned queue live): the backend writes the irqfd directly, so the VMM never
// learns of its used buffers. The used-buffer bit then reads as set whenever
// DRIVER_OK is: a driver that finds no new used entries treats it as a
// spurious interrupt, which virtio drivers must tolerate (2.7.7.1), while a
// clear bit would make Linux's vm_interrupt() skip the rings and lose the
// interrupt. docs/virtio-mmio.md has the full reasoning.
//
// With regs=mirror the same holds for every queue: KvmMmioSlot maps the
// mirror over the window and the guest's InterruptACK of the used-buffer bit
// is swallowed by its ioeventfd in the kernel, so the VMM cannot clear that bit
// before the guest's next read. It reads as set from DRIVER_OK on. The
// config-change bit keeps its meaning: set (and published to the mirror)
// before its interrupt, cleared when the guest's ACK of it exits.
#include "mmio_interrupts.h"

#include "mmio_lifecycle.h"
#include "mmio_mirror.h"

namespace kvmmio::virtio {

// irq=relay, what QEMU and kvmtool do for virtio-mmio: backends signal an
// eventfd (the interrupt fd they are given), and the event loop sets
// InterruptStatus and raises the line. No lock: the work is atomic.
TransportInterrupts::TransportInterrupts(TransportContext& ctx, const DeviceLifecycle& lifecycle,
                                         MirrorPublisher& mirror)
    : ctx_(ctx), lifecycle_(lifecycle), mirror_(mirror) {
  if (ctx_.options.irq != IrqMode::kRelay) return;
  relay_ = std::make_unique<EventFd>();
  relay_watch_ = ctx_.env.loop->watch_eventfd(relay_->fd(), [this](uint64_t) { relay(); });
}

TransportInterrupts::~TransportInterrupts() { relay_watch_ = {}; }

void TransportInterrupts::raise(uint32_t bits) {
  // Counted first, so whoever sees the interrupt also sees the count.
  ctx_.counters.interrupts_injected.fetch_add(1, std::memory_order_relaxed);
  // The bit before the edge: the guest's handler must find it set, in the
  // mirror too (where the used-buffer bit already reads as set).
  status_.fetch_or(bits);
  if (bits & interrupt::kConfigChange) mirror_.publish_status();
  ctx_.env.irq.signal();
}

void TransportInterrupts::raise_config_change() {
  ctx_.counters.config_interrupts.fetch_add(1, std::memory_order_relaxed);
  raise(interrupt::kConfigChange);
}

uint32_t TransportInterrupts::read() const {
  uint32_t bits = status_.load();
  if ((bypass_.load() || mirror_.enabled()) && (lifecycle_.status() & status::kDriverOk))
    bits |= interrupt::kUsedBuffer;
  return bits;
}

void TransportInterrupts::acknowledge(uint32_t bits) {
  if (bits & ~interrupt::kAll) ctx_.guest_error("InterruptACK 0x%x sets undefined bits", bits);
  status_.fetch_and(~(bits & interrupt::kAll));
}

void TransportInterrupts::clear() {
  status_.store(0);
  bypass_.store(false);
}

int TransportInterrupts::fd() const { return relay_ ? relay_->fd() : ctx_.env.irq.fd(); }

void TransportInterrupts::relay() {
  ctx_.counters.interrupts_relayed.fetch_add(1, std::memory_order_relaxed);
  status_.fetch_or(interrupt::kUsedBuffer);  // the bit before the edge
  ctx_.env.irq.signal();
}

}  // namespace kvmmio::virtio
