// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport: its public face over the parts (mmio_parts.h), what they
// share (TransportContext), and the device's way in (VirtioInterrupt).
#include "kvmmio/virtio/mmio_transport.h"

#include <cstdarg>
#include <cstdio>
#include <stdexcept>

#include "mmio_parts.h"

namespace kvmmio::virtio {
namespace {

// More queues than any device needs (virtio-net with 512 queue pairs).
constexpr uint32_t kMaxQueues = 1025;

NotifyMode effective_notify_mode(const TransportOptions& options, const TransportEnv& env) {
  if (options.notify == NotifyMode::kTrap) return NotifyMode::kTrap;
  if (env.notify_fds && env.loop) return NotifyMode::kIoEventFd;
  KVMMIO_LOG_WARN("%s: no ioeventfd support wired in; queue notifications trap (notify=trap)",
                  env.name.c_str());
  return NotifyMode::kTrap;
}

// What the transport cannot present, before any part is built.
const TransportOptions& checked(const TransportOptions& options, const VirtioDevice& device,
                                const TransportEnv& env) {
  if (options.version != kVersionLegacy && options.version != kVersionModern)
    throw std::invalid_argument(env.name + ": virtio-mmio version must be 1 or 2");
  if (options.irq == IrqMode::kRelay && !env.loop)
    throw std::invalid_argument(env.name + ": irq=relay needs an event loop");
  if (device.num_queues() > kMaxQueues) throw std::invalid_argument(env.name + ": too many queues");
  if (device.config_size() > kConfigSpaceMax)
    throw std::invalid_argument(env.name + ": configuration space larger than 256 bytes");
  return options;
}

}  // namespace

TransportContext::TransportContext(VirtioDevice& dev, TransportEnv e, TransportOptions o)
    : device(dev),
      env(std::move(e)),
      options(checked(o, dev, env)),
      notify_mode(effective_notify_mode(options, env)) {}

void TransportContext::guest_error(const char* fmt, ...) {
  counters.guest_errors.fetch_add(1, std::memory_order_relaxed);
  char message[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(message, sizeof(message), fmt, ap);
  va_end(ap);
  errors.report("%s", message);
}

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
