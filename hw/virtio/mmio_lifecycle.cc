// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport: the device lifecycle: Status writes through the transition
// table, feature negotiation (virtio 1.2 2.2, 3.1.1), activation at
// DRIVER_OK and reset (Status = 0, 2.4).
#include <cinttypes>

#include "kvmmio/virtio/device_status.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "queue_state.h"

namespace kvmmio::virtio {

void MmioTransport::write_status(uint32_t value) {
  const uint32_t current = status_.load();
  switch (classify_status_write(current, value, options_.version)) {
    case StatusChange::kReset: return reset_device();
    case StatusChange::kUnchanged: return;
    case StatusChange::kAcknowledge: status_.fetch_or(status::kAcknowledge); return;
    case StatusChange::kDriver: status_.fetch_or(status::kDriver); return;
    case StatusChange::kFeaturesOk:
      // Refusing leaves FEATURES_OK clear; the driver reads Status back and
      // gives up on the device (3.1.1 step 6).
      if (features_acceptable(driver_features_)) status_.fetch_or(status::kFeaturesOk);
      return;
    case StatusChange::kDriverOk:
      if (options_.version == kVersionLegacy) {
        // No FEATURES_OK in legacy: DRIVER_OK ends negotiation, and a legacy
        // driver cannot be refused, only held to what was offered.
        const uint64_t unoffered = driver_features_ & ~offered_features();
        if (unoffered) {
          guest_error("driver accepted features 0x%" PRIx64 " that were not offered; ignored", unoffered);
          driver_features_ &= ~unoffered;
        }
        // The device's own rules (a feature without one it depends on) hold
        // in legacy too; with no FEATURES_OK to clear, the device refuses to
        // start instead: DEVICE_NEEDS_RESET, announced once DRIVER_OK is set.
        if (!device_.accept_features(driver_features_)) {
          guest_error("DRIVER_OK refused: the device does not accept features 0x%" PRIx64
                      " together (a feature without one it depends on)", driver_features_);
          needs_reset("features refused");
        }
      }
      status_.fetch_or(status::kDriverOk);
      return activate();
    case StatusChange::kFailed: status_.fetch_or(status::kFailed); return;
    case StatusChange::kInvalid:
      return guest_error("Status 0x%x written in state 0x%x: not a valid transition", value, current);
  }
}

bool MmioTransport::features_acceptable(uint64_t features) {
  const uint64_t unoffered = features & ~offered_features();
  if (unoffered) {
    guest_error("FEATURES_OK refused: features 0x%" PRIx64 " were not offered", unoffered);
    return false;
  }
  // A modern device only works with a modern driver (6.1, 4.2.2 Version 2).
  if (!feature::has(features, feature::kVersion1)) {
    guest_error("FEATURES_OK refused: VIRTIO_F_VERSION_1 not accepted by a driver of a Version 2 device");
    return false;
  }
  if (!device_.accept_features(features)) {
    guest_error("FEATURES_OK refused: the device does not accept features 0x%" PRIx64
                " together (a feature without one it depends on)", features);
    return false;
  }
  return true;
}

void MmioTransport::activate() {
  if (status_ & status::kDeviceNeedsReset) {
    // Set-up already failed: stay inert, and now that DRIVER_OK is set the
    // driver gets the notification 2.1.2 asks for.
    counters_.config_interrupts.fetch_add(1, std::memory_order_relaxed);
    return raise(interrupt::kConfigChange);
  }
  if (!activations_.take()) {
    guest_error("DRIVER_OK refused: more than %.0f activations at once or %.0f per second (a reset storm)",
                kActivationBurst, kActivationsPerSecond);
    return needs_reset("activation rate limit");
  }
  DeviceActivation activation;
  activation.features = driver_features_;
  activation.interrupt = this;
  activation.lock = &lock_;
  for (uint32_t i = 0; i < queues_.size(); ++i) {
    if (!queues_[i].ready) continue;
    start_ring(i);
    activation.queues.push_back(active_queue(i));
  }
  if (!device_.activate(activation)) {
    for (QueueState& q : queues_) q.ring->stop();
    return needs_reset("the device could not start");
  }
  active_ = true;
  update_bypass();
  // Buffers made available before DRIVER_OK came with notifies nobody acted on.
  for (uint32_t i = 0; i < queues_.size(); ++i) {
    if (queues_[i].ready && !queues_[i].backend_owned) device_.queue_notify(i);
  }
}

void MmioTransport::reset_device() {
  // The device first, so a backend stops using the notify and interrupt fds.
  if (active_) device_.reset();
  active_ = false;
  for (uint32_t i = 0; i < queues_.size(); ++i) {
    QueueState& q = queues_[i];
    q.ring->stop();
    detach_notify_fd(i);
    q.ready = false;
    q.layout = {};
    q.num = q.max_size;
    q.desc = q.driver = q.device = 0;
    q.pfn = 0;
    q.align = kLegacyDefaultAlign;
  }
  // 4.2.2: reset clears InterruptStatus and every QueueReady.
  interrupt_status_.store(0);
  bypass_.store(false);
  status_.store(0);
  driver_features_ = 0;
  device_features_sel_ = driver_features_sel_ = queue_sel_ = 0;
}

}  // namespace kvmmio::virtio
