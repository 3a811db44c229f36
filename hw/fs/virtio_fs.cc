// SPDX-License-Identifier: BSD-2-Clause
// VirtioFs: the configuration space and the hand-over of the queues to a
// vhost-user backend (see the header).
#include "kvmmio/fs/virtio_fs.h"

#include <poll.h>

#include <cstring>
#include <stdexcept>

#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::fs {
namespace {

// What the transport offers whatever the device says, so what the backend
// must implement (mmio_features.cc): VERSION_1 and INDIRECT_DESC always,
// EVENT_IDX where the backend has it.
constexpr uint64_t kNeededRingFeatures =
    virtio::feature::bit(virtio::feature::kVersion1) | virtio::feature::bit(virtio::feature::kRingIndirectDesc);

vhost::VhostUserFrontend started(vhost::VhostUserFrontend backend) {
  const uint64_t features = backend.start();
  if (const uint64_t missing = kNeededRingFeatures & ~features)
    throw std::runtime_error("vhost-user backend " + backend.name() + " lacks " +
                             ((missing & virtio::feature::bit(virtio::feature::kVersion1))
                                  ? "VIRTIO_F_VERSION_1"
                                  : "VIRTIO_RING_F_INDIRECT_DESC") +
                             ", which kvmmio's virtio-mmio transport needs: use a virtio-fs backend that "
                             "offers it (Debian's virtiofsd does)");
  return backend;
}

}  // namespace

VirtioFs::VirtioFs(const FsOptions& options, vhost::VhostUserFrontend backend, const GuestMemory& memory,
                   EventLoop& loop)
    : tag_(options.tag),
      backend_(started(std::move(backend))),
      memory_(memory),
      loop_(loop),
      log_name_("fs " + options.tag) {}

// The transport, which goes first, resets an active device (the VM's
// teardown); the connection closes with the device, and the backend
// (virtiofsd) exits with it.
VirtioFs::~VirtioFs() = default;

bool VirtioFs::backend_event_idx() const {
  return backend_.features() & virtio::feature::bit(virtio::feature::kRingEventIdx);
}

uint64_t VirtioFs::withheld_transport_features() const {
  // virtiofsd walks the rings: a ring feature it lacks the driver must not
  // get. INDIRECT_DESC and VERSION_1 it was required to have.
  return backend_event_idx() ? 0 : virtio::feature::bit(virtio::feature::kRingEventIdx);
}

void VirtioFs::read_config_of(const std::string& tag, uint32_t offset, std::span<uint8_t> data) {
  // tag[36], NUL-padded, then le32 num_request_queues (1); the transport
  // checked the range, this checks again (a caller outside it: a test).
  uint8_t bytes[spec::kConfigSize] = {};
  std::memcpy(bytes, tag.data(), std::min<size_t>(tag.size(), spec::kTagSize));
  bytes[spec::kNumRequestQueuesOffset] = spec::kNumQueues - 1;
  for (size_t i = 0; i < data.size(); ++i) data[i] = offset + i < spec::kConfigSize ? bytes[offset + i] : 0;
}

void VirtioFs::write_config(uint32_t offset, std::span<const uint8_t> data) {
  // 5.11.4: both fields are the device's.
  ++counters_.config_writes;
  errors_.report("a %zu-byte write to the read-only configuration space at +%u; ignored", data.size(), offset);
}

void VirtioFs::visit_counters(const virtio::CounterVisitor& visit) const {
  FsSettings settings;
  settings.request_queues = spec::kNumQueues - 1;
  settings.backend_event_idx = backend_event_idx() ? 1 : 0;
  settings.each(visit);
  counters_.each(visit);
}

bool VirtioFs::activate(const virtio::DeviceActivation& activation) {
  interrupt_ = activation.interrupt;
  try {
    if (!backend_.usable())
      throw vhost::BackendError("the connection to " + backend_.name() +
                                " failed earlier and is not made again: restart the VM with the backend running");
    // What the driver accepted is within what the transport offered, so
    // within the backend's features (kNeededRingFeatures, EVENT_IDX).
    backend_.set_features(activation.features);
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

void VirtioFs::reset() {
  socket_watch_.reset();
  for (uint32_t vring = 0; vring < spec::kNumQueues; ++vring) stop_vring(vring);
  interrupt_ = nullptr;
}

void VirtioFs::reset_queue(uint32_t queue) {
  if (interrupt_) stop_vring(queue);
}

void VirtioFs::enable_queue(const virtio::ActiveQueue& queue) {
  if (!interrupt_) return;
  try {
    start_vring(queue);
  } catch (const std::exception& e) {
    backend_failed("cannot restart a queue", e);
    interrupt_->needs_reset("the vhost-user backend refused a queue");
  }
}

void VirtioFs::start_vring(const virtio::ActiveQueue& q) {
  if (q.index >= spec::kNumQueues || vring_live_[q.index]) return;
  if (q.notify_fd < 0 || q.interrupt_fd < 0) return;  // not handed over (cannot happen for an owned queue)
  // Marked first: a set-up that fails half-way is taken back by reset().
  vring_live_[q.index] = true;
  backend_.setup_vring(memory_, {q.index, static_cast<uint16_t>(q.layout.size), 0, q.layout.desc,
                                 q.layout.avail, q.layout.used, q.notify_fd, q.interrupt_fd, -1, 0});
  // With the protocol features negotiated, a ring starts disabled.
  if (backend_.protocol_negotiated()) backend_.set_vring_enable(q.index, true);
}

void VirtioFs::stop_vring(uint32_t vring) {
  if (vring >= spec::kNumQueues || !vring_live_[vring]) return;
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
void VirtioFs::socket_event() {
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

void VirtioFs::backend_failed(const char* what, const std::exception& e) {
  ++counters_.backend_failures;
  if (const uint64_t n = repeats_.next())
    KVMMIO_LOG_ERROR("%s: %s: %s (#%llu)", log_name_.c_str(), what, e.what(), static_cast<unsigned long long>(n));
}

}  // namespace kvmmio::fs
