// SPDX-License-Identifier: BSD-2-Clause
// What a hostile driver gets from the transport: refused queue set-ups and
// malformed rings end in DEVICE_NEEDS_RESET (with a configuration change
// interrupt once DRIVER_OK is set, 2.1.2), registers written at the wrong
// time are ignored, and a reset brings the device back.
#include <gtest/gtest.h>

#include <cstring>

#include "../virtio/driver_ring.h"
#include "../virtio/harness.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {
namespace {

using test::Buffer;
using test::DriverRing;
using H = test::TransportHarness;

class TransportErrors : public ::testing::TestWithParam<uint32_t> {
 protected:
  TransportErrors() : h(config()) {}
  static H::Config config() {
    H::Config c;
    c.options.version = GetParam();
    return c;
  }
  bool modern() const { return GetParam() == kVersionModern; }
  bool needs_reset() { return h.driver->status() & status::kDeviceNeedsReset; }
  void negotiate() {
    ASSERT_TRUE(h.driver->probe());
    ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  }
  // Queue 0 set up by hand with `num` entries at `ring`.
  void set_up_queue0(uint32_t num, uint64_t ring) {
    h.driver->write(reg::kQueueSel, 0);
    h.driver->write(reg::kQueueNum, num);
    if (modern()) {
      const QueueLayout l = DriverRing::linux_layout(ring, num ? num : 1);
      h.driver->write(reg::kQueueDescLow, static_cast<uint32_t>(l.desc));
      h.driver->write(reg::kQueueDescHigh, static_cast<uint32_t>(l.desc >> 32));
      h.driver->write(reg::kQueueDriverLow, static_cast<uint32_t>(l.avail));
      h.driver->write(reg::kQueueDriverHigh, static_cast<uint32_t>(l.avail >> 32));
      h.driver->write(reg::kQueueDeviceLow, static_cast<uint32_t>(l.used));
      h.driver->write(reg::kQueueDeviceHigh, static_cast<uint32_t>(l.used >> 32));
      h.driver->write(reg::kQueueReady, 1);
    } else {
      h.driver->write(reg::kQueueAlign, 4096);
      h.driver->write(reg::kQueuePfn, static_cast<uint32_t>(ring / 4096));
    }
  }
  bool queue0_live() {
    h.driver->write(reg::kQueueSel, 0);
    return h.reg(modern() ? reg::kQueueReady : reg::kQueuePfn) != 0;
  }
  // After a reset: a driver brings the device up again, and a chain it
  // offers on a new ring is used.
  void expect_works_after_bring_up() {
    DriverRing fresh(h.memory, DriverRing::linux_layout(H::kRing0, 256));
    h.bring_up();
    EXPECT_FALSE(needs_reset());
    const Buffer chain[] = {{H::kBuffers, 8, false}};
    fresh.add(chain);
    fresh.publish();
    h.driver->notify(0);
    EXPECT_EQ(fresh.used_idx(), 1u);
  }
  // The refusal every bad set-up gets, and what DRIVER_OK then brings.
  void expect_refused_set_up() {
    EXPECT_FALSE(queue0_live());
    EXPECT_TRUE(needs_reset());
    EXPECT_GE(h.counters().guest_errors.load(), 1u);
    EXPECT_EQ(h.counters().needs_reset.load(), 1u);
    EXPECT_EQ(h.interrupts(), 0u);  // no interrupts before DRIVER_OK
    h.driver->driver_ok();
    EXPECT_FALSE(h.device->active());
    EXPECT_EQ(h.interrupts(), 1u);
    EXPECT_EQ(h.reg(reg::kInterruptStatus), interrupt::kConfigChange);
  }

