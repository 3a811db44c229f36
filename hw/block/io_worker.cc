// SPDX-License-Identifier: BSD-2-Clause
// IoWorker: one queue's I/O thread (see the header).
#include "io_worker.h"

#include <cerrno>

#include "kvmmio/base/thread_name.h"

namespace kvmmio::block {

IoWorker::IoWorker(std::string name, std::function<void()> on_start, Current current, Execute execute,
                   Complete complete)
    : name_(std::move(name)),
      on_start_(std::move(on_start)),
      current_(std::move(current)),
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
  thread_.join();  // after the running job's I/O
}

void IoWorker::submit(IoJob job) {
  {
    std::lock_guard guard(mutex_);
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
}

Dropped IoWorker::cancel() {
  std::lock_guard guard(mutex_);
  return drop_all(jobs_);
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
    }
    if (!started && on_start_) on_start_();
    started = true;
    // A job whose activation was reset while it waited is not started:
    // its completion only gives its budget back.
    const IoOutcome outcome = current_(job) ? execute_(job) : IoOutcome{spec::kSIoErr, 0, ECANCELED};
    bool more = false;
    {
      std::lock_guard guard(mutex_);
      more = !jobs_.empty();
    }
    complete_(job, outcome, more);
  }
}

}  // namespace kvmmio::block
