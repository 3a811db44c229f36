// SPDX-License-Identifier: BSD-2-Clause
// IoWorker: the thread that runs one queue's requests, in the order they
// were submitted (so a FLUSH runs after every write submitted before it),
// with blocking system calls, off the vCPU and event-loop threads.
//
// The device submits under its lock and never waits for the I/O; the
// worker runs `execute` without any lock, then `complete` (which takes the
// device lock itself). cancel_and_wait() (a device reset, holding the
// device lock) drops the jobs not started and waits for the one running:
// its I/O, and its `complete`, which the device makes give up waiting for
// the lock it holds (DeviceLock::lock_unless) before it calls
// cancel_and_wait(). Once that returns, the worker touches neither guest
// memory nor the device until the next submit(): the transport may then
// even go away, with the lock it owns.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "io_engine.h"

namespace kvmmio::block {

// The threads engine (engine=threads, and the fallback where io_uring
// cannot be set up).
class IoWorker final : public IoEngine {
 public:

  // `on_start` runs on the worker thread before its first job (after the
  // machine is set up: where the thread confines itself, see
  // VirtioBlock's header).
  IoWorker(std::string name, std::function<void()> on_start, Execute execute, Complete complete);
  ~IoWorker();
  IoWorker(const IoWorker&) = delete;
  IoWorker& operator=(const IoWorker&) = delete;

  void submit(IoJob job) override;
  void cancel_and_wait() override;
  const char* name() const override { return "threads"; }

 private:
  void run();

  std::string name_;
  std::function<void()> on_start_;
  Execute execute_;
  Complete complete_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<IoJob> jobs_;
  bool executing_ = false;   // in `execute`
  bool completing_ = false;  // in `complete`
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace kvmmio::block
