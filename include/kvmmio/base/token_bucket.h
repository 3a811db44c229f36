// SPDX-License-Identifier: BSD-2-Clause
// TokenBucket: at most `burst` events at once and `rate` per second over
// time. Bounds what a guest can make the host do again and again (device
// set-ups in a reset storm); the caller refuses what does not fit.
// Not thread-safe: the owner serialises calls (the device lock).
#pragma once

#include <algorithm>
#include <chrono>

namespace kvmmio {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  TokenBucket(double rate_per_second, double burst, Clock::time_point now = Clock::now())
      : rate_(rate_per_second), burst_(burst), tokens_(burst), last_(now) {}

  // Takes one token if there is one.
  bool take(Clock::time_point now = Clock::now()) {
    if (now > last_) {
      tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
      last_ = now;
    }
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

 private:
  double rate_, burst_, tokens_;
  Clock::time_point last_;
};

}  // namespace kvmmio
