// SPDX-License-Identifier: BSD-2-Clause
// DeviceLifecycle: Status writes through the transition table, activation
// at DRIVER_OK, reset (Status = 0, 2.4) and DEVICE_NEEDS_RESET.
#include "mmio_lifecycle.h"

#include "kvmmio/virtio/device_status.h"
#include "mmio_features.h"
#include "mmio_interrupts.h"
#include "mmio_mirror.h"
#include "mmio_queues.h"

namespace kvmmio::virtio {

DeviceLifecycle::DeviceLifecycle(TransportContext& ctx, FeatureNegotiation& features, QueueSet& queues,
                                 TransportInterrupts& interrupts, MirrorPublisher& mirror,
                                 VirtioInterrupt& device_side)
    : ctx_(ctx), features_(features), queues_(queues), interrupts_(interrupts), mirror_(mirror),
      device_side_(device_side),
      activations_(MmioTransport::kActivationsPerSecond, MmioTransport::kActivationBurst, ctx.env.clock) {}

void DeviceLifecycle::write_status(uint32_t value) {
  const uint32_t current = status_.load();
  switch (classify_status_write(current, value, ctx_.options.version)) {
    case StatusChange::kReset: return reset();
    case StatusChange::kUnchanged: return;
    case StatusChange::kAcknowledge: status_.fetch_or(status::kAcknowledge); return;
    case StatusChange::kDriver: status_.fetch_or(status::kDriver); return;
    case StatusChange::kFeaturesOk:
      // Refusing leaves FEATURES_OK clear; the driver reads Status back and
      // gives up on the device (3.1.1 step 6).
      if (features_.acceptable()) status_.fetch_or(status::kFeaturesOk);
      return;
    case StatusChange::kDriverOk:
      // No FEATURES_OK in legacy: DRIVER_OK ends negotiation. A device that
      // refuses the features then refuses to start instead:
      // DEVICE_NEEDS_RESET, announced once DRIVER_OK is set.
      if (ctx_.options.version == kVersionLegacy && !features_.settle_legacy()) needs_reset("features refused");
      status_.fetch_or(status::kDriverOk);
      return activate();
    case StatusChange::kFailed: status_.fetch_or(status::kFailed); return;
    case StatusChange::kInvalid:
      return ctx_.guest_error("Status 0x%x written in state 0x%x: not a valid transition", value, current);
  }
}

void DeviceLifecycle::activate() {
  // Set-up already failed: stay inert, and now that DRIVER_OK is set the
  // driver gets the notification 2.1.2 asks for.
  if (status_ & status::kDeviceNeedsReset) return interrupts_.raise_config_change();
  if (!activations_.take()) {
    ctx_.guest_error("DRIVER_OK refused: more than %.0f activations at once or %.0f per second (a reset storm)",
                     MmioTransport::kActivationBurst, MmioTransport::kActivationsPerSecond);
    return needs_reset("activation rate limit");
  }
  DeviceActivation activation;
  activation.features = features_.accepted();
  activation.interrupt = &device_side_;
  activation.lock = &ctx_.lock;
  activation.queues = queues_.start_live();
  if (!ctx_.device.activate(activation)) {
    queues_.stop_rings();
    return needs_reset("the device could not start");
  }
  active_ = true;
  queues_.update_bypass();
  queues_.notify_vmm_owned();
}

void DeviceLifecycle::reset() {
  // The device first, so a backend stops using the notify and interrupt fds.
  stop();
  // 4.2.2: reset clears InterruptStatus and every QueueReady. The notify
  // fds stay assigned: a notify of a queue that is not live goes nowhere.
  queues_.reset();
  interrupts_.clear();
  status_.store(0);
  features_.reset();
}

void DeviceLifecycle::stop() {
  if (active_) ctx_.device.reset();
  active_ = false;
}

void DeviceLifecycle::needs_reset(const char* why) {
  if (status_.fetch_or(status::kDeviceNeedsReset) & status::kDeviceNeedsReset) return;  // once
  ctx_.counters.needs_reset.fetch_add(1, std::memory_order_relaxed);
  // Once per reset; a guest that keeps breaking and resetting repeats it.
  if (const uint64_t n = ctx_.repeats.next())
    KVMMIO_LOG_WARN("%s: device needs reset: %s (#%llu)", ctx_.name(), why, static_cast<unsigned long long>(n));
  mirror_.publish_status();
  if (!(status_.load() & status::kDriverOk)) return;  // activate() notifies then
  interrupts_.raise_config_change();
}

}  // namespace kvmmio::virtio
