// SPDX-License-Identifier: BSD-2-Clause
// VirtioVsock: features, configuration space, and the hand-over of the data
// queues to vhost-vsock (see the header).
//
// A vring error is vhost failing to use the guest's ring: a descriptor or
// ring address outside the memory table (vq_err() in the kernel's
// vhost.c), i.e. a guest that broke its ring. As with vhost-net, it is
// logged once per activation as a guest error, every signal is counted,
// and the device enters DEVICE_NEEDS_RESET (2.1.2).
#include "kvmmio/vsock/virtio_vsock.h"

#include <cstring>
#include <stdexcept>

#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::vsock {

VirtioVsock::VirtioVsock(const VsockOptions& options, const GuestMemory& memory, EventLoop& loop)
    : memory_(memory),
      loop_(loop),
      cid_(options.cid),
      vhost_(std::in_place, options.cid),
      vhost_features_(vhost_->device().features()),
      log_name_("vsock cid " + std::to_string(options.cid)) {}

VirtioVsock::VirtioVsock(const VsockOptions& options, const GuestMemory& memory, EventLoop& loop,
                         uint64_t vhost_features)
    : memory_(memory),
      loop_(loop),
      cid_(options.cid),
      vhost_features_(vhost_features),
      log_name_("vsock cid " + std::to_string(options.cid)) {}

// The transport, which goes first, resets an active device (the VM's
// teardown: the main thread); closing the instance then releases the CID.
VirtioVsock::~VirtioVsock() = default;

uint64_t VirtioVsock::offered_features(uint64_t vhost_features) {
  return vhost_features & virtio::feature::bit(spec::kFSeqpacket);
}

