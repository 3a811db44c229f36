// SPDX-License-Identifier: BSD-2-Clause
// TransportInterrupts: the device's interrupt line as the guest sees it:
// InterruptStatus and InterruptACK (virtio 1.2 4.2.2), the irqfd edge, and
// with irq=relay the eventfd backends write instead of the irqfd.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "mmio_context.h"

namespace kvmmio::virtio {

class DeviceLifecycle;
class MirrorPublisher;

class TransportInterrupts {
 public:
  // With irq=relay, starts watching the relay eventfd on the event loop.
  TransportInterrupts(TransportContext& ctx, const DeviceLifecycle& lifecycle, MirrorPublisher& mirror);
  ~TransportInterrupts();
  TransportInterrupts(const TransportInterrupts&) = delete;
  TransportInterrupts& operator=(const TransportInterrupts&) = delete;

  // From any thread: the bits first, then the edge, so the guest's handler
  // finds them (in the mirror too). Counted in interrupts_injected.
  void raise(uint32_t bits);
  // A configuration change notification (also counted in config_interrupts).
  void raise_config_change();

  // InterruptStatus as a guest read returns it, and InterruptACK.
  uint32_t read() const;
  void acknowledge(uint32_t bits);

  // A backend writes the irqfd itself (irq=irqfd, a backend-owned queue
  // live): InterruptStatus cannot know of its used buffers.
  void set_bypass(bool bypass) { bypass_.store(bypass); }
  // Reset: InterruptStatus cleared (4.2.2), no bypass.
  void clear();

  // What a backend writes to interrupt the guest: the irqfd, or the relay.
  int fd() const;

 private:
  void relay();

  TransportContext& ctx_;
  const DeviceLifecycle& lifecycle_;
  MirrorPublisher& mirror_;
  std::atomic<uint32_t> status_{0};
  std::atomic<bool> bypass_{false};
  std::unique_ptr<EventFd> relay_;       // irq=relay: the backends' interrupt fd
  EventLoop::Registration relay_watch_;  // its callback takes no lock; dropped first
};

}  // namespace kvmmio::virtio
