// SPDX-License-Identifier: BSD-2-Clause
// The PL031's alarm timer on a real event loop and CLOCK_REALTIME: a
// second already passed fires at once, a disarmed timer never does, and
// the PL031 wired to it as the machine wires it latches its match and
// raises its line.
#include "vmm/machine/rtc_alarm.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "kvmmio/rtc/pl031.h"

namespace kvmmio::vmm {
namespace {

using namespace std::chrono_literals;

bool wait_for(const std::atomic<int>& n, int want) {
  for (int i = 0; i < 2000 && n.load() < want; ++i) std::this_thread::sleep_for(1ms);
  return n.load() >= want;
}

TEST(RtcAlarm, APassedSecondFiresAtOnceAndOnce) {
  EventLoop loop("rtc-test");
  std::atomic<int> fired{0};
  RtcAlarm alarm(loop, [&] { ++fired; });
  alarm.arm(rtc::Pl031::host_realtime_seconds() - 1);
  EXPECT_TRUE(wait_for(fired, 1));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(fired.load(), 1) << "one-shot";
  alarm.arm(0);  // the epoch itself: long passed, still fires
  EXPECT_TRUE(wait_for(fired, 2));
}

TEST(RtcAlarm, DisarmedItNeverFires) {
  EventLoop loop("rtc-test");
  std::atomic<int> fired{0};
  RtcAlarm alarm(loop, [&] { ++fired; });
  alarm.arm(rtc::Pl031::host_realtime_seconds() + 3600);
  alarm.arm(std::nullopt);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(fired.load(), 0);
}

TEST(RtcAlarm, ThePl031LatchesItsMatchThroughIt) {
  EventLoop loop("rtc-test");
  std::atomic<int> raised{0};
  std::unique_ptr<rtc::Pl031> rtc;
  RtcAlarm alarm(loop, [&] { rtc->alarm_due(); });
  rtc = std::make_unique<rtc::Pl031>([&](bool level) { raised += level; },
                                     [&](std::optional<int64_t> at) { alarm.arm(at); });
  auto write = [&](uint64_t off, uint32_t v) {
    uint8_t buf[4];
    std::memcpy(buf, &v, 4);
    rtc->mmio_write(off, buf);
  };
  write(rtc::Pl031::kIMSC, 1);
  write(rtc::Pl031::kLR, 1000);
  write(rtc::Pl031::kICR, 1);  // loading the counter past RTCMR (0) latched it
  write(rtc::Pl031::kMR, 1001);
  ASSERT_TRUE(wait_for(raised, 2)) << "the match a second on";
  EXPECT_EQ(rtc->counters().alarms, 2u);
}

}  // namespace
}  // namespace kvmmio::vmm
