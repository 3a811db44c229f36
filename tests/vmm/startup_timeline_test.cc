// SPDX-License-Identifier: BSD-2-Clause
// StartupTimeline: phases in order, the exec read from /proc, nothing
// after the first KVM_RUN.
#include "vmm/stats/startup_timeline.h"

#include <gtest/gtest.h>
#include <time.h>

namespace kvmmio::vmm {
namespace {

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (::nanosleep(&ts, &ts) != 0) {
  }
}

TEST(StartupTimeline, PhasesInOrderWithTheirLengths) {
  StartupTimeline t;
  t.end_phase("setup");
  sleep_ms(20);
  t.end_phase("vm");
  StartupStats s = t.stats();
  ASSERT_EQ(s.phases_ms.size(), 2u);
  EXPECT_EQ(s.phases_ms[0].first, "setup");
  EXPECT_EQ(s.phases_ms[1].first, "vm");
  EXPECT_GE(s.phases_ms[0].second, 0);
  // A lower bound only: the sleep took at least its 20 ms.
  EXPECT_GE(s.phases_ms[1].second, 20);
  EXPECT_FALSE(s.to_first_run_ms) << "the guest has not run";
}

TEST(StartupTimeline, FirstRunEndsTheStartup) {
  StartupTimeline t;
  t.end_phase("setup");
  t.first_run();
  t.end_phase("late");  // after the first KVM_RUN: not start-up
  t.first_run();        // only the first call counts
  const StartupStats s = t.stats();
  ASSERT_EQ(s.phases_ms.size(), 2u);
  EXPECT_EQ(s.phases_ms[1].first, "first_run");
  ASSERT_TRUE(s.to_first_run_ms);
  // The whole covers every phase, and the exec-to-main part where known.
  const double phases = s.phases_ms[0].second + s.phases_ms[1].second;
  EXPECT_GE(*s.to_first_run_ms + 1e-6, phases + s.exec_to_main_ms.value_or(0));
}

TEST(StartupTimeline, TheExecIsThisProcesssStart) {
  // /proc is there in every environment these tests run in.
  const std::optional<int64_t> start = process_start_ns();
  ASSERT_TRUE(start);
  const int64_t now = boottime_ns();
  EXPECT_LE(*start, now);
  // This test process started after the machine booted and before now;
  // starttime counts clock ticks (10 ms) since boot, so it is not 0
  // unless the process is init.
  EXPECT_GT(*start, 0);
  StartupTimeline t;
  const StartupStats s = t.stats();
  ASSERT_TRUE(s.exec_to_main_ms);
  EXPECT_GE(*s.exec_to_main_ms, 0);
  EXPECT_LE(*s.exec_to_main_ms, static_cast<double>(now - *start) / 1e6 + 1000);
}

}  // namespace
}  // namespace kvmmio::vmm
