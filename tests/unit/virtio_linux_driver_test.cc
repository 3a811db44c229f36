// SPDX-License-Identifier: BSD-2-Clause
// The transport driven exactly as Linux's virtio_mmio driver drives it, for
// both register layouts: probe, reset, feature negotiation, queue set-up,
// DRIVER_OK, buffers, notify, interrupt and InterruptACK, queue teardown,
// reset and re-initialisation.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "../virtio/driver_ring.h"
#include "../virtio/harness.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {
namespace {

using test::Buffer;
using test::DriverRing;
using test::EchoDevice;
using test::TransportHarness;
using H = TransportHarness;

constexpr uint64_t kIn = H::kBuffers;            // device-readable
constexpr uint64_t kOut = H::kBuffers + 0x1000;  // device-writable

class LinuxDriver : public ::testing::TestWithParam<uint32_t> {
 protected:
  LinuxDriver() : h(config()) {}
  static H::Config config() {
    H::Config c;
    c.options.version = GetParam();
    return c;
  }
  bool modern() const { return GetParam() == kVersionModern; }
  uint64_t errors() const { return h.counters().guest_errors.load(); }

  // One request through queue 0: `text` in, echoed back into kOut.
  std::string echo(DriverRing& ring, const std::string& text) {
    h.memory.write(kIn, text.data(), text.size());
    const Buffer chain[] = {{kIn, static_cast<uint32_t>(text.size()), false}, {kOut, 64, true}};
    const uint16_t head = ring.add(chain);
    ring.publish();
    h.driver->notify(0);
    auto used = ring.take_used();
    if (!used) return "<nothing used>";
    EXPECT_EQ(used->id, head);
    std::string out(used->len, '\0');
    h.memory.read(kOut, out.data(), out.size());
    return out;
  }

  H h;
};

TEST_P(LinuxDriver, ProbeFindsTheDevice) {
  ASSERT_TRUE(h.driver->probe());
  EXPECT_EQ(h.driver->version(), GetParam());
  EXPECT_EQ(h.driver->device_id(), EchoDevice::kDeviceId);
  EXPECT_EQ(errors(), 0u);
}

TEST_P(LinuxDriver, FullLifecycleWithReinitialisation) {
  ASSERT_TRUE(h.driver->probe());
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Linux allocates and zeroes the rings before handing them over.
    DriverRing ring0(h.memory, DriverRing::linux_layout(H::kRing0, 256));
    DriverRing ring1(h.memory, DriverRing::linux_layout(H::kRing1, 64));

    auto features = h.driver->initialize(~uint64_t{0});
    ASSERT_TRUE(features);
    EXPECT_TRUE(*features & EchoDevice::kEchoFeature);
    EXPECT_EQ(feature::has(*features, feature::kVersion1), modern());
    EXPECT_TRUE(feature::has(*features, feature::kRingEventIdx));
    if (!modern()) {
      EXPECT_EQ(*features >> 32, 0u);
    }

    auto layout0 = h.driver->setup_queue(0, H::kRing0);
    auto layout1 = h.driver->setup_queue(1, H::kRing1, 64);
    ASSERT_TRUE(layout0 && layout1);
    EXPECT_EQ(*layout0, ring0.layout());
    EXPECT_EQ(*layout1, ring1.layout());
    EXPECT_FALSE(h.device->active());

    h.driver->driver_ok();
    ASSERT_TRUE(h.device->active());
    EXPECT_EQ(h.driver->status(), modern() ? 0x0fu : 0x07u);
    EXPECT_EQ(h.device->activated_features(), *features);
    const auto queues = h.device->activated_queues();
    ASSERT_EQ(queues.size(), 2u);
    EXPECT_EQ(queues[0].layout, *layout0);
    EXPECT_EQ(queues[1].layout, *layout1);
    EXPECT_NE(queues[0].ring, nullptr);

    h.interrupts();
    EXPECT_EQ(echo(ring0, "hello"), "hello");
    EXPECT_EQ(h.interrupts(), 1u);
    EXPECT_EQ(h.driver->interrupt(), interrupt::kUsedBuffer);  // vm_interrupt: read, ACK
    EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
    EXPECT_EQ(echo(ring0, "virtio-mmio"), "virtio-mmio");

    // Driver removal: reset, then delete the queues.
    const uint64_t resets = h.device->resets();
    h.driver->reset();
    EXPECT_EQ(h.device->resets(), resets + 1);
    EXPECT_FALSE(h.device->active());
    EXPECT_EQ(h.driver->status(), 0u);
    EXPECT_TRUE(h.driver->del_queue(0));
    EXPECT_TRUE(h.driver->del_queue(1));
  }
  EXPECT_EQ(errors(), 0u);
  EXPECT_EQ(h.counters().notifies_trapped.load(), 4u);
  EXPECT_EQ(h.counters().interrupts_injected.load(), 4u);
}

