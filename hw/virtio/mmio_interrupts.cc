// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport: InterruptStatus and InterruptACK (virtio 1.2 4.2.2), the
// device's VirtioInterrupt, DEVICE_NEEDS_RESET (2.1.2), and the irq=relay
// forwarder of backends' interrupts.
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
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::virtio {

void MmioTransport::raise(uint32_t bits) {
  // Counted first, so whoever sees the interrupt also sees the count.
  counters_.interrupts_injected.fetch_add(1, std::memory_order_relaxed);
  // The bit before the edge: the guest's handler must find it set, in the
  // mirror too (where the used-buffer bit already reads as set).
  interrupt_status_.fetch_or(bits);
  if (bits & interrupt::kConfigChange) publish_status_mirror();
  env_.irq.signal();
}

uint32_t MmioTransport::interrupt_status() const {
  uint32_t bits = interrupt_status_.load();
  if ((bypass_.load() || mirror_) && (status_.load() & status::kDriverOk)) bits |= interrupt::kUsedBuffer;
  return bits;
}

void MmioTransport::acknowledge(uint32_t bits) {
  if (bits & ~interrupt::kAll) guest_error("InterruptACK 0x%x sets undefined bits", bits);
  interrupt_status_.fetch_and(~(bits & interrupt::kAll));
}

void MmioTransport::signal_used() { raise(interrupt::kUsedBuffer); }

void MmioTransport::signal_config_change() {
  config_generation_.fetch_add(1);
  if (mirror_) {
    std::lock_guard mirror_guard(mirror_mutex_);
    publish_config_mirror();
    if (options_.version == kVersionModern)
      mirror_->update32(reg::kConfigGeneration, config_generation_.load());
  }
  // Before DRIVER_OK the driver may not be ready for interrupts; it reads
  // the configuration (and the generation) during initialisation anyway.
  if (!(status_.load() & status::kDriverOk)) return;
  counters_.config_interrupts.fetch_add(1, std::memory_order_relaxed);
  raise(interrupt::kConfigChange);
}

void MmioTransport::needs_reset(const char* why) {
  if (status_.fetch_or(status::kDeviceNeedsReset) & status::kDeviceNeedsReset) return;  // once
  counters_.needs_reset.fetch_add(1, std::memory_order_relaxed);
  // Once per reset; a guest that keeps breaking and resetting repeats it.
  if (const uint64_t n = repeats_.next())
    KVMMIO_LOG_WARN("%s: device needs reset: %s (#%llu)", log_name_.c_str(), why,
                    static_cast<unsigned long long>(n));
  publish_status_mirror();
  if (!(status_.load() & status::kDriverOk)) return;  // activate() notifies then
  counters_.config_interrupts.fetch_add(1, std::memory_order_relaxed);
  raise(interrupt::kConfigChange);
}

// irq=relay, what QEMU and kvmtool do for virtio-mmio: backends signal an
// eventfd (the interrupt fd they are given), and the event loop sets
// InterruptStatus and raises the line. No lock: the work is atomic.
void MmioTransport::start_relay() {
  relay_ = std::make_unique<EventFd>();
  relay_watch_ = env_.loop->watch_eventfd(relay_->fd(), [this](uint64_t) { relay_interrupt(); });
}

void MmioTransport::relay_interrupt() {
  counters_.interrupts_relayed.fetch_add(1, std::memory_order_relaxed);
  interrupt_status_.fetch_or(interrupt::kUsedBuffer);  // the bit before the edge
  env_.irq.signal();
}

void MmioTransport::queue_fault(uint32_t queue_index, QueueError error) {
  guest_error("queue %u: %s", queue_index, to_string(error));
  needs_reset(to_string(error));
}

}  // namespace kvmmio::virtio
