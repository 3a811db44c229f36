// SPDX-License-Identifier: BSD-2-Clause
// The PL031 model driven as Linux's rtc-pl031 driver and the AMBA bus
// drive it, on a clock and an alarm timer the test works: the ID
// registers, the counter following the clock, a load and the counter
// running on from it, the match alarm with its mask, clear and level
// line, and hostile accesses counted as guest errors.
#include "kvmmio/rtc/pl031.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace kvmmio::rtc {
namespace {

class Pl031Test : public testing::Test {
 protected:
  int64_t now = 1'800'000'000;  // 2027-01-15
  std::vector<bool> line_changes;
  std::vector<std::optional<int64_t>> timer_requests;
  Pl031 rtc{[this](bool level) { line_changes.push_back(level); },
            [this](std::optional<int64_t> at) { timer_requests.push_back(at); },
            [this] { return now; }};

  uint32_t read(uint64_t off, size_t size = 4) {
    uint8_t buf[8];
    std::memset(buf, 0xaa, sizeof buf);
    rtc.mmio_read(off, {buf, size});
    uint32_t v = 0;
    std::memcpy(&v, buf, std::min<size_t>(size, 4));
    return v;
  }
  void write(uint64_t off, uint32_t v, size_t size = 4) {
    uint8_t buf[8] = {};
    std::memcpy(buf, &v, 4);
    rtc.mmio_write(off, {buf, size});
  }
  uint64_t errors() const { return rtc.counters().guest_errors; }
  bool line() const { return !line_changes.empty() && line_changes.back(); }
};

TEST_F(Pl031Test, TheIdsIdentifyAPl031AndItIsStarted) {
  uint32_t periph = 0, cell = 0;
  for (int i = 0; i < 4; ++i) {
    periph |= read(Pl031::kPeriphID0 + 4 * i) << (8 * i);
    cell |= read(Pl031::kCellID0 + 4 * i) << (8 * i);
  }
  EXPECT_EQ(periph & 0x000fffff, 0x00041031u) << "Linux's amba_id for pl031";
  EXPECT_EQ(cell, 0xb105f00du);
  EXPECT_EQ(read(Pl031::kCR), 1u);
  EXPECT_EQ(errors(), 0u);
}

TEST_F(Pl031Test, TheCounterIsTheClocksSecondsUntilLoaded) {
  EXPECT_EQ(read(Pl031::kDR), 1'800'000'000u);
  now += 5;
  EXPECT_EQ(read(Pl031::kDR), 1'800'000'005u);
}

TEST_F(Pl031Test, ALoadSetsTheCounterWhichRunsOnFromIt) {
  write(Pl031::kLR, 1000);
  EXPECT_EQ(read(Pl031::kDR), 1000u);
  EXPECT_EQ(read(Pl031::kLR), 1000u) << "RTCLR reads the value loaded";
  now += 7;
  EXPECT_EQ(read(Pl031::kDR), 1007u);
  write(Pl031::kLR, 0xffff'fffe);  // the 32-bit counter wraps
  now += 3;
  EXPECT_EQ(read(Pl031::kDR), 1u);
  EXPECT_EQ(rtc.counters().loads, 2u);
  EXPECT_EQ(errors(), 0u);
}

// The machine's reset on a reboot in place: the counter back on the host's
// clock, the alarm cancelled, the interrupt cleared and the line lowered.
TEST_F(Pl031Test, ResetCancelsTheAlarmAndForgetsTheLoad) {
  write(Pl031::kLR, 1000);
  write(Pl031::kIMSC, 1);
  write(Pl031::kMR, 1000);  // at the counter: latched at once
  ASSERT_TRUE(line());
  write(Pl031::kMR, 1100);  // a match ahead: the timer is armed
  ASSERT_EQ(timer_requests.back(), now + 100);
  rtc.reset();
  EXPECT_FALSE(line());
  EXPECT_EQ(timer_requests.back(), std::nullopt) << "the armed alarm is cancelled";
  EXPECT_EQ(read(Pl031::kDR), 1'800'000'000u) << "the host's time again";
  for (uint64_t off : {Pl031::kLR, Pl031::kMR, Pl031::kIMSC, Pl031::kRIS, Pl031::kMIS})
    EXPECT_EQ(read(off), 0u) << std::hex << off;
  EXPECT_EQ(errors(), 0u);
}

TEST_F(Pl031Test, TheCounterFollowsTheClockBackwardsToo) {
  write(Pl031::kLR, 500);
  now -= 100;  // the host's clock was set back
  EXPECT_EQ(read(Pl031::kDR), 400u);
}

TEST_F(Pl031Test, TheStartBitStaysSet) {
  write(Pl031::kCR, 0);
  EXPECT_EQ(read(Pl031::kCR), 1u) << "the counter cannot be stopped";
  now += 1;
  EXPECT_EQ(read(Pl031::kDR), 1'800'000'001u);
  EXPECT_EQ(errors(), 0u);
}

// rtc-pl031 sets an alarm as the rtc core asks: RTCMR, then RTCICR and
// RTCIMSC (pl031_alarm_irq_enable); its handler reads RTCMIS and writes
// RTCICR.
TEST_F(Pl031Test, TheMatchLatchesWhenTheTimerFindsTheCounterThere) {
  write(Pl031::kICR, 1);
  write(Pl031::kMR, 1'800'000'010);
  write(Pl031::kIMSC, 0xffff'ffff);
  EXPECT_EQ(read(Pl031::kMR), 1'800'000'010u);
  EXPECT_EQ(read(Pl031::kIMSC), 1u) << "only the alarm's mask bit exists";
  ASSERT_EQ(timer_requests.size(), 1u);
  EXPECT_EQ(timer_requests.back(), 1'800'000'010) << "the timer is asked for the match's second";
  EXPECT_EQ(read(Pl031::kRIS), 0u);

  now += 9;
  rtc.alarm_due();  // early (the host's clock went back, then forward): asked again
  EXPECT_EQ(read(Pl031::kRIS), 0u);
  EXPECT_EQ(timer_requests.back(), 1'800'000'010);
  now += 1;
  rtc.alarm_due();
  EXPECT_EQ(read(Pl031::kRIS), 1u);
  EXPECT_EQ(read(Pl031::kMIS), 1u);
  EXPECT_TRUE(line());
  EXPECT_EQ(rtc.counters().alarms, 1u);

  rtc.alarm_due();  // a late or repeated call latches nothing more
  EXPECT_EQ(rtc.counters().alarms, 1u);
  write(Pl031::kICR, 1);
  EXPECT_EQ(read(Pl031::kRIS), 0u);
  EXPECT_FALSE(line());
  EXPECT_EQ(line_changes, (std::vector<bool>{true, false}));
  EXPECT_EQ(errors(), 0u);
}

TEST_F(Pl031Test, TheMaskHidesTheMatchButKeepsTheRawStatus) {
  write(Pl031::kMR, 1'800'000'001);
  now += 1;
  rtc.alarm_due();
  EXPECT_EQ(read(Pl031::kRIS), 1u);
  EXPECT_EQ(read(Pl031::kMIS), 0u);
  EXPECT_TRUE(line_changes.empty());
  write(Pl031::kIMSC, 1);  // unmasked later: the latched match interrupts
  EXPECT_TRUE(line());
  write(Pl031::kIMSC, 0);
  EXPECT_FALSE(line());
  write(Pl031::kICR, 0);  // bit 0 clear: nothing cleared
  EXPECT_EQ(read(Pl031::kRIS), 1u);
}

TEST_F(Pl031Test, AMatchAtOrBehindTheCounterLatchesAtOnceAndCancelsTheTimer) {
  write(Pl031::kIMSC, 1);
  write(Pl031::kMR, 1'800'000'100);
  ASSERT_EQ(timer_requests.size(), 1u);
  write(Pl031::kLR, 1'800'000'100);  // the counter loaded onto the match
  EXPECT_EQ(timer_requests.back(), std::nullopt);
  EXPECT_EQ(read(Pl031::kRIS), 1u);
  EXPECT_TRUE(line());
  write(Pl031::kICR, 1);
  write(Pl031::kMR, 5);  // far behind
  EXPECT_EQ(read(Pl031::kRIS), 1u);
  EXPECT_EQ(rtc.counters().alarms, 2u);
}

TEST_F(Pl031Test, HostileAccessesAreCountedNeverServed) {
  write(Pl031::kLR, 1234);
  write(Pl031::kDR, 99);               // read-only
  write(Pl031::kRIS, 1);
  write(Pl031::kMIS, 1);
  write(Pl031::kPeriphID0, 0);         // read-only ID
  write(Pl031::kICR + 4, 1);           // reserved
  write(Pl031::kLR + 1, 0);            // not a register's start
  write(Pl031::kLR, 0, 1);             // 1 byte
  write(Pl031::kLR, 0, 2);             // 2 bytes
  write(Pl031::kLR, 0, 8);             // 8 bytes
  write(Pl031::kSize, 0);              // past the window
  write(~uint64_t{0} - 3, 0);          // far past it
  EXPECT_EQ(errors(), 11u);
  EXPECT_EQ(read(Pl031::kICR), 0u);    // write-only
  EXPECT_EQ(read(0x020), 0u);          // reserved
  EXPECT_EQ(read(Pl031::kDR, 8), 0u) << "an 8-byte read returns zeros";
  EXPECT_EQ(read(Pl031::kDR, 1), 0u);
  EXPECT_EQ(read(Pl031::kDR + 2, 2), 0u);
  EXPECT_EQ(read(Pl031::kSize), 0u);
  EXPECT_EQ(errors(), 17u);
  EXPECT_EQ(read(Pl031::kDR), 1234u) << "no bad access changed the counter";
  EXPECT_EQ(rtc.counters().loads, 1u);
  EXPECT_EQ(errors(), 17u);
}

TEST_F(Pl031Test, AnEightByteReadFillsItsWholeBufferWithZeros) {
  uint8_t buf[8];
  std::memset(buf, 0xaa, sizeof buf);
  rtc.mmio_read(Pl031::kDR, {buf, 8});
  for (uint8_t b : buf) EXPECT_EQ(b, 0u);
}

TEST_F(Pl031Test, TheDefaultClockIsTheHostsRealTime) {
  Pl031 host{nullptr, nullptr};
  uint8_t buf[4];
  const int64_t before = Pl031::host_realtime_seconds();
  host.mmio_read(Pl031::kDR, buf);
  const int64_t after = Pl031::host_realtime_seconds();
  uint32_t v;
  std::memcpy(&v, buf, 4);
  EXPECT_GE(v, static_cast<uint32_t>(before));
  EXPECT_LE(v, static_cast<uint32_t>(after));
}

}  // namespace
}  // namespace kvmmio::rtc
