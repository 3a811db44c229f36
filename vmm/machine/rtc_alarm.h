// SPDX-License-Identifier: BSD-2-Clause
// RtcAlarm: the PL031's alarm timer (kvmmio/rtc/pl031.h, AlarmTimer), a
// timerfd on CLOCK_REALTIME watched by an event loop. arm(at) sets it to
// fire at host second `at` (absolute, so it follows the host's clock when
// that is set, as the PL031's counter does); when it fires, `due` runs on
// the loop's thread. arm() is called on vCPU threads, under the device's
// lock: timerfd_settime only, nothing that waits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {

class RtcAlarm {
 public:
  RtcAlarm(EventLoop& loop, std::function<void()> due);
  ~RtcAlarm();
  RtcAlarm(const RtcAlarm&) = delete;
  RtcAlarm& operator=(const RtcAlarm&) = delete;

  // Fire once at host second `at` (at once if that has passed); nullopt
  // disarms.
  void arm(std::optional<int64_t> at);

 private:
  void fired();

  std::function<void()> due_;
  UniqueFd timer_;
  LogLimit settime_failures_;
  EventLoop::Registration watch_;  // last: dropped first
};

}  // namespace kvmmio::vmm
