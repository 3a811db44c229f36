// SPDX-License-Identifier: BSD-2-Clause
// A guest that repeats a mistake as fast as it can: every message it
// causes is counted and printed rate-limited (GuestErrorLog's rule: the
// first kBurst, then one in kEvery), so 10,000 attempts print a few dozen
// lines, not 20,000.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "../virtio/driver_ring.h"
#include "../virtio/harness.h"
#include "../virtio/wait_limit.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/token_bucket.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {
namespace {

using H = test::TransportHarness;

constexpr int kAttempts = 10000;
// What one rate-limited message kind may print for kAttempts occurrences.
constexpr size_t kMaxLinesPerKind = GuestErrorLog::kBurst + kAttempts / GuestErrorLog::kEvery;

size_t lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class GuestErrorFlood : public ::testing::TestWithParam<uint32_t> {
 protected:
  static H::Config config(uint32_t version, bool refuse_features = false) {
    H::Config c;
    c.options.version = version;
    c.device.refuse_features = refuse_features;
    return c;
  }
};

// FEATURES_OK with a combination the device refuses (2.2.1: a driver must
// not accept a feature without the ones it depends on): each attempt is a
// guest error.
TEST_F(GuestErrorFlood, RefusedFeaturesOkIsACountedRateLimitedGuestError) {
  H h(config(kVersionModern, /*refuse_features=*/true));
  ASSERT_TRUE(h.driver->probe());
  testing::internal::CaptureStderr();
  for (int i = 0; i < kAttempts; ++i) EXPECT_FALSE(h.driver->initialize(~uint64_t{0}));
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(h.counters().guest_errors.load(), static_cast<uint64_t>(kAttempts));
  EXPECT_LE(lines(log), kMaxLinesPerKind) << log.substr(0, 2000);
  EXPECT_NE(log.find("FEATURES_OK refused"), std::string::npos);
}

// Reset, then QueueNum 3 (not a power of two) and QueueReady (QueuePFN in
// the legacy layout): each attempt is a guest error and a
// DEVICE_NEEDS_RESET, both printed rate-limited.
TEST_P(GuestErrorFlood, InvalidQueueSetUpAfterEveryResetIsCountedAndRateLimited) {
  H h(config(GetParam()));
  ASSERT_TRUE(h.driver->probe());
  testing::internal::CaptureStderr();
  for (int i = 0; i < kAttempts; ++i) {
    ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
    h.driver->write(reg::kQueueSel, 0);
    h.driver->write(reg::kQueueNum, 3);
    if (GetParam() == kVersionModern) {
      h.driver->write(reg::kQueueReady, 1);
    } else {
      h.driver->write(reg::kQueuePfn, static_cast<uint32_t>(H::kRing0 / 4096));
    }
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(h.counters().guest_errors.load(), static_cast<uint64_t>(kAttempts));
  EXPECT_EQ(h.counters().needs_reset.load(), static_cast<uint64_t>(kAttempts));
  // Two kinds: the guest error, and the device needing a reset.
  EXPECT_LE(lines(log), 2 * kMaxLinesPerKind) << log.substr(0, 2000);
  EXPECT_NE(log.find("needs reset"), std::string::npos);
}

TEST(TokenBucket, AllowsTheBurstThenTheRate) {
  using namespace std::chrono_literals;
  const auto t0 = TokenBucket::Clock::time_point{} + 1h;
  TokenBucket b(/*rate=*/4, /*burst=*/3, [t0] { return t0; });
  EXPECT_TRUE(b.take(t0));
  EXPECT_TRUE(b.take(t0));
  EXPECT_TRUE(b.take(t0));
  EXPECT_FALSE(b.take(t0));
  EXPECT_FALSE(b.take(t0 + 200ms)) << "0.8 tokens after 200 ms at 4/s";
  EXPECT_TRUE(b.take(t0 + 250ms));
  EXPECT_FALSE(b.take(t0 + 250ms));
  // Idle for long: back to the burst, not more.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.take(t0 + 1h));
  EXPECT_FALSE(b.take(t0 + 1h));
}

TEST(TokenBucket, TakeWithoutATimeReadsItsTimeSource) {
  test::ManualClock clock;
  TokenBucket b(/*rate=*/2, /*burst=*/1, clock.source());
  EXPECT_TRUE(b.take());
  EXPECT_FALSE(b.take()) << "the clock has not moved";
  clock.advance(std::chrono::milliseconds(499));
  EXPECT_FALSE(b.take()) << "0.998 tokens";
  clock.advance(std::chrono::milliseconds(1));
  EXPECT_TRUE(b.take());
}

// A reset storm: reset, negotiate, two queues, DRIVER_OK, as fast as the
// guest can. Each activation opens and watches host resources, so beyond
// the burst only the rate gets through; the rest is refused as a guest
// error with DEVICE_NEEDS_RESET, and once the storm is over a reset works.
// The transport's clock stands still during the storm and moves only where
// the test says, so the counts are exact however fast the host is.
TEST_P(GuestErrorFlood, AResetStormGetsTheActivationBurstThenTheRate) {
  test::ManualClock clock;
  H::Config c = config(GetParam());
  c.clock = clock.source();
  H h(c);
  ASSERT_TRUE(h.driver->probe());
  constexpr int kStorm = 500;
  int refused = 0;
  testing::internal::CaptureStderr();
  for (int i = 0; i < kStorm; ++i) {
    h.bring_up();
    refused += (h.driver->status() & status::kDeviceNeedsReset) != 0;
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(kStorm - refused, MmioTransport::kActivationBurst) << "activations at one instant";
  EXPECT_EQ(h.counters().guest_errors.load(), static_cast<uint64_t>(refused));
  EXPECT_LE(lines(log), 2 * (GuestErrorLog::kBurst + 1)) << log.substr(0, 2000);
  // One token's worth of time later, exactly one reset and DRIVER_OK work.
  clock.advance(std::chrono::duration<double>(1 / MmioTransport::kActivationsPerSecond));
  testing::internal::CaptureStderr();
  h.bring_up();
  EXPECT_EQ(h.driver->status() & status::kDeviceNeedsReset, 0u);
  EXPECT_TRUE(h.device->active());
  h.bring_up();
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(h.driver->status() & status::kDeviceNeedsReset) << "a second activation without time passing";
  // A second later, the rate's worth (16) more.
  clock.advance(std::chrono::seconds(1));
  int accepted = 0;
  testing::internal::CaptureStderr();
  for (int i = 0; i < 100; ++i) {
    h.bring_up();
    accepted += (h.driver->status() & status::kDeviceNeedsReset) == 0;
  }
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(accepted, MmioTransport::kActivationsPerSecond);
}

// QueueReady 1, 0, 1, 0... on a live device. The queue's ioeventfd was
// assigned when the transport was built, so a toggle assigns and removes
// nothing and makes no watch: what is left is the device's own stop and
// start of the queue, the work of any trapped write. Nothing to bound, so
// nothing is refused, and the queue works after the storm.
TEST_F(GuestErrorFlood, AQueueReadyStormAssignsNoIoEventFdAndIsNotRefused) {
  H::Config c = config(kVersionModern);
  c.options.notify = NotifyMode::kIoEventFd;
  c.ioeventfds = true;
  H h(c);
  h.bring_up();
  constexpr int kStorm = 3000;
  h.driver->write(reg::kQueueSel, 1);
  testing::internal::CaptureStderr();
  for (int i = 0; i < kStorm; ++i) {
    h.driver->write(reg::kQueueReady, 0);
    h.driver->write(reg::kQueueReady, 1);
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(h.notify_fds.attaches(), 2u) << "one per queue, when the transport was built";
  EXPECT_EQ(h.device->queue_resets(), static_cast<uint64_t>(kStorm));
  EXPECT_EQ(h.device->enables(), static_cast<uint64_t>(kStorm));
  EXPECT_EQ(h.driver->status() & status::kDeviceNeedsReset, 0u);
  EXPECT_EQ(h.counters().guest_errors.load(), 0u);
  EXPECT_EQ(lines(log), 0u) << log.substr(0, 2000);
  // The queue's ioeventfd still reaches it.
  test::DriverRing ring(h.memory, test::DriverRing::linux_layout(H::kRing1, 64));
  const test::Buffer chain[] = {{H::kBuffers, 4, false}, {H::kBuffers + 0x100, 4, true}};
  ring.add(chain);
  ring.publish();
  ASSERT_TRUE(h.notify_fds.guest_notify(1));
  EXPECT_TRUE(h.device->wait_for_chains(1, ::kvmmio::test::kWaitLimitMs));
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, GuestErrorFlood, ::testing::Values(kVersionModern, kVersionLegacy),
                         [](const auto& info) { return info.param == kVersionModern ? "Modern" : "Legacy"; });

}  // namespace
}  // namespace kvmmio::virtio
