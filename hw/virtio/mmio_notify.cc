// SPDX-License-Identifier: BSD-2-Clause
// QueueSet: available-buffer notifications (virtio 1.2 4.2.3.3): the
// queues' notify fds, assigned once for the transport's lifetime, polled
// on the event loop for VMM-owned queues and handed to the backend for
// backend-owned ones; and QueueNotify writes that arrive as MMIO exits.
#include <unistd.h>

#include "kvmmio/base/log.h"
#include "mmio_queues.h"

namespace kvmmio::virtio {

void QueueSet::attach_notify_fds() {
  uint32_t trapping = 0;
  std::string first_reason;
  for (QueueState& q : queues_) {
    std::string reason = attach_notify_fd(q);
    if (reason.empty()) continue;
    if (!trapping++) first_reason = std::move(reason);
  }
  // Once per transport, as it is built: no guest can make it repeat.
  if (trapping)
    KVMMIO_LOG_WARN("%s: %u of %u queues have no ioeventfd (%s); their notifications trap", ctx_.name(),
                    trapping, size(), first_reason.c_str());
}

std::string QueueSet::attach_notify_fd(QueueState& q) {
  std::string reason;
  if (ctx_.notify_mode == NotifyMode::kIoEventFd) {
    try {
      // QueueNotify, 4 bytes, datamatch = the queue's index.
      q.ioeventfd = ctx_.env.notify_fds->attach(ctx_.env.base + reg::kQueueNotify, q.index);
    } catch (const std::exception& e) {
      reason = e.what();
    }
  }
  if (q.backend_owned) {
    // The backend waits on this fd; the VMM must not also read it (a
    // second reader steals notifies). Without an ioeventfd the trap path
    // signals a plain eventfd instead.
    if (!q.ioeventfd) q.kick.emplace();
    return reason;
  }
  if (!q.ioeventfd) return reason;
  try {
    q.poll = ctx_.lock.watch_eventfd(*ctx_.env.loop, q.ioeventfd->fd(),
                                     [this, index = q.index](uint64_t) { notify_polled(index); });
  } catch (const std::exception& e) {
    // Unpolled, the ioeventfd would swallow the guest's notifies: trap instead.
    q.ioeventfd.reset();
    reason = std::string("cannot poll it: ") + e.what();
  }
  return reason;
}

void QueueSet::detach_notify_fds() {
  for (QueueState& q : queues_) {
    q.poll.reset();  // a polled notify waiting for the device lock gives up (DeviceLock::Watch)
    q.ioeventfd.reset();  // deassigned from KVM, then closed
    q.kick.reset();
  }
}

void QueueSet::notify_trapped(uint32_t value) {
  ctx_.counters.notifies_trapped.fetch_add(1, std::memory_order_relaxed);
  // Without VIRTIO_F_NOTIFICATION_DATA the value is the queue index (4.2.2).
  if (value >= queues_.size())
    return ctx_.guest_error("QueueNotify for queue %u; the device has %zu", value, queues_.size());
  QueueState& q = queues_[value];
  if (!q.ready) return;  // a spurious notification is harmless (2.7.10)
  if (q.backend_owned) {
    const int fd = q.notify_fd();
    const uint64_t one = 1;
    if (fd >= 0 && ::write(fd, &one, sizeof(one)) != sizeof(one)) {
      if (const uint64_t n = ctx_.repeats.next())
        KVMMIO_LOG_WARN("%s: queue %u: forwarding a trapped notify failed (#%llu)", ctx_.name(), value,
                        static_cast<unsigned long long>(n));
    }
    return;
  }
  if (active_) ctx_.device.queue_notify(value);
}

// The event loop, holding the device lock, with the ioeventfd drained. The
// queue may not be live (a driver's store after QueueReady = 0, or before
// it set the queue up) and the device not active (notifies before
// DRIVER_OK, which activation makes up for): such a wake-up is counted and
// goes no further.
void QueueSet::notify_polled(uint32_t index) {
  ctx_.counters.notifies_polled.fetch_add(1, std::memory_order_relaxed);
  if (queues_[index].ready && active_) ctx_.device.queue_notify(index);
}

}  // namespace kvmmio::virtio
