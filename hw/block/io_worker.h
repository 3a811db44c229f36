// SPDX-License-Identifier: BSD-2-Clause
// IoWorker: the thread that runs one queue's requests, in the order they
// were submitted (so a FLUSH runs after every write submitted before it),
// with blocking system calls, off the vCPU and event-loop threads.
//
// The device submits under its lock and never waits for the I/O; the
// worker runs `execute` without any lock, then `complete` (which takes the
// device lock itself). cancel() (a device reset, holding the device lock)
// drops the jobs not started and returns at once: the one running goes on
// off the lock, and its completion is discarded by the device. A job of an
// activation that was reset is never started (`current`). Serial, so a
// job of the next activation starts only after the old one's I/O ended.
// The destructor waits for the running job (its I/O is on guest memory,
// which must stay mapped until it returns).
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
  IoWorker(std::string name, std::function<void()> on_start, Current current, Execute execute, Complete complete);
  ~IoWorker();
  IoWorker(const IoWorker&) = delete;
  IoWorker& operator=(const IoWorker&) = delete;

  void submit(IoJob job) override;
  Dropped cancel() override;
  const char* name() const override { return "threads"; }

 private:
  void run();

  std::string name_;
  std::function<void()> on_start_;
  Current current_;
  Execute execute_;
  Complete complete_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<IoJob> jobs_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace kvmmio::block