void VirtioVsock::read_config_of(uint32_t cid, uint32_t offset, std::span<uint8_t> data) {
  // le64 guest_cid; the transport checked the range, this checks again
  // (a caller outside it, e.g. a test).
  uint8_t bytes[spec::kConfigSize] = {};
  const uint64_t value = cid;
  for (unsigned i = 0; i < spec::kConfigSize; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  for (size_t i = 0; i < data.size(); ++i) data[i] = offset + i < spec::kConfigSize ? bytes[offset + i] : 0;
}

void VirtioVsock::write_config(uint32_t offset, std::span<const uint8_t> data) {
  // 5.10.4 gives the driver nothing to write.
  ++counters_.config_writes;
  errors_.report("a %zu-byte write to the read-only configuration space at +%u (guest_cid); ignored",
                 data.size(), offset);
}

void VirtioVsock::visit_counters(const virtio::CounterVisitor& visit) const {
  VsockSettings settings;
  settings.guest_cid = cid();
  settings.each(visit);
  counters_.each(visit);
}

bool VirtioVsock::activate(const virtio::DeviceActivation& activation) {
  interrupt_ = activation.interrupt;
  features_ = activation.features;
  reported_ = false;
  try {
    if (!vhost_) throw std::runtime_error("no vhost-vsock backend");
    vhost::VhostDevice& dev = vhost_->device();
    dev.set_features(activation.features & dev.features());
    dev.set_mem_table(memory_);
    for (unsigned vring : {VhostVsock::kRxVring, VhostVsock::kTxVring}) {
      err_[vring] = EventFd();
      err_watches_[vring] =
          loop_.watch_eventfd(err_[vring].fd(), [this, vring](uint64_t n) { ring_error(vring, n); });
    }
    for (const virtio::ActiveQueue& q : activation.queues)
      if (q.index != spec::kEventQueue) start_vring(q);
    start_if_ready();
  } catch (const std::exception& e) {
    // At every DRIVER_OK while it fails (a reset storm repeats it); the
    // transport counts the resulting needs_reset.
    if (const uint64_t n = repeats_.next())
      KVMMIO_LOG_ERROR("%s: cannot start vhost-vsock: %s (#%llu)", log_name_.c_str(), e.what(),
                       static_cast<unsigned long long>(n));
    reset();
    return false;
  }
  ++counters_.activations;
  return true;
}

void VirtioVsock::queue_notify(uint32_t queue) {
  // Only the event queue is the VMM's; its buffers are held (the header).
  if (queue == spec::kEventQueue) ++counters_.event_notifies;
}

void VirtioVsock::reset() {
  stop_running();
  for (unsigned vring : {VhostVsock::kRxVring, VhostVsock::kTxVring}) stop_vring(vring);
  for (auto& w : err_watches_) w = EventLoop::Registration();
  interrupt_ = nullptr;
}

void VirtioVsock::reset_queue(uint32_t queue) {
  if (queue == spec::kEventQueue || !interrupt_) return;
  // vhost-vsock starts and stops both vrings at once: the other waits,
  // set up, until this one is ready again.
  stop_running();
  stop_vring(queue);
}

void VirtioVsock::enable_queue(const virtio::ActiveQueue& queue) {
  if (queue.index == spec::kEventQueue || !interrupt_) return;
  try {
    start_vring(queue);
    start_if_ready();
  } catch (const std::exception& e) {
    fail("restarting a queue", e);
  }
}

void VirtioVsock::start_vring(const virtio::ActiveQueue& q) {
  if (q.index > VhostVsock::kTxVring || vring_live_[q.index]) return;
  if (q.notify_fd < 0 || q.interrupt_fd < 0) return;  // not handed over (cannot happen for an owned queue)
  vhost_->device().setup_vring(memory_, {q.index, static_cast<uint16_t>(q.layout.size), 0, q.layout.desc,
                                         q.layout.avail, q.layout.used, q.notify_fd, q.interrupt_fd,
                                         err_[q.index].fd(), 0});
  vring_live_[q.index] = true;
}

void VirtioVsock::start_if_ready() {
  if (running_ || !vring_live_[VhostVsock::kRxVring] || !vring_live_[VhostVsock::kTxVring]) return;
  vhost_->set_running(true);
  running_ = true;
}

void VirtioVsock::stop_running() {
  if (!running_) return;
  running_ = false;
  try {
    vhost_->set_running(false);
  } catch (const std::exception& e) {
    fail("stopping vhost-vsock", e);
  }
}

void VirtioVsock::stop_vring(unsigned vring) {
  if (vring > VhostVsock::kTxVring || !vring_live_[vring]) return;
  vring_live_[vring] = false;
  try {
    // Where the kernel stopped (not kept: the next start is a fresh ring),
    // then the transport's fds, which vhost must no longer hold: kick and
    // call are the queue's ioeventfd and the irqfd, which outlive this.
    vhost::VhostDevice& dev = vhost_->device();
    (void)dev.vring_base(vring);
    dev.set_vring_kick(vring, -1);
    dev.set_vring_call(vring, -1);
    dev.set_vring_err(vring, -1);
  } catch (const std::exception& e) {
    fail("stopping a vring", e);
  }
}

void VirtioVsock::fail(const char* what, const std::exception& e) {
  if (const uint64_t n = repeats_.next())
    KVMMIO_LOG_ERROR("%s: %s: %s (#%llu)", log_name_.c_str(), what, e.what(), static_cast<unsigned long long>(n));
  if (interrupt_) interrupt_->needs_reset("vhost-vsock failed");
}

// On the event-loop thread, without the device lock: the watch is removed
// under that lock when the device resets (which waits for this callback),
// and needs_reset() is made of atomic operations.
void VirtioVsock::ring_error(unsigned vring, uint64_t signals) {
  counters_.vhost_errors += signals;
  if (reported_.exchange(true)) return;
  // Once per activation: a guest that breaks its ring after every reset
  // repeats it, so it is a counted, rate-limited guest error.
  errors_.report("vhost-vsock cannot use queue %u (a descriptor or ring outside guest RAM?); the device "
                 "needs a reset", vring);
  if (virtio::VirtioInterrupt* irq = interrupt_) irq->needs_reset("vhost-vsock reported a vring error");
}

}  // namespace kvmmio::vsock
