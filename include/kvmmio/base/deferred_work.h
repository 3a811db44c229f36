// SPDX-License-Identifier: BSD-2-Clause
// DeferredWork: how a device callback that used up its work budget yields.
//
// Every device callback (a notify, tap readiness, console output) does a
// bounded amount of work per dispatch: so many chains or bytes (each
// device's file says how many; docs/security.md lists them). What is left
// it hands back to the EventLoop with schedule(): an eventfd becomes
// readable, and the loop runs `work` under the device lock when that fd's
// turn comes. epoll reports level-triggered fds round-robin (a reported fd
// goes to the back of the ready list; an fd that becomes ready joins at the
// back), so every other fd ready meanwhile, another device's notify or the
// tap, is served before the rest of this device's work: a guest that keeps
// a queue full gets one budget per round, never the whole loop.
//
// schedule() may be called from any thread holding the device lock (a vCPU
// thread handling a trapped notify, or the loop itself); several calls
// before the work runs make one run. Destroying the object drops the watch
// (allowed under the device lock: DeviceLock::Watch).
#pragma once

#include <cstdint>
#include <functional>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"

namespace kvmmio {

class KVMMIO_EXPORT DeferredWork {
 public:
  // Throws std::system_error if the eventfd or the watch cannot be had.
  DeferredWork(EventLoop& loop, DeviceLock& lock, std::function<void()> work);
  DeferredWork(const DeferredWork&) = delete;
  DeferredWork& operator=(const DeferredWork&) = delete;

  void schedule() { event_.signal(); }

 private:
  EventFd event_;
  DeviceLock::Watch watch_;  // last: dropped first
};

}  // namespace kvmmio
