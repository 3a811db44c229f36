// SPDX-License-Identifier: BSD-2-Clause
// VhostUserQueues: the hand-over of a device's queues to a vhost-user
// backend (see the header).
#include "kvmmio/vhost/vhost_user_queues.h"

#include <poll.h>

#include <stdexcept>

#include "kvmmio/base/log.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::vhost {
namespace {

// What the transport offers whatever the device says, so what the backend
// must implement (mmio_features.cc): VERSION_1 and INDIRECT_DESC always,
// EVENT_IDX where the backend has it (withheld otherwise).
constexpr uint64_t kNeededRingFeatures =
    virtio::feature::bit(virtio::feature::kVersion1) | virtio::feature::bit(virtio::feature::kRingIndirectDesc);
constexpr uint64_t kEventIdx = virtio::feature::bit(virtio::feature::kRingEventIdx);

VhostUserFrontend started(VhostUserFrontend backend, const std::string& fix) {
  const uint64_t features = backend.start();
  if (const uint64_t missing = kNeededRingFeatures & ~features)
    throw std::runtime_error("vhost-user backend " + backend.name() + " lacks " +
                             ((missing & virtio::feature::bit(virtio::feature::kVersion1))
                                  ? "VIRTIO_F_VERSION_1"
                                  : "VIRTIO_RING_F_INDIRECT_DESC") +
                             ", which kvmmio's virtio-mmio transport needs: " + fix);
  return backend;
}

}  // namespace

VhostUserQueues::VhostUserQueues(VhostUserFrontend backend, const GuestMemory& memory, EventLoop& loop,
                                 std::string log_name, uint32_t num_queues, const std::string& fix)
    : backend_(started(std::move(backend), fix)),
      memory_(memory),
      loop_(loop),
      log_name_(std::move(log_name)),
      vring_live_(num_queues, false) {}

bool VhostUserQueues::backend_event_idx() const { return backend_.features() & kEventIdx; }

uint64_t VhostUserQueues::withheld_transport_features() const { return backend_event_idx() ? 0 : kEventIdx; }

bool VhostUserQueues::activate(const virtio::DeviceActivation& activation) {
  interrupt_ = activation.interrupt;
  try {
    if (!backend_.usable())
      throw BackendError("the connection to " + backend_.name() +
                         " failed earlier and is not made again: restart the VM with the backend running");
    // The transport bits the driver accepted are within the backend's
    // (checked above, EVENT_IDX withheld); device bits the VMM serves
    // itself (a net device's MAC) are not the backend's to see.
    backend_.set_features(activation.features & backend_.features());
    backend_.set_mem_table(memory_);
    for (const virtio::ActiveQueue& q : activation.queues) start_vring(q);
    socket_watch_ = activation.lock->watch(loop_, backend_.socket_fd(), [this] { socket_event(); });
  } catch (const std::exception& e) {
    // At every DRIVER_OK while it fails (a reset storm repeats it): the
    // transport counts the resulting needs_reset.
    backend_failed("cannot hand the queues to the backend", e);
    reset();
    return false;
  }
  ++counters_.activations;
  return true;
}

void VhostUserQueues::reset() {
  socket_watch_.reset();
  for (uint32_t vring = 0; vring < vring_live_.size(); ++vring) stop_vring(vring);
  interrupt_ = nullptr;
}

void VhostUserQueues::reset_queue(uint32_t queue) {
  if (interrupt_) stop_vring(queue);
}

void VhostUserQueues::enable_queue(const virtio::ActiveQueue& queue) {
  if (!interrupt_) return;
  try {
    start_vring(queue);
  } catch (const std::exception& e) {
    backend_failed("cannot restart a queue", e);
    interrupt_->needs_reset("the vhost-user backend refused a queue");
  }
}

void VhostUserQueues::start_vring(const virtio::ActiveQueue& q) {
  if (q.index >= vring_live_.size() || vring_live_[q.index]) return;
  if (q.notify_fd < 0 || q.interrupt_fd < 0) return;  // not handed over (cannot happen for an owned queue)
  // Marked first: a set-up that fails half-way is taken back by reset().
  vring_live_[q.index] = true;
  backend_.setup_vring(memory_, {q.index, static_cast<uint16_t>(q.layout.size), 0, q.layout.desc,
                                 q.layout.avail, q.layout.used, q.notify_fd, q.interrupt_fd, -1, 0});
  // With the protocol features negotiated, a ring starts disabled.
  if (backend_.protocol_negotiated()) backend_.set_vring_enable(q.index, true);
}

void VhostUserQueues::stop_vring(uint32_t vring) {
  if (vring >= vring_live_.size() || !vring_live_[vring]) return;
  vring_live_[vring] = false;
  // A broken connection has nothing to stop: the backend saw it close.
  if (!backend_.usable()) return;
  try {
    // Stops the ring in the backend, which lets go of its kick and call
    // fds (the transport's ioeventfd and irqfd, which outlive this).
    (void)backend_.vring_base(vring);
  } catch (const std::exception& e) {
    backend_failed("cannot stop a queue", e);
  }
}

// On the event-loop thread, holding the device lock: no request is under
// way, so anything to read is the backend's doing.
void VhostUserQueues::socket_event() {
  pollfd p{backend_.socket_fd(), POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) != 1) return;  // a reply, read meanwhile by the vCPU that awaited it
  ++counters_.backend_hangups;
  if (const uint64_t n = repeats_.next())
    KVMMIO_LOG_ERROR("%s: the vhost-user backend %s closed its socket (or sent what was not asked for); "
                     "the device needs a reset, and stays failed until the VM restarts with the backend "
                     "running (#%llu)",
                     log_name_.c_str(), backend_.name().c_str(), static_cast<unsigned long long>(n));
  backend_.disconnect();
  socket_watch_.reset();
  if (interrupt_) interrupt_->needs_reset("the vhost-user backend went away");
}

void VhostUserQueues::backend_failed(const char* what, const std::exception& e) {
  ++counters_.backend_failures;
  if (const uint64_t n = repeats_.next())
    KVMMIO_LOG_ERROR("%s: %s: %s (#%llu)", log_name_.c_str(), what, e.what(), static_cast<unsigned long long>(n));
}

void VhostUserDevice::write_config(uint32_t offset, std::span<const uint8_t> data) {
  ++device_counters_.config_writes;
  errors_.report("a %zu-byte write to the read-only configuration space at +%u; ignored", data.size(), offset);
}

void VhostUserDevice::visit_device_counters(const virtio::CounterVisitor& visit) const {
  queues_.counters().each(visit);
  device_counters_.each(visit);
}

}  // namespace kvmmio::vhost