TEST_P(LinuxDriver, ResetClearsQueuesInterruptsAndNegotiation) {
  h.bring_up();
  DriverRing ring0(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ASSERT_EQ(echo(ring0, "x"), "x");
  ASSERT_NE(h.reg(reg::kInterruptStatus), 0u);
  h.driver->reset();
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
  h.driver->write(reg::kQueueSel, 0);
  EXPECT_EQ(h.reg(modern() ? reg::kQueueReady : reg::kQueuePfn), 0u);
  // A queue set up again after reset starts from index 0.
  DriverRing fresh(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
  h.driver->driver_ok();
  EXPECT_EQ(echo(fresh, "again"), "again");
  EXPECT_EQ(fresh.used_idx(), 1u);
}

TEST_P(LinuxDriver, BuffersMadeAvailableBeforeDriverOkAreProcessedAtDriverOk) {
  ASSERT_TRUE(h.driver->probe());
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  DriverRing ring0(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
  h.memory.write(kIn, "early", 5);
  const Buffer chain[] = {{kIn, 5, false}, {kOut, 8, true}};
  ring0.add(chain);
  ring0.publish();
  h.driver->notify(0);  // before DRIVER_OK: the device must not consume (2.1.2)
  EXPECT_EQ(ring0.used_idx(), 0u);
  h.driver->driver_ok();
  EXPECT_EQ(ring0.used_idx(), 1u);
}

TEST_P(LinuxDriver, QueueSetUpRefusesAQueueAlreadyInUse) {
  ASSERT_TRUE(h.driver->probe());
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
  EXPECT_FALSE(h.driver->setup_queue(0, H::kRing1));  // Linux reads PFN/READY first
  EXPECT_FALSE(h.driver->setup_queue(2, H::kRing1));  // QueueNumMax 0: no such queue
}

TEST_P(LinuxDriver, DeletingALiveQueueStopsIt) {
  h.bring_up();
  DriverRing ring0(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ASSERT_TRUE(h.driver->del_queue(0));  // while DRIVER_OK
  EXPECT_EQ(h.device->queue_resets(), 1u);
  const Buffer chain[] = {{kIn, 4, false}};
  ring0.add(chain);
  ring0.publish();
  h.driver->notify(0);
  EXPECT_EQ(ring0.used_idx(), 0u);  // the device must not touch a stopped queue
  // Set up again while DRIVER_OK: the device gets it back.
  DriverRing again(h.memory, DriverRing::linux_layout(H::kRing0, 128));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0, 128));
  EXPECT_EQ(h.device->enables(), 1u);
  EXPECT_EQ(echo(again, "back"), "back");
  EXPECT_EQ(errors(), 0u);
}

TEST_P(LinuxDriver, SmallerQueueThanTheMaximum) {
  ASSERT_TRUE(h.driver->probe());
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  DriverRing ring0(h.memory, DriverRing::linux_layout(H::kRing0, 16));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0, 16));
  h.driver->driver_ok();
  for (int i = 0; i < 40; ++i) ASSERT_EQ(echo(ring0, "ring of 16"), "ring of 16") << i;
}

INSTANTIATE_TEST_SUITE_P(Versions, LinuxDriver, ::testing::Values(kVersionLegacy, kVersionModern),
                         [](const auto& info) { return info.param == 1 ? "Legacy" : "Modern"; });

// --- feature negotiation -----------------------------------------------------

