// SPDX-License-Identifier: BSD-2-Clause
// The guest's power key: a press, then a release (see the header).
#include "vmm/machine/power_key.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cstdint>

#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"

namespace kvmmio::vmm {

PowerKey::PowerKey(gpio::Pl061& gpio, unsigned pin, EventLoop& loop)
    : gpio_(gpio), pin_(pin), timer_(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (!timer_) throw_errno("timerfd_create for the power key");
  watch_ = loop.watch(timer_.get(), [this] { release(); });
}

PowerKey::~PowerKey() { watch_ = {}; }

void PowerKey::press() {
  gpio_.set_input(pin_, true);
  itimerspec when{};
  when.it_value.tv_nsec = std::chrono::duration_cast<std::chrono::nanoseconds>(kPressed).count();
  if (::timerfd_settime(timer_.get(), 0, &when, nullptr) != 0) {
    // No timer: release now rather than hold the key down for good.
    gpio_.set_input(pin_, false);
    KVMMIO_LOG_WARN("power key: timerfd_settime: %s; released at once", std::strerror(errno));
  }
}

void PowerKey::release() {
  uint64_t expirations = 0;
  if (::read(timer_.get(), &expirations, sizeof expirations) != sizeof expirations) return;
  gpio_.set_input(pin_, false);
}

}  // namespace kvmmio::vmm
