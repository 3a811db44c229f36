// SPDX-License-Identifier: BSD-2-Clause
// DeviceState: Status writes through the transition table, activation at
// DRIVER_OK, reset (Status = 0, 2.4), DEVICE_NEEDS_RESET, the feature and
// interrupt registers, and the interrupts the device raises.
//
// InterruptStatus when a backend bypasses the VMM (irq=irqfd, a backend-
// owned queue live): the backend writes the irqfd directly, so the VMM never
// learns of its used buffers. The used-buffer bit then reads as set whenever
// DRIVER_OK is: a driver that finds no new used entries treats it as a
// spurious interrupt, which virtio drivers must tolerate (2.7.7.1), while a
// clear bit would make Linux's vm_interrupt() skip the rings and lose the
// interrupt. docs/virtio-mmio.md has the full reasoning.
//
// With regs=mirror the same holds for every queue: KvmMmioSlot maps the
// mirror over the window and the guest's InterruptACK of the used-buffer bit
// is swallowed by its ioeventfd in the kernel, so the VMM cannot clear that bit
// before the guest's next read. It reads as set from DRIVER_OK on. The
// config-change bit keeps its meaning: set (and published to the mirror)
// before its interrupt, cleared when the guest's ACK of it exits.
#include "mmio_device_state.h"

#include "kvmmio/virtio/device_status.h"
#include "mmio_mirror.h"
#include "mmio_queues.h"

namespace kvmmio::virtio {

DeviceState::DeviceState(TransportContext& ctx, QueueSet& queues, MirrorPublisher& mirror,
                         VirtioInterrupt& device_side)
    : ctx_(ctx), queues_(queues), mirror_(mirror), device_side_(device_side), features_(ctx), config_(ctx),
      interrupts_(ctx),
      activations_(MmioTransport::kActivationsPerSecond, MmioTransport::kActivationBurst, ctx.env.clock) {}

uint32_t DeviceState::read_register(const RegisterInfo& info) const {
  switch (info.offset) {
    case reg::kDeviceFeatures: return features_.read_offered_word();
    case reg::kInterruptStatus: return interrupt_status();
    case reg::kStatus: return status();
    case reg::kConfigGeneration: return config_.generation();
    default: return 0;  // the register file sends no other register here
  }
}

void DeviceState::write_register(const RegisterInfo& info, uint32_t value) {
  switch (info.offset) {
    case reg::kDeviceFeaturesSel: return features_.select_offered_word(value);
    case reg::kDriverFeaturesSel: return features_.select_accepted_word(value);
    case reg::kDriverFeatures: return features_.write_accepted_word(value, status());
    case reg::kInterruptAck: return interrupts_.acknowledge(value);
    case reg::kStatus: return write_status(value);
    default: return;  // the register file sends no other register here
  }
}

void DeviceState::write_status(uint32_t value) {
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

void DeviceState::activate() {
  // Set-up already failed: stay inert, and now that DRIVER_OK is set the
  // driver gets the notification 2.1.2 asks for.
  if (status_ & status::kDeviceNeedsReset) return raise_config_change();
  if (!activations_.take()) {
    ctx_.guest_error("DRIVER_OK refused: more than %.0f activations at once or %.0f per second (a reset storm)",
                     MmioTransport::kActivationBurst, MmioTransport::kActivationsPerSecond);
    return needs_reset("activation rate limit");
  }
  DeviceActivation activation;
  activation.features = features_.accepted();
  activation.interrupt = &device_side_;
  activation.lock = &ctx_.lock;
  activation.queues = queues_.start_live({{.event_idx = features_.accepted(feature::kRingEventIdx),
                                           .indirect = features_.accepted(feature::kRingIndirectDesc)},
                                          interrupts_.fd()});
  if (!ctx_.device.activate(activation)) {
    queues_.abort_start();
    return needs_reset("the device could not start");
  }
  active_ = true;
  queues_.activated();
}

void DeviceState::reset() {
  // The device first, so a backend stops using the notify and interrupt fds.
  stop();
  // 4.2.2: reset clears InterruptStatus and every QueueReady. The notify
  // fds stay assigned: a notify of a queue that is not live goes nowhere.
  queues_.reset();
  interrupts_.clear();
  status_.store(0);
  features_.reset();
}

void DeviceState::stop() {
  if (active_) ctx_.device.reset();
  active_ = false;
  queues_.deactivated();
}

void DeviceState::needs_reset(const char* why) {
  if (status_.fetch_or(status::kDeviceNeedsReset) & status::kDeviceNeedsReset) return;  // once
  ctx_.counters.needs_reset.fetch_add(1, std::memory_order_relaxed);
  // Once per reset; a guest that keeps breaking and resetting repeats it.
  if (const uint64_t n = ctx_.repeats.next())
    KVMMIO_LOG_WARN("%s: device needs reset: %s (#%llu)", ctx_.name(), why, static_cast<unsigned long long>(n));
  mirror_.publish_status();
  if (!(status_.load() & status::kDriverOk)) return;  // activate() notifies then
  raise_config_change();
}

void DeviceState::signal_used() {
  interrupts_.post(interrupt::kUsedBuffer);
  // Nothing to publish: with regs=mirror the used-buffer bit reads as set
  // from DRIVER_OK on (see the top), and without it every read traps.
  interrupts_.signal();
}

void DeviceState::signal_config_change() {
  config_.step();
  mirror_.publish_config_change();
  // Before DRIVER_OK the driver may not be ready for interrupts; it reads
  // the configuration (and the generation) during initialisation anyway.
  if (status() & status::kDriverOk) raise_config_change();
}

void DeviceState::raise_config_change() {
  ctx_.counters.config_interrupts.fetch_add(1, std::memory_order_relaxed);
  // The bit before the edge: the guest's handler must find it set, in the
  // mirror too.
  interrupts_.post(interrupt::kConfigChange);
  mirror_.publish_status();
  interrupts_.signal();
}

uint32_t DeviceState::interrupt_status() const {
  uint32_t bits = interrupts_.pending();
  if ((queues_.backend_bypass() || mirror_.enabled()) && (status() & status::kDriverOk))
    bits |= interrupt::kUsedBuffer;
  return bits;
}

}  // namespace kvmmio::virtio
