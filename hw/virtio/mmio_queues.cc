// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport: queues going live and stopping, their notify fds (ioeventfd,
// polled on the event loop or handed to a backend) and notifications that
// arrive as MMIO exits (virtio 1.2 4.2.3.2, 4.2.3.3).
#include <unistd.h>

#include "kvmmio/virtio/mmio_transport.h"
#include "queue_state.h"

namespace kvmmio::virtio {

void MmioTransport::set_queue_ready(uint32_t index, const QueueLayout& layout) {
  if (!queue_starts_.take()) {
    guest_error("queue %u cannot go live: more than %.0f queue set-ups at once or %.0f per second",
                index, kQueueStartBurst, kQueueStartsPerSecond);
    return needs_reset("queue set-up rate limit");
  }
  QueueState& q = queues_[index];
  q.layout = layout;
  q.ready = true;
  attach_notify_fd(index);
  if (!active_) return;  // DRIVER_OK will start it
  // A queue enabled after DRIVER_OK (or again after a queue reset).
  start_ring(index);
  update_bypass();
  device_.enable_queue(active_queue(index));
  if (!q.backend_owned) device_.queue_notify(index);
}

void MmioTransport::stop_queue(uint32_t index) {
  QueueState& q = queues_[index];
  // The device (a backend) lets go of the ring and its fds first.
  if (active_) device_.reset_queue(index);
  q.ring->stop();  // the device must not touch a queue that is not ready (4.2.2)
  detach_notify_fd(index);
  q.ready = false;
  update_bypass();
}

void MmioTransport::start_ring(uint32_t index) {
  QueueState& q = queues_[index];
  if (q.backend_owned) return;  // the backend processes this ring
  q.ring->configure(q.layout, {.event_idx = feature::has(driver_features_, feature::kRingEventIdx),
                               .indirect = feature::has(driver_features_, feature::kRingIndirectDesc)});
}

ActiveQueue MmioTransport::active_queue(uint32_t index) {
  QueueState& q = queues_[index];
  ActiveQueue a;
  a.index = index;
  a.layout = q.layout;
  if (q.backend_owned) {
    a.notify_fd = q.notify_fd();
    a.interrupt_fd = interrupt_fd();
  } else {
    a.ring = q.ring.get();
  }
  return a;
}

void MmioTransport::update_bypass() {
  // Only a backend writing the irqfd itself hides interrupts from the VMM.
  bool bypass = false;
  if (active_ && options_.irq == IrqMode::kIrqFd) {
    for (const QueueState& q : queues_) bypass |= q.ready && q.backend_owned;
  }
  bypass_.store(bypass);
}

void MmioTransport::attach_notify_fd(uint32_t index) {
  QueueState& q = queues_[index];
  if (notify_mode_ == NotifyMode::kIoEventFd) {
    try {
      q.ioeventfd = env_.notify_fds->attach(notify_address(), index);
    } catch (const std::exception& e) {
      if (const uint64_t n = repeats_.next())  // at every QueueReady the guest writes
        KVMMIO_LOG_WARN("%s: queue %u: no ioeventfd (%s); its notifications trap (#%llu)",
                        log_name_.c_str(), index, e.what(), static_cast<unsigned long long>(n));
    }
  }
  if (q.backend_owned) {
    // The backend waits on this fd; the VMM must not also read it (a
    // second reader steals notifies). Without an ioeventfd the trap path
    // signals a plain eventfd instead.
    if (!q.ioeventfd) q.trap_eventfd.emplace();
    return;
  }
  if (!q.ioeventfd) return;
  try {
    q.poll = lock_.watch_eventfd(*env_.loop, q.ioeventfd->fd(), [this, index](uint64_t) { notify_polled(index); });
  } catch (const std::exception& e) {
    // Unpolled, the ioeventfd would swallow the guest's notifies: trap instead.
    if (const uint64_t n = repeats_.next())
      KVMMIO_LOG_WARN("%s: queue %u: cannot poll its ioeventfd (%s); its notifications trap (#%llu)",
                      log_name_.c_str(), index, e.what(), static_cast<unsigned long long>(n));
    q.ioeventfd.reset();
  }
}

void MmioTransport::detach_notify_fd(uint32_t index) {
  QueueState& q = queues_[index];
  // Under the device lock: a polled notify waiting for it gives up (DeviceLock::Watch).
  q.poll.reset();
  q.ioeventfd.reset();  // deassigned from KVM now: later notifies trap
  q.trap_eventfd.reset();
}

void MmioTransport::notify_trapped(uint32_t value) {
  counters_.notifies_trapped.fetch_add(1, std::memory_order_relaxed);
  // Without VIRTIO_F_NOTIFICATION_DATA the value is the queue index (4.2.2).
  if (value >= queues_.size())
    return guest_error("QueueNotify for queue %u; the device has %zu", value, queues_.size());
  QueueState& q = queues_[value];
  if (!q.ready) return;  // a spurious notification is harmless (2.7.10)
  if (q.backend_owned) {
    const int fd = q.notify_fd();
    const uint64_t one = 1;
    if (fd >= 0 && ::write(fd, &one, sizeof(one)) != sizeof(one)) {
      if (const uint64_t n = repeats_.next())
        KVMMIO_LOG_WARN("%s: queue %u: forwarding a trapped notify failed (#%llu)", log_name_.c_str(),
                        value, static_cast<unsigned long long>(n));
    }
    return;
  }
  if (active_) device_.queue_notify(value);
}

// The event loop, holding the device lock: the queue is live (its watch
// goes when it stops), the device maybe not yet (notifies before DRIVER_OK).
void MmioTransport::notify_polled(uint32_t index) {
  counters_.notifies_polled.fetch_add(1, std::memory_order_relaxed);
  if (queues_[index].ready && active_) device_.queue_notify(index);
}

}  // namespace kvmmio::virtio
