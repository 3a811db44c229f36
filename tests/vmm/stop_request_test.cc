// SPDX-License-Identifier: BSD-2-Clause
// StopRequest: a stop is decided once; a reboot in place is taken by the
// main thread, and a stop asked for meanwhile wins over it.
#include "vmm/process/stop_request.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace kvmmio::vmm {
namespace {

TEST(StopRequest, ARebootIsTakenOnceAndIsNoStop) {
  StopRequest s;
  s.request_reboot();
  EXPECT_FALSE(s.requested());
  EXPECT_TRUE(s.wait_for_stop_or_reboot()) << "the reboot is taken";
  // The next wait is for something new: a stop from another thread.
  auto waiter = std::async(std::launch::async, [&s] { return s.wait_for_stop_or_reboot(); });
  EXPECT_TRUE(s.request(StopCause::kPowerOff, "poweroff"));
  EXPECT_FALSE(waiter.get());
  EXPECT_EQ(s.exit_status(), exit_status::kPoweredOff);
}

TEST(StopRequest, AStopWinsOverARebootNotYetTaken) {
  StopRequest s;
  s.request_reboot();
  s.request(StopCause::kSignal, "signal SIGTERM", 15);
  EXPECT_FALSE(s.wait_for_stop_or_reboot());
  EXPECT_EQ(s.exit_status(), exit_status::kSignalBase + 15);
  s.request_reboot();  // ignored once the stop is decided
  EXPECT_FALSE(s.wait_for_stop_or_reboot());
}

TEST(StopRequest, TheRebootBoundStopsWithStatus3) {
  StopRequest s;
  s.request(StopCause::kReset, "reset (more than 10 reboots in 60 s)");
  EXPECT_EQ(s.exit_status(), exit_status::kResetRequested);
  EXPECT_EQ(s.exit_status(), 3);
}

}  // namespace
}  // namespace kvmmio::vmm
