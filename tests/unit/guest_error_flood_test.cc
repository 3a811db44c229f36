// A guest that repeats a mistake as fast as it can: every message it
// causes is counted and printed rate-limited (GuestErrorLog's rule: the
// first kBurst, then one in kEvery), so 10,000 attempts print a few dozen
// lines, not 20,000.
#include <gtest/gtest.h>

#include <string>

#include "../virtio/harness.h"
#include "kvmmio/base/log.h"
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

INSTANTIATE_TEST_SUITE_P(BothLayouts, GuestErrorFlood, ::testing::Values(kVersionModern, kVersionLegacy),
                         [](const auto& info) { return info.param == kVersionModern ? "Modern" : "Legacy"; });

}  // namespace
}  // namespace kvmmio::virtio
