// SPDX-License-Identifier: BSD-2-Clause
// DeviceLock: the one lock that serialises a device (its transport's
// registers, its queues, its own state), and the EventLoop watches whose
// callbacks run under it.
//
// The rule it owns: a watch whose callback takes the device lock must be
// removable while the lock is held (a reset holds it while it tears the
// device's watches down). Removing a registration waits for its running
// callback, and that callback may be waiting for the lock: a deadlock. A
// DeviceLock::Watch breaks it: dropping the watch first tells its callback
// to stop waiting for the lock (it gives up within about a millisecond
// and does nothing), then removes the registration. So a Watch may be
// dropped anywhere: holding the lock, not holding it, or from inside its
// own callback.
//
// Waiting for the lock sleeps in the kernel. An earlier try_lock-and-yield
// loop kept a CPU busy whenever a vCPU held the lock for a trapped
// notify, starving everything else on the host (nested arm64 platform:
// userspace+trap, 4 streams guest-to-host, 0.005-0.017 Gbit/s with the
// loop, 0.20-0.21 without; docs/results-log.md, "2026-11-30: the full
// matrix with 1, 4 and 10 streams").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"

namespace kvmmio {

class KVMMIO_EXPORT DeviceLock {
 public:
  using Guard = std::unique_lock<std::timed_mutex>;

  DeviceLock() = default;
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

  // How long lock_unless sleeps between its looks at `stop`: how late a
  // stopping caller is noticed.
  static constexpr std::chrono::milliseconds kRecheck{1};

  Guard lock() { return Guard(mutex_); }
  // Waits for the lock like lock(), but returns it unlocked as soon as
  // `stop` is set, within about kRecheck.
  Guard lock_unless(const std::atomic<bool>& stop);

  // An EventLoop registration whose callback runs holding the lock.
  class Watch {
   public:
    Watch() = default;
    Watch(Watch&& other) noexcept = default;
    Watch& operator=(Watch&& other) noexcept;
    ~Watch() { reset(); }
    explicit operator bool() const { return static_cast<bool>(registration_); }
    // Stops the callback from waiting for the lock, then removes the watch
    // (waiting for a callback that already has the lock, unless called
    // from that callback).
    void reset();

   private:
    friend class DeviceLock;
    std::shared_ptr<std::atomic<bool>> stop_;
    EventLoop::Registration registration_;
  };

  // EventLoop::watch, watch_writable and watch_eventfd, with the callback
  // run under the lock. The lock must outlive the watch.
  [[nodiscard]] Watch watch(EventLoop& loop, int fd, std::function<void()> on_readable);
  [[nodiscard]] Watch watch_writable(EventLoop& loop, int fd, std::function<void()> on_writable);
  [[nodiscard]] Watch watch_eventfd(EventLoop& loop, int fd,
                                    std::function<void(uint64_t count)> on_signal);

 private:
  Watch new_watch();
  // `fn` as a watch callback: run once the lock is had, never once the
  // watch is dropped.
  template <typename F>
  auto locked(const Watch& w, F fn) {
    return [this, stop = w.stop_, fn = std::move(fn)](auto... args) {
      if (auto guard = lock_unless(*stop); guard.owns_lock()) fn(args...);
    };
  }

  std::timed_mutex mutex_;
};

}  // namespace kvmmio
