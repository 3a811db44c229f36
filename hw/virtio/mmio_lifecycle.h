// SPDX-License-Identifier: BSD-2-Clause
// DeviceLifecycle: the device status field and what its writes do (virtio
// 1.2 2.1, 3.1.1): the transition table, activation at DRIVER_OK, reset at
// Status = 0, and DEVICE_NEEDS_RESET (2.1.2) from whoever finds the device
// broken.
#pragma once

#include <atomic>
#include <cstdint>

#include "kvmmio/base/token_bucket.h"
#include "mmio_context.h"

namespace kvmmio::virtio {

class FeatureNegotiation;
class MirrorPublisher;
class QueueSet;
class TransportInterrupts;

class DeviceLifecycle {
 public:
  // `device_side` is what the device gets as its VirtioInterrupt at activation.
  DeviceLifecycle(TransportContext& ctx, FeatureNegotiation& features, QueueSet& queues,
                  TransportInterrupts& interrupts, MirrorPublisher& mirror, VirtioInterrupt& device_side);

  // From any thread.
  uint32_t status() const { return status_.load(); }
  // activate() succeeded, no reset since; the device lock is held.
  bool active() const { return active_; }

  // A driver's Status write; the device lock is held.
  void write_status(uint32_t value);
  // Reset (Status = 0): what the driver's write of 0 does, and the host's
  // reset (MmioTransport::reset()) too. The device lock is held.
  void reset();
  // From any thread: DEVICE_NEEDS_RESET, announced with a configuration
  // change interrupt once DRIVER_OK is set.
  void needs_reset(const char* why);
  // The transport goes: the device drops the notify and interrupt fds
  // before they close. The device lock is held.
  void stop();

 private:
  void activate();

  TransportContext& ctx_;
  FeatureNegotiation& features_;
  QueueSet& queues_;
  TransportInterrupts& interrupts_;
  MirrorPublisher& mirror_;
  VirtioInterrupt& device_side_;
  std::atomic<uint32_t> status_{0};
  bool active_ = false;
  // Set-up storms (docs/security.md): each activation opens host resources.
  TokenBucket activations_;
};

}  // namespace kvmmio::virtio
