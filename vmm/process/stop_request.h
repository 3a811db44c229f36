// SPDX-License-Identifier: BSD-2-Clause
// StopRequest: why the VM stops, decided once. Any thread (a vCPU on PSCI
// SYSTEM_OFF, the event loop on SIGTERM, a failing backend) may ask; the
// first cause wins and later ones are ignored. The main thread waits for
// it, then stops every vCPU. vCPU loops poll requested() on each exit.
//
// A reboot in place (--on-reboot restart) is not a stop: a vCPU that sees
// the guest's SYSTEM_RESET asks for one (request_reboot()), and the main
// thread, waiting in wait_for_stop_or_reboot(), takes it and boots the
// guest again. A stop asked for meanwhile wins over a reboot not yet taken.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

#include "vmm/process/exit_status.h"

namespace kvmmio::vmm {

enum class StopCause { kPowerOff, kReset, kSignal, kUserQuit, kFailure };

class StopRequest {
 public:
  // True if this call decided the cause.
  bool request(StopCause cause, std::string reason, int signo = 0) {
    {
      std::lock_guard lock(mutex_);
      if (requested_) return false;
      cause_ = cause;
      reason_ = std::move(reason);
      signo_ = signo;
      requested_ = true;
    }
    cv_.notify_all();
    return true;
  }

  bool requested() const { return requested_.load(); }

  // From a vCPU thread; ignored once a stop is decided.
  void request_reboot() {
    {
      std::lock_guard lock(mutex_);
      if (requested_) return;
      reboot_ = true;
    }
    cv_.notify_all();
  }

  // The main thread: waits for a stop or a reboot. Returns true for a
  // reboot (taken: the next call waits for another), false for a stop.
  bool wait_for_stop_or_reboot() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return requested_.load() || reboot_; });
    if (requested_) return false;
    reboot_ = false;
    return true;
  }

  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return requested_.load(); });
  }

  StopCause cause() const {
    std::lock_guard lock(mutex_);
    return cause_;
  }
  std::string reason() const {
    std::lock_guard lock(mutex_);
    return reason_;
  }

  int exit_status() const {
    std::lock_guard lock(mutex_);
    switch (cause_) {
      case StopCause::kPowerOff: return exit_status::kPoweredOff;
      case StopCause::kReset: return exit_status::kResetRequested;
      case StopCause::kSignal: return exit_status::kSignalBase + signo_;
      case StopCause::kUserQuit: return exit_status::kSignalBase + 2;  // as SIGINT
      case StopCause::kFailure: return exit_status::kFailure;
    }
    return exit_status::kFailure;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<bool> requested_{false};
  bool reboot_ = false;
  StopCause cause_ = StopCause::kFailure;
  std::string reason_;
  int signo_ = 0;
};

}  // namespace kvmmio::vmm
