// SPDX-License-Identifier: BSD-2-Clause
// StopRequest: why the VM stops, decided once. Any thread (a vCPU on PSCI
// SYSTEM_OFF, the event loop on SIGTERM, a failing backend) may ask; the
// first cause wins and later ones are ignored. The main thread waits for
// it, then stops every vCPU. vCPU loops poll requested() on each exit.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

#include "vmm/exit_status.h"

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
  StopCause cause_ = StopCause::kFailure;
  std::string reason_;
  int signo_ = 0;
};

}  // namespace kvmmio::vmm
