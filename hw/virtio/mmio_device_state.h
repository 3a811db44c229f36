// SPDX-License-Identifier: BSD-2-Clause
// DeviceState: one of the transport's three owners (mmio_parts.h): the
// device as its driver negotiates with it. It owns
//   - the device status field and what its writes do (virtio 1.2 2.1,
//     3.1.1): the transition table, activation at DRIVER_OK, reset at
//     Status = 0, and DEVICE_NEEDS_RESET (2.1.2) from whoever finds the
//     device broken;
//   - the feature bits (FeatureNegotiation, mmio_features);
//   - the configuration window and ConfigGeneration (ConfigWindow, mmio_config);
//   - InterruptStatus (TransportInterrupts, mmio_interrupts).
// It drives the queues (QueueSet) at activation and reset and tells the
// mirror (MirrorPublisher) what changed; neither calls it.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "kvmmio/base/token_bucket.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "mmio_config.h"
#include "mmio_context.h"
#include "mmio_features.h"
#include "mmio_interrupts.h"

namespace kvmmio::virtio {

class MirrorPublisher;
class QueueSet;

class DeviceState {
 public:
  // `device_side` is what the device gets as its VirtioInterrupt at activation.
  DeviceState(TransportContext& ctx, QueueSet& queues, MirrorPublisher& mirror, VirtioInterrupt& device_side);

  // From any thread.
  uint32_t status() const { return status_.load(); }
  // activate() succeeded, no reset since; the device lock is held.
  bool active() const { return active_; }
  // What the driver accepted; the device lock is held.
  uint64_t accepted_features() const { return features_.accepted(); }
  bool accepted(unsigned bit) const { return features_.accepted(bit); }

  // The registers it owns (DeviceFeatures(Sel), DriverFeatures(Sel),
  // InterruptStatus, InterruptACK, Status, ConfigGeneration), as the
  // register file dispatches them; the device lock is held.
  uint32_t read_register(const RegisterInfo& info) const;
  void write_register(const RegisterInfo& info, uint32_t value);
  // The configuration window (at 0x100); the device lock is held.
  void read_config(uint64_t offset, std::span<uint8_t> data) { config_.read(offset, data); }
  void write_config(uint64_t offset, std::span<const uint8_t> data) { config_.write(offset, data); }

  // Reset (Status = 0): what the driver's write of 0 does, and the host's
  // reset (MmioTransport::reset()) too. The device lock is held.
  void reset();
  // From any thread: DEVICE_NEEDS_RESET, announced with a configuration
  // change interrupt once DRIVER_OK is set.
  void needs_reset(const char* why);
  // The transport goes: the device drops the notify and interrupt fds
  // before they close. The device lock is held.
  void stop();

  // The device's side, from any thread: a used buffer, a configuration
  // change of its own (ConfigGeneration steps; an interrupt once DRIVER_OK).
  void signal_used();
  void signal_config_change();

  // InterruptStatus as a guest's read returns it (see mmio_device_state.cc
  // for the used-buffer bit that a bypass keeps set). From any thread.
  uint32_t interrupt_status() const;
  // What a backend writes to interrupt the guest: the irqfd, or the relay.
  int interrupt_fd() const { return interrupts_.fd(); }
  // ConfigGeneration, and its step (a change the mirror publishes).
  uint32_t config_generation() const { return config_.generation(); }
  uint32_t step_config_generation() { return config_.step(); }

 private:
  void write_status(uint32_t value);
  void activate();
  void raise_config_change();

  TransportContext& ctx_;
  QueueSet& queues_;
  MirrorPublisher& mirror_;
  VirtioInterrupt& device_side_;
  FeatureNegotiation features_;
  ConfigWindow config_;
  TransportInterrupts interrupts_;
  std::atomic<uint32_t> status_{0};
  bool active_ = false;
  // Set-up storms (docs/security.md): each activation opens host resources.
  TokenBucket activations_;
};

}  // namespace kvmmio::virtio
