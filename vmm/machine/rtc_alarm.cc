// SPDX-License-Identifier: BSD-2-Clause
// The PL031's alarm timer (see rtc_alarm.h).
#include "vmm/machine/rtc_alarm.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"

namespace kvmmio::vmm {

RtcAlarm::RtcAlarm(EventLoop& loop, std::function<void()> due)
    : due_(std::move(due)), timer_(::timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (!timer_) throw_errno("timerfd_create for the RTC alarm");
  watch_ = loop.watch(timer_.get(), [this] { fired(); });
}

RtcAlarm::~RtcAlarm() { watch_ = {}; }

void RtcAlarm::arm(std::optional<int64_t> at) {
  itimerspec when{};  // all zero: disarmed
  // An alarm at second 0 or before would read as "disarm": the earliest
  // second that still fires stands in for it (it has long passed).
  if (at) when.it_value.tv_sec = *at > 0 ? static_cast<time_t>(*at) : 1;
  if (::timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &when, nullptr) != 0) {
    // The guest's alarm is lost, not the VM: the guest sets alarms at will,
    // so this is told rate-limited.
    if (const uint64_t n = settime_failures_.next())
      KVMMIO_LOG_WARN("RTC alarm: timerfd_settime: %s; the alarm will not fire (#%llu)",
                      std::strerror(errno), static_cast<unsigned long long>(n));
  }
}

void RtcAlarm::fired() {
  uint64_t expirations = 0;
  if (::read(timer_.get(), &expirations, sizeof expirations) != sizeof expirations) return;
  due_();
}

}  // namespace kvmmio::vmm
