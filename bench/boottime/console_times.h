// SPDX-License-Identifier: BSD-2-Clause
// ConsoleTimes: what a guest's console says about how far its boot got, from
// its lines and the host time each arrived at (bench/boot_timer).
//
// The guest kernel's clock: Linux stamps each message with its own clock
// ("[    1.234567] text"), which starts at 0 when the kernel registers its
// clock source (arm64: the arch timer, in time_init); messages from before
// that say 0.000000. A line stamped g seconds that reached the host at h ms
// after the VMM's exec says the clock started at h - 1000 g ms or earlier
// (the line took some time to get out), so the estimate is the least of
// h - 1000 g over the lines stamped after 0: lines printed live (earlycon,
// or once the console is up) come out at once, while lines replayed from
// the kernel's buffer come out late and only raise their own estimate.
#ifndef KVMMIO_BENCH_BOOTTIME_CONSOLE_TIMES_H_
#define KVMMIO_BENCH_BOOTTIME_CONSOLE_TIMES_H_

#include <optional>
#include <string>
#include <string_view>

namespace kvmmio::bench {

// The seconds of a kernel message's stamp at the start of `line` ("[" then
// spaces, digits, ".", digits, "]"), or nothing when it has none.
std::optional<double> printk_seconds(std::string_view line);

class ConsoleTimes {
 public:
  explicit ConsoleTimes(std::string marker) : marker_(std::move(marker)) {}

  // One whole line (without its newline) that arrived `host_ms` after exec.
  void line(std::string_view text, double host_ms);
  // Bytes arrived (of any line, whole or not): the first one's time.
  void output(double host_ms) {
    if (!first_output_ms_) first_output_ms_ = host_ms;
  }

  std::optional<double> first_output_ms() const { return first_output_ms_; }
  std::optional<double> guest_clock_ms() const { return guest_clock_ms_; }
  std::optional<double> marker_ms() const { return marker_ms_; }
  int lines() const { return lines_; }

 private:
  std::string marker_;
  std::optional<double> first_output_ms_, guest_clock_ms_, marker_ms_;
  int lines_ = 0;
};

}  // namespace kvmmio::bench

#endif  // KVMMIO_BENCH_BOOTTIME_CONSOLE_TIMES_H_
