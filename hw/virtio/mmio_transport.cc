// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport: its public face over the parts (mmio_parts.h), and the
// rings' way in (QueueFaultSink).
#include "kvmmio/virtio/mmio_transport.h"

#include "mmio_parts.h"

namespace kvmmio::virtio {

void MmioTransport::Parts::queue_fault(uint32_t queue_index, QueueError error) {
  ctx.guest_error("queue %u: %s", queue_index, to_string(error));
  state.needs_reset(to_string(error));
}

MmioTransport::MmioTransport(VirtioDevice& device, TransportEnv env, TransportOptions options)
    : parts_(std::make_unique<Parts>(device, std::move(env), options)) {
  auto guard = parts_->ctx.lock.lock();
  // Once for the transport's lifetime: no guest write assigns or removes one.
  parts_->queues.attach_notify_fds();
  parts_->mirror.refresh();
}

MmioTransport::~MmioTransport() {
  auto guard = parts_->ctx.lock.lock();
  // The device drops the notify and interrupt fds before they close, and no
  // polled notify runs once the parts start to go.
  parts_->state.stop();
  parts_->queues.detach_notify_fds();
}

void MmioTransport::mmio_read(uint64_t offset, std::span<uint8_t> data) {
  std::fill(data.begin(), data.end(), 0);  // whatever is refused reads as zeros
  parts_->ctx.counters.register_reads.fetch_add(1, std::memory_order_relaxed);
  auto guard = parts_->ctx.lock.lock();
  parts_->registers.read(offset, data);
}

void MmioTransport::mmio_write(uint64_t offset, std::span<const uint8_t> data) {
  auto guard = parts_->ctx.lock.lock();
  parts_->registers.write(offset, data);
  // Before the vCPU resumes: whatever this write changed reads back from
  // the mirror as it would have from the registers. A notify changes no
  // register (what it may cause, DEVICE_NEEDS_RESET, publishes itself), and
  // it is the one hot path that can still exit (notify=trap).
  if (offset != reg::kQueueNotify) parts_->mirror.refresh();
}

void MmioTransport::reset() {
  auto guard = parts_->ctx.lock.lock();
  parts_->state.reset();  // the same path as the driver's Status = 0
  parts_->mirror.refresh();
}

uint64_t MmioTransport::base() const { return parts_->ctx.env.base; }
uint64_t MmioTransport::notify_address() const { return base() + reg::kQueueNotify; }
const TransportOptions& MmioTransport::options() const { return parts_->ctx.options; }
NotifyMode MmioTransport::notify_mode() const { return parts_->ctx.notify_mode; }
const TransportCounters& MmioTransport::counters() const { return parts_->ctx.counters; }
const RegisterMirror* MmioTransport::mirror() const { return parts_->mirror.page(); }
VirtioInterrupt& MmioTransport::interrupt() { return *parts_; }
uint32_t MmioTransport::device_status() const { return parts_->state.status(); }
int MmioTransport::interrupt_fd() const { return parts_->state.interrupt_fd(); }

uint64_t MmioTransport::driver_features() const {
  auto guard = parts_->ctx.lock.lock();
  return parts_->state.accepted_features();
}

}  // namespace kvmmio::virtio
