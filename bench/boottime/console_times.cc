// SPDX-License-Identifier: BSD-2-Clause
#include "bench/boottime/console_times.h"

#include <algorithm>
#include <cctype>

namespace kvmmio::bench {

std::optional<double> printk_seconds(std::string_view line) {
  size_t i = 0;
  if (i >= line.size() || line[i] != '[') return std::nullopt;
  ++i;
  while (i < line.size() && line[i] == ' ') ++i;
  double seconds = 0;
  size_t digits = 0;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
    seconds = seconds * 10 + (line[i++] - '0');
    ++digits;
  }
  if (digits == 0 || i >= line.size() || line[i] != '.') return std::nullopt;
  ++i;
  double scale = 0.1;
  size_t fraction = 0;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
    seconds += (line[i++] - '0') * scale;
    scale /= 10;
    ++fraction;
  }
  if (fraction == 0 || i >= line.size() || line[i] != ']') return std::nullopt;
  return seconds;
}

void ConsoleTimes::line(std::string_view text, double host_ms) {
  ++lines_;
  output(host_ms);
  // A console may end its lines with \r\n.
  while (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (auto g = printk_seconds(text); g && *g > 0) {
    const double started = host_ms - *g * 1000;
    guest_clock_ms_ = guest_clock_ms_ ? std::min(*guest_clock_ms_, started) : started;
  }
  if (!marker_ms_ && !marker_.empty() && text.find(marker_) != std::string_view::npos)
    marker_ms_ = host_ms;
}

}  // namespace kvmmio::bench
