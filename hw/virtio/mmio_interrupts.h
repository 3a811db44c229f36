// SPDX-License-Identifier: BSD-2-Clause
// TransportInterrupts: the bits of InterruptStatus the VMM set and the
// guest has not acknowledged (virtio 1.2 4.2.2), the irqfd edge, and with
// irq=relay the eventfd backends write instead of the irqfd. A part of
// DeviceState (mmio_device_state.h), which decides what a guest's read of
// InterruptStatus returns and when the mirror shows a new bit; it calls no
// other part.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "mmio_context.h"

namespace kvmmio::virtio {

class TransportInterrupts {
 public:
  // With irq=relay, starts watching the relay eventfd on the event loop.
  explicit TransportInterrupts(TransportContext& ctx);
  ~TransportInterrupts();
  TransportInterrupts(const TransportInterrupts&) = delete;
  TransportInterrupts& operator=(const TransportInterrupts&) = delete;

  // From any thread: `bits` set (counted in interrupts_injected), then,
  // separately, the edge: whoever publishes the bits (the mirror) does so
  // between the two, so the guest's handler finds them.
  void post(uint32_t bits);
  void signal() { ctx_.env.irq.signal(); }

  // The bits set and not acknowledged; InterruptACK; reset (4.2.2).
  uint32_t pending() const { return status_.load(); }
  void acknowledge(uint32_t bits);
  void clear() { status_.store(0); }

  // What a backend writes to interrupt the guest: the irqfd, or the relay.
  int fd() const;

 private:
  void relay();

  TransportContext& ctx_;
  std::atomic<uint32_t> status_{0};
  std::unique_ptr<EventFd> relay_;       // irq=relay: the backends' interrupt fd
  EventLoop::Registration relay_watch_;  // its callback takes no lock; dropped first
};

}  // namespace kvmmio::virtio
