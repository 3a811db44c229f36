// SPDX-License-Identifier: BSD-2-Clause
// A guest that repeats a mistake as fast as it can: every message it
// causes is counted and printed rate-limited (GuestErrorLog's rule: the
// first kBurst, then one in kEvery), so 10,000 attempts print a few dozen
// lines, not 20,000.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "../virtio/harness.h"
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
  TokenBucket b(/*rate=*/4, /*burst=*/3, t0);
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

// A reset storm: reset, negotiate, two queues, DRIVER_OK, as fast as the
// guest can. Each activation opens and watches host resources, so beyond
// the burst only the rate gets through; the rest is refused as a guest
// error with DEVICE_NEEDS_RESET, and once the storm is over a reset works.
TEST_P(GuestErrorFlood, AResetStormGetsTheActivationBurstThenTheRate) {
  H h(config(GetParam()));
  ASSERT_TRUE(h.driver->probe());
  constexpr int kStorm = 500;
  const auto start = std::chrono::steady_clock::now();
  int refused = 0;
  testing::internal::CaptureStderr();
  for (int i = 0; i < kStorm; ++i) {
    h.bring_up();
    refused += (h.driver->status() & status::kDeviceNeedsReset) != 0;
  }
  const std::string log = testing::internal::GetCapturedStderr();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double allowed = MmioTransport::kActivationBurst + MmioTransport::kActivationsPerSecond * elapsed + 1;
  EXPECT_LE(kStorm - refused, allowed) << refused << " refused in " << elapsed << " s";
  EXPECT_GE(kStorm - refused, MmioTransport::kActivationBurst);
  EXPECT_EQ(h.counters().guest_errors.load(), static_cast<uint64_t>(refused));
  EXPECT_LE(lines(log), 2 * (GuestErrorLog::kBurst + 1)) << log.substr(0, 2000);
  // After a pause of one token's worth, a reset and DRIVER_OK work again.
  std::this_thread::sleep_for(std::chrono::duration<double>(1.1 / MmioTransport::kActivationsPerSecond));
  h.bring_up();
  EXPECT_EQ(h.driver->status() & status::kDeviceNeedsReset, 0u);
  EXPECT_TRUE(h.device->active());
}

// QueueReady 1, 0, 1, 0... on a live device: each 1 assigns an ioeventfd
// and makes a watch; beyond the burst only the rate gets through.
TEST_F(GuestErrorFlood, AQueueReadyStormGetsTheQueueStartBurstThenTheRate) {
  H::Config c = config(kVersionModern);
  c.options.notify = NotifyMode::kIoEventFd;
  c.ioeventfds = true;
  H h(c);
  h.bring_up();
  const uint64_t attaches_before = h.notify_fds.attaches();
  constexpr int kStorm = 3000;
  const auto start = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  h.driver->write(reg::kQueueSel, 1);
  for (int i = 0; i < kStorm; ++i) {
    h.driver->write(reg::kQueueReady, 0);
    h.driver->write(reg::kQueueReady, 1);
  }
  const std::string log = testing::internal::GetCapturedStderr();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t attaches = h.notify_fds.attaches() - attaches_before;
  EXPECT_LE(attaches, MmioTransport::kQueueStartBurst + MmioTransport::kQueueStartsPerSecond * elapsed + 1);
  EXPECT_GE(attaches, MmioTransport::kQueueStartBurst - 2) << "the two queues of bring_up() took two";
  EXPECT_TRUE(h.driver->status() & status::kDeviceNeedsReset);
  EXPECT_LE(lines(log), 2 * (GuestErrorLog::kBurst + 3)) << log.substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, GuestErrorFlood, ::testing::Values(kVersionModern, kVersionLegacy),
                         [](const auto& info) { return info.param == kVersionModern ? "Modern" : "Legacy"; });

}  // namespace
}  // namespace kvmmio::virtio
