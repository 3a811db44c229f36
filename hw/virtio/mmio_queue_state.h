// SPDX-License-Identifier: BSD-2-Clause
// QueueState: one queue of an MmioTransport: its registers as the driver
// wrote them, whether it is live, its ring, and its notify fd. Only the
// QueueSet (mmio_queues.h) that holds it changes any of it; the register
// file reads it through QueueSet::selected(), and writes the registers
// through the QueueSet's typed setters.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/notify_fd_source.h"
#include "kvmmio/virtio/queue_layout.h"
#include "kvmmio/virtio/split_queue.h"

namespace kvmmio::virtio {

// Linux writes PAGE_SIZE to QueueAlign and GuestPageSize; until a driver
// does, the legacy layout assumes 4 KiB (what the spec's layout note calls
// "usually 4096").
inline constexpr uint32_t kLegacyDefaultAlign = 4096;
inline constexpr uint32_t kLegacyDefaultPageSize = 4096;

struct QueueState {
  QueueState(const GuestMemory& memory, uint32_t queue_index, uint16_t max, bool backend,
             QueueFaultSink* faults)
      : index(queue_index), max_size(max), backend_owned(backend), num(max),
        ring(std::make_unique<SplitQueue>(memory, queue_index, faults)) {}

  // Registers back to their reset values (reset, QueueReset: 2.6.1).
  void reset_registers() {
    num = max_size;
    desc = driver = device = 0;
    pfn = 0;
    align = kLegacyDefaultAlign;
  }

  uint32_t index;
  uint16_t max_size;   // QueueNumMax
  bool backend_owned;  // VirtioDevice::backend_owns_queue()

  // Registers, as written. QueueNum starts at the maximum (as PCI's
  // queue_size does), so a driver that never writes it gets a valid size.
  uint32_t num;
  uint64_t desc = 0, driver = 0, device = 0;  // modern
  uint32_t pfn = 0;                            // legacy
  uint32_t align = kLegacyDefaultAlign;        // legacy

  // Live: the layout passed validate_layout(); QueueReady reads 1 (modern),
  // QueuePFN reads the PFN (legacy), and the queue's notifies reach the
  // device.
  bool ready = false;
  QueueLayout layout;

  // Stable for the transport's lifetime, so devices may keep the pointer;
  // configured only while live and the device is active.
  std::unique_ptr<SplitQueue> ring;

  // The notify fd, for the transport's lifetime (QueueSet::attach_notify_fds):
  // the ioeventfd KVM signals on the guest's QueueNotify store, or, for a
  // backend-owned queue without one, a plain eventfd the trap path signals
  // (the backend's kick fd either way). `poll` watches the ioeventfd of a
  // VMM-owned queue under the device lock.
  std::unique_ptr<QueueNotifyFd> ioeventfd;
  std::optional<EventFd> kick;
  DeviceLock::Watch poll;

  int notify_fd() const {
    if (ioeventfd) return ioeventfd->fd();
    return kick ? kick->fd() : -1;
  }
};

}  // namespace kvmmio::virtio