  H h;
};

TEST_P(TransportErrors, QueueSizeZero) {
  negotiate();
  set_up_queue0(0, H::kRing0);
  expect_refused_set_up();
}

TEST_P(TransportErrors, QueueSizeNotAPowerOfTwo) {
  negotiate();
  set_up_queue0(100, H::kRing0);
  expect_refused_set_up();
}

TEST_P(TransportErrors, QueueSizeAboveQueueNumMax) {
  negotiate();
  set_up_queue0(512, H::kRing0);
  expect_refused_set_up();
}

TEST_P(TransportErrors, RingOutsideGuestRam) {
  negotiate();
  set_up_queue0(256, H::kRam + H::kRamSize - 0x1000);  // runs past the end
  expect_refused_set_up();
}

TEST_P(TransportErrors, RingBelowGuestRam) {
  negotiate();
  set_up_queue0(256, 0x10000);
  expect_refused_set_up();
}

TEST_P(TransportErrors, MalformedChainAfterDriverOk) {
  h.bring_up();
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ring.write_desc(0, H::kBuffers, 8, 1 /*NEXT*/, 0);  // a loop onto itself
  ring.set_avail_entry(0, 0);
  ring.set_avail_idx(1);
  h.interrupts();
  h.driver->notify(0);
  EXPECT_TRUE(needs_reset());
  EXPECT_EQ(h.device->broken_pops(), 1u);
  EXPECT_EQ(h.interrupts(), 1u);
  EXPECT_EQ(h.driver->interrupt(), interrupt::kConfigChange);
  EXPECT_EQ(h.counters().needs_reset.load(), 1u);
  EXPECT_EQ(ring.used_idx(), 0u);
  h.driver->notify(0);  // the queue stays broken; no second interrupt
  EXPECT_EQ(h.interrupts(), 0u);
  // A reset clears the state, and the device works again.
  expect_works_after_bring_up();
}

// The host's reset (a reboot in place, MmioTransport::reset()) is the
// driver's: the device reset, queues forgotten, InterruptStatus and
// DEVICE_NEEDS_RESET cleared, the mirror rewritten; the next driver
// starts from scratch.
TEST_P(TransportErrors, TheHostsResetIsTheDriversReset) {
  h.bring_up();
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ring.write_desc(0, H::kBuffers, 8, 1 /*NEXT*/, 0);  // broken: needs a reset
  ring.set_avail_entry(0, 0);
  ring.set_avail_idx(1);
  h.driver->notify(0);
  ASSERT_TRUE(needs_reset());
  ASSERT_TRUE(h.device->active());
  h.interrupts();
  h.transport->reset();
  EXPECT_FALSE(h.device->active());
  EXPECT_EQ(h.device->resets(), 1u);
  EXPECT_EQ(h.transport->device_status(), 0u);
  EXPECT_EQ(h.transport->driver_features(), 0u);
  EXPECT_EQ(h.reg(reg::kStatus), 0u);
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
  EXPECT_FALSE(queue0_live());
  EXPECT_EQ(h.interrupts(), 0u) << "a reset interrupts nobody";
  if (const RegisterMirror* mirror = h.transport->mirror()) {
    uint32_t status = ~0u;
    std::memcpy(&status, mirror->page().data() + reg::kStatus, sizeof status);
    EXPECT_EQ(status, 0u) << "the mirror reads the reset Status";
  }
  h.transport->reset();  // again, with nothing active: harmless
  EXPECT_EQ(h.device->resets(), 1u);
  // A new driver (the rebooted guest's) brings it up as at boot.
  expect_works_after_bring_up();
}

TEST_P(TransportErrors, AvailIndexJumpAfterDriverOk) {
  h.bring_up();
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ring.set_avail_idx(257);
  h.driver->notify(0);
  EXPECT_TRUE(needs_reset());
  EXPECT_EQ(h.reg(reg::kInterruptStatus) & interrupt::kConfigChange, interrupt::kConfigChange);
}

TEST_P(TransportErrors, QueueRegistersAreFrozenWhileLive) {
  negotiate();
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
  const uint64_t errors = h.counters().guest_errors.load();
  h.driver->write(reg::kQueueNum, 16);
  if (modern()) {
    h.driver->write(reg::kQueueDescLow, 0);
  } else {
    h.driver->write(reg::kQueuePfn, 0x40020);  // a second PFN without stopping
  }
  EXPECT_EQ(h.counters().guest_errors.load(), errors + 2);
  h.driver->driver_ok();
  EXPECT_EQ(h.device->activated_queues().at(0).layout, DriverRing::linux_layout(H::kRing0, 256));
}

TEST_P(TransportErrors, DeviceThatCannotStartNeedsReset) {
  H::Config c = config();
  c.device.fail_activation = true;
  H f(c);
  f.bring_up();
  EXPECT_TRUE(f.driver->status() & status::kDeviceNeedsReset);
  EXPECT_TRUE(f.driver->status() & status::kDriverOk);
  EXPECT_EQ(f.interrupts(), 1u);
  EXPECT_EQ(f.reg(reg::kInterruptStatus), interrupt::kConfigChange);
  EXPECT_EQ(f.counters().guest_errors.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Versions, TransportErrors, ::testing::Values(kVersionLegacy, kVersionModern),
                         [](const auto& info) { return info.param == 1 ? "Legacy" : "Modern"; });

TEST(LegacyPaging, BadPageSizeAndAlignmentAreRefused) {
  H::Config c;
  c.options.version = kVersionLegacy;
  H h(c);
  ASSERT_TRUE(h.driver->probe());
  h.driver->write(reg::kGuestPageSize, 3000);
  h.driver->write(reg::kQueueSel, 0);
  h.driver->write(reg::kQueueAlign, 100);
  EXPECT_EQ(h.counters().guest_errors.load(), 2u);
  // The defaults (4 KiB) still hold: a queue placed by PFN works.
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
}

TEST(LegacyPaging, LiveQueueRefusesEveryAlignment) {
  // Once queue 0 is placed, QueueAlign is refused whatever its value, a
  // power of two or not, and the live ring keeps the alignment it went
  // live with.
  H::Config c;
  c.options.version = kVersionLegacy;
  H h(c);
  ASSERT_TRUE(h.driver->probe());
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
  h.driver->driver_ok();
  h.driver->write(reg::kQueueSel, 0);
  h.driver->write(reg::kQueueAlign, 8192);
  h.driver->write(reg::kQueueAlign, 100);
  EXPECT_EQ(h.counters().guest_errors.load(), 2u);
  EXPECT_EQ(h.device->activated_queues().at(0).layout, DriverRing::linux_layout(H::kRing0, 256));
}

TEST(LegacyPaging, LargerGuestPagesMoveTheRing) {
  // A 64 KiB-page arm64 guest: PFN counts 64 KiB pages, the used ring sits
  // at the next 64 KiB boundary.
  H::Config c;
  c.options.version = kVersionLegacy;
  H h(c);
  test::MmioDriver driver64k(*h.transport, 64 << 10);
  ASSERT_TRUE(driver64k.probe());
  ASSERT_TRUE(driver64k.initialize(~uint64_t{0}));
  const uint64_t ring_gpa = H::kRam + (2 << 20);
  DriverRing ring(h.memory, DriverRing::linux_layout(ring_gpa, 256, 64 << 10));
  auto layout = driver64k.setup_queue(0, ring_gpa);
  ASSERT_TRUE(layout);
  driver64k.driver_ok();
  EXPECT_EQ(h.device->activated_queues().at(0).layout, ring.layout());
  const Buffer chain[] = {{H::kBuffers, 8, false}};
  ring.add(chain);
  ring.publish();
  driver64k.notify(0);
  EXPECT_EQ(ring.used_idx(), 1u);
}

}  // namespace
}  // namespace kvmmio::virtio
