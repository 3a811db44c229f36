// SPDX-License-Identifier: BSD-2-Clause
// DeviceLock: waiting for the lock unless told to stop, and watches whose
// callbacks run under it (see the header for the rule).
#include "kvmmio/base/device_lock.h"

namespace kvmmio {

DeviceLock::Guard DeviceLock::lock_unless(const std::atomic<bool>& stop) {
  Guard guard(mutex_, std::defer_lock);
  while (!stop.load()) {
    if (!guard.try_lock_for(kRecheck)) continue;
    if (!stop.load()) return guard;
    guard.unlock();
  }
  return guard;
}

DeviceLock::Watch& DeviceLock::Watch::operator=(Watch&& other) noexcept {
  if (this != &other) {
    reset();
    stop_ = std::move(other.stop_);
    registration_ = std::move(other.registration_);
  }
  return *this;
}

void DeviceLock::Watch::reset() {
  // Stop first: the callback may be waiting for a lock our caller holds,
  // and removing the registration waits for that callback.
  if (stop_) stop_->store(true);
  registration_ = {};
  stop_.reset();
}

DeviceLock::Watch DeviceLock::watch(EventLoop& loop, int fd, std::function<void()> on_readable) {
  Watch w = new_watch();
  w.registration_ = loop.watch(fd, locked(w, std::move(on_readable)));
  return w;
}

DeviceLock::Watch DeviceLock::watch_writable(EventLoop& loop, int fd, std::function<void()> on_writable) {
  Watch w = new_watch();
  w.registration_ = loop.watch_writable(fd, locked(w, std::move(on_writable)));
  return w;
}

DeviceLock::Watch DeviceLock::watch_eventfd(EventLoop& loop, int fd,
                                            std::function<void(uint64_t)> on_signal) {
  Watch w = new_watch();
  w.registration_ = loop.watch_eventfd(fd, locked(w, std::move(on_signal)));
  return w;
}

DeviceLock::Watch DeviceLock::new_watch() {
  Watch w;
  w.stop_ = std::make_shared<std::atomic<bool>>(false);
  return w;
}

}  // namespace kvmmio