// A driver that takes `features` whatever was offered: ACKNOWLEDGE, DRIVER,
// the feature words, FEATURES_OK. Returns whether FEATURES_OK stuck.
bool take_features(H& h, uint64_t features) {
  h.driver->add_status(status::kAcknowledge);
  h.driver->add_status(status::kDriver);
  h.driver->write_driver_features(features);
  h.driver->add_status(status::kFeaturesOk);
  return h.driver->status() & status::kFeaturesOk;
}

TEST(FeatureNegotiation, ModernRefusesFeaturesOkWithoutVersion1) {
  H h({});
  ASSERT_TRUE(h.driver->probe());
  h.driver->add_status(status::kAcknowledge);
  h.driver->add_status(status::kDriver);
  h.driver->write_driver_features(EchoDevice::kEchoFeature);  // a legacy-minded driver
  h.driver->add_status(status::kFeaturesOk);
  EXPECT_FALSE(h.driver->status() & status::kFeaturesOk);
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
}

// event_idx=off: the bit is not offered, and a driver that takes it anyway
// is refused at FEATURES_OK like any feature not offered.
TEST(FeatureNegotiation, EventIdxOffIsNotOfferedAndRefused) {
  H::Config c;
  c.options.event_idx = false;
  H h(c);
  ASSERT_TRUE(h.driver->probe());
  const uint64_t offered = h.driver->device_features();
  EXPECT_FALSE(offered & feature::bit(feature::kRingEventIdx));
  EXPECT_TRUE(offered & feature::bit(feature::kRingIndirectDesc));
  EXPECT_FALSE(take_features(h, offered | feature::bit(feature::kRingEventIdx)));
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
}

// A device whose backend lacks a ring feature withholds it: not offered even
// with event_idx=on (either layout), and refused like any other if taken.
TEST(FeatureNegotiation, ABitTheDeviceWithholdsIsNotOfferedWhateverTheOptions) {
  for (uint32_t version : {kVersionModern, kVersionLegacy}) {
    H::Config c;
    c.options.version = version;
    c.options.event_idx = true;
    c.device.withheld = feature::bit(feature::kRingEventIdx) | feature::bit(feature::kRingReset);
    H h(c);
    ASSERT_TRUE(h.driver->probe());
    const uint64_t offered = h.driver->device_features();
    EXPECT_FALSE(offered & feature::bit(feature::kRingEventIdx)) << version;
    EXPECT_FALSE(offered & feature::bit(feature::kRingReset)) << version;
    EXPECT_TRUE(offered & feature::bit(feature::kRingIndirectDesc)) << version;
    EXPECT_TRUE(offered & EchoDevice::kEchoFeature) << version;
    if (version == kVersionModern) {
      EXPECT_FALSE(take_features(h, offered | feature::bit(feature::kRingEventIdx)));
      EXPECT_EQ(h.counters().guest_errors.load(), 1u);
    }
  }
}

TEST(FeatureNegotiation, ModernRefusesFeaturesThatWereNotOffered) {
  H h({});
  ASSERT_TRUE(h.driver->probe());
  h.driver->add_status(status::kAcknowledge);
  h.driver->add_status(status::kDriver);
  h.driver->write_driver_features(feature::bit(feature::kVersion1) | feature::bit(feature::kRingPacked));
  h.driver->add_status(status::kFeaturesOk);
  EXPECT_FALSE(h.driver->status() & status::kFeaturesOk);
  // Then DRIVER_OK is not a valid step either.
  h.driver->add_status(status::kDriverOk);
  EXPECT_FALSE(h.device->active());
}

TEST(FeatureNegotiation, TheDeviceMayRefuseACombination) {
  H::Config c;
  c.device.refuse_features = true;
  H h(c);
  ASSERT_TRUE(h.driver->probe());
  EXPECT_FALSE(h.driver->initialize(~uint64_t{0}));
  // A device refuses only what 2.2.1 forbids the driver to accept (a
  // feature without one it depends on): counted as the guest's, like the
  // transport's own refusals.
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
}

TEST(FeatureNegotiation, FeaturesAreFixedOnceFeaturesOk) {
  H h({});
  ASSERT_TRUE(h.driver->probe());
  auto f = h.driver->initialize(~uint64_t{0});
  ASSERT_TRUE(f);
  h.driver->write_driver_features(feature::bit(feature::kVersion1));
  EXPECT_EQ(h.transport->driver_features(), *f);
  EXPECT_EQ(h.counters().guest_errors.load(), 2u);  // both words refused
}

