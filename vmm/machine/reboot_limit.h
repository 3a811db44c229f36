// SPDX-License-Identifier: BSD-2-Clause
// RebootLimit: the bound on reboots in place (--on-reboot restart). A
// guest that reboots at once on every boot (a bad kernel, panic=1 on a
// missing root) would otherwise have kvmmio reload it for ever: beyond
// kMaxReboots in any kWindow, kvmmio stops instead, with exit status 3 as
// under --on-reboot exit, and says why. Used by the main thread only.
#pragma once

#include <chrono>
#include <deque>

namespace kvmmio::vmm {

class RebootLimit {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kMaxReboots = 10;
  static constexpr std::chrono::seconds kWindow{60};

  // True, and the reboot counted, if one more at `now` keeps at most
  // kMaxReboots in the kWindow that ends at `now`; false (nothing
  // counted) otherwise.
  bool allow(Clock::time_point now);

 private:
  std::deque<Clock::time_point> recent_;  // the reboots of the last window, oldest first
};

}  // namespace kvmmio::vmm
