// SPDX-License-Identifier: BSD-2-Clause
// TokenBucket: at most `burst` events at once and `rate` per second over
// time. Bounds what a guest can make the host do again and again (device
// set-ups in a reset storm); the caller refuses what does not fit.
// Not thread-safe: the owner serialises calls (the device lock).
#pragma once

#include <algorithm>
#include <chrono>
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
    if (now > last_) {
      tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
      last_ = now;
    }
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

 private:
  Clock::time_point read_clock() const { return now_ ? now_() : Clock::now(); }

  double rate_, burst_, tokens_;
  TimeSource now_;
  Clock::time_point last_;
};

}  // namespace kvmmio
