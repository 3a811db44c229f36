// SPDX-License-Identifier: BSD-2-Clause
// TokenBucket: at most `burst` events at once and `rate` per second over
// time. Bounds what a guest can make the host do again and again (device
// set-ups in a reset storm, entropy bytes served); the caller refuses,
// or delays, what does not fit.
// Not thread-safe: the owner serialises calls (the device lock).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>

#include "kvmmio/base/export.h"

namespace kvmmio {

class KVMMIO_EXPORT TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  // Where take() reads the time. Empty: Clock::now(). Tests pass a clock
  // they move by hand, so a rate is checked against exact times instead of
  // however fast the host ran.
  using TimeSource = std::function<Clock::time_point()>;

  // Full (`burst` tokens) at the time source's present.
  TokenBucket(double rate_per_second, double burst, TimeSource now = {})
      : rate_(rate_per_second), burst_(burst), tokens_(burst), now_(std::move(now)), last_(read_clock()) {}

  // Takes one token if there is one, at the time source's present.
  bool take() { return take(read_clock()); }

  // Takes one token if there is one at `now`; times before the latest
  // one seen add nothing.
  bool take(Clock::time_point now) {
    refill(now);
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

  // Takes `n` tokens at once if there are (a rate of bytes: a request of
  // n bytes), at the time source's present or at `now`.
  bool take_n(uint64_t n) { return take_n(n, read_clock()); }
  bool take_n(uint64_t n, Clock::time_point now) {
    refill(now);
    if (tokens_ < static_cast<double>(n)) return false;
    tokens_ -= static_cast<double>(n);
    return true;
  }

  // How long after the latest time seen until `n` tokens are there: zero
  // if they are now (n is at most the burst, or it never comes).
  Clock::duration time_until(uint64_t n) const {
    const double missing = std::min(static_cast<double>(n), burst_) - tokens_;
    if (missing <= 0 || rate_ <= 0) return Clock::duration::zero();
    return std::chrono::ceil<Clock::duration>(std::chrono::duration<double>(missing / rate_));
  }

 private:
  Clock::time_point read_clock() const { return now_ ? now_() : Clock::now(); }
  void refill(Clock::time_point now) {
    if (now > last_) {
      tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
      last_ = now;
    }
  }

  double rate_, burst_, tokens_;
  TimeSource now_;
  Clock::time_point last_;
};

}  // namespace kvmmio
