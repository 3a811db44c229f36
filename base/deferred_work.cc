// SPDX-License-Identifier: BSD-2-Clause
// DeferredWork: the rest of a device's work, re-queued on the event loop
// (see the header).
#include "kvmmio/base/deferred_work.h"

#include <utility>

namespace kvmmio {

DeferredWork::DeferredWork(EventLoop& loop, DeviceLock& lock, std::function<void()> work)
    : watch_(lock.watch_eventfd(loop, event_.fd(), [work = std::move(work)](uint64_t) { work(); })) {}

}  // namespace kvmmio
