// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport::QueueState: one queue's registers as the driver wrote them
// and its runtime (ring, notify fd). Private to hw/virtio/mmio_*.cc.
#pragma once

#include <memory>
#include <optional>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/virtio/notify_fd_source.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "kvmmio/virtio/queue_layout.h"
#include "kvmmio/virtio/split_queue.h"

namespace kvmmio::virtio {

// Linux writes PAGE_SIZE to QueueAlign and GuestPageSize; until a driver
// does, the legacy layout assumes 4 KiB (what the spec's layout note calls
// "usually 4096").
inline constexpr uint32_t kLegacyDefaultAlign = 4096;
inline constexpr uint32_t kLegacyDefaultPageSize = 4096;

struct MmioTransport::QueueState {
  QueueState(const GuestMemory& memory, uint32_t index, uint16_t max, bool backend,
             QueueFaultSink* faults)
      : max_size(max), backend_owned(backend), num(max),
        ring(std::make_unique<SplitQueue>(memory, index, faults)) {}

  uint16_t max_size;   // QueueNumMax
  bool backend_owned;  // VirtioDevice::backend_owns_queue()

  // Registers, as written. QueueNum starts at the maximum (as PCI's
  // queue_size does), so a driver that never writes it gets a valid size.
  uint32_t num;
  uint64_t desc = 0, driver = 0, device = 0;  // modern
  uint32_t pfn = 0;                            // legacy
  uint32_t align = kLegacyDefaultAlign;        // legacy

  // Live: the layout passed validate_layout(); QueueReady reads 1 (modern),
  // QueuePFN reads the PFN (legacy), the notify fd is attached.
  bool ready = false;
  QueueLayout layout;

  // Stable for the transport's lifetime, so devices may keep the pointer;
  // configured only while live and the device is active.
  std::unique_ptr<SplitQueue> ring;

  // The notify fd: an ioeventfd, or (backend-owned, trapping) a plain eventfd the
  // trap path signals; `poll` watches the ioeventfd of a VMM-owned queue
  // under the device lock.
  std::unique_ptr<QueueNotifyFd> ioeventfd;
  std::optional<EventFd> trap_eventfd;
  DeviceLock::Watch poll;

  int notify_fd() const {
    if (ioeventfd) return ioeventfd->fd();
    return trap_eventfd ? trap_eventfd->fd() : -1;
  }
};

}  // namespace kvmmio::virtio
