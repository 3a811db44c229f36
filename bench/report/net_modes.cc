// SPDX-License-Identifier: BSD-2-Clause
// net_mode_misfit: the modes' rule (docs/virtio-mmio.md):
//   vhost + irqfd   nobody in the VMM: no notify trapped or polled, no
//                   interrupt injected or relayed, while the guest takes
//                   interrupts (the bypass, seen from both sides); with the
//                   mirror not even a vCPU exit (check.cc looks at those);
//                   busy polling and the other levers change none of that
//   vhost + relay   the VMM relays vhost's interrupts, nothing else
//   user-ioeventfd  notifies polled (none trapped), interrupts injected
//   user-trap       notifies trapped (none polled), interrupts injected
#include "bench/report/net_modes.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace kvmmio::report {
namespace {

bool zero(const ModeCounter& c) { return c.value && *c.value == 0; }
bool positive(const ModeCounter& c) { return c.value && *c.value > 0; }

bool fits(std::string_view mode, const ModeCounters& c) {
  // vhost-irqfd-mirror-LEVER: the mirror with one lever set; the same rule.
  if (mode == "vhost-irqfd" || mode == "vhost-irqfd-mirror" || mode.starts_with("vhost-irqfd-mirror-") ||
      mode == "vhost-irqfd-v1")
    return zero(c.trapped) && zero(c.polled) && zero(c.injected) && zero(c.relayed) && positive(c.guest_irqs);
  if (mode == "vhost-relay") return zero(c.trapped) && zero(c.polled) && zero(c.injected) && positive(c.relayed);
  if (mode == "user-ioeventfd") return zero(c.trapped) && positive(c.polled) && positive(c.injected);
  if (mode == "user-trap") return positive(c.trapped) && zero(c.polled) && positive(c.injected);
  return true;
}

}  // namespace

ModeCounter ModeCounter::parse(std::string_view word) {
  ModeCounter c{std::string(word), std::nullopt};
  const bool negative = word.starts_with('-');
  const std::string_view digits = negative ? word.substr(1) : word;
  long long n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  // Digits only: from_chars alone would take "-5" after the '-' we removed,
  // or stop at the first non-digit.
  if (!digits.empty() && digits.front() != '-' && digits.front() != '+' && ec == std::errc() &&
      end == digits.data() + digits.size())
    c.value = static_cast<double>(negative ? -n : n);
  return c;
}

ModeCounter ModeCounter::of(double value) { return {format_number(value), value}; }

std::string net_mode_misfit(std::string_view mode, const ModeCounters& c) {
  if (fits(mode, c)) return "";
  return std::string(mode) + ": counters do not fit the mode: trapped " + c.trapped.text + " polled " + c.polled.text +
         " injected " + c.injected.text + " relayed " + c.relayed.text + " guest irqs " + c.guest_irqs.text;
}

std::string format_number(double x) {
  // Sums of counts are whole numbers well below 2^53: exact as integers.
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e17) return std::to_string(static_cast<long long>(x));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace kvmmio::report
