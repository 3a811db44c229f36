// SPDX-License-Identifier: BSD-2-Clause
// IoWorker: one queue's I/O thread (see the header).
#include "io_worker.h"

#include "kvmmio/base/thread_name.h"

namespace kvmmio::block {

IoWorker::IoWorker(std::string name, std::function<void()> on_start, Execute execute, Complete complete)
    : name_(std::move(name)),
      on_start_(std::move(on_start)),
      execute_(std::move(execute)),
      complete_(std::move(complete)),
      thread_([this] { run(); }) {}

IoWorker::~IoWorker() {
  {
    std::lock_guard guard(mutex_);
    stop_ = true;
    jobs_.clear();
  }
  changed_.notify_all();
  thread_.join();
}

void IoWorker::submit(IoJob job) {
  {
    std::lock_guard guard(mutex_);
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
}

void IoWorker::cancel_and_wait() {
  std::unique_lock guard(mutex_);
  jobs_.clear();
  changed_.wait(guard, [this] { return !executing_ && !completing_; });
}

void IoWorker::run() {
  name_this_thread(name_);
  bool started = false;
  for (;;) {
    IoJob job;
    {
      std::unique_lock guard(mutex_);
      changed_.wait(guard, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      executing_ = true;
    }
    if (!started && on_start_) on_start_();
    started = true;
    const IoOutcome outcome = execute_(job);
    bool more = false;
    {
      std::lock_guard guard(mutex_);
      executing_ = false;
      completing_ = true;
      more = !jobs_.empty();
    }
    complete_(job, outcome, more);
    {
      std::lock_guard guard(mutex_);
      completing_ = false;
    }
    changed_.notify_all();
  }
}

}  // namespace kvmmio::block
