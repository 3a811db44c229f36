// SPDX-License-Identifier: BSD-2-Clause
// ControlQueue: virtio-net's control queue (virtio 1.2 section 5.1.6.5),
// always the VMM's whatever the backend. Internal to hw/net; VirtioNet
// makes one per activation when it offers MQ.
//
// A command is a device-readable CtrlHdr and its data, then one
// device-writable ack byte. kvmmio accepts the receive-mode, MAC-filter
// and queue-pair commands (the tap delivers every frame anyway; all pairs
// are always served) and answers anything else with VIRTIO_NET_ERR. At most
// VirtioNet::kCtrlCommandsPerDispatch per call (QueueDrain); the rest on a
// later turn of the event loop.
#pragma once

#include <cstdint>

#include "kvmmio/base/deferred_work.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/virtio/queue_drain.h"

namespace kvmmio::net {

class ControlQueue {
 public:
  // Throws std::system_error if the re-queue eventfd cannot be had.
  ControlQueue(const GuestMemory& memory, EventLoop& loop, DeviceLock& lock, uint16_t queue_pairs,
               NetCounters& counters);

  // The ring (activation, enable_queue) and the device's interrupt.
  void bind(virtio::SplitQueue* ring, virtio::VirtioInterrupt* interrupt) { drain_.bind(ring, interrupt); }
  // A notify, or the rest after a budget stop (device lock held).
  void process();

 private:
  // The ack byte for one command.
  uint8_t execute(const virtio::DescriptorChain& chain) const;

  const GuestMemory& memory_;
  uint16_t queue_pairs_;
  NetCounters& counters_;
  virtio::QueueDrain drain_;
  DeferredWork resume_;  // last: dropped first, its work uses the above
};

}  // namespace kvmmio::net
