// SPDX-License-Identifier: BSD-2-Clause
// SignalFd: turns the signals kvmmio acts on into readable events for the
// event loop, instead of handlers that could interrupt any thread anywhere:
// the ones that stop the VM (SIGINT, SIGTERM, SIGHUP, SIGQUIT) and SIGUSR1,
// which asks for a --stats snapshot while the guest runs (so a benchmark
// can take counter deltas around each measurement).
//
// Construct it on the main thread before any other thread exists: it blocks
// the signals in the calling thread, and threads created afterwards (vCPUs,
// the event loop) inherit the mask, so the signals stay pending until the
// loop reads them. The mask is deliberately not restored: the process ends
// right after the VM, and unblocking could let a late Ctrl-C kill it before
// the terminal and the stats are dealt with. The vCPU kick signal (SIGRTMIN)
// is not among them.
#pragma once

#include <initializer_list>
#include <functional>
#include <optional>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {

class SignalFd {
 public:
  SignalFd();  // SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1
  int fd() const { return fd_.get(); }
  // The next pending signal's number, or nullopt.
  std::optional<int> take();
  // Calls `on_signal` on `loop`'s thread with each signal as it comes,
  // until unwatch() (or this object's end).
  void watch(EventLoop& loop, std::function<void(int)> on_signal);
  void unwatch() { watch_ = {}; }

 private:
  UniqueFd fd_;
  EventLoop::Registration watch_;  // after fd_: dropped first
};

// Blocks SIGUSR1 in the calling thread, first thing in kvmmio's main(): a
// snapshot asked for while kvmmio starts (bench/startup.sh, a script that
// does not wait) stays pending until the machine's SignalFd exists, and is
// written once the loop runs, instead of SIGUSR1's default action killing
// the process before its signalfd is there.
void hold_snapshot_requests();

// "SIGINT", "SIGTERM", ... ("signal" for others).
const char* signal_name(int signo);

}  // namespace kvmmio::vmm