TEST(FeatureNegotiation, LegacyDropsUnofferedFeaturesAtDriverOk) {
  H::Config c;
  c.options.version = kVersionLegacy;
  H h(c);
  ASSERT_TRUE(h.driver->probe());
  h.driver->add_status(status::kAcknowledge);
  h.driver->add_status(status::kDriver);
  h.driver->write_driver_features(EchoDevice::kEchoFeature | (1u << 5));
  h.driver->add_status(status::kDriverOk);
  ASSERT_TRUE(h.device->active());
  EXPECT_EQ(h.device->activated_features(), EchoDevice::kEchoFeature);
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
}

TEST(FeatureNegotiation, LegacyHasNoHighFeatureWord) {
  H::Config c;
  c.options.version = kVersionLegacy;
  H h(c);
  ASSERT_TRUE(h.driver->probe());
  h.driver->add_status(status::kAcknowledge);
  h.driver->add_status(status::kDriver);
  h.driver->write_driver_features(feature::bit(feature::kVersion1) | EchoDevice::kEchoFeature);
  EXPECT_EQ(h.transport->driver_features(), EchoDevice::kEchoFeature);
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
}

// --- the status state machine through the register ---------------------------

TEST(StatusRegister, InvalidTransitionsAreGuestErrorsAndChangeNothing) {
  H h({});
  ASSERT_TRUE(h.driver->probe());
  h.driver->write(reg::kStatus, status::kDriver);  // DRIVER before ACKNOWLEDGE
  EXPECT_EQ(h.driver->status(), 0u);
  h.driver->add_status(status::kAcknowledge);
  h.driver->write(reg::kStatus, status::kAcknowledge | status::kDriver | status::kFeaturesOk);
  EXPECT_EQ(h.driver->status(), status::kAcknowledge);
  EXPECT_EQ(h.counters().guest_errors.load(), 2u);
}

TEST(StatusRegister, FailedIsRecordedAndOnlyResetLeavesIt) {
  H h({});
  ASSERT_TRUE(h.driver->probe());
  h.driver->add_status(status::kAcknowledge);
  h.driver->add_status(status::kFailed);
  EXPECT_EQ(h.driver->status(), status::kAcknowledge | status::kFailed);
  h.driver->add_status(status::kDriver);
  EXPECT_EQ(h.driver->status(), status::kAcknowledge | status::kFailed);
  h.driver->reset();
  EXPECT_EQ(h.driver->status(), 0u);
}

// --- VIRTIO_F_RING_RESET -----------------------------------------------------

TEST(RingReset, ResetsOneQueueAndLetsItComeBack) {
  H h({});
  h.bring_up();
  ASSERT_TRUE(feature::has(h.transport->driver_features(), feature::kRingReset));
  h.driver->write(reg::kQueueSel, 1);
  h.driver->write(reg::kQueueNum, 8);  // refused: live
  h.driver->write(reg::kQueueReset, 1);
  EXPECT_EQ(h.reg(reg::kQueueReset), 0u);  // completed
  EXPECT_EQ(h.reg(reg::kQueueReady), 0u);
  EXPECT_EQ(h.device->queue_resets(), 1u);
  EXPECT_TRUE(h.device->active());  // the rest of the device runs on
  DriverRing ring1(h.memory, DriverRing::linux_layout(H::kRing1, 32));
  ASSERT_TRUE(h.driver->setup_queue(1, H::kRing1, 32));
  EXPECT_EQ(h.device->enables(), 1u);
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
}

TEST(RingReset, RefusedUnlessNegotiated) {
  H::Config c;
  c.device.queue_reset = false;
  H h(c);
  h.bring_up();
  EXPECT_FALSE(feature::has(h.transport->driver_features(), feature::kRingReset));
  h.driver->write(reg::kQueueSel, 0);
  h.driver->write(reg::kQueueReset, 1);
  EXPECT_EQ(h.reg(reg::kQueueReady), 1u);
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
}

}  // namespace
}  // namespace kvmmio::virtio
