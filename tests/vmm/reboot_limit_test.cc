// SPDX-License-Identifier: BSD-2-Clause
// The bound on reboots in place: a guest in a reboot loop stops kvmmio.
#include "vmm/machine/reboot_limit.h"

#include <gtest/gtest.h>

namespace kvmmio::vmm {
namespace {

using Clock = RebootLimit::Clock;
using std::chrono::seconds;

TEST(RebootLimit, AllowsTheDocumentedNumberInAWindowThenRefuses) {
  RebootLimit limit;
  const Clock::time_point t0{};
  for (int i = 0; i < RebootLimit::kMaxReboots; ++i) EXPECT_TRUE(limit.allow(t0 + seconds(i))) << i;
  // A reboot loop: the next one within the minute is refused, and so is
  // every one after it while the window is full.
  EXPECT_FALSE(limit.allow(t0 + seconds(RebootLimit::kMaxReboots)));
  EXPECT_FALSE(limit.allow(t0 + RebootLimit::kWindow - seconds(1)));
}

TEST(RebootLimit, ARefusedRebootIsNotCounted) {
  RebootLimit limit;
  const Clock::time_point t0{};
  for (int i = 0; i < RebootLimit::kMaxReboots; ++i) ASSERT_TRUE(limit.allow(t0));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limit.allow(t0 + seconds(1)));
  // Once the first ones are a window old there is room again.
  EXPECT_TRUE(limit.allow(t0 + RebootLimit::kWindow));
}

TEST(RebootLimit, RebootsSpreadOutAreNeverRefused) {
  RebootLimit limit;
  const Clock::time_point t0{};
  // One every 7 s: at most 9 in any minute.
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limit.allow(t0 + seconds(7 * i))) << i;
}

}  // namespace
}  // namespace kvmmio::vmm
