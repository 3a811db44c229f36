// SPDX-License-Identifier: BSD-2-Clause
// DeviceState alone (hw/virtio/mmio_device_state.h), with the two owners it
// drives (QueueSet, MirrorPublisher) and no register file: the status
// field's transitions, feature negotiation, activation and its refusal,
// DEVICE_NEEDS_RESET, InterruptStatus and ConfigGeneration, reset.
#include <gtest/gtest.h>

#include "hw/virtio/mmio_device_state.h"
#include "hw/virtio/mmio_mirror.h"
#include "hw/virtio/mmio_queues.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/queue_layout.h"
#include "../virtio/transport_parts.h"

namespace kvmmio::virtio::test {
namespace {

// A MirrorSource for a mirror that is never enabled (regs=trap): any call
// is a failure.
struct NoMirrorSource final : MirrorSource {
  uint32_t register_value(const RegisterInfo&) override { return fail(); }
  uint32_t device_status() const override { return fail(); }
  uint32_t interrupt_status() const override { return fail(); }
  uint32_t config_generation() const override { return fail(); }
  uint32_t step_config_generation() override { return fail(); }
  static uint32_t fail() {
    ADD_FAILURE() << "a mirror with regs=trap read its source";
    return 0;
  }
};

struct StateBench {
  explicit StateBench(TransportOptions options = PartsBench::kTrapOptions, EchoDevice::Options device = {})
      : bench(options, device) {}

  uint32_t read(uint32_t offset) { return state.read_register(*find_register(offset, bench.ctx->options.version)); }
  void write(uint32_t offset, uint32_t value) {
    state.write_register(*find_register(offset, bench.ctx->options.version), value);
  }
  void accept(uint64_t features) {
    write(reg::kDriverFeaturesSel, 0);
    write(reg::kDriverFeatures, static_cast<uint32_t>(features));
    write(reg::kDriverFeaturesSel, 1);
    write(reg::kDriverFeatures, static_cast<uint32_t>(features >> 32));
  }
  uint64_t offered() {
    write(reg::kDeviceFeaturesSel, 0);
    const uint64_t low = read(reg::kDeviceFeatures);
    write(reg::kDeviceFeaturesSel, 1);
    return low | uint64_t{read(reg::kDeviceFeatures)} << 32;
  }
  // ACKNOWLEDGE, DRIVER, every offered feature, FEATURES_OK.
  void negotiate() {
    write(reg::kStatus, status::kAcknowledge);
    write(reg::kStatus, status::kAcknowledge | status::kDriver);
    accept(offered());
    write(reg::kStatus, status::kAcknowledge | status::kDriver | status::kFeaturesOk);
  }
  void driver_ok() {
    write(reg::kStatus, status::kAcknowledge | status::kDriver | status::kFeaturesOk | status::kDriverOk);
  }

