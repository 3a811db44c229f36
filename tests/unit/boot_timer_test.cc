// SPDX-License-Identifier: BSD-2-Clause
// bench/boot_timer's reading of a guest console: kernel stamps, the clock's
// start, the marker.
#include <gtest/gtest.h>

#include "bench/boottime/console_times.h"

namespace kvmmio::bench {
namespace {

TEST(PrintkSeconds, ReadsTheKernelsStamp) {
  EXPECT_DOUBLE_EQ(*printk_seconds("[    0.000000] Booting Linux on physical CPU 0x0"), 0.0);
  EXPECT_NEAR(*printk_seconds("[    1.234567] Run /init as init process"), 1.234567, 1e-9);
  EXPECT_NEAR(*printk_seconds("[12345.5] x"), 12345.5, 1e-9);
}

TEST(PrintkSeconds, RefusesWhatIsNotOne) {
  EXPECT_FALSE(printk_seconds(""));
  EXPECT_FALSE(printk_seconds("KVMMIO-L2-READY"));
  EXPECT_FALSE(printk_seconds(" [    1.000000] indented"));
  EXPECT_FALSE(printk_seconds("[    1] no fraction"));
  EXPECT_FALSE(printk_seconds("[    .5] no whole part"));
  EXPECT_FALSE(printk_seconds("[    1.5 no bracket"));
  EXPECT_FALSE(printk_seconds("[    1.5x] junk"));
}

TEST(ConsoleTimes, TheClockStartIsTheLeastArrivalLessStamp) {
  ConsoleTimes t("KVMMIO-L2-READY");
  t.line("[    0.000000] before the clock: no estimate", 300);
  EXPECT_FALSE(t.guest_clock_ms());
  EXPECT_DOUBLE_EQ(*t.first_output_ms(), 300);
  t.line("[    0.100000] printed live", 1100);  // started at 1000
  EXPECT_DOUBLE_EQ(*t.guest_clock_ms(), 1000);
  // Replayed from the kernel's buffer, late: raises nothing.
  t.line("[    0.050000] replayed", 1500);
  EXPECT_DOUBLE_EQ(*t.guest_clock_ms(), 1000);
  // A line that came out sooner after its stamp lowers it.
  t.line("[    0.400000] live, quicker\r", 1390);
  EXPECT_DOUBLE_EQ(*t.guest_clock_ms(), 990);
  EXPECT_FALSE(t.marker_ms());
  t.line("KVMMIO-L2-READY", 2000);
  t.line("KVMMIO-L2-READY again", 2500);
  EXPECT_DOUBLE_EQ(*t.marker_ms(), 2000);
  EXPECT_EQ(t.lines(), 6);
}

TEST(ConsoleTimes, NoMarkerNeverMatches) {
  ConsoleTimes t("");
  t.line("anything", 10);
  EXPECT_FALSE(t.marker_ms());
}

}  // namespace
}  // namespace kvmmio::bench