  PartsBench bench;
  RecordedFaults faults;
  RecordedInterrupt device_side;
  NoMirrorSource source;
  MirrorPublisher mirror{*bench.ctx, source};
  QueueSet queues{*bench.ctx, faults};
  DeviceState state{*bench.ctx, queues, mirror, device_side};
};

TEST(DeviceStateOwner, NegotiatesThenActivatesTheDeviceWithTheLiveQueues) {
  StateBench s;
  s.negotiate();
  ASSERT_TRUE(s.state.status() & status::kFeaturesOk);
  EXPECT_TRUE(s.state.accepted(feature::kVersion1));
  // A queue made live by whoever owns it: the state only hands it over.
  const uint64_t ring = PartsBench::kRing0;
  s.queues.go_live(QueueLayout{32, ring, ring + desc_table_bytes(32), ring + 0x1000});
  s.driver_ok();
  EXPECT_TRUE(s.state.active());
  ASSERT_TRUE(s.bench.device->active());
  EXPECT_EQ(s.bench.device->activated_features(), s.state.accepted_features());
  ASSERT_EQ(s.bench.device->activated_queues().size(), 1u);
  EXPECT_EQ(s.bench.device->notifies(0), 1u) << "activation looks at queues made available before it";

  // A trapped write of DriverFeatures after FEATURES_OK is a guest error.
  const uint64_t errors = s.bench.ctx->counters.guest_errors.load();
  s.write(reg::kDriverFeatures, 0);
  EXPECT_EQ(s.bench.ctx->counters.guest_errors.load(), errors + 1);
  EXPECT_EQ(s.bench.device->activated_features(), s.state.accepted_features());

  s.write(reg::kStatus, 0);
  EXPECT_EQ(s.state.status(), 0u);
  EXPECT_FALSE(s.state.active());
  EXPECT_EQ(s.state.accepted_features(), 0u);
  EXPECT_EQ(s.bench.device->resets(), 1u);
  s.queues.select(0);
  EXPECT_FALSE(s.queues.selected()->ready) << "reset stops the queues";
}

TEST(DeviceStateOwner, FeaturesOkIsRefusedForUnofferedBits) {
  StateBench s;
  s.write(reg::kStatus, status::kAcknowledge);
  s.write(reg::kStatus, status::kAcknowledge | status::kDriver);
  s.accept(s.offered() | (uint64_t{1} << 20));
  s.write(reg::kStatus, status::kAcknowledge | status::kDriver | status::kFeaturesOk);
  EXPECT_FALSE(s.state.status() & status::kFeaturesOk);
  EXPECT_GE(s.bench.ctx->counters.guest_errors.load(), 1u);
}

TEST(DeviceStateOwner, ADeviceThatCannotStartNeedsAResetAnnouncedByAConfigInterrupt) {
  StateBench s(PartsBench::kTrapOptions, {.fail_activation = true});
  s.negotiate();
  s.driver_ok();
  EXPECT_FALSE(s.state.active());
  EXPECT_TRUE(s.state.status() & status::kDeviceNeedsReset);
  EXPECT_EQ(s.bench.ctx->counters.needs_reset.load(), 1u);
  EXPECT_EQ(s.bench.interrupts(), 1u);
  EXPECT_EQ(s.read(reg::kInterruptStatus), interrupt::kConfigChange);
  s.write(reg::kInterruptAck, interrupt::kConfigChange);
  EXPECT_EQ(s.read(reg::kInterruptStatus), 0u);
  // Said once: a second finding neither counts nor interrupts again.
  s.state.needs_reset("again");
  EXPECT_EQ(s.bench.ctx->counters.needs_reset.load(), 1u);
  EXPECT_EQ(s.bench.interrupts(), 0u);
}

TEST(DeviceStateOwner, NeedsResetBeforeDriverOkWaitsForDriverOkToInterrupt) {
  StateBench s;
  s.negotiate();
  s.state.needs_reset("a broken ring");
  EXPECT_EQ(s.bench.interrupts(), 0u) << "the driver may not be ready for interrupts";
  s.driver_ok();
  EXPECT_FALSE(s.bench.device->active()) << "a device that needs a reset stays inert";
  EXPECT_EQ(s.bench.interrupts(), 1u);
  EXPECT_EQ(s.read(reg::kInterruptStatus) & interrupt::kConfigChange, interrupt::kConfigChange);
}

TEST(DeviceStateOwner, UsedBuffersAndConfigChangesRaiseTheirBits) {
  StateBench s;
  s.state.signal_config_change();
  EXPECT_EQ(s.state.config_generation(), 1u);
  EXPECT_EQ(s.bench.interrupts(), 0u) << "no interrupt before DRIVER_OK";
  s.negotiate();
  s.driver_ok();
  s.state.signal_used();
  EXPECT_EQ(s.bench.interrupts(), 1u);
  EXPECT_EQ(s.read(reg::kInterruptStatus), interrupt::kUsedBuffer);
  s.state.signal_config_change();
  EXPECT_EQ(s.read(reg::kConfigGeneration), 2u);
  EXPECT_EQ(s.read(reg::kInterruptStatus), interrupt::kUsedBuffer | interrupt::kConfigChange);
  EXPECT_EQ(s.bench.ctx->counters.config_interrupts.load(), 1u);
  s.write(reg::kInterruptAck, interrupt::kAll);
  EXPECT_EQ(s.read(reg::kInterruptStatus), 0u);
  // A configuration write through the window steps the generation too.
  const uint8_t byte = 7;
  s.state.write_config(0, std::span(&byte, 1));
  EXPECT_EQ(s.state.config_generation(), 3u);
}

TEST(DeviceStateOwner, WithABackendBypassTheUsedBitReadsSetFromDriverOk) {
  StateBench s({.version = kVersionModern, .notify = NotifyMode::kTrap, .irq = IrqMode::kIrqFd,
                .regs = RegsMode::kTrap},
               {.backend_queues = 0b01});
  s.queues.attach_notify_fds();
  s.negotiate();
  const uint64_t ring = PartsBench::kRing0;
  s.queues.go_live(QueueLayout{32, ring, ring + desc_table_bytes(32), ring + 0x1000});
  EXPECT_EQ(s.read(reg::kInterruptStatus), 0u);
  s.driver_ok();
  EXPECT_EQ(s.read(reg::kInterruptStatus), interrupt::kUsedBuffer)
      << "the backend writes the irqfd: the VMM cannot know of its used buffers";
  s.state.stop();
  s.queues.detach_notify_fds();
}

}  // namespace
}  // namespace kvmmio::virtio::test
